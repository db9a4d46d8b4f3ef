// Classification preprocessing: resize and crop as torchvision evaluates, then normalise into NCHW
// float.
#pragma once

#include "tasks/task_config.h"

#include <array>

#include <nlohmann/json.hpp>

#include "jetagent/base/enum_names.h"
#include "jetagent/hal/image_resize.h"
#include "tasks/bilinear_crop.h"

namespace jetagent {

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
    Status run(const Image& bgr, float* out) { return run(bgr, out, planeElements()); }
    // The same with channel c's plane at out + c * channelStride (a clip ring's layout, where a
    // frame's channels lie T planes apart).
    Status run(const Image& bgr, float* out, size_t channelStride);

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
    ImageResizer resizer_;
    Image resized_; // the other interpolations: the whole frame resized
};

// The kernel that produces a config value's pixels, named so that keys built from it (int8
// calibration data) change when the kernel does.
const char* interpolationKernel(Interpolation interpolation);

// The settings as they are in effect, for the run summary.
nlohmann::json describePreprocess(const PreprocessConfig& p);

} // namespace jetagent
