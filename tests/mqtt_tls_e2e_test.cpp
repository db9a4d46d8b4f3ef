// MQTT telemetry over TLS against a real broker (Debian's mosquitto on loopback, with a TLS
// listener), with certificates made here by the `openssl` command line: a throwaway CA, the
// broker's certificate for 127.0.0.1 and localhost, and a client certificate. The daemon publishes
// through `mqtt.tls` (ca_file alone, and with cert_file and key_file to a broker that requires a
// client certificate) and a subscriber, over TLS too, sees the statuses, the summary once and the
// retained state; a broker whose certificate another CA signed is refused, and so is the daemon
// without a client certificate by a broker that requires one (the daemon runs on, publishes
// nothing, logs why and counts the failures); a ca_file that does not exist stops the start with
// an error naming mqtt.tls.ca_file.
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "mqtt_broker.h"
#include "test_support.h"

namespace jetagent {
namespace {

using namespace std::chrono_literals;
using test::TempDir;

const char* const kPrefix = "tls/dev1";

bool haveOpenssl()
{
    return std::system("openssl version >/dev/null 2>&1") == 0;
}

// Runs `command` (a shell command line) in `dir`, its output appended to dir/openssl.log; true
// when it succeeded.
bool shell(const TempDir& dir, const std::string& command)
{
    const std::string line =
        "cd '" + dir.path() + "' && (" + command + ") >>openssl.log 2>&1 </dev/null";
    return std::system(line.c_str()) == 0;
}

// A CA (NAME-ca.pem, NAME-ca.key), then certificates it signs: `leaf` (LEAF.pem, LEAF.key) for
// the server (127.0.0.1 and localhost) or the client. EC P-256 keys: each takes milliseconds.
bool makeCa(const TempDir& dir, const std::string& name)
{
    return shell(dir,
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
        "-subj '/CN=jetagent test CA " +
            name + "' -keyout " + name + "-ca.key -out " + name +
            "-ca.pem -addext basicConstraints=critical,CA:TRUE "
            "-addext keyUsage=critical,keyCertSign,cRLSign");
}

bool makeLeaf(const TempDir& dir, const std::string& ca, const std::string& leaf, bool server)
{
    const std::string ext = leaf + ".ext";
    test::writeFile(dir / ext,
        server ? "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"
               : "extendedKeyUsage=clientAuth\n");
    return shell(dir,
        "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj '/CN=" + leaf +
            "' -keyout " + leaf + ".key -out " + leaf + ".csr && openssl x509 -req -in " + leaf +
            ".csr -CA " + ca + "-ca.pem -CAkey " + ca +
            "-ca.key -CAcreateserial -days 2 -extfile " + ext + " -out " + leaf + ".pem");
}

// The daemon's config: a synthetic source, statuses every 0.2 s, `tls` as the mqtt.tls mapping.
std::string agentConfig(int port, const std::string& tls, double drainS)
{
    return test::mqttAgentConfig(port, kPrefix,
        "  interval_s: 0.2\n  drain_s: " + std::to_string(drainS) + "\n  tls: " + tls + "\n");
}

#define REQUIRE_TLS_TOOLS()                                                                        \
    ASSERT_FALSE(test::mosquittoBinary().empty())                                                  \
        << "mosquitto is not installed (tools/dev.sh installs it with the test packages)";         \
    ASSERT_TRUE(haveOpenssl())                                                                     \
        << "openssl is not installed (tools/dev.sh installs it with the test packages)"

// A broker presenting certificates of a CA made here, the port it listens on, the daemon's
// config in c.yaml and a subscriber over TLS.
class MqttTlsRun : public ::testing::Test {
protected:
    // Makes `ca`'s CA and the certificates it signs for the broker (server) and the subscriber,
    // then starts a broker on a free loopback port that presents server.pem and checks client
    // certificates against `ca`'s CA, requiring one or not.
    void startBroker(const std::string& ca, bool requireCertificate)
    {
        REQUIRE_TLS_TOOLS();
        ASSERT_TRUE(makeCa(dir_, ca) && makeLeaf(dir_, ca, "server", true) &&
            makeLeaf(dir_, ca, "subscriber", false))
            << test::readFile(dir_ / "openssl.log");
        port_ = test::unusedLoopbackPort();
        ASSERT_GT(port_, 0);
        test::BrokerOptions broker;
        broker.name = "server";
        broker.tls = test::BrokerTls {
            dir_ / (ca + "-ca.pem"), dir_ / "server.pem", dir_ / "server.key", requireCertificate};
        broker_.emplace(dir_, port_, broker);
        ASSERT_TRUE(broker_->start()) << test::readFile(broker_->logPath());
    }

    // A subscriber over TLS to the broker, trusting `caFile` (in the directory) and presenting
    // the subscriber's certificate.
    test::SubscriberOptions subscriberOptions(const std::string& caFile) const
    {
        return {kPrefix, "", dir_ / caFile, dir_ / "subscriber.pem", dir_ / "subscriber.key"};
    }

    void publishesOverTls(const std::string& tls);
    void refusedOverTls(
        const std::string& subscriberCa, const std::string& tls, const std::string& reason);

    TempDir dir_;
    int port_ = 0;
    std::optional<test::MosquittoBroker> broker_;
};

// Publishes over TLS to the broker (certificates of the CA "fleet") with
// mqtt.tls set to `tls`, and checks what a TLS subscriber receives.
void MqttTlsRun::publishesOverTls(const std::string& tls)
{
    test::MqttSubscriber sub(port_, subscriberOptions("fleet-ca.pem"));
    ASSERT_EQ(sub.tlsSetResult(), MOSQ_ERR_SUCCESS);
    ASSERT_TRUE(sub.waitFor([&] { return sub.subscribed(); }, 10s))
        << test::readFile(dir_ / "server-broker.log");
    test::writeFile(dir_ / "c.yaml", agentConfig(port_, tls, 10));
    const int pid = test::spawnJetagent({"run", "-c", "c.yaml"}, dir_.path());
    ASSERT_TRUE(sub.waitFor([&] { return sub.count("/status") >= 3; }, 20s))
        << test::readFile(dir_ / "spawn.err") << test::readFile(dir_ / "server-broker.log");
    ::kill(pid, SIGTERM);
    EXPECT_EQ(test::waitExit(pid, 30000), 0) << test::readFile(dir_ / "spawn.err");
    ASSERT_TRUE(sub.waitFor([&] { return sub.sawCleanExit(2); }, 10s))
        << test::readFile(dir_ / "spawn.err");
    std::this_thread::sleep_for(500ms); // a second summary would have come by now
    EXPECT_EQ(sub.count("/summary"), 1u);
    EXPECT_EQ(sub.states().front(), "online");

    const auto status = nlohmann::json::parse(sub.lastOf("/status"));
    EXPECT_EQ(status["schema"], "jetagent.status/1");
    EXPECT_EQ(status["tasks"][0]["name"], "shapes");
    EXPECT_TRUE(status["mqtt"]["connected"].get<bool>());
    const auto summary = nlohmann::json::parse(sub.lastOf("/summary"));
    EXPECT_EQ(summary["schema"], "jetagent.summary/1");
    EXPECT_GT(summary["summary"]["tasks"][0]["frames"]["processed"].get<uint64_t>(), 0u) << summary;
    EXPECT_EQ(summary["summary"]["mqtt"]["connections"], 1) << summary["summary"]["mqtt"];
    EXPECT_EQ(summary["summary"]["mqtt"]["connect_failures"], 0) << summary["summary"]["mqtt"];
    EXPECT_EQ(summary["summary"]["mqtt"]["dropped"], 0) << summary["summary"]["mqtt"];
}

// The broker requires a client certificate: the daemon presents its own (cert_file, key_file).
TEST_F(MqttTlsRun, ClientCertificate)
{
    ASSERT_NO_FATAL_FAILURE(startBroker("fleet", true));
    ASSERT_TRUE(makeLeaf(dir_, "fleet", "cam7", false)) << test::readFile(dir_ / "openssl.log");
    publishesOverTls("{ca_file: fleet-ca.pem, cert_file: cam7.pem, key_file: cam7.key}");
}

// Server authentication only: the daemon checks the broker's certificate against ca_file.
TEST_F(MqttTlsRun, CaFileOnly)
{
    ASSERT_NO_FATAL_FAILURE(startBroker("fleet", false));
    publishesOverTls("{ca_file: fleet-ca.pem}");
}

// The daemon (mqtt.tls set to `tls`) against a broker on `port_` that refuses it in the TLS
// handshake: it runs on, publishes nothing, logs OpenSSL's `reason` and counts the failures in
// the summary. The subscriber trusts `subscriberCa` (the broker's CA, in the directory).
void MqttTlsRun::refusedOverTls(
    const std::string& subscriberCa, const std::string& tls, const std::string& reason)
{
    // The broker's own subscriber: it would see anything the daemon got through.
    test::MqttSubscriber sub(port_, subscriberOptions(subscriberCa));
    ASSERT_TRUE(sub.waitFor([&] { return sub.subscribed(); }, 10s))
        << test::readFile(dir_ / "server-broker.log");
    test::writeFile(dir_ / "c.yaml", agentConfig(port_, tls, 1));
    const int pid = test::spawnJetagent({"run", "-c", "c.yaml"}, dir_.path());
    ASSERT_TRUE(sub.waitFor(
        [&] { return test::readFile(dir_ / "spawn.err").find(reason) != std::string::npos; }, 15s))
        << test::readFile(dir_ / "spawn.err");
    std::this_thread::sleep_for(1500ms); // the retry after 1 s: refused too
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, WNOHANG), 0) << "the daemon exited\n"
                                                   << test::readFile(dir_ / "spawn.err");
    ::kill(pid, SIGTERM);
    EXPECT_EQ(test::waitExit(pid, 30000), 0) << test::readFile(dir_ / "spawn.err");
    const std::string err = test::readFile(dir_ / "spawn.err");
    EXPECT_NE(err.find("cannot connect to MQTT broker 127.0.0.1:" + std::to_string(port_)),
        std::string::npos)
        << err;

    EXPECT_EQ(sub.count("/status"), 0u);
    EXPECT_EQ(sub.count("/summary"), 0u);
    EXPECT_TRUE(sub.states().empty());
    const auto summary = nlohmann::json::parse(
        test::readFile(test::onlyRunDirectory(dir_ / "logs") + "/summary.json"));
    const auto& mqtt = summary["mqtt"];
    EXPECT_EQ(mqtt["connections"], 0) << mqtt;
    EXPECT_FALSE(mqtt["connected"].get<bool>()) << mqtt;
    EXPECT_GE(mqtt["connect_failures"].get<uint64_t>(), 2u) << mqtt;
}

// The broker's certificate was signed by another CA than the daemon's ca_file.
TEST_F(MqttTlsRun, BrokerOfAnotherCaIsRefused)
{
    ASSERT_NO_FATAL_FAILURE(startBroker("rogue", false));
    ASSERT_TRUE(makeCa(dir_, "fleet") && makeLeaf(dir_, "fleet", "cam7", false))
        << test::readFile(dir_ / "openssl.log");
    refusedOverTls("rogue-ca.pem",
        "{ca_file: fleet-ca.pem, cert_file: cam7.pem, key_file: cam7.key}",
        "certificate verify failed");
}

// The broker requires a client certificate and the daemon has none (ca_file alone).
TEST_F(MqttTlsRun, NoClientCertificateIsRefused)
{
    ASSERT_NO_FATAL_FAILURE(startBroker("fleet", true));
    refusedOverTls("fleet-ca.pem", "{ca_file: fleet-ca.pem}", "certificate required");
}

// A ca_file that does not exist: the start stops with an error naming the key and the file.
TEST_F(MqttTlsRun, MissingCaFileIsAConfigError)
{
    const int port = test::unusedLoopbackPort();
    ASSERT_GT(port, 0);
    test::writeFile(dir_ / "c.yaml", agentConfig(port, "{ca_file: nowhere/ca.pem}", 1));
    const auto r = test::runJetagent({"run", "-c", "c.yaml"}, dir_.path());
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE(r.err.find("mqtt.tls.ca_file"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("nowhere/ca.pem"), std::string::npos) << r.err;
}

} // namespace
} // namespace jetagent
