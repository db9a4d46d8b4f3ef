// Ten million records through the recorder and the statistics: what a worker does per frame to
// hand its record over stays far below a frame's budget at any record count, and the statistics'
// memory does not grow. (Before the recorder, the worker added each record to series that grew by
// doubling, and stalled 30-50 ms at record 524,289, and at every doubling after it.)
//
// A hand-over is timed by the clock on the wall, so a call can be slow because the machine took
// the CPU away (another process, the hypervisor, an interrupt). Such a stall falls on a record
// by chance; one the code makes falls on the same record every time. So when a run has calls over
// the budget, it is run again, up to three times, and a record slow in every run fails the test.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "run/recorder.h"

namespace jetagent {
namespace {

constexpr uint64_t kRecords = 10'000'000;
constexpr int64_t kWorkerBudgetNs = 50'000;

struct Drive {
    std::vector<uint64_t> slow; // records whose hand-over took longer than the budget, in order
    int64_t worstNs = 0;
    uint64_t worstAt = 0;
    uint64_t refused = 0;
    uint64_t lost = 0;
    TaskStats stats {1, 0};
    size_t memoryAtStart = 0;
};

int64_t nowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

Drive drive()
{
    Drive d;
    Recorder recorder({{"t", 33'000'000, {}}}, SampleSeries::kDefaultExactKept, 4096, nullptr);
    d.memoryAtStart = recorder.stats(0).memoryBytes();
    recorder.start();
    FrameRecord r;
    r.batch = 1;
    r.topK = 1;
    int64_t t = 1'000'000'000;
    for (uint64_t i = 0; i < kRecords; ++i) {
        r.frameId = i;
        r.coldStart = i == 0;
        r.capturedNs = t;
        r.dequeuedNs = t + 20'000;
        r.preprocessedNs = r.dequeuedNs + 300'000;
        r.inferredNs = r.preprocessedNs + 4'000'000 + static_cast<int64_t>(i % 997) * 1'000;
        r.doneNs = r.inferredNs + 5'000;
        t += 33'333'333;
        // A full queue refuses the record; this producer hands it over again once there is room
        // (a worker would count it lost), so that every record reaches the statistics.
        while (true) {
            const int64_t before = nowNs();
            const bool taken = recorder.submit(0, r);
            const int64_t spent = nowNs() - before;
            if (spent > d.worstNs) {
                d.worstNs = spent;
                d.worstAt = i;
            }
            if (spent > kWorkerBudgetNs && (d.slow.empty() || d.slow.back() != i) &&
                d.slow.size() < 100'000)
                d.slow.push_back(i);
            if (taken)
                break;
            ++d.refused;
            std::this_thread::yield();
        }
    }
    recorder.stop();
    d.stats = recorder.stats(0);
    d.lost = recorder.lost(0);
    return d;
}

TEST(RecorderLoad, TenMillionRecordsReachTheStatisticsAndNoHandOverTakesLong)
{
    const Drive first = drive();
    EXPECT_EQ(first.stats.frames, kRecords);
    EXPECT_EQ(first.stats.endToEnd.count(), kRecords - 1); // the cold start kept apart
    EXPECT_EQ(first.lost, first.refused);
    EXPECT_EQ(first.stats.memoryBytes(), first.memoryAtStart)
        << "the statistics' memory depends on no record count";
    std::printf("[ recorder ] %llu records; slowest hand-over %.1f us (record %llu); %zu over %lld "
                "us; %llu refused for a full queue and handed over again; statistics %zu bytes\n",
        static_cast<unsigned long long>(kRecords), static_cast<double>(first.worstNs) / 1e3,
        static_cast<unsigned long long>(first.worstAt), first.slow.size(),
        static_cast<long long>(kWorkerBudgetNs / 1000),
        static_cast<unsigned long long>(first.refused), first.stats.memoryBytes());
    // Records slow in every run so far; up to three runs (a record slow by chance in two runs of
    // ten million, with hundreds of stalls each, happens a few times in a hundred; in three, about
    // never).
    std::vector<uint64_t> suspects = first.slow;
    for (int run = 2; run <= 3 && !suspects.empty(); ++run) {
        const Drive next = drive();
        std::vector<uint64_t> both;
        std::set_intersection(suspects.begin(), suspects.end(), next.slow.begin(), next.slow.end(),
            std::back_inserter(both));
        suspects = std::move(both);
        std::printf("[ recorder ] run %d: slowest %.1f us (record %llu); %zu over the budget; %zu "
                    "records slow in every run so far\n",
            run, static_cast<double>(next.worstNs) / 1e3,
            static_cast<unsigned long long>(next.worstAt), next.slow.size(), suspects.size());
    }
    EXPECT_TRUE(suspects.empty()) << suspects.size() << " records were over "
                                  << kWorkerBudgetNs / 1000 << " us in three runs, the first "
                                  << suspects.front();
}

} // namespace
} // namespace jetagent
