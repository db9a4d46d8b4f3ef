// The MQTT client on libmosquitto (the mqtt plugin's one export, through MqttClientApi).
#pragma once

#include "telemetry/mqtt_client.h"

namespace jetagent {

// See MqttClient::start.
Expected<std::unique_ptr<MqttClient>> startMosquittoClient(const MqttClientOptions& options);

} // namespace jetagent
