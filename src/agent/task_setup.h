// What classification and action tasks share when they are set up from a model (the size of its
// image input, its classes and labels) and when they turn its output into a result.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frame_record.h"
#include "jetagent/engines/tensor.h"
#include "jetagent/hal/frame_source.h"
#include "task_config.h"

namespace jetagent {

struct AgentConfig;

// Fills in pre's crop from the model's image size (modelHeight x modelWidth, -1 where the model
// leaves it open) when the config left it at 0, checks a configured crop against it, and resolves
// resize_size. Errors name `key`.preprocess.crop or .resize_size. `shape` describes the model's
// input for messages.
Status resolveImageInput(const AgentConfig& agent, const std::string& key, int64_t modelHeight,
    int64_t modelWidth, const std::string& shape, PreprocessConfig& pre);

// A task's classes: the labels it reports and which of them each of the source's classes is.
struct TaskLabels {
    std::vector<std::string> labels; // one per model output; class0.. when no file was given
    std::vector<int> truthToLabel; // source class index -> label index, -1 when not among them
};

// Reads the labels file of task `index` (if any), checks it against `output` (the model's
// classification output, N x classes; its classes may be open when the labels give them), checks
// top_k, and matches the source's class names. Errors name `key`.labels or .postprocess.top_k.
Expected<TaskLabels> setupLabels(const AgentConfig& agent, size_t index, const std::string& key,
    const TensorInfo* output, const SourceInfo& source);

// Turns one row of `classes` model outputs into the record's top-k: softmax when the model gives
// logits, exponential smoothing with `smoothed` (whose history `first` says is empty), top-k.
// `probabilities` and `smoothed` hold `classes` floats. No allocation. A row holding NaN or
// infinity has no meaningful scores: the record is marked failed (FrameFailure::NonFiniteOutput),
// the smoothing history is left as it was, and false is returned.
// The error of a frame whose scores held NaN or infinity (see scoreRow).
Status nonFiniteOutput(const std::string& model, uint64_t frameId);

bool scoreRow(const float* row, size_t classes, const PostprocessConfig& post, float* probabilities,
    float* smoothed, bool& first, FrameRecord& record);

// The settings as they are in effect, for the run summary.
nlohmann::json describePreprocess(const PreprocessConfig& p);
nlohmann::json describePostprocess(const PostprocessConfig& p);

} // namespace jetagent
