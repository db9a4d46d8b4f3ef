// Images in the tests: jetagent::Image seen as OpenCV's cv::Mat, OpenCV being the reference the
// tests compare the project's own image code with, and back.
#pragma once

#include <cassert>
#include <cstring>

#include <opencv2/core/mat.hpp>

#include "jetagent/hal/image.h"

namespace jetagent::test {

// The image as a cv::Mat sharing its pixels (valid while the image's buffer lives).
inline cv::Mat asMat(const Image& image)
{
    if (image.empty())
        return cv::Mat();
    return cv::Mat(image.rows, image.cols, CV_8UC(image.channels()), image.data, image.step);
}

// An 8-bit cv::Mat (1 to 4 channels) as an Image sharing its pixels: an input to the project's
// code (valid while the Mat's buffer lives; an output the code reallocates is not seen by the Mat).
inline Image asImage(const cv::Mat& mat)
{
    assert(mat.depth() == CV_8U);
    if (mat.empty())
        return Image();
    return Image(mat.rows, mat.cols, mat.channels(), mat.data, mat.step);
}

// A BGR image of rows x cols, every pixel (blue, green, red).
inline Image solidImage(int rows, int cols, uint8_t blue, uint8_t green, uint8_t red)
{
    Image image(rows, cols, 3);
    image.fill(blue, green, red);
    return image;
}

// A copy of an 8-bit cv::Mat (1 to 4 channels) as an Image.
inline Image toImage(const cv::Mat& mat)
{
    assert(mat.depth() == CV_8U);
    if (mat.empty())
        return Image();
    Image image(mat.rows, mat.cols, mat.channels());
    for (int y = 0; y < mat.rows; ++y)
        std::memcpy(image.ptr(y), mat.ptr(y), image.rowBytes());
    return image;
}

} // namespace jetagent::test
