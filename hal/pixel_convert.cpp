// Camera pixel formats to 8-bit BGR: own SIMD loops for uncompressed formats, TurboJPEG for MJPEG.
#include "jetagent/hal/pixel_convert.h"

#include <linux/videodev2.h>

#include <algorithm>
#include <cstring>

#include <opencv2/core/hal/intrin.hpp>

namespace jetagent {

uint32_t fourccFromName(const std::string& name)
{
    if (name.size() != 4)
        return 0;
    return v4l2_fourcc(static_cast<uint8_t>(name[0]), static_cast<uint8_t>(name[1]),
        static_cast<uint8_t>(name[2]), static_cast<uint8_t>(name[3]));
}

std::string fourccName(uint32_t fourcc)
{
    std::string name(4, '?');
    for (size_t i = 0; i < 4; ++i) {
        const auto c = static_cast<char>((fourcc >> (8 * i)) & 0xFFu);
        if (c >= 0x20 && c <= 0x7E)
            name[i] = c;
    }
    return name;
}

namespace {

// --- YCbCr (BT.601, limited range) ------------------------------------------------------------
//
// What V4L2 cameras send by default (V4L2_YCBCR_ENC_601, V4L2_QUANTIZATION_LIM_RANGE):
//   R = 1.164 (Y-16) + 1.596 (V-128)
//   G = 1.164 (Y-16) - 0.813 (V-128) - 0.392 (U-128)
//   B = 1.164 (Y-16) + 2.017 (U-128)
// in 16-bit fixed point, so one SIMD lane holds one term: inputs are scaled by 2^7 and the
// coefficients by 2^13, and the high half of the 16x16-bit product keeps 1/16 of a level. The
// scalar and SIMD paths do the same integer arithmetic and give identical results; against the
// float formula the error stays within one level.
constexpr int kInputShift = 7;
constexpr int kFractionBits = 4; // the products are in 1/16 of a level
constexpr int16_t kRound = 1 << (kFractionBits - 1);
constexpr int16_t kCoefY = 9539; // 255/219 * 2^13
constexpr int16_t kCoefVR = 13075; // 1.402 * 255/224 * 2^13
constexpr int16_t kCoefUG = 3209; // 0.344136 * 255/224 * 2^13
constexpr int16_t kCoefVG = 6660; // 0.714136 * 255/224 * 2^13
constexpr int16_t kCoefUB = 16525; // 1.772 * 255/224 * 2^13

// The high 16 bits of a 16x16-bit signed product, as the SIMD instruction computes it.
inline int mulHigh(int a, int b)
{
    return (a * b) >> 16;
}

inline uint8_t saturateLevel(int value)
{
    return static_cast<uint8_t>(std::min(std::max(value >> kFractionBits, 0), 255));
}

// Writes the BGR pixels of two horizontally adjacent luma samples sharing one chroma pair.
inline void yuvPairToBGR(int y0, int y1, int u, int v, uint8_t* dst)
{
    constexpr int kScale = 1 << kInputShift;
    const int cb = (u - 128) * kScale;
    const int cr = (v - 128) * kScale;
    const int r = mulHigh(cr, kCoefVR) + kRound;
    const int g = kRound - mulHigh(cb, kCoefUG) - mulHigh(cr, kCoefVG);
    const int b = mulHigh(cb, kCoefUB) + kRound;
    const int l0 = mulHigh((y0 - 16) * kScale, kCoefY);
    const int l1 = mulHigh((y1 - 16) * kScale, kCoefY);
    dst[0] = saturateLevel(l0 + b);
    dst[1] = saturateLevel(l0 + g);
    dst[2] = saturateLevel(l0 + r);
    dst[3] = saturateLevel(l1 + b);
    dst[4] = saturateLevel(l1 + g);
    dst[5] = saturateLevel(l1 + r);
}

#if CV_SIMD128
constexpr int kSimdPixels = 32; // one YUV kernel step: 16 even and 16 odd pixels

// The chroma contributions to R, G and B of eight chroma pairs, in 1/16 levels with rounding added.
struct ChromaTerms {
    cv::v_int16x8 r, g, b;
};

inline ChromaTerms chromaTerms(const cv::v_int16x8& u, const cv::v_int16x8& v)
{
    const cv::v_int16x8 bias = cv::v_setall_s16(128);
    const cv::v_int16x8 cb = (u - bias) << kInputShift;
    const cv::v_int16x8 cr = (v - bias) << kInputShift;
    const cv::v_int16x8 round = cv::v_setall_s16(kRound);
    ChromaTerms t;
    t.r = cv::v_mul_hi(cr, cv::v_setall_s16(kCoefVR)) + round;
    t.g = round - cv::v_mul_hi(cb, cv::v_setall_s16(kCoefUG)) -
        cv::v_mul_hi(cr, cv::v_setall_s16(kCoefVG));
    t.b = cv::v_mul_hi(cb, cv::v_setall_s16(kCoefUB)) + round;
    return t;
}

inline cv::v_int16x8 lumaTerm(const cv::v_int16x8& y)
{
    return cv::v_mul_hi((y - cv::v_setall_s16(16)) << kInputShift, cv::v_setall_s16(kCoefY));
}

inline cv::v_int16x8 widenLow(const cv::v_uint8x16& x)
{
    cv::v_uint16x8 lo, hi;
    cv::v_expand(x, lo, hi);
    return cv::v_reinterpret_as_s16(lo);
}

inline cv::v_int16x8 widenHigh(const cv::v_uint8x16& x)
{
    cv::v_uint16x8 lo, hi;
    cv::v_expand(x, lo, hi);
    return cv::v_reinterpret_as_s16(hi);
}

// 32 BGR pixels from 16 even luma samples, 16 odd ones and their 16 chroma pairs.
inline void yuvToBGR32(const cv::v_uint8x16& yEven, const cv::v_uint8x16& yOdd,
    const cv::v_uint8x16& u, const cv::v_uint8x16& v, uint8_t* dst)
{
    const ChromaTerms lo = chromaTerms(widenLow(u), widenLow(v));
    const ChromaTerms hi = chromaTerms(widenHigh(u), widenHigh(v));
    const cv::v_int16x8 evenLo = lumaTerm(widenLow(yEven));
    const cv::v_int16x8 evenHi = lumaTerm(widenHigh(yEven));
    const cv::v_int16x8 oddLo = lumaTerm(widenLow(yOdd));
    const cv::v_int16x8 oddHi = lumaTerm(widenHigh(yOdd));
    auto level = [](const cv::v_int16x8& l, const cv::v_int16x8& c) {
        return (l + c) >> kFractionBits;
    };
    const cv::v_uint8x16 bEven = cv::v_pack_u(level(evenLo, lo.b), level(evenHi, hi.b));
    const cv::v_uint8x16 gEven = cv::v_pack_u(level(evenLo, lo.g), level(evenHi, hi.g));
    const cv::v_uint8x16 rEven = cv::v_pack_u(level(evenLo, lo.r), level(evenHi, hi.r));
    const cv::v_uint8x16 bOdd = cv::v_pack_u(level(oddLo, lo.b), level(oddHi, hi.b));
    const cv::v_uint8x16 gOdd = cv::v_pack_u(level(oddLo, lo.g), level(oddHi, hi.g));
    const cv::v_uint8x16 rOdd = cv::v_pack_u(level(oddLo, lo.r), level(oddHi, hi.r));
    cv::v_uint8x16 b0, b1, g0, g1, r0, r1;
    cv::v_zip(bEven, bOdd, b0, b1);
    cv::v_zip(gEven, gOdd, g0, g1);
    cv::v_zip(rEven, rOdd, r0, r1);
    cv::v_store_interleave(dst, b0, g0, r0);
    cv::v_store_interleave(dst + 48, b1, g1, r1);
}
#endif

void yuyvRow(const uint8_t* src, uint8_t* dst, int width)
{
    int x = 0;
#if CV_SIMD128
    for (; x + kSimdPixels <= width; x += kSimdPixels) {
        cv::v_uint8x16 y0, u, y1, v;
        cv::v_load_deinterleave(src + 2 * x, y0, u, y1, v);
        yuvToBGR32(y0, y1, u, v, dst + 3 * x);
    }
#endif
    for (; x < width; x += 2) {
        const uint8_t* p = src + 2 * x;
        yuvPairToBGR(p[0], p[2], p[1], p[3], dst + 3 * x);
    }
}

void nv12Row(const uint8_t* luma, const uint8_t* chroma, uint8_t* dst, int width)
{
    int x = 0;
#if CV_SIMD128
    for (; x + kSimdPixels <= width; x += kSimdPixels) {
        cv::v_uint8x16 yEven, yOdd, u, v;
        cv::v_load_deinterleave(luma + x, yEven, yOdd);
        cv::v_load_deinterleave(chroma + x, u, v);
        yuvToBGR32(yEven, yOdd, u, v, dst + 3 * x);
    }
#endif
    for (; x < width; x += 2)
        yuvPairToBGR(luma[x], luma[x + 1], chroma[x], chroma[x + 1], dst + 3 * x);
}

// --- RGB, BGR, grey ----------------------------------------------------------------------------

void rgbRow(const uint8_t* src, uint8_t* dst, int width)
{
    int x = 0;
#if CV_SIMD128
    for (; x + 16 <= width; x += 16) {
        cv::v_uint8x16 r, g, b;
        cv::v_load_deinterleave(src + 3 * x, r, g, b);
        cv::v_store_interleave(dst + 3 * x, b, g, r);
    }
#endif
    for (; x < width; ++x) {
        dst[3 * x] = src[3 * x + 2];
        dst[3 * x + 1] = src[3 * x + 1];
        dst[3 * x + 2] = src[3 * x];
    }
}

void greyRow(const uint8_t* src, uint8_t* dst, int width)
{
    int x = 0;
#if CV_SIMD128
    for (; x + 16 <= width; x += 16) {
        const cv::v_uint8x16 l = cv::v_load(src + x);
        cv::v_store_interleave(dst + 3 * x, l, l, l);
    }
#endif
    for (; x < width; ++x)
        dst[3 * x] = dst[3 * x + 1] = dst[3 * x + 2] = src[x];
}

// --- MJPEG -------------------------------------------------------------------------------------

// What convert() needs to know of a JPEG stream before handing it to the decoder.
struct JpegLayout {
    int width = 0;
    int height = 0;
    size_t end = 0; // one past the EOI marker: drivers report bytesused beyond it (padding)
};

bool isStartOfFrame(uint8_t marker)
{
    // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC), which share the range.
    return marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
}

uint32_t readBig16(const uint8_t* p)
{
    return (static_cast<uint32_t>(p[0]) << 8) | p[1];
}

// Walks the marker segments and entropy-coded data to the EOI marker. libjpeg accepts a frame
// cut short (it pads the picture with grey and only warns), so a frame without EOI is rejected
// here: a camera that lost USB packets would otherwise deliver a half-grey picture as good.
Status parseJpeg(const uint8_t* data, size_t size, JpegLayout& layout)
{
    if (size < 4 || data[0] != 0xFF || data[1] != 0xD8)
        return Status::io("MJPEG frame of " + std::to_string(size) +
            " bytes does not start with a JPEG SOI marker");
    auto truncated = [size](const char* where) {
        return Status::io("MJPEG frame truncated " + std::string(where) + " (" +
            std::to_string(size) + " bytes, no end-of-image marker)");
    };
    bool haveFrame = false;
    bool haveScan = false;
    size_t pos = 2;
    while (true) {
        if (pos >= size)
            return truncated("between segments");
        if (data[pos] != 0xFF)
            return Status::io("corrupt MJPEG frame: no marker at byte " + std::to_string(pos) +
                " where one belongs");
        while (pos + 1 < size && data[pos + 1] == 0xFF) // fill bytes before a marker
            ++pos;
        if (pos + 1 >= size)
            return truncated("in a marker");
        const uint8_t marker = data[pos + 1];
        if (marker == 0xD9) {
            if (!haveFrame || !haveScan)
                return Status::io("corrupt MJPEG frame: it ends before any image data");
            layout.end = pos + 2;
            return Status();
        }
        if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) { // no length field
            pos += 2;
            continue;
        }
        if (pos + 4 > size)
            return truncated("in a segment header");
        const size_t length = readBig16(data + pos + 2);
        if (length < 2)
            return Status::io("corrupt MJPEG frame: segment length " + std::to_string(length) +
                " at byte " + std::to_string(pos));
        if (pos + 2 + length > size)
            return truncated("in a segment");
        if (isStartOfFrame(marker)) {
            if (length < 8)
                return Status::io("corrupt MJPEG frame: a start-of-frame segment of " +
                    std::to_string(length) + " bytes");
            layout.height = static_cast<int>(readBig16(data + pos + 5));
            layout.width = static_cast<int>(readBig16(data + pos + 7));
            haveFrame = true;
        }
        pos += 2 + length;
        if (marker != 0xDA)
            continue;
        // Entropy-coded data runs to the next marker; 0xFF 0x00 is an escaped data byte and
        // restart markers belong to the scan.
        haveScan = true;
        while (true) {
            const auto* ff = static_cast<const uint8_t*>(std::memchr(data + pos, 0xFF, size - pos));
            if (ff == nullptr || ff + 1 >= data + size)
                return truncated("in the image data");
            const uint8_t next = ff[1];
            pos = static_cast<size_t>(ff - data);
            if (next == 0x00 || (next >= 0xD0 && next <= 0xD7))
                pos += 2;
            else if (next == 0xFF)
                pos += 1;
            else
                break;
        }
    }
}

} // namespace

const std::vector<uint32_t>& PixelConverter::supportedFourccs()
{
    // Uncompressed first: exact and cheap to convert. MJPG ahead of RGB3/BGR3 because cameras
    // that offer both usually reach their high resolutions and rates only in MJPG.
    static const std::vector<uint32_t> kFourccs = {V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_NV12,
        V4L2_PIX_FMT_MJPEG, V4L2_PIX_FMT_RGB24, V4L2_PIX_FMT_BGR24, V4L2_PIX_FMT_GREY};
    return kFourccs;
}

namespace {
std::string supportedNames()
{
    std::string names;
    for (const uint32_t f : PixelConverter::supportedFourccs())
        names += (names.empty() ? "" : ", ") + fourccName(f);
    return names;
}
} // namespace

bool PixelConverter::supports(uint32_t fourcc)
{
    const auto& all = supportedFourccs();
    return std::find(all.begin(), all.end(), fourcc) != all.end();
}

Status PixelConverter::configure(
    uint32_t fourcc, int width, int height, uint32_t bytesPerLine, size_t sizeImage)
{
    const std::string what =
        fourccName(fourcc) + " " + std::to_string(width) + "x" + std::to_string(height);
    if (!supports(fourcc))
        return Status::invalid("pixel format " + fourccName(fourcc) +
            " cannot be converted; supported: " + supportedNames());
    if (width <= 0 || height <= 0)
        return Status::invalid(what + ": the frame size must be positive");

    size_t packedLine = 0; // bytes of one line without padding (of the luma plane for NV12)
    switch (fourcc) {
    case V4L2_PIX_FMT_YUYV: packedLine = 2 * static_cast<size_t>(width); break;
    case V4L2_PIX_FMT_NV12: packedLine = static_cast<size_t>(width); break;
    case V4L2_PIX_FMT_RGB24:
    case V4L2_PIX_FMT_BGR24: packedLine = 3 * static_cast<size_t>(width); break;
    case V4L2_PIX_FMT_GREY: packedLine = static_cast<size_t>(width); break;
    default: break; // MJPEG: compressed, no lines
    }
    if ((fourcc == V4L2_PIX_FMT_YUYV || fourcc == V4L2_PIX_FMT_NV12) && width % 2 != 0)
        return Status::invalid(what + ": the width must be even (two pixels share a chroma pair)");
    if (fourcc == V4L2_PIX_FMT_NV12 && height % 2 != 0)
        return Status::invalid(what + ": the height must be even (two lines share a chroma line)");

    size_t stride = 0;
    size_t frameBytes = 0;
    if (fourcc != V4L2_PIX_FMT_MJPEG) {
        stride = bytesPerLine != 0 ? bytesPerLine : packedLine;
        if (stride < packedLine)
            return Status::invalid(what + ": bytesperline " + std::to_string(bytesPerLine) +
                " is shorter than a line (" + std::to_string(packedLine) + " bytes)");
        // The last line's padding is not required: only bytes that hold pixels are read.
        const auto lines = static_cast<size_t>(height);
        frameBytes = stride * (lines - 1) + packedLine;
        if (fourcc == V4L2_PIX_FMT_NV12) // the interleaved chroma plane follows the luma plane
            frameBytes = stride * lines + stride * (lines / 2 - 1) + packedLine;
        if (sizeImage != 0 && sizeImage < frameBytes)
            return Status::invalid(what + ": sizeimage " + std::to_string(sizeImage) +
                " is smaller than the frame (" + std::to_string(frameBytes) + " bytes)");
    }

    fourcc_ = fourcc;
    width_ = width;
    height_ = height;
    stride_ = stride;
    frameBytes_ = frameBytes;
    return Status();
}

Status PixelConverter::convert(const uint8_t* data, size_t bytesUsed, Image& bgr)
{
    if (fourcc_ == 0)
        return Status::invalid("pixel converter used before configure()");
    if (data == nullptr)
        return Status::io("no frame data");

    if (fourcc_ == V4L2_PIX_FMT_MJPEG) {
        JpegLayout layout;
        if (Status s = parseJpeg(data, bytesUsed, layout); !s)
            return s;
        if (layout.width != width_ || layout.height != height_)
            return Status::io("MJPEG frame is " + std::to_string(layout.width) + "x" +
                std::to_string(layout.height) + ", the camera was configured for " +
                std::to_string(width_) + "x" + std::to_string(height_));
        // Frames without Huffman tables (most UVC cameras leave out the standard ones) decode as
        // they are: libjpeg-turbo falls back to the tables of ITU-T T.81 Annex K. A test guards
        // that. The decoder writes into scratch_ so that a failure mid-picture leaves `bgr` as it
        // was. Damage libjpeg only warns about decodes, as it did through OpenCV.
        const uint64_t pixels = uint64_t(width_) * uint64_t(height_);
        if (Status s = jpeg_.decode(data, layout.end, pixels, scratch_, false, false); !s)
            return Status::io("MJPEG frame of " + std::to_string(layout.end) +
                " bytes could not be decoded: " + s.message());
        if (scratch_.rows != height_ || scratch_.cols != width_ || scratch_.channels() != 3)
            return Status::io(
                "MJPEG frame of " + std::to_string(layout.end) + " bytes could not be decoded");
        scratch_.copyTo(bgr); // reuses bgr's buffer when it has the size already
        return Status();
    }

    if (bytesUsed < frameBytes_)
        return Status::io("short frame: " + std::to_string(bytesUsed) + " bytes, " +
            fourccName(fourcc_) + " " + std::to_string(width_) + "x" + std::to_string(height_) +
            " needs " + std::to_string(frameBytes_));
    bgr.create(height_, width_, 3); // no-op once the size is right

    const size_t stride = stride_;
    switch (fourcc_) {
    case V4L2_PIX_FMT_YUYV:
        for (int y = 0; y < height_; ++y)
            yuyvRow(data + stride * static_cast<size_t>(y), bgr.ptr(y), width_);
        break;
    case V4L2_PIX_FMT_NV12: {
        const uint8_t* chroma = data + stride * static_cast<size_t>(height_);
        for (int y = 0; y < height_; ++y)
            nv12Row(data + stride * static_cast<size_t>(y),
                chroma + stride * static_cast<size_t>(y / 2), bgr.ptr(y), width_);
        break;
    }
    case V4L2_PIX_FMT_RGB24:
        for (int y = 0; y < height_; ++y)
            rgbRow(data + stride * static_cast<size_t>(y), bgr.ptr(y), width_);
        break;
    case V4L2_PIX_FMT_BGR24:
        for (int y = 0; y < height_; ++y)
            std::memcpy(bgr.ptr(y), data + stride * static_cast<size_t>(y),
                3 * static_cast<size_t>(width_));
        break;
    case V4L2_PIX_FMT_GREY:
        for (int y = 0; y < height_; ++y)
            greyRow(data + stride * static_cast<size_t>(y), bgr.ptr(y), width_);
        break;
    default: return Status::invalid("unsupported pixel format " + fourccName(fourcc_));
    }
    return Status();
}

} // namespace jetagent
