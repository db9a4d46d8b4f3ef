// Directories of images read as a frame source (video files: video_file_source.cpp).
#include "jetagent/hal/file_sources.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

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

Expected<Image> decodeImageFile(
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
