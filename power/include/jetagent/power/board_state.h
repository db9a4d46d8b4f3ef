// Slow-changing board state: thermal zones (with their bogus readings reported as offline), trip
// points, GPU load and frequency, CPU and EMC clocks, soctherm throttle counters, fan, power mode.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jetagent/hal/sysfs.h"
#include "jetagent/power/board_profile.h"
#include "jetagent/power/system_load.h"

namespace jetagent {

struct TripPoint {
    std::string type; // "passive", "active", "hot", "critical"
    double celsius = 0.0;
};

struct ThermalZoneInfo {
    std::string type; // "cpu-thermal", "CPU-therm", "PMIC-Die"
    std::string directory; // "/sys/class/thermal/thermal_zone3" relative to the root
    std::vector<TripPoint> trips;
    bool shown = true; // listed in the profile's zones worth showing (all zones on unknown boards)
};

struct ZoneReading {
    bool online = false;
    double celsius = 0.0; // valid when online
    const char* offlineReason = ""; // static text: "power-gated (-256000)", "EAGAIN", "empty read"
};

// `error` value for a read that succeeded but returned no text (JetPack 6 cv zones do this).
constexpr int kThermalEmptyRead = -1;

// Classifies one raw zone read: `error` is 0, the errno of the read (any errno is offline, its name
// the reason), or kThermalEmptyRead; `milli` the value read. A value the profile lists as bad for
// this zone (or for every zone) is offline with the profile's reason and the value. The reason
// points to text that lives as long as the process.
ZoneReading classifyThermalReading(
    int error, int64_t milli, const std::string& zoneType, const BoardProfile& profile);

struct PowerModeInfo {
    int id = -1; // nvpmodel mode; -1 unknown
    std::string name; // "15W", "MAXN"; "" unknown
    std::string source; // "/var/lib/nvpmodel/status" or "" when unknown
};

// Reads /var/lib/nvpmodel/status (`pmode:0002`) and the names in /etc/nvpmodel.conf.
PowerModeInfo readPowerMode(const SysfsRoot& root);

constexpr int kMaxCpus = 64;

struct BoardStateSample {
    int64_t timeNs = 0;
    std::vector<ZoneReading> zones; // parallel to BoardStateReader::zones()
    bool haveGpu = false;
    double gpuLoadPercent = 0.0; // devfreq load / 10
    int64_t gpuFreqHz = 0;
    int cpuCount = 0; // entries valid in cpuFreqKHz
    std::array<int64_t, kMaxCpus> cpuFreqKHz {}; // scaling_cur_freq; -1 for an offline core
    int64_t emcHz = -1; // -1 when unreadable (needs root and debugfs)
    std::array<int64_t, 3> throttleEvents {-1, -1, -1}; // soctherm oc1..3_event_cnt; -1 none
    int fanPwm = -1; // 0..255; -1 no fan found
    int fanRpm = -1;
    SystemLoadSample load; // RAM, swap, largest free block, CPU and EMC load, engine clocks
};

// Finds the zones, devfreq GPU, cpufreq, EMC, soctherm_oc, fan once; reads them on demand.
class BoardStateReader {
public:
    BoardStateReader(const SysfsRoot& root, const BoardProfile& profile);
    ~BoardStateReader();
    BoardStateReader(const BoardStateReader&) = delete;
    BoardStateReader& operator=(const BoardStateReader&) = delete;

    const std::vector<ThermalZoneInfo>& zones() const;
    const std::string& gpuDevice() const; // devfreq directory, "" when none
    bool haveEmc() const;
    bool haveThrottleCounters() const;
    bool haveFan() const;
    // A core's scaling_cur_freq was found (BoardStateSample::cpuFreqKHz has readings).
    bool haveCpuFreq() const;
    // RAM, swap, CPU load, EMC load and engine clocks: what was found of them.
    const SystemLoadReader& systemLoad() const;

    // Fills `sample` (its vectors are sized once and reused). Unreadable items are marked, never
    // fatal.
    void read(int64_t nowNs, BoardStateSample& sample);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace jetagent
