// The frame-source interface: every camera, file and generator delivers frames through it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jetagent/base/status.h"
#include "jetagent/hal/image.h"

namespace jetagent {

// One captured frame. Sources fill a caller-owned Frame and reuse its pixel buffer when the size is
// unchanged, so steady-state capture allocates nothing.
struct Frame {
    Image image; // 8-bit BGR, 3 channels
    uint64_t sequence =
        0; // 0-based, consecutive for each source; a gap means the source dropped frames
    int64_t captureNs = 0; // CLOCK_MONOTONIC time the frame was captured (see FrameSource::read)
    int truthClass = -1; // index into SourceInfo::classNames when the source knows it, else -1
    uint16_t stream = 0; // which of a run's streams it came from (set by the run, not the source)
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
    std::string detail; // what was negotiated, for logs and summaries ("/dev/video0 (uvcvideo,
                        // HD Webcam) YUYV 640x480 @ 30 fps, 4 buffers"); may be empty
};

// A camera control to set when a camera opens: the control's name as `jetagent probe cameras`
// lists it (v4l2-ctl's spelling, "exposure_time_absolute"), and its value: an integer, a boolean
// (true/false) or a menu entry's name.
struct CameraControl {
    std::string name;
    std::string value;
};

// Options of the camera sources (v4l2://, csi://, rtsp://, gst://).
struct CameraOptions {
    std::string format = "auto"; // V4L2 pixel format (YUYV, MJPG, NV12, RGB3, BGR3, GREY); auto
                                 // prefers uncompressed YUYV, then NV12, MJPG, RGB3, BGR3, GREY
    int buffers = 4; // mmap buffers queued to the driver (2..32); more ride out longer hiccups,
                     // each costs one frame of memory
    double stallTimeoutS = 2.0; // no frame for this long is reported as a stall (and counted);
                                // twice this, a csi/rtsp/live gst:// stream is reopened
    double reconnectMaxS = 5.0; // a lost device or stream is retried with backoff doubling up to
                                // this
    std::vector<CameraControl> controls; // applied in order once the format is set
    int flip = 0; // csi:// only: nvvidconv flip-method 0..7 (0 none, 2 rotate 180, 4 mirror)
    int latencyMs = 200; // rtsp:// only: jitter buffer of rtspsrc; lower is fresher, less smooth
};

// The default and the ceiling of SourceOptions::maxImagePixels: 8192x8192 (a decoded BGR frame of
// 192 MiB) and 16384x16384 (768 MiB).
constexpr uint64_t kDefaultMaxImagePixels = uint64_t {8192} * 8192;
constexpr uint64_t kMaxImagePixelsCeiling = uint64_t {16384} * 16384;

// Options common to every source.
struct SourceOptions {
    std::string uri = "synthetic://shapes"; // or file://PATH (a video file or a directory of
                                            // images), a bare PATH, or a camera (see
                                            // frameSourceUriHelp)
    int width = 0; // frame width in pixels; 0 = the source's own (synthetic 320, a camera's
                   // current format); video files and image directories keep their own size
    int height = 0; // frame height in pixels; 0 as for width (synthetic 240)
    double fps = 0.0; // rate of synthetic and image-directory sources, requested rate of cameras;
                      // 0 = the source's own (30 for synthetic and image directories)
    uint64_t seed = 1; // synthetic content: the same seed gives the same frames, frame for frame
    bool loop = false; // restart files and directories at their end instead of ending the stream
    // Images and video frames read from files may have at most this many pixels (1..ceiling): an
    // image is checked from its header before it is decoded, a video when it is opened.
    uint64_t maxImagePixels = kDefaultMaxImagePixels;
    CameraOptions camera;
};

// What a source counts while it runs. Live sources fill it; others leave it at its defaults.
struct SourceStats {
    uint64_t delivered = 0; // frames read() returned
    uint64_t droppedByDevice = 0; // frames missing from the device's sequence numbers
    uint64_t stalls = 0; // waits for a frame longer than the stall timeout
    uint64_t disconnects = 0; // times the device went away
    uint64_t reconnects = 0; // times it came back and capture resumed
    uint64_t skippedFiles = 0; // files that could not be decoded and were skipped (per pass)
    int64_t firstCaptureNs = 0; // capture time of the first and the last frame delivered
    int64_t lastCaptureNs = 0;
    double deliveredFps() const // the rate the device actually delivered, from its timestamps
    {
        return delivered > 1 && lastCaptureNs > firstCaptureNs
            ? static_cast<double>(delivered - 1) * 1e9 /
                static_cast<double>(lastCaptureNs - firstCaptureNs)
            : 0.0;
    }
};

enum class ReadResult {
    Frame, // `frame` holds the next frame
    EndOfStream, // a finite source is exhausted
    NoFrame, // a live source had no frame within its wait slice (a stall, a reconnect under way);
             // the caller checks whether to stop and calls read() again
};

class FrameSource {
public:
    virtual ~FrameSource() = default;
    FrameSource() = default;
    FrameSource(const FrameSource&) = delete;
    FrameSource& operator=(const FrameSource&) = delete;

    virtual const SourceInfo& info() const = 0;

    // Delivers the next frame into `frame`. Sources that are not live return at once; pacing them
    // to their rate is the caller's job. Their capture time is the moment read() starts producing
    // the frame. Live sources wait at most a fraction of a second and return NoFrame when nothing
    // came, so the caller can stop them. Returns EndOfStream once a finite source is exhausted, or
    // an error naming the source.
    virtual Expected<ReadResult> read(Frame& frame) = 0;

    // Counters so far. Safe to call from any thread while another one reads.
    virtual SourceStats stats() const { return {}; }

    // Why the stream ended, once read() returned EndOfStream, when it ended short of what the
    // source declared ("after 2 of 60 frames"); empty after a complete pass and for sources that
    // cannot tell. Called by the thread that reads.
    virtual std::string endDetail() const { return {}; }
};

// Opens the source a URI names. Errors name the URI and what is wrong (missing file, undecodable
// video, unknown scheme), with ErrorKind::NotFound or InvalidInput.
Expected<std::unique_ptr<FrameSource>> openFrameSource(const SourceOptions& options);

// The URI forms openFrameSource understands, one per line, for --help texts.
const char* frameSourceUriHelp();

} // namespace jetagent
