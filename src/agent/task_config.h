// A task's options (one entry of the config's `tasks` list), read by the task types when they are
// set up.
#pragma once

#include <string>

#include "calibration.h"
#include "jetagent/base/enum_names.h"
#include "jetagent/engines/engine.h"
#include "preprocess.h"
#include "scores.h"

namespace jetagent {

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
    EngineOptions engine;
    CalibrationConfig calibration; // engine.calibration in the file
    PreprocessConfig preprocess;
    PostprocessConfig postprocess; // action tasks: smoothing is over consecutive clips
    ActionConfig action; // type: action only
};

} // namespace jetagent
