// Sources read from disk: video files through OpenCV videoio, and directories of images.
#include "jetagent/hal/file_sources.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <opencv2/core/utils/logger.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/videoio/registry.hpp>

#include "jetagent/base/clock.h"
#include "jetagent/base/log.h"

namespace fs = std::filesystem;

namespace jetagent {

bool hasImageExtension(const std::string& name)
{
    static const char* const kExtensions[] = {
        ".jpg", ".jpeg", ".png", ".bmp", ".ppm", ".pgm", ".pnm", ".tif", ".tiff", ".webp"};
    std::string ext = fs::path(name).extension().string();
    std::transform(
        ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    return std::find_if(std::begin(kExtensions), std::end(kExtensions),
               [&](const char* e) { return ext == e; }) != std::end(kExtensions);
}

// --- video files -------------------------------------------------------------------------------

Expected<std::unique_ptr<FrameSource>> VideoFileSource::open(
    const SourceOptions& options, const std::string& path)
{
    std::unique_ptr<VideoFileSource> source(new VideoFileSource());
    source->path_ = path;
    source->loop_ = options.loop;
    source->info_.uri = options.uri;
    source->info_.kind = "video-file";

    if (Status s = source->reopen(); !s)
        return s;
    if (!source->capture_.read(source->first_) || source->first_.empty())
        return Status::invalid(
            "video file '" + path + "' opened, but no frame could be decoded from it");
    source->haveFirst_ = true;

    double fps = source->capture_.get(cv::CAP_PROP_FPS);
    if (!std::isfinite(fps) || fps <= 0.0 || fps > 1000.0)
        fps = options
                  .fps; // containers without a rate (some MJPEG streams) play at the configured one
    source->info_.fps = fps;
    source->info_.width = source->first_.cols;
    source->info_.height = source->first_.rows;
    double count = source->capture_.get(cv::CAP_PROP_FRAME_COUNT);
    source->info_.frameCount =
        (std::isfinite(count) && count > 0 && !options.loop) ? static_cast<int64_t>(count) : -1;
    return std::unique_ptr<FrameSource>(std::move(source));
}

Status VideoFileSource::reopen()
{
    std::error_code ec;
    if (!fs::exists(path_, ec))
        return Status::notFound("video file '" + path_ + "' does not exist");
    if (fs::is_directory(path_, ec))
        return Status::invalid("'" + path_ + "' is a directory, not a video file");
    // File decoders only, in this order: FFmpeg, GStreamer (which reaches the hardware decoders on
    // Jetson), OpenCV's own MJPEG reader. CAP_ANY would go on to camera backends (gphoto2 scans the
    // USB bus) for a file no decoder accepts. OpenCV logs each failed attempt itself; the caller
    // gets one message instead.
    const auto previous = cv::utils::logging::getLogLevel();
    cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
    std::string tried;
    capture_.release();
    for (const cv::VideoCaptureAPIs api :
        {cv::CAP_FFMPEG, cv::CAP_GSTREAMER, cv::CAP_OPENCV_MJPEG}) {
        if (!cv::videoio_registry::hasBackend(api))
            continue;
        tried += (tried.empty() ? "" : ", ") + cv::videoio_registry::getBackendName(api);
        try {
            if (capture_.open(path_, api))
                break;
        } catch (const cv::Exception&) {
            capture_.release();
        }
    }
    cv::utils::logging::setLogLevel(previous);
    if (!capture_.isOpened())
        return Status::invalid("'" + path_ + "' is not a video file OpenCV can decode (tried " +
            (tried.empty() ? std::string("no backend: this OpenCV has no file decoders") : tried) +
            ")");
    logger("source")->debug("{}: decoding with {}", path_, capture_.getBackendName());
    // Frames are converted to BGR by OpenCV unless told otherwise; make that explicit.
    capture_.set(cv::CAP_PROP_CONVERT_RGB, 1);
    return Status();
}

Expected<ReadResult> VideoFileSource::read(Frame& frame)
{
    frame.captureNs = monotonicNs();
    if (haveFirst_) {
        first_.copyTo(frame.image);
        haveFirst_ = false;
        first_.release();
    } else {
        bool got = false;
        try {
            got = capture_.read(frame.image) && !frame.image.empty();
            if (!got && loop_) {
                if (Status s = reopen(); !s)
                    return s;
                got = capture_.read(frame.image) && !frame.image.empty();
            }
        } catch (const cv::Exception& e) {
            return Status::io("decoding video file '" + path_ + "' failed: " + e.what());
        }
        if (!got)
            return ReadResult::EndOfStream;
    }
    if (frame.image.type() != CV_8UC3)
        return Status::invalid("video file '" + path_ + "' decodes to an unsupported pixel type");
    frame.sequence = next_++;
    frame.truthClass = -1;
    return ReadResult::Frame;
}

// --- image directories ---------------------------------------------------------------------------

Expected<ImageDirectoryListing> listImageDirectory(const std::string& path)
{
    std::error_code ec;
    if (!fs::is_directory(path, ec))
        return Status::notFound("image directory '" + path + "' does not exist");
    // The images of one directory, in natural order; subdirectories go to `dirs` when given.
    auto scan = [&ec](const fs::path& dir, std::vector<std::string>* dirs) {
        std::vector<std::string> images;
        for (const auto& entry : fs::directory_iterator(dir, ec)) {
            const std::string name = entry.path().filename().string();
            if (name.empty() || name[0] == '.')
                continue;
            if (entry.is_directory(ec)) {
                if (dirs)
                    dirs->push_back(name);
            } else if (hasImageExtension(name)) {
                images.push_back(name);
            }
        }
        std::sort(images.begin(), images.end(), naturalLess);
        return images;
    };
    ImageDirectoryListing listing;
    std::vector<std::string> classDirs;
    for (const auto& name : scan(path, &classDirs))
        listing.files.push_back({(fs::path(path) / name).string(), name, -1});
    if (ec)
        return Status::io("cannot list image directory '" + path + "': " + ec.message());
    std::sort(classDirs.begin(), classDirs.end(), naturalLess);
    for (const auto& dir : classDirs) {
        const auto files = scan(fs::path(path) / dir, nullptr);
        if (files.empty())
            continue;
        const int cls = static_cast<int>(listing.classNames.size());
        listing.classNames.push_back(dir);
        for (const auto& name : files)
            listing.files.push_back(
                {(fs::path(path) / dir / name).string(), (fs::path(dir) / name).string(), cls});
    }
    if (listing.files.empty())
        return Status::invalid("image directory '" + path +
            "' holds no images (looked for .jpg .jpeg .png .bmp .ppm .pgm .pnm .tif .tiff .webp, "
            "at the top level and one level of class subdirectories)");
    return listing;
}

cv::Mat decodeImageFile(const std::string& path, std::vector<unsigned char>& buffer)
{
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    const std::streamoff size = in ? static_cast<std::streamoff>(in.tellg()) : -1;
    if (size <= 0)
        return cv::Mat();
    buffer.resize(static_cast<size_t>(size));
    in.seekg(0);
    if (!in.read(reinterpret_cast<char*>(buffer.data()), size))
        return cv::Mat();
    try {
        // Into a new Mat: imdecode's reuse-a-destination form hands back the destination's old
        // image when it cannot decode, which would pass a corrupt file off as its predecessor.
        return cv::imdecode(buffer, cv::IMREAD_COLOR);
    } catch (const cv::Exception&) {
        return cv::Mat();
    }
}

Expected<std::unique_ptr<FrameSource>> ImageDirectorySource::open(
    const SourceOptions& options, const std::string& path)
{
    auto listing = listImageDirectory(path);
    if (!listing)
        return listing.status();
    std::unique_ptr<ImageDirectorySource> source(new ImageDirectorySource());
    source->loop_ = options.loop;
    source->info_.uri = options.uri;
    source->info_.kind = "image-directory";
    source->info_.fps = options.fps;
    source->info_.classNames = std::move(listing.value().classNames);
    source->entries_ = std::move(listing.value().files);
    source->info_.frameCount = options.loop ? -1 : static_cast<int64_t>(source->entries_.size());
    return std::unique_ptr<FrameSource>(std::move(source));
}

Expected<ReadResult> ImageDirectorySource::read(Frame& frame)
{
    auto log = logger("source");
    // Skips files that cannot be read or decoded, but gives up after a whole pass of them.
    for (size_t attempts = 0; attempts < entries_.size(); ++attempts) {
        if (position_ == entries_.size()) {
            if (!loop_)
                return ReadResult::EndOfStream;
            position_ = 0;
        }
        const ImageDirectoryListing::File& entry = entries_[position_++];
        frame.captureNs = monotonicNs();

        cv::Mat image = decodeImageFile(entry.path, fileBuffer_);
        const bool decoded = !image.empty();
        if (decoded)
            frame.image = image;
        if (!decoded) {
            ++skipped_;
            log->warn("skipping '{}': not a readable image", entry.path);
            continue;
        }
        frame.sequence = next_++;
        frame.truthClass = entry.truthClass;
        return ReadResult::Frame;
    }
    return Status::invalid("no image in '" + info_.uri + "' could be decoded");
}

} // namespace jetagent
