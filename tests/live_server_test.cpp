// The live web view (run --serve): its config, and the server against real runs of the demo
// model, talked to over HTTP as a script or a browser would.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>

#include "config.h"
#include "live_server.h"
#include "test_support.h"

namespace jetagent {
namespace {

using nlohmann::json;
using test::TempDir;

// --- config -------------------------------------------------------------------------------

Expected<AgentConfig> parse(const std::string& http)
{
    return parseConfig(
        "source: {uri: synthetic://shapes}\ntasks:\n" + test::shapesTaskYaml() + http, "c.yaml",
        ".");
}

TEST(LiveConfig, ListenAndToken)
{
    auto c = parse("http: {listen: \"0.0.0.0:8080\", token: abc}\n");
    ASSERT_TRUE(c) << c.status().message();
    EXPECT_EQ(c.value().http.listen, "0.0.0.0:8080");
    EXPECT_EQ(c.value().http.token, "abc");
    auto off = parse("");
    ASSERT_TRUE(off);
    EXPECT_EQ(off.value().http.listen, "");
    auto port = parse("http: {listen: \"8080\"}\n");
    ASSERT_TRUE(port) << port.status().message();
}

TEST(LiveConfig, ErrorsNameKeyAndLine)
{
    auto noToken = parse("http:\n  listen: \"0.0.0.0:8080\"\n");
    ASSERT_FALSE(noToken);
    EXPECT_NE(noToken.status().message().find("http.token"), std::string::npos)
        << noToken.status().message();
    EXPECT_NE(noToken.status().message().find("c.yaml:"), std::string::npos);
    auto badPort = parse("http:\n  listen: \"127.0.0.1:99999\"\n");
    ASSERT_FALSE(badPort);
    EXPECT_NE(badPort.status().message().find("http.listen: '127.0.0.1:99999'"), std::string::npos)
        << badPort.status().message();
    auto unknown = parse("http: {listen: \"8080\", tokn: x}\n");
    ASSERT_FALSE(unknown);
    EXPECT_NE(unknown.status().message().find("tokn"), std::string::npos)
        << unknown.status().message();
}

TEST(LiveConfig, ListenAddresses)
{
    auto bare = parseListenAddress("8080");
    ASSERT_TRUE(bare);
    EXPECT_EQ(bare.value().host, "127.0.0.1");
    EXPECT_EQ(bare.value().port, 8080);
    auto v6 = parseListenAddress("[::1]:0");
    ASSERT_TRUE(v6);
    EXPECT_EQ(v6.value().host, "::1");
    EXPECT_EQ(v6.value().port, 0);
    auto any = parseListenAddress("0.0.0.0:80");
    ASSERT_TRUE(any);
    EXPECT_FALSE(isLoopbackHost(any.value().host));
    EXPECT_TRUE(isLoopbackHost("127.0.0.2"));
    EXPECT_TRUE(isLoopbackHost("::1"));
    for (const char* bad : {"", ":80", "host:", "1:2:3", "127.0.0.1:65536", "x:port", "[::1]"})
        EXPECT_FALSE(parseListenAddress(bad)) << bad;
}

// The command line's --serve is checked as the file's key would be.
TEST(LiveConfig, ServeOnAnOpenAddressWantsAToken)
{
    TempDir dir;
    test::writeFile(dir / "c.yaml",
        "source: {uri: synthetic://shapes, width: 64, height: 48, fps: 30}\nrun: {frames: 5}\n"
        "tasks:\n" +
            test::shapesTaskYaml() + "logging: {dir: logs, status_interval_s: 0}\n");
    auto r = test::runJetagent({"run", "-c", "c.yaml", "--serve", "0.0.0.0:0"}, dir.path());
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE(r.err.find("--serve (http.listen)"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("http.token"), std::string::npos) << r.err;
}

// --- against a real run ----------------------------------------------------------------------

constexpr const char* kToken = "s3cret-token";

std::string runConfig(int port, int width, int height, double seconds, const std::string& extra)
{
    return "source: {uri: synthetic://shapes, width: " + std::to_string(width) +
        ", height: " + std::to_string(height) + ", fps: 30, seed: 5}\n" +
        "run: {duration_s: " + std::to_string(seconds) + "}\n" + "tasks:\n" +
        test::shapesTaskYaml() + "logging: {dir: logs, status_interval_s: 0}\n" +
        (port > 0 ? "http: {listen: \"127.0.0.1:" + std::to_string(port) + "\"" + extra + "}\n"
                  : std::string());
}

// A client of the run's server, waiting for it to come up.
struct Agent {
    TempDir dir;
    int port = 0;
    int pid = -1;

    Agent(double seconds, const std::string& extra, int width = 320, int height = 240,
        bool serve = true)
    {
        port = serve ? test::unusedLoopbackPort() : 0;
        test::writeFile(dir / "c.yaml", runConfig(port, width, height, seconds, extra));
        pid = test::spawnJetagent({"run", "-c", "c.yaml"}, dir.path());
    }
    ~Agent()
    {
        if (pid > 0) {
            ::kill(pid, SIGTERM);
            test::waitExit(pid, 20000);
        }
    }
    httplib::Client client() const
    {
        httplib::Client c("127.0.0.1", port);
        c.set_connection_timeout(2);
        c.set_read_timeout(5);
        return c;
    }
    // Waits until /api/status shows a result (the model loaded, frames flowing).
    bool waitForResults(const httplib::Headers& auth, int seconds = 30)
    {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
        while (std::chrono::steady_clock::now() < until) {
            auto c = client();
            auto r = c.Get("/api/status", auth);
            if (r && r->status == 200) {
                json s = json::parse(r->body, nullptr, false);
                if (s.is_object() && s["tasks"].size() == 1 && !s["tasks"][0]["latest"].is_null())
                    return true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
        return false;
    }
    int finish()
    {
        const int code = test::waitExit(pid, 60000);
        pid = -1;
        return code;
    }
    json summary() const
    {
        return json::parse(test::readFile(test::onlyRunDirectory(dir / "logs") + "/summary.json"));
    }
};

const httplib::Headers kAuth = {{"Authorization", std::string("Bearer ") + kToken}};

// Reads `count` JPEG parts from /video.mjpg and decodes them.
std::vector<cv::Mat> mjpegFrames(httplib::Client& c, size_t count)
{
    std::string buffer;
    std::vector<cv::Mat> frames;
    c.Get("/video.mjpg", kAuth, [&](const char* data, size_t length) {
        buffer.append(data, length);
        while (true) {
            const size_t head = buffer.find("Content-Length: ");
            const size_t bodyAt = buffer.find("\r\n\r\n", head);
            if (head == std::string::npos || bodyAt == std::string::npos)
                break;
            const size_t size = std::stoul(buffer.substr(head + 16, bodyAt - head - 16));
            if (buffer.size() < bodyAt + 4 + size)
                break;
            std::vector<uchar> jpeg(buffer.begin() + static_cast<long>(bodyAt + 4),
                buffer.begin() + static_cast<long>(bodyAt + 4 + size));
            frames.push_back(cv::imdecode(jpeg, cv::IMREAD_COLOR));
            buffer.erase(0, bodyAt + 4 + size);
        }
        return frames.size() < count;
    });
    return frames;
}

// The overlay: a panel at the top left that darkens the scene to 0.45 of its brightness (so the
// median pixel there is dark) with white text on it. Raw synthetic frames almost never have both
// there (1 of 60 checked had a white shape on a dark ground); the test wants it in every frame.
bool hasOverlayPanel(const cv::Mat& frame)
{
    const cv::Mat strip =
        frame(cv::Rect(0, 0, std::min(frame.cols, 200), std::min(frame.rows, 32)));
    std::vector<int> levels;
    int white = 0;
    for (int y = 0; y < strip.rows; ++y)
        for (int x = 0; x < strip.cols; ++x) {
            const cv::Vec3b& p = strip.at<cv::Vec3b>(y, x);
            levels.push_back(std::max({p[0], p[1], p[2]}));
            white += p[0] > 200 && p[1] > 200 && p[2] > 200 ? 1 : 0;
        }
    std::nth_element(
        levels.begin(), levels.begin() + static_cast<long>(levels.size() / 2), levels.end());
    constexpr int kMinTextPixels = 15;
    constexpr int kMaxDarkenedMedian = 125; // 0.45 x 255 = 115, plus JPEG's ringing
    return white >= kMinTextPixels && levels[levels.size() / 2] <= kMaxDarkenedMedian;
}

TEST(LiveServerRun, EndpointsTokenAndVideo)
{
    Agent agent(12.0, ", token: " + std::string(kToken));
    ASSERT_TRUE(agent.waitForResults(kAuth)) << test::readFile(agent.dir / "spawn.err");
    auto c = agent.client();

    // Without the token (or with a wrong one): 401, whatever the path.
    for (const char* path : {"/", "/api/status", "/video.mjpg", "/snapshot.jpg"}) {
        auto r = c.Get(path);
        ASSERT_TRUE(r) << path;
        EXPECT_EQ(r->status, 401) << path;
    }
    auto wrong = c.Get("/api/status", {{"Authorization", "Bearer s3cret-tokeN"}});
    ASSERT_TRUE(wrong);
    EXPECT_EQ(wrong->status, 401);
    auto query = c.Get(std::string("/api/status?token=") + kToken);
    ASSERT_TRUE(query);
    EXPECT_EQ(query->status, 200);

    // Read-only: anything but GET and HEAD is 405.
    auto post = c.Post("/api/status", kAuth, "{}", "application/json");
    ASSERT_TRUE(post);
    EXPECT_EQ(post->status, 405);
    auto del = c.Delete("/api/status", kAuth);
    ASSERT_TRUE(del);
    EXPECT_EQ(del->status, 405);
    auto head = c.Head("/api/status", kAuth);
    ASSERT_TRUE(head);
    EXPECT_EQ(head->status, 200);

    // The page: self-contained, Chart.js inlined.
    auto page = c.Get("/", kAuth);
    ASSERT_TRUE(page);
    EXPECT_EQ(page->status, 200);
    EXPECT_NE(page->body.find("Chart"), std::string::npos);
    EXPECT_EQ(page->body.find("<script src"), std::string::npos);

    // Status: the run's context, the task's latest result with its stage times, rolling
    // percentiles, counters, the video's counters.
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    auto status = c.Get("/api/status", kAuth);
    ASSERT_TRUE(status);
    const json s = json::parse(status->body);
    EXPECT_TRUE(s["running"].get<bool>());
    EXPECT_EQ(s["run"]["source"]["uri"], "synthetic://shapes");
    EXPECT_EQ(s["run"]["source"]["width"], 320);
    ASSERT_EQ(s["tasks"].size(), 1u);
    const json& t = s["tasks"][0];
    EXPECT_EQ(t["name"], "shapes");
    EXPECT_GT(t["frames"].get<uint64_t>(), 10u);
    EXPECT_TRUE(t["dropped"].is_number());
    EXPECT_TRUE(t["deadline_misses"].is_number());
    EXPECT_NEAR(t["deadline_ms"].get<double>(), 1000.0 / 30, 0.01);
    const json& latest = t["latest"];
    ASSERT_FALSE(latest["top"].empty());
    EXPECT_TRUE(latest["top"][0]["label"].is_string());
    const double e2e = latest["end_to_end_ms"].get<double>();
    double stages = 0;
    for (const char* stage : {"wait", "preprocess", "inference", "postprocess"})
        stages += latest["stages_ms"][stage].get<double>();
    EXPECT_NEAR(stages, e2e, 0.01); // the stages tile end to end
    const json& rolling = t["rolling"];
    EXPECT_GT(rolling["results"].get<int>(), 10);
    EXPECT_LE(rolling["p50_ms"].get<double>(), rolling["p90_ms"].get<double>());
    EXPECT_LE(rolling["p90_ms"].get<double>(), rolling["p99_ms"].get<double>());
    EXPECT_LE(rolling["p99_ms"].get<double>(), rolling["max_ms"].get<double>());
    EXPECT_TRUE(s["point"]["latency_ms"].is_array());
    EXPECT_TRUE(s.contains("power"));
    EXPECT_TRUE(s["temperatures"].is_array());

    // Frames after a frame number, from the ring; the whole ring from 0.
    auto all = c.Get("/api/frames?since=0", kAuth);
    ASSERT_TRUE(all);
    const json a = json::parse(all->body);
    ASSERT_GT(a["frames"].size(), 10u);
    EXPECT_FALSE(a["missed_older"].get<bool>()); // 12 s at 30 fps fits the ring
    const uint64_t mid = a["frames"][a["frames"].size() / 2]["frame"].get<uint64_t>();
    auto after = c.Get("/api/frames?since=" + std::to_string(mid), kAuth);
    ASSERT_TRUE(after);
    const json b = json::parse(after->body);
    ASSERT_FALSE(b["frames"].empty());
    for (const json& f : b["frames"]) {
        EXPECT_GT(f["frame"].get<uint64_t>(), mid);
        EXPECT_EQ(f["task"], "shapes");
        EXPECT_TRUE(f["end_to_end_ms"].is_number());
    }
    auto bad = c.Get("/api/frames?since=-3", kAuth);
    ASSERT_TRUE(bad);
    EXPECT_EQ(bad->status, 400);
    // Without `since`: every record the ring holds, the oldest first (frame 0: the run is young).
    auto whole = c.Get("/api/frames", kAuth);
    ASSERT_TRUE(whole);
    const json w = json::parse(whole->body);
    ASSERT_FALSE(w["frames"].empty());
    EXPECT_TRUE(w["since"].is_null());
    EXPECT_EQ(w["oldest_frame"].get<uint64_t>(), 0u);
    EXPECT_EQ(w["frames"][0]["frame"].get<uint64_t>(), 0u);

    // The video: JPEGs that decode to the source's size, with the overlay's dark panel and its
    // light text at the top left (the synthetic scene has neither there).
    auto frames = mjpegFrames(c, 3);
    ASSERT_EQ(frames.size(), 3u);
    for (const cv::Mat& f : frames) {
        ASSERT_FALSE(f.empty());
        EXPECT_EQ(f.cols, 320);
        EXPECT_EQ(f.rows, 240);
        EXPECT_TRUE(hasOverlayPanel(f));
    }
    auto snapshot = c.Get("/snapshot.jpg", kAuth);
    ASSERT_TRUE(snapshot);
    ASSERT_EQ(snapshot->status, 200);
    const cv::Mat still = cv::imdecode(
        std::vector<uchar>(snapshot->body.begin(), snapshot->body.end()), cv::IMREAD_COLOR);
    ASSERT_FALSE(still.empty());

    // A client that asked for the video got counted (in the next status, made once a second).
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    auto after2 = c.Get("/api/status", kAuth);
    const json s2 = json::parse(after2->body);
    EXPECT_GE(s2["video"]["frames_encoded"].get<uint64_t>(), 3u);
    EXPECT_GE(s2["video"]["frames_sent"].get<uint64_t>(), 3u);
    EXPECT_GT(s2["http"]["unauthorized"].get<uint64_t>(), 4u);
    EXPECT_EQ(agent.finish(), 0) << test::readFile(agent.dir / "spawn.err");
}

TEST(LiveServerRun, PortInUseIsNamed)
{
    httplib::Server blocker;
    const int port = blocker.bind_to_any_port("127.0.0.1");
    ASSERT_GT(port, 0);
    TempDir dir;
    test::writeFile(dir / "c.yaml", runConfig(port, 64, 48, 1, ""));
    auto r = test::runJetagent({"run", "-c", "c.yaml"}, dir.path());
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE(r.err.find("port " + std::to_string(port)), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("in use"), std::string::npos) << r.err;
}

// Results per second of a run's only task, from its summary.
double resultsPerSecond(const json& summary)
{
    return summary["tasks"][0]["throughput_fps"].get<double>();
}

// 50 clients asking for the video at once (16 are served, the rest refused) and one that asks and
// never reads: the run's inference rate stays within 10% of the same run without them, measured
// here one after the other.
TEST(LiveServerRun, ManyAndStalledClientsKeepTheInferenceRate)
{
    constexpr double kSeconds = 10.0;
    constexpr int kClients = 50;
    double alone = 0.0;
    {
        Agent agent(kSeconds, "", 640, 480);
        ASSERT_TRUE(agent.waitForResults({}));
        ASSERT_EQ(agent.finish(), 0);
        alone = resultsPerSecond(agent.summary());
    }
    Agent agent(kSeconds, "", 640, 480);
    ASSERT_TRUE(agent.waitForResults({}));
    // The stalled client: asks for the video and never reads a byte.
    const int stalled = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(stalled, 0);
    sockaddr_in to {};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(agent.port));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(stalled, reinterpret_cast<const sockaddr*>(&to), sizeof to), 0);
    const std::string request = "GET /video.mjpg HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    ASSERT_EQ(
        ::send(stalled, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
    std::atomic<int> served {0};
    std::atomic<int> refused {0};
    std::vector<std::thread> clients;
    clients.reserve(kClients);
    for (int i = 0; i < kClients; ++i)
        clients.emplace_back([&] {
            httplib::Client c("127.0.0.1", agent.port);
            c.set_read_timeout(10);
            size_t bytes = 0;
            auto r = c.Get("/video.mjpg", [&](const char*, size_t n) {
                bytes += n;
                return bytes < 2'000'000; // a few seconds of video, then hang up
            });
            if (r && r->status == 503)
                ++refused;
            else if (bytes > 0)
                ++served;
        });
    for (auto& t : clients)
        t.join();
    auto c = agent.client();
    auto status = c.Get("/api/status");
    ASSERT_TRUE(status);
    const json s = json::parse(status->body);
    ASSERT_EQ(agent.finish(), 0);
    ::close(stalled);
    const double loaded = resultsPerSecond(agent.summary());
    std::printf("inference rate: %.2f results/s alone, %.2f with %d clients (%d served, %d "
                "refused) and a stalled one; video: %s\n",
        alone, loaded, kClients, served.load(), refused.load(), s["video"].dump().c_str());
    EXPECT_GE(served.load(), 1);
    EXPECT_GE(refused.load(), kClients - LiveServer::kMaxStreams);
    EXPECT_GE(s["video"]["clients_refused"].get<int>(), kClients - LiveServer::kMaxStreams);
    EXPECT_GT(loaded, alone * 0.9);
}

} // namespace
} // namespace jetagent
