// Hand-off of frames from the source thread to a task's worker: latest-wins for paced sources, a
// blocking FIFO for offline runs. Fixed capacity, allocated once.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "jetagent/hal/frame_source.h"

namespace jetagent {

using FramePtr = std::shared_ptr<const Frame>;

class FrameQueue {
public:
    enum class Policy {
        DropOldest, // a full queue drops its oldest frame (counted): the worker always sees the
                    // newest
        Block, // a full queue makes the producer wait: nothing is dropped
    };

    FrameQueue(size_t capacity, Policy policy);

    // Producer side. Returns false only when the queue is closed.
    bool push(FramePtr frame);
    // Consumer side: waits for a frame and takes up to `max`. With Block, it waits until `max`
    // frames are there (or the queue is closed), so offline batches are full. Returns 0 once closed
    // and empty.
    size_t pop(FramePtr* out, size_t max);
    // No more frames will come; pop() drains what is left, then returns 0.
    void close();

    uint64_t dropped() const;
    size_t capacity() const { return ring_.size(); }

private:
    const Policy policy_;
    mutable std::mutex mutex_;
    std::condition_variable notEmpty_;
    std::condition_variable notFull_;
    std::vector<FramePtr> ring_;
    size_t head_ = 0; // oldest
    size_t size_ = 0;
    bool closed_ = false;
    uint64_t dropped_ = 0;
};

// A fixed set of frames the source thread fills in turn. A frame is free again once every queue and
// worker has let go of it, so pixel buffers are reused instead of allocated per frame.
class FramePool {
public:
    explicit FramePool(size_t count);

    // A frame nobody else holds. Only the single producer thread may call this. If every frame is
    // still in use (a sizing error), the pool grows by one rather than stall capture.
    std::shared_ptr<Frame> acquire();
    size_t size() const { return frames_.size(); }

private:
    std::vector<std::shared_ptr<Frame>> frames_;
    size_t next_ = 0;
};

} // namespace jetagent
