// Directories of images read as a frame source. File sources read local files only and never open
// the network; video files are read by VideoFileSource (video_file_source.h).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "jetagent/base/text.h"
#include "jetagent/hal/frame_source.h"

namespace jetagent {

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
Expected<Image> decodeImageFile(
    const std::string& path, std::vector<unsigned char>& buffer, uint64_t maxPixels);

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
