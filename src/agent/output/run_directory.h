// A run's directory under logging.dir, and the copy of its config kept there.
#pragma once

#include <string>

#include "config/config.h"
#include "jetagent/base/status.h"

namespace jetagent {

// Creates BASE/PREFIX<UTC stamp> (with -2, -3, ... when taken), never reusing an existing one.
Expected<std::string> createRunDirectory(const std::string& base, const std::string& prefix);

// Copies the config file into the run directory as config.yaml, readable by its owner only; a
// failure is a warning, never the run's end.
void keepConfigCopy(const AgentConfig& config, const std::string& runDirectory);

} // namespace jetagent
