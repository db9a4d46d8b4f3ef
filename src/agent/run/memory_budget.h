// The memory a run's plan needs, checked at start-up against run.memory_budget_mb.
#pragma once

#include <cstddef>
#include <vector>

#include "config/config.h"
#include "run/task.h"

namespace jetagent {

// Everything a config needs before its first frame, opened from nothing: the start-up.
// The most memory the run can take in frames in flight (each a BGR frame of the source's size) and
// statistics, against run.memory_budget_mb (0: three quarters of the machine's memory). Refused at
// start-up, naming the keys, rather than an allocation that fails in a worker an hour into the run.
Status checkMemoryBudget(const AgentConfig& config, const std::vector<SourceInfo>& sources,
    const std::vector<const Task*>& tasks, size_t viewFrames, bool hasView);

} // namespace jetagent
