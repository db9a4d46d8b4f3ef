// The `mqtt` section: where the daemon publishes its telemetry (telemetry/mqtt_telemetry.h does)
// and how it connects. A leaf: the configuration reader includes it alone, and its checks
// (mqtt_options.cpp) are built into the config library.
#pragma once

#include <string>

#include "jetagent/base/status.h"

namespace jetagent {

// TLS towards the broker. Any of the files set turns TLS on.
struct MqttTlsConfig {
    std::string caFile; // the broker's CA certificate (PEM); required for TLS
    std::string certFile; // this client's certificate (PEM), with keyFile; "" = none
    std::string keyFile; // its private key (PEM), with certFile
    bool insecure = false; // skip the check of the broker's host name against its certificate
    bool enabled() const { return !caFile.empty() || !certFile.empty() || !keyFile.empty(); }
};

// The `mqtt` section. Absent (host empty): no telemetry, and libmosquitto is never loaded.
struct MqttConfig {
    std::string host; // the broker's host name or address; required when the section is present
    int port = 0; // 0: 1883, or 8883 with TLS
    std::string clientId; // "": jetagent-<device id>
    std::string username; // "": no authentication
    // A file holding the password (its first line), read once at start and never logged or shown;
    // "" = none. Needs username.
    std::string passwordFile;
    int keepaliveS = 30; // seconds between pings on a quiet connection; the will fires after 1.5x
    MqttTlsConfig tls;
    std::string topicPrefix; // "": jetagent/<device id>
    double intervalS = 5.0; // seconds between status messages (QoS 0)
    // Messages waiting while the broker is away; past it the oldest status goes (counted), then
    // the oldest summary. Each holds one JSON document (a few KiB).
    int queue = 1000;
    // At exit, how long the agent waits for the queue and the summaries in flight to reach the
    // broker before it goes anyway (the summary of a run that ends while the broker is away).
    double drainS = 5.0;

    bool enabled() const { return !host.empty(); }
    int effectivePort() const { return port > 0 ? port : (tls.enabled() ? 8883 : 1883); }
};

// "" when `config` may be used; otherwise what is wrong, and in `key` the key to blame under
// "mqtt." ("host", "password_file", "tls.key_file", ...).
std::string mqttConfigProblem(const MqttConfig& config, std::string& key);

// A topic prefix's problem ("" when none): empty, wildcards (+ #), a leading or trailing '/', or
// more than 200 bytes.
std::string mqttTopicPrefixProblem(const std::string& prefix);

} // namespace jetagent
