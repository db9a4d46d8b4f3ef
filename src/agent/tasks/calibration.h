// int8 calibration samples from engine.calibration: a directory of images or a video file, read
// through the same frame sources and preprocessed by the same Preprocessor as inference, so the
// ranges TensorRT calibrates on are the ranges the engine sees at run time.
#pragma once

#include "tasks/task_config.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "jetagent/engines/engine.h"
#include "tasks/preprocess.h"

namespace jetagent {

// Names a key of the calibration section in errors, given "source" or "frames":
// "demo.yaml:14: tasks[0].engine.calibration.source".
using CalibrationKeyNamer = std::function<std::string(const std::string& key)>;

// The source frame indices taken when `wanted` samples are taken from `available`: all of them
// when there are not more, otherwise `wanted` indices spread evenly from the first frame on
// (index i * available / wanted), ascending.
std::vector<int64_t> spreadIndices(int64_t available, int64_t wanted);

// Calibration data for a task whose preprocessing `resolved` has its crop and resize size
// resolved from the model (resolveImageInput). The source is opened and listed here (a missing or
// empty directory, or a video that cannot be decoded, is an error naming the source key; fewer
// samples than one batch names the frames or source key); samples are decoded batch by batch in
// nextBatch(), so only one batch is ever held in memory.
Expected<std::shared_ptr<CalibrationData>> makeCalibrationData(const CalibrationConfig& config,
    const PreprocessConfig& resolved, const CalibrationKeyNamer& where);

// How an action (clip) model takes its frames.
struct ClipSamples {
    int length = 0; // frames per clip; 0: samples are single frames
    int frameStep = 1; // every frameStep-th frame of the source
    bool ncthw = true; // sample layout 3 x T x H x W; false: T x 3 x H x W
};

// The same for a clip model: each sample is a clip of `clip.length` consecutive frames (every
// `clip.frameStep`-th), the clips spread over the source without overlapping; `frames` counts
// frames, so a clip model calibrates on frames / length clips.
Expected<std::shared_ptr<CalibrationData>> makeClipCalibrationData(const CalibrationConfig& config,
    const PreprocessConfig& resolved, const ClipSamples& clip, const CalibrationKeyNamer& where);

} // namespace jetagent
