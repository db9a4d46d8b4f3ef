// Conversion of camera pixel formats to the pipeline's 8-bit BGR frames, into a reused buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "jetagent/base/status.h"
#include "jetagent/hal/image.h"
#include "jetagent/hal/image_codec.h"

namespace jetagent {

// The V4L2 fourcc of a format ("YUYV" -> V4L2_PIX_FMT_YUYV); 0 when `name` is not four
// characters.
uint32_t fourccFromName(const std::string& name);
// "YUYV" for V4L2_PIX_FMT_YUYV; characters outside printable ASCII become '?'.
std::string fourccName(uint32_t fourcc);

// Converts frames of one negotiated format. configure() once per format change, then convert()
// per frame: the destination is (re)allocated only when its size or type is wrong, so steady-state
// conversion of uncompressed formats allocates nothing.
class PixelConverter {
public:
    // The fourccs convert() understands, in the order `format: auto` prefers them.
    static const std::vector<uint32_t>& supportedFourccs();
    static bool supports(uint32_t fourcc);

    // Checks and stores the layout: `bytesPerLine` as the driver reported it (0 = packed), the
    // driver's `sizeImage` for the buffer (0 = computed). InvalidInput for an unsupported fourcc
    // or an inconsistent layout (odd width for YUYV/NV12, a line shorter than the width needs).
    Status configure(
        uint32_t fourcc, int width, int height, uint32_t bytesPerLine, size_t sizeImage);

    // Converts one frame of `bytesUsed` bytes into `bgr` (8-bit, 3 channels, width x height).
    // Io error for a short buffer or an undecodable MJPEG frame, naming the sizes; `bgr` is then
    // left as it was.
    Status convert(const uint8_t* data, size_t bytesUsed, Image& bgr);

    uint32_t fourcc() const { return fourcc_; }
    // Bytes an uncompressed frame needs; 0 for MJPEG.
    size_t frameBytes() const { return frameBytes_; }

private:
    uint32_t fourcc_ = 0;
    int width_ = 0;
    int height_ = 0;
    size_t stride_ = 0;
    size_t frameBytes_ = 0;
    JpegDecoder jpeg_; // MJPEG frames' decompressor, kept across frames
    Image scratch_; // MJPEG's decoded frame, copied into the destination only on success
};

} // namespace jetagent
