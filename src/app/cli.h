// The command line: jetagent run | bench | capture | backends | version.
#pragma once

namespace jetagent {

// Parses the arguments and runs the command. Returns the process exit code: 0 success, 2 usage,
// configuration or input error, 1 failure while running.
int runCli(int argc, char** argv);

} // namespace jetagent
