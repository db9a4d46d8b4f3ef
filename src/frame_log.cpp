// Per-frame logs: workers hand records to a background writer that formats them as CSV and JSON
// Lines.
#include "frame_log.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "jetagent/base/clock.h"
#include "jetagent/base/log.h"
#include "jetagent/power/sampler.h"
#include "text.h"

namespace jetagent {

const char* const kFrameCsvHeader =
    "frame_id,capture_ns,wait_ms,preprocess_ms,inference_ms,compute_ms,postprocess_ms,e2e_ms,batch,"
    "top1_label,top1_score,truth_label,correct,deadline_miss,cold_start,ok";

const char* const kFrameCsvClipColumns =
    "has_result,clip_first_id,clip_last_id,clip_first_capture_ns,clip_last_capture_ns,clip_frames,"
    "clip_gaps,clip_inference_ms,result_latency_ms";

const char* const kFrameCsvEnergyColumns =
    "inference_energy_mJ,frame_energy_mJ,inference_power_W,energy_window_short";

namespace {

std::string csvEscape(const std::string& s)
{
    if (s.find_first_of(",\"\r\n") == std::string::npos)
        return s;
    std::string out = "\"";
    for (char c : s) {
        if (c == '"')
            out += '"';
        out += c;
    }
    return out + "\"";
}

const std::string kEmpty;

// Mean power of the total rail over the inference window: the batch's whole energy over its time.
double inferencePowerW(const FrameRecord& r)
{
    const double ms = nsToMs(r.inferredNs - r.preprocessedNs);
    if (std::isnan(r.inferenceEnergyMj) || ms <= 0.0)
        return std::nan("");
    return r.inferenceEnergyMj * (r.batch > 0 ? r.batch : 1) / ms;
}

} // namespace

TaskLog::TaskLog(std::string taskName, const std::vector<std::string>& labels, int64_t deadlineNs,
    size_t queueCapacity)
    : taskName_(std::move(taskName)), deadlineNs_(deadlineNs), ring_(queueCapacity)
{
    for (const auto& label : labels) {
        csvLabels_.push_back(csvEscape(label));
        jsonLabels_.push_back(nlohmann::json(label).dump());
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

void TaskLog::formatCsv(const FrameRecord& r, std::string& out) const
{
    const bool miss = deadlineNs_ > 0 && r.ok && r.endToEndNs() > deadlineNs_;
    auto label = [&](int index) -> const std::string& {
        return index >= 0 && static_cast<size_t>(index) < csvLabels_.size()
            ? csvLabels_[static_cast<size_t>(index)]
            : kEmpty;
    };
    appendf(out, "%" PRIu64 ",%" PRId64 ",%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%d,", r.frameId,
        r.capturedNs, nsToMs(r.dequeuedNs - r.capturedNs), nsToMs(r.preprocessedNs - r.dequeuedNs),
        nsToMs(r.inferredNs - r.preprocessedNs), nsToMs(r.computeNs),
        nsToMs(r.doneNs - r.inferredNs), nsToMs(r.endToEndNs()), r.batch);
    if (r.topK > 0) {
        out += label(r.labels[0]);
        appendf(out, ",%.6f,", static_cast<double>(r.scores[0]));
    } else {
        out += ",,";
    }
    out += label(r.truth);
    appendf(
        out, ",%d,%d,%d,%d", r.correct() ? 1 : 0, miss ? 1 : 0, r.coldStart ? 1 : 0, r.ok ? 1 : 0);
    if (clipColumns_) {
        if (r.hasClip())
            appendf(out, ",%d,%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%" PRId64 ",%d,%d,%.4f,%.4f",
                r.hasResult ? 1 : 0, r.clipFirstId, r.clipLastId, r.clipFirstNs, r.clipLastNs,
                r.clipFrames, r.clipGaps, nsToMs(r.clipInferenceNs),
                nsToMs(r.doneNs - r.clipLastNs));
        else
            appendf(out, ",%d,,,,,,,,", r.hasResult ? 1 : 0);
    }
    if (power_) {
        // An empty field where the sampler did not cover the window: no figure beats a wrong one.
        if (std::isnan(r.inferenceEnergyMj))
            out += ",";
        else
            appendf(out, ",%.4f", r.inferenceEnergyMj);
        if (std::isnan(r.frameEnergyMj))
            out += ",";
        else
            appendf(out, ",%.4f", r.frameEnergyMj);
        const double power = inferencePowerW(r);
        if (std::isnan(power))
            out += ",";
        else
            appendf(out, ",%.4f", power);
        appendf(out, ",%d", r.energyWindowShort ? 1 : 0);
    }
    if (windowColumn_)
        appendf(out, ",%u", r.window);
    out += '\n';
}

void TaskLog::formatJson(const FrameRecord& r, std::string& out) const
{
    const bool miss = deadlineNs_ > 0 && r.ok && r.endToEndNs() > deadlineNs_;
    appendf(out, "{\"frame\":%" PRIu64 ",\"capture_ns\":%" PRId64, r.frameId, r.capturedNs);
    appendf(out, ",\"wait_ms\":%.4f,\"preprocess_ms\":%.4f", nsToMs(r.dequeuedNs - r.capturedNs),
        nsToMs(r.preprocessedNs - r.dequeuedNs));
    appendf(out, ",\"inference_ms\":%.4f,\"compute_ms\":%.4f",
        nsToMs(r.inferredNs - r.preprocessedNs), nsToMs(r.computeNs));
    appendf(out, ",\"postprocess_ms\":%.4f,\"e2e_ms\":%.4f,\"batch\":%d,\"top\":[",
        nsToMs(r.doneNs - r.inferredNs), nsToMs(r.endToEndNs()), r.batch);
    for (int i = 0; i < r.topK; ++i) {
        const int index = r.labels[static_cast<size_t>(i)];
        out += i ? ",{\"label\":" : "{\"label\":";
        out += index >= 0 && static_cast<size_t>(index) < jsonLabels_.size()
            ? jsonLabels_[static_cast<size_t>(index)]
            : "null";
        appendf(out, ",\"score\":%.6f}", static_cast<double>(r.scores[static_cast<size_t>(i)]));
    }
    out += "],\"truth\":";
    out += r.truth >= 0 && static_cast<size_t>(r.truth) < jsonLabels_.size()
        ? jsonLabels_[static_cast<size_t>(r.truth)]
        : "null";
    appendf(out, ",\"correct\":%s,\"deadline_miss\":%s,\"cold_start\":%s,\"ok\":%s",
        r.truth >= 0 ? (r.correct() ? "true" : "false") : "null", miss ? "true" : "false",
        r.coldStart ? "true" : "false", r.ok ? "true" : "false");
    if (clipColumns_) {
        appendf(out, ",\"result\":%s,\"clip\":", r.hasResult ? "true" : "false");
        if (r.hasClip())
            appendf(out,
                "{\"first_id\":%" PRIu64 ",\"last_id\":%" PRIu64 ",\"first_capture_ns\":%" PRId64
                ",\"last_capture_ns\":%" PRId64 ",\"frames\":%d,\"gaps\":%d,\"inference_ms\":%.4f,"
                "\"result_latency_ms\":%.4f}",
                r.clipFirstId, r.clipLastId, r.clipFirstNs, r.clipLastNs, r.clipFrames, r.clipGaps,
                nsToMs(r.clipInferenceNs), nsToMs(r.doneNs - r.clipLastNs));
        else
            out += "null";
    }
    if (power_) {
        auto number = [&](const char* key, double v) {
            if (std::isnan(v))
                appendf(out, ",\"%s\":null", key);
            else
                appendf(out, ",\"%s\":%.4f", key, v);
        };
        number("inference_energy_mJ", r.inferenceEnergyMj);
        number("frame_energy_mJ", r.frameEnergyMj);
        number("inference_power_W", inferencePowerW(r));
        appendf(out, ",\"energy_window_short\":%s", r.energyWindowShort ? "true" : "false");
    }
    if (windowColumn_)
        appendf(out, ",\"window\":%u", r.window);
    out += "}\n";
}

void TaskLog::attachPower(const PowerSampler* sampler)
{
    power_ = sampler;
}

void TaskLog::addEnergy(FrameRecord& r)
{
    const double share = r.batch > 0 ? 1.0 / r.batch : 1.0;
    const EnergyWindow inference = power_->energy(r.preprocessedNs, r.inferredNs);
    const EnergyWindow frame = power_->energy(r.intervalStartNs, r.doneNs);
    r.energyWindowShort = inference.shorterThanUpdate;
    if (inference.covered)
        r.inferenceEnergyMj = inference.joules * share * 1e3;
    if (frame.covered)
        r.frameEnergyMj = frame.joules * share * 1e3;
    if (!inference.covered || !frame.covered) {
        ++energy_.uncovered;
        return;
    }
    ++energy_.frames;
    energy_.totalFrameJ += r.frameEnergyMj * 1e-3;
    if (r.coldStart) {
        // Kept apart like the cold start's latency: first-run allocations are not the steady state.
        energy_.coldStartInferenceMj = r.inferenceEnergyMj;
        return;
    }
    if (inference.shorterThanUpdate)
        ++energy_.shortWindows;
    energy_.inferenceNj.add(static_cast<int64_t>(std::llround(r.inferenceEnergyMj * 1e6)));
    energy_.frameNj.add(static_cast<int64_t>(std::llround(r.frameEnergyMj * 1e6)));
}

void TaskLog::drain(std::string& scratch, bool final)
{
    FrameRecord r;
    while (const FrameRecord* next = ring_.front()) {
        // The sampler's newest sample must lie past the frame's end, or its window is not covered
        // yet; the record waits (at 100 Hz, about 10 ms).
        if (power_ && !final && power_->latestNs() < next->doneNs)
            break;
        ring_.pop(r);
        if (power_)
            addEnergy(r);
        bool ok = true;
        if (csv_) {
            scratch.clear();
            formatCsv(r, scratch);
            ok = std::fwrite(scratch.data(), 1, scratch.size(), csv_) == scratch.size() && ok;
        }
        if (jsonl_) {
            scratch.clear();
            formatJson(r, scratch);
            ok = std::fwrite(scratch.data(), 1, scratch.size(), jsonl_) == scratch.size() && ok;
        }
        if (ok)
            written_.fetch_add(1, std::memory_order_relaxed);
        else
            writeErrors_.fetch_add(1, std::memory_order_relaxed);
    }
}

void TaskLog::flush()
{
    for (std::FILE* f : {csv_, jsonl_})
        if (f && std::fflush(f) != 0)
            writeErrors_.fetch_add(1, std::memory_order_relaxed);
}

void TaskLog::close()
{
    for (std::FILE** f : {&csv_, &jsonl_})
        if (*f) {
            if (std::fclose(*f) != 0)
                writeErrors_.fetch_add(1, std::memory_order_relaxed);
            *f = nullptr;
        }
}

namespace {

// Creates a log file that must not exist yet ("x": an earlier run's log is never overwritten).
Status createLog(const std::string& path, std::string& pathOut, std::FILE*& file)
{
    pathOut = path;
    file = std::fopen(path.c_str(), "wx");
    if (!file)
        return Status::io("cannot create frame log '" + path + "': " + errnoText(errno));
    std::setvbuf(file, nullptr, _IOFBF, 1 << 16);
    return Status();
}

} // namespace

FrameLogWriter::~FrameLogWriter()
{
    stop();
}

Status FrameLogWriter::open(
    const std::string& dir, const std::vector<TaskLog*>& logs, bool csv, bool jsonl)
{
    logs_ = logs;
    for (TaskLog* log : logs_) {
        if (csv) {
            Status s =
                createLog(dir + "/" + log->taskName() + ".frames.csv", log->csvPath_, log->csv_);
            if (!s)
                return s;
            if (std::fprintf(log->csv_, "%s%s%s%s%s%s\n", kFrameCsvHeader,
                    log->clipColumns_ ? "," : "", log->clipColumns_ ? kFrameCsvClipColumns : "",
                    log->power_ ? "," : "", log->power_ ? kFrameCsvEnergyColumns : "",
                    log->windowColumn_ ? ",window" : "") < 0)
                return Status::io("cannot write frame log '" + log->csvPath_ + "'");
        }
        if (jsonl) {
            Status s = createLog(
                dir + "/" + log->taskName() + ".frames.jsonl", log->jsonlPath_, log->jsonl_);
            if (!s)
                return s;
        }
    }
    return Status();
}

void FrameLogWriter::start()
{
    thread_ = std::thread([this] { loop(); });
}

void FrameLogWriter::loop()
{
    auto log = logger("log");
    std::string scratch;
    scratch.reserve(1024);
    int64_t lastFlush = monotonicNs();
    int64_t lastWarning = 0;
    uint64_t errorsWarned = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
        const bool stopping = stopping_;
        lock.unlock();
        for (TaskLog* l : logs_)
            l->drain(scratch, stopping);
        const int64_t now = monotonicNs();
        // Flushing once a second bounds what a crash can take with it to about a second of lines.
        if (stopping || now - lastFlush > 1'000'000'000) {
            for (TaskLog* l : logs_)
                l->flush();
            lastFlush = now;
        }
        uint64_t errors = 0;
        for (TaskLog* l : logs_)
            errors += l->writeErrors();
        if (errors > errorsWarned && (now - lastWarning > 10'000'000'000 || lastWarning == 0)) {
            log->warn("{} frame-log lines could not be written (disk full or read-only?); "
                      "inference goes on",
                errors);
            errorsWarned = errors;
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
    for (TaskLog* l : logs_)
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
        for (TaskLog* l : logs_)
            l->close();
}

} // namespace jetagent
