// Frames from GStreamer pipelines (csi://, rtsp://, gst://) through OpenCV's GStreamer backend.
//
// csi://N runs, on a Jetson,
//   nvarguscamerasrc sensor-id=N !
//   video/x-raw(memory:NVMM),width=W,height=H,framerate=R,format=NV12
//     ! nvvidconv flip-method=F ! video/x-raw,format=BGRx ! videoconvert ! video/x-raw,format=BGR
//     ! appsink drop=true max-buffers=1 sync=false
//  - nvarguscamerasrc: NVIDIA's Argus camera source. It is a client of nvargus-daemon (a systemd
//    service), which owns the sensors and the ISP; sensor-id picks the camera. The caps ask the
//    ISP for NV12 frames of that size and rate in NVMM (DMA) memory; Argus picks the sensor mode.
//  - nvvidconv: the VIC hardware converter: applies flip-method (0 none, 1 rotate 90 counter-
//    clockwise, 2 rotate 180, 3 rotate 90 clockwise, 4 mirror, 5 transpose, 6 flip vertically,
//    7 the other diagonal) and copies the frame to system memory as BGRx; it has no 3-byte output.
//  - videoconvert: BGRx to BGR on the CPU, the layout OpenCV and jetagent use.
//  - appsink drop=true max-buffers=1 sync=false: keeps only the newest frame, never waits on the
//    clock, so a slow reader gets fresh frames, not a queue of old ones.
// Messages seen when it fails, and what they usually mean:
//  - no element "nvarguscamerasrc": not a Jetson, or JetPack's multimedia packages
//    (nvidia-l4t-gstreamer) are not installed.
//  - "Connecting to nvcamerasrc failed" / "Failed to create CaptureSession": nvargus-daemon is not
//    running or is wedged (sudo systemctl restart nvargus-daemon), or another process holds the
//    camera (one process per sensor).
//  - "Invalid camera device specified" / "No cameras available": no sensor at that id (cable,
//    device-tree overlay; dmesg shows whether the sensor driver probed).
//  - "Failed to create OutputStream" or a caps negotiation error: the sensor has no mode for the
//    size or rate asked.
//
// rtsp://... runs
//   rtspsrc location="URI" latency=L ! application/x-rtp,media=video ! decodebin ! videoconvert
//     ! video/x-raw,format=BGR ! appsink drop=true max-buffers=1 sync=false
// The caps after rtspsrc make the video stream the one linked when the server also sends audio.
// decodebin picks a software decoder (gstreamer1.0-plugins-good, -bad, -libav). On a Jetson,
// hardware decoding is a gst:// pipeline, for H.264:
//   gst://rtspsrc location=rtsp://camera/stream latency=200 ! rtph264depay ! h264parse
//     ! nvv4l2decoder ! nvvidconv ! video/x-raw,format=BGRx ! videoconvert
//     ! video/x-raw,format=BGR ! appsink drop=true max-buffers=1 sync=false
// (rtph265depay ! h265parse for H.265).
//
// gst://PIPELINE runs the user's pipeline as written. It must end in an appsink that OpenCV can
// find (OpenCV 4.6 looks for an element whose name contains "appsink") and should deliver BGR.
// It paces itself: a camera or network stream at its own rate, a file at the clock when the
// appsink syncs (the default) or as fast as it decodes with sync=false. It is reported live, so
// the agent takes its newest frame; nothing is dropped here (see below).
//
// Why a grab thread: OpenCV 4.6's GStreamer backend ignores CAP_PROP_OPEN_TIMEOUT_MSEC and
// CAP_PROP_READ_TIMEOUT_MSEC (they are "unhandled properties"; open() with them fails) and reads
// with the blocking gst_app_sink_pull_sample(); its open() of a live pipeline that produces nothing
// blocks as well. So each source runs one thread that opens the pipeline and reads from it in a
// loop, and read() waits for that thread's frame at most a slice of a second. A thread blocked
// inside OpenCV cannot be interrupted: when a source is destroyed, its thread is given a bounded
// time to notice and is otherwise left to end on its own, holding only state shared with it.
//
// Capture time: CLOCK_MONOTONIC when OpenCV handed the grab thread the frame, i.e. its arrival at
// the appsink; that is later than the exposure by the pipeline's latency (ISP and conversion for
// CSI, network, jitter buffer and decoding for RTSP), which GStreamer does not tell OpenCV users.
//
// Frames handed over: csi and rtsp keep the newest frame; one the caller had not taken when a
// newer one arrived is dropped, leaves a gap in Frame::sequence and counts in
// SourceStats::droppedByDevice (frames the appsink itself dropped are invisible through OpenCV).
// gst:// waits for the caller instead, so a finite pipeline delivers every frame; its appsink's
// own settings decide what it drops. csi and rtsp streams that fail are reopened with backoff.
#include "jetagent/hal/gstreamer_source.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <numeric>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include <opencv2/videoio.hpp>
#include <opencv2/videoio/registry.hpp>

#include "jetagent/base/clock.h"
#include "jetagent/base/log.h"

namespace jetagent {

// Opens `pipeline` as a source of `kind`: "csi" and "rtsp" reconnect and keep the newest frame,
// "gstreamer" does neither. What openGStreamerSource runs once the URI is translated; tests run
// stand-in pipelines through it with a camera's behaviour.
Expected<std::unique_ptr<FrameSource>> openGStreamerPipeline(
    const SourceOptions& options, const std::string& pipeline, const std::string& kind);

namespace {

constexpr int kDefaultCSIWidth = 1280;
constexpr int kDefaultCSIHeight = 720;
constexpr double kDefaultCSIFps = 30.0;
constexpr int kMaxSensorId = 7; // nvarguscamerasrc's sensor-id range
constexpr int kMaxFlipMethod = 7; // nvvidconv's flip-method range
constexpr int kMaxSide = 8192;
constexpr double kMaxFps = 1000.0;
constexpr double kWaitSliceS = 0.1; // longest read() waits before it returns NoFrame
constexpr double kFirstFrameTimeoutS = 10.0; // Argus starts in 1-3 s, an RTSP session in a few
constexpr double kStopWaitS = 2.0; // a grab thread's time to notice its source is gone
constexpr double kFirstBackoffS = 0.1; // first reconnect delay; it doubles to reconnectMaxS

const char* const kLoggerName = "gstreamer";
const char* const kAppsinkTail = "appsink drop=true max-buffers=1 sync=false";

bool startsWith(const std::string& text, const char* prefix)
{
    return text.rfind(prefix, 0) == 0;
}

std::string trimmed(const std::string& text)
{
    const auto blank = [](unsigned char c) { return std::isspace(c) != 0; };
    auto begin = std::find_if_not(text.begin(), text.end(), blank);
    auto end = std::find_if_not(text.rbegin(), text.rend(), blank).base();
    return begin < end ? std::string(begin, end) : std::string();
}

// user:password@ becomes user:***@ in every URI of `text`, so logs and summaries do not carry
// RTSP credentials.
std::string withoutPasswords(std::string text)
{
    for (size_t scheme = text.find("://"); scheme != std::string::npos;
         scheme = text.find("://", scheme + 3)) {
        const size_t authority = scheme + 3;
        const size_t end = text.find_first_of("/ \"!?#", authority);
        const size_t at = text.rfind('@', end == std::string::npos ? std::string::npos : end - 1);
        if (at == std::string::npos || at < authority)
            continue;
        const size_t colon = text.find(':', authority);
        if (colon == std::string::npos || colon > at)
            continue;
        text.replace(colon + 1, at - colon - 1, "***");
    }
    return text;
}

// A frame rate as GStreamer's fraction: whole rates as N/1, NTSC rates (29.97) as N*1000/1001,
// others to a thousandth (12.5 -> 25/2).
std::string rateFraction(double fps)
{
    constexpr double kTolerance = 1e-3;
    const double whole = std::round(fps);
    if (std::abs(fps - whole) < kTolerance)
        return std::to_string(static_cast<long long>(whole)) + "/1";
    const double ntsc = std::round(fps * 1.001);
    if (std::abs(ntsc * 1000.0 / 1001.0 - fps) < kTolerance)
        return std::to_string(static_cast<long long>(ntsc) * 1000) + "/1001";
    long long numerator = std::llround(fps * 1000.0);
    long long denominator = 1000;
    const long long divisor = std::gcd(numerator, denominator);
    numerator /= divisor;
    denominator /= divisor;
    return std::to_string(numerator) + "/" + std::to_string(denominator);
}

Expected<std::string> csiPipeline(const SourceOptions& options, const std::string& id)
{
    const std::string& uri = options.uri;
    if (id.empty() || id.size() > 2 ||
        !std::all_of(id.begin(), id.end(), [](unsigned char c) { return std::isdigit(c) != 0; }))
        return Status::invalid("'" + uri + "': expected csi://N with a sensor id 0.." +
            std::to_string(kMaxSensorId) + " (csi://0 is the first camera)");
    const int sensor = std::stoi(id);
    if (sensor > kMaxSensorId)
        return Status::invalid("'" + uri + "': sensor id " + id + " is out of range (0.." +
            std::to_string(kMaxSensorId) + ")");
    const int flip = options.camera.flip;
    if (flip < 0 || flip > kMaxFlipMethod)
        return Status::invalid("'" + uri + "': flip method " + std::to_string(flip) +
            " is out of range (0 none, 1..3 rotations, 4..7 mirrors)");
    if ((options.width == 0) != (options.height == 0))
        return Status::invalid("'" + uri + "': give both width and height, or neither (" +
            std::to_string(kDefaultCSIWidth) + "x" + std::to_string(kDefaultCSIHeight) + ")");
    const int width = options.width == 0 ? kDefaultCSIWidth : options.width;
    const int height = options.height == 0 ? kDefaultCSIHeight : options.height;
    // NV12 has one chroma sample per 2x2 pixels.
    if (width < 2 || height < 2 || width > kMaxSide || height > kMaxSide || width % 2 != 0 ||
        height % 2 != 0)
        return Status::invalid("'" + uri + "': frame size " + std::to_string(width) + "x" +
            std::to_string(height) + " must be even on both sides and at most " +
            std::to_string(kMaxSide));
    if (!std::isfinite(options.fps) || options.fps < 0.0 || options.fps > kMaxFps)
        return Status::invalid("'" + uri + "': frame rate " + std::to_string(options.fps) +
            " is out of range (0 for 30, up to " + std::to_string(kMaxFps) + ")");
    const double fps = options.fps == 0.0 ? kDefaultCSIFps : options.fps;

    return "nvarguscamerasrc sensor-id=" + std::to_string(sensor) +
        " ! video/x-raw(memory:NVMM),width=" + std::to_string(width) +
        ",height=" + std::to_string(height) + ",framerate=" + rateFraction(fps) +
        ",format=NV12 ! nvvidconv flip-method=" + std::to_string(flip) +
        " ! video/x-raw,format=BGRx ! videoconvert ! video/x-raw,format=BGR ! " + kAppsinkTail;
}

Expected<std::string> rtspPipeline(const SourceOptions& options)
{
    const std::string& uri = options.uri;
    const std::string shown = withoutPasswords(uri);
    const std::string rest = uri.substr(std::string("rtsp://").size());
    if (rest.empty() || rest[0] == '/')
        return Status::invalid("'" + shown + "' names no host (rtsp://HOST[:PORT]/PATH)");
    // The URI goes into the pipeline text in double quotes; inside them only '"' and '\' are
    // special to GStreamer's parser, and blanks and control characters are not valid in a URI.
    for (const char c : uri) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\' || std::isspace(u) != 0 || std::iscntrl(u) != 0)
            return Status::invalid("'" + shown +
                "' contains a character that cannot go into a GStreamer pipeline (quote, "
                "backslash, blank or control character): percent-encode it (a blank is %20, a "
                "quote %22, a backslash %5C)");
    }
    if (options.camera.latencyMs < 0)
        return Status::invalid("'" + shown + "': latency " +
            std::to_string(options.camera.latencyMs) + " ms is negative");
    return "rtspsrc location=\"" + uri + "\" latency=" + std::to_string(options.camera.latencyMs) +
        " ! application/x-rtp,media=video ! decodebin ! videoconvert ! video/x-raw,format=BGR ! " +
        kAppsinkTail;
}

// The elements of a gst-launch description split at the links ('!') outside double quotes.
std::vector<std::string> linkedElements(const std::string& pipeline)
{
    std::vector<std::string> parts(1);
    bool quoted = false;
    for (size_t i = 0; i < pipeline.size(); ++i) {
        const char c = pipeline[i];
        if (c == '\\' && quoted && i + 1 < pipeline.size()) {
            parts.back() += c;
            parts.back() += pipeline[++i];
            continue;
        }
        if (c == '"')
            quoted = !quoted;
        if (c == '!' && !quoted)
            parts.emplace_back();
        else
            parts.back() += c;
    }
    for (std::string& part : parts)
        part = trimmed(part);
    return parts;
}

Expected<std::string> userPipeline(const std::string& description)
{
    const char* const example = "gst://videotestsrc ! videoconvert ! video/x-raw,format=BGR ! "
                                "appsink drop=true max-buffers=1 sync=false";
    const std::string pipeline = trimmed(description);
    if (pipeline.empty())
        return Status::invalid(std::string("gst:// needs a pipeline after it, ending in an "
                                           "appsink; for example ") +
            example);
    const std::string last = linkedElements(pipeline).back();
    const std::string element = last.substr(0, last.find_first_of(" \t\r\n"));
    if (element != "appsink")
        return Status::invalid("the pipeline of gst:// must end in an appsink (jetagent reads "
                               "its frames from there), but it ends in '" +
            (last.empty() ? std::string("!") : withoutPasswords(last)) + "'; for example " +
            example);
    // OpenCV 4.6 finds the appsink by its name.
    std::istringstream properties(last);
    for (std::string property; properties >> property;) {
        if (!startsWith(property, "name="))
            continue;
        std::string value = property.substr(5);
        value.erase(std::remove(value.begin(), value.end(), '"'), value.end());
        if (value.find("appsink") == std::string::npos)
            return Status::invalid("the appsink of a gst:// pipeline is named '" + value +
                "', but OpenCV finds it only by a name containing \"appsink\": leave the name "
                "out or call it appsink");
    }
    return pipeline;
}

Expected<std::string> pipelineFor(const SourceOptions& options)
{
    const std::string& uri = options.uri;
    if (startsWith(uri, "csi://"))
        return csiPipeline(options, uri.substr(6));
    if (startsWith(uri, "rtsp://"))
        return rtspPipeline(options);
    if (startsWith(uri, "gst://"))
        return userPipeline(uri.substr(6));
    return Status::invalid("'" + withoutPasswords(uri) +
        "' is not a GStreamer source (csi://N, rtsp://HOST/PATH or gst://PIPELINE)");
}

std::string kindOf(const std::string& uri)
{
    if (startsWith(uri, "csi://"))
        return "csi";
    if (startsWith(uri, "rtsp://"))
        return "rtsp";
    return "gstreamer";
}

// What to check when a pipeline of `kind` does not start.
std::string startHint(const std::string& kind)
{
    if (kind == "csi")
        return "is nvargus-daemon running (systemctl status nvargus-daemon)? is the camera "
               "connected? (nvarguscamerasrc missing: not a Jetson / JetPack multimedia not "
               "installed)";
    if (kind == "rtsp")
        return "is the server reachable from here (port 554 unless the URI says otherwise), the "
               "path right, and user:password@ in the URI if the server asks for credentials? "
               "decoders come from gstreamer1.0-plugins-good, -bad and -libav";
    return "OpenCV's warning above gives GStreamer's reason; gst-launch-1.0 with the same "
           "pipeline (appsink replaced by fakesink) shows it in full";
}

std::chrono::nanoseconds toDuration(double seconds)
{
    return std::chrono::nanoseconds(static_cast<int64_t>(seconds * 1e9));
}

// State shared by a source and its grab thread; the thread holds it too, so it stays valid for a
// thread that outlives its source (blocked inside OpenCV).
struct GrabShared {
    std::mutex mutex;
    std::condition_variable changed;
    bool stop = false; // the source is gone or going
    bool started = false; // the first frame arrived
    bool ended = false; // a pipeline that does not reconnect reached its end
    bool finished = false; // the thread is done with the pipeline
    bool reconnecting = false; // a lost stream is being reopened
    Status failure; // why the pipeline did not start
    double reportedFps = 0.0; // CAP_PROP_FPS of the first open
    cv::Mat slot; // the frame waiting for read(); its buffer is swapped, never shared
    bool full = false;
    uint64_t slotSequence = 0;
    int64_t slotCaptureNs = 0;
    int64_t lastArrivalNs = 0;
    SourceStats stats; // delivered, stalls, first/last by read(); the rest by the thread
};

struct GrabPlan {
    std::string pipeline;
    std::string label; // the URI without passwords, for messages
    bool reconnect = false;
    bool newestWins = false;
    double reconnectMaxS = 0.0;
};

bool openCapture(cv::VideoCapture& capture, const std::string& pipeline)
{
    try {
        if (capture.open(pipeline, cv::CAP_GSTREAMER))
            return true;
    } catch (const cv::Exception& e) {
        logger(kLoggerName)->debug("OpenCV threw opening a pipeline: {}", e.what());
    }
    capture.release();
    return false;
}

bool readCapture(cv::VideoCapture& capture, cv::Mat& image)
{
    try {
        return capture.read(image) && !image.empty();
    } catch (const cv::Exception& e) {
        logger(kLoggerName)->debug("OpenCV threw reading a pipeline: {}", e.what());
        return false;
    }
}

// Waits `seconds` unless the source stops first; false when it stopped.
bool waitUnlessStopped(GrabShared& shared, double seconds)
{
    std::unique_lock<std::mutex> lock(shared.mutex);
    return !shared.changed.wait_for(lock, toDuration(seconds), [&] { return shared.stop; });
}

// The grab thread: opens the pipeline, reads frames into the slot, reopens a lost stream.
void grabFrames(std::shared_ptr<GrabShared> shared, GrabPlan plan)
{
    auto log = logger(kLoggerName);
    cv::VideoCapture capture;
    cv::Mat grabbed;
    uint64_t sequence = 0;
    bool haveFrame = false; // a frame arrived since the start
    bool lost = false;
    int64_t lostNs = 0;
    double backoffS = std::min(kFirstBackoffS, plan.reconnectMaxS);
    const auto finish = [&](Status failure, bool ended) {
        capture.release();
        std::lock_guard<std::mutex> lock(shared->mutex);
        if (!failure.ok())
            shared->failure = std::move(failure);
        shared->ended = ended;
        shared->finished = true;
        shared->changed.notify_all();
    };
    const auto backOff = [&] {
        if (!waitUnlessStopped(*shared, backoffS))
            return false;
        backoffS = std::min(backoffS * 2.0, plan.reconnectMaxS);
        return true;
    };

    for (;;) {
        {
            std::lock_guard<std::mutex> lock(shared->mutex);
            if (shared->stop)
                break;
        }
        if (!capture.isOpened()) {
            const bool opened = openCapture(capture, plan.pipeline);
            if (!opened && !haveFrame)
                return finish(Status::io("the pipeline did not start"), false);
            if (!opened) {
                log->debug("{}: reopening failed; next try in {:.1f} s", plan.label, backoffS);
                if (!backOff())
                    break;
                continue;
            }
            if (!haveFrame) {
                const double fps = capture.get(cv::CAP_PROP_FPS);
                std::lock_guard<std::mutex> lock(shared->mutex);
                shared->reportedFps = std::isfinite(fps) && fps > 0.0 && fps <= kMaxFps ? fps : 0.0;
            }
        }

        const bool got = readCapture(capture, grabbed);
        const int64_t arrivalNs = monotonicNs();
        if (!got) {
            capture.release();
            if (!haveFrame)
                return finish(
                    Status::io("the pipeline started but ended before its first frame"), false);
            if (!plan.reconnect)
                return finish(Status(), true);
            if (!lost) {
                lost = true;
                lostNs = arrivalNs;
                log->warn("{}: the stream stopped; reopening it with backoff up to {:.1f} s",
                    plan.label, plan.reconnectMaxS);
                std::lock_guard<std::mutex> lock(shared->mutex);
                ++shared->stats.disconnects;
                shared->reconnecting = true;
            }
            if (!backOff())
                break;
            continue;
        }

        std::unique_lock<std::mutex> lock(shared->mutex);
        if (lost) {
            lost = false;
            backoffS = std::min(kFirstBackoffS, plan.reconnectMaxS);
            ++shared->stats.reconnects;
            shared->reconnecting = false;
            log->info("{}: frames again after {:.1f} s", plan.label, nsToS(arrivalNs - lostNs));
        }
        if (!plan.newestWins)
            shared->changed.wait(lock, [&] { return !shared->full || shared->stop; });
        if (shared->stop)
            break;
        if (shared->full)
            ++shared->stats.droppedByDevice;
        cv::swap(shared->slot, grabbed);
        shared->full = true;
        shared->slotSequence = sequence++;
        shared->slotCaptureNs = arrivalNs;
        shared->lastArrivalNs = arrivalNs;
        shared->started = true;
        haveFrame = true;
        shared->changed.notify_all();
    }
    finish(Status(), false);
}

class GStreamerSource final : public FrameSource {
public:
    GStreamerSource(const SourceOptions& options, const std::string& kind)
        : shared_(std::make_shared<GrabShared>()),
          label_(withoutPasswords(options.uri)),
          stallNs_(static_cast<int64_t>(options.camera.stallTimeoutS * 1e9))
    {
        info_.uri = options.uri;
        info_.kind = kind;
        info_.live = true;
    }

    ~GStreamerSource() override
    {
        if (!thread_.joinable())
            return;
        std::unique_lock<std::mutex> lock(shared_->mutex);
        shared_->stop = true;
        shared_->changed.notify_all();
        const bool finished = shared_->changed.wait_for(
            lock, toDuration(kStopWaitS), [&] { return shared_->finished; });
        lock.unlock();
        if (finished) {
            thread_.join();
        } else {
            logger(kLoggerName)
                ->warn("{}: the pipeline did not stop within {:.0f} s (OpenCV cannot interrupt a "
                       "blocked read); its thread ends on its own when the read returns",
                    label_, kStopWaitS);
            thread_.detach();
        }
    }

    GStreamerSource(const GStreamerSource&) = delete;
    GStreamerSource& operator=(const GStreamerSource&) = delete;

    // Starts the grab thread and waits for the first frame.
    Status start(const std::string& pipeline, double requestedFps, double reconnectMaxS)
    {
        GrabPlan plan;
        plan.pipeline = pipeline;
        plan.label = label_;
        plan.reconnect = info_.kind != "gstreamer";
        plan.newestWins = plan.reconnect;
        plan.reconnectMaxS = reconnectMaxS;
        const std::string shown = withoutPasswords(pipeline);
        info_.detail = shown;
        thread_ = std::thread(grabFrames, shared_, std::move(plan));

        std::unique_lock<std::mutex> lock(shared_->mutex);
        const bool settled = shared_->changed.wait_for(lock, toDuration(kFirstFrameTimeoutS),
            [&] { return shared_->started || shared_->finished; });
        if (!settled || !shared_->started) {
            const std::string what = settled
                ? shared_->failure.message()
                : "no frame within " + std::to_string(static_cast<int>(kFirstFrameTimeoutS)) + " s";
            return Status::io(label_ + ": " + what + ": " + shown + "\n  " + startHint(info_.kind));
        }
        if (Status s = checkType(shared_->slot); !s)
            return s;
        info_.width = shared_->slot.cols;
        info_.height = shared_->slot.rows;
        info_.fps = shared_->reportedFps > 0.0 ? shared_->reportedFps : requestedFps;
        lastDeliveredNs_ = shared_->slotCaptureNs;
        return Status();
    }

    const SourceInfo& info() const override { return info_; }

    Expected<ReadResult> read(Frame& frame) override
    {
        std::unique_lock<std::mutex> lock(shared_->mutex);
        shared_->changed.wait_for(lock, toDuration(kWaitSliceS),
            [&] { return shared_->full || shared_->ended || shared_->finished; });
        if (shared_->full) {
            if (Status s = checkType(shared_->slot); !s)
                return s;
            shared_->slot.copyTo(frame.image);
            frame.sequence = shared_->slotSequence;
            frame.captureNs = shared_->slotCaptureNs;
            frame.truthClass = -1;
            shared_->full = false;
            SourceStats& stats = shared_->stats;
            if (stats.delivered == 0)
                stats.firstCaptureNs = frame.captureNs;
            stats.lastCaptureNs = frame.captureNs;
            ++stats.delivered;
            shared_->changed.notify_all();
            if (stalled_) {
                stalled_ = false;
                logger(kLoggerName)
                    ->info("{}: frames again after {:.1f} s without", label_,
                        nsToS(frame.captureNs - lastDeliveredNs_));
            }
            lastDeliveredNs_ = frame.captureNs;
            return ReadResult::Frame;
        }
        if (shared_->ended)
            return ReadResult::EndOfStream;
        if (shared_->finished)
            return Status::io(label_ + ": the pipeline stopped: " + shared_->failure.message());
        // A reconnect under way is counted as a disconnect, not as stalls.
        const int64_t waitedNs = monotonicNs() - shared_->lastArrivalNs;
        if (!shared_->reconnecting && !stalled_ && waitedNs > stallNs_) {
            stalled_ = true;
            ++shared_->stats.stalls;
            logger(kLoggerName)
                ->warn("{}: no frame for {:.1f} s (stall timeout {:.1f} s)", label_,
                    nsToS(waitedNs), nsToS(stallNs_));
        }
        return ReadResult::NoFrame;
    }

    SourceStats stats() const override
    {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        return shared_->stats;
    }

private:
    Status checkType(const cv::Mat& image) const
    {
        if (image.type() == CV_8UC3)
            return Status();
        return Status::invalid(label_ + " delivers frames of " + std::to_string(image.channels()) +
            " channel(s), not BGR: end the pipeline with videoconvert ! video/x-raw,format=BGR ! "
            "appsink");
    }

    std::shared_ptr<GrabShared> shared_;
    std::thread thread_;
    SourceInfo info_;
    std::string label_;
    int64_t stallNs_;
    bool stalled_ = false; // in a stall already counted and warned about
    int64_t lastDeliveredNs_ = 0;
};

} // namespace

Expected<std::string> gstreamerPipelineFor(const SourceOptions& options)
{
    return pipelineFor(options);
}

bool gstreamerAvailable()
{
    return cv::videoio_registry::hasBackend(cv::CAP_GSTREAMER);
}

Expected<std::unique_ptr<FrameSource>> openGStreamerPipeline(
    const SourceOptions& options, const std::string& pipeline, const std::string& kind)
{
    const std::string shown = withoutPasswords(options.uri);
    if (!gstreamerAvailable())
        return Status::unsupported("'" + shown +
            "' needs OpenCV's GStreamer backend, which this OpenCV (" + CV_VERSION +
            ") was built without");
    const CameraOptions& camera = options.camera;
    if (!std::isfinite(camera.stallTimeoutS) || camera.stallTimeoutS <= 0.0)
        return Status::invalid("'" + shown + "': the stall timeout must be positive");
    if (!std::isfinite(camera.reconnectMaxS) || camera.reconnectMaxS <= 0.0)
        return Status::invalid("'" + shown + "': the longest reconnect delay must be positive");
    const double requestedFps = kind == "csi" && options.fps == 0.0 ? kDefaultCSIFps : options.fps;

    auto source = std::make_unique<GStreamerSource>(options, kind);
    if (Status s = source->start(pipeline, requestedFps, camera.reconnectMaxS); !s)
        return s;
    const SourceInfo& info = source->info();
    logger(kLoggerName)
        ->debug("{}: {}x{} at {:.2f} fps from {}", shown, info.width, info.height, info.fps,
            info.detail);
    return std::unique_ptr<FrameSource>(std::move(source));
}

Expected<std::unique_ptr<FrameSource>> openGStreamerSource(const SourceOptions& options)
{
    Expected<std::string> pipeline = pipelineFor(options);
    if (!pipeline)
        return pipeline.status();
    const std::string kind = kindOf(options.uri);
    if (kind != "csi" && (options.width != 0 || options.height != 0 || options.fps != 0.0))
        logger(kLoggerName)
            ->warn("{}: source width, height and fps do not apply to {} sources (the stream's "
                   "own are used); a gst:// pipeline with videoscale and videorate can change "
                   "them",
                withoutPasswords(options.uri), kind);
    return openGStreamerPipeline(options, *pipeline, kind);
}

} // namespace jetagent
