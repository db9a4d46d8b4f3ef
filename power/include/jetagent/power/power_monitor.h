// Everything power/ offers, assembled for one board: identity, its profile, the discovered rails
// (aliases applied, the total chosen), the board-state reader and the sampler thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "jetagent/base/status.h"
#include "jetagent/hal/board_identity.h"
#include "jetagent/power/board_profile.h"
#include "jetagent/power/board_state.h"
#include "jetagent/power/sampler.h"

namespace jetagent {

struct PowerMonitorOptions {
    std::string sysfsRoot = "/"; // where /sys, /proc and /etc are read; a fixture tree in tests
    std::string board = "auto"; // auto, a built-in profile id, or a profile YAML file
    PowerSamplerOptions sampler;
};

// What was found, for logs, `jetagent power` and the run summary.
struct PowerSetup {
    std::string sysfsRoot; // as given
    BoardIdentity identity;
    BoardSelection board;
    std::vector<RailInfo> rails; // sampled rails, in sampler order, aliases applied
    std::vector<std::string> skipped; // channels discovery left out, with reasons
    std::vector<std::string> missingRails; // the profile expects them, discovery did not find them
    std::string totalName; // the total rail, or "sum of rails"
    bool totalIsEstimate = true;
    std::string totalNote; // why the total is what it is
    size_t thermalZones = 0; // zones found (shown or not)
    PowerModeInfo powerMode;
    bool haveGpu = false, haveEmc = false, haveThrottleCounters = false, haveFan = false;

    // One line per fact, for logs and `jetagent power`: board, profile, rails, total, zones,
    // what is missing.
    std::vector<std::string> describe() const;
};

class PowerMonitor {
public:
    // Reads the identity, selects the profile and discovers sensors under the root. Errors: the
    // root is not a directory (NotFound), `board` names no profile or a bad file (InvalidInput).
    // A board without rails is not an error: the setup says what is missing.
    static Expected<std::unique_ptr<PowerMonitor>> open(const PowerMonitorOptions& options);

    const PowerSetup& setup() const { return setup_; }
    PowerSampler& sampler() { return *sampler_; }
    const PowerSampler& sampler() const { return *sampler_; }

private:
    PowerMonitor() = default;
    PowerSetup setup_;
    std::unique_ptr<PowerSampler> sampler_;
};

// "5.231 W VDD_IN, 48.5 C (tj-thermal)": the latest total rail power and the hottest shown thermal
// zone, for status lines and the demo's overlay; "" when nothing is known yet.
std::string powerStatusText(const PowerMonitor& power);

} // namespace jetagent
