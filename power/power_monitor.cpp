// Assembles power/ for one board: identity, profile, discovery, the total rail and the sampler.
#include "jetagent/power/power_monitor.h"

#include <algorithm>

#include "jetagent/base/clock.h"
#include "jetagent/base/format.h"

namespace jetagent {

namespace {

bool contains(const std::vector<std::string>& names, const std::string& name)
{
    return std::find(names.begin(), names.end(), name) != names.end();
}

std::string joined(const std::vector<std::string>& names)
{
    std::string out;
    for (const auto& n : names)
        out += (out.empty() ? "" : ", ") + n;
    return out;
}

// An estimated total sums the top-level rails, which is only right when they do not overlap. On x86
// hosts they do: RAPL's psys (the platform) contains the packages, and a battery's discharge
// contains everything. So psys alone stands for RAPL when present, and power_supply entries are
// left out of the sum whenever any other rail exists. Jetson rails (INA3221 channels) never
// overlap.
void excludeOverlapsFromTheSum(std::vector<std::unique_ptr<PowerRail>>& rails)
{
    bool havePsys = false, haveOther = false;
    for (const auto& r : rails) {
        havePsys = havePsys || (r->info().driver == "intel-rapl" && r->info().name == "psys");
        haveOther = haveOther || r->info().driver != "power_supply";
    }
    for (auto& r : rails) {
        const RailInfo& info = r->info();
        const bool raplInsidePsys = havePsys && info.driver == "intel-rapl" && info.name != "psys";
        const bool supplyBesideOthers = haveOther && info.driver == "power_supply";
        if (raplInsidePsys || supplyBesideOthers)
            r->excludeFromTotal();
    }
}

} // namespace

std::vector<std::string> PowerSetup::describe() const
{
    std::vector<std::string> lines;
    lines.push_back("board: " + identity.describe());
    lines.push_back(
        "profile: " + board.profile.id + " (" + board.profile.name + "): " + board.reason);
    if (rails.empty()) {
        lines.push_back("rails: none found, so no power or energy figures (" +
            std::string(identity.isJetson()
                    ? "is the INA3221 driver loaded? see `ls /sys/class/hwmon /sys/bus/iio/devices`"
                    : "no INA3221, power_supply or readable RAPL counters on this host") +
            ")");
    } else {
        std::vector<std::string> names;
        for (const auto& r : rails)
            names.push_back(r.name + " [" + r.driver + " " + r.device +
                (r.channel > 0 ? " ch" + std::to_string(r.channel) : "") + "]");
        lines.push_back("rails: " + joined(names));
        std::string summed;
        if (totalIsEstimate) {
            std::vector<std::string> parts;
            for (const auto& r : rails)
                if (r.parent.empty() && r.inTotal)
                    parts.push_back(r.name);
            summed = " of " + joined(parts);
        }
        lines.push_back("total: " + totalName + summed + (totalIsEstimate ? " (an estimate)" : "") +
            (totalNote.empty() ? "" : ": " + totalNote));
    }
    if (!missingRails.empty())
        lines.push_back("missing: the profile expects " + joined(missingRails) + ", not found");
    for (const auto& s : skipped)
        lines.push_back("skipped: " + s);
    lines.push_back("thermal zones: " + std::to_string(thermalZones));
    lines.push_back("power mode: " +
        (powerMode.id >= 0 ? std::to_string(powerMode.id) +
                    (powerMode.name.empty() ? "" : " (" + powerMode.name + ")")
                           : std::string("unknown (no /var/lib/nvpmodel/status)")));
    std::vector<std::string> absent;
    if (!haveGpu)
        absent.push_back("GPU devfreq");
    if (!haveEmc)
        absent.push_back("EMC clock (needs root and debugfs)");
    if (!haveThrottleCounters)
        absent.push_back("soctherm throttle counters");
    if (!haveFan)
        absent.push_back("fan");
    if (!absent.empty())
        lines.push_back("not available: " + joined(absent));
    return lines;
}

Expected<std::unique_ptr<PowerMonitor>> PowerMonitor::open(const PowerMonitorOptions& options)
{
    const SysfsRoot root(options.sysfsRoot);
    if (!root.isDirectory("/"))
        return Status::notFound("sysfs root '" + options.sysfsRoot + "' is not a directory");

    std::unique_ptr<PowerMonitor> monitor(new PowerMonitor());
    PowerSetup& setup = monitor->setup_;
    setup.sysfsRoot = options.sysfsRoot;
    setup.identity = detectBoard(root);
    auto selection = selectBoardProfile(options.board, setup.identity);
    if (!selection)
        return selection.status();
    setup.board = std::move(selection).value();
    const BoardProfile& profile = setup.board.profile;

    RailDiscovery discovery = discoverRails(root, monotonicNs());
    setup.skipped = std::move(discovery.skipped);
    if (discovery.rails.size() > static_cast<size_t>(kMaxRails)) {
        for (size_t i = kMaxRails; i < discovery.rails.size(); ++i)
            setup.skipped.push_back(discovery.rails[i]->info().name + ": more than " +
                std::to_string(kMaxRails) + " rails; not sampled");
        discovery.rails.resize(kMaxRails);
    }
    excludeOverlapsFromTheSum(discovery.rails);
    std::vector<std::string> names;
    for (auto& rail : discovery.rails) {
        auto alias = profile.railAliases.find(rail->info().name);
        if (alias != profile.railAliases.end())
            rail->rename(alias->second);
        setup.rails.push_back(rail->info());
        names.push_back(rail->info().name);
    }
    for (const auto& expected : profile.expectedRails)
        if (!contains(names, expected))
            setup.missingRails.push_back(expected);

    std::string total;
    if (!profile.totalRail.empty() && contains(names, profile.totalRail)) {
        total = profile.totalRail;
        setup.totalName = total;
        setup.totalIsEstimate = false;
        setup.totalNote = profile.totalNote;
    } else {
        setup.totalName = "sum of rails";
        setup.totalIsEstimate = true;
        setup.totalNote = !profile.totalRail.empty()
            ? "the profile's total rail " + profile.totalRail + " was not found"
            : profile.totalNote;
    }
    setup.powerMode = readPowerMode(root);

    auto state = std::make_unique<BoardStateReader>(root, profile);
    setup.thermalZones = state->zones().size();
    setup.haveGpu = !state->gpuDevice().empty();
    setup.haveEmc = state->haveEmc();
    setup.haveThrottleCounters = state->haveThrottleCounters();
    setup.haveFan = state->haveFan();

    monitor->sampler_ = std::make_unique<PowerSampler>(
        std::move(discovery.rails), total, std::move(state), options.sampler);
    return monitor;
}

std::string powerStatusText(const PowerMonitor& power)
{
    std::string text;
    PowerSample sample;
    const PowerSampler& sampler = power.sampler();
    if (sampler.haveRails() && sampler.latest(sample)) {
        text = formatText("%.3f W %s%s", static_cast<double>(sample.totalW),
            sampler.totalName().c_str(), sampler.totalIsEstimate() ? " (est.)" : "");
    }
    BoardStateSample state;
    if (sampler.stateReader() && sampler.latestState(state)) {
        const auto& zones = sampler.stateReader()->zones();
        int hottest = -1;
        for (size_t i = 0; i < zones.size() && i < state.zones.size(); ++i)
            if (zones[i].shown && state.zones[i].online &&
                (hottest < 0 ||
                    state.zones[i].celsius > state.zones[static_cast<size_t>(hottest)].celsius))
                hottest = static_cast<int>(i);
        if (hottest >= 0) {
            appendText(text, "%s%.1f C (%s)", text.empty() ? "" : ", ",
                state.zones[static_cast<size_t>(hottest)].celsius,
                zones[static_cast<size_t>(hottest)].type.c_str());
        }
    }
    return text;
}

} // namespace jetagent
