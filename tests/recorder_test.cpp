// The recorder: every frame record's one path from the workers to the statistics and the sinks.
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "run/recorder.h"

namespace jetagent {
namespace {

constexpr int64_t kMs = 1'000'000;

// A record whose stages take 1, 2, 10 and 1 ms after a capture at `capturedMs`.
FrameRecord recordAt(uint64_t id, int64_t capturedMs)
{
    FrameRecord r;
    r.frameId = id;
    r.capturedNs = capturedMs * kMs;
    r.dequeuedNs = r.capturedNs + 1 * kMs;
    r.preprocessedNs = r.dequeuedNs + 2 * kMs;
    r.inferredNs = r.preprocessedNs + 10 * kMs;
    r.doneNs = r.inferredNs + 1 * kMs;
    r.computeNs = 9 * kMs;
    r.batch = 1;
    r.topK = 1;
    r.labels[0] = 0;
    r.truth = 0;
    return r;
}

// A sink that keeps what it is given.
class KeepingSink final : public RecordSink {
public:
    void consume(const FrameRecord& record) override
    {
        std::lock_guard<std::mutex> lock(mutex);
        records.push_back(record);
    }
    std::mutex mutex;
    std::vector<FrameRecord> records;
};

TEST(Recorder, DerivesEachRecordOnceForTheStatisticsAndTheSinks)
{
    KeepingSink sink;
    // Deadline 13.5 ms: the first record (14 ms end to end) misses it, the second (unpaced, 13 ms
    // from its dequeue) is not judged.
    Recorder recorder({{"t", 13'500'000, {&sink}}}, 100, 16, nullptr);
    recorder.start();
    ASSERT_TRUE(recorder.submit(0, recordAt(1, 100)));
    FrameRecord unpaced = recordAt(2, 200);
    unpaced.unpaced = true;
    ASSERT_TRUE(recorder.submit(0, unpaced));
    recorder.stop();

    ASSERT_EQ(sink.records.size(), 2u);
    const FrameTimes& paced = sink.records[0].times;
    EXPECT_EQ(paced.endToEndNs, 14 * kMs);
    EXPECT_EQ(paced.waitNs, 1 * kMs);
    EXPECT_EQ(paced.preprocessNs, 2 * kMs);
    EXPECT_EQ(paced.inferenceNs, 10 * kMs);
    EXPECT_EQ(paced.postprocessNs, 1 * kMs);
    EXPECT_EQ(paced.serviceNs, 13 * kMs);
    EXPECT_TRUE(paced.deadlineJudged);
    EXPECT_TRUE(paced.deadlineMissed);
    const FrameTimes& fifo = sink.records[1].times;
    EXPECT_EQ(fifo.endToEndNs, 13 * kMs);
    EXPECT_EQ(fifo.waitNs, 0);
    EXPECT_EQ(fifo.queueNs, 1 * kMs);
    EXPECT_FALSE(fifo.deadlineJudged);
    EXPECT_FALSE(fifo.deadlineMissed);

    const TaskStats stats = recorder.stats(0);
    EXPECT_EQ(stats.frames, 2u);
    EXPECT_EQ(stats.deadlineJudged, 1u);
    EXPECT_EQ(stats.deadlineMisses, 1u);
    EXPECT_EQ(stats.endToEnd.count(), 2u);
    EXPECT_EQ(stats.endToEnd.max(), 14 * kMs);
    const LiveView live = recorder.live(0);
    EXPECT_EQ(live.frames, 2u);
    EXPECT_EQ(live.correct, 2u);
    ASSERT_TRUE(live.haveLast);
    EXPECT_EQ(live.last.frameId, 2u);
    EXPECT_EQ(live.last.times.endToEndNs, 13 * kMs);
}

TEST(Recorder, EachTaskKeepsItsOrderAndItsOwnSinks)
{
    KeepingSink first;
    KeepingSink second;
    Recorder recorder({{"a", 0, {&first}}, {"b", 0, {&second}}}, 100, 64, nullptr);
    recorder.start();
    for (uint64_t i = 0; i < 40; ++i)
        ASSERT_TRUE(recorder.submit(i % 2, recordAt(i, static_cast<int64_t>(i) * 33)));
    recorder.stop();
    ASSERT_EQ(first.records.size(), 20u);
    ASSERT_EQ(second.records.size(), 20u);
    for (size_t i = 0; i < 20; ++i) {
        EXPECT_EQ(first.records[i].frameId, 2 * i);
        EXPECT_EQ(second.records[i].frameId, 2 * i + 1);
    }
    EXPECT_EQ(recorder.stats(0).frames, 20u);
    EXPECT_EQ(recorder.stats(1).frames, 20u);
}

TEST(Recorder, AFullQueueLosesRecordsCountedAndNeverBlocksTheWorker)
{
    KeepingSink sink;
    Recorder recorder({{"t", 0, {&sink}}}, 100, 4, nullptr); // not started: nothing is taken
    int taken = 0;
    for (uint64_t i = 0; i < 10; ++i)
        taken += recorder.submit(0, recordAt(i, static_cast<int64_t>(i))) ? 1 : 0;
    EXPECT_EQ(taken, 4);
    EXPECT_EQ(recorder.lost(0), 6u);
    recorder.stop(); // never started: stop still records what was handed over
    ASSERT_EQ(sink.records.size(), 4u);
    EXPECT_EQ(sink.records.back().frameId, 3u);
    EXPECT_EQ(recorder.stats(0).frames, 4u);
    recorder.stop(); // twice is harmless
    EXPECT_EQ(sink.records.size(), 4u);
}

TEST(Recorder, AQueueFillingUpWakesTheRecorderBeforeItsRound)
{
    // 10,000 records through a queue of 64 in well under the 20 ms rounds that would be needed
    // without the wake-up (156 rounds, over three seconds): the producer waits only for room.
    Recorder recorder({{"t", 0, {}}}, 100, 64, nullptr);
    recorder.start();
    const auto start = std::chrono::steady_clock::now();
    uint64_t refused = 0;
    for (uint64_t i = 0; i < 10'000; ++i)
        while (!recorder.submit(0, recordAt(i, static_cast<int64_t>(i)))) {
            ++refused;
            std::this_thread::yield();
        }
    recorder.stop();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(recorder.stats(0).frames, 10'000u);
    EXPECT_EQ(recorder.lost(0), refused);
    EXPECT_LT(seconds, 2.0);
}

} // namespace
} // namespace jetagent
