// A real MQTT broker and subscriber for the end-to-end tests of the mqtt plugin (mqtt_broker.h).
#include "mqtt_broker.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace jetagent::test {

std::string mosquittoBinary()
{
    for (const char* path : {"/usr/sbin/mosquitto", "/usr/bin/mosquitto"})
        if (::access(path, X_OK) == 0)
            return path;
    return "";
}

bool accepting(int port)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a {};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    return ok;
}

std::string mqttAgentConfig(int port, const std::string& prefix, const std::string& mqttLines)
{
    return "source: {uri: synthetic://shapes, width: 320, height: 240, fps: 30, seed: 5}\n"
           "run: {frames: 0}\n"
           "tasks:\n" +
        shapesTaskYaml("shapes", "    engine: {threads: 1}\n") +
        "logging: {dir: logs, status_interval_s: 0}\n"
        "mqtt:\n"
        "  host: 127.0.0.1\n"
        "  port: " +
        std::to_string(port) + "\n  topic_prefix: " + prefix + "\n" + mqttLines;
}

MosquittoBroker::MosquittoBroker(const TempDir& dir, int port, const BrokerOptions& options)
    : port_(port),
      config_(dir / (options.name.empty() ? "mosquitto.conf" : options.name + "-mosquitto.conf")),
      log_(dir / (options.name.empty() ? "broker.log" : options.name + "-broker.log"))
{
    std::string text = "listener " + std::to_string(port) + " 127.0.0.1\nallow_anonymous true\n";
    if (options.tls) {
        const BrokerTls& tls = *options.tls;
        text += "cafile " + tls.caFile + "\ncertfile " + tls.certFile + "\nkeyfile " + tls.keyFile +
            "\nrequire_certificate " + (tls.requireCertificate ? "true" : "false") + "\n";
    }
    text += options.extraLines + "log_dest file " + log_ + "\n";
    // As root, mosquitto would read the keys as its own user, who may not enter dir.
    if (options.tls && ::geteuid() == 0)
        text += "user root\n";
    writeFile(config_, text);
}

bool MosquittoBroker::start()
{
    const std::string binary = mosquittoBinary();
    pid_ = ::fork();
    if (pid_ == 0) {
        ::execl(binary.c_str(), binary.c_str(), "-c", config_.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    for (int i = 0; i < 100; ++i) {
        if (accepting(port_))
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

void MosquittoBroker::stop()
{
    if (pid_ <= 0)
        return;
    ::kill(pid_, SIGTERM); // saves its persistence file on the way out
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
}

MqttSubscriber::MqttSubscriber(int port, SubscriberOptions options)
    : prefix_(std::move(options.prefix))
{
    mosquitto_lib_init();
    mosq_ = options.clientId.empty() ? mosquitto_new(nullptr, true, this)
                                     : mosquitto_new(options.clientId.c_str(), false, this);
    mosquitto_connect_callback_set(mosq_, [](mosquitto* m, void* self, int rc) {
        if (rc == 0)
            mosquitto_subscribe(
                m, nullptr, (static_cast<MqttSubscriber*>(self)->prefix_ + "/#").c_str(), 1);
    });
    mosquitto_subscribe_callback_set(mosq_, [](mosquitto*, void* self, int, int, const int*) {
        static_cast<MqttSubscriber*>(self)->subscribed_ = true;
    });
    mosquitto_message_callback_set(mosq_, [](mosquitto*, void* self, const mosquitto_message* m) {
        static_cast<MqttSubscriber*>(self)->received(m);
    });
    if (!options.caFile.empty())
        tlsSet_ = mosquitto_tls_set(mosq_, options.caFile.c_str(), nullptr,
            options.certFile.empty() ? nullptr : options.certFile.c_str(),
            options.keyFile.empty() ? nullptr : options.keyFile.c_str(), nullptr);
    mosquitto_reconnect_delay_set(mosq_, 1, 1, false);
    mosquitto_connect_async(mosq_, "127.0.0.1", port, 10);
    mosquitto_loop_start(mosq_);
}

MqttSubscriber::~MqttSubscriber()
{
    mosquitto_disconnect(mosq_);
    mosquitto_loop_stop(mosq_, false);
    mosquitto_destroy(mosq_);
    mosquitto_lib_cleanup();
}

size_t MqttSubscriber::count(const std::string& suffix) const
{
    std::lock_guard<std::mutex> lock(mutex_);
    size_t n = 0;
    for (const auto& m : messages_)
        n += m.first == prefix_ + suffix ? 1 : 0;
    return n;
}

std::vector<std::string> MqttSubscriber::allOf(const std::string& suffix) const
{
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> payloads;
    for (const auto& m : messages_)
        if (m.first == prefix_ + suffix)
            payloads.push_back(m.second);
    return payloads;
}

std::string MqttSubscriber::lastOf(const std::string& suffix) const
{
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = messages_.rbegin(); it != messages_.rend(); ++it)
        if (it->first == prefix_ + suffix)
            return it->second;
    return "";
}

std::vector<std::string> MqttSubscriber::states() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return states_;
}

bool MqttSubscriber::sawCleanExit(size_t minStates) const
{
    const std::vector<std::string> seen = states();
    return summaries() >= 1 && seen.size() >= minStates && !seen.empty() &&
        seen.back() == "offline";
}

void MqttSubscriber::received(const mosquitto_message* m)
{
    std::lock_guard<std::mutex> lock(mutex_);
    std::string payload(static_cast<const char*>(m->payload), static_cast<size_t>(m->payloadlen));
    if (m->topic == prefix_ + "/state")
        states_.push_back(payload);
    messages_.emplace_back(m->topic, std::move(payload));
}

} // namespace jetagent::test
