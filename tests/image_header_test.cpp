// Image headers read before decoding: sizes of real encodings, huge images refused before a decoder
// allocates their pixels, malformed headers refused without a crash.
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "jetagent/hal/file_sources.h"
#include "jetagent/hal/image_header.h"
#include "test_support.h"

namespace jetagent {
namespace {

using test::TempDir;

using Bytes = std::vector<uint8_t>;

// The huge size of the crafted images: 1.2 GB of BGR pixels when decoded.
constexpr uint32_t kHugeSide = 20000;
constexpr uint64_t kHugePixels = uint64_t {kHugeSide} * kHugeSide;

void putBe32(Bytes& b, uint32_t v)
{
    for (int shift = 24; shift >= 0; shift -= 8)
        b.push_back(static_cast<uint8_t>(v >> shift));
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
void putText(Bytes& b, const std::string& text)
{
    b.insert(b.end(), text.begin(), text.end());
}

uint32_t crc32(const uint8_t* data, size_t size)
{
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < size; ++i) {
        crc ^= data[i];
        for (int k = 0; k < 8; ++k)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

// A PNG chunk with its CRC.
void putChunk(Bytes& b, const char* type, const Bytes& data)
{
    putBe32(b, static_cast<uint32_t>(data.size()));
    Bytes typed(type, type + 4);
    typed.insert(typed.end(), data.begin(), data.end());
    b.insert(b.end(), typed.begin(), typed.end());
    putBe32(b, crc32(typed.data(), typed.size()));
}

// A PNG of width x height with a valid IHDR and IEND and no pixel data: a few dozen bytes that a
// decoder would allocate the whole image for before noticing the data is missing.
Bytes pngHeader(uint32_t width, uint32_t height)
{
    Bytes b = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    Bytes ihdr;
    putBe32(ihdr, width);
    putBe32(ihdr, height);
    ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0}); // 8-bit RGB
    putChunk(b, "IHDR", ihdr);
    putChunk(b, "IEND", {});
    return b;
}

// SOI, a JFIF APP0 segment, then a baseline frame header; no scan.
Bytes jpegHeader(uint32_t width, uint32_t height)
{
    Bytes b = {0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10};
    putText(b, std::string("JFIF\0\x01\x01\0\0\x01\0\x01\0\0", 14));
    b.insert(b.end(), {0xFF, 0xC0, 0x00, 0x11, 0x08});
    b.insert(b.end(), {uint8_t(height >> 8), uint8_t(height), uint8_t(width >> 8), uint8_t(width)});
    b.insert(b.end(), {0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01});
    return b;
}

// BITMAPFILEHEADER and BITMAPINFOHEADER of a 24-bit image; no pixels.
Bytes bmpHeader(int32_t width, int32_t height)
{
    Bytes b = {'B', 'M'};
    putLe32(b, 54);
    putLe32(b, 0);
    putLe32(b, 54);
    putLe32(b, 40);
    putLe32(b, static_cast<uint32_t>(width));
    putLe32(b, static_cast<uint32_t>(height));
    putLe16(b, 1);
    putLe16(b, 24);
    for (int i = 0; i < 6; ++i)
        putLe32(b, 0);
    return b;
}

// A little-endian TIFF whose first directory holds ImageWidth and ImageLength as LONGs.
Bytes tiffHeader(uint32_t width, uint32_t height)
{
    Bytes b = {'I', 'I', '*', 0};
    putLe32(b, 8);
    putLe16(b, 2);
    for (const auto& [tag, value] : {std::pair<uint32_t, uint32_t> {256, width}, {257, height}}) {
        putLe16(b, tag);
        putLe16(b, 4);
        putLe32(b, 1);
        putLe32(b, value);
    }
    putLe32(b, 0);
    return b;
}

// RIFF WEBP with a first chunk `fourcc` of `payload`.
Bytes webp(const char* fourcc, const Bytes& payload)
{
    Bytes b;
    putText(b, "RIFF");
    putLe32(b, static_cast<uint32_t>(payload.size() + 12));
    putText(b, "WEBP");
    putText(b, fourcc);
    putLe32(b, static_cast<uint32_t>(payload.size()));
    b.insert(b.end(), payload.begin(), payload.end());
    return b;
}

Bytes webpExtended(uint32_t width, uint32_t height)
{
    Bytes payload = {0, 0, 0, 0};
    for (uint32_t side : {width - 1, height - 1})
        payload.insert(payload.end(), {uint8_t(side), uint8_t(side >> 8), uint8_t(side >> 16)});
    return webp("VP8X", payload);
}

Bytes webpLossless(uint32_t width, uint32_t height)
{
    Bytes payload = {0x2F};
    putLe32(payload, (width - 1) | (height - 1) << 14);
    return webp("VP8L", payload);
}

Bytes encoded(
    const std::string& extension, int width, int height, const std::vector<int>& params = {})
{
    // PGM and PBM take one channel.
    const bool gray = extension == ".pgm" || extension == ".pbm";
    cv::Mat image(height, width, gray ? CV_8UC1 : CV_8UC3, cv::Scalar(40, 120, 200));
    std::vector<uchar> out;
    EXPECT_TRUE(cv::imencode(extension, image, out, params)) << extension;
    return Bytes(out.begin(), out.end());
}

Bytes prefix(const Bytes& bytes, size_t length)
{
    return Bytes(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(length));
}

void writeBytes(const std::string& path, const Bytes& bytes)
{
    test::writeFile(path, std::string(bytes.begin(), bytes.end()));
}

TEST(ImageHeader, SizesOfEveryFormatOpenCVWrites)
{
    constexpr int kWidth = 37; // odd sides catch swapped or rounded fields
    constexpr int kHeight = 23;
    const struct {
        const char* extension;
        const char* format;
        std::vector<int> params;
    } cases[] = {
        {".png", "PNG", {}}, {".jpg", "JPEG", {}},
        {".jpg", "JPEG", {cv::IMWRITE_JPEG_PROGRESSIVE, 1}}, {".bmp", "BMP", {}},
        {".ppm", "PNM", {}}, {".pgm", "PNM", {}}, {".pbm", "PNM", {}},
        {".ppm", "PNM", {cv::IMWRITE_PXM_BINARY, 0}}, {".tiff", "TIFF", {}}, {".webp", "WebP", {}},
        {".webp", "WebP", {cv::IMWRITE_WEBP_QUALITY, 101}}, // lossless
    };
    for (const auto& c : cases) {
        const Bytes bytes = encoded(c.extension, kWidth, kHeight, c.params);
        auto header = readImageHeader(bytes.data(), bytes.size());
        ASSERT_TRUE(header.ok()) << c.extension << ": " << header.status().message();
        EXPECT_EQ(header->format, c.format) << c.extension;
        EXPECT_EQ(header->width, uint64_t {kWidth}) << c.extension;
        EXPECT_EQ(header->height, uint64_t {kHeight}) << c.extension;
    }
}

TEST(ImageHeader, CraftedHeadersGiveTheirSize)
{
    const struct {
        const char* name;
        Bytes bytes;
        uint64_t width;
        uint64_t height;
    } cases[] = {
        {"png", pngHeader(kHugeSide, kHugeSide), kHugeSide, kHugeSide},
        {"jpeg", jpegHeader(kHugeSide, 300), kHugeSide, 300},
        {"bmp", bmpHeader(kHugeSide, kHugeSide), kHugeSide, kHugeSide},
        {"bmp top-down", bmpHeader(640, -480), 640, 480},
        {"tiff", tiffHeader(kHugeSide, 7), kHugeSide, 7},
        {"webp extended", webpExtended(kHugeSide, kHugeSide), kHugeSide, kHugeSide},
        {"webp lossless", webpLossless(16384, 16384), 16384, 16384},
    };
    for (const auto& c : cases) {
        auto header = readImageHeader(c.bytes.data(), c.bytes.size());
        ASSERT_TRUE(header.ok()) << c.name << ": " << header.status().message();
        EXPECT_EQ(header->width, c.width) << c.name;
        EXPECT_EQ(header->height, c.height) << c.name;
    }
    const std::string pnm = "P6\n# a comment between the fields\n20000\t20000\n255\n";
    auto header = readImageHeader(reinterpret_cast<const uint8_t*>(pnm.data()), pnm.size());
    ASSERT_TRUE(header.ok()) << header.status().message();
    EXPECT_EQ(header->pixels(), kHugePixels);
}

TEST(ImageHeader, MalformedHeadersAreRefusedWithTheReason)
{
    Bytes wrongFirstChunk = pngHeader(10, 10);
    std::memcpy(wrongFirstChunk.data() + 12, "IDAT", 4);
    Bytes scanFirst = {0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02};
    Bytes junkBetweenMarkers = jpegHeader(10, 10);
    junkBetweenMarkers.insert(junkBetweenMarkers.begin() + 20, 0x42);
    Bytes heightLater = jpegHeader(10, 0); // a DNL marker would give it
    Bytes bigTiff = {'I', 'I', '+', 0, 8, 0, 0, 0};
    Bytes tiffPastTheEnd = tiffHeader(10, 10);
    tiffPastTheEnd[4] = 0xF0;
    Bytes tiffNoLength = tiffHeader(10, 10);
    tiffNoLength[22] = 0x11; // tag 257 becomes 273 (StripOffsets)
    const std::string pnmNoSize = "P5\n# nothing else\n";
    // "30000# 30000\n255": 30000x255 by the comment rule, 30000x30000 to OpenCV's decoder.
    const std::string pnmCommentAfterSize = "P5\n30000# 30000\n255\n\x01\x02\x03";
    const std::string text = "#EXTM3U\nhttp://127.0.0.1/a.ts\n";
    const struct {
        const char* name;
        Bytes bytes;
        const char* reason;
    } cases[] = {
        {"empty", {}, "the file is empty"},
        {"text", Bytes(text.begin(), text.end()),
            "not a PNG, JPEG, BMP, PNM (P1-P6), TIFF or WebP"},
        {"png cut short", prefix(pngHeader(10, 10), 20), "PNG header is cut short"},
        {"png without IHDR", wrongFirstChunk, "not a 13-byte IHDR"},
        {"png of zero width", pngHeader(0, 10), "size of 0x10"},
        {"png beyond 2^31", pngHeader(0x80000000u, 1), "2^31-1"},
        {"jpeg scan first", scanFirst, "no frame header"},
        {"jpeg junk", junkBetweenMarkers, "where a marker belongs"},
        {"jpeg dnl", heightLater, "DNL"},
        {"jpeg cut short", prefix(jpegHeader(10, 10), 25), "JPEG header is cut short"},
        {"bmp odd info header",
            [] {
                Bytes b = bmpHeader(10, 10);
                b[14] = 7;
                b[15] = 0;
                return b;
            }(),
            "unknown size"},
        {"bmp negative width", bmpHeader(-10, 10), "negative width"},
        {"pnm without size", Bytes(pnmNoSize.begin(), pnmNoSize.end()), "PNM header is cut short"},
        {"pnm comment right after a size",
            Bytes(pnmCommentAfterSize.begin(), pnmCommentAfterSize.end()),
            "no white space after a size"},
        {"bigtiff", bigTiff, "BigTIFF"},
        {"tiff directory past the end", tiffPastTheEnd, "TIFF header is cut short"},
        {"tiff without length", tiffNoLength, "no image width or length"},
        {"webp unknown chunk", webp("ALPH", Bytes(16, 0)), "unknown chunk"},
        {"webp lossy without start code", webp("VP8 ", Bytes(16, 0)), "start code"},
    };
    for (const auto& c : cases) {
        auto header = readImageHeader(c.bytes.data(), c.bytes.size());
        ASSERT_FALSE(header.ok()) << c.name;
        EXPECT_EQ(header.status().kind(), ErrorKind::InvalidInput) << c.name;
        EXPECT_NE(header.status().message().find(c.reason), std::string::npos)
            << c.name << ": " << header.status().message();
    }
}

// Every prefix of every header, and random corruptions of them, give a size or an error; never a
// read past the end (which AddressSanitizer builds would catch) or a zero size.
TEST(ImageHeader, TruncatedAndCorruptedHeadersNeverMisread)
{
    constexpr uint32_t kSeed = 21;
    constexpr int kMutationsPerImage = 2000;
    const std::vector<Bytes> images = {encoded(".png", 9, 7), encoded(".jpg", 9, 7),
        encoded(".bmp", 9, 7), encoded(".ppm", 9, 7), encoded(".tiff", 9, 7),
        encoded(".webp", 9, 7), pngHeader(5, 5), jpegHeader(5, 5), tiffHeader(5, 5),
        webpExtended(5, 5), webpLossless(5, 5)};
    std::mt19937 random(kSeed);
    size_t accepted = 0;
    size_t refused = 0;
    auto check = [&](const Bytes& bytes) {
        // A copy of exactly the bytes given, so that a read past them is out of bounds.
        std::vector<uint8_t> exact(bytes);
        auto header = readImageHeader(exact.empty() ? nullptr : exact.data(), exact.size());
        if (header.ok()) {
            ++accepted;
            EXPECT_GT(header->width, 0u);
            EXPECT_GT(header->height, 0u);
        } else {
            ++refused;
        }
    };
    for (const Bytes& image : images) {
        for (size_t length = 0; length <= image.size(); ++length)
            check(prefix(image, length));
        for (int i = 0; i < kMutationsPerImage; ++i) {
            Bytes mutated(image);
            const size_t head = std::min<size_t>(mutated.size(), 64);
            mutated[random() % head] = static_cast<uint8_t>(random());
            check(mutated);
        }
    }
    EXPECT_GT(accepted, 0u);
    EXPECT_GT(refused, 0u);
}

// A huge image in each format is refused from its header, in well under the time (and without the
// memory) that decoding 20000x20000 pixels would take; the message names the file, its size and
// the limit.
TEST(DecodeImageFile, ImagesOverThePixelLimitAreRefusedBeforeDecoding)
{
    TempDir dir;
    const std::string pnm = "P6\n20000 20000\n255\n";
    const struct {
        const char* name;
        Bytes bytes;
    } cases[] = {
        {"huge.png", pngHeader(kHugeSide, kHugeSide)},
        {"huge.jpg", jpegHeader(kHugeSide, kHugeSide)},
        {"huge.bmp", bmpHeader(kHugeSide, kHugeSide)},
        {"huge.ppm", Bytes(pnm.begin(), pnm.end())},
        {"huge.tiff", tiffHeader(kHugeSide, kHugeSide)},
        {"huge.webp", webpExtended(kHugeSide, kHugeSide)},
    };
    std::vector<unsigned char> buffer;
    for (const auto& c : cases) {
        const std::string path = dir / c.name;
        writeBytes(path, c.bytes);
        const auto start = std::chrono::steady_clock::now();
        auto image = decodeImageFile(path, buffer, kDefaultMaxImagePixels);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        ASSERT_FALSE(image.ok()) << c.name;
        const std::string message = image.status().message();
        EXPECT_EQ(image.status().kind(), ErrorKind::InvalidInput);
        const std::vector<std::string> parts = {"image '" + path + "'", "20000x20000",
            "400000000 pixels", "limit of 67108864 pixels", "source.max_image_pixels"};
        for (const std::string& part : parts)
            EXPECT_NE(message.find(part), std::string::npos) << c.name << ": " << message;
        EXPECT_LT(seconds, 0.5) << c.name;
    }
}

TEST(DecodeImageFile, TheLimitIsInclusiveAndAppliesToRealImages)
{
    TempDir dir;
    const std::string path = dir / "small.png";
    writeBytes(path, encoded(".png", 60, 40));
    std::vector<unsigned char> buffer;
    auto atLimit = decodeImageFile(path, buffer, 60 * 40);
    ASSERT_TRUE(atLimit.ok()) << atLimit.status().message();
    EXPECT_EQ(atLimit->cols, 60);
    EXPECT_EQ(atLimit->rows, 40);
    auto over = decodeImageFile(path, buffer, 60 * 40 - 1);
    ASSERT_FALSE(over.ok());
    EXPECT_NE(over.status().message().find("PNG of 60x40 (2400 pixels)"), std::string::npos)
        << over.status().message();

    // A valid header over a body that does not decode: refused by the decoder, named.
    const std::string truncated = dir / "truncated.png";
    writeBytes(truncated, pngHeader(16, 16));
    auto corrupt = decodeImageFile(truncated, buffer, kDefaultMaxImagePixels);
    ASSERT_FALSE(corrupt.ok());
    EXPECT_NE(corrupt.status().message().find("image '" + truncated + "' cannot be decoded"),
        std::string::npos)
        << corrupt.status().message();
}

} // namespace
} // namespace jetagent
