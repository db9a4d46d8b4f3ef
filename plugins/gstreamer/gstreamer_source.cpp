// Frames from GStreamer pipelines (csi://, rtsp://, gst://), read through GStreamer itself: the
// GStreamer plugin's half of gstreamer_source.h (the pipelines' text is built in hal, here they
// run).
//
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
// gst://PIPELINE runs the user's pipeline as written. It must end in an appsink (any name) and
// should deliver BGR. It paces itself: a camera or network stream at its own rate, a file at the
// clock when the appsink syncs (the default) or as fast as it decodes with sync=false. It is
// reported live, so the agent takes its newest frame; nothing is dropped here (see below).
//
// How frames are read: GStreamer directly (not OpenCV's VideoCapture, whose reads can neither
// time out nor be interrupted). Each source has one thread that builds the pipeline
// (gst_parse_launch, which names a missing element), sets it playing, pulls samples from the
// appsink with a timeout, reads the pipeline's bus for errors, and tears the pipeline down by
// setting it to NULL; no call in that loop waits longer than a slice of a second, so the thread
// always notices that its source is going. When to reopen is decided by ReconnectMachine
// (reconnect.h): csi and rtsp streams, and gst:// pipelines that are live (a camera or network
// source, told by their NO_PREROLL start), are reopened after an error, the end of the stream or
// kWatchdogStalls stall timeouts without a buffer, with a backoff from kFirstBackoffS doubling up
// to source.camera.reconnect_max_s, each attempt bounded by kAttemptS. A gst:// pipeline that is
// not live (a file) ends at its end, or fails with its error. A pipeline that gives no first
// frame fails at open, with an error that says why (no such element, the server refused, no
// frame within kAttemptS), as a missing file or device does.
//
// Capture time: CLOCK_MONOTONIC when the source thread pulled the frame from the appsink, i.e. its
// arrival there; that is later than the exposure by the pipeline's latency (ISP and conversion for
// CSI, network, jitter buffer and decoding for RTSP). Frame ids (Frame::sequence) and capture
// times go on increasing across reconnects.
//
// Frames handed over: csi and rtsp keep the newest frame; one the caller had not taken when a
// newer one arrived is dropped, leaves a gap in Frame::sequence and counts in
// SourceStats::droppedByDevice (frames the appsink itself dropped, with drop=true, are not
// counted). gst:// waits for the caller instead, so a finite pipeline delivers every frame; its
// appsink's own settings decide what it drops. The sample is held until read() copies it into the
// caller's frame: one copy per frame.
#include "jetagent/hal/gstreamer_source.h"

#include "gstreamer_api.h"
#include "gstreamer_plugin.h"

#include "gst_init.h"
#include "gst_support.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>
#include <thread>
#include <utility>
#include <vector>

#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include "jetagent/base/clock.h"
#include "jetagent/base/log.h"
#include "jetagent/base/text.h"
#include "jetagent/base/thread_guard.h"
#include "jetagent/hal/reconnect.h"

namespace jetagent {

namespace gst {
namespace {

constexpr double kWaitSliceS = 0.1; // longest read() waits before it returns NoFrame
constexpr int64_t kPullSliceNs = 50'000'000; // longest wait for a sample before the bus is read
constexpr double kAttemptS = 10.0; // bound on an attempt's first frame: Argus starts in 1-3 s,
                                   // an RTSP session in a few
constexpr double kWatchdogStalls = 2.0; // a live stream silent for this many stall timeouts is lost
constexpr double kStopWaitS = 3.0; // bound on a source thread's teardown when the source goes
constexpr double kSlowTeardownS = 1.0; // a teardown slower than this is logged
constexpr double kFirstBackoffS = 0.1; // first reconnect delay; it doubles to reconnectMaxS

const char* const kLoggerName = "gstreamer";

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
    return "gst-launch-1.0 -v with the same pipeline (appsink replaced by fakesink) shows it "
           "in full";
}

// --- GStreamer ---------------------------------------------------------------------------------

using detail::BusPtr;
using detail::copyBGR;
using detail::ElementPtr;
using detail::ErrorPtr;
using detail::errorStatus;
using detail::MessagePtr;
using detail::SamplePtr;

// What a kind of source needs when one of its elements is missing.
std::string missingElementHint(const std::string& kind, const std::string& element)
{
    if (element == "nvarguscamerasrc" || element == "nvvidconv" || element == "nvv4l2decoder")
        return " (not a Jetson, or nvidia-l4t-gstreamer missing)";
    if (kind == "rtsp" || element == "rtspsrc")
        return " (rtspsrc is in gstreamer1.0-plugins-good)";
    return " (gst-inspect-1.0 " + element + " tells whether a plugin provides it)";
}

// One attempt's pipeline, from gst_parse_launch to its teardown. Nothing here blocks for long:
// samples are pulled and the bus is read with timeouts, and the teardown is setting the state to
// NULL, which live elements (rtspsrc, nvarguscamerasrc) honour without waiting on the network or
// the camera.
class RunningPipeline {
public:
    static Expected<std::unique_ptr<RunningPipeline>> start(
        const std::string& text, const std::string& kind)
    {
        auto running = std::unique_ptr<RunningPipeline>(new RunningPipeline());
        if (Status s = running->build(text, kind); !s)
            return s;
        if (Status s = running->play(); !s)
            return s;
        return running;
    }

    ~RunningPipeline()
    {
        if (!pipeline_)
            return;
        const int64_t startNs = monotonicNs();
        gst_element_set_state(pipeline_.get(), GST_STATE_NULL);
        const double tookS = nsToS(monotonicNs() - startNs);
        if (tookS > kSlowTeardownS)
            logger(kLoggerName)->warn("tearing a pipeline down took {:.1f} s", tookS);
    }

    RunningPipeline(const RunningPipeline&) = delete;
    RunningPipeline& operator=(const RunningPipeline&) = delete;

    // A live pipeline (a camera, a network stream) runs by its own clock and can be reopened; a
    // file cannot.
    bool live() const { return live_; }

    SamplePtr pull(int64_t timeoutNs)
    {
        return SamplePtr(gst_app_sink_try_pull_sample(sink_, static_cast<GstClockTime>(timeoutNs)));
    }

    // The appsink got the end of the stream and holds no more samples.
    bool drained() const { return gst_app_sink_is_eos(sink_) != FALSE; }

    // The first error on the bus, if one came; warnings are logged.
    Status error()
    {
        for (;;) {
            MessagePtr message(gst_bus_pop_filtered(
                bus_.get(), static_cast<GstMessageType>(GST_MESSAGE_ERROR | GST_MESSAGE_WARNING)));
            if (!message)
                return Status();
            if (GST_MESSAGE_TYPE(message.get()) == GST_MESSAGE_ERROR)
                return errorStatus(message.get());
            GError* raw = nullptr;
            gst_message_parse_warning(message.get(), &raw, nullptr);
            const ErrorPtr warning(raw);
            const char* element = GST_MESSAGE_SRC_NAME(message.get());
            logger(kLoggerName)
                ->debug("{}: {}", element != nullptr ? element : "pipeline",
                    warning ? warning->message : "warning");
        }
    }

private:
    RunningPipeline() = default;

    Status build(const std::string& text, const std::string& kind)
    {
        GstParseContext* context = gst_parse_context_new();
        GError* raw = nullptr;
        GstElement* element =
            gst_parse_launch_full(text.c_str(), context, GST_PARSE_FLAG_FATAL_ERRORS, &raw);
        const ErrorPtr error(raw);
        std::vector<std::string> missing;
        if (gchar** names = gst_parse_context_get_missing_elements(context)) {
            for (gchar** name = names; *name != nullptr; ++name)
                missing.emplace_back(*name);
            g_strfreev(names);
        }
        gst_parse_context_free(context);
        if (element != nullptr)
            pipeline_.reset(GST_ELEMENT(gst_object_ref_sink(element)));
        if (!missing.empty())
            return Status::unsupported("no GStreamer element \"" + missing.front() + "\"" +
                missingElementHint(kind, missing.front()));
        if (error || !pipeline_)
            return Status::invalid("GStreamer cannot build the pipeline: " +
                withoutPasswords(error ? error->message : "no element"));
        if (!GST_IS_PIPELINE(pipeline_.get())) {
            // A lone element: gst_parse_launch returns it without a pipeline around it.
            ElementPtr wrapper(GST_ELEMENT(gst_object_ref_sink(gst_pipeline_new(nullptr))));
            gst_bin_add(GST_BIN(wrapper.get()), pipeline_.get()); // takes a reference of its own
            pipeline_ = std::move(wrapper);
        }
        if (Status s = findAppsink(); !s)
            return s;
        bus_.reset(gst_element_get_bus(pipeline_.get()));
        return Status();
    }

    Status findAppsink()
    {
        std::vector<GstElement*> sinks;
        GstIterator* it = gst_bin_iterate_recurse(GST_BIN(pipeline_.get()));
        GValue item = G_VALUE_INIT;
        for (bool more = true; more;) {
            switch (gst_iterator_next(it, &item)) {
            case GST_ITERATOR_OK: {
                auto* element = GST_ELEMENT(g_value_get_object(&item));
                if (GST_IS_APP_SINK(element))
                    sinks.push_back(element);
                g_value_reset(&item);
                break;
            }
            case GST_ITERATOR_RESYNC:
                sinks.clear();
                gst_iterator_resync(it);
                break;
            default: more = false;
            }
        }
        g_value_unset(&item);
        gst_iterator_free(it);
        if (sinks.size() != 1)
            return Status::invalid(std::string("the pipeline has ") +
                (sinks.empty() ? "no appsink" : "more than one appsink") +
                "; jetagent reads its frames from exactly one");
        sink_ = GST_APP_SINK(sinks.front()); // owned by the pipeline
        return Status();
    }

    Status play()
    {
        // PAUSED first: a live pipeline answers NO_PREROLL, as gst-launch-1.0 tells them apart.
        const GstStateChangeReturn paused =
            gst_element_set_state(pipeline_.get(), GST_STATE_PAUSED);
        live_ = paused == GST_STATE_CHANGE_NO_PREROLL;
        if (paused != GST_STATE_CHANGE_FAILURE &&
            gst_element_set_state(pipeline_.get(), GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE)
            return Status();
        if (Status s = error(); !s)
            return s;
        return Status::invalid("the pipeline did not start (GStreamer gave no reason)");
    }

    ElementPtr pipeline_;
    BusPtr bus_;
    GstAppSink* sink_ = nullptr;
    bool live_ = false;
};

// --- the source thread -------------------------------------------------------------------------

std::chrono::nanoseconds toDuration(double seconds)
{
    return std::chrono::nanoseconds(static_cast<int64_t>(seconds * 1e9));
}

// State shared by a source and its thread; the thread holds it too, so it stays valid for a
// thread that outlives its source (one whose teardown hangs past kStopWaitS).
struct GrabShared {
    std::mutex mutex;
    std::condition_variable changed;
    bool stop = false; // the source is gone or going
    bool started = false; // the first frame arrived
    bool ended = false; // a pipeline that does not reconnect reached its end
    bool finished = false; // the thread is done with the pipeline
    bool reconnecting = false; // a lost stream is being reopened
    Status failure; // why the pipeline did not start, or stopped
    SamplePtr slot; // the sample waiting for read()
    uint64_t slotSequence = 0;
    int64_t slotCaptureNs = 0;
    int64_t lastArrivalNs = 0;
    SourceStats stats; // delivered, stalls, first/last by read(); the rest by the thread
};

struct GrabPlan {
    std::string pipeline;
    std::string kind;
    std::string label; // the URI without passwords, for messages
    bool reconnectAlways = false; // csi, rtsp: every loss is retried
    bool newestWins = false;
    ReconnectPolicy policy;
};

// The source thread: runs the reconnect machine over attempts' pipelines and hands samples over.
class Grabber {
public:
    Grabber(std::shared_ptr<GrabShared> shared, GrabPlan plan)
        : shared_(std::move(shared)),
          plan_(std::move(plan)),
          machine_(plan_.policy, monotonicNs()),
          log_(logger(kLoggerName))
    {
    }

    void run()
    {
        while (step()) { }
        running_.reset();
        finish();
    }

private:
    bool stopRequested()
    {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        return shared_->stop;
    }

    // One turn of the loop; false once the machine has stopped.
    bool step()
    {
        if (stopRequested())
            machine_.stop();
        const LinkState before = machine_.state();
        machine_.tick(monotonicNs());
        if (machine_.state() != before && before != LinkState::Backoff)
            afterLoss(before, machine_.lastLoss(), Status()); // the attempt bound or the watchdog
        switch (machine_.state()) {
        case LinkState::Stopped: return false;
        case LinkState::Backoff: backOff(); return true;
        case LinkState::Connecting:
        case LinkState::Streaming:
            if (!running_ && !open())
                return true;
            stream();
            return true;
        }
        return false;
    }

    bool open()
    {
        Expected<std::unique_ptr<RunningPipeline>> started =
            RunningPipeline::start(plan_.pipeline, plan_.kind);
        if (!started) {
            lose(LossReason::OpenFailed, started.status());
            return false;
        }
        running_ = std::move(started).value();
        if (machine_.attempts() == 1)
            machine_.setReconnect(plan_.reconnectAlways || running_->live());
        return true;
    }

    // Pulls one sample (or waits a slice for one), and reads the bus.
    void stream()
    {
        SamplePtr sample = running_->pull(kPullSliceNs);
        if (Status s = running_->error(); !s) {
            lose(LossReason::Error, s);
            return;
        }
        if (!sample) {
            if (running_->drained())
                lose(LossReason::EndOfStream, Status());
            return;
        }
        int64_t arrivalNs = monotonicNs();
        if (arrivalNs <= lastArrivalNs_)
            arrivalNs = lastArrivalNs_ + 1;
        lastArrivalNs_ = arrivalNs;
        const bool reconnected =
            machine_.state() == LinkState::Connecting && machine_.everStreamed();
        machine_.frame(arrivalNs);
        if (reconnected) {
            // Counted and logged together, and neither once the source is being torn down, so
            // that the summary's count and the log's lines agree.
            std::lock_guard<std::mutex> lock(shared_->mutex);
            if (shared_->stop)
                return;
            shared_->stats.reconnects = machine_.reconnects();
            log_->info("{}: frames again, {:.1f} s after the stream was lost ({} attempts)",
                plan_.label, nsToS(arrivalNs - machine_.lostAtNs()), attemptsSinceLoss_);
        }
        attemptsSinceLoss_ = 0;
        handOver(std::move(sample), arrivalNs);
    }

    void handOver(SamplePtr sample, int64_t arrivalNs)
    {
        std::unique_lock<std::mutex> lock(shared_->mutex);
        if (!plan_.newestWins && shared_->slot) {
            shared_->changed.wait(lock, [&] { return !shared_->slot || shared_->stop; });
            // Time spent waiting for the reader is not the stream's silence.
            machine_.frame(monotonicNs());
        }
        if (shared_->stop)
            return;
        if (shared_->slot)
            ++shared_->stats.droppedByDevice;
        shared_->slot = std::move(sample);
        shared_->slotSequence = sequence_++;
        shared_->slotCaptureNs = arrivalNs;
        shared_->lastArrivalNs = arrivalNs;
        shared_->started = true;
        shared_->reconnecting = false;
        shared_->stats.reconnects = machine_.reconnects();
        shared_->changed.notify_all();
    }

    // The attempt failed or the stream was lost: the machine decides what comes next.
    void lose(LossReason reason, const Status& why)
    {
        const LinkState before = machine_.state();
        machine_.lost(reason, monotonicNs());
        afterLoss(before, reason, why);
    }

    void afterLoss(LinkState before, LossReason reason, const Status& why)
    {
        running_.reset();
        const std::string cause = why.ok() ? lossReasonName(reason) : why.message();
        if (machine_.state() == LinkState::Stopped) {
            if (!why.ok())
                record(why);
            return;
        }
        ++attemptsSinceLoss_;
        if (before == LinkState::Streaming)
            log_->warn("{}: the stream was lost ({}); reopening it with backoff up to {:.1f} s",
                plan_.label, cause, plan_.policy.maxDelayS);
        else
            log_->debug("{}: reopening failed ({}); next try in {:.1f} s", plan_.label, cause,
                nsToS(machine_.retryAtNs() - monotonicNs()));
        std::lock_guard<std::mutex> lock(shared_->mutex);
        shared_->reconnecting = true;
        shared_->stats.disconnects = machine_.disconnects();
    }

    void record(const Status& failure)
    {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        shared_->failure = failure;
    }

    void backOff()
    {
        running_.reset();
        std::unique_lock<std::mutex> lock(shared_->mutex);
        const auto due = std::chrono::steady_clock::now() +
            std::chrono::nanoseconds(std::max<int64_t>(0, machine_.retryAtNs() - monotonicNs()));
        shared_->changed.wait_until(lock, due, [&] { return shared_->stop; });
    }

    void finish()
    {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        const StopReason reason = machine_.stopReason();
        if (reason == StopReason::FirstAttemptFailed && shared_->failure.ok())
            shared_->failure = machine_.lastLoss() == LossReason::EndOfStream
                ? Status::invalid("the pipeline ended before its first frame")
                : Status::notFound("no frame within " +
                      std::to_string(static_cast<int>(plan_.policy.attemptS)) + " s");
        if (reason == StopReason::Failed && shared_->failure.ok())
            shared_->failure = Status::io(lossReasonName(machine_.lastLoss()));
        shared_->ended = reason == StopReason::Ended;
        shared_->finished = true;
        shared_->changed.notify_all();
    }

    std::shared_ptr<GrabShared> shared_;
    GrabPlan plan_;
    ReconnectMachine machine_;
    std::shared_ptr<spdlog::logger> log_;
    std::unique_ptr<RunningPipeline> running_;
    uint64_t sequence_ = 0;
    int64_t lastArrivalNs_ = 0;
    int attemptsSinceLoss_ = 0;
};

class GStreamerSource final : public FrameSource {
public:
    GStreamerSource(const SourceOptions& options, const std::string& kind)
        : shared_(std::make_shared<GrabShared>()),
          label_(withoutPasswords(options.uri)),
          stallNs_(static_cast<int64_t>(options.camera.stallTimeoutS * 1e9))
    {
        info_.uri = label_; // what logs, summaries and the live view show: no password
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
                ->error("{}: the pipeline's teardown did not finish within {:.0f} s; its thread "
                        "is left to end on its own",
                    label_, kStopWaitS);
            thread_.detach();
        }
    }

    GStreamerSource(const GStreamerSource&) = delete;
    GStreamerSource& operator=(const GStreamerSource&) = delete;

    // Starts the source thread and waits for the first frame.
    Status start(GrabPlan plan, double requestedFps)
    {
        const std::string shown = withoutPasswords(plan.pipeline);
        info_.detail = shown;
        const double bound = plan.policy.attemptS + kStopWaitS;
        thread_ = std::thread([shared = shared_, plan = std::move(plan)]() mutable {
            const std::shared_ptr<GrabShared> kept = shared;
            guardThread(
                "GStreamer source " + plan.label,
                [&] { Grabber(std::move(shared), std::move(plan)).run(); },
                [&kept](const std::string& why) {
                    std::lock_guard<std::mutex> lock(kept->mutex);
                    if (kept->failure.ok())
                        kept->failure = Status::runtime(why);
                    kept->finished = true;
                    kept->changed.notify_all();
                });
        });

        std::unique_lock<std::mutex> lock(shared_->mutex);
        const bool settled = shared_->changed.wait_for(
            lock, toDuration(bound), [&] { return shared_->started || shared_->finished; });
        if (!settled || !shared_->started) {
            const Status failure = settled ? shared_->failure : Status::notFound("no frame");
            return Status::error(failure.kind(),
                label_ + ": " + failure.message() + "\n  pipeline: " + shown + "\n  " +
                    startHint(info_.kind));
        }
        Image first;
        if (Status s = copyBGR(shared_->slot.get(), first, label_); !s)
            return s;
        info_.width = first.cols;
        info_.height = first.rows;
        info_.fps = requestedFps;
        GstVideoInfo video;
        if (gst_video_info_from_caps(&video, gst_sample_get_caps(shared_->slot.get())) != FALSE &&
            GST_VIDEO_INFO_FPS_N(&video) > 0 && GST_VIDEO_INFO_FPS_D(&video) > 0)
            info_.fps =
                static_cast<double>(GST_VIDEO_INFO_FPS_N(&video)) / GST_VIDEO_INFO_FPS_D(&video);
        lastDeliveredNs_ = shared_->slotCaptureNs;
        return Status();
    }

    const SourceInfo& info() const override { return info_; }

    Expected<ReadResult> read(Frame& frame) override
    {
        std::unique_lock<std::mutex> lock(shared_->mutex);
        shared_->changed.wait_for(lock, toDuration(kWaitSliceS),
            [&] { return shared_->slot || shared_->ended || shared_->finished; });
        if (shared_->slot) {
            SamplePtr sample = std::move(shared_->slot);
            frame.sequence = shared_->slotSequence;
            frame.captureNs = shared_->slotCaptureNs;
            frame.truthClass = -1;
            SourceStats& stats = shared_->stats;
            if (stats.delivered == 0)
                stats.firstCaptureNs = frame.captureNs;
            stats.lastCaptureNs = frame.captureNs;
            ++stats.delivered;
            shared_->changed.notify_all();
            lock.unlock();
            if (Status s = copyBGR(sample.get(), frame.image, label_); !s)
                return s;
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
    std::shared_ptr<GrabShared> shared_;
    std::thread thread_;
    SourceInfo info_;
    std::string label_;
    int64_t stallNs_;
    bool stalled_ = false; // in a stall already counted and warned about
    int64_t lastDeliveredNs_ = 0;
};

} // namespace

bool hasElement(const std::string& factory)
{
    if (!detail::initGStreamer())
        return false;
    GstElementFactory* found = gst_element_factory_find(factory.c_str());
    if (found == nullptr)
        return false;
    gst_object_unref(found);
    return true;
}

Expected<std::unique_ptr<FrameSource>> openPipeline(
    const SourceOptions& options, const std::string& pipeline, const std::string& kind)
{
    const std::string shown = withoutPasswords(options.uri);
    std::string why;
    if (!detail::initGStreamer(&why))
        return Status::unsupported("'" + shown + "' needs GStreamer, which did not start: " + why);
    const CameraOptions& camera = options.camera;
    if (!std::isfinite(camera.stallTimeoutS) || camera.stallTimeoutS <= 0.0)
        return Status::invalid("'" + shown + "': the stall timeout must be positive");
    if (!std::isfinite(camera.reconnectMaxS) || camera.reconnectMaxS <= 0.0)
        return Status::invalid("'" + shown + "': the longest reconnect delay must be positive");
    const double requestedFps = kind == "csi" && options.fps == 0.0 ? kDefaultCsiFps : options.fps;

    GrabPlan plan;
    plan.pipeline = pipeline;
    plan.kind = kind;
    plan.label = shown;
    plan.reconnectAlways = kind != "gstreamer";
    plan.newestWins = plan.reconnectAlways;
    plan.policy.firstDelayS = kFirstBackoffS;
    plan.policy.maxDelayS = camera.reconnectMaxS;
    plan.policy.attemptS = kAttemptS;
    plan.policy.watchdogS = kWatchdogStalls * camera.stallTimeoutS;

    auto source = std::make_unique<GStreamerSource>(options, kind);
    if (Status s = source->start(std::move(plan), requestedFps); !s)
        return s;
    const SourceInfo& info = source->info();
    logger(kLoggerName)
        ->debug("{}: {}x{} at {:.2f} fps from {}", shown, info.width, info.height, info.fps,
            info.detail);
    return std::unique_ptr<FrameSource>(std::move(source));
}

} // namespace gst
} // namespace jetagent
