// The bilinear resize-and-crop: its taps by hand, its output bit for bit against a reference
// written here from the definition (a direct 2-D weighted sum per pixel, no separable passes, no
// SIMD) and against OpenCV's INTER_LINEAR_EXACT over many geometries, its striping, and its
// distance from OpenCV's plain INTER_LINEAR.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>
#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>

#include "tasks/bilinear_crop.h"
#include "tasks/preprocess.h"
#include "test_image.h"

namespace jetagent {
namespace {

cv::Mat randomFrame(int w, int h, uint64_t seed)
{
    cv::Mat m(h, w, CV_8UC3);
    cv::RNG rng(seed);
    rng.fill(m, cv::RNG::UNIFORM, 0, 256);
    return m;
}

// The definition, written out: output index i of a resize from n to m samples sits at source
// position (i + 0.5) * n / m - 0.5 (n / m taken as 1 / (m / n), as OpenCV computes its scale);
// positions before the first sample's centre take the first sample, positions at or after the last
// one's take the last; otherwise the two neighbours are weighted by the fraction rounded to 1/256.
struct Weights {
    int index[2];
    int weight[2];
};

Weights definitionWeights(int n, int m, int i)
{
    const double scale = 1.0 / (static_cast<double>(m) / static_cast<double>(n));
    volatile double product = scale * (i + 0.5); // rounded on its own, as the definition does
    const double position = product - 0.5;
    Weights w {{0, 0}, {256, 0}};
    if (position < 0.0 || n == 1)
        return w;
    const int left = static_cast<int>(position); // position >= 0: truncation is floor
    if (left >= n - 1) {
        w.index[0] = w.index[1] = n - 1;
        return w;
    }
    const double fraction = position - left;
    const double scaled = fraction * 256.0;
    int right = static_cast<int>(scaled);
    const double rest = scaled - right;
    if (rest > 0.5 || (rest == 0.5 && right % 2 == 1))
        ++right; // round half to even
    w.index[0] = left;
    w.index[1] = left + 1;
    w.weight[0] = 256 - right;
    w.weight[1] = right;
    return w;
}

// One output value: the sum over the four neighbours of weight products, rounded once.
uint8_t definitionPixel(const cv::Mat& frame, int resizedW, int resizedH, int x, int y, int c)
{
    const Weights wx = definitionWeights(frame.cols, resizedW, x);
    const Weights wy = definitionWeights(frame.rows, resizedH, y);
    int64_t sum = 0;
    for (int j = 0; j < 2; ++j)
        for (int i = 0; i < 2; ++i)
            sum += static_cast<int64_t>(wy.weight[j]) * wx.weight[i] *
                frame.at<cv::Vec3b>(wy.index[j], wx.index[i])[c];
    return static_cast<uint8_t>((sum + 32768) / 65536);
}

struct Case {
    int frameW, frameH, resizedW, resizedH, cropX, cropY, cropW, cropH;
};

ChannelMap rgbImageNet()
{
    ChannelMap m;
    m.sourceChannel = {2, 1, 0};
    m.divisor = 255.0f;
    m.mean = {0.485f, 0.456f, 0.406f};
    m.std = {0.229f, 0.224f, 0.225f};
    return m;
}

float normalised(uint8_t v, const ChannelMap& m, int c)
{
    const float scaled = static_cast<float>(v) / m.divisor;
    return (scaled - m.mean[static_cast<size_t>(c)]) / m.std[static_cast<size_t>(c)];
}

size_t cropArea(const Case& k)
{
    return static_cast<size_t>(k.cropW) * static_cast<size_t>(k.cropH);
}

// Expected planes from 8-bit resized values given per (x, y, BGR channel).
template <typename Pixel>
std::vector<float> expectedPlanes(const Case& k, const ChannelMap& m, Pixel pixel)
{
    std::vector<float> out(3u * cropArea(k));
    size_t i = 0;
    for (int c = 0; c < 3; ++c)
        for (int y = 0; y < k.cropH; ++y)
            for (int x = 0; x < k.cropW; ++x)
                out[i++] = normalised(
                    pixel(k.cropX + x, k.cropY + y, m.sourceChannel[static_cast<size_t>(c)]), m, c);
    return out;
}

std::vector<float> runCrop(
    BilinearCrop& crop, const cv::Mat& frame, const Case& k, const ChannelMap& m)
{
    std::vector<float> out(3u * cropArea(k), -1.0f);
    EXPECT_TRUE(crop.run(test::asImage(frame), k.resizedW, k.resizedH, k.cropX, k.cropY, k.cropW,
                        k.cropH, m, out.data(), cropArea(k))
                    .ok());
    return out;
}

// Index of the first element whose bits differ, or -1.
long firstDifference(const std::vector<float>& a, const std::vector<float>& b)
{
    if (a.size() != b.size())
        return 0;
    for (size_t i = 0; i < a.size(); ++i) {
        uint32_t ua = 0, ub = 0;
        std::memcpy(&ua, &a[i], sizeof ua);
        std::memcpy(&ub, &b[i], sizeof ub);
        if (ua != ub)
            return static_cast<long>(i);
    }
    return -1;
}

TEST(LinearTap, HalvingBlendsNeighboursEqually)
{
    for (int i = 0; i < 4; ++i) {
        const LinearTap t = linearTap(8, 4, i); // position 2i + 0.5
        EXPECT_EQ(t.first, 2 * i);
        EXPECT_EQ(t.w0, 128);
        EXPECT_EQ(t.w1, 128);
    }
}

TEST(LinearTap, DoublingRepeatsTheEdgesAndWeightsQuarters)
{
    // 2 -> 4: positions -0.25, 0.25, 0.75, 1.25.
    const LinearTap t0 = linearTap(2, 4, 0), t1 = linearTap(2, 4, 1), t2 = linearTap(2, 4, 2),
                    t3 = linearTap(2, 4, 3);
    EXPECT_EQ(t0.first, 0);
    EXPECT_EQ(t0.w0, 256);
    EXPECT_EQ(t0.w1, 0);
    EXPECT_EQ(t1.first, 0);
    EXPECT_EQ(t1.w0, 192);
    EXPECT_EQ(t1.w1, 64);
    EXPECT_EQ(t2.first, 0);
    EXPECT_EQ(t2.w0, 64);
    EXPECT_EQ(t2.w1, 192);
    EXPECT_EQ(t3.first, 1);
    EXPECT_EQ(t3.w0, 256);
    EXPECT_EQ(t3.w1, 0);
}

TEST(LinearTap, HalfWeightsRoundToEven)
{
    // 257 -> 256: position i + (2i + 1) / 512, so the weight is exactly i + 0.5 in 1/256.
    const int expected[] = {0, 2, 2, 4, 4, 6};
    for (int i = 0; i < 6; ++i) {
        const LinearTap t = linearTap(257, 256, i);
        EXPECT_EQ(t.first, i);
        EXPECT_EQ(t.w1, expected[i]) << "output " << i;
        EXPECT_EQ(t.w0 + t.w1, 256);
    }
}

TEST(LinearTap, OneSampleSourceIsCopied)
{
    for (int i = 0; i < 5; ++i) {
        const LinearTap t = linearTap(1, 5, i);
        EXPECT_EQ(t.first, 0);
        EXPECT_EQ(t.w0, 256);
    }
}

TEST(BilinearCrop, MatchesTheDefinitionBitForBit)
{
    const ChannelMap m = rgbImageNet();
    const Case cases[] = {
        {640, 480, 341, 256, 58, 16, 224, 224}, // the benchmark's geometry
        {97, 61, 40, 23, 3, 2, 33, 19}, // odd sizes, widths no SIMD step divides
        {20, 15, 57, 41, 5, 7, 50, 30}, // upscaling: both edges repeat
        {64, 48, 32, 24, 0, 0, 32, 24}, // exactly half
        {3, 2, 9, 7, 0, 0, 9, 7}, // tiny source
    };
    for (const Case& k : cases) {
        const cv::Mat frame = randomFrame(k.frameW, k.frameH, 11);
        BilinearCrop crop;
        const std::vector<float> actual = runCrop(crop, frame, k, m);
        const std::vector<float> expected = expectedPlanes(k, m, [&](int x, int y, int c) {
            return definitionPixel(frame, k.resizedW, k.resizedH, x, y, c);
        });
        EXPECT_EQ(firstDifference(actual, expected), -1)
            << k.frameW << "x" << k.frameH << " -> " << k.resizedW << "x" << k.resizedH;
    }
}

TEST(BilinearCrop, EqualsOpenCVLinearExactOverManyGeometries)
{
    cv::RNG rng(2026);
    ChannelMap m = rgbImageNet();
    int checked = 0;
    for (int t = 0; t < 300; ++t) {
        Case k {};
        k.frameW = rng.uniform(1, 400);
        k.frameH = rng.uniform(1, 300);
        k.resizedW = t % 5 == 0 ? std::max(1, k.frameW / 2) : rng.uniform(1, 400);
        k.resizedH = t % 5 == 0 ? std::max(1, k.frameH / 2) : rng.uniform(1, 300);
        k.cropW = rng.uniform(1, k.resizedW + 1);
        k.cropH = rng.uniform(1, k.resizedH + 1);
        k.cropX = rng.uniform(0, k.resizedW - k.cropW + 1);
        k.cropY = rng.uniform(0, k.resizedH - k.cropH + 1);
        m.sourceChannel = t % 2 ? std::array<int, 3> {0, 1, 2} : std::array<int, 3> {2, 1, 0};
        // Half the frames are views into a larger image: rows with padding between them.
        const cv::Mat big = randomFrame(k.frameW + 7, k.frameH + 3, static_cast<uint64_t>(t));
        const cv::Mat frame =
            t % 2 ? big(cv::Rect(5, 2, k.frameW, k.frameH)) : big.colRange(0, k.frameW).clone();
        cv::Mat resized;
        cv::resize(frame, resized, cv::Size(k.resizedW, k.resizedH), 0, 0, cv::INTER_LINEAR_EXACT);
        BilinearCrop crop;
        const std::vector<float> actual = runCrop(crop, frame, k, m);
        const std::vector<float> expected = expectedPlanes(
            k, m, [&](int x, int y, int c) { return resized.at<cv::Vec3b>(y, x)[c]; });
        ASSERT_EQ(firstDifference(actual, expected), -1)
            << k.frameW << "x" << k.frameH << " -> " << k.resizedW << "x" << k.resizedH << " crop "
            << k.cropX << "," << k.cropY << " " << k.cropW << "x" << k.cropH;
        ++checked;
    }
    EXPECT_EQ(checked, 300);
}

TEST(BilinearCrop, StripesOnAnyNumberOfThreadsGiveTheSameBits)
{
    const Case k {1280, 720, 455, 256, 115, 16, 224, 224};
    ASSERT_GE(k.cropW * k.cropH, 2 * BilinearCrop::kPixelsPerStripe); // really striped
    const cv::Mat frame = randomFrame(k.frameW, k.frameH, 12);
    const ChannelMap m = rgbImageNet();
    StripePool alone(1);
    BilinearCrop one(alone);
    const std::vector<float> serial = runCrop(one, frame, k, m);
    for (int n : {2, 3, 8}) {
        StripePool pool(n);
        BilinearCrop striped(pool);
        for (int again = 0; again < 3; ++again) // the pool's threads reused, frame after frame
            EXPECT_EQ(firstDifference(runCrop(striped, frame, k, m), serial), -1)
                << n << " threads";
    }
}

TEST(BilinearCrop, ReplansWhenTheFrameSizeChanges)
{
    const ChannelMap m = rgbImageNet();
    const Case a {640, 480, 341, 256, 58, 16, 224, 224};
    const Case b {800, 600, 341, 256, 58, 16, 224, 224};
    const cv::Mat fa = randomFrame(a.frameW, a.frameH, 13),
                  fb = randomFrame(b.frameW, b.frameH, 14);
    BilinearCrop fresh;
    const std::vector<float> expectedB = runCrop(fresh, fb, b, m);
    BilinearCrop reused;
    const std::vector<float> firstA = runCrop(reused, fa, a, m);
    EXPECT_EQ(firstDifference(runCrop(reused, fb, b, m), expectedB), -1);
    EXPECT_EQ(firstDifference(runCrop(reused, fa, a, m), firstA), -1);
}

TEST(BilinearCrop, WithinOneLevelOfOpenCVsPlainLinear)
{
    // OpenCV's INTER_LINEAR keeps 11-bit weights and rounds in between; the two kernels may differ
    // by one grey level, never more.
    for (const cv::Size frameSize : {cv::Size(640, 480), cv::Size(1280, 720), cv::Size(320, 240)}) {
        const cv::Mat frame = randomFrame(frameSize.width, frameSize.height, 15);
        const cv::Size resized(static_cast<int>(256.0 * frameSize.width / frameSize.height), 256);
        cv::Mat exact, plain;
        cv::resize(frame, exact, resized, 0, 0, cv::INTER_LINEAR_EXACT);
        cv::resize(frame, plain, resized, 0, 0, cv::INTER_LINEAR);
        EXPECT_LE(cv::norm(exact, plain, cv::NORM_INF), 1.0) << frameSize;
    }
}

// A model input declared 2^40 high once reached the plan as a crop of 0 rows (the size cast to
// int) and dereferenced the first of no columns; sizes past any int, and crops outside the frame,
// are refused before anything is planned or written.
TEST(BilinearCrop, ImpossibleGeometriesAreRefusedNotPlanned)
{
    const cv::Mat frame = randomFrame(64, 48, 17);
    const ChannelMap m = rgbImageNet();
    std::vector<float> out(3 * 16 * 16, -1.0f);
    BilinearCrop crop;
    const int huge = BilinearCrop::kMaxSide + 1;
    struct Bad {
        int resizedW, resizedH, cropX, cropY, cropW, cropH;
        const char* part;
    };
    for (const Bad& b : {Bad {64, 64, 0, 0, 0, 16, "each side must be 1 to"},
             Bad {64, huge, 0, 0, 16, 16, "each side must be 1 to"},
             Bad {64, 64, 0, 0, 16, huge, "each side must be 1 to"},
             Bad {64, 64, 0, 0, 16, -16, "each side must be 1 to"},
             Bad {64, 64, 56, 0, 16, 16, "is not inside the frame resized to 64x64"},
             Bad {64, 64, -1, 0, 16, 16, "is not inside"}}) {
        const Status s = crop.run(test::asImage(frame), b.resizedW, b.resizedH, b.cropX, b.cropY,
            b.cropW, b.cropH, m, out.data(), 256);
        ASSERT_FALSE(s.ok()) << b.resizedW << "x" << b.resizedH << " crop " << b.cropW << "x"
                             << b.cropH;
        EXPECT_EQ(s.kind(), ErrorKind::InvalidInput);
        EXPECT_NE(s.message().find(b.part), std::string::npos) << s.message();
    }
    EXPECT_EQ(std::count(out.begin(), out.end(), -1.0f), static_cast<long>(out.size()))
        << "nothing is written for a refused geometry";
    // The same object still works afterwards.
    EXPECT_TRUE(crop.run(test::asImage(frame), 64, 64, 8, 8, 16, 16, m, out.data(), 256).ok());
    EXPECT_FALSE(crop.run(Image(), 64, 64, 8, 8, 16, 16, m, out.data(), 256).ok());

    // Through the preprocessor: a frame so narrow that its resized height passes any int.
    PreprocessConfig c;
    c.resizeSize = 256;
    c.cropWidth = c.cropHeight = 224;
    for (Interpolation interpolation : {Interpolation::Linear, Interpolation::Nearest}) {
        c.interpolation = interpolation;
        Preprocessor p(c);
        std::vector<float> planes(p.outputElements());
        const Status s = p.run(test::asImage(randomFrame(1, 20000, 18)), planes.data());
        ASSERT_FALSE(s.ok());
        EXPECT_NE(s.message().find("resized to 256x"), std::string::npos) << s.message();
    }
}

TEST(Preprocessor, LinearIsTheBilinearCrop)
{
    PreprocessConfig c;
    c.resizeSize = 256;
    c.cropWidth = c.cropHeight = 224;
    const cv::Mat frame = randomFrame(640, 480, 16);
    Preprocessor linear(c);
    std::vector<float> viaPreprocessor(linear.outputElements());
    ASSERT_TRUE(linear.run(test::asImage(frame), viaPreprocessor.data()).ok());
    const Case k {640, 480, 341, 256, 58, 16, 224, 224};
    const std::vector<float> expected = expectedPlanes(k, rgbImageNet(), [&](int x, int y, int ch) {
        return definitionPixel(frame, k.resizedW, k.resizedH, x, y, ch);
    });
    EXPECT_EQ(firstDifference(viaPreprocessor, expected), -1);
}

} // namespace
} // namespace jetagent
