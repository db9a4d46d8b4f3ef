// Sources read from disk: video files through OpenCV videoio, and directories of images.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <opencv2/videoio.hpp>

#include "jetagent/hal/frame_source.h"
#include "jetagent/hal/natural_order.h"

namespace jetagent {

class VideoFileSource final : public FrameSource {
public:
    // Opens `path` and decodes its first frame, so an unreadable file fails here rather than
    // mid-run.
    static Expected<std::unique_ptr<FrameSource>> open(
        const SourceOptions& options, const std::string& path);

    const SourceInfo& info() const override { return info_; }
    Expected<ReadResult> read(Frame& frame) override;

private:
    VideoFileSource() = default;
    Status reopen();

    SourceInfo info_;
    std::string path_;
    bool loop_ = false;
    cv::VideoCapture capture_;
    cv::Mat first_; // the frame decoded by open(), delivered by the first read()
    bool haveFirst_ = false;
    uint64_t next_ = 0;
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

// Decodes one image file to 8-bit BGR as ImageDirectorySource does, reading it through `buffer`
// (reused); an empty Mat when the file cannot be read or decoded.
cv::Mat decodeImageFile(const std::string& path, std::vector<unsigned char>& buffer);

// A directory of images, in natural name order. Images in subdirectories take the subdirectory's
// name as their class (the layout torchvision's ImageFolder reads), so accuracy can be measured on
// them.
class ImageDirectorySource final : public FrameSource {
public:
    static Expected<std::unique_ptr<FrameSource>> open(
        const SourceOptions& options, const std::string& path);

    const SourceInfo& info() const override { return info_; }
    Expected<ReadResult> read(Frame& frame) override;

    // Files that could not be decoded and were skipped so far.
    uint64_t skippedFiles() const { return skipped_; }

private:
    ImageDirectorySource() = default;

    SourceInfo info_;
    std::vector<ImageDirectoryListing::File> entries_;
    bool loop_ = false;
    size_t position_ = 0;
    uint64_t next_ = 0;
    uint64_t skipped_ = 0;
    std::vector<unsigned char> fileBuffer_; // reused for every file read
};

// True when `name` ends in an image extension OpenCV decodes (.jpg, .png, .bmp, ...),
// case-insensitive.
bool hasImageExtension(const std::string& name);

} // namespace jetagent
