// The running agent: one source thread per stream feeding one worker thread per task.
//
//   source thread (per stream) --frames--> StreamBatcher (per task) --> worker: Task::process
//                                                                           --> Recorder
//
// The workers only fill each record and hand it to the recorder (lock-free), which derives,
// counts, attributes energy and passes it on to the logs (recorder.h).
// Each frame is decoded once and shared read-only by every task. Paced sources hand over through
// latest-wins queues (drops counted); unpaced ones through blocking FIFOs (nothing dropped). A task
// that serves several streams batches the newest frame of each (stream_batcher.h). A view
// (FrameView: the window, the recording, the live page's video) gets every stream's frames and
// every record beside the tasks.
#pragma once

#include "run/run_options.h"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "jetagent/base/enum_names.h"
#include "run/frame_queue.h"
#include "run/recorder.h"
#include "run/stream_batcher.h"
#include "run/task.h"

namespace jetagent {

// Called by each task's worker around Task::process, for signals that follow inference (GPIO).
// `task` is the task's index in the pipeline's slots. Implementations run on the hot path: no
// allocation, no blocking beyond a short lock.
class FrameHooks {
public:
    virtual ~FrameHooks() = default;
    FrameHooks() = default;
    FrameHooks(const FrameHooks&) = delete;
    FrameHooks& operator=(const FrameHooks&) = delete;

    // Before the task processes a batch starting with frame `frameId`.
    virtual void beforeInference(size_t task, uint64_t frameId) = 0;
    // After, once per record, before the record goes to the statistics and the log (so the hook
    // may fill in fields such as the measurement window).
    virtual void afterInference(size_t task, FrameRecord& record) = 0;
};

// A view of the run beside the tasks (the live window, the recording): it takes every captured
// frame of every stream (Frame::stream says which) and every task's records, so that it can draw
// each frame with that frame's own results. Each stream numbers its frames from 0: a record
// belongs to the frame of the same stream and frame id. The workers call onRecord once per record,
// in frame order within each stream, and onTaskFinished when they end; both run on the hot path:
// no allocation, no blocking beyond a short lock. The frame queue closes once every stream ended.
class FrameView {
public:
    virtual ~FrameView() = default;
    FrameView() = default;
    FrameView(const FrameView&) = delete;
    FrameView& operator=(const FrameView&) = delete;

    // Where the source thread puts every frame it captures; closed with the tasks' queues.
    virtual FrameQueue& frames() = 0;
    virtual void onRecord(size_t task, const FrameRecord& record) = 0;
    virtual void onTaskFinished(size_t task) = 0;
};

// One of the run's streams: a name (the config's) and the source it reads.
struct PipelineStream {
    std::string name;
    FrameSource* source = nullptr;
};

// Which streams a task serves (indices into the run's streams; empty: all) and how long its
// gather waits for the others once a frame is there (-1: half the fastest stream's frame period,
// so that a frame that waited it all still meets the default deadline of one period; 0: no wait).
struct TaskWiring {
    std::vector<size_t> streams;
    int64_t batchTimeoutNs = -1;
};

class Pipeline {
public:
    // The frames the run can hold at once (queued for each task, in the workers' hands, queued
    // for the view): what the frame pool may grow to. `viewQueue`: the view's queue capacity.
    // One stream's: every task is counted as if it served it, and the view's queue as if it held
    // only this stream's frames.
    static size_t framesInFlight(
        const RunConfig& run, const std::vector<const Task*>& tasks, size_t viewQueue, bool view);
    // Frames a task keeps queued per stream when it serves `streams` of them.
    static size_t queueCapacity(const RunConfig& run, const Task& task, size_t streams = 1);
    // The batch timeout a task's wiring resolves to for these streams (see TaskWiring).
    static int64_t batchTimeoutNs(
        const TaskWiring& wiring, const std::vector<PipelineStream>& streams);

    // Each task's records go to `recorder` (its task index is the task's here). `view`, when
    // given, receives every frame and every record too. Sources, recorder
    // and view must outlive the run. `wiring`: per task, or empty (every task serves every
    // stream, with the default timeout).
    Pipeline(std::vector<PipelineStream> streams, const RunConfig& run,
        const std::vector<Task*>& tasks, std::vector<TaskWiring> wiring, Recorder& recorder,
        FrameView* view = nullptr);
    // A run of one stream.
    Pipeline(FrameSource& source, const RunConfig& run, const std::vector<Task*>& tasks,
        Recorder& recorder, FrameView* view = nullptr);
    ~Pipeline();
    Pipeline(const Pipeline&) = delete;
    Pipeline& operator=(const Pipeline&) = delete;

    // Before start(): `hooks` (which must outlive the run) sees every inference.
    void setHooks(FrameHooks* hooks) { hooks_ = hooks; }
    void start();
    // Stops capture; frames already taken are finished and logged. Thread-safe; the first reason
    // stays.
    void requestStop(const std::string& reason);
    // True once the source has stopped and every worker has drained its queue.
    bool finished() const { return running_.load() == 0; }
    // An eventfd that becomes readable once every thread of the run has finished (for an event
    // loop; waitFinished() is the blocking form). -1 if the kernel refused one.
    int finishedFd() const { return finishedFd_; }
    // Waits up to `timeoutMs` for finished(); returns finished().
    bool waitFinished(int timeoutMs);
    void join();

    uint64_t dropped(size_t task) const { return workers_[task]->queue.dropped(); }
    // ... of run stream `stream` (0 when the task does not serve it).
    uint64_t dropped(size_t task, size_t stream) const;
    // Batches of task `task` that timed out waiting for run stream `stream` (0 when the task does
    // not serve it): StreamBatcher::timeoutsWaitingFor. Thread-safe.
    uint64_t batchTimeoutsWaitingFor(size_t task, size_t stream) const;
    // Frames waiting in task `task`'s queue of run stream `stream` now (0 when it does not serve
    // it). Thread-safe.
    size_t queueDepth(size_t task, size_t stream) const;
    // Times run stream `stream`'s source came back after a loss (FrameSource::stats). Thread-safe.
    uint64_t reconnects(size_t stream) const;
    uint64_t framesCaptured() const { return captured_.load(); } // every stream's
    uint64_t framesCaptured(size_t stream) const { return streams_[stream]->captured.load(); }
    size_t streamCount() const { return streams_.size(); }
    const std::string& streamName(size_t stream) const { return streams_[stream]->name; }
    // The run streams task `task` serves, in its batcher's order.
    const std::vector<size_t>& taskStreams(size_t task) const { return workers_[task]->streams; }
    int64_t taskBatchTimeoutNs(size_t task) const { return workers_[task]->timeoutNs; }
    static constexpr int64_t kCaptureGapNs = 1'000'000'000;
    // Gaps in capture: times between two frames a source delivered longer than kCaptureGapNs
    // and four of the source's periods. The process stopped
    // (SIGSTOP, a debugger, a suspended VM) or a source that stalled: the run's figures do not
    // cover that time. Every stream's, added up (captureGaps(stream): one stream's). Read once the
    // run has finished.
    struct CaptureGaps {
        uint64_t count = 0;
        int64_t totalNs = 0;
        int64_t longestNs = 0;
        int64_t longestAtNs = 0; // when the longest ended, from the run's start
        int64_t thresholdNs = kCaptureGapNs; // what counted as a gap in this run
    };
    CaptureGaps captureGaps() const;
    CaptureGaps captureGaps(size_t stream) const;
    int64_t startNs() const { return startNs_; }
    // When the source handed over the run's first frame (monotonic ns); -1 before one came.
    int64_t firstFrameNs() const { return firstFrameNs_.load(); }
    int64_t processCpuAtStartNs() const { return cpuAtStartNs_; } // processCpuNs() at start()
    int64_t endNs() const { return endNs_; }
    std::string stopReason() const;
    // The first failure that ended the run (source error, a task failing repeatedly); ok otherwise.
    Status failure() const;

    size_t taskCount() const { return workers_.size(); }

private:
    struct Worker {
        Worker(Task* t, size_t i, std::vector<size_t> s, size_t capacity, FrameQueue::Policy policy,
            int64_t timeout)
            : task(t),
              index(i),
              streams(std::move(s)),
              timeoutNs(timeout),
              queue(streams.size(), capacity, policy, timeout)
        {
        }
        Task* task;
        size_t index;
        std::vector<size_t> streams; // run streams, by batcher slot
        int64_t timeoutNs;
        StreamBatcher queue;
        std::thread thread;
    };
    struct Stream {
        std::string name;
        FrameSource* source = nullptr;
        std::unique_ptr<FramePool> pool;
        // The workers that serve it, with the stream's slot in each one's batcher.
        std::vector<std::pair<Worker*, size_t>> consumers;
        std::thread thread;
        std::atomic<uint64_t> captured {0};
        CaptureGaps gaps; // guarded by mutex_
        bool ended = false; // guarded by mutex_
    };

    void sourceLoop(Stream& stream, size_t index);
    void closeQueues(); // every source is done: workers drain what is queued, then end
    void closeStream(Stream& stream); // one source is done
    // A stream ended for `reason`: the run stops once every stream has.
    void streamEnded(const std::string& reason);
    void workerLoop(Worker& worker);
    void fail(const Status& status, const std::string& reason);
    void threadDone();

    std::vector<std::unique_ptr<Stream>> streams_;
    RunConfig run_;
    Recorder& recorder_;
    FrameView* view_ = nullptr;
    FrameHooks* hooks_ = nullptr;
    std::vector<std::unique_ptr<Worker>> workers_;
    std::atomic<int> running_ {0};
    int finishedFd_ = -1;
    std::atomic<uint64_t> captured_ {0};
    std::atomic<size_t> streamsClosed_ {0}; // source threads that closed their stream's queues
    std::atomic<int64_t> firstFrameNs_ {-1};
    int64_t startNs_ = 0;
    int64_t cpuAtStartNs_ = 0;
    int64_t endNs_ = 0;

    mutable std::mutex mutex_; // guards the fields below and the streams' gaps
    size_t streamsEnded_ = 0;
    std::condition_variable changed_;
    bool stop_ = false;
    std::string stopReason_;
    Status failure_;
};

} // namespace jetagent
