// MQTT telemetry's pieces without a broker: the `mqtt` section's reading and its errors, the
// client's options (defaults, the password file), the device id, and the bounded queue.
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/config.h"
#include "jetagent/hal/sysfs.h"
#include "telemetry/mqtt_telemetry.h"
#include "telemetry/reconnect_backoff.h"
#include "telemetry/telemetry_queue.h"
#include "test_support.h"

namespace jetagent {
namespace {

namespace fs = std::filesystem;

const char* const kTask = "tasks:\n"
                          "  - model: m.onnx\n";

Expected<AgentConfig> parse(const std::string& mqtt)
{
    return parseConfig(std::string(kTask) + mqtt, "test.yaml", "/base");
}

std::string errorOf(const std::string& mqtt)
{
    auto r = parse(mqtt);
    EXPECT_FALSE(r.ok()) << "expected an error for:\n" << mqtt;
    return r.ok() ? "" : r.status().message();
}

TEST(MqttConfig, AbsentMeansNoTelemetry)
{
    auto c = parse("");
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_FALSE(c.value().mqtt.enabled());
}

TEST(MqttConfig, DefaultsAndEveryKey)
{
    auto c = parse("mqtt:\n"
                   "  host: broker.lan\n");
    ASSERT_TRUE(c.ok()) << c.status().message();
    const MqttConfig& m = c.value().mqtt;
    EXPECT_TRUE(m.enabled());
    EXPECT_EQ(m.effectivePort(), 1883);
    EXPECT_EQ(m.keepaliveS, 30);
    EXPECT_DOUBLE_EQ(m.intervalS, 5.0);
    EXPECT_EQ(m.queue, 1000);
    EXPECT_FALSE(m.tls.enabled());

    auto full = parse("mqtt:\n"
                      "  host: 10.0.0.2\n"
                      "  client_id: cam-7\n"
                      "  username: fleet\n"
                      "  password_file: secret.txt\n"
                      "  keepalive_s: 20\n"
                      "  tls: {ca_file: ca.pem, cert_file: /etc/c.pem, key_file: k.pem}\n"
                      "  topic_prefix: plant/line1/cam7\n"
                      "  interval_s: 0.5\n"
                      "  queue: 20\n"
                      "  drain_s: 2\n");
    ASSERT_TRUE(full.ok()) << full.status().message();
    const MqttConfig& f = full.value().mqtt;
    EXPECT_EQ(f.effectivePort(), 8883); // TLS's port when none is given
    EXPECT_EQ(f.clientId, "cam-7");
    EXPECT_EQ(f.passwordFile, "/base/secret.txt"); // relative to the config's directory
    EXPECT_EQ(f.tls.caFile, "/base/ca.pem");
    EXPECT_EQ(f.tls.certFile, "/etc/c.pem");
    EXPECT_EQ(f.topicPrefix, "plant/line1/cam7");
    EXPECT_EQ(f.queue, 20);
}

// The error of `mqtt` holds `part`.
void expectError(const std::string& mqtt, const std::string& part)
{
    const std::string error = errorOf(mqtt);
    EXPECT_NE(error.find(part), std::string::npos) << "expected '" << part << "' in: " << error;
}

TEST(MqttConfig, ErrorsNameTheKeyAndLine)
{
    // Lines 1 and 2 are the task; `mqtt:` is line 3 (file:line:column: key: message).
    expectError("mqtt:\n  port: 1883\n", "test.yaml:4:3: mqtt.host: missing");
    expectError("mqtt:\n  host: b\n  port: 70000\n", "test.yaml:5:9: mqtt.port");
    expectError("mqtt:\n  host: b\n  password_file: p\n",
        "test.yaml:5:18: mqtt.password_file: needs mqtt.username");
    expectError("mqtt:\n  host: b\n  tls:\n    cert_file: c.pem\n    key_file: k.pem\n",
        "mqtt.tls.ca_file: missing");
    expectError("mqtt:\n  host: b\n  tls:\n    ca_file: ca.pem\n    cert_file: c.pem\n",
        "mqtt.tls.key_file: missing: tls.cert_file and tls.key_file go together");
    expectError("mqtt:\n  host: b\n  topic_prefix: a/#\n",
        "test.yaml:5:17: mqtt.topic_prefix: 'a/#' holds a wildcard");
    expectError("mqtt:\n  host: b\n  topic_prefix: /a\n", "must not begin or end");
    expectError("mqtt:\n  host: b\n  interval_s: 0\n", "test.yaml:5:15: mqtt.interval_s");
    expectError("mqtt:\n  host: b\n  qos: 2\n", "test.yaml:5:3: mqtt.qos: unknown key");
    expectError("mqtt:\n  host: b\n  tls: {insecure: maybe}\n", "mqtt.tls.insecure");
    expectError("mqtt: broker.lan\n", "test.yaml:3:7: mqtt: expected a mapping");
}

TEST(MqttOptions, DefaultsComeFromTheDeviceId)
{
    MqttConfig config;
    config.host = "b";
    auto o = mqttClientOptions(config, "abc123");
    ASSERT_TRUE(o.ok()) << o.status().message();
    EXPECT_EQ(o.value().clientId, "jetagent-abc123");
    EXPECT_EQ(o.value().stateTopic, "jetagent/abc123/state");
    EXPECT_EQ(o.value().port, 1883);
    config.topicPrefix = "site/x";
    EXPECT_EQ(mqttTopicPrefix(config, "abc123"), "site/x");
}

TEST(MqttOptions, PasswordFileIsReadAndItsProblemsNamed)
{
    test::TempDir dir;
    MqttConfig config;
    config.host = "b";
    config.username = "u";
    config.passwordFile = dir / "missing.txt";
    auto missing = mqttClientOptions(config, "d");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.status().message().find("mqtt.password_file '" + config.passwordFile),
        std::string::npos)
        << missing.status().message();

    config.passwordFile = dir / "empty.txt";
    test::writeFile(config.passwordFile, "\n");
    auto empty = mqttClientOptions(config, "d");
    ASSERT_FALSE(empty.ok());
    EXPECT_NE(empty.status().message().find("is empty"), std::string::npos);

    config.passwordFile = dir / "pw.txt";
    test::writeFile(config.passwordFile, "s3cret\nignored\n");
    ::chmod(config.passwordFile.c_str(), 0644);
    test::LogCapture log("mqtt");
    auto ok = mqttClientOptions(config, "d");
    ASSERT_TRUE(ok.ok()) << ok.status().message();
    EXPECT_EQ(ok.value().password, "s3cret");
    EXPECT_EQ(log.count({"may be read by every user", "chmod o-r"}), 1);
    EXPECT_EQ(log.count({"s3cret"}), 0); // never logged
}

TEST(MqttOptions, DeviceIdIsTheSerialElseTheMachineId)
{
    test::TempDir dir;
    EXPECT_EQ(telemetryDeviceId(SysfsRoot(dir.path())), "unknown");
    fs::create_directories(dir / "etc");
    test::writeFile(dir / "etc/machine-id", "0123abcd\n");
    EXPECT_EQ(telemetryDeviceId(SysfsRoot(dir.path())), "0123abcd");
    fs::create_directories(dir / "proc/device-tree");
    test::writeFile(dir / "proc/device-tree/serial-number", std::string("1421/0005\0", 10));
    EXPECT_EQ(telemetryDeviceId(SysfsRoot(dir.path())), "14210005"); // '/' and NUL left out
}

TelemetryMessage message(const std::string& payload, int qos)
{
    return {"t", payload, qos, false};
}

TEST(TelemetryQueue, FullDropsTheOldestStatusBeforeAnySummary)
{
    TelemetryQueue q(3);
    EXPECT_FALSE(q.push(message("summary-1", 1)));
    EXPECT_FALSE(q.push(message("status-1", 0)));
    EXPECT_FALSE(q.push(message("status-2", 0)));
    EXPECT_TRUE(q.push(message("status-3", 0))); // status-1 goes, the summary stays
    EXPECT_EQ(q.dropped(), 1u);
    EXPECT_EQ(q.size(), 3u);
    EXPECT_EQ(q.pop()->payload, "summary-1");
    EXPECT_EQ(q.pop()->payload, "status-2");
    EXPECT_EQ(q.pop()->payload, "status-3");
    EXPECT_FALSE(q.pop().has_value());
}

TEST(TelemetryQueue, AllSummariesDropsTheOldest)
{
    TelemetryQueue q(2);
    q.push(message("a", 1));
    q.push(message("b", 1));
    EXPECT_TRUE(q.push(message("c", 1)));
    EXPECT_EQ(q.dropped(), 1u);
    EXPECT_EQ(q.pop()->payload, "b");
    EXPECT_EQ(q.pop()->payload, "c");
}

TEST(TelemetryQueue, PutBackGoesFirstAndStaysBounded)
{
    TelemetryQueue q(2);
    q.push(message("s1", 0));
    auto taken = q.pop();
    q.push(message("s2", 0));
    q.push(message("s3", 0));
    EXPECT_TRUE(q.pushFront(std::move(*taken))); // full meanwhile: the oldest status goes
    EXPECT_EQ(q.size(), 2u);
    EXPECT_EQ(q.dropped(), 1u);
    EXPECT_EQ(q.pop()->payload, "s1");
    EXPECT_EQ(q.pop()->payload, "s3");
}

TEST(ReconnectBackoff, DoublesToTheCapAndStartsOverAfterASuccess)
{
    ReconnectBackoff b(1, 30);
    std::vector<int> waits;
    for (int i = 0; i < 7; ++i)
        waits.push_back(b.failed());
    EXPECT_EQ(waits, (std::vector<int> {1, 2, 4, 8, 16, 30, 30}));
    b.succeeded();
    EXPECT_EQ(b.failed(), 1);
    EXPECT_EQ(b.failed(), 2);

    ReconnectBackoff odd(0, 0); // below the minimum: one second, every time
    EXPECT_EQ(odd.failed(), 1);
    EXPECT_EQ(odd.failed(), 1);
}

} // namespace
} // namespace jetagent
