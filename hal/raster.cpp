// Antialiased polygon and disc fills by exact area coverage (see raster.h).
#include "jetagent/hal/raster.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace jetagent {

namespace {

// Inside this file pixel i covers [i, i + 1): the public coordinates plus half a pixel.
constexpr double kHalfPixel = 0.5;
constexpr double kMaxCoordinate = 1e12; // see raster.h
// Rows accumulated at once. Bounds the scratch memory to this many rows of the image's width,
// small enough to stay in cache; each band visits every edge once to find its part of it.
constexpr int kBandRows = 32;

bool usable(double v)
{
    return std::isfinite(v) && std::fabs(v) <= kMaxCoordinate;
}

// sqrt(r^2 - d^2), 0 beyond the circle, without the cancellation of squaring first.
double halfChord(double r, double d)
{
    const double a = std::fabs(d);
    return a >= r ? 0.0 : std::sqrt((r - a) * (r + a));
}

// The area between a circle of radius r and a chord of length `chord`: r^2 (asin(s) - s sqrt(1 -
// s^2)) with s = chord / 2r.
double segmentArea(double r, double chord)
{
    const double s = std::min(1.0, chord / (2.0 * r));
    const double s2 = s * s;
    // A chord within a pixel is short beside all but the smallest circles: there the series
    // costs no asin and keeps the digits the difference would cancel (a huge circle crossing the
    // image is nearly straight over a pixel). Its next term is below 1e-10 of the first.
    if (s < 0.05)
        return r * r * s * s2 *
            (2.0 / 3.0 + s2 * (1.0 / 5.0 + s2 * (3.0 / 28.0 + s2 * 5.0 / 72.0)));
    return r * r * (std::asin(s) - s * std::sqrt(1.0 - s2));
}

// A straight edge, for Coverage::addPiece.
struct Line {
    double xa, ya, xb, yb;

    double xAt(double y) const
    {
        // By the fraction along the edge, which stays in [0, 1], so nothing overflows.
        return xa + (xb - xa) * std::clamp((y - ya) / (yb - ya), 0.0, 1.0);
    }
    double yAt(double x) const
    {
        return ya + (yb - ya) * std::clamp((x - xa) / (xb - xa), 0.0, 1.0);
    }
    // A line does not bulge from its chords.
    double bulge(double, double, double, double) const { return 0.0; }
};

// A quarter of a circle, monotone in x and y: the right (side +1) or left (-1) half, above
// (half -1) or below (+1) the centre.
struct Quarter {
    double cx, cy, r;
    double side, half;

    double xAt(double y) const { return cx + side * halfChord(r, y - cy); }
    double yAt(double x) const { return cy + half * halfChord(r, x - cx); }
    // The integral over y of x(arc) - x(chord) between the points (xu, u) and (xv, v) of the arc:
    // the circular segment's area, to the right of the chord on the right half.
    double bulge(double u, double v, double xu, double xv) const
    {
        const double dx = xv - xu, dy = v - u;
        return side * segmentArea(r, std::sqrt(dx * dx + dy * dy));
    }
};

// Blends `count` BGR pixels towards `colour` by a / 256.
void blendRun(uint8_t* pixel, int count, int a, const uint8_t* colour)
{
    if (a == 0)
        return;
    if (a == 256) {
        // Four pixels a store of 12 bytes: the interior is most of the work.
        uint8_t four[12];
        for (int i = 0; i < 12; ++i)
            four[i] = colour[i % 3];
        int i = 0;
        for (; i + 4 <= count; i += 4, pixel += 12)
            std::memcpy(pixel, four, sizeof four);
        for (; i < count; ++i, pixel += 3)
            std::memcpy(pixel, four, 3);
        return;
    }
    const int weight[3] = {colour[0] * a + 128, colour[1] * a + 128, colour[2] * a + 128};
    for (int i = 0; i < count; ++i, pixel += 3)
        for (int c = 0; c < 3; ++c)
            pixel[c] = static_cast<uint8_t>((pixel[c] * (256 - a) + weight[c]) >> 8);
}

// The coverage of a band of rows, accumulated the way a scanline renderer of fonts does: an edge
// changes the winding number of everything to its right, so each cell holds the change in
// coverage from the pixel before it, and a prefix sum along the row gives the coverage. An edge
// adds to a row's cells only where it crosses them, and a bit per cell marks those: the pixels
// between two marked cells share one coverage (the interior's, or the outside's) and are filled or
// skipped as a run. The cost is the outline's length plus the pixels the shape covers.
class Coverage {
public:
    // Starts the band of pixels [left, right) x [top, bottom). The cells are all zero already:
    // blend() leaves them so.
    void begin(int left, int right, int top, int bottom)
    {
        left_ = left;
        right_ = right;
        top_ = top;
        bottom_ = bottom;
        stride_ = static_cast<size_t>(right - left) + 1; // a pixel's right edge is the next cell
        words_ = (stride_ + 63) / 64;
        const size_t rows = static_cast<size_t>(bottom - top);
        if (cells_.size() < stride_ * rows)
            cells_.resize(stride_ * rows, 0.0f);
        if (touched_.size() < words_ * rows)
            touched_.resize(words_ * rows, 0);
    }

    // The edge from a to b (inner coordinates), winding +1 downwards.
    void addLine(double xa, double ya, double xb, double yb)
    {
        if (ya == yb)
            return; // horizontal: changes no winding
        double sign = 1.0;
        if (ya > yb) {
            std::swap(xa, xb);
            std::swap(ya, yb);
            sign = -1.0;
        }
        addCurve(Line {xa, ya, xb, yb}, ya, yb, sign);
    }

    // The circle, winding +1 down its right half.
    void addCircle(double cx, double cy, double r)
    {
        for (const double side : {1.0, -1.0}) {
            addCurve(Quarter {cx, cy, r, side, -1.0}, cy - r, cy, side);
            addCurve(Quarter {cx, cy, r, side, 1.0}, cy, cy + r, side);
        }
    }

    // Blends the band's pixels into `image` by their coverage, and zeroes the cells.
    void blend(Image& image, const uint8_t* colour)
    {
        const int width = right_ - left_;
        for (int y = top_; y < bottom_; ++y) {
            float* cell = cells_.data() + static_cast<size_t>(y - top_) * stride_;
            uint64_t* touched = touched_.data() + static_cast<size_t>(y - top_) * words_;
            uint8_t* row = image.ptr(y) + static_cast<size_t>(left_) * 3;
            float winding = 0.0f;
            int runStart = 0, a = 0; // the run of pixels since the last marked cell, and its alpha
            for (size_t word = 0; word < words_; ++word) {
                for (uint64_t bits = touched[word]; bits != 0; bits &= bits - 1) {
                    const int i = static_cast<int>(word * 64) + __builtin_ctzll(bits);
                    winding += cell[i];
                    cell[i] = 0.0f;
                    if (i == width)
                        break; // the cell right of the band: no pixel of its own
                    blendRun(row + static_cast<size_t>(runStart) * 3, i - runStart, a, colour);
                    runStart = i;
                    const float w = std::fabs(winding);
                    a = w >= 1.0f ? 256 : w > 0.0f ? static_cast<int>(std::lround(w * 256.0f)) : 0;
                }
                touched[word] = 0;
            }
            blendRun(row + static_cast<size_t>(runStart) * 3, width - runStart, a, colour);
        }
    }

private:
    // Adds `value` to the cell of `column` (from the band's left) in row y.
    void add(int y, int column, double value)
    {
        const size_t row = static_cast<size_t>(y - top_);
        const size_t at = static_cast<size_t>(column);
        cells_[row * stride_ + at] += static_cast<float>(value);
        touched_[row * words_ + at / 64] |= uint64_t {1} << (at % 64);
    }

    // Adds the part of `curve`, monotone in y and x, between y = ya and yb that lies in the band,
    // row by row.
    template <class Curve>
    void addCurve(const Curve& curve, double ya, double yb, double sign)
    {
        const double first = std::max(ya, static_cast<double>(top_));
        const double end = std::min(yb, static_cast<double>(bottom_));
        if (first >= end)
            return;
        const double xLow = std::min(curve.xAt(ya), curve.xAt(yb));
        const double xHigh = std::max(curve.xAt(ya), curve.xAt(yb));
        for (int y = static_cast<int>(std::floor(first)); y < end; ++y) {
            const double s = std::max(first, static_cast<double>(y));
            const double t = std::min(end, y + 1.0);
            if (t <= s)
                continue;
            addPiece(curve, y, s, t, std::clamp(curve.xAt(s), xLow, xHigh),
                std::clamp(curve.xAt(t), xLow, xHigh), sign);
        }
    }

    // Adds the piece of `curve` from (xs, s) to (xt, t), within one row, column by column. What
    // lies left of the band changes the winding of all its pixels, as an edge along its left
    // side would; what lies right of it changes none of them.
    template <class Curve>
    void addPiece(const Curve& curve, int y, double s, double t, double xs, double xt, double sign)
    {
        const double left = left_, right = right_;
        const bool rightward = xt >= xs;
        double u = s, xu = xs;
        if (rightward) {
            if (xt <= left) {
                add(y, 0, sign * (t - s));
                return;
            }
            if (xu < left) {
                const double v = std::clamp(curve.yAt(left), u, t);
                add(y, 0, sign * (v - u));
                u = v;
                xu = left;
            }
            if (xu >= right)
                return;
        } else {
            if (xt >= right)
                return;
            if (xu > right) {
                u = std::clamp(curve.yAt(right), u, t);
                xu = right;
            }
        }
        for (;;) {
            if (!rightward && xu <= left) {
                add(y, 0, sign * (t - u));
                return;
            }
            // The column the piece runs through next, and where it leaves that column.
            const int i =
                rightward ? static_cast<int>(std::floor(xu)) : static_cast<int>(std::ceil(xu)) - 1;
            const double boundary = rightward ? i + 1.0 : static_cast<double>(i);
            const bool last = rightward ? xt <= boundary : xt >= boundary;
            const double v = last ? t : std::clamp(curve.yAt(boundary), u, t);
            const double xv = last ? xt : boundary;
            const double h = v - u;
            // The integral of (x - i) over the piece: the part of the pixel's row right of it.
            const double area =
                std::clamp(h * (0.5 * (xu + xv) - i) + curve.bulge(u, v, xu, xv), 0.0, h);
            add(y, i - left_, sign * (h - area));
            add(y, i - left_ + 1, sign * area);
            if (last || (rightward && xv >= right))
                return;
            u = v;
            xu = xv;
        }
    }

    std::vector<float> cells_; // stride_ per row, all zero between bands
    std::vector<uint64_t> touched_; // words_ per row: a bit per cell an edge added to
    size_t stride_ = 0, words_ = 0;
    int left_ = 0, right_ = 0, top_ = 0, bottom_ = 0;
};

// The pixels [left, right) x [top, bottom) of the image that the box [x0, x1] x [y0, y1] (inner
// coordinates) touches; empty when it misses the image.
struct PixelBox {
    int left, right, top, bottom;

    PixelBox(const Image& image, double x0, double x1, double y0, double y1)
        : left(clampedFloor(x0, image.cols)),
          right(clampedCeil(x1, image.cols)),
          top(clampedFloor(y0, image.rows)),
          bottom(clampedCeil(y1, image.rows))
    {
    }
    bool empty() const { return left >= right || top >= bottom; }

private:
    static int clampedFloor(double v, int size)
    {
        return static_cast<int>(std::clamp(std::floor(v), 0.0, static_cast<double>(size)));
    }
    static int clampedCeil(double v, int size)
    {
        return static_cast<int>(std::clamp(std::ceil(v), 0.0, static_cast<double>(size)));
    }
};

bool drawable(const Image& image)
{
    return !image.empty() && image.channels() == 3;
}

// The scratch cells: one set per thread, shared by both shapes, grown and never shrunk.
Coverage& threadCoverage()
{
    thread_local Coverage coverage;
    return coverage;
}

// Accumulates the shape band by band over `box` and blends each band into the image.
template <class AddEdges>
void fillBands(Image& image, const PixelBox& box, const uint8_t* colour, const AddEdges& addEdges)
{
    Coverage& coverage = threadCoverage();
    for (int top = box.top; top < box.bottom; top += kBandRows) {
        coverage.begin(box.left, box.right, top, std::min(top + kBandRows, box.bottom));
        addEdges(coverage);
        coverage.blend(image, colour);
    }
}

} // namespace

void fillPolygon(
    Image& image, const PointF* points, size_t count, uint8_t blue, uint8_t green, uint8_t red)
{
    if (!drawable(image) || points == nullptr || count < 3)
        return;
    double x0 = points[0].x, x1 = x0, y0 = points[0].y, y1 = y0;
    for (size_t k = 0; k < count; ++k) {
        const PointF& p = points[k];
        if (!usable(p.x) || !usable(p.y))
            return;
        x0 = std::min(x0, p.x);
        x1 = std::max(x1, p.x);
        y0 = std::min(y0, p.y);
        y1 = std::max(y1, p.y);
    }
    const PixelBox box(image, x0 + kHalfPixel, x1 + kHalfPixel, y0 + kHalfPixel, y1 + kHalfPixel);
    if (box.empty())
        return;
    const uint8_t colour[3] = {blue, green, red};
    fillBands(image, box, colour, [points, count](Coverage& coverage) {
        for (size_t k = 0; k < count; ++k) {
            const PointF& a = points[k];
            const PointF& b = points[k + 1 < count ? k + 1 : 0];
            coverage.addLine(
                a.x + kHalfPixel, a.y + kHalfPixel, b.x + kHalfPixel, b.y + kHalfPixel);
        }
    });
}

void fillCircle(
    Image& image, double cx, double cy, double radius, uint8_t blue, uint8_t green, uint8_t red)
{
    if (!drawable(image) || !usable(cx) || !usable(cy) || !usable(radius) || !(radius > 0.0))
        return;
    const double x = cx + kHalfPixel, y = cy + kHalfPixel;
    const PixelBox box(image, x - radius, x + radius, y - radius, y + radius);
    if (box.empty())
        return;
    const uint8_t colour[3] = {blue, green, red};
    fillBands(image, box, colour,
        [x, y, radius](Coverage& coverage) { coverage.addCircle(x, y, radius); });
}

} // namespace jetagent
