// Pixel conversion against reference conversions written here from the standards' formulas.
#include <linux/videodev2.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "jetagent/hal/pixel_convert.h"
#include "test_image.h"

namespace jetagent {
namespace {

constexpr uint64_t kSeed = 20240601;
// The converter works in fixed point; against the float formula it may round the other way.
constexpr int kMaxLevelDiff = 1;
constexpr int kJpegQuality = 95;
constexpr double kMinJpegPSNR = 38.0; // dB, quality 95 on a smooth picture
constexpr int kJpegWidth = 320;
constexpr int kJpegHeight = 240;

using Bytes = std::vector<uint8_t>;

uint8_t clampRound(double value)
{
    return static_cast<uint8_t>(std::min(255.0, std::max(0.0, std::round(value))));
}

// ITU-R BT.601, limited range (Y 16..235, Cb/Cr 16..240), as V4L2 cameras send by default, with
// the textbook coefficients.
cv::Vec3b referenceBGR(int y, int u, int v)
{
    const double l = 1.164 * (y - 16);
    const double r = l + 1.596 * (v - 128);
    const double g = l - 0.813 * (v - 128) - 0.391 * (u - 128);
    const double b = l + 2.018 * (u - 128);
    return {clampRound(b), clampRound(g), clampRound(r)};
}

// Random bytes, padding included, so that reading padding as pixels shows.
Bytes randomBytes(size_t size, cv::RNG& rng)
{
    Bytes bytes(size);
    for (auto& b : bytes)
        b = static_cast<uint8_t>(rng.uniform(0, 256));
    return bytes;
}

cv::Mat referenceYUYV(const Bytes& frame, int width, int height, size_t stride)
{
    cv::Mat bgr(height, width, CV_8UC3);
    for (int y = 0; y < height; ++y) {
        const uint8_t* line = frame.data() + stride * static_cast<size_t>(y);
        for (int x = 0; x < width; x += 2) {
            const uint8_t* p = line + 2 * x;
            bgr.at<cv::Vec3b>(y, x) = referenceBGR(p[0], p[1], p[3]);
            bgr.at<cv::Vec3b>(y, x + 1) = referenceBGR(p[2], p[1], p[3]);
        }
    }
    return bgr;
}

// One chroma pair for each 2x2 block of luma samples.
cv::Mat referenceNV12(const Bytes& frame, int width, int height, size_t stride)
{
    cv::Mat bgr(height, width, CV_8UC3);
    const uint8_t* chroma = frame.data() + stride * static_cast<size_t>(height);
    for (int y = 0; y < height; ++y) {
        const uint8_t* luma = frame.data() + stride * static_cast<size_t>(y);
        const uint8_t* pairs = chroma + stride * static_cast<size_t>(y / 2);
        for (int x = 0; x < width; ++x) {
            const int block = x / 2 * 2;
            bgr.at<cv::Vec3b>(y, x) = referenceBGR(luma[x], pairs[block], pairs[block + 1]);
        }
    }
    return bgr;
}

// The converter writing into a cv::Mat, which the tests compare with OpenCV's conversions: into
// the Mat's own pixels when it has the frame's size already (as a source refills its frame, a
// region of a larger picture included), else into a new buffer the Mat then holds.
Status convertInto(PixelConverter& converter, const uint8_t* data, size_t size, cv::Mat& bgr)
{
    Image image = bgr.type() == CV_8UC3 ? test::asImage(bgr) : Image();
    Status s = converter.convert(data, size, image);
    if (image.data != bgr.data)
        bgr = test::asMat(image).clone();
    return s;
}

int maxDiff(const cv::Mat& a, const cv::Mat& b)
{
    EXPECT_EQ(a.size(), b.size());
    EXPECT_EQ(a.type(), b.type());
    if (a.size() != b.size() || a.type() != b.type())
        return 256;
    return static_cast<int>(cv::norm(a, b, cv::NORM_INF));
}

void expectConfigured(PixelConverter& converter, const char* fourcc, int width, int height,
    uint32_t bytesPerLine = 0, size_t sizeImage = 0)
{
    const Status s =
        converter.configure(fourccFromName(fourcc), width, height, bytesPerLine, sizeImage);
    ASSERT_TRUE(s.ok()) << s.message();
}

// --- names and layouts -------------------------------------------------------------------------

TEST(PixelConvertFourcc, NamesRoundTrip)
{
    EXPECT_EQ(fourccFromName("YUYV"), static_cast<uint32_t>(V4L2_PIX_FMT_YUYV));
    EXPECT_EQ(fourccFromName("MJPG"), static_cast<uint32_t>(V4L2_PIX_FMT_MJPEG));
    EXPECT_EQ(fourccFromName("RGB3"), static_cast<uint32_t>(V4L2_PIX_FMT_RGB24));
    EXPECT_EQ(fourccName(V4L2_PIX_FMT_NV12), "NV12");
    EXPECT_EQ(fourccName(V4L2_PIX_FMT_BGR24), "BGR3");
    EXPECT_EQ(fourccName(V4L2_PIX_FMT_GREY), "GREY");
    EXPECT_EQ(fourccFromName("MJPEG"), 0u);
    EXPECT_EQ(fourccFromName(""), 0u);
    EXPECT_EQ(fourccName(0x00FF4241u), "AB??");
}

TEST(PixelConvertFourcc, AutoPrefersUncompressedThenMJPEG)
{
    const std::vector<uint32_t> expected = {V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_NV12,
        V4L2_PIX_FMT_MJPEG, V4L2_PIX_FMT_RGB24, V4L2_PIX_FMT_BGR24, V4L2_PIX_FMT_GREY};
    EXPECT_EQ(PixelConverter::supportedFourccs(), expected);
    for (const uint32_t f : expected)
        EXPECT_TRUE(PixelConverter::supports(f)) << fourccName(f);
    EXPECT_FALSE(PixelConverter::supports(fourccFromName("YU12")));
    EXPECT_FALSE(PixelConverter::supports(0));
}

TEST(PixelConvertLayout, UnsupportedFormatListsTheSupportedOnes)
{
    PixelConverter converter;
    const Status s = converter.configure(fourccFromName("YU12"), 640, 480, 0, 0);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.kind(), ErrorKind::InvalidInput);
    for (const char* name : {"YU12", "YUYV", "NV12", "MJPG", "RGB3", "BGR3", "GREY"})
        EXPECT_NE(s.message().find(name), std::string::npos) << name << ": " << s.message();
}

TEST(PixelConvertLayout, OddSizesOfSubsampledFormatsAreRejected)
{
    PixelConverter converter;
    for (const char* name : {"YUYV", "NV12"}) {
        const Status s = converter.configure(fourccFromName(name), 641, 480, 0, 0);
        EXPECT_EQ(s.kind(), ErrorKind::InvalidInput) << name;
        EXPECT_NE(s.message().find("even"), std::string::npos) << s.message();
    }
    EXPECT_EQ(converter.configure(fourccFromName("NV12"), 640, 479, 0, 0).kind(),
        ErrorKind::InvalidInput);
    EXPECT_TRUE(converter.configure(fourccFromName("YUYV"), 640, 479, 0, 0).ok());
    EXPECT_TRUE(converter.configure(fourccFromName("GREY"), 641, 479, 0, 0).ok());
    EXPECT_EQ(
        converter.configure(fourccFromName("RGB3"), 0, 480, 0, 0).kind(), ErrorKind::InvalidInput);
}

TEST(PixelConvertLayout, ShortLinesAndSmallImagesAreRejected)
{
    PixelConverter converter;
    Status s = converter.configure(fourccFromName("YUYV"), 640, 480, 1279, 0);
    EXPECT_EQ(s.kind(), ErrorKind::InvalidInput);
    EXPECT_NE(s.message().find("1279"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("1280"), std::string::npos) << s.message();

    s = converter.configure(fourccFromName("RGB3"), 640, 480, 0, 640 * 480 * 3 - 1);
    EXPECT_EQ(s.kind(), ErrorKind::InvalidInput);
    EXPECT_NE(s.message().find("sizeimage"), std::string::npos) << s.message();

    // NV12: a luma plane, then half as many lines of chroma pairs, both at bytesperline.
    s = converter.configure(fourccFromName("NV12"), 640, 480, 704, 704 * 480 * 3 / 2 - 65);
    EXPECT_EQ(s.kind(), ErrorKind::InvalidInput);
    expectConfigured(converter, "NV12", 640, 480, 704, 704 * 480 * 3 / 2);
    EXPECT_EQ(converter.frameBytes(), 704u * 480 * 3 / 2 - 64);
}

TEST(PixelConvertLayout, FrameBytesFollowTheStride)
{
    PixelConverter converter;
    expectConfigured(converter, "YUYV", 640, 480);
    EXPECT_EQ(converter.frameBytes(), 640u * 480 * 2);
    expectConfigured(converter, "GREY", 100, 10, 128);
    EXPECT_EQ(converter.frameBytes(), 128u * 9 + 100); // the last line's padding is not needed
    expectConfigured(converter, "MJPG", 1280, 720, 0, 1280 * 720);
    EXPECT_EQ(converter.frameBytes(), 0u);
    EXPECT_EQ(converter.fourcc(), static_cast<uint32_t>(V4L2_PIX_FMT_MJPEG));
}

TEST(PixelConvertLayout, ShortBufferIsAnIoErrorNamingBothSizes)
{
    PixelConverter converter;
    expectConfigured(converter, "YUYV", 64, 48);
    const Bytes frame(64 * 48 * 2, 128);
    cv::Mat bgr(48, 64, CV_8UC3, cv::Scalar(1, 2, 3));
    const cv::Mat before = bgr.clone();
    const Status s = convertInto(converter, frame.data(), frame.size() - 1, bgr);
    EXPECT_EQ(s.kind(), ErrorKind::Io);
    EXPECT_NE(s.message().find("6143"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("6144"), std::string::npos) << s.message();
    EXPECT_EQ(maxDiff(bgr, before), 0);

    PixelConverter unconfigured;
    EXPECT_FALSE(convertInto(unconfigured, frame.data(), frame.size(), bgr).ok());
}

// --- YCbCr -------------------------------------------------------------------------------------

struct Geometry {
    int width;
    int height;
    size_t padding; // bytes after each line
};

// Widths that exercise the SIMD body alone, the scalar tail alone, and both.
const Geometry kGeometries[] = {{1280, 720, 0}, {642, 9, 62}, {30, 4, 2}, {2, 2, 0}, {96, 6, 7}};

TEST(PixelConvertYUYV, RandomFramesMatchTheBT601LimitedRangeReference)
{
    cv::RNG rng(kSeed);
    PixelConverter converter;
    for (const Geometry& g : kGeometries) {
        const size_t stride = 2 * static_cast<size_t>(g.width) + g.padding;
        expectConfigured(converter, "YUYV", g.width, g.height, static_cast<uint32_t>(stride));
        const Bytes frame = randomBytes(stride * static_cast<size_t>(g.height), rng);
        cv::Mat bgr;
        ASSERT_TRUE(convertInto(converter, frame.data(), frame.size(), bgr).ok());
        EXPECT_LE(maxDiff(bgr, referenceYUYV(frame, g.width, g.height, stride)), kMaxLevelDiff)
            << g.width << "x" << g.height << " padding " << g.padding;
    }
}

// Every (Y, U, V) combination once: 2^24 pixels.
TEST(PixelConvertYUYV, EveryYCbCrTripleIsWithinOneLevel)
{
    constexpr int kWidth = 4096; // 2048 pairs: 8 for each of 256 U values
    constexpr int kHeight = 4096; // 16 lines for each of 256 V values
    PixelConverter converter;
    expectConfigured(converter, "YUYV", kWidth, kHeight);
    Bytes frame(static_cast<size_t>(kWidth) * kHeight * 2);
    for (int row = 0; row < kHeight; ++row) {
        for (int pair = 0; pair < kWidth / 2; ++pair) {
            uint8_t* p = frame.data() + (static_cast<size_t>(row) * kWidth + 2 * pair) * 2;
            const int k = (row % 16) * 8 + pair % 8; // 128 pairs of luma values per (U, V)
            p[0] = static_cast<uint8_t>(2 * k);
            p[1] = static_cast<uint8_t>(pair / 8);
            p[2] = static_cast<uint8_t>(2 * k + 1);
            p[3] = static_cast<uint8_t>(row / 16);
        }
    }
    cv::Mat bgr;
    ASSERT_TRUE(convertInto(converter, frame.data(), frame.size(), bgr).ok());
    EXPECT_LE(maxDiff(bgr, referenceYUYV(frame, kWidth, kHeight, 2 * kWidth)), kMaxLevelDiff);
}

// The SIMD body (32 pixels a step) and the scalar tail compute the same integers.
TEST(PixelConvertYUYV, VectorAndScalarPathsAgreeExactly)
{
    constexpr int kWidth = 64;
    cv::RNG rng(kSeed + 5);
    const Bytes row = randomBytes(2 * kWidth, rng);
    PixelConverter wide;
    expectConfigured(wide, "YUYV", kWidth, 1);
    cv::Mat vector;
    ASSERT_TRUE(convertInto(wide, row.data(), row.size(), vector).ok());
    PixelConverter pair;
    expectConfigured(pair, "YUYV", 2, 1);
    for (int x = 0; x < kWidth; x += 2) {
        cv::Mat scalar;
        ASSERT_TRUE(convertInto(pair, row.data() + 2 * x, 4, scalar).ok());
        EXPECT_EQ(scalar.at<cv::Vec3b>(0, 0), vector.at<cv::Vec3b>(0, x)) << x;
        EXPECT_EQ(scalar.at<cv::Vec3b>(0, 1), vector.at<cv::Vec3b>(0, x + 1)) << x;
    }
}

TEST(PixelConvertYUYV, NominalBlackAndWhiteAreExactAndExtremesSaturate)
{
    // (Y0, U, Y1, V): black and white at the nominal limits, then beyond them, then chroma at
    // its ends, where R, G or B leave 0..255 on both sides.
    const Bytes frame = {16, 128, 235, 128, 0, 128, 255, 128, 16, 255, 235, 128, 235, 0, 16, 255};
    PixelConverter converter;
    expectConfigured(converter, "YUYV", static_cast<int>(frame.size() / 2), 1);
    cv::Mat bgr;
    ASSERT_TRUE(convertInto(converter, frame.data(), frame.size(), bgr).ok());
    EXPECT_EQ(bgr.at<cv::Vec3b>(0, 0), cv::Vec3b(0, 0, 0));
    EXPECT_EQ(bgr.at<cv::Vec3b>(0, 1), cv::Vec3b(255, 255, 255));
    EXPECT_EQ(bgr.at<cv::Vec3b>(0, 2), cv::Vec3b(0, 0, 0));
    EXPECT_EQ(bgr.at<cv::Vec3b>(0, 3), cv::Vec3b(255, 255, 255));
    EXPECT_EQ(bgr.at<cv::Vec3b>(0, 4), cv::Vec3b(255, 0, 0)); // B 256.3, G -49.7: saturated
    EXPECT_EQ(bgr.at<cv::Vec3b>(0, 5)[0], 255);
    EXPECT_EQ(bgr.at<cv::Vec3b>(0, 5)[2], 255);
    EXPECT_EQ(bgr.at<cv::Vec3b>(0, 7)[0], 0); // B -276.9
    EXPECT_LE(maxDiff(bgr, referenceYUYV(frame, bgr.cols, 1, frame.size())), kMaxLevelDiff);
}

// What cv::cvtColor computes for YUYV, for the record: the same BT.601 limited-range formula,
// except that luma below 16 (footroom, "blacker than black") is clamped to 16 first. The
// converter keeps the standard's linear formula there; cvtColor is not used because it runs on
// OpenCV's thread pool (see camera_alloc_test).
TEST(PixelConvertYUYV, OpenCVAgreesAboveBlackAndClampsFootroom)
{
    cv::RNG rng(kSeed);
    constexpr int kWidth = 640;
    constexpr int kHeight = 48;
    Bytes frame = randomBytes(static_cast<size_t>(kWidth) * kHeight * 2, rng);
    for (size_t i = 0; i < frame.size(); i += 2)
        frame[i] = static_cast<uint8_t>(std::max<int>(frame[i], 16));
    cv::Mat opencv;
    cv::cvtColor(cv::Mat(kHeight, kWidth, CV_8UC2, frame.data()), opencv, cv::COLOR_YUV2BGR_YUYV);
    EXPECT_LE(maxDiff(opencv, referenceYUYV(frame, kWidth, kHeight, 2 * kWidth)), kMaxLevelDiff);

    Bytes footroom = {0, 128, 16, 255}; // Y 0 and Y 16 with strong red chroma
    cv::cvtColor(cv::Mat(1, 2, CV_8UC2, footroom.data()), opencv, cv::COLOR_YUV2BGR_YUYV);
    EXPECT_EQ(opencv.at<cv::Vec3b>(0, 0), opencv.at<cv::Vec3b>(0, 1));
    cv::Mat ours;
    PixelConverter converter;
    expectConfigured(converter, "YUYV", 2, 1);
    ASSERT_TRUE(convertInto(converter, footroom.data(), footroom.size(), ours).ok());
    EXPECT_EQ(ours.at<cv::Vec3b>(0, 0)[2], referenceBGR(0, 128, 255)[2]); // 184, not 203
    EXPECT_EQ(ours.at<cv::Vec3b>(0, 1)[2], referenceBGR(16, 128, 255)[2]);
}

TEST(PixelConvertNV12, RandomFramesMatchTheReferenceWithSharedChroma)
{
    cv::RNG rng(kSeed + 1);
    PixelConverter converter;
    for (const Geometry& g : kGeometries) {
        if (g.height % 2 != 0)
            continue;
        const size_t stride = static_cast<size_t>(g.width) + g.padding;
        expectConfigured(converter, "NV12", g.width, g.height, static_cast<uint32_t>(stride));
        const Bytes frame = randomBytes(stride * static_cast<size_t>(g.height) * 3 / 2, rng);
        cv::Mat bgr;
        ASSERT_TRUE(convertInto(converter, frame.data(), frame.size(), bgr).ok());
        EXPECT_LE(maxDiff(bgr, referenceNV12(frame, g.width, g.height, stride)), kMaxLevelDiff)
            << g.width << "x" << g.height << " padding " << g.padding;
    }
}

TEST(PixelConvertNV12, OpenCVAgreesAboveBlack)
{
    cv::RNG rng(kSeed + 2);
    constexpr int kWidth = 640;
    constexpr int kHeight = 48;
    constexpr size_t kLuma = static_cast<size_t>(kWidth) * kHeight;
    Bytes frame = randomBytes(kLuma * 3 / 2, rng);
    for (size_t i = 0; i < kLuma; ++i)
        frame[i] = static_cast<uint8_t>(std::max<int>(frame[i], 16));
    cv::Mat opencv;
    cv::cvtColor(
        cv::Mat(kHeight * 3 / 2, kWidth, CV_8UC1, frame.data()), opencv, cv::COLOR_YUV2BGR_NV12);
    EXPECT_LE(maxDiff(opencv, referenceNV12(frame, kWidth, kHeight, kWidth)), kMaxLevelDiff);
}

// --- RGB, BGR, grey: exact ---------------------------------------------------------------------

TEST(PixelConvertPacked, RGBBGRAndGreyAreExact)
{
    cv::RNG rng(kSeed + 3);
    PixelConverter converter;
    for (const Geometry& g : kGeometries) {
        for (const char* name : {"RGB3", "BGR3", "GREY"}) {
            const size_t channels = std::strcmp(name, "GREY") == 0 ? 1 : 3;
            const size_t stride = channels * static_cast<size_t>(g.width) + g.padding;
            expectConfigured(converter, name, g.width, g.height, static_cast<uint32_t>(stride));
            const Bytes frame = randomBytes(stride * static_cast<size_t>(g.height), rng);
            cv::Mat bgr;
            ASSERT_TRUE(convertInto(converter, frame.data(), frame.size(), bgr).ok());
            ASSERT_EQ(bgr.size(), cv::Size(g.width, g.height));
            ASSERT_EQ(bgr.type(), CV_8UC3);
            int wrong = 0;
            for (int y = 0; y < g.height; ++y) {
                const uint8_t* line = frame.data() + stride * static_cast<size_t>(y);
                for (int x = 0; x < g.width; ++x) {
                    const uint8_t* p = line + channels * static_cast<size_t>(x);
                    cv::Vec3b expected(p[0], p[0], p[0]);
                    if (channels == 3)
                        expected = std::strcmp(name, "RGB3") == 0 ? cv::Vec3b(p[2], p[1], p[0])
                                                                  : cv::Vec3b(p[0], p[1], p[2]);
                    wrong += bgr.at<cv::Vec3b>(y, x) != expected;
                }
            }
            EXPECT_EQ(wrong, 0) << name << " " << g.width << "x" << g.height;
        }
    }
}

TEST(PixelConvertPacked, TheDestinationIsReusedAndOnlyResizedWhenWrong)
{
    PixelConverter converter;
    expectConfigured(converter, "GREY", 64, 32);
    const Bytes frame(64 * 32, 77);
    cv::Mat bgr;
    ASSERT_TRUE(convertInto(converter, frame.data(), frame.size(), bgr).ok());
    const uint8_t* buffer = bgr.data;
    ASSERT_TRUE(convertInto(converter, frame.data(), frame.size(), bgr).ok());
    EXPECT_EQ(bgr.data, buffer);

    cv::Mat wrongSize(10, 10, CV_8UC3);
    ASSERT_TRUE(convertInto(converter, frame.data(), frame.size(), wrongSize).ok());
    EXPECT_EQ(wrongSize.size(), cv::Size(64, 32));

    // A region of a larger picture has the right size and type: written in place, line by line.
    cv::Mat canvas(40, 80, CV_8UC3, cv::Scalar(1, 2, 3));
    cv::Mat region = canvas(cv::Rect(8, 4, 64, 32));
    ASSERT_TRUE(convertInto(converter, frame.data(), frame.size(), region).ok());
    EXPECT_EQ(region.data, canvas.ptr<uint8_t>(4) + 8 * 3);
    EXPECT_EQ(cv::countNonZero(region.reshape(1) != 77), 0);
    EXPECT_EQ(canvas.at<cv::Vec3b>(0, 0), cv::Vec3b(1, 2, 3));
}

// --- MJPEG -------------------------------------------------------------------------------------

// A smooth picture, as a camera sees, so quality 95 keeps it close.
cv::Mat smoothPicture(int width, int height)
{
    cv::Mat picture(height, width, CV_8UC3);
    cv::RNG rng(kSeed + 4);
    rng.fill(picture, cv::RNG::UNIFORM, 0, 256);
    cv::GaussianBlur(picture, picture, cv::Size(0, 0), 4.0);
    cv::normalize(picture, picture, 0, 255, cv::NORM_MINMAX);
    return picture;
}

Bytes encodeJpeg(const cv::Mat& picture, std::vector<int> params = {})
{
    params.push_back(cv::IMWRITE_JPEG_QUALITY);
    params.push_back(kJpegQuality);
    Bytes jpeg;
    EXPECT_TRUE(cv::imencode(".jpg", picture, jpeg, params));
    return jpeg;
}

// The same stream without its DHT segments, as many UVC cameras send it.
Bytes withoutHuffmanTables(const Bytes& jpeg)
{
    Bytes out(jpeg.begin(), jpeg.begin() + 2);
    size_t pos = 2;
    int removed = 0;
    while (pos + 4 <= jpeg.size() && jpeg[pos] == 0xFF) {
        const uint8_t marker = jpeg[pos + 1];
        const size_t length = (static_cast<size_t>(jpeg[pos + 2]) << 8) | jpeg[pos + 3];
        if (marker == 0xDA) { // the scan and everything after it
            out.insert(out.end(), jpeg.begin() + static_cast<std::ptrdiff_t>(pos), jpeg.end());
            break;
        }
        if (marker == 0xC4)
            ++removed;
        else
            out.insert(out.end(), jpeg.begin() + static_cast<std::ptrdiff_t>(pos),
                jpeg.begin() + static_cast<std::ptrdiff_t>(pos + 2 + length));
        pos += 2 + length;
    }
    EXPECT_GT(removed, 0);
    return out;
}

class PixelConvertMJPEG : public ::testing::Test {
protected:
    void SetUp() override
    {
        picture_ = smoothPicture(kJpegWidth, kJpegHeight);
        jpeg_ = encodeJpeg(picture_);
        decoded_ = cv::imdecode(jpeg_, cv::IMREAD_COLOR);
        ASSERT_FALSE(decoded_.empty());
        expectConfigured(converter_, "MJPG", kJpegWidth, kJpegHeight);
    }

    // Converting `frame` fails with an Io error and leaves a filled destination as it was.
    void expectRejected(const Bytes& frame, const char* what)
    {
        cv::Mat bgr(kJpegHeight, kJpegWidth, CV_8UC3, cv::Scalar(9, 8, 7));
        const uint8_t* buffer = bgr.data;
        const Status s = convertInto(converter_, frame.data(), frame.size(), bgr);
        EXPECT_EQ(s.kind(), ErrorKind::Io) << what << ": " << s.message();
        EXPECT_EQ(bgr.data, buffer) << what;
        EXPECT_EQ(
            cv::norm(bgr, cv::Mat(bgr.size(), CV_8UC3, cv::Scalar(9, 8, 7)), cv::NORM_INF), 0.0)
            << what;
    }

    cv::Mat picture_;
    Bytes jpeg_;
    cv::Mat decoded_; // what OpenCV itself makes of jpeg_
    PixelConverter converter_;
};

TEST_F(PixelConvertMJPEG, DecodesWhatOpenCVDecodesCloseToTheOriginal)
{
    cv::Mat bgr;
    const Status s = convertInto(converter_, jpeg_.data(), jpeg_.size(), bgr);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(maxDiff(bgr, decoded_), 0);
    EXPECT_GE(cv::PSNR(bgr, picture_), kMinJpegPSNR);
    const uint8_t* buffer = bgr.data;
    ASSERT_TRUE(convertInto(converter_, jpeg_.data(), jpeg_.size(), bgr).ok());
    EXPECT_EQ(bgr.data, buffer);
}

TEST_F(PixelConvertMJPEG, FramesWithoutHuffmanTablesDecode)
{
    // Debian 12's OpenCV decodes through libjpeg-turbo, which substitutes the standard tables
    // (ITU-T T.81 Annex K.3) when a stream has none. If this fails, the decoder in use lacks
    // that fallback and the converter must insert the tables itself.
    const Bytes stripped = withoutHuffmanTables(jpeg_);
    cv::Mat bgr;
    const Status s = convertInto(converter_, stripped.data(), stripped.size(), bgr);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(maxDiff(bgr, decoded_), 0);
}

TEST_F(PixelConvertMJPEG, PaddingAfterTheEndMarkerIsIgnored)
{
    Bytes padded = jpeg_;
    padded.resize(jpeg_.size() + 4096, 0);
    cv::Mat bgr;
    const Status s = convertInto(converter_, padded.data(), padded.size(), bgr);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(maxDiff(bgr, decoded_), 0);
}

TEST_F(PixelConvertMJPEG, RestartMarkersInTheScanAreData)
{
    const Bytes withRestarts = encodeJpeg(picture_, {cv::IMWRITE_JPEG_RST_INTERVAL, 4});
    cv::Mat bgr;
    const Status s = convertInto(converter_, withRestarts.data(), withRestarts.size(), bgr);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(maxDiff(bgr, cv::imdecode(withRestarts, cv::IMREAD_COLOR)), 0);
}

TEST_F(PixelConvertMJPEG, TruncatedAndCorruptFramesAreIoErrorsAndLeaveTheDestination)
{
    for (const size_t keep : {jpeg_.size() - 2, jpeg_.size() / 2, size_t {600}, size_t {3}})
        expectRejected(
            Bytes(jpeg_.begin(), jpeg_.begin() + static_cast<std::ptrdiff_t>(keep)), "truncated");
    expectRejected(Bytes(4096, 0x55), "not a JPEG");
    expectRejected(Bytes(), "empty");

    Bytes badLength = jpeg_;
    badLength[4] = 0; // the first segment after SOI claims a length of 1
    badLength[5] = 1;
    expectRejected(badLength, "segment length 1");

    // A frame of another size than the camera was configured for.
    const Bytes other = encodeJpeg(smoothPicture(kJpegWidth / 2, kJpegHeight / 2));
    expectRejected(other, "another size");
    cv::Mat bgr;
    const Status s = convertInto(converter_, other.data(), other.size(), bgr);
    EXPECT_NE(s.message().find("160x120"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("320x240"), std::string::npos) << s.message();
    EXPECT_TRUE(bgr.empty());
}

} // namespace
} // namespace jetagent
