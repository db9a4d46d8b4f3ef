// synthetic://motion: deterministic video of one object whose motion, segment by segment, is a
// known action (still, left, right, up, down, grow): the action-recognition counterpart of
// synthetic://shapes.
#pragma once

#include <array>
#include <cstdint>

#include "jetagent/hal/frame_source.h"
#include "jetagent/hal/synthetic_source.h"

namespace jetagent {

// Draws frame `index` of the stream `seed`. The stream is cut into segments of kSegmentFrames
// frames; in each segment one object (shape, colour, start position, speed drawn from the seed)
// performs one action, and two consecutive segments never share an action, so a window of frames
// whose classes all agree lies inside one segment. The same (seed, index, size) always yields the
// same image and class, whatever was drawn before (random access in O(1)). Motion is proportional
// to the frame size, so the same stream looks the same at any resolution.
class MotionRenderer {
public:
    static constexpr std::array<const char*, 6> kClassNames = {
        "still", "left", "right", "up", "down", "grow"};
    static constexpr int kSegmentFrames = 48;

    MotionRenderer(int width, int height, uint64_t seed);

    // Renders into `image` (reallocated only when its size or type differs) and returns the class
    // index.
    int render(uint64_t index, Image& image) const;
    // The class of frame `index`, without drawing it.
    int classOf(uint64_t index) const;

private:
    int width_;
    int height_;
    uint64_t seed_;
};

using SyntheticMotionSource = SyntheticSource<MotionRenderer>;

} // namespace jetagent
