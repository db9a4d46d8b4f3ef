// Per-frame logs: workers hand records to a background writer that formats them as CSV and JSON
// Lines.
#include "output/frame_log.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <tuple>

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "jetagent/base/clock.h"
#include "jetagent/base/format.h"
#include "jetagent/base/json_text.h"
#include "jetagent/base/log.h"
#include "jetagent/base/text.h"
#include "jetagent/base/thread_guard.h"

namespace jetagent {

const char* const kFrameCsvHeader =
    "frame_id,capture_ns,wait_ms,preprocess_ms,inference_ms,compute_ms,postprocess_ms,e2e_ms,batch,"
    "top1_label,top1_score,truth_label,correct,deadline_miss,cold_start,ok,stream";

const char* const kFrameCsvClipColumns =
    "has_result,clip_first_id,clip_last_id,clip_first_capture_ns,clip_last_capture_ns,clip_frames,"
    "clip_gaps,clip_inference_ms,result_latency_ms";

const char* const kFrameCsvEnergyColumns =
    "inference_energy_mJ,frame_energy_mJ,inference_power_W,energy_window_short";

const char* const kPowerLogStem = "power";

namespace {

const std::string kEmpty;

// Mean power of the total rail over the inference window: the batch's whole energy over its time.
double inferencePowerW(const FrameRecord& r)
{
    const double ms = nsToMs(r.times.inferenceNs);
    if (std::isnan(r.inferenceEnergyMj) || ms <= 0.0)
        return std::nan("");
    return r.inferenceEnergyMj * (r.batch > 0 ? r.batch : 1) / ms;
}

} // namespace

TaskLog::TaskLog(std::string taskName, const std::vector<std::string>& labels, size_t queueCapacity)
    : taskName_(std::move(taskName)), ring_(queueCapacity)
{
    for (const auto& label : labels) {
        csvLabels_.push_back(csvEscape(label));
        jsonLabels_.push_back(jsonText(nlohmann::json(label)));
    }
}

TaskLog::~TaskLog()
{
    close();
}

void TaskLog::submit(const FrameRecord& record)
{
    if (!ring_.push(record))
        lost_.fetch_add(1, std::memory_order_relaxed);
}

const std::string& TaskLog::streamName(size_t stream) const
{
    static const std::string kMain = "main";
    return stream < streamNames_.size() ? streamNames_[stream] : kMain;
}

void TaskLog::formatCsv(const FrameRecord& r, std::string& out) const
{
    auto label = [&](int index) -> const std::string& {
        return index >= 0 && static_cast<size_t>(index) < csvLabels_.size()
            ? csvLabels_[static_cast<size_t>(index)]
            : kEmpty;
    };
    appendFormat(out, "{},{},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{},", r.frameId,
        r.capturedNs, nsToMs(r.times.waitNs), nsToMs(r.times.preprocessNs),
        nsToMs(r.times.inferenceNs), nsToMs(r.computeNs), nsToMs(r.times.postprocessNs),
        nsToMs(r.times.endToEndNs), r.batch);
    if (r.topK > 0) {
        out += label(r.labels[0]);
        appendFormat(out, ",{:.6f},", static_cast<double>(r.scores[0]));
    } else {
        out += ",,";
    }
    out += label(r.truth);
    // deadline_miss is empty where no deadline is judged (unpaced runs).
    appendFormat(out, ",{},{},{},{}", r.correct() ? 1 : 0,
        r.unpaced                    ? ""
            : r.times.deadlineMissed ? "1"
                                     : "0",
        r.coldStart ? 1 : 0, r.ok ? 1 : 0);
    out += ',';
    out += streamName(r.stream);
    if (clipColumns_) {
        if (r.hasClip())
            appendFormat(out, ",{},{},{},{},{},{},{},{:.4f},{:.4f}", r.hasResult ? 1 : 0,
                r.clipFirstId, r.clipLastId, r.clipFirstNs, r.clipLastNs, r.clipFrames, r.clipGaps,
                nsToMs(r.clipInferenceNs), nsToMs(r.times.resultLatencyNs));
        else
            appendFormat(out, ",{},,,,,,,,", r.hasResult ? 1 : 0);
    }
    if (energyColumns_) {
        // An empty field where the sampler did not cover the window: no figure beats a wrong one.
        if (std::isnan(r.inferenceEnergyMj))
            out += ",";
        else
            appendFormat(out, ",{:.4f}", r.inferenceEnergyMj);
        if (std::isnan(r.frameEnergyMj))
            out += ",";
        else
            appendFormat(out, ",{:.4f}", r.frameEnergyMj);
        const double power = inferencePowerW(r);
        if (std::isnan(power))
            out += ",";
        else
            appendFormat(out, ",{:.4f}", power);
        appendFormat(out, ",{}", r.energyWindowShort ? 1 : 0);
    }
    if (windowColumn_)
        appendFormat(out, ",{}", r.window);
    if (queueColumn_)
        appendFormat(out, ",{:.4f}", nsToMs(r.times.queueNs));
    out += '\n';
}

void TaskLog::formatJson(const FrameRecord& r, std::string& out) const
{
    appendFormat(out, "{{\"frame\":{},\"stream\":\"{}\",\"capture_ns\":{}", r.frameId,
        streamName(r.stream), r.capturedNs);
    appendFormat(out, ",\"wait_ms\":{:.4f},\"preprocess_ms\":{:.4f}", nsToMs(r.times.waitNs),
        nsToMs(r.times.preprocessNs));
    appendFormat(out, ",\"inference_ms\":{:.4f},\"compute_ms\":{:.4f}", nsToMs(r.times.inferenceNs),
        nsToMs(r.computeNs));
    appendFormat(out, ",\"postprocess_ms\":{:.4f},\"e2e_ms\":{:.4f},\"batch\":{},\"top\":[",
        nsToMs(r.times.postprocessNs), nsToMs(r.times.endToEndNs), r.batch);
    for (int i = 0; i < r.topK; ++i) {
        const int index = r.labels[static_cast<size_t>(i)];
        out += i ? ",{\"label\":" : "{\"label\":";
        out += index >= 0 && static_cast<size_t>(index) < jsonLabels_.size()
            ? jsonLabels_[static_cast<size_t>(index)]
            : "null";
        out += ",\"score\":";
        appendJsonNumber(out, static_cast<double>(r.scores[static_cast<size_t>(i)]), 6);
        out += '}';
    }
    out += "],\"truth\":";
    out += r.truth >= 0 && static_cast<size_t>(r.truth) < jsonLabels_.size()
        ? jsonLabels_[static_cast<size_t>(r.truth)]
        : "null";
    appendFormat(out, ",\"correct\":{},\"deadline_miss\":{},\"cold_start\":{},\"ok\":{}",
        r.truth >= 0 ? (r.correct() ? "true" : "false") : "null",
        r.unpaced                    ? "null"
            : r.times.deadlineMissed ? "true"
                                     : "false",
        r.coldStart ? "true" : "false", r.ok ? "true" : "false");
    if (!r.ok)
        appendFormat(out, ",\"failure\":\"{}\"", frameFailureName(r.failure));
    if (clipColumns_) {
        appendFormat(out, ",\"result\":{},\"clip\":", r.hasResult ? "true" : "false");
        if (r.hasClip())
            appendFormat(out,
                "{{\"first_id\":{},\"last_id\":{},\"first_capture_ns\":{},\"last_capture_ns\":{},"
                "\"frames\":{},\"gaps\":{},\"inference_ms\":{:.4f},\"result_latency_ms\":{:.4f}}}",
                r.clipFirstId, r.clipLastId, r.clipFirstNs, r.clipLastNs, r.clipFrames, r.clipGaps,
                nsToMs(r.clipInferenceNs), nsToMs(r.times.resultLatencyNs));
        else
            out += "null";
    }
    if (energyColumns_) {
        auto number = [&](const char* key, double v) {
            appendFormat(out, ",\"{}\":", key);
            appendJsonNumber(out, v, 4);
        };
        number("inference_energy_mJ", r.inferenceEnergyMj);
        number("frame_energy_mJ", r.frameEnergyMj);
        number("inference_power_W", inferencePowerW(r));
        appendFormat(out, ",\"energy_window_short\":{}", r.energyWindowShort ? "true" : "false");
    }
    if (windowColumn_)
        appendFormat(out, ",\"window\":{}", r.window);
    if (queueColumn_)
        appendFormat(out, ",\"queue_ms\":{:.4f}", nsToMs(r.times.queueNs));
    out += "}\n";
}

void TaskLog::drain(std::string& scratch, bool /*final*/)
{
    FrameRecord r;
    bool any = false;
    while (ring_.pop(
        r)) { // A clock read per record only while a file waits to retry after a failed write.
        const int64_t now = csv_.failing || jsonl_.failing ? monotonicNs() : 0;
        if (csv_.enabled()) {
            scratch.clear();
            formatCsv(r, scratch);
            append(csv_, scratch, now);
        }
        if (jsonl_.enabled()) {
            scratch.clear();
            formatJson(r, scratch);
            append(jsonl_, scratch, now);
        }
        ++drained_;
        any = true;
    }
    // One write per file and drain: lines reach the kernel within a drain period (0.1 s), so a
    // crash of the agent loses none of them.
    if (any) {
        writePending(csv_);
        writePending(jsonl_);
        if (!csv_.enabled() && !jsonl_.enabled())
            written_.store(drained_, std::memory_order_relaxed);
    }
}

uint64_t TaskLog::linesDroppedDisk() const
{
    return std::max(csv_.linesDropped.load(std::memory_order_relaxed),
        jsonl_.linesDropped.load(std::memory_order_relaxed));
}

std::string TaskLog::csvHeader() const
{
    std::string header = kFrameCsvHeader;
    if (clipColumns_)
        header = header + "," + kFrameCsvClipColumns;
    if (energyColumns_)
        header = header + "," + kFrameCsvEnergyColumns;
    if (windowColumn_)
        header += ",window";
    if (queueColumn_)
        header += ",queue_ms";
    return header + "\n";
}

std::string FrameLogFile::segmentPath(int segment) const
{
    std::string number;
    if (segment > 0)
        number = formatText("_%06d", segment);
    return dir + "/" + stem + number + "." + ext;
}

int FrameLogFiles::create(const std::string& path)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    return fd >= 0 ? fd : -errno;
}

ssize_t FrameLogFiles::write(int fd, const char* data, size_t size)
{
    return ::write(fd, data, size);
}

Status SegmentedLog::openFirst(FrameLogFile& f, const std::string& dir, const std::string& stem,
    const std::string& ext, std::string header)
{
    f.dir = dir;
    f.stem = stem;
    f.ext = ext;
    f.header = std::move(header);
    f.firstPath = f.segmentPath(0);
    const int fd = writer_->files().create(f.firstPath);
    // At start a file that cannot be created is a setup error (a wrong directory, or an earlier
    // run's log in the way); later on, the same failure only costs lines.
    if (fd < 0)
        return Status::io("cannot create log file '" + f.firstPath + "': " + errnoText(-fd));
    startSegment(f, fd);
    return Status();
}

// Creates segment f.index, or the next number when the current segment's file exists. False, and
// the file failing, when it cannot.
bool SegmentedLog::openSegment(FrameLogFile& f)
{
    if (f.created) {
        ++f.index;
        f.created = false;
    }
    int fd = -EEXIST;
    // Skipping names taken by stray files keeps them from stopping the log; none is overwritten.
    for (int tries = 0; tries < 100 && fd == -EEXIST; ++tries) {
        fd = writer_->files().create(f.segmentPath(f.index));
        if (fd == -EEXIST)
            ++f.index;
    }
    if (fd < 0) {
        fail(f, -fd);
        return false;
    }
    startSegment(f, fd);
    return !f.failing;
}

// Takes a created segment's descriptor and writes its header.
void SegmentedLog::startSegment(FrameLogFile& f, int fd)
{
    struct stat st { };
    if (::fstat(fd, &st) == 0)
        f.id = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
    f.fd = fd;
    f.created = true;
    f.size = 0;
    f.failing = false;
    segments_.fetch_add(1, std::memory_order_relaxed);
    f.pending = f.header;
    f.pendingLines = 0;
    writePending(f);
}

void SegmentedLog::append(FrameLogFile& f, const std::string& line, int64_t nowNs)
{
    if (f.failing) {
        if (nowNs < f.retryAtNs || !openSegment(f)) {
            f.linesDropped.fetch_add(1, std::memory_order_relaxed);
            return;
        }
        logger("log")->info("{}: writing again after a failed write", f.segmentPath(f.index));
        writer_->enforceCap();
    }
    const uint64_t limit = writer_->segmentBytes();
    const uint64_t size = f.size + f.pending.size();
    // A segment always takes one line, however long, so that a line never waits forever.
    if (limit > 0 && size + line.size() > limit && size > f.header.size()) {
        writePending(f);
        if (!f.failing) {
            closeSegment(f);
            if (openSegment(f))
                writer_->enforceCap();
        }
        if (f.failing) {
            f.linesDropped.fetch_add(1, std::memory_order_relaxed);
            return;
        }
    }
    f.pending += line;
    ++f.pendingLines;
}

void SegmentedLog::writePending(FrameLogFile& f)
{
    if (f.pending.empty())
        return;
    size_t done = 0;
    int error = 0;
    while (done < f.pending.size()) {
        const ssize_t n =
            writer_->files().write(f.fd, f.pending.data() + done, f.pending.size() - done);
        if (n > 0) {
            done += static_cast<size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        error = n < 0 ? errno : EIO;
        break;
    }
    uint64_t okLines = f.pendingLines;
    size_t kept = done;
    if (error != 0) {
        // Keep the complete lines and cut a torn one off, so that every segment stays a file that
        // parses (best effort: a read-only file system refuses the cut as well).
        kept = done == 0 ? 0 : f.pending.rfind('\n', done - 1) + 1;
        if (kept < done && ::ftruncate(f.fd, static_cast<off_t>(f.size + kept)) != 0)
            writeErrors_.fetch_add(1, std::memory_order_relaxed);
        // Only the header is pending with no lines, and it holds one newline.
        okLines = std::min(f.pendingLines,
            static_cast<uint64_t>(std::count(f.pending.begin(), f.pending.begin() + kept, '\n')));
    }
    f.size += kept;
    bytes_.fetch_add(kept, std::memory_order_relaxed);
    f.linesOk.fetch_add(okLines, std::memory_order_relaxed);
    f.linesDropped.fetch_add(f.pendingLines - okLines, std::memory_order_relaxed);
    f.pending.clear();
    f.pendingLines = 0;
    onLinesWritten();
    if (error != 0)
        fail(f, error);
}

void SegmentedLog::applyCap()
{
    writer_->enforceCap();
}

void TaskLog::onLinesWritten()
{
    written_.store(
        std::min(csv_.enabled() ? csv_.linesOk.load(std::memory_order_relaxed) : UINT64_MAX,
            jsonl_.enabled() ? jsonl_.linesOk.load(std::memory_order_relaxed) : UINT64_MAX),
        std::memory_order_relaxed);
}

void SegmentedLog::closeSegment(FrameLogFile& f)
{
    if (f.fd < 0)
        return;
    if (::close(f.fd) != 0)
        writeErrors_.fetch_add(1, std::memory_order_relaxed);
    f.fd = -1;
    f.closed.push_back(f.id);
}

void SegmentedLog::fail(FrameLogFile& f, int error)
{
    writeErrors_.fetch_add(1, std::memory_order_relaxed);
    lastErrno_.store(error, std::memory_order_relaxed);
    if (f.fd >= 0 && f.created && f.size == 0) {
        // Nothing got in, not even the header: remove the empty file and reuse its number.
        ::unlink(f.segmentPath(f.index).c_str());
        ::close(f.fd);
        f.fd = -1;
        f.created = false;
        segments_.fetch_sub(1, std::memory_order_relaxed);
    }
    closeSegment(f);
    f.failing = true;
    f.retryAtNs = monotonicNs() + writer_->options_.retryNs;
}

void TaskLog::close()
{
    for (FrameLogFile* f : {&csv_, &jsonl_}) {
        if (!f->enabled())
            continue;
        writePending(*f);
        closeSegment(*f);
    }
}

FrameLogWriter::~FrameLogWriter()
{
    stop();
}

Status FrameLogWriter::open(const std::string& dir, const std::vector<TaskLog*>& logs, bool csv,
    bool jsonl, const FrameLogOptions& options, const std::vector<SegmentedLog*>& others)
{
    logs_.assign(logs.begin(), logs.end());
    logs_.insert(logs_.end(), others.begin(), others.end());
    options_ = options;
    const uint64_t files = logs.size() * ((csv ? 1 : 0) + (jsonl ? 1 : 0)) + others.size();
    segmentBytes_ = options_.maxFileBytes;
    // Every open file may grow to a full segment before it rotates: they get at most half the cap,
    // so the closed segments always have room for at least as much again.
    if (options_.maxTotalBytes > 0 && segmentBytes_ > 0 && files > 0 &&
        segmentBytes_ > options_.maxTotalBytes / (2 * files)) {
        segmentBytes_ = std::max<uint64_t>(options_.maxTotalBytes / (2 * files), 1);
        logger("log")->info("{} per-frame files open: segments of {} bytes instead of {}, so "
                            "that they fit in half of logging.max_total_mb",
            files, segmentBytes_, options_.maxFileBytes);
    }
    for (TaskLog* log : logs) {
        log->writer_ = this;
        const std::string stem = log->taskName() + ".frames";
        if (csv)
            if (Status s = log->openFirst(log->csv_, dir, stem, "csv", log->csvHeader()); !s)
                return s;
        if (jsonl)
            if (Status s = log->openFirst(log->jsonl_, dir, stem, "jsonl", ""); !s)
                return s;
    }
    for (SegmentedLog* log : others) {
        log->writer_ = this;
        if (Status s = log->openFiles(dir); !s)
            return s;
    }
    enforceCap();
    return Status();
}

namespace {

struct Segment {
    std::string path;
    std::string dir;
    int index = 0;
    uint64_t size = 0;
    int64_t mtimeNs = 0;
    std::pair<uint64_t, uint64_t> id;
};

// The segment number of a log file name (<task>.frames[_NNNNNN].csv or .jsonl, or the power log's
// power[_NNNNNN].csv); -1 when the name is not one.
int segmentIndex(const std::string& name)
{
    std::string base;
    for (const char* ext : {".csv", ".jsonl"}) {
        const size_t n = std::strlen(ext);
        if (name.size() > n && name.compare(name.size() - n, n, ext) == 0)
            base = name.substr(0, name.size() - n);
    }
    int index = 0;
    const size_t underscore = base.rfind('_');
    if (underscore != std::string::npos && underscore + 1 < base.size() &&
        base.find_first_not_of("0123456789", underscore + 1) == std::string::npos) {
        if (base.size() - underscore - 1 > 9)
            return -1;
        index = std::atoi(base.c_str() + underscore + 1);
        base.resize(underscore);
    }
    if (base == kPowerLogStem)
        return index;
    const std::string suffix = ".frames";
    if (base.size() <= suffix.size() ||
        base.compare(base.size() - suffix.size(), suffix.size(), suffix) != 0)
        return -1;
    return index;
}

} // namespace

void FrameLogWriter::enforceCap()
{
    namespace fs = std::filesystem;
    if (options_.maxTotalBytes == 0 || options_.root.empty())
        return;
    std::vector<std::pair<uint64_t, uint64_t>> open;
    uint64_t reserved = 0;
    for (SegmentedLog* log : logs_)
        for (const FrameLogFile* f : log->files())
            if (f->enabled()) {
                reserved += segmentBytes_;
                if (f->fd >= 0)
                    open.push_back(f->id);
            }

    std::vector<Segment> closed;
    uint64_t total = 0;
    std::error_code ec;
    // Symbolic links are not followed: only files that really lie under the root are counted.
    for (fs::recursive_directory_iterator
             it(options_.root, fs::directory_options::skip_permission_denied, ec),
         end;
         !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        const int index = segmentIndex(name);
        if (index < 0)
            continue;
        struct stat st { };
        if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        Segment s;
        s.id = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
        if (std::find(open.begin(), open.end(), s.id) != open.end())
            continue; // being written: counted in `reserved` instead
        s.path = it->path().string();
        s.dir = it->path().parent_path().string();
        s.index = index;
        s.size = static_cast<uint64_t>(st.st_size);
        s.mtimeNs = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
        total += s.size;
        closed.push_back(std::move(s));
    }
    if (total + reserved <= options_.maxTotalBytes)
        return;
    // Oldest first by the time of the last line; the segment number orders a run's segments that
    // the file system's clock granularity left with the same time.
    std::sort(closed.begin(), closed.end(), [](const Segment& a, const Segment& b) {
        return std::tie(a.mtimeNs, a.dir, a.index, a.path) <
            std::tie(b.mtimeNs, b.dir, b.index, b.path);
    });
    auto log = logger("log");
    uint64_t removed = 0;
    uint64_t removedBytes = 0;
    std::string first;
    std::string last;
    for (const Segment& s : closed) {
        if (total + reserved <= options_.maxTotalBytes)
            break;
        if (::unlink(s.path.c_str()) != 0) {
            log->warn(
                "cannot remove {} to keep logging.max_total_mb: {}", s.path, errnoText(errno));
            continue;
        }
        total -= s.size;
        ++removed;
        removedBytes += s.size;
        (first.empty() ? first : last) = s.path;
        for (SegmentedLog* l : logs_)
            for (FrameLogFile* f : l->files()) {
                auto it = std::find(f->closed.begin(), f->closed.end(), s.id);
                if (it != f->closed.end()) {
                    f->closed.erase(it);
                    l->segmentsRemoved_.fetch_add(1, std::memory_order_relaxed);
                }
            }
    }
    if (removed > 0)
        log->info("removed {} log file(s), {} bytes, oldest first ({}{}{}) to keep the "
                  "logs under {} within logging.max_total_mb ({} bytes)",
            removed, removedBytes, first, last.empty() ? "" : " to ", last, options_.root,
            options_.maxTotalBytes);
}

void FrameLogWriter::start()
{
    thread_ = std::thread([this] {
        guardThread(
            "the frame-log writer", [this] { loop(); },
            [](const std::string& why) {
                logger("log")->error(
                    "{}; no more per-frame lines are written (the statistics go on)", why);
            });
    });
}

void FrameLogWriter::loop()
{
    // Named, so that its CPU time can be told apart in /proc/PID/task (top -H; the costs in docs/).
    pthread_setname_np(pthread_self(), "jetagent-log");
    auto log = logger("log");
    std::string scratch;
    scratch.reserve(1024);
    int64_t lastWarning = 0;
    uint64_t droppedWarned = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
        const bool stopping = stopping_;
        lock.unlock();
        for (SegmentedLog* l : logs_)
            l->drain(scratch, stopping);
        const int64_t now = monotonicNs();
        uint64_t dropped = 0;
        int error = 0;
        for (SegmentedLog* l : logs_) {
            dropped += l->linesDroppedDisk();
            if (l->lastWriteErrno() != 0)
                error = l->lastWriteErrno();
        }
        // Once a minute at most: a disk that stays full must not flood the journal.
        if (dropped > droppedWarned && (lastWarning == 0 || now - lastWarning >= 60'000'000'000)) {
            log->warn("{} log lines dropped so far: {} (disk full or read-only?); inference "
                      "goes on, and the logs resume when a write succeeds again",
                dropped, errnoText(error));
            droppedWarned = dropped;
            lastWarning = now;
        }
        lock.lock();
        if (stopping)
            break;
        // Ten drains a second: few wake-ups to steal time from inference, and a 4096-record ring
        // still holds four seconds at 1000 frames per second.
        wake_.wait_for(lock, std::chrono::milliseconds(100), [&] { return stopping_; });
    }
    lock.unlock();
    for (SegmentedLog* l : logs_)
        l->close();
}

void FrameLogWriter::stop()
{
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable())
        thread_.join();
    else
        for (SegmentedLog* l : logs_)
            l->close();
}

} // namespace jetagent
