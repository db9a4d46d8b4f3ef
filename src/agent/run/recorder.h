// The one path of every frame record after inference: workers hand records over, lock-free and
// without allocating; one recorder thread per run then, in order, derives the stage times and the
// deadline once, updates the task's statistics and live view, attributes energy once the power
// sampler has covered the frame, and passes the finished record to the sinks (the CSV and JSON
// Lines files, and later ones). The summary reads the statistics alone.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "run/frame_record.h"
#include "run/spsc_ring.h"
#include "run/task_stats.h"

namespace jetagent {

class PowerSampler;

// A consumer of finished records (stage times derived, energy attributed). Called on the
// recorder's thread, in frame order per task; it must not block (a sink that writes to a disk or a
// network queues the record and counts what it loses).
class RecordSink {
public:
    virtual ~RecordSink() = default;
    RecordSink() = default;
    RecordSink(const RecordSink&) = delete;
    RecordSink& operator=(const RecordSink&) = delete;

    virtual void consume(const FrameRecord& record) = 0;
};

// What the console, systemd's status line and the watchdog show while running.
struct LiveView {
    uint64_t frames = 0;
    uint64_t correct = 0;
    uint64_t scored = 0;
    bool haveLast = false;
    FrameRecord last; // the latest record with a result
    // A task over several streams: the records of each, in the order of Recorder::Task::streams.
    std::vector<uint64_t> streamFrames;
};

class Recorder {
public:
    struct Task {
        std::string name;
        int64_t deadlineNs = 0;
        std::vector<RecordSink*> sinks; // must outlive the recorder's thread
        // The run streams the task serves when several: each gets its own statistics.
        std::vector<size_t> streams = {};
    };
    // `exactSamples`: values per statistics series whose percentiles stay exact;
    // `queueCapacity`: records a worker may hand over before the recorder takes them (the
    // recorder does no I/O, so only a thread starved of CPU for that long loses records, counted).
    // `power`, when given, attributes each frame's energy (it must outlive the recorder).
    Recorder(std::vector<Task> tasks, size_t exactSamples, size_t queueCapacity,
        const PowerSampler* power);
    ~Recorder();
    Recorder(const Recorder&) = delete;
    Recorder& operator=(const Recorder&) = delete;

    void start();
    // Takes every record handed over so far (energy from what the sampler has: stop it first),
    // then ends the thread. Safe to call twice.
    void stop();

    // Worker thread of `task`: hands a record over. Lock-free and allocation-free. False when the
    // queue had no room: the record is lost, counted in lost() (a producer that may wait can hand
    // it over again). A queue past half full wakes the recorder before its next round.
    bool submit(size_t task, const FrameRecord& record);

    // A copy of the task's statistics so far; safe while the run goes on.
    TaskStats stats(size_t task) const;
    // Calls `read` with the task's statistics under their lock, safe while the run goes on: for a
    // reader of a few figures (the live view's, once a second) a copy of every series would cost
    // more than the figures. `read` must be quick: the recorder's thread waits for it (the
    // workers never do).
    void readStats(size_t task, const std::function<void(const TaskStats&)>& read) const;
    // The task's statistics moved out, once the recorder has stopped (nothing changes them any
    // more): what the summary takes, without a copy of every series' histogram beside the
    // recorder's. A running recorder gives a copy, as stats() does.
    TaskStats takeStats(size_t task);
    LiveView live(size_t task) const;
    uint64_t lost(size_t task) const;
    size_t taskCount() const { return tasks_.size(); }

    // The figures derived from a record's timestamps, as the recorder fills them in (record.times).
    static FrameTimes derive(const FrameRecord& record, int64_t deadlineNs);

private:
    struct TaskState {
        TaskState(Task t, size_t exactSamples, size_t queueCapacity);
        Task config;
        SpscRing<FrameRecord> queue;
        std::atomic<uint64_t> lost {0};
        mutable std::mutex mutex; // guards stats and live against the readers above
        TaskStats stats;
        LiveView live;
    };

    void loop();
    // Takes what task `t` has ready; with power, a record waits until the sampler has covered its
    // frame, unless `final`. True when it took anything.
    bool drain(TaskState& t, bool final);
    void attributeEnergy(FrameRecord& r) const;

    std::vector<std::unique_ptr<TaskState>> tasks_;
    const PowerSampler* power_;
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::atomic<bool> nudged_ {false}; // a worker's queue passed half full since the last round
    bool stopping_ = false;
    bool stopped_ = false;
};

} // namespace jetagent
