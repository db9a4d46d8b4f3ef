// Frame hand-off: latest-wins and blocking queues, the frame pool, the record ring.
#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "run/frame_queue.h"
#include "run/spsc_ring.h"

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
