// The image codec without OpenCV's imgcodecs (hal/image_codec.h): every format and variant it reads
// decodes to exactly the pixels OpenCV's imdecode(IMREAD_COLOR) gave for the same bytes (the test
// still links imgcodecs, as the reference and to make the files), formats it does not read are
// refused by name, corrupt and truncated data give errors, and what it writes reads back.
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <png.h>
#include <turbojpeg.h>

#include "jetagent/hal/image_codec.h"
#include "test_image.h"
#include "test_support.h"

namespace jetagent {
namespace {

using Bytes = std::vector<uint8_t>;

constexpr uint64_t kNoLimit = uint64_t {1} << 40;

// A smooth picture with detail (a gradient with noise), the kind JPEG is made for.
cv::Mat picture(int width, int height, int type = CV_8UC3, uint64_t seed = 5)
{
    cv::Mat image(height, width, type);
    cv::RNG rng(seed);
    rng.fill(image, cv::RNG::UNIFORM, 0, image.depth() == CV_16U ? 65536 : 256);
    cv::GaussianBlur(image, image, cv::Size(0, 0), 1.5);
    return image;
}

Bytes encodedByOpenCV(
    const std::string& extension, const cv::Mat& image, const std::vector<int>& params = {})
{
    std::vector<uchar> out;
    EXPECT_TRUE(cv::imencode(extension, image, out, params)) << extension;
    return Bytes(out.begin(), out.end());
}

cv::Mat decodedByOpenCV(const Bytes& bytes)
{
    return cv::imdecode(bytes, cv::IMREAD_COLOR);
}

int maxDifference(const cv::Mat& a, const cv::Mat& b)
{
    if (a.size() != b.size() || a.type() != b.type())
        return 1000;
    double max = 0;
    cv::minMaxLoc(cv::abs(a - b), nullptr, &max);
    return static_cast<int>(max);
}

// Decodes `bytes` and checks it against OpenCV's decoding of the same bytes.
void expectAsOpenCV(const std::string& name, const Bytes& bytes, int tolerance = 0)
{
    auto ours = decodeImage(bytes.data(), bytes.size(), kNoLimit);
    ASSERT_TRUE(ours.ok()) << name << ": " << ours.status().message();
    EXPECT_EQ(ours->channels(), 3) << name;
    const cv::Mat reference = decodedByOpenCV(bytes);
    ASSERT_FALSE(reference.empty()) << name;
    EXPECT_EQ(ours->cols, reference.cols) << name;
    EXPECT_EQ(ours->rows, reference.rows) << name;
    EXPECT_LE(maxDifference(test::asMat(*ours), reference), tolerance) << name;
}

void putLe16(Bytes& b, uint32_t v)
{
    b.push_back(static_cast<uint8_t>(v));
    b.push_back(static_cast<uint8_t>(v >> 8));
}
void putLe32(Bytes& b, uint32_t v)
{
    putLe16(b, v & 0xFFFF);
    putLe16(b, v >> 16);
}

// A BMP of `bits` per pixel from `rows` (each already padded to 4 bytes, top row first), with
// `palette` (BGRA entries) and, for bit fields, `masks` (red, green, blue).
Bytes bmpFile(int width, int height, int bits, const std::vector<Bytes>& rows, bool topDown,
    const Bytes& palette = {}, const std::vector<uint32_t>& masks = {})
{
    const uint32_t headerBytes = 14 + 40 + static_cast<uint32_t>(masks.size() * 4);
    const uint32_t offset = headerBytes + static_cast<uint32_t>(palette.size());
    Bytes b = {'B', 'M'};
    putLe32(b, 0);
    putLe32(b, 0);
    putLe32(b, offset);
    putLe32(b, 40);
    putLe32(b, static_cast<uint32_t>(width));
    putLe32(b, static_cast<uint32_t>(topDown ? -height : height));
    putLe16(b, 1);
    putLe16(b, static_cast<uint32_t>(bits));
    putLe32(b, masks.empty() ? 0 : 3);
    for (int i = 0; i < 2; ++i)
        putLe32(b, 0);
    putLe32(b, 0);
    putLe32(b, static_cast<uint32_t>(palette.size() / 4));
    putLe32(b, 0);
    for (uint32_t mask : masks)
        putLe32(b, mask);
    b.insert(b.end(), palette.begin(), palette.end());
    for (int y = 0; y < height; ++y) {
        const Bytes& row = rows[static_cast<size_t>(topDown ? y : height - 1 - y)];
        b.insert(b.end(), row.begin(), row.end());
    }
    return b;
}

// Rows of random bytes, `rowBytes` each (the padding included: decoders ignore it).
std::vector<Bytes> randomRows(int height, size_t rowBytes, uint32_t seed)
{
    std::mt19937 random(seed);
    std::vector<Bytes> rows(static_cast<size_t>(height), Bytes(rowBytes));
    for (Bytes& row : rows)
        for (uint8_t& byte : row)
            byte = static_cast<uint8_t>(random());
    return rows;
}

// A PNG written through libpng directly, for the variants OpenCV does not write: palettes (with
// transparency), interlacing, low-depth grey.
Bytes pngByLibpng(int width, int height, int colourType, int depth, bool interlaced,
    const std::vector<Bytes>& rows, int paletteEntries = 0)
{
    Bytes out;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
    png_infop info = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png))) {
        ADD_FAILURE() << "libpng could not write the test's PNG";
        png_destroy_write_struct(&png, &info);
        return {};
    }
    png_set_write_fn(
        png, &out,
        [](png_structp p, png_bytep data, size_t length) {
            auto* bytes = static_cast<Bytes*>(png_get_io_ptr(p));
            bytes->insert(bytes->end(), data, data + length);
        },
        nullptr);
    png_set_IHDR(png, info, static_cast<uint32_t>(width), static_cast<uint32_t>(height), depth,
        colourType, interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
        PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    std::vector<png_color> palette;
    std::vector<png_byte> alpha;
    for (int i = 0; i < paletteEntries; ++i) {
        palette.push_back({static_cast<png_byte>(i * 7), static_cast<png_byte>(255 - i),
            static_cast<png_byte>(i * 13)});
        alpha.push_back(static_cast<png_byte>(i * 3));
    }
    if (paletteEntries > 0) {
        png_set_PLTE(png, info, palette.data(), paletteEntries);
        png_set_tRNS(png, info, alpha.data(), paletteEntries, nullptr);
    }
    png_write_info(png, info);
    std::vector<png_bytep> pointers;
    for (const Bytes& row : rows)
        pointers.push_back(const_cast<png_bytep>(row.data()));
    png_write_image(png, pointers.data());
    png_write_end(png, nullptr);
    png_destroy_write_struct(&png, &info);
    return out;
}

// A JPEG with an EXIF APP1 segment giving `orientation`, in either byte order, after SOI.
Bytes withExifOrientation(const Bytes& jpeg, int orientation, bool littleEndian)
{
    Bytes tiff =
        littleEndian ? Bytes {'I', 'I', 42, 0, 8, 0, 0, 0} : Bytes {'M', 'M', 0, 42, 0, 0, 0, 8};
    auto put16 = [&](uint32_t v) {
        if (littleEndian)
            putLe16(tiff, v);
        else
            tiff.insert(tiff.end(), {uint8_t(v >> 8), uint8_t(v)});
    };
    auto put32 = [&](uint32_t v) {
        if (littleEndian) {
            put16(v & 0xFFFF);
            put16(v >> 16);
        } else {
            put16(v >> 16);
            put16(v & 0xFFFF);
        }
    };
    put16(2); // two entries: an unrelated one first (ImageWidth), then Orientation
    put16(0x0100);
    put16(4);
    put32(1);
    put32(64);
    put16(0x0112);
    put16(3);
    put32(1);
    put16(static_cast<uint32_t>(orientation));
    put16(0);
    put32(0);
    Bytes segment = {0xFF, 0xE1};
    const size_t length = 2 + 6 + tiff.size();
    segment.insert(segment.end(), {uint8_t(length >> 8), uint8_t(length)});
    const char exif[] = "Exif\0";
    segment.insert(segment.end(), exif, exif + 6);
    segment.insert(segment.end(), tiff.begin(), tiff.end());
    Bytes out(jpeg.begin(), jpeg.begin() + 2);
    out.insert(out.end(), segment.begin(), segment.end());
    out.insert(out.end(), jpeg.begin() + 2, jpeg.end());
    return out;
}

TEST(ImageCodec, JpegDecodesAsOpenCVDid)
{
    const cv::Mat bgr = picture(61, 37);
    cv::Mat grey;
    cv::cvtColor(bgr, grey, cv::COLOR_BGR2GRAY);
    expectAsOpenCV("baseline", encodedByOpenCV(".jpg", bgr, {cv::IMWRITE_JPEG_QUALITY, 90}));
    expectAsOpenCV("progressive", encodedByOpenCV(".jpg", bgr, {cv::IMWRITE_JPEG_PROGRESSIVE, 1}));
    expectAsOpenCV("grey", encodedByOpenCV(".jpg", grey));
    expectAsOpenCV("quality 100", encodedByOpenCV(".jpg", bgr, {cv::IMWRITE_JPEG_QUALITY, 100}));
    expectAsOpenCV(
        "with restart markers", encodedByOpenCV(".jpg", bgr, {cv::IMWRITE_JPEG_RST_INTERVAL, 2}));
}

// EXIF orientation: OpenCV's IMREAD_COLOR turned the picture as the camera said; so does
// decodeImage, for all eight orientations in both byte orders (a non-square picture, so that a
// wrong turn changes the size).
TEST(ImageCodec, JpegExifOrientationIsAppliedAsOpenCVDid)
{
    const Bytes jpeg = encodedByOpenCV(".jpg", picture(48, 32));
    for (int orientation = 1; orientation <= 8; ++orientation) {
        for (bool little : {true, false}) {
            const Bytes turned = withExifOrientation(jpeg, orientation, little);
            expectAsOpenCV("orientation " + std::to_string(orientation), turned);
            auto decoded = decodeImage(turned.data(), turned.size(), kNoLimit);
            ASSERT_TRUE(decoded.ok());
            EXPECT_EQ(decoded->cols, orientation >= 5 ? 32 : 48) << orientation;
        }
    }
    // A camera's decoder leaves the orientation alone (IMREAD_IGNORE_ORIENTATION).
    const Bytes turned = withExifOrientation(jpeg, 6, true);
    JpegDecoder decoder;
    Image frame;
    ASSERT_TRUE(decoder.decode(turned.data(), turned.size(), kNoLimit, frame, false, false).ok());
    EXPECT_EQ(maxDifference(test::asMat(frame),
                  cv::imdecode(turned, cv::IMREAD_COLOR | cv::IMREAD_IGNORE_ORIENTATION)),
        0);
}

TEST(ImageCodec, CmykJpegDecodesCloseToOpenCV)
{
    const cv::Mat cmyk = picture(40, 24, CV_8UC4, 9);
    tjhandle handle = tjInitCompress();
    ASSERT_NE(handle, nullptr);
    unsigned char* jpeg = nullptr;
    unsigned long length = 0;
    ASSERT_EQ(tjCompress2(handle, cmyk.data, cmyk.cols, static_cast<int>(cmyk.step[0]), cmyk.rows,
                  TJPF_CMYK, &jpeg, &length, TJSAMP_444, 95, 0),
        0)
        << tjGetErrorStr2(handle);
    const Bytes bytes(jpeg, jpeg + length);
    tjFree(jpeg);
    tjDestroy(handle);
    expectAsOpenCV("cmyk", bytes, 1); // each rounds its own way
}

TEST(ImageCodec, PngVariantsDecodeAsOpenCVDid)
{
    const cv::Mat bgr = picture(33, 21);
    cv::Mat grey;
    cv::Mat bgra;
    cv::cvtColor(bgr, grey, cv::COLOR_BGR2GRAY);
    cv::cvtColor(bgr, bgra, cv::COLOR_BGR2BGRA);
    bgra.forEach<cv::Vec4b>([](cv::Vec4b& p, const int* at) { p[3] = uint8_t(at[1] * 7); });
    cv::Mat wide;
    bgr.convertTo(wide, CV_16U, 257.0, 3.0);
    cv::Mat wideGrey;
    grey.convertTo(wideGrey, CV_16U, 250.0, 11.0);
    cv::Mat wideAlpha;
    bgra.convertTo(wideAlpha, CV_16U, 256.0);
    expectAsOpenCV("BGR", encodedByOpenCV(".png", bgr));
    expectAsOpenCV("grey", encodedByOpenCV(".png", grey));
    expectAsOpenCV("BGRA", encodedByOpenCV(".png", bgra));
    expectAsOpenCV("16-bit BGR", encodedByOpenCV(".png", wide));
    expectAsOpenCV("16-bit grey", encodedByOpenCV(".png", wideGrey));
    expectAsOpenCV("16-bit BGRA", encodedByOpenCV(".png", wideAlpha));
    expectAsOpenCV("bilevel", encodedByOpenCV(".png", grey > 128, {cv::IMWRITE_PNG_BILEVEL, 1}));

    const int width = 19;
    const int height = 13;
    expectAsOpenCV("palette with transparency",
        pngByLibpng(
            width, height, PNG_COLOR_TYPE_PALETTE, 8, false, randomRows(height, width, 1), 256));
    expectAsOpenCV("4-bit palette, interlaced",
        pngByLibpng(width, height, PNG_COLOR_TYPE_PALETTE, 4, true,
            randomRows(height, (width + 1) / 2, 2), 16));
    expectAsOpenCV("2-bit grey",
        pngByLibpng(
            width, height, PNG_COLOR_TYPE_GRAY, 2, false, randomRows(height, (width + 3) / 4, 3)));
    expectAsOpenCV("grey and alpha, interlaced",
        pngByLibpng(width, height, PNG_COLOR_TYPE_GRAY_ALPHA, 8, true,
            randomRows(height, size_t {width} * 2, 4)));
    expectAsOpenCV("RGB, interlaced",
        pngByLibpng(
            width, height, PNG_COLOR_TYPE_RGB, 8, true, randomRows(height, size_t {width} * 3, 5)));
}

TEST(ImageCodec, BmpVariantsDecodeAsOpenCVDid)
{
    const cv::Mat bgr = picture(23, 17);
    cv::Mat grey;
    cv::cvtColor(bgr, grey, cv::COLOR_BGR2GRAY);
    cv::Mat bgra;
    cv::cvtColor(bgr, bgra, cv::COLOR_BGR2BGRA);
    expectAsOpenCV("24-bit", encodedByOpenCV(".bmp", bgr));
    expectAsOpenCV("8-bit grey palette", encodedByOpenCV(".bmp", grey));
    expectAsOpenCV("32-bit", encodedByOpenCV(".bmp", bgra));

    const int width = 21; // rows need padding at every depth
    const int height = 11;
    Bytes palette;
    for (int i = 0; i < 256; ++i)
        palette.insert(palette.end(), {uint8_t(i * 3), uint8_t(255 - i), uint8_t(i * 5), 0});
    auto paletteOf = [&](size_t entries) {
        return Bytes(palette.begin(), palette.begin() + static_cast<std::ptrdiff_t>(entries * 4));
    };
    auto stride = [&](int bits) { return (size_t {width} * size_t(bits) + 31) / 32 * 4; };
    for (bool topDown : {false, true}) {
        const std::string order = topDown ? " top-down" : " bottom-up";
        expectAsOpenCV("24-bit" + order,
            bmpFile(width, height, 24, randomRows(height, stride(24), 11), topDown));
        expectAsOpenCV("32-bit" + order,
            bmpFile(width, height, 32, randomRows(height, stride(32), 12), topDown));
        expectAsOpenCV("8-bit palette" + order,
            bmpFile(width, height, 8, randomRows(height, stride(8), 13), topDown, paletteOf(256)));
        expectAsOpenCV("4-bit palette" + order,
            bmpFile(width, height, 4, randomRows(height, stride(4), 14), topDown, paletteOf(16)));
        expectAsOpenCV("1-bit palette" + order,
            bmpFile(width, height, 1, randomRows(height, stride(1), 15), topDown, paletteOf(2)));
        expectAsOpenCV("16-bit 5-5-5" + order,
            bmpFile(width, height, 16, randomRows(height, stride(16), 16), topDown));
        expectAsOpenCV("16-bit 5-6-5 bit fields" + order,
            bmpFile(width, height, 16, randomRows(height, stride(16), 17), topDown, {},
                {0xF800, 0x07E0, 0x001F}));
        expectAsOpenCV("32-bit bit fields" + order,
            bmpFile(width, height, 32, randomRows(height, stride(32), 18), topDown, {},
                {0x00FF0000, 0x0000FF00, 0x000000FF}));
    }
}

TEST(ImageCodec, PnmVariantsDecodeAsOpenCVDid)
{
    const cv::Mat bgr = picture(29, 15);
    cv::Mat grey;
    cv::cvtColor(bgr, grey, cv::COLOR_BGR2GRAY);
    cv::Mat wideGrey;
    grey.convertTo(wideGrey, CV_16U, 257.0, 5.0);
    cv::Mat wide;
    bgr.convertTo(wide, CV_16U, 256.0, 200.0);
    expectAsOpenCV("P6", encodedByOpenCV(".ppm", bgr));
    expectAsOpenCV("P5", encodedByOpenCV(".pgm", grey));
    expectAsOpenCV("P3", encodedByOpenCV(".ppm", bgr, {cv::IMWRITE_PXM_BINARY, 0}));
    expectAsOpenCV("P2", encodedByOpenCV(".pgm", grey, {cv::IMWRITE_PXM_BINARY, 0}));
    expectAsOpenCV("P4", encodedByOpenCV(".pbm", grey));
    expectAsOpenCV("P1", encodedByOpenCV(".pbm", grey, {cv::IMWRITE_PXM_BINARY, 0}));
    expectAsOpenCV("16-bit P5", encodedByOpenCV(".pgm", wideGrey));
    expectAsOpenCV("16-bit P6", encodedByOpenCV(".ppm", wide));

    // A maximum value other than 255 scales to 0..255; comments and any white space in the header.
    const std::string text = "P2\n# a comment\n3 1\n# another\n100\n0 50 100\n";
    auto scaled = decodeImage(reinterpret_cast<const uint8_t*>(text.data()), text.size(), kNoLimit);
    ASSERT_TRUE(scaled.ok()) << scaled.status().message();
    const cv::Mat levels = test::asMat(*scaled);
    EXPECT_EQ(levels.at<cv::Vec3b>(0, 0), cv::Vec3b(0, 0, 0));
    EXPECT_EQ(levels.at<cv::Vec3b>(0, 1), cv::Vec3b(128, 128, 128));
    EXPECT_EQ(levels.at<cv::Vec3b>(0, 2), cv::Vec3b(255, 255, 255));
}

// TIFF and WebP (and GIF, which OpenCV did not read either) are refused with the formats read.
TEST(ImageCodec, FormatsNotReadAreRefusedNamingThoseRead)
{
    const cv::Mat bgr = picture(16, 16);
    const struct {
        const char* name;
        Bytes bytes;
        const char* format;
    } cases[] = {
        {"tiff", encodedByOpenCV(".tiff", bgr), "TIFF"},
        {"webp", encodedByOpenCV(".webp", bgr), "WebP"},
    };
    for (const auto& c : cases) {
        auto decoded = decodeImage(c.bytes.data(), c.bytes.size(), kNoLimit);
        ASSERT_FALSE(decoded.ok()) << c.name;
        EXPECT_EQ(decoded.status().kind(), ErrorKind::InvalidInput);
        const std::string message = decoded.status().message();
        EXPECT_NE(message.find(std::string("it is a ") + c.format + " image, which is not read"),
            std::string::npos)
            << message;
        EXPECT_NE(message.find(kReadImageFormats), std::string::npos) << message;
    }
    const std::string gif = "GIF89a\x01\x00\x01\x00";
    auto decoded = decodeImage(reinterpret_cast<const uint8_t*>(gif.data()), gif.size(), kNoLimit);
    ASSERT_FALSE(decoded.ok());
    EXPECT_NE(decoded.status().message().find("GIF"), std::string::npos);
}

// The limit is checked from the header: a 30000x30000 PNG, JPEG, BMP or PNM header of a few dozen
// bytes is refused at once, before 2.7 GB of pixels could be allocated, and one at the limit
// decodes.
TEST(ImageCodec, ThePixelLimitIsEnforcedBeforeDecoding)
{
    const cv::Mat small = picture(30, 20);
    for (const char* extension : {".png", ".jpg", ".bmp", ".ppm"}) {
        const Bytes bytes = encodedByOpenCV(extension, small);
        auto atLimit = decodeImage(bytes.data(), bytes.size(), 600);
        EXPECT_TRUE(atLimit.ok()) << extension << ": " << atLimit.status().message();
        auto over = decodeImage(bytes.data(), bytes.size(), 599);
        ASSERT_FALSE(over.ok()) << extension;
        EXPECT_NE(over.status().message().find("30x20 (600 pixels), more than the limit of 599"),
            std::string::npos)
            << over.status().message();
    }
    const std::string pnm = "P6\n30000 30000\n255\n";
    const auto start = std::chrono::steady_clock::now();
    auto huge =
        decodeImage(reinterpret_cast<const uint8_t*>(pnm.data()), pnm.size(), uint64_t {1} << 26);
    EXPECT_FALSE(huge.ok());
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 0.5);

    // The camera decoder holds its own limit before it allocates.
    const Bytes jpeg = encodedByOpenCV(".jpg", small);
    JpegDecoder decoder;
    Image frame;
    const Status refused = decoder.decode(jpeg.data(), jpeg.size(), 599, frame, false, false);
    EXPECT_FALSE(refused.ok());
    EXPECT_TRUE(frame.empty());
}

// Cut short: refused with the reason. A JPEG cut short is refused too, where OpenCV filled the rest
// with grey; the camera decoder keeps OpenCV's leniency.
TEST(ImageCodec, TruncatedImagesAreRefused)
{
    const cv::Mat bgr = picture(40, 30);
    const struct {
        const char* extension;
        const char* reason;
    } cases[] = {
        {".png", "PNG data is corrupt"},
        {".jpg", "JPEG data is corrupt"},
        {".bmp", "BMP pixel data is cut short"},
        {".ppm", "PNM pixel data is cut short"},
        {".pgm", "PNM pixel data is cut short"},
    };
    cv::Mat grey;
    cv::cvtColor(bgr, grey, cv::COLOR_BGR2GRAY);
    for (const auto& c : cases) {
        Bytes bytes = encodedByOpenCV(c.extension, std::string(c.extension) == ".pgm" ? grey : bgr);
        bytes.resize(bytes.size() * 2 / 3);
        auto decoded = decodeImage(bytes.data(), bytes.size(), kNoLimit);
        ASSERT_FALSE(decoded.ok()) << c.extension;
        EXPECT_NE(decoded.status().message().find(c.reason), std::string::npos)
            << c.extension << ": " << decoded.status().message();
    }
    Bytes jpeg = encodedByOpenCV(".jpg", bgr);
    jpeg.resize(jpeg.size() * 2 / 3);
    JpegDecoder decoder;
    Image frame;
    EXPECT_TRUE(decoder.decode(jpeg.data(), jpeg.size(), kNoLimit, frame, false, false).ok());
    EXPECT_EQ(frame.cols, bgr.cols);
    EXPECT_EQ(frame.rows, bgr.rows);
}

// Every prefix and thousands of random corruptions of each format give an image of the header's
// size or an error: never a crash, a read out of bounds (AddressSanitizer builds) or another size.
TEST(ImageCodec, CorruptImagesGiveErrorsNotCrashes)
{
    constexpr uint32_t kSeed = 40;
    constexpr int kMutations = 300;
    const cv::Mat bgr = picture(9, 7);
    cv::Mat grey;
    cv::cvtColor(bgr, grey, cv::COLOR_BGR2GRAY);
    const std::vector<Bytes> images = {encodedByOpenCV(".png", bgr), encodedByOpenCV(".jpg", bgr),
        encodedByOpenCV(".bmp", bgr), encodedByOpenCV(".bmp", grey), encodedByOpenCV(".ppm", bgr),
        encodedByOpenCV(".pgm", grey, {cv::IMWRITE_PXM_BINARY, 0}), encodedByOpenCV(".pbm", grey),
        withExifOrientation(encodedByOpenCV(".jpg", bgr), 6, false)};
    std::mt19937 random(kSeed);
    size_t decoded = 0;
    size_t refused = 0;
    auto check = [&](const Bytes& bytes) {
        const Bytes exact(bytes); // exactly the bytes given: a read past them is out of bounds
        auto image = decodeImage(exact.empty() ? nullptr : exact.data(), exact.size(), 1 << 16);
        if (image.ok()) {
            ++decoded;
            EXPECT_EQ(image->channels(), 3);
            EXPECT_FALSE(image->empty());
        } else {
            ++refused;
            EXPECT_FALSE(image.status().message().empty());
        }
    };
    for (const Bytes& image : images) {
        for (size_t length = 0; length <= image.size(); ++length)
            check(Bytes(image.begin(), image.begin() + static_cast<std::ptrdiff_t>(length)));
        for (int i = 0; i < kMutations; ++i) {
            Bytes mutated(image);
            for (int k = 0; k < 3; ++k)
                mutated[random() % mutated.size()] = static_cast<uint8_t>(random());
            check(mutated);
        }
    }
    EXPECT_GT(decoded, 0u);
    EXPECT_GT(refused, 0u);
}

TEST(ImageCodec, EncodedImagesReadBack)
{
    const cv::Mat bgr = picture(45, 31);
    cv::Mat grey;
    cv::cvtColor(bgr, grey, cv::COLOR_BGR2GRAY);
    cv::Mat bgra;
    cv::cvtColor(bgr, bgra, cv::COLOR_BGR2BGRA);
    bgra.forEach<cv::Vec4b>([](cv::Vec4b& p, const int* at) { p[3] = uint8_t(at[0] * 5); });
    for (const cv::Mat& image : {bgr, grey, bgra}) {
        Bytes png;
        ASSERT_TRUE(encodePng(test::asImage(image), png).ok());
        EXPECT_EQ(maxDifference(cv::imdecode(png, cv::IMREAD_UNCHANGED), image), 0)
            << image.channels() << " channels";
    }
    // A view into a larger image (rows with a gap between them) encodes as the view.
    const cv::Mat view = bgr(cv::Rect(3, 2, 20, 10));
    Bytes png;
    ASSERT_TRUE(encodePng(test::asImage(view), png).ok());
    EXPECT_EQ(maxDifference(cv::imdecode(png, cv::IMREAD_COLOR), view), 0);

    Bytes jpeg;
    ASSERT_TRUE(encodeJpeg(test::asImage(bgr), 95, jpeg).ok());
    auto decoded = decodeImage(jpeg.data(), jpeg.size(), kNoLimit);
    ASSERT_TRUE(decoded.ok()) << decoded.status().message();
    const cv::Mat back = test::asMat(*decoded);
    EXPECT_EQ(maxDifference(back, decodedByOpenCV(jpeg)), 0);
    EXPECT_LE(cv::norm(back, bgr, cv::NORM_INF), 40.0); // lossy, but the same picture
    EXPECT_LT(cv::norm(back, bgr, cv::NORM_L1) / double(bgr.total() * 3), 3.0);

    EXPECT_FALSE(encodeJpeg(test::asImage(bgra), 95, jpeg).ok());
    EXPECT_FALSE(encodeJpeg(test::asImage(bgr), 0, jpeg).ok());
    const Image twoChannels(4, 4, 2);
    EXPECT_EQ(encodePng(twoChannels, png).kind(), ErrorKind::InvalidInput);
    EXPECT_EQ(encodePng(Image(), png).kind(), ErrorKind::InvalidInput);
}

TEST(ImageCodec, WriteImageFileChoosesTheFormatByExtension)
{
    test::TempDir dir;
    const cv::Mat bgr = picture(20, 10);
    for (const char* name : {"a.png", "b.jpg", "c.JPEG"}) {
        ASSERT_TRUE(writeImageFile(dir / name, test::asImage(bgr)).ok()) << name;
        const cv::Mat read = cv::imread(dir / name, cv::IMREAD_COLOR);
        ASSERT_EQ(read.size(), bgr.size()) << name;
        EXPECT_LE(cv::norm(read, bgr, cv::NORM_INF), name[0] == 'a' ? 0.0 : 40.0) << name;
    }
    const Status tiff = writeImageFile(dir / "d.tiff", test::asImage(bgr));
    EXPECT_EQ(tiff.kind(), ErrorKind::InvalidInput);
    EXPECT_NE(tiff.message().find(".png, .jpg or .jpeg"), std::string::npos) << tiff.message();
    const std::string missing = dir / "no/such/dir/e.png";
    const Status unwritable = writeImageFile(missing, test::asImage(bgr));
    EXPECT_EQ(unwritable.kind(), ErrorKind::Io);
    EXPECT_NE(unwritable.message().find(missing), std::string::npos) << unwritable.message();
}

// A camera's decoder reuses its destination and adds nothing per frame but the library's work.
TEST(ImageCodec, JpegDecoderReusesItsDestination)
{
    const Bytes jpeg = encodedByOpenCV(".jpg", picture(64, 48));
    JpegDecoder decoder;
    Image frame;
    ASSERT_TRUE(decoder.decode(jpeg.data(), jpeg.size(), kNoLimit, frame, false, false).ok());
    const uint8_t* buffer = frame.data;
    ASSERT_TRUE(decoder.decode(jpeg.data(), jpeg.size(), kNoLimit, frame, false, false).ok());
    EXPECT_EQ(frame.data, buffer);
    EXPECT_EQ(maxDifference(test::asMat(frame), decodedByOpenCV(jpeg)), 0);
    JpegDecoder moved(std::move(decoder));
    ASSERT_TRUE(moved.decode(jpeg.data(), jpeg.size(), kNoLimit, frame, false, false).ok());
    const Bytes text = {'n', 'o', 't', ' ', 'a', ' ', 'j', 'p', 'e', 'g'};
    EXPECT_FALSE(moved.decode(text.data(), text.size(), kNoLimit, frame, false, false).ok());
}

} // namespace
} // namespace jetagent
