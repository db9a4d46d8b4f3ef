// The power monitor's newest readings as the run's status shows them (/api/status and the MQTT
// status, jetagent.status/1): one function, so that both documents say the same.
#pragma once

#include <nlohmann/json.hpp>

namespace jetagent {

class PowerMonitor;

// The newest rails as {total_name, total_w, total_is_estimate, rails: [{name, w, online}]}
// (null when the board has no rails or no sample yet), every value rounded to 3 decimals and
// null while its sensor is offline. The shown thermal zones are appended to `zones` as {zone,
// celsius, online}. For the live page's charts, each rail's and zone's name is appended to
// `names["rails"]`/`names["zones"]` and its value to `point["rails_w"]`/`point["zones_c"]`.
nlohmann::json livePowerJson(const PowerMonitor& monitor, nlohmann::json& names,
    nlohmann::json& point, nlohmann::json& zones);

} // namespace jetagent
