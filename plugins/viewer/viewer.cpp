// The viewer plugin: the live demo's window (OpenCV's highgui) and its video file recordings
// (OpenCV's videoio through FFmpeg). See src/agent/display/viewer_api.h.
#include <memory>
#include <string>

#include <opencv2/highgui.hpp>
#include <opencv2/videoio.hpp>

#include "display/viewer_api.h"
#include "jetagent/base/plugin.h"

namespace jetagent {
namespace {

// The image as OpenCV's type, sharing its pixels.
cv::Mat asMat(const Image& image)
{
    return cv::Mat(image.rows, image.cols, CV_8UC(image.channels()), image.data, image.step);
}

class HighguiWindow final : public VideoWindow {
public:
    explicit HighguiWindow(std::string title) : title_(std::move(title)) { }
    ~HighguiWindow() override
    {
        try {
            cv::destroyWindow(title_);
            cv::waitKey(1);
        } catch (const cv::Exception&) {
            // the window went with its display; nothing to clean up
        }
    }
    HighguiWindow(const HighguiWindow&) = delete;
    HighguiWindow& operator=(const HighguiWindow&) = delete;

    Status show(const Image& image) override
    {
        try {
            cv::imshow(title_, asMat(image));
            return Status();
        } catch (const cv::Exception& e) {
            return Status::runtime(e.what());
        }
    }

    Status poll(int& key, bool& closed) override
    {
        try {
            key = cv::waitKey(1);
            closed = cv::getWindowProperty(title_, cv::WND_PROP_VISIBLE) < 1;
            return Status();
        } catch (const cv::Exception& e) {
            return Status::runtime(e.what());
        }
    }

private:
    std::string title_;
};

Expected<std::unique_ptr<VideoWindow>> openHighguiWindow(
    const std::string& title, int width, int height)
{
    try {
        cv::namedWindow(title, cv::WINDOW_NORMAL | cv::WINDOW_KEEPRATIO);
        if (width > 0 && height > 0)
            cv::resizeWindow(title, width, height);
    } catch (const cv::Exception& e) {
        return Status::unsupported(
            std::string("display.window: OpenCV cannot open a window: ") + e.what());
    }
    return std::unique_ptr<VideoWindow>(new HighguiWindow(title));
}

class FfmpegWriter final : public VideoFileWriter {
public:
    void write(const Image& frame) override { writer.write(asMat(frame)); }

    cv::VideoWriter writer; // released, finishing the file, with this object
};

Expected<std::unique_ptr<VideoFileWriter>> openFfmpegWriter(
    const std::string& path, int fourcc, double fps, int width, int height)
{
    auto out = std::make_unique<FfmpegWriter>();
    try {
        if (out->writer.open(path, cv::CAP_FFMPEG, fourcc, fps, cv::Size(width, height)))
            return std::unique_ptr<VideoFileWriter>(std::move(out));
    } catch (const cv::Exception&) {
        // reported below, as a writer that did not open
    }
    return Status::invalid("display.output '" + path +
        "': OpenCV's FFmpeg writer cannot create it (unwritable, or no encoder)");
}

} // namespace
} // namespace jetagent

JETAGENT_PLUGIN_ENTRY
{
    static const jetagent::ViewerApi api = {
        jetagent::openHighguiWindow, jetagent::openFfmpegWriter};
    static const jetagent::PluginDescriptor descriptor = {
        jetagent::kPluginAbi, JETAGENT_PLUGIN_VERSION, "viewer", &api};
    return &descriptor;
}
