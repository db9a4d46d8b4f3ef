// The overlay's built-in stroke font and its rasterizer (see text_draw.h).
#include "display/text_draw.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace jetagent {

namespace {

// The font is drawn with a round pen along polylines, as Hershey fonts are: one outline serves
// every scale and thickness, and an outline pass is the same text with a wider pen. Coordinates
// are font units, x to the right from the glyph's origin, y up from the baseline; at scale 1 a
// unit is a pixel, so strokes along whole units cover whole pixels there (see Pen). Capitals are 21
// units tall, the x-height is 15, ascenders reach 22 and descenders -6.
//
// A glyph's path is a list of commands, each a letter and its numbers:
//   M x y                    begins a stroke at (x, y)
//   L x y                    a line to (x, y)
//   A cx cy rx ry from to    an elliptic arc from angle `from` to `to` (degrees, counter-clockwise
//                            when to > from), joined to the stroke by a line if it starts apart
//   O cx cy rx ry from to    the same arc, beginning a new stroke
//   D x y                    a dot: a round blob a little wider than the pen
struct GlyphSource {
    char code;
    float advance; // font units to the next glyph's origin
    const char* path;
};

// Digits share one advance, so changing figures (a latency, a rate) do not shift what follows.
constexpr std::array<GlyphSource, 95> kGlyphSources = {{
    {' ', 8, ""},
    {'!', 8, "M4 21 L4 6.5 D4 1"},
    {'"', 12, "M4 21 L4 15 M8 21 L8 15"},
    {'#', 16, "M6.5 20 L4.5 1 M12 20 L10 1 M2.5 14 L14 14 M2 7 L13.5 7"},
    {'$', 15, "O7.5 14.5 4.5 4 30 270 A7.5 6.5 5 4 90 -150 M7.5 21.5 L7.5 18.5 M7.5 2.5 L7.5 -0.5"},
    {'%', 19, "O5 16 2.5 4.5 0 360 O14 5 2.5 4.5 0 360 M15 21 L4 0"},
    {'&', 17, "M15 0 L4.53 14.17 A7 17 3.5 4 225 -45 L3.32 8.54 A6.5 5 4.5 5 135 300 L14.5 8"},
    {'\'', 8, "M4 21 L4 15"},
    {'(', 10, "O11 8 7 16 120 240"},
    {')', 10, "O-1 8 7 16 60 -60"},
    {'*', 14, "M7 21 L7 11 M2.67 18.5 L11.33 13.5 M11.33 18.5 L2.67 13.5"},
    {'+', 16, "M8 17 L8 3 M1.5 10 L14.5 10"},
    {',', 8, "D4 1 M5 1 L3 -4"},
    {'-', 13, "M3 9 L10 9"},
    {'.', 8, "D4 1"},
    {'/', 12, "M2 -3 L10 22"},
    {'0', 15, "O7.5 10.5 5 10.5 0 360"},
    {'1', 15, "M3.5 17 L8.5 21 L8.5 0 M4 0 L12.5 0"},
    {'2', 15, "O7.5 15.5 5 5.5 160 -30 L2.5 0 L12.5 0"},
    {'3', 15, "O7.5 15.75 4.75 5.25 150 -90 L5.5 10.5 M7.5 10.5 A7.5 5.25 5.25 5.25 90 -150"},
    {'4', 15, "M10.5 0 L10.5 21 L2 6 L13.5 6"},
    {'5', 15, "M12 21 L4 21 L3.48 10.68 A7.5 6.5 5.25 6.5 140 -150"},
    {'6', 15, "O7.5 6.75 5 6.75 0 360 O10 6.75 7.5 14.25 75 180"},
    {'7', 15, "M2.5 21 L12.5 21 L5.5 0"},
    {'8', 15, "O7.5 15.75 4.25 5.25 0 360 O7.5 5.25 5 5.25 0 360"},
    {'9', 15, "O7.5 14.25 5 6.75 0 360 O5 14.25 7.5 14.25 255 360"},
    {':', 8, "D4 1 D4 11"},
    {';', 8, "D4 11 D4 1 M5 1 L3 -4"},
    {'<', 16, "M14 17 L2 10 L14 3"},
    {'=', 16, "M2 13 L14 13 M2 7 L14 7"},
    {'>', 16, "M2 17 L14 10 L2 3"},
    {'?', 15, "O7.5 16 5 5 150 -60 L7.5 9.5 L7.5 6.5 D7.5 1"},
    {'@', 21, "O10 8.5 3.5 4.5 0 360 M13.5 13 L13.5 6 A15.5 6 2 2 180 360 A10.5 9 7.5 10 0 300"},
    {'A', 17, "M1.5 0 L8.5 21 L15.5 0 M3.83 7 L13.17 7"},
    {'B', 18,
        "M3 0 L3 21 L9.5 21 A9.5 16 5 5 90 -90 L3 11 M9.5 11 L10 11 A10 5.5 5.5 5.5 90 -90 "
        "L3 0"},
    {'C', 17, "O9.5 10.5 7 10.5 40 320"},
    {'D', 18, "M3 0 L3 21 L8.5 21 A8.5 14 6.5 7 90 0 L15 7 A8.5 7 6.5 7 0 -90 L3 0"},
    {'E', 16, "M14 21 L3 21 L3 0 L14 0 M3 11 L12 11"},
    {'F', 15, "M14 21 L3 21 L3 0 M3 11 L12 11"},
    {'G', 18, "O9.5 10.5 7 10.5 40 351.8 L11 9"},
    {'H', 18, "M3 0 L3 21 M15 0 L15 21 M3 11 L15 11"},
    {'I', 11, "M2.5 21 L8.5 21 M5.5 21 L5.5 0 M2.5 0 L8.5 0"},
    {'J', 15, "M12 21 L12 6 A7 6 5 6 0 -150"},
    {'K', 17, "M3 0 L3 21 M15 21 L3 8 M7.5 12.88 L15 0"},
    {'L', 15, "M3 21 L3 0 L14 0"},
    {'M', 21, "M3 0 L3 21 L10.5 4 L18 21 L18 0"},
    {'N', 18, "M3 0 L3 21 L15 0 L15 21"},
    {'O', 18, "O9 10.5 6.5 10.5 0 360"},
    {'P', 17, "M3 0 L3 21 L9.5 21 A9.5 15.25 5.5 5.75 90 -90 L3 9.5"},
    {'Q', 18, "O9 10.5 6.5 10.5 0 360 M10 5 L16 -1"},
    {'R', 17, "M3 0 L3 21 L9.5 21 A9.5 15.5 5.5 5.5 90 -90 L3 10 M9 10 L15 0"},
    {'S', 17, "O9 15.75 5.5 5.25 30 270 A9 5.25 6 5.25 90 -150"},
    {'T', 16, "M1.5 21 L14.5 21 M8 21 L8 0"},
    {'U', 18, "M3 21 L3 7 A9 7 6 7 180 360 L15 21"},
    {'V', 17, "M1.5 21 L8.5 0 L15.5 21"},
    {'W', 22, "M1.5 21 L6 0 L11 16 L16 0 L20.5 21"},
    {'X', 17, "M2 21 L15 0 M15 21 L2 0"},
    {'Y', 17, "M1.5 21 L8.5 10 L15.5 21 M8.5 10 L8.5 0"},
    {'Z', 17, "M2.5 21 L14.5 21 L2.5 0 L14.5 0"},
    {'[', 11, "M9 22 L4.5 22 L4.5 -6 L9 -6"},
    {'\\', 12, "M2 22 L10 -3"},
    {']', 11, "M2 22 L6.5 22 L6.5 -6 L2 -6"},
    {'^', 16, "M3 14 L8 21 L13 14"},
    {'_', 15, "M1 -4 L14 -4"},
    {'`', 11, "M4 21 L7 17"},
    {'a', 16,
        "M13 0 L13 10.5 A8.5 10.5 4.5 4.5 0 150 M13 8.5 L7.5 8.5 A7.5 4.25 4.5 4.25 90 270 "
        "L9 0 A9 4 4 4 270 360"},
    {'b', 17, "M3 22 L3 0 O8.5 7.5 5.5 7.5 0 360"},
    {'c', 15, "O8.5 7.5 5.5 7.5 40 320"},
    {'d', 17, "M14 22 L14 0 O8.5 7.5 5.5 7.5 0 360"},
    {'e', 16, "M3 7.5 L14 7.5 A8.5 7.5 5.5 7.5 0 320"},
    {'f', 12, "M6 0 L6 18 A9.5 18 3.5 4 180 45 M2.5 15 L11 15"},
    {'g', 17, "O8.5 7.5 5.5 7.5 0 360 M14 15 L14 -1 A8.5 -1 5.5 5 0 -150"},
    {'h', 17, "M3 22 L3 0 M3 9 A8.5 9 5.5 6 180 0 L14 0"},
    {'i', 8, "M4 15 L4 0 D4 19.5"},
    {'j', 9, "M6 15 L6 -2 A3 -2 3 4 0 -150 D6 19.5"},
    {'k', 15, "M3 22 L3 0 M13 15 L3 5 M6.5 8.5 L13.5 0"},
    {'l', 10, "M4 22 L4 3 A7 3 3 3 180 270"},
    {'m', 21,
        "M3 15 L3 0 M3 10 A6.75 10 3.75 5 180 0 L10.5 0 M10.5 10 A14.25 10 3.75 5 180 0 "
        "L18 0"},
    {'n', 17, "M3 15 L3 0 M3 9 A8.5 9 5.5 6 180 0 L14 0"},
    {'o', 17, "O8.5 7.5 5.5 7.5 0 360"},
    {'p', 17, "M3 15 L3 -6 O8.5 7.5 5.5 7.5 0 360"},
    {'q', 17, "M14 15 L14 -6 O8.5 7.5 5.5 7.5 0 360"},
    {'r', 12, "M3 15 L3 0 M3 8 A8 8 5 7 180 60"},
    {'s', 15, "O8 11.25 4.5 3.75 30 270 A8 3.75 5 3.75 90 -150"},
    {'t', 13, "M6 20 L6 3 A9 3 3 3 180 270 L11.5 0 M2.5 15 L11.5 15"},
    {'u', 17, "M3 15 L3 6 A8.5 6 5.5 6 180 360 M14 15 L14 0"},
    {'v', 15, "M2 15 L7.5 0 L13 15"},
    {'w', 19, "M2 15 L5.5 0 L9.5 11 L13.5 0 L17 15"},
    {'x', 15, "M2.5 15 L12.5 0 M12.5 15 L2.5 0"},
    {'y', 15, "M2 15 L7.3 0 M13 15 L5 -6"},
    {'z', 16, "M3 15 L13 15 L3 0 L13 0"},
    {'{', 13, "M10 22 A10 19 3 3 90 180 L7 11 L4.5 8 L7 5 L7 -3 A10 -3 3 3 180 270"},
    {'|', 10, "M5 22 L5 -6"},
    {'}', 13, "M3 22 A3 19 3 3 90 0 L6 11 L8.5 8 L6 5 L6 -3 A3 -3 3 3 0 -90"},
    {'~', 16, "O5 9.5 3 2.5 180 0 A11 9.5 3 2.5 180 360"},
}};

constexpr int kFirstCode = 32;
constexpr int kLastCode = 126;
constexpr size_t kGlyphCount = kLastCode - kFirstCode + 1;
constexpr size_t kReplacement = '?' - kFirstCode; // drawn for anything outside printable ASCII
constexpr float kDotRadius = 1.0f; // font units a dot's radius exceeds the pen's
constexpr float kLetterSpacing = 1.5f; // font units added to every advance, half on each side
constexpr float kArcStepDegrees = 12.0f; // chords within a third of a pixel of arcs at scale 4
constexpr double kMaxScale = 1000.0; // larger text would not fit float pixel coordinates
constexpr int kMaxThickness = 255;

struct Segment {
    float x0, y0, x1, y1;
    float extra; // font units added to the pen's radius (dots)
};

struct Glyph {
    float advance = 0;
    uint32_t first = 0; // its segments in Font::segments
    uint32_t count = 0;
};

struct Font {
    std::array<Glyph, kGlyphCount> glyphs;
    std::vector<Segment> segments;
    float ascent = 0; // the highest and lowest any stroke reaches, dots included
    float descent = 0;
};

// Reads a number of the paths (no exponent; independent of the C locale, unlike strtod).
float readNumber(const char*& p)
{
    while (*p == ' ')
        ++p;
    float sign = 1;
    if (*p == '-') {
        sign = -1;
        ++p;
    }
    float value = 0;
    for (; *p >= '0' && *p <= '9'; ++p)
        value = value * 10 + static_cast<float>(*p - '0');
    if (*p == '.') {
        float unit = 0.1f;
        for (++p; *p >= '0' && *p <= '9'; ++p, unit /= 10)
            value += unit * static_cast<float>(*p - '0');
    }
    return sign * value;
}

// Turns one glyph's path into segments appended to `out`.
void flattenPath(const char* p, std::vector<Segment>& out)
{
    bool open = false; // a stroke is in progress, ending at (penX, penY)
    float penX = 0;
    float penY = 0;
    auto lineTo = [&](float x, float y) {
        if (open)
            out.push_back({penX, penY, x, y, 0});
        penX = x;
        penY = y;
        open = true;
    };
    while (*p != '\0') {
        const char command = *p++;
        if (command == ' ')
            continue;
        if (command == 'M' || command == 'L' || command == 'D') {
            const float x = readNumber(p);
            const float y = readNumber(p);
            if (command == 'D') {
                out.push_back({x, y, x, y, kDotRadius});
                open = false;
                continue;
            }
            open = open && command == 'L';
            lineTo(x, y);
            continue;
        }
        assert(command == 'A' || command == 'O');
        const float cx = readNumber(p);
        const float cy = readNumber(p);
        const float rx = readNumber(p);
        const float ry = readNumber(p);
        const float from = readNumber(p);
        const float to = readNumber(p);
        if (command == 'O')
            open = false;
        const int steps =
            std::max(1, static_cast<int>(std::ceil(std::fabs(to - from) / kArcStepDegrees)));
        constexpr float kRadians = 3.14159265358979f / 180.0f;
        for (int i = 0; i <= steps; ++i) {
            const float angle = (from + (to - from) * static_cast<float>(i) / steps) * kRadians;
            const float x = cx + rx * std::cos(angle);
            const float y = cy + ry * std::sin(angle);
            if (i == 0 && open && std::fabs(x - penX) < 1e-3f && std::fabs(y - penY) < 1e-3f)
                continue; // the arc starts where the stroke is
            lineTo(x, y);
        }
    }
}

Font buildFont()
{
    Font font;
    for (const GlyphSource& source : kGlyphSources) {
        Glyph& glyph = font.glyphs[static_cast<size_t>(source.code - kFirstCode)];
        glyph.advance = source.advance + kLetterSpacing;
        glyph.first = static_cast<uint32_t>(font.segments.size());
        flattenPath(source.path, font.segments);
        glyph.count = static_cast<uint32_t>(font.segments.size()) - glyph.first;
        for (uint32_t i = glyph.first; i < glyph.first + glyph.count; ++i) {
            Segment& s = font.segments[i];
            s.x0 += kLetterSpacing / 2;
            s.x1 += kLetterSpacing / 2;
            font.ascent = std::max({font.ascent, s.y0 + s.extra, s.y1 + s.extra});
            font.descent = std::max({font.descent, s.extra - s.y0, s.extra - s.y1});
            // The width measured from the advances holds every glyph's ink.
            assert(std::min(s.x0, s.x1) - s.extra >= 0);
            assert(std::max(s.x0, s.x1) + s.extra <= glyph.advance);
        }
    }
    return font;
}

const Font& font()
{
    static const Font built = buildFont();
    return built;
}

// Calls `use` with the index of the glyph of each character of UTF-8 `text`: a lead byte and the
// continuation bytes after it are one character.
template <typename Use>
void forEachGlyph(std::string_view text, Use&& use)
{
    for (size_t i = 0; i < text.size();) {
        const auto byte = static_cast<unsigned char>(text[i++]);
        if (byte >= kFirstCode && byte <= kLastCode) {
            use(static_cast<size_t>(byte - kFirstCode));
            continue;
        }
        if (byte >= 0xC0 && byte <= 0xF7) {
            int continuation = byte >= 0xF0 ? 3 : byte >= 0xE0 ? 2 : 1;
            while (continuation-- > 0 && i < text.size() &&
                (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80)
                ++i;
        }
        use(kReplacement);
    }
}

bool usableScale(double scale)
{
    return scale > 0 && scale <= kMaxScale; // false for NaN
}

int thicknessOf(const TextStyle& style)
{
    return std::clamp(style.thickness, 1, kMaxThickness);
}

// The pen is a pixel wider than `thickness`: a stroke one pixel wide, split between two pixels
// wherever it falls between them, reads as a faint grey hairline on video. So weighted, text has
// about the weight OpenCV's antialiased Hershey text has at the same thickness.
struct Pen {
    float scale; // pixels per font unit
    float radius; // in pixels
    // Odd widths are centred on pixel centres, even ones on pixel edges: at whole scales a stroke
    // along whole font units then covers whole pixels, with no half-lit ones beside it.
    float offset;
};

Pen penFor(const TextStyle& style)
{
    const int width = thicknessOf(style) + 1;
    return {static_cast<float>(style.scale), static_cast<float>(width) / 2,
        width % 2 == 1 ? 0.5f : 0.0f};
}

double advanceOf(std::string_view text)
{
    const Font& f = font();
    double advance = 0;
    forEachGlyph(text, [&](size_t glyph) { advance += f.glyphs[glyph].advance; });
    return advance;
}

int ceilToInt(double value)
{
    return static_cast<int>(std::min<double>(std::ceil(value), std::numeric_limits<int>::max()));
}

// A rectangle of pixels, [x0, x1) x [y0, y1).
struct Area {
    int x0, y0, x1, y1;
    int width() const { return x1 - x0; }
    int height() const { return y1 - y0; }
};

// The pen drawn along a segment, in pixels: the points within `reach` of (ax, ay)-(bx, by).
struct Capsule {
    float ax, ay, bx, by;
    float reach; // the pen's radius plus the half pixel over which coverage fades out
};

// Segment `s` of a glyph whose origin is at pixel (x, y) (the origin's pixel's top left corner).
Capsule capsuleOf(const Segment& s, const Pen& pen, float x, float y)
{
    x += pen.offset;
    y += pen.offset;
    return {x + s.x0 * pen.scale, y - s.y0 * pen.scale, x + s.x1 * pen.scale, y - s.y1 * pen.scale,
        pen.radius + s.extra * pen.scale + 0.5f};
}

// Raises the coverage (0..255) of each pixel of `area` near the capsule to the depth of its centre
// inside the capsule, up to 1. Taking the maximum, not the sum, keeps joints and crossings from
// brightening.
void strokeSegment(uint8_t* coverage, const Area& area, const Capsule& c)
{
    // Rows and columns whose pixel centres (p + 0.5) may lie inside.
    const int px0 =
        std::max(area.x0, static_cast<int>(std::ceil(std::min(c.ax, c.bx) - c.reach - 0.5f)));
    const int px1 =
        std::min(area.x1 - 1, static_cast<int>(std::floor(std::max(c.ax, c.bx) + c.reach - 0.5f)));
    const int py0 =
        std::max(area.y0, static_cast<int>(std::ceil(std::min(c.ay, c.by) - c.reach - 0.5f)));
    const int py1 =
        std::min(area.y1 - 1, static_cast<int>(std::floor(std::max(c.ay, c.by) + c.reach - 0.5f)));
    const float dx = c.bx - c.ax;
    const float dy = c.by - c.ay;
    const float length2 = dx * dx + dy * dy;
    const float inverse = length2 > 0 ? 1.0f / length2 : 0.0f;
    const float reach2 = c.reach * c.reach;
    for (int py = py0; py <= py1; ++py) {
        uint8_t* row = coverage + static_cast<size_t>(py - area.y0) * area.width();
        const float ey = static_cast<float>(py) + 0.5f - c.ay;
        for (int px = px0; px <= px1; ++px) {
            const float ex = static_cast<float>(px) + 0.5f - c.ax;
            const float t = std::clamp((ex * dx + ey * dy) * inverse, 0.0f, 1.0f);
            const float fx = ex - t * dx;
            const float fy = ey - t * dy;
            const float d2 = fx * fx + fy * fy;
            if (d2 >= reach2)
                continue;
            const float depth = std::min(1.0f, c.reach - std::sqrt(d2));
            const auto value = static_cast<uint8_t>(std::lround(depth * 255.0f));
            uint8_t& cell = row[px - area.x0];
            cell = std::max(cell, value);
        }
    }
}

// A glyph drawn at one style, kept for the next time: its coverage, placed relative to the pixel
// of its origin. Glyphs are drawn at whole-pixel origins, so one bitmap serves every position.
struct GlyphBitmap {
    bool ready = false;
    Area area {0, 0, 0, 0};
    size_t offset = 0; // in StyleCache::pixels
};

struct StyleCache {
    double scale = 0;
    int thickness = 0;
    std::array<GlyphBitmap, kGlyphCount> glyphs;
    std::vector<uint8_t> pixels;
};

// Styles a thread keeps glyphs of: the overlay draws with two (the outline's and the text's).
constexpr size_t kCachedStyles = 4;
// Larger glyphs are drawn straight into the line, each time: kept, they would take up to 14 KiB
// each (1.3 MiB a style). The overlay's text, up to 2160 lines, is smaller.
constexpr double kMaxCachedScale = 4.0;
constexpr int kMaxCachedThickness = 12;

StyleCache& cacheFor(const TextStyle& style)
{
    thread_local std::array<StyleCache, kCachedStyles> caches;
    thread_local size_t oldest = 0;
    const int thickness = thicknessOf(style);
    for (StyleCache& cache : caches)
        if (cache.scale == style.scale && cache.thickness == thickness)
            return cache;
    StyleCache& cache = caches[oldest];
    oldest = (oldest + 1) % kCachedStyles;
    cache.scale = style.scale;
    cache.thickness = thickness;
    cache.glyphs.fill({});
    cache.pixels.clear();
    return cache;
}

const GlyphBitmap& glyphBitmap(StyleCache& cache, size_t index, const Pen& pen)
{
    GlyphBitmap& bitmap = cache.glyphs[index];
    if (bitmap.ready)
        return bitmap;
    bitmap.ready = true;
    const Font& f = font();
    const Glyph& glyph = f.glyphs[index];
    if (glyph.count == 0)
        return bitmap;
    float left = std::numeric_limits<float>::infinity();
    float top = left;
    float right = -left;
    float bottom = -left;
    for (uint32_t i = glyph.first; i < glyph.first + glyph.count; ++i) {
        const Capsule c = capsuleOf(f.segments[i], pen, 0, 0);
        left = std::min({left, c.ax - c.reach, c.bx - c.reach});
        right = std::max({right, c.ax + c.reach, c.bx + c.reach});
        top = std::min({top, c.ay - c.reach, c.by - c.reach});
        bottom = std::max({bottom, c.ay + c.reach, c.by + c.reach});
    }
    bitmap.area = {static_cast<int>(std::floor(left)), static_cast<int>(std::floor(top)),
        static_cast<int>(std::ceil(right)), static_cast<int>(std::ceil(bottom))};
    bitmap.offset = cache.pixels.size();
    cache.pixels.resize(
        bitmap.offset + static_cast<size_t>(bitmap.area.width()) * bitmap.area.height(), 0);
    for (uint32_t i = glyph.first; i < glyph.first + glyph.count; ++i)
        strokeSegment(
            cache.pixels.data() + bitmap.offset, bitmap.area, capsuleOf(f.segments[i], pen, 0, 0));
    return bitmap;
}

// Raises the line's coverage to the glyph's where the glyph, its origin at pixel (x, y), overlaps.
void composite(
    uint8_t* coverage, const Area& line, const uint8_t* glyph, const Area& area, int x, int y)
{
    const int x0 = std::max(line.x0, x + area.x0);
    const int x1 = std::min(line.x1, x + area.x1);
    const int y0 = std::max(line.y0, y + area.y0);
    const int y1 = std::min(line.y1, y + area.y1);
    for (int py = y0; py < y1; ++py) {
        uint8_t* to = coverage + static_cast<size_t>(py - line.y0) * line.width() + (x0 - line.x0);
        const uint8_t* from =
            glyph + static_cast<size_t>(py - y - area.y0) * area.width() + (x0 - x - area.x0);
        for (int i = 0; i < x1 - x0; ++i)
            to[i] = std::max(to[i], from[i]);
    }
}

// Blends the colour into the image by the coverage of each pixel of `area`.
void blend(Image& image, const uint8_t* coverage, const Area& area, const uint8_t colour[3])
{
    const int channels = image.channels();
    const int width = area.width();
    for (int y = area.y0; y < area.y1; ++y) {
        const uint8_t* c = coverage + static_cast<size_t>(y - area.y0) * width;
        uint8_t* pixel = image.ptr(y) + static_cast<size_t>(area.x0) * channels;
        for (int x = 0; x < width; ++x, pixel += channels) {
            if (c[x] == 0)
                continue;
            if (c[x] == 255) {
                std::memcpy(pixel, colour, 3);
                continue;
            }
            const int alpha = c[x] + (c[x] >> 7); // 0..256
            for (int k = 0; k < 3; ++k)
                pixel[k] =
                    static_cast<uint8_t>((pixel[k] * (256 - alpha) + colour[k] * alpha + 128) >> 8);
        }
    }
}

} // namespace

TextSize measureText(std::string_view text, const TextStyle& style)
{
    if (!usableScale(style.scale))
        return {};
    const Font& f = font();
    const Pen pen = penFor(style);
    const double reach = pen.radius + 0.5;
    // A pixel is touched when its centre lies within `reach` of a stroke; the pen's offset only
    // moves strokes right and down, by at most half a pixel, and a glyph's ink lies within its
    // advance.
    TextSize size;
    size.height = ceilToInt(f.ascent * style.scale + reach - 0.5);
    size.baseline = ceilToInt(f.descent * style.scale + reach) - 1;
    if (!text.empty())
        size.width = ceilToInt(advanceOf(text) * style.scale + reach + 0.5);
    return size;
}

void drawText(Image& image, std::string_view text, int x, int baselineY, const TextStyle& style,
    uint8_t blue, uint8_t green, uint8_t red)
{
    if (image.empty() || (image.channels() != 3 && image.channels() != 4) || text.empty() ||
        !usableScale(style.scale))
        return;
    const TextSize size = measureText(text, style);
    const int thickness = thicknessOf(style);
    // In 64 bits: the box of text far outside the image may lie beyond the range of int.
    const Area line = {
        static_cast<int>(std::clamp<int64_t>(int64_t {x} - thickness, 0, image.cols)),
        static_cast<int>(std::clamp<int64_t>(int64_t {baselineY} - size.height, 0, image.rows)),
        static_cast<int>(std::clamp<int64_t>(int64_t {x} + size.width, 0, image.cols)),
        static_cast<int>(
            std::clamp<int64_t>(int64_t {baselineY} + size.baseline + 1, 0, image.rows)),
    };
    if (line.width() <= 0 || line.height() <= 0)
        return;

    // One buffer per thread, kept between calls: the view draws every frame.
    thread_local std::vector<uint8_t> coverage;
    coverage.assign(static_cast<size_t>(line.width()) * line.height(), 0);

    const Font& f = font();
    const Pen pen = penFor(style);
    StyleCache* cache = style.scale <= kMaxCachedScale && thickness <= kMaxCachedThickness
        ? &cacheFor(style)
        : nullptr;
    const double reach = pen.radius + 0.5 + kDotRadius * style.scale;
    double advance = 0; // font units from x to the glyph's origin
    bool pastRight = false;
    forEachGlyph(text, [&](size_t index) {
        const Glyph& glyph = f.glyphs[index];
        // Whole-pixel origins: a letter looks the same wherever it falls in the line.
        const double left = std::floor(x + advance * style.scale + 0.5);
        advance += glyph.advance;
        if (pastRight || left - reach >= line.x1) {
            pastRight = true;
            return;
        }
        if (left + glyph.advance * style.scale + reach <= line.x0)
            return;
        const int originX = static_cast<int>(left); // within a glyph of the image, by now
        if (cache) {
            const GlyphBitmap& bitmap = glyphBitmap(*cache, index, pen);
            composite(coverage.data(), line, cache->pixels.data() + bitmap.offset, bitmap.area,
                originX, baselineY);
            return;
        }
        for (uint32_t i = glyph.first; i < glyph.first + glyph.count; ++i)
            strokeSegment(coverage.data(), line,
                capsuleOf(f.segments[i], pen, static_cast<float>(originX),
                    static_cast<float>(baselineY)));
    });
    const uint8_t colour[3] = {blue, green, red};
    blend(image, coverage.data(), line, colour);
}

} // namespace jetagent
