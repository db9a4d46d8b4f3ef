// Per-frame logs, a sink of the recorder: finished records (stage times derived, energy
// attributed) are queued for a background writer that formats them as CSV and JSON Lines. Nothing
// waits on the disk: when the writer falls behind, records are dropped and counted. Files rotate
// by size under a total cap, and a full or read-only disk costs log lines (counted), never frames
// or statistics.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "jetagent/base/status.h"
#include "run/frame_record.h"
#include "run/recorder.h"
#include "run/spsc_ring.h"

namespace jetagent {

class FrameLogWriter;

// The CSV columns, in order; units are in the names.
extern const char* const kFrameCsvHeader;
// The columns appended for action tasks, before any energy columns.
extern const char* const kFrameCsvClipColumns;
// The columns appended when power rails are sampled.
extern const char* const kFrameCsvEnergyColumns;
// The power log's file stem: power.csv, power_000001.csv, ... (counted in the cap).
extern const char* const kPowerLogStem;

// The file operations of the frame-log writer: the real ones unless a test overrides them to make
// writes fail the way a full or read-only disk does.
class FrameLogFiles {
public:
    virtual ~FrameLogFiles() = default;
    // Creates `path`, which must not exist yet (an earlier log is never overwritten): a descriptor
    // open for writing, or -errno.
    virtual int create(const std::string& path);
    // As write(2): the bytes written, or -1 with errno set.
    virtual ssize_t write(int fd, const char* data, size_t size);
};

// Sizes and retries of the per-frame files. The defaults keep one file per task and format.
struct FrameLogOptions {
    // logging.dir: the cap counts every per-frame file under it, earlier runs' too; "" = no cap.
    std::string root;
    // A file that would grow past this is closed and the next segment begins; 0 = never rotate.
    // With many files open at once it is lowered so that they fill at most half the cap.
    uint64_t maxFileBytes = 0;
    // After each rotation and at open, the oldest closed segments under `root` are removed until
    // they and the open files at their full size fit in this; 0 = no cap.
    uint64_t maxTotalBytes = 0;
    // After a failed write, lines are dropped (counted) this long before a new segment is tried.
    int64_t retryNs = 5'000'000'000;
    FrameLogFiles* files = nullptr; // nullptr: the real file system
};

// One per-frame file of a task (CSV or JSON Lines) as a series of segments: <stem>.<ext>, then
// <stem>_000001.<ext>, ... (the underscore sorts after the dot byte-wise, so names list in order).
// Owned by TaskLog and used only by the writer thread, apart from the counters.
struct FrameLogFile {
    std::string dir;
    std::string stem; // <task>.frames
    std::string ext; // csv or jsonl
    std::string header; // written at the top of every segment ("" for JSON Lines)
    std::string firstPath; // segment 0
    int fd = -1;
    int index = 0; // the current segment's number
    bool created = false; // the current segment's file exists (a later one takes the next number)
    uint64_t size = 0; // bytes in the current segment, tracked rather than asked of the disk
    std::pair<uint64_t, uint64_t> id {0, 0}; // the open segment's device and inode
    std::vector<std::pair<uint64_t, uint64_t>> closed; // this run's closed segments, still on disk
    std::string pending; // lines formatted and not yet written
    uint64_t pendingLines = 0;
    bool failing = false; // a write failed: lines are dropped until retryAtNs
    int64_t retryAtNs = 0;
    std::atomic<uint64_t> linesOk {0};
    std::atomic<uint64_t> linesDropped {0}; // for a failed write (disk full, read-only, I/O error)

    bool enabled() const { return !stem.empty(); }
    std::string segmentPath(int segment) const;
};

// What FrameLogWriter's thread drives: one or more segmented files (FrameLogFile) and the
// counters of their writes. TaskLog writes a task's frame records; PowerLog the run's power time
// series. The file side (segments, rotation under the cap, failed writes) is shared.
class SegmentedLog {
public:
    SegmentedLog() = default;
    virtual ~SegmentedLog() = default;
    SegmentedLog(const SegmentedLog&) = delete;
    SegmentedLog& operator=(const SegmentedLog&) = delete;

    // Lines that a failed write dropped from the file that lost the most (a full or read-only
    // disk).
    virtual uint64_t linesDroppedDisk() const = 0;
    // Failed creates, writes and closes of the files.
    uint64_t writeErrors() const { return writeErrors_.load(std::memory_order_relaxed); }
    uint64_t segmentsWritten() const { return segments_.load(std::memory_order_relaxed); }
    // This run's segments of this log that the total cap removed.
    uint64_t segmentsRemoved() const { return segmentsRemoved_.load(std::memory_order_relaxed); }
    uint64_t bytesWritten() const { return bytes_.load(std::memory_order_relaxed); }
    // The errno of the latest failed write, 0 when none failed.
    int lastWriteErrno() const { return lastErrno_.load(std::memory_order_relaxed); }

protected:
    friend class FrameLogWriter;
    // Writer thread: writes what is ready; `final` on the last call, as the writer stops.
    virtual void drain(std::string& scratch, bool final) = 0;
    // Writer thread: writes what is pending and closes the files.
    virtual void close() = 0;
    // The files, enabled or not (see FrameLogFile::enabled).
    virtual std::vector<FrameLogFile*> files() = 0;
    // After each write: lines written so far changed.
    virtual void onLinesWritten() { }
    // Creates this log's files in `dir` (FrameLogWriter::open's `others`; a TaskLog's are opened
    // by the writer). Errors name the file.
    virtual Status openFiles(const std::string& dir)
    {
        (void)dir;
        return Status();
    }

    // The file side: segments, rotation, and failed writes. Writer thread only. `stem` names
    // the files: <dir>/<stem>.<ext>, then <stem>_000001.<ext>, ...
    Status openFirst(FrameLogFile& f, const std::string& dir, const std::string& stem,
        const std::string& ext, std::string header);
    bool openSegment(FrameLogFile& f);
    void startSegment(FrameLogFile& f, int fd);
    void append(FrameLogFile& f, const std::string& line, int64_t nowNs);
    void writePending(FrameLogFile& f);
    void closeSegment(FrameLogFile& f);
    void fail(FrameLogFile& f, int error);
    // The writer's cap on the total (after a new segment).
    void applyCap();

    FrameLogWriter* writer_ = nullptr;
    std::atomic<uint64_t> writeErrors_ {0};
    std::atomic<uint64_t> segments_ {0};
    std::atomic<uint64_t> segmentsRemoved_ {0};
    std::atomic<uint64_t> bytes_ {0};
    std::atomic<int> lastErrno_ {0};
};

// One task's log: the record queue from the recorder and the files it goes to.
class TaskLog final : public RecordSink, public SegmentedLog {
public:
    TaskLog(std::string taskName, const std::vector<std::string>& labels, size_t queueCapacity);
    ~TaskLog() override;
    TaskLog(const TaskLog&) = delete;
    TaskLog& operator=(const TaskLog&) = delete;

    // Before FrameLogWriter::open: the files get the energy columns (power is sampled, and the
    // recorder attributes each frame's energy before the record comes here).
    void enableEnergyColumns() { energyColumns_ = true; }
    bool hasEnergyColumns() const { return energyColumns_; }
    // Before FrameLogWriter::open: the files get the clip columns of action tasks (has_result and
    // the clip's window, inference time and result latency).
    void enableClipColumns() { clipColumns_ = true; }
    bool hasClipColumns() const { return clipColumns_; }
    // Before FrameLogWriter::open: the files end with the GPIO trigger's measurement window
    // (`window`, 0 outside any).
    void enableWindowColumn() { windowColumn_ = true; }
    bool hasWindowColumn() const { return windowColumn_; }
    // Before FrameLogWriter::open, for unpaced runs: the files end with `queue_ms`, the time each
    // frame sat in the FIFO before its worker took it (kept out of wait and end to end there).
    void enableQueueColumn() { queueColumn_ = true; }
    bool hasQueueColumn() const { return queueColumn_; }
    // Before FrameLogWriter::open: the run's stream names, by index, for the `stream` column
    // (names are letters, digits, '_', '-' and '.': nothing to quote). Unset: "main".
    void setStreamNames(std::vector<std::string> names) { streamNames_ = std::move(names); }
    const std::string& streamName(size_t stream) const;

    // Recorder thread: queue a record for writing. Never blocks; a full queue loses the record
    // (counted).
    void consume(const FrameRecord& record) override { submit(record); }
    void submit(const FrameRecord& record);

    const std::string& taskName() const { return taskName_; }
    uint64_t lost() const { return lost_.load(std::memory_order_relaxed); } // dropped: queue full
    uint64_t written() const
    {
        return written_.load(std::memory_order_relaxed);
    } // lines in each file
    // Lines that a failed write dropped from the file that lost the most (a full or read-only
    // disk); written() + linesDroppedDisk() is every record the writer took from the queue.
    uint64_t linesDroppedDisk() const override;
    // The first segment of each file ("" when that format is off).
    const std::string& csvPath() const { return csv_.firstPath; }
    const std::string& jsonlPath() const { return jsonl_.firstPath; }

    // Formatting, exposed for tests. Both append one line with its newline to `out`.
    void formatCsv(const FrameRecord& r, std::string& out) const;
    void formatJson(const FrameRecord& r, std::string& out) const;

private:
    friend class FrameLogWriter;
    // Writes the queued records.
    void drain(std::string& scratch, bool final) override;
    void close() override;
    std::vector<FrameLogFile*> files() override { return {&csv_, &jsonl_}; }
    void onLinesWritten() override;
    std::string csvHeader() const;

    std::string taskName_;
    std::vector<std::string> csvLabels_; // labels escaped once for each format
    std::vector<std::string> jsonLabels_;
    SpscRing<FrameRecord> ring_;
    std::atomic<uint64_t> lost_ {0};
    std::atomic<uint64_t> written_ {0};
    uint64_t drained_ = 0; // records taken from the queue; counts as written without files
    FrameLogFile csv_;
    FrameLogFile jsonl_;
    bool energyColumns_ = false;
    bool clipColumns_ = false;
    bool windowColumn_ = false;
    std::vector<std::string> streamNames_;
    bool queueColumn_ = false;
};

class FrameLogWriter {
public:
    FrameLogWriter() = default;
    ~FrameLogWriter();
    FrameLogWriter(const FrameLogWriter&) = delete;
    FrameLogWriter& operator=(const FrameLogWriter&) = delete;

    // Creates <dir>/<task>.frames.csv and/or .jsonl for each log (neither: the writer only
    // attributes energy), then applies the cap. Errors name the file that failed. A failed write
    // later on drops lines (counted) and never stops the writer.
    // `others` (the power log) open their own files in `dir` (SegmentedLog::openFiles) and share
    // the thread, the segment size and the cap.
    Status open(const std::string& dir, const std::vector<TaskLog*>& logs, bool csv, bool jsonl,
        const FrameLogOptions& options = {}, const std::vector<SegmentedLog*>& others = {});
    void start();
    // Writes everything still queued, flushes and closes the files. Safe to call twice.
    void stop();

    // The segment size in use: options.maxFileBytes, or less with many files open (see there).
    uint64_t segmentBytes() const { return segmentBytes_; }

private:
    friend class SegmentedLog;
    void loop();
    // Removes the oldest closed segments (per-frame logs and power.csv) under options.root until
    // the cap holds.
    void enforceCap();
    FrameLogFiles& files() { return options_.files ? *options_.files : realFiles_; }

    FrameLogOptions options_;
    FrameLogFiles realFiles_;
    uint64_t segmentBytes_ = 0;
    std::vector<SegmentedLog*> logs_; // the tasks' logs, then the others
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
};

} // namespace jetagent
