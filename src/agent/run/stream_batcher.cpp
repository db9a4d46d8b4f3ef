// A task's hand-off from several streams to its worker (stream_batcher.h).
#include "run/stream_batcher.h"

#include <algorithm>
#include <chrono>

#include "jetagent/base/clock.h"

namespace jetagent {

StreamBatcher::StreamBatcher(
    size_t streams, size_t capacity, FrameQueue::Policy policy, int64_t timeoutNs)
    : policy_(policy),
      capacity_(std::max<size_t>(capacity, 1)),
      timeoutNs_(std::max<int64_t>(timeoutNs, 0)),
      queues_(std::max<size_t>(streams, 1))
{
    for (Queue& q : queues_)
        q.ring.resize(capacity_ + 1); // the spare slot a waiting batch lends (push)
}

bool StreamBatcher::push(size_t stream, FramePtr frame)
{
    std::unique_lock<std::mutex> lock(mutex_);
    Queue& q = queues_[stream];
    if (policy_ == FrameQueue::Policy::Block)
        notFull_.wait(lock, [&] { return q.closed || q.size < capacity_; });
    if (q.closed)
        return false;
    // Latest wins: a live queue keeps its newest `capacity_` frames. While the worker waits for a
    // batch to fill, one more, so that a stream's next frame ends the wait (readyLocked) rather
    // than replace the frame that waits in the batch.
    const size_t room = waiting_ ? capacity_ + 1 : capacity_;
    while (q.size >= room) {
        q.ring[q.head].reset(); // the oldest frame goes; its buffer returns to the pool
        q.head = (q.head + 1) % q.ring.size();
        --q.size;
        --queued_;
        ++q.dropped;
    }
    q.ring[(q.head + q.size) % q.ring.size()] = std::move(frame);
    ++q.size;
    q.absent = false;
    if (queued_++ == 0)
        firstQueuedNs_ = monotonicNs();
    lock.unlock();
    notEmpty_.notify_one();
    return true;
}

void StreamBatcher::close(size_t stream)
{
    {
        std::lock_guard<std::mutex> lock(mutex_);
        queues_[stream].closed = true;
    }
    notEmpty_.notify_all();
    notFull_.notify_all();
}

void StreamBatcher::close()
{
    {
        std::lock_guard<std::mutex> lock(mutex_);
        for (Queue& q : queues_)
            q.closed = true;
    }
    notEmpty_.notify_all();
    notFull_.notify_all();
}

bool StreamBatcher::spareInUseLocked() const
{
    for (const Queue& q : queues_)
        if (q.size > capacity_)
            return true;
    return false;
}

StreamBatcher::Readiness StreamBatcher::readyLocked(size_t max) const
{
    bool allClosed = true;
    bool everyStreamHasOne = true;
    for (const Queue& q : queues_) {
        allClosed = allClosed && q.closed;
        if (q.size == 0 && !q.closed && !q.absent)
            everyStreamHasOne = false;
    }
    if (allClosed)
        return Readiness::Ready;
    if (queued_ >= max)
        return Readiness::Ready;
    if (policy_ == FrameQueue::Policy::Block)
        return Readiness::NotReady; // offline batches are full
    if (queued_ > 0 && everyStreamHasOne)
        return Readiness::Ready;
    // A stream's next frame came while the batch waited (in the spare slot): waiting longer for
    // the others would only lose its frames. At a timeout of the fastest stream's frame period or
    // more, the wait for a slower stream ends when the fastest stream's next frame comes.
    return spareInUseLocked() ? Readiness::Overflowing : Readiness::NotReady;
}

size_t StreamBatcher::gather(FramePtr* out, size_t max, Batch& batch)
{
    batch = Batch();
    max = std::max<size_t>(max, 1);
    std::unique_lock<std::mutex> lock(mutex_);
    const int64_t calledNs = monotonicNs();
    notEmpty_.wait(lock, [&] {
        if (queued_ > 0)
            return true;
        for (const Queue& q : queues_)
            if (!q.closed)
                return false;
        return true;
    });
    if (queued_ == 0)
        return 0; // every stream closed and drained
    const int64_t waitFromNs = std::max(calledNs, firstQueuedNs_);
    bool waited = false;
    if (readyLocked(max) == Readiness::NotReady) { // (Overflowing: the last batch was full)
        waited = true;
        const auto ready = [&] { return readyLocked(max) != Readiness::NotReady; };
        if (policy_ == FrameQueue::Policy::Block || timeoutNs_ == 0) {
            if (policy_ == FrameQueue::Policy::Block)
                notEmpty_.wait(lock, ready);
        } else {
            // libstdc++'s steady_clock is CLOCK_MONOTONIC, the clock every timestamp here uses.
            const auto deadline = std::chrono::steady_clock::time_point(
                std::chrono::nanoseconds(firstQueuedNs_ + timeoutNs_));
            // The wait runs out at the deadline, or sooner when a stream's next frame comes.
            waiting_ = true;
            const bool filled = notEmpty_.wait_until(lock, deadline, ready);
            waiting_ = false;
            // A spare slot in use means the wait outlasted a stream's frame period: it was a
            // wait for the streams that have no frame, even when the spare frames fill the batch.
            if (!filled || spareInUseLocked()) {
                for (Queue& q : queues_)
                    if (q.size == 0 && !q.closed && !q.absent) {
                        q.absent = true;
                        ++q.waitedFor;
                        batch.timedOut = true;
                    }
            }
        }
    }
    if (waited)
        batch.waitedNs = std::max<int64_t>(0, monotonicNs() - waitFromNs);

    // Round robin, one frame per stream per pass, oldest first within a stream.
    const size_t streams = queues_.size();
    size_t n = 0;
    for (size_t pass = 0; n < max; ++pass) {
        bool tookAny = false;
        for (size_t k = 0; k < streams && n < max; ++k) {
            Queue& q = queues_[(nextStream_ + k) % streams];
            if (q.size == 0)
                continue;
            if (pass == 0)
                ++batch.streams;
            out[n++] = std::move(q.ring[q.head]);
            q.head = (q.head + 1) % q.ring.size();
            --q.size;
            --queued_;
            tookAny = true;
        }
        if (!tookAny)
            break;
    }
    nextStream_ = streams > 0 ? (nextStream_ + 1) % streams : 0; // never 0: see the constructor
    if (queued_ > 0)
        firstQueuedNs_ = monotonicNs(); // what is left starts the next batch's timeout now
    batch.count = n;
    lock.unlock();
    notFull_.notify_all();
    return n;
}

uint64_t StreamBatcher::dropped(size_t stream) const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return queues_[stream].dropped;
}

size_t StreamBatcher::queued(size_t stream) const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return queues_[stream].size;
}

uint64_t StreamBatcher::timeoutsWaitingFor(size_t stream) const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return queues_[stream].waitedFor;
}

uint64_t StreamBatcher::dropped() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    uint64_t total = 0;
    for (const Queue& q : queues_)
        total += q.dropped;
    return total;
}

} // namespace jetagent
