// BMP and PNM readers: formats simple enough to read in a page each, so that no library (and none
// of OpenCV's imgcodecs) is needed for them. Every read is bounds-checked against the data given.
#include "image_bitmap.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

namespace jetagent {

namespace {

// One pixel's blue, green and red.
using Bgr = std::array<uint8_t, 3>;

// Writes pixel `x` of a BGR row.
void put(uint8_t* row, size_t x, const Bgr& pixel)
{
    std::memcpy(row + 3 * x, pixel.data(), 3);
}

uint32_t bitmapLe16(const uint8_t* p)
{
    return uint32_t(p[0]) | uint32_t(p[1]) << 8;
}
uint32_t bitmapLe32(const uint8_t* p)
{
    return bitmapLe16(p) | bitmapLe16(p + 2) << 16;
}

// One channel of a bit-field pixel (BI_BITFIELDS, or 16-bit 5-5-5), brought to 8 bits by shifting
// as OpenCV did (a 5-bit 31 reads as 248, not 255).
struct BitmapField {
    uint32_t mask = 0;
    int shift = 0;
    int width = 0;

    explicit BitmapField(uint32_t m) : mask(m)
    {
        if (mask == 0)
            return;
        while (((mask >> shift) & 1u) == 0)
            ++shift;
        while (shift + width < 32 && ((mask >> (shift + width)) & 1u) != 0)
            ++width;
    }
    uint8_t operator()(uint32_t pixel) const
    {
        const uint32_t value = (pixel & mask) >> shift;
        return static_cast<uint8_t>(width <= 8 ? value << (8 - width) : value >> (width - 8));
    }
};

// What the info header says beyond the size readImageHeader read.
struct BitmapLayout {
    uint32_t infoSize = 0;
    uint32_t bitsPerPixel = 0;
    uint32_t compression = 0;
    uint32_t colours = 0; // palette entries given (0: all that the depth allows)
    bool topDown = false;
    std::array<uint32_t, 3> masks {}; // red, green, blue
};

constexpr uint32_t kBiRgb = 0;
constexpr uint32_t kBiBitfields = 3;
constexpr uint32_t kBiAlphaBitfields = 6;

Expected<BitmapLayout> readBitmapLayout(const uint8_t* data, size_t size)
{
    BitmapLayout layout;
    layout.infoSize = bitmapLe32(data + 14);
    if (layout.infoSize == 12) {
        layout.bitsPerPixel = bitmapLe16(data + 24); // OS/2's core header: no compression
    } else {
        if (layout.infoSize < 40 || size < 14 + 40)
            return Status::invalid("its BMP info header is cut short");
        layout.topDown = static_cast<int32_t>(bitmapLe32(data + 22)) < 0;
        layout.bitsPerPixel = bitmapLe16(data + 28);
        layout.compression = bitmapLe32(data + 30);
        layout.colours = bitmapLe32(data + 46);
    }
    if (layout.compression == 1 || layout.compression == 2)
        return Status::invalid("it is an RLE-compressed BMP, which is not read; save it "
                               "uncompressed or as PNG");
    if (layout.compression == 4 || layout.compression == 5)
        return Status::invalid("it is a BMP holding a JPEG or PNG, which is not read; save the "
                               "JPEG or PNG itself");
    if (layout.compression == kBiBitfields || layout.compression == kBiAlphaBitfields) {
        // The masks follow a 40-byte header, or are its own fields in the larger ones.
        if (size < 14 + 40 + 12)
            return Status::invalid("its BMP bit-field masks are cut short");
        for (size_t i = 0; i < 3; ++i)
            layout.masks[i] = bitmapLe32(data + 54 + 4 * i);
    } else if (layout.compression != kBiRgb) {
        return Status::invalid(
            "its BMP compression " + std::to_string(layout.compression) + " is not known");
    } else if (layout.bitsPerPixel == 16) {
        layout.masks = {0x7C00, 0x03E0, 0x001F};
    } else if (layout.bitsPerPixel == 32) {
        layout.masks = {0x00FF0000, 0x0000FF00, 0x000000FF};
    }
    return layout;
}

// The palette as BGR triples; entries past the file's palette stay black.
Expected<std::array<Bgr, 256>> readBitmapPalette(
    const uint8_t* data, size_t size, const BitmapLayout& layout, size_t pixelOffset)
{
    std::array<Bgr, 256> palette {};
    const size_t entryBytes = layout.infoSize == 12 ? 3 : 4;
    const size_t start = 14 + size_t {layout.infoSize};
    size_t count = layout.colours == 0 ? size_t {1} << layout.bitsPerPixel : layout.colours;
    if (count > 256)
        return Status::invalid("its BMP palette has " + std::to_string(count) + " entries");
    if (start + count * entryBytes > std::min(size, pixelOffset))
        return Status::invalid("its BMP palette is cut short");
    for (size_t i = 0; i < count; ++i)
        palette[i] = {data[start + i * entryBytes], data[start + i * entryBytes + 1],
            data[start + i * entryBytes + 2]};
    return palette;
}

} // namespace

Expected<Image> decodeBmpImage(const uint8_t* data, size_t size, const ImageHeader& header)
{
    auto layout = readBitmapLayout(data, size);
    if (!layout)
        return layout.status();
    const uint32_t bits = layout->bitsPerPixel;
    if (bits != 1 && bits != 4 && bits != 8 && bits != 16 && bits != 24 && bits != 32)
        return Status::invalid("its BMP has " + std::to_string(bits) +
            " bits a pixel, not 1, 4, "
            "8, 16, 24 or 32");
    const size_t width = header.width;
    const size_t height = header.height;
    const size_t pixelOffset = bitmapLe32(data + 10);
    const size_t stride = (width * bits + 31) / 32 * 4;
    if (pixelOffset > size || (size - pixelOffset) / stride < height)
        return Status::invalid("its BMP pixel data is cut short");
    std::array<Bgr, 256> palette {};
    if (bits <= 8) {
        auto read = readBitmapPalette(data, size, *layout, pixelOffset);
        if (!read)
            return read.status();
        palette = *read;
    }
    const BitmapField red(layout->masks[0]);
    const BitmapField green(layout->masks[1]);
    const BitmapField blue(layout->masks[2]);
    Image image(static_cast<int>(height), static_cast<int>(width), 3);
    for (size_t y = 0; y < height; ++y) {
        const uint8_t* row = data + pixelOffset + stride * (layout->topDown ? y : height - 1 - y);
        uint8_t* out = image.ptr(static_cast<int>(y));
        for (size_t x = 0; x < width; ++x) {
            if (bits <= 8) {
                const size_t bit = x * bits;
                const uint32_t index = (row[bit / 8] >> (8 - bits - bit % 8)) & ((1u << bits) - 1);
                put(out, x, palette[index]);
            } else if (bits == 24) {
                put(out, x, {row[3 * x], row[3 * x + 1], row[3 * x + 2]});
            } else {
                const uint32_t pixel =
                    bits == 16 ? bitmapLe16(row + 2 * x) : bitmapLe32(row + 4 * x);
                put(out, x, {blue(pixel), green(pixel), red(pixel)});
            }
        }
    }
    return image;
}

namespace {

bool pnmSpace(uint8_t c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

// Reads netpbm's header and plain samples: decimal numbers between white space and # comments.
struct PnmCursor {
    const uint8_t* data;
    size_t size;
    size_t pos;

    Expected<uint32_t> number(const char* what)
    {
        for (;;) {
            if (pos >= size)
                return Status::invalid(std::string("its PNM data ends before its ") + what);
            if (data[pos] == '#') {
                while (pos < size && data[pos] != '\n' && data[pos] != '\r')
                    ++pos;
            } else if (pnmSpace(data[pos])) {
                ++pos;
            } else {
                break;
            }
        }
        if (data[pos] < '0' || data[pos] > '9')
            return Status::invalid(
                std::string("its PNM data has no number where its ") + what + " belongs");
        uint64_t value = 0;
        while (pos < size && data[pos] >= '0' && data[pos] <= '9') {
            value = value * 10 + uint64_t(data[pos++] - '0');
            if (value > 0xffffffffu)
                return Status::invalid(std::string("its PNM ") + what + " is too large");
        }
        return static_cast<uint32_t>(value);
    }
};

// Reads sample `index` of a raw (P5, P6) image's data.
uint32_t pnmRawSample(const uint8_t* samples, size_t index, bool wide)
{
    return wide ? uint32_t(samples[2 * index]) << 8 | samples[2 * index + 1] : samples[index];
}

uint8_t pnmScaled(uint32_t value, uint32_t maxValue)
{
    if (value >= maxValue)
        return 255;
    if (maxValue == 65535)
        return static_cast<uint8_t>(value >> 8);
    return static_cast<uint8_t>((uint64_t {value} * 255 + maxValue / 2) / maxValue);
}

// P1 and P4: 1 is black. Plain bits need no white space between them.
Status readPbmPixels(PnmCursor& cursor, bool plain, Image& image)
{
    const auto width = static_cast<size_t>(image.cols);
    const size_t rowBytes = (width + 7) / 8;
    if (!plain && (cursor.size - cursor.pos) / rowBytes < static_cast<size_t>(image.rows))
        return Status::invalid("its PBM pixel data is cut short");
    for (int y = 0; y < image.rows; ++y) {
        uint8_t* out = image.ptr(y);
        for (size_t x = 0; x < width; ++x) {
            bool black = false;
            if (plain) {
                while (cursor.pos < cursor.size && cursor.data[cursor.pos] != '0' &&
                    cursor.data[cursor.pos] != '1') {
                    if (!pnmSpace(cursor.data[cursor.pos]))
                        return Status::invalid("its plain PBM data has a character that is not a "
                                               "bit");
                    ++cursor.pos;
                }
                if (cursor.pos >= cursor.size)
                    return Status::invalid("its PBM pixel data is cut short");
                black = cursor.data[cursor.pos++] == '1';
            } else {
                const uint8_t byte = cursor.data[cursor.pos + rowBytes * size_t(y) + x / 8];
                black = (byte >> (7 - x % 8)) & 1u;
            }
            const uint8_t value = black ? 0 : 255;
            put(out, x, {value, value, value});
        }
    }
    return Status();
}

// P2, P3, P5 and P6: grey or RGB samples up to `maxValue`.
Status readPnmSamples(PnmCursor& cursor, char kind, uint32_t maxValue, Image& image)
{
    const bool plain = kind == '2' || kind == '3';
    const size_t channels = kind == '3' || kind == '6' ? 3 : 1;
    const bool wide = maxValue > 255;
    const auto width = static_cast<size_t>(image.cols);
    const size_t rowSamples = width * channels;
    if (!plain) {
        // One white space character ends the header; the samples follow it.
        ++cursor.pos;
        const size_t rowBytes = rowSamples * (wide ? 2 : 1);
        if (cursor.pos > cursor.size ||
            (cursor.size - cursor.pos) / rowBytes < static_cast<size_t>(image.rows))
            return Status::invalid("its PNM pixel data is cut short");
    }
    for (int y = 0; y < image.rows; ++y) {
        uint8_t* out = image.ptr(y);
        const uint8_t* raw =
            cursor.data + cursor.pos + rowSamples * (wide ? 2 : 1) * static_cast<size_t>(y);
        for (size_t x = 0; x < width; ++x) {
            uint8_t sample[3] = {0, 0, 0};
            for (size_t c = 0; c < channels; ++c) {
                uint32_t value = 0;
                if (plain) {
                    auto read = cursor.number("sample");
                    if (!read)
                        return read.status();
                    value = *read;
                } else {
                    value = pnmRawSample(raw, x * channels + c, wide);
                }
                sample[c] = pnmScaled(value, maxValue);
            }
            put(out, x,
                channels == 3 ? Bgr {sample[2], sample[1], sample[0]}
                              : Bgr {sample[0], sample[0], sample[0]});
        }
    }
    return Status();
}

} // namespace

Expected<Image> decodePnmImage(const uint8_t* data, size_t size, const ImageHeader& header)
{
    const char kind = static_cast<char>(data[1]);
    PnmCursor cursor {data, size, 2};
    // The sides again, to reach the fields after them; readImageHeader checked their form.
    for (const char* side : {"width", "height"})
        if (auto read = cursor.number(side); !read)
            return read.status();
    Image image(static_cast<int>(header.height), static_cast<int>(header.width), 3);
    if (kind == '1' || kind == '4') {
        if (kind == '4')
            ++cursor.pos; // the one white space character before the bits
        if (cursor.pos > size)
            return Status::invalid("its PBM pixel data is cut short");
        if (Status s = readPbmPixels(cursor, kind == '1', image); !s)
            return s;
        return image;
    }
    auto maxValue = cursor.number("maximum value");
    if (!maxValue)
        return maxValue.status();
    if (*maxValue == 0 || *maxValue > 65535)
        return Status::invalid(
            "its PNM maximum value " + std::to_string(*maxValue) + " is outside 1..65535");
    if (Status s = readPnmSamples(cursor, kind, *maxValue, image); !s)
        return s;
    return image;
}

} // namespace jetagent
