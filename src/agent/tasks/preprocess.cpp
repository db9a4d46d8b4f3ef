// Classification preprocessing: resize and crop as torchvision evaluates, then normalise into NCHW
// float.
#include "tasks/preprocess.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace jetagent {

const char* interpolationKernel(Interpolation interpolation)
{
    switch (interpolation) {
    case Interpolation::Nearest: return "nearest"; // image_resize.h
    case Interpolation::Linear: return "bilinear-exact-q8"; // bilinear_crop.h
    case Interpolation::Area: return "area";
    case Interpolation::Cubic: return "cubic-keys-q11";
    }
    return "unknown";
}

CropGeometry computeCropGeometry(int frameWidth, int frameHeight, const PreprocessConfig& config)
{
    CropGeometry g;
    g.cropWidth = config.cropWidth;
    g.cropHeight = config.cropHeight;
    if (config.resize == ResizeMode::Stretch) {
        g.resizedWidth = config.cropWidth;
        g.resizedHeight = config.cropHeight;
        return g;
    }
    const int64_t size = config.resizeSize;
    // A frame of extreme shape gives a longer side past any int: kept one above the largest side
    // the crop takes, which then refuses it (an empty frame gives 0, refused too).
    auto longer = [size](int64_t side, int64_t other) {
        const double v =
            other > 0 ? static_cast<double>(size * side) / static_cast<double>(other) : 0.0;
        return static_cast<int>(std::min(v, BilinearCrop::kMaxSide + 1.0));
    };
    if (frameWidth <= frameHeight) {
        g.resizedWidth = static_cast<int>(size);
        g.resizedHeight = longer(frameHeight, frameWidth);
    } else {
        g.resizedHeight = static_cast<int>(size);
        g.resizedWidth = longer(frameWidth, frameHeight);
    }
    // std::nearbyint rounds half to even in the default rounding mode, as Python's round() does.
    g.cropX = static_cast<int>(std::nearbyint((g.resizedWidth - g.cropWidth) / 2.0));
    g.cropY = static_cast<int>(std::nearbyint((g.resizedHeight - g.cropHeight) / 2.0));
    return g;
}

Preprocessor::Preprocessor(const PreprocessConfig& config) : config_(config)
{
    assert(config.cropWidth > 0 && config.cropHeight > 0);
    channels_.divisor = config.divisor;
    for (int c = 0; c < 3; ++c) {
        // Frames are BGR: RGB models read channel 2 first.
        channels_.sourceChannel[static_cast<size_t>(c)] =
            config.color == ColorOrder::Rgb ? 2 - c : c;
        channels_.mean[static_cast<size_t>(c)] = config.mean[static_cast<size_t>(c)];
        channels_.std[static_cast<size_t>(c)] = config.std[static_cast<size_t>(c)];
        for (int v = 0; v < 256; ++v)
            table_[static_cast<size_t>(c)][static_cast<size_t>(v)] =
                normalisedValue(v, channels_, static_cast<size_t>(c));
    }
}

Status Preprocessor::run(const Image& bgr, float* out, size_t channelStride)
{
    assert(bgr.channels() == 3);
    const CropGeometry g = computeCropGeometry(bgr.cols, bgr.rows, config_);
    const Image* source = &bgr;
    const bool resize = g.resizedWidth != bgr.cols || g.resizedHeight != bgr.rows;
    if (resize && config_.interpolation == Interpolation::Linear)
        return bilinear_.run(bgr, g.resizedWidth, g.resizedHeight, g.cropX, g.cropY, g.cropWidth,
            g.cropHeight, channels_, out, channelStride);
    // The other kernels resize the whole frame (image_resize.h), then read the crop from it.
    if (Status s = BilinearCrop::checkGeometry(bgr.cols, bgr.rows, g.resizedWidth, g.resizedHeight,
            g.cropX, g.cropY, g.cropWidth, g.cropHeight);
        !s)
        return s;
    if (resize) {
        const ResizeKind kind = config_.interpolation == Interpolation::Nearest
            ? ResizeKind::Nearest
            : config_.interpolation == Interpolation::Cubic ? ResizeKind::Cubic
                                                            : ResizeKind::Area;
        resizer_.run(bgr, resized_, g.resizedWidth, g.resizedHeight, kind);
        source = &resized_;
    }

    float* planes[3] = {out, out + channelStride, out + 2 * channelStride};
    const float* t0 = table_[0].data();
    const float* t1 = table_[1].data();
    const float* t2 = table_[2].data();
    const int s0 = channels_.sourceChannel[0], s1 = channels_.sourceChannel[1],
              s2 = channels_.sourceChannel[2];
    size_t i = 0;
    for (int y = 0; y < g.cropHeight; ++y) {
        const uint8_t* row = source->ptr(g.cropY + y) + 3 * g.cropX;
        for (int x = 0; x < g.cropWidth; ++x, ++i, row += 3) {
            planes[0][i] = t0[row[s0]];
            planes[1][i] = t1[row[s1]];
            planes[2][i] = t2[row[s2]];
        }
    }
    return Status();
}

nlohmann::json describePreprocess(const PreprocessConfig& p)
{
    return {{"resize", nameOf(kResizeModeNames, p.resize)},
        {"resize_size",
            p.resize == ResizeMode::ShorterSide ? nlohmann::json(p.resizeSize)
                                                : nlohmann::json(nullptr)},
        {"crop", {p.cropWidth, p.cropHeight}},
        {"interpolation", nameOf(kInterpolationNames, p.interpolation)},
        {"color", nameOf(kColorOrderNames, p.color)}, {"divisor", p.divisor}, {"mean", p.mean},
        {"std", p.std}};
}

} // namespace jetagent
