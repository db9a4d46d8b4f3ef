// The jetagent binary on GStreamer sources: open failures exit 2 naming the cause; live streams
// that fail (a real RTSP server stopped and restarted, gst:// and csi://-style pipelines that end
// in an error) are all recovered while other processes keep the cores busy, and the run still
// stops on time with its summary, frame ids and capture times increasing. An RTSP stream batched
// with three others loses its server again and again without costing them their rate.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "jetagent/hal/gstreamer_source.h"
#include "run_checks.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace jetagent {
namespace {

using Clock = std::chrono::steady_clock;
using test::TempDir;

#ifndef JETAGENT_RTSP_TEST_SERVER
#error "JETAGENT_RTSP_TEST_SERVER: the path of jetagent_rtsp_test_server (tests/CMakeLists.txt)"
#endif

double secondsSince(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

void sleepFor(double seconds)
{
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

// Processes that keep every core busy, as the rest of a loaded machine would, until destroyed.
class CoreLoad {
public:
    explicit CoreLoad(unsigned processes)
    {
        for (unsigned i = 0; i < processes; ++i) {
            const pid_t pid = fork();
            if (pid == 0) {
                volatile unsigned long spin = 0;
                for (;;)
                    spin = spin + 1;
            }
            pids_.push_back(pid);
        }
    }
    ~CoreLoad()
    {
        for (const pid_t pid : pids_) {
            kill(pid, SIGKILL);
            waitpid(pid, nullptr, 0);
        }
    }
    CoreLoad(const CoreLoad&) = delete;
    CoreLoad& operator=(const CoreLoad&) = delete;

private:
    std::vector<pid_t> pids_;
};

// The test RTSP server as a process: start() waits for it to listen, crash() kills it.
class RTSPServer {
public:
    explicit RTSPServer(int port) : port_(port) { }
    ~RTSPServer() { crash(); }
    RTSPServer(const RTSPServer&) = delete;
    RTSPServer& operator=(const RTSPServer&) = delete;

    std::string uri() const { return "rtsp://127.0.0.1:" + std::to_string(port_) + "/test"; }

    bool start()
    {
        int fds[2];
        if (pipe(fds) != 0)
            return false;
        pid_ = fork();
        if (pid_ == 0) {
            dup2(fds[1], 1);
            close(fds[0]);
            close(fds[1]);
            const std::string port = std::to_string(port_);
            execl(JETAGENT_RTSP_TEST_SERVER, JETAGENT_RTSP_TEST_SERVER, port.c_str(), nullptr);
            _exit(127);
        }
        close(fds[1]);
        FILE* out = fdopen(fds[0], "r");
        char line[256] = {};
        const bool ready = out != nullptr && std::fgets(line, sizeof line, out) != nullptr &&
            std::string(line).rfind("ready", 0) == 0;
        if (out != nullptr)
            std::fclose(out);
        return ready;
    }

    void crash()
    {
        if (pid_ <= 0)
            return;
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
        pid_ = -1;
    }

private:
    int port_;
    pid_t pid_ = -1;
};

std::string shapesTask()
{
    return "tasks:\n" +
        test::shapesTaskYaml("shapes", "    engine: {backend: opencv, threads: 1}\n") +
        "logging: {dir: logs, status_interval_s: 0}\n";
}

// A camera config: stalls after 0.5 s, the watchdog after 1 s, retries at least once a second.
std::string cameraConfig(const std::string& uri)
{
    return "source:\n  uri: '" + uri +
        "'\n  camera: {stall_timeout_s: 0.5, reconnect_max_s: 1, latency_ms: 100}\n" + shapesTask();
}

size_t countOf(const std::string& text, const std::string& what)
{
    size_t count = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++count;
    return count;
}

// Frame ids and capture times strictly increase through the whole CSV log.
void expectIncreasingCaptureTimes(const std::string& runDir)
{
    const auto lines = test::readLines(runDir + "/shapes.frames.csv");
    ASSERT_GT(lines.size(), 1u);
    EXPECT_EQ(lines[0].substr(0, lines[0].find(',', lines[0].find(',') + 1)), "frame_id,capture_ns")
        << lines[0];
    long long previous = -1;
    for (size_t i = 1; i < lines.size(); ++i) {
        std::stringstream in(lines[i]);
        std::string id, capture;
        std::getline(in, id, ',');
        std::getline(in, capture, ',');
        const long long ns = std::stoll(capture);
        ASSERT_GT(ns, previous) << "line " << i << ": " << lines[i];
        previous = ns;
    }
}

bool hasElements(const std::vector<const char*>& elements, std::string& missing)
{
    for (const char* element : elements)
        if (!gstreamerHasElement(element)) {
            missing = element;
            return false;
        }
    return true;
}

// --- open failures -----------------------------------------------------------------------------

struct OpenFailure {
    std::string source;
    std::string mentioned;
};

TEST(GStreamerRun, SourcesThatCannotBeOpenedExit2NamingTheCause)
{
    ASSERT_TRUE(gstreamerAvailable());
    std::vector<OpenFailure> cases = {
        {"gst://videotestsrc ! jetagent_no_such_element ! appsink",
            "no GStreamer element \"jetagent_no_such_element\""},
        {"gst://videotestsrc ! ! appsink", "GStreamer cannot build the pipeline"},
        {"rtsp://127.0.0.1:" + std::to_string(test::unusedLoopbackPort()) + "/test",
            "Could not open resource"},
    };
    if (!gstreamerHasElement("nvarguscamerasrc"))
        cases.push_back({"csi://0",
            "no GStreamer element \"nvarguscamerasrc\" (not a Jetson, or nvidia-l4t-gstreamer "
            "missing)"});
    for (const OpenFailure& c : cases) {
        TempDir dir;
        test::writeFile(dir / "c.yaml", cameraConfig(c.source));
        const auto start = Clock::now();
        const auto r = test::runJetagent({"run", "-c", "c.yaml", "--duration", "5"}, dir.path());
        EXPECT_EQ(r.exitCode, 2) << c.source << "\n" << r.err;
        EXPECT_LT(secondsSince(start), 10.0) << c.source;
        EXPECT_NE(r.err.find(c.mentioned), std::string::npos) << c.source << "\n" << r.err;
        EXPECT_EQ(r.err.find("CRITICAL"), std::string::npos) << r.err;
    }
}

// --- pipelines that end in an error ------------------------------------------------------------

// A live gst:// pipeline whose identity element fails every 40 frames: each failure is a
// disconnect followed by a reconnect, under load, and the run ends on time with its summary.
TEST(GStreamerRun, LivePipelineFailingEveryFewSecondsIsRecoveredEachTime)
{
    constexpr double kDurationS = 8.0;
    constexpr int kErrorAfter = 40; // frames at 30 fps: a failure every 1.3 s
    std::string missing;
    if (!hasElements({"videotestsrc", "identity", "videoconvert", "appsink"}, missing))
        GTEST_SKIP() << missing << " is missing: apt-get install gstreamer1.0-plugins-base";
    TempDir dir;
    test::writeFile(dir / "c.yaml",
        cameraConfig("gst://videotestsrc is-live=true ! video/x-raw,width=320,height=240,"
                     "framerate=30/1 ! identity error-after=" +
            std::to_string(kErrorAfter) +
            " ! videoconvert ! video/x-raw,format=BGR ! appsink drop=true max-buffers=1 "
            "sync=false"));
    const CoreLoad load(std::max(2u, std::thread::hardware_concurrency()));
    const auto start = Clock::now();
    const auto r = test::runJetagent(
        {"--log-level", "info", "run", "-c", "c.yaml", "--duration", std::to_string(kDurationS)},
        dir.path());
    const double took = secondsSince(start);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_LT(took, kDurationS + 5.0 * test::kSanitizerSlowdown) << r.err;
    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto files = test::checkRun(run, "shapes");
    expectIncreasingCaptureTimes(run);
    const auto& stats = files.summary["source"]["stats"];
    const auto disconnects = stats["disconnects"].get<uint64_t>();
    const auto reconnects = stats["reconnects"].get<uint64_t>();
    EXPECT_GE(disconnects, 3u) << stats;
    // The run may end while the last failure is being recovered.
    EXPECT_GE(reconnects + 1, disconnects) << stats;
    // Each reconnect is logged once; one more may come between the summary and the source's
    // teardown (the stream keeps failing and recovering while the summary is written).
    const auto logged = countOf(r.err, "frames again,");
    EXPECT_TRUE(logged == reconnects || logged == reconnects + 1)
        << logged << " logged, " << reconnects << " in the summary\n"
        << r.err;
    EXPECT_EQ(r.err.find("CRITICAL"), std::string::npos) << r.err;
}

// --- a real RTSP server, stopped and restarted -------------------------------------------------

int outageCount()
{
    const char* value = std::getenv("JETAGENT_RTSP_OUTAGES"); // fewer for a quick local run
    return value != nullptr && std::atoi(value) > 0 ? std::atoi(value) : 20;
}

TEST(GStreamerRun, RTSPServerOutagesUnderLoadAreAllRecoveredAndTheRunStopsOnTime)
{
    constexpr double kStreamingS = 2.0; // between outages
    constexpr double kRecoveryAllowanceS = 1.5; // per outage in --duration: restart and reconnect
    constexpr double kRecoveryLimitS = 15.0;
    constexpr unsigned kSeed = 19;
    std::string missing;
    if (!hasElements({"rtspsrc", "rtpjpegpay", "rtpjpegdepay", "jpegenc", "jpegdec", "videotestsrc",
                         "decodebin"},
            missing))
        GTEST_SKIP() << missing
                     << " is missing: apt-get install gstreamer1.0-plugins-good "
                        "gstreamer1.0-plugins-base";
    const int outages = outageCount();
    std::mt19937 random(kSeed);
    std::uniform_real_distribution<double> length(1.0, 10.0);
    std::vector<double> schedule;
    double outageTotal = 0.0;
    std::ostringstream shown;
    for (int i = 0; i < outages; ++i) {
        schedule.push_back(length(random));
        outageTotal += schedule.back();
        shown << (i > 0 ? " " : "") << std::fixed << std::setprecision(1) << schedule.back();
    }
    std::cout << "outages (s, seed " << kSeed << "): " << shown.str() << "\n";
    const double duration =
        outageTotal + (outages + 1) * kStreamingS + outages * kRecoveryAllowanceS + 2.0;

    RTSPServer server(test::unusedLoopbackPort());
    ASSERT_TRUE(server.start());
    TempDir dir;
    test::writeFile(dir / "c.yaml", cameraConfig(server.uri()));
    const CoreLoad load(std::max(2u, std::thread::hardware_concurrency()));
    const auto start = Clock::now();
    const int agent = test::spawnJetagent(
        {"--log-level", "info", "run", "-c", "c.yaml", "--duration", std::to_string(duration)},
        dir.path());
    const std::string errPath = dir / "spawn.err";
    const auto reconnected = [&] { return countOf(test::readFile(errPath), "frames again,"); };
    // Streaming before the first outage: the source opened and frames flow.
    while (secondsSince(start) < 30.0 && countOf(test::readFile(errPath), "running 1 task") == 0)
        sleepFor(0.05);
    ASSERT_EQ(countOf(test::readFile(errPath), "running 1 task"), 1u) << test::readFile(errPath);

    std::vector<double> recoveries;
    for (int i = 0; i < outages; ++i) {
        sleepFor(kStreamingS);
        server.crash();
        sleepFor(schedule[static_cast<size_t>(i)]);
        ASSERT_TRUE(server.start()) << "outage " << i;
        const auto up = Clock::now();
        while (reconnected() < static_cast<size_t>(i) + 1 && secondsSince(up) < kRecoveryLimitS)
            sleepFor(0.02);
        ASSERT_EQ(reconnected(), static_cast<size_t>(i) + 1)
            << "outage " << i << " (" << schedule[static_cast<size_t>(i)] << " s) not recovered\n"
            << test::readFile(errPath);
        recoveries.push_back(secondsSince(up));
    }
    const double scheduleDone = secondsSince(start);
    ASSERT_LT(scheduleDone, duration) << "the run would have ended before the last outage";
    const int exitCode = test::waitExit(agent, static_cast<int>((duration + 30.0) * 1000));
    const double took = secondsSince(start);
    const std::string err = test::readFile(errPath);
    ASSERT_EQ(exitCode, 0) << err;
    // On time: the duration plus start-up (the model, the RTSP session) and the drain.
    EXPECT_GE(took, duration);
    EXPECT_LT(took, duration + 8.0 * test::kSanitizerSlowdown) << err;

    std::sort(recoveries.begin(), recoveries.end());
    std::cout << "recovery after the server listened again (s): min " << recoveries.front()
              << ", median " << recoveries[recoveries.size() / 2] << ", max " << recoveries.back()
              << "; run " << took << " s for --duration " << duration << "\n";

    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto files = test::checkRun(run, "shapes");
    expectIncreasingCaptureTimes(run);
    const auto& stats = files.summary["source"]["stats"];
    EXPECT_EQ(stats["disconnects"].get<int>(), outages) << stats;
    EXPECT_EQ(stats["reconnects"].get<int>(), outages) << stats;
    EXPECT_EQ(err.find("CRITICAL"), std::string::npos) << err;
    EXPECT_EQ(err.find("did not"), std::string::npos) << err;
}

// --- one RTSP stream among synthetic ones, its server stopped and restarted --------------------

// The three synthetic streams and the RTSP stream of the multi-stream outage test, in the order
// of sources:.
const std::vector<std::string> kSyntheticStreams = {"front", "left", "right"};
const std::string kCameraStream = "cam";

std::string multiStreamConfig(const std::string& uri)
{
    std::string yaml = "sources:\n";
    for (size_t i = 0; i < kSyntheticStreams.size(); ++i)
        yaml += "  - {name: " + kSyntheticStreams[i] +
            ", uri: 'synthetic://shapes', width: 320, height: 240, fps: 30, seed: " +
            std::to_string(i + 1) + "}\n";
    yaml += "  - name: " + kCameraStream + "\n    uri: '" + uri +
        "'\n    camera: {stall_timeout_s: 0.5, reconnect_max_s: 1, latency_ms: 100}\n";
    // One engine thread: a pool of two on two busy cores waits for whichever of its threads the
    // scheduler left out, and the test is about the batching, not the engine's speed.
    return yaml + "tasks:\n" +
        test::shapesTaskYaml("shapes", "    engine: {batch: 4, threads: 1}\n") +
        "logging: {dir: logs, status_interval_s: 0}\n";
}

const nlohmann::json* byName(const nlohmann::json& list, const std::string& name)
{
    for (const auto& entry : list)
        if (entry.value("name", "") == name)
            return &entry;
    return nullptr;
}

// The CSV rows of each stream: capture times strictly increasing within a stream.
std::map<std::string, std::vector<int64_t>> captureTimesByStream(const std::string& runDir)
{
    std::map<std::string, std::vector<int64_t>> times;
    const auto lines = test::readLines(runDir + "/shapes.frames.csv");
    for (size_t i = 1; i < lines.size(); ++i) {
        std::vector<std::string> f;
        std::stringstream in(lines[i]);
        for (std::string cell; std::getline(in, cell, ',');)
            f.push_back(cell);
        if (f.size() < 17)
            continue;
        auto& stream = times[f[16]];
        const int64_t ns = std::stoll(f[1]);
        EXPECT_TRUE(stream.empty() || ns > stream.back()) << "line " << i << ": " << lines[i];
        stream.push_back(ns);
    }
    return times;
}

int64_t monotonicNowNs()
{
    // libstdc++'s steady_clock is CLOCK_MONOTONIC, the clock of the logs' capture times.
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
        .count();
}

// Four streams through one task with a batch of four: three synthetic cameras at 30 fps and a
// real RTSP server at 15 fps that is killed and restarted 10 times. The RTSP stream's outages must
// cost the others nothing but the batch timeout: they keep their frame rate, drop (almost) no
// frame, stay correct, and their latency stays within the batch timeout plus the worker's time;
// the RTSP stream is recovered after each outage and delivers frames after the last one.
TEST(GStreamerRun, RTSPStreamOutagesLeaveTheOtherStreamsOfItsBatchesOnTime)
{
    constexpr int kOutages = 10;
    constexpr double kStreamingS = 1.0; // between outages, once the RTSP stream is back
    constexpr double kTailS = 2.0; // streaming after the last outage, before the stop
    constexpr double kRecoveryLimitS = 15.0;
    // Server down for 0.5 to 1.5 s: shorter and longer than the 0.5 s stall timeout, and against
    // the reconnect backoff's different steps (up to 1 s).
    constexpr double kOutageS[kOutages] = {0.5, 1.0, 1.5, 0.7, 1.2, 0.5, 1.5, 0.9, 0.6, 1.3};
    std::string missing;
    if (!hasElements({"rtspsrc", "rtpjpegpay", "rtpjpegdepay", "jpegenc", "jpegdec", "videotestsrc",
                         "decodebin"},
            missing))
        GTEST_SKIP() << missing
                     << " is missing: apt-get install gstreamer1.0-plugins-good "
                        "gstreamer1.0-plugins-base";

    RTSPServer server(test::unusedLoopbackPort());
    ASSERT_TRUE(server.start());
    TempDir dir;
    test::writeFile(dir / "c.yaml", multiStreamConfig(server.uri()));
    const auto start = Clock::now();
    // Stopped by SIGINT once the outages are done; --duration only ends a run whose test died.
    const int agent = test::spawnJetagent(
        {"--log-level", "info", "run", "-c", "c.yaml", "--duration", "180"}, dir.path());
    // A failed assertion on the way leaves no agent behind (until waitExit has reaped it).
    int unreaped = agent;
    const std::unique_ptr<int, void (*)(int*)> reaper(&unreaped, [](int* pid) {
        if (*pid > 0 && kill(*pid, SIGKILL) == 0)
            waitpid(*pid, nullptr, 0);
    });
    const std::string errPath = dir / "spawn.err";
    const auto reconnected = [&] { return countOf(test::readFile(errPath), "frames again,"); };
    while (secondsSince(start) < 30.0 &&
        countOf(test::readFile(errPath), "running 1 task(s) on 4 streams") == 0)
        sleepFor(0.05);
    ASSERT_EQ(countOf(test::readFile(errPath), "running 1 task(s) on 4 streams"), 1u)
        << test::readFile(errPath);

    int64_t lastUpNs = 0;
    for (int i = 0; i < kOutages; ++i) {
        sleepFor(kStreamingS);
        server.crash();
        sleepFor(kOutageS[i]);
        ASSERT_TRUE(server.start()) << "outage " << i;
        lastUpNs = monotonicNowNs();
        const auto up = Clock::now();
        while (reconnected() < static_cast<size_t>(i) + 1 && secondsSince(up) < kRecoveryLimitS)
            sleepFor(0.02);
        ASSERT_EQ(reconnected(), static_cast<size_t>(i) + 1)
            << "outage " << i << " (" << kOutageS[i] << " s) not recovered\n"
            << test::readFile(errPath);
    }
    sleepFor(kTailS);
    kill(agent, SIGINT);
    const int exitCode = test::waitExit(agent, 30000);
    unreaped = -1;
    const std::string err = test::readFile(errPath);
    ASSERT_EQ(exitCode, 0) << err;
    std::cout << "run " << secondsSince(start) << " s\n";

    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto files = test::checkRun(run, "shapes");
    const auto& summary = files.summary;
    EXPECT_EQ(summary["run"]["stop_reason"], "signal SIGINT") << summary["run"];

    // The RTSP stream: each outage one disconnect and one reconnect, and frames after the last.
    const nlohmann::json* camera = byName(summary["streams"], kCameraStream);
    ASSERT_NE(camera, nullptr) << summary["streams"];
    EXPECT_EQ((*camera)["kind"], "rtsp");
    const auto& stats = (*camera)["stats"];
    EXPECT_EQ(stats["disconnects"].get<int>(), kOutages) << stats;
    EXPECT_EQ(stats["reconnects"].get<int>(), kOutages) << stats;
    const auto times = captureTimesByStream(run);
    ASSERT_EQ(times.count(kCameraStream), 1u);
    const auto& cameraTimes = times.at(kCameraStream);
    const auto afterLast = std::count_if(
        cameraTimes.begin(), cameraTimes.end(), [&](int64_t ns) { return ns > lastUpNs; });
    // kTailS at 15 fps is 30 frames; the reconnect took some of it.
    EXPECT_GE(afterLast, 10) << "frames of " << kCameraStream << " after the last outage";

    const nlohmann::json& task = summary["tasks"][0];
    EXPECT_EQ(task["streams_served"],
        nlohmann::json(
            {kSyntheticStreams[0], kSyntheticStreams[1], kSyntheticStreams[2], kCameraStream}));
    const auto& batching = task["batching"];
    const double timeoutMs = batching["timeout_ms"].get<double>();
    EXPECT_NEAR(timeoutMs, 500.0 / 30.0, 0.01) << "half the fastest stream's frame period";
    EXPECT_GT(batching["batches_timed_out"].get<int>(), 0) << batching;
    const double inferenceP99 = task["latency_ms"]["inference"]["p99"].get<double>();
    const double serviceP99 = task["latency_ms"]["service"]["p99"].get<double>();
    // A frame waits at most the batch timeout for the other streams (or less: a stream's next
    // frame ends the wait), and before that for the worker to finish the batch in its hands (one
    // service time); then its own batch's preprocessing, inference and postprocessing (the
    // inference is most of it). Both p99s are this run's own, so a machine busy with other work
    // raises the bound with the engine's time. The 10 ms are the scheduler's: this process's
    // threads and the RTSP server's share two cores with whatever else the machine runs.
    // Measured on the 2-core development machine under other agents' builds, at a timeout of a
    // whole frame period (33.3 ms; the default is now half of it): p99 36-37 ms
    // against bounds of 49-50 ms (inference p99 2.8-3.0 ms); with two busy loops beside it,
    // 39.5-39.7 ms against 56 ms, with four 39.3-40.5 ms against 58 ms (inference p99 6.3 and
    // 7.4 ms), no frame dropped. Before the batcher let a stream's next frame end the wait, each
    // synthetic stream lost 11% of its frames here (26.7 fps).
    const double boundMs = timeoutMs + inferenceP99 + serviceP99 + 10.0;
    std::cout << "bound " << boundMs << " ms: timeout " << timeoutMs << ", inference p99 "
              << inferenceP99 << ", service p99 " << serviceP99 << ", 10; batches "
              << batching["batches"] << ", timed out " << batching["batches_timed_out"] << "\n";

    uint64_t processed = 0, dropped = 0, timeouts = 0;
    for (const auto& stream : task["streams"]) {
        processed += stream["frames"]["processed"].get<uint64_t>();
        dropped += stream["frames"]["dropped"].get<uint64_t>();
        timeouts += stream["batch_timeouts"].get<uint64_t>();
        EXPECT_EQ(stream["frames"]["failed"], 0) << stream;
    }
    // Each batch that timed out went without one stream at least, and named it.
    EXPECT_GE(timeouts, batching["batches_timed_out"].get<uint64_t>()) << task["streams"];
    EXPECT_EQ(processed, task["frames"]["processed"].get<uint64_t>()) << task["frames"];
    EXPECT_EQ(dropped, task["frames"]["dropped"].get<uint64_t>()) << task["frames"];
    EXPECT_EQ(processed, files.csvRecords);

    for (const std::string& name : kSyntheticStreams) {
        const nlohmann::json* s = byName(task["streams"], name);
        const nlohmann::json* source = byName(summary["streams"], name);
        ASSERT_TRUE(s != nullptr && source != nullptr) << name;
        const auto captured = (*source)["frames_captured"].get<uint64_t>();
        const auto done = (*s)["frames"]["processed"].get<uint64_t>();
        const auto lost = (*s)["frames"]["dropped"].get<uint64_t>();
        std::cout << name << ": " << done << " frames, " << lost << " dropped, "
                  << (*s)["throughput_fps"] << " fps, end to end p99 "
                  << (*s)["latency_ms"]["end_to_end"]["p99"] << " ms, max "
                  << (*s)["latency_ms"]["end_to_end"]["max"] << " ms\n";
        EXPECT_EQ(done + lost, captured) << name << ": " << *s;
        EXPECT_GE((*s)["throughput_fps"].get<double>(), 27.0) << name << ": " << *s;
        // A few drops are the machine's, not the outages': under CI's load (tests two at a time,
        // clang-tidy beside them) the process was seen to stall for 260 ms at once, and the
        // latest-wins queues then drop what came meanwhile (18 of 809 frames a stream, 2.2%).
        // The fault this test found in the batcher cost 11% (above).
        EXPECT_LE(lost, captured / 20) << name << ": at most 5% dropped\n" << *s;
        EXPECT_LE((*s)["latency_ms"]["end_to_end"]["p99"].get<double>(), boundMs)
            << name << ": " << *s << "\n"
            << batching;
        EXPECT_EQ((*s)["accuracy"]["top1"].get<double>(), 1.0) << name << ": " << *s;
        EXPECT_EQ(times.count(name), 1u);
    }
    const nlohmann::json* cameraTask = byName(task["streams"], kCameraStream);
    ASSERT_NE(cameraTask, nullptr);
    EXPECT_EQ((*cameraTask)["frames"]["processed"].get<size_t>(), cameraTimes.size());
    EXPECT_EQ(err.find("CRITICAL"), std::string::npos) << err;
}

} // namespace
} // namespace jetagent
