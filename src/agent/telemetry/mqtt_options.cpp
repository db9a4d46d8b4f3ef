// The `mqtt` section's checks (mqtt_options.h), built into the config library.
#include "telemetry/mqtt_options.h"

namespace jetagent {

std::string mqttTopicPrefixProblem(const std::string& prefix)
{
    if (prefix.empty())
        return "is empty";
    if (prefix.size() > 200)
        return "is longer than 200 bytes";
    if (prefix.find_first_of("+#") != std::string::npos)
        return "'" + prefix + "' holds a wildcard (+ or #), which a topic to publish to may not";
    if (prefix.front() == '/' || prefix.back() == '/')
        return "'" + prefix + "' must not begin or end with '/'";
    for (unsigned char c : prefix)
        if (c < 0x20 || c == 0x7f)
            return "holds a control character";
    return "";
}

std::string mqttConfigProblem(const MqttConfig& config, std::string& key)
{
    if (config.host.empty()) {
        key = "host";
        return "missing: the broker's host name or address";
    }
    if (!config.passwordFile.empty() && config.username.empty()) {
        key = "password_file";
        return "needs mqtt.username (a password goes with a user name)";
    }
    if (config.tls.enabled() && config.tls.caFile.empty()) {
        key = "tls.ca_file";
        return "missing: the CA certificate that signed the broker's (PEM)";
    }
    if (config.tls.certFile.empty() != config.tls.keyFile.empty()) {
        key = config.tls.certFile.empty() ? "tls.cert_file" : "tls.key_file";
        return "missing: tls.cert_file and tls.key_file go together";
    }
    if (!config.topicPrefix.empty())
        if (std::string p = mqttTopicPrefixProblem(config.topicPrefix); !p.empty()) {
            key = "topic_prefix";
            return p;
        }
    if (config.clientId.size() > 256) {
        key = "client_id";
        return "is longer than 256 bytes";
    }
    return "";
}

} // namespace jetagent
