// The MQTT client's interface in the core: one connection to a broker that publishes what it is
// given and never makes its caller wait for the network. The client itself is the mqtt plugin
// (plugins/mqtt, jetagent-mqtt.so, on libmosquitto), loaded on first use, so that a run without
// `mqtt:` never maps libmosquitto or the TLS library it links.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "jetagent/base/status.h"
#include "telemetry/mqtt_options.h"
#include "telemetry/telemetry_queue.h"

namespace jetagent {

// What the client connects with, resolved from the `mqtt` section (mqtt_telemetry.cpp).
struct MqttClientOptions {
    std::string host;
    int port = 1883;
    std::string clientId;
    std::string username; // "": none
    std::string password; // read from mqtt.password_file; never logged
    int keepaliveS = 30;
    MqttTlsConfig tls;
    // The retained state topic: `online` is published there (QoS 1, retained) at each connection,
    // and `offline` is the will the broker publishes when the connection is lost uncleanly.
    std::string stateTopic;
    size_t queue = 1000; // messages held while the broker is away (TelemetryQueue)
    // Reconnection backoff: the first wait, doubled at each failure up to the cap
    // (ReconnectBackoff before a connection; libmosquitto's own, set alike, after one is lost).
    int reconnectMinS = 1;
    int reconnectMaxS = 30;
};

// The client's counters, for the status and the summary.
struct MqttCounters {
    uint64_t published = 0; // messages handed to the connection (the state's included)
    uint64_t acknowledged = 0; // QoS 1 messages the broker acknowledged
    uint64_t dropped = 0; // messages the full queue dropped (TelemetryQueue)
    uint64_t connections = 0; // successful connections (the first included)
    uint64_t connectFailures = 0; // connection attempts refused or lost before CONNACK
    bool connected = false;
    size_t queued = 0; // messages waiting for the broker now
    size_t unacknowledged = 0; // QoS 1 messages sent and not yet acknowledged
    uint64_t reconnects() const { return connections > 0 ? connections - 1 : 0; }
};

class MqttClient {
public:
    // Starts connecting to the broker in the background (the first attempt and every retry
    // happen on the client's own thread) and returns at once: a broker that is away is not an
    // error. Errors: InvalidInput for options libmosquitto refuses (a TLS file it cannot read),
    // naming them; Unsupported when the plugin is not installed (naming the package).
    static Expected<std::unique_ptr<MqttClient>> start(const MqttClientOptions& options);
    virtual ~MqttClient();
    MqttClient(const MqttClient&) = delete;
    MqttClient& operator=(const MqttClient&) = delete;

    // Publishes `message` when connected, else queues it (bounded: see TelemetryQueue). Takes a
    // short lock; never waits for the network. Thread-safe.
    virtual void publish(TelemetryMessage message) = 0;
    // Waits up to `timeoutNs` for the queue to empty and every QoS 1 message to be
    // acknowledged; true when they were.
    virtual bool drain(int64_t timeoutNs) = 0;
    // Disconnects cleanly (the broker then does not publish the will) and ends the client's
    // thread. Idempotent; the destructor calls it.
    virtual void stop() = 0;
    virtual MqttCounters counters() const = 0;

protected:
    MqttClient() = default;
};

// The mqtt plugin's table (plugins/mqtt): MqttClient::start forwards to it.
struct MqttClientApi {
    Expected<std::unique_ptr<MqttClient>> (*start)(const MqttClientOptions& options);
};

} // namespace jetagent
