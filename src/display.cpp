// The live camera demo's view: overlay drawing, the window and the recording.
#include "display.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include <opencv2/highgui.hpp>
#include <opencv2/imgproc.hpp>

#include "jetagent/base/log.h"

namespace fs = std::filesystem;

namespace jetagent {

namespace {

constexpr const char* kWindowTitle = "jetagent";
constexpr double kDefaultFps = 30.0;
constexpr size_t kLiveQueue = 2; // the newest frame, and one spare while the view draws
constexpr size_t kOfflineQueue = 4;

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
    const std::string ext = lowerExtension(path);
    if (ext == ".mp4" || ext == ".mkv" || ext == ".mov")
        return cv::VideoWriter::fourcc('m', 'p', '4', 'v');
    if (ext == ".avi")
        return cv::VideoWriter::fourcc('M', 'J', 'P', 'G');
    return Status::invalid("display.output '" + path +
        "': cannot tell the container from the extension (use .mp4, .mkv, .mov or .avi)");
}

void putLine(cv::Mat& image, const std::string& text, cv::Point at, double scale, int thickness)
{
    cv::putText(image, text, at, cv::FONT_HERSHEY_SIMPLEX, scale, cv::Scalar(0, 0, 0),
        thickness + 2, cv::LINE_AA);
    cv::putText(image, text, at, cv::FONT_HERSHEY_SIMPLEX, scale, cv::Scalar(255, 255, 255),
        thickness, cv::LINE_AA);
}

} // namespace

void drawOverlay(cv::Mat& image, const Overlay& overlay)
{
    if (image.empty())
        return;
    std::vector<std::string> lines;
    char buffer[256];
    for (const OverlayTask& t : overlay.tasks) {
        std::string line = t.name + ": ";
        if (!t.haveResult) {
            line += "waiting";
        } else {
            for (size_t i = 0; i < t.top.size(); ++i) {
                std::snprintf(buffer, sizeof buffer, "%s%s %.2f", i ? ", " : "",
                    t.top[i].first.c_str(), static_cast<double>(t.top[i].second));
                line += buffer;
            }
            std::snprintf(buffer, sizeof buffer, " | %.1f ms | %.1f fps", t.endToEndMs, t.fps);
            line += buffer;
        }
        lines.push_back(line);
    }
    std::snprintf(buffer, sizeof buffer, "source %.1f fps", overlay.sourceFps);
    std::string last = buffer;
    if (!overlay.board.empty())
        last += " | " + overlay.board;
    lines.push_back(last);

    // Text about 1/30 of the frame height, readable from 240 to 2160 lines.
    const double scale = std::max(0.35, image.rows / 900.0);
    const int thickness = std::max(1, static_cast<int>(std::lround(scale * 1.5)));
    int baseline = 0;
    const int lineHeight =
        cv::getTextSize("Ag", cv::FONT_HERSHEY_SIMPLEX, scale, thickness, &baseline).height +
        baseline + 4;
    int width = 0;
    for (const auto& l : lines)
        width = std::max(
            width, cv::getTextSize(l, cv::FONT_HERSHEY_SIMPLEX, scale, thickness, &baseline).width);
    const cv::Rect panel =
        cv::Rect(0, 0, width + 12, lineHeight * static_cast<int>(lines.size()) + 8) &
        cv::Rect(0, 0, image.cols, image.rows);
    cv::Mat region = image(panel);
    region.convertTo(region, -1, 0.45, 0.0); // darken in place: the text stays readable on white
    for (size_t i = 0; i < lines.size(); ++i)
        putLine(image, lines[i], cv::Point(6, 4 + lineHeight * static_cast<int>(i + 1) - baseline),
            scale, thickness);
}

bool displayAvailable()
{
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read at start-up, before threads
    const char* x11 = std::getenv("DISPLAY");
    // NOLINTNEXTLINE(concurrency-mt-unsafe)
    const char* wayland = std::getenv("WAYLAND_DISPLAY");
    return (x11 && *x11) || (wayland && *wayland);
}

Expected<std::unique_ptr<DisplaySink>> DisplaySink::open(
    const DisplayConfig& config, const SourceInfo& source, bool offline)
{
    std::unique_ptr<DisplaySink> sink(new DisplaySink());
    sink->config_ = config;
    const bool keepEvery = offline && !config.output.empty();
    sink->queue_ = std::make_unique<FrameQueue>(keepEvery ? kOfflineQueue : kLiveQueue,
        keepEvery ? FrameQueue::Policy::Block : FrameQueue::Policy::DropOldest);

    if (config.window) {
        if (!displayAvailable())
            return Status::unsupported(
                "display.window: no display to open a window on (DISPLAY and WAYLAND_DISPLAY are "
                "unset); run headless without --display, or record with --output FILE.mp4");
        try {
            cv::namedWindow(kWindowTitle, cv::WINDOW_NORMAL | cv::WINDOW_KEEPRATIO);
            if (source.width > 0 && source.height > 0)
                cv::resizeWindow(kWindowTitle, source.width, source.height);
        } catch (const cv::Exception& e) {
            return Status::unsupported(
                std::string("display.window: OpenCV cannot open a window: ") + e.what());
        }
        sink->windowOpen_ = true;
    }

    if (!config.output.empty()) {
        auto fourcc = fourccFor(config.output);
        if (!fourcc)
            return fourcc.status();
        sink->fourcc_ = fourcc.value();
        const fs::path parent = fs::path(config.output).parent_path();
        std::error_code ec;
        if (!parent.empty() && !fs::is_directory(parent, ec))
            return Status::notFound("display.output '" + config.output + "': directory '" +
                parent.string() + "' does not exist");
        sink->writerFps_ = config.fps > 0 ? config.fps : source.fps > 0 ? source.fps : kDefaultFps;
        // Sources of a known size open the file now, so a bad path fails before the run; the
        // others (image directories) open it at their first frame.
        if (source.width > 0 && source.height > 0) {
            sink->writerSize_ = cv::Size(source.width, source.height);
            if (!sink->writer_.open(config.output, cv::CAP_FFMPEG, sink->fourcc_, sink->writerFps_,
                    sink->writerSize_))
                return Status::invalid("display.output '" + config.output +
                    "': OpenCV's FFmpeg writer cannot create it (unwritable, or no encoder)");
        }
    }
    return sink;
}

DisplaySink::~DisplaySink()
{
    queue_->close();
    stop();
}

void DisplaySink::start(std::function<Overlay()> overlay, std::function<void()> quit)
{
    overlay_ = std::move(overlay);
    quit_ = std::move(quit);
    thread_ = std::thread([this] { loop(); });
}

void DisplaySink::stop()
{
    if (thread_.joinable())
        thread_.join();
    if (writer_.isOpened()) {
        writer_.release();
        logger("display")->info("recorded {} annotated frames into {} ({} skipped)",
            recorded_.load(), config_.output, queue_->dropped());
    }
    if (windowOpen_) {
        try {
            cv::destroyWindow(kWindowTitle);
            cv::waitKey(1);
        } catch (const cv::Exception&) {
            // the window went with its display; nothing to clean up
        }
        windowOpen_ = false;
    }
}

void DisplaySink::loop()
{
    auto log = logger("display");
    FramePtr frame;
    cv::Mat canvas;
    cv::Mat sized;
    bool writerFailed = false;
    while (queue_->pop(&frame, 1) == 1) {
        frame->image.copyTo(canvas); // the frame is shared read-only with the tasks
        frame.reset();
        drawOverlay(canvas, overlay_());

        if (!config_.output.empty() && !writerFailed) {
            if (!writer_.isOpened()) {
                writerSize_ = canvas.size();
                if (!writer_.open(
                        config_.output, cv::CAP_FFMPEG, fourcc_, writerFps_, writerSize_)) {
                    log->error("cannot create the recording {}; the run goes on without it",
                        config_.output);
                    writerFailed = true;
                }
            }
            if (writer_.isOpened()) {
                const cv::Mat* out = &canvas;
                if (canvas.size() != writerSize_) {
                    cv::resize(canvas, sized, writerSize_, 0, 0, cv::INTER_AREA);
                    out = &sized;
                }
                writer_.write(*out);
                recorded_.fetch_add(1, std::memory_order_relaxed);
            }
        }
        if (windowOpen_) {
            std::lock_guard<std::mutex> lock(latestMutex_);
            canvas.copyTo(latest_); // same size every frame: no allocation after the first
            fresh_ = true;
        }
    }
}

void DisplaySink::pumpWindow()
{
    if (!windowOpen_)
        return;
    try {
        {
            std::lock_guard<std::mutex> lock(latestMutex_);
            if (fresh_) {
                cv::imshow(kWindowTitle, latest_);
                fresh_ = false;
                shown_.fetch_add(1, std::memory_order_relaxed);
            }
        }
        const int key = cv::waitKey(1);
        const bool closed = cv::getWindowProperty(kWindowTitle, cv::WND_PROP_VISIBLE) < 1;
        if ((key == 'q' || key == 27 || closed) && !quitSent_.exchange(true) && quit_)
            quit_();
    } catch (const cv::Exception& e) {
        logger("display")->error("the window failed ({}); the run goes on without it", e.what());
        windowOpen_ = false;
    }
}

} // namespace jetagent
