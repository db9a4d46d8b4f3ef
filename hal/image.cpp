// The core's pixel type (see image.h).
#include "jetagent/hal/image.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace jetagent {

Image::Image(int rowCount, int colCount, int channels)
{
    create(rowCount, colCount, channels);
}

Image::Image(int rowCount, int colCount, int channels, uint8_t* pixels, size_t rowStep)
    : rows(rowCount), cols(colCount), data(pixels), step(rowStep), channels_(channels)
{
    assert(rows >= 0 && cols >= 0 && channels >= 1 && step >= rowBytes());
}

void Image::create(int newRows, int newCols, int newChannels)
{
    assert(newRows > 0 && newCols > 0 && newChannels >= 1);
    if (data != nullptr && rows == newRows && cols == newCols && channels_ == newChannels)
        return;
    const size_t bytes = static_cast<size_t>(newCols) * static_cast<size_t>(newChannels);
    buffer_.reset(new uint8_t[bytes * static_cast<size_t>(newRows)]);
    rows = newRows;
    cols = newCols;
    channels_ = newChannels;
    data = buffer_.get();
    step = bytes;
}

Image Image::roi(int x, int y, int width, int height) const
{
    assert(
        x >= 0 && y >= 0 && width >= 0 && height >= 0 && x + width <= cols && y + height <= rows);
    Image view = *this;
    view.data = data + static_cast<size_t>(y) * step + static_cast<size_t>(x) * channels_;
    view.rows = height;
    view.cols = width;
    return view;
}

Image Image::clone() const
{
    Image copy;
    copyTo(copy);
    return copy;
}

void Image::copyTo(Image& dst) const
{
    if (empty()) {
        dst.release();
        return;
    }
    if (dst.sharesPixelsWith(*this) || dst.data == data)
        dst.release(); // never copy over the pixels being read
    dst.create(rows, cols, channels_);
    for (int y = 0; y < rows; ++y)
        std::memcpy(dst.ptr(y), ptr(y), rowBytes());
}

void Image::fill(const uint8_t* value)
{
    if (empty())
        return;
    // The first row by doubling copies of the first pixel, then every row a copy of it.
    uint8_t* first = ptr(0);
    const size_t bytes = rowBytes();
    const auto pixel = static_cast<size_t>(channels_);
    std::memcpy(first, value, pixel);
    for (size_t done = pixel; done < bytes;) {
        const size_t n = std::min(done, bytes - done);
        std::memcpy(first + done, first, n);
        done += n;
    }
    for (int y = 1; y < rows; ++y)
        std::memcpy(ptr(y), first, bytes);
}

void Image::fill(uint8_t blue, uint8_t green, uint8_t red)
{
    assert(channels_ == 3);
    const uint8_t value[3] = {blue, green, red};
    fill(value);
}

} // namespace jetagent
