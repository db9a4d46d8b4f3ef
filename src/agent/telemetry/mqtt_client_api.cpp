// MqttClient's side in the core: start() hands over to the mqtt plugin (plugins/mqtt).
#include "telemetry/mqtt_client.h"

#include "jetagent/base/plugin.h"

namespace jetagent {

MqttClient::~MqttClient() = default;

Expected<std::unique_ptr<MqttClient>> MqttClient::start(const MqttClientOptions& options)
{
    auto plugin = loadPlugin("mqtt");
    if (!plugin)
        return plugin.status().withContext("MQTT telemetry to " + options.host);
    const auto* api = static_cast<const MqttClientApi*>(plugin.value()->api);
    return api->start(options);
}

} // namespace jetagent
