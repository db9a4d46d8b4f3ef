// The gather of a task's batches from several streams: what it waits for, for how long, and in
// which order it takes frames.
#include <chrono>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "jetagent/base/clock.h"
#include "run/stream_batcher.h"

namespace jetagent {
namespace {

constexpr int64_t kMs = 1'000'000;

FramePtr frameOf(uint16_t stream, uint64_t sequence)
{
    auto f = std::make_shared<Frame>();
    f->stream = stream;
    f->sequence = sequence;
    f->captureNs = monotonicNs();
    return f;
}

TEST(StreamBatcher, OneStreamTakesWhatIsThereAtOnce)
{
    StreamBatcher b(1, 4, FrameQueue::Policy::DropOldest, 1000 * kMs);
    b.push(0, frameOf(0, 0));
    b.push(0, frameOf(0, 1));
    FramePtr out[4];
    StreamBatcher::Batch batch;
    ASSERT_EQ(b.gather(out, 4, batch), 2u); // a live stream never waits to fill a batch
    EXPECT_EQ(out[0]->sequence, 0u);
    EXPECT_EQ(out[1]->sequence, 1u);
    EXPECT_EQ(batch.streams, 1u);
    EXPECT_FALSE(batch.timedOut);
    EXPECT_EQ(batch.waitedNs, 0);
}

TEST(StreamBatcher, WaitsForEveryStreamThenTheTimeoutAndAStalledStreamOnlyOnce)
{
    constexpr int64_t kTimeout = 150 * kMs;
    StreamBatcher b(3, 1, FrameQueue::Policy::DropOldest, kTimeout);
    FramePtr out[3];
    StreamBatcher::Batch batch;

    // Stream 1 comes late, stream 2 never: the batch waits for 1, then times out on 2.
    b.push(0, frameOf(0, 0));
    std::thread late([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        b.push(1, frameOf(1, 0));
    });
    const int64_t start = monotonicNs();
    ASSERT_EQ(b.gather(out, 3, batch), 2u);
    const int64_t took = monotonicNs() - start;
    late.join();
    EXPECT_TRUE(batch.timedOut);
    EXPECT_EQ(batch.streams, 2u);
    EXPECT_GE(took, kTimeout - 5 * kMs); // it did wait for stream 2 ...
    EXPECT_GE(batch.waitedNs, kTimeout - 5 * kMs);
    EXPECT_EQ(out[0]->stream, 0u); // ... one frame per stream, in stream order
    EXPECT_EQ(out[1]->stream, 1u);
    EXPECT_EQ(b.timeoutsWaitingFor(0), 0u);
    EXPECT_EQ(b.timeoutsWaitingFor(1), 0u); // it came within the timeout
    EXPECT_EQ(b.timeoutsWaitingFor(2), 1u);

    // Stream 2 is absent now: with 0 and 1 there, the next batch goes at once.
    b.push(0, frameOf(0, 1));
    b.push(1, frameOf(1, 1));
    ASSERT_EQ(b.gather(out, 3, batch), 2u);
    EXPECT_FALSE(batch.timedOut);
    EXPECT_EQ(batch.waitedNs, 0);
    // Only 0 there: the batch waits for 1 (present), not for 2 (absent), and the wait is 1's.
    b.push(0, frameOf(0, 2));
    ASSERT_EQ(b.gather(out, 3, batch), 1u);
    EXPECT_TRUE(batch.timedOut);
    EXPECT_EQ(b.timeoutsWaitingFor(1), 1u);
    EXPECT_EQ(b.timeoutsWaitingFor(2), 1u);

    // Once they deliver again they are waited for again: a batch of all three at once.
    b.push(2, frameOf(2, 0));
    b.push(0, frameOf(0, 3));
    b.push(1, frameOf(1, 3));
    ASSERT_EQ(b.gather(out, 3, batch), 3u);
    EXPECT_EQ(batch.streams, 3u);
    EXPECT_FALSE(batch.timedOut);
}

TEST(StreamBatcher, ABatchSmallerThanTheStreamsServesThemInTurn)
{
    StreamBatcher b(3, 1, FrameQueue::Policy::DropOldest, 0);
    FramePtr out[1];
    StreamBatcher::Batch batch;
    std::vector<uint16_t> served;
    for (int round = 0; round < 6; ++round) {
        for (uint16_t s = 0; s < 3; ++s)
            b.push(s, frameOf(s, static_cast<uint64_t>(round)));
        ASSERT_EQ(b.gather(out, 1, batch), 1u);
        served.push_back(out[0]->stream);
    }
    // Each gather starts one stream further on: no stream starves behind the first.
    EXPECT_EQ(served, (std::vector<uint16_t> {0, 1, 2, 0, 1, 2}));
    EXPECT_EQ(b.dropped(), 6u * 3 - 6 - 2); // every other frame was replaced by a newer one
}

TEST(StreamBatcher, RoundRobinOldestFirstWithinAStream)
{
    StreamBatcher b(2, 4, FrameQueue::Policy::DropOldest, 0);
    for (uint64_t i = 0; i < 3; ++i)
        b.push(0, frameOf(0, i));
    b.push(1, frameOf(1, 0));
    FramePtr out[4];
    StreamBatcher::Batch batch;
    ASSERT_EQ(b.gather(out, 4, batch), 4u);
    EXPECT_EQ(out[0]->stream, 0u);
    EXPECT_EQ(out[0]->sequence, 0u);
    EXPECT_EQ(out[1]->stream, 1u);
    EXPECT_EQ(out[2]->stream, 0u);
    EXPECT_EQ(out[2]->sequence, 1u);
    EXPECT_EQ(out[3]->sequence, 2u);
    EXPECT_EQ(batch.streams, 2u);
}

TEST(StreamBatcher, OfflineBatchesAreFullAndNothingIsDropped)
{
    StreamBatcher b(2, 4, FrameQueue::Policy::Block, 0);
    b.push(0, frameOf(0, 0));
    b.push(0, frameOf(0, 1));
    std::thread rest([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        b.push(1, frameOf(1, 0));
        b.push(1, frameOf(1, 1));
    });
    FramePtr out[4];
    StreamBatcher::Batch batch;
    ASSERT_EQ(b.gather(out, 4, batch), 4u); // it waited for a full batch
    rest.join();
    EXPECT_EQ(batch.streams, 2u);
    EXPECT_EQ(b.dropped(), 0u);
    // At the end, what is left drains in a partial batch.
    b.push(0, frameOf(0, 2));
    b.close();
    ASSERT_EQ(b.gather(out, 4, batch), 1u);
    EXPECT_EQ(b.gather(out, 4, batch), 0u);
}

TEST(StreamBatcher, AClosedStreamIsNotWaitedFor)
{
    StreamBatcher b(2, 2, FrameQueue::Policy::DropOldest, 10'000 * kMs);
    b.close(1);
    b.push(0, frameOf(0, 0));
    FramePtr out[2];
    StreamBatcher::Batch batch;
    const int64_t start = monotonicNs();
    ASSERT_EQ(b.gather(out, 2, batch), 1u);
    EXPECT_LT(monotonicNs() - start, 5'000 * kMs); // not the 10 s timeout
    EXPECT_FALSE(batch.timedOut);
    EXPECT_FALSE(b.push(1, frameOf(1, 0))); // the closed stream takes nothing
    b.close(0);
    EXPECT_EQ(b.gather(out, 2, batch), 0u);
}

TEST(StreamBatcher, DropsAreCountedPerStream)
{
    StreamBatcher b(2, 1, FrameQueue::Policy::DropOldest, 0);
    for (uint64_t i = 0; i < 3; ++i)
        b.push(0, frameOf(0, i));
    b.push(1, frameOf(1, 0));
    EXPECT_EQ(b.dropped(0), 2u);
    EXPECT_EQ(b.dropped(1), 0u);
    FramePtr out[2];
    StreamBatcher::Batch batch;
    ASSERT_EQ(b.gather(out, 2, batch), 2u);
    EXPECT_EQ(out[0]->sequence, 2u); // the newest of stream 0
}

} // namespace
} // namespace jetagent
