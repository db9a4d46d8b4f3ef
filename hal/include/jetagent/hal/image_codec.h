// Image files decoded and encoded without OpenCV's imgcodecs: JPEG through TurboJPEG, PNG through
// libpng, and BMP and PNM read by the project's own small readers (image_bitmap.cpp). The core
// links these two narrow libraries instead of imgcodecs, which brings GDAL, OpenEXR, gdcm, TIFF and
// JPEG 2000 into every process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "jetagent/hal/image.h"

#include "jetagent/base/status.h"

namespace jetagent {

// The formats decodeImage reads, as messages name them.
constexpr const char* kReadImageFormats = "JPEG, PNG, BMP, PBM, PGM and PPM";

// Decodes the encoded image `data` (the whole file) to an 8-bit BGR image, as OpenCV's
// imdecode(IMREAD_COLOR) did: grey expanded to BGR, alpha dropped, 16-bit samples cut to their
// high byte, and a JPEG's EXIF orientation applied. The format is told by the bytes. The size is
// read from the header (readImageHeader) and an image of more than `maxPixels` pixels is refused
// before any pixel memory is allocated. InvalidInput, with a message that names the format and what
// was wrong but not the file (the caller knows it), for an image over the limit, a format not read
// (TIFF, WebP, GIF, ...: the message lists the formats read) or data that is corrupt or cut short.
Expected<Image> decodeImage(const uint8_t* data, size_t size, uint64_t maxPixels);

// A TurboJPEG decompressor kept across frames (MJPEG cameras), so that a frame costs only the
// library's own per-picture allocations. Not thread-safe; one per capture thread.
class JpegDecoder {
public:
    JpegDecoder();
    ~JpegDecoder();
    JpegDecoder(JpegDecoder&& other) noexcept;
    JpegDecoder& operator=(JpegDecoder&& other) noexcept;
    JpegDecoder(const JpegDecoder&) = delete;
    JpegDecoder& operator=(const JpegDecoder&) = delete;

    // Decodes the JPEG `data` into `bgr` (8-bit BGR, reallocated only when its size or type
    // differs), refusing one of more than `maxPixels` pixels before allocating. The EXIF
    // orientation is applied only when `applyOrientation` (a camera's frames carry none that
    // matters; OpenCV's IMREAD_IGNORE_ORIENTATION). Recoverable damage that libjpeg only warns
    // about (extraneous bytes before a marker, common in UVC cameras' frames) decodes as it did in
    // OpenCV; with `refuseTruncated`, data that ends before the picture does is an error instead of
    // a picture filled out with grey. On an error `bgr` may hold a partial picture.
    Status decode(const uint8_t* data, size_t size, uint64_t maxPixels, Image& bgr,
        bool applyOrientation, bool refuseTruncated);

private:
    void* handle_ = nullptr; // tjhandle, created on first use
};

// Encodes an 8-bit image of 1 (grey), 3 (BGR) or 4 (BGRA) channels as PNG into `out` (replaced).
// InvalidInput for another depth or channel count; Runtime when libpng fails.
Status encodePng(const Image& image, std::vector<uint8_t>& out);

// Encodes an 8-bit grey or BGR image as a baseline JPEG of `quality` (1..100, 4:2:0 chroma) into
// `out` (replaced).
Status encodeJpeg(const Image& image, int quality, std::vector<uint8_t>& out);

// Writes `image` to `path` as PNG or JPEG (quality 95, OpenCV's default), chosen by the file name's
// extension (.png, .jpg, .jpeg; case-insensitive). InvalidInput for another extension or image
// type; Io, naming the file, when it cannot be written.
Status writeImageFile(const std::string& path, const Image& image);

} // namespace jetagent
