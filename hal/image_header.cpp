// Image sizes from PNG, JPEG, BMP, PNM, TIFF and WebP headers, so that an image too large to
// decode is refused before a decoder allocates its pixels.
#include "jetagent/hal/image_header.h"

#include <algorithm>
#include <cstring>

namespace jetagent {

namespace {

// Little- and big-endian fields; callers check the bounds first.
uint32_t le16(const uint8_t* p)
{
    return uint32_t(p[0]) | uint32_t(p[1]) << 8;
}
uint32_t le24(const uint8_t* p)
{
    return le16(p) | uint32_t(p[2]) << 16;
}
uint32_t le32(const uint8_t* p)
{
    return le24(p) | uint32_t(p[3]) << 24;
}
uint32_t be16(const uint8_t* p)
{
    return uint32_t(p[0]) << 8 | uint32_t(p[1]);
}
uint32_t be32(const uint8_t* p)
{
    return be16(p) << 16 | be16(p + 2);
}

bool startsWith(const uint8_t* data, size_t size, const char* signature, size_t length)
{
    return size >= length && std::memcmp(data, signature, length) == 0;
}

Status truncated(const char* format)
{
    return Status::invalid(std::string("its ") + format + " header is cut short");
}

Expected<ImageHeader> sized(const char* format, uint64_t width, uint64_t height)
{
    if (width == 0 || height == 0)
        return Status::invalid(std::string("its ") + format + " header gives a size of " +
            std::to_string(width) + "x" + std::to_string(height));
    return ImageHeader {format, width, height};
}

// IHDR is the first chunk, its width and height the first fields (PNG specification, 11.2.2).
Expected<ImageHeader> readPng(const uint8_t* data, size_t size)
{
    constexpr size_t kIhdrEnd = 8 + 8 + 13; // signature, chunk length and type, IHDR data
    if (size < kIhdrEnd)
        return truncated("PNG");
    if (be32(data + 8) != 13 || std::memcmp(data + 12, "IHDR", 4) != 0)
        return Status::invalid("its first PNG chunk is not a 13-byte IHDR");
    const uint32_t width = be32(data + 16);
    const uint32_t height = be32(data + 20);
    if (width > 0x7fffffffu || height > 0x7fffffffu)
        return Status::invalid("its PNG header gives a size beyond PNG's 2^31-1 per side");
    return sized("PNG", width, height);
}

// The markers from start-of-image to the first frame header (SOFn), whose height and width give
// the size (ITU T.81, B.2). Strict where decoders skip garbage: bytes where a marker belongs are an
// error, so the frame header read here is the one a decoder uses.
Expected<ImageHeader> readJpeg(const uint8_t* data, size_t size)
{
    size_t pos = 2;
    for (;;) {
        if (pos >= size)
            return truncated("JPEG");
        if (data[pos] != 0xFF)
            return Status::invalid("its JPEG data has bytes where a marker belongs (offset " +
                std::to_string(pos) + ")");
        while (pos < size && data[pos] == 0xFF)
            ++pos;
        if (pos >= size)
            return truncated("JPEG");
        const uint8_t marker = data[pos++];
        if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7))
            continue; // TEM and RSTn stand alone
        if (marker == 0xD9 || marker == 0xDA)
            return Status::invalid("its JPEG data has no frame header before its image data");
        if (marker == 0x00 || marker == 0xD8)
            return Status::invalid(
                "its JPEG data has a misplaced marker (offset " + std::to_string(pos - 1) + ")");
        if (pos + 2 > size)
            return truncated("JPEG");
        const uint32_t length = be16(data + pos);
        if (length < 2)
            return Status::invalid(
                "its JPEG data has a marker segment of length " + std::to_string(length));
        // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC).
        if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 &&
            marker != 0xCC) {
            if (length < 8 || pos + 7 > size)
                return truncated("JPEG");
            const uint32_t height = be16(data + pos + 3);
            if (height == 0)
                return Status::invalid("its JPEG frame header leaves the height to a later DNL "
                                       "marker, which is not supported");
            return sized("JPEG", be16(data + pos + 5), height);
        }
        pos += length;
    }
}

// BITMAPFILEHEADER, then the info header: OS/2's core header of 16-bit sides, or the 32-bit ones
// of every later header (a negative height means top-down rows).
Expected<ImageHeader> readBmp(const uint8_t* data, size_t size)
{
    if (size < 18)
        return truncated("BMP");
    const uint32_t infoSize = le32(data + 14);
    if (infoSize == 12) {
        if (size < 14 + 12)
            return truncated("BMP");
        return sized("BMP", le16(data + 18), le16(data + 20));
    }
    if (infoSize < 16 || infoSize > 4096)
        return Status::invalid(
            "its BMP info header has an unknown size of " + std::to_string(infoSize) + " bytes");
    if (size < 14 + 12)
        return truncated("BMP");
    const int64_t width = static_cast<int32_t>(le32(data + 18));
    const int64_t height = static_cast<int32_t>(le32(data + 22));
    if (width < 0)
        return Status::invalid("its BMP header gives a negative width");
    return sized(
        "BMP", static_cast<uint64_t>(width), static_cast<uint64_t>(height < 0 ? -height : height));
}

// "P1".."P6", whitespace, then width and height as decimal text, with # comments to the end of a
// line allowed between them (netpbm's formats).
Expected<ImageHeader> readPnm(const uint8_t* data, size_t size)
{
    size_t pos = 2;
    uint64_t sides[2] = {0, 0};
    for (uint64_t& side : sides) {
        for (;;) {
            if (pos >= size)
                return truncated("PNM");
            if (data[pos] == '#') {
                while (pos < size && data[pos] != '\n' && data[pos] != '\r')
                    ++pos;
            } else if (data[pos] == ' ' || (data[pos] >= '\t' && data[pos] <= '\r')) {
                ++pos;
            } else {
                break;
            }
        }
        if (data[pos] < '0' || data[pos] > '9')
            return Status::invalid("its PNM header has no size where one belongs");
        while (pos < size && data[pos] >= '0' && data[pos] <= '9') {
            side = side * 10 + uint64_t(data[pos++] - '0');
            if (side > 0xffffffffu)
                return Status::invalid("its PNM header gives a side of more than 2^32 pixels");
        }
        // The format puts white space after each size. A '#' (or anything else) right after the
        // digits is read differently by decoders: "30000# 30000\n255" is 30000x255 by the comment
        // rule and 30000x30000 to OpenCV, which then allocated 2.7 GB for a 25-byte file.
        if (pos < size && !(data[pos] == ' ' || (data[pos] >= '\t' && data[pos] <= '\r')))
            return Status::invalid("its PNM header has no white space after a size (decoders "
                                   "read such a header differently)");
    }
    return sized("PNM", sides[0], sides[1]);
}

// The first image file directory's ImageWidth (256) and ImageLength (257) fields, of type SHORT or
// LONG (TIFF 6.0, section 2). Classic TIFF only.
Expected<ImageHeader> readTiff(const uint8_t* data, size_t size)
{
    const bool little = data[0] == 'I';
    auto u16 = [&](size_t at) { return little ? le16(data + at) : be16(data + at); };
    auto u32 = [&](size_t at) { return little ? le32(data + at) : be32(data + at); };
    if (size < 8)
        return truncated("TIFF");
    const uint64_t directory = u32(4);
    if (directory + 2 > size)
        return truncated("TIFF");
    const uint64_t entries = u16(static_cast<size_t>(directory));
    if (directory + 2 + entries * 12 > size)
        return truncated("TIFF");
    uint64_t sides[2] = {0, 0};
    bool found[2] = {false, false};
    for (uint64_t i = 0; i < entries; ++i) {
        const size_t entry = static_cast<size_t>(directory + 2 + i * 12);
        const uint32_t tag = u16(entry);
        if (tag != 256 && tag != 257)
            continue;
        const size_t which = tag - 256;
        const uint32_t type = u16(entry + 2);
        if (found[which])
            return Status::invalid("its TIFF directory gives the image size twice");
        if ((type != 3 && type != 4) || u32(entry + 4) != 1)
            return Status::invalid("its TIFF directory gives the image size in an unusual form "
                                   "(not one SHORT or LONG)");
        found[which] = true;
        sides[which] = type == 3 ? u16(entry + 8) : u32(entry + 8);
    }
    if (!found[0] || !found[1])
        return Status::invalid("its first TIFF directory gives no image width or length");
    return sized("TIFF", sides[0], sides[1]);
}

// RIFF "WEBP" whose first chunk is VP8 (lossy: the key frame's 14-bit sides), VP8L (lossless:
// sides - 1 in 14 bits each) or VP8X (extended: the canvas, sides - 1 in 24 bits each).
Expected<ImageHeader> readWebp(const uint8_t* data, size_t size)
{
    if (size < 20)
        return truncated("WebP");
    if (std::memcmp(data + 12, "VP8 ", 4) == 0) {
        if (size < 30)
            return truncated("WebP");
        if (data[23] != 0x9D || data[24] != 0x01 || data[25] != 0x2A)
            return Status::invalid("its WebP VP8 frame has no key-frame start code");
        return sized("WebP", le16(data + 26) & 0x3FFF, le16(data + 28) & 0x3FFF);
    }
    if (std::memcmp(data + 12, "VP8L", 4) == 0) {
        if (size < 25)
            return truncated("WebP");
        if (data[20] != 0x2F)
            return Status::invalid("its WebP VP8L data has no lossless signature");
        const uint32_t bits = le32(data + 21);
        return sized("WebP", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1);
    }
    if (std::memcmp(data + 12, "VP8X", 4) == 0) {
        if (size < 30)
            return truncated("WebP");
        return sized("WebP", uint64_t(le24(data + 24)) + 1, uint64_t(le24(data + 27)) + 1);
    }
    return Status::invalid("its WebP data starts with an unknown chunk");
}

// What a file that is none of the images read is, said without quoting it: an image directory may
// hold (or link to) anything, and its bytes must not reach a log (a link to /etc/shadow once had
// its first eight bytes printed).
std::string notAnImage(const uint8_t* data, size_t size)
{
    if (size == 0)
        return "the file is empty";
    if (startsWith(data, size, "GIF8", 4))
        return "it is a GIF, which is not read; convert it to PNG";
    const size_t n = std::min<size_t>(size, 64);
    const bool text = std::all_of(data, data + n,
        [](uint8_t c) { return (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || c == '\r'; });
    return text ? "it holds text, not an image" : "it starts with no known image signature";
}

} // namespace

Expected<ImageHeader> readImageHeader(const uint8_t* data, size_t size)
{
    if (startsWith(data, size, "\x89PNG\r\n\x1a\n", 8))
        return readPng(data, size);
    if (startsWith(data, size, "\xff\xd8\xff", 3))
        return readJpeg(data, size);
    if (startsWith(data, size, "BM", 2))
        return readBmp(data, size);
    if (size >= 3 && data[0] == 'P' && data[1] >= '1' && data[1] <= '6' &&
        (data[2] == ' ' || (data[2] >= '\t' && data[2] <= '\r')))
        return readPnm(data, size);
    if (startsWith(data, size, "II*\0", 4) || startsWith(data, size, "MM\0*", 4))
        return readTiff(data, size);
    if (startsWith(data, size, "II+\0", 4) || startsWith(data, size, "MM\0+", 4))
        return Status::invalid("it is a BigTIFF, which is not read; save it as a classic TIFF");
    if (startsWith(data, size, "RIFF", 4) && size >= 12 && std::memcmp(data + 8, "WEBP", 4) == 0)
        return readWebp(data, size);
    return Status::invalid("it is not a PNG, JPEG, BMP, PNM (P1-P6), TIFF or WebP image (" +
        notAnImage(data, size) + ")");
}

} // namespace jetagent
