// The run's power time series: slots of the sampler's run turned into rows of power.csv on the
// frame-log writer's thread (never on the sampler's or a worker's).
#include "output/power_log.h"

#include <algorithm>
#include <utility>

#include "jetagent/base/clock.h"
#include "jetagent/base/log.h"
#include "jetagent/base/text.h"
#include "jetagent/power/sampler.h"

namespace jetagent {

namespace {

// Rows are formatted and written about twice a second: the writer wakes ten times a second for
// the frame logs, and a slot is not worth a write of its own.
constexpr int64_t kWritePeriodNs = 500'000'000;

// An empty cell for a value that is not known, never "nan".
void appendCell(std::string& out, bool known, double value, const char* format)
{
    out += ',';
    if (known)
        appendFormat(out, format, value);
}

} // namespace

PowerLog::PowerLog(const PowerSampler& sampler, int64_t intervalNs, PowerLogColumns columns)
    : sampler_(sampler), intervalNs_(std::max<int64_t>(intervalNs, 1)), columns_(std::move(columns))
{
    if (const BoardStateReader* reader = sampler_.stateReader()) {
        const auto& zones = reader->zones();
        for (size_t z = 0; z < zones.size(); ++z)
            if (zones[z].shown)
                zones_.push_back(z);
    }
}

std::string PowerLog::header() const
{
    std::string h = "time_ns,t_s";
    for (const RailInfo& rail : sampler_.rails())
        h += "," + csvEscape(rail.name + "_W");
    h += ",total_W";
    if (const BoardStateReader* reader = sampler_.stateReader())
        for (size_t z : zones_)
            h += "," + csvEscape(reader->zones()[z].type + "_C");
    if (columns_.gpu)
        h += ",gpu_MHz,gpu_load_pct";
    if (columns_.cpu)
        h += ",cpu_MHz";
    if (columns_.emc)
        h += ",emc_MHz";
    if (columns_.fan)
        h += ",fan_rpm";
    if (columns_.memory)
        h += ",ram_used_MB,swap_used_MB";
    if (columns_.cpuLoad)
        h += ",cpu_load_pct";
    if (columns_.emcLoad)
        h += ",emc_load_pct";
    for (const std::string& engine : columns_.engines)
        h += "," + csvEscape(engine + "_MHz");
    return h + "\n";
}

void PowerLog::formatRow(int64_t t0, int64_t t1, std::string& out) const
{
    const double seconds = nsToS(t1 - t0);
    appendFormat(out, "{},{:.6f}", t1, nsToS(t1 - startNs_));
    const int rails = static_cast<int>(sampler_.rails().size());
    for (int r = 0; r <= rails; ++r) {
        // The rails in order, then the total (-1).
        const EnergyWindow w = sampler_.energy(t0, t1, r < rails ? r : -1);
        appendCell(out, w.covered && seconds > 0.0, w.joules / seconds, "{:.4f}");
    }
    // The newest state sample taken by the end of the slot: what the board was at its end.
    BoardStateSample& s = state_;
    const bool haveState = sampler_.stateAt(t1, s);
    for (size_t z : zones_) {
        const bool online = haveState && z < s.zones.size() && s.zones[z].online;
        appendCell(out, online, online ? s.zones[z].celsius : 0.0, "{:.3f}");
    }
    if (columns_.gpu) {
        const bool gpu = haveState && s.haveGpu;
        appendCell(out, gpu && s.gpuFreqHz > 0, static_cast<double>(s.gpuFreqHz) / 1e6, "{:.3f}");
        appendCell(out, gpu, s.gpuLoadPercent, "{:.1f}");
    }
    if (columns_.cpu) {
        int64_t highestKHz = -1;
        for (int c = 0; haveState && c < s.cpuCount && c < kMaxCpus; ++c)
            highestKHz = std::max(highestKHz, s.cpuFreqKHz[static_cast<size_t>(c)]);
        appendCell(out, highestKHz > 0, static_cast<double>(highestKHz) / 1e3, "{:.3f}");
    }
    if (columns_.emc)
        appendCell(out, haveState && s.emcHz > 0, static_cast<double>(s.emcHz) / 1e6, "{:.3f}");
    if (columns_.fan)
        appendCell(out, haveState && s.fanRpm >= 0, static_cast<double>(s.fanRpm), "{:.0f}");
    const SystemLoadSample& load = s.load;
    if (columns_.memory) {
        const bool memory = haveState && load.memory.online;
        appendCell(out, memory, static_cast<double>(load.memory.ramUsedKB) / 1024.0, "{:.1f}");
        appendCell(out, memory, static_cast<double>(load.memory.swapUsedKB) / 1024.0, "{:.1f}");
    }
    if (columns_.cpuLoad) {
        double sum = 0.0;
        int cores = 0;
        for (int c = 0; haveState && c < load.cpuCount && c < kMaxLoadCpus; ++c)
            if (load.cpuLoadPercent[static_cast<size_t>(c)] >= 0.0) {
                sum += load.cpuLoadPercent[static_cast<size_t>(c)];
                ++cores;
            }
        appendCell(out, cores > 0, cores > 0 ? sum / cores : 0.0, "{:.1f}");
    }
    if (columns_.emcLoad)
        appendCell(out, haveState && load.emcLoadPercent >= 0.0, load.emcLoadPercent, "{:.1f}");
    for (size_t e = 0; e < columns_.engines.size(); ++e) {
        const bool known = haveState && e < load.engines.size() && load.engines[e].online &&
            (!load.engines[e].on || load.engines[e].hz >= 0);
        const double mhz =
            known && load.engines[e].on ? static_cast<double>(load.engines[e].hz) / 1e6 : 0.0;
        appendCell(out, known, mhz, "{:.1f}");
    }
    out += '\n';
}

Status PowerLog::openFiles(const std::string& dir)
{
    return openFirst(csv_, dir, kPowerLogStem, "csv", header());
}

void PowerLog::drain(std::string& scratch, bool final)
{
    if (!csv_.enabled() || finished_)
        return;
    const int64_t now = monotonicNs();
    if (!final && now - lastWriteNs_ < kWritePeriodNs)
        return;
    if (startNs_ == 0)
        startNs_ = sampler_.startNs();
    const int64_t latest = sampler_.latestNs();
    if (csv_.failing && !resume(now)) {
        // The slots wait in the sampler's ring (164 s by default) for the retry; at the end of
        // the run there is none, and the rows not written are counted as dropped.
        const int64_t from = startNs_ + nextSlot_ * intervalNs_;
        if (final && startNs_ > 0 && latest > from) {
            const int64_t left = (latest - from + intervalNs_ - 1) / intervalNs_;
            csv_.linesDropped.fetch_add(static_cast<uint64_t>(left), std::memory_order_relaxed);
            finished_ = true;
        }
        return;
    }
    lastWriteNs_ = now;
    if (startNs_ == 0 || latest == 0)
        return;
    const uint64_t droppedBefore = csv_.linesDropped.load(std::memory_order_relaxed);
    while (true) {
        const int64_t t0 = startNs_ + nextSlot_ * intervalNs_;
        int64_t t1 = t0 + intervalNs_;
        if (t1 > latest) {
            // The last partial slot, once the sampler has taken its last sample.
            if (!final || latest <= t0)
                break;
            t1 = latest;
            finished_ = true;
        }
        scratch.clear();
        formatRow(t0, t1, scratch);
        append(csv_, scratch, now);
        ++nextSlot_;
        if (csv_.failing || finished_)
            break;
    }
    if (!csv_.failing)
        writePending(csv_);
    // Rows a failed write dropped are always the last ones formatted: they are formatted again
    // after the retry, from the sampler's ring, unless the run is ending.
    const uint64_t dropped = csv_.linesDropped.load(std::memory_order_relaxed) - droppedBefore;
    if (dropped > 0 && !final) {
        nextSlot_ -= static_cast<int64_t>(dropped);
        finished_ = false;
        csv_.linesDropped.fetch_sub(dropped, std::memory_order_relaxed);
    }
    if (csv_.failing && !warned_) {
        logger("log")->warn("{}: write failed: {}; the power rows wait and are written when a "
                            "write succeeds again (rows older than the sampler's ring lose their "
                            "power figures)",
            csv_.segmentPath(csv_.index), errnoText(lastWriteErrno()));
        warned_ = true;
    }
}

// A failing file: a new segment once the retry time has come. True when rows may be written.
bool PowerLog::resume(int64_t nowNs)
{
    if (nowNs < csv_.retryAtNs || !openSegment(csv_))
        return false;
    if (warned_)
        logger("log")->info("{}: writing again after a failed write", csv_.segmentPath(csv_.index));
    warned_ = false;
    applyCap();
    return true;
}

void PowerLog::close()
{
    if (!csv_.enabled())
        return;
    writePending(csv_);
    closeSegment(csv_);
}

} // namespace jetagent
