// The live camera demo's view: overlay drawing, the window and the recording.
#include "display/display.h"

#include "display/text_draw.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "jetagent/base/clock.h"
#include "jetagent/base/format.h"
#include "jetagent/base/log.h"
#include "jetagent/base/plugin.h"
#include "jetagent/base/thread_guard.h"

namespace fs = std::filesystem;

namespace jetagent {

namespace {

constexpr const char* kWindowTitle = "jetagent";
constexpr double kDefaultFps = 30.0;
constexpr size_t kLiveQueue = 2; // the newest frame, and one spare while the view draws
constexpr size_t kOfflineQueue = 4;
// A live view may fall this far behind a task (its records, shared among the streams it serves).
constexpr size_t kRecordsPerTask = 1024;
// A mosaic's cell when the first stream's size is unknown (image directories).
constexpr int kDefaultCellWidth = 640;
constexpr int kDefaultCellHeight = 480;

std::string lowerExtension(const std::string& path)
{
    std::string ext = fs::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
        [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return ext;
}

// MPEG-4 part 2 is in every FFmpeg build Debian ships, so .mp4 and .mkv always open; .avi takes
// Motion JPEG, which any player reads.
Expected<int> fourccFor(const std::string& path)
{
    if (std::string why = outputSchemeProblem(path); !why.empty())
        return Status::invalid("display.output: " + why);
    const std::string ext = lowerExtension(path);
    if (ext == ".mp4" || ext == ".mkv" || ext == ".mov")
        return videoFourcc('m', 'p', '4', 'v');
    if (ext == ".avi")
        return videoFourcc('M', 'J', 'P', 'G');
    return Status::invalid("display.output '" + path +
        "': cannot tell the container from the extension (use .mp4, .mkv, .mov or .avi)");
}

// White text with a black outline, readable on any picture.
void putLine(Image& image, const std::string& text, int x, int baselineY, const OverlayStyle& style)
{
    drawText(image, text, x, baselineY, {style.scale, style.thickness + 2}, 0, 0, 0);
    drawText(image, text, x, baselineY, {style.scale, style.thickness}, 255, 255, 255);
}

// Darkens the rectangle in place (each level times 0.45): the text stays readable on white.
void darken(Image& image, int width, int height)
{
    for (int y = 0; y < height; ++y) {
        uint8_t* row = image.ptr(y);
        for (size_t i = 0; i < static_cast<size_t>(width) * 3; ++i)
            row[i] = static_cast<uint8_t>((row[i] * 115 + 128) >> 8);
    }
}

// Appends the line made of `segments` to `lines`, wrapped to `maxWidth` pixels: the segments after
// the first begin with their separator (", ", " | ", " "), which a wrapped line drops for an
// indent. A single segment wider than the image stays whole (the panel clips it).
void addWrapped(std::vector<std::string>& lines, const std::vector<std::string>& segments,
    const OverlayStyle& style, int maxWidth)
{
    std::string line = segments.front();
    for (size_t i = 1; i < segments.size(); ++i) {
        const std::string& segment = segments[i];
        if (overlayTextWidth(line + segment, style) <= maxWidth) {
            line += segment;
            continue;
        }
        lines.push_back(line);
        line = "  " + segment.substr(std::min(segment.find_first_not_of(",| "), segment.size()));
    }
    lines.push_back(line);
}

// `text` cut to at most `max` bytes, ending in "..." when cut (at a UTF-8 character boundary): a
// label or task name of thousands of characters would otherwise be drawn glyph by glyph every
// frame, far past the image's edge.
std::string elide(const std::string& text, size_t max)
{
    if (text.size() <= max)
        return text;
    size_t cut = max - 3;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
        --cut;
    return text.substr(0, cut) + "...";
}

// The longest label or task name the overlay shows whole.
constexpr size_t kOverlayTextMax = 48;

// A number with `decimals` decimals.
std::string fixed(double value, int decimals)
{
    std::string buffer = formatText("%.*f", decimals, value);
    return buffer;
}

} // namespace

int overlayTextWidth(const std::string& text, const OverlayStyle& style)
{
    return measureText(text, {style.scale, style.thickness}).width;
}

OverlayStyle overlayStyle(int height)
{
    OverlayStyle style;
    // Text about 1/24 of the frame height, readable from 240 to 2160 lines.
    style.scale = std::max(0.4, height / 720.0);
    style.thickness = std::max(1, static_cast<int>(std::lround(style.scale * 1.5)));
    const TextSize size = measureText("Ag", {style.scale, style.thickness});
    style.baseline = size.baseline;
    style.lineHeight = size.height + size.baseline + std::max(4, size.height / 3);
    style.margin = std::max(6, size.height / 2);
    return style;
}

std::vector<std::string> overlayLines(const Overlay& overlay, const OverlayStyle& style, int width)
{
    const int maxWidth = width - 2 * style.margin;
    std::vector<std::string> lines;
    std::vector<std::string> segments;
    for (const OverlayTask& t : overlay.tasks) {
        segments.clear();
        if (!t.haveResult) {
            addWrapped(lines, {elide(t.name, kOverlayTextMax) + ": waiting"}, style, maxWidth);
            continue;
        }
        if (t.failed || t.top.empty()) {
            segments.push_back(elide(t.name, kOverlayTextMax) + ": inference failed");
        } else {
            for (size_t i = 0; i < t.top.size(); ++i)
                segments.push_back((i ? ", " : elide(t.name, kOverlayTextMax) + ": ") +
                    elide(t.top[i].first, kOverlayTextMax) + " " +
                    fixed(static_cast<double>(t.top[i].second), 2));
        }
        if (t.origin == OverlayTask::Origin::Clip)
            segments.push_back(" | clip to frame " + std::to_string(t.resultFrame));
        segments.push_back(" | " + fixed(t.endToEndMs, 1) + " ms");
        if (t.fps > 0.0)
            segments.push_back(" | " + fixed(t.fps, 1) + " fps");
        addWrapped(lines, segments, style, maxWidth);
        if (t.origin == OverlayTask::Origin::EarlierFrame)
            addWrapped(lines,
                {"  ^ result of frame " + std::to_string(t.resultFrame) + ":",
                    " this frame was not inferred"},
                style, maxWidth);
    }
    segments.clear();
    segments.push_back("frame " + std::to_string(overlay.frame));
    segments.push_back(overlay.sourceFps > 0.0 ? " | source " + fixed(overlay.sourceFps, 1) + " fps"
                                               : std::string(" | source rate not yet known"));
    if (!overlay.board.empty())
        segments.push_back(" | " + elide(overlay.board, 2 * kOverlayTextMax));
    addWrapped(lines, segments, style, maxWidth);
    return lines;
}

void drawOverlay(Image& frame, const Overlay& overlay)
{
    if (frame.empty())
        return;
    const OverlayStyle style = overlayStyle(frame.rows);
    const std::vector<std::string> lines = overlayLines(overlay, style, frame.cols);
    int width = 0;
    for (const auto& l : lines)
        width = std::max(width, overlayTextWidth(l, style));
    darken(frame, std::min(width + 2 * style.margin, frame.cols),
        std::min(style.lineHeight * static_cast<int>(lines.size()) + style.margin, frame.rows));
    for (size_t i = 0; i < lines.size(); ++i)
        putLine(frame, lines[i], style.margin,
            style.margin / 2 + style.lineHeight * static_cast<int>(i + 1) - style.baseline, style);
    if (!overlay.streamName.empty())
        drawStreamLabel(frame, overlay.streamName);
}

void drawStreamLabel(Image& image, const std::string& name)
{
    if (image.empty() || name.empty())
        return;
    const OverlayStyle style = overlayStyle(image.rows);
    const std::string text = elide(name, kOverlayTextMax);
    const int width = std::min(overlayTextWidth(text, style) + 2 * style.margin, image.cols);
    const int height = std::min(style.lineHeight + style.margin, image.rows);
    const int top = image.rows - height;
    Image box = image.roi(0, top, width, height);
    darken(box, width, height);
    putLine(image, text, style.margin, top + style.margin / 2 + style.lineHeight - style.baseline,
        style);
}

MosaicLayout mosaicLayout(size_t streams, int width, int height)
{
    MosaicLayout m;
    const size_t n = std::max<size_t>(streams, 1);
    size_t columns = 1;
    while (columns * columns < n)
        ++columns;
    m.columns = static_cast<int>(columns);
    m.rows = static_cast<int>((n + columns - 1) / columns);
    if (width <= 0 || height <= 0) {
        width = kDefaultCellWidth;
        height = kDefaultCellHeight;
    }
    const double scale = std::min(
        {1.0, static_cast<double>(kMosaicMaxWidth) / (static_cast<double>(width) * m.columns),
            static_cast<double>(kMosaicMaxHeight) / (static_cast<double>(height) * m.rows)});
    m.cellWidth = std::max(2, static_cast<int>(std::floor(width * scale)) & ~1);
    m.cellHeight = std::max(2, static_cast<int>(std::floor(height * scale)) & ~1);
    return m;
}

PixelRect tileRect(const MosaicLayout& layout, size_t stream, int frameWidth, int frameHeight)
{
    const int columns = std::max(layout.columns, 1);
    PixelRect r;
    r.x = static_cast<int>(stream % static_cast<size_t>(columns)) * layout.cellWidth;
    r.y = static_cast<int>(stream / static_cast<size_t>(columns)) * layout.cellHeight;
    r.width = layout.cellWidth;
    r.height = layout.cellHeight;
    if (frameWidth <= 0 || frameHeight <= 0)
        return r;
    // The side that fills its cell first sets the scale; the other is rounded to the nearest pixel.
    const int64_t w = frameWidth, h = frameHeight;
    if (w * layout.cellHeight >= h * layout.cellWidth)
        r.height = static_cast<int>(
            std::clamp<int64_t>((h * layout.cellWidth + w / 2) / w, 1, layout.cellHeight));
    else
        r.width = static_cast<int>(
            std::clamp<int64_t>((w * layout.cellHeight + h / 2) / h, 1, layout.cellWidth));
    r.x += (layout.cellWidth - r.width) / 2;
    r.y += (layout.cellHeight - r.height) / 2;
    return r;
}

bool displayAvailable()
{
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read at start-up, before threads
    const char* x11 = std::getenv("DISPLAY");
    // NOLINTNEXTLINE(concurrency-mt-unsafe)
    const char* wayland = std::getenv("WAYLAND_DISPLAY");
    return (x11 && *x11) || (wayland && *wayland);
}

Expected<std::unique_ptr<DisplaySink>> DisplaySink::open(const DisplayConfig& config,
    const SourceInfo& source, bool offline, size_t tasks, size_t maxBatch)
{
    return open(config, {ViewStream {std::string(), source}}, offline,
        std::vector<std::vector<size_t>>(tasks), maxBatch);
}

Expected<std::unique_ptr<DisplaySink>> DisplaySink::open(const DisplayConfig& config,
    const std::vector<ViewStream>& streams, bool offline,
    const std::vector<std::vector<size_t>>& taskStreams, size_t maxBatch)
{
    if (streams.empty())
        return Status::invalid("the view needs at least one stream to show");
    std::unique_ptr<DisplaySink> sink(new DisplaySink());
    sink->config_ = config;
    // A network stream is live whatever the source: it takes the newest frames, never holds
    // capture.
    const bool keepEvery = offline && !config.output.empty() && !isStreamUri(config.output);
    // Offline, the view holds a frame until every task has inferred it, while capture waits for
    // room in this queue: it must hold a whole batch, or a worker waiting for a full batch would
    // wait for the view that waits for it. Live, the streams' threads deliver their frames at
    // about the same moments: the queue holds the newest of each, and one spare while the view
    // draws, so that a burst of N streams' frames is not thinned by the queue itself.
    const size_t capacity = keepEvery ? std::max(kOfflineQueue, maxBatch + 1)
                                      : std::max(kLiveQueue, streams.size() + 1);
    sink->queue_ = std::make_unique<FrameQueue>(
        capacity, keepEvery ? FrameQueue::Policy::Block : FrameQueue::Policy::DropOldest);
    // Offline, the workers run at most a queue and a batch ahead of the view, so the records
    // never overflow; live, only a view stalled for many seconds loses some (then it skips the
    // frames it cannot be sure of). A task's records are split among the streams it serves.
    for (const std::vector<size_t>& served : taskStreams) {
        std::vector<bool> serves(streams.size(), served.empty());
        for (size_t s : served)
            if (s < serves.size())
                serves[s] = true;
        const size_t count = std::max<size_t>(
            static_cast<size_t>(std::count(serves.begin(), serves.end(), true)), 1);
        const size_t records = std::max(kRecordsPerTask / count, 4 * (capacity + maxBatch));
        std::vector<std::unique_ptr<Feed>> feeds(streams.size());
        for (size_t s = 0; s < streams.size(); ++s)
            if (serves[s])
                feeds[s] = std::make_unique<Feed>(records);
        sink->feeds_.push_back(std::move(feeds));
    }
    sink->streams_ = std::vector<StreamView>(streams.size());
    for (size_t s = 0; s < streams.size(); ++s)
        sink->streams_[s].name = streams[s].name;

    // What the view puts out: one stream's frames at their size, or the mosaic of several, at
    // the fastest stream's rate (the rate mosaics are recorded at).
    SourceInfo source = streams.front().source;
    if (streams.size() > 1) {
        for (const ViewStream& s : streams) {
            source.fps = std::max(source.fps, s.source.fps);
            if (source.width <= 0 || source.height <= 0) {
                source.width = s.source.width;
                source.height = s.source.height;
            }
        }
        sink->layout_ = mosaicLayout(streams.size(), source.width, source.height);
        source.width = sink->layout_.width();
        source.height = sink->layout_.height();
        // Black, each cell labelled: a stream that has not delivered yet is known by its place.
        sink->mosaic_.create(source.height, source.width);
        sink->mosaic_.fill(0, 0, 0);
        for (size_t s = 0; s < streams.size(); ++s) {
            const PixelRect cell = tileRect(sink->layout_, s, 0, 0);
            Image tile = sink->mosaic_.roi(cell.x, cell.y, cell.width, cell.height);
            drawStreamLabel(tile, streams[s].name);
        }
    }

    if (config.window) {
        if (!displayAvailable())
            return Status::unsupported(
                "display.window: no display to open a window on (DISPLAY and WAYLAND_DISPLAY are "
                "unset); run headless without --display, watch the run in a browser with --serve "
                "PORT, or record it with --output FILE.mp4 (jetagent-opencv)");
        auto viewer = sink->loadViewer("display.window");
        if (!viewer)
            return viewer.status();
        auto window = viewer.value()->openWindow(kWindowTitle, source.width, source.height);
        if (!window)
            return window.status();
        sink->window_ = std::move(window.value());
        sink->windowOpen_ = true;
    }

    sink->writerFps_ = config.fps > 0 ? config.fps : source.fps > 0 ? source.fps : kDefaultFps;
    if (isStreamUri(config.output)) {
        auto target = parseStreamUri(config.output);
        if (!target)
            return target.status().withContext("display.output");
        sink->streaming_ = true;
        sink->streamTarget_ = target.value();
        // Sources of a known size start the stream (and an RTSP server listening) now, so a
        // missing encoder or a port in use fails before the run; the others at their first frame.
        if (source.width > 0 && source.height > 0)
            if (Status s = sink->openStream(source.width, source.height); !s)
                return s;
    } else if (!config.output.empty()) {
        auto fourcc = fourccFor(config.output);
        if (!fourcc)
            return fourcc.status();
        sink->fourcc_ = fourcc.value();
        const fs::path parent = fs::path(config.output).parent_path();
        std::error_code ec;
        // A recording is a measurement like the logs: never overwritten.
        if (fs::exists(config.output, ec))
            return Status::invalid("display.output '" + config.output +
                "': the file exists; give a new path (a recording is never overwritten)");
        if (!parent.empty() && !fs::is_directory(parent, ec))
            return Status::notFound("display.output '" + config.output + "': directory '" +
                parent.string() + "' does not exist");
        // Sources of a known size open the file now, so a bad path fails before the run; the
        // others (image directories) open it at their first frame.
        auto viewer = sink->loadViewer("display.output");
        if (!viewer)
            return viewer.status();
        if (source.width > 0 && source.height > 0) {
            sink->writerWidth_ = source.width;
            sink->writerHeight_ = source.height;
            auto writer = viewer.value()->openWriter(
                config.output, sink->fourcc_, sink->writerFps_, source.width, source.height);
            if (!writer)
                return writer.status();
            sink->writer_ = std::move(writer.value());
        }
    }
    return sink;
}

Expected<const ViewerApi*> DisplaySink::loadViewer(const char* setting)
{
    if (viewer_ == nullptr) {
        auto plugin = loadPlugin("viewer");
        if (!plugin)
            return plugin.status().withContext(setting);
        viewer_ = static_cast<const ViewerApi*>(plugin.value()->api);
    }
    return viewer_;
}

DisplaySink::~DisplaySink()
{
    queue_->close();
    // No worker is left to finish its feed: a frame still queued must not wait for one.
    for (auto& task : feeds_)
        for (auto& feed : task)
            if (feed)
                feed->finished.store(true, std::memory_order_release);
    feedChanged_.notify_all();
    stop();
}

void DisplaySink::onRecord(size_t task, const FrameRecord& record)
{
    // A stream the view was not told the task serves: no frame of it waits for this task.
    if (task >= feeds_.size() || record.stream >= feeds_[task].size() ||
        !feeds_[task][record.stream])
        return;
    Feed& feed = *feeds_[task][record.stream];
    Entry e;
    e.record = record;
    e.lostBefore = feed.pendingLost;
    e.firstLost = feed.pendingFirstLost;
    if (feed.ring.push(e))
        feed.pendingLost = 0;
    else if (feed.pendingLost++ == 0)
        feed.pendingFirstLost = record.frameId;
    // The view thread checks the ring under this lock before it sleeps: taking it here orders
    // the push before the notification, so no wake-up is lost.
    {
        std::lock_guard<std::mutex> lock(feedMutex_);
    }
    feedChanged_.notify_one();
}

void DisplaySink::onTaskFinished(size_t task)
{
    if (task >= feeds_.size())
        return;
    for (auto& f : feeds_[task]) {
        if (!f)
            continue;
        Feed& feed = *f;
        if (feed.pendingLost > 0)
            feed.lostAtEnd.store(feed.pendingFirstLost + 1, std::memory_order_relaxed);
        feed.finished.store(true, std::memory_order_release);
    }
    {
        std::lock_guard<std::mutex> lock(feedMutex_);
    }
    feedChanged_.notify_one();
}

void DisplaySink::start(OverlayFunction overlay, std::function<void()> quit)
{
    overlay_ = std::move(overlay);
    quit_ = std::move(quit);
    thread_ = std::thread([this] {
        guardThread(
            "the window and recording", [this] { loop(); },
            [](const std::string& why) {
                logger("display")->error("{}; no more frames are shown or recorded", why);
            });
    });
}

void DisplaySink::stop()
{
    if (thread_.joinable())
        thread_.join();
    if (stream_ && !streamReported_) {
        streamReported_ = true;
        logger("display")->info("streamed {} annotated frames to {} ({} dropped while the encoder "
                                "was behind, {} with no client playing)",
            stream_->framesSent(), stream_->address(), stream_->framesDropped(),
            stream_->framesUnwatched());
    }
    if (writer_) {
        writer_.reset(); // finishes the file
        logger("display")->info("recorded {} annotated {} into {} ({} skipped, {} drawn with "
                                "an earlier frame's result)",
            recorded_.load(),
            streams_.size() > 1 ? "mosaics of " + std::to_string(streams_.size()) + " streams"
                                : std::string("frames"),
            config_.output, framesSkipped(), earlier_.load());
    }
    if (window_) {
        window_.reset(); // closes the window
        windowOpen_ = false;
    }
}

void DisplaySink::take(Feed& feed, uint64_t sequence)
{
    const Entry& e = feed.taken;
    if (e.lostBefore > 0)
        feed.unknown = true; // a result may have been among the lost records
    if (e.record.frameId == sequence)
        feed.inferred = true;
    if (!e.record.hasResult)
        return;
    feed.result = e.record;
    feed.haveResult = true;
    feed.unknown = false;
    feed.doneNs[feed.results++ % kRateWindow] = e.record.doneNs;
}

bool DisplaySink::gather(size_t stream, uint64_t sequence, std::vector<TaskAtFrame>& out)
{
    bool sure = true;
    for (size_t t = 0; t < feeds_.size(); ++t) {
        TaskAtFrame& a = out[t];
        a.serves = stream < feeds_[t].size() && feeds_[t][stream];
        if (!a.serves) {
            a.inferred = a.haveResult = false;
            a.fps = 0.0;
            continue;
        }
        Feed& feed = *feeds_[t][stream];
        feed.inferred = false;
        for (;;) {
            const Entry* next = feed.ring.front();
            for (; next && next->record.frameId <= sequence; next = feed.ring.front()) {
                feed.ring.pop(feed.taken);
                take(feed, sequence);
            }
            if (next) {
                // The task has passed this frame. Records lost just before `next` may have
                // included this frame's.
                if (next->lostBefore > 0 && next->firstLost <= sequence)
                    sure = false;
                break;
            }
            // The frame's own record: the task has passed it. Waiting for a later one would hold
            // the view back a frame, and for as long as the task runs when the frame is the last
            // of a stream that ended while the others go on.
            if (feed.inferred)
                break;
            if (feed.finished.load(std::memory_order_acquire)) {
                if (feed.ring.front())
                    continue; // pushed before the end: take them first
                const uint64_t lost = feed.lostAtEnd.load(std::memory_order_relaxed);
                if (lost > 0 && lost - 1 <= sequence)
                    sure = false;
                break;
            }
            std::unique_lock<std::mutex> lock(feedMutex_);
            feedChanged_.wait_for(lock, std::chrono::milliseconds(50), [&] {
                return feed.ring.front() != nullptr ||
                    feed.finished.load(std::memory_order_acquire);
            });
        }
        if (feed.unknown)
            sure = false;
        a.inferred = feed.inferred;
        a.haveResult = feed.haveResult;
        if (feed.haveResult)
            a.result = feed.result;
        const size_t n = std::min(feed.results, kRateWindow);
        const int64_t span = n >= 2 ? feed.doneNs[(feed.results - 1) % kRateWindow] -
                feed.doneNs[(feed.results - n) % kRateWindow]
                                    : 0;
        a.fps = span > 0 ? static_cast<double>(n - 1) / nsToS(span) : 0.0;
    }
    return sure;
}

double DisplaySink::sourceRate(StreamView& stream, const Frame& frame)
{
    auto& captures = stream.captures;
    captures[stream.frames++ % kRateWindow] = {frame.sequence, frame.captureNs};
    const size_t n = std::min(stream.frames, kRateWindow);
    if (n < 2)
        return 0.0;
    const auto& newest = captures[(stream.frames - 1) % kRateWindow];
    const auto& oldest = captures[(stream.frames - n) % kRateWindow];
    const int64_t span = newest.second - oldest.second;
    // Sequence numbers count the frames the view skipped too: this is the source's own rate.
    return span > 0 && newest.first > oldest.first
        ? static_cast<double>(newest.first - oldest.first) / nsToS(span)
        : 0.0;
}

Status DisplaySink::openStream(int width, int height)
{
    StreamOut::Options options;
    // H.264's 4:2:0 chroma needs even sizes: an odd frame loses its last row or column.
    options.width = width & ~1;
    options.height = height & ~1;
    options.fps = writerFps_;
    options.bitrateKbps = config_.bitrateKbps;
    auto stream = StreamOut::open(streamTarget_, options);
    if (!stream)
        return stream.status().withContext("display.output");
    stream_ = std::move(stream).value();
    logger("display")->info("annotated frames out: {}", stream_->describe());
    writeSdp();
    return {};
}

void DisplaySink::setSdpFile(std::string path)
{
    sdpFile_ = std::move(path);
    writeSdp();
}

void DisplaySink::writeSdp() const
{
    if (!stream_ || sdpFile_.empty() || stream_->sdp().empty())
        return;
    std::ofstream out(sdpFile_, std::ios::trunc);
    out << stream_->sdp();
    out.close();
    if (out)
        logger("display")->info("the stream's SDP, for a receiver: {}", sdpFile_);
    else
        logger("display")->warn("cannot write the stream's SDP into {}", sdpFile_);
}

void DisplaySink::stream(const Image& canvas, Image& sized)
{
    if (streamFailed_)
        return;
    if (!stream_) {
        if (Status s = openStream(canvas.cols, canvas.rows); !s) {
            logger("display")->error("{}; the run goes on without the stream", s.message());
            streamFailed_ = true;
            return;
        }
    }
    const Image* out = &canvas;
    if ((canvas.cols & 1) != 0 || (canvas.rows & 1) != 0) {
        sized = canvas.roi(0, 0, canvas.cols & ~1, canvas.rows & ~1);
        out = &sized;
    }
    if (!stream_->push(*out)) {
        logger("display")->error("the stream {} failed ({}); the run goes on without it",
            config_.output, stream_->error());
        streamFailed_ = true;
        return;
    }
    recorded_.fetch_add(1, std::memory_order_relaxed);
}

void DisplaySink::record(const Image& canvas, Image& sized, bool& writerFailed)
{
    if (streaming_) {
        stream(canvas, sized);
        return;
    }
    if (config_.output.empty() || writerFailed)
        return;
    if (!writer_) {
        writerWidth_ = canvas.cols;
        writerHeight_ = canvas.rows;
        auto writer =
            viewer_->openWriter(config_.output, fourcc_, writerFps_, writerWidth_, writerHeight_);
        if (!writer) {
            logger("display")->error(
                "cannot create the recording {} ({}); the run goes on without it", config_.output,
                writer.status().message());
            writerFailed = true;
            return;
        }
        writer_ = std::move(writer.value());
    }
    const Image* out = &canvas;
    if (canvas.cols != writerWidth_ || canvas.rows != writerHeight_) {
        resizer_.run(canvas, sized, writerWidth_, writerHeight_, ResizeKind::Area);
        out = &sized;
    }
    writer_->write(*out);
    recorded_.fetch_add(1, std::memory_order_relaxed);
}

void DisplaySink::drawTile(
    StreamView& stream, size_t index, const Frame& frame, const Overlay& overlay)
{
    const Image& image = frame.image;
    if (image.empty())
        return;
    const PixelRect r = tileRect(layout_, index, image.cols, image.rows);
    if (r.x != stream.tile.x || r.y != stream.tile.y || r.width != stream.tile.width ||
        r.height != stream.tile.height) {
        // The frame's place changed (its first frame, a new size): the cell's bars go black.
        const PixelRect cell = tileRect(layout_, index, 0, 0);
        mosaic_.roi(cell.x, cell.y, cell.width, cell.height).fill(0, 0, 0);
        stream.tile = r;
    }
    // A view into the mosaic: the frame is scaled straight into its place.
    Image tile = mosaic_.roi(r.x, r.y, r.width, r.height);
    if (r.width == image.cols && r.height == image.rows)
        image.copyTo(tile);
    else
        stream.resizer.run(image, tile, r.width, r.height, ResizeKind::Area);
    drawOverlay(tile, overlay);
}

void DisplaySink::emit(Image& canvas, Image& sized, bool& writerFailed, uint64_t sequence)
{
    record(canvas, sized, writerFailed);
    if (windowOpen_) {
        std::lock_guard<std::mutex> lock(latestMutex_);
        canvas.copyTo(latest_); // same size every frame: no allocation after the first
        fresh_ = true;
    }
    // Last: the listener may take the canvas, leaving a buffer the next frame is drawn into.
    if (canvasListener_)
        canvasListener_(canvas, sequence);
}

void DisplaySink::emitMosaic(Image& canvas, Image& sized, bool& writerFailed)
{
    // The canvas listener may take what it is given: it gets a copy, and the tiles stay.
    Image* out = &mosaic_;
    if (canvasListener_) {
        mosaic_.copyTo(canvas); // same size every time: no allocation once warm
        out = &canvas;
    }
    emit(*out, sized, writerFailed, mosaics_++);
    for (StreamView& stream : streams_)
        stream.unrecorded = false;
}

void DisplaySink::loop()
{
    FramePtr frame;
    Image canvas;
    Image sized;
    bool writerFailed = false;
    std::vector<TaskAtFrame> tasks(feeds_.size());
    Overlay overlay;
    const bool tiled = streams_.size() > 1;
    size_t unrecorded = 0; // tiles holding a frame no recorded mosaic has shown
    while (queue_->pop(&frame, 1) == 1) {
        const size_t index = frame->stream < streams_.size() ? frame->stream : 0;
        StreamView& stream = streams_[index];
        const uint64_t sequence = frame->sequence;
        const double sourceFps = sourceRate(stream, *frame);
        if (!gather(index, sequence, tasks)) {
            unsure_.fetch_add(1, std::memory_order_relaxed);
            frame.reset();
            continue;
        }
        overlay.tasks.clear();
        overlay.board.clear();
        overlay.frame = sequence;
        overlay.sourceFps = sourceFps;
        overlay.stream = index;
        if (tiled)
            overlay.streamName = stream.name; // the capacity stays: no allocation once warm
        if (overlay_)
            overlay_(tasks, overlay);
        for (const TaskAtFrame& t : tasks)
            if (t.serves && !t.inferred && t.haveResult) {
                earlier_.fetch_add(1, std::memory_order_relaxed);
                break;
            }
        drawn_.fetch_add(1, std::memory_order_relaxed);
        if (!tiled) {
            frame->image.copyTo(canvas); // the frame is shared read-only with the tasks
            frame.reset();
            drawOverlay(canvas, overlay);
            emit(canvas, sized, writerFailed, sequence);
            continue;
        }
        // A tile's frame is recorded before the tile is drawn over; a round in which every
        // stream has a new frame is recorded at once.
        if (stream.unrecorded) {
            emitMosaic(canvas, sized, writerFailed);
            unrecorded = 0;
        }
        drawTile(stream, index, *frame, overlay);
        frame.reset();
        stream.unrecorded = true;
        if (++unrecorded == streams_.size()) {
            emitMosaic(canvas, sized, writerFailed);
            unrecorded = 0;
        }
    }
    if (unrecorded > 0)
        emitMosaic(canvas, sized, writerFailed);
}

void DisplaySink::pumpWindow()
{
    if (!windowOpen_)
        return;
    Status shown;
    {
        std::lock_guard<std::mutex> lock(latestMutex_);
        if (fresh_) {
            shown = window_->show(latest_);
            fresh_ = false;
            if (shown)
                shown_.fetch_add(1, std::memory_order_relaxed);
        }
    }
    int key = -1;
    bool closed = false;
    if (Status polled = shown ? window_->poll(key, closed) : shown; !polled) {
        logger("display")->error(
            "the window failed ({}); the run goes on without it", polled.message());
        window_.reset();
        windowOpen_ = false;
        return;
    }
    if ((key == 'q' || key == 27 || closed) && !quitSent_.exchange(true) && quit_)
        quit_();
}

} // namespace jetagent
