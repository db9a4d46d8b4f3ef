// Nearest, area and cubic resizing of BGR frames (see image_resize.h).
//
// Every method but nearest is separable and runs rows first: each source row an output row needs
// is converted to float and resized across once, into a small cache keyed by source row, and the
// cached rows are then combined down. The area sums keep OpenCV's order of float operations
// exactly, which is what makes them bit-exact; the fixed-point paths (area when enlarging, cubic)
// compute exact integer sums of 11-bit weights with a single rounding, so their order is free.
// The inner loops are plain C++ written for the vectoriser: contiguous rows, and a pixel summed as
// 4 float lanes. GCC's -O2 cost model vectorises only the latter (the row loops need a scalar
// remainder), which makes the whole about 5x slower than at -O3 or with clang -O2: build this
// file with -O3, as the engines' kernels are.
#include "jetagent/hal/image_resize.h"

#include <algorithm>
#include <cassert>
#include <cfloat>
#include <cmath>
#include <cstring>

namespace jetagent {

namespace {

constexpr int kChannels = 3;
// Fixed-point weights: 11 fraction bits, so a row sum (255 * 2048 * 1.19 at most for cubic) times
// a column weight, summed over four taps, stays below 2^31.
constexpr int kWeightBits = 11;
constexpr int32_t kWeightOne = 1 << kWeightBits;
constexpr int kProductShift = 2 * kWeightBits;
constexpr int32_t kProductHalf = 1 << (kProductShift - 1);
// Keys' free parameter, as OpenCV (and most libraries since Keys 1981) choose it.
constexpr double kCubicA = -0.75;
// A partial overlap this small is the scale's rounding error, not a sample the interval covers.
constexpr double kNegligibleOverlap = 1e-3;
// 1.5 * 2^23: a float of this size has no fraction bits, so adding it and taking it away rounds to
// nearest, ties to even (the default rounding mode) for |v| < 2^22; unlike std::lrint, loops over
// it vectorise.
constexpr float kRoundingMagic = 12582912.0f;

inline uint8_t roundToByte(float value)
{
    const float rounded = (value + kRoundingMagic) - kRoundingMagic;
    return static_cast<uint8_t>(std::clamp(static_cast<int>(rounded), 0, 255));
}

inline size_t toSize(int value)
{
    return static_cast<size_t>(value);
}

// Source samples per output sample, taken as OpenCV takes it: the inverse of dst / src.
double axisScale(int srcSize, int dstSize)
{
    return 1.0 / (static_cast<double>(dstSize) / static_cast<double>(srcSize));
}

// The scale as a whole number, or 0 when it is not one. "Whole" allows no more than DBL_EPSILON
// of error, so a shrink by 49 (whose 1 / (1 / 49) is 49 + 7e-15) is a fractional one.
int wholeFactor(double scale)
{
    const double nearest = std::nearbyint(scale);
    return std::fabs(scale - nearest) < DBL_EPSILON ? static_cast<int>(nearest) : 0;
}

void nearestTable(int srcSize, int dstSize, int indexScale, std::vector<int32_t>& out)
{
    const double scale = axisScale(srcSize, dstSize);
    out.resize(toSize(dstSize));
    for (int i = 0; i < dstSize; ++i) {
        const int source = static_cast<int>(std::floor(i * scale));
        out[toSize(i)] = std::min(source, srcSize - 1) * indexScale;
    }
}

// Calls visit(sample, weight) for each source sample that output i's interval
// [i * scale, (i + 1) * scale) covers, in order, weight = overlap / interval width (scale >= 1).
template <typename Visit>
void forEachOverlap(int srcSize, double scale, int i, Visit visit)
{
    const double begin = i * scale;
    const double end = begin + scale;
    // The last interval may end past the image by the scale's rounding: the mean is over the part
    // inside.
    const double width = std::min(scale, srcSize - begin);
    for (int s = static_cast<int>(begin); s < srcSize && s < end; ++s) {
        const double overlap = std::min(s + 1.0, end) - std::max(static_cast<double>(s), begin);
        if (overlap > kNegligibleOverlap)
            visit(s, static_cast<float>(overlap / width));
    }
}

// Output i's two area weights in 1/2048 when an axis is enlarged, and its first source sample.
// Output pixel i spans [i, i + 1) in output units and source sample s spans
// [s * m / n, (s + 1) * m / n); the pixel starts in sample floor(i * scale), and the part of it
// past that sample's end belongs to the next sample. That part is rounded to float before its
// whole units are dropped, as INTER_AREA does: where it comes within float precision of 1 the
// pixel takes the first sample alone. Where an axis shrinks in the same resize the same two
// weights are used, which makes that axis a two-tap approximation (INTER_AREA's too).
int overlapWeights(int srcSize, int dstSize, int i, int32_t* weight)
{
    const int first = static_cast<int>(std::floor(i * axisScale(srcSize, dstSize)));
    const double inverseScale = static_cast<double>(dstSize) / static_cast<double>(srcSize);
    const auto past = static_cast<float>((i + 1.0) - (first + 1.0) * inverseScale);
    const float fraction = past <= 0.0f ? 0.0f : past - std::floor(past);
    const auto next = static_cast<int32_t>(std::lrint(fraction * kWeightOne));
    const bool edge = first >= srcSize - 1; // the last sample repeats past the image
    weight[0] = edge ? kWeightOne : kWeightOne - next;
    weight[1] = edge ? 0 : next;
    return std::min(first, srcSize - 1);
}

// Output i's cubic weights in 1/2048 (Keys, a = -0.75) at source position (i + 0.5) * scale - 0.5,
// and its first source sample (which may lie before the image; the caller clamps).
int cubicWeights(double scale, int i, int32_t* weight)
{
    const double position = (i + 0.5) * scale - 0.5;
    const double whole = std::floor(position);
    const double fraction = position - whole;
    auto keys = [](double x) {
        x = std::fabs(x);
        if (x <= 1.0)
            return ((kCubicA + 2.0) * x - (kCubicA + 3.0)) * x * x + 1.0;
        if (x < 2.0)
            return ((kCubicA * x - 5.0 * kCubicA) * x + 8.0 * kCubicA) * x - 4.0 * kCubicA;
        return 0.0;
    };
    // Each weight is rounded on its own, as OpenCV's are; their sum may miss 2048 by up to 2 on
    // each axis, which moves a flat image by under half a level, so it stays flat.
    for (int k = 0; k < 4; ++k)
        weight[k] = static_cast<int32_t>(std::lrint(keys(fraction + 1.0 - k) * kWeightOne));
    return static_cast<int>(whole) - 1;
}

// Resizes one source row across: out[3 * x + c] = sum over k of in[offsets[x * taps + k] + c] *
// weights[x * taps + k], summed in k order in float, stored as Out. `in` is the row converted to
// float with one spare value at its end, so each pixel is read as 4 lanes (the 4th, the next
// pixel's blue, is discarded) and the compiler can keep it in one vector register; the 4th lane
// lands on the next column's first value before that is written, or on the spare value at the
// end of `out`. For the fixed-point weights (whole numbers of at most 2048, positive ones summing
// to at most 2432) every product and partial sum is below 2^24, so float computes them exactly.
// Taps is the number of taps per column when known at compile time, so that the compiler unrolls
// the tap loop and keeps the 4 lanes in one register; 0 reads it from `taps`.
template <int Taps, typename Out>
void sumAcross(const float* in, const int32_t* offsets, const float* weights, size_t taps,
    int outputs, Out* out)
{
    const size_t n = Taps > 0 ? toSize(Taps) : taps;
    for (int x = 0; x < outputs; ++x) {
        const int32_t* offset = offsets + toSize(x) * n;
        const float* weight = weights + toSize(x) * n;
        float sum[4] = {};
        for (size_t k = 0; k < n; ++k) {
            const float* pixel = in + offset[k];
            for (int c = 0; c < 4; ++c)
                sum[c] += pixel[c] * weight[k];
        }
        Out lanes[4];
        for (int c = 0; c < 4; ++c)
            lanes[c] = static_cast<Out>(sum[c]);
        std::memcpy(out + kChannels * x, lanes, sizeof lanes);
    }
}

// sumAcross with the tap count as a constant for the counts shrinking by up to 7 gives.
template <typename Out>
void sumAcrossTaps(const float* in, const int32_t* offsets, const float* weights, size_t taps,
    int outputs, Out* out)
{
    switch (taps) {
    case 1: sumAcross<1>(in, offsets, weights, taps, outputs, out); break;
    case 2: sumAcross<2>(in, offsets, weights, taps, outputs, out); break;
    case 3: sumAcross<3>(in, offsets, weights, taps, outputs, out); break;
    case 4: sumAcross<4>(in, offsets, weights, taps, outputs, out); break;
    case 5: sumAcross<5>(in, offsets, weights, taps, outputs, out); break;
    case 6: sumAcross<6>(in, offsets, weights, taps, outputs, out); break;
    case 7: sumAcross<7>(in, offsets, weights, taps, outputs, out); break;
    case 8: sumAcross<8>(in, offsets, weights, taps, outputs, out); break;
    default: sumAcross<0>(in, offsets, weights, taps, outputs, out); break;
    }
}

// Sums each run of Factor adjacent pixels of `sums` (3 values each, one spare value at the end):
// totals[3 * x + c] = sum over j of sums[3 * (x * Factor + j) + c], 4 lanes a pixel as sumAcross
// does. Factor 0 reads it from `factor`.
template <int Factor>
void sumPixels(const uint32_t* sums, int factor, int outputs, uint32_t* totals)
{
    const size_t n = Factor > 0 ? toSize(Factor) : toSize(factor);
    for (int x = 0; x < outputs; ++x) {
        uint32_t total[4] = {};
        for (size_t j = 0; j < n; ++j) {
            const uint32_t* pixel = sums + (toSize(x) * n + j) * kChannels;
            for (int c = 0; c < 4; ++c)
                total[c] += pixel[c];
        }
        std::memcpy(totals + kChannels * x, total, sizeof total);
    }
}

} // namespace

void ImageResizer::run(const Image& src, Image& dst, int width, int height, ResizeKind kind)
{
    assert(!src.empty() && src.channels() == kChannels && width >= 1 && height >= 1);
    if (dst.sharesPixelsWith(src) || (dst.data != nullptr && dst.data == src.data)) {
        Image resized;
        run(src, resized, width, height, kind);
        dst = resized;
        return;
    }
    dst.create(height, width, kChannels);
    if (width == src.cols && height == src.rows) {
        // Every method reduces to a copy (OpenCV copies too).
        for (int y = 0; y < height; ++y)
            std::memcpy(dst.ptr(y), src.ptr(y), dst.rowBytes());
        return;
    }
    const Geometry g {src.cols, src.rows, width, height, kind};
    if (!planned_ || !(g == geometry_))
        plan(g);
    std::fill(std::begin(cachedRows_), std::end(cachedRows_), -1); // a new frame
    switch (method_) {
    case Method::Nearest: runNearest(src, dst); break;
    case Method::AreaWhole: runAreaWhole(src, dst); break;
    case Method::AreaFractional: runAreaFractional(src, dst); break;
    case Method::AreaOverlap: runFixedPoint<2>(src, dst); break;
    case Method::Cubic: runFixedPoint<4>(src, dst); break;
    }
}

void ImageResizer::plan(const Geometry& g)
{
    geometry_ = g;
    planned_ = true;
    const double scaleX = axisScale(g.srcWidth, g.dstWidth);
    const double scaleY = axisScale(g.srcHeight, g.dstHeight);
    // Every row buffer has one spare value at its end for the 4th lane of its last pixel.
    const size_t sourceValues = toSize(g.srcWidth) * kChannels + 1;
    const size_t rowValues = toSize(g.dstWidth) * kChannels + 1;

    if (g.kind == ResizeKind::Nearest) {
        method_ = Method::Nearest;
        nearestTable(g.srcWidth, g.dstWidth, kChannels, nearestColumns_);
        nearestTable(g.srcHeight, g.dstHeight, 1, nearestRows_);
        return;
    }
    if (g.kind == ResizeKind::Area && scaleX >= 1.0 && scaleY >= 1.0) {
        factorX_ = wholeFactor(scaleX);
        factorY_ = wholeFactor(scaleY);
        if (factorX_ > 0 && factorY_ > 0) {
            assert(factorX_ * g.dstWidth == g.srcWidth && factorY_ * g.dstHeight == g.srcHeight);
            method_ = Method::AreaWhole;
            columnSums_.assign(sourceValues, 0);
            rowTotals_.resize(rowValues);
            return;
        }
        method_ = Method::AreaFractional;
        buildAreaTaps(g.srcWidth, g.dstWidth, scaleX, kChannels, columns_);
        buildAreaTaps(g.srcHeight, g.dstHeight, scaleY, 1, areaRows_);
        sourceRow_.assign(sourceValues, 0.0f);
        areaRowCache_.resize(2 * rowValues);
        areaSum_.resize(rowValues);
        return;
    }
    const int taps = g.kind == ResizeKind::Cubic ? 4 : 2;
    method_ = taps == 4 ? Method::Cubic : Method::AreaOverlap;
    AxisTaps<int32_t> columns;
    buildFixedPointTaps(g.srcWidth, g.dstWidth, scaleX, taps, kChannels, columns);
    columns_.taps = columns.taps;
    columns_.index = columns.index;
    columns_.weight.assign(columns.weight.begin(), columns.weight.end());
    buildFixedPointTaps(g.srcHeight, g.dstHeight, scaleY, taps, 1, fixedRows_);
    sourceRow_.assign(sourceValues, 0.0f);
    fixedRowCache_.resize(toSize(taps) * rowValues);
}

void ImageResizer::buildAreaTaps(
    int srcSize, int dstSize, double scale, int indexScale, AxisTaps<float>& out)
{
    int taps = 0;
    for (int i = 0; i < dstSize; ++i) {
        int count = 0;
        forEachOverlap(srcSize, scale, i, [&count](int, float) { ++count; });
        taps = std::max(taps, count);
    }
    out.taps = taps;
    out.index.resize(toSize(dstSize) * toSize(taps));
    out.weight.resize(out.index.size());
    for (int i = 0; i < dstSize; ++i) {
        int32_t* index = &out.index[toSize(i) * toSize(taps)];
        float* weight = &out.weight[toSize(i) * toSize(taps)];
        int k = 0;
        forEachOverlap(srcSize, scale, i, [&](int sample, float w) {
            index[k] = sample * indexScale;
            weight[k++] = w;
        });
        assert(k > 0); // with scale >= 1 every interval covers some sample
        // Padding: adding 0 * v to a sum changes no bit of it.
        for (; k < taps; ++k) {
            index[k] = index[k - 1];
            weight[k] = 0.0f;
        }
    }
}

void ImageResizer::buildFixedPointTaps(
    int srcSize, int dstSize, double scale, int taps, int indexScale, AxisTaps<int32_t>& out)
{
    out.taps = taps;
    out.index.resize(toSize(dstSize) * toSize(taps));
    out.weight.resize(out.index.size());
    for (int i = 0; i < dstSize; ++i) {
        int32_t* index = &out.index[toSize(i) * toSize(taps)];
        int32_t* weight = &out.weight[toSize(i) * toSize(taps)];
        const int first = taps == 2 ? overlapWeights(srcSize, dstSize, i, weight)
                                    : cubicWeights(scale, i, weight);
        for (int k = 0; k < taps; ++k)
            index[k] = std::clamp(first + k, 0, srcSize - 1) * indexScale;
    }
}

void ImageResizer::runNearest(const Image& src, Image& dst) const
{
    for (int y = 0; y < dst.rows; ++y) {
        uint8_t* out = dst.ptr(y);
        const int row = nearestRows_[toSize(y)];
        if (y > 0 && row == nearestRows_[toSize(y) - 1]) {
            std::memcpy(out, dst.ptr(y - 1), dst.rowBytes()); // enlarging repeats rows
            continue;
        }
        const uint8_t* in = src.ptr(row);
        for (int x = 0; x < dst.cols; ++x) {
            const uint8_t* pixel = in + nearestColumns_[toSize(x)];
            out[kChannels * x] = pixel[0];
            out[kChannels * x + 1] = pixel[1];
            out[kChannels * x + 2] = pixel[2];
        }
    }
}

void ImageResizer::runAreaWhole(const Image& src, Image& dst)
{
    const int fy = factorY_;
    const size_t sourceValues = toSize(src.cols) * kChannels; // + 1 spare in columnSums_
    const size_t values = toSize(dst.cols) * kChannels;
    const float inverseArea = 1.0f / static_cast<float>(factorX_ * fy);
    uint32_t* sums = columnSums_.data();
    uint32_t* totals = rowTotals_.data();
    for (int y = 0; y < dst.rows; ++y) {
        const uint8_t* first = src.ptr(y * fy);
        for (size_t i = 0; i < sourceValues; ++i)
            sums[i] = first[i];
        for (int r = 1; r < fy; ++r) {
            const uint8_t* in = src.ptr(y * fy + r);
            for (size_t i = 0; i < sourceValues; ++i)
                sums[i] += in[i];
        }
        switch (factorX_) {
        case 1: sumPixels<1>(sums, 1, dst.cols, totals); break;
        case 2: sumPixels<2>(sums, 2, dst.cols, totals); break;
        case 3: sumPixels<3>(sums, 3, dst.cols, totals); break;
        case 4: sumPixels<4>(sums, 4, dst.cols, totals); break;
        default: sumPixels<0>(sums, factorX_, dst.cols, totals); break;
        }
        // 2 x 2 rounds ties up, as INTER_AREA's dedicated 2 x 2 kernel does; every other factor
        // multiplies in float and rounds ties to even, as its general one does.
        uint8_t* out = dst.ptr(y);
        if (factorX_ == 2 && fy == 2) {
            for (size_t i = 0; i < values; ++i)
                out[i] = static_cast<uint8_t>((totals[i] + 2) >> 2);
        } else {
            for (size_t i = 0; i < values; ++i)
                out[i] = roundToByte(static_cast<float>(totals[i]) * inverseArea);
        }
    }
}

const float* ImageResizer::floatRow(const Image& src, int row)
{
    const uint8_t* in = src.ptr(row);
    float* out = sourceRow_.data();
    const size_t values = sourceRow_.size() - 1; // the spare value stays 0
    for (size_t i = 0; i < values; ++i)
        out[i] = in[i];
    return out;
}

const float* ImageResizer::areaRow(const Image& src, int row)
{
    const size_t stride = areaSum_.size();
    const int slot = row & 1; // a row is shared only by neighbouring outputs: two slots suffice
    float* out = areaRowCache_.data() + toSize(slot) * stride;
    if (cachedRows_[slot] != row) {
        cachedRows_[slot] = row;
        sumAcrossTaps(floatRow(src, row), columns_.index.data(), columns_.weight.data(),
            toSize(columns_.taps), geometry_.dstWidth, out);
    }
    return out;
}

void ImageResizer::runAreaFractional(const Image& src, Image& dst)
{
    const size_t values = toSize(dst.cols) * kChannels;
    const size_t taps = toSize(areaRows_.taps);
    float* sum = areaSum_.data();
    for (int y = 0; y < dst.rows; ++y) {
        const int32_t* rows = &areaRows_.index[toSize(y) * taps];
        const float* weights = &areaRows_.weight[toSize(y) * taps];
        const float* first = areaRow(src, rows[0]);
        for (size_t i = 0; i < values; ++i)
            sum[i] = weights[0] * first[i];
        for (size_t k = 1; k < taps && weights[k] != 0.0f; ++k) {
            const float* row = areaRow(src, rows[k]);
            const float weight = weights[k];
            for (size_t i = 0; i < values; ++i)
                sum[i] += weight * row[i];
        }
        uint8_t* out = dst.ptr(y);
        for (size_t i = 0; i < values; ++i)
            out[i] = roundToByte(sum[i]);
    }
}

template <int Taps>
const int32_t* ImageResizer::fixedPointRow(const Image& src, int row)
{
    const size_t stride = fixedRowCache_.size() / Taps;
    // An output row reads Taps consecutive source rows (clamped), which fall in distinct slots.
    const int slot = row % Taps;
    int32_t* out = fixedRowCache_.data() + toSize(slot) * stride;
    if (cachedRows_[slot] != row) {
        cachedRows_[slot] = row;
        sumAcross<Taps>(floatRow(src, row), columns_.index.data(), columns_.weight.data(),
            toSize(Taps), geometry_.dstWidth, out);
    }
    return out;
}

template <int Taps>
void ImageResizer::runFixedPoint(const Image& src, Image& dst)
{
    const size_t values = toSize(dst.cols) * kChannels;
    for (int y = 0; y < dst.rows; ++y) {
        const int32_t* rows = &fixedRows_.index[toSize(y) * Taps];
        const int32_t* weights = &fixedRows_.weight[toSize(y) * Taps];
        const int32_t* in[Taps];
        for (int k = 0; k < Taps; ++k)
            in[k] = fixedPointRow<Taps>(src, rows[k]);
        uint8_t* out = dst.ptr(y);
        for (size_t i = 0; i < values; ++i) {
            int32_t sum = kProductHalf;
            for (int k = 0; k < Taps; ++k)
                sum += in[k][i] * weights[k];
            out[i] = static_cast<uint8_t>(std::min(std::max(sum, 0) >> kProductShift, 255));
        }
    }
}

void resizeNearest(const Image& src, Image& dst, int width, int height)
{
    ImageResizer().run(src, dst, width, height, ResizeKind::Nearest);
}

void resizeArea(const Image& src, Image& dst, int width, int height)
{
    ImageResizer().run(src, dst, width, height, ResizeKind::Area);
}

void resizeCubic(const Image& src, Image& dst, int width, int height)
{
    ImageResizer().run(src, dst, width, height, ResizeKind::Cubic);
}

} // namespace jetagent
