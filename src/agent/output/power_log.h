// The run's power time series, power.csv: one row per slot of power.log_interval_ms with each
// rail's and the total's average power over the slot, the thermal zones, and the GPU, CPU, EMC
// and fan state, written by the frame-log writer's thread from what the sampler holds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jetagent/power/board_state.h"
#include "output/frame_log.h"

namespace jetagent {

class PowerSampler;

// Which state columns a power log has; PowerSetup's have* flags and the board-state reader's.
struct PowerLogColumns {
    bool gpu = false; // gpu_MHz, gpu_load_pct
    bool cpu = false; // cpu_MHz: the highest online core's current frequency
    bool emc = false; // emc_MHz
    bool fan = false; // fan_rpm
    // What tegrastats prints beside them, where the board has it (power/system_load.h):
    bool memory = false; // ram_used_MB, swap_used_MB
    bool cpuLoad = false; // cpu_load_pct: the mean busy share of the cores online
    bool emcLoad = false; // emc_load_pct
    std::vector<std::string> engines; // <engine>_MHz per engine clock found, 0 when off
};

class PowerLog final : public SegmentedLog {
public:
    // `sampler` must outlive the log and be started before the first drain; `intervalNs` > 0.
    PowerLog(const PowerSampler& sampler, int64_t intervalNs, PowerLogColumns columns);

    // The header line, with its newline: time_ns,t_s,<rail>_W...,total_W,<zone>_C...,state.
    std::string header() const;
    const std::string& path() const { return csv_.firstPath; }
    uint64_t rowsWritten() const { return csv_.linesOk.load(std::memory_order_relaxed); }
    uint64_t linesDroppedDisk() const override
    {
        return csv_.linesDropped.load(std::memory_order_relaxed);
    }

private:
    // Appends the row of the slot (t0, t1] to `out`, with its newline.
    void formatRow(int64_t t0, int64_t t1, std::string& out) const;
    // Every slot the sampler has covered; with `final` (the sampler has stopped) the last partial
    // one too. While a failed write waits for its retry, slots wait in the sampler's ring instead
    // of being dropped; a failure is logged once, and the recovery.
    void drain(std::string& scratch, bool final) override;
    bool resume(int64_t nowNs);
    void close() override;
    std::vector<FrameLogFile*> files() override { return {&csv_}; }
    Status openFiles(const std::string& dir) override;

    const PowerSampler& sampler_;
    int64_t intervalNs_;
    PowerLogColumns columns_;
    std::vector<size_t> zones_; // indices of the shown zones in the state sample
    int64_t startNs_ = 0; // the sampler's first sample; 0 until known
    int64_t nextSlot_ = 0; // index of the first slot not yet written
    bool finished_ = false;
    bool warned_ = false; // a failed write was logged; the next success is logged too
    int64_t lastWriteNs_ = 0;
    mutable BoardStateSample state_; // formatRow's scratch: its zone vector is reused
    FrameLogFile csv_;
};

} // namespace jetagent
