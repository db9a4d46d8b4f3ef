// JPEG through TurboJPEG and PNG through libpng, both ways; BMP and PNM through image_bitmap.cpp.
// Each decoder is handed an image whose size its header gave and the caller's limit allowed, and
// must produce exactly that size.
#include "jetagent/hal/image_codec.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <png.h>
#include <turbojpeg.h>

#include "image_bitmap.h"
#include "jetagent/hal/image_header.h"

namespace jetagent {

namespace {

// --- JPEG ----------------------------------------------------------------------------------------

uint32_t codecBe16(const uint8_t* p)
{
    return uint32_t(p[0]) << 8 | uint32_t(p[1]);
}

// The orientation (1..8) that an EXIF APP1 segment's first directory gives, or 1. `tiff` is the
// segment's TIFF structure (after "Exif\0\0"), `size` its length.
int exifOrientationIn(const uint8_t* tiff, size_t size)
{
    if (size < 8)
        return 1;
    const bool little = tiff[0] == 'I' && tiff[1] == 'I';
    if (!little && !(tiff[0] == 'M' && tiff[1] == 'M'))
        return 1;
    auto u16 = [&](size_t at) {
        return little ? uint32_t(tiff[at]) | uint32_t(tiff[at + 1]) << 8 : codecBe16(tiff + at);
    };
    auto u32 = [&](size_t at) {
        return little ? u16(at) | u16(at + 2) << 16 : u16(at) << 16 | u16(at + 2);
    };
    const size_t directory = u32(4);
    if (directory > size || size - directory < 2)
        return 1;
    const size_t entries = u16(directory);
    for (size_t i = 0; i < entries; ++i) {
        const size_t entry = directory + 2 + 12 * i;
        if (entry > size || size - entry < 12)
            return 1;
        // Orientation (0x0112), one SHORT, its value in the entry itself.
        if (u16(entry) == 0x0112 && u16(entry + 2) == 3 && u32(entry + 4) == 1) {
            const uint32_t value = u16(entry + 8);
            return value >= 1 && value <= 8 ? static_cast<int>(value) : 1;
        }
    }
    return 1;
}

// The EXIF orientation of a JPEG: the first APP1 "Exif" segment before the first scan.
int jpegExifOrientation(const uint8_t* data, size_t size)
{
    size_t pos = 2;
    while (pos + 4 <= size && data[pos] == 0xFF) {
        const uint8_t marker = data[pos + 1];
        if (marker == 0xDA || marker == 0xD9)
            break;
        if (marker == 0xFF || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) {
            pos += marker == 0xFF ? 1 : 2; // fill bytes and stand-alone markers
            continue;
        }
        const size_t length = codecBe16(data + pos + 2);
        if (length < 2 || length > size - pos - 2)
            break;
        const uint8_t* body = data + pos + 4;
        if (marker == 0xE1 && length >= 2 + 6 && std::memcmp(body, "Exif\0\0", 6) == 0)
            return exifOrientationIn(body + 6, length - 2 - 6);
        pos += 2 + length;
    }
    return 1;
}

// `image` mirrored left to right, in place.
void mirror(Image& image)
{
    for (int y = 0; y < image.rows; ++y) {
        uint8_t* row = image.ptr(y);
        for (int l = 0, r = image.cols - 1; l < r; ++l, --r)
            std::swap_ranges(row + 3 * l, row + 3 * l + 3, row + 3 * r);
    }
}

// `image` turned upside down, in place.
void flipRows(Image& image)
{
    for (int t = 0, b = image.rows - 1; t < b; ++t, --b)
        std::swap_ranges(image.ptr(t), image.ptr(t) + image.rowBytes(), image.ptr(b));
}

// `image` transposed: rows become columns.
Image transposed(const Image& image)
{
    Image turned(image.cols, image.rows, 3);
    for (int y = 0; y < image.rows; ++y) {
        const uint8_t* in = image.ptr(y);
        for (int x = 0; x < image.cols; ++x)
            std::memcpy(turned.ptr(x) + 3 * y, in + 3 * x, 3);
    }
    return turned;
}

// Turns a decoded image as EXIF orientation `orientation` says it must be shown.
void applyExifOrientation(int orientation, Image& image)
{
    if (orientation <= 1 || orientation > 8)
        return;
    if (orientation >= 5)
        image = transposed(image);
    // After the transpose for 5..8: 5 is done, 6 turns clockwise, 7 also flips both ways, 8 turns
    // anticlockwise. Without one: 2 mirrors, 3 turns by 180 degrees, 4 flips upside down.
    const bool mirrored =
        orientation == 2 || orientation == 3 || orientation == 6 || orientation == 7;
    const bool upsideDown =
        orientation == 3 || orientation == 4 || orientation == 7 || orientation == 8;
    if (mirrored)
        mirror(image);
    if (upsideDown)
        flipRows(image);
}

// CMYK as Adobe writes it (inverted: 255 is no ink) to BGR.
void cmykToBgr(const Image& cmyk, Image& bgr)
{
    bgr.create(cmyk.rows, cmyk.cols, 3);
    for (int y = 0; y < cmyk.rows; ++y) {
        const uint8_t* in = cmyk.ptr(y);
        uint8_t* out = bgr.ptr(y);
        for (int x = 0; x < cmyk.cols; ++x, in += 4, out += 3) {
            const uint32_t k = in[3];
            auto channel = [k](uint32_t v) { return static_cast<uint8_t>((v * k + 127) / 255); };
            out[0] = channel(in[2]);
            out[1] = channel(in[1]);
            out[2] = channel(in[0]);
        }
    }
}

// --- PNG -----------------------------------------------------------------------------------------

// Keeps libpng's message in a state's fixed buffer (plain data: libpng's longjmp skips
// destructors), cut to fit and always terminated.
template <size_t N>
void keepPngMessage(char (&out)[N], const char* message)
{
    const size_t length = std::min(std::strlen(message), N - 1);
    std::memcpy(out, message, length);
    out[length] = '\0';
}

// What libpng's callbacks share with the reader: the data and the first error's text.
struct PngReadState {
    const uint8_t* data = nullptr;
    size_t size = 0;
    size_t offset = 0;
    char error[160] = {};
};

void pngReadFromMemory(png_structp png, png_bytep out, size_t length)
{
    auto* state = static_cast<PngReadState*>(png_get_io_ptr(png));
    if (length > state->size - state->offset)
        png_error(png, "the PNG data is cut short");
    std::memcpy(out, state->data + state->offset, length);
    state->offset += length;
}

void pngReadFailed(png_structp png, png_const_charp message)
{
    auto* state = static_cast<PngReadState*>(png_get_error_ptr(png));
    keepPngMessage(state->error, message);
    png_longjmp(png, 1);
}

void pngIgnoreWarning(png_structp /*png*/, png_const_charp /*message*/) { }

// libpng reports errors by longjmp, which skips C++ destructors: this frame holds only plain data,
// and the rows it fills were allocated by the caller. The transformations are those of OpenCV's
// IMREAD_COLOR: palette and low-depth grey expanded, 16-bit samples cut to 8, alpha dropped, grey
// made BGR.
bool pngReadRows(PngReadState* state, png_bytep* rows, uint32_t width, uint32_t height)
{
    png_structp png =
        png_create_read_struct(PNG_LIBPNG_VER_STRING, state, pngReadFailed, pngIgnoreWarning);
    if (png == nullptr) {
        keepPngMessage(state->error, "libpng cannot start");
        return false;
    }
    png_infop info = png_create_info_struct(png);
    if (info == nullptr || setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, info != nullptr ? &info : nullptr, nullptr);
        return false;
    }
    png_set_read_fn(png, state, pngReadFromMemory);
    png_set_user_limits(png, width, height);
    png_read_info(png, info);
    if (png_get_image_width(png, info) != width || png_get_image_height(png, info) != height)
        png_error(png, "libpng read another size than the PNG header gives");
    const int colourType = png_get_color_type(png, info);
    if (png_get_bit_depth(png, info) == 16)
        png_set_strip_16(png);
    png_set_strip_alpha(png);
    if (colourType == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png);
    if ((colourType & PNG_COLOR_MASK_COLOR) == 0) {
        png_set_expand_gray_1_2_4_to_8(png);
        png_set_gray_to_rgb(png);
    }
    png_set_bgr(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != size_t {width} * 3)
        png_error(png, "libpng gave rows of an unexpected size");
    png_read_image(png, rows);
    png_read_end(png, nullptr);
    png_destroy_read_struct(&png, &info, nullptr);
    return true;
}

Expected<Image> decodePng(const uint8_t* data, size_t size, const ImageHeader& header)
{
    Image image(static_cast<int>(header.height), static_cast<int>(header.width), 3);
    std::vector<png_bytep> rows(header.height);
    for (int y = 0; y < image.rows; ++y)
        rows[static_cast<size_t>(y)] = image.ptr(y);
    PngReadState state;
    state.data = data;
    state.size = size;
    if (!pngReadRows(&state, rows.data(), static_cast<uint32_t>(header.width),
            static_cast<uint32_t>(header.height)))
        return Status::invalid(std::string("its PNG data is corrupt: ") + state.error);
    return image;
}

// What libpng's write callbacks share with the encoder.
struct PngWriteState {
    std::vector<uint8_t>* out = nullptr;
    char error[160] = {};
};

void pngWriteToMemory(png_structp png, png_bytep data, size_t length)
{
    auto* state = static_cast<PngWriteState*>(png_get_io_ptr(png));
    try {
        state->out->insert(state->out->end(), data, data + length);
    } catch (const std::bad_alloc&) {
        png_error(png, "out of memory");
    }
}

void pngFlushNothing(png_structp /*png*/) { }

void pngWriteFailed(png_structp png, png_const_charp message)
{
    auto* state = static_cast<PngWriteState*>(png_get_error_ptr(png));
    keepPngMessage(state->error, message);
    png_longjmp(png, 1);
}

// As pngReadRows: plain data only in this frame. Compression level 1, OpenCV's default: capture
// writes many frames, and speed matters more there than the last few percent of size.
bool pngWriteRows(
    PngWriteState* state, png_bytep* rows, uint32_t width, uint32_t height, int channels)
{
    png_structp png =
        png_create_write_struct(PNG_LIBPNG_VER_STRING, state, pngWriteFailed, pngIgnoreWarning);
    if (png == nullptr) {
        keepPngMessage(state->error, "libpng cannot start");
        return false;
    }
    png_infop info = png_create_info_struct(png);
    if (info == nullptr || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, info != nullptr ? &info : nullptr);
        return false;
    }
    png_set_write_fn(png, state, pngWriteToMemory, pngFlushNothing);
    const int colourType = channels == 1 ? PNG_COLOR_TYPE_GRAY
        : channels == 3                  ? PNG_COLOR_TYPE_RGB
                                         : PNG_COLOR_TYPE_RGB_ALPHA;
    png_set_IHDR(png, info, width, height, 8, colourType, PNG_INTERLACE_NONE,
        PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, 1);
    png_write_info(png, info);
    if (channels > 1)
        png_set_bgr(png);
    png_write_image(png, rows);
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    return true;
}

std::string lowerExtension(const std::string& path)
{
    std::string ext = std::filesystem::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
        [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return ext;
}

} // namespace

// --- JpegDecoder ---------------------------------------------------------------------------------

JpegDecoder::JpegDecoder() = default;

JpegDecoder::~JpegDecoder()
{
    if (handle_ != nullptr)
        tjDestroy(handle_);
}

JpegDecoder::JpegDecoder(JpegDecoder&& other) noexcept : handle_(other.handle_)
{
    other.handle_ = nullptr;
}

JpegDecoder& JpegDecoder::operator=(JpegDecoder&& other) noexcept
{
    std::swap(handle_, other.handle_);
    return *this;
}

Status JpegDecoder::decode(const uint8_t* data, size_t size, uint64_t maxPixels, Image& bgr,
    bool applyOrientation, bool refuseTruncated)
{
    if (handle_ == nullptr && (handle_ = tjInitDecompress()) == nullptr)
        return Status::runtime(std::string("TurboJPEG cannot start: ") + tjGetErrorStr2(nullptr));
    if (size > ULONG_MAX)
        return Status::invalid("its JPEG data is too large");
    const auto length = static_cast<unsigned long>(size);
    int width = 0;
    int height = 0;
    int subsampling = 0;
    int colourspace = 0;
    if (tjDecompressHeader3(handle_, data, length, &width, &height, &subsampling, &colourspace) !=
        0)
        return Status::invalid(
            std::string("its JPEG header is corrupt: ") + tjGetErrorStr2(handle_));
    if (width <= 0 || height <= 0 || uint64_t(width) * uint64_t(height) > maxPixels)
        return Status::invalid("its JPEG frame of " + std::to_string(width) + "x" +
            std::to_string(height) + " pixels is over the limit of " + std::to_string(maxPixels));
    const bool cmyk = colourspace == TJCS_CMYK || colourspace == TJCS_YCCK;
    Image cmykPixels;
    Image& target = cmyk ? cmykPixels : bgr;
    target.create(height, width, cmyk ? 4 : 3);
    const int rc = tjDecompress2(handle_, data, length, target.data, width,
        static_cast<int>(target.step), height, cmyk ? TJPF_CMYK : TJPF_BGR, 0);
    if (rc != 0) {
        const std::string why = tjGetErrorStr2(handle_);
        // libjpeg carries on past damage it only warns about; it fills a picture cut short with
        // grey, which an image file (unlike a camera frame) must not pass for a picture.
        const bool warning = tjGetErrorCode(handle_) == TJERR_WARNING;
        if (!warning || (refuseTruncated && why.find("Premature end") != std::string::npos))
            return Status::invalid("its JPEG data is corrupt: " + why);
    }
    if (cmyk)
        cmykToBgr(cmykPixels, bgr);
    if (applyOrientation)
        applyExifOrientation(jpegExifOrientation(data, size), bgr);
    return Status();
}

// --- decodeImage ---------------------------------------------------------------------------------

Expected<Image> decodeImage(const uint8_t* data, size_t size, uint64_t maxPixels)
{
    auto header = readImageHeader(data, size);
    if (!header)
        return header.status();
    if (header->pixels() > maxPixels)
        return Status::invalid("it is a " + header->format + " of " +
            std::to_string(header->width) + "x" + std::to_string(header->height) + " (" +
            std::to_string(header->pixels()) + " pixels), more than the limit of " +
            std::to_string(maxPixels) + " pixels");
    if (header->width > INT_MAX || header->height > INT_MAX)
        return Status::invalid("its " + header->format + " header gives a side over 2^31 pixels");
    Expected<Image> image = Image();
    if (header->format == "JPEG") {
        JpegDecoder decoder;
        if (Status s = decoder.decode(data, size, maxPixels, *image, true, true); !s)
            return s;
    } else if (header->format == "PNG") {
        image = decodePng(data, size, *header);
    } else if (header->format == "BMP") {
        image = decodeBmpImage(data, size, *header);
    } else if (header->format == "PNM") {
        image = decodePnmImage(data, size, *header);
    } else {
        return Status::invalid("it is a " + header->format + " image, which is not read (the " +
            "formats read are " + kReadImageFormats + "); convert it to PNG");
    }
    if (!image)
        return image.status();
    // The header read here and the decoder's own are different parsers: they must agree (after an
    // EXIF turn, the sides may be swapped).
    const auto rows = static_cast<uint64_t>(image->rows);
    const auto cols = static_cast<uint64_t>(image->cols);
    if (!((cols == header->width && rows == header->height) ||
            (cols == header->height && rows == header->width)))
        return Status::invalid("its " + header->format + " data decoded to " +
            std::to_string(cols) + "x" + std::to_string(rows) + " pixels, not the " +
            std::to_string(header->width) + "x" + std::to_string(header->height) +
            " its header gives");
    return image;
}

// --- encoders ------------------------------------------------------------------------------------

Status encodePng(const Image& image, std::vector<uint8_t>& out)
{
    const int channels = image.channels();
    if ((channels != 1 && channels != 3 && channels != 4) || image.empty())
        return Status::invalid("a PNG is written from a non-empty 8-bit image of 1, 3 or 4 "
                               "channels");
    std::vector<png_bytep> rows(static_cast<size_t>(image.rows));
    for (int y = 0; y < image.rows; ++y)
        rows[static_cast<size_t>(y)] = const_cast<png_bytep>(image.ptr(y));
    out.clear();
    PngWriteState state;
    state.out = &out;
    if (!pngWriteRows(&state, rows.data(), static_cast<uint32_t>(image.cols),
            static_cast<uint32_t>(image.rows), channels))
        return Status::runtime(std::string("libpng cannot encode the image: ") + state.error);
    return Status();
}

Status encodeJpeg(const Image& image, int quality, std::vector<uint8_t>& out)
{
    const int channels = image.channels();
    if ((channels != 1 && channels != 3) || image.empty())
        return Status::invalid("a JPEG is written from a non-empty 8-bit grey or BGR image");
    if (quality < 1 || quality > 100)
        return Status::invalid("JPEG quality must be 1..100 (got " + std::to_string(quality) + ")");
    tjhandle handle = tjInitCompress();
    if (handle == nullptr)
        return Status::runtime(std::string("TurboJPEG cannot start: ") + tjGetErrorStr2(nullptr));
    unsigned char* jpeg = nullptr;
    unsigned long length = 0;
    const int rc = tjCompress2(handle, image.data, image.cols, static_cast<int>(image.step),
        image.rows, channels == 1 ? TJPF_GRAY : TJPF_BGR, &jpeg, &length,
        channels == 1 ? TJSAMP_GRAY : TJSAMP_420, quality, 0);
    Status status;
    if (rc != 0)
        status = Status::runtime(
            std::string("TurboJPEG cannot encode the image: ") + tjGetErrorStr2(handle));
    else
        out.assign(jpeg, jpeg + length);
    tjFree(jpeg);
    tjDestroy(handle);
    return status;
}

Status writeImageFile(const std::string& path, const Image& image)
{
    constexpr int kJpegQuality = 95;
    const std::string ext = lowerExtension(path);
    std::vector<uint8_t> bytes;
    Status encoded;
    if (ext == ".png")
        encoded = encodePng(image, bytes);
    else if (ext == ".jpg" || ext == ".jpeg")
        encoded = encodeJpeg(image, kJpegQuality, bytes);
    else
        return Status::invalid(
            "cannot write '" + path + "': images are written as .png, .jpg or .jpeg");
    if (!encoded)
        return Status::error(encoded.kind(), "cannot write '" + path + "': " + encoded.message());
    std::FILE* file = std::fopen(path.c_str(), "wb");
    if (file == nullptr)
        return Status::io("cannot write '" + path + "': " + errnoText(errno));
    const bool written = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
    const int writeErrno = errno;
    if (std::fclose(file) != 0 || !written)
        return Status::io(
            "cannot write '" + path + "': " + errnoText(written ? errno : writeErrno));
    return Status();
}

} // namespace jetagent
