// The viewer plugin's interface (plugins/viewer, jetagent-viewer.so): an on-screen window and a
// video file recorder. Both need OpenCV's highgui and videoio (and through them Qt, X11 and
// FFmpeg), which a headless run must not map, so DisplaySink loads the plugin only when a run
// asks for a window or a recording (see jetagent/base/plugin.h). Errors come back as values: no
// exception crosses the plugin's boundary.
#pragma once

#include <memory>
#include <string>

#include "jetagent/base/status.h"
#include "jetagent/hal/image.h"

namespace jetagent {

class VideoWindow {
public:
    virtual ~VideoWindow() = default;
    // Shows `image` (8-bit BGR). From the thread that opened the window.
    virtual Status show(const Image& image) = 0;
    // Serves the window's events for about a millisecond. `key` is the key pressed (-1: none),
    // `closed` whether the user closed the window. An error: the window is gone.
    virtual Status poll(int& key, bool& closed) = 0;
};

class VideoFileWriter {
public:
    virtual ~VideoFileWriter() = default; // finishes the file
    // Appends `frame` (8-bit BGR, the size given at open).
    virtual void write(const Image& frame) = 0;
};

struct ViewerApi {
    // A resizable window titled `title`, sized to the source's frames when known (width > 0).
    Expected<std::unique_ptr<VideoWindow>> (*openWindow)(
        const std::string& title, int width, int height);
    // A new video file at `path` whose codec is `fourcc` (mp4v for .mp4/.mkv/.mov, MJPG for .avi).
    Expected<std::unique_ptr<VideoFileWriter>> (*openWriter)(
        const std::string& path, int fourcc, double fps, int width, int height);
};

// The four characters of a codec packed as OpenCV's and FFmpeg's FOURCC.
constexpr int videoFourcc(char a, char b, char c, char d)
{
    return (a & 0xff) | ((b & 0xff) << 8) | ((c & 0xff) << 16) | ((d & 0xff) << 24);
}

} // namespace jetagent
