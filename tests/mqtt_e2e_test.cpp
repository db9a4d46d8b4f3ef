// MQTT telemetry against a real broker (Debian's mosquitto, started here on loopback with a
// scratch directory): the broker is stopped and restarted 10 times while the daemon runs and a
// subscriber (libmosquitto, in this test) counts the status messages; the run's summary arrives
// once; `offline` is retained at a clean exit, and published by the broker as the will when the
// daemon is killed (SIGKILL).
#include <signal.h>

#include <algorithm>
#include <chrono>
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

constexpr int kRestarts = 10;
constexpr double kIntervalS = 0.2;
const char* const kPrefix = "test/dev1";

std::string agentConfig(int port)
{
    return test::mqttAgentConfig(
        port, kPrefix, "  interval_s: " + std::to_string(kIntervalS) + "\n  drain_s: 10\n");
}

// A broker with a persistence directory of its own, so that the subscriber's session (and the
// QoS 0 messages queued for it) outlive a restart; the subscriber; the daemon's config, c.yaml.
class MqttRun : public ::testing::Test {
protected:
    void SetUp() override
    {
        ASSERT_FALSE(test::mosquittoBinary().empty())
            << "mosquitto is not installed (tools/dev.sh installs it with the test packages)";
        port_ = test::unusedLoopbackPort();
        ASSERT_GT(port_, 0);
        test::BrokerOptions broker;
        broker.extraLines = "persistence true\npersistence_location " + dir_.path() +
            "/\nqueue_qos0_messages true\n";
        broker_.emplace(dir_, port_, broker);
        ASSERT_TRUE(broker_->start()) << test::readFile(broker_->logPath());
        test::SubscriberOptions sub;
        sub.prefix = kPrefix;
        sub.clientId = "jetagent-test-subscriber";
        sub_.emplace(port_, sub);
        test::writeFile(dir_ / "c.yaml", agentConfig(port_));
    }

    TempDir dir_;
    int port_ = 0;
    std::optional<test::MosquittoBroker> broker_;
    std::optional<test::MqttSubscriber> sub_;
};

TEST_F(MqttRun, BrokerRestartsSummaryOnceAndTheWillOnSigkill)
{
    const auto began = std::chrono::steady_clock::now();
    const int pid = test::spawnJetagent({"run", "-c", "c.yaml"}, dir_.path());
    ASSERT_TRUE(sub_->waitFor([&] { return sub_->statuses() >= 3; }, 30s))
        << test::readFile(dir_ / "spawn.err");
    for (int i = 0; i < kRestarts; ++i) {
        broker_->stop();
        std::this_thread::sleep_for(300ms);
        ASSERT_TRUE(broker_->start()) << "restart " << i;
        const size_t before = sub_->statuses();
        // Both clients back (their backoff starts at 1 s) and statuses flowing again.
        ASSERT_TRUE(sub_->waitFor([&] { return sub_->statuses() > before + 2; }, 10s))
            << "restart " << i << "\n"
            << test::readFile(dir_ / "spawn.err");
    }
    ::kill(pid, SIGTERM);
    EXPECT_EQ(test::waitExit(pid, 30000), 0) << test::readFile(dir_ / "spawn.err");
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    ASSERT_TRUE(sub_->waitFor([&] { return sub_->sawCleanExit(1); }, 10s))
        << test::readFile(dir_ / "spawn.err");
    std::this_thread::sleep_for(1s); // a second copy would have come by now
    EXPECT_EQ(sub_->summaries(), 1u);

    // Statuses queued while the broker was away arrive after it comes back. The subscriber loses
    // those the broker delivers while it is itself reconnecting (a broker queues no QoS 0 message
    // for an absent client), which a loaded machine makes longer: a quarter of the run's at
    // least, beside the three fresh ones each restart above already required.
    const double expected = seconds / kIntervalS;
    EXPECT_GE(static_cast<double>(sub_->statuses()), 0.25 * expected)
        << sub_->statuses() << " statuses in " << seconds << " s";
    const auto status = nlohmann::json::parse(sub_->lastOf("/status"));
    EXPECT_EQ(status["schema"], "jetagent.status/1");
    EXPECT_EQ(status["tasks"][0]["name"], "shapes");
    EXPECT_GT(status["tasks"][0]["frames"].get<uint64_t>(), 0u);
    // Every frame of the demo classifier is a result, and the rate is the source's (30 fps) in
    // some status of the run.
    EXPECT_EQ(status["tasks"][0]["results"], status["tasks"][0]["frames"]) << status.dump();
    double fastest = 0;
    for (const std::string& text : sub_->allOf("/status")) {
        const auto s = nlohmann::json::parse(text);
        if (!s["tasks"].empty() && s["tasks"][0]["fps"].is_number())
            fastest = std::max(fastest, s["tasks"][0]["fps"].get<double>());
    }
    EXPECT_GT(fastest, 20.0) << "no status of the run shows the results' rate";
    const auto summary = nlohmann::json::parse(sub_->lastOf("/summary"));
    EXPECT_EQ(summary["schema"], "jetagent.summary/1");
    EXPECT_GE(summary["summary"]["mqtt"]["reconnects"].get<uint64_t>(), uint64_t(kRestarts))
        << summary["summary"]["mqtt"];
    EXPECT_EQ(summary["summary"]["mqtt"]["dropped"], 0) << summary["summary"]["mqtt"];
    EXPECT_EQ(sub_->states().front(), "online");

    // Killed: no clean DISCONNECT, so the broker publishes the will.
    const size_t statesBefore = sub_->states().size();
    const int killed = test::spawnJetagent({"run", "-c", "c.yaml"}, dir_.path());
    ASSERT_TRUE(sub_->waitFor(
        [&] { return sub_->states().size() > statesBefore && sub_->states().back() == "online"; },
        30s))
        << test::readFile(dir_ / "spawn.err");
    ::kill(killed, SIGKILL);
    test::waitExit(killed, 10000);
    EXPECT_TRUE(sub_->waitFor([&] { return sub_->states().back() == "offline"; }, 10s));
}

// A run that ends while the broker is away: its summary (QoS 1) and `offline` wait in the queue
// for up to mqtt.drain_s at exit, and reach the broker once it is back.
TEST_F(MqttRun, SummaryOfARunEndingWhileTheBrokerIsAwayArrivesLater)
{
    const int pid = test::spawnJetagent({"run", "-c", "c.yaml"}, dir_.path());
    ASSERT_TRUE(sub_->waitFor([&] { return sub_->statuses() >= 3; }, 30s))
        << test::readFile(dir_ / "spawn.err");
    broker_->stop();
    ::kill(pid, SIGTERM);
    std::this_thread::sleep_for(1500ms); // the run has ended; its summary waits in the queue
    EXPECT_EQ(sub_->summaries(), 0u);
    ASSERT_TRUE(broker_->start());
    EXPECT_EQ(test::waitExit(pid, 30000), 0) << test::readFile(dir_ / "spawn.err");
    ASSERT_TRUE(sub_->waitFor([&] { return sub_->sawCleanExit(1); }, 10s))
        << test::readFile(dir_ / "spawn.err");
    std::this_thread::sleep_for(1s);
    EXPECT_EQ(sub_->summaries(), 1u);
    const auto summary = nlohmann::json::parse(sub_->lastOf("/summary"));
    EXPECT_EQ(summary["schema"], "jetagent.summary/1");
    EXPECT_FALSE(summary["summary"]["mqtt"]["connected"].get<bool>()); // as the run ended
}

} // namespace
} // namespace jetagent
