// An 8-bit image in memory (BGR frames, and the grey and CMYK buffers of the codecs): the core's
// pixel type, which needs no image library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace jetagent {

// rows x cols pixels of `channels()` interleaved bytes (B, G, R for frames), each row `step` bytes
// after the one before. Copies share the pixels, as views of one buffer do; clone() copies them.
// The fields are public and named as OpenCV's cv::Mat names them (rows, cols, data, step), so
// code that wraps an Image for OpenCV (the plugins, the tests) reads the same.
class Image {
public:
    Image() = default;
    // Allocated, contents undefined. Sides must be positive.
    Image(int rowCount, int colCount, int channels = 3);
    // A view of pixels someone else owns and keeps alive as long as the view is used.
    Image(int rowCount, int colCount, int channels, uint8_t* pixels, size_t rowStep);

    // Gives this image the size and channels asked, keeping its pixels when it already has them
    // (a source that refills one Frame allocates once; a view stays a view, as a cv::Mat does);
    // otherwise a new buffer of its own, contents undefined.
    void create(int newRows, int newCols, int newChannels = 3);
    void release() { *this = Image(); }

    bool empty() const { return data == nullptr || rows <= 0 || cols <= 0; }
    size_t total() const { return static_cast<size_t>(rows) * static_cast<size_t>(cols); } // pixels
    int channels() const { return channels_; }
    size_t rowBytes() const { return static_cast<size_t>(cols) * static_cast<size_t>(channels_); }
    bool continuous() const { return step == rowBytes() || rows == 1; }
    // True when both images are views of the same pixels, as after a copy or roi().
    bool sharesPixelsWith(const Image& other) const { return buffer_ && buffer_ == other.buffer_; }

    uint8_t* ptr(int row = 0) { return data + static_cast<size_t>(row) * step; }
    const uint8_t* ptr(int row = 0) const { return data + static_cast<size_t>(row) * step; }

    // The rectangle at (x, y), sharing these pixels. It must lie inside the image.
    Image roi(int x, int y, int width, int height) const;
    // A copy with its own, continuous buffer.
    Image clone() const;
    // Copies the pixels into `dst`, which is (re)created to this size.
    void copyTo(Image& dst) const;
    // Every pixel set to `value` (channels() bytes, B, G, R for a frame).
    void fill(const uint8_t* value);
    void fill(uint8_t blue, uint8_t green, uint8_t red);

    int rows = 0;
    int cols = 0;
    uint8_t* data = nullptr;
    size_t step = 0;

private:
    int channels_ = 3;
    std::shared_ptr<uint8_t[]> buffer_;
};

} // namespace jetagent
