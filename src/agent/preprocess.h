// Classification preprocessing: resize and crop as torchvision evaluates, then normalise into NCHW
// float.
#pragma once

#include <array>

#include <opencv2/core/mat.hpp>

#include "bilinear_crop.h"
#include "jetagent/base/enum_names.h"

namespace jetagent {

enum class ResizeMode {
    ShorterSide, // scale so the shorter side is resize_size, keep the aspect ratio, then
                 // centre-crop (torchvision's eval)
    Stretch, // scale straight to the crop size, ignoring the aspect ratio
};
inline constexpr EnumName<ResizeMode> kResizeModeNames[] = {
    {ResizeMode::ShorterSide, "shorter_side"}, {ResizeMode::Stretch, "stretch"}};
enum class ColorOrder { Rgb, Bgr };
inline constexpr EnumName<ColorOrder> kColorOrderNames[] = {
    {ColorOrder::Rgb, "rgb"}, {ColorOrder::Bgr, "bgr"}};
enum class Interpolation { Nearest, Linear, Area, Cubic };
inline constexpr EnumName<Interpolation> kInterpolationNames[] = {
    {Interpolation::Nearest, "nearest"}, {Interpolation::Linear, "linear"},
    {Interpolation::Area, "area"}, {Interpolation::Cubic, "cubic"}};

struct PreprocessConfig {
    ResizeMode resize = ResizeMode::ShorterSide;
    int resizeSize =
        0; // shorter side after resizing; 0 = crop height x 256/224, torchvision's ratio
    int cropWidth = 0; // model input width; 0 = taken from the model
    int cropHeight = 0; // model input height; 0 = taken from the model
    Interpolation interpolation = Interpolation::Linear;
    ColorOrder color = ColorOrder::Rgb; // channel order the model expects
    float divisor = 255.0f; // pixel values are divided by this first (255: 0..1 as torchvision)
    std::array<float, 3> mean {
        0.485f, 0.456f, 0.406f}; // subtracted per channel (model's order), after dividing
    std::array<float, 3> std {0.229f, 0.224f, 0.225f}; // then divided by, per channel
};

// Where the model's input comes from in a frame: the size it is resized to, then the crop taken
// from it.
struct CropGeometry {
    int resizedWidth = 0;
    int resizedHeight = 0;
    int cropX = 0;
    int cropY = 0;
    int cropWidth = 0;
    int cropHeight = 0;
};

// torchvision's rules: Resize(s) scales the shorter side to s and the longer to int(s * long /
// short); CenterCrop takes its offsets as round((size - crop) / 2) with Python's
// round-half-to-even. Stretch resizes straight to the crop size. `config` must have its crop and
// resize sizes resolved.
CropGeometry computeCropGeometry(int frameWidth, int frameHeight, const PreprocessConfig& config);

// Turns BGR frames into the model's input tensor. Each output value is computed in float32 exactly
// as ((float)v / divisor - mean[c]) / std[c] (for nearest, area and cubic via a table of the 256
// possible values per channel), so the result is bit-identical to that formula. `linear` is the
// exact fixed-point bilinear of bilinear_crop.h, computed only for the pixels the crop keeps; the
// other kernels are OpenCV's resize of the whole frame. Owns its buffers: after the first frame of
// a given size, no allocation per frame.
class Preprocessor {
public:
    explicit Preprocessor(const PreprocessConfig& config);

    // Writes 3 x cropHeight x cropWidth floats (planar, channels in the configured order) to `out`.
    // InvalidInput, with nothing written, when the frame and the configured sizes give no crop the
    // bilinear kernel can take (an empty frame, a side above BilinearCrop::kMaxSide).
    Status run(const cv::Mat& bgr, float* out) { return run(bgr, out, planeElements()); }
    // The same with channel c's plane at out + c * channelStride (a clip ring's layout, where a
    // frame's channels lie T planes apart).
    Status run(const cv::Mat& bgr, float* out, size_t channelStride);

    const PreprocessConfig& config() const { return config_; }
    size_t planeElements() const
    {
        return static_cast<size_t>(config_.cropWidth) * static_cast<size_t>(config_.cropHeight);
    }
    size_t outputElements() const { return 3u * planeElements(); }

private:
    PreprocessConfig config_;
    std::array<std::array<float, 256>, 3> table_ {}; // per output channel
    ChannelMap channels_; // the same normalisation, for the bilinear path
    BilinearCrop bilinear_; // linear interpolation: resize, crop and normalise in one pass
    cv::Mat resized_; // the other interpolations: the frame resized by OpenCV
};

// The kernel that produces a config value's pixels, named so that keys built from it (int8
// calibration data) change when the kernel does.
const char* interpolationKernel(Interpolation interpolation);

// The OpenCV interpolation flag for a config value (linear: INTER_LINEAR_EXACT, which the
// bilinear path reproduces bit for bit).
int toOpenCVInterpolation(Interpolation interpolation);

} // namespace jetagent
