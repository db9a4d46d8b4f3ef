// MQTT telemetry: options, the status document and its thread (mqtt_telemetry.h).
#include "telemetry/mqtt_telemetry.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>

#include "jetagent/base/clock.h"
#include "jetagent/base/json_text.h"
#include "jetagent/base/log.h"
#include "jetagent/base/regular_file.h"
#include "jetagent/hal/sysfs.h"
#include "live/live_power.h"

namespace jetagent {

using json = nlohmann::json;

namespace {

constexpr uint64_t kMaxPasswordBytes = 4096;

double round3(double v)
{
    return std::round(v * 1000.0) / 1000.0;
}

std::string utcNow()
{
    const std::time_t now = std::time(nullptr);
    std::tm tm {};
    gmtime_r(&now, &tm);
    char text[32];
    const size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return std::string(text, n);
}

std::string idCharacters(const std::string& raw)
{
    std::string id;
    for (char c : raw)
        if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
            c == '-' || c == '_')
            id += c;
    return id.substr(0, 64);
}

// A steady-state latency series as {p50, p99, max} in ms, nearest rank; null before a value.
json latencyJson(const SampleSeries& series)
{
    if (series.count() == 0)
        return nullptr;
    return {{"p50", round3(nsToMs(series.percentile(50)))},
        {"p99", round3(nsToMs(series.percentile(99)))}, {"max", round3(nsToMs(series.max()))}};
}

} // namespace

std::string telemetryDeviceId(const SysfsRoot& root)
{
    for (const char* file : {"/proc/device-tree/serial-number", "/etc/machine-id"}) {
        auto text = root.readText(file);
        if (text)
            if (std::string id = idCharacters(text.value()); !id.empty())
                return id;
    }
    return "unknown";
}

std::string mqttTopicPrefix(const MqttConfig& config, const std::string& deviceId)
{
    return config.topicPrefix.empty() ? "jetagent/" + deviceId : config.topicPrefix;
}

Expected<MqttClientOptions> mqttClientOptions(const MqttConfig& config, const std::string& deviceId)
{
    MqttClientOptions o;
    o.host = config.host;
    o.port = config.effectivePort();
    o.clientId = config.clientId.empty() ? "jetagent-" + deviceId : config.clientId;
    o.username = config.username;
    o.keepaliveS = config.keepaliveS;
    o.tls = config.tls;
    // libmosquitto only says that one of the TLS files is unreadable: name the key and the file
    // here (their contents are checked in the handshake, each failure counted and logged).
    for (auto [key, file] : {std::pair<const char*, const std::string*> {"ca_file", &o.tls.caFile},
             {"cert_file", &o.tls.certFile}, {"key_file", &o.tls.keyFile}})
        if (!file->empty() && ::access(file->c_str(), R_OK) != 0)
            return Status::invalid(
                "mqtt.tls." + std::string(key) + " '" + *file + "': " + errnoText(errno));
    o.stateTopic = mqttTopicPrefix(config, deviceId) + "/state";
    o.queue = static_cast<size_t>(config.queue);
    if (!config.passwordFile.empty()) {
        const std::string what = "mqtt.password_file '" + config.passwordFile + "'";
        std::string text;
        if (Status s = readRegularFile(config.passwordFile, what, kMaxPasswordBytes, text); !s)
            return Status::invalid(s.message());
        const size_t end = text.find_first_of("\r\n");
        o.password = text.substr(0, end);
        if (o.password.empty())
            return Status::invalid(what + " is empty: its first line is the password");
        struct stat st { };
        if (::stat(config.passwordFile.c_str(), &st) == 0 && (st.st_mode & S_IROTH) != 0)
            logger("mqtt")->warn(
                "{} may be read by every user of this machine: chmod o-r it", what);
    }
    return o;
}

Expected<std::unique_ptr<MqttTelemetry>> MqttTelemetry::start(
    const MqttConfig& config, const std::string& deviceId)
{
    auto options = mqttClientOptions(config, deviceId);
    if (!options)
        return options.status();
    auto client = MqttClient::start(options.value());
    if (!client)
        return client.status();
    std::unique_ptr<MqttTelemetry> telemetry(new MqttTelemetry(
        config, deviceId, mqttTopicPrefix(config, deviceId), std::move(client).value()));
    telemetry->thread_ = std::thread([t = telemetry.get()] { t->statusLoop(); });
    logger("mqtt")->info("telemetry to {}:{} as '{}' under {}/ (status every {} s)", config.host,
        options.value().port, options.value().clientId, telemetry->prefix_, config.intervalS);
    return telemetry;
}

MqttTelemetry::MqttTelemetry(const MqttConfig& config, std::string deviceId, std::string prefix,
    std::unique_ptr<MqttClient> client)
    : config_(config),
      deviceId_(std::move(deviceId)),
      prefix_(std::move(prefix)),
      client_(std::move(client)),
      startNs_(monotonicNs())
{
}

MqttTelemetry::~MqttTelemetry()
{
    finish();
}

void MqttTelemetry::attach(LiveRun run, const PowerMonitor* power)
{
    std::lock_guard<std::mutex> lock(mutex_);
    streamRates_.assign(run.tasks.size(), StreamRates());
    resultsBefore_.assign(run.tasks.size(), 0);
    previousNs_ = monotonicNs();
    run_ = std::move(run);
    power_ = power;
    attached_ = true;
}

void MqttTelemetry::detach()
{
    std::lock_guard<std::mutex> lock(mutex_);
    attached_ = false;
    run_.dropped = nullptr;
    run_.lost = nullptr;
    run_.streamDropped = nullptr;
    run_.readStats = nullptr;
    power_ = nullptr; // a reload may replace the monitor
}

json MqttTelemetry::countersJson() const
{
    const MqttCounters c = client_->counters();
    return {{"connected", c.connected}, {"published", c.published},
        {"acknowledged", c.acknowledged}, {"dropped", c.dropped}, {"queued", c.queued},
        {"unacknowledged", c.unacknowledged}, {"connections", c.connections},
        {"reconnects", c.reconnects()}, {"connect_failures", c.connectFailures}};
}

json MqttTelemetry::statusJson()
{
    const int64_t now = monotonicNs();
    json status = {{"schema", kMqttStatusSchema}, {"device", deviceId_}, {"time_utc", utcNow()},
        {"uptime_s", round3(nsToS(now - startNs_))}};
    std::lock_guard<std::mutex> lock(mutex_);
    status["running"] = attached_;
    status["run"] = attached_ ? run_.context : json(nullptr);
    json tasks = json::array();
    const double seconds = nsToS(now - previousNs_);
    for (size_t i = 0; attached_ && i < run_.tasks.size(); ++i) {
        json task = {{"name", run_.tasks[i].name}};
        if (run_.readStats)
            run_.readStats(i, [&](const TaskStats& stats) {
                task["frames"] = stats.frames;
                task["results"] = stats.results;
                task["failed"] = stats.failed;
                task["deadline_misses"] = stats.deadlineMisses;
                task["fps"] = seconds > 0
                    ? json(round3(double(stats.results - resultsBefore_[i]) / seconds))
                    : json(nullptr);
                resultsBefore_[i] = stats.results;
                task["end_to_end_ms"] = latencyJson(stats.endToEnd);
                task["inference_ms"] = latencyJson(stats.inference);
                std::function<uint64_t(size_t)> dropped;
                if (run_.streamDropped)
                    dropped = [&](size_t stream) { return run_.streamDropped(i, stream); };
                task["streams"] = stats.streamStats.empty()
                    ? json(nullptr)
                    : liveStreamRows(stats, run_.streams, dropped, now, streamRates_[i]);
            });
        task["dropped"] = run_.dropped ? json(run_.dropped(i)) : json(nullptr);
        task["lost"] = run_.lost ? json(run_.lost(i)) : json(nullptr);
        tasks.push_back(std::move(task));
    }
    previousNs_ = now;
    status["tasks"] = std::move(tasks);
    json names;
    json point;
    json zones = json::array();
    status["power"] = power_ ? livePowerJson(*power_, names, point, zones) : json(nullptr);
    status["temperatures"] = zones;
    status["mqtt"] = countersJson();
    return status;
}

void MqttTelemetry::publishSummary(const json& summary)
{
    json message = {{"schema", kMqttSummarySchema}, {"device", deviceId_}, {"time_utc", utcNow()},
        {"summary", summary}};
    client_->publish({prefix_ + "/summary", jsonText(message), 1, false});
}

void MqttTelemetry::statusLoop()
{
    const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(config_.intervalS));
    auto next = std::chrono::steady_clock::now();
    while (true) {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            if (wake_.wait_until(lock, next, [this] { return stopping_; }))
                return;
        }
        next += period;
        const auto now = std::chrono::steady_clock::now();
        if (next < now) // a stalled thread skips the periods it missed
            next = now + period;
        client_->publish({prefix_ + "/status", jsonText(statusJson()), 0, false});
    }
}

void MqttTelemetry::finish()
{
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (finished_)
            return;
        finished_ = true;
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable())
        thread_.join();
    client_->publish({prefix_ + "/state", "offline", 1, true});
    const auto drainNs = static_cast<int64_t>(config_.drainS * 1e9);
    if (!client_->drain(drainNs)) {
        const MqttCounters c = client_->counters();
        logger("mqtt")->warn("{} message(s) not delivered to {} within mqtt.drain_s ({} s): "
                             "left behind at exit",
            c.queued + c.unacknowledged, config_.host, config_.drainS);
    }
    client_->stop();
}

} // namespace jetagent
