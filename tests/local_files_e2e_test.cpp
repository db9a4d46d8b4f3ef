// jetagent run on files that are not what they claim (an HLS playlist saved as a video, a file
// named like an FFmpeg URL, playlists among images): no network connection is ever made, and a
// source that cannot be opened ends the run with exit code 2 and a message naming the file.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/videoio.hpp>

#include "jetagent/hal/frame_source.h"
#include "jetagent/hal/gstreamer_source.h"
#include "jetagent/hal/video_file_source.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace jetagent {
namespace {

using test::CommandResult;
using test::sourcePath;
using test::TempDir;

constexpr int kExitUsage = 2; // docs/running.md: a source that cannot be opened
// Bounds each run: a reader blocked on a FIFO would otherwise hold the test forever.
constexpr double kRunLimitS = 60.0;

// A TCP listener on 127.0.0.1 that counts the connections made to it (each accepted and closed at
// once) on its own thread. It stops when destroyed, or by itself after kLifetime.
class ConnectionCounter {
public:
    ConnectionCounter()
    {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        EXPECT_GE(fd_, 0);
        sockaddr_in address {};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof(address);
        EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&address), length), 0);
        EXPECT_EQ(::listen(fd_, 16), 0);
        EXPECT_EQ(::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length), 0);
        port_ = ntohs(address.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    ~ConnectionCounter()
    {
        stop_ = true;
        thread_.join();
        ::close(fd_);
    }
    ConnectionCounter(const ConnectionCounter&) = delete;
    ConnectionCounter& operator=(const ConnectionCounter&) = delete;

    int port() const { return port_; }
    int connections() const { return connections_; }

private:
    static constexpr auto kLifetime = std::chrono::minutes(5);
    static constexpr int kPollMs = 20;

    void serve()
    {
        const auto end = std::chrono::steady_clock::now() + kLifetime;
        while (!stop_ && std::chrono::steady_clock::now() < end) {
            pollfd p {fd_, POLLIN, 0};
            if (::poll(&p, 1, kPollMs) <= 0)
                continue;
            const int client = ::accept(fd_, nullptr, nullptr);
            if (client >= 0) {
                ++connections_;
                ::close(client);
            }
        }
    }

    int fd_ = -1;
    int port_ = 0;
    std::atomic<bool> stop_ {false};
    std::atomic<int> connections_ {0};
    std::thread thread_;
};

// Runs jetagent as runJetagent does, but killed after kRunLimitS.
CommandResult runBare(const std::vector<std::string>& args, const std::string& workdir)
{
    return test::runJetagentUnder("timeout -s KILL " +
            std::to_string(static_cast<int>(kRunLimitS * test::kSanitizerSlowdown)),
        args, workdir);
}

void writeConfig(const TempDir& dir)
{
    test::writeFile(dir / "c.yaml",
        "source: {uri: synthetic://shapes}\n"
        "tasks:\n"
        "  - name: shapes\n"
        "    model: " +
            sourcePath("models/shapes_cnn.onnx") +
            "\n"
            "    labels: " +
            sourcePath("models/shapes_labels.txt") +
            "\n"
            "    engine: {backend: opencv}\n"
            "logging: {dir: logs, status_interval_s: 0}\n");
}

// An HLS media playlist of two segments on the listener: what FFmpeg's hls demuxer or GStreamer's
// hlsdemux would fetch over HTTP.
std::string playlist(int port)
{
    const std::string base = "http://127.0.0.1:" + std::to_string(port) + "/";
    return "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\n" + base +
        "segment0.ts\n#EXTINF:2.0,\n" + base + "segment1.ts\n#EXT-X-ENDLIST\n";
}

// A DASH manifest whose root element is behind a comment, with its segment on the listener.
std::string dashManifest(int port)
{
    return "<!-- a comment -->\n<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" type=\"static\" "
           "mediaPresentationDuration=\"PT4S\" minBufferTime=\"PT1S\" "
           "profiles=\"urn:mpeg:dash:profile:isoff-on-demand:2011\"><Period><AdaptationSet "
           "mimeType=\"video/mp4\"><Representation id=\"1\" bandwidth=\"100000\" "
           "codecs=\"avc1.42c00d\" width=\"64\" height=\"48\"><BaseURL>http://127.0.0.1:" +
        std::to_string(port) + "/v.mp4</BaseURL></Representation></AdaptationSet></Period></MPD>\n";
}

// The manifest check skipped, the decoding pipeline still refuses a playlist by itself: decodebin
// would plug an adaptive demuxer (hlsdemux2, dashdemux), which fetches the segments over HTTP.
TEST(LocalFilesDecoder, APlaylistPastTheManifestCheckIsRefusedByThePipelineWithoutAConnection)
{
    const bool hls = gstreamerHasElement("hlsdemux") || gstreamerHasElement("hlsdemux2");
    const bool dash = gstreamerHasElement("dashdemux") || gstreamerHasElement("dashdemux2");
    if (!hls && !dash)
        GTEST_SKIP() << "no HLS or DASH demuxer is installed (gstreamer1.0-plugins-bad): nothing "
                        "here could fetch a playlist's segments";
    TempDir dir;
    ConnectionCounter listener;
    std::vector<std::pair<std::string, std::string>> cases;
    if (hls)
        cases.emplace_back(dir / "hls.mp4", playlist(listener.port()));
    if (dash)
        cases.emplace_back(dir / "dash.mp4", dashManifest(listener.port()));
    for (const auto& [path, text] : cases) {
        SCOPED_TRACE(path);
        test::writeFile(path, text);
        SourceOptions options;
        options.uri = path;
        const auto start = std::chrono::steady_clock::now();
        auto opened = openVideoFile(options, path, false);
        ASSERT_FALSE(opened.ok());
        EXPECT_EQ(opened.status().kind(), ErrorKind::InvalidInput);
        const std::string message = opened.status().message();
        EXPECT_NE(message.find("video file '" + path + "' would need "), std::string::npos)
            << message;
        EXPECT_NE(message.find("an adaptive-streaming demuxer"), std::string::npos) << message;
        EXPECT_NE(message.find("never open the network"), std::string::npos) << message;
        // Refused as soon as the demuxer was asked for, not after a wait for frames.
        EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
            10.0 * test::kSanitizerSlowdown);
        // With the check, the same file is refused before GStreamer sees it.
        auto checked = openFrameSource(options);
        ASSERT_FALSE(checked.ok());
        EXPECT_NE(checked.status().message().find("never open the network"), std::string::npos);
    }
    // Any connection attempt would have come while the pipeline ran; it is torn down by now.
    EXPECT_EQ(listener.connections(), 0);
}

TEST(LocalFilesRun, AnHlsPlaylistUnderAnyNameOpensNoConnection)
{
    TempDir dir;
    writeConfig(dir);
    ConnectionCounter listener;
    for (const std::string name : {"clip.mp4", "clip.m3u8", "clip"}) {
        test::writeFile(dir / name, playlist(listener.port()));
        const CommandResult r =
            runBare({"run", "-c", "c.yaml", "--source", name, "--frames", "5"}, dir.path());
        EXPECT_EQ(r.exitCode, kExitUsage) << name << "\n" << r.err;
        EXPECT_NE(r.err.find("video file '" + name + "' is an HLS playlist"), std::string::npos)
            << r.err;
        EXPECT_EQ(listener.connections(), 0) << name;
    }
    // A DASH manifest behind a comment: GStreamer's typefinder takes it for one, and decodebin
    // would plug dashdemux, which fetches its segment.
    test::writeFile(dir / "dash.mp4", dashManifest(listener.port()));
    const CommandResult dash =
        runBare({"run", "-c", "c.yaml", "--source", "dash.mp4", "--frames", "5"}, dir.path());
    EXPECT_EQ(dash.exitCode, kExitUsage) << dash.err;
    EXPECT_NE(dash.err.find("video file 'dash.mp4' is a DASH manifest"), std::string::npos)
        << dash.err;
    EXPECT_EQ(listener.connections(), 0);
}

// A name that FFmpeg would read as a URL ("tcp:HOST:PORT", "http:...") is the relative path it
// also is: filesrc reads it.
TEST(LocalFilesRun, AFileNamedLikeAnFFmpegUrlIsReadAsAFile)
{
    TempDir dir;
    writeConfig(dir);
    ConnectionCounter listener;
    const std::string name = "tcp:127.0.0.1:" + std::to_string(listener.port());
    {
        cv::VideoWriter writer(
            dir / "clip.avi", cv::VideoWriter::fourcc('M', 'J', 'P', 'G'), 25.0, cv::Size(64, 48));
        ASSERT_TRUE(writer.isOpened());
        for (int i = 0; i < 8; ++i)
            writer.write(cv::Mat(48, 64, CV_8UC3, cv::Scalar(i * 20, 100, 200)));
    }
    fs::rename(dir / "clip.avi", dir / name);
    const CommandResult r =
        runBare({"run", "-c", "c.yaml", "--source", name, "--frames", "5", "--as-fast-as-possible"},
            dir.path());
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(listener.connections(), 0);
}

TEST(LocalFilesRun, PlaylistsInAnImageDirectoryAreSkippedWithoutAConnection)
{
    TempDir dir;
    writeConfig(dir);
    ConnectionCounter listener;
    fs::create_directories(dir / "images");
    ASSERT_TRUE(cv::imwrite(dir / "images/a.png", cv::Mat(48, 64, CV_8UC3, cv::Scalar(1, 2, 3))));
    test::writeFile(dir / "images/b.jpg", playlist(listener.port()));
    test::writeFile(dir / "images/c.mp4", playlist(listener.port())); // not an image: not listed
    const CommandResult r =
        runBare({"run", "-c", "c.yaml", "--source", "images", "--as-fast-as-possible"}, dir.path());
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.err.find("image 'images/b.jpg' cannot be decoded: it is not a PNG, JPEG"),
        std::string::npos)
        << r.err;
    EXPECT_EQ(listener.connections(), 0);
    // The skipped file is counted in the summary, where an operator looks.
    const std::string run = test::onlyRunDirectory(dir / "logs");
    EXPECT_EQ(
        nlohmann::json::parse(test::readFile(run + "/summary.json"))["source"]["skipped_files"]
            .get<uint64_t>(),
        1u);
    EXPECT_NE(
        test::readFile(run + "/summary.txt").find("image file(s) skipped"), std::string::npos);
    fs::remove_all(dir / "logs");

    // Nothing decodable at all: the run fails once a whole pass found no image, naming the last.
    fs::remove(dir / "images/a.png");
    const CommandResult none =
        runBare({"run", "-c", "c.yaml", "--source", "images", "--as-fast-as-possible"}, dir.path());
    EXPECT_NE(none.exitCode, 0);
    EXPECT_NE(none.err.find("no image in 'images' could be decoded (the last: image "
                            "'images/b.jpg' cannot be decoded"),
        std::string::npos)
        << none.err;
    EXPECT_EQ(listener.connections(), 0);
}

TEST(LocalFilesRun, AFifoAsTheSourceIsRefusedAtOnce)
{
    TempDir dir;
    writeConfig(dir);
    ASSERT_EQ(::mkfifo((dir / "camera.mp4").c_str(), 0600), 0);
    const auto start = std::chrono::steady_clock::now();
    const CommandResult r =
        runBare({"run", "-c", "c.yaml", "--source", "camera.mp4", "--frames", "5"}, dir.path());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(r.exitCode, kExitUsage) << r.err;
    EXPECT_NE(r.err.find("video file 'camera.mp4' is a FIFO (named pipe), not a regular file"),
        std::string::npos)
        << r.err;
    // The whole run, model load included; a blocked open would never return.
    EXPECT_LT(seconds, 30.0 * test::kSanitizerSlowdown);
}

// A 60-frame MJPEG AVI of noise, as a camera's would be; damaged, as a hostile-input trial did, by
// 2000 random bytes over its middle or by a cut at half its size.
void writeNoiseVideo(const std::string& path)
{
    cv::VideoWriter writer(
        path, cv::VideoWriter::fourcc('M', 'J', 'P', 'G'), 25.0, cv::Size(64, 48));
    ASSERT_TRUE(writer.isOpened());
    cv::RNG rng(7);
    cv::Mat m(48, 64, CV_8UC3);
    for (int i = 0; i < 60; ++i) {
        rng.fill(m, cv::RNG::UNIFORM, 0, 256);
        writer.write(m);
    }
}

// The run's stop reason and frames captured, from its summary.json; the logs are removed after.
std::pair<std::string, uint64_t> stopReasonAndFrames(const TempDir& dir)
{
    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto summary = nlohmann::json::parse(test::readFile(run + "/summary.json"));
    EXPECT_NE(test::readFile(run + "/summary.txt")
                  .find("stopped: " + summary["run"]["stop_reason"].get<std::string>()),
        std::string::npos);
    fs::remove_all(dir / "logs");
    return {summary["run"]["stop_reason"].get<std::string>(),
        summary["source"]["frames_captured"].get<uint64_t>()};
}

TEST(LocalFilesRun, AVideoThatStopsDecodingEarlySaysSoInTheSummaryAndStillSucceeds)
{
    TempDir dir;
    writeConfig(dir);
    writeNoiseVideo(dir / "intact.avi");
    writeNoiseVideo(dir / "damaged.avi");
    {
        std::fstream file(dir / "damaged.avi", std::ios::in | std::ios::out | std::ios::binary);
        ASSERT_TRUE(file.is_open());
        file.seekp(static_cast<std::streamoff>(fs::file_size(dir / "damaged.avi") / 2));
        std::mt19937 random(1);
        for (int i = 0; i < 2000; ++i)
            file.put(static_cast<char>(random() & 0xff));
        ASSERT_TRUE(file.good());
    }
    writeNoiseVideo(dir / "truncated.avi");
    fs::resize_file(dir / "truncated.avi", fs::file_size(dir / "truncated.avi") / 2);

    const CommandResult intact = runBare(
        {"run", "-c", "c.yaml", "--source", "intact.avi", "--as-fast-as-possible"}, dir.path());
    EXPECT_EQ(intact.exitCode, 0) << intact.err;
    EXPECT_EQ(intact.err.find("could not be decoded"), std::string::npos) << intact.err;
    EXPECT_EQ(
        stopReasonAndFrames(dir), std::make_pair(std::string("end of stream"), uint64_t {60}));

    for (const std::string name : {"damaged.avi", "truncated.avi"}) {
        SCOPED_TRACE(name);
        const CommandResult r =
            runBare({"run", "-c", "c.yaml", "--source", name, "--as-fast-as-possible"}, dir.path());
        EXPECT_EQ(r.exitCode, 0) << r.err; // the frames read were measured
        const auto [reason, frames] = stopReasonAndFrames(dir);
        EXPECT_GT(frames, 0u);
        EXPECT_LT(frames, 60u);
        const std::string counts = std::to_string(frames) + " of 60 frames";
        EXPECT_EQ(reason, "end of stream after " + counts);
        EXPECT_NE(r.err.find("video file '" + name + "' ended after " + counts +
                      ": the rest could not be decoded (a damaged or truncated file)"),
            std::string::npos)
            << r.err;
    }
}

} // namespace
} // namespace jetagent
