// Frame hand-off: latest-wins and blocking queues, the batches of several streams, the frame pool,
// the record ring.
#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include <gtest/gtest.h>

#include "run/frame_queue.h"
#include "run/spsc_ring.h"
#include "run/stream_batcher.h"

namespace jetagent {
namespace {

FramePtr frame(uint64_t sequence)
{
    auto f = std::make_shared<Frame>();
    f->sequence = sequence;
    return f;
}

TEST(FrameQueue, DropOldestKeepsTheNewestAndCountsDrops)
{
    FrameQueue q(1, FrameQueue::Policy::DropOldest);
    for (uint64_t i = 0; i < 5; ++i)
        ASSERT_TRUE(q.push(frame(i)));
    EXPECT_EQ(q.dropped(), 4u);
    FramePtr out[4];
    ASSERT_EQ(q.pop(out, 4), 1u);
    EXPECT_EQ(out[0]->sequence, 4u);
}

TEST(FrameQueue, DropOldestWithRoomForABatch)
{
    FrameQueue q(3, FrameQueue::Policy::DropOldest);
    for (uint64_t i = 0; i < 5; ++i)
        q.push(frame(i));
    EXPECT_EQ(q.dropped(), 2u);
    FramePtr out[3];
    ASSERT_EQ(
        q.pop(out, 3), 3u); // a live queue hands over the newest frames it holds, without waiting
    EXPECT_EQ(out[0]->sequence, 2u);
    EXPECT_EQ(out[2]->sequence, 4u);
}

TEST(FrameQueue, BlockingQueueNeverDropsAndWaitsForRoom)
{
    FrameQueue q(2, FrameQueue::Policy::Block);
    std::atomic<uint64_t> pushed {0};
    std::thread producer([&] {
        for (uint64_t i = 0; i < 100; ++i) {
            q.push(frame(i));
            pushed = i + 1;
        }
        q.close();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_LE(pushed.load(), 2u); // the producer waits on a full queue
    uint64_t expected = 0;
    FramePtr out[1];
    while (size_t n = q.pop(out, 1)) {
        ASSERT_EQ(n, 1u);
        EXPECT_EQ(out[0]->sequence, expected++);
    }
    producer.join();
    EXPECT_EQ(expected, 100u);
    EXPECT_EQ(q.dropped(), 0u);
}

TEST(FrameQueue, BlockingPopFillsBatchesAndDrainsTheRestAfterClose)
{
    FrameQueue q(4, FrameQueue::Policy::Block);
    for (uint64_t i = 0; i < 3; ++i)
        q.push(frame(i));
    std::thread closer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        q.push(frame(3));
        q.push(frame(4));
        q.close();
    });
    FramePtr out[4];
    EXPECT_EQ(q.pop(out, 4), 4u); // waited for a full batch
    EXPECT_EQ(out[3]->sequence, 3u);
    EXPECT_EQ(q.pop(out, 4), 1u); // the remainder once closed
    EXPECT_EQ(out[0]->sequence, 4u);
    EXPECT_EQ(q.pop(out, 4), 0u);
    closer.join();
    EXPECT_FALSE(q.push(frame(9)));
}

FramePtr frameOf(size_t stream, uint64_t sequence)
{
    auto f = std::make_shared<Frame>();
    f->sequence = sequence;
    f->stream = static_cast<uint16_t>(stream);
    return f;
}

// A batch that waits for a slower stream ends when a faster stream's next frame comes, long before
// its timeout, and keeps both of that stream's frames, though its queue holds one: at a timeout of
// the fastest stream's frame period the next frame came just as the wait ended, and
// replaced the waiting frame about every other time (a fifth of a 30 fps stream's frames were lost
// beside a 15 fps one). The stream that had no frame is then absent, so the next batch does not
// wait for it.
TEST(StreamBatcher, AFasterStreamsNextFrameEndsTheWaitInsteadOfReplacingTheWaitingFrame)
{
    constexpr int64_t kTimeoutNs = 10'000'000'000; // far longer than the test
    StreamBatcher batcher(3, 1, FrameQueue::Policy::DropOldest, kTimeoutNs);
    ASSERT_TRUE(batcher.push(0, frameOf(0, 0)));
    ASSERT_TRUE(batcher.push(1, frameOf(1, 0)));
    FramePtr out[4];
    StreamBatcher::Batch batch;
    const auto start = std::chrono::steady_clock::now();
    auto gathered = std::async(std::launch::async, [&] { return batcher.gather(out, 4, batch); });
    // Stream 2 has nothing: the gather waits.
    EXPECT_EQ(gathered.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
    ASSERT_TRUE(batcher.push(0, frameOf(0, 1))); // into the spare slot: the wait ends
    ASSERT_EQ(gathered.wait_for(std::chrono::seconds(5)), std::future_status::ready);
    ASSERT_EQ(gathered.get(), 3u);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    EXPECT_TRUE(batch.timedOut);
    EXPECT_EQ(batch.streams, 2u);
    EXPECT_GE(batch.waitedNs, 50'000'000); // about the 100 ms, less the thread's start
    EXPECT_EQ(out[0]->stream, 0u);
    EXPECT_EQ(out[0]->sequence, 0u);
    EXPECT_EQ(out[1]->stream, 1u);
    EXPECT_EQ(out[2]->stream, 0u);
    EXPECT_EQ(out[2]->sequence, 1u);
    EXPECT_EQ(batcher.dropped(), 0u);

    // Stream 2 is absent: streams 0 and 1 make a batch without waiting.
    ASSERT_TRUE(batcher.push(1, frameOf(1, 1)));
    ASSERT_TRUE(batcher.push(0, frameOf(0, 2)));
    ASSERT_EQ(batcher.gather(out, 4, batch), 2u);
    EXPECT_FALSE(batch.timedOut);
    EXPECT_EQ(batch.waitedNs, 0);

    // Its next frame makes it present again: a batch with it, then one that waits for it.
    ASSERT_TRUE(batcher.push(2, frameOf(2, 0)));
    ASSERT_TRUE(batcher.push(0, frameOf(0, 3)));
    ASSERT_TRUE(batcher.push(1, frameOf(1, 2)));
    ASSERT_EQ(batcher.gather(out, 4, batch), 3u);
    EXPECT_EQ(batch.streams, 3u);
    ASSERT_TRUE(batcher.push(0, frameOf(0, 4)));
    ASSERT_TRUE(batcher.push(1, frameOf(1, 3)));
    gathered = std::async(std::launch::async, [&] { return batcher.gather(out, 4, batch); });
    EXPECT_EQ(gathered.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
    ASSERT_TRUE(batcher.push(2, frameOf(2, 1)));
    ASSERT_EQ(gathered.wait_for(std::chrono::seconds(5)), std::future_status::ready);
    EXPECT_EQ(gathered.get(), 3u);
    EXPECT_FALSE(batch.timedOut);
    EXPECT_EQ(batch.streams, 3u);
    EXPECT_EQ(batcher.dropped(), 0u);
    batcher.close();
}

// The same when the spare frame fills the batch (a batch of three from three streams, two of them
// there): the batch waited a whole frame period for the third, which is then absent. Counting only
// the waits that ended short of a full batch, a stalled stream beside two paced ones was waited
// for in every batch, never marked absent.
TEST(StreamBatcher, ASpareFrameThatFillsTheBatchStillEndsAWaitForTheStreamWithout)
{
    constexpr int64_t kTimeoutNs = 10'000'000'000; // far longer than the test
    StreamBatcher batcher(3, 1, FrameQueue::Policy::DropOldest, kTimeoutNs);
    ASSERT_TRUE(batcher.push(0, frameOf(0, 0)));
    ASSERT_TRUE(batcher.push(1, frameOf(1, 0)));
    FramePtr out[3];
    StreamBatcher::Batch batch;
    auto gathered = std::async(std::launch::async, [&] { return batcher.gather(out, 3, batch); });
    EXPECT_EQ(gathered.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
    ASSERT_TRUE(batcher.push(0, frameOf(0, 1))); // the spare slot: three frames, a full batch
    ASSERT_EQ(gathered.wait_for(std::chrono::seconds(5)), std::future_status::ready);
    ASSERT_EQ(gathered.get(), 3u);
    EXPECT_TRUE(batch.timedOut);
    EXPECT_EQ(batch.streams, 2u);
    EXPECT_EQ(batcher.timeoutsWaitingFor(2), 1u);
    EXPECT_EQ(batcher.timeoutsWaitingFor(0) + batcher.timeoutsWaitingFor(1), 0u);
    // Stream 2 is absent: the next batch of 0 and 1 goes without waiting.
    ASSERT_TRUE(batcher.push(0, frameOf(0, 2)));
    ASSERT_TRUE(batcher.push(1, frameOf(1, 1)));
    ASSERT_EQ(batcher.gather(out, 3, batch), 2u);
    EXPECT_FALSE(batch.timedOut);
    EXPECT_EQ(batch.waitedNs, 0);
    EXPECT_EQ(batcher.timeoutsWaitingFor(2), 1u);
    batcher.close();
}

// With no batch waiting, a live queue keeps only its newest frames (the worker is behind: the
// frames it has not taken yet are replaced, and counted).
TEST(StreamBatcher, WithoutAWaitingBatchTheNewestFrameWins)
{
    StreamBatcher batcher(2, 1, FrameQueue::Policy::DropOldest, 10'000'000'000);
    ASSERT_TRUE(batcher.push(0, frameOf(0, 0)));
    ASSERT_TRUE(batcher.push(0, frameOf(0, 1)));
    ASSERT_TRUE(batcher.push(0, frameOf(0, 2)));
    ASSERT_TRUE(batcher.push(1, frameOf(1, 0)));
    EXPECT_EQ(batcher.dropped(0), 2u);
    EXPECT_EQ(batcher.dropped(1), 0u);
    FramePtr out[4];
    StreamBatcher::Batch batch;
    ASSERT_EQ(batcher.gather(out, 4, batch), 2u);
    EXPECT_EQ(out[0]->stream, 0u);
    EXPECT_EQ(out[0]->sequence, 2u);
    EXPECT_EQ(out[1]->stream, 1u);
    EXPECT_EQ(batch.waitedNs, 0);
    batcher.close();
}

// The timeout alone: a stream that delivers nothing costs the others one timeout, then none.
TEST(StreamBatcher, AStalledStreamCostsOneTimeout)
{
    constexpr int64_t kTimeoutNs = 50'000'000;
    StreamBatcher batcher(2, 1, FrameQueue::Policy::DropOldest, kTimeoutNs);
    FramePtr out[2];
    StreamBatcher::Batch batch;
    ASSERT_TRUE(batcher.push(0, frameOf(0, 0)));
    ASSERT_EQ(batcher.gather(out, 2, batch), 1u);
    EXPECT_TRUE(batch.timedOut);
    EXPECT_GE(batch.waitedNs, kTimeoutNs);
    for (uint64_t i = 1; i < 4; ++i) {
        ASSERT_TRUE(batcher.push(0, frameOf(0, i)));
        ASSERT_EQ(batcher.gather(out, 2, batch), 1u);
        EXPECT_FALSE(batch.timedOut);
        EXPECT_EQ(batch.waitedNs, 0);
    }
    EXPECT_EQ(batcher.dropped(), 0u);
    EXPECT_EQ(batcher.timeoutsWaitingFor(0), 0u);
    EXPECT_EQ(batcher.timeoutsWaitingFor(1), 1u); // the stalled stream: one wait in four batches
    batcher.close();
    EXPECT_EQ(batcher.gather(out, 2, batch), 0u);
}

TEST(FramePool, ReusesFramesOnceEveryoneLetsGo)
{
    FramePool pool(2);
    auto a = pool.acquire();
    auto b = pool.acquire();
    EXPECT_NE(a.get(), b.get());
    Frame* first = a.get();
    FramePtr held = a; // a queue still holds it
    a.reset();
    auto c = pool.acquire(); // a is held elsewhere, b by us: the pool grows rather than stall
    EXPECT_NE(c.get(), first);
    EXPECT_EQ(pool.size(), 3u);
    held.reset();
    c.reset();
    b.reset();
    auto d = pool.acquire();
    auto e = pool.acquire();
    auto f = pool.acquire();
    EXPECT_EQ(pool.size(), 3u); // all three free again: no growth
    EXPECT_TRUE(d.get() == first || e.get() == first || f.get() == first);
}

TEST(SpscRing, OrderCapacityAndConcurrentTransfer)
{
    SpscRing<int> ring(3);
    EXPECT_TRUE(ring.push(1));
    EXPECT_TRUE(ring.push(2));
    EXPECT_TRUE(ring.push(3));
    EXPECT_FALSE(ring.push(4)); // full
    int v = 0;
    EXPECT_TRUE(ring.pop(v));
    EXPECT_EQ(v, 1);

    SpscRing<uint64_t> big(64);
    constexpr uint64_t kCount = 200000;
    std::thread producer([&] {
        for (uint64_t i = 0; i < kCount;)
            if (big.push(i))
                ++i;
    });
    uint64_t next = 0, value = 0;
    while (next < kCount) {
        if (big.pop(value)) {
            ASSERT_EQ(value, next++);
        }
    }
    producer.join();
}

} // namespace
} // namespace jetagent
