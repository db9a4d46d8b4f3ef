// Antialiased filled polygons and discs on 8-bit BGR images, drawn without an image library.
#pragma once

#include <cstddef>
#include <cstdint>

#include "jetagent/hal/image.h"

namespace jetagent {

// A point in pixel units, in the convention of OpenCV's drawing functions: integer (x, y) is the
// centre of pixel (x, y), so pixel (i, j) covers [i - 0.5, i + 0.5) x [j - 0.5, j + 0.5) and the
// image spans [-0.5, cols - 0.5) x [-0.5, rows - 0.5). A point given to OpenCV with `shift`
// sub-pixel bits as p is PointF{p.x / 2^shift, p.y / 2^shift} here.
struct PointF {
    double x, y;
};

// Both fills blend each pixel towards the colour by the fraction of its square the shape covers,
// computed exactly (not sampled): out = (background * (256 - a) + colour * a + 128) / 256 with
// a = round(256 * coverage). Pixels wholly inside get the colour exactly; pixels the shape does
// not reach are not written, nor is anything outside the image: shapes may lie partly or wholly
// outside it. Nothing is drawn (and nothing fails) for an image that is empty or has not 3
// channels, and for degenerate shapes: NaN or infinite values, coordinates or a radius beyond
// +-1e12 px (a bound that keeps the arithmetic finite and edges placed to 1/8000 px), a polygon
// of fewer than 3 points, a radius not above 0. The cost is the shape's outline plus the pixels
// it covers within the image; the scratch memory, per thread, is 32 rows of the widest shape
// drawn yet (160 KiB across a 1280-pixel frame), allocated once.
//
// OpenCV's LINE_AA fills differ: they fill the pixels whose centres are inside and draw an
// antialiased line about 1.5 px wide along the outline over them, so their shapes come out about
// 0.7 px larger all round, their edges softer (tests/raster_test.cpp has the figures).

// Fills the polygon through `points` (closed: the last point joins the first). Any simple
// polygon, convex or not. Self-intersecting ones are filled by the nonzero winding rule, a pixel
// taking the magnitude of its mean winding number over its square (clamped to 1): exact for simple
// polygons.
void fillPolygon(
    Image& image, const PointF* points, size_t count, uint8_t blue, uint8_t green, uint8_t red);

// Fills the disc of `radius` around (cx, cy), with the exact area of the circle (not of a polygon
// approximating it, as OpenCV's cv::circle draws).
void fillCircle(
    Image& image, double cx, double cy, double radius, uint8_t blue, uint8_t green, uint8_t red);

} // namespace jetagent
