// The live camera demo's view: frames with their own results drawn on them, shown in a window
// and/or recorded to a video file. It runs in a thread of its own behind a frame queue, and takes
// the tasks' records from the workers without ever making them wait, so neither a slow display nor
// a slow disk holds up capture or inference. A run of several streams is shown as a mosaic, one
// tile per stream, as DeepStream's nvmultistreamtiler composes its sources.
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
    uint64_t frame = 0; // the frame's sequence number (in its stream)
    double sourceFps = 0.0; // the source's rate, from the capture times; 0 while unknown
    std::string board; // power and temperature ("5.231 W VDD_IN, 48.5 C (tj)"); "" when unknown
    size_t stream = 0; // the run's stream the frame came from
    // The stream's name, drawn as a label at the tile's bottom left; "" (one stream): no label.
    std::string streamName;
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

// Draws `overlay` onto `image` (8-bit BGR, which may be a roi: a tile of a mosaic) in place: a
// translucent panel at the top left holding overlayLines(), and the stream's name at the bottom
// left when it has one.
void drawOverlay(Image& frame, const Overlay& overlay);
// Draws `name` at the bottom left of `image` in the overlay's style (a dark box, white text): the
// label of a mosaic's tile.
void drawStreamLabel(Image& image, const std::string& name);

// Where a run of several streams puts each one's frames: a grid of `columns` x `rows` cells of
// cellWidth x cellHeight pixels, stream i in row i / columns, column i % columns (left to right,
// then top to bottom, as DeepStream's nvmultistreamtiler fills its tiles).
struct MosaicLayout {
    int columns = 1;
    int rows = 1;
    int cellWidth = 0;
    int cellHeight = 0;
    int width() const { return columns * cellWidth; }
    int height() const { return rows * cellHeight; }
};
// The largest mosaic, in pixels: 1080p, what screens, encoders and browsers all take.
constexpr int kMosaicMaxWidth = 1920;
constexpr int kMosaicMaxHeight = 1080;
// The layout of `streams` streams (2 or more): ceil(sqrt(streams)) columns and as many rows as
// they fill; each cell the size of the first stream's frames (width x height; 640x480 when
// unknown), all scaled down together until the mosaic fits kMosaicMaxWidth x kMosaicMaxHeight.
// Cell sides are even (H.264's 4:2:0 chroma) and at least 2.
MosaicLayout mosaicLayout(size_t streams, int width, int height);
// A rectangle in pixels.
struct PixelRect {
    int x = 0;
    int y = 0;
    int width = 0;
    int height = 0;
};
// Where a frame of frameWidth x frameHeight of stream `stream` is drawn: scaled to fill its cell
// with its aspect ratio kept, centred (the rest of the cell stays black).
PixelRect tileRect(const MosaicLayout& layout, size_t stream, int frameWidth, int frameHeight);

// True when a window can be opened: DISPLAY or WAYLAND_DISPLAY is set.
bool displayAvailable();

// What the view knows of one task at a frame: the task's records of the frame's stream up to that
// frame.
struct TaskAtFrame {
    bool serves = true; // the task serves the frame's stream; false: the fields below are unset
    bool inferred = false; // the task has a record of this very frame
    bool haveResult = false; // it has a result at or before this frame
    FrameRecord result; // the newest such result (the frame's own when result.frameId is it)
    double fps = 0.0; // the task's results per second over its last results; 0 while unknown
};

// One of the streams the view shows: its name (its tile's label) and its source.
struct ViewStream {
    std::string name;
    SourceInfo source;
};

class DisplaySink final : public FrameView {
public:
    // Opens the window and/or the recording of the run's `streams` (in the run's order; Frame::
    // stream and FrameRecord::stream index them) for tasks that each serve the streams listed in
    // `taskStreams` (one list per task; an empty list: every stream), whose largest batch is
    // `maxBatch`. One stream is drawn as it comes, at its own size; several as a mosaic
    // (mosaicLayout, from the first stream's size), each tile the newest drawn frame of its
    // stream with that stream's results and name. `offline` (pacing none): the recording keeps
    // every frame, making capture wait for it; otherwise the view takes the newest frames and
    // counts the ones it skips. Errors: Unsupported without a display for `window`, InvalidInput
    // for a recording that cannot be opened (naming the file and the container it tried) or no
    // stream.
    static Expected<std::unique_ptr<DisplaySink>> open(const DisplayConfig& config,
        const std::vector<ViewStream>& streams, bool offline,
        const std::vector<std::vector<size_t>>& taskStreams, size_t maxBatch = 1);
    // A run of one stream, `source`, and `tasks` tasks.
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

    // Starts the view thread. For each frame it waits until every task that serves the frame's
    // stream has passed the frame (has a record of it or of a later frame of that stream, or has
    // ended), then draws the frame with `overlay`'s result and records it. With several streams
    // it draws the frame into its stream's tile of the mosaic, and records (shows, hands over)
    // the mosaic once every stream's tile holds a frame not yet recorded, or before a tile whose
    // frame was not yet recorded is drawn again: so each drawn frame is in the recording, a
    // stalled stream delays the others by at most one of their frames, and the mosaic's rate is
    // the fastest stream's. The overlay function is called once per drawn frame, with
    // Overlay::stream and streamName set. `quit` is called when the user closes the window or
    // presses q/Esc.
    void start(OverlayFunction overlay, std::function<void()> quit);
    // Called on the view's thread with each drawn frame (8-bit BGR) and its sequence number (a
    // mosaic's: the mosaics recorded before it), after the recording and the window have had it. It
    // must not block. It may take the frame by swapping `canvas` with a buffer of its own that
    // nothing else refers to (the live web view does: no copy); the next frame is drawn into
    // whatever `canvas` holds. Set before start().
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
    // Frames (with several streams: mosaics) written to the recording or the network stream.
    uint64_t framesRecorded() const { return recorded_.load(); }
    // Frames drawn: with several streams, into their tiles (a mosaic holds several of them).
    uint64_t framesDrawn() const { return drawn_.load(); }
    // The mosaic's layout; columns == rows == 1 and no cell size with one stream.
    const MosaicLayout& layout() const { return layout_; }
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
    // One task's records of one stream (each stream numbers its frames from 0, so the records of
    // one task are in frame order only within a stream).
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

    // What the view keeps of each stream: its capture times for its rate, and with several
    // streams its tile.
    struct StreamView {
        std::string name;
        std::array<std::pair<uint64_t, int64_t>, kRateWindow> captures {}; // sequence, capture
        size_t frames = 0;
        ImageResizer resizer; // the frames into the tile (its tables kept from frame to frame)
        PixelRect tile; // where the last frame went: the cell is cleared when it moves
        bool unrecorded = false; // the tile holds a frame not yet in a recorded mosaic
    };

    DisplaySink() = default;
    // The viewer plugin (window and video files), loaded on first use; errors name `setting`.
    Expected<const ViewerApi*> loadViewer(const char* setting);
    void loop();
    // Waits until every task serving `stream` has passed its frame `sequence` and fills `out`;
    // false when the state of some task at that frame is unsure (records lost), and the frame is
    // skipped.
    bool gather(size_t stream, uint64_t sequence, std::vector<TaskAtFrame>& out);
    // Applies feed.taken to the task's state at frame `sequence`.
    void take(Feed& feed, uint64_t sequence);
    double sourceRate(StreamView& stream, const Frame& frame);
    // Draws `frame` with `overlay` into the tile of stream `index` (`stream`) in mosaic_.
    void drawTile(StreamView& stream, size_t index, const Frame& frame, const Overlay& overlay);
    // Hands a drawn frame (or mosaic) to the recording, the window and the canvas listener.
    void emit(Image& canvas, Image& sized, bool& writerFailed, uint64_t sequence);
    // The mosaic, copied into `canvas` (which the canvas listener may take), emitted.
    void emitMosaic(Image& canvas, Image& sized, bool& writerFailed);
    void record(const Image& canvas, Image& sized, bool& writerFailed);
    Status openStream(int width, int height);
    void writeSdp() const;
    void stream(const Image& canvas, Image& sized);

    DisplayConfig config_;
    std::unique_ptr<FrameQueue> queue_;
    // Per task, per run stream: its records of that stream; null where it does not serve it.
    std::vector<std::vector<std::unique_ptr<Feed>>> feeds_;
    std::vector<StreamView> streams_;
    MosaicLayout layout_;
    Image mosaic_; // several streams: the tiles, kept from frame to frame (only the view's)
    uint64_t mosaics_ = 0; // mosaics emitted
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
    std::atomic<bool> quitSent_ {false};
    std::atomic<uint64_t> shown_ {0};
    std::atomic<uint64_t> drawn_ {0};
    std::atomic<uint64_t> recorded_ {0};
    std::atomic<uint64_t> unsure_ {0};
    std::atomic<uint64_t> earlier_ {0};
};

} // namespace jetagent
