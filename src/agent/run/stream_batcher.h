// A task's hand-off from several streams to its worker: one bounded queue per stream the task
// serves, and a gather that forms each batch from them as DeepStream's nvstreammux does (up to the
// batch size, at most a timeout after the first frame was there). With one stream it is a plain
// queue: latest-wins for paced sources, a blocking FIFO for offline runs. Fixed capacity,
// allocated once; nothing allocates per frame.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "run/frame_queue.h"

namespace jetagent {

class StreamBatcher {
public:
    // What one gather did, for the batch's records.
    struct Batch {
        size_t count = 0; // frames taken
        size_t streams = 0; // distinct streams among them
        int64_t waitedNs = 0; // time the worker waited for more streams once a frame was there
        // The wait ran out with some stream without a frame: the timeout passed, or sooner,
        // another stream's next frame came.
        bool timedOut = false;
    };

    // `streams` queues of `capacity` frames each (and a spare slot, see gather). `timeoutNs`: the
    // longest wait, once a frame is there, for the other streams (DropOldest only; 0 = none: take
    // what is there).
    StreamBatcher(size_t streams, size_t capacity, FrameQueue::Policy policy, int64_t timeoutNs);

    // Producer side, from stream `stream`'s thread. False only when that stream's queue is closed.
    bool push(size_t stream, FramePtr frame);
    // No more frames from `stream`; close() closes every stream.
    void close(size_t stream);
    void close();

    // Consumer side. Waits for a frame, then until the batch is full or every stream that is still
    // open and present has a frame queued, or (DropOldest) the timeout has passed since the first
    // frame was there, or sooner, a stream's next frame comes (it takes a spare slot its queue
    // has only while a batch waits, rather than replace the frame that waits; the batch goes
    // without the streams that have none). A stream the previous batch timed out waiting for is
    // absent: it is not
    // waited for again until it delivers a frame, so a stalled camera costs the others one timeout,
    // not one per batch. With Block, the batch waits to be full (offline runs never drop). Frames
    // are taken round robin, oldest first within a stream, starting each batch one stream further
    // on, so a batch smaller than the streams serves them in turn. Returns 0 once every stream is
    // closed and empty.
    size_t gather(FramePtr* out, size_t max, Batch& batch);

    uint64_t dropped(size_t stream) const;
    uint64_t dropped() const; // all streams
    // Batches that timed out while `stream` (open, present) had no frame: the waits it cost the
    // others. At most one between two of its frames, however late it is.
    uint64_t timeoutsWaitingFor(size_t stream) const;
    size_t queued(size_t stream) const; // frames waiting in `stream`'s queue now
    size_t streams() const { return queues_.size(); }
    size_t capacity() const { return capacity_; } // per stream

private:
    struct Queue {
        std::vector<FramePtr> ring;
        size_t head = 0;
        size_t size = 0;
        bool closed = false;
        bool absent = false; // timed out in the previous batch; present again with its next frame
        uint64_t dropped = 0;
        uint64_t waitedFor = 0; // batches that timed out waiting for it
    };
    enum class Readiness {
        NotReady,
        Ready, // full, every present stream has a frame, or every stream closed
        Overflowing, // not Ready, but a stream holds more than `capacity_` (its spare slot)
    };
    Readiness readyLocked(size_t max) const;
    bool spareInUseLocked() const; // some stream holds more than `capacity_` frames

    const FrameQueue::Policy policy_;
    const size_t capacity_;
    const int64_t timeoutNs_;
    mutable std::mutex mutex_;
    std::condition_variable notEmpty_;
    std::condition_variable notFull_;
    std::vector<Queue> queues_;
    size_t queued_ = 0; // frames in every queue
    int64_t firstQueuedNs_ = 0; // when `queued_` last went from 0 to 1
    size_t nextStream_ = 0; // where the next round robin starts
    bool waiting_ = false; // the worker waits for a batch to fill (DropOldest): a spare slot each
};

} // namespace jetagent
