// Turning a classifier's output into scores: softmax, exponential smoothing across frames, top-k.
#pragma once

#include "jetagent/base/status.h"
#include "run/frame_record.h"
#include "tasks/task_config.h"

#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "jetagent/base/enum_names.h"

namespace jetagent {

// Numerically stable softmax of n values (out may equal in).
void softmax(const float* in, float* out, size_t n);

// The k highest scores' indices, highest first; ties go to the lower index. k <= n. No allocation.
void topK(const float* scores, size_t n, size_t k, int* indices);

// state = (1 - weight) * scores + weight * state; the first call copies. weight 0 makes it a copy.
void smoothScores(const float* scores, float* state, size_t n, double weight, bool first);

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
nlohmann::json describePostprocess(const PostprocessConfig& p);

} // namespace jetagent
