// The one-line states a run prints: the console's status line per task and the line systemd
// shows in `systemctl status`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "run/recorder.h"
#include "run/task.h"

namespace jetagent {

// "NAME: frame N -> LABEL SCORE (truth T) | e2e MS | FPS | N frames | top-1 P%".
std::string statusLine(
    const std::string& name, const LiveView& v, const std::vector<std::string>& labels, double fps);

// The source (passwords hidden) and each task's rate, last latency and frame count.
std::string serviceStatus(const AgentConfig& config, const Recorder& recorder,
    const std::vector<std::unique_ptr<Task>>& tasks, const std::vector<double>& fps);

} // namespace jetagent
