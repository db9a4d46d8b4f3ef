// The frame-source interface: every camera, file and generator delivers frames through it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <opencv2/core/mat.hpp>

#include "jetagent/base/status.h"

namespace jetagent {

// One captured frame. Sources fill a caller-owned Frame and reuse its pixel buffer when the size is
// unchanged, so steady-state capture allocates nothing.
struct Frame {
    cv::Mat image; // 8-bit BGR, 3 channels
    uint64_t sequence =
        0; // 0-based, consecutive for each source; a gap means the source dropped frames
    int64_t captureNs = 0; // CLOCK_MONOTONIC time the frame was captured (see FrameSource::read)
    int truthClass = -1; // index into SourceInfo::classNames when the source knows it, else -1
};

// What a source is, fixed once it is open.
struct SourceInfo {
    std::string uri; // as given by the user
    std::string kind; // "synthetic", "video-file", "image-directory", ...
    int width = 0; // nominal frame size; 0 when frames vary (image directories)
    int height = 0;
    double fps = 0.0; // nominal rate; 0 when unknown
    bool live = false; // true: paced by the device itself (cameras); false: paced by the agent
    int64_t frameCount = -1; // frames in one pass; -1 when unknown or endless
    std::vector<std::string>
        classNames; // names truthClass indexes; empty when the source knows no truth
};

// Options common to the sources that are generated or read from disk. Cameras (issue 6) add theirs.
struct SourceOptions {
    std::string uri = "synthetic://shapes"; // or file://PATH (a video file or a directory of
                                            // images), or a bare PATH
    int width = 320; // synthetic frame width in pixels; files keep their own size
    int height = 240; // synthetic frame height in pixels
    double fps = 30.0; // rate of synthetic and image-directory sources; video files use their own
    uint64_t seed = 1; // synthetic content: the same seed gives the same frames, frame for frame
    bool loop = false; // restart files and directories at their end instead of ending the stream
};

enum class ReadResult { Frame, EndOfStream };

class FrameSource {
public:
    virtual ~FrameSource() = default;
    FrameSource() = default;
    FrameSource(const FrameSource&) = delete;
    FrameSource& operator=(const FrameSource&) = delete;

    virtual const SourceInfo& info() const = 0;

    // Delivers the next frame into `frame`. Sources that are not live return at once; pacing them
    // to their rate is the caller's job. Their capture time is the moment read() starts producing
    // the frame. Returns EndOfStream once a finite source is exhausted, or an error naming the
    // source.
    virtual Expected<ReadResult> read(Frame& frame) = 0;
};

// Opens the source a URI names. Errors name the URI and what is wrong (missing file, undecodable
// video, unknown scheme), with ErrorKind::NotFound or InvalidInput.
Expected<std::unique_ptr<FrameSource>> openFrameSource(const SourceOptions& options);

// The URI forms openFrameSource understands, one per line, for --help texts.
const char* frameSourceUriHelp();

} // namespace jetagent
