// Per-frame logs: workers hand records to a background writer that formats them as CSV and JSON
// Lines. A worker never waits on the disk: when the writer falls behind, records are dropped and
// counted.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "frame_record.h"
#include "jetagent/base/status.h"
#include "latency_stats.h"
#include "spsc_ring.h"

namespace jetagent {

class PowerSampler;

// The CSV columns, in order; units are in the names.
extern const char* const kFrameCsvHeader;
// The columns appended for action tasks, before any energy columns.
extern const char* const kFrameCsvClipColumns;
// The columns appended when power rails are sampled.
extern const char* const kFrameCsvEnergyColumns;

// Per-frame energy of one task, accumulated by the log writer (values in nanojoules).
struct TaskEnergy {
    SampleSeries inferenceNj; // each steady-state frame's share of its inference window
    SampleSeries frameNj; // each steady-state frame's share of its frame interval
    double coldStartInferenceMj = -1.0; // the cold-start frames' inference energy; -1 unknown
    uint64_t frames = 0; // frames with an energy figure, cold start included
    double totalFrameJ = 0.0; // sum of their frame-interval energies: the energy of the frames run
    uint64_t uncovered = 0; // frames whose window the sampler did not cover (no figure)
    uint64_t shortWindows = 0; // inference windows shorter than the sensor's update period
};

// One task's log: the record queue from its worker and the files it goes to.
class TaskLog {
public:
    TaskLog(std::string taskName, const std::vector<std::string>& labels, int64_t deadlineNs,
        size_t queueCapacity);
    ~TaskLog();
    TaskLog(const TaskLog&) = delete;
    TaskLog& operator=(const TaskLog&) = delete;

    // Before FrameLogWriter::open: records get their energy from `sampler` (the total rail) before
    // they are written, and the files get the energy columns. The sampler must outlive the writer.
    void attachPower(const PowerSampler* sampler);
    bool hasPower() const { return power_ != nullptr; }
    // Before FrameLogWriter::open: the files get the clip columns of action tasks (has_result and
    // the clip's window, inference time and result latency).
    void enableClipColumns() { clipColumns_ = true; }
    bool hasClipColumns() const { return clipColumns_; }
    // Before FrameLogWriter::open: the files end with the GPIO trigger's measurement window
    // (`window`, 0 outside any).
    void enableWindowColumn() { windowColumn_ = true; }
    bool hasWindowColumn() const { return windowColumn_; }

    // Worker thread: queue a record for writing. Never blocks; a full queue loses the record
    // (counted).
    void submit(const FrameRecord& record);

    const std::string& taskName() const { return taskName_; }
    uint64_t lost() const { return lost_.load(std::memory_order_relaxed); } // dropped: queue full
    uint64_t written() const
    {
        return written_.load(std::memory_order_relaxed);
    } // lines in each file
    uint64_t writeErrors() const { return writeErrors_.load(std::memory_order_relaxed); }
    const std::string& csvPath() const { return csvPath_; }
    const std::string& jsonlPath() const { return jsonlPath_; }
    // Valid once the writer has stopped.
    const TaskEnergy& energy() const { return energy_; }

    // Formatting, exposed for tests. Both append one line with its newline to `out`.
    void formatCsv(const FrameRecord& r, std::string& out) const;
    void formatJson(const FrameRecord& r, std::string& out) const;

private:
    friend class FrameLogWriter;
    // Writes the queued records. With power attached, a record waits until the sampler has a sample
    // past its end, unless `final` (the sampler has stopped: what it has is all there will be).
    void drain(std::string& scratch, bool final);
    void addEnergy(FrameRecord& r);
    void flush();
    void close();

    std::string taskName_;
    std::vector<std::string> csvLabels_; // labels escaped once for each format
    std::vector<std::string> jsonLabels_;
    int64_t deadlineNs_;
    SpscRing<FrameRecord> ring_;
    std::atomic<uint64_t> lost_ {0};
    std::atomic<uint64_t> written_ {0};
    std::atomic<uint64_t> writeErrors_ {0};
    std::FILE* csv_ = nullptr;
    std::FILE* jsonl_ = nullptr;
    std::string csvPath_;
    std::string jsonlPath_;
    const PowerSampler* power_ = nullptr;
    bool clipColumns_ = false;
    bool windowColumn_ = false;
    TaskEnergy energy_;
};

class FrameLogWriter {
public:
    FrameLogWriter() = default;
    ~FrameLogWriter();
    FrameLogWriter(const FrameLogWriter&) = delete;
    FrameLogWriter& operator=(const FrameLogWriter&) = delete;

    // Creates <dir>/<task>.frames.csv and/or .jsonl for each log (neither: the writer only
    // attributes energy). Errors name the file that failed.
    Status open(const std::string& dir, const std::vector<TaskLog*>& logs, bool csv, bool jsonl);
    void start();
    // Writes everything still queued, flushes and closes the files. Safe to call twice.
    void stop();

private:
    void loop();

    std::vector<TaskLog*> logs_;
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
};

} // namespace jetagent
