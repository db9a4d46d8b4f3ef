// The live camera demo's view: frames with their own results drawn on them, shown in a window
// and/or recorded to a video file. It runs in a thread of its own behind a frame queue, and takes
// the tasks' records from the workers without ever making them wait, so neither a slow display nor
// a slow disk holds up capture or inference.
#pragma once

#include "display/display_options.h"

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "display/viewer_api.h"
#include "jetagent/base/status.h"
#include "jetagent/hal/image_resize.h"
#include "jetagent/hal/stream_out.h"
#include "run/frame_queue.h"
#include "run/pipeline.h"
#include "run/spsc_ring.h"

namespace jetagent {

// What is drawn on a frame: per task the result that belongs to it, then the frame, the rates and
// the board.
struct OverlayTask {
    // Whose result is shown.
    enum class Origin {
        ThisFrame, // the frame's own result
        Clip, // an action task's newest clip result, the clip ending at resultFrame
        EarlierFrame, // the task never inferred this frame (a live queue dropped it): the result
                      // is resultFrame's, and the overlay says so
    };
    std::string name;
    bool haveResult = false; // false: no result yet ("waiting")
    bool failed = false; // the inference failed (no labels)
    std::vector<std::pair<std::string, float>> top; // label, score; best first (at most 3)
    double endToEndMs = 0.0; // of the result shown
    double fps = 0.0; // results per second over the task's last results; 0 while unknown
    Origin origin = Origin::ThisFrame;
    uint64_t resultFrame = 0; // the frame the result comes from
};

struct Overlay {
    std::vector<OverlayTask> tasks;
    uint64_t frame = 0; // the frame's sequence number
    double sourceFps = 0.0; // the source's rate, from the capture times; 0 while unknown
    std::string board; // power and temperature ("5.231 W VDD_IN, 48.5 C (tj)"); "" when unknown
};

// The overlay's text size for an image: scale and stroke of the overlay's font (text_draw.h), the
// line pitch and the panel's inner margin, in pixels. Grows with the image height.
struct OverlayStyle {
    double scale = 0.4;
    int thickness = 1;
    int lineHeight = 0;
    int baseline = 0;
    int margin = 6;
};
OverlayStyle overlayStyle(int height);
// The width of `text` drawn in the overlay's style (text_draw.h's font), in pixels.
int overlayTextWidth(const std::string& text, const OverlayStyle& style);

// The overlay's lines as drawn on an image `width` pixels wide: per task one line (its name, top
// results, latency and rate), a note under it when the result is an earlier frame's, then the
// frame, source rate and board. Lines too wide for the image wrap at their separators.
std::vector<std::string> overlayLines(const Overlay& overlay, const OverlayStyle& style, int width);

// Draws `overlay` onto `image` (8-bit BGR) in place: a translucent panel at the top left holding
// overlayLines().
void drawOverlay(Image& frame, const Overlay& overlay);

// True when a window can be opened: DISPLAY or WAYLAND_DISPLAY is set.
bool displayAvailable();

// What the view knows of one task at a frame: the task's records up to that frame.
struct TaskAtFrame {
    bool inferred = false; // the task has a record of this very frame
    bool haveResult = false; // it has a result at or before this frame
    FrameRecord result; // the newest such result (the frame's own when result.frameId is it)
    double fps = 0.0; // the task's results per second over its last results; 0 while unknown
};

class DisplaySink final : public FrameView {
public:
    // Opens the window and/or the recording for `tasks` tasks whose largest batch is `maxBatch`.
    // `offline` (pacing none): the recording keeps every frame, making capture wait for it;
    // otherwise the view takes the newest frames and counts the ones it skips. Errors:
    // Unsupported without a display for `window`, InvalidInput for a recording that cannot be
    // opened (naming the file and the container it tried).
    static Expected<std::unique_ptr<DisplaySink>> open(const DisplayConfig& config,
        const SourceInfo& source, bool offline, size_t tasks = 1, size_t maxBatch = 1);
    ~DisplaySink() override;

    // FrameView: the pipeline's side.
    FrameQueue& frames() override { return *queue_; }
    void onRecord(size_t task, const FrameRecord& record) override;
    void onTaskFinished(size_t task) override;

    // Fills in the tasks and the board of `overlay`, what is drawn on a frame, from the tasks'
    // state at that frame; the sink has set the frame number and the source rate.
    using OverlayFunction =
        std::function<void(const std::vector<TaskAtFrame>& tasks, Overlay& overlay)>;

    // Starts the view thread. For each frame it waits until every task has passed the frame (has
    // a record of it or of a later one, or has ended), then draws the frame with `overlay`'s
    // result and records it. `quit` is called when the user closes the window or presses q/Esc.
    void start(OverlayFunction overlay, std::function<void()> quit);
    // Called on the view's thread with each drawn frame (8-bit BGR) and its sequence number,
    // after the recording and the window have had it. It must not block. It may take the frame
    // by swapping `canvas` with a buffer of its own that nothing else refers to (the live web view
    // does: no copy); the next frame is drawn into whatever `canvas` holds. Set before start().
    using CanvasListener = std::function<void(Image& canvas, uint64_t frame)>;
    void setCanvasListener(CanvasListener listener) { canvasListener_ = std::move(listener); }
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
    // Frames the view never drew: replaced in its latest-wins queue by newer ones, or (live runs,
    // when the view fell so far behind that the tasks' records overflowed) not known for sure.
    uint64_t framesSkipped() const { return queue_->dropped() + unsure_.load(); }
    // Frames drawn with an earlier frame's result because a task never inferred them.
    uint64_t framesWithEarlierResult() const { return earlier_.load(); }
    const std::string& outputPath() const { return config_.output; }
    // The network stream, when display.output is rtp:// or rtsp:// and it opened; else null.
    const StreamOut* stream() const { return stream_.get(); }
    // Where an RTP stream's SDP goes (the run directory's stream.sdp), written when the stream
    // opens (now, or at the first frame when the source's size comes with it). Before start().
    void setSdpFile(std::string path);

private:
    static constexpr size_t kRateWindow = 16; // results (or frames) a rate is taken over

    // One task's records on their way from its worker to the view thread.
    struct Entry {
        FrameRecord record;
        uint64_t lostBefore = 0; // records lost (the ring was full) just before this one
        uint64_t firstLost = 0; // the first of them
    };
    struct Feed {
        explicit Feed(size_t capacity) : ring(capacity) { }
        SpscRing<Entry> ring;
        std::atomic<bool> finished {false};
        // Worker side: a gap not yet reported in the ring.
        uint64_t pendingLost = 0;
        uint64_t pendingFirstLost = 0;
        std::atomic<uint64_t> lostAtEnd {0}; // records lost with none after them: 1 + first id
        // View side.
        Entry taken; // the record being taken from the ring
        bool inferred = false;
        bool haveResult = false;
        bool unknown = false; // records were lost since the last result: the state is unsure
        FrameRecord result;
        std::array<int64_t, kRateWindow> doneNs {};
        size_t results = 0;
    };

    DisplaySink() = default;
    // The viewer plugin (window and video files), loaded on first use; errors name `setting`.
    Expected<const ViewerApi*> loadViewer(const char* setting);
    void loop();
    // Waits until every task has passed frame `sequence` and fills `out`; false when the state of
    // some task at that frame is unsure (records lost), and the frame is skipped.
    bool gather(uint64_t sequence, std::vector<TaskAtFrame>& out);
    // Applies feed.taken to the task's state at frame `sequence`.
    void take(Feed& feed, uint64_t sequence);
    double sourceRate(const Frame& frame);
    void record(const Image& canvas, Image& sized, bool& writerFailed);
    Status openStream(int width, int height);
    void writeSdp() const;
    void stream(const Image& canvas, Image& sized);

    DisplayConfig config_;
    std::unique_ptr<FrameQueue> queue_;
    std::vector<std::unique_ptr<Feed>> feeds_;
    std::mutex feedMutex_; // only for the view thread's sleep on feedChanged_
    std::condition_variable feedChanged_;
    const ViewerApi* viewer_ = nullptr; // the viewer plugin, loaded for a window or a file
    std::unique_ptr<VideoFileWriter> writer_;
    std::unique_ptr<VideoWindow> window_; // used only from the thread that called open()
    bool streaming_ = false; // display.output is a network stream
    StreamTarget streamTarget_;
    std::unique_ptr<StreamOut> stream_;
    bool streamFailed_ = false;
    bool streamReported_ = false; // stop() logged the stream's counts
    std::string sdpFile_;
    int fourcc_ = 0;
    double writerFps_ = 30.0;
    ImageResizer resizer_; // recordings of another size than the frames
    int writerWidth_ = 0;
    int writerHeight_ = 0;
    std::atomic<bool> windowOpen_ {false};
    OverlayFunction overlay_;
    std::function<void()> quit_;
    CanvasListener canvasListener_;
    std::thread thread_;
    std::mutex latestMutex_; // guards latest_ and fresh_
    Image latest_; // the newest drawn frame, for pumpWindow()
    bool fresh_ = false;
    std::array<std::pair<uint64_t, int64_t>, kRateWindow> captures_ {}; // sequence, capture time
    size_t frames_ = 0;
    std::atomic<bool> quitSent_ {false};
    std::atomic<uint64_t> shown_ {0};
    std::atomic<uint64_t> recorded_ {0};
    std::atomic<uint64_t> unsure_ {0};
    std::atomic<uint64_t> earlier_ {0};
};

} // namespace jetagent
