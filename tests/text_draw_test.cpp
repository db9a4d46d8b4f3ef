// The built-in font: measured boxes that hold the ink, clipping, UTF-8, thickness and blending.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "display/text_draw.h"

namespace jetagent {
namespace {

constexpr uint8_t kBackground = 7; // every channel of an untouched pixel
constexpr uint8_t kInk = 250;
const double kScales[] = {0.4, 0.5, 2.0 / 3.0, 1.0, 1.5, 2.0, 3.0, 4.0, 9.0};
const int kThicknesses[] = {1, 2, 3, 5, 8};

std::string printableAscii()
{
    std::string text;
    for (char c = 32; c <= 126; ++c)
        text += c;
    return text;
}

Image canvas(int rows, int cols, int channels = 3)
{
    Image image(rows, cols, channels);
    std::vector<uint8_t> value(static_cast<size_t>(channels), kBackground);
    image.fill(value.data());
    return image;
}

bool touched(const Image& image, int x, int y)
{
    const uint8_t* p = image.ptr(y) + static_cast<size_t>(x) * image.channels();
    for (int k = 0; k < image.channels(); ++k)
        if (p[k] != kBackground)
            return true;
    return false;
}

int countTouched(const Image& image)
{
    int count = 0;
    for (int y = 0; y < image.rows; ++y)
        for (int x = 0; x < image.cols; ++x)
            count += touched(image, x, y) ? 1 : 0;
    return count;
}

// The pixels of `text` drawn alone at scale `scale` on a canvas that holds it whole.
std::vector<uint8_t> render(const std::string& text, const TextStyle& style)
{
    const TextSize size = measureText(text, style);
    const int margin = style.thickness + 2;
    Image image = canvas(size.height + size.baseline + 1 + 2 * margin, size.width + 2 * margin);
    drawText(image, text, margin, margin + size.height, style, kInk, kInk, kInk);
    return std::vector<uint8_t>(image.data, image.data + image.rows * image.step);
}

TEST(TextDraw, WidthGrowsWithTheTextAndScalesWithScale)
{
    const TextStyle style {1.0, 1};
    int previous = 0;
    std::string text;
    for (char c : std::string("overlay 12.3 ms")) {
        text += c;
        const int width = measureText(text, style).width;
        EXPECT_GT(width, previous) << '"' << text << '"';
        previous = width;
    }
    const std::string line = "classify  circle 0.98";
    const TextSize one = measureText(line, {1.0, 1});
    const TextSize two = measureText(line, {2.0, 1});
    const TextSize half = measureText(line, {0.5, 1});
    EXPECT_NEAR(static_cast<double>(two.width) / one.width, 2.0, 0.05);
    EXPECT_NEAR(static_cast<double>(half.width) / one.width, 0.5, 0.05);
    EXPECT_NEAR(static_cast<double>(two.height) / one.height, 2.0, 0.1);
    // About as tall as OpenCV's Hershey simplex at the same scale (22 with thickness 1).
    EXPECT_GE(one.height, 20);
    EXPECT_LE(one.height, 26);
    EXPECT_GT(one.baseline, 3);
}

TEST(TextDraw, EmptyTextHasNoWidthAndDrawsNothing)
{
    const TextSize size = measureText("", {1.0, 2});
    EXPECT_EQ(size.width, 0);
    EXPECT_EQ(size.height, measureText("x", {1.0, 2}).height); // a line's height all the same
    Image image = canvas(40, 40);
    drawText(image, "", 5, 30, {1.0, 2}, kInk, kInk, kInk);
    EXPECT_EQ(countTouched(image), 0);
}

TEST(TextDraw, SpacesDrawNothing)
{
    Image image = canvas(60, 200);
    drawText(image, "    ", 5, 40, {2.0, 3}, kInk, kInk, kInk);
    EXPECT_EQ(countTouched(image), 0);
    EXPECT_GT(measureText("    ", {2.0, 3}).width, measureText("  ", {2.0, 3}).width);
}

TEST(TextDraw, EveryPixelDrawnLiesInTheMeasuredBox)
{
    const std::vector<std::string> texts = {
        printableAscii(), "gjpqy_,;", "([{|}])", "Ag", "caf\xC3\xA9 \xE6\xB8\xA9\xE5\xBA\xA6"};
    for (double scale : kScales)
        for (int thickness : kThicknesses)
            for (const std::string& text : texts) {
                const TextStyle style {scale, thickness};
                const TextSize size = measureText(text, style);
                constexpr int kMargin = 20;
                const int x = kMargin + thickness;
                const int baselineY = kMargin + size.height;
                Image image = canvas(size.height + size.baseline + 2 * kMargin,
                    size.width + thickness + 2 * kMargin);
                drawText(image, text, x, baselineY, style, kInk, kInk, kInk);
                int inside = 0;
                for (int py = 0; py < image.rows; ++py)
                    for (int px = 0; px < image.cols; ++px) {
                        if (!touched(image, px, py))
                            continue;
                        const bool in = px >= x - thickness && px < x + size.width &&
                            py >= baselineY - size.height && py <= baselineY + size.baseline;
                        ASSERT_TRUE(in)
                            << "'" << text << "' at scale " << scale << ", thickness " << thickness
                            << ": pixel (" << px << ", " << py << ") is outside the box";
                        ++inside;
                    }
                EXPECT_GT(inside, 0) << "'" << text << "' at scale " << scale;
            }
}

TEST(TextDraw, EveryPrintableGlyphDrawsAndNoTwoLookAlike)
{
    const TextStyle style {1.0, 1};
    std::set<std::vector<uint8_t>> seen;
    for (char c = 33; c <= 126; ++c) {
        const std::string text(1, c);
        Image image = canvas(60, 60);
        drawText(image, text, 10, 40, style, kInk, kInk, kInk);
        EXPECT_GT(countTouched(image), 0) << "'" << c << "' draws nothing";
        // Same width, different pixels: all glyphs but the digits differ in advance as well.
        EXPECT_TRUE(seen.insert(render(text, style)).second) << "'" << c << "' looks like another";
    }
}

TEST(TextDraw, DifferentLettersDrawDifferentPixels)
{
    for (const char* pair : {"Il", "O0", "l1", "rn", "5S", "8B", "ij"}) {
        const TextStyle style {1.0, 2};
        Image a = canvas(60, 60);
        Image b = canvas(60, 60);
        drawText(a, std::string(1, pair[0]), 10, 40, style, kInk, kInk, kInk);
        drawText(b, std::string(1, pair[1]), 10, 40, style, kInk, kInk, kInk);
        int differing = 0;
        for (int y = 0; y < a.rows; ++y)
            for (int x = 0; x < a.cols; ++x)
                differing += touched(a, x, y) != touched(b, x, y) ? 1 : 0;
        EXPECT_GT(differing, 10) << pair;
    }
}

TEST(TextDraw, DigitsShareOneWidth)
{
    const int width = measureText("0", {1.0, 1}).width;
    for (char c = '1'; c <= '9'; ++c)
        EXPECT_EQ(measureText(std::string(1, c), {1.0, 1}).width, width) << c;
}

// A view into a larger image: nothing around it may change, wherever the text is put.
TEST(TextDraw, ClippedDrawingWritesOnlyInsideTheImage)
{
    constexpr int kBorder = 30;
    constexpr int kWidth = 120;
    constexpr int kHeight = 50;
    const std::string text = "Clipped gjpq [x] 0.98";
    struct Place {
        int x, baselineY;
        bool visible;
    };
    const Place places[] = {
        {-40, 30, true}, // starts left of the image
        {60, 5, true}, // mostly above the top
        {100, 30, true}, // runs past the right edge
        {10, 60, true}, // below the bottom but for the top of the letters
        {-100000, 30, false},
        {100000, 30, false},
        {10, -100000, false},
        {10, 100000, false},
        {INT_MIN, INT_MIN, false},
        {INT_MAX, INT_MAX, false},
        {INT_MAX - 10, 30, false},
        {INT_MIN + 10, 30, false},
    };
    for (double scale : {0.5, 1.0, 4.0, 9.0})
        for (const Place& place : places) {
            Image whole = canvas(kHeight + 2 * kBorder, kWidth + 2 * kBorder);
            Image view = whole.roi(kBorder, kBorder, kWidth, kHeight);
            drawText(view, text, place.x, place.baselineY, {scale, 3}, kInk, kInk, kInk);
            int insideView = 0;
            for (int y = 0; y < whole.rows; ++y)
                for (int x = 0; x < whole.cols; ++x) {
                    const bool inView = x >= kBorder && x < kBorder + kWidth && y >= kBorder &&
                        y < kBorder + kHeight;
                    if (inView)
                        insideView += touched(whole, x, y) ? 1 : 0;
                    else
                        ASSERT_FALSE(touched(whole, x, y))
                            << "text at (" << place.x << ", " << place.baselineY << "), scale "
                            << scale << " wrote pixel (" << x << ", " << y << ") of the border";
                }
            if (scale > 4)
                continue; // the places were chosen for the overlay's sizes
            if (place.visible)
                EXPECT_GT(insideView, 0) << place.x << ", " << place.baselineY;
            else
                EXPECT_EQ(insideView, 0) << place.x << ", " << place.baselineY;
        }
}

TEST(TextDraw, ClippingKeepsTheVisiblePart)
{
    // The part of a line cut by the image's edge is drawn as it is in a line drawn whole.
    const std::string text = "12.3 ms  30.0 fps";
    const TextStyle style {1.0, 2};
    Image whole = canvas(40, 300);
    drawText(whole, text, 20, 30, style, kInk, kInk, kInk);
    Image shifted = canvas(40, 300);
    drawText(shifted, text, -60, 30, style, kInk, kInk, kInk);
    for (int y = 0; y < whole.rows; ++y)
        for (int x = 0; x + 80 < whole.cols; ++x)
            ASSERT_EQ(std::memcmp(whole.ptr(y) + 3 * (x + 80), shifted.ptr(y) + 3 * x, 3), 0)
                << "pixel (" << x << ", " << y << ")";
}

TEST(TextDraw, EachUtf8CharacterDrawsOneReplacementGlyph)
{
    const TextStyle style {1.0, 2};
    EXPECT_EQ(measureText("caf\xC3\xA9", style).width, measureText("caf?", style).width);
    EXPECT_EQ(measureText("\xE6\xB8\xA9\xE5\xBA\xA6", style).width, measureText("??", style).width);
    EXPECT_EQ(measureText("\xF0\x9F\x98\x80!", style).width, measureText("?!", style).width);
    // Malformed: a stray continuation byte, and a sequence cut short by the end of the text.
    EXPECT_EQ(measureText("a\x80z", style).width, measureText("a?z", style).width);
    EXPECT_EQ(measureText("ab\xE6\xB8", style).width, measureText("ab?", style).width);
    // Control characters too.
    EXPECT_EQ(measureText("a\tb\x7F", style).width, measureText("a?b?", style).width);
    EXPECT_EQ(render("\xE6\xB8\xA9\xE5\xBA\xA6", style), render("??", style));
    EXPECT_EQ(render("caf\xC3\xA9", style), render("caf?", style));
}

TEST(TextDraw, ThickerStrokesDrawMorePixels)
{
    int previous = 0;
    for (int thickness = 1; thickness <= 8; ++thickness) {
        Image image = canvas(80, 400);
        drawText(image, "Thick 0.98 gy", 20, 50, {1.0, thickness}, kInk, kInk, kInk);
        const int count = countTouched(image);
        EXPECT_GT(count, previous) << "thickness " << thickness;
        previous = count;
    }
    // Thickness 0 and below draw as 1.
    Image thin = canvas(80, 400);
    Image zero = canvas(80, 400);
    drawText(thin, "Thick", 20, 50, {1.0, 1}, kInk, kInk, kInk);
    drawText(zero, "Thick", 20, 50, {1.0, 0}, kInk, kInk, kInk);
    EXPECT_EQ(std::memcmp(thin.data, zero.data, thin.step * thin.rows), 0);
}

TEST(TextDraw, ExtremeStylesStayInTheImage)
{
    // Far beyond what the overlay uses: slow, but bounded by the image, and never a crash.
    constexpr int kBorder = 10;
    Image whole = canvas(40 + 2 * kBorder, 60 + 2 * kBorder);
    Image view = whole.roi(kBorder, kBorder, 60, 40);
    for (const TextStyle& style : {TextStyle {1000.0, 1}, TextStyle {1.0, INT_MAX},
             TextStyle {1e-6, 3}, TextStyle {50.0, 100}})
        drawText(view, "W", -30, 35, style, kInk, kInk, kInk);
    int border = 0;
    for (int y = 0; y < whole.rows; ++y)
        for (int x = 0; x < whole.cols; ++x)
            if (x < kBorder || x >= kBorder + 60 || y < kBorder || y >= kBorder + 40)
                border += touched(whole, x, y) ? 1 : 0;
    EXPECT_EQ(border, 0);
    EXPECT_GT(countTouched(whole), 0);
    EXPECT_GT(measureText("W", {1.0, INT_MAX}).width, 0);
}

TEST(TextDraw, EdgesBlendTheColourByCoverage)
{
    Image image = canvas(60, 300);
    drawText(image, "classify circle", 10, 40, {2.0 / 3.0, 1}, 200, 100, 50);
    int full = 0;
    int partial = 0;
    for (int y = 0; y < image.rows; ++y)
        for (int x = 0; x < image.cols; ++x) {
            const uint8_t* p = image.ptr(y) + 3 * x;
            if (p[0] == 200 && p[1] == 100 && p[2] == 50)
                ++full; // B, G, R in that order
            else if (p[0] != kBackground) {
                ++partial;
                // Between the background and the colour, in every channel alike.
                EXPECT_GT(p[0], kBackground);
                EXPECT_LT(p[0], 200);
                EXPECT_NEAR((p[0] - kBackground) / 193.0, (p[2] - kBackground) / 43.0, 0.1);
            }
        }
    EXPECT_GT(full, 0);
    EXPECT_GT(partial, 0);
}

TEST(TextDraw, ALetterLooksTheSameWhereverItIsDrawn)
{
    const TextStyle style {1.5, 2};
    Image a = canvas(60, 100);
    Image b = canvas(60, 100);
    drawText(a, "g", 10, 40, style, kInk, kInk, kInk);
    drawText(b, "g", 37, 45, style, kInk, kInk, kInk);
    for (int y = 0; y + 5 < a.rows; ++y)
        for (int x = 0; x + 27 < a.cols; ++x)
            ASSERT_EQ(a.ptr(y)[3 * x], b.ptr(y + 5)[3 * (x + 27)]) << x << ", " << y;
}

TEST(TextDraw, OnlyColourImagesAreDrawnOn)
{
    Image grey = canvas(40, 100, 1);
    drawText(grey, "grey", 10, 30, {1.0, 1}, kInk, kInk, kInk);
    EXPECT_EQ(countTouched(grey), 0);

    Image bgra = canvas(40, 100, 4);
    drawText(bgra, "bgra", 10, 30, {1.0, 1}, kInk, kInk, kInk);
    EXPECT_GT(countTouched(bgra), 0);
    for (int y = 0; y < bgra.rows; ++y)
        for (int x = 0; x < bgra.cols; ++x)
            ASSERT_EQ(bgra.ptr(y)[4 * x + 3], kBackground) << "alpha changed";

    Image none;
    drawText(none, "nothing", 0, 10, {1.0, 1}, kInk, kInk, kInk); // must not crash
}

TEST(TextDraw, UnusableScalesDrawNothing)
{
    for (double scale : {0.0, -1.0, std::nan(""), HUGE_VAL, 1e300}) {
        const TextSize size = measureText("x", {scale, 1});
        EXPECT_EQ(size.width, 0);
        Image image = canvas(40, 40);
        drawText(image, "x", 5, 30, {scale, 1}, kInk, kInk, kInk);
        EXPECT_EQ(countTouched(image), 0) << scale;
    }
}

// Glyphs are kept per thread and style once drawn; above scale 4 they are drawn straight into the
// line. Both ways draw the same text.
TEST(TextDraw, KeptGlyphsMatchGlyphsDrawnAnew)
{
    const std::string text = "Kept 0.98 gy";
    const double kept = 4.0; // the largest scale whose glyphs are kept
    const double anew = std::nextafter(kept, 5.0);
    const TextSize size = measureText(text, {anew, 3});
    Image a = canvas(size.height + size.baseline + 20, size.width + 20);
    Image b = canvas(a.rows, a.cols);
    drawText(a, text, 10, 10 + size.height, {kept, 3}, kInk, kInk, kInk);
    drawText(b, text, 10, 10 + size.height, {anew, 3}, kInk, kInk, kInk);
    const size_t bytes = a.step * static_cast<size_t>(a.rows);
    int differing = 0;
    for (size_t i = 0; i < bytes; ++i) {
        ASSERT_NEAR(a.data[i], b.data[i], 2) << "byte " << i;
        differing += a.data[i] != b.data[i] ? 1 : 0;
    }
    EXPECT_LT(differing, static_cast<int>(bytes / 100));
}

TEST(TextDraw, ManyStylesInTurnDrawAsOneDoes)
{
    const TextStyle style {1.25, 2};
    const std::vector<uint8_t> first = render("Ag 12.3", style);
    for (int thickness = 1; thickness <= 6; ++thickness)
        render("Ag 12.3", {0.75, thickness}); // more styles than a thread keeps
    EXPECT_EQ(render("Ag 12.3", style), first);
}

TEST(TextDraw, ThreadsDrawAlike)
{
    const TextStyle style {1.5, 2};
    const std::vector<uint8_t> expected = render("threads 30.0 fps", style);
    std::vector<std::vector<uint8_t>> results(4);
    std::vector<std::thread> threads;
    threads.reserve(results.size());
    for (auto& result : results)
        threads.emplace_back([&result, &style] {
            for (int i = 0; i < 20; ++i)
                result = render("threads 30.0 fps", style);
        });
    for (auto& thread : threads)
        thread.join();
    for (const auto& result : results)
        EXPECT_EQ(result, expected);
}

} // namespace
} // namespace jetagent
