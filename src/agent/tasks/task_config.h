// A task's options (one entry of the config's `tasks` list), read by the task types when they are
// set up.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "jetagent/base/enum_names.h"
#include "jetagent/engines/engine.h"

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

enum class OutputKind { Logits, Probabilities };
inline constexpr EnumName<OutputKind> kOutputKindNames[] = {
    {OutputKind::Logits, "logits"}, {OutputKind::Probabilities, "probabilities"}};

struct PostprocessConfig {
    OutputKind output =
        OutputKind::Logits; // logits get a softmax; probabilities are used as they are
    int topK = 5; // labels reported per frame (1..10)
    double smoothing = 0.0; // weight of the previous frames' scores, 0 = off, 0.9 = strong
};

// int8 calibration (engine.calibration): samples the engine is calibrated on, preprocessed exactly
// as the task preprocesses frames.
struct CalibrationConfig {
    std::string source; // a directory of images or a video file, resolved relative to the config
                        // file; empty = no calibration data
    int frames = 500; // samples taken (evenly spread over the source when it has more)
    int batch = 8; // samples per calibration batch
};

enum class ActionMode {
    Clip, // one model over a clip of T frames (a 3-D CNN such as r3d_18)
    Streaming, // a 2-D backbone once per frame, a temporal head over the last T embeddings
};
inline constexpr EnumName<ActionMode> kActionModeNames[] = {
    {ActionMode::Clip, "clip"}, {ActionMode::Streaming, "streaming"}};
enum class ClipLayout {
    Ncthw, // N x C x T x H x W: torchvision's video models
    Ntchw, // N x T x C x H x W
};
inline constexpr EnumName<ClipLayout> kClipLayoutNames[] = {
    {ClipLayout::Ncthw, "ncthw"}, {ClipLayout::Ntchw, "ntchw"}};

// Action recognition (type: action): how frames become clips and clips become results.
struct ActionConfig {
    ActionMode mode = ActionMode::Clip; // clip: `model` takes the clip; streaming: `model` is the
                                        // backbone and `head` the temporal head
    int clipLength = 0; // T, frames per clip; 0 = the model's (its T dimension, or the head's)
    int stride = 4; // an inference every `stride` clip frames; 1 is freshest and costliest
    int frameStep = 1; // every k-th source frame goes into the clip; a clip then spans
                       // (T-1)*k+1 source frames and the others cost nothing
    ClipLayout layout = ClipLayout::Ncthw; // clip mode: the clip model's input layout
    std::string head; // streaming mode: the temporal head's ONNX file, taking N x T x D
                      // embeddings (oldest first); resolved relative to the config file
};

struct TaskConfig {
    std::string name; // names the task's log files; defaults to the model's file name
    std::string type = "classification"; // classification, or action (video clips)
    std::string model; // ONNX file, resolved relative to the config file; for action tasks the
                       // clip model (clip mode) or the per-frame backbone (streaming mode)
    std::string labels; // one label per line, in output order; resolved relative to the config file
    double deadlineMs =
        0.0; // a frame later than this end to end is a deadline miss; 0 = the source's frame period
    // The names of the sources the task serves (`sources:`); empty = every one. One engine serves
    // them all, batching the newest frame of each.
    std::vector<std::string> streams;
    // Once a frame is there, the longest wait for the other streams' frames before a partial
    // batch runs (nvstreammux's batched-push-timeout); 0 = half the fastest stream's frame period.
    double batchTimeoutMs = 0.0;
    EngineOptions engine;
    CalibrationConfig calibration; // engine.calibration in the file
    PreprocessConfig preprocess;
    PostprocessConfig postprocess; // action tasks: smoothing is over consecutive clips
    ActionConfig action; // type: action only
};

} // namespace jetagent
