// The jetagent binary against what months of unattended service bring: models whose scores are
// NaN, text that is not UTF-8, a full disk, memory that runs out, configs that ask for more memory
// than the machine has, and a second stop signal. Each run must end with a clear error or a
// complete, parseable summary, and never lose what was recorded.
#include <csignal>
#include <filesystem>
#include <limits>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>
#include <opencv2/imgcodecs.hpp>

#include "jetagent/hal/synthetic_shapes.h"
#include "onnx_builder.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace jetagent {
namespace {

using test::runJetagent;
using test::sourcePath;
using test::TempDir;

// A classifier of the six synthetic shapes whose every score is NaN: a global average pool, then
// a fully connected layer whose weights are NaN (as a damaged file's might be).
void writeNaNModel(const std::string& path)
{
    onnx::ModelProto model;
    model.set_ir_version(7);
    model.set_producer_name("jetagent-test");
    model.add_opset_import()->set_version(13);
    auto* graph = model.mutable_graph();
    graph->set_name("nan");
    auto tensor = [&](const std::string& name, const std::vector<int64_t>& dims, float value) {
        auto* t = graph->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto_DataType_FLOAT);
        int64_t n = 1;
        for (int64_t d : dims) {
            t->add_dims(d);
            n *= d;
        }
        for (int64_t i = 0; i < n; ++i)
            t->add_float_data(value);
    };
    tensor("w", {3, 6}, std::numeric_limits<float>::quiet_NaN());
    tensor("b", {6}, 0.0f);
    auto node = [&](const std::string& op, const std::vector<std::string>& in,
                    const std::string& out) {
        auto* n = graph->add_node();
        n->set_op_type(op);
        for (const auto& i : in)
            n->add_input(i);
        n->add_output(out);
    };
    node("GlobalAveragePool", {"input"}, "pooled");
    node("Flatten", {"pooled"}, "flat");
    node("Gemm", {"flat", "w", "b"}, "output");
    test::declareFloatTensor(graph->add_input(), "input", {1, 3, 32, 32});
    test::declareFloatTensor(graph->add_output(), "output", {1, 6});
    test::writeFile(path, model.SerializeAsString());
}

std::string demoTask(const std::string& labels)
{
    return "tasks:\n"
           "  - name: shapes\n"
           "    model: " +
        sourcePath("models/shapes_cnn.onnx") +
        "\n"
        "    labels: " +
        labels + "\n";
}

// Waits up to `timeoutMs` until the one run directory under `logDir` has a frame line in the
// shapes task's CSV log (the writer hands lines to the kernel within 0.1 s), so a run is known to
// have processed a frame whatever the emulator's speed; false on timeout.
bool waitForALoggedFrame(const fs::path& logDir, int timeoutMs)
{
    for (int waited = 0; waited < timeoutMs; waited += 10) {
        std::error_code ec;
        for (const auto& run : fs::directory_iterator(logDir, ec)) {
            const std::string csv = test::readFile(run.path() / "shapes.frames.csv");
            const size_t firstLineEnd = csv.find('\n');
            if (firstLineEnd != std::string::npos &&
                csv.find('\n', firstLineEnd + 1) != std::string::npos)
                return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

// Every line of a JSON Lines file parses; returns them.
std::vector<nlohmann::json> parseJsonLines(const std::string& path)
{
    std::vector<nlohmann::json> records;
    for (const auto& line : test::readLines(path)) {
        EXPECT_TRUE(nlohmann::json::accept(line)) << path << ": " << line;
        if (nlohmann::json::accept(line))
            records.push_back(nlohmann::json::parse(line));
    }
    return records;
}

// NaN scores used to be logged as "score":-nan (the JSON Lines then no longer parsed) and the
// frames counted as good. Now each such frame fails with its reason, the log parses, and a run
// whose every frame failed exits 1 (six frames: ten failures in a row would end it earlier).
TEST(Hardening, NonFiniteScoresFailTheFrameAndTheLogsStillParse)
{
    TempDir dir;
    writeNaNModel(dir / "nan.onnx");
    test::writeFile(dir / "c.yaml",
        "source: {uri: synthetic://shapes, width: 64, height: 48, seed: 3}\n"
        "run: {frames: 6, pacing: none}\n"
        "tasks:\n"
        "  - name: nan\n"
        "    model: nan.onnx\n"
        "    labels: " +
            sourcePath("models/shapes_labels.txt") +
            "\n"
            "    preprocess: {resize: stretch}\n"
            "logging: {dir: logs, status_interval_s: 0}\n");
    const auto r = runJetagent({"run", "-c", "c.yaml"}, dir.path());
    EXPECT_EQ(r.exitCode, 1) << r.err;
    EXPECT_NE(r.err.find("every one of its 6 frame(s) failed"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("NaN or infinite scores"), std::string::npos) << r.err;
    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto records = parseJsonLines(run + "/nan.frames.jsonl");
    ASSERT_EQ(records.size(), 6u);
    for (const auto& record : records) {
        EXPECT_FALSE(record["ok"].get<bool>()) << record;
        EXPECT_EQ(record["failure"], "non-finite output") << record;
        EXPECT_TRUE(record["top"].empty()) << record;
    }
    const auto summary = nlohmann::json::parse(test::readFile(run + "/summary.json"));
    const auto& frames = summary["tasks"][0]["frames"];
    EXPECT_EQ(frames["failed"], 6);
    EXPECT_EQ(frames["failed_non_finite"], 6);
    EXPECT_NE(
        summary["run"]["failure"].get<std::string>().find("every one of its"), std::string::npos);
}

// A Latin-1 labels file, a Latin-1 image folder and log directory: the summary writer used to
// throw (json type_error.316) and leave summary.json empty. Every string is made valid UTF-8 (each
// invalid byte becomes U+FFFD), consistently in the summary and the per-frame log.
TEST(Hardening, TextThatIsNotUtf8ReachesJsonAsValidUtf8)
{
    TempDir dir;
    const std::string images = dir / "im\xe1genes"; // "imágenes" in Latin-1
    fs::create_directories(images + "/circle");
    const ShapesRenderer shapes(64, 48, 1);
    cv::Mat image;
    for (int i = 0; i < 6; ++i) {
        shapes.render(static_cast<uint64_t>(i), image);
        ASSERT_TRUE(cv::imwrite(images + "/circle/" + std::to_string(i) + ".png", image));
    }
    // Six labels; one Latin-1 and one raw binary, the rest plain.
    test::writeFile(
        dir / "labels.txt", "circle\nsquare\ntri\xe1ngulo\ncross\nst\xff\xfe\x80r\nring\n");
    test::writeFile(dir / "c.yaml",
        "source: {uri: '" + images + "'}\nrun: {pacing: none}\n" + demoTask(dir / "labels.txt") +
            "logging: {status_interval_s: 0}\n");
    const std::string logs = dir / "logs-\xe9t\xe9";
    const auto r = runJetagent({"run", "-c", "c.yaml", "--log-dir", logs}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::string run = test::onlyRunDirectory(logs);
    const std::string text = test::readFile(run + "/summary.json");
    ASSERT_TRUE(nlohmann::json::accept(text)) << text;
    const auto summary = nlohmann::json::parse(text);
    EXPECT_EQ(summary["tasks"][0]["frames"]["processed"], 6);
    const std::string uri = summary["source"]["uri"].get<std::string>();
    EXPECT_NE(uri.find("im\xef\xbf\xbdgenes"), std::string::npos) << uri; // U+FFFD for 0xE1
    EXPECT_FALSE(test::readFile(run + "/summary.txt").empty());
    const auto records = parseJsonLines(run + "/shapes.frames.jsonl");
    EXPECT_EQ(records.size(), 6u);
}

// A disk that fills up: summary.json used to be left at 0 bytes with exit code 0. The summary is
// written whole or not at all (a temporary file, fsync, rename), and the run says it failed.
TEST(Hardening, AFullDiskLeavesNoTruncatedSummaryAndFailsTheRun)
{
    if (std::system("unshare -rm true >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "unshare -rm (a mount namespace to mount a small tmpfs in) is not allowed";
    TempDir dir;
    fs::create_directories(dir / "logs");
    test::writeFile(dir / "c.yaml",
        "source: {uri: synthetic://shapes, width: 64, height: 48}\n"
        "run: {frames: 400, pacing: none}\n" +
            demoTask(sourcePath("models/shapes_labels.txt")) +
            "logging: {dir: logs, status_interval_s: 0}\n");
    // 64 KiB: room for the run directory and some frame lines, not for 400 frames and a summary.
    // What the tmpfs held is copied out before the namespace (and the tmpfs with it) goes.
    const auto r = test::runJetagentUnder(
        "unshare -rm sh -c 'mount -t tmpfs -o size=64k tmpfs logs && \"$0\" \"$@\"; rc=$?; "
        "cp -r logs copy; exit $rc'",
        {"run", "-c", "c.yaml"}, dir.path());
    EXPECT_EQ(r.exitCode, 1) << r.err;
    EXPECT_NE(r.err.find("could not write the run's summary"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("== jetagent run summary =="), std::string::npos) << "still on stdout";
    const std::string run = test::onlyRunDirectory(dir / "copy");
    if (fs::exists(run + "/summary.json")) { // whole, or not there at all
        EXPECT_TRUE(nlohmann::json::accept(test::readFile(run + "/summary.json")));
    }
    for (const auto& entry : fs::directory_iterator(run))
        EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos)
            << "a temporary file was left: " << entry.path();
    // What was written before the disk filled is kept.
    EXPECT_GT(test::readLines(run + "/shapes.frames.csv").size(), 2u);
}

// A source of 8192x8192 frames with a FIFO of 1024 would take 200 GB: refused at start-up, naming
// the keys, instead of an allocation failing in a worker thread ("Insufficient memory", abort).
TEST(Hardening, AConfigThatNeedsMoreMemoryThanTheBudgetIsRefusedAtStartUp)
{
    TempDir dir;
    test::writeFile(dir / "c.yaml",
        "source: {uri: synthetic://shapes, width: 8192, height: 8192}\n"
        "run: {pacing: none, queue_depth: 1024}\n" +
            demoTask(sourcePath("models/shapes_labels.txt")) + "logging: {dir: logs}\n");
    auto r = runJetagent({"run", "-c", "c.yaml"}, dir.path());
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find("run.queue_depth"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("frames of 8192x8192"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("three quarters of this machine's memory"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "logs")) << "nothing ran, so no run directory";

    test::writeFile(dir / "small.yaml",
        "source: {uri: synthetic://shapes, width: 640, height: 480}\n"
        "run: {frames: 5, memory_budget_mb: 1}\n" +
            demoTask(sourcePath("models/shapes_labels.txt")));
    r = runJetagent({"run", "-c", "small.yaml"}, dir.path());
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find("more than run.memory_budget_mb (1 MiB)"), std::string::npos) << r.err;

    // A budget above the machine's memory does not let a plan that cannot fit in it start.
    test::writeFile(dir / "huge.yaml",
        "source: {uri: synthetic://shapes, width: 8192, height: 8192}\n"
        "run: {pacing: none, queue_depth: 1024, memory_budget_mb: 100000000}\n" +
            demoTask(sourcePath("models/shapes_labels.txt")) + "logging: {dir: logs}\n");
    r = runJetagent({"run", "-c", "huge.yaml"}, dir.path());
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find("more than this machine's memory"), std::string::npos) << r.err;
}

// Memory that runs out while running (here: an address-space limit smaller than one frame) used to
// abort the process from a worker thread. The thread's failure now ends the run cleanly: exit 1,
// the cause named, the summary written.
TEST(Hardening, AnAllocationThatFailsInAThreadEndsTheRunWithItsSummary)
{
    if (test::kAddressSanitizer)
        GTEST_SKIP()
            << "AddressSanitizer reserves terabytes of address space: no RLIMIT_AS under it";
    if (test::emulated())
        GTEST_SKIP()
            << "qemu-user reserves the guest's address space itself: no RLIMIT_AS under it";
    TempDir dir;
    test::writeFile(dir / "c.yaml",
        "source: {uri: synthetic://shapes, width: 8192, height: 8192}\n"
        "run: {frames: 20, pacing: none, queue_depth: 8, memory_budget_mb: 1000000}\n" +
            demoTask(sourcePath("models/shapes_labels.txt")) +
            "logging: {dir: logs, status_interval_s: 0}\n");
    // 800 MB: the process and its libraries fit, a 192 MiB frame on top of them does not.
    const auto r =
        test::runJetagentUnder("prlimit --as=800000000 --", {"run", "-c", "c.yaml"}, dir.path());
    EXPECT_EQ(r.exitCode, 1) << r.err;
    EXPECT_NE(r.err.find("Insufficient memory"), std::string::npos) << r.err;
    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto summary = nlohmann::json::parse(test::readFile(run + "/summary.json"));
    EXPECT_NE(summary["run"]["failure"].get<std::string>().find("Insufficient memory"),
        std::string::npos);
}

// A second SIGINT quits at once, as before, but with the summary of what was measured written
// first (it used to leave none).
TEST(Hardening, ASecondSignalQuitsAtOnceAfterWritingWhatWasMeasured)
{
    TempDir dir;
    test::writeFile(dir / "c.yaml",
        "source: {uri: synthetic://shapes, width: 64, height: 48}\n"
        "run: {frames: 0, pacing: none, queue_depth: 1024}\n" +
            demoTask(sourcePath("models/shapes_labels.txt")) +
            "logging: {dir: logs, status_interval_s: 0}\n");
    const int pid = test::spawnJetagent({"run", "-c", "c.yaml"}, dir.path());
    for (int i = 0;
         i < 3000 && test::readFile(dir / "spawn.err").find("running 1 task") == std::string::npos;
         ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(waitForALoggedFrame(dir / "logs", 30'000));
    std::this_thread::sleep_for(std::chrono::milliseconds(500)); // the FIFO fills
    kill(pid, SIGINT);
    for (int i = 0;
         i < 500 && test::readFile(dir / "spawn.err").find("stopping") == std::string::npos; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    kill(pid, SIGINT);
    const int exitCode = test::waitExit(pid, 10'000);
    EXPECT_EQ(exitCode, 128 + SIGINT) << test::readFile(dir / "spawn.err");
    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto summary = nlohmann::json::parse(test::readFile(run + "/summary.json"));
    EXPECT_NE(
        summary["run"]["failure"].get<std::string>().find("a second SIGINT"), std::string::npos)
        << summary["run"];
    EXPECT_GT(summary["tasks"][0]["frames"]["processed"].get<int>(), 0);
}

// Two stop signals a few milliseconds apart, on a run whose frames drain at once (a paced source
// with a shallow queue): the second comes while the first's frames finish, or after the drain while
// the logs close and the summary is written. Either way a summary is written and no temporary file
// is left (the second used to end the process in that last window, without a summary).
TEST(Hardening, ASecondSignalRightAfterTheFirstStillLeavesASummary)
{
    for (const int gapMs : {0, 5, 10, 20, 40}) {
        TempDir dir;
        test::writeFile(dir / "c.yaml",
            "source: {uri: synthetic://shapes, width: 64, height: 48}\n"
            "run: {frames: 0}\n" +
                demoTask(sourcePath("models/shapes_labels.txt")) +
                "logging: {dir: logs, status_interval_s: 0}\n");
        const int pid = test::spawnJetagent({"run", "-c", "c.yaml"}, dir.path());
        for (int i = 0; i < 3000 &&
             test::readFile(dir / "spawn.err").find("running 1 task") == std::string::npos;
             ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        // A frame is processed before the first signal (a fixed wait was too short under qemu).
        EXPECT_TRUE(waitForALoggedFrame(dir / "logs", 30'000)) << "gap " << gapMs;
        kill(pid, SIGTERM);
        std::this_thread::sleep_for(std::chrono::milliseconds(gapMs));
        kill(pid, SIGTERM);
        const int exitCode = test::waitExit(pid, 20'000);
        EXPECT_TRUE(exitCode == 0 || exitCode == 128 + SIGTERM)
            << "gap " << gapMs << " ms: exit " << exitCode << "\n"
            << test::readFile(dir / "spawn.err");
        const std::string run = test::onlyRunDirectory(dir / "logs");
        EXPECT_TRUE(fs::exists(run + "/summary.txt")) << "gap " << gapMs << " ms";
        const auto summary = nlohmann::json::parse(test::readFile(run + "/summary.json"));
        EXPECT_GT(summary["tasks"][0]["frames"]["processed"].get<int>(), 0) << "gap " << gapMs;
        for (const auto& entry : fs::directory_iterator(run))
            EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos)
                << "gap " << gapMs << " ms: a temporary file was left: " << entry.path();
    }
}

} // namespace
} // namespace jetagent
