// A model's image input and the preprocessing crop: what classification and action tasks check
// when they are set up from a model.
#pragma once

#include <string>

#include "jetagent/base/status.h"
#include "tasks/task_config.h"

namespace jetagent {

struct AgentConfig;

// Fills in pre's crop from the model's image size (modelHeight x modelWidth, -1 where the model
// leaves it open) when the config left it at 0, checks a configured crop against it, and resolves
// resize_size. Errors name `key`.preprocess.crop or .resize_size. `shape` describes the model's
// input for messages.
Status resolveImageInput(const AgentConfig& agent, const std::string& key, int64_t modelHeight,
    int64_t modelWidth, const std::string& shape, PreprocessConfig& pre);

} // namespace jetagent
