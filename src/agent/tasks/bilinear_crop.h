// Bilinear resize, centre crop and normalisation in one pass, computing only the pixels the crop
// keeps.
//
// The kernel is the exact fixed-point bilinear OpenCV defines as INTER_LINEAR_EXACT (pixel centres
// aligned: source x = (x + 0.5) * src / dst - 0.5; weights in 1/256, rounded half to even; edges
// repeat the border pixel; one rounding at the end), so its output is the same on every CPU and
// equals cv::resize(..., INTER_LINEAR_EXACT) followed by the crop, bit for bit. OpenCV's plain
// INTER_LINEAR rounds its weights to 1/2048 and its intermediate sums differently per SIMD width,
// so it differs from this by at most one grey level, and between builds.
//
// Every output value is the 2-D sum of weight products, so the two passes can go in either order
// without changing a bit. The resizer blends two source rows first (vectorised, over just the
// columns the crop needs) and then the columns, and normalises in float32 exactly as
// ((float)v / divisor - mean) / std.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "jetagent/base/status.h"
#include "jetagent/hal/image.h"
#include "tasks/stripe_pool.h"

namespace jetagent {

// One output coordinate: the first of the two source samples it blends and their weights in 1/256
// (w0 + w1 == 256). Outputs past either edge take the border sample with weight 256.
struct LinearTap {
    int32_t first = 0;
    int16_t w0 = 256;
    int16_t w1 = 0;
};

// The tap of output `index` when `sourceSize` samples are resized to `resizedSize`.
LinearTap linearTap(int sourceSize, int resizedSize, int index);

// Normalisation per output channel, and which BGR channel feeds it.
struct ChannelMap {
    std::array<int, 3> sourceChannel {2, 1, 0};
    float divisor = 255.0f;
    std::array<float, 3> mean {};
    std::array<float, 3> std {1.0f, 1.0f, 1.0f};
};

// Output channel c's value for an 8-bit sample: ((float)v / divisor - mean) / std in float32, the
// one formula every preprocessing path uses (the bilinear kernel's vector loop does the same
// operations four lanes at a time).
inline float normalisedValue(int32_t value, const ChannelMap& m, size_t c)
{
    return (static_cast<float>(value) / m.divisor - m.mean[c]) / m.std[c];
}

class BilinearCrop {
public:
    // Stripes run on the process's StripePool, or on `pool` (which must outlive this).
    BilinearCrop() = default;
    explicit BilinearCrop(StripePool& pool) : pool_(&pool) { }

    // Writes the crop (cropX, cropY, cropWidth x cropHeight) of the frame resized to resizedWidth x
    // resizedHeight as three float planes, plane c at out + c * channelStride. Taps are computed
    // again only when the frame size or the geometry changes; buffers are kept, so a steady stream
    // of frames allocates nothing. Large crops are split into row stripes run on the stripe pool.
    // InvalidInput, with nothing written, for an empty frame or crop, a side above kMaxSide, or a
    // crop that is not inside the resized frame.
    Status run(const Image& bgr, int resizedWidth, int resizedHeight, int cropX, int cropY,
        int cropWidth, int cropHeight, const ChannelMap& channels, float* out,
        size_t channelStride);

    // Rows of this many output pixels or more are split into stripes (one per pool thread).
    static constexpr int kPixelsPerStripe = 16384;
    // The largest side of a frame, a resized frame or a crop (1M pixels): far above any camera's or
    // model's, and small enough that no tap, offset or buffer size overflows.
    static constexpr int kMaxSide = 1 << 20;

    // Whether a frame of frameWidth x frameHeight, resized to resizedWidth x resizedHeight, has the
    // crop (cropX, cropY, cropWidth x cropHeight) inside it, every side 1 to kMaxSide: the
    // geometry run() accepts. InvalidInput saying which size is wrong otherwise.
    static Status checkGeometry(int frameWidth, int frameHeight, int resizedWidth,
        int resizedHeight, int cropX, int cropY, int cropWidth, int cropHeight);

private:
    struct Geometry {
        int frameWidth = 0, frameHeight = 0, resizedWidth = 0, resizedHeight = 0;
        int cropX = 0, cropY = 0, cropWidth = 0, cropHeight = 0;
        bool operator==(const Geometry& o) const
        {
            return frameWidth == o.frameWidth && frameHeight == o.frameHeight &&
                resizedWidth == o.resizedWidth && resizedHeight == o.resizedHeight &&
                cropX == o.cropX && cropY == o.cropY && cropWidth == o.cropWidth &&
                cropHeight == o.cropHeight;
        }
    };

    void plan(const Geometry& g);
    void runRows(const Image& bgr, int rowBegin, int rowEnd, int16_t* scratch,
        const ChannelMap& channels, float* out, size_t channelStride) const;

    Geometry geometry_;
    std::vector<LinearTap> rows_; // one per crop row, source rows
    std::vector<int32_t> columnOffset_; // one per crop column, relative to firstColumn_
    std::vector<int16_t> columnWeights_; // w0, w1 per crop column
    int firstColumn_ = 0; // first source column read
    int span_ = 0; // source columns read per row
    size_t scratchPlane_ = 0; // int16 elements per channel of one stripe's row buffer
    std::vector<int16_t> scratch_; // per stripe: 3 planes of a row blended vertically
    int maxStripes_ = 1;
    StripePool* pool_ = nullptr; // null: StripePool::shared()
};

} // namespace jetagent
