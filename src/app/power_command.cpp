// `jetagent power`: live rails, temperatures, clocks and power mode, with CSV logging.
#include "power_command.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "jetagent/base/clock.h"
#include "jetagent/base/text.h"
#include "jetagent/fixtures/fixture_boards.h"
#include "jetagent/power/power_monitor.h"
#include "service/stop_signals.h"

namespace jetagent {

namespace {

std::string csvName(const std::string& name)
{
    std::string out;
    for (char c : name)
        out += (c == ',' || c == '"' || c == ' ' || c == '\n') ? '_' : c;
    return out;
}

// The wall clock in ISO 8601 with the local zone's offset: "2026-11-27T03:35:12.345+00:00".
std::string wallTimeIso8601()
{
    timespec ts {};
    clock_gettime(CLOCK_REALTIME, &ts);
    tm local {};
    localtime_r(&ts.tv_sec, &local);
    char date[32];
    char zone[8];
    if (std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &local) == 0 ||
        std::strftime(zone, sizeof zone, "%z", &local) != 5)
        return "";
    // strftime's %z is "+0000"; ISO 8601's extended form wants "+00:00".
    return fmt::format("{}.{:03d}{:.3}:{}", date, ts.tv_nsec / 1'000'000, zone, zone + 3);
}

// `value` with a difference that rounds to zero at `decimals` shown as 0, not "-0".
double unsignedZero(double value, int decimals)
{
    return std::fabs(value) < 0.5 * std::pow(10.0, -decimals) ? 0.0 : value;
}

// The baseline measured with --idle.
struct IdleBaseline {
    bool measured = false;
    double seconds = 0.0;
    double totalW = 0.0; // the total's (or the estimate's) true time average over the phase
};

// One line's readings, column by column, in the order of the CSV header; the CSV row and the JSON
// object are both written from it, so they cannot disagree.
class Record {
public:
    void clear()
    {
        names_.clear();
        cells_.clear();
    }
    void number(const std::string& name, bool present, double value, int decimals)
    {
        Cell cell;
        cell.kind = present && std::isfinite(value) ? Cell::Kind::Number : Cell::Kind::Null;
        cell.number = unsignedZero(value, decimals);
        cell.decimals = decimals;
        add(name, std::move(cell));
    }
    void integer(const std::string& name, bool present, int64_t value)
    {
        Cell cell;
        cell.kind = present ? Cell::Kind::Integer : Cell::Kind::Null;
        cell.integer = value;
        add(name, std::move(cell));
    }
    void flag(const std::string& name, bool present, bool value)
    {
        Cell cell;
        cell.kind = present ? Cell::Kind::Flag : Cell::Kind::Null;
        cell.integer = value ? 1 : 0;
        add(name, std::move(cell));
    }
    void text(const std::string& name, std::string value)
    {
        Cell cell;
        cell.kind = value.empty() ? Cell::Kind::Null : Cell::Kind::Text;
        cell.text = std::move(value);
        add(name, std::move(cell));
    }

    std::string csvHeader() const
    {
        std::string h;
        for (const std::string& name : names_)
            h += (h.empty() ? "" : ",") + csvName(name);
        return h;
    }
    // Empty cells for readings that are offline; a flag as 0 or 1.
    std::string csvRow() const
    {
        std::string row;
        for (size_t i = 0; i < cells_.size(); ++i) {
            if (i > 0)
                row += ',';
            const Cell& c = cells_[i];
            switch (c.kind) {
            case Cell::Kind::Null: break;
            case Cell::Kind::Number: appendFormat(row, "{:.{}f}", c.number, c.decimals); break;
            case Cell::Kind::Integer:
            case Cell::Kind::Flag: appendFormat(row, "{}", c.integer); break;
            case Cell::Kind::Text: row += csvEscape(c.text); break;
            }
        }
        return row;
    }
    // One JSON object on one line, keys in column order, offline readings null.
    std::string json() const
    {
        nlohmann::ordered_json object = nlohmann::ordered_json::object();
        for (size_t i = 0; i < cells_.size(); ++i) {
            const Cell& c = cells_[i];
            nlohmann::ordered_json& value = object[names_[i]];
            switch (c.kind) {
            case Cell::Kind::Null: value = nullptr; break;
            case Cell::Kind::Number: {
                // Rounded as the CSV is, so the two files agree to the digit.
                const double scale = std::pow(10.0, c.decimals);
                value = std::round(c.number * scale) / scale;
                break;
            }
            case Cell::Kind::Integer: value = c.integer; break;
            case Cell::Kind::Flag: value = c.integer != 0; break;
            case Cell::Kind::Text: value = c.text; break;
            }
        }
        return object.dump();
    }

private:
    struct Cell {
        enum class Kind { Null, Number, Integer, Flag, Text } kind = Kind::Null;
        double number = 0.0;
        int decimals = 0;
        int64_t integer = 0;
        std::string text;
    };
    void add(const std::string& name, Cell cell)
    {
        names_.push_back(name);
        cells_.push_back(std::move(cell));
    }

    std::vector<std::string> names_;
    std::vector<Cell> cells_;
};

std::string upper(std::string text)
{
    for (char& c : text)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return text;
}

class PowerView {
public:
    PowerView(const PowerMonitor& monitor, IdleBaseline idle) : monitor_(monitor), idle_(idle) { }

    // One interval: the live line and the record behind the CSV row and the JSON object. The
    // columns depend only on what the board was found to have (and, for the cores, on the first
    // state sample), so every record of a run has the same ones.
    void render(int64_t startNs, std::string& line, Record& record)
    {
        const PowerSampler& sampler = monitor_.sampler();
        const int64_t now = monotonicNs();
        line.clear();
        record.clear();
        appendFormat(line, "[{:8.1f}s]", nsToS(now - startNs));
        record.number("time_s", true, nsToS(now - startNs), 3);
        record.integer("monotonic_ns", true, now);
        record.text("wall_time", wallTimeIso8601());

        renderRails(line, record);
        if (const BoardStateReader* reader = sampler.stateReader()) {
            BoardStateSample state;
            const bool haveState = sampler.latestState(state);
            renderZones(*reader, haveState, state, line, record);
            renderClocks(*reader, haveState, state, line, record);
            renderMemory(*reader, haveState, state, line, record);
            renderEngines(*reader, haveState, state, line, record);
        }
        const PowerSetup& setup = monitor_.setup();
        if (setup.powerMode.id >= 0) {
            appendFormat(line, " | mode {}", setup.powerMode.id);
            if (!setup.powerMode.name.empty())
                appendFormat(line, " ({})", setup.powerMode.name);
        }
        record.integer("power_mode", setup.powerMode.id >= 0, setup.powerMode.id);
    }

private:
    void renderRails(std::string& line, Record& record) const
    {
        const PowerSampler& sampler = monitor_.sampler();
        PowerSample sample;
        const bool haveSample = sampler.latest(sample);
        const PowerRunStats stats = sampler.runStats();
        auto railCells = [&](const std::string& name, const std::string& column, bool online,
                             double watts, double avg) {
            if (online)
                appendFormat(line, " {} {:.0f}mW/{:.0f}mW", name, watts * 1e3, avg * 1e3);
            else
                appendFormat(line, " {} off/{:.0f}mW", name, avg * 1e3);
            record.number(column + "_W", online, watts, 4);
            record.number(column + "_avg_W", true, avg, 4);
        };
        const auto& rails = sampler.rails();
        for (size_t i = 0; i < rails.size(); ++i) {
            const bool online = haveSample && (sample.onlineMask >> i & 1u);
            const double avg = i < stats.rails.size() ? stats.rails[i].averageW : 0.0;
            railCells(rails[i].name, rails[i].name, online, online ? sample.railW[i] : 0.0, avg);
        }
        if (!sampler.haveRails()) {
            line += " no rails";
            return;
        }
        line += " |";
        const bool totalOnline = haveSample && (sample.onlineMask & kTotalOnlineBit) != 0;
        railCells(sampler.totalIsEstimate() ? "total(est.)" : "total",
            sampler.totalIsEstimate() ? "total_estimate" : "total", haveSample, sample.totalW,
            stats.total.averageW);
        if (idle_.measured) {
            const double elapsed = nsToS(stats.endNs - stats.startNs);
            const double aboveAvg = stats.total.averageW - idle_.totalW;
            appendFormat(line, " above idle {:.0f}mW/{:.0f}mW {:.2f}J",
                unsignedZero((sample.totalW - idle_.totalW) * 1e3, 0),
                unsignedZero(aboveAvg * 1e3, 0), unsignedZero(aboveAvg * elapsed, 2));
            record.number("idle_W", true, idle_.totalW, 4);
            record.number(
                "above_idle_W", haveSample && totalOnline, sample.totalW - idle_.totalW, 4);
            record.number("above_idle_avg_W", true, aboveAvg, 4);
            record.number("energy_above_idle_J", true, aboveAvg * elapsed, 4);
        }
    }

    static void renderZones(const BoardStateReader& reader, bool haveState,
        const BoardStateSample& state, std::string& line, Record& record)
    {
        const auto& zones = reader.zones();
        if (std::any_of(zones.begin(), zones.end(), [](const auto& z) { return z.shown; }))
            line += " |"; // no empty section on a host without zones worth showing
        for (size_t i = 0; i < zones.size(); ++i) {
            const bool online = haveState && i < state.zones.size() && state.zones[i].online;
            if (zones[i].shown) {
                if (online)
                    appendFormat(line, " {}@{:.1f}C", zones[i].type, state.zones[i].celsius);
                else
                    appendFormat(line, " {}@off", zones[i].type);
            }
            record.number(zones[i].type + "_C", online, online ? state.zones[i].celsius : 0.0, 2);
        }
    }

    void renderClocks(const BoardStateReader& reader, bool haveState, const BoardStateSample& state,
        std::string& line, Record& record)
    {
        const bool gpu = haveState && state.haveGpu;
        if (gpu)
            appendFormat(line, " | GPU {:.0f}%@{:.0f}MHz", state.gpuLoadPercent,
                static_cast<double>(state.gpuFreqHz) / 1e6);
        record.number("gpu_load_percent", gpu, state.gpuLoadPercent, 1);
        record.number("gpu_freq_MHz", gpu, static_cast<double>(state.gpuFreqHz) / 1e6, 1);

        const SystemLoadSample& load = state.load;
        const int cores = haveState ? std::max(state.cpuCount, load.cpuCount) : 0;
        if (cores > 0) {
            // tegrastats' form: each core's load at its clock, "off" for a core that is offline.
            line += " | CPU [";
            bool anyClock = false;
            for (int c = 0; c < cores; ++c) {
                const auto i = static_cast<size_t>(c);
                const int64_t khz = c < state.cpuCount ? state.cpuFreqKHz[i] : -1;
                const double percent = c < load.cpuCount ? load.cpuLoadPercent[i] : -1.0;
                line += c ? "," : "";
                anyClock = anyClock || khz >= 0;
                if (khz < 0 && percent < 0)
                    line += "off";
                else if (percent >= 0 && khz >= 0)
                    appendFormat(line, "{:.0f}%@{}", percent, khz / 1000);
                else if (percent >= 0)
                    appendFormat(line, "{:.0f}%", percent);
                else
                    appendFormat(line, "{}", khz / 1000);
            }
            line += anyClock ? "] MHz" : "]"; // loads alone where no core's clock is known
        }
        const bool haveLoad = reader.systemLoad().haveCpuLoad();
        for (int c = 0; c < cpuCount(); ++c) {
            const auto i = static_cast<size_t>(c);
            const int64_t khz = haveState && c < state.cpuCount ? state.cpuFreqKHz[i] : -1;
            record.number(
                "cpu" + std::to_string(c) + "_MHz", khz >= 0, static_cast<double>(khz) / 1e3, 1);
            if (haveLoad) {
                const double percent =
                    haveState && c < load.cpuCount ? load.cpuLoadPercent[i] : -1.0;
                record.number(
                    "cpu" + std::to_string(c) + "_load_percent", percent >= 0, percent, 1);
            }
        }

        const bool emc = haveState && state.emcHz >= 0;
        const bool emcLoad = haveState && load.emcLoadPercent >= 0;
        if (emc && emcLoad)
            appendFormat(line, " | EMC {:.0f}%@{:.0f}MHz", load.emcLoadPercent,
                static_cast<double>(state.emcHz) / 1e6);
        else if (emc)
            appendFormat(line, " | EMC {:.0f}MHz", static_cast<double>(state.emcHz) / 1e6);
        record.number("emc_MHz", emc, static_cast<double>(state.emcHz) / 1e6, 1);
        if (reader.systemLoad().haveEmcLoad())
            record.number("emc_load_percent", emcLoad, load.emcLoadPercent, 1);

        const bool pwm = haveState && state.fanPwm >= 0;
        const bool rpm = haveState && state.fanRpm >= 0;
        if (pwm || rpm) {
            line += " | fan";
            if (pwm)
                appendFormat(line, " {}/255", state.fanPwm);
            if (rpm)
                appendFormat(line, " {}rpm", state.fanRpm);
        }
        record.integer("fan_pwm", pwm, state.fanPwm);
        record.integer("fan_rpm", rpm, state.fanRpm);
    }

    static void renderMemory(const BoardStateReader& reader, bool haveState,
        const BoardStateSample& state, std::string& line, Record& record)
    {
        const SystemLoadReader& found = reader.systemLoad();
        const MemoryUse& m = state.load.memory;
        const LargestFreeBlock& lfb = state.load.largestFree;
        const bool memory = haveState && m.online;
        const bool largest = haveState && lfb.online;
        if (memory) {
            // As tegrastats: "RAM 2101/3964MB (lfb 48x4MB) SWAP 0/1982MB".
            appendFormat(line, " | RAM {}/{}MB", m.ramUsedKB / 1024, m.ramTotalKB / 1024);
            if (largest && lfb.blockKB >= 1024)
                appendFormat(line, " (lfb {}x{}MB)", lfb.count, lfb.blockKB / 1024);
            else if (largest)
                appendFormat(line, " (lfb {}x{}kB)", lfb.count, lfb.blockKB);
            appendFormat(line, " SWAP {}/{}MB", m.swapUsedKB / 1024, m.swapTotalKB / 1024);
        }
        if (found.haveMemory()) {
            record.integer("ram_used_kB", memory, m.ramUsedKB);
            record.integer("ram_total_kB", memory, m.ramTotalKB);
            record.integer("swap_used_kB", memory, m.swapUsedKB);
            record.integer("swap_total_kB", memory, m.swapTotalKB);
        }
        if (found.haveLargestFree()) {
            record.integer("lfb_blocks", largest, lfb.count);
            record.integer("lfb_block_kB", largest, lfb.blockKB);
        }
    }

    static void renderEngines(const BoardStateReader& reader, bool haveState,
        const BoardStateSample& state, std::string& line, Record& record)
    {
        const auto& names = reader.systemLoad().engines();
        for (size_t i = 0; i < names.size(); ++i) {
            const bool online =
                haveState && i < state.load.engines.size() && state.load.engines[i].online;
            const EngineState e = online ? state.load.engines[i] : EngineState {};
            line += i == 0 ? " |" : "";
            if (!online)
                appendFormat(line, " {} ?", upper(names[i]));
            else if (e.on && e.hz >= 0)
                appendFormat(
                    line, " {} {:.0f}MHz", upper(names[i]), static_cast<double>(e.hz) / 1e6);
            else if (e.on)
                appendFormat(line, " {} on", upper(names[i]));
            else
                appendFormat(line, " {} off", upper(names[i]));
            record.flag(names[i] + "_on", online, e.on);
            record.number(
                names[i] + "_MHz", online && e.on && e.hz >= 0, static_cast<double>(e.hz) / 1e6, 1);
        }
    }

    // CPU columns are fixed by the first state sample, so every CSV row has the same columns.
    int cpuCount() const
    {
        if (cpuCount_ < 0) {
            BoardStateSample state;
            cpuCount_ = monitor_.sampler().latestState(state)
                ? std::max(state.cpuCount, state.load.cpuCount)
                : 0;
        }
        return cpuCount_;
    }

    const PowerMonitor& monitor_;
    IdleBaseline idle_;
    mutable int cpuCount_ = -1;
};

std::string summaryOf(const PowerMonitor& monitor, const IdleBaseline& idle)
{
    const PowerRunStats s = monitor.sampler().runStats();
    std::string out;
    const double wall = nsToS(s.endNs - s.startNs);
    appendFormat(out,
        "\n== jetagent power: {:.1f} s, {} rail samples, {} overruns, sampler {:.3f}% of a core "
        "==\n",
        wall, s.railSamples, s.overruns, wall > 0 ? 100.0 * s.samplerCpuS / wall : 0.0);
    if (!s.rails.empty()) {
        for (const RailRunStats& r : s.rails)
            appendFormat(out, "  {:<22} avg {:8.3f} W  peak {:8.3f} W  {:10.3f} J{}\n", r.name,
                r.averageW, r.peakW, r.energyJ, r.errors ? "  (read errors)" : "");
        appendFormat(out, "  {:<22} avg {:8.3f} W  peak {:8.3f} W  {:10.3f} J{}\n",
            s.totalIsEstimate ? "total (estimate)" : "total = " + s.total.name, s.total.averageW,
            s.total.peakW, s.total.energyJ, s.totalIsEstimate ? "  sum of rails" : "");
        if (idle.measured) {
            const double above = s.total.averageW - idle.totalW;
            appendFormat(out, "  {:<22} avg {:8.3f} W  (idle {:.3f} W over {:.1f} s)  {:10.3f} J\n",
                "above idle", unsignedZero(above, 3), idle.totalW, idle.seconds,
                unsignedZero(above * wall, 3));
        }
    }
    for (const ZoneRunStats& z : s.zones) {
        if (z.everOnline)
            appendFormat(out, "  {:<22} start {:6.1f} C  end {:6.1f} C  peak {:6.1f} C\n", z.type,
                z.startC, z.endC, z.peakC);
        else
            appendFormat(out, "  {:<22} offline ({})\n", z.type, z.offlineReason);
    }
    if (s.throttleEvents[0] >= 0)
        appendFormat(out, "  throttle events: under-voltage {}, over-current avg {}, inst {}\n",
            s.throttleEvents[0], s.throttleEvents[1], s.throttleEvents[2]);
    return out;
}

// One line per thermal zone: its reading now (or why it is offline) and its trip points.
void listZones(const PowerMonitor& monitor)
{
    const BoardStateReader* reader = monitor.sampler().stateReader();
    if (!reader)
        return;
    // A board-state reader of its own: the sampler is not running in --list.
    BoardStateReader probe(SysfsRoot(monitor.setup().sysfsRoot), monitor.setup().board.profile);
    BoardStateSample sample;
    probe.read(monotonicNs(), sample);
    const auto& zones = probe.zones();
    for (size_t i = 0; i < zones.size(); ++i) {
        std::string line = "zone " + zones[i].type + ": ";
        const ZoneReading& z = sample.zones[i];
        if (z.online)
            appendFormat(line, "{:.1f} C", z.celsius);
        else
            line += std::string("offline (") + z.offlineReason + ")";
        if (!zones[i].shown)
            line += ", not shown by the profile";
        if (!zones[i].trips.empty()) {
            line += "; trips";
            for (const TripPoint& t : zones[i].trips)
                appendFormat(line, " {} {:.1f} C", t.type, t.celsius);
        }
        std::printf("%s\n", line.c_str());
    }
}

Expected<std::unique_ptr<PowerMonitor>> openMonitor(const PowerCommandOptions& options)
{
    PowerMonitorOptions mo;
    mo.sysfsRoot = options.sysfsRoot;
    mo.board = options.board;
    mo.sampler.railHz = options.railHz;
    mo.sampler.stateHz = options.stateHz;
    return PowerMonitor::open(mo);
}

// Waits until `untilNs` or a signal; the signal's number, or 0 when the time came.
int waitUntil(SignalGuard& signals, int64_t untilNs)
{
    while (true) {
        const int64_t now = monotonicNs();
        if (now >= untilNs)
            return 0;
        const int waitMs =
            static_cast<int>(std::min<int64_t>((untilNs - now) / 1'000'000 + 1, 100));
        if (int sig = signals.wait(waitMs))
            return sig;
    }
}

// The --idle phase: a sampler of its own runs for `seconds` with the board left at rest, so the
// measurement's own averages start clean afterwards. Error: no rails, or the sampler would not
// start; a signal ends it early with what it has (measured = false when stopped at once).
Expected<IdleBaseline> measureIdle(
    const PowerCommandOptions& options, SignalGuard& signals, std::FILE* out, int& stoppedBy)
{
    auto opened = openMonitor(options);
    if (!opened)
        return opened.status();
    PowerMonitor& monitor = *opened.value();
    if (!monitor.sampler().haveRails())
        return Status::invalid("--idle needs power rails to measure and this board has none");
    std::fprintf(
        out, "idle      measuring %.1f s of baseline: leave the board at rest\n", options.idleS);
    std::fflush(out);
    if (Status s = monitor.sampler().start(); !s)
        return s;
    stoppedBy = waitUntil(signals, monotonicNs() + static_cast<int64_t>(options.idleS * 1e9));
    monitor.sampler().stop();
    const PowerRunStats stats = monitor.sampler().runStats();
    IdleBaseline idle;
    idle.seconds = nsToS(stats.endNs - stats.startNs);
    idle.totalW = stats.total.averageW;
    idle.measured = stats.total.samples > 0 && idle.seconds > 0;
    if (idle.measured)
        std::fprintf(out, "idle      %.3f W %s over %.1f s: lines show the power above it\n",
            idle.totalW, stats.totalIsEstimate ? "(sum of rails, estimate)" : "total",
            idle.seconds);
    return idle;
}

Status measurePower(const PowerCommandOptions& options)
{
    // With --json, stdout carries nothing but the JSON lines; what people read goes to stderr.
    std::FILE* human = options.json ? stderr : stdout;
    auto opened = openMonitor(options);
    if (!opened)
        return opened.status();
    std::unique_ptr<PowerMonitor> monitor = std::move(opened).value();
    for (const auto& l : monitor->setup().describe())
        std::fprintf(human, "%s\n", l.c_str());
    if (!monitor->setup().board.matched)
        std::fprintf(human, "note: unknown board; showing the sensors found without a profile\n");
    if (options.list) {
        listZones(*monitor);
        for (const auto& note : monitor->setup().board.profile.notes)
            std::printf("profile note: %s\n", note.c_str());
        return Status();
    }
    if (options.idleS > 0 && !monitor->sampler().haveRails())
        return Status::invalid("--idle needs power rails to measure and this board has none");

    std::FILE* csv = nullptr;
    if (!options.csvPath.empty()) {
        // "x": an earlier measurement is never overwritten.
        csv = std::fopen(options.csvPath.c_str(), "wx");
        if (!csv)
            return errno == EEXIST
                ? Status::invalid("CSV file '" + options.csvPath +
                      "' already exists; name a new file (measurements are never overwritten)")
                : Status::invalid(
                      "cannot create CSV file '" + options.csvPath + "': " + errnoText(errno));
    }
    auto closeCsv = [&csv]() {
        if (csv)
            std::fclose(csv);
        csv = nullptr;
    };

    SignalGuard signals(true);
    IdleBaseline idle;
    if (options.idleS > 0) {
        int stoppedBy = 0;
        auto measured = measureIdle(options, signals, human, stoppedBy);
        if (!measured) {
            closeCsv();
            return measured.status();
        }
        idle = measured.value();
        if (stoppedBy) {
            std::fprintf(stderr, "%s: stopping\n", signalName(stoppedBy));
            closeCsv();
            return Status();
        }
    }
    if (Status s = monitor->sampler().start(); !s) {
        closeCsv();
        return s;
    }
    PowerView view(*monitor, idle);
    const int64_t startNs = monotonicNs();
    const int64_t intervalNs = static_cast<int64_t>(options.intervalMs * 1e6);
    const int64_t endNs =
        options.durationS > 0 ? startNs + static_cast<int64_t>(options.durationS * 1e9) : INT64_MAX;
    // The first line waits one interval, so its averages cover something.
    int64_t next = startNs + intervalNs;
    bool headerWritten = false;
    uint64_t writeErrors = 0;
    std::string line;
    Record record;
    std::fflush(stdout);
    while (true) {
        if (int sig = waitUntil(signals, std::min(next, endNs))) {
            std::fprintf(stderr, "%s: stopping\n", signalName(sig));
            break;
        }
        const int64_t now = monotonicNs();
        if (now >= endNs && now < next)
            break;
        view.render(startNs, line, record);
        if (options.json)
            std::printf("%s\n", record.json().c_str());
        else
            std::printf("%s\n", line.c_str());
        std::fflush(stdout);
        if (csv) {
            if (!headerWritten) {
                // After the first state sample, so the CPU columns are known.
                if (std::fprintf(csv, "%s\n", record.csvHeader().c_str()) < 0)
                    ++writeErrors;
                headerWritten = true;
            }
            if (std::fprintf(csv, "%s\n", record.csvRow().c_str()) < 0 || std::fflush(csv) != 0)
                ++writeErrors;
        }
        next += intervalNs;
        if (next <= now)
            next = now + intervalNs; // after a stall, skip the missed lines instead of bunching
        if (now >= endNs)
            break;
    }
    monitor->sampler().stop();
    std::fprintf(human, "%s", summaryOf(*monitor, idle).c_str());
    if (csv) {
        if (std::fclose(csv) != 0)
            ++writeErrors;
        if (writeErrors > 0)
            return Status::io(std::to_string(writeErrors) + " CSV writes to '" + options.csvPath +
                "' failed (disk full?)");
        std::fprintf(human, "CSV: %s\n", options.csvPath.c_str());
    }
    return Status();
}

std::string fixtureBoardList()
{
    constexpr size_t kColumn = 16;
    std::string text;
    for (const fixtures::BoardSpec& b : fixtures::fixtureBoards())
        text += "  " + b.id + std::string(b.id.size() < kColumn ? kColumn - b.id.size() : 1, ' ') +
            b.description + "\n";
    return text;
}

} // namespace

Status runPowerCommand(const PowerCommandOptions& options)
{
    if (options.fixture.empty())
        return measurePower(options);
    if (options.fixture == "list") {
        std::printf(
            "Fixture boards (jetagent power --fixture NAME):\n%s", fixtureBoardList().c_str());
        return Status();
    }
    const fixtures::BoardSpec* board = fixtures::findFixtureBoard(options.fixture);
    if (board == nullptr)
        return Status::invalid("--fixture '" + options.fixture +
            "': no such fixture board; known:\n" + fixtureBoardList());

    // The tree goes where --sysfs-root says (a new or empty directory, kept for power.sysfs_root
    // in a config), else into a temporary directory removed at the end.
    namespace fs = std::filesystem;
    std::error_code ec;
    std::string root = options.fixtureDir;
    bool temporary = false;
    if (root.empty()) {
        std::string pattern = (fs::temp_directory_path(ec) / "jetagent-fixture-XXXXXX").string();
        if (ec || ::mkdtemp(pattern.data()) == nullptr)
            return Status::io("cannot create a temporary directory for the fixture tree (" +
                pattern + "); give --sysfs-root DIR");
        root = pattern;
        temporary = true;
    } else if (fs::exists(root, ec) && !fs::is_empty(root, ec)) {
        return Status::invalid("--sysfs-root " + root +
            ": the directory is not empty; --fixture writes its tree into a new or empty one");
    } else if (fs::create_directories(root, ec); ec) {
        return Status::invalid("--sysfs-root " + root + ": " + ec.message());
    }
    const fixtures::SysfsTree tree = fixtures::lowerBoard(*board);
    Status written = tree.write(root);
    // A read error (a power-gated zone's EAGAIN) cannot live in a file on disk: such files are
    // left empty instead, which reads as offline too ("empty read"), rather than as their 0.
    for (const auto& [path, error] : tree.faults()) {
        if (!written)
            break;
        std::ofstream blank(root + path, std::ios::trunc);
        if (!blank)
            written = Status::io("cannot write " + root + path);
    }
    Status result = written;
    if (written) {
        std::fprintf(options.json ? stderr : stdout, "fixture   %s (%s), tree in %s%s\n",
            board->id.c_str(), board->description.c_str(), root.c_str(),
            temporary ? " (removed at exit)" : "");
        PowerCommandOptions onFixture = options;
        onFixture.sysfsRoot = root;
        result = measurePower(onFixture);
    }
    if (temporary)
        fs::remove_all(root, ec);
    return result;
}

} // namespace jetagent
