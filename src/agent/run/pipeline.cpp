// The running agent: a source thread feeding one worker thread per task, which hand their records
// to the recorder.
#include "run/pipeline.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <sys/eventfd.h>
#include <unistd.h>

#include "jetagent/base/clock.h"
#include "jetagent/base/log.h"
#include "jetagent/base/process_usage.h"
#include "jetagent/base/thread_guard.h"

namespace jetagent {

namespace {

constexpr int kMaxConsecutiveFailures = 10;

std::chrono::steady_clock::time_point toTimePoint(int64_t ns)
{
    // libstdc++'s steady_clock is CLOCK_MONOTONIC, the clock every timestamp here comes from.
    return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(ns));
}

} // namespace

Pipeline::Pipeline(FrameSource& source, const RunConfig& run, const std::vector<Task*>& tasks,
    Recorder& recorder, FrameView* view)
    : source_(source),
      run_(run),
      recorder_(recorder),
      view_(view),
      finishedFd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK))
{
    const bool paced = run.pacing == Pacing::Realtime;
    std::vector<const Task*> raw;
    for (Task* task : tasks) {
        raw.push_back(task);
        workers_.push_back(
            std::make_unique<Worker>(task, workers_.size(), queueCapacity(run, *task),
                paced ? FrameQueue::Policy::DropOldest : FrameQueue::Policy::Block));
    }
    pool_ = std::make_unique<FramePool>(
        framesInFlight(run, raw, view_ ? view_->frames().capacity() : 0, view_ != nullptr));
}

size_t Pipeline::queueCapacity(const RunConfig& run, const Task& task)
{
    const size_t batch = static_cast<size_t>(std::max(task.batchSize(), 1));
    // Paced: keep just the newest frames the task can use (a batch; an action task's burst).
    // Unpaced: a FIFO deep enough for full batches.
    return run.pacing == Pacing::Realtime ? std::max(task.liveQueueCapacity(), batch)
                                          : std::max(static_cast<size_t>(run.queueDepth), batch);
}

size_t Pipeline::framesInFlight(
    const RunConfig& run, const std::vector<const Task*>& tasks, size_t viewQueue, bool view)
{
    size_t frames = 2; // one being filled, one spare
    for (const Task* task : tasks)
        frames += queueCapacity(run, *task) +
            static_cast<size_t>(std::max(task->batchSize(), 1)); // queued, in the worker's hands
    if (view)
        frames += viewQueue + 1; // queued, plus the one being drawn
    return frames;
}

Pipeline::~Pipeline()
{
    requestStop("shutdown");
    join();
    if (finishedFd_ >= 0)
        ::close(finishedFd_);
}

void Pipeline::start()
{
    startNs_ = monotonicNs();
    cpuAtStartNs_ = processCpuNs();
    running_ = static_cast<int>(workers_.size()) + 1;
    // A thread that throws (memory ran out, a library's exception) ends the run as a failure, its
    // queues closed so that no other thread waits on it, and the summary is still written. So
    // does a thread the system cannot start (a tight `ulimit -v`): the run ends with what the
    // threads already started measured, and the failure names the limit.
    size_t started = 0;
    Status refused;
    for (auto& w : workers_) {
        Worker* worker = w.get();
        const std::string name = "task " + worker->task->name();
        refused = startThread(worker->thread, name, [this, worker, name] {
            guardThread(
                name, [&] { workerLoop(*worker); },
                [&](const std::string& why) {
                    fail(Status::runtime(why), name + " failed");
                    worker->queue.close();
                    if (view_)
                        view_->onTaskFinished(worker->index);
                    threadDone();
                });
        });
        if (!refused)
            break;
        ++started;
    }
    if (refused)
        refused = startThread(sourceThread_, "source", [this] {
            guardThread(
                "source " + source_.info().uri, [&] { sourceLoop(); },
                [&](const std::string& why) {
                    fail(Status::runtime(why), "source failed");
                    closeQueues();
                    threadDone();
                });
        });
    if (refused)
        return;
    // The threads that did start drain and end; those that did not are done already.
    fail(refused, "a thread could not be started");
    closeQueues();
    for (size_t i = started; i < workers_.size(); ++i)
        if (view_)
            view_->onTaskFinished(workers_[i]->index);
    for (size_t i = started; i < workers_.size() + 1; ++i)
        threadDone();
}

void Pipeline::requestStop(const std::string& reason)
{
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!stop_) {
            stop_ = true;
            stopReason_ = reason;
        }
    }
    changed_.notify_all();
}

void Pipeline::fail(const Status& status, const std::string& reason)
{
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (failure_.ok())
            failure_ = status;
    }
    requestStop(reason);
}

void Pipeline::threadDone()
{
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (--running_ == 0) {
            endNs_ = monotonicNs();
            const uint64_t one = 1;
            if (finishedFd_ >= 0) [[maybe_unused]]
                const ssize_t n = ::write(finishedFd_, &one, sizeof one);
        }
    }
    changed_.notify_all();
}

bool Pipeline::waitFinished(int timeoutMs)
{
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(
        lock, std::chrono::milliseconds(timeoutMs), [&] { return running_.load() == 0; });
    return running_.load() == 0;
}

void Pipeline::join()
{
    if (sourceThread_.joinable())
        sourceThread_.join();
    for (auto& w : workers_)
        if (w->thread.joinable())
            w->thread.join();
}

std::string Pipeline::stopReason() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return stopReason_;
}

Pipeline::CaptureGaps Pipeline::captureGaps() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return gaps_;
}

Status Pipeline::failure() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return failure_;
}

void Pipeline::sourceLoop()
{
    auto log = logger("pipeline");
    const SourceInfo& info = source_.info();
    const bool paced = run_.pacing == Pacing::Realtime && !info.live && info.fps > 0.0;
    const int64_t period = paced ? static_cast<int64_t>(std::llround(1e9 / info.fps)) : 0;
    const int64_t durationNs = static_cast<int64_t>(run_.durationS * 1e9);
    int64_t due = startNs_;
    uint64_t produced = 0;
    uint64_t lateRestarts = 0;
    // Longer than this between two delivered frames is a gap in capture (see captureGaps()).
    const int64_t gapNs = std::max(Pipeline::kCaptureGapNs,
        info.fps > 0.0 ? static_cast<int64_t>(std::llround(4e9 / info.fps)) : int64_t(0));
    int64_t lastDeliveredNs = 0; // none yet: the wait for the first frame is start-up, not a gap
    {
        std::lock_guard<std::mutex> lock(mutex_);
        gaps_.thresholdNs = gapNs;
    }

    while (true) {
        if (run_.frames > 0 && produced >= run_.frames) {
            requestStop("frame limit reached");
            break;
        }
        const int64_t now = monotonicNs();
        if (durationNs > 0 && (paced ? due : now) - startNs_ >= durationNs) {
            requestStop("duration reached");
            break;
        }
        {
            std::unique_lock<std::mutex> lock(mutex_);
            if (paced)
                changed_.wait_until(lock, toTimePoint(due), [&] { return stop_; });
            if (stop_)
                break;
        }

        std::shared_ptr<Frame> frame = pool_->acquire();
        auto result = source_.read(*frame);
        if (!result) {
            // Most sources name themselves in their errors already: the URI once, not twice.
            const Status& s = result.status();
            fail(s.message().rfind(info.uri, 0) == 0
                    ? Status::error(s.kind(), "source " + s.message())
                    : s.withContext("source " + info.uri),
                "source failed");
            break;
        }
        if (result.value() == ReadResult::EndOfStream) {
            requestStop(source_.endDetail().empty() ? std::string("end of stream")
                                                    : "end of stream " + source_.endDetail());
            break;
        }
        if (result.value() == ReadResult::NoFrame)
            continue; // a live source waiting (a stall, a reconnect): look at stop and go on
        ++produced;
        captured_.store(produced, std::memory_order_relaxed);
        const int64_t delivered = monotonicNs();
        if (produced == 1)
            firstFrameNs_.store(delivered);
        if (lastDeliveredNs > 0 && delivered - lastDeliveredNs > gapNs) {
            std::lock_guard<std::mutex> lock(mutex_);
            ++gaps_.count;
            gaps_.totalNs += delivered - lastDeliveredNs;
            if (delivered - lastDeliveredNs > gaps_.longestNs) {
                gaps_.longestNs = delivered - lastDeliveredNs;
                gaps_.longestAtNs = delivered - startNs_;
            }
        }
        lastDeliveredNs = delivered;
        for (auto& w : workers_)
            w->queue.push(frame);
        if (view_)
            view_->frames().push(frame);
        frame.reset();

        if (paced) {
            due += period;
            // A source that fell more than a period behind (a slow decode, a stall) restarts its
            // schedule instead of bursting to catch up: frames are never produced faster than the
            // rate.
            const int64_t after = monotonicNs();
            if (after > due + period) {
                due = after;
                ++lateRestarts;
            }
        }
    }
    if (lateRestarts > 0)
        log->info("source {} fell behind its {:.1f} fps schedule {} times", info.uri, info.fps,
            lateRestarts);
    closeQueues();
    threadDone();
}

void Pipeline::closeQueues()
{
    for (auto& w : workers_)
        w->queue.close();
    if (view_)
        view_->frames().close();
}

namespace {

// The records of a batch whose processing failed, made whole where the task stopped before
// writing them (doneNs still 0): the frame's own identity, its times up to now, no result, and
// the failure; never a copy of another frame's.
void completeFailedRecords(
    const Frame* const* frames, size_t count, int64_t dequeuedNs, FrameRecord* records)
{
    const int64_t now = monotonicNs();
    for (size_t i = 0; i < count; ++i) {
        FrameRecord& r = records[i];
        if (r.doneNs != 0)
            continue;
        r.frameId = frames[i]->sequence;
        r.capturedNs = frames[i]->captureNs;
        r.dequeuedNs = dequeuedNs;
        r.preprocessedNs = std::max(r.preprocessedNs, dequeuedNs);
        r.inferredNs = std::max(r.inferredNs, r.preprocessedNs);
        r.doneNs = std::max(now, r.inferredNs);
        r.batch = static_cast<int32_t>(count);
        r.topK = 0;
        r.truth = -1; // the task maps the source's classes to its labels; unknown here
        r.ok = false;
        if (r.failure == FrameFailure::None)
            r.failure = FrameFailure::Inference;
    }
}

} // namespace

void Pipeline::workerLoop(Worker& worker)
{
    auto log = logger("pipeline");
    Task& task = *worker.task;
    const size_t batch = static_cast<size_t>(std::max(task.batchSize(), 1));
    std::vector<FramePtr> frames(batch);
    std::vector<const Frame*> raw(batch);
    std::vector<FrameRecord> records(batch);
    int consecutiveFailures = 0;
    int64_t previousDoneNs = 0;
    const bool unpaced = run_.pacing == Pacing::None; // the queue is a FIFO the source fills ahead

    while (size_t n = worker.queue.pop(frames.data(), batch)) {
        const int64_t dequeuedNs = monotonicNs();
        for (size_t i = 0; i < n; ++i)
            raw[i] = frames[i].get();
        if (hooks_)
            hooks_->beforeInference(worker.index, frames[0]->sequence);
        // Each record starts afresh: a task that fails before it has written a frame's record
        // must not leave the previous frame's result in it.
        for (size_t i = 0; i < n; ++i)
            records[i] = FrameRecord();
        Status status = task.process(raw.data(), n, dequeuedNs, records.data());
        if (!status)
            completeFailedRecords(raw.data(), n, dequeuedNs, records.data());
        const int64_t intervalStartNs = previousDoneNs > 0 ? previousDoneNs : dequeuedNs;
        previousDoneNs = records[n - 1].doneNs;
        for (size_t i = 0; i < n; ++i) {
            records[i].intervalStartNs = intervalStartNs;
            records[i].unpaced = unpaced;
            if (hooks_)
                hooks_->afterInference(worker.index, records[i]);
            recorder_.submit(worker.index, records[i]); // lock-free; everything else is its job
            if (view_)
                view_->onRecord(worker.index, records[i]);
            frames[i].reset(); // back to the pool
        }
        if (status) {
            consecutiveFailures = 0;
            continue;
        }
        if (consecutiveFailures++ == 0)
            log->error("task {}: {}", task.name(), status.message());
        if (consecutiveFailures == kMaxConsecutiveFailures)
            fail(status.withContext("task " + task.name() + " failed " +
                     std::to_string(kMaxConsecutiveFailures) + " times in a row"),
                "task " + task.name() + " failed");
    }
    if (view_)
        view_->onTaskFinished(worker.index);
    threadDone();
}

} // namespace jetagent
