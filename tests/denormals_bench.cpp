// jetagent_denormals_bench: what flush-to-zero and denormals-are-zero on the inference threads do
// to the CPU engine's speed and outputs, on an input whose activations are normal numbers and on
// the same input scaled down until they are denormal (subnormal) numbers.
//
//   jetagent_denormals_bench MODEL [--threads N] [--runs N] [--rounds N] [--scale S]
//                            [--no-onednn]
//
// Each round runs two child processes, one per setting, in an order that alternates from round
// to round: FTZ/DAZ off (the engine's default, as ONNX Runtime's) and on (MXCSR's FTZ and DAZ bits
// on x86-64, FPCR.FZ on aarch64, set in the child's main thread before the engine exists, so that
// the backend's thread pool, created with the engine, inherits it). A child builds the xnnpack
// engine (fp32, batch 1) and runs it on two inputs in turn, run by run: the normal input (seeded
// uniform values in [-1, 1)) and that input times S (default 1e-38: activations of about S, below
// float's smallest normal 1.2e-38), 3 warm-up runs then RUNS timed runs each, and hands the
// medians and outputs back over a pipe. Printed: the median over rounds of each median, the rounds'
// spread, the slow-down of the denormal input against the normal one in each setting, and how far
// the outputs under FTZ/DAZ are from those without (max |on - off| / max |off|, per input).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include "jetagent/base/clock.h"
#include "jetagent/engines/engine.h"
#include "jetagent/engines/model_file.h"

namespace jetagent {
namespace {

constexpr uint32_t kSeed = 1;
constexpr int kWarmup = 3;
constexpr int kInputs = 2; // the normal input, then the scaled one
const char* const kInputNames[kInputs] = {"normal input", "scaled input"};

struct Args {
    std::string model;
    int threads = 2;
    int runs = 20;
    int rounds = 4;
    double scale = 1e-38;
    bool onednn = true;
};

// What a child hands back: each input's median ms, then each input's output values.
struct ChildResult {
    double medianMs[kInputs] = {0, 0};
    std::vector<float> outputs[kInputs];
};

// Sets flush-to-zero and denormals-are-zero on the calling thread (threads it creates inherit
// them). False where this architecture is not handled here.
bool setFlushToZero()
{
#if defined(__x86_64__)
    _mm_setcsr(_mm_getcsr() | 0x8040u); // FTZ (bit 15) and DAZ (bit 6)
    return true;
#elif defined(__aarch64__)
    uint64_t fpcr = 0;
    asm volatile("mrs %0, fpcr" : "=r"(fpcr));
    fpcr |= uint64_t {1} << 24; // FZ: denormal inputs and results are flushed to zero
    asm volatile("msr fpcr, %0" : : "r"(fpcr));
    return true;
#else
    return false;
#endif
}

// Writes (`out`) or reads all `bytes` at `data` through `fd`; false on an error or an early end.
bool transferAll(int fd, void* data, size_t bytes, bool out)
{
    char* p = static_cast<char*>(data);
    while (bytes > 0) {
        const ssize_t n = out ? ::write(fd, p, bytes) : ::read(fd, p, bytes);
        if (n <= 0)
            return false;
        p += n;
        bytes -= static_cast<size_t>(n);
    }
    return true;
}

double medianOf(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

// Prints the error; the child's exit status.
int failed(const Status& s)
{
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
}

// The child: builds the engine under the setting, times both inputs, writes the result to `fd`.
// Returns the exit status.
int child(const Args& a, bool flushToZero, int fd)
{
    if (flushToZero && !setFlushToZero()) {
        std::fprintf(stderr, "flush-to-zero is not handled on this architecture\n");
        return 1;
    }
    auto model = loadModelFile(a.model);
    if (!model)
        return failed(model.status());
    EngineOptions options;
    options.backend = "xnnpack";
    options.threads = a.threads;
    options.onednn = a.onednn;
    auto engine = buildEngine(model.value(), options);
    if (!engine)
        return failed(engine.status());
    auto session = engine.value()->createSession();
    if (!session)
        return failed(session.status());
    const TensorInfo& in = engine.value()->inputs().at(0);
    TensorView view;
    view.shape.rank = static_cast<int>(in.dims.size());
    view.shape.dims[0] = 1;
    for (size_t i = 1; i < in.dims.size(); ++i)
        view.shape.dims[i] = in.dims[i];
    std::vector<float> data[kInputs];
    data[0].resize(static_cast<size_t>(view.shape.elementCount()));
    std::mt19937 rng(kSeed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (float& v : data[0])
        v = uniform(rng);
    data[1] = data[0];
    for (float& v : data[1])
        v = static_cast<float>(v * a.scale);

    // The inputs take turns run by run, so that both meet the same caches and the same load.
    ChildResult r;
    std::vector<double> ms[kInputs];
    for (int i = 0; i < kInputs * (kWarmup + a.runs); ++i) {
        const int k = i % kInputs;
        view.data = data[k].data();
        const int64_t start = monotonicNs();
        if (Status s = session.value()->run(&view, 1, nullptr); !s.ok())
            return failed(s);
        if (i >= kInputs * kWarmup)
            ms[k].push_back(static_cast<double>(monotonicNs() - start) / 1e6);
        const ConstTensorView out = session.value()->output(0);
        r.outputs[k].assign(out.data, out.data + out.shape.elementCount());
    }
    for (int k = 0; k < kInputs; ++k)
        r.medianMs[k] = medianOf(ms[k]);
    bool ok = transferAll(fd, r.medianMs, sizeof r.medianMs, true);
    for (int k = 0; k < kInputs && ok; ++k) {
        uint64_t n = r.outputs[k].size();
        ok = transferAll(fd, &n, sizeof n, true) &&
            transferAll(fd, r.outputs[k].data(), n * sizeof(float), true);
    }
    return ok ? 0 : 1;
}

// Runs one child under the setting; false when it failed (its error is on stderr).
bool runChild(const Args& a, bool flushToZero, ChildResult& r)
{
    int fds[2];
    if (::pipe(fds) != 0)
        return false;
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0)
        return false;
    if (pid == 0) {
        ::close(fds[0]);
        _exit(child(a, flushToZero, fds[1]));
    }
    ::close(fds[1]);
    bool ok = transferAll(fds[0], r.medianMs, sizeof r.medianMs, false);
    for (int k = 0; k < kInputs && ok; ++k) {
        uint64_t n = 0;
        ok = transferAll(fds[0], &n, sizeof n, false) && n < (uint64_t {1} << 30);
        if (ok) {
            r.outputs[k].resize(n);
            ok = transferAll(fds[0], r.outputs[k].data(), n * sizeof(float), false);
        }
    }
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// max |b - a| / max |a|: one scale for the whole output.
double relativeError(const std::vector<float>& a, const std::vector<float>& b)
{
    double diff = 0, ref = 0;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
        diff = std::max(diff, std::fabs(static_cast<double>(b[i]) - a[i]));
        ref = std::max(ref, std::fabs(static_cast<double>(a[i])));
    }
    return ref > 0 ? diff / ref : (diff > 0 ? INFINITY : 0.0);
}

int run(const Args& a)
{
    std::vector<double> ms[2][kInputs]; // [setting][input], one per round
    ChildResult last[2];
    for (int round = 0; round < a.rounds; ++round) {
        for (int turn = 0; turn < 2; ++turn) {
            const int setting = (turn + round) % 2;
            if (!runChild(a, setting == 1, last[setting])) {
                std::fprintf(stderr, "jetagent_denormals_bench: the child with FTZ/DAZ %s failed\n",
                    setting ? "on" : "off");
                return 1;
            }
            for (int k = 0; k < kInputs; ++k)
                ms[setting][k].push_back(last[setting].medianMs[k]);
        }
    }
    std::printf("model        %s\n", a.model.c_str());
    std::printf("engine       xnnpack fp32, batch 1, %d threads, oneDNN %s\n", a.threads,
        a.onednn ? "on" : "off");
    std::printf(
        "inputs       normal: seeded uniform in [-1, 1); scaled: the same times %g\n", a.scale);
    std::printf("method       %d rounds; each, one process per setting (order alternating), %d "
                "timed runs per input after %d warm-up; median over rounds of each median\n",
        a.rounds, a.runs, kWarmup);
    std::printf("\n%-9s %-14s %10s %8s\n", "FTZ/DAZ", "input", "median ms", "spread");
    double median[2][kInputs];
    for (int s = 0; s < 2; ++s)
        for (int k = 0; k < kInputs; ++k) {
            median[s][k] = medianOf(ms[s][k]);
            const auto [lo, hi] = std::minmax_element(ms[s][k].begin(), ms[s][k].end());
            std::printf("%-9s %-14s %10.3f %7.1f%%\n", s ? "on" : "off", kInputNames[k],
                median[s][k], 100.0 * (*hi - *lo) / median[s][k]);
        }
    std::printf("\nscaled / normal input: %.2fx with FTZ/DAZ off, %.2fx on\n",
        median[0][1] / median[0][0], median[1][1] / median[1][0]);
    std::printf("FTZ/DAZ on / off: %.3fx on the normal input, %.3fx on the scaled one\n",
        median[1][0] / median[0][0], median[1][1] / median[0][1]);
    for (int k = 0; k < kInputs; ++k)
        std::printf("outputs, %s: FTZ/DAZ on against off, relative error %.3g\n", kInputNames[k],
            relativeError(last[0].outputs[k], last[1].outputs[k]));
    return 0;
}

constexpr const char* kUsage =
    "usage: jetagent_denormals_bench MODEL [--threads N] [--runs N] [--rounds N] [--scale S (> 0)] "
    "[--no-onednn]\n"
    "The xnnpack engine's speed and outputs with flush-to-zero/denormals-are-zero on its threads "
    "and without, on a normal input and on it scaled by S.\n";

// The arguments, or nothing when one is unknown, lacks its value or is out of range.
std::optional<Args> parseArgs(int argc, char** argv)
{
    Args a;
    const std::map<std::string, std::function<void(const char*)>> valued = {
        {"--threads", [&a](const char* v) { a.threads = std::atoi(v); }},
        {"--runs", [&a](const char* v) { a.runs = std::atoi(v); }},
        {"--rounds", [&a](const char* v) { a.rounds = std::atoi(v); }},
        {"--scale", [&a](const char* v) { a.scale = std::atof(v); }},
    };
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const auto option = valued.find(arg);
        if (option != valued.end() && i + 1 < argc)
            option->second(argv[++i]);
        else if (arg == "--no-onednn")
            a.onednn = false;
        else if (arg.rfind("--", 0) != 0 && a.model.empty())
            a.model = arg;
        else
            return std::nullopt;
    }
    if (a.model.empty() || a.threads < 1 || a.runs < 1 || a.rounds < 1 || !(a.scale > 0))
        return std::nullopt;
    return a;
}

} // namespace
} // namespace jetagent

int main(int argc, char** argv)
{
    if (const auto args = jetagent::parseArgs(argc, argv))
        return jetagent::run(*args);
    std::fputs(jetagent::kUsage, stderr);
    return 2;
}
