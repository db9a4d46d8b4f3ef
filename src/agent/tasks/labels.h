// A task's labels: the labels file, and its match against the model's classes and the source's
// class names.
#pragma once

#include <string>
#include <vector>

#include "jetagent/base/status.h"
#include "jetagent/engines/tensor.h"
#include "jetagent/hal/frame_source.h"

namespace jetagent {

struct AgentConfig;

// Reads a labels file: one label per line, in the model's output order. Trailing blank lines and
// carriage returns are ignored; an empty file is an error.
Expected<std::vector<std::string>> loadLabels(const std::string& path);

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

} // namespace jetagent
