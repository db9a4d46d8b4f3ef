// Hand-off of frames from the source thread to a task's worker.
#include "run/frame_queue.h"

#include <algorithm>

#include "jetagent/base/log.h"

namespace jetagent {

FrameQueue::FrameQueue(size_t capacity, Policy policy)
    : policy_(policy), ring_(std::max<size_t>(capacity, 1))
{
}

bool FrameQueue::push(FramePtr frame)
{
    std::unique_lock<std::mutex> lock(mutex_);
    if (policy_ == Policy::Block)
        notFull_.wait(lock, [&] { return closed_ || size_ < ring_.size(); });
    if (closed_)
        return false;
    if (size_ == ring_.size()) {
        ring_[head_].reset(); // the oldest frame goes; its buffer returns to the pool
        head_ = (head_ + 1) % ring_.size();
        --size_;
        ++dropped_;
    }
    ring_[(head_ + size_) % ring_.size()] = std::move(frame);
    ++size_;
    lock.unlock();
    notEmpty_.notify_one();
    return true;
}

size_t FrameQueue::pop(FramePtr* out, size_t max)
{
    std::unique_lock<std::mutex> lock(mutex_);
    const size_t want = policy_ == Policy::Block ? std::min(max, ring_.size()) : 1;
    notEmpty_.wait(lock, [&] { return size_ >= want || closed_; });
    const size_t n = std::min(size_, max);
    for (size_t i = 0; i < n; ++i) {
        out[i] = std::move(ring_[head_]);
        head_ = (head_ + 1) % ring_.size();
    }
    size_ -= n;
    lock.unlock();
    notFull_.notify_one();
    return n;
}

void FrameQueue::close()
{
    {
        std::lock_guard<std::mutex> lock(mutex_);
        closed_ = true;
    }
    notEmpty_.notify_all();
    notFull_.notify_all();
}

uint64_t FrameQueue::dropped() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return dropped_;
}

FramePool::FramePool(size_t count)
{
    for (size_t i = 0; i < count; ++i)
        frames_.push_back(std::make_shared<Frame>());
}

std::shared_ptr<Frame> FramePool::acquire()
{
    for (size_t tried = 0; tried < frames_.size(); ++tried) {
        auto& candidate = frames_[next_];
        next_ = (next_ + 1) % frames_.size();
        // use_count() == 1: only the pool holds it. No other thread can take a new reference to a
        // frame the pool alone holds, so the answer cannot go stale before we hand it out.
        if (candidate.use_count() == 1)
            return candidate;
    }
    logger("pipeline")->debug("frame pool exhausted at {} frames; growing by one", frames_.size());
    frames_.push_back(std::make_shared<Frame>());
    return frames_.back();
}

} // namespace jetagent
