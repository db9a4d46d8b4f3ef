// An encoded image's format and size, read from its header before any decoder sees its pixels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "jetagent/base/status.h"

namespace jetagent {

struct ImageHeader {
    std::string format; // "PNG", "JPEG", "BMP", "PNM", "TIFF", "WebP"
    uint64_t width = 0;
    uint64_t height = 0;
    uint64_t pixels() const { return width * height; }
};

// Reads the format and the size of the image whose encoded bytes are `data` (the whole file: a
// JPEG's frame header and a TIFF's first directory can sit anywhere in it). The formats are the
// ones an image directory holds: PNG, JPEG (baseline, progressive, lossless and arithmetic frames),
// BMP, PNM (P1 to P6: PBM, PGM, PPM), TIFF (classic, first directory) and WebP (lossy, lossless,
// extended). The format is told by the bytes, not the file name, as OpenCV's decoders choose
// themselves. InvalidInput for anything else, a truncated or inconsistent header, or a zero size;
// the message says which, without naming the file (the caller knows it).
Expected<ImageHeader> readImageHeader(const uint8_t* data, size_t size);

} // namespace jetagent
