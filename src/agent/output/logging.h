// Program-wide logging set-up: where log lines go and how they look.
#pragma once

#include <string>

namespace jetagent {

// Logs go to stderr: coloured with timestamps on a terminal, plain "level [subsystem] message"
// otherwise, so that journald (which stamps lines itself) and log files read well.
void setupLogging(const std::string& level);

} // namespace jetagent
