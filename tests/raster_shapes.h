// Shapes like synthetic://shapes draws, filled by OpenCV (LINE_AA, 4 sub-pixel bits) and by
// raster.h, for raster_test and raster_bench to compare.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <opencv2/imgproc.hpp>

#include "jetagent/hal/image.h"
#include "jetagent/hal/raster.h"

namespace jetagent {
namespace raster_shapes {

constexpr double kPi = 3.14159265358979323846;
constexpr int kShift = 4; // the renderers' sub-pixel bits
constexpr double kSubpixel = 1 << kShift;

enum class Kind { Circle, Square, Triangle, Cross, Star, Ring };
constexpr std::array<Kind, 6> kKinds = {
    Kind::Circle, Kind::Square, Kind::Triangle, Kind::Cross, Kind::Star, Kind::Ring};
inline const char* kindName(Kind kind)
{
    static constexpr std::array<const char*, 6> names = {
        "circle", "square", "triangle", "cross", "star", "ring"};
    return names[static_cast<size_t>(kind)];
}

// One frame's shape, its coordinates already rounded to 1/16 pixel as OpenCV receives them, so
// both fills draw the same geometry.
struct Shape {
    Kind kind = Kind::Circle;
    std::vector<PointF> outline; // polygons
    PointF centre {0, 0}; // circle and ring
    double radius = 0, innerRadius = 0;
    cv::Vec3b background, colour;
};

inline double toSubpixel(double v)
{
    return static_cast<double>(std::lround(v * kSubpixel)) / kSubpixel;
}

// As synthetic_shapes.cpp draws them: radius 0.18..0.32 of the shorter side, wholly inside the
// frame, colour and background from opposite halves of the levels.
inline Shape randomShape(std::mt19937_64& random, Kind kind, int width, int height)
{
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const auto level = [&random](int lo, int hi) {
        return static_cast<uint8_t>(std::uniform_int_distribution<int>(lo, hi)(random));
    };
    const auto colour = [&level](int lo, int hi) {
        return cv::Vec3b(level(lo, hi), level(lo, hi), level(lo, hi));
    };
    Shape s;
    s.kind = kind;
    const bool dark = (random() & 1) != 0;
    s.background = dark ? colour(0, 100) : colour(155, 255);
    s.colour = dark ? colour(155, 255) : colour(0, 100);
    const double r = (0.18 + 0.14 * unit(random)) * std::min(width, height);
    const double cx = r + (width - 2.0 * r) * unit(random);
    const double cy = r + (height - 2.0 * r) * unit(random);
    const double theta = 2.0 * kPi * unit(random);
    const auto add = [&s, cx, cy, theta](double x, double y) {
        const double c = std::cos(theta), sn = std::sin(theta);
        s.outline.push_back({toSubpixel(cx + c * x - sn * y), toSubpixel(cy + sn * x + c * y)});
    };
    const auto regular = [&add](int count, double outer, double inner) {
        for (int k = 0; k < count; ++k) {
            const double a = 2.0 * kPi * k / count, rk = k % 2 == 0 ? outer : inner;
            add(rk * std::cos(a), rk * std::sin(a));
        }
    };
    switch (kind) {
    case Kind::Square: regular(4, r, r); break;
    case Kind::Triangle: regular(3, r, r); break;
    case Kind::Star: regular(10, r, 0.42 * r); break;
    case Kind::Cross: {
        const double a = 0.3 * r;
        const double local[12][2] = {{-a, -r}, {a, -r}, {a, -a}, {r, -a}, {r, a}, {a, a}, {a, r},
            {-a, r}, {-a, a}, {-r, a}, {-r, -a}, {-a, -a}};
        for (const auto& q : local)
            add(q[0], q[1]);
        break;
    }
    case Kind::Circle:
    case Kind::Ring:
        s.centre = {toSubpixel(cx), toSubpixel(cy)};
        s.radius = toSubpixel(r);
        s.innerRadius = toSubpixel(0.55 * r);
        break;
    }
    return s;
}

inline bool isRound(const Shape& s)
{
    return s.kind == Kind::Circle || s.kind == Kind::Ring;
}

inline cv::Point toCv(PointF p)
{
    return {static_cast<int>(std::lround(p.x * kSubpixel)),
        static_cast<int>(std::lround(p.y * kSubpixel))};
}

// The shape over its background (or over what the image holds), by cv::fillPoly and cv::circle.
inline void drawWithOpenCv(cv::Mat& image, const Shape& s, bool background = true)
{
    if (background)
        image.setTo(cv::Scalar(s.background[0], s.background[1], s.background[2]));
    const cv::Scalar colour(s.colour[0], s.colour[1], s.colour[2]);
    if (isRound(s)) {
        cv::circle(image, toCv(s.centre), static_cast<int>(std::lround(s.radius * kSubpixel)),
            colour, cv::FILLED, cv::LINE_AA, kShift);
        if (s.kind == Kind::Ring)
            cv::circle(image, toCv(s.centre),
                static_cast<int>(std::lround(s.innerRadius * kSubpixel)),
                cv::Scalar(s.background[0], s.background[1], s.background[2]), cv::FILLED,
                cv::LINE_AA, kShift);
        return;
    }
    std::vector<cv::Point> points;
    for (const PointF& p : s.outline)
        points.push_back(toCv(p));
    const cv::Point* first = points.data();
    const int count = static_cast<int>(points.size());
    cv::fillPoly(image, &first, &count, 1, colour, cv::LINE_AA, kShift);
}

// The shape over its background (or over what the image holds), by fillPolygon and fillCircle.
inline void drawWithRaster(Image& image, const Shape& s, bool background = true)
{
    if (background)
        image.fill(s.background[0], s.background[1], s.background[2]);
    if (isRound(s)) {
        fillCircle(image, s.centre.x, s.centre.y, s.radius, s.colour[0], s.colour[1], s.colour[2]);
        if (s.kind == Kind::Ring)
            fillCircle(image, s.centre.x, s.centre.y, s.innerRadius, s.background[0],
                s.background[1], s.background[2]);
        return;
    }
    fillPolygon(image, s.outline.data(), s.outline.size(), s.colour[0], s.colour[1], s.colour[2]);
}

inline double shoelaceArea(const std::vector<PointF>& outline)
{
    double twice = 0.0;
    for (size_t k = 0; k < outline.size(); ++k) {
        const PointF& a = outline[k];
        const PointF& b = outline[(k + 1) % outline.size()];
        twice += a.x * b.y - b.x * a.y;
    }
    return std::fabs(0.5 * twice);
}

inline double analyticArea(const Shape& s)
{
    if (!isRound(s))
        return shoelaceArea(s.outline);
    const double inner = s.kind == Kind::Ring ? s.innerRadius : 0.0;
    return kPi * (s.radius * s.radius - inner * inner);
}

// Whether (x, y) lies inside the shape (crossing number for polygons).
inline bool contains(const Shape& s, double x, double y)
{
    if (isRound(s)) {
        const double d2 = (x - s.centre.x) * (x - s.centre.x) + (y - s.centre.y) * (y - s.centre.y);
        return d2 < s.radius * s.radius &&
            (s.kind != Kind::Ring || d2 > s.innerRadius * s.innerRadius);
    }
    bool inside = false;
    const size_t n = s.outline.size();
    for (size_t k = 0, j = n - 1; k < n; j = k++) {
        const PointF& a = s.outline[k];
        const PointF& b = s.outline[j];
        if ((a.y > y) != (b.y > y) && x < (b.x - a.x) * (y - a.y) / (b.y - a.y) + a.x)
            inside = !inside;
    }
    return inside;
}

// The distance from (x, y) to the shape's outline, negative inside.
inline double signedDistance(const Shape& s, double x, double y)
{
    if (isRound(s)) {
        const double d = std::hypot(x - s.centre.x, y - s.centre.y);
        return s.kind == Kind::Ring ? std::max(d - s.radius, s.innerRadius - d) : d - s.radius;
    }
    double nearest = HUGE_VAL;
    const size_t n = s.outline.size();
    for (size_t k = 0, j = n - 1; k < n; j = k++) {
        const PointF& a = s.outline[k];
        const PointF& b = s.outline[j];
        const double ex = b.x - a.x, ey = b.y - a.y;
        const double t =
            std::clamp(((x - a.x) * ex + (y - a.y) * ey) / (ex * ex + ey * ey), 0.0, 1.0);
        nearest = std::min(nearest, std::hypot(x - a.x - t * ex, y - a.y - t * ey));
    }
    return contains(s, x, y) ? -nearest : nearest;
}

// The area an image shows the shape covering: each pixel's fraction of the way from background
// to colour, on the channel where they differ most.
inline double drawnArea(const uint8_t* pixels, int rows, int cols, size_t step, const Shape& s)
{
    int channel = 0;
    for (int c = 1; c < 3; ++c)
        if (std::abs(s.colour[c] - s.background[c]) >
            std::abs(s.colour[channel] - s.background[channel]))
            channel = c;
    const double from = s.background[channel], span = s.colour[channel] - from;
    double area = 0.0;
    for (int y = 0; y < rows; ++y)
        for (int x = 0; x < cols; ++x)
            area += (pixels[static_cast<size_t>(y) * step + 3 * static_cast<size_t>(x) + channel] -
                        from) /
                span;
    return area;
}

// How far OpenCV's and raster.h's drawings of one shape differ.
struct Difference {
    double absoluteSum = 0; // over every channel value
    long values = 0;
    long pixels = 0;
    long pixelsOver8 = 0; // pixels where a channel differs by more than 8 levels
    int largest = 0; // levels
    long farPixelsDiffering = 0; // pixels further than `far` from the outline that differ

    double meanAbsolute() const { return values == 0 ? 0.0 : absoluteSum / values; }
    double fractionOver8() const { return pixels == 0 ? 0.0 : double(pixelsOver8) / pixels; }
};

inline void compare(
    const cv::Mat& reference, const Image& drawn, const Shape& s, double far, Difference& d)
{
    for (int y = 0; y < drawn.rows; ++y) {
        const uint8_t* a = reference.ptr<uint8_t>(y);
        const uint8_t* b = drawn.ptr(y);
        for (int x = 0; x < drawn.cols; ++x) {
            int most = 0;
            for (int c = 0; c < 3; ++c) {
                const int diff = std::abs(a[3 * x + c] - b[3 * x + c]);
                d.absoluteSum += diff;
                most = std::max(most, diff);
            }
            d.values += 3;
            d.pixels += 1;
            d.pixelsOver8 += most > 8 ? 1 : 0;
            d.largest = std::max(d.largest, most);
            if (most > 0 && std::fabs(signedDistance(s, x, y)) > far)
                ++d.farPixelsDiffering;
        }
    }
}

} // namespace raster_shapes
} // namespace jetagent
