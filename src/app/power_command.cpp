// `jetagent power`: live rails, temperatures, clocks and power mode, with CSV logging.
#include "power_command.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "jetagent/base/clock.h"
#include "jetagent/power/fixture_boards.h"
#include "jetagent/power/power_monitor.h"
#include "stop_signals.h"
#include "text.h"

namespace jetagent {

namespace {

std::string csvName(const std::string& name)
{
    std::string out;
    for (char c : name)
        out += (c == ',' || c == '"' || c == ' ' || c == '\n') ? '_' : c;
    return out;
}

class PowerView {
public:
    PowerView(const PowerMonitor& monitor) : monitor_(monitor) { }

    std::string csvHeader() const
    {
        const PowerSampler& sampler = monitor_.sampler();
        std::string h = "time_s,monotonic_ns";
        for (const RailInfo& r : sampler.rails())
            h += "," + csvName(r.name) + "_W," + csvName(r.name) + "_avg_W";
        if (sampler.haveRails())
            h += sampler.totalIsEstimate() ? ",total_estimate_W,total_estimate_avg_W"
                                           : ",total_W,total_avg_W";
        if (const BoardStateReader* state = sampler.stateReader()) {
            for (const ThermalZoneInfo& z : state->zones())
                h += "," + csvName(z.type) + "_C";
            h += ",gpu_load_percent,gpu_freq_MHz";
            for (int i = 0; i < cpuCount(); ++i)
                h += ",cpu" + std::to_string(i) + "_MHz";
            h += ",emc_MHz,fan_pwm,fan_rpm";
        }
        h += ",power_mode";
        return h;
    }

    // One interval: the live line and the CSV row.
    void render(int64_t startNs, std::string& line, std::string& row)
    {
        const PowerSampler& sampler = monitor_.sampler();
        const PowerSetup& setup = monitor_.setup();
        const int64_t now = monotonicNs();
        line.clear();
        row.clear();
        appendFormat(line, "[{:8.1f}s]", nsToS(now - startNs));
        appendFormat(row, "{:.3f},{}", nsToS(now - startNs), now);

        PowerSample sample;
        const bool haveSample = sampler.latest(sample);
        const PowerRunStats stats = sampler.runStats();
        auto railCells = [&](const std::string& name, bool online, double watts, double avg) {
            if (online)
                appendFormat(line, " {} {:.0f}mW/{:.0f}mW", name, watts * 1e3, avg * 1e3);
            else
                appendFormat(line, " {} off/{:.0f}mW", name, avg * 1e3);
            if (online)
                appendFormat(row, ",{:.4f},{:.4f}", watts, avg);
            else
                appendFormat(row, ",,{:.4f}", avg);
        };
        const auto& rails = sampler.rails();
        for (size_t i = 0; i < rails.size(); ++i) {
            const bool online = haveSample && (sample.onlineMask >> i & 1u);
            const double avg = i < stats.rails.size() ? stats.rails[i].averageW : 0.0;
            railCells(rails[i].name, online, online ? sample.railW[i] : 0.0, avg);
        }
        if (sampler.haveRails()) {
            line += " |";
            railCells(sampler.totalIsEstimate() ? "total(est.)" : "total", haveSample,
                sample.totalW, stats.total.averageW);
        } else {
            line += " no rails";
        }

        if (const BoardStateReader* reader = sampler.stateReader()) {
            BoardStateSample state;
            const bool haveState = sampler.latestState(state);
            line += " |";
            const auto& zones = reader->zones();
            for (size_t i = 0; i < zones.size(); ++i) {
                const bool online = haveState && i < state.zones.size() && state.zones[i].online;
                if (zones[i].shown) {
                    if (online)
                        appendFormat(line, " {}@{:.1f}C", zones[i].type, state.zones[i].celsius);
                    else
                        appendFormat(line, " {}@off", zones[i].type);
                }
                if (online)
                    appendFormat(row, ",{:.2f}", state.zones[i].celsius);
                else
                    row += ",";
            }
            if (haveState && state.haveGpu) {
                appendFormat(line, " | GPU {:.0f}%@{:.0f}MHz", state.gpuLoadPercent,
                    static_cast<double>(state.gpuFreqHz) / 1e6);
                appendFormat(row, ",{:.1f},{:.1f}", state.gpuLoadPercent,
                    static_cast<double>(state.gpuFreqHz) / 1e6);
            } else {
                row += ",,";
            }
            if (haveState && state.cpuCount > 0) {
                line += " | CPU [";
                for (int c = 0; c < state.cpuCount; ++c) {
                    const int64_t khz = state.cpuFreqKHz[static_cast<size_t>(c)];
                    if (khz >= 0)
                        appendFormat(line, "{}{}", c ? "," : "", khz / 1000);
                    else
                        line += c ? ",off" : "off";
                }
                line += "] MHz";
            }
            for (int c = 0; c < cpuCount(); ++c) {
                const int64_t khz =
                    haveState && c < state.cpuCount ? state.cpuFreqKHz[static_cast<size_t>(c)] : -1;
                if (khz >= 0)
                    appendFormat(row, ",{:.1f}", static_cast<double>(khz) / 1e3);
                else
                    row += ",";
            }
            if (haveState && state.emcHz >= 0) {
                appendFormat(line, " | EMC {:.0f}MHz", static_cast<double>(state.emcHz) / 1e6);
                appendFormat(row, ",{:.1f}", static_cast<double>(state.emcHz) / 1e6);
            } else {
                row += ",";
            }
            if (haveState && (state.fanPwm >= 0 || state.fanRpm >= 0)) {
                line += " | fan";
                if (state.fanPwm >= 0)
                    appendFormat(line, " {}/255", state.fanPwm);
                if (state.fanRpm >= 0)
                    appendFormat(line, " {}rpm", state.fanRpm);
            }
            appendFormat(row, ",{},{}",
                haveState && state.fanPwm >= 0 ? std::to_string(state.fanPwm) : "",
                haveState && state.fanRpm >= 0 ? std::to_string(state.fanRpm) : "");
        }
        if (setup.powerMode.id >= 0) {
            appendFormat(line, " | mode {}", setup.powerMode.id);
            if (!setup.powerMode.name.empty())
                appendFormat(line, " ({})", setup.powerMode.name);
            appendFormat(row, ",{}", setup.powerMode.id);
        } else {
            row += ",";
        }
        row += '\n';
    }

private:
    // CPU columns are fixed by the first state sample, so every CSV row has the same columns.
    int cpuCount() const
    {
        if (cpuCount_ < 0) {
            BoardStateSample state;
            cpuCount_ = monitor_.sampler().latestState(state) ? state.cpuCount : 0;
        }
        return cpuCount_;
    }

    const PowerMonitor& monitor_;
    mutable int cpuCount_ = -1;
};

std::string summaryOf(const PowerMonitor& monitor)
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

Status measurePower(const PowerCommandOptions& options)
{
    PowerMonitorOptions mo;
    mo.sysfsRoot = options.sysfsRoot;
    mo.board = options.board;
    mo.sampler.railHz = options.railHz;
    mo.sampler.stateHz = options.stateHz;
    auto opened = PowerMonitor::open(mo);
    if (!opened)
        return opened.status();
    std::unique_ptr<PowerMonitor> monitor = std::move(opened).value();
    for (const auto& l : monitor->setup().describe())
        std::printf("%s\n", l.c_str());
    if (!monitor->setup().board.matched)
        std::printf("note: unknown board; showing the sensors found without a profile\n");
    if (options.list) {
        listZones(*monitor);
        for (const auto& note : monitor->setup().board.profile.notes)
            std::printf("profile note: %s\n", note.c_str());
        return Status();
    }

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

    SignalGuard signals(true);
    if (Status s = monitor->sampler().start(); !s) {
        if (csv)
            std::fclose(csv);
        return s;
    }
    PowerView view(*monitor);
    const int64_t startNs = monotonicNs();
    const int64_t intervalNs = static_cast<int64_t>(options.intervalMs * 1e6);
    const int64_t endNs =
        options.durationS > 0 ? startNs + static_cast<int64_t>(options.durationS * 1e9) : INT64_MAX;
    // The first line waits one interval, so its averages cover something.
    int64_t next = startNs + intervalNs;
    bool headerWritten = false;
    uint64_t writeErrors = 0;
    std::string line, row;
    std::fflush(stdout);
    while (true) {
        const int64_t now = monotonicNs();
        const int64_t until = std::min(next, endNs);
        if (now < until) {
            const int waitMs =
                static_cast<int>(std::min<int64_t>((until - now) / 1'000'000 + 1, 100));
            if (int sig = signals.wait(waitMs)) {
                std::fprintf(stderr, "%s: stopping\n", signalName(sig));
                break;
            }
            continue;
        }
        if (now >= endNs && now < next)
            break;
        view.render(startNs, line, row);
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
        if (csv) {
            if (!headerWritten) {
                // After the first state sample, so the CPU columns are known.
                if (std::fprintf(csv, "%s\n", view.csvHeader().c_str()) < 0)
                    ++writeErrors;
                headerWritten = true;
            }
            if (std::fputs(row.c_str(), csv) < 0 || std::fflush(csv) != 0)
                ++writeErrors;
        }
        next += intervalNs;
        if (next <= now)
            next = now + intervalNs; // after a stall, skip the missed lines instead of bunching
        if (now >= endNs)
            break;
    }
    monitor->sampler().stop();
    std::printf("%s", summaryOf(*monitor).c_str());
    if (csv) {
        if (std::fclose(csv) != 0)
            ++writeErrors;
        if (writeErrors > 0)
            return Status::io(std::to_string(writeErrors) + " CSV writes to '" + options.csvPath +
                "' failed (disk full?)");
        std::printf("CSV: %s\n", options.csvPath.c_str());
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
    Status written = fixtures::lowerBoard(*board).write(root);
    Status result = written;
    if (written) {
        std::printf("fixture   %s (%s), tree in %s%s\n", board->id.c_str(),
            board->description.c_str(), root.c_str(), temporary ? " (removed at exit)" : "");
        PowerCommandOptions onFixture = options;
        onFixture.sysfsRoot = root;
        result = measurePower(onFixture);
    }
    if (temporary)
        fs::remove_all(root, ec);
    return result;
}

} // namespace jetagent
