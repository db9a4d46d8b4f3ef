// fillPolygon and fillCircle: exact coverage (areas, interiors, the pixel-centre convention),
// clipping, degenerate input, and closeness to OpenCV's LINE_AA fills on the renderers' shapes.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>
#include <opencv2/imgproc.hpp>

#include "jetagent/hal/raster.h"
#include "raster_shapes.h"

namespace jetagent {
namespace {

using raster_shapes::Kind;
using raster_shapes::kPi;

constexpr int kWidth = 320;
constexpr int kHeight = 240;
constexpr uint64_t kSeed = 20240611;
constexpr double kAreaTolerance = 0.01; // relative
// A pixel whose centre lies further than this from the outline is wholly inside or outside: half
// its diagonal, and a little.
constexpr double kWhollyInOrOut = 0.75;
constexpr uint8_t kOn = 255, kOff = 0;

// A black 3-channel image.
Image blackImage(int rows = kHeight, int cols = kWidth)
{
    Image image(rows, cols);
    image.fill(kOff, kOff, kOff);
    return image;
}

// The shape's area as drawn white on black: the sum of the pixels' coverage.
double whiteArea(const Image& image)
{
    double area = 0.0;
    for (int y = 0; y < image.rows; ++y)
        for (int x = 0; x < image.cols; ++x)
            area += image.ptr(y)[3 * x] / 255.0;
    return area;
}

bool samePixels(const Image& a, const Image& b)
{
    if (a.rows != b.rows || a.cols != b.cols)
        return false;
    for (int y = 0; y < a.rows; ++y)
        if (std::memcmp(a.ptr(y), b.ptr(y), a.rowBytes()) != 0)
            return false;
    return true;
}

std::vector<PointF> regularPolygon(PointF centre, double radius, int count, double theta)
{
    std::vector<PointF> points;
    for (int k = 0; k < count; ++k) {
        const double a = theta + 2.0 * kPi * k / count;
        points.push_back({centre.x + radius * std::cos(a), centre.y + radius * std::sin(a)});
    }
    return points;
}

TEST(Raster, CircleAreaMatchesTheAnalyticArea)
{
    for (const double radius : {3.3, 12.0, 40.7, 77.9, 110.2}) {
        Image image = blackImage();
        fillCircle(image, 159.3, 121.8, radius, kOn, kOn, kOn);
        EXPECT_NEAR(whiteArea(image) / (kPi * radius * radius), 1.0, kAreaTolerance)
            << "radius " << radius;
    }
}

TEST(Raster, SquareAreaMatchesTheAnalyticArea)
{
    for (const double theta : {0.0, 0.1, kPi / 4, 1.0}) {
        for (const double radius : {5.5, 60.25, 100.0}) {
            Image image = blackImage();
            const std::vector<PointF> square = regularPolygon({160.4, 119.7}, radius, 4, theta);
            fillPolygon(image, square.data(), square.size(), kOn, kOn, kOn);
            EXPECT_NEAR(whiteArea(image) / (2.0 * radius * radius), 1.0, kAreaTolerance)
                << "theta " << theta << " radius " << radius;
        }
    }
}

TEST(Raster, ConcaveAreasMatchTheirOutlines)
{
    std::mt19937_64 random(kSeed);
    for (const Kind kind : {Kind::Cross, Kind::Star}) {
        for (int k = 0; k < 5; ++k) {
            const raster_shapes::Shape s =
                raster_shapes::randomShape(random, kind, kWidth, kHeight);
            Image image = blackImage();
            fillPolygon(image, s.outline.data(), s.outline.size(), kOn, kOn, kOn);
            EXPECT_NEAR(
                whiteArea(image) / raster_shapes::shoelaceArea(s.outline), 1.0, kAreaTolerance)
                << raster_shapes::kindName(kind);
        }
    }
}

// Each edge pixel's value against its coverage counted on a fine grid of points in its square.
TEST(Raster, EdgePixelsGetTheirCoverage)
{
    constexpr int kGrid = 128; // points per side: the count is within about 1/128 of the area
    constexpr int kTolerance = 2; // levels: the count's error, and the rounding of the blend
    std::mt19937_64 random(kSeed);
    for (const Kind kind : {Kind::Circle, Kind::Triangle, Kind::Star}) {
        raster_shapes::Shape s = raster_shapes::randomShape(random, kind, 96, 72);
        Image image(72, 96);
        image.fill(kOff, kOff, kOff);
        s.background = cv::Vec3b(kOff, kOff, kOff);
        s.colour = cv::Vec3b(kOn, kOn, kOn);
        raster_shapes::drawWithRaster(image, s);
        int checked = 0, wrong = 0;
        for (int y = 0; y < image.rows; ++y) {
            for (int x = 0; x < image.cols; ++x) {
                if (std::fabs(raster_shapes::signedDistance(s, x, y)) > kWhollyInOrOut)
                    continue;
                int inside = 0;
                for (int j = 0; j < kGrid; ++j)
                    for (int i = 0; i < kGrid; ++i)
                        inside += raster_shapes::contains(
                            s, x - 0.5 + (i + 0.5) / kGrid, y - 0.5 + (j + 0.5) / kGrid);
                const double expected = 255.0 * inside / (kGrid * kGrid);
                ++checked;
                if (std::fabs(image.ptr(y)[3 * x] - expected) > kTolerance)
                    ++wrong;
            }
        }
        EXPECT_GT(checked, 50) << raster_shapes::kindName(kind);
        EXPECT_EQ(wrong, 0) << raster_shapes::kindName(kind);
    }
}

// Integer coordinates are pixel centres, as OpenCV has them: an edge through a row of centres
// covers half of each of its pixels.
TEST(Raster, IntegerCoordinatesArePixelCentres)
{
    Image image = blackImage();
    const PointF rectangle[] = {{10, 20}, {30, 20}, {30, 40}, {10, 40}};
    fillPolygon(image, rectangle, 4, kOn, kOn, kOn);
    const uint8_t half = (kOn * 128 + 128) >> 8;
    EXPECT_EQ(image.ptr(30)[3 * 10], half); // on the left edge
    EXPECT_EQ(image.ptr(30)[3 * 30], half); // on the right edge
    EXPECT_EQ(image.ptr(20)[3 * 20], half); // on the top edge
    EXPECT_EQ(image.ptr(30)[3 * 20], kOn);
    EXPECT_EQ(image.ptr(30)[3 * 9], kOff);
    EXPECT_EQ(image.ptr(19)[3 * 20], kOff);
    EXPECT_EQ(image.ptr(20)[3 * 10], (kOn * 64 + 128) >> 8); // a corner: a quarter
    EXPECT_NEAR(whiteArea(image), 20.0 * 20.0, 0.5);
}

// Every pixel wholly inside gets exactly the colour, every pixel wholly outside keeps its value,
// and every pixel gets a blend of the two; on the renderers' shapes, both ways round.
TEST(Raster, InteriorGetsTheColourAndOutsideIsUntouched)
{
    std::mt19937_64 random(kSeed);
    for (const Kind kind : raster_shapes::kKinds) {
        for (int k = 0; k < 4; ++k) {
            const raster_shapes::Shape s =
                raster_shapes::randomShape(random, kind, kWidth, kHeight);
            Image image(kHeight, kWidth);
            raster_shapes::drawWithRaster(image, s);
            int wrong = 0;
            for (int y = 0; y < kHeight; ++y) {
                for (int x = 0; x < kWidth; ++x) {
                    const double d = raster_shapes::signedDistance(s, x, y);
                    for (int c = 0; c < 3; ++c) {
                        const int v = image.ptr(y)[3 * x + c];
                        const int lo = std::min(s.colour[c], s.background[c]);
                        const int hi = std::max(s.colour[c], s.background[c]);
                        if ((d < -kWhollyInOrOut && v != s.colour[c]) ||
                            (d > kWhollyInOrOut && v != s.background[c]) || v < lo || v > hi)
                            ++wrong;
                    }
                }
            }
            EXPECT_EQ(wrong, 0) << raster_shapes::kindName(kind) << " " << k;
        }
    }
}

TEST(Raster, VertexOrderDoesNotMatter)
{
    std::mt19937_64 random(kSeed);
    const raster_shapes::Shape s = raster_shapes::randomShape(random, Kind::Star, kWidth, kHeight);
    Image forward = blackImage(), backward = blackImage();
    fillPolygon(forward, s.outline.data(), s.outline.size(), kOn, kOn, kOn);
    const std::vector<PointF> reversed(s.outline.rbegin(), s.outline.rend());
    fillPolygon(backward, reversed.data(), reversed.size(), kOn, kOn, kOn);
    EXPECT_TRUE(samePixels(forward, backward));
}

// A pentagram winds twice round its centre: the nonzero rule fills it, even-odd would not.
TEST(Raster, SelfIntersectingPolygonsFillByNonzeroWinding)
{
    Image image = blackImage();
    std::vector<PointF> pentagram;
    for (int k = 0; k < 5; ++k) {
        const double a = -kPi / 2 + 4.0 * kPi * k / 5;
        pentagram.push_back({160 + 100 * std::cos(a), 120 + 100 * std::sin(a)});
    }
    fillPolygon(image, pentagram.data(), pentagram.size(), kOn, kOn, kOn);
    EXPECT_EQ(image.ptr(120)[3 * 160], kOn);
}

// Drawing into a view of a larger image: nothing outside the view changes, the view gets exactly
// what an image of its own size would, and that is what the same shape moved into a larger
// canvas, where it is not clipped (or clipped elsewhere), shows at those pixels.
TEST(Raster, ClipsToTheImage)
{
    constexpr int kBorder = 20, kViewWidth = 100, kViewHeight = 80;
    constexpr int kMargin = 64; // of the canvas around the view's pixels
    const std::vector<PointF> corners = {{-50, -40}, {150, 30}, {70, 130}}; // over three edges
    const std::vector<PointF> cover = {{-1e11, -1e11}, {1e11, -1e11}, {0, 1e11}};
    const std::vector<PointF> farAway = regularPolygon({1e6, -3e5}, 50, 5, 0.3);
    const std::vector<PointF> belowRight = regularPolygon({140, 110}, 40, 3, 0.2);
    struct Case {
        const char* name;
        const std::vector<PointF>* polygon; // or a circle
        double cx, cy, radius;
    };
    const Case cases[] = {
        {"circle over the left edge", nullptr, -5.2, 40.1, 30.3},
        {"circle over the bottom right corner", nullptr, 95.0, 77.7, 25.0},
        {"circle around the view", nullptr, 50.0, 40.0, 1e6},
        {"circle far away", nullptr, -2e6, 5e5, 40.0},
        {"circle just outside", nullptr, -20.6, 40.0, 20.0},
        {"triangle over three edges", &corners, 0, 0, 0},
        {"triangle around the view", &cover, 0, 0, 0},
        {"star far away", &farAway, 0, 0, 0},
        {"triangle over a corner", &belowRight, 0, 0, 0},
    };
    for (const Case& c : cases) {
        Image whole(kViewHeight + 2 * kBorder, kViewWidth + 2 * kBorder);
        whole.fill(1, 2, 3);
        Image view = whole.roi(kBorder, kBorder, kViewWidth, kViewHeight);
        view.fill(10, 20, 30);
        const Image before = whole.clone();
        Image alone(kViewHeight, kViewWidth);
        alone.fill(10, 20, 30);
        Image canvas(kViewHeight + 2 * kMargin, kViewWidth + 2 * kMargin);
        canvas.fill(10, 20, 30);
        if (c.polygon != nullptr) {
            fillPolygon(view, c.polygon->data(), c.polygon->size(), 200, 150, 100);
            fillPolygon(alone, c.polygon->data(), c.polygon->size(), 200, 150, 100);
            std::vector<PointF> moved = *c.polygon;
            for (PointF& p : moved)
                p = {p.x + kMargin, p.y + kMargin};
            fillPolygon(canvas, moved.data(), moved.size(), 200, 150, 100);
        } else {
            fillCircle(view, c.cx, c.cy, c.radius, 200, 150, 100);
            fillCircle(alone, c.cx, c.cy, c.radius, 200, 150, 100);
            fillCircle(canvas, c.cx + kMargin, c.cy + kMargin, c.radius, 200, 150, 100);
        }
        int differing = 0; // by more than the rounding of sums taken in another order
        for (int y = 0; y < kViewHeight; ++y)
            for (int x = 0; x < 3 * kViewWidth; ++x)
                if (std::abs(alone.ptr(y)[x] - canvas.ptr(y + kMargin)[3 * kMargin + x]) > 1)
                    ++differing;
        EXPECT_EQ(differing, 0) << c.name;
        int borderChanged = 0;
        for (int y = 0; y < whole.rows; ++y)
            for (int x = 0; x < whole.cols; ++x)
                if ((y < kBorder || y >= kBorder + kViewHeight || x < kBorder ||
                        x >= kBorder + kViewWidth) &&
                    std::memcmp(whole.ptr(y) + 3 * x, before.ptr(y) + 3 * x, 3) != 0)
                    ++borderChanged;
        EXPECT_EQ(borderChanged, 0) << c.name;
        EXPECT_TRUE(samePixels(view, alone)) << c.name;
    }
}

// Random polygons and circles, near and far, tiny and huge: none writes outside its view or
// leaves a pixel outside the range between background and colour.
TEST(Raster, RandomShapesStayInsideTheView)
{
    constexpr int kBorder = 8, kViewWidth = 40, kViewHeight = 30, kShapes = 400;
    std::mt19937_64 random(kSeed);
    const double scales[] = {0.01, 1.0, 30.0, 1e3, 1e6, 1e11};
    const auto coordinate = [&random, &scales](double centre) {
        const double scale = scales[random() % std::size(scales)];
        return centre + scale * std::uniform_real_distribution<double>(-1.0, 1.0)(random);
    };
    Image whole(kViewHeight + 2 * kBorder, kViewWidth + 2 * kBorder);
    whole.fill(1, 2, 3);
    Image view = whole.roi(kBorder, kBorder, kViewWidth, kViewHeight);
    for (int k = 0; k < kShapes; ++k) {
        view.fill(10, 20, 30);
        if (k % 4 == 0) {
            fillCircle(
                view, coordinate(20), coordinate(15), std::fabs(coordinate(0)), 200, 150, 100);
        } else {
            std::vector<PointF> polygon(3 + random() % 8);
            for (PointF& p : polygon)
                p = {coordinate(20), coordinate(15)};
            fillPolygon(view, polygon.data(), polygon.size(), 200, 150, 100);
        }
        int wrong = 0;
        for (int y = 0; y < whole.rows; ++y) {
            for (int x = 0; x < whole.cols; ++x) {
                const uint8_t* p = whole.ptr(y) + 3 * x;
                const bool inView = y >= kBorder && y < kBorder + kViewHeight && x >= kBorder &&
                    x < kBorder + kViewWidth;
                if (inView ? p[0] < 10 || p[0] > 200 || p[1] < 20 || p[1] > 150 || p[2] < 30 ||
                            p[2] > 100
                           : p[0] != 1 || p[1] != 2 || p[2] != 3)
                    ++wrong;
            }
        }
        ASSERT_EQ(wrong, 0) << "shape " << k;
    }
}

TEST(Raster, ShapesCoveringTheWholeImageFillIt)
{
    Image image = blackImage();
    fillCircle(image, 160, 120, 5e5, kOn, kOn, kOn);
    EXPECT_DOUBLE_EQ(whiteArea(image), double(kWidth) * kHeight);
    image = blackImage();
    const PointF cover[] = {{-1e9, -1e9}, {1e9, -1e9}, {1e9, 1e9}, {-1e9, 1e9}};
    fillPolygon(image, cover, 4, kOn, kOn, kOn);
    EXPECT_DOUBLE_EQ(whiteArea(image), double(kWidth) * kHeight);
}

TEST(Raster, DegenerateInputDrawsNothing)
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    const Image blank = blackImage();
    Image image = blackImage();
    const auto unchanged = [&image, &blank] { return samePixels(image, blank); };

    const PointF triangle[] = {{10, 10}, {100, 20}, {50, 90}};
    fillPolygon(image, triangle, 0, kOn, kOn, kOn);
    fillPolygon(image, triangle, 2, kOn, kOn, kOn);
    fillPolygon(image, nullptr, 3, kOn, kOn, kOn);
    EXPECT_TRUE(unchanged()) << "fewer than 3 points";
    for (const double bad : {nan, inf, -inf, 2e12}) {
        const PointF withBad[] = {{10, 10}, {100, bad}, {50, 90}};
        fillPolygon(image, withBad, 3, kOn, kOn, kOn);
        fillCircle(image, bad, 50, 20, kOn, kOn, kOn);
        fillCircle(image, 50, bad, 20, kOn, kOn, kOn);
        fillCircle(image, 50, 50, bad, kOn, kOn, kOn);
        EXPECT_TRUE(unchanged()) << bad;
    }
    for (const double radius : {0.0, -5.0, nan}) {
        fillCircle(image, 50, 50, radius, kOn, kOn, kOn);
        EXPECT_TRUE(unchanged()) << "radius " << radius;
    }
    const PointF line[] = {{10, 10}, {100, 55}, {190, 100}}; // collinear: no area
    fillPolygon(image, line, 3, kOn, kOn, kOn);
    const PointF point[] = {{40.5, 40.5}, {40.5, 40.5}, {40.5, 40.5}};
    fillPolygon(image, point, 3, kOn, kOn, kOn);
    EXPECT_TRUE(unchanged()) << "no area";

    Image empty;
    fillCircle(empty, 5, 5, 3, kOn, kOn, kOn);
    fillPolygon(empty, triangle, 3, kOn, kOn, kOn);
    Image grey(20, 20, 1);
    grey.fill(std::vector<uint8_t> {7}.data());
    fillCircle(grey, 5, 5, 3, kOn, kOn, kOn);
    fillPolygon(grey, triangle, 3, kOn, kOn, kOn);
    for (int y = 0; y < grey.rows; ++y)
        for (int x = 0; x < grey.cols; ++x)
            ASSERT_EQ(grey.ptr(y)[x], 7) << "a 1-channel image is left alone";
}

// Against cv::fillPoly and cv::circle with LINE_AA and 4 sub-pixel bits, as the renderers draw:
// OpenCV fills the pixels whose centres are inside and draws a 1.5 px antialiased line along the
// outline over them, so its shapes are about 0.7 px larger all round and its edges softer; the
// drawings differ only within 2.6 px of the outline (OpenCV's lines run on past sharp vertices).
// jetagent_raster_bench measured, at 320x240 over 200 shapes of each kind: a mean absolute
// difference of 0.41 (triangle) to 0.72 (ring) levels per channel value, 0.7% to 1.3% of pixels
// differing by more than 8 levels; OpenCV's areas 2.0% (circle) to 6.2% (star) above the
// analytic ones, raster.h's within 0.01%. This test's 12 of each: 0.41 to 0.77, 0.7% to 1.3%.
TEST(Raster, CloseToOpenCvOnTheRenderersShapes)
{
    constexpr int kShapesPerKind = 12;
    constexpr double kMaxMeanAbsolute = 1.0; // levels per channel value
    constexpr double kMaxFractionOver8 = 0.02;
    constexpr double kEdgeBand = 3.0; // px from the outline where the drawings may differ
    std::mt19937_64 random(kSeed);
    Image drawn(kHeight, kWidth);
    cv::Mat reference(kHeight, kWidth, CV_8UC3);
    for (const Kind kind : raster_shapes::kKinds) {
        raster_shapes::Difference d;
        double areaRatio = 0.0;
        for (int k = 0; k < kShapesPerKind; ++k) {
            const raster_shapes::Shape s =
                raster_shapes::randomShape(random, kind, kWidth, kHeight);
            raster_shapes::drawWithOpenCv(reference, s);
            raster_shapes::drawWithRaster(drawn, s);
            raster_shapes::compare(reference, drawn, s, kEdgeBand, d);
            areaRatio = std::max(areaRatio,
                std::fabs(
                    raster_shapes::drawnArea(drawn.data, drawn.rows, drawn.cols, drawn.step, s) /
                        raster_shapes::analyticArea(s) -
                    1.0));
        }
        const char* name = raster_shapes::kindName(kind);
        EXPECT_LT(d.meanAbsolute(), kMaxMeanAbsolute) << name;
        EXPECT_LT(d.fractionOver8(), kMaxFractionOver8) << name;
        EXPECT_EQ(d.farPixelsDiffering, 0) << name;
        EXPECT_LT(areaRatio, kAreaTolerance) << name;
    }
}

} // namespace
} // namespace jetagent
