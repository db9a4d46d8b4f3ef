// Frames from GStreamer pipelines, read through GStreamer itself: Jetson CSI cameras
// (nvarguscamerasrc), RTSP streams, and users' own pipelines. Lost live streams are reopened
// (reconnect.h).
#pragma once

#include <memory>
#include <string>

#include "jetagent/hal/frame_source.h"

namespace jetagent {

// The pipeline a csi://N, rtsp://... or gst://PIPELINE source runs, with width, height, rate,
// flip and latency from `options` (0: 1280x720 at 30 fps for CSI). InvalidInput for a bad sensor
// id or flip method, or a gst:// pipeline that does not end in an appsink.
Expected<std::string> gstreamerPipelineFor(const SourceOptions& options);

// `text` with the password of every URI in it shown as *** (rtsp://user:***@host/path), and the
// values of user-pw= and proxy-pw= properties of a gst:// pipeline too: what logs, summaries,
// the live view and error messages show of a source. A URI without a password is left as it is.
std::string withoutPasswords(std::string text);

// True when GStreamer initialises (gst_init).
bool gstreamerAvailable();

// True when GStreamer has an element factory of that name ("videotestsrc", "nvarguscamerasrc").
bool gstreamerHasElement(const std::string& factory);

// Opens the pipeline and waits for its first frame. A source that cannot be opened fails with the
// kinds a missing file or device gives (the CLI exits 2): Unsupported for a missing element
// (named) or plugin, InvalidInput for a pipeline GStreamer cannot build or non-BGR frames,
// NotFound for a server or camera that refuses, or no frame within the attempt bound. The message
// gives the pipeline and a hint for the source's kind.
Expected<std::unique_ptr<FrameSource>> openGStreamerSource(const SourceOptions& options);

} // namespace jetagent
