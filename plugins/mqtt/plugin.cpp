// The mqtt plugin's entry point: its table (MqttClientApi, src/agent/telemetry/mqtt_client.h).
#include "jetagent/base/plugin.h"
#include "mosquitto_client.h"

JETAGENT_PLUGIN_ENTRY
{
    static const jetagent::MqttClientApi api = {jetagent::startMosquittoClient};
    static const jetagent::PluginDescriptor descriptor = {
        jetagent::kPluginAbi, JETAGENT_PLUGIN_VERSION, "mqtt", &api};
    return &descriptor;
}
