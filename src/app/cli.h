// The command line: jetagent run | bench | capture | backends | version.
#pragma once

#include <cstdint>

namespace jetagent {

// Parses the arguments and runs the command. Returns the process exit code: 0 success, 2 usage,
// configuration or input error, 1 failure while running. `mainStartNs`: monotonicNs() when main()
// began, for the start-up figures of `run`'s summary (-1: none).
int runCli(int argc, char** argv, int64_t mainStartNs = -1);

} // namespace jetagent
