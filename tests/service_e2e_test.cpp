// jetagent run as systemd runs it: the test plays systemd's side of the notify protocol (a datagram
// socket named by NOTIFY_SOCKET, WATCHDOG_USEC), sends the signals systemctl would, and checks the
// messages, the exit status and the logs.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "onnx_builder.h"
#include "run_checks.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace jetagent {
namespace {

using test::TempDir;

using Clock = std::chrono::steady_clock;

// systemd's end of the notify socket: every datagram, with the time it arrived.
class FakeSystemd {
public:
    explicit FakeSystemd(const std::string& path) : path_(path)
    {
        fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un address {};
        address.sun_family = AF_UNIX;
        std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
        EXPECT_EQ(::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0)
            << std::strerror(errno);
    }
    ~FakeSystemd() { ::close(fd_); }
    FakeSystemd(const FakeSystemd&) = delete;
    FakeSystemd& operator=(const FakeSystemd&) = delete;

    struct Message {
        Clock::time_point at;
        std::string text;
        bool has(const std::string& assignment) const
        {
            return ("\n" + text + "\n").find("\n" + assignment) != std::string::npos;
        }
    };

    // Reads datagrams until one contains `assignment` (e.g. "READY=1"), or `timeoutMs` passes.
    // Returns its index in messages(), or -1.
    int waitFor(const std::string& assignment, int timeoutMs)
    {
        for (size_t i = scanned_; i < messages_.size(); ++i)
            if (messages_[i].has(assignment))
                return static_cast<int>(scanned_ = i + 1) - 1;
        const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
        while (Clock::now() < deadline) {
            if (!receive(50))
                continue;
            if (messages_.back().has(assignment)) {
                scanned_ = messages_.size();
                return static_cast<int>(messages_.size()) - 1;
            }
        }
        return -1;
    }
    // Reads whatever arrives within `ms`.
    void drain(int ms)
    {
        const auto deadline = Clock::now() + std::chrono::milliseconds(ms);
        while (Clock::now() < deadline)
            receive(20);
    }
    size_t count(const std::string& assignment, size_t from = 0) const
    {
        size_t n = 0;
        for (size_t i = from; i < messages_.size(); ++i)
            n += messages_[i].has(assignment) ? 1 : 0;
        return n;
    }
    const std::vector<Message>& messages() const { return messages_; }
    std::string transcript() const
    {
        std::string all;
        for (const auto& m : messages_) {
            std::string line = m.text;
            std::replace(line.begin(), line.end(), '\n', ' ');
            all += line + "\n";
        }
        return all;
    }

private:
    bool receive(int ms)
    {
        pollfd p {fd_, POLLIN, 0};
        if (::poll(&p, 1, ms) <= 0)
            return false;
        char buffer[4096];
        const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
        if (n <= 0)
            return false;
        messages_.push_back({Clock::now(), std::string(buffer, static_cast<size_t>(n))});
        return true;
    }

    std::string path_;
    int fd_ = -1;
    std::vector<Message> messages_;
    size_t scanned_ = 0;
};

struct Service {
    pid_t pid = -1;
    int stdinFd = -1; // the write end of its standard input, when it reads frames from it
};

// Starts the binary as systemd would: NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID (its own pid)
// in its environment; output to spawn.out and spawn.err in `workdir`.
Service startService(const std::vector<std::string>& args, const std::string& workdir,
    const std::string& socket, long watchdogUsec, bool pipeStdin)
{
    test::SpawnOptions options;
    options.environment.emplace_back("NOTIFY_SOCKET", socket);
    if (watchdogUsec > 0) {
        options.environment.emplace_back("WATCHDOG_USEC", std::to_string(watchdogUsec));
        options.environment.emplace_back("WATCHDOG_PID", "$PID");
    }
    int in[2] = {-1, -1};
    if (pipeStdin) {
        EXPECT_EQ(::pipe(in), 0);
        options.stdinFd = in[0];
        options.closeInChild = {in[1]};
    }
    Service s;
    s.pid = test::spawnJetagent(args, workdir, options);
    if (pipeStdin) {
        ::close(in[0]);
        s.stdinFd = in[1];
    }
    return s;
}

std::string shapesTask(int topK)
{
    return "tasks:\n" +
        test::shapesTaskYaml("shapes", "    postprocess: {top_k: " + std::to_string(topK) + "}\n");
}

std::string serviceConfig(const std::string& source, int topK)
{
    return "source: " + source + "\n" + shapesTask(topK) +
        "logging: {dir: logs, status_interval_s: 0}\n";
}

std::vector<std::string> runDirectories(const std::string& logDir)
{
    std::vector<std::string> dirs;
    for (const auto& e : fs::directory_iterator(logDir))
        dirs.push_back(e.path().string());
    std::sort(dirs.begin(), dirs.end());
    return dirs;
}

// The number of results the first frame of a run logged (its top_k).
size_t loggedTopK(const std::string& runDir)
{
    const auto line = test::readLines(runDir + "/shapes.frames.jsonl").at(0);
    return nlohmann::json::parse(line)["top"].size();
}

constexpr long kWatchdogUsec = 1'000'000; // pings due every 0.5 s

// Start-up, watchdog while frames flow, a good reload, a bad reload, and the stop: the sequence
// systemd sees, and the run directories each config left.
TEST(ServiceProtocol, ReadyWatchdogReloadAndStop)
{
    TempDir dir;
    const std::string config = dir / "agent.yaml";
    test::writeFile(config, serviceConfig("{uri: synthetic://shapes, fps: 30}", 3));
    FakeSystemd systemd(dir / "notify.sock");
    Service service = startService(
        {"run", "--config", config}, dir.path(), dir / "notify.sock", kWatchdogUsec, false);

    // READY=1 only once the source and the engine are up, with a state line.
    const int ready = systemd.waitFor("READY=1", 60'000);
    ASSERT_GE(ready, 0) << systemd.transcript() << test::readFile(dir / "spawn.err");
    EXPECT_TRUE(systemd.messages()[static_cast<size_t>(ready)].has("STATUS=synthetic://shapes"));
    EXPECT_EQ(systemd.count("STOPPING=1"), 0u);
    // Pings while frames flow.
    ASSERT_GE(systemd.waitFor("WATCHDOG=1", 10'000), 0) << systemd.transcript();
    ASSERT_GE(systemd.waitFor("WATCHDOG=1", 10'000), 0) << systemd.transcript();

    // A good reload: top_k 3 -> 2. RELOADING=1 with the monotonic time, then READY=1.
    test::writeFile(config, serviceConfig("{uri: synthetic://shapes, fps: 30}", 2));
    ASSERT_EQ(kill(service.pid, SIGHUP), 0);
    const int reloading = systemd.waitFor("RELOADING=1", 20'000);
    ASSERT_GE(reloading, 0) << systemd.transcript();
    EXPECT_TRUE(systemd.messages()[static_cast<size_t>(reloading)].has("MONOTONIC_USEC="));
    const int readyAgain = systemd.waitFor("READY=1", 60'000);
    ASSERT_GT(readyAgain, reloading) << systemd.transcript();
    EXPECT_EQ(systemd.messages()[static_cast<size_t>(readyAgain)].text.find("reload failed"),
        std::string::npos)
        << systemd.transcript();
    ASSERT_GE(systemd.waitFor("WATCHDOG=1", 10'000), 0) << systemd.transcript();

    // A bad reload: an unknown key. RELOADING=1, then READY=1 saying it failed and why; the
    // running config goes on (frames keep flowing: the watchdog keeps being pinged).
    test::writeFile(config, serviceConfig("{uri: synthetic://shapes, fps: 30, colour: red}", 1));
    ASSERT_EQ(kill(service.pid, SIGHUP), 0);
    ASSERT_GE(systemd.waitFor("RELOADING=1", 20'000), 0) << systemd.transcript();
    const int refused = systemd.waitFor("READY=1", 20'000);
    ASSERT_GE(refused, 0) << systemd.transcript();
    const std::string& refusal = systemd.messages()[static_cast<size_t>(refused)].text;
    EXPECT_NE(refusal.find("reload failed"), std::string::npos) << refusal;
    EXPECT_NE(refusal.find("colour"), std::string::npos) << refusal;
    const size_t afterRefusal = systemd.messages().size();
    ASSERT_GE(systemd.waitFor("WATCHDOG=1", 10'000), 0) << systemd.transcript();
    EXPECT_GE(systemd.count("WATCHDOG=1", afterRefusal), 1u);
    EXPECT_NE(test::readFile(dir / "spawn.err").find("colour"), std::string::npos);

    // A reload that changes nothing the task uses (the status interval): the engine is kept, so
    // the next run has no cold start.
    test::writeFile(config,
        "source: {uri: synthetic://shapes, fps: 30}\n" + shapesTask(2) +
            "logging: {dir: logs, status_interval_s: 30}\n");
    ASSERT_EQ(kill(service.pid, SIGHUP), 0);
    ASSERT_GE(systemd.waitFor("RELOADING=1", 20'000), 0) << systemd.transcript();
    const int keptReady = systemd.waitFor("READY=1", 60'000);
    ASSERT_GE(keptReady, 0) << systemd.transcript();
    EXPECT_EQ(systemd.messages()[static_cast<size_t>(keptReady)].text.find("reload failed"),
        std::string::npos)
        << systemd.transcript();
    ASSERT_GE(systemd.waitFor("WATCHDOG=1", 10'000), 0) << systemd.transcript();

    // The stop: STOPPING=1, exit 0, and every run directory complete.
    ASSERT_EQ(kill(service.pid, SIGTERM), 0);
    ASSERT_GE(systemd.waitFor("STOPPING=1", 20'000), 0) << systemd.transcript();
    EXPECT_EQ(test::waitExit(service.pid, 30'000), 0) << test::readFile(dir / "spawn.err");

    // Three configs ran (the refused one left no directory): top_k 3, then 2 with a new engine,
    // then the same task kept.
    const auto dirs = runDirectories(dir / "logs");
    ASSERT_EQ(dirs.size(), 3u);
    test::RunFiles first = test::checkRun(dirs[0], "shapes");
    test::RunFiles second = test::checkRun(dirs[1], "shapes");
    test::RunFiles third = test::checkRun(dirs[2], "shapes");
    EXPECT_EQ(first.summary["run"]["stop_reason"], "reload");
    EXPECT_EQ(second.summary["run"]["stop_reason"], "reload");
    EXPECT_EQ(third.summary["run"]["stop_reason"], "signal SIGTERM");
    EXPECT_GT(first.csvRecords, 0u);
    EXPECT_GT(second.csvRecords, 0u);
    EXPECT_GT(third.csvRecords, 0u);
    auto firstRecord = [](const std::string& runDir) {
        return nlohmann::json::parse(test::readLines(runDir + "/shapes.frames.jsonl").at(0));
    };
    EXPECT_EQ(firstRecord(dirs[0])["cold_start"], true);
    EXPECT_EQ(firstRecord(dirs[1])["cold_start"], true) << "top_k changed: a new task";
    EXPECT_EQ(firstRecord(dirs[2])["cold_start"], false) << "unchanged: the task was kept";
    EXPECT_NE(
        test::readFile(dir / "spawn.err").find("task shapes: unchanged, kept"), std::string::npos);
    // While the source opened and the engine was built, before READY=1, systemd was asked to wait
    // longer.
    EXPECT_GE(systemd.count("EXTEND_TIMEOUT_USEC="), 1u);
    EXPECT_TRUE(systemd.messages().at(0).has("EXTEND_TIMEOUT_USEC=")) << systemd.transcript();
    EXPECT_GT(ready, 0);
    EXPECT_NE(test::readFile(dirs[0] + "/config.yaml").find("top_k: 3"), std::string::npos);
    EXPECT_NE(test::readFile(dirs[1] + "/config.yaml").find("top_k: 2"), std::string::npos);
    EXPECT_EQ(loggedTopK(dirs[0]), 3u);
    EXPECT_EQ(loggedTopK(dirs[1]), 2u);
}

// A camera that stops delivering: frames come through a pipe (GStreamer's fdsrc reading raw
// video), the test stops writing, and the watchdog pings must stop while the service itself stays
// up; they resume with the frames; a stop during a stall is prompt and clean.
TEST(ServiceProtocol, NoWatchdogOnceTheSourceStalls)
{
    TempDir dir;
    constexpr int kWidth = 64, kHeight = 48;
    const std::string pipeline =
        "gst://fdsrc fd=0 ! rawvideoparse width=" + std::to_string(kWidth) +
        " height=" + std::to_string(kHeight) +
        " format=bgr framerate=30/1 ! videoconvert ! appsink";
    test::writeFile(dir / "agent.yaml", serviceConfig("{uri: \"" + pipeline + "\"}", 3));
    FakeSystemd systemd(dir / "notify.sock");
    Service service = startService({"run", "--config", dir / "agent.yaml"}, dir.path(),
        dir / "notify.sock", kWatchdogUsec, true);
    ::signal(SIGPIPE, SIG_IGN);

    const std::vector<char> frame(kWidth * kHeight * 3, static_cast<char>(100));
    auto feed = [&](int ms) {
        const auto until = Clock::now() + std::chrono::milliseconds(ms);
        while (Clock::now() < until) {
            if (::write(service.stdinFd, frame.data(), frame.size()) < 0)
                return;
            std::this_thread::sleep_for(std::chrono::milliseconds(33));
        }
    };
    // The source waits for its first frame before the run starts.
    feed(1000);
    ASSERT_GE(systemd.waitFor("READY=1", 60'000), 0)
        << systemd.transcript() << test::readFile(dir / "spawn.err");
    feed(2500);
    systemd.drain(200);
    ASSERT_GE(systemd.count("WATCHDOG=1"), 2u) << systemd.transcript();

    // Stall: nothing written for several watchdog intervals. Pings that were due before the last
    // frame may still arrive within one interval; after that, none.
    const size_t atStall = systemd.messages().size();
    systemd.drain(1200);
    const size_t settled = systemd.messages().size();
    systemd.drain(3000);
    EXPECT_EQ(systemd.count("WATCHDOG=1", settled), 0u) << systemd.transcript();
    EXPECT_EQ(systemd.count("STOPPING=1", atStall), 0u) << "the service must stay up";
    EXPECT_EQ(waitpid(service.pid, nullptr, WNOHANG), 0) << "the service must stay up";

    // Frames again: pings resume.
    feed(2500);
    systemd.drain(500);
    EXPECT_GE(systemd.count("WATCHDOG=1", settled), 1u) << systemd.transcript();

    // SIGTERM while the source is stalled again: sources never block for long in a read (they
    // wait in slices), so the stop is prompt and clean, and every processed frame is logged.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const auto stopAt = Clock::now();
    ASSERT_EQ(kill(service.pid, SIGTERM), 0);
    EXPECT_EQ(test::waitExit(service.pid, 30'000), 0) << test::readFile(dir / "spawn.err");
    const double stopS = std::chrono::duration<double>(Clock::now() - stopAt).count();
    EXPECT_LT(stopS, 10.0) << "bounded well inside --stop-timeout's default and systemd's";
    ::close(service.stdinFd);
    const auto dirs = runDirectories(dir / "logs");
    ASSERT_EQ(dirs.size(), 1u);
    test::RunFiles run = test::checkRun(dirs[0], "shapes");
    EXPECT_EQ(run.summary["run"]["stop_reason"], "signal SIGTERM");
    const uint64_t processed = run.summary["tasks"][0]["frames"]["processed"];
    EXPECT_GT(processed, 0u);
    EXPECT_EQ(run.csvRecords, processed);
}

// SIGTERM in the middle of an unpaced run (frames queued and in flight in every stage): the run
// drains, every frame it finished is in the logs and in the summary, and it exits 0.
TEST(ServiceProtocol, SigtermLosesNoCompletedFrame)
{
    TempDir dir;
    test::writeFile(dir / "agent.yaml", serviceConfig("{uri: synthetic://shapes}", 3));
    FakeSystemd systemd(dir / "notify.sock");
    Service service = startService({"run", "--config", dir / "agent.yaml", "--as-fast-as-possible"},
        dir.path(), dir / "notify.sock", 0, false);
    ASSERT_GE(systemd.waitFor("READY=1", 60'000), 0)
        << systemd.transcript() << test::readFile(dir / "spawn.err");
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    ASSERT_EQ(kill(service.pid, SIGTERM), 0);
    EXPECT_EQ(test::waitExit(service.pid, 30'000), 0) << test::readFile(dir / "spawn.err");
    systemd.drain(100);
    EXPECT_EQ(systemd.count("STOPPING=1"), 1u) << systemd.transcript();
    // No WATCHDOG_USEC in the environment: no pings.
    EXPECT_EQ(systemd.count("WATCHDOG=1"), 0u);

    const auto dirs = runDirectories(dir / "logs");
    ASSERT_EQ(dirs.size(), 1u);
    test::RunFiles run = test::checkRun(dirs[0], "shapes");
    EXPECT_EQ(run.summary["run"]["stop_reason"], "signal SIGTERM");
    const auto& frames = run.summary["tasks"][0]["frames"];
    const uint64_t processed = frames["processed"];
    EXPECT_GT(processed, 10u);
    // Unpaced: no frame is dropped, so every captured frame was processed and logged.
    EXPECT_EQ(frames["dropped"], 0);
    EXPECT_EQ(run.summary["source"]["frames_captured"], processed) << run.summary.dump();
    EXPECT_EQ(run.csvRecords, processed);
    EXPECT_EQ(run.jsonRecords, processed);
}

// A GPIO chip that is not there (this machine has none) stops the service at start-up with the
// config key in the message, for the journal and for `systemctl status`, before READY=1.
TEST(ServiceProtocol, AMissingGpioChipFailsTheStartWithTheKey)
{
    TempDir dir;
    test::writeFile(dir / "agent.yaml",
        serviceConfig("{uri: synthetic://shapes, fps: 30}", 3) +
            "gpio: {marker: {chip: gpiochip-jetagent-absent, line: 12}}\n");
    FakeSystemd systemd(dir / "notify.sock");
    Service service = startService({"run", "--config", dir / "agent.yaml"}, dir.path(),
        dir / "notify.sock", kWatchdogUsec, false);
    EXPECT_EQ(test::waitExit(service.pid, 60'000), 2);
    const std::string err = test::readFile(dir / "spawn.err");
    EXPECT_NE(err.find("gpio.marker.chip"), std::string::npos) << err;
    EXPECT_NE(err.find("gpiochip-jetagent-absent"), std::string::npos) << err;
    systemd.drain(200);
    EXPECT_EQ(systemd.count("READY=1"), 0u) << systemd.transcript();
    const int failed = systemd.waitFor("STATUS=start-up failed", 0);
    ASSERT_GE(failed, 0) << systemd.transcript();
    EXPECT_NE(systemd.messages()[static_cast<size_t>(failed)].text.find("gpio.marker.chip"),
        std::string::npos);
}

// A classifier slow enough to stand for a hung engine: `layers` 3x3 convolutions of 64 channels
// at 224x224 (3.7 GFLOP each), then a global average pool to 64 classes.
void writeSlowModel(const std::string& path, int layers)
{
    constexpr int kChannels = 64;
    onnx::ModelProto model;
    model.set_ir_version(7);
    model.set_producer_name("jetagent-test");
    model.add_opset_import()->set_version(13);
    auto* graph = model.mutable_graph();
    graph->set_name("slow");
    std::string current = "input";
    for (int i = 0; i < layers; ++i) {
        const int in = i == 0 ? 3 : kChannels;
        const std::string weights = "w" + std::to_string(i);
        auto* w = graph->add_initializer();
        w->set_name(weights);
        w->set_data_type(onnx::TensorProto_DataType_FLOAT);
        for (int d : {kChannels, in, 3, 3})
            w->add_dims(d);
        const float value = 1.0f / static_cast<float>(in * 9); // keeps magnitudes steady
        for (int k = 0; k < kChannels * in * 9; ++k)
            w->add_float_data(value);
        auto* conv = graph->add_node();
        conv->set_op_type("Conv");
        conv->add_input(current);
        conv->add_input(weights);
        current = "c" + std::to_string(i);
        conv->add_output(current);
        auto* pads = conv->add_attribute();
        pads->set_name("pads");
        pads->set_type(onnx::AttributeProto_AttributeType_INTS);
        for (int k = 0; k < 4; ++k)
            pads->add_ints(1);
    }
    auto* pool = graph->add_node();
    pool->set_op_type("GlobalAveragePool");
    pool->add_input(current);
    pool->add_output("pooled");
    auto* flatten = graph->add_node();
    flatten->set_op_type("Flatten");
    flatten->add_input("pooled");
    flatten->add_output("output");
    test::declareFloatTensor(graph->add_input(), "input", {1, 3, 224, 224});
    test::declareFloatTensor(graph->add_output(), "output", {1, kChannels});
    test::writeFile(path, model.SerializeAsString());
}

// SIGTERM while an inference does not end (a hung engine, played by a model that takes many
// seconds): --stop-timeout bounds the stop, the logs are flushed, and the exit status says the
// stop was not clean.
TEST(ServiceProtocol, StopIsBoundedWhenAnInferenceHangs)
{
    TempDir dir;
    writeSlowModel(dir / "slow.onnx", 160); // 300 GMACs: seconds on any CPU backend
    test::writeFile(dir / "agent.yaml",
        "source: {uri: synthetic://shapes, fps: 30}\n"
        "tasks:\n"
        "  - name: slow\n"
        "    model: slow.onnx\n"
        "    postprocess: {top_k: 1}\n"
        "logging: {dir: logs, status_interval_s: 0}\n");
    FakeSystemd systemd(dir / "notify.sock");
    Service service = startService({"run", "--config", dir / "agent.yaml", "--stop-timeout", "1"},
        dir.path(), dir / "notify.sock", 0, false);
    ASSERT_GE(systemd.waitFor("READY=1", 120'000), 0)
        << systemd.transcript() << test::readFile(dir / "spawn.err");
    // The first inference starts with the first frame, a thirtieth of a second after READY.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const auto stopAt = Clock::now();
    ASSERT_EQ(kill(service.pid, SIGTERM), 0);
    const int exitCode = test::waitExit(service.pid, 60'000);
    const double stopS = std::chrono::duration<double>(Clock::now() - stopAt).count();
    const std::string err = test::readFile(dir / "spawn.err");
    EXPECT_EQ(exitCode, 1) << err;
    EXPECT_NE(err.find("did not finish within 1 s of the stop signal"), std::string::npos) << err;
    // Not a measurement: only that the stop did not wait for the inference.
    EXPECT_LT(stopS, 8.0);
    const auto dirs = runDirectories(dir / "logs");
    ASSERT_EQ(dirs.size(), 1u);
    EXPECT_FALSE(test::readLines(dirs[0] + "/slow.frames.csv").empty()) << "the log was flushed";
    // The summary of what was measured, whole, with the reason the stop was not clean.
    const auto summary = nlohmann::json::parse(test::readFile(dirs[0] + "/summary.json"));
    EXPECT_NE(summary["run"]["failure"].get<std::string>().find("did not finish within 1 s"),
        std::string::npos)
        << summary["run"];
    EXPECT_NE(test::readFile(dirs[0] + "/summary.txt").find("FAILURE"), std::string::npos);
}

// A GStreamer pipeline whose first frame takes seconds: start-up (waiting for it) lasts that long.
std::string slowStartSource(int firstFrameS)
{
    return "source: {uri: 'gst://videotestsrc is-live=true ! video/x-raw,width=160,height=120,"
           "framerate=10/1 ! identity sleep-time=" +
        std::to_string(firstFrameS * 1'000'000) +
        " ! videoconvert ! video/x-raw,format=BGR ! appsink'}\n";
}

// SIGHUP and SIGTERM that arrive while the service is still starting (opening its source,
// building engines) must not end it by their default action: the handlers are installed first,
// and the signals are acted on once the run has started.
TEST(ServiceProtocol, SignalsDuringStartUpDoNotKillTheProcess)
{
    TempDir dir;
    test::writeFile(dir / "agent.yaml",
        slowStartSource(3) + shapesTask(1) + "logging: {dir: logs, status_interval_s: 0}\n");
    FakeSystemd systemd(dir / "notify.sock");
    Service service = startService(
        {"run", "--config", dir / "agent.yaml"}, dir.path(), dir / "notify.sock", 0, false);
    ASSERT_GE(systemd.waitFor("EXTEND_TIMEOUT_USEC", 30'000), 0) << systemd.transcript();
    ASSERT_EQ(kill(service.pid, SIGHUP), 0); // during start-up: a reload once it runs
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ASSERT_EQ(kill(service.pid, SIGTERM), 0); // a stop once it runs
    const int exitCode = test::waitExit(service.pid, 60'000);
    const std::string err = test::readFile(dir / "spawn.err");
    EXPECT_EQ(exitCode, 0) << err; // not killed by SIGHUP (129) or SIGTERM (143)
    EXPECT_NE(err.find("SIGTERM: stopping"), std::string::npos) << err;
    const auto dirs = runDirectories(dir / "logs");
    ASSERT_FALSE(dirs.empty());
    EXPECT_TRUE(fs::exists(dirs.back() + "/summary.json")) << err;
}

// Start-up keeps extending systemd's timeout while it works, but only up to
// run.startup_timeout_s: past it the service fails, saying why, instead of making systemd wait
// for ever (a model that takes hours to prepare).
TEST(ServiceProtocol, StartUpLongerThanItsLimitFailsSayingWhy)
{
    TempDir dir;
    test::writeFile(dir / "agent.yaml",
        slowStartSource(6) + "run: {startup_timeout_s: 1}\n" + shapesTask(1) +
            "logging: {dir: logs, status_interval_s: 0}\n");
    FakeSystemd systemd(dir / "notify.sock");
    const auto start = Clock::now();
    Service service = startService(
        {"run", "--config", dir / "agent.yaml"}, dir.path(), dir / "notify.sock", 0, false);
    const int exitCode = test::waitExit(service.pid, 60'000);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const std::string err = test::readFile(dir / "spawn.err");
    EXPECT_EQ(exitCode, 1) << err;
    EXPECT_LT(seconds, 5.0 * test::kSanitizerSlowdown) << "it did not wait for the first frame";
    EXPECT_NE(
        err.find("start-up took longer than 1 s (run.startup_timeout_s) while opening gst://"),
        std::string::npos)
        << err;
    systemd.drain(200);
    EXPECT_GE(systemd.waitFor("STATUS=start-up failed: start-up took longer than 1 s", 0), 0)
        << systemd.transcript();
    EXPECT_EQ(systemd.count("READY=1"), 0u) << systemd.transcript();
}

} // namespace
} // namespace jetagent
