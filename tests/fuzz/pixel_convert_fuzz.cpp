// Fuzz target: camera frame conversion (YUYV, NV12, MJPEG, RGB3, BGR3, GREY) with arbitrary frame
// sizes, line strides and image sizes as a V4L2 driver may report them, and frame data of any
// length, as the V4L2 source feeds it.
#include <linux/videodev2.h>

#include <climits>
#include <cstdio>
#include <cstdlib>

#include "fuzz_support.h"
#include "jetagent/hal/pixel_convert.h"

namespace {

constexpr size_t kMaxFrameBytes = 256 * 1024;
// MJPEG frames are decoded up to this many pixels: the decoder fills a picture whose data is cut
// short with grey, so a big frame costs time without reaching new code.
constexpr int64_t kMaxMjpegPixels = 1024 * 1024;

using jetagent::fuzz::fail;

// A frame dimension: mostly small (so frames of fuzz size convert), sometimes anything an int
// holds, zero and negative included.
int dimension(jetagent::fuzz::ByteReader& in)
{
    switch (in.range(0, 3)) {
    case 0: return static_cast<int>(in.range(INT_MIN, INT_MAX));
    case 1: return static_cast<int>(in.range(1, 4096));
    default: return static_cast<int>(in.range(1, 64));
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace jetagent;
    if (size > kMaxFrameBytes)
        return -1;
    fuzz::ByteReader in(data, size);
    const auto& formats = PixelConverter::supportedFourccs();
    const uint32_t fourcc = formats[static_cast<size_t>(in.range(0, formats.size() - 1))];
    const int width = dimension(in);
    const int height = dimension(in);
    // bytesperline: packed (0), a few bytes of padding, or anything.
    const auto padding = static_cast<uint32_t>(in.range(0, 2));
    const uint32_t bytesPerLine = padding == 0 ? 0
        : padding == 1 ? static_cast<uint32_t>(in.range(0, 256)) + static_cast<uint32_t>(width) * 2
                       : static_cast<uint32_t>(in.range(0, UINT32_MAX));
    const size_t sizeImage = in.flag() ? 0 : static_cast<size_t>(in.range(0, UINT32_MAX));
    const std::string frame = in.rest();

    PixelConverter converter;
    if (!converter.configure(fourcc, width, height, bytesPerLine, sizeImage))
        return 0;
    if (fourcc == V4L2_PIX_FMT_MJPEG &&
        static_cast<int64_t>(width) * static_cast<int64_t>(height) > kMaxMjpegPixels)
        return 0;

    // Twice into the same destination, as the source converts frame after frame; a failure must
    // leave the destination as it was.
    Image bgr(2, 3, 3);
    bgr.fill(1, 2, 3);
    for (int pass = 0; pass < 2; ++pass) {
        const Image before = bgr;
        const Status converted =
            converter.convert(reinterpret_cast<const uint8_t*>(frame.data()), frame.size(), bgr);
        if (!converted) {
            if (bgr.data != before.data || bgr.cols != before.cols || bgr.rows != before.rows)
                fail("a failed conversion changed its destination: " + converted.message());
            continue;
        }
        if (bgr.cols != width || bgr.rows != height || bgr.channels() != 3)
            fail("a converted frame has the wrong size or type");
    }
    return 0;
}
