// A real MQTT broker and subscriber for the end-to-end tests of the mqtt plugin (mqtt_e2e_test.cpp,
// mqtt_tls_e2e_test.cpp): Debian's mosquitto on a loopback port with a config of the test's own,
// plain or TLS, and a libmosquitto subscriber that keeps every message under a topic prefix.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <mosquitto.h>

#include "test_support.h"

namespace jetagent::test {

// The mosquitto binary's path, or "" when it is not installed.
std::string mosquittoBinary();

// True when something accepts TCP connections on 127.0.0.1:port.
bool accepting(int port);

// The daemon's config in these tests: the synthetic shapes source at 30 fps without a frame
// limit, the demo classifier, no status lines on stderr, and the mqtt section for 127.0.0.1:port
// under `prefix`, then `mqttLines` (more keys of the section, each "  key: value\n").
std::string mqttAgentConfig(int port, const std::string& prefix, const std::string& mqttLines);

// A TLS listener's files (paths) and whether it asks clients for a certificate of caFile's CA.
struct BrokerTls {
    std::string caFile;
    std::string certFile;
    std::string keyFile;
    bool requireCertificate = false;
};

struct BrokerOptions {
    // Prefix of the broker's files in the directory: NAME-mosquitto.conf and NAME-broker.log;
    // empty: mosquitto.conf and broker.log.
    std::string name;
    // More lines of the config (persistence...), each ending in a newline.
    std::string extraLines;
    // Set: the listener speaks TLS only.
    std::optional<BrokerTls> tls;
};

// A mosquitto process on 127.0.0.1:port, anonymous clients allowed, its config and log in `dir`;
// stopped (SIGTERM, which lets it save its persistence file) when the object goes.
class MosquittoBroker {
public:
    MosquittoBroker(const TempDir& dir, int port, const BrokerOptions& options = {});
    ~MosquittoBroker() { stop(); }
    MosquittoBroker(const MosquittoBroker&) = delete;
    MosquittoBroker& operator=(const MosquittoBroker&) = delete;

    // Starts the broker; true once it accepts connections (false after 5 s without).
    bool start();
    // Stops it and waits for it to exit; nothing when it is not running.
    void stop();
    // The broker's log file.
    const std::string& logPath() const { return log_; }

private:
    int port_;
    std::string config_;
    std::string log_;
    pid_t pid_ = -1;
};

struct SubscriberOptions {
    // The subscriber takes PREFIX/#; its methods name a topic by what follows the prefix
    // ("/status").
    std::string prefix;
    // A persistent session under this client id (QoS 0 messages queued for it while it is away);
    // empty: a clean session under a random id.
    std::string clientId;
    // TLS when caFile is set: the CA it trusts, and the client certificate and key it presents
    // when they are set.
    std::string caFile;
    std::string certFile;
    std::string keyFile;
};

// A libmosquitto subscriber to 127.0.0.1:port that keeps everything under the prefix in arrival
// order; it reconnects every second while the broker is away.
class MqttSubscriber {
public:
    MqttSubscriber(int port, SubscriberOptions options);
    ~MqttSubscriber();
    MqttSubscriber(const MqttSubscriber&) = delete;
    MqttSubscriber& operator=(const MqttSubscriber&) = delete;

    // What mosquitto_tls_set returned (MOSQ_ERR_SUCCESS without TLS).
    int tlsSetResult() const { return tlsSet_; }
    // True once the broker has acknowledged the subscription.
    bool subscribed() const { return subscribed_; }
    // How many messages `suffix`'s topic has had.
    size_t count(const std::string& suffix) const;
    size_t statuses() const { return count("/status"); }
    size_t summaries() const { return count("/summary"); }
    // Every payload of `suffix`'s topic, in arrival order.
    std::vector<std::string> allOf(const std::string& suffix) const;
    // The last payload of `suffix`'s topic, "" when none came.
    std::string lastOf(const std::string& suffix) const;
    // Every payload of the retained state topic ("/state"), in arrival order.
    std::vector<std::string> states() const;
    // True once a summary came and `offline` is the last of at least `minStates` states: the
    // ending of a run that exited cleanly.
    bool sawCleanExit(size_t minStates) const;

    // Waits up to `timeout` for `done`.
    template <typename Done>
    static bool waitFor(Done done, std::chrono::milliseconds timeout)
    {
        const auto end = std::chrono::steady_clock::now() + timeout;
        while (!done()) {
            if (std::chrono::steady_clock::now() > end)
                return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return true;
    }

private:
    void received(const mosquitto_message* m);

    std::string prefix_;
    mosquitto* mosq_ = nullptr;
    int tlsSet_ = MOSQ_ERR_SUCCESS;
    std::atomic<bool> subscribed_ {false};
    mutable std::mutex mutex_;
    std::vector<std::pair<std::string, std::string>> messages_;
    std::vector<std::string> states_;
};

} // namespace jetagent::test
