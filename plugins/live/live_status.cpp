// The live view's knowledge of the run: the tasks' records as they arrive, the 1 Hz status
// document and its history, /api/frames' ring, and the one JPEG encoder every video client shares.
#include "http_live_server.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ctime>

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <limits>
#include <map>

#include <httplib.h>
#include <turbojpeg.h>

#include "http_wire.h"
#include "jetagent/base/clock.h"
#include "jetagent/base/json_text.h"
#include "jetagent/base/log.h"
#include "jetagent/power/power_monitor.h"
#include "live/live_page.h"
#include "live/live_power.h"

#include "live_server_parts.h"

namespace jetagent {

int64_t threadCpuNs()
{
    timespec ts {};
    if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

using json = nlohmann::json;

namespace {

constexpr int kJpegQuality = 75;

double round3(double v)
{
    return std::round(v * 1000.0) / 1000.0;
}

json msOrNull(int64_t ns, bool valid = true)
{
    return valid ? json(round3(nsToMs(ns))) : json(nullptr);
}

json finiteOrNull(double v)
{
    return std::isfinite(v) ? json(round3(v)) : json(nullptr);
}

// Nearest rank, as the summaries use it: the smallest value with at least p% of them at or below.
double nearestRankMs(const std::vector<int64_t>& sorted, double p)
{
    if (sorted.empty())
        return 0.0;
    size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
    rank = std::min(std::max<size_t>(rank, 1), sorted.size());
    return nsToMs(sorted[rank - 1]);
}

// A task's newest result as /api/status shows it: its top five, its stages and its energy.
json latestJson(const FrameRecord& r, const LiveRun::TaskInfo* info)
{
    json top = json::array();
    for (int k = 0; k < std::min(r.topK, 5); ++k) {
        const int32_t label = r.labels[static_cast<size_t>(k)];
        const bool named = info && label >= 0 && static_cast<size_t>(label) < info->labels.size();
        top.push_back(
            {{"label", named ? info->labels[static_cast<size_t>(label)] : std::to_string(label)},
                {"index", label}, {"score", round3(r.scores[static_cast<size_t>(k)])}});
    }
    return {{"frame", r.frameId}, {"top", top}, {"end_to_end_ms", msOrNull(r.times.endToEndNs)},
        {"stages_ms",
            {{"wait", msOrNull(r.times.waitNs)}, {"preprocess", msOrNull(r.times.preprocessNs)},
                {"inference", msOrNull(r.times.inferenceNs)},
                {"postprocess", msOrNull(r.times.postprocessNs)}}},
        {"deadline_missed", r.times.deadlineMissed},
        {"frame_energy_mJ", finiteOrNull(r.frameEnergyMj)}};
}

// Percentiles of a task's newest end-to-end latencies (`sorted`, in ns).
json rollingJson(const std::vector<int64_t>& sorted)
{
    const auto rank = [&](double p) {
        return sorted.empty() ? json(nullptr) : json(round3(nearestRankMs(sorted, p)));
    };
    return {{"results", sorted.size()}, {"p50_ms", rank(50)}, {"p90_ms", rank(90)},
        {"p99_ms", rank(99)},
        {"max_ms", sorted.empty() ? json(nullptr) : json(round3(nsToMs(sorted.back())))}};
}

} // namespace

RecordSink* HttpLiveServer::sink(size_t task)
{
    return task < sinks_.size() ? sinks_[task].get() : nullptr;
}

void HttpLiveServer::attach(LiveRun run)
{
    std::lock_guard<std::mutex> lock(dataMutex_);
    run_ = std::move(run);
    attached_ = true;
    for (auto& t : tasks_)
        *t = TaskState();
    ring_.clear();
    ringNext_ = 0;
    history_.clear(); // another run (a reload): its own series
}

void HttpLiveServer::detach()
{
    std::lock_guard<std::mutex> lock(dataMutex_);
    attached_ = false;
    run_.dropped = nullptr;
    run_.lost = nullptr;
    run_.streamDropped = nullptr;
    run_.readStats = nullptr;
}

void HttpLiveServer::consume(size_t task, const FrameRecord& record)
{
    std::lock_guard<std::mutex> lock(dataMutex_);
    if (task >= tasks_.size())
        return;
    TaskState& t = *tasks_[task];
    ++t.frames;
    if (!record.ok)
        ++t.failed;
    if (record.times.deadlineMissed)
        ++t.deadlineMisses;
    if (record.ok && record.hasResult) {
        ++t.results;
        t.haveLast = true;
        t.last = record;
        t.rolling.push_back(record.times.endToEndNs);
        if (t.rolling.size() > kRollingResults)
            t.rolling.pop_front();
        if (t.thisSecond.size() < 100'000) // bounded even when the ticker stalls
            t.thisSecond.push_back(record.times.endToEndNs);
    }
    Compact c;
    c.frame = record.frameId;
    c.task = static_cast<uint32_t>(task);
    c.stream = record.stream;
    c.ok = record.ok;
    c.hasResult = record.hasResult;
    c.deadlineMissed = record.times.deadlineMissed;
    c.top1 = record.topK > 0 ? record.labels[0] : -1;
    c.score = record.topK > 0 ? record.scores[0] : 0.0f;
    c.capturedNs = record.capturedNs;
    c.doneNs = record.doneNs;
    c.times = record.times;
    c.energyMj = record.frameEnergyMj;
    if (ring_.size() < kFrameRing) {
        ring_.push_back(c);
    } else {
        ring_[ringNext_] = c;
        ringNext_ = (ringNext_ + 1) % kFrameRing;
    }
}

void HttpLiveServer::onCanvas(Image& canvas, uint64_t /*frame*/)
{
    canvases_.fetch_add(1, std::memory_order_relaxed);
    if (!watched())
        return;
    // Swapped, not copied: a copy of a 640x480 frame cost 0.2 ms of the view's thread here, a
    // fifth of its encoding. Three buffers go round (the view's, this slot, the encoder's), so
    // after the first frames nothing is allocated. The hand-off counts in the video's CPU time.
    const int64_t cpuStart = threadCpuNs();
    {
        std::lock_guard<std::mutex> lock(canvasMutex_);
        std::swap(pending_, canvas);
        havePending_ = true;
    }
    canvasReady_.notify_one();
    encoderCpuNs_.fetch_add(threadCpuNs() - cpuStart, std::memory_order_relaxed);
}

namespace {

// TurboJPEG's compressor and its output buffer, freed together.
struct JpegCompressor {
    tjhandle handle = tjInitCompress();
    // Sized once for the worst case of the frame size (tjBufSize) and never reallocated: left to
    // TurboJPEG, a frame larger than the last one's JPEG was a new buffer and its page faults.
    unsigned char* out = nullptr;
    unsigned long capacity = 0;
    unsigned long size = 0;
    bool reserve(int width, int height)
    {
        const unsigned long needed = tjBufSize(width, height, TJSAMP_420);
        if (needed == static_cast<unsigned long>(-1))
            return false;
        if (needed > capacity) {
            tjFree(out);
            out = tjAlloc(static_cast<int>(needed));
            capacity = out ? needed : 0;
        }
        return out != nullptr;
    }
    JpegCompressor() = default;
    JpegCompressor(const JpegCompressor&) = delete;
    JpegCompressor& operator=(const JpegCompressor&) = delete;
    ~JpegCompressor()
    {
        tjFree(out);
        if (handle)
            tjDestroy(handle);
    }
};

} // namespace

// One thread encodes, whatever the number of clients: each JPEG is made once and shared. It
// takes the newest canvas (latest wins: a frame that arrives during an encoding replaces the one
// waiting), so the encoder is never behind by more than one frame. TurboJPEG straight from the
// BGR canvas: 1.0 ms a 640x480 frame on the development machine, against 1.5 ms through OpenCV's
// imencode (the same frame, quality 75, 4:2:0).
void HttpLiveServer::encoderLoop()
{
    Image working;
    JpegCompressor jpeg;
    if (!jpeg.handle)
        logger("http")->warn(
            "TurboJPEG cannot start ({}): the live view has no video", tjGetErrorStr());
    int64_t watchedSince = 0;
    while (true) {
        {
            std::unique_lock<std::mutex> lock(canvasMutex_);
            canvasReady_.wait_for(lock, kStreamPoll, [this] { return havePending_ || stopping_; });
            if (stopping_)
                return;
            const int64_t now = monotonicNs();
            if (watched() && watchedSince == 0)
                watchedSince = now;
            if (watchedSince != 0) {
                encoderBusyNs_.fetch_add(now - watchedSince, std::memory_order_relaxed);
                watchedSince = watched() ? now : 0;
            }
            if (!havePending_)
                continue;
            std::swap(working, pending_);
            havePending_ = false;
        }
        if (!jpeg.handle || working.channels() != 3 || !jpeg.reserve(working.cols, working.rows))
            continue;
        const int64_t cpuStart = threadCpuNs();
        jpeg.size = jpeg.capacity;
        const int rc = tjCompress2(jpeg.handle, working.data, working.cols,
            static_cast<int>(working.step), working.rows, TJPF_BGR, &jpeg.out, &jpeg.size,
            TJSAMP_420, kJpegQuality, TJFLAG_FASTDCT | TJFLAG_NOREALLOC);
        encoderCpuNs_.fetch_add(threadCpuNs() - cpuStart, std::memory_order_relaxed);
        if (rc != 0) {
            logger("http")->warn("could not encode a frame as JPEG: {}", tjGetErrorStr());
            continue;
        }
        auto shared = std::make_shared<const std::string>(
            reinterpret_cast<const char*>(jpeg.out), static_cast<size_t>(jpeg.size));
        {
            std::lock_guard<std::mutex> lock(jpegMutex_);
            jpeg_ = std::move(shared);
            ++jpegSeq_;
            jpegWidth_ = working.cols;
            jpegHeight_ = working.rows;
        }
        encoded_.fetch_add(1, std::memory_order_relaxed);
        jpegReady_.notify_all();
    }
}

void HttpLiveServer::tickerLoop()
{
    auto next = std::chrono::steady_clock::now();
    while (!stopping_) {
        json point;
        json status = buildStatus(point);
        auto text = std::make_shared<const std::string>(jsonText(status));
        {
            // The charts' points come from a run: none before it is attached (no series names).
            std::lock_guard<std::mutex> lock(dataMutex_);
            if (attached_) {
                history_.push_back(std::move(point));
                if (history_.size() > kHistorySeconds)
                    history_.pop_front();
            }
        }
        {
            std::lock_guard<std::mutex> lock(statusMutex_);
            status_ = std::move(text);
            ++statusSeq_;
        }
        statusChanged_.notify_all();
        next += std::chrono::seconds(1);
        std::unique_lock<std::mutex> lock(statusMutex_);
        statusChanged_.wait_until(lock, next, [this] { return stopping_.load(); });
    }
}

json HttpLiveServer::buildStatus(json& point)
{
    const int64_t now = monotonicNs();
    json status;
    json names = {{"tasks", json::array()}, {"rails", json::array()}, {"zones", json::array()}};
    point = {{"t_s", round3(nsToS(now - startNs_))}, {"latency_ms", json::array()},
        {"latency_max_ms", json::array()}, {"fps", json::array()}, {"rails_w", json::array()},
        {"zones_c", json::array()}};
    {
        std::lock_guard<std::mutex> lock(dataMutex_);
        status["run"] = run_.context;
        status["running"] = attached_;
        json tasks = json::array();
        for (size_t i = 0; i < tasks_.size(); ++i) {
            TaskState& t = *tasks_[i];
            const LiveRun::TaskInfo* info = i < run_.tasks.size() ? &run_.tasks[i] : nullptr;
            const std::string name = info ? info->name : "task " + std::to_string(i);
            names["tasks"].push_back(name);
            json task = {{"name", name}, {"frames", t.frames}, {"results", t.results},
                {"failed", t.failed}, {"deadline_misses", t.deadlineMisses},
                {"deadline_ms",
                    info && info->deadlineNs > 0 ? json(nsToMs(info->deadlineNs)) : json(nullptr)},
                {"dropped", attached_ && run_.dropped ? json(run_.dropped(i)) : json(nullptr)},
                {"lost", attached_ && run_.lost ? json(run_.lost(i)) : json(nullptr)}};
            task["latest"] = t.haveLast ? latestJson(t.last, info) : json(nullptr);
            task["streams"] = nullptr;
            task["batching"] = nullptr;
            if (attached_ && run_.readStats)
                run_.readStats(i, [&](const TaskStats& stats) {
                    if (stats.streamStats.empty())
                        return; // one stream: the task's own figures are the stream's
                    std::function<uint64_t(size_t)> dropped;
                    if (run_.streamDropped)
                        dropped = [&](size_t stream) { return run_.streamDropped(i, stream); };
                    task["streams"] =
                        liveStreamRows(stats, run_.streams, dropped, now, t.streamRates);
                    t.fpsByStream.assign(run_.streams.size(), 0.0);
                    for (size_t k = 0; k < stats.streamIds.size() && k < task["streams"].size();
                         ++k) {
                        const json& fps = task["streams"][k]["fps"];
                        if (fps.is_number() && stats.streamIds[k] < t.fpsByStream.size())
                            t.fpsByStream[stats.streamIds[k]] = fps.get<double>();
                    }
                    task["batching"] =
                        liveBatching(stats.batching, info ? info->batchTimeoutNs : 0);
                });
            std::vector<int64_t> sorted(t.rolling.begin(), t.rolling.end());
            std::sort(sorted.begin(), sorted.end());
            task["rolling"] = rollingJson(sorted);
            std::vector<int64_t>& second = t.thisSecond;
            std::sort(second.begin(), second.end());
            point["latency_ms"].push_back(
                second.empty() ? json(nullptr) : json(round3(nearestRankMs(second, 50))));
            point["latency_max_ms"].push_back(
                second.empty() ? json(nullptr) : json(round3(nsToMs(second.back()))));
            point["fps"].push_back(t.results - t.resultsAtPoint);
            task["fps"] = t.results - t.resultsAtPoint;
            if (info && info->streams.size() == 1) {
                t.fpsByStream.assign(run_.streams.size(), 0.0);
                if (info->streams.front() < t.fpsByStream.size())
                    t.fpsByStream[info->streams.front()] =
                        static_cast<double>(t.results - t.resultsAtPoint);
            }
            t.resultsAtPoint = t.results;
            second.clear();
            tasks.push_back(std::move(task));
        }
        status["tasks"] = std::move(tasks);
    }
    status["percentiles"] =
        "nearest rank over the task's last " + std::to_string(kRollingResults) + " results";
    status["stream_percentiles"] = "nearest rank over the stream's steady state since the run "
                                   "began, as the summary's";
    json power = nullptr;
    json zones = json::array();
    if (power_)
        power = livePowerJson(*power_, names, point, zones);
    status["power"] = power;
    status["temperatures"] = zones;
    const LiveCounters c = counters();
    {
        std::lock_guard<std::mutex> lock(jpegMutex_);
        status["video"] = {{"width", jpegWidth_}, {"height", jpegHeight_},
            {"frames_from_view", c.canvases}, {"frames_encoded", c.encoded},
            {"frames_sent", c.sent}, {"frames_skipped_for_slow_clients", c.skipped},
            {"clients", c.streams}, {"max_clients", kMaxStreams}, {"clients_refused", c.refused},
            {"encoder_cpu_s", round3(c.encoderCpuS)}, {"encoder_watched_s", round3(c.encoderBusyS)},
            {"encoder_core_percent",
                c.encoderBusyS > 0 ? json(round3(100.0 * c.encoderCpuS / c.encoderBusyS))
                                   : json(nullptr)}};
    }
    status["http"] = {{"events_clients", c.events}, {"max_events_clients", kMaxEvents},
        {"events_clients_refused", c.eventsRefused}, {"unauthorized", c.unauthorized},
        {"requests_too_slow", c.slowRequests}, {"connections", c.connections},
        {"max_connections", maxConnections_},
        {"descriptor_limit", descriptorLimit_ > 0 ? json(descriptorLimit_) : json(nullptr)},
        {"connections_refused_busy", c.busy},
        {"accept_descriptor_shortages", c.descriptorShortages},
        {"metrics_scrapes", c.metricsScrapes}, {"metrics_cpu_s", c.metricsCpuS}};
    status["uptime_s"] = round3(nsToS(now - startNs_));
    point["names"] = names;
    {
        std::lock_guard<std::mutex> lock(dataMutex_);
        seriesNames_ = names;
    }
    status["point"] = point;
    return status;
}

json HttpLiveServer::historyJson() const
{
    std::lock_guard<std::mutex> lock(dataMutex_);
    json points = json::array();
    for (const json& p : history_)
        points.push_back(p);
    return {{"seconds", kHistorySeconds}, {"names", seriesNames_}, {"points", points}};
}

LiveCounters HttpLiveServer::counters() const
{
    LiveCounters c;
    c.canvases = canvases_.load();
    c.encoded = encoded_.load();
    c.sent = sent_.load();
    c.skipped = skipped_.load();
    c.refused = refused_.load();
    c.eventsRefused = eventsRefused_.load();
    c.descriptorShortages = descriptorShortages_.load();
    c.connections = connections_.load();
    c.unauthorized = unauthorized_.load();
    c.slowRequests = slowRequests_.load();
    c.busy = busy_.load();
    c.streams = streams_.load();
    c.events = events_.load();
    c.metricsScrapes = metricsScrapes_.load();
    c.metricsCpuS = nsToS(metricsCpuNs_.load());
    c.encoderCpuS = nsToS(encoderCpuNs_.load());
    c.encoderBusyS = nsToS(encoderBusyNs_.load());
    return c;
}

json HttpLiveServer::framesJson(std::optional<uint64_t> since, size_t limit) const
{
    std::lock_guard<std::mutex> lock(dataMutex_);
    json frames = json::array();
    uint64_t oldest = 0;
    uint64_t newest = 0;
    bool any = false;
    size_t returned = 0;
    bool more = false;
    // Oldest first: from ringNext_ round the circle once it has wrapped.
    const size_t n = ring_.size();
    const size_t first = n < kFrameRing ? 0 : ringNext_;
    for (size_t k = 0; k < n; ++k) {
        const Compact& c = ring_[(first + k) % n];
        if (!any || c.frame < oldest)
            oldest = c.frame;
        newest = std::max(newest, c.frame);
        any = true;
        if (since && c.frame <= *since)
            continue;
        if (returned == limit) {
            more = true;
            continue;
        }
        const LiveRun::TaskInfo* info = c.task < run_.tasks.size() ? &run_.tasks[c.task] : nullptr;
        const bool named = info && c.top1 >= 0 && static_cast<size_t>(c.top1) < info->labels.size();
        json label = c.top1 < 0
            ? json(nullptr)
            : json(named ? info->labels[static_cast<size_t>(c.top1)] : std::to_string(c.top1));
        // Each stream numbers its frames from 0: with several, the stream tells them apart.
        const json stream = run_.streams.size() > 1
            ? (c.stream < run_.streams.size() ? json(run_.streams[c.stream]) : json(c.stream))
            : json(nullptr);
        frames.push_back({{"frame", c.frame}, {"stream", stream},
            {"task", info ? json(info->name) : json(c.task)}, {"ok", c.ok},
            {"has_result", c.hasResult}, {"top1", label}, {"score", round3(c.score)},
            {"captured_ns", c.capturedNs}, {"done_ns", c.doneNs},
            {"end_to_end_ms", msOrNull(c.times.endToEndNs)}, {"wait_ms", msOrNull(c.times.waitNs)},
            {"preprocess_ms", msOrNull(c.times.preprocessNs)},
            {"inference_ms", msOrNull(c.times.inferenceNs)},
            {"postprocess_ms", msOrNull(c.times.postprocessNs)},
            {"deadline_missed", c.deadlineMissed}, {"frame_energy_mJ", finiteOrNull(c.energyMj)}});
        ++returned;
    }
    // Records after `since` that the ring no longer holds: the caller polled too seldom.
    const bool gap = since && any && *since < oldest && oldest - *since > 1;
    return {{"since", since ? json(*since) : json(nullptr)},
        {"oldest_frame", any ? json(oldest) : json(nullptr)},
        {"newest_frame", any ? json(newest) : json(nullptr)}, {"ring", kFrameRing},
        {"missed_older", gap}, {"more", more}, {"frames", frames}};
}

} // namespace jetagent
