// MqttClient on libmosquitto. One thread of the client's own connects (retrying with
// exponential backoff: ReconnectBackoff), then runs libmosquitto's loop, which sends, reads
// acknowledgements and reconnects after a lost connection; callers only take a short lock to
// hand a message over or queue it. QoS 1 messages handed to libmosquitto stay in
// its own store until the broker acknowledges them and are sent again after a reconnection, so
// a summary handed over just before the broker went away still arrives.
#include "mosquitto_client.h"

#include <mosquitto.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "jetagent/base/log.h"
#include "telemetry/reconnect_backoff.h"

namespace jetagent {

namespace {

std::once_flag libraryInit;

class MosquittoClient final : public MqttClient {
public:
    explicit MosquittoClient(const MqttClientOptions& options)
        : options_(options), queue_(options.queue)
    {
    }
    ~MosquittoClient() override
    {
        stop();
        if (mosq_ != nullptr)
            mosquitto_destroy(mosq_);
    }
    MosquittoClient(const MosquittoClient&) = delete;
    MosquittoClient& operator=(const MosquittoClient&) = delete;

    Status init();
    void publish(TelemetryMessage message) override;
    bool drain(int64_t timeoutNs) override;
    void stop() override;
    MqttCounters counters() const override;

private:
    static void onConnect(mosquitto*, void* self, int rc)
    {
        static_cast<MosquittoClient*>(self)->connected(rc);
    }
    static void onDisconnect(mosquitto*, void* self, int rc)
    {
        static_cast<MosquittoClient*>(self)->disconnected(rc);
    }
    static void onPublish(mosquitto*, void* self, int mid)
    {
        static_cast<MosquittoClient*>(self)->acknowledged(mid);
    }
    // libmosquitto's errors: the only place OpenSSL's reason for a failed handshake ("certificate
    // verify failed") is told. Called on whichever thread made the call that failed, mutex_ held
    // or not (handOver holds it): hence a mutex of its own.
    static void onLog(mosquitto*, void* self, int level, const char* line)
    {
        if (level == MOSQ_LOG_ERR && line != nullptr) {
            auto* client = static_cast<MosquittoClient*>(self);
            std::lock_guard<std::mutex> lock(client->errorMutex_);
            client->lastError_ = line;
        }
    }
    // The error libmosquitto logged since the previous call, "" if none; clears it.
    std::string takeLastError()
    {
        std::lock_guard<std::mutex> lock(errorMutex_);
        return std::exchange(lastError_, std::string());
    }
    void connectLoop();
    void connected(int rc);
    void disconnected(int rc);
    void acknowledged(int mid);
    // Hands `m` to libmosquitto; false when it was not taken (the connection is gone). Called
    // with mutex_ held, so that an acknowledgement cannot arrive before its mid is recorded.
    bool handOver(const TelemetryMessage& m);
    void drainQueueLocked();

    MqttClientOptions options_;
    mosquitto* mosq_ = nullptr;
    std::thread thread_; // connectLoop
    bool stopped_ = false;

    mutable std::mutex mutex_;
    std::condition_variable settled_; // the queue emptied or an acknowledgement came
    TelemetryQueue queue_;
    bool connected_ = false;
    bool everConnected_ = false;
    std::set<int> unacknowledged_; // mids of QoS 1 messages sent
    uint64_t published_ = 0;
    uint64_t acknowledged_ = 0;
    uint64_t connections_ = 0;
    uint64_t connectFailures_ = 0;

    std::mutex errorMutex_; // taken alone, never around a call into libmosquitto
    std::string lastError_; // onLog
};

Status MosquittoClient::init()
{
    std::call_once(libraryInit, [] { mosquitto_lib_init(); });
    const std::string where = "MQTT broker " + options_.host + ":" + std::to_string(options_.port);
    mosq_ = mosquitto_new(options_.clientId.c_str(), true, this);
    if (mosq_ == nullptr)
        return Status::runtime(where + ": libmosquitto cannot make a client (out of memory?)");
    mosquitto_connect_callback_set(mosq_, onConnect);
    mosquitto_disconnect_callback_set(mosq_, onDisconnect);
    mosquitto_publish_callback_set(mosq_, onPublish);
    mosquitto_log_callback_set(mosq_, onLog);
    if (!options_.username.empty()) {
        const int rc = mosquitto_username_pw_set(mosq_, options_.username.c_str(),
            options_.password.empty() ? nullptr : options_.password.c_str());
        if (rc != MOSQ_ERR_SUCCESS)
            return Status::invalid("mqtt.username: " + std::string(mosquitto_strerror(rc)));
    }
    if (options_.tls.enabled()) {
        const auto file = [](const std::string& f) { return f.empty() ? nullptr : f.c_str(); };
        const int rc = mosquitto_tls_set(mosq_, file(options_.tls.caFile), nullptr,
            file(options_.tls.certFile), file(options_.tls.keyFile), nullptr);
        if (rc != MOSQ_ERR_SUCCESS)
            return Status::invalid("mqtt.tls: libmosquitto refuses the files (" +
                std::string(mosquitto_strerror(rc)) +
                "): check that tls.ca_file, tls.cert_file and tls.key_file exist and are PEM");
        if (options_.tls.insecure)
            mosquitto_tls_insecure_set(mosq_, true);
    }
    static const char offline[] = "offline";
    if (int rc = mosquitto_will_set(
            mosq_, options_.stateTopic.c_str(), int(sizeof offline - 1), offline, 1, true);
        rc != MOSQ_ERR_SUCCESS)
        return Status::invalid("mqtt.topic_prefix: libmosquitto refuses the will's topic '" +
            options_.stateTopic + "': " + mosquitto_strerror(rc));
    // libmosquitto's loop runs on connectLoop's thread while other threads publish: it must
    // wake for them.
    mosquitto_threaded_set(mosq_, true);
    mosquitto_reconnect_delay_set(mosq_, static_cast<unsigned>(options_.reconnectMinS),
        static_cast<unsigned>(options_.reconnectMaxS), true);
    thread_ = std::thread([this] { connectLoop(); });
    return Status();
}

// Until stop(): connect (a broker that is away is retried after the backoff's wait), then run
// libmosquitto's loop, which returns only when the client disconnects or on an error it does not
// retry itself (the loop reconnects after a lost connection on its own).
void MosquittoClient::connectLoop()
{
    ReconnectBackoff backoff(options_.reconnectMinS, options_.reconnectMaxS);
    bool first = true;
    while (true) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (stopped_)
                return;
        }
        takeLastError();
        uint64_t accepted = 0; // connections the broker had accepted before this attempt
        {
            std::lock_guard<std::mutex> lock(mutex_);
            accepted = connections_;
        }
        int rc = first
            ? mosquitto_connect(mosq_, options_.host.c_str(), options_.port, options_.keepaliveS)
            : mosquitto_reconnect(mosq_);
        if (rc == MOSQ_ERR_SUCCESS) {
            first = false;
            {
                std::lock_guard<std::mutex> lock(mutex_);
                if (stopped_) { // stop() came during the connection: its DISCONNECT came first
                    mosquitto_disconnect(mosq_);
                    return;
                }
            }
            // Returns on an error it does not retry itself (a TLS failure among them): say which.
            rc = mosquitto_loop_forever(mosq_, 1000, 1);
        }
        std::string reason =
            rc == MOSQ_ERR_ERRNO ? std::string("connection failed") : mosquitto_strerror(rc);
        if (std::string detail = takeLastError(); !detail.empty())
            reason += " " + detail; // "OpenSSL Error[0]: ...: certificate verify failed"

        std::unique_lock<std::mutex> lock(mutex_);
        if (stopped_)
            return;
        ++connectFailures_;
        connected_ = false;
        // The backoff starts over only after the broker accepted a connection (its CONNACK): a
        // TCP connection whose TLS handshake or login is refused is a failure like any other.
        if (connections_ > accepted)
            backoff.succeeded();
        const int waitS = backoff.failed();
        if (connectFailures_ == 1 || waitS == options_.reconnectMaxS)
            logger("mqtt")->warn("cannot connect to MQTT broker {}:{} ({}); retrying in {} s",
                options_.host, options_.port, reason, waitS);
        settled_.wait_for(lock, std::chrono::seconds(waitS), [this] { return stopped_; });
    }
}

bool MosquittoClient::handOver(const TelemetryMessage& m)
{
    int mid = 0;
    const int rc = mosquitto_publish(mosq_, &mid, m.topic.c_str(),
        static_cast<int>(m.payload.size()), m.payload.data(), m.qos, m.retain);
    if (rc == MOSQ_ERR_SUCCESS || (rc == MOSQ_ERR_NO_CONN && m.qos > 0)) {
        // A QoS 1 message refused for want of a connection is in libmosquitto's store all the
        // same, and goes out after the reconnection.
        ++published_;
        if (m.qos > 0)
            unacknowledged_.insert(mid);
        return true;
    }
    if (rc != MOSQ_ERR_NO_CONN)
        logger("mqtt")->warn("could not publish to {}: {}", m.topic, mosquitto_strerror(rc));
    return rc != MOSQ_ERR_NO_CONN; // any other refusal would repeat: the message is let go
}

void MosquittoClient::drainQueueLocked()
{
    while (connected_ && !queue_.empty()) {
        TelemetryMessage m = *queue_.pop();
        if (!handOver(m)) {
            queue_.pushFront(std::move(m));
            break;
        }
    }
    settled_.notify_all();
}

void MosquittoClient::publish(TelemetryMessage message)
{
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_)
        return;
    if (connected_ && queue_.empty() && handOver(message))
        return;
    queue_.push(std::move(message));
}

void MosquittoClient::connected(int rc)
{
    std::lock_guard<std::mutex> lock(mutex_);
    if (rc != 0) {
        ++connectFailures_;
        logger("mqtt")->warn("MQTT broker {}:{} refused the connection: {}", options_.host,
            options_.port, mosquitto_connack_string(rc));
        return;
    }
    connected_ = true;
    ++connections_;
    logger("mqtt")->info("{} MQTT broker {}:{}", everConnected_ ? "reconnected to" : "connected to",
        options_.host, options_.port);
    everConnected_ = true;
    handOver({options_.stateTopic, "online", 1, true});
    drainQueueLocked();
}

void MosquittoClient::disconnected(int rc)
{
    std::lock_guard<std::mutex> lock(mutex_);
    if (connected_ && rc != 0)
        logger("mqtt")->warn("lost the MQTT broker {}:{}; queueing (at most {} messages) and "
                             "reconnecting",
            options_.host, options_.port, queue_.capacity());
    connected_ = false;
}

void MosquittoClient::acknowledged(int mid)
{
    std::lock_guard<std::mutex> lock(mutex_);
    if (unacknowledged_.erase(mid) > 0) {
        ++acknowledged_;
        settled_.notify_all();
    }
}

bool MosquittoClient::drain(int64_t timeoutNs)
{
    std::unique_lock<std::mutex> lock(mutex_);
    return settled_.wait_for(lock, std::chrono::nanoseconds(timeoutNs),
        [this] { return queue_.empty() && unacknowledged_.empty(); });
}

void MosquittoClient::stop()
{
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stopped_)
            return;
        stopped_ = true;
    }
    settled_.notify_all(); // ends a backoff's wait
    if (mosq_ == nullptr)
        return;
    // A clean DISCONNECT: the broker drops the will (the state's `offline` was published); the
    // loop returns.
    mosquitto_disconnect(mosq_);
    if (thread_.joinable())
        thread_.join();
}

MqttCounters MosquittoClient::counters() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    MqttCounters c;
    c.published = published_;
    c.acknowledged = acknowledged_;
    c.dropped = queue_.dropped();
    c.connections = connections_;
    c.connectFailures = connectFailures_;
    c.connected = connected_;
    c.queued = queue_.size();
    c.unacknowledged = unacknowledged_.size();
    return c;
}

} // namespace

Expected<std::unique_ptr<MqttClient>> startMosquittoClient(const MqttClientOptions& options)
{
    auto client = std::make_unique<MosquittoClient>(options);
    if (Status s = client->init(); !s)
        return s;
    return std::unique_ptr<MqttClient>(std::move(client));
}

} // namespace jetagent
