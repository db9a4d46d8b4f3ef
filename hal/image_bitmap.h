// The uncompressed image formats read by the project's own code rather than a library: BMP and
// PNM. Private to hal; decodeImage (image_codec.h) is the way in.
#pragma once

#include <cstddef>
#include <cstdint>

#include "jetagent/base/status.h"
#include "jetagent/hal/image.h"
#include "jetagent/hal/image_header.h"

namespace jetagent {

// Decodes a BMP whose header readImageHeader read as `header` (its size already held to the
// caller's pixel limit) to 8-bit BGR: 1-, 4- and 8-bit paletted, 16-bit (5-5-5 or bit fields),
// 24-bit and 32-bit (alpha or the unused byte dropped) pixels, rows bottom-up or top-down, and
// OS/2's core header. RLE-compressed and embedded JPEG or PNG bitmaps are refused (InvalidInput).
Expected<Image> decodeBmpImage(const uint8_t* data, size_t size, const ImageHeader& header);

// Decodes a PNM (P1..P6: PBM, PGM, PPM, plain or raw, samples up to 16 bits) to 8-bit BGR; samples
// are scaled from the file's maximum value to 255 (16-bit ones by their high byte when the maximum
// is 65535).
Expected<Image> decodePnmImage(const uint8_t* data, size_t size, const ImageHeader& header);

} // namespace jetagent
