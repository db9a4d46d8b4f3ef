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

Pipeline::Pipeline(std::vector<PipelineStream> streams, const RunConfig& run,
    const std::vector<Task*>& tasks, std::vector<TaskWiring> wiring, Recorder& recorder,
    FrameView* view)
    : run_(run),
      recorder_(recorder),
      view_(view),
      finishedFd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK))
{
    const bool paced = run.pacing == Pacing::Realtime;
    for (PipelineStream& s : streams) {
        auto stream = std::make_unique<Stream>();
        stream->name = std::move(s.name);
        stream->source = s.source;
        streams_.push_back(std::move(stream));
    }
    std::vector<size_t> every(streams_.size());
    for (size_t i = 0; i < every.size(); ++i)
        every[i] = i;
    std::vector<size_t> framesPerStream(streams_.size(), 2); // one being filled, one spare
    for (size_t t = 0; t < tasks.size(); ++t) {
        Task* task = tasks[t];
        TaskWiring w = t < wiring.size() ? wiring[t] : TaskWiring();
        if (w.streams.empty())
            w.streams = every;
        const size_t capacity = queueCapacity(run, *task, w.streams.size());
        const int64_t timeout = batchTimeoutNs(w, streams);
        task->prepareStreams(streams_.size());
        workers_.push_back(std::make_unique<Worker>(task, workers_.size(), w.streams, capacity,
            paced ? FrameQueue::Policy::DropOldest : FrameQueue::Policy::Block, timeout));
        Worker* worker = workers_.back().get();
        for (size_t slot = 0; slot < worker->streams.size(); ++slot) {
            const size_t s = worker->streams[slot];
            streams_[s]->consumers.emplace_back(worker, slot);
            // Queued (one more while a batch waits: StreamBatcher), and in the worker's hands (a
            // whole batch may be this stream's).
            framesPerStream[s] +=
                capacity + 1 + static_cast<size_t>(std::max(task->batchSize(), 1));
        }
    }
    // The view's queue takes every stream's frames: any one stream may fill it.
    if (view_)
        for (size_t& frames : framesPerStream)
            frames += view_->frames().capacity() + 1; // queued, plus the one being drawn
    for (size_t s = 0; s < streams_.size(); ++s)
        streams_[s]->pool = std::make_unique<FramePool>(framesPerStream[s]);
}

Pipeline::Pipeline(FrameSource& source, const RunConfig& run, const std::vector<Task*>& tasks,
    Recorder& recorder, FrameView* view)
    : Pipeline({PipelineStream {"main", &source}}, run, tasks, {}, recorder, view)
{
}

size_t Pipeline::queueCapacity(const RunConfig& run, const Task& task, size_t streams)
{
    const size_t batch = static_cast<size_t>(std::max(task.batchSize(), 1));
    // Paced: keep just the newest frames the task can use (its share of a batch; an action task's
    // burst). Unpaced: a FIFO deep enough for full batches.
    return run.pacing == Pacing::Realtime
        ? std::max<size_t>(task.liveQueueCapacity(std::max<size_t>(streams, 1)), 1)
        : std::max(static_cast<size_t>(run.queueDepth), batch);
}

int64_t Pipeline::batchTimeoutNs(
    const TaskWiring& wiring, const std::vector<PipelineStream>& streams)
{
    if (wiring.batchTimeoutNs >= 0)
        return wiring.batchTimeoutNs;
    double fastest = 0.0;
    auto consider = [&](size_t s) {
        if (s < streams.size() && streams[s].source)
            fastest = std::max(fastest, streams[s].source->info().fps);
    };
    if (wiring.streams.empty())
        for (size_t s = 0; s < streams.size(); ++s)
            consider(s);
    for (size_t s : wiring.streams)
        consider(s);
    // Half the fastest stream's frame period (a source of unknown rate: 30 fps's), so that a frame
    // that waited the whole timeout for a late stream still meets the default deadline, one
    // frame period.
    return static_cast<int64_t>(std::llround(0.5e9 / (fastest > 0.0 ? fastest : 30.0)));
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

namespace {

// Where run stream `stream` is among a task's streams (its batcher's queue): streams.size() when
// the task does not serve it.
size_t slotOf(const std::vector<size_t>& streams, size_t stream)
{
    return static_cast<size_t>(std::find(streams.begin(), streams.end(), stream) - streams.begin());
}

} // namespace

uint64_t Pipeline::dropped(size_t task, size_t stream) const
{
    const Worker& w = *workers_[task];
    const size_t slot = slotOf(w.streams, stream);
    return slot < w.streams.size() ? w.queue.dropped(slot) : 0;
}

uint64_t Pipeline::batchTimeoutsWaitingFor(size_t task, size_t stream) const
{
    const Worker& w = *workers_[task];
    const size_t slot = slotOf(w.streams, stream);
    return slot < w.streams.size() ? w.queue.timeoutsWaitingFor(slot) : 0;
}

size_t Pipeline::queueDepth(size_t task, size_t stream) const
{
    const Worker& w = *workers_[task];
    const size_t slot = slotOf(w.streams, stream);
    return slot < w.streams.size() ? w.queue.queued(slot) : 0;
}

uint64_t Pipeline::reconnects(size_t stream) const
{
    return streams_[stream]->source->stats().reconnects;
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
    running_ = static_cast<int>(workers_.size() + streams_.size());
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
    size_t sourcesStarted = 0;
    for (size_t i = 0; refused && i < streams_.size(); ++i) {
        Stream* stream = streams_[i].get();
        const std::string name = streams_.size() > 1 ? "source " + stream->name : "source";
        refused = startThread(stream->thread, name, [this, stream, i] {
            guardThread(
                "source " + stream->source->info().uri, [&] { sourceLoop(*stream, i); },
                [&](const std::string& why) {
                    fail(Status::runtime(why), "source failed");
                    closeQueues();
                    threadDone();
                });
        });
        if (refused)
            ++sourcesStarted;
    }
    if (refused)
        return;
    // The threads that did start drain and end; those that did not are done already.
    fail(refused, "a thread could not be started");
    closeQueues();
    for (size_t i = started; i < workers_.size(); ++i)
        if (view_)
            view_->onTaskFinished(workers_[i]->index);
    const size_t notStarted = (workers_.size() - started) + (streams_.size() - sourcesStarted);
    for (size_t i = 0; i < notStarted; ++i)
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
    for (auto& s : streams_)
        if (s->thread.joinable())
            s->thread.join();
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
    CaptureGaps total;
    total.thresholdNs = 0;
    for (const auto& s : streams_) {
        const CaptureGaps& g = s->gaps;
        total.count += g.count;
        total.totalNs += g.totalNs;
        if (g.longestNs > total.longestNs) {
            total.longestNs = g.longestNs;
            total.longestAtNs = g.longestAtNs;
        }
        total.thresholdNs = std::max(total.thresholdNs, g.thresholdNs);
    }
    return total;
}

Pipeline::CaptureGaps Pipeline::captureGaps(size_t stream) const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return streams_[stream]->gaps;
}

void Pipeline::streamEnded(const std::string& reason)
{
    bool last = false;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        last = ++streamsEnded_ == streams_.size();
    }
    if (last)
        requestStop(reason);
}

Status Pipeline::failure() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return failure_;
}

void Pipeline::sourceLoop(Stream& stream, size_t index)
{
    auto log = logger("pipeline");
    FrameSource& source = *stream.source;
    const SourceInfo& info = source.info();
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
        stream.gaps.thresholdNs = gapNs;
    }
    // Several streams name theirs in messages.
    const std::string who = streams_.size() > 1 ? "stream " + stream.name + ": " : std::string();
    std::string ended; // why this stream ended by itself (a limit, its end); empty: stopped

    while (true) {
        if (run_.frames > 0 && produced >= run_.frames) {
            ended = "frame limit reached";
            break;
        }
        const int64_t now = monotonicNs();
        if (durationNs > 0 && (paced ? due : now) - startNs_ >= durationNs) {
            ended = "duration reached";
            break;
        }
        {
            std::unique_lock<std::mutex> lock(mutex_);
            if (paced)
                changed_.wait_until(lock, toTimePoint(due), [&] { return stop_; });
            if (stop_)
                break;
        }

        std::shared_ptr<Frame> frame = stream.pool->acquire();
        auto result = source.read(*frame);
        if (!result) {
            // Most sources name themselves in their errors already: the URI once, not twice.
            const Status& s = result.status();
            fail(s.message().rfind(info.uri, 0) == 0
                    ? Status::error(s.kind(), who + "source " + s.message())
                    : s.withContext(who + "source " + info.uri),
                "source failed");
            break;
        }
        if (result.value() == ReadResult::EndOfStream) {
            ended = source.endDetail().empty() ? std::string("end of stream")
                                               : "end of stream " + source.endDetail();
            break;
        }
        if (result.value() == ReadResult::NoFrame)
            continue; // a live source waiting (a stall, a reconnect): look at stop and go on
        frame->stream = static_cast<uint16_t>(index);
        ++produced;
        stream.captured.store(produced, std::memory_order_relaxed);
        const uint64_t all = captured_.fetch_add(1, std::memory_order_relaxed) + 1;
        const int64_t delivered = monotonicNs();
        if (all == 1) {
            int64_t none = -1;
            firstFrameNs_.compare_exchange_strong(none, delivered);
        }
        if (lastDeliveredNs > 0 && delivered - lastDeliveredNs > gapNs) {
            std::lock_guard<std::mutex> lock(mutex_);
            CaptureGaps& gaps = stream.gaps;
            ++gaps.count;
            gaps.totalNs += delivered - lastDeliveredNs;
            if (delivered - lastDeliveredNs > gaps.longestNs) {
                gaps.longestNs = delivered - lastDeliveredNs;
                gaps.longestAtNs = delivered - startNs_;
            }
        }
        lastDeliveredNs = delivered;
        for (const auto& [worker, slot] : stream.consumers)
            worker->queue.push(slot, frame);
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
        log->info("{}source {} fell behind its {:.1f} fps schedule {} times", who, info.uri,
            info.fps, lateRestarts);
    closeStream(stream);
    if (!ended.empty()) {
        if (streams_.size() > 1)
            log->info("stream {} ended: {} after {} frames", stream.name, ended, produced);
        streamEnded(ended);
    }
    threadDone();
}

void Pipeline::closeStream(Stream& stream)
{
    for (const auto& [worker, slot] : stream.consumers)
        worker->queue.close(slot);
    // The view shows every stream: its queue closes with the last of them.
    if (view_ && streamsClosed_.fetch_add(1) + 1 == streams_.size())
        view_->frames().close();
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

    StreamBatcher::Batch gathered;
    while (size_t n = worker.queue.gather(frames.data(), batch, gathered)) {
        const int64_t dequeuedNs = monotonicNs();
        for (size_t i = 0; i < n; ++i)
            raw[i] = frames[i].get();
        // The spread of the capture times of the streams batched together: the first frames of
        // the gather are one per stream (StreamBatcher takes round robin).
        int64_t skewNs = 0;
        if (gathered.streams > 1) {
            int64_t earliest = raw[0]->captureNs, latest = raw[0]->captureNs;
            for (size_t i = 1; i < gathered.streams; ++i) {
                earliest = std::min(earliest, raw[i]->captureNs);
                latest = std::max(latest, raw[i]->captureNs);
            }
            skewNs = latest - earliest;
        }
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
            FrameRecord& r = records[i];
            r.intervalStartNs = intervalStartNs;
            r.unpaced = unpaced;
            r.stream = raw[i]->stream;
            r.batch = static_cast<int32_t>(n);
            r.batchCapacity = static_cast<int32_t>(batch);
            r.batchStreams = static_cast<int32_t>(gathered.streams);
            r.batchTimedOut = gathered.timedOut;
            r.batchFirst = i == 0;
            r.batchWaitNs = gathered.waitedNs;
            r.batchSkewNs = skewNs;
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
