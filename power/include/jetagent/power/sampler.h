// The power sampler: its own thread reads the rails at a fast rate (default 100 Hz) into a ring
// of timestamped samples and the board state (thermal, clocks, throttling, fan) at a slow rate
// (default 2 Hz). Readers ask for the energy of any time window and for run statistics.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "jetagent/base/status.h"
#include "jetagent/power/board_state.h"
#include "jetagent/power/energy.h"
#include "jetagent/power/rails.h"

namespace jetagent {

constexpr int kMaxRails = 16;

struct PowerSamplerOptions {
    double railHz = 100.0; // rail reads per second; above the chip's refresh rate repeats readings
    double stateHz = 2.0; // thermal/clock/fan reads per second; each costs a few dozen file reads
    size_t ringCapacity = 16384; // rail samples kept for energy queries (164 s at 100 Hz)
    size_t stateHistory = 64; // board-state samples kept for stateAt() (32 s at 2 Hz); >= 1
};

// One rail sample: every rail read at (about) the same instant.
struct PowerSample {
    int64_t timeNs = 0; // CLOCK_MONOTONIC, taken after the reads
    float totalW = 0.0f; // the total rail, or the sum of top-level rails (see totalIsEstimate)
    std::array<float, kMaxRails> railW {};
    uint32_t onlineMask = 0; // bit r: rail r read successfully in this sample
};

// PowerSample::onlineMask bit set when totalW is valid: the total rail, or for the estimate every
// top-level rail, read successfully in that sample.
constexpr uint32_t kTotalOnlineBit = 1u << 31;
static_assert(kMaxRails < 31, "rail bits and the total bit share onlineMask");

struct RailRunStats {
    std::string name;
    double averageW = 0.0; // energy / time: a true time average, not an exponential decay
    double peakW = 0.0;
    double energyJ = 0.0;
    uint64_t samples = 0; // successful reads
    uint64_t errors = 0; // failed reads
    bool offline = false; // offline at the end of the run
    std::string lastError; // "ENODATA" etc. when a read failed
};

struct ZoneRunStats {
    std::string type;
    bool everOnline = false;
    double startC = 0.0, endC = 0.0, peakC = 0.0; // valid when everOnline
    std::string offlineReason; // last reason when it was never online
};

// A load figure over the run's state samples: mean and peak of the samples that knew it.
struct LoadSeries {
    uint64_t samples = 0;
    double sum = 0.0;
    double peak = 0.0;
    void add(double v)
    {
        peak = samples == 0 ? v : std::max(peak, v);
        sum += v;
        ++samples;
    }
    double mean() const { return samples > 0 ? sum / static_cast<double>(samples) : 0.0; }
};

// What tegrastats prints beside the rails, over the run (the board-state samples, state_hz).
struct LoadRunStats {
    bool haveMemory = false; // /proc/meminfo was read at least once
    int64_t ramTotalKB = 0, ramUsedPeakKB = 0, swapTotalKB = 0, swapUsedPeakKB = 0;
    LoadSeries cpu; // the mean busy share of the online cores, per sample, in percent
    LoadSeries emc; // EMC load (actmon), percent
    LoadSeries gpu; // GPU load (devfreq), percent
};

struct PowerRunStats {
    int64_t startNs = 0, endNs = 0;
    std::vector<RailRunStats> rails;
    RailRunStats total; // name: the total rail, or "sum of rails"
    bool totalIsEstimate = false;
    std::vector<ZoneRunStats> zones; // shown zones only
    std::array<int64_t, 3> throttleEvents {-1, -1, -1}; // soctherm oc1..3 events during the run
    BoardStateSample first, last; // state at start and end (clocks, fan, GPU)
    LoadRunStats load;
    uint64_t railSamples = 0;
    uint64_t overruns = 0; // rail periods missed because a sample took too long
    double samplerCpuS = 0.0; // the sampler thread's own CPU time: the measurement's overhead
};

class PowerSampler {
public:
    // `totalRail` names the rail that is the total input power; "" sums the top-level rails (those
    // without a parent) and marks the total an estimate. At most kMaxRails rails are sampled.
    PowerSampler(std::vector<std::unique_ptr<PowerRail>> rails, std::string totalRail,
        std::unique_ptr<BoardStateReader> state, PowerSamplerOptions options);
    ~PowerSampler(); // stops
    PowerSampler(const PowerSampler&) = delete;
    PowerSampler& operator=(const PowerSampler&) = delete;

    // Checks the options and starts the thread. Warns (logger "power") when railHz is faster than
    // a rail's update period. Error: bad rates or capacity, naming the option.
    Status start();
    // Takes a last sample so windows ending now are covered, then joins. Safe to call twice.
    void stop();

    const std::vector<RailInfo>& rails() const { return infos_; }
    const std::string& totalName() const { return totalName_; }
    bool totalIsEstimate() const { return totalIndex_ < 0; }
    bool haveRails() const { return !infos_.empty(); }
    // The longest update period among the rails (0 when unknown): windows shorter than this are
    // flagged.
    int64_t updatePeriodNs() const { return updatePeriodNs_; }
    const BoardStateReader* stateReader() const { return state_.get(); }

    // Time of the newest rail sample (0 before the first). A window ending at or before it can be
    // integrated.
    int64_t latestNs() const { return latestNs_.load(std::memory_order_acquire); }
    // Time of the first rail sample: the run's start for time series (0 before it).
    int64_t startNs() const;
    // Energy of rail `rail` (-1 = the total) over [t0, t1]; not covered when the ring no longer or
    // not yet holds the window.
    // Samples in which the rail was offline are skipped (the curve is interpolated across them);
    // the estimated total is the sum of its rails' energies, covered when all of theirs are.
    EnergyWindow energy(int64_t t0, int64_t t1, int rail = -1) const;
    // Copies of the newest samples; false when none yet.
    bool latest(PowerSample& out) const;
    bool latestState(BoardStateSample& out) const;
    // A copy of the newest board-state sample taken at or before `timeNs`, from the last
    // options.stateHistory samples; false when none of those is that old (or none yet).
    bool stateAt(int64_t timeNs, BoardStateSample& out) const;
    // Statistics from start() until now (or stop()).
    PowerRunStats runStats() const;

private:
    void run(); // the sampler thread
    void takeRailSample();
    void takeStateSample();

    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::vector<RailInfo> infos_;
    std::string totalName_;
    int totalIndex_ = -1;
    int64_t updatePeriodNs_ = 0;
    std::unique_ptr<BoardStateReader> state_;
    std::atomic<int64_t> latestNs_ {0};
};

} // namespace jetagent
