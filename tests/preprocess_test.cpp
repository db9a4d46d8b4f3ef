// Preprocessing against references written independently here: torchvision's resize/crop geometry
// by hand, and the tensor itself bit for bit.
#include <cmath>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "tasks/preprocess.h"
#include "test_image.h"

namespace jetagent {
namespace {

PreprocessConfig shorterSide(int resize, int cropW, int cropH)
{
    PreprocessConfig c;
    c.resize = ResizeMode::ShorterSide;
    c.resizeSize = resize;
    c.cropWidth = cropW;
    c.cropHeight = cropH;
    return c;
}

struct GeometryCase {
    int frameW, frameH, resize, crop;
    int resizedW, resizedH, cropX, cropY;
};

TEST(CropGeometry, MatchesTorchvisionResizeAndCenterCrop)
{
    // Worked by hand from torchvision 0.14: Resize(s): short -> s, long -> int(s * long / short);
    // CenterCrop(c): top = int(round((h - c) / 2.0)) with Python's round half to even.
    const GeometryCase cases[] = {
        {640, 480, 256, 224, 341, 256, 58, 16}, // 341.33 -> 341; (341-224)/2 = 58.5 -> 58 (even)
        {480, 640, 256, 224, 256, 341, 16, 58}, // portrait
        {500, 375, 256, 224, 341, 256, 58, 16}, // a typical ImageNet photo
        {333, 500, 256, 224, 256, 384, 16, 80}, // 384.38 -> 384
        {345, 256, 256, 224, 345, 256, 60, 16}, // (345-224)/2 = 60.5 -> 60 (even)
        {347, 256, 256, 224, 347, 256, 62, 16}, // 61.5 -> 62 (even)
        {300, 300, 256, 224, 256, 256, 16, 16}, // square: width <= height branch
        {320, 240, 73, 64, 97, 73, 16, 4}, // 97.33 -> 97; 16.5 -> 16; 4.5 -> 4
    };
    for (const auto& c : cases) {
        const CropGeometry g =
            computeCropGeometry(c.frameW, c.frameH, shorterSide(c.resize, c.crop, c.crop));
        EXPECT_EQ(g.resizedWidth, c.resizedW) << c.frameW << "x" << c.frameH;
        EXPECT_EQ(g.resizedHeight, c.resizedH) << c.frameW << "x" << c.frameH;
        EXPECT_EQ(g.cropX, c.cropX) << c.frameW << "x" << c.frameH;
        EXPECT_EQ(g.cropY, c.cropY) << c.frameW << "x" << c.frameH;
        EXPECT_EQ(g.cropWidth, c.crop);
        EXPECT_EQ(g.cropHeight, c.crop);
    }
}

TEST(CropGeometry, StretchResizesStraightToTheCrop)
{
    PreprocessConfig c;
    c.resize = ResizeMode::Stretch;
    c.cropWidth = 64;
    c.cropHeight = 48;
    const CropGeometry g = computeCropGeometry(320, 240, c);
    EXPECT_EQ(g.resizedWidth, 64);
    EXPECT_EQ(g.resizedHeight, 48);
    EXPECT_EQ(g.cropX, 0);
    EXPECT_EQ(g.cropY, 0);
}

cv::Mat randomFrame(int w, int h, uint64_t seed)
{
    cv::Mat m(h, w, CV_8UC3);
    cv::RNG rng(seed);
    rng.fill(m, cv::RNG::UNIFORM, 0, 256);
    return m;
}

// The model's value for a uint8 pixel, computed as the config describes, in float32 like
// torchvision.
float reference(uint8_t v, const PreprocessConfig& c, int channel)
{
    const float scaled = static_cast<float>(v) / c.divisor;
    return (scaled - c.mean[static_cast<size_t>(channel)]) / c.std[static_cast<size_t>(channel)];
}

// Builds the NCHW tensor from an already-resized image with plain loops: crop offset, channel
// order, formula.
std::vector<float> referenceTensor(
    const cv::Mat& resized, int cropX, int cropY, const PreprocessConfig& c)
{
    std::vector<float> out(3u * static_cast<size_t>(c.cropWidth * c.cropHeight));
    for (int ch = 0; ch < 3; ++ch) {
        const int bgrIndex = c.color == ColorOrder::Rgb ? 2 - ch : ch;
        for (int y = 0; y < c.cropHeight; ++y)
            for (int x = 0; x < c.cropWidth; ++x) {
                const uint8_t v = resized.at<cv::Vec3b>(cropY + y, cropX + x)[bgrIndex];
                out[(static_cast<size_t>(ch * c.cropHeight + y)) *
                        static_cast<size_t>(c.cropWidth) +
                    static_cast<size_t>(x)] = reference(v, c, ch);
            }
    }
    return out;
}

void expectBitIdentical(const std::vector<float>& a, const std::vector<float>& b)
{
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        uint32_t ua, ub;
        std::memcpy(&ua, &a[i], 4);
        std::memcpy(&ub, &b[i], 4);
        ASSERT_EQ(ua, ub) << "element " << i << ": " << a[i] << " vs " << b[i];
    }
}

TEST(Preprocessor, NearestNeighbourMatchesAnIndependentReferenceBitForBit)
{
    // 512x384 with resize 192 scales by exactly 1/2, so nearest neighbour picks source pixel 2x, 2y
    // (floor(dst * src/dst_size)): the reference needs no resize routine at all.
    PreprocessConfig c = shorterSide(192, 160, 128);
    c.interpolation = Interpolation::Nearest;
    const cv::Mat frame = randomFrame(512, 384, 1);
    const CropGeometry g = computeCropGeometry(512, 384, c);
    ASSERT_EQ(g.resizedWidth, 256);
    ASSERT_EQ(g.resizedHeight, 192);
    ASSERT_EQ(g.cropX, 48);
    ASSERT_EQ(g.cropY, 32);

    std::vector<float> expected(3u * 160u * 128u);
    for (int ch = 0; ch < 3; ++ch)
        for (int y = 0; y < 128; ++y)
            for (int x = 0; x < 160; ++x) {
                const uint8_t v =
                    frame.at<cv::Vec3b>(2 * (32 + y), 2 * (48 + x))[2 - ch]; // RGB from BGR
                expected[static_cast<size_t>(ch * 128 + y) * 160 + static_cast<size_t>(x)] =
                    reference(v, c, ch);
            }
    Preprocessor p(c);
    std::vector<float> actual(p.outputElements());
    ASSERT_TRUE(p.run(test::asImage(frame), actual.data()).ok());
    expectBitIdentical(actual, expected);
}

TEST(Preprocessor, EveryInterpolationMatchesCropAndNormaliseReferenceBitForBit)
{
    // The resampling kernel is the same in both: OpenCV's INTER_LINEAR_EXACT, which the bilinear
    // crop reproduces, and image_resize.h's for the others (image_resize_test compares those with
    // OpenCV's); everything after it (crop offsets, channel order, the float32 formula, NCHW
    // layout) is the reference's own.
    for (Interpolation interpolation : {Interpolation::Nearest, Interpolation::Linear,
             Interpolation::Area, Interpolation::Cubic}) {
        for (ColorOrder color : {ColorOrder::Rgb, ColorOrder::Bgr}) {
            PreprocessConfig c = shorterSide(256, 224, 224);
            c.interpolation = interpolation;
            c.color = color;
            const cv::Mat frame = randomFrame(640, 480, 2);
            cv::Mat resized;
            if (interpolation == Interpolation::Linear) {
                cv::resize(frame, resized, cv::Size(341, 256), 0, 0, cv::INTER_LINEAR_EXACT);
            } else {
                Image ours;
                ImageResizer().run(test::asImage(frame), ours, 341, 256,
                    interpolation == Interpolation::Nearest     ? ResizeKind::Nearest
                        : interpolation == Interpolation::Cubic ? ResizeKind::Cubic
                                                                : ResizeKind::Area);
                resized = test::asMat(ours).clone();
            }
            const std::vector<float> expected = referenceTensor(resized, 58, 16, c);
            Preprocessor p(c);
            std::vector<float> actual(p.outputElements());
            ASSERT_TRUE(p.run(test::asImage(frame), actual.data()).ok());
            expectBitIdentical(actual, expected);
        }
    }
}

TEST(Preprocessor, CaffeStyleRawValuesAndStretch)
{
    PreprocessConfig c;
    c.resize = ResizeMode::Stretch;
    c.cropWidth = 96;
    c.cropHeight = 64;
    c.interpolation = Interpolation::Area;
    c.color = ColorOrder::Bgr;
    c.divisor = 1.0f;
    c.mean = {104.0f, 117.0f, 123.0f};
    c.std = {1.0f, 1.0f, 1.0f};
    const cv::Mat frame = randomFrame(320, 240, 3);
    // The kernel is image_resize.h's area (image_resize_test compares it with OpenCV's, which on
    // aarch64 rounds a level apart here and there: Debian's build fuses multiply-adds).
    Image ours;
    ImageResizer().run(test::asImage(frame), ours, 96, 64, ResizeKind::Area);
    const cv::Mat resized = test::asMat(ours);
    Preprocessor p(c);
    std::vector<float> actual(p.outputElements());
    ASSERT_TRUE(p.run(test::asImage(frame), actual.data()).ok());
    expectBitIdentical(actual, referenceTensor(resized, 0, 0, c));
    // Spot check the arithmetic itself: raw value minus mean.
    EXPECT_EQ(actual[0], static_cast<float>(resized.at<cv::Vec3b>(0, 0)[0]) - 104.0f);
}

TEST(Preprocessor, FrameAlreadyAtTheResizedSizeIsOnlyCropped)
{
    PreprocessConfig c = shorterSide(256, 224, 224);
    const cv::Mat frame = randomFrame(341, 256, 4);
    Preprocessor p(c);
    std::vector<float> actual(p.outputElements());
    ASSERT_TRUE(p.run(test::asImage(frame), actual.data()).ok());
    expectBitIdentical(actual, referenceTensor(frame, 58, 16, c));
}

TEST(Preprocessor, RepeatedFramesGiveTheSameTensor)
{
    PreprocessConfig c = shorterSide(256, 224, 224);
    Preprocessor p(c);
    std::vector<float> a(p.outputElements()), b(p.outputElements());
    ASSERT_TRUE(p.run(test::asImage(randomFrame(640, 480, 5)), a.data()).ok());
    ASSERT_TRUE(
        p.run(test::asImage(randomFrame(800, 600, 6)), b.data()).ok()); // another size in between
    ASSERT_TRUE(p.run(test::asImage(randomFrame(640, 480, 5)), b.data()).ok());
    expectBitIdentical(a, b);
}

} // namespace
} // namespace jetagent
