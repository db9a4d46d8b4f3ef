// The interfaces of the plugins that drive GStreamer: the GStreamer plugin (plugins/gstreamer,
// jetagent-gstreamer.so, in the core package: the csi://, rtsp:// and gst:// sources, video files
// and rtp:// outputs) and the rtsp-server plugin (plugins/rtsp-server, in jetagent-rtsp: rtsp://
// outputs). GStreamer, GLib and what they load are some twenty libraries that a run from a V4L2
// camera, an image folder or a generated source never uses, so hal loads a plugin
// (jetagent/base/plugin.h) the first time a run asks for what it provides, and the functions of
// gstreamer_source.h, video_file_source.h and stream_out.h forward to its table. Errors come back
// as values: no exception crosses a plugin's boundary.
#pragma once

#include <memory>
#include <string>

#include "jetagent/base/status.h"
#include "jetagent/hal/frame_source.h"
#include "jetagent/hal/stream_out.h"

namespace jetagent {

// A CSI camera's frame rate when the source gives none.
inline constexpr double kDefaultCsiFps = 30.0;

struct GStreamerApi {
    // gst_init, once per process: false, and why into `why` when given, if GStreamer cannot start.
    bool (*start)(std::string* why);
    // Whether GStreamer has an element factory of that name.
    bool (*hasElement)(const std::string& factory);
    // A pipeline (gstreamerPipelineFor's, or a test's stand-in) run as a source of `kind`: "csi"
    // and "rtsp" reconnect and keep the newest frame, "gstreamer" does neither.
    Expected<std::unique_ptr<FrameSource>> (*openPipeline)(
        const SourceOptions& options, const std::string& pipeline, const std::string& kind);
    // A local video file (video_file_source.h); `sniff` false skips the manifest check.
    Expected<std::unique_ptr<FrameSource>> (*openVideoFile)(
        const SourceOptions& options, const std::string& path, bool sniff);
    // An H.264 stream out (stream_out.h).
    Expected<std::unique_ptr<StreamOut>> (*openStreamOut)(
        const StreamTarget& target, const StreamOut::Options& options);
};

// The rtsp-server plugin's table (plugins/rtsp-server, jetagent-rtsp-server.so, in the
// jetagent-rtsp package): rtsp:// outputs.
struct RtspServerApi {
    Expected<std::unique_ptr<StreamOut>> (*openStreamOut)(
        const StreamTarget& target, const StreamOut::Options& options);
};

// A pipeline run as a source of `kind` (GStreamerApi::openPipeline), for openGStreamerSource and
// for tests that run stand-in pipelines with a camera's behaviour.
Expected<std::unique_ptr<FrameSource>> openGStreamerPipeline(
    const SourceOptions& options, const std::string& pipeline, const std::string& kind);

// The plugin's table, loaded on first use; Unsupported (exit 2), naming the package, when the
// plugin is not installed or does not load.
Expected<const GStreamerApi*> gstreamerApi();

} // namespace jetagent
