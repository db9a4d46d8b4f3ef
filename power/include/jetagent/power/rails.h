// Power rails: discovery under a sysfs root and one reader per rail. Drivers: INA3221 under hwmon
// (JetPack 5+) and under the legacy iio driver (JetPack 4), single-channel INA2xx monitors under
// hwmon (Thor's carrier INA238), power_supply entries, and Intel RAPL powercap on x86 hosts.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jetagent/hal/sysfs.h"

namespace jetagent {

struct RailInfo {
    std::string name; // as the hardware labels it ("VDD_IN", "package-0"); aliases applied later
    std::string driver; // "ina3221", "ina3221x", "ina238", "power_supply", "intel-rapl"
    std::string device; // the chip or entry: "1-0040", "7-0040", "BAT0", "intel-rapl:0"
    std::string directory; // sysfs directory read, relative to the root ("/sys/class/hwmon/hwmon3")
    int channel = 0; // 1-based INA3221 channel; 0 when the device has one
    int64_t updatePeriodNs = 0; // how often the chip refreshes its reading; 0 when unknown
    std::string parent; // RAPL sub-zone: the zone it is part of ("package-0"); "" for top level
    bool hasVoltageCurrent = false; // voltage and current are read too (else power only)
    bool averaged = false; // RAPL: each reading is the mean power since the previous read
    bool inTotal = true; // summed into an estimated total; false for rails that overlap others
                         // (RAPL zones inside psys, a battery beside RAPL), set by the monitor
};

struct RailReading {
    double powerW = 0.0;
    double voltageV = 0.0; // valid when RailInfo::hasVoltageCurrent
    double currentA = 0.0;
};

class PowerRail {
public:
    virtual ~PowerRail() = default;
    PowerRail() = default;
    PowerRail(const PowerRail&) = delete;
    PowerRail& operator=(const PowerRail&) = delete;

    const RailInfo& info() const { return info_; }
    void rename(const std::string& name) { info_.name = name; }
    void excludeFromTotal() { info_.inTotal = false; }

    // Reads the rail now (`nowNs` is CLOCK_MONOTONIC, used by rails that difference an energy
    // counter). Returns 0, or a positive errno (ENODATA for an unconnected or empty channel). Never
    // allocates; cheap enough for 100 Hz.
    virtual int read(int64_t nowNs, RailReading& out) = 0;
    // Re-opens the attribute files after an error; 0 or errno.
    virtual int reopen() = 0;

protected:
    RailInfo info_;
};

struct RailDiscovery {
    std::vector<std::unique_ptr<PowerRail>> rails; // in a stable order: by driver, device, channel
    std::vector<std::string> skipped; // one line per channel left out, with the reason
                                      // ("1-0041 in1: NC", "ucsi-source-psy-1: USB-PD")
};

// Finds every rail under `root`. Globs and reads each device's `name`; never assumes hwmon or iio
// numbers. Channels labelled NC, the INA3221 shunt-sum channel and USB-PD power supplies are
// skipped (and listed in `skipped`). RAPL counters are primed here.
RailDiscovery discoverRails(const SysfsRoot& root, int64_t nowNs);

// RAPL's energy counter difference, handling one wrap at `maxRangeUj` (max_energy_range_uj).
uint64_t raplEnergyDeltaUj(uint64_t previousUj, uint64_t currentUj, uint64_t maxRangeUj);

} // namespace jetagent
