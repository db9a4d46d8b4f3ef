// synthetic://shapes: deterministic frames of one coloured shape each, whose class is known.
#include "jetagent/hal/synthetic_shapes.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "jetagent/hal/raster.h"

namespace jetagent {

namespace {

constexpr double kPi = 3.14159265358979323846;

// SplitMix64: a small, well-mixed generator; seeding it with (seed, index) makes every frame
// independent.
class FrameRandom {
public:
    FrameRandom(uint64_t seed, uint64_t index)
        : state_(seed * 0x9E3779B97F4A7C15ull ^ (index + 1) * 0xD1B54A32D192ED03ull)
    {
    }

    uint64_t next()
    {
        uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // Uniform in [lo, hi).
    double uniform(double lo, double hi)
    {
        return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1.0p-53;
    }
    int below(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }

private:
    uint64_t state_;
};

// A colour as blue, green, red.
struct Colour {
    uint8_t b, g, r;
};

Colour randomColour(FrameRandom& rnd, int lo, int hi)
{
    auto level = [&] { return static_cast<uint8_t>(lo + rnd.below(hi - lo + 1)); };
    const uint8_t b = level();
    const uint8_t g = level();
    const uint8_t r = level();
    return {b, g, r};
}

// A regular polygon-like outline: `count` vertices at the given radii, turning from angle `theta`.
void outline(std::vector<PointF>& pts, double cx, double cy, double theta, int count,
    const double* radii, int radiiCount)
{
    pts.clear();
    for (int k = 0; k < count; ++k) {
        double a = theta + 2.0 * kPi * k / count;
        double r = radii[k % radiiCount];
        pts.push_back({cx + r * std::cos(a), cy + r * std::sin(a)});
    }
}

void fill(Image& image, const std::vector<PointF>& pts, const Colour& colour)
{
    fillPolygon(image, pts.data(), pts.size(), colour.b, colour.g, colour.r);
}

void disc(Image& image, double cx, double cy, double r, const Colour& colour)
{
    fillCircle(image, cx, cy, r, colour.b, colour.g, colour.r);
}

} // namespace

ShapesRenderer::ShapesRenderer(int width, int height, uint64_t seed)
    : width_(width), height_(height), seed_(seed)
{
}

int ShapesRenderer::render(uint64_t index, Image& image) const
{
    FrameRandom rnd(seed_, index);
    const int cls = rnd.below(static_cast<int>(kClassNames.size()));

    // Background and shape come from opposite halves of the brightness range, so every shape is
    // visible.
    const bool darkBackground = (rnd.next() & 1) != 0;
    const Colour background =
        darkBackground ? randomColour(rnd, 0, 100) : randomColour(rnd, 155, 255);
    const Colour colour = darkBackground ? randomColour(rnd, 155, 255) : randomColour(rnd, 0, 100);

    image.create(height_, width_, 3);
    image.fill(background.b, background.g, background.r);

    const double side = std::min(width_, height_);
    const double r = rnd.uniform(0.18, 0.32) * side;
    const double cx = rnd.uniform(r, width_ - r);
    const double cy = rnd.uniform(r, height_ - r);
    const double theta = rnd.uniform(0.0, 2.0 * kPi);

    thread_local std::vector<PointF> pts;
    switch (cls) {
    case 0: // circle
        disc(image, cx, cy, r, colour);
        break;
    case 1: { // square (r is the circumradius)
        const double radii[] = {r};
        outline(pts, cx, cy, theta, 4, radii, 1);
        fill(image, pts, colour);
        break;
    }
    case 2: { // triangle
        const double radii[] = {r};
        outline(pts, cx, cy, theta, 3, radii, 1);
        fill(image, pts, colour);
        break;
    }
    case 3: { // cross: a plus sign of two bars, turned by theta
        const double a = 0.3 * r; // half the bar width
        const double local[12][2] = {{-a, -r}, {a, -r}, {a, -a}, {r, -a}, {r, a}, {a, a}, {a, r},
            {-a, r}, {-a, a}, {-r, a}, {-r, -a}, {-a, -a}};
        const double c = std::cos(theta), s = std::sin(theta);
        pts.clear();
        for (const auto& q : local)
            pts.push_back({cx + c * q[0] - s * q[1], cy + s * q[0] + c * q[1]});
        fill(image, pts, colour);
        break;
    }
    case 4: { // five-pointed star
        const double radii[] = {r, 0.42 * r};
        outline(pts, cx, cy, theta, 10, radii, 2);
        fill(image, pts, colour);
        break;
    }
    default: // ring: a disc with a hole of the background colour
        disc(image, cx, cy, r, colour);
        disc(image, cx, cy, 0.55 * r, background);
        break;
    }
    return cls;
}

} // namespace jetagent
