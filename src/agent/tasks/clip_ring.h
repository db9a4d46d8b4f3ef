// The clip ring of an action task: the newest T preprocessed frames (or per-frame embeddings),
// kept so that they form one contiguous tensor in temporal order without being copied.
//
// Each frame is written once, straight into its final place. The ring's memory (R planes of
// `planeElements` floats, R >= C*T rounded up so the ring is whole pages) is mapped twice, back
// to back, from one memfd: an address past the end of the first mapping reads the start of the
// ring again. Frame f's channel c lives in plane
//     (f + c*T) mod R      channels first (N x C x T x H x W, NCTHW)
//     (f*C + c) mod R      time first     (N x T x C x H x W, NTCHW)
// so the clip of frames F..F+T-1 starts at plane F mod R (or F*C mod R) of the double mapping and
// every (c, t) lies exactly where the layout puts it. No two of the newest T frames share a plane,
// so writing frame F+T overwrites only planes of frames older than the clip it completes.
// Compared with shifting the clip by one frame per new frame (a T-frame copy each time), the cost
// per frame is one frame's write, whatever T is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "jetagent/base/status.h"

namespace jetagent {

class ClipRing {
public:
    enum class Layout {
        ChannelsFirst, // C x T x plane: NCTHW clip models (torchvision's video models)
        TimeFirst, // T x C x plane: NTCHW clip models, and N x T x D embeddings (C = 1, plane = D)
    };

    // What the task knows about each frame in the ring.
    struct FrameInfo {
        uint64_t frameId = 0; // the source's sequence number
        int64_t capturedNs = 0; // CLOCK_MONOTONIC capture time
        int truth = -1; // label index of the frame's true class, -1 when unknown
    };

    // A ring for clips of `length` frames (T >= 1) of `channels` planes (C >= 1) of
    // `planeElements` floats each. Errors (ErrorKind::InvalidInput for zero sizes, Io when the
    // memory cannot be mapped) name the sizes asked for.
    static Expected<std::unique_ptr<ClipRing>> create(
        int length, int channels, size_t planeElements, Layout layout);
    ~ClipRing();
    ClipRing(const ClipRing&) = delete;
    ClipRing& operator=(const ClipRing&) = delete;

    // Where the next frame goes: channel c's plane starts at next() + c * channelStride() and
    // holds planeElements floats. Valid until push(). Writing there may overwrite planes of the
    // current clip's oldest frame (the one push() drops): clip() is not to be read meanwhile.
    float* next();
    size_t channelStride() const { return channelStride_; }
    // The frame written at next() becomes the newest; the oldest leaves once T are held.
    void push(const FrameInfo& info);

    int length() const { return length_; }
    int channels() const { return channels_; }
    size_t planeElements() const { return planeElements_; }
    Layout layout() const { return layout_; }
    uint64_t pushed() const { return pushed_; } // frames pushed since creation (or reset())
    bool full() const { return pushed_ >= static_cast<uint64_t>(length_); }

    // The newest T frames as one tensor of clipElements() floats, oldest first, in the ring's
    // layout: a pointer into the ring's own mapping, never a copy. Only while full().
    const float* clip() const;
    size_t clipElements() const
    {
        return static_cast<size_t>(length_) * static_cast<size_t>(channels_) * planeElements_;
    }
    // Frame t of the current clip, 0 the oldest .. T-1 the newest. Only while full().
    const FrameInfo& info(int t) const;

    // Forgets every frame (a new clip starts from empty); the memory stays mapped.
    void reset() { pushed_ = 0; }

    // True when [p, p + bytes) lies inside the ring's double mapping.
    bool contains(const void* p, size_t bytes) const;
    size_t planes() const { return planes_; } // R
    size_t mappedBytes() const { return planes_ * planeElements_ * sizeof(float); } // memory used

private:
    ClipRing() = default;
    size_t firstPlane(uint64_t frame) const; // plane of the frame's channel 0

    int length_ = 0;
    int channels_ = 0;
    size_t planeElements_ = 0;
    Layout layout_ = Layout::ChannelsFirst;
    size_t planes_ = 0; // R
    size_t channelStride_ = 0; // elements between a frame's consecutive channels
    float* base_ = nullptr; // start of the double mapping (2 * mappedBytes())
    uint64_t pushed_ = 0;
    std::vector<FrameInfo> infos_; // T entries, frame f at f mod T
};

} // namespace jetagent
