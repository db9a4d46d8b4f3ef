// Ten million records through the recorder and the statistics: what a worker does per frame to
// hand its record over stays far below a frame's budget at any record count, and the statistics'
// memory does not grow. (Before the recorder, the worker added each record to series that grew by
// doubling, and stalled 30-50 ms at record 524,289, and at every doubling after it.)
//
// A hand-over is timed by the clock on the wall, so a call can be slow because the thread did not
// run: another process took the CPU, or the hand-over's own wake-up of the recorder let the
// recorder run first on the same core (the scheduler's choice, which on a busy two-core machine
// recurs at the same records run after run). The thread's CPU clock, read every kBlock records,
// tells the two apart: a call counts as slow only when its time over the budget is more than the
// thread spent off the CPU in its block. A stall the code makes (a copy, a page fault, a growing
// array) is spent on the CPU. What is left can still be the hypervisor's (its steal counts as the
// thread's CPU time); that falls on a record by chance, one the code makes on the same record every
// time, so when a run has slow calls it is run again, up to three times, and a record slow in every
// run fails the test.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <utility>
#include <vector>

#include <time.h>

#include <gtest/gtest.h>

#include "run/recorder.h"

namespace jetagent {
namespace {

constexpr uint64_t kRecords = 10'000'000;
constexpr int64_t kWorkerBudgetNs = 50'000;
constexpr uint64_t kBlock = 64; // records between two readings of the thread's CPU clock

struct Drive {
    std::vector<uint64_t> slow; // records whose hand-over took longer than the budget on the CPU,
                                // in order
    uint64_t offCpu = 0; // calls over the budget on the wall clock that time off the CPU explains
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

int64_t threadCpuNs()
{
    timespec ts {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The wall-clock readings of one block of records, and its calls over the budget.
struct Block {
    int64_t wallNs = 0;
    int64_t cpuNs = 0;
    std::vector<std::pair<uint64_t, int64_t>> overBudget; // record, time of the call

    void start()
    {
        overBudget.clear();
        cpuNs = threadCpuNs();
        wallNs = nowNs();
    }

    // Ends the block: its calls whose time over the budget the thread's time off the CPU does not
    // explain go to `slow`.
    void end(Drive& d)
    {
        const int64_t wall = nowNs() - wallNs;
        const int64_t cpu = threadCpuNs() - cpuNs;
        const int64_t off = std::max<int64_t>(0, wall - cpu);
        for (const auto& [record, spentNs] : overBudget) {
            if (spentNs - off <= kWorkerBudgetNs)
                ++d.offCpu;
            else if ((d.slow.empty() || d.slow.back() != record) && d.slow.size() < 100'000)
                d.slow.push_back(record);
        }
    }
};

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
    Block block;
    block.start();
    for (uint64_t i = 0; i < kRecords; ++i) {
        if (i % kBlock == 0 && i > 0) {
            block.end(d);
            block.start();
        }
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
            if (spent > kWorkerBudgetNs)
                block.overBudget.emplace_back(i, spent);
            if (taken)
                break;
            ++d.refused;
            std::this_thread::yield();
        }
    }
    block.end(d);
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
                "us on the CPU, %llu more off it; %llu refused for a full queue and handed over "
                "again; statistics %zu bytes\n",
        static_cast<unsigned long long>(kRecords), static_cast<double>(first.worstNs) / 1e3,
        static_cast<unsigned long long>(first.worstAt), first.slow.size(),
        static_cast<long long>(kWorkerBudgetNs / 1000),
        static_cast<unsigned long long>(first.offCpu),
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
        std::printf("[ recorder ] run %d: slowest %.1f us (record %llu); %zu over the budget on "
                    "the CPU, %llu more off it; %zu records slow in every run so far\n",
            run, static_cast<double>(next.worstNs) / 1e3,
            static_cast<unsigned long long>(next.worstAt), next.slow.size(),
            static_cast<unsigned long long>(next.offCpu), suspects.size());
    }
    EXPECT_TRUE(suspects.empty()) << suspects.size() << " records were over "
                                  << kWorkerBudgetNs / 1000
                                  << " us on the CPU in three runs, the first "
                                  << (suspects.empty() ? 0 : suspects.front());
}

} // namespace
} // namespace jetagent
