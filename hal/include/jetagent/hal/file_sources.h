// Sources read from disk: video files through OpenCV videoio, and directories of images. File
// sources read local files only and never open the network: see VideoFileSource.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <opencv2/videoio.hpp>

#include "jetagent/base/text.h"
#include "jetagent/hal/frame_source.h"

namespace jetagent {

// A video file, decoded by OpenCV's FFmpeg backend (or, for AVI MJPEG files, OpenCV's own reader).
// Local files only, whatever they contain:
//  - the file must be a regular file (a FIFO or device would block the decoder or never end);
//  - a playlist or manifest that names other files or URLs (an HLS .m3u8, a DASH .mpd, an FFmpeg
//    concat script, an SDP description), under any name, is refused before a decoder sees it;
//  - FFmpeg is held to its `file` protocol: this library sets OPENCV_FFMPEG_CAPTURE_OPTIONS (which
//    OpenCV reads at every FFmpeg open) to the user's own options, if any, followed by
//    protocol_whitelist;file, before main() runs, when no other thread exists to race setenv;
//  - OpenCV's GStreamer backend is never asked: it plays a path through uridecodebin, whose
//    typefinder turns an HLS playlist into HTTP requests. A Jetson's hardware decoders are reached
//    with a gst:// pipeline instead (filesrc ! qtdemux ! h264parse ! nvv4l2decoder ! ...).
class VideoFileSource final : public FrameSource {
public:
    // Opens `path` and decodes its first frame, so an unreadable file fails here rather than
    // mid-run. A video whose frames have more than options.maxImagePixels pixels is refused before
    // its first frame is decoded.
    static Expected<std::unique_ptr<FrameSource>> open(
        const SourceOptions& options, const std::string& path);

    const SourceInfo& info() const override { return info_; }
    // A pass that stops before the frame count the container declares (a damaged or truncated
    // file: the decoder gave up) is not a failure, since the frames read were measured, but it is
    // logged as a warning naming the file, and without loop the end says so ("after 2 of 60
    // frames"; see endDetail).
    Expected<ReadResult> read(Frame& frame) override;
    std::string endDetail() const override { return endDetail_; }

private:
    VideoFileSource() = default;
    Status reopen();
    // Called when a pass over the file ends: warns when it ended short of declaredFrames_.
    void notePassEnd();

    SourceInfo info_;
    std::string path_;
    std::string openPath_; // path_ made absolute, so that FFmpeg never reads "tcp:..." as a URL
    bool loop_ = false;
    uint64_t maxPixels_ = kDefaultMaxImagePixels;
    cv::VideoCapture capture_;
    cv::Mat first_; // the frame decoded by open(), delivered by the first read()
    bool haveFirst_ = false;
    uint64_t next_ = 0;
    int64_t declaredFrames_ = -1; // CAP_PROP_FRAME_COUNT at open; -1 when unknown
    int64_t passFrames_ = 0; // frames delivered in this pass over the file
    bool ended_ = false; // EndOfStream returned (without loop)
    bool warnedShortPass_ = false; // with loop, a short pass is logged once
    std::string endDetail_;
};

// An image directory's images in the order ImageDirectorySource gives them: the top-level images,
// then each class subdirectory's, each in natural name order; hidden files are left out.
struct ImageDirectoryListing {
    struct File {
        std::string path; // the directory joined with the file's relative name
        std::string relative; // "cat/001.png"
        int truthClass = -1; // index into classNames; -1 at the top level
    };
    std::vector<File> files;
    std::vector<std::string> classNames; // subdirectories that hold images
};

// Lists `path`. Errors: not a directory (NotFound), cannot be listed (Io), no image (InvalidInput).
Expected<ImageDirectoryListing> listImageDirectory(const std::string& path);

// Decodes one image file to 8-bit BGR as ImageDirectorySource does (decodeImage: JPEG, PNG, BMP,
// PNM), reading it through `buffer` (reused). Before any decoder sees it, the file must be a
// regular file (not a FIFO or device) whose header (readImageHeader) gives at most `maxPixels`
// pixels. InvalidInput, naming the file, when it is not a regular file, its header cannot be read,
// it is over the limit (the message gives its size and the limit), it is in a format not read
// (TIFF, WebP) or it does not decode; NotFound when it is missing; Io when reading fails.
Expected<cv::Mat> decodeImageFile(
    const std::string& path, std::vector<unsigned char>& buffer, uint64_t maxPixels);

// The OPENCV_FFMPEG_CAPTURE_OPTIONS value that holds FFmpeg to local files: `userOptions` (the
// variable's value before, or null) with any protocol_whitelist entry of its own dropped, then
// protocol_whitelist;file (a later entry wins in FFmpeg's av_dict_parse_string anyway).
std::string localFileCaptureOptions(const char* userOptions);

// A directory of images, in natural name order. Images in subdirectories take the subdirectory's
// name as their class (the layout torchvision's ImageFolder reads), so accuracy can be measured on
// them. An image that decodeImageFile refuses (not a regular file, an unreadable header, over the
// pixel limit, corrupt) is skipped with a warning naming it and the reason, and counted; read()
// fails only when a whole pass over the directory finds no image it can decode.
class ImageDirectorySource final : public FrameSource {
public:
    static Expected<std::unique_ptr<FrameSource>> open(
        const SourceOptions& options, const std::string& path);

    const SourceInfo& info() const override { return info_; }
    Expected<ReadResult> read(Frame& frame) override;
    SourceStats stats() const override;

    // Files that could not be decoded and were skipped so far (each pass counts them again).
    uint64_t skippedFiles() const { return skipped_.load(); }

private:
    ImageDirectorySource() = default;

    SourceInfo info_;
    std::vector<ImageDirectoryListing::File> entries_;
    bool loop_ = false;
    uint64_t maxPixels_ = kDefaultMaxImagePixels;
    size_t position_ = 0;
    uint64_t next_ = 0;
    std::atomic<uint64_t> skipped_ {0}; // read by stats() on another thread
    std::vector<unsigned char> fileBuffer_; // reused for every file read
};

// True when `name` ends in an image extension (.jpg, .png, .bmp, .ppm, ...; case-insensitive): the
// formats decodeImage reads (image_codec.h), and TIFF and WebP, which it refuses by name.
bool hasImageExtension(const std::string& name);

} // namespace jetagent
