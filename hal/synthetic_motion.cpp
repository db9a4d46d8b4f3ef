// synthetic://motion: deterministic video of one moving object whose action per segment is known.
#include "jetagent/hal/synthetic_motion.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "jetagent/hal/raster.h"

namespace jetagent {

namespace {

constexpr double kMotionPi = 3.14159265358979323846;
constexpr int kClassCount = static_cast<int>(MotionRenderer::kClassNames.size());
constexpr int kStill = 0, kLeft = 1, kRight = 2, kUp = 3, kDown = 4; // else grow
constexpr int kLastFrame = MotionRenderer::kSegmentFrames - 1; // the segment's last frame offset

// Sizes are fractions of the frame's shorter side, speeds of the side they move along, so a
// stream looks the same at every resolution of one aspect ratio.
constexpr double kMinRadius = 0.07, kMaxRadius = 0.15; // circumradius of a still or moving object
constexpr double kMinGrowStart = 0.08, kMaxGrowStart = 0.12; // a growing object's first radius,
constexpr double kMinGrowth = 0.003, kMaxGrowth = 0.005; // plus this per frame: x2.2..x3.9 in all
constexpr double kMinSpeed = 0.006, kMaxSpeed = 0.012; // per frame: 28%..56% over a segment
constexpr double kMargin = 0.02; // the object keeps this far (plus a pixel) from every edge
constexpr int kBlobs = 3;
constexpr double kMinBlobRadius = 0.15, kMaxBlobRadius = 0.35; // of the longer side
constexpr int kBlobContrast = 8; // blob colour within this many levels of the background's
constexpr double kMinGradient = 4.0, kMaxGradient = 10.0; // levels from the base at the corners
constexpr int kNoise = 4; // per-frame noise, -kNoise..kNoise levels on every byte

// Channel levels, lo..hi. Background and object come from opposite ends, further apart than the
// gradient, blobs and noise can close, so the object is always plain to see. Nothing exceeds
// 255 - 2 * kNoise, so adding the noise never clips at the top (see addNoise).
struct Levels {
    int lo, hi;
};
constexpr Levels kDarkBackground {35, 85}, kLightObject {160, 247};
constexpr Levels kLightBackground {170, 220}, kDarkObject {0, 90};

// SplitMix64's finaliser. Chained over (seed, stream, key, field) it is a counter-based
// generator: every draw is a pure function of its coordinates, so any frame costs the same to
// draw whatever was drawn before, and no draw depends on how many others were made.
uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// What a draw decides. Fields that draw several values (colour channels, blobs) take consecutive
// numbers from their first.
enum Field : uint64_t {
    kClass = 0,
    kShape,
    kDarkness,
    kTheta,
    kRadius,
    kGrowth,
    kSpeed,
    kPositionX,
    kPositionY,
    kGradientAngle,
    kGradientAmount, // 3 channels
    kBackgroundColour = kGradientAmount + 3, // 3 channels
    kObjectColour = kBackgroundColour + 3, // 3 channels
    kBlob = kObjectColour + 3, // 6 per blob: x, y, radius, 3 channel offsets
};

enum Stream : uint64_t { kSegmentStream = 1, kNoiseStream = 2 };

// The draws of one segment (or, for noise, one frame) of one stream.
class Draws {
public:
    Draws(uint64_t seed, Stream stream, uint64_t key)
        : base_(mix(mix(mix(seed) ^ stream) ^ key)) { }

    uint64_t bits(uint64_t field) const { return mix(base_ ^ field); }
    // Uniform in [lo, hi); lo when the range is empty.
    double uniform(uint64_t field, double lo, double hi) const
    {
        return hi <= lo ? lo : lo + (hi - lo) * static_cast<double>(bits(field) >> 11) * 0x1.0p-53;
    }
    int below(uint64_t field, int n) const
    {
        return static_cast<int>(bits(field) % static_cast<uint64_t>(n));
    }
    int level(uint64_t field, Levels levels) const
    {
        return levels.lo + below(field, levels.hi - levels.lo + 1);
    }

private:
    uint64_t base_;
};

// Even segments draw their class freely; odd ones among the classes both neighbours lack, so no
// two consecutive segments share a class, and a class costs at most three draws to know.
int segmentClass(uint64_t seed, uint64_t segment)
{
    const auto freeClass = [seed](uint64_t s) {
        return Draws(seed, kSegmentStream, s).below(kClass, kClassCount);
    };
    if (segment % 2 == 0)
        return freeClass(segment);
    const int before = freeClass(segment - 1);
    const int after = freeClass(segment + 1);
    const int choices = kClassCount - (before == after ? 1 : 2);
    int pick = Draws(seed, kSegmentStream, segment).below(kClass, choices);
    for (int c = 0; c < kClassCount; ++c) {
        if (c == before || c == after)
            continue;
        if (pick-- == 0)
            return c;
    }
    return 0; // not reached: `choices` classes are left
}

// Uniform in [lo, hi), or the middle when the range is empty (a frame too small for the motion).
double within(const Draws& d, uint64_t field, double lo, double hi)
{
    return hi <= lo ? 0.5 * (lo + hi) : d.uniform(field, lo, hi);
}

// Blue, green and red levels, saturated to 0..255 where they are drawn.
using Bgr = std::array<double, 3>;

uint8_t saturated(double level)
{
    return static_cast<uint8_t>(std::clamp(std::lround(level), 0L, 255L));
}

void disc(Image& image, double cx, double cy, double r, const Bgr& colour)
{
    fillCircle(image, cx, cy, r, saturated(colour[0]), saturated(colour[1]), saturated(colour[2]));
}

// A smooth linear gradient around `base`, by at most `amount` levels, along `angle`. Computed in
// 16.16 fixed point; base and amount keep every value inside 0..255.
void fillGradient(Image& image, const Bgr& base, double angle, const double* amount)
{
    constexpr double kOne = 1 << 16;
    const double w = image.cols, h = image.rows;
    // Offset of pixel (x, y): amount * (cos * (2x/w - 1) + sin * (2y/h - 1)) / sqrt(2).
    const double c = std::cos(angle) / std::sqrt(2.0), s = std::sin(angle) / std::sqrt(2.0);
    const auto fixed = [](double v) { return static_cast<int32_t>(std::lround(v * kOne)); };
    const int32_t step0 = fixed(amount[0] * 2.0 * c / w), step1 = fixed(amount[1] * 2.0 * c / w),
                  step2 = fixed(amount[2] * 2.0 * c / w);
    for (int y = 0; y < image.rows; ++y) {
        const double v = s * (2.0 * y / h - 1.0) - c;
        int32_t v0 = fixed(base[0] + amount[0] * v + 0.5),
                v1 = fixed(base[1] + amount[1] * v + 0.5),
                v2 = fixed(base[2] + amount[2] * v + 0.5);
        uint8_t* p = image.ptr(y);
        for (int x = 0; x < image.cols; ++x, p += 3) {
            p[0] = static_cast<uint8_t>(v0 >> 16);
            p[1] = static_cast<uint8_t>(v1 >> 16);
            p[2] = static_cast<uint8_t>(v2 >> 16);
            v0 += step0;
            v1 += step1;
            v2 += step2;
        }
    }
}

// Adds -kNoise..kNoise to every byte, from a hash of the frame: frames are never byte-identical,
// even when nothing moves. One hash gives eight bytes their noise (3 bits plus 1: 0..8, centred
// by the subtraction), added and then subtracted with saturation at 0 and 255.
void addNoise(Image& image, const Draws& d)
{
    static_assert(kNoise == 4, "the noise bytes are drawn as 0..8");
    const int bytes = image.cols * 3;
    for (int y = 0; y < image.rows; ++y) {
        uint8_t* p = image.ptr(y);
        for (int i = 0; i < bytes; i += 8) {
            const uint64_t bits =
                d.bits(static_cast<uint64_t>(y) << 16 | static_cast<uint64_t>(i / 8));
            uint64_t word = (bits & 0x0707070707070707ull) + ((bits >> 3) & 0x0101010101010101ull);
            const int end = std::min(bytes, i + 8);
            for (int k = i; k < end; ++k, word >>= 8) {
                const int raised = std::min(255, p[k] + static_cast<int>(word & 0xFF));
                p[k] = static_cast<uint8_t>(std::max(0, raised - kNoise));
            }
        }
    }
}

void drawObject(
    Image& image, int shape, double cx, double cy, double r, double theta, const Bgr& colour)
{
    if (shape == 0) {
        disc(image, cx, cy, r, colour);
        return;
    }
    const int count = shape == 1 ? 4 : 3; // square or triangle, r its circumradius
    PointF pts[4];
    for (int k = 0; k < count; ++k) {
        const double a = theta + 2.0 * kMotionPi * k / count;
        pts[k] = {cx + r * std::cos(a), cy + r * std::sin(a)};
    }
    fillPolygon(image, pts, static_cast<size_t>(count), saturated(colour[0]), saturated(colour[1]),
        saturated(colour[2]));
}

} // namespace

MotionRenderer::MotionRenderer(int width, int height, uint64_t seed)
    : width_(width), height_(height), seed_(seed)
{
}

int MotionRenderer::classOf(uint64_t index) const
{
    return segmentClass(seed_, index / kSegmentFrames);
}

int MotionRenderer::render(uint64_t index, Image& image) const
{
    const uint64_t segment = index / kSegmentFrames;
    const int t = static_cast<int>(index % kSegmentFrames);
    const int cls = segmentClass(seed_, segment);
    const Draws d(seed_, kSegmentStream, segment);
    const double w = width_, h = height_;
    const double side = std::min(w, h);

    // A static background per segment: a faint gradient and a few fainter blobs.
    const bool dark = (d.bits(kDarkness) & 1) != 0;
    Bgr background {}, colour {};
    for (int ch = 0; ch < 3; ++ch) {
        background[ch] = d.level(kBackgroundColour + ch, dark ? kDarkBackground : kLightBackground);
        colour[ch] = d.level(kObjectColour + ch, dark ? kLightObject : kDarkObject);
    }
    double gradient[3];
    for (int ch = 0; ch < 3; ++ch)
        gradient[ch] = d.uniform(kGradientAmount + ch, kMinGradient, kMaxGradient);
    image.create(height_, width_, 3);
    fillGradient(image, background, d.uniform(kGradientAngle, 0.0, 2.0 * kMotionPi), gradient);
    for (int b = 0; b < kBlobs; ++b) {
        const uint64_t f = kBlob + 6 * static_cast<uint64_t>(b);
        Bgr blob {};
        for (int ch = 0; ch < 3; ++ch)
            blob[ch] = background[ch] + d.below(f + 3 + ch, 2 * kBlobContrast + 1) - kBlobContrast;
        const double radius = d.uniform(f + 2, kMinBlobRadius, kMaxBlobRadius) * std::max(w, h);
        const double bx = d.uniform(f, 0.0, w);
        const double by = d.uniform(f + 1, 0.0, h);
        disc(image, bx, by, radius, blob);
    }

    // The object: its radius over the whole segment decides where it may start, so it stays
    // inside the frame from the first frame to the last.
    const int shape = d.below(kShape, 3);
    const double theta = d.uniform(kTheta, 0.0, 2.0 * kMotionPi);
    const double margin = kMargin * side + 1.0;
    double r = 0, cx = 0, cy = 0;
    if (cls == kStill || cls == kLeft || cls == kRight || cls == kUp || cls == kDown) {
        r = d.uniform(kRadius, kMinRadius, kMaxRadius) * side;
        const bool horizontal = cls == kLeft || cls == kRight;
        const double along = horizontal ? w : h;
        const double room = along - 2.0 * (r + margin); // centre positions along the motion
        const double travel = cls == kStill
            ? 0.0
            : std::min(d.uniform(kSpeed, kMinSpeed, kMaxSpeed) * along * kLastFrame,
                  std::max(room, 0.0));
        const double first = within(
            d, horizontal ? kPositionX : kPositionY, r + margin, along - r - margin - travel);
        const double step = travel / kLastFrame;
        const double at = cls == kLeft || cls == kUp ? first + travel - step * t : first + step * t;
        const double across = within(
            d, horizontal ? kPositionY : kPositionX, r + margin, (horizontal ? h : w) - r - margin);
        cx = horizontal ? at : across;
        cy = horizontal ? across : at;
    } else { // grow
        const double start = d.uniform(kRadius, kMinGrowStart, kMaxGrowStart) * side;
        // Linear, so its outline moves as fast in a segment's last clip as in its first.
        const double rate = d.uniform(kGrowth, kMinGrowth, kMaxGrowth) * side;
        const double last = start + rate * kLastFrame;
        r = start + rate * t;
        cx = within(d, kPositionX, last + margin, w - last - margin);
        cy = within(d, kPositionY, last + margin, h - last - margin);
    }
    drawObject(image, shape, cx, cy, r, theta, colour);

    addNoise(image, Draws(seed_, kNoiseStream, index));
    return cls;
}

} // namespace jetagent
