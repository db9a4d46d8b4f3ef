// Sources read from disk: video files through OpenCV videoio, and directories of images.
#include "jetagent/hal/file_sources.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

#include <opencv2/core/utils/logger.hpp>
#include <opencv2/videoio/registry.hpp>

#include "jetagent/base/clock.h"
#include "jetagent/base/log.h"
#include "jetagent/base/regular_file.h"
#include "jetagent/base/text.h"
#include "jetagent/hal/image_codec.h"
#include "jetagent/hal/image_header.h"

namespace fs = std::filesystem;

namespace jetagent {

bool hasImageExtension(const std::string& name)
{
    // TIFF and WebP are listed though not read (OpenCV read them): each is refused with a warning
    // naming the formats read, rather than left out of the directory without a word.
    static const char* const kExtensions[] = {
        ".jpg", ".jpeg", ".png", ".bmp", ".ppm", ".pgm", ".pbm", ".pnm", ".tif", ".tiff", ".webp"};
    std::string ext = fs::path(name).extension().string();
    std::transform(
        ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    return std::find_if(std::begin(kExtensions), std::end(kExtensions),
               [&](const char* e) { return ext == e; }) != std::end(kExtensions);
}

// --- video files -------------------------------------------------------------------------------

namespace {

constexpr const char* kCaptureOptionsVariable = "OPENCV_FFMPEG_CAPTURE_OPTIONS";
constexpr const char* kLocalFilesOnly = "protocol_whitelist;file";

// Set before main(): setenv is not thread-safe, and no other thread exists yet. OpenCV reads the
// variable at every FFmpeg open (CvCapture_FFMPEG::open), so it holds for every capture after.
const bool kCaptureOptionsSet = [] {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): before main, single-threaded
    const std::string options = localFileCaptureOptions(std::getenv(kCaptureOptionsVariable));
    // NOLINTNEXTLINE(concurrency-mt-unsafe): before main, single-threaded
    return ::setenv(kCaptureOptionsVariable, options.c_str(), 1) == 0;
}();

// True while FFmpeg is still held to local files (nothing in the process changed the variable).
bool captureOptionsLocalOnly()
{
    // NOLINTNEXTLINE(concurrency-mt-unsafe): only read after start-up
    const char* value = std::getenv(kCaptureOptionsVariable);
    const std::string_view options = value ? value : "";
    const std::string_view tail = kLocalFilesOnly;
    return kCaptureOptionsSet && options.size() >= tail.size() &&
        options.substr(options.size() - tail.size()) == tail;
}

// Bytes read from a video file's start to tell a playlist or manifest from a video.
constexpr size_t kHeadBytes = 4096;

// What `head` is when it is a text that sends a demuxer to other files or URLs (FFmpeg's hls,
// dash, concat and sdp demuxers, GStreamer's hlsdemux, dashdemux and mssdemux); null for anything
// else.
const char* streamManifestKind(const std::string& head)
{
    size_t start = head.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0; // a UTF-8 byte order mark
    while (start < head.size() && std::isspace(static_cast<unsigned char>(head[start])))
        ++start;
    auto startsWith = [&](const char* prefix) {
        return head.compare(start, std::strlen(prefix), prefix) == 0;
    };
    if (startsWith("#EXTM3U"))
        return "an HLS playlist (#EXTM3U)";
    if (startsWith("ffconcat version"))
        return "an FFmpeg concat script";
    if (startsWith("v=0") && head.find("c=IN IP") != std::string::npos)
        return "an SDP session description (of RTP network streams)";
    // XML, whatever comes before its root element (a declaration, comments).
    if (startsWith("<") && head.find("<MPD") != std::string::npos)
        return "a DASH manifest (MPD)";
    if (startsWith("<") && head.find("<SmoothStreamingMedia") != std::string::npos)
        return "a Smooth Streaming manifest";
    return nullptr;
}

} // namespace

std::string localFileCaptureOptions(const char* userOptions)
{
    std::string merged;
    for (const std::string& entry : splitFields(userOptions ? userOptions : "", '|')) {
        if (entry.empty() || trimSpace(entry.substr(0, entry.find(';'))) == "protocol_whitelist")
            continue;
        merged.append(entry).append("|");
    }
    return merged + kLocalFilesOnly;
}

Expected<std::unique_ptr<FrameSource>> VideoFileSource::open(
    const SourceOptions& options, const std::string& path)
{
    std::unique_ptr<VideoFileSource> source(new VideoFileSource());
    source->path_ = path;
    std::error_code ec;
    const fs::path absolute = fs::absolute(path, ec);
    source->openPath_ = ec ? path : absolute.string();
    source->loop_ = options.loop;
    source->maxPixels_ = options.maxImagePixels;
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
    if (std::isfinite(count) && count > 0 && count < 1e15)
        source->declaredFrames_ = std::llround(count);
    source->info_.frameCount = options.loop ? -1 : source->declaredFrames_;
    return std::unique_ptr<FrameSource>(std::move(source));
}

Status VideoFileSource::reopen()
{
    const std::string what = "video file '" + path_ + "'";
    std::error_code ec;
    if (fs::is_directory(path_, ec))
        return Status::invalid("'" + path_ + "' is a directory, not a video file");
    {
        uint64_t size = 0;
        auto file = openRegularFile(path_, what, size);
        if (!file)
            return file.status();
        std::string head;
        if (Status s = readFileHead(file.value(), what, kHeadBytes, head); !s)
            return s;
        if (const char* kind = streamManifestKind(head))
            return Status::invalid(what + " is " + kind +
                ", which names other files or URLs to read, not a video: file sources read local "
                "video files only and never open the network (a network stream is read with "
                "rtsp://HOST/PATH or a gst:// pipeline)");
    }
    if (!captureOptionsLocalOnly())
        return Status::runtime(std::string("cannot open ") + what + ": " + kCaptureOptionsVariable +
            " no longer ends in " + kLocalFilesOnly + ", so FFmpeg might open the network");
    // File decoders only: FFmpeg, then OpenCV's own MJPEG reader (AVI). Not GStreamer (see the
    // header), and not CAP_ANY, which would go on to camera backends (gphoto2 scans the USB bus).
    // OpenCV logs each failed attempt itself; the caller gets one message instead.
    const auto previous = cv::utils::logging::getLogLevel();
    cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
    std::string tried;
    capture_.release();
    for (const cv::VideoCaptureAPIs api : {cv::CAP_FFMPEG, cv::CAP_OPENCV_MJPEG}) {
        if (!cv::videoio_registry::hasBackend(api))
            continue;
        tried += (tried.empty() ? "" : ", ") + cv::videoio_registry::getBackendName(api);
        try {
            if (capture_.open(openPath_, api))
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
    // The stream's size from its codec parameters, before a frame of it is decoded.
    const double width = capture_.get(cv::CAP_PROP_FRAME_WIDTH);
    const double height = capture_.get(cv::CAP_PROP_FRAME_HEIGHT);
    if (std::isfinite(width) && std::isfinite(height) && width > 0 && height > 0 &&
        width * height > static_cast<double>(maxPixels_)) {
        capture_.release();
        return Status::invalid(what + " has frames of " + std::to_string(std::llround(width)) +
            "x" + std::to_string(std::llround(height)) + " pixels, more than the limit of " +
            std::to_string(maxPixels_) + " pixels (source.max_image_pixels)");
    }
    // Frames are converted to BGR by OpenCV unless told otherwise; make that explicit.
    capture_.set(cv::CAP_PROP_CONVERT_RGB, 1);
    return Status();
}

void VideoFileSource::notePassEnd()
{
    if (declaredFrames_ <= 0 || passFrames_ >= declaredFrames_)
        return;
    const std::string counts =
        std::to_string(passFrames_) + " of " + std::to_string(declaredFrames_) + " frames";
    if (!loop_) {
        endDetail_ = "after " + counts;
        logger("source")->warn("video file '{}' ended after {}: the rest could not be decoded (a "
                               "damaged or truncated file)",
            path_, counts);
    } else if (!warnedShortPass_) {
        warnedShortPass_ = true;
        logger("source")->warn("a pass over video file '{}' ended after {}: the rest could not be "
                               "decoded (a damaged or truncated file); looping over the frames "
                               "that decode",
            path_, counts);
    }
}

Expected<ReadResult> VideoFileSource::read(Frame& frame)
{
    frame.captureNs = monotonicNs();
    if (ended_)
        return ReadResult::EndOfStream;
    if (haveFirst_) {
        first_.copyTo(frame.image);
        haveFirst_ = false;
        first_.release();
    } else {
        bool got = false;
        try {
            got = capture_.read(frame.image) && !frame.image.empty();
            if (!got) {
                notePassEnd();
                if (loop_) {
                    if (Status s = reopen(); !s)
                        return s;
                    passFrames_ = 0;
                    got = capture_.read(frame.image) && !frame.image.empty();
                }
            }
        } catch (const cv::Exception& e) {
            return Status::io("decoding video file '" + path_ + "' failed: " + e.what());
        }
        if (!got) {
            ended_ = true;
            return ReadResult::EndOfStream;
        }
    }
    ++passFrames_;
    if (frame.image.type() != CV_8UC3)
        return Status::invalid("video file '" + path_ + "' decodes to an unsupported pixel type");
    // A stream may change its size midway; a frame over the limit goes no further.
    if (static_cast<uint64_t>(frame.image.total()) > maxPixels_)
        return Status::invalid("video file '" + path_ + "' has a frame of " +
            std::to_string(frame.image.cols) + "x" + std::to_string(frame.image.rows) +
            " pixels, more than the limit of " + std::to_string(maxPixels_) +
            " pixels (source.max_image_pixels)");
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
            "' holds no images (looked for .jpg .jpeg .png .bmp .ppm .pgm .pbm .pnm, "
            ".tif .tiff .webp, "
            "at the top level and one level of class subdirectories)");
    return listing;
}

Expected<cv::Mat> decodeImageFile(
    const std::string& path, std::vector<unsigned char>& buffer, uint64_t maxPixels)
{
    const std::string what = "image '" + path + "'";
    // Room for the largest encoding of an image within the limit (16-bit RGBA stored raw, 8 bytes
    // a pixel) and its metadata; a larger file is refused before it is read.
    constexpr uint64_t kBytesPerPixel = 8;
    constexpr uint64_t kMetadataBytes = uint64_t {16} << 20;
    if (Status s = readRegularFile(path, what, maxPixels * kBytesPerPixel + kMetadataBytes, buffer);
        !s)
        return s;
    auto header = readImageHeader(buffer.data(), buffer.size());
    if (!header)
        return Status::invalid(what + " cannot be decoded: " + header.status().message());
    if (header->pixels() > maxPixels)
        return Status::invalid(what + " is a " + header->format + " of " +
            std::to_string(header->width) + "x" + std::to_string(header->height) + " (" +
            std::to_string(header->pixels()) + " pixels), more than the limit of " +
            std::to_string(maxPixels) + " pixels (source.max_image_pixels)");
    auto image = decodeImage(buffer.data(), buffer.size(), maxPixels);
    if (!image)
        return Status::invalid(what + " cannot be decoded: " + image.status().message());
    return image;
}

Expected<std::unique_ptr<FrameSource>> ImageDirectorySource::open(
    const SourceOptions& options, const std::string& path)
{
    auto listing = listImageDirectory(path);
    if (!listing)
        return listing.status();
    std::unique_ptr<ImageDirectorySource> source(new ImageDirectorySource());
    source->loop_ = options.loop;
    source->maxPixels_ = options.maxImagePixels;
    source->info_.uri = options.uri;
    source->info_.kind = "image-directory";
    source->info_.fps = options.fps;
    source->info_.classNames = std::move(listing.value().classNames);
    source->entries_ = std::move(listing.value().files);
    source->info_.frameCount = options.loop ? -1 : static_cast<int64_t>(source->entries_.size());
    return std::unique_ptr<FrameSource>(std::move(source));
}

SourceStats ImageDirectorySource::stats() const
{
    SourceStats stats;
    stats.skippedFiles = skipped_.load();
    return stats;
}

Expected<ReadResult> ImageDirectorySource::read(Frame& frame)
{
    auto log = logger("source");
    // Skips files that cannot be read or decoded, but gives up after a whole pass of them.
    std::string lastReason;
    for (size_t attempts = 0; attempts < entries_.size(); ++attempts) {
        if (position_ == entries_.size()) {
            if (!loop_)
                return ReadResult::EndOfStream;
            position_ = 0;
        }
        const ImageDirectoryListing::File& entry = entries_[position_++];
        frame.captureNs = monotonicNs();

        auto image = decodeImageFile(entry.path, fileBuffer_, maxPixels_);
        if (!image) {
            skipped_.fetch_add(1);
            lastReason = image.status().message();
            log->warn("{}; skipped", lastReason);
            continue;
        }
        frame.image = std::move(image).value();
        frame.sequence = next_++;
        frame.truthClass = entry.truthClass;
        return ReadResult::Frame;
    }
    return Status::invalid("no image in '" + info_.uri + "' could be decoded" +
        (lastReason.empty() ? std::string() : " (the last: " + lastReason + ")"));
}

} // namespace jetagent
