// The statistics over a long run: drives N frame records (10^7 by default) through TaskStats, the
// way the recorder adds them (its times derived, then added), and prints the memory the statistics
// take, the cost of each record (the worst one included) and the summary's percentiles. A
// benchmark, not a test; the worker's own side, the hand-over, is RecorderLoad's test.
//
//   build/tests/jetagent_stats_bench [--records N] [--exact-samples K]
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "jetagent/base/clock.h"
#include "run/recorder.h"
#include "run/task_stats.h"

namespace {

// VmRSS of this process, in KiB.
long residentKiB()
{
    FILE* f = std::fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kib = -1;
    while (std::fgets(line, sizeof line, f))
        if (std::strncmp(line, "VmRSS:", 6) == 0)
            kib = std::strtol(line + 6, nullptr, 10);
    std::fclose(f);
    return kib;
}

} // namespace

int main(int argc, char** argv)
{
    using namespace jetagent;
    uint64_t records = 10'000'000;
    size_t exact = SampleSeries::kDefaultExactKept;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--records") == 0)
            records = std::strtoull(argv[i + 1], nullptr, 10);
        else if (std::strcmp(argv[i], "--exact-samples") == 0)
            exact = std::strtoull(argv[i + 1], nullptr, 10);
        else {
            std::fprintf(stderr, "usage: %s [--records N] [--exact-samples K]\n", argv[0]);
            return 2;
        }
    }

    const long rssBefore = residentKiB();
    TaskStats stats(exact, 33'000'000);
    // Latencies of a 5 ms model with a long right tail, deterministic (fixed seed).
    std::mt19937_64 rng(42);
    std::lognormal_distribution<double> inference(std::log(5e6), 0.3);
    std::vector<int64_t> addNs;
    addNs.reserve(static_cast<size_t>(records));
    FrameRecord r;
    r.topK = 1;
    int64_t t = 1'000'000'000;
    for (uint64_t i = 0; i < records; ++i) {
        const auto inferenceNs = static_cast<int64_t>(inference(rng));
        r.frameId = i;
        r.capturedNs = t;
        r.dequeuedNs = t + 20'000;
        r.preprocessedNs = r.dequeuedNs + 300'000;
        r.inferredNs = r.preprocessedNs + inferenceNs;
        r.doneNs = r.inferredNs + 5'000;
        r.computeNs = inferenceNs - 10'000;
        r.intervalStartNs = t;
        r.coldStart = i == 0;
        t += 33'333'333;
        const int64_t start = monotonicNs();
        r.times = Recorder::derive(r, 33'000'000);
        stats.add(r);
        addNs.push_back(monotonicNs() - start);
    }
    const long rssAfter = residentKiB();

    std::sort(addNs.begin(), addNs.end());
    const Distribution e2e = summarize(stats.endToEnd);
    std::printf(
        "jetagent_stats_bench: %" PRIu64 " records through Recorder::derive and TaskStats::add "
        "(logging.max_summary_samples %zu; percentiles exact up to it, then within %.3f%%)\n",
        records, exact, 100.0 * SampleSeries::kRelativeError);
    std::printf("  statistics memory  %zu bytes (%.2f MiB per task, whatever the run's length)\n",
        stats.memoryBytes(), static_cast<double>(stats.memoryBytes()) / (1 << 20));
    std::printf("  process RSS        %ld KiB before, %ld KiB after (the per-call timings below "
                "take %.1f MiB of it)\n",
        rssBefore, rssAfter, static_cast<double>(records * 8) / (1 << 20));
    auto at = [&](double p) {
        return addNs[std::min(addNs.size() - 1,
            static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(addNs.size()))) - 1)];
    };
    std::printf("  cost per record, ns  p50 %" PRId64 ", p99 %" PRId64 ", p99.99 %" PRId64
                ", worst %" PRId64 " (on the recorder's thread, not the worker's)\n",
        at(50), at(99), at(99.99), addNs.back());
    std::printf("  end to end, ms     n %" PRIu64 ", p50 %.4f, p99 %.4f, p99.9 %.4f, max %.4f\n",
        e2e.count, e2e.p50, e2e.p99, e2e.p999, e2e.max);
    return 0;
}
