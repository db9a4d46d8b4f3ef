// The power monitor's readings for the run's status documents (live_power.h).
#include "live/live_power.h"

#include <cmath>

#include "jetagent/power/power_monitor.h"

namespace jetagent {

using json = nlohmann::json;

namespace {

double roundToMilli(double v)
{
    return std::round(v * 1000.0) / 1000.0;
}

} // namespace

json livePowerJson(const PowerMonitor& monitor, json& names, json& point, json& zones)
{
    json power = nullptr;
    const PowerSampler& sampler = monitor.sampler();
    PowerSample sample;
    if (sampler.haveRails() && sampler.latest(sample)) {
        json rails = json::array();
        for (size_t r = 0; r < sampler.rails().size() && r < sample.railW.size(); ++r) {
            const bool online = (sample.onlineMask & (1u << r)) != 0;
            rails.push_back({{"name", sampler.rails()[r].name},
                {"w", online ? json(roundToMilli(sample.railW[r])) : json(nullptr)},
                {"online", online}});
            names["rails"].push_back(sampler.rails()[r].name);
            point["rails_w"].push_back(
                online ? json(roundToMilli(sample.railW[r])) : json(nullptr));
        }
        const bool totalOnline = (sample.onlineMask & kTotalOnlineBit) != 0;
        power = {{"total_name", sampler.totalName()},
            {"total_w", totalOnline ? json(roundToMilli(sample.totalW)) : json(nullptr)},
            {"total_is_estimate", sampler.totalIsEstimate()}, {"rails", rails}};
    }
    BoardStateSample state;
    if (sampler.stateReader() && sampler.latestState(state)) {
        const auto& infos = sampler.stateReader()->zones();
        for (size_t z = 0; z < infos.size() && z < state.zones.size(); ++z) {
            if (!infos[z].shown)
                continue;
            const bool online = state.zones[z].online;
            zones.push_back({{"zone", infos[z].type},
                {"celsius", online ? json(roundToMilli(state.zones[z].celsius)) : json(nullptr)},
                {"online", online}});
            names["zones"].push_back(infos[z].type);
            point["zones_c"].push_back(
                online ? json(roundToMilli(state.zones[z].celsius)) : json(nullptr));
        }
    }
    return power;
}

} // namespace jetagent
