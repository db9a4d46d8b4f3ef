// synthetic://shapes: deterministic frames of one coloured shape each, whose class is known.
#pragma once

#include <array>
#include <cstdint>

#include "jetagent/hal/frame_source.h"
#include "jetagent/hal/synthetic_source.h"

namespace jetagent {

// Draws frame `index` of the stream `seed`. The same (seed, index, size) always yields the same
// image and class, whatever was drawn before, so any frame can be regenerated independently of
// timing.
class ShapesRenderer {
public:
    static constexpr std::array<const char*, 6> kClassNames = {
        "circle", "square", "triangle", "cross", "star", "ring"};

    ShapesRenderer(int width, int height, uint64_t seed);

    // Renders into `image` (reallocated only when its size or type differs) and returns the class
    // index.
    int render(uint64_t index, Image& image) const;

private:
    int width_;
    int height_;
    uint64_t seed_;
};

using SyntheticShapesSource = SyntheticSource<ShapesRenderer>;

} // namespace jetagent
