// Frames from GStreamer pipelines through OpenCV's GStreamer backend: Jetson CSI cameras
// (nvarguscamerasrc), RTSP streams, and users' own pipelines.
#pragma once

#include <memory>
#include <string>

#include "jetagent/hal/frame_source.h"

namespace jetagent {

// The pipeline a csi://N, rtsp://... or gst://PIPELINE source runs, with width, height, rate,
// flip and latency from `options` (0: 1280x720 at 30 fps for CSI). InvalidInput for a bad sensor
// id or flip method, or a gst:// pipeline that does not end in an appsink.
Expected<std::string> gstreamerPipelineFor(const SourceOptions& options);

// True when this build's OpenCV has its GStreamer backend.
bool gstreamerAvailable();

// Opens the pipeline and waits for its first frame. Unsupported when OpenCV has no GStreamer;
// Io when the pipeline does not start (the message gives the pipeline and hints at the plugin a
// CSI or RTSP pipeline needs).
Expected<std::unique_ptr<FrameSource>> openGStreamerSource(const SourceOptions& options);

} // namespace jetagent
