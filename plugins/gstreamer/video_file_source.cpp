// Video files decoded by GStreamer (jetagent/hal/video_file_source.h), in the GStreamer plugin.
//
// A pass over the file is one pipeline, built element by element:
//   filesrc location=PATH ! decodebin ! videoconvert ! video/x-raw,format=BGR
//     ! appsink sync=false max-buffers=2 drop=false
// decodebin finds the container by typefinding and plugs a demuxer, parsers and a decoder for
// it; its first raw video pad is linked to videoconvert once it appears (pad-added). The appsink
// does not sync to the clock and holds at most two decoded frames, so the file is decoded as fast
// as read() takes frames, no faster, and a full appsink holds the decoder back.
//
// What keeps it to the one local file (video_file_source.h): decodebin asks, through its
// autoplug-select signal, before it plugs each element; a factory whose class names a source, an
// adaptive (playlist) demuxer or a network demuxer is skipped and the file refused with a message
// naming it. autoplug-continue stops decodebin at audio and subtitle streams (left undecoded)
// and at caps whose width and height exceed the pixel limit (the decoder is never plugged).
// deep-element-added sees every element added anywhere in the pipeline, those elements add to
// themselves included: a source other than our filesrc is locked in its state (it never starts)
// and the file refused.
//
// Frames are pulled from the appsink with a timeout, a slice at a time, and the bus is read for
// errors between slices; kFrameWaitS bounds the wait for one frame.
#include "video_file_source.h"

#include "gst_init.h"
#include "gst_support.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <utility>

#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include "jetagent/base/clock.h"
#include "jetagent/base/log.h"
#include "jetagent/base/regular_file.h"

namespace fs = std::filesystem;

namespace jetagent {

namespace {

// Bytes read from a video file's start to tell a playlist or manifest from a video.
constexpr size_t kVideoHeadBytes = 4096;
constexpr int64_t kVideoPullSliceNs = 50'000'000; // longest wait for a sample before the bus
constexpr double kFrameWaitS = 30.0; // bound on the wait for one decoded frame
constexpr guint kDecodedAhead = 2; // decoded frames the appsink holds ahead of read()
// decodebin's autoplug-select answers (its GstAutoplugSelectResult, in no public header).
constexpr gint kAutoplugTry = 0;
constexpr gint kAutoplugSkip = 2;

// What `head` is when it is a text that sends a demuxer to other files or URLs (FFmpeg's hls,
// dash, concat and sdp demuxers, GStreamer's hlsdemux, dashdemux and mssdemux); null for anything
// else.
const char* streamManifestKind(const std::string& head)
{
    size_t start = head.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0; // a UTF-8 byte order mark
    while (start < head.size() && std::isspace(static_cast<unsigned char>(head[start])))
        ++start;
    auto startsWith = [&](const char* prefix) {
        return head.compare(start, std::strlen(prefix), prefix) == 0;
    };
    if (startsWith("#EXTM3U"))
        return "an HLS playlist (#EXTM3U)";
    if (startsWith("ffconcat version"))
        return "an FFmpeg concat script";
    if (startsWith("v=0") && head.find("c=IN IP") != std::string::npos)
        return "an SDP session description (of RTP network streams)";
    // XML, whatever comes before its root element (a declaration, comments).
    if (startsWith("<") && head.find("<MPD") != std::string::npos)
        return "a DASH manifest (MPD)";
    if (startsWith("<") && head.find("<SmoothStreamingMedia") != std::string::npos)
        return "a Smooth Streaming manifest";
    return nullptr;
}

// The frame count an AVI file's main header (avih) declares, read from the file's first bytes; -1
// for anything else. avidemux measures a file without its index (one cut short) by scanning what
// is there, so its duration is the frames left, not the frames the file was written with.
int64_t aviHeaderFrames(const std::string& head)
{
    // RIFF size "AVI " LIST size "hdrl" "avih" size, then five 32-bit fields, the fifth the count.
    constexpr size_t kTotalFramesAt = 48;
    if (head.size() < kTotalFramesAt + 4 || head.compare(0, 4, "RIFF") != 0 ||
        head.compare(8, 4, "AVI ") != 0 || head.compare(24, 4, "avih") != 0)
        return -1;
    uint32_t count = 0;
    for (size_t i = 0; i < 4; ++i)
        count |= static_cast<uint32_t>(static_cast<unsigned char>(head[kTotalFramesAt + i]))
            << (8 * i);
    return count > 0 ? count : -1;
}

// What an element factory is, by its class, when it would read other files or the network; null
// for the rest (demuxers, parsers, decoders).
const char* networkReaderKind(GstElementFactory* factory)
{
    const char* klass = gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS);
    const std::string text = klass != nullptr ? klass : "";
    if (text.find("Adaptive") != std::string::npos)
        return "an adaptive-streaming demuxer, which fetches the segments a playlist names";
    if (text.find("Network") != std::string::npos)
        return "a network demuxer, which opens the streams a session description names";
    if (text.find("Source") != std::string::npos)
        return "a source element";
    return nullptr;
}

// The frame size that `caps` give, when they give one.
bool capsFrameSize(const GstCaps* caps, int& width, int& height)
{
    if (caps == nullptr || gst_caps_get_size(caps) == 0)
        return false;
    const GstStructure* s = gst_caps_get_structure(caps, 0);
    return gst_structure_get_int(s, "width", &width) != FALSE &&
        gst_structure_get_int(s, "height", &height) != FALSE && width > 0 && height > 0;
}

Status overPixelLimit(const std::string& what, int width, int height, uint64_t maxPixels)
{
    return Status::invalid(what + " has frames of " + std::to_string(width) + "x" +
        std::to_string(height) + " pixels, more than the limit of " + std::to_string(maxPixels) +
        " pixels (source.max_image_pixels)");
}

bool capsNamePrefixed(const GstCaps* caps, const char* prefix)
{
    if (caps == nullptr || gst_caps_get_size(caps) == 0)
        return false;
    const char* name = gst_structure_get_name(gst_caps_get_structure(caps, 0));
    return name != nullptr && std::strncmp(name, prefix, std::strlen(prefix)) == 0;
}

// Which packages decode what, for a file GStreamer has no demuxer or decoder for.
const char* const kVideoPluginHint =
    "AVI, MP4/MOV and Matroska/WebM containers and MJPEG need gstreamer1.0-plugins-good; H.264, "
    "H.265 and MPEG-4 video need gstreamer1.0-libav (or, for H.264, gstreamer1.0-plugins-bad with "
    "libopenh264-7)";

} // namespace

// What the pipeline's signal handlers, on GStreamer's streaming threads, tell the reader.
struct VideoFileGuard {
    std::mutex mutex;
    Status refusal; // the first refusal; OK while none
    std::string what; // "video file 'clip.mp4'"
    uint64_t maxPixels = 0;
    GstElement* fileSource = nullptr; // our filesrc, the one source allowed (owned by the pipeline)
    GstElement* convert = nullptr; // videoconvert, where the video stream is linked (likewise)

    void refuse(Status why)
    {
        std::lock_guard<std::mutex> lock(mutex);
        if (refusal.ok())
            refusal = std::move(why);
    }
    Status refused()
    {
        std::lock_guard<std::mutex> lock(mutex);
        return refusal;
    }
};

namespace {

gint onAutoplugSelect(GstElement* /*decodebin*/, GstPad* /*pad*/, GstCaps* /*caps*/,
    GstElementFactory* factory, gpointer data)
{
    auto* guard = static_cast<VideoFileGuard*>(data);
    if (const char* kind = networkReaderKind(factory)) {
        guard->refuse(Status::invalid(guard->what + " would need " +
            gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_LONGNAME) + " (" +
            gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(factory)) + "), " + kind +
            ": it is a playlist or manifest, not a video, and file sources read local video files "
            "only and never open the network"));
        return kAutoplugSkip;
    }
    return kAutoplugTry;
}

gboolean onAutoplugContinue(
    GstElement* /*decodebin*/, GstPad* /*pad*/, GstCaps* caps, gpointer data)
{
    auto* guard = static_cast<VideoFileGuard*>(data);
    // Only video is decoded; other streams are left as they are (and unlinked).
    for (const char* other : {"audio/", "text/", "subpicture/", "closedcaption/"})
        if (capsNamePrefixed(caps, other))
            return FALSE;
    int width = 0;
    int height = 0;
    if (capsFrameSize(caps, width, height) &&
        static_cast<uint64_t>(width) * static_cast<uint64_t>(height) > guard->maxPixels) {
        guard->refuse(overPixelLimit(guard->what, width, height, guard->maxPixels));
        return FALSE;
    }
    return TRUE;
}

void onPadAdded(GstElement* /*decodebin*/, GstPad* pad, gpointer data)
{
    auto* guard = static_cast<VideoFileGuard*>(data);
    GstCaps* caps = gst_pad_get_current_caps(pad);
    if (caps == nullptr)
        caps = gst_pad_query_caps(pad, nullptr);
    const bool video = capsNamePrefixed(caps, "video/x-raw");
    int width = 0;
    int height = 0;
    const bool sized = capsFrameSize(caps, width, height);
    if (caps != nullptr)
        gst_caps_unref(caps);
    if (!video)
        return;
    if (sized && static_cast<uint64_t>(width) * static_cast<uint64_t>(height) > guard->maxPixels) {
        guard->refuse(overPixelLimit(guard->what, width, height, guard->maxPixels));
        return;
    }
    GstPad* sink = gst_element_get_static_pad(guard->convert, "sink");
    if (!gst_pad_is_linked(sink) && gst_pad_link(pad, sink) != GST_PAD_LINK_OK)
        guard->refuse(Status::invalid(guard->what +
            ": its video stream could not be linked to "
            "videoconvert"));
    gst_object_unref(sink);
}

void onDeepElementAdded(GstBin* /*bin*/, GstBin* /*parent*/, GstElement* element, gpointer data)
{
    auto* guard = static_cast<VideoFileGuard*>(data);
    GstElementFactory* factory = gst_element_get_factory(element);
    if (element == guard->fileSource || factory == nullptr)
        return;
    const char* klass = gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS);
    if (klass == nullptr || std::strstr(klass, "Source") == nullptr)
        return;
    gst_element_set_locked_state(element, TRUE);
    guard->refuse(Status::invalid(guard->what + ": decoding it added a source element (" +
        gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(factory)) +
        "), which was stopped: file sources read the one local file only"));
}

} // namespace

// One pass's pipeline, from its construction to its teardown (setting the state to NULL, which
// joins GStreamer's streaming threads before the guard they write to goes).
class VideoFilePipeline {
public:
    static Expected<std::unique_ptr<VideoFilePipeline>> start(
        const std::string& path, const std::string& what, uint64_t maxPixels)
    {
        std::unique_ptr<VideoFilePipeline> running(new VideoFilePipeline());
        running->guard_.what = what;
        running->guard_.maxPixels = maxPixels;
        if (Status s = running->build(path); !s)
            return s;
        if (gst_element_set_state(running->pipeline_.get(), GST_STATE_PLAYING) ==
            GST_STATE_CHANGE_FAILURE)
            return running->failure("the pipeline did not start");
        return running;
    }

    ~VideoFilePipeline()
    {
        if (pipeline_)
            gst_element_set_state(pipeline_.get(), GST_STATE_NULL);
    }

    VideoFilePipeline(const VideoFilePipeline&) = delete;
    VideoFilePipeline& operator=(const VideoFilePipeline&) = delete;

    // The next decoded frame into `sample`; null at the end of the file. Fails with a refusal,
    // the bus's error, or Io when no frame came within kFrameWaitS.
    Status next(detail::SamplePtr& sample)
    {
        const int64_t deadline = monotonicNs() + static_cast<int64_t>(kFrameWaitS * 1e9);
        for (;;) {
            sample.reset(gst_app_sink_try_pull_sample(sink_, kVideoPullSliceNs));
            if (Status s = guard_.refused(); !s)
                return s;
            if (sample)
                return Status();
            if (Status s = busError(); !s)
                return s;
            if (gst_app_sink_is_eos(sink_) != FALSE)
                return Status();
            if (monotonicNs() > deadline)
                return Status::io(guard_.what + ": no frame decoded within " +
                    std::to_string(static_cast<int>(kFrameWaitS)) + " s");
        }
    }

    // The stream's length in frames at `fps`, from the pipeline's duration; -1 when unknown.
    int64_t declaredFrames(double fps) const
    {
        gint64 duration = -1;
        if (fps <= 0.0 ||
            gst_element_query_duration(pipeline_.get(), GST_FORMAT_TIME, &duration) == FALSE ||
            duration <= 0)
            return -1;
        return std::llround(static_cast<double>(duration) * fps / static_cast<double>(GST_SECOND));
    }

    // True when the last failure was a refusal (rather than the decoder's error).
    bool refusedInput() { return !guard_.refused().ok(); }

private:
    VideoFilePipeline() = default;

    Status build(const std::string& path)
    {
        pipeline_.reset(GST_ELEMENT(gst_object_ref_sink(gst_pipeline_new("video-file"))));
        GstBin* bin = GST_BIN(pipeline_.get());
        GstElement* elements[5] = {};
        const char* const factories[5] = {
            "filesrc", "decodebin", "videoconvert", "capsfilter", "appsink"};
        for (size_t i = 0; i < 5; ++i) {
            elements[i] = gst_element_factory_make(factories[i], nullptr);
            if (elements[i] == nullptr)
                return Status::unsupported(guard_.what +
                    " cannot be decoded: GStreamer has no element \"" + factories[i] +
                    "\" (filesrc is GStreamer's own; decodebin, videoconvert, capsfilter and "
                    "appsink are in gstreamer1.0-plugins-base)");
            gst_bin_add(bin, elements[i]); // takes the floating reference
        }
        GstElement* source = elements[0];
        GstElement* decode = elements[1];
        guard_.fileSource = source;
        guard_.convert = elements[2];
        g_object_set(source, "location", path.c_str(), nullptr);
        GstCaps* bgr = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, "BGR", nullptr);
        g_object_set(elements[3], "caps", bgr, nullptr);
        gst_caps_unref(bgr);
        g_object_set(elements[4], "sync", FALSE, "max-buffers", kDecodedAhead, "drop", FALSE,
            "enable-last-sample", FALSE, nullptr);
        if (gst_element_link(source, decode) == FALSE ||
            gst_element_link_many(elements[2], elements[3], elements[4], nullptr) == FALSE)
            return Status::runtime(guard_.what + ": the decoding pipeline could not be linked");
        g_signal_connect(decode, "autoplug-select", G_CALLBACK(onAutoplugSelect), &guard_);
        g_signal_connect(decode, "autoplug-continue", G_CALLBACK(onAutoplugContinue), &guard_);
        g_signal_connect(decode, "pad-added", G_CALLBACK(onPadAdded), &guard_);
        g_signal_connect(bin, "deep-element-added", G_CALLBACK(onDeepElementAdded), &guard_);
        sink_ = GST_APP_SINK(elements[4]);
        bus_.reset(gst_element_get_bus(pipeline_.get()));
        return Status();
    }

    // The first error on the bus, if one came; warnings are logged at debug level.
    Status busError()
    {
        for (;;) {
            detail::MessagePtr message(gst_bus_pop_filtered(
                bus_.get(), static_cast<GstMessageType>(GST_MESSAGE_ERROR | GST_MESSAGE_WARNING)));
            if (!message)
                return Status();
            if (GST_MESSAGE_TYPE(message.get()) == GST_MESSAGE_ERROR)
                return detail::errorStatus(message.get());
            GError* raw = nullptr;
            gst_message_parse_warning(message.get(), &raw, nullptr);
            const detail::ErrorPtr warning(raw);
            logger("source")->debug("{}: {}", guard_.what, warning ? warning->message : "warning");
        }
    }

    Status failure(const char* fallback)
    {
        if (Status s = guard_.refused(); !s)
            return s;
        if (Status s = busError(); !s)
            return s;
        return Status::invalid(guard_.what + ": " + fallback);
    }

    VideoFileGuard guard_; // outlives the pipeline (declared first, destroyed last)
    detail::ElementPtr pipeline_;
    detail::BusPtr bus_;
    GstAppSink* sink_ = nullptr; // owned by the pipeline
};

VideoFileSource::VideoFileSource() = default;
VideoFileSource::~VideoFileSource() = default;

Expected<std::unique_ptr<FrameSource>> gst::openVideoFile(
    const SourceOptions& options, const std::string& path, bool sniff)
{
    std::unique_ptr<VideoFileSource> source(new VideoFileSource());
    source->path_ = path;
    std::error_code ec;
    const fs::path absolute = fs::absolute(path, ec);
    source->openPath_ = ec ? path : absolute.string();
    source->loop_ = options.loop;
    source->sniff_ = sniff;
    source->maxPixels_ = options.maxImagePixels;
    source->info_.uri = options.uri;
    source->info_.kind = "video-file";

    if (Status s = source->reopen(sniff); !s)
        return s;
    detail::SamplePtr first;
    const std::string what = "video file '" + path + "'";
    if (Status s = source->pipeline_->next(first); !s) {
        if (s.kind() == ErrorKind::Unsupported)
            return Status::unsupported(
                what + " cannot be decoded: " + s.message() + " (" + kVideoPluginHint + ")");
        if (source->pipeline_->refusedInput())
            return s;
        return Status::error(
            s.kind(), "'" + path + "' is not a video file GStreamer can decode: " + s.message());
    }
    if (!first)
        return Status::invalid(what + " opened, but no frame could be decoded from it");
    if (Status s = detail::copyBGR(first.get(), source->first_, what); !s)
        return s;
    if (source->first_.total() > source->maxPixels_)
        return overPixelLimit(what, source->first_.cols, source->first_.rows, source->maxPixels_);
    source->haveFirst_ = true;

    double fps = 0.0;
    GstVideoInfo video;
    if (gst_video_info_from_caps(&video, gst_sample_get_caps(first.get())) != FALSE &&
        GST_VIDEO_INFO_FPS_N(&video) > 0 && GST_VIDEO_INFO_FPS_D(&video) > 0)
        fps = static_cast<double>(GST_VIDEO_INFO_FPS_N(&video)) / GST_VIDEO_INFO_FPS_D(&video);
    if (!std::isfinite(fps) || fps <= 0.0 || fps > 1000.0)
        fps = options
                  .fps; // containers without a rate (variable-rate ones) play at the configured one
    source->info_.fps = fps;
    source->info_.width = source->first_.cols;
    source->info_.height = source->first_.rows;
    // The larger count: an AVI cut short still declares its whole length in its header, and an
    // OpenDML one (over 1 GiB) counts only its first part there.
    source->declaredFrames_ =
        std::max(source->pipeline_->declaredFrames(fps), source->headerFrames_);
    source->info_.frameCount = options.loop ? -1 : source->declaredFrames_;
    return std::unique_ptr<FrameSource>(std::move(source));
}

Status VideoFileSource::reopen(bool sniff)
{
    const std::string what = "video file '" + path_ + "'";
    pipeline_.reset();
    std::error_code ec;
    if (fs::is_directory(path_, ec))
        return Status::invalid("'" + path_ + "' is a directory, not a video file");
    {
        uint64_t size = 0;
        auto file = openRegularFile(path_, what, size);
        if (!file)
            return file.status();
        std::string head;
        if (Status s = readFileHead(file.value(), what, kVideoHeadBytes, head); !s)
            return s;
        headerFrames_ = aviHeaderFrames(head);
        if (const char* kind = sniff ? streamManifestKind(head) : nullptr)
            return Status::invalid(what + " is " + kind +
                ", which names other files or URLs to read, not a video: file sources read local "
                "video files only and never open the network (a network stream is read with "
                "rtsp://HOST/PATH or a gst:// pipeline)");
    }
    std::string why;
    if (!detail::initGStreamer(&why))
        return Status::unsupported("cannot decode " + what + ": GStreamer did not start: " + why);
    auto started = VideoFilePipeline::start(openPath_, what, maxPixels_);
    if (!started)
        return started.status();
    pipeline_ = std::move(started).value();
    return Status();
}

void VideoFileSource::notePassEnd(const std::string& why)
{
    if (!why.empty())
        logger("source")->debug("video file '{}': decoding stopped: {}", path_, why);
    if (declaredFrames_ <= 0 || passFrames_ >= declaredFrames_)
        return;
    const std::string counts =
        std::to_string(passFrames_) + " of " + std::to_string(declaredFrames_) + " frames";
    if (!loop_) {
        endDetail_ = "after " + counts;
        logger("source")->warn("video file '{}' ended after {}: the rest could not be decoded (a "
                               "damaged or truncated file)",
            path_, counts);
    } else if (!warnedShortPass_) {
        warnedShortPass_ = true;
        logger("source")->warn("a pass over video file '{}' ended after {}: the rest could not be "
                               "decoded (a damaged or truncated file); looping over the frames "
                               "that decode",
            path_, counts);
    }
}

Expected<ReadResult> VideoFileSource::read(Frame& frame)
{
    frame.captureNs = monotonicNs();
    if (ended_)
        return ReadResult::EndOfStream;
    const std::string what = "video file '" + path_ + "'";
    if (haveFirst_) {
        first_.copyTo(frame.image);
        haveFirst_ = false;
        first_.release();
    } else {
        detail::SamplePtr sample;
        Status s = pipeline_->next(sample);
        // A refusal or a stall is a failure; the decoder's error ends the pass, as the end does.
        if (!s && (pipeline_->refusedInput() || s.kind() == ErrorKind::Io))
            return s;
        if (!sample) {
            notePassEnd(s.ok() ? std::string() : s.message());
            if (loop_) {
                if (Status r = reopen(sniff_); !r)
                    return r;
                passFrames_ = 0;
                if (Status again = pipeline_->next(sample); !again)
                    return again;
            }
        }
        if (!sample) {
            ended_ = true;
            return ReadResult::EndOfStream;
        }
        if (Status c = detail::copyBGR(sample.get(), frame.image, what); !c)
            return c;
    }
    ++passFrames_;
    // A stream may change its size midway; a frame over the limit goes no further.
    if (static_cast<uint64_t>(frame.image.total()) > maxPixels_)
        return overPixelLimit(what, frame.image.cols, frame.image.rows, maxPixels_);
    frame.sequence = next_++;
    frame.truthClass = -1;
    return ReadResult::Frame;
}

} // namespace jetagent
