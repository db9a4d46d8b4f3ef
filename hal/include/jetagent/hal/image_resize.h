// Resizing of BGR frames without an image library: nearest, area and cubic, each computed as
// OpenCV 4's cv::resize computes the interpolation of the same name.
//
// Definitions, for an axis of n source samples resized to m (scale = 1 / (m / n) in double, the
// way OpenCV takes it; it matters where a product lands on an integer):
//  - Nearest: output i copies source floor(i * scale), clamped to n - 1. Equal to INTER_NEAREST
//    bit for bit.
//  - Area, when no axis is enlarged: output i is the mean of the source interval
//    [i * scale, (i + 1) * scale), each sample weighted by its overlap over the interval's width
//    (as a float; overlaps of 1/1000 of a sample or less are the scale's rounding and are left
//    out). Each source row is summed across in float, those rows are summed down in float, and the
//    result rounds to nearest, ties to even. When both scales are whole numbers the pixels are
//    summed in integers instead and multiplied once by the float 1 / (fx * fy), except 2 x 2,
//    which rounds (sum + 2) / 4 with ties up. This is INTER_AREA's arithmetic, step for step, so
//    the result equals it bit for bit where neither is compiled with fused multiply-adds (x86-64
//    without -mfma; aarch64 compilers fuse unless told -ffp-contract=off, even with -std=c++17).
//  - Area, when either axis is enlarged: two taps per axis, in 1/2048. Output pixel i spans
//    [i, i + 1) in output units; it starts in source sample floor(i * scale), and the part of it
//    past that sample's end (i + 1 - (s + 1) * m / n, taken in float) goes to the next sample:
//    the area mean where the axis is enlarged, a two-tap approximation where the other axis
//    shrinks. The last sample repeats past the image. This is what INTER_AREA does there (not
//    the centre-aligned bilinear of INTER_LINEAR, which differs from it by up to 250 levels).
//    Exact integer sums with one rounding; within one level of OpenCV, whose vertical pass
//    drops low bits in 16-bit lanes.
//  - Cubic: Keys' cubic convolution with a = -0.75 at source position (i + 0.5) * scale - 0.5,
//    over four samples, edges repeated, separable, each weight rounded to 1/2048 as OpenCV's 8-bit
//    path rounds them, exact integer sums with one rounding at the end. Within one level of
//    INTER_CUBIC (99.97% of values equal for 640x480 -> 224x224; OpenCV's vertical pass is in
//    float).
#pragma once

#include <cstdint>
#include <vector>

#include "jetagent/hal/image.h"

namespace jetagent {

enum class ResizeKind {
    Nearest, // one source pixel per output pixel; cheapest, aliases when shrinking
    Area, // the mean of the covered source pixels: the one to shrink frames with
    Cubic, // 4 x 4 source pixels per output pixel: the sharper one to enlarge with
};

// Resizes frames again and again: the per-axis tables are built on the first call and again only
// when a size or the kind changes, and the row buffers are kept, so resizing a stream of frames of
// one size into one dst allocates nothing after the first frame.
class ImageResizer {
public:
    // dst is (re)created as height x width, 3 channels, keeping its buffer when it already has that
    // size; src is 3-channel 8-bit (BGR) of any step, such as a roi view. Every side must be at
    // least 1 and src must have 3 channels (asserted: callers check sizes where they read them).
    // dst may be src itself or share its pixels; the result then goes through a new buffer.
    void run(const Image& src, Image& dst, int width, int height, ResizeKind kind);

private:
    struct Geometry {
        int srcWidth = 0, srcHeight = 0, dstWidth = 0, dstHeight = 0;
        ResizeKind kind = ResizeKind::Nearest;
        bool operator==(const Geometry& o) const
        {
            return srcWidth == o.srcWidth && srcHeight == o.srcHeight && dstWidth == o.dstWidth &&
                dstHeight == o.dstHeight && kind == o.kind;
        }
    };
    // How a geometry is computed; Area is one of three depending on the scales.
    enum class Method { Nearest, AreaWhole, AreaFractional, AreaOverlap, Cubic };

    // Each output sample of an axis reads `taps` source samples, index[i * taps + k] with weight
    // weight[i * taps + k]. Outputs that need fewer are padded with weight 0 at an index they
    // already read. Column tables hold the offset of the pixel's first value (index * 3).
    template <typename Weight>
    struct AxisTaps {
        int taps = 0;
        std::vector<int32_t> index;
        std::vector<Weight> weight;
    };

    void plan(const Geometry& g);
    static void buildAreaTaps(
        int srcSize, int dstSize, double scale, int indexScale, AxisTaps<float>& out);
    static void buildFixedPointTaps(
        int srcSize, int dstSize, double scale, int taps, int indexScale, AxisTaps<int32_t>& out);
    void runNearest(const Image& src, Image& dst) const;
    void runAreaWhole(const Image& src, Image& dst);
    void runAreaFractional(const Image& src, Image& dst);
    template <int Taps>
    void runFixedPoint(const Image& src, Image& dst);
    const float* floatRow(const Image& src, int row);
    const float* areaRow(const Image& src, int row);
    template <int Taps>
    const int32_t* fixedPointRow(const Image& src, int row);

    Geometry geometry_;
    bool planned_ = false;
    Method method_ = Method::Nearest;

    std::vector<int32_t> nearestColumns_; // byte offset of each output column's source pixel
    std::vector<int32_t> nearestRows_; // source row of each output row

    int factorX_ = 1, factorY_ = 1; // AreaWhole: source pixels per output pixel on each axis
    // AreaWhole: one output row's source rows summed down (exact below 16M pixels per output).
    std::vector<uint32_t> columnSums_;
    std::vector<uint32_t> rowTotals_; // AreaWhole: those sums summed across, per output value

    // Row buffers below have one spare value at their end (see sumAcross in the .cpp).
    std::vector<float> sourceRow_; // the source row being resized across, as float
    AxisTaps<float> columns_; // every separable method; fixed-point weights as whole floats
    AxisTaps<float> areaRows_; // AreaFractional
    std::vector<float> areaRowCache_; // two source rows resized across, rows cachedRows_[0/1]
    std::vector<float> areaSum_; // the output row being summed down
    AxisTaps<int32_t> fixedRows_; // AreaOverlap and Cubic, weights in 1/2048
    std::vector<int32_t> fixedRowCache_; // Taps source rows resized across, rows cachedRows_[k]

    int cachedRows_[4] = {-1, -1, -1, -1}; // source row held in each cache slot, -1 for none
};

// One-off resizes: each builds its tables anew (a few kilobytes of allocation per call); code that
// resizes every frame keeps an ImageResizer instead. Contract as ImageResizer::run.
void resizeNearest(const Image& src, Image& dst, int width, int height);
void resizeArea(const Image& src, Image& dst, int width, int height);
void resizeCubic(const Image& src, Image& dst, int width, int height);

} // namespace jetagent
