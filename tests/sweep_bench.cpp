// jetagent_sweep_bench: what `jetagent sweep`'s timed loop (runTimedTurn: a clock read on each side
// of every run, the input window rotated, each latency kept) adds to a bare loop of Session::run on
// the same session and inputs. The two alternate in rounds, and the median of the rounds' ratios is
// printed with its interquartile range.
//
//   jetagent_sweep_bench [--model FILE] [--engine SPEC] [--batch N] [--runs N] [--rounds N]
//
// The default model is the demo classifier (models/shapes_cnn.onnx, about 0.2 ms an inference on
// one x86 core): the shorter the inference, the larger a fixed per-run cost shows.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "compare.h"
#include "jetagent/base/clock.h"
#include "jetagent/engines/model_file.h"
#include "run/latency_stats.h"
#include "sweep_measure.h"

namespace jetagent {
namespace {

struct Args {
    std::string model = JETAGENT_SOURCE_DIR "/models/shapes_cnn.onnx";
    std::string engine = "xnnpack";
    int batch = 1;
    int runs = 200;
    int rounds = 60;
};

bool parseArgs(int argc, char** argv, Args& a)
{
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
        if (arg == "--help" || arg == "-h" || !value)
            return false;
        if (arg == "--model")
            a.model = value;
        else if (arg == "--engine")
            a.engine = value;
        else if (arg == "--batch")
            a.batch = std::atoi(value);
        else if (arg == "--runs")
            a.runs = std::atoi(value);
        else if (arg == "--rounds")
            a.rounds = std::atoi(value);
        else
            return false;
        ++i;
    }
    return a.batch >= 1 && a.runs >= 1 && a.rounds >= 4;
}

int run(const Args& a)
{
    auto model = loadModelFile(a.model);
    if (!model) {
        std::fprintf(stderr, "%s\n", model.status().message().c_str());
        return 1;
    }
    EngineOptions base;
    base.batch = a.batch;
    auto options = parseEngineSpec(a.engine, base);
    if (!options) {
        std::fprintf(stderr, "%s\n", options.status().message().c_str());
        return 1;
    }
    auto engine = buildEngine(model.value(), options.value());
    if (!engine) {
        std::fprintf(stderr, "%s\n", engine.status().message().c_str());
        return 1;
    }
    auto session = engine.value()->createSession();
    if (!session) {
        std::fprintf(stderr, "%s\n", session.status().message().c_str());
        return 1;
    }
    const TensorInfo& in = model.value()->inputs.at(0);
    TensorView view;
    view.shape.rank = static_cast<int>(in.dims.size());
    view.shape.dims[0] = a.batch;
    for (size_t i = 1; i < in.dims.size(); ++i)
        view.shape.dims[i] = in.dims[i];
    const size_t stride = static_cast<size_t>(view.shape.elementCount());
    constexpr size_t kWindows = 4;
    std::vector<float> pool(stride * kWindows);
    std::mt19937 rng(1);
    std::normal_distribution<float> normal;
    for (float& v : pool)
        v = normal(rng);
    view.data = pool.data();
    for (int i = 0; i < 20; ++i)
        (void)session.value()->run(&view, 1, nullptr);

    std::vector<int64_t> latencies;
    latencies.reserve(static_cast<size_t>(a.runs));
    std::vector<double> ratios;
    int64_t bareTotal = 0, sweepTotal = 0;
    for (int round = 0; round < a.rounds; ++round) {
        // The bare loop: what a user's own harness would time, one clock read at each end.
        const int64_t b0 = monotonicNs();
        for (int i = 0; i < a.runs; ++i) {
            view.data = pool.data() + static_cast<size_t>(i) % kWindows * stride;
            if (!session.value()->run(&view, 1, nullptr).ok())
                return 1;
        }
        const int64_t bare = monotonicNs() - b0;

        latencies.clear();
        TurnTotals totals;
        const int64_t s0 = monotonicNs();
        if (!runTimedTurn(
                *session.value(), view, pool.data(), kWindows, stride, a.runs, 0, latencies, totals)
                 .ok())
            return 1;
        const int64_t sweep = monotonicNs() - s0;
        ratios.push_back(static_cast<double>(sweep) / static_cast<double>(bare));
        bareTotal += bare;
        sweepTotal += sweep;
    }
    std::sort(ratios.begin(), ratios.end());
    const size_t n = ratios.size();
    const double median = ratios[nearestRankIndex(n, 50)];
    const double q1 = ratios[nearestRankIndex(n, 25)];
    const double q3 = ratios[nearestRankIndex(n, 75)];
    std::printf("model        %s\nengine       %s (%s), batch %d\n", a.model.c_str(),
        a.engine.c_str(), engine.value()->description().backendVersion.c_str(), a.batch);
    std::printf("method       %d rounds, each: %d runs in a bare Session::run loop, then %d in the "
                "sweep's timed loop\n",
        a.rounds, a.runs, a.runs);
    std::printf("bare loop    %.4f ms per run (mean over every round)\n",
        static_cast<double>(bareTotal) / 1e6 / a.rounds / a.runs);
    std::printf("sweep loop   %.4f ms per run\n",
        static_cast<double>(sweepTotal) / 1e6 / a.rounds / a.runs);
    std::printf("sweep / bare, median of %zu paired rounds: %.4f (interquartile %.4f .. %.4f)\n", n,
        median, q1, q3);
    std::printf("overhead     %+.2f%% per inference (goal: under 1%%)\n", (median - 1.0) * 100.0);
    return 0;
}

} // namespace
} // namespace jetagent

int main(int argc, char** argv)
{
    jetagent::Args args;
    if (!jetagent::parseArgs(argc, argv, args)) {
        std::fprintf(stderr,
            "usage: jetagent_sweep_bench [--model FILE] [--engine SPEC] [--batch N] [--runs N] "
            "[--rounds N (4 or more)]\n"
            "What jetagent sweep's timed loop adds to a bare Session::run loop, in paired "
            "rounds.\n");
        return 2;
    }
    return jetagent::run(args);
}
