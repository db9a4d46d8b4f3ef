// Telemetry to an MQTT broker (the `mqtt` section, docs/mqtt.md): the run's status every
// interval_s (QoS 0), each run's summary at its end (QoS 1), and a retained online/offline state
// whose `offline` is also the connection's last will. Read-only: nothing is subscribed to, so no
// message changes what the daemon does. Never in the inference path: the status is built on a
// thread of its own from the recorder's counters, and the client (plugins/mqtt) queues what the
// broker cannot take yet (bounded; drops counted).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "jetagent/base/status.h"
#include "live/live_server.h"
#include "live/live_streams.h"
#include "telemetry/mqtt_client.h"
#include "telemetry/mqtt_options.h"
#include <nlohmann/json.hpp>

namespace jetagent {

class PowerMonitor;
class SysfsRoot;

// The schemas of the JSON topics; raised when a field changes meaning or goes away (a field
// added keeps the version).
inline constexpr const char* kMqttStatusSchema = "jetagent.status/1";
inline constexpr const char* kMqttSummarySchema = "jetagent.summary/1";

// This device's id for the default client id and topic prefix: the board's serial number
// (/proc/device-tree/serial-number, on every Jetson), else /etc/machine-id, both read under
// `root`; "unknown" when neither is there. Only letters, digits, '-' and '_' are kept.
std::string telemetryDeviceId(const SysfsRoot& root);

// The options the client connects with: the defaults filled in from `deviceId`, the password
// read from mqtt.password_file. Errors (InvalidInput, naming mqtt.password_file and the file):
// the file is missing, unreadable, empty or larger than 4 KiB. A password file that others may
// read is accepted with a warning.
Expected<MqttClientOptions> mqttClientOptions(
    const MqttConfig& config, const std::string& deviceId);
// The topic prefix `config` gives, or jetagent/<deviceId>.
std::string mqttTopicPrefix(const MqttConfig& config, const std::string& deviceId);

class MqttTelemetry {
public:
    // Resolves the options, starts the client (which connects in the background: a broker that
    // is away is no error) and the status thread. Errors as mqttClientOptions and
    // MqttClient::start.
    static Expected<std::unique_ptr<MqttTelemetry>> start(
        const MqttConfig& config, const std::string& deviceId);
    // finish(), then ends the status thread.
    ~MqttTelemetry();
    MqttTelemetry(const MqttTelemetry&) = delete;
    MqttTelemetry& operator=(const MqttTelemetry&) = delete;

    // The run going on (its counters are read by the status thread) and the power monitor it
    // samples with (may be null); detach() before the run's pipeline and recorder go away.
    void attach(LiveRun run, const PowerMonitor* power);
    void detach();

    // Publishes a finished run's summary (summary.json's document) on <prefix>/summary, QoS 1.
    void publishSummary(const nlohmann::json& summary);
    // The counters as the status and the summary show them under "mqtt".
    nlohmann::json countersJson() const;
    // The status document as published now (jetagent.status/1).
    nlohmann::json statusJson();

    // The way out: publishes `offline` (retained), waits up to mqtt.drain_s for the queue and
    // the summaries in flight, and disconnects cleanly. Idempotent.
    void finish();

    const std::string& prefix() const { return prefix_; }

private:
    MqttTelemetry(const MqttConfig& config, std::string deviceId, std::string prefix,
        std::unique_ptr<MqttClient> client);
    void statusLoop();

    MqttConfig config_;
    std::string deviceId_;
    std::string prefix_;
    std::unique_ptr<MqttClient> client_;
    int64_t startNs_ = 0;

    mutable std::mutex mutex_; // the run below, and stopping_
    std::condition_variable wake_;
    bool stopping_ = false;
    bool finished_ = false;
    bool attached_ = false;
    LiveRun run_;
    const PowerMonitor* power_ = nullptr;
    std::vector<StreamRates> streamRates_; // per task
    std::vector<uint64_t> resultsBefore_; // per task, at the previous status
    int64_t previousNs_ = 0;
    std::thread thread_;
};

} // namespace jetagent
