// Whole runs of the jetagent binary: logs, summaries, several tasks on one source, clean stops.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <sys/stat.h>

#include <gtest/gtest.h>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/videoio.hpp>

#include "jetagent/hal/gstreamer_source.h"
#include "jetagent/hal/synthetic_shapes.h"
#include "run_checks.h"
#include "test_image.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace jetagent {
namespace {

using test::runJetagent;
using test::TempDir;

std::string task(const std::string& name, const std::string& engine)
{
    return test::shapesTaskYaml(name, "    engine: " + engine + "\n");
}

std::string config(const std::string& run, const std::string& tasks)
{
    return "source: {uri: synthetic://shapes, width: 320, height: 240, fps: 30, seed: 5}\n"
           "run: " +
        run +
        "\n"
        "tasks:\n" +
        tasks + "logging: {dir: logs, status_interval_s: 0}\n";
}

TEST(AgentRun, AsFastAsPossibleLogsEveryFrameAndSummarises)
{
    TempDir dir;
    test::writeFile(dir / "c.yaml", config("{frames: 120}", task("shapes", "{threads: 0}")));
    auto r = runJetagent({"run", "-c", "c.yaml", "--as-fast-as-possible"}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("== jetagent run summary =="), std::string::npos);

    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto files = test::checkRun(run, "shapes");
    EXPECT_EQ(files.csvRecords, 120u); // offline: nothing dropped
    const auto& s = files.summary;
    EXPECT_EQ(s["source"]["pacing"], "none");
    EXPECT_EQ(s["source"]["frames_captured"], 120);
    EXPECT_EQ(s["run"]["stop_reason"], "frame limit reached");
    EXPECT_TRUE(s["run"]["failure"].is_null());
    EXPECT_EQ(s["config"]["overrides"][0], "run.pacing=none");
    const auto& t = s["tasks"][0];
    EXPECT_EQ(t["frames"]["processed"], 120);
    EXPECT_EQ(t["frames"]["dropped"], 0);
    EXPECT_EQ(t["log"]["lines_written"], 120);
    EXPECT_EQ(t["log"]["lines_lost"], 0);
    EXPECT_EQ(t["cold_start"]["frame"], 0);
    EXPECT_EQ(t["latency_ms"]["end_to_end"]["n"], 119); // the cold start is kept apart
    EXPECT_GE(t["accuracy"]["top1"].get<double>(), 0.95);
    // postprocess.top_k is 5 by default: every result can be judged for top-5 too.
    ASSERT_TRUE(t["accuracy"]["top5"].is_number()) << t["accuracy"];
    EXPECT_GE(t["accuracy"]["top5"].get<double>(), t["accuracy"]["top1"].get<double>());
    EXPECT_GE(t["stability"]["inference_p99_over_p50"].get<double>(), 1.0);
    EXPECT_GE(t["stability"]["end_to_end_p99_over_p50"].get<double>(), 1.0);
    EXPECT_GT(s["process"]["cpu_ms_per_frame"].get<double>(), 0.0);
    EXPECT_GT(s["process"]["cpu_cores_busy"].get<double>(), 0.0);
    EXPECT_GT(s["process"]["peak_rss_mb"].get<double>(), 10.0);
    EXPECT_NE(r.out.find("p99/p50   inference"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("process   CPU"), std::string::npos) << r.out;
    EXPECT_EQ(t["engines"][0]["model"]["sha256"].get<std::string>().size(), 64u);
    EXPECT_FALSE(s["context"]["host"].get<std::string>().empty());
    // The start-up, from the process's start to the first frame: its parts add up to it.
    const auto& up = s["context"]["startup"];
    ASSERT_TRUE(up["to_first_frame_ms"].is_number()) << up;
    double parts = 0;
    for (const char* part :
        {"loading_ms", "source_open_ms", "engine_build_ms", "first_frame_wait_ms", "other_ms"}) {
        ASSERT_TRUE(up[part].is_number()) << part << ": " << up;
        EXPECT_GE(up[part].get<double>(), 0.0) << part << ": " << up;
        parts += up[part].get<double>();
    }
    EXPECT_NEAR(parts, up["to_first_frame_ms"].get<double>(), 0.001) << up;
    EXPECT_GT(up["loading_ms"].get<double>(), 0.0) << up; // the loader maps the libraries
    EXPECT_GT(up["engine_build_ms"].get<double>(), 0.0) << up;
    EXPECT_NE(
        r.out.find("ms from the process's start to the first frame: loading"), std::string::npos)
        << r.out;
    EXPECT_FALSE(s["percentile_definition"].get<std::string>().empty());
    // 119 samples: enough for p90 (64), too few for p95, p99 and p99.9.
    ASSERT_EQ(t["notes"].size(), 3u) << t["notes"];
    EXPECT_EQ(t["notes"][0].get<std::string>().rfind("p95 rests on 119", 0), 0u) << t["notes"];
    EXPECT_TRUE(fs::exists(run + "/summary.txt"));
    EXPECT_EQ(test::readFile(run + "/config.yaml"), test::readFile(dir / "c.yaml"));
}

// Median of the e2e_ms (column 7) or queue_ms (last column) of CSV lines [from, to).
double medianColumn(const std::vector<std::string>& csv, size_t from, size_t to, bool queue)
{
    std::vector<double> values;
    for (size_t i = from; i < to; ++i) {
        const std::string& line = csv[i];
        std::vector<std::string> f;
        size_t start = 0;
        for (size_t comma = line.find(',');; comma = line.find(',', start)) {
            f.push_back(line.substr(start, comma - start));
            if (comma == std::string::npos)
                break;
            start = comma + 1;
        }
        values.push_back(std::stod(queue ? f.back() : f.at(7)));
    }
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

TEST(AgentRun, AnOfflineImageFolderKeepsQueueingOutOfLatencyAndJudgesNoDeadline)
{
    // An image folder read as fast as possible into a deep FIFO: the reader runs far ahead of
    // the model, so frames wait longer and longer from the run's start. That wait is queueing,
    // reported apart; end to end starts at the dequeue and no deadline is judged, however tight.
    // Small uncompressed images and OpenCV DNN on one thread, so that reading stays many times
    // faster than inference on any machine (PNGs and the xnnpack engine are about as fast).
    constexpr int kImages = 80;
    TempDir dir;
    fs::create_directories(dir / "images/circle");
    const ShapesRenderer shapes(64, 48, 3);
    Image image;
    for (int i = 0; i < kImages; ++i) {
        shapes.render(static_cast<uint64_t>(i), image);
        char name[32];
        std::snprintf(name, sizeof name, "/images/circle/%03d.bmp", i);
        ASSERT_TRUE(cv::imwrite(dir.path() + name, test::asMat(image)));
    }
    std::string tasks = task("shapes", "{backend: opencv, threads: 1}");
    tasks += "    deadline_ms: 2\n";
    test::writeFile(dir / "c.yaml",
        "source: {uri: " + (dir / "images") +
            "}\n"
            "run: {queue_depth: 64}\n"
            "tasks:\n" +
            tasks + "logging: {dir: logs, status_interval_s: 0}\n");
    auto r = runJetagent({"run", "-c", "c.yaml", "--as-fast-as-possible"}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;

    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto files = test::checkRun(run, "shapes"); // wait 0, queue_ms, deadline_miss empty
    EXPECT_EQ(files.csvRecords, static_cast<size_t>(kImages));
    const auto& t = files.summary["tasks"][0];
    EXPECT_EQ(t["latency_from"], "dequeue");
    EXPECT_FALSE(t["deadline"]["judged"].get<bool>());
    EXPECT_TRUE(t["deadline"]["misses"].is_null());
    EXPECT_NE(
        t["deadline"]["why_not_judged"].get<std::string>().find("unpaced"), std::string::npos);
    EXPECT_EQ(t["latency_ms"]["queue"]["n"], kImages - 1);
    EXPECT_NE(r.out.find("not judged, unpaced run"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("queue (FIFO, not in e2e)"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("misses ("), std::string::npos) << r.out;

    // The FIFO filled: the last frames queued longer than the first. Their end to end did not
    // grow with it (a generous bound: the machine may be busy).
    const auto csv = test::readLines(run + "/shapes.frames.csv");
    const double firstQueue = medianColumn(csv, 2, 12, true);
    const double lastQueue = medianColumn(csv, csv.size() - 10, csv.size(), true);
    EXPECT_GT(lastQueue, firstQueue + 5.0);
    const double firstE2e = medianColumn(csv, 2, 12, false);
    const double lastE2e = medianColumn(csv, csv.size() - 10, csv.size(), false);
    EXPECT_LT(lastE2e, 3.0 * firstE2e + 5.0) << "first " << firstE2e << " ms, last " << lastE2e;
    EXPECT_LT(lastE2e, lastQueue);
}

TEST(AgentRun, TasksOnOneSourceSeeTheSameFrames)
{
    TempDir dir;
    test::writeFile(dir / "c.yaml",
        config("{frames: 60, pacing: none}",
            task("single", "{batch: 1}") + task("batched", "{batch: 4}")));
    auto r = runJetagent({"run", "-c", "c.yaml"}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto a = test::readLines(run + "/single.frames.csv");
    const auto b = test::readLines(run + "/batched.frames.csv");
    ASSERT_EQ(a.size(), 61u);
    ASSERT_EQ(b.size(), 61u);
    for (size_t i = 1; i < a.size(); ++i) {
        // Same frame id, capture time, top-1 label and truth: one decoded frame shared by both
        // tasks.
        auto fields = [](const std::string& line) {
            std::vector<std::string> f;
            std::stringstream in(line);
            std::string x;
            while (std::getline(in, x, ','))
                f.push_back(x);
            return f;
        };
        const auto fa = fields(a[i]), fb = fields(b[i]);
        EXPECT_EQ(fa[0], fb[0]);
        EXPECT_EQ(fa[1], fb[1]);
        EXPECT_EQ(fa[9], fb[9]);
        EXPECT_EQ(fa[11], fb[11]);
        EXPECT_EQ(fb[8], "4");
    }
    test::checkRun(run, "batched");
}

// Lines in the run's CSV log so far (the writer flushes about once a second); 0 before it exists.
size_t loggedFrames(const std::string& logDir)
{
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(logDir, ec)) {
        const auto lines = test::readLines(e.path().string() + "/shapes.frames.csv");
        return lines.empty() ? 0 : lines.size() - 1;
    }
    return 0;
}

TEST(AgentRun, SigintStopsCaptureAndKeepsEveryCompletedFrame)
{
    TempDir dir;
    test::writeFile(dir / "c.yaml", config("{frames: 0}", task("shapes", "{threads: 1}")));
    const int pid = test::spawnJetagent({"run", "-c", "c.yaml"}, dir.path());
    // Signal once frames are flowing, however fast this machine (or emulator) runs them.
    for (int i = 0; i < 600 && loggedFrames(dir / "logs") < 10; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_GE(loggedFrames(dir / "logs"), 10u) << test::readFile(dir / "spawn.err");
    kill(pid, SIGINT);
    EXPECT_EQ(test::waitExit(pid, 30000), 0) << test::readFile(dir / "spawn.err");
    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto files = test::checkRun(run, "shapes");
    const auto& s = files.summary;
    EXPECT_EQ(s["run"]["stop_reason"].get<std::string>().rfind("signal", 0), 0u) << s["run"];
    // Every frame completed before the stop is in the log, the ones flushed before the signal and
    // after.
    EXPECT_EQ(files.csvRecords, s["tasks"][0]["frames"]["processed"].get<size_t>());
    EXPECT_GE(files.csvRecords, 10u);
}

// Waits (up to 60 s, for emulated runs) until a run under `logDir` has logged frames: by then the
// agent's signal handling is in place, however slowly it started.
void waitForFrames(const std::string& logDir)
{
    namespace fs = std::filesystem;
    for (int i = 0; i < 6000; ++i) {
        std::error_code ec;
        for (const auto& run : fs::directory_iterator(logDir, ec))
            for (const auto& file : fs::directory_iterator(run.path(), ec))
                if (file.path().string().find(".frames.csv") != std::string::npos &&
                    test::readLines(file.path().string()).size() > 2)
                    return;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

TEST(AgentRun, SigtermStopsCleanlyAndASecondSignalQuitsAtOnce)
{
    TempDir dir;
    test::writeFile(dir / "c.yaml", config("{frames: 0}", task("shapes", "{threads: 1}")));
    const int clean =
        test::spawnJetagent({"run", "-c", "c.yaml", "--log-dir", "clean"}, dir.path());
    waitForFrames(dir / "clean");
    kill(clean, SIGTERM);
    EXPECT_EQ(test::waitExit(clean, 10000), 0) << test::readFile(dir / "spawn.err");
    const auto files = test::checkRun(test::onlyRunDirectory(dir / "clean"), "shapes");
    EXPECT_EQ(files.summary["run"]["stop_reason"], "signal SIGTERM");

    // A clean stop finishes every queued frame: a deep FIFO of small frames takes about a second to
    // drain, long enough to send the second signal once the first has been handled (two signals
    // sent back to back would merge into one).
    test::writeFile(dir / "deep.yaml",
        "source: {uri: synthetic://shapes, width: 64, height: 48}\n"
        "run: {frames: 0, pacing: none, queue_depth: 1024}\n"
        "tasks:\n" +
            task("shapes", "{threads: 1}") + "logging: {dir: hasty, status_interval_s: 0}\n");
    const int hasty = test::spawnJetagent({"run", "-c", "deep.yaml"}, dir.path());
    waitForFrames(dir / "hasty");
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    kill(hasty, SIGINT);
    for (int i = 0;
         i < 200 && test::readFile(dir / "spawn.err").find("stopping") == std::string::npos; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_NE(test::readFile(dir / "spawn.err").find("stopping"), std::string::npos);
    kill(hasty, SIGINT);
    EXPECT_EQ(test::waitExit(hasty, 5000), 128 + SIGINT) << test::readFile(dir / "spawn.err");
}

TEST(AgentRun, RunsNeverShareADirectory)
{
    TempDir dir;
    test::writeFile(dir / "c.yaml", config("{frames: 3, pacing: none}", task("shapes", "{}")));
    ASSERT_EQ(runJetagent({"run", "-c", "c.yaml"}, dir.path()).exitCode, 0);
    ASSERT_EQ(runJetagent({"run", "-c", "c.yaml"}, dir.path()).exitCode, 0);
    size_t runs = 0;
    for (const auto& e : fs::directory_iterator(dir / "logs"))
        runs += e.is_directory();
    EXPECT_EQ(runs, 2u);
}

TEST(AgentRun, DurationLimitAndLogDirOverride)
{
    TempDir dir;
    test::writeFile(dir / "c.yaml", config("{frames: 0}", task("shapes", "{}")));
    auto r = runJetagent(
        {"run", "-c", "c.yaml", "--duration", "1", "--log-dir", "elsewhere"}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto files = test::checkRun(test::onlyRunDirectory(dir / "elsewhere"), "shapes");
    const auto& s = files.summary;
    EXPECT_EQ(s["run"]["stop_reason"], "duration reached");
    // The source is paced: one second at 30 fps is 30 frames captured, whatever inference costs.
    const auto captured = s["source"]["frames_captured"].get<size_t>();
    EXPECT_NEAR(static_cast<double>(captured), 30.0, 2.0);
    // Each captured frame was either processed (and logged) or dropped for a newer one.
    const auto& frames = s["tasks"][0]["frames"];
    EXPECT_EQ(frames["processed"].get<size_t>() + frames["dropped"].get<size_t>(), captured);
    EXPECT_EQ(files.csvRecords, frames["processed"].get<size_t>());
}

} // namespace
} // namespace jetagent

namespace jetagent {
namespace {

TEST(AgentRun, OutputRecordsTheAnnotatedStream)
{
    TempDir dir;
    test::writeFile(dir / "c.yaml", config("{frames: 15}", task("shapes", "{threads: 0}")));
    auto r = test::runJetagent(
        {"run", "-c", "c.yaml", "--as-fast-as-possible", "--output", "file://annotated.mp4"},
        dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("view      recording annotated.mp4: 0 frames shown, 15 recorded, 0 "
                         "skipped"),
        std::string::npos)
        << r.out;
    cv::VideoCapture back(dir / "annotated.mp4", cv::CAP_FFMPEG);
    ASSERT_TRUE(back.isOpened());
    EXPECT_EQ(static_cast<int>(back.get(cv::CAP_PROP_FRAME_COUNT)), 15);
    EXPECT_EQ(static_cast<int>(back.get(cv::CAP_PROP_FRAME_WIDTH)), 320);

    const auto files = test::checkRun(test::onlyRunDirectory(dir / "logs"), "shapes");
    const auto& d = files.summary["display"];
    EXPECT_EQ(d["output"], "annotated.mp4");
    EXPECT_EQ(d["frames_recorded"], 15);
    EXPECT_FALSE(files.summary["source"].contains("stats")); // not a live source

    // A second run naming the same recording is refused before anything runs; the first stays.
    const auto size = fs::file_size(dir / "annotated.mp4");
    auto again = test::runJetagent(
        {"run", "-c", "c.yaml", "--as-fast-as-possible", "--output", "file://annotated.mp4"},
        dir.path());
    EXPECT_EQ(again.exitCode, 2) << again.err;
    EXPECT_NE(again.err.find("display.output 'annotated.mp4': the file exists"), std::string::npos)
        << again.err;
    EXPECT_EQ(fs::file_size(dir / "annotated.mp4"), size);
}

TEST(AgentRun, DisplayWithoutADisplayIsAUsageErrorBeforeAnythingIsWritten)
{
    // NOLINTNEXTLINE(concurrency-mt-unsafe): tests run single-threaded here
    if (std::getenv("DISPLAY") || std::getenv("WAYLAND_DISPLAY"))
        GTEST_SKIP() << "a display is available";
    TempDir dir;
    test::writeFile(dir / "c.yaml", config("{frames: 5}", task("shapes", "{threads: 0}")));
    auto r = test::runJetagent({"run", "-c", "c.yaml", "--display"}, dir.path());
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("no display to open a window on"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "logs"));
}

TEST(SourceRedaction, HidesEveryPasswordAndNothingElse)
{
    EXPECT_EQ(withoutPasswords("rtsp://admin:Hunter2pw@10.0.0.5:554/live"),
        "rtsp://admin:***@10.0.0.5:554/live");
    EXPECT_EQ(withoutPasswords("rtsp://10.0.0.5:554/live"), "rtsp://10.0.0.5:554/live");
    EXPECT_EQ(withoutPasswords("rtsp://admin@10.0.0.5/live"), "rtsp://admin@10.0.0.5/live");
    EXPECT_EQ(withoutPasswords("rtsp://admin@10.0.0.5:554/live"), "rtsp://admin@10.0.0.5:554/live");
    // '@' after the authority is the path's or the query's, not user information.
    EXPECT_EQ(withoutPasswords("rtsp://10.0.0.5:554/a@b:c"), "rtsp://10.0.0.5:554/a@b:c");
    EXPECT_EQ(withoutPasswords("rtsp://10.0.0.5:554?user=a@b"), "rtsp://10.0.0.5:554?user=a@b");
    EXPECT_EQ(withoutPasswords("rtsp://u:pw@10.0.0.5/a@b"), "rtsp://u:***@10.0.0.5/a@b");
    // Percent-encoded passwords, and raw characters users type into them ('@', ':', '!').
    EXPECT_EQ(withoutPasswords("rtsp://u:p%40ss%2Fw@host/x"), "rtsp://u:***@host/x");
    EXPECT_EQ(withoutPasswords("rtsp://u:p@ss:w!rd@host:8554/x"), "rtsp://u:***@host:8554/x");
    EXPECT_EQ(withoutPasswords("rtsp://u:Hunter2!@host"), "rtsp://u:***@host");
    EXPECT_EQ(withoutPasswords("rtsp://u:@host/x"), "rtsp://u:***@host/x");
    // In messages and pipelines: every URI, quoted or not, and rtspsrc's own properties.
    EXPECT_EQ(withoutPasswords("'rtsp://a:x@h/1' then 'http://b:y@g'; mail me@here"),
        "'rtsp://a:***@h/1' then 'http://b:***@g'; mail me@here");
    EXPECT_EQ(withoutPasswords("rtspsrc location=\"rtsp://a:x@h/1\" ! decodebin"),
        "rtspsrc location=\"rtsp://a:***@h/1\" ! decodebin");
    EXPECT_EQ(withoutPasswords("rtspsrc location=rtsp://h/1 user-id=a user-pw=Hunter2pw ! x"),
        "rtspsrc location=rtsp://h/1 user-id=a user-pw=*** ! x");
    EXPECT_EQ(withoutPasswords("souphttpsrc proxy-pw=\"a b\" user-pw='c d'"),
        "souphttpsrc proxy-pw=*** user-pw=***");
    EXPECT_EQ(withoutPasswords("synthetic://shapes"), "synthetic://shapes");
    EXPECT_EQ(withoutPasswords(""), "");
    EXPECT_EQ(withoutPasswords("rtsp://"), "rtsp://");
    EXPECT_EQ(withoutPasswords("x://@"), "x://@");
}

// A source's password reaches no output: not the messages, the summaries or their overrides; the
// run's copy of the config keeps it (and http.token), readable by its owner only.
TEST(SourceRedaction, NoRunOutputShowsTheSourcePassword)
{
    const std::string secret = "Hunter2pw";
    const auto expectNoSecret = [&](const std::string& what, const std::string& text) {
        EXPECT_EQ(text.find(secret), std::string::npos) << what << ":\n" << text;
        EXPECT_EQ(text.find("S3cretTok3n"), std::string::npos) << what << ":\n" << text;
    };
    TempDir dir;
    // A server that is not there: the open fails, and its message names the URI without password.
    const std::string unreachable = "rtsp://admin:" + secret +
        "@127.0.0.1:" + std::to_string(test::unusedLoopbackPort()) + "/test";
    test::writeFile(dir / "c.yaml",
        "source: {uri: \"" + unreachable + "\"}\nhttp: {token: S3cretTok3n}\ntasks:\n" +
            task("shapes", "{threads: 0}") + "logging: {dir: logs, status_interval_s: 0}\n");
    auto failed = runJetagent({"run", "-c", "c.yaml", "--frames", "5"}, dir.path());
    EXPECT_EQ(failed.exitCode, 2) << failed.err;
    EXPECT_NE(failed.err.find("rtsp://admin:***@127.0.0.1:"), std::string::npos) << failed.err;
    expectNoSecret("stdout", failed.out);
    expectNoSecret("stderr", failed.err);

    // A run that succeeds, with the password in the --source pipeline (an override): the start
    // line, summary.json's source and overrides, and summary.txt show it as ***.
    const std::string pipeline = "gst://videotestsrc num-buffers=20 ! taginject "
                                 "tags=\"location=rtsp://admin:" +
        secret +
        "@127.0.0.1/test\" ! videoconvert ! video/x-raw,format=BGR,width=320,height=240 ! appsink";
    const mode_t oldMask = ::umask(022); // a umask that would let others read a plain copy
    auto r =
        runJetagent({"run", "-c", "c.yaml", "--source", pipeline, "--frames", "10"}, dir.path());
    ::umask(oldMask);
    if (r.exitCode != 0 && r.err.find("taginject") != std::string::npos)
        GTEST_SKIP() << "GStreamer's taginject (gstreamer1.0-plugins-good) is missing: " << r.err;
    ASSERT_EQ(r.exitCode, 0) << r.err;
    expectNoSecret("stdout", r.out);
    expectNoSecret("stderr", r.err);
    EXPECT_NE(r.err.find("location=rtsp://admin:***@127.0.0.1/test"), std::string::npos) << r.err;
    std::vector<fs::path> runs;
    for (const auto& entry : fs::directory_iterator(dir / "logs"))
        runs.push_back(entry.path());
    ASSERT_EQ(runs.size(), 1u);
    const std::string summaryJson = test::readFile((runs[0] / "summary.json").string());
    expectNoSecret("summary.json", summaryJson);
    expectNoSecret("summary.txt", test::readFile((runs[0] / "summary.txt").string()));
    const auto summary = nlohmann::json::parse(summaryJson);
    EXPECT_NE(summary["source"]["uri"].get<std::string>().find("rtsp://admin:***@127.0.0.1/test"),
        std::string::npos)
        << summaryJson;
    EXPECT_NE(summary["config"]["overrides"].dump().find("rtsp://admin:***@"), std::string::npos)
        << summaryJson;
    // The config's copy is the record of the run: as written, but the owner's only.
    const fs::path copy = runs[0] / "config.yaml";
    EXPECT_NE(test::readFile(copy.string()).find("S3cretTok3n"), std::string::npos);
    EXPECT_EQ(fs::status(copy).permissions() & fs::perms::all,
        fs::perms::owner_read | fs::perms::owner_write);
}

} // namespace
} // namespace jetagent
