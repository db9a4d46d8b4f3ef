// The frame source over a synthetic renderer (synthetic://shapes, synthetic://motion): frames 0, 1,
// 2, ... of one seeded stream, each with its known class.
#pragma once

#include "jetagent/base/clock.h"
#include "jetagent/hal/frame_source.h"

namespace jetagent {

// Renderer: constructible from (width, height, seed), with `int render(uint64_t index, Image&)
// const` returning the frame's class and a `kClassNames` array naming the classes.
template <typename Renderer>
class SyntheticSource final : public FrameSource {
public:
    explicit SyntheticSource(const SourceOptions& options)
        : renderer_(options.width, options.height, options.seed)
    {
        info_.uri = options.uri;
        info_.kind = "synthetic";
        info_.width = options.width;
        info_.height = options.height;
        info_.fps = options.fps;
        info_.live = false;
        info_.frameCount = -1;
        info_.classNames.assign(Renderer::kClassNames.begin(), Renderer::kClassNames.end());
    }

    const SourceInfo& info() const override { return info_; }

    // Never fails, never ends: the capture time is when drawing starts.
    Expected<ReadResult> read(Frame& frame) override
    {
        frame.captureNs = monotonicNs();
        frame.sequence = next_;
        frame.truthClass = renderer_.render(next_, frame.image);
        ++next_;
        return ReadResult::Frame;
    }

private:
    SourceInfo info_;
    Renderer renderer_;
    uint64_t next_ = 0;
};

} // namespace jetagent
