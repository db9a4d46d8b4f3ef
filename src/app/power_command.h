// `jetagent power`: a tegrastats-like live view of the board's rails, temperatures, clocks and
// power mode, with CSV logging, for field measurement without running a model.
#pragma once

#include <string>

#include "jetagent/base/status.h"

namespace jetagent {

struct PowerCommandOptions {
    double intervalMs = 1000.0; // one line (and CSV row) per interval
    std::string csvPath; // "" = no CSV; an existing file is never overwritten
    double durationS = 0.0; // 0 = until Ctrl-C
    std::string sysfsRoot = "/";
    std::string board = "auto";
    double railHz = 100.0; // rail sampling rate behind the averages
    double stateHz = 2.0;
    bool list = false; // print what was found and exit
    // A built-in fixture board's tree ("orin-nano-jp6") read instead of the machine's; "list"
    // prints their names. The tree is written into fixtureDir (new or empty, kept) or, when that
    // is "", into a temporary directory removed at the end.
    std::string fixture;
    std::string fixtureDir;
    // One JSON object per line on stdout (the same readings as the CSV, offline ones null); the
    // setup and the summary go to stderr.
    bool json = false;
    // Seconds of baseline measured first, with the board at rest; each line then also gives its
    // power and energy above that baseline. 0 = none.
    double idleS = 0.0;
};

// Runs until the duration ends or SIGINT/SIGTERM. Errors: a bad root, board or fixture, an existing
// or unwritable CSV file.
Status runPowerCommand(const PowerCommandOptions& options);

} // namespace jetagent
