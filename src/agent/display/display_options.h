// The `display` section: the live camera demo's window and recording (display/display.h draws
// them), and its check. A leaf: the configuration reader includes it alone, and its check
// (display_options.cpp) is built into the config library.
#pragma once

#include <string>

namespace jetagent {

// The live camera demo: a window and/or a recording of the frames with the results drawn on them.
struct DisplayConfig {
    bool window = false; // show a window (needs a display: DISPLAY or WAYLAND_DISPLAY); headless
                         // by default
    // Where the annotated frames go: a new video file (.mp4, .avi, .mkv, .mov), or a network
    // stream, rtp://HOST:PORT (H.264 over RTP/UDP to one receiver) or rtsp://@:PORT/PATH (an
    // RTSP server of our own); "" = none.
    std::string output;
    double fps = 0.0; // frame rate written into the recording; 0 = the source's rate (30 if
                      // unknown)
    int bitrateKbps = 0; // a network stream's H.264 rate; 0 = 0.2 bit per pixel and frame
                         // (460 kb/s at 320x240x30), at least 500
};

// "" when `output` is a file path, file://, rtp:// or rtsp://; else why not (another scheme, such
// as udp://, which would otherwise be taken for a file without an extension).
std::string outputSchemeProblem(const std::string& output);

} // namespace jetagent
