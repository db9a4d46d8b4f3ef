// What tegrastats prints beside the rails: RAM and swap use, the largest free block, per-core CPU
// load, EMC load and the media/DLA engines' clocks, read under a SysfsRoot like every other reader.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jetagent/hal/sysfs.h"

namespace jetagent {

// Cores /proc/stat is read for (BoardStateSample's limit too).
constexpr int kMaxLoadCpus = 64;

// RAM and swap from /proc/meminfo, in kB as the file gives them.
struct MemoryUse {
    bool online = false; // MemTotal and MemAvailable were read; the rest is valid only then
    int64_t ramTotalKB = 0;
    int64_t ramUsedKB = 0; // MemTotal - MemAvailable: what the kernel could not hand out now
    int64_t swapTotalKB = 0; // 0 with no swap (SwapTotal missing counts as no swap)
    int64_t swapUsedKB = 0; // SwapTotal - SwapFree
};

// The largest free block from /proc/buddyinfo: the highest order any zone has a free block of,
// and how many blocks of that order are free over all zones (tegrastats' "lfb 48x4MB").
struct LargestFreeBlock {
    bool online = false;
    int64_t blockKB = 0;
    int64_t count = 0;
};

// One core's /proc/stat counters, in clock ticks since boot.
struct CpuTimes {
    bool valid = false; // the core had a line (offline cores have none)
    uint64_t busy = 0; // user + nice + system + irq + softirq + steal
    uint64_t total = 0; // busy + idle + iowait
};

// An engine's clock: on (enable count above zero) at a rate, or off.
struct EngineState {
    bool online = false; // its files were read this time
    bool on = false;
    int64_t hz = -1; // -1 when the rate could not be read
};

struct SystemLoadSample {
    MemoryUse memory;
    LargestFreeBlock largestFree;
    int cpuCount = 0; // cores seen in /proc/stat (highest number + 1)
    // Busy share of each core between this read and the previous one, 0..100; -1 unknown (the
    // first read, an offline core, counters that did not advance).
    std::array<double, kMaxLoadCpus> cpuLoadPercent {};
    double emcLoadPercent = -1.0; // -1 unknown or not exposed
    std::vector<EngineState> engines; // parallel to SystemLoadReader::engines()
};

// Parses /proc/meminfo. Returns 0, or EINVAL when MemTotal or MemAvailable is missing or damaged.
int parseMeminfo(const char* text, size_t length, MemoryUse& memory);

// Parses /proc/buddyinfo ("Node 0, zone   Normal   12 5 ... 3") with pages of `pageKB`. Returns
// 0, or EINVAL when no zone line could be read. A board with every order empty has blockKB 0.
int parseBuddyinfo(const char* text, size_t length, int64_t pageKB, LargestFreeBlock& block);

// Parses the per-core lines of /proc/stat ("cpu3 120 0 40 900 2 0 1 0 0 0") into `cores`, indexed
// by core number; cores without a line stay invalid. Returns 0, or EINVAL when no core line could
// be read. `count` is the highest core number seen + 1.
int parseProcStat(
    const char* text, size_t length, std::array<CpuTimes, kMaxLoadCpus>& cores, int& count);

// The busy share between two readings of one core, 0..100; -1 when either is invalid or the
// counters did not advance (or went back, as after a core was replugged).
double cpuLoadPercent(const CpuTimes& before, const CpuTimes& after);

// EMC load from actmon's mc_all (average memory-controller activity in kHz) and the EMC clock:
// 100 × mc_all / rate in kHz; -1 when either is unknown or the rate is 0.
double emcLoadPercent(int64_t mcAllKHz, int64_t emcHz);

// Finds /proc/meminfo, /proc/buddyinfo, /proc/stat, actmon and the engine clocks once; reads them
// on demand. Every reading that fails is marked offline or unknown in the sample, never fatal.
class SystemLoadReader {
public:
    explicit SystemLoadReader(const SysfsRoot& root);
    ~SystemLoadReader();
    SystemLoadReader(const SystemLoadReader&) = delete;
    SystemLoadReader& operator=(const SystemLoadReader&) = delete;

    bool haveMemory() const;
    bool haveLargestFree() const;
    bool haveCpuLoad() const;
    bool haveEmcLoad() const; // actmon's mc_all was found (the load also needs the EMC rate)
    // The engines whose clocks were found, in a fixed order ("nvdec", "nvenc", "nvjpg", "vic"...).
    const std::vector<std::string>& engines() const;

    // Fills `sample`; `emcHz` is the EMC clock read with the board state (-1 unknown). Reuses the
    // sample's engine vector once sized.
    void read(int64_t emcHz, SystemLoadSample& sample);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace jetagent
