// The live camera demo's view: frames with the latest results drawn on them, shown in a window
// and/or recorded to a video file. It runs in a thread of its own behind a frame queue, so neither
// a slow display nor a slow disk holds up capture or inference.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <opencv2/core/mat.hpp>
#include <opencv2/videoio.hpp>

#include "config.h"
#include "frame_queue.h"
#include "jetagent/base/status.h"

namespace jetagent {

// What is drawn on a frame: per task its latest top results, then the rates and the board.
struct OverlayTask {
    std::string name;
    bool haveResult = false;
    std::vector<std::pair<std::string, float>> top; // label, score; best first (at most 3)
    double endToEndMs = 0.0; // of the latest result
    double fps = 0.0; // results per second, over the last second or so
};

struct Overlay {
    std::vector<OverlayTask> tasks;
    double sourceFps = 0.0; // frames the view received per second
    std::string board; // power and temperature ("5.231 W VDD_IN, 48.5 C (tj)"); "" when unknown
};

// Draws `overlay` onto `image` (8-bit BGR) in place: a translucent panel at the top left with one
// line per task and one for the rates and the board. Scales with the image height.
void drawOverlay(cv::Mat& image, const Overlay& overlay);

// True when a window can be opened: DISPLAY or WAYLAND_DISPLAY is set.
bool displayAvailable();

class DisplaySink {
public:
    // Opens the window and/or the recording. `offline` (pacing none): the recording keeps every
    // frame, making capture wait for it; otherwise the view takes the newest frames and counts the
    // ones it skips. Errors: Unsupported without a display for `window`, InvalidInput for a
    // recording that cannot be opened (naming the file and the container it tried).
    static Expected<std::unique_ptr<DisplaySink>> open(
        const DisplayConfig& config, const SourceInfo& source, bool offline);
    ~DisplaySink();
    DisplaySink(const DisplaySink&) = delete;
    DisplaySink& operator=(const DisplaySink&) = delete;

    // Where the pipeline puts frames for the view.
    FrameQueue& queue() { return *queue_; }

    // Starts the view thread, which draws every frame and records it. `overlay` is called once
    // per frame from that thread; `quit` when the user closes the window or presses q or Esc.
    void start(std::function<Overlay()> overlay, std::function<void()> quit);
    // Shows the newest drawn frame and handles the window's events. GUI toolkits (OpenCV's Qt and
    // GTK backends) serve windows from the thread that created them, so the thread that called
    // open() calls this, every few milliseconds while the run goes on. Does nothing without a
    // window.
    void pumpWindow();
    bool hasWindow() const { return windowOpen_; }
    // Waits for the thread after the queue was closed, finishes the recording and closes the
    // window. From the thread that called open().
    void stop();

    uint64_t framesShown() const { return shown_.load(); }
    uint64_t framesRecorded() const { return recorded_.load(); }
    uint64_t framesSkipped() const { return queue_->dropped(); }
    const std::string& outputPath() const { return config_.output; }

private:
    DisplaySink() = default;
    void loop();

    DisplayConfig config_;
    std::unique_ptr<FrameQueue> queue_;
    cv::VideoWriter writer_;
    int fourcc_ = 0;
    double writerFps_ = 30.0;
    cv::Size writerSize_;
    std::atomic<bool> windowOpen_ {false};
    std::function<Overlay()> overlay_;
    std::function<void()> quit_;
    std::thread thread_;
    std::mutex latestMutex_; // guards latest_ and fresh_
    cv::Mat latest_; // the newest drawn frame, for pumpWindow()
    bool fresh_ = false;
    std::atomic<bool> quitSent_ {false};
    std::atomic<uint64_t> shown_ {0};
    std::atomic<uint64_t> recorded_ {0};
};

} // namespace jetagent
