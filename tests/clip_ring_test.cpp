// The clip ring against a naive reference of the newest T frames in both layouts, the mechanism
// that makes clip() a view rather than a copy, the rounding of R to whole pages, and its errors.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tasks/clip_ring.h"

namespace jetagent {
namespace {

using Layout = ClipRing::Layout;

constexpr uint32_t kSeed = 20240611;
constexpr uint64_t kFirstFrameId = 1000; // frame ids as a source numbers them, not from 0
constexpr int64_t kFramePeriodNs = 33'333'333; // 30 fps
constexpr int kClasses = 7; // truth labels cycle through this many
constexpr size_t kOddPlane = 5; // 20-byte planes: R rounds up far above C*T
constexpr size_t kPagePlane = 1024; // 4 KiB planes: R = C*T on 4 KiB pages
constexpr size_t kVideoPlane = 112 * 112; // torchvision's video classifiers
constexpr Layout kLayouts[] = {Layout::ChannelsFirst, Layout::TimeFirst};

struct Shape {
    int length; // T
    int channels; // C
    size_t plane; // floats per plane
};

// Sizes with R > C*T (odd planes), R = C*T (whole pages), R not a multiple of T (1 KiB planes,
// C*T = 9 rounds to 12), T x D embeddings, and the 16-frame 112x112 RGB clip of the issue.
constexpr Shape kShapes[] = {
    {1, 1, kOddPlane},
    {4, 3, kOddPlane},
    {3, 2, 7},
    {3, 3, 256},
    {8, 1, kPagePlane},
    {5, 1, 512},
    {16, 3, kVideoPlane},
};

const char* layoutName(Layout layout)
{
    return layout == Layout::ChannelsFirst ? "channels first (NCTHW)" : "time first (NTCHW)";
}

std::string describe(const Shape& s, Layout layout)
{
    return std::string(layoutName(layout)) + ", T = " + std::to_string(s.length) +
        ", C = " + std::to_string(s.channels) + ", plane = " + std::to_string(s.plane);
}

std::unique_ptr<ClipRing> makeRing(const Shape& s, Layout layout)
{
    auto ring = ClipRing::create(s.length, s.channels, s.plane, layout);
    if (!ring) {
        ADD_FAILURE() << describe(s, layout) << ": " << ring.status().message();
        return nullptr;
    }
    return std::move(ring).value();
}

// Where element e of channel c of clip frame t lies in a clip of the ring's layout.
size_t clipIndex(const ClipRing& ring, int c, int t, size_t e)
{
    const auto T = static_cast<size_t>(ring.length());
    const auto C = static_cast<size_t>(ring.channels());
    const auto uc = static_cast<size_t>(c);
    const auto ut = static_cast<size_t>(t);
    const size_t plane = ring.layout() == Layout::ChannelsFirst ? uc * T + ut : ut * C + uc;
    return plane * ring.planeElements() + e;
}

ClipRing::FrameInfo frameInfo(uint64_t serial)
{
    ClipRing::FrameInfo info;
    info.frameId = kFirstFrameId + serial;
    info.capturedNs = static_cast<int64_t>(serial) * kFramePeriodNs;
    info.truth = static_cast<int>(serial % kClasses);
    return info;
}

// Writes frames of random values into a ring through next() and keeps the newest T of them, as
// written, in a plain deque: the naive reference every clip is checked against.
class Feeder {
public:
    Feeder(ClipRing& ring, uint32_t seed) : ring_(ring), rng_(seed) { }

    // Writes one frame (C planes) at next() and pushes it.
    void pushFrame()
    {
        const size_t plane = ring_.planeElements();
        std::vector<float> frame(static_cast<size_t>(ring_.channels()) * plane);
        float* out = ring_.next();
        for (int c = 0; c < ring_.channels(); ++c) {
            float* channel = out + static_cast<size_t>(c) * ring_.channelStride();
            for (size_t e = 0; e < plane; ++e) {
                // 24 random bits: exact in a float, so equality means the same value came back.
                const auto v = static_cast<float>(rng_() >> 8);
                frame[static_cast<size_t>(c) * plane + e] = v;
                channel[e] = v;
            }
        }
        const ClipRing::FrameInfo info = frameInfo(serial_++);
        ring_.push(info);
        frames_.push_back(std::move(frame));
        infos_.push_back(info);
        if (frames_.size() > static_cast<size_t>(ring_.length())) {
            frames_.pop_front();
            infos_.pop_front();
        }
    }

    void reset()
    {
        ring_.reset();
        frames_.clear();
        infos_.clear();
    }

    // The ring's clip and frame infos against the reference, element by element, each frame's
    // channel c where the layout puts it: [c][t][e] channels first, [t][c][e] time first.
    testing::AssertionResult clipMatches() const
    {
        if (!ring_.full() || frames_.size() != static_cast<size_t>(ring_.length()))
            return testing::AssertionFailure() << "the ring holds no full clip";
        const float* clip = ring_.clip();
        const size_t plane = ring_.planeElements();
        for (int t = 0; t < ring_.length(); ++t) {
            const std::vector<float>& frame = frames_[static_cast<size_t>(t)];
            for (int c = 0; c < ring_.channels(); ++c) {
                const float* want = frame.data() + static_cast<size_t>(c) * plane;
                const float* got = clip + clipIndex(ring_, c, t, 0);
                const auto mismatch = std::mismatch(want, want + plane, got);
                if (mismatch.first != want + plane)
                    return testing::AssertionFailure()
                        << "after " << ring_.pushed() << " frames, clip element "
                        << clipIndex(ring_, c, t, 0) + (mismatch.first - want) << " (channel " << c
                        << ", frame " << t << ", element " << mismatch.first - want << ") is "
                        << *mismatch.second << ", the reference has " << *mismatch.first;
            }
        }
        for (int t = 0; t < ring_.length(); ++t) {
            const ClipRing::FrameInfo& got = ring_.info(t);
            const ClipRing::FrameInfo& want = infos_[static_cast<size_t>(t)];
            if (got.frameId != want.frameId || got.capturedNs != want.capturedNs ||
                got.truth != want.truth)
                return testing::AssertionFailure()
                    << "after " << ring_.pushed() << " frames, info(" << t << ") is frame "
                    << got.frameId << " (" << got.capturedNs << " ns, truth " << got.truth
                    << "), the reference has frame " << want.frameId << " (" << want.capturedNs
                    << " ns, truth " << want.truth << ")";
        }
        return testing::AssertionSuccess();
    }

private:
    ClipRing& ring_;
    std::mt19937 rng_;
    std::deque<std::vector<float>> frames_;
    std::deque<ClipRing::FrameInfo> infos_;
    uint64_t serial_ = 0; // every frame pushed, across resets, so each has its own info
};

TEST(ClipRing, EveryClipMatchesANaiveReferenceThroughWrapAround)
{
    for (const Layout layout : kLayouts) {
        for (const Shape& shape : kShapes) {
            SCOPED_TRACE(describe(shape, layout));
            const auto ring = makeRing(shape, layout);
            ASSERT_TRUE(ring);
            Feeder feeder(*ring, kSeed);
            // Three times round the ring and a few frames more, so the clip starts at every plane
            // and straddles the end of the first mapping.
            const uint64_t frames = 3 * ring->planes() + 7;
            for (uint64_t n = 1; n <= frames; ++n) {
                feeder.pushFrame();
                ASSERT_EQ(ring->pushed(), n);
                ASSERT_EQ(ring->full(), n >= static_cast<uint64_t>(shape.length));
                if (ring->full()) {
                    ASSERT_TRUE(feeder.clipMatches());
                }
            }
        }
    }
}

// The mechanism, not only the values: clip() points into the ring's mapping, writes made through
// next() after push() show in it, and each push moves it by one frame's planes over shared memory.
TEST(ClipRing, ClipIsAViewIntoTheRingNotACopy)
{
    const Shape shapes[] = {{4, 3, kOddPlane}, {4, 3, kPagePlane}, {3, 3, 256}};
    for (const Layout layout : kLayouts) {
        for (const Shape& shape : shapes) {
            SCOPED_TRACE(describe(shape, layout));
            const auto ring = makeRing(shape, layout);
            ASSERT_TRUE(ring);
            Feeder feeder(*ring, kSeed);
            const size_t plane = shape.plane;
            const size_t ringElements = ring->planes() * plane;
            const auto framePlanes =
                static_cast<ptrdiff_t>(layout == Layout::ChannelsFirst ? 1 : shape.channels);
            const ptrdiff_t step = framePlanes * static_cast<ptrdiff_t>(plane);
            const float* previous = nullptr;
            int wraps = 0;
            float marker = -1.0f; // below every value the feeder writes, which are >= 0
            for (uint64_t n = 0; n < 3 * ring->planes(); ++n) {
                float* newest = ring->next();
                ASSERT_TRUE(ring->contains(newest, plane * sizeof(float)));
                ASSERT_TRUE(ring->contains(
                    newest + (shape.channels - 1) * ring->channelStride(), plane * sizeof(float)));
                feeder.pushFrame();
                if (!ring->full())
                    continue;
                const float* clip = ring->clip();
                ASSERT_TRUE(ring->contains(clip, ring->clipElements() * sizeof(float)));

                // Aliasing: the newest frame's planes, written through the pointer next() gave
                // before push(), are the clip's frame T-1.
                const size_t e = n % plane;
                for (int c = 0; c < shape.channels; ++c) {
                    newest[static_cast<size_t>(c) * ring->channelStride() + e] = marker;
                    ASSERT_EQ(clip[clipIndex(*ring, c, shape.length - 1, e)], marker)
                        << "channel " << c << " after " << ring->pushed() << " frames";
                    marker -= 1.0f;
                }

                if (previous != nullptr) {
                    // One frame's planes further, or back by the ring when that passes plane R.
                    const ptrdiff_t moved = clip - previous;
                    const ptrdiff_t wrapped = step - static_cast<ptrdiff_t>(ringElements);
                    ASSERT_TRUE(moved == step || moved == wrapped)
                        << "moved " << moved << " floats after " << ring->pushed()
                        << " frames, not " << step << " or " << wrapped;
                    wraps += moved == wrapped ? 1 : 0;
                    // Shared memory: frames 1..T-1 of the previous clip are frames 0..T-2 of
                    // this one, also where the two addresses lie in different copies.
                    auto* previousClip = const_cast<float*>(previous);
                    for (int t = 1; t < shape.length; ++t) {
                        for (int c = 0; c < shape.channels; ++c) {
                            previousClip[clipIndex(*ring, c, t, e)] = marker;
                            ASSERT_EQ(clip[clipIndex(*ring, c, t - 1, e)], marker)
                                << "channel " << c << ", frame " << t;
                            marker -= 1.0f;
                        }
                    }
                }
                previous = clip;
            }
            EXPECT_GE(wraps, 2) << "the clip never went round the ring";
        }
    }
}

TEST(ClipRing, ContainsOnlyTheDoubleMapping)
{
    const auto ring = makeRing({2, 3, kOddPlane}, Layout::ChannelsFirst);
    ASSERT_TRUE(ring);
    const float* base = ring->next(); // plane 0 before the first push
    const size_t mapped = 2 * ring->mappedBytes();
    EXPECT_TRUE(ring->contains(base, mapped));
    EXPECT_TRUE(ring->contains(base + mapped / sizeof(float) - 1, sizeof(float)));
    EXPECT_FALSE(ring->contains(base, mapped + 1));
    EXPECT_FALSE(ring->contains(base + mapped / sizeof(float), sizeof(float)));
    EXPECT_FALSE(ring->contains(base + 1, mapped));
    EXPECT_FALSE(ring->contains(nullptr, 1));
}

TEST(ClipRing, PlanesRoundUpToTheFewestWholePages)
{
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    const size_t planeSizes[] = {
        1, 3, kOddPlane, 7, 100, 256, 1000, kPagePlane, 1025, kVideoPlane, 50000};
    const Shape counts[] = {{1, 1, 0}, {4, 3, 0}, {16, 3, 0}, {7, 5, 0}};
    for (const size_t plane : planeSizes) {
        for (Shape shape : counts) {
            shape.plane = plane;
            for (const Layout layout : kLayouts) {
                SCOPED_TRACE(describe(shape, layout) + ", page " + std::to_string(page));
                const auto ring = makeRing(shape, layout);
                ASSERT_TRUE(ring);
                const size_t planeBytes = plane * sizeof(float);
                const size_t minPlanes = static_cast<size_t>(shape.length) * shape.channels;
                const size_t R = ring->planes();
                EXPECT_GE(R, minPlanes);
                EXPECT_EQ(R * planeBytes % page, 0u) << "R = " << R;
                for (size_t fewer = minPlanes; fewer < R; ++fewer)
                    ASSERT_NE(fewer * planeBytes % page, 0u)
                        << fewer << " planes are whole pages too, fewer than R = " << R;
                EXPECT_EQ(ring->mappedBytes(), R * planeBytes);
                EXPECT_EQ(ring->clipElements(), minPlanes * plane);
                EXPECT_EQ(ring->channelStride(),
                    layout == Layout::ChannelsFirst ? static_cast<size_t>(shape.length) * plane
                                                    : plane);
            }
        }
    }
}

TEST(ClipRing, ZeroSizesAreInvalidInputNamingWhatWasZero)
{
    struct Case {
        int length;
        int channels;
        size_t plane;
        const char* named;
    };
    const Case cases[] = {
        {0, 3, kOddPlane, "length"},
        {-2, 3, kOddPlane, "length"},
        {4, 0, kOddPlane, "channels"},
        {4, -1, kOddPlane, "channels"},
        {4, 3, 0, "plane size"},
    };
    for (const Case& c : cases) {
        for (const Layout layout : kLayouts) {
            const auto ring = ClipRing::create(c.length, c.channels, c.plane, layout);
            ASSERT_FALSE(ring.ok()) << c.named;
            EXPECT_EQ(ring.status().kind(), ErrorKind::InvalidInput) << ring.status().message();
            EXPECT_NE(ring.status().message().find(c.named), std::string::npos)
                << ring.status().message();
        }
    }
}

TEST(ClipRing, HugePlanesAreErrorsNotCrashes)
{
    // Sizes whose bytes overflow size_t: refused before anything is mapped.
    for (const size_t plane : {std::numeric_limits<size_t>::max() / 8,
             std::numeric_limits<size_t>::max() / 4 + 1, std::numeric_limits<size_t>::max()}) {
        const auto ring = ClipRing::create(16, 3, plane, Layout::ChannelsFirst);
        ASSERT_FALSE(ring.ok()) << plane;
        EXPECT_EQ(ring.status().kind(), ErrorKind::InvalidInput) << ring.status().message();
        EXPECT_NE(ring.status().message().find(std::to_string(plane)), std::string::npos)
            << ring.status().message();
    }
    // 2^56 bytes, mapped twice: more address space than any Linux process has (47 bits, or 56
    // with five-level page tables), so the mapping itself fails.
    constexpr size_t kUnmappablePlane = size_t {1} << 54;
    const auto ring = ClipRing::create(1, 1, kUnmappablePlane, Layout::TimeFirst);
    ASSERT_FALSE(ring.ok());
    EXPECT_EQ(ring.status().kind(), ErrorKind::Io) << ring.status().message();
    EXPECT_NE(ring.status().message().find(std::to_string(kUnmappablePlane * sizeof(float))),
        std::string::npos)
        << ring.status().message();
}

TEST(ClipRing, ResetStartsAFreshClip)
{
    for (const Layout layout : kLayouts) {
        const Shape shape {4, 3, kOddPlane};
        SCOPED_TRACE(describe(shape, layout));
        const auto ring = makeRing(shape, layout);
        ASSERT_TRUE(ring);
        Feeder feeder(*ring, kSeed);
        // Part of the way round, so the fresh clip does not start where the old one did.
        const uint64_t before = ring->planes() / 2 + 3;
        for (uint64_t n = 0; n < before; ++n)
            feeder.pushFrame();
        ASSERT_TRUE(feeder.clipMatches());

        feeder.reset();
        EXPECT_EQ(ring->pushed(), 0u);
        EXPECT_FALSE(ring->full());
        for (int n = 1; n < shape.length; ++n) {
            feeder.pushFrame();
            EXPECT_FALSE(ring->full()) << n << " frames after reset()";
        }
        feeder.pushFrame();
        ASSERT_TRUE(ring->full());
        EXPECT_EQ(ring->pushed(), static_cast<uint64_t>(shape.length));
        EXPECT_TRUE(feeder.clipMatches());
        EXPECT_EQ(ring->info(0).frameId, kFirstFrameId + before); // the first frame after reset()
        for (int n = 0; n < shape.length + 1; ++n) {
            feeder.pushFrame();
            ASSERT_TRUE(feeder.clipMatches());
        }
    }
}

} // namespace
} // namespace jetagent
