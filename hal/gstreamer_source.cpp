// The text of GStreamer sources' pipelines and of what jetagent shows of a source URI, and the
// functions of gstreamer_source.h that forward to the GStreamer plugin (gstreamer_api.h), which
// runs the pipelines (plugins/gstreamer/gstreamer_source.cpp tells how; what each URI becomes is
// written there too). Nothing here links GStreamer.
#include "jetagent/hal/gstreamer_source.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "gstreamer_api.h"
#include "jetagent/base/log.h"
#include "jetagent/base/plugin.h"
#include "jetagent/base/text.h"
#include "jetagent/hal/video_file_source.h"

namespace jetagent {
namespace {

constexpr int kDefaultCSIWidth = 1280;
constexpr int kDefaultCSIHeight = 720;
constexpr int kMaxSensorId = 7; // nvarguscamerasrc's sensor-id range
constexpr int kMaxFlipMethod = 7; // nvvidconv's flip-method range
constexpr int kMaxSide = 8192;
constexpr double kMaxFps = 1000.0;

const char* const kLoggerName = "gstreamer";
const char* const kAppsinkTail = "appsink drop=true max-buffers=1 sync=false";

bool startsWith(const std::string& text, const char* prefix)
{
    return text.rfind(prefix, 0) == 0;
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
    const double fps = options.fps == 0.0 ? kDefaultCsiFps : options.fps;

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
        part = trimSpace(part);
    return parts;
}

Expected<std::string> userPipeline(const std::string& description)
{
    const char* const example = "gst://videotestsrc ! videoconvert ! video/x-raw,format=BGR ! "
                                "appsink drop=true max-buffers=1 sync=false";
    const std::string pipeline = trimSpace(description);
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

} // namespace

Expected<std::string> gstreamerPipelineFor(const SourceOptions& options)
{
    return pipelineFor(options);
}

Expected<const GStreamerApi*> gstreamerApi()
{
    auto plugin = loadPlugin("gstreamer");
    if (!plugin)
        return plugin.status();
    return static_cast<const GStreamerApi*>(plugin.value()->api);
}

bool gstreamerAvailable()
{
    auto api = gstreamerApi();
    return api && api.value()->start(nullptr);
}

bool gstreamerHasElement(const std::string& factory)
{
    auto api = gstreamerApi();
    return api && api.value()->hasElement(factory);
}

Expected<std::unique_ptr<FrameSource>> openGStreamerPipeline(
    const SourceOptions& options, const std::string& pipeline, const std::string& kind)
{
    auto api = gstreamerApi();
    if (!api)
        return api.status().withContext("'" + withoutPasswords(options.uri) + "' needs GStreamer");
    return api.value()->openPipeline(options, pipeline, kind);
}

Expected<std::unique_ptr<FrameSource>> openVideoFile(
    const SourceOptions& options, const std::string& path, bool sniff)
{
    auto api = gstreamerApi();
    if (!api)
        return api.status().withContext("video file " + path + " needs GStreamer");
    return api.value()->openVideoFile(options, path, sniff);
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

std::string withoutPasswords(std::string text)
{
    // Ends a URI's authority (RFC 3986: '/', '?', '#'), or the URI itself where it is quoted or
    // followed by more of a pipeline. Not '!': it may stand unencoded in a password.
    const char* const kAuthorityEnd = "/?#\"' \t\r\n";
    for (size_t scheme = text.find("://"); scheme != std::string::npos;
         scheme = text.find("://", scheme + 3)) {
        const size_t authority = scheme + 3;
        const size_t end = std::min(text.find_first_of(kAuthorityEnd, authority), text.size());
        const size_t at = end == authority ? std::string::npos : text.rfind('@', end - 1);
        if (at == std::string::npos || at < authority)
            continue;
        const size_t colon = text.find(':', authority);
        if (colon == std::string::npos || colon > at)
            continue;
        text.replace(colon + 1, at - colon - 1, "***");
    }
    // GStreamer elements also take credentials as properties (rtspsrc and souphttpsrc user-pw,
    // souphttpsrc proxy-pw), in gst:// pipelines.
    for (const char* property : {"user-pw=", "proxy-pw="}) {
        const size_t length = std::strlen(property);
        for (size_t at = text.find(property); at != std::string::npos;
             at = text.find(property, at + length)) {
            if (at > 0 &&
                (std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '-' ||
                    text[at - 1] == '_'))
                continue;
            const size_t value = at + length;
            size_t valueEnd;
            if (value < text.size() && (text[value] == '"' || text[value] == '\'')) {
                valueEnd = text.find(text[value], value + 1);
                valueEnd = valueEnd == std::string::npos ? text.size() : valueEnd + 1;
            } else {
                valueEnd = std::min(text.find_first_of(" \t\r\n!", value), text.size());
            }
            text.replace(value, valueEnd - value, "***");
        }
    }
    return text;
}

} // namespace jetagent
