// synthetic://motion: determinism, the segment structure of its classes, and objects that really
// move as their class says.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <opencv2/core.hpp>

#include "jetagent/hal/frame_source.h"
#include "jetagent/hal/synthetic_motion.h"
#include "test_image.h"

namespace jetagent {
namespace {

constexpr uint64_t kSeed = 7;
constexpr int kWidth = 320;
constexpr int kHeight = 240;
constexpr int kSegment = MotionRenderer::kSegmentFrames;
constexpr int kClasses = static_cast<int>(MotionRenderer::kClassNames.size());
constexpr int kStill = 0, kLeft = 1, kRight = 2, kUp = 3, kDown = 4, kGrow = 5;
constexpr int kClipFrames = 16; // an action model's clip
// A pixel belongs to the object when a channel differs from the frame's median by more than
// this: the background's gradient, blobs and noise stay within about 36 levels of its median,
// the object lies at least about 58 away.
constexpr int kObjectThreshold = 47;
// Over a clip, a moving object travels at least 0.6% of the frame per frame; half of that is
// asked, the rest is slack for the anti-aliased outline.
constexpr double kMinTravel = 0.5 * 0.006 * (kClipFrames - 1);
constexpr double kStillTolerancePx = 1.0; // centroid drift allowed when nothing moves
// Area over a clip: the radius grows by 0.3% of the frame per frame from at most 12% + 32 * 0.3%,
// so the last clip's area grows by ((0.216 + 15 * 0.003) / 0.216)^2 = 1.46 at least.
constexpr double kMinGrowthRatio = 1.3;

SourceOptions motion(int width = 0, int height = 0)
{
    SourceOptions o;
    o.uri = "synthetic://motion";
    o.width = width;
    o.height = height;
    o.seed = kSeed;
    return o;
}

bool identical(const Image& x, const Image& y)
{
    const cv::Mat a = test::asMat(x), b = test::asMat(y);
    return a.size() == b.size() && a.type() == b.type() && cv::norm(a, b, cv::NORM_INF) == 0;
}

// Where the object is: the centroid and area of the pixels far from the frame's median colour,
// and whether any of them touches the frame's edge.
struct Located {
    double x = 0, y = 0;
    int area = 0;
    bool touchesEdge = false;
};

Located locate(const Image& image)
{
    const cv::Mat bgr = test::asMat(image);
    std::array<std::array<int, 256>, 3> histogram {};
    for (int y = 0; y < bgr.rows; ++y)
        for (int x = 0; x < bgr.cols; ++x)
            for (int c = 0; c < 3; ++c)
                ++histogram[static_cast<size_t>(c)][bgr.at<cv::Vec3b>(y, x)[c]];
    std::array<int, 3> median {};
    for (size_t c = 0; c < 3; ++c) {
        const int half = static_cast<int>(bgr.total() / 2);
        int seen = 0;
        while (seen + histogram[c][static_cast<size_t>(median[c])] <= half)
            seen += histogram[c][static_cast<size_t>(median[c]++)];
    }
    Located r;
    double sx = 0, sy = 0;
    for (int y = 0; y < bgr.rows; ++y)
        for (int x = 0; x < bgr.cols; ++x) {
            const cv::Vec3b p = bgr.at<cv::Vec3b>(y, x);
            bool object = false;
            for (int c = 0; c < 3; ++c)
                object =
                    object || std::abs(p[c] - median[static_cast<size_t>(c)]) > kObjectThreshold;
            if (!object)
                continue;
            sx += x;
            sy += y;
            ++r.area;
            r.touchesEdge =
                r.touchesEdge || x == 0 || y == 0 || x == bgr.cols - 1 || y == bgr.rows - 1;
        }
    if (r.area > 0) {
        r.x = sx / r.area;
        r.y = sy / r.area;
    }
    return r;
}

TEST(SyntheticMotion, FramesAreDeterministicPerSeedIndexAndSize)
{
    MotionRenderer a(kWidth, kHeight, kSeed), b(kWidth, kHeight, kSeed);
    MotionRenderer other(kWidth, kHeight, kSeed + 1), smaller(kWidth / 2, kHeight / 2, kSeed);
    Image x, y, z;
    for (uint64_t i : {0u, 1u, 47u, 48u, 1000u, 123457u}) {
        const int ca = a.render(i, x);
        b.render(i + 1, y); // render something else first: frames must not depend on history
        const int cb = b.render(i, y);
        EXPECT_EQ(ca, cb);
        EXPECT_TRUE(identical(x, y)) << "frame " << i;
        other.render(i, z);
        EXPECT_FALSE(identical(x, z)) << "frame " << i << " is the same under another seed";
        EXPECT_EQ(smaller.render(i, z), ca) << "frame " << i << ": the class depends on the size";
        EXPECT_EQ(z.cols, kWidth / 2);
        EXPECT_EQ(z.rows, kHeight / 2);
        a.render(i + 1, y);
        EXPECT_FALSE(identical(x, y)) << "frames " << i << " and " << i + 1 << " are identical";
    }
}

TEST(SyntheticMotion, RandomAccessEqualsTheSourceSequence)
{
    auto opened = openFrameSource(motion());
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    auto source = std::move(opened).value();
    std::vector<Image> frames;
    std::vector<int> classes;
    Frame f;
    for (int i = 0; i < 2 * kSegment + 5; ++i) {
        ASSERT_TRUE(source->read(f).ok());
        frames.push_back(f.image.clone());
        classes.push_back(f.truthClass);
    }
    const MotionRenderer renderer(kWidth, kHeight, kSeed);
    Image image;
    for (size_t i = frames.size(); i-- > 0;) { // backwards, to be sure
        EXPECT_EQ(renderer.render(i, image), classes[i]);
        EXPECT_TRUE(identical(image, frames[i])) << "frame " << i;
    }
}

TEST(SyntheticMotion, ClassesHoldPerSegmentAndChangeBetweenSegments)
{
    const MotionRenderer renderer(kWidth, kHeight, kSeed);
    Image image;
    for (uint64_t i = 0; i < 4 * kSegment; i += 5)
        EXPECT_EQ(renderer.classOf(i), renderer.render(i, image)) << "frame " << i;

    constexpr int kSegments = 600;
    std::array<int, kClasses> perClass {};
    for (uint64_t s = 0; s < kSegments; ++s) {
        const uint64_t first = s * kSegment;
        const int cls = renderer.classOf(first);
        ASSERT_GE(cls, 0);
        ASSERT_LT(cls, kClasses);
        ++perClass[static_cast<size_t>(cls)];
        EXPECT_EQ(renderer.classOf(first + kSegment - 1), cls) << "segment " << s;
        EXPECT_EQ(renderer.classOf(first + kSegment / 2), cls) << "segment " << s;
        EXPECT_NE(renderer.classOf(first + kSegment), cls) << "segments " << s << " and " << s + 1;
    }
    for (int c = 0; c < kClasses; ++c) // roughly balanced: about 100 each
        EXPECT_GT(perClass[static_cast<size_t>(c)], kSegments / kClasses / 2)
            << MotionRenderer::kClassNames[static_cast<size_t>(c)];
}

// Every segment of a stretch of the stream, through the first and the last clip of each: the
// object moves the way its class says, and never leaves the frame (checked every few frames and
// at both ends of each clip).
TEST(SyntheticMotion, ObjectMovesAsItsClassSays)
{
    constexpr int kSegments = 36;
    constexpr int kEdgeCheckEvery = 4;
    const MotionRenderer renderer(kWidth, kHeight, kSeed);
    std::array<int, kClasses> seen {};
    Image image;
    for (uint64_t s = 0; s < kSegments; ++s) {
        const uint64_t first = s * kSegment;
        const int cls = renderer.classOf(first);
        ++seen[static_cast<size_t>(cls)];
        const std::string what = "segment " + std::to_string(s) + " (" +
            MotionRenderer::kClassNames[static_cast<size_t>(cls)] + ")";
        std::array<Located, kSegment> track {};
        for (int t = 0; t < kSegment; ++t) {
            if (t % kEdgeCheckEvery != 0 && t != kClipFrames - 1 && t != kSegment - 1)
                continue;
            renderer.render(first + t, image);
            track[t] = locate(image);
            ASSERT_GT(track[t].area, 0) << what << ": no object in frame " << t;
            EXPECT_FALSE(track[t].touchesEdge) << what << ": object at the edge in frame " << t;
        }
        for (size_t start : {size_t {0}, size_t {kSegment - kClipFrames}}) {
            const Located& a = track[start];
            const Located& b = track[start + kClipFrames - 1];
            const double dx = (b.x - a.x) / kWidth, dy = (b.y - a.y) / kHeight;
            const double growth = static_cast<double>(b.area) / a.area;
            switch (cls) {
            case kStill:
            case kGrow:
                EXPECT_LT(std::abs(b.x - a.x), kStillTolerancePx) << what;
                EXPECT_LT(std::abs(b.y - a.y), kStillTolerancePx) << what;
                if (cls == kGrow)
                    EXPECT_GT(growth, kMinGrowthRatio) << what;
                else
                    EXPECT_NEAR(growth, 1.0, 0.05) << what;
                break;
            case kLeft:
            case kRight:
                EXPECT_GT(cls == kLeft ? -dx : dx, kMinTravel) << what;
                EXPECT_LT(std::abs(b.y - a.y), kStillTolerancePx) << what;
                EXPECT_NEAR(growth, 1.0, 0.05) << what;
                break;
            case kUp:
            case kDown:
                EXPECT_GT(cls == kUp ? -dy : dy, kMinTravel) << what;
                EXPECT_LT(std::abs(b.x - a.x), kStillTolerancePx) << what;
                EXPECT_NEAR(growth, 1.0, 0.05) << what;
                break;
            default: FAIL() << what << ": unknown class";
            }
        }
    }
    for (int c = 0; c < kClasses; ++c)
        EXPECT_GT(seen[static_cast<size_t>(c)], 0)
            << "no " << MotionRenderer::kClassNames[static_cast<size_t>(c)] << " segment tested";
}

TEST(SyntheticMotion, SourceDescribesItselfAndDeliversSequencedFrames)
{
    auto opened = openFrameSource(motion());
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    auto source = std::move(opened).value();
    const SourceInfo& info = source->info();
    EXPECT_EQ(info.uri, "synthetic://motion");
    EXPECT_EQ(info.kind, "synthetic");
    EXPECT_EQ(info.width, kWidth);
    EXPECT_EQ(info.height, kHeight);
    EXPECT_DOUBLE_EQ(info.fps, 30.0);
    EXPECT_FALSE(info.live);
    EXPECT_EQ(info.frameCount, -1);
    ASSERT_EQ(info.classNames.size(), MotionRenderer::kClassNames.size());
    for (size_t c = 0; c < info.classNames.size(); ++c)
        EXPECT_EQ(info.classNames[c], MotionRenderer::kClassNames[c]);

    const MotionRenderer renderer(kWidth, kHeight, kSeed);
    Frame f;
    int64_t last = 0;
    const uchar* data = nullptr;
    for (uint64_t i = 0; i < 60; ++i) {
        auto r = source->read(f);
        ASSERT_TRUE(r.ok());
        ASSERT_EQ(r.value(), ReadResult::Frame);
        EXPECT_EQ(f.sequence, i);
        EXPECT_GE(f.captureNs, last);
        last = f.captureNs;
        EXPECT_EQ(f.truthClass, renderer.classOf(i));
        EXPECT_EQ(f.image.channels(), 3);
        if (i > 0) {
            EXPECT_EQ(f.image.data, data) << "the frame buffer was not reused";
        }
        data = f.image.data;
    }
}

TEST(SyntheticMotion, SizeLimitsAndUnknownNamesAreErrors)
{
    for (const auto& [w, h] : {std::pair {16, 16}, std::pair {8192, 16}, std::pair {16, 8192}}) {
        auto opened = openFrameSource(motion(w, h));
        ASSERT_TRUE(opened.ok()) << w << "x" << h << ": " << opened.status().message();
        Frame f;
        ASSERT_TRUE(opened.value()->read(f).ok());
        EXPECT_EQ(f.image.cols, w);
        EXPECT_EQ(f.image.rows, h);
        EXPECT_GT(locate(f.image).area, 0) << w << "x" << h << ": no object";
    }
    for (const auto& [w, h] :
        {std::pair {15, 240}, std::pair {320, 15}, std::pair {8193, 240}, std::pair {320, 8193}}) {
        auto opened = openFrameSource(motion(w, h));
        ASSERT_FALSE(opened.ok()) << w << "x" << h;
        EXPECT_NE(opened.status().message().find("out of range"), std::string::npos)
            << opened.status().message();
    }

    SourceOptions unknown = motion();
    unknown.uri = "synthetic://movement";
    auto opened = openFrameSource(unknown);
    ASSERT_FALSE(opened.ok());
    EXPECT_NE(opened.status().message().find("synthetic://movement"), std::string::npos);
    EXPECT_NE(opened.status().message().find("synthetic://shapes"), std::string::npos);
    EXPECT_NE(opened.status().message().find("synthetic://motion"), std::string::npos);
    EXPECT_NE(std::string(frameSourceUriHelp()).find("synthetic://motion"), std::string::npos);
}

} // namespace
} // namespace jetagent
