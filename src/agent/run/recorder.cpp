// The recorder: every frame record's one path from the workers to the statistics and the sinks.
#include "run/recorder.h"

#include <chrono>

#include "jetagent/base/log.h"
#include "jetagent/base/thread_guard.h"
#include "jetagent/power/sampler.h"

namespace jetagent {

Recorder::TaskState::TaskState(Task t, size_t exactSamples, size_t queueCapacity)
    : config(std::move(t)),
      queue(queueCapacity),
      stats(exactSamples, config.deadlineNs, config.streams)
{
    live.streamFrames.assign(stats.streamStats.size(), 0);
}

Recorder::Recorder(
    std::vector<Task> tasks, size_t exactSamples, size_t queueCapacity, const PowerSampler* power)
    : power_(power)
{
    for (Task& t : tasks)
        tasks_.push_back(std::make_unique<TaskState>(std::move(t), exactSamples, queueCapacity));
}

Recorder::~Recorder()
{
    stop();
}

FrameTimes Recorder::derive(const FrameRecord& r, int64_t deadlineNs)
{
    FrameTimes t;
    t.endToEndNs = r.endToEndNs();
    t.waitNs = r.waitNs();
    t.preprocessNs = r.preprocessNs();
    t.inferenceNs = r.inferenceNs();
    t.postprocessNs = r.postprocessNs();
    t.queueNs = r.queueNs();
    t.serviceNs = r.doneNs - r.dequeuedNs;
    t.resultLatencyNs = r.hasClip() ? r.resultLatencyNs() : 0;
    t.deadlineJudged = FrameRecord::deadlineJudged(deadlineNs, r.unpaced);
    t.deadlineMissed = r.deadlineMissed(deadlineNs);
    return t;
}

void Recorder::start()
{
    thread_ = std::thread([this] {
        guardThread(
            "the recorder", [this] { loop(); },
            [](const std::string& why) {
                logger("agent")->error("{}; no more frames are recorded", why);
            });
    });
}

void Recorder::stop()
{
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stopped_)
            return;
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable())
        thread_.join();
    else
        for (auto& t : tasks_)
            drain(*t, true); // never started: what was handed over is still recorded
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
}

bool Recorder::submit(size_t task, const FrameRecord& record)
{
    TaskState& t = *tasks_[task];
    const bool taken = t.queue.push(record);
    if (!taken)
        t.lost.fetch_add(1, std::memory_order_relaxed);
    // One wake-up per filling queue, not per record: most records wait for the recorder's round.
    // (Notified without the lock, a wake-up can come just before the recorder waits and be missed;
    // the round then comes at its period, 20 ms later.)
    if ((!taken || t.queue.size() * 2 > t.queue.capacity()) &&
        !nudged_.exchange(true, std::memory_order_relaxed))
        wake_.notify_one();
    return taken;
}

TaskStats Recorder::stats(size_t task) const
{
    const TaskState& t = *tasks_[task];
    std::lock_guard<std::mutex> lock(t.mutex);
    return t.stats;
}

void Recorder::readStats(size_t task, const std::function<void(const TaskStats&)>& read) const
{
    const TaskState& t = *tasks_[task];
    std::lock_guard<std::mutex> lock(t.mutex);
    read(t.stats);
}

TaskStats Recorder::takeStats(size_t task)
{
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!stopped_)
            return stats(task);
    }
    TaskState& t = *tasks_[task];
    std::lock_guard<std::mutex> lock(t.mutex);
    return std::move(t.stats);
}

LiveView Recorder::live(size_t task) const
{
    const TaskState& t = *tasks_[task];
    std::lock_guard<std::mutex> lock(t.mutex);
    return t.live;
}

uint64_t Recorder::lost(size_t task) const
{
    return tasks_[task]->lost.load(std::memory_order_relaxed);
}

void Recorder::attributeEnergy(FrameRecord& r) const
{
    const double share = r.batch > 0 ? 1.0 / r.batch : 1.0;
    const EnergyWindow inference = power_->energy(r.preprocessedNs, r.inferredNs);
    const EnergyWindow frame = power_->energy(r.intervalStartNs, r.doneNs);
    r.energyWindowShort = inference.shorterThanUpdate;
    if (inference.covered)
        r.inferenceEnergyMj = inference.joules * share * 1e3;
    if (frame.covered)
        r.frameEnergyMj = frame.joules * share * 1e3;
}

bool Recorder::drain(TaskState& t, bool final)
{
    bool any = false;
    FrameRecord r;
    while (const FrameRecord* next = t.queue.front()) {
        // The sampler's newest sample must lie past the frame's end, or its window is not covered
        // yet; the record waits (at 100 Hz, about 10 ms).
        if (power_ && !final && power_->latestNs() < next->doneNs)
            break;
        t.queue.pop(r);
        r.times = derive(r, t.config.deadlineNs);
        if (power_)
            attributeEnergy(r);
        {
            std::lock_guard<std::mutex> lock(t.mutex);
            t.stats.add(r);
            if (power_)
                t.stats.addEnergy(r);
            t.live.frames = t.stats.frames;
            t.live.correct = t.stats.correct;
            t.live.scored = t.stats.scored;
            for (size_t k = 0; k < t.stats.streamStats.size(); ++k)
                t.live.streamFrames[k] = t.stats.streamStats[k].frames;
            // Action tasks have a result only on the frames that end a clip: the view keeps the
            // latest result.
            if (r.hasResult) {
                t.live.last = r;
                t.live.haveLast = true;
            }
        }
        for (RecordSink* sink : t.config.sinks)
            sink->consume(r);
        any = true;
    }
    return any;
}

void Recorder::loop()
{
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
        const bool stopping = stopping_;
        lock.unlock();
        nudged_.store(false, std::memory_order_relaxed);
        for (auto& t : tasks_)
            drain(*t, stopping);
        lock.lock();
        if (stopping)
            break;
        // Fifty times a second, or sooner when a queue fills: the power sampler covers a frame
        // within its own period (10 ms at 100 Hz), and a round takes what has come meanwhile.
        wake_.wait_for(lock, std::chrono::milliseconds(20),
            [&] { return stopping_ || nudged_.load(std::memory_order_relaxed); });
    }
}

} // namespace jetagent
