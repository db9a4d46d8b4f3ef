// Exact bilinear resize-and-crop into normalised float planes (see bilinear_crop.h).
//
// Arithmetic, per output value: the vertical pass blends two source rows into
//   v = p0 * wy0 + p1 * wy1            (0 .. 255 * 256 = 65280, exact in uint16)
// kept as v - 32768 in int16 so that the column pass can use a signed 16-bit dot product:
//   d = (v0 - 32768) * wx0 + (v1 - 32768) * wx1 = v0 * wx0 + v1 * wx1 - 32768 * 256
// (|d| < 2^24, exact in int32), and the 8-bit result is
//   u = (v0 * wx0 + v1 * wx1 + 32768) >> 16 = (d + 8388608 + 32768) >> 16,
// the single rounding of the 2-D sum. This file is compiled with floating-point contraction off, so
// the taps' double arithmetic rounds after each operation as OpenCV's software doubles do.
#include "tasks/bilinear_crop.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>

#include <opencv2/core/hal/intrin.hpp>

namespace jetagent {

namespace {

constexpr int32_t kRoundAndUnbias = 8388608 + 32768;

} // namespace

LinearTap linearTap(int sourceSize, int resizedSize, int index)
{
    assert(sourceSize > 0 && resizedSize > 0);
    const double inverseScale = static_cast<double>(resizedSize) / sourceSize;
    const double scale = 1.0 / inverseScale;
    const double product = scale * (static_cast<double>(index) + 0.5);
    const double position = product - 0.5;
    const double floorPosition = std::floor(position);
    const int whole = static_cast<int>(floorPosition);
    LinearTap tap;
    if (whole < 0 || sourceSize == 1)
        return tap; // left of the first sample's centre: the first sample
    if (whole >= sourceSize - 1) {
        tap.first = sourceSize - 1; // right of the last sample's centre: the last sample
        return tap;
    }
    // The fraction times 256 is exact; std::nearbyint rounds half to even.
    const int w1 = static_cast<int>(std::nearbyint((position - floorPosition) * 256.0));
    tap.first = whole;
    tap.w1 = static_cast<int16_t>(w1);
    tap.w0 = static_cast<int16_t>(256 - w1);
    return tap;
}

Status BilinearCrop::checkGeometry(int frameWidth, int frameHeight, int resizedWidth,
    int resizedHeight, int cropX, int cropY, int cropWidth, int cropHeight)
{
    auto side = [](int v) { return v >= 1 && v <= kMaxSide; };
    auto size = [](int w, int h) { return std::to_string(w) + "x" + std::to_string(h); };
    if (!side(frameWidth) || !side(frameHeight))
        return Status::invalid("the frame is " + size(frameWidth, frameHeight) +
            "; each side must be 1 to " + std::to_string(kMaxSide) + " pixels");
    if (!side(resizedWidth) || !side(resizedHeight) || !side(cropWidth) || !side(cropHeight))
        return Status::invalid("the frame " + size(frameWidth, frameHeight) + " resized to " +
            size(resizedWidth, resizedHeight) + " and cropped to " + size(cropWidth, cropHeight) +
            ": each side must be 1 to " + std::to_string(kMaxSide) + " pixels");
    if (cropX < 0 || cropY < 0 || cropX > resizedWidth - cropWidth ||
        cropY > resizedHeight - cropHeight)
        return Status::invalid("the crop " + size(cropWidth, cropHeight) + " at " +
            std::to_string(cropX) + "," + std::to_string(cropY) + " is not inside the frame " +
            "resized to " + size(resizedWidth, resizedHeight));
    return Status();
}

void BilinearCrop::plan(const Geometry& g)
{
    geometry_ = g;
    rows_.resize(static_cast<size_t>(g.cropHeight));
    for (int y = 0; y < g.cropHeight; ++y)
        rows_[static_cast<size_t>(y)] = linearTap(g.frameHeight, g.resizedHeight, g.cropY + y);

    std::vector<LinearTap> columns(static_cast<size_t>(g.cropWidth));
    for (int x = 0; x < g.cropWidth; ++x)
        columns[static_cast<size_t>(x)] = linearTap(g.frameWidth, g.resizedWidth, g.cropX + x);
    // Taps are monotonic: the first column's is the leftmost, the last column's the rightmost.
    firstColumn_ = columns.front().first;
    span_ = std::min(columns.back().first + 2, g.frameWidth) - firstColumn_;
    columnOffset_.resize(columns.size());
    columnWeights_.resize(2 * columns.size());
    for (size_t x = 0; x < columns.size(); ++x) {
        columnOffset_[x] = columns[x].first - firstColumn_;
        columnWeights_[2 * x] = columns[x].w0;
        columnWeights_[2 * x + 1] = columns[x].w1;
    }

    const int64_t pixels = static_cast<int64_t>(g.cropWidth) * g.cropHeight;
    maxStripes_ = static_cast<int>(
        std::clamp<int64_t>(pixels / kPixelsPerStripe, 1, std::min(16, g.cropHeight)));
    // One element past the span: an edge column reads its (weight 0) neighbour there.
    scratchPlane_ = static_cast<size_t>(span_) + 1;
    scratch_.assign(3 * scratchPlane_ * static_cast<size_t>(maxStripes_), 0);
}

void BilinearCrop::runRows(const Image& bgr, int rowBegin, int rowEnd, int16_t* scratch,
    const ChannelMap& channels, float* out, size_t channelStride) const
{
    const int width = geometry_.cropWidth;
    const int span = span_;
    int16_t* planes[3] = {scratch, scratch + scratchPlane_, scratch + 2 * scratchPlane_};
    for (int y = rowBegin; y < rowEnd; ++y) {
        const LinearTap& tap = rows_[static_cast<size_t>(y)];
        const uint8_t* r0 = bgr.ptr(tap.first) + 3 * firstColumn_;
        const uint8_t* r1 = tap.w1 != 0 ? bgr.ptr(tap.first + 1) + 3 * firstColumn_ : r0;
        const auto w0 = static_cast<uint16_t>(tap.w0);
        const auto w1 = static_cast<uint16_t>(tap.w1);

        // Rows: v - 32768 per source column and channel, planar.
        int k = 0;
#if CV_SIMD128
        const cv::v_uint16x8 vw0 = cv::v_setall_u16(w0), vw1 = cv::v_setall_u16(w1);
        const cv::v_uint16x8 bias = cv::v_setall_u16(32768);
        auto blend = [&](const cv::v_uint8x16& a, const cv::v_uint8x16& b, int16_t* dst) {
            cv::v_uint16x8 aLow, aHigh, bLow, bHigh;
            cv::v_expand(a, aLow, aHigh);
            cv::v_expand(b, bLow, bHigh);
            const cv::v_uint16x8 low =
                cv::v_add_wrap(cv::v_mul_wrap(aLow, vw0), cv::v_mul_wrap(bLow, vw1));
            const cv::v_uint16x8 high =
                cv::v_add_wrap(cv::v_mul_wrap(aHigh, vw0), cv::v_mul_wrap(bHigh, vw1));
            cv::v_store(dst, cv::v_reinterpret_as_s16(cv::v_sub_wrap(low, bias)));
            cv::v_store(dst + 8, cv::v_reinterpret_as_s16(cv::v_sub_wrap(high, bias)));
        };
        for (; k + 16 <= span; k += 16) {
            cv::v_uint8x16 b0, g0, c0, b1, g1, c1;
            cv::v_load_deinterleave(r0 + 3 * k, b0, g0, c0);
            cv::v_load_deinterleave(r1 + 3 * k, b1, g1, c1);
            blend(b0, b1, planes[0] + k);
            blend(g0, g1, planes[1] + k);
            blend(c0, c1, planes[2] + k);
        }
#endif
        for (; k < span; ++k)
            for (int c = 0; c < 3; ++c)
                planes[c][k] =
                    static_cast<int16_t>(r0[3 * k + c] * w0 + r1[3 * k + c] * w1 - 32768);

        // Columns, then normalisation, per output channel.
        for (int c = 0; c < 3; ++c) {
            const int16_t* v = planes[channels.sourceChannel[static_cast<size_t>(c)]];
            float* dst = out + static_cast<size_t>(c) * channelStride +
                static_cast<size_t>(y) * static_cast<size_t>(width);
            int x = 0;
#if CV_SIMD128
            const cv::v_int32x4 round = cv::v_setall_s32(kRoundAndUnbias);
            const cv::v_float32x4 vDivisor = cv::v_setall_f32(channels.divisor);
            const cv::v_float32x4 vMean = cv::v_setall_f32(channels.mean[static_cast<size_t>(c)]);
            const cv::v_float32x4 vStd = cv::v_setall_f32(channels.std[static_cast<size_t>(c)]);
            for (; x + 4 <= width; x += 4) {
                const int32_t* offsets = columnOffset_.data() + x;
                int32_t pairs[4]; // (v0, v1) of four outputs, each two adjacent int16
                for (int j = 0; j < 4; ++j)
                    std::memcpy(&pairs[j], v + offsets[j], 4);
                const cv::v_int16x8 samples = cv::v_reinterpret_as_s16(cv::v_load(pairs));
                const cv::v_int16x8 weights =
                    cv::v_load(&columnWeights_[2 * static_cast<size_t>(x)]);
                const cv::v_int32x4 value = cv::v_shr<16>(cv::v_dotprod(samples, weights) + round);
                cv::v_store(dst + x, (cv::v_cvt_f32(value) / vDivisor - vMean) / vStd);
            }
#endif
            for (; x < width; ++x) {
                const int16_t* s = v + columnOffset_[static_cast<size_t>(x)];
                const int32_t d = s[0] * columnWeights_[2 * static_cast<size_t>(x)] +
                    s[1] * columnWeights_[2 * static_cast<size_t>(x) + 1];
                dst[x] =
                    normalisedValue((d + kRoundAndUnbias) >> 16, channels, static_cast<size_t>(c));
            }
        }
    }
}

Status BilinearCrop::run(const Image& bgr, int resizedWidth, int resizedHeight, int cropX,
    int cropY, int cropWidth, int cropHeight, const ChannelMap& channels, float* out,
    size_t channelStride)
{
    assert(bgr.channels() == 3);
    const Geometry g {
        bgr.cols, bgr.rows, resizedWidth, resizedHeight, cropX, cropY, cropWidth, cropHeight};
    if (!(g == geometry_)) { // the default geometry has no crop, so the first frame plans too
        if (Status s = checkGeometry(g.frameWidth, g.frameHeight, g.resizedWidth, g.resizedHeight,
                g.cropX, g.cropY, g.cropWidth, g.cropHeight);
            !s)
            return s;
        plan(g);
    }
    if (maxStripes_ == 1) {
        runRows(bgr, 0, cropHeight, scratch_.data(), channels, out, channelStride);
        return Status();
    }
    StripePool& pool = pool_ != nullptr ? *pool_ : StripePool::shared();
    const int stripes = std::min(maxStripes_, pool.threads());
    auto stripe = [&](int s) {
        int16_t* scratch = scratch_.data() + static_cast<size_t>(s) * 3 * scratchPlane_;
        runRows(bgr, cropHeight * s / stripes, cropHeight * (s + 1) / stripes, scratch, channels,
            out, channelStride);
    };
    pool.run(stripes, stripe);
    return Status();
}

} // namespace jetagent
