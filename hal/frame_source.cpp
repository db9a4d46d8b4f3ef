// Opens the frame source a URI names.
#include "jetagent/hal/frame_source.h"

#include <algorithm>
#include <filesystem>

#include "jetagent/hal/file_sources.h"
#include "jetagent/hal/gstreamer_source.h"
#include "jetagent/hal/synthetic_motion.h"
#include "jetagent/hal/synthetic_shapes.h"
#include "jetagent/hal/v4l2_source.h"
#include "jetagent/hal/video_file_source.h"

namespace fs = std::filesystem;

namespace jetagent {

namespace {

// What 0 means for the sources jetagent generates or paces itself.
constexpr int kSyntheticWidth = 320;
constexpr int kSyntheticHeight = 240;
constexpr double kGeneratedFps = 30.0;

// A camera as jetson-inference's users name it: a bare number N is /dev/videoN, and a device node
// (/dev/video*, /dev/v4l/...) is a V4L2 camera, not a video file. "" when `uri` is neither.
std::string cameraShorthand(const std::string& uri)
{
    constexpr size_t kMaxDigits = 3;
    if (!uri.empty() && uri.size() <= kMaxDigits &&
        std::all_of(uri.begin(), uri.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return "v4l2:///dev/video" + uri;
    if (uri.rfind("/dev/video", 0) == 0 || uri.rfind("/dev/v4l/", 0) == 0)
        return "v4l2://" + uri;
    return "";
}

// The schemes this build reads, on one line, for errors.
constexpr const char* kSchemeList =
    "synthetic://shapes, synthetic://motion, file://PATH (or a bare path), v4l2://DEVICE (or a "
    "camera number N for /dev/videoN), csi://N, rtsp://HOST/PATH, gst://PIPELINE";

} // namespace

const char* frameSourceUriHelp()
{
    return "  synthetic://shapes   generated frames of coloured shapes with known classes (size, "
           "rate, seed from config)\n"
           "  synthetic://motion   generated video of a moving object whose action (still, left, "
           "right, up,\n"
           "                       down, grow) is known, 48 frames per action (size, rate, seed "
           "from config)\n"
           "  file://PATH          a video file (any container and codec GStreamer decodes) or a "
           "directory of images\n"
           "  PATH                 the same as file://PATH\n"
           "  v4l2:///dev/video0   a V4L2 camera by node, or v4l2://NAME by its card name or "
           "bus-info\n"
           "  N, /dev/videoN       the same as v4l2:///dev/videoN (a bare number is a camera, as "
           "in\n"
           "                       jetson-inference; file://N reads a file named N)\n"
           "                       (see `jetagent probe cameras`; names survive renumbering)\n"
           "  csi://0              a Jetson CSI camera by sensor id (nvarguscamerasrc, GStreamer)\n"
           "  rtsp://HOST/PATH     an RTSP stream (GStreamer rtspsrc, decoded in software)\n"
           "  gst://PIPELINE       your own GStreamer pipeline, ending in appsink\n"
           "A directory's images play in natural name order; images in subdirectories take the "
           "subdirectory\n"
           "name as their true class.\n";
}

Expected<std::unique_ptr<FrameSource>> openFrameSource(const SourceOptions& options)
{
    const std::string& uri = options.uri;
    if (uri.empty())
        return Status::invalid(
            "no source given (a URI such as synthetic://shapes or file://video.mp4)");

    const size_t sep = uri.find("://");
    const std::string scheme = sep == std::string::npos ? "" : uri.substr(0, sep);
    const std::string rest = sep == std::string::npos ? uri : uri.substr(sep + 3);

    SourceOptions generated = options;
    if (generated.fps <= 0.0)
        generated.fps = kGeneratedFps;

    if (scheme == "v4l2")
        return openV4L2Source(options);
    if (const std::string camera = cameraShorthand(uri); !camera.empty()) {
        SourceOptions v4l2 = options;
        v4l2.uri = camera;
        return openV4L2Source(v4l2);
    }
    if (scheme == "csi" || scheme == "rtsp" || scheme == "gst")
        return openGStreamerSource(options);
    if (scheme == "synthetic") {
        if (generated.width == 0)
            generated.width = kSyntheticWidth;
        if (generated.height == 0)
            generated.height = kSyntheticHeight;
        if (rest != "shapes" && rest != "motion")
            return Status::invalid("unknown synthetic source '" + uri +
                "' (known: synthetic://shapes, synthetic://motion)");
        if (generated.width < 16 || generated.height < 16 || generated.width > 8192 ||
            generated.height > 8192)
            return Status::invalid("synthetic frame size " + std::to_string(generated.width) + "x" +
                std::to_string(generated.height) + " is out of range (16..8192 per side)");
        if (rest == "motion")
            return std::unique_ptr<FrameSource>(new SyntheticMotionSource(generated));
        return std::unique_ptr<FrameSource>(new SyntheticShapesSource(generated));
    }
    if (scheme.empty() || scheme == "file") {
        if (rest.empty())
            return Status::invalid("source '" + uri + "' names no path");
        if (options.maxImagePixels == 0 || options.maxImagePixels > kMaxImagePixelsCeiling)
            return Status::invalid("the pixel limit of file sources, " +
                std::to_string(options.maxImagePixels) + ", is out of range (1.." +
                std::to_string(kMaxImagePixelsCeiling) + ")");
        std::error_code ec;
        // A path ending in '/' names a directory even when it is missing: say which is missing.
        if (fs::is_directory(rest, ec) || rest.back() == '/')
            return ImageDirectorySource::open(generated, rest);
        return openVideoFile(generated, rest);
    }
    if (scheme == "http" || scheme == "https")
        return Status::invalid("'" + uri + "': jetagent does not read " + scheme +
            ":// sources (file sources never open the network); for a network camera use "
            "rtsp://HOST/PATH, or a GStreamer pipeline such as gst://souphttpsrc location=" +
            uri + " ! decodebin ! videoconvert ! video/x-raw,format=BGR ! appsink. Sources: " +
            kSchemeList);
    return Status::invalid(
        "unknown source scheme '" + scheme + "' in '" + uri + "'; sources: " + kSchemeList);
}

} // namespace jetagent
