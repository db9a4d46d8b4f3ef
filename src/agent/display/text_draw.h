// Text drawn on an Image with a built-in stroke font: the overlay's text without an image library.
#pragma once

#include <cstdint>
#include <string_view>

#include "jetagent/hal/image.h"

namespace jetagent {

// How text is drawn. At scale 1 capitals are 21 pixels tall, as with OpenCV's Hershey simplex at
// scale 1, so a layout made for that font keeps its proportions (lines run 10 to 20% shorter).
struct TextStyle {
    // Size: pixels per font unit (capitals are 21 units tall). In (0, 1000]; other values draw
    // nothing and measure 0. Above 4 glyphs are drawn anew at each call, which costs more.
    double scale = 1.0;
    // Stroke weight in pixels, not scaled: strokes are thickness + 1 pixels wide with antialiased
    // edges, about the weight of OpenCV's antialiased text of the same thickness, so an outline
    // drawn at thickness + 2 shows one pixel around each stroke. Clamped to 1..255.
    int thickness = 1;
};

// The box a line of text occupies, in pixels, for drawing at (x, baselineY).
struct TextSize {
    int width = 0; // from x to the right end of the ink; 0 for empty text
    int height = 0; // above the baseline row: the tallest glyph (brackets, ascenders)
    int baseline = 0; // below the baseline row: the deepest descender
};

// The box `text` takes in `style`. UTF-8 is read one character at a time: each character outside
// printable ASCII (32..126), and each stray byte of malformed UTF-8, takes the width of '?'. The
// height and baseline are the font's, whatever the text, so lines of one style stack evenly.
TextSize measureText(std::string_view text, const TextStyle& style);

// Draws `text` with its baseline on row `baselineY`, starting at column `x`, in the colour (blue,
// green, red), blending edge pixels by the fraction the stroke covers. Every pixel written lies in
// [x - thickness, x + width) x [baselineY - height, baselineY + baseline] of measureText(text,
// style) and inside the image: text partly or wholly outside is clipped, never an error. Outside
// printable ASCII each character draws as '?'. The image is 8-bit with 3 (BGR) or 4 (BGRA, alpha
// kept) channels, and may be a view into a larger one; other images are left as they are.
// Each thread keeps the glyphs it has drawn for its last 4 styles (up to scale 4, thickness 12), so
// the cost is that of blending the line's box: about 30 us for 40 characters at scale 1 on an x86
// core. Allocates only on a thread's first use of a glyph, a style or a larger line.
void drawText(Image& image, std::string_view text, int x, int baselineY, const TextStyle& style,
    uint8_t blue, uint8_t green, uint8_t red);

} // namespace jetagent
