// The jetagent binary against what months of unattended service bring: models whose scores are
// NaN, text that is not UTF-8, a full disk, memory that runs out, configs that ask for more memory
// than the machine has, and a second stop signal. Each run must end with a clear error or a
// complete, parseable summary, and never lose what was recorded.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "jetagent/hal/synthetic_shapes.h"
#include "onnx_builder.h"
#include "run_checks.h"
#include "test_image.h"
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

// A config of the demo's task over `sourceAndRun` (its source: and run: lines), logging under
// logs/ with a status line every `statusS` seconds (0: none).
std::string demoConfig(const std::string& sourceAndRun, const std::string& statusS = "0")
{
    return sourceAndRun + demoTask(sourcePath("models/shapes_labels.txt")) +
        "logging: {dir: logs, status_interval_s: " + statusS + "}\n";
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
    Image image;
    for (int i = 0; i < 6; ++i) {
        shapes.render(static_cast<uint64_t>(i), image);
        ASSERT_TRUE(
            cv::imwrite(images + "/circle/" + std::to_string(i) + ".png", test::asMat(image)));
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
        demoConfig("source: {uri: synthetic://shapes, width: 64, height: 48}\n"
                   "run: {frames: 400, pacing: none}\n"));
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
        demoConfig("source: {uri: synthetic://shapes, width: 8192, height: 8192}\n"
                   "run: {frames: 20, pacing: none, queue_depth: 8, memory_budget_mb: 1000000}\n"));
    // 800 MB: the process and its libraries fit, a 192 MiB frame on top of them does not.
    const auto r =
        test::runJetagentUnder("prlimit --as=800000000 --", {"run", "-c", "c.yaml"}, dir.path());
    EXPECT_EQ(r.exitCode, 1) << r.err;
    EXPECT_NE(r.err.find("out of memory"), std::string::npos) << r.err;
    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto summary = nlohmann::json::parse(test::readFile(run + "/summary.json"));
    EXPECT_NE(
        summary["run"]["failure"].get<std::string>().find("out of memory"), std::string::npos);
}

// A second SIGINT quits at once, as before, but with the summary of what was measured written
// first (it used to leave none).
TEST(Hardening, ASecondSignalQuitsAtOnceAfterWritingWhatWasMeasured)
{
    TempDir dir;
    test::writeFile(dir / "c.yaml",
        demoConfig("source: {uri: synthetic://shapes, width: 64, height: 48}\n"
                   "run: {frames: 0, pacing: none, queue_depth: 1024}\n"));
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
            demoConfig("source: {uri: synthetic://shapes, width: 64, height: 48}\n"
                       "run: {frames: 0}\n"));
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

// --- round two: hostile inputs (issue 38) ------------------------------------------------------

// A GET on the run's HTTP server over a plain socket: the body, "" when nothing answered.
std::string httpGet(int port, const std::string& path)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return "";
    sockaddr_in address {};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string response;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
        const std::string request =
            "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
        if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(request.size())) {
            char buffer[65536];
            ssize_t n;
            while ((n = ::recv(fd, buffer, sizeof buffer, 0)) > 0)
                response.append(buffer, static_cast<size_t>(n));
        }
    }
    ::close(fd);
    const size_t body = response.find("\r\n\r\n");
    return body == std::string::npos ? "" : response.substr(body + 4);
}

// Waits until `csv` holds a frame line (after its header); false after `timeoutMs`.
bool waitForAFrameLine(const std::string& csv, int timeoutMs)
{
    for (int waited = 0; waited < timeoutMs; waited += 10) {
        const std::string text = test::readFile(csv);
        if (std::count(text.begin(), text.end(), '\n') >= 2)
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

// A 1,000-character label once wrote past the 320-byte buffer of the status line (SIGSEGV, no
// summary), and a 240-character task name did too. Labels of 10,000 characters and a task name of
// the longest length allowed now reach every output whole: the status lines, the CSV and JSON Lines
// logs, the summary and the live view's status; and a label that a spreadsheet would take for a
// formula is quoted as text in the CSV.
TEST(Hardening, TenThousandCharacterLabelsReachEveryOutputWhole)
{
    TempDir dir;
    std::vector<std::string> labels;
    std::string labelsFile;
    for (int i = 0; i < 6; ++i) {
        labels.push_back((i == 0 ? std::string("=") : std::string(1, static_cast<char>('A' + i))) +
            std::string(9999, static_cast<char>('a' + i)));
        labelsFile += labels.back() + "\n";
    }
    test::writeFile(dir / "labels.txt", labelsFile);
    const std::string name(200, 't');
    const int port = test::unusedLoopbackPort();
    ASSERT_GT(port, 0);
    test::writeFile(dir / "c.yaml",
        "source: {uri: synthetic://shapes, width: 64, height: 48, fps: 30, seed: 4}\n"
        "run: {duration_s: 3}\n"
        "tasks:\n"
        "  - name: " +
            name + "\n    model: " + sourcePath("models/shapes_cnn.onnx") +
            "\n    labels: labels.txt\n"
            "logging: {dir: logs, status_interval_s: 0.2}\n"
            "http: {listen: \"127.0.0.1:" +
            std::to_string(port) + "\"}\n");
    const int pid = test::spawnJetagent({"run", "-c", "c.yaml"}, dir.path());
    std::string runDir;
    for (int i = 0; i < 3000 && runDir.empty(); ++i) {
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(dir / "logs", ec))
            runDir = entry.path().string();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_FALSE(runDir.empty()) << test::readFile(dir / "spawn.err");
    ASSERT_TRUE(waitForAFrameLine(runDir + "/" + name + ".frames.csv", 30'000));
    // The live view's status, once it shows the task's result (the run attaches after start-up).
    nlohmann::json live;
    for (int i = 0; i < 500; ++i) {
        const std::string status = httpGet(port, "/api/status");
        if (nlohmann::json::accept(status)) {
            live = nlohmann::json::parse(status);
            if (!live["tasks"].empty() && live["tasks"][0]["name"] == name &&
                live["tasks"][0].contains("latest") && !live["tasks"][0]["latest"].is_null())
                break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_FALSE(live["tasks"].empty()) << live.dump().substr(0, 400);
    EXPECT_EQ(live["tasks"][0]["name"], name);
    const std::string liveText = live.dump();
    EXPECT_TRUE(std::any_of(labels.begin(), labels.end(),
        [&](const std::string& l) { return liveText.find(l) != std::string::npos; }))
        << "no whole label in the live view's status: " << liveText.substr(0, 400);
    const int exitCode = test::waitExit(pid, 30'000);
    EXPECT_EQ(exitCode, 0) << test::readFile(dir / "spawn.err");

    // Status lines (the log's, on stderr): the task's name and a whole label, however long.
    const std::string err = test::readFile(dir / "spawn.err");
    bool wholeStatusLine = false;
    for (const auto& line : test::readLines(dir / "spawn.err"))
        if (line.find(name + ": frame ") != std::string::npos &&
            line.find(" | e2e ") != std::string::npos)
            wholeStatusLine = wholeStatusLine ||
                std::any_of(labels.begin(), labels.end(),
                    [&](const std::string& l) { return line.find(l) != std::string::npos; });
    EXPECT_TRUE(wholeStatusLine) << err.substr(0, 400);

    // The logs: every record whole, the formula quoted as text.
    const auto files = test::checkRun(runDir, name);
    EXPECT_GT(files.csvRecords, 10u);
    const auto records = parseJsonLines(runDir + "/" + name + ".frames.jsonl");
    ASSERT_EQ(records.size(), files.csvRecords);
    size_t formulas = 0;
    const auto csvLines = test::readLines(runDir + "/" + name + ".frames.csv");
    for (size_t i = 1; i < csvLines.size(); ++i) {
        const std::string top = records[i - 1]["top"][0]["label"].get<std::string>();
        ASSERT_EQ(top.size(), 10000u);
        EXPECT_NE(std::find(labels.begin(), labels.end(), top), labels.end());
        if (top == labels[0]) {
            ++formulas;
            EXPECT_NE(csvLines[i].find(",\"'" + labels[0] + "\","), std::string::npos);
        } else {
            EXPECT_NE(csvLines[i].find("," + top + ","), std::string::npos);
        }
        EXPECT_EQ(csvLines[i].find(",=", 0), std::string::npos) << "an unquoted formula";
    }
    // The summary names the task whole.
    EXPECT_NE(test::readFile(runDir + "/summary.txt").find("task " + name), std::string::npos);
    EXPECT_EQ(files.summary["tasks"][0]["name"], name);
    (void)formulas; // which classes the model saw depends on the seed; each was checked above
}

// A task name longer than log files' names can take is refused at its line.
TEST(Hardening, ATaskNameTooLongForAFileNameIsRefusedAtItsLine)
{
    TempDir dir;
    test::writeFile(dir / "c.yaml",
        "source: {uri: synthetic://shapes, width: 64, height: 48}\n"
        "run: {frames: 2}\n"
        "tasks:\n"
        "  - name: " +
            std::string(10000, 't') + "\n    model: " + sourcePath("models/shapes_cnn.onnx") +
            "\n    labels: " + sourcePath("models/shapes_labels.txt") + "\n");
    const auto r = runJetagent({"run", "-c", "c.yaml"}, dir.path());
    EXPECT_EQ(r.exitCode, 2) << r.err.substr(0, 400);
    EXPECT_NE(r.err.find("tasks[0].name"), std::string::npos) << r.err.substr(0, 400);
    EXPECT_NE(r.err.find("at most 200"), std::string::npos) << r.err.substr(0, 400);
    EXPECT_LT(r.err.size(), 2000u) << "the error repeats the whole name";
}

// A supervisor that starts jetagent with stdin, stdout and stderr closed: the descriptors the run
// opens first used to take numbers 0-2, so log text went into the stop signals' pipe (the run
// ended at once) and status lines into a frame log. Now they are opened on /dev/null first.
TEST(Hardening, ClosedStandardDescriptorsDoNotMixLogsIntoTheRun)
{
    TempDir dir;
    test::writeFile(dir / "c.yaml",
        demoConfig("source: {uri: synthetic://shapes, width: 64, height: 48, fps: 60}\n"
                   "run: {frames: 30}\n",
            "0.1"));
    const auto r = test::runJetagentUnder(
        "bash -c 'exec \"$@\" <&- >&- 2>&-' bash", {"run", "-c", "c.yaml"}, dir.path());
    EXPECT_EQ(r.exitCode, 0);
    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto files = test::checkRun(run, "shapes");
    EXPECT_EQ(files.summary["run"]["stop_reason"], "frame limit reached");
    // Every frame captured is logged, or counted as dropped where a slow worker (qemu, a
    // sanitizer build) let the paced queue drop it.
    const auto& frames = files.summary["tasks"][0]["frames"];
    EXPECT_GT(frames["processed"].get<size_t>(), 0u) << frames;
    EXPECT_EQ(frames["processed"].get<size_t>() + frames["dropped"].get<size_t>(), 30u) << frames;
    EXPECT_EQ(files.csvRecords, frames["processed"].get<size_t>());
}

// `jetagent run ... | head` used to die of SIGPIPE when head exited: exit 141, a CSV of its header
// only, no summary. A closed console is no reason to stop measuring: the run goes on, and its logs
// and summary are whole.
TEST(Hardening, AConsoleClosedUnderTheRunLosesNothing)
{
    TempDir dir;
    test::writeFile(dir / "c.yaml",
        demoConfig("source: {uri: synthetic://shapes, width: 64, height: 48, fps: 60}\n"
                   "run: {frames: 90}\n",
            "0.1"));
    const auto r =
        test::runJetagentUnder("bash -c '\"$@\" 2>&1 | head -n 2; exit \"${PIPESTATUS[0]}\"' bash",
            {"run", "-c", "c.yaml"}, dir.path());
    EXPECT_EQ(r.exitCode, 0) << r.out;
    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto files = test::checkRun(run, "shapes");
    // Every frame captured is logged, or counted as dropped where a slow worker (a sanitizer
    // build) let the paced queue drop it.
    const auto& frames = files.summary["tasks"][0]["frames"];
    EXPECT_EQ(frames["processed"].get<size_t>() + frames["dropped"].get<size_t>(), 90u) << frames;
    EXPECT_EQ(files.csvRecords, frames["processed"].get<size_t>());
    EXPECT_TRUE(fs::exists(run + "/summary.txt"));
}

// A frame that cannot be preprocessed (a 1x20000 image, whose shorter side to 64 would be 1.28
// million pixels long) used to leave the previous frame's record in its place: the CSV held frame 0
// twice, frame 1 not at all, and the summary said 0 failed. Now the frame has its own record, not
// ok, with its reason; it counts as failed and is never scored.
TEST(Hardening, AFrameThatFailsPreprocessingHasItsOwnFailedRecord)
{
    TempDir dir;
    fs::create_directories(dir / "images");
    cv::Mat good(48, 64, CV_8UC3, cv::Scalar(40, 80, 120));
    cv::circle(good, {32, 24}, 15, cv::Scalar(0, 0, 255), -1);
    ASSERT_TRUE(cv::imwrite(dir / "images/a.jpg", good));
    ASSERT_TRUE(cv::imwrite(dir / "images/b.png", cv::Mat(1, 20000, CV_8UC3, cv::Scalar(1, 2, 3))));
    ASSERT_TRUE(cv::imwrite(dir / "images/c.jpg", good));
    test::writeFile(dir / "c.yaml",
        "source: {uri: images/}\n"
        "run: {pacing: none}\n"
        "tasks:\n"
        "  - name: shapes\n"
        "    model: " +
            sourcePath("models/shapes_cnn.onnx") +
            "\n    labels: " + sourcePath("models/shapes_labels.txt") +
            "\n    preprocess: {resize: shorter_side, resize_size: 64, crop: 64}\n"
            "logging: {dir: logs, status_interval_s: 0}\n");
    const auto r = runJetagent({"run", "-c", "c.yaml"}, dir.path());
    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto records = parseJsonLines(run + "/shapes.frames.jsonl");
    ASSERT_EQ(records.size(), 3u) << r.err;
    for (size_t i = 0; i < 3; ++i)
        EXPECT_EQ(records[i]["frame"], i) << records[i];
    EXPECT_TRUE(records[0]["ok"].get<bool>());
    EXPECT_FALSE(records[1]["ok"].get<bool>()) << records[1];
    EXPECT_EQ(records[1]["failure"], "preprocessing error") << records[1];
    EXPECT_TRUE(records[1]["top"].empty()) << records[1];
    EXPECT_NE(records[1]["capture_ns"], records[0]["capture_ns"]);
    EXPECT_TRUE(records[2]["ok"].get<bool>());
    const auto summary = nlohmann::json::parse(test::readFile(run + "/summary.json"));
    EXPECT_EQ(summary["tasks"][0]["frames"]["failed"], 1) << summary["tasks"][0]["frames"];
    EXPECT_NE(r.err.find("frame 1"), std::string::npos) << r.err;
}

// The other signals whose default action ends the process (SIGQUIT from Ctrl-\, SIGXCPU at a
// CPU-time limit, a stray SIGUSR1) used to end it without a summary. They stop the run as SIGTERM
// does: the frames in flight finish, the logs and the summary are written, exit 0.
TEST(Hardening, OtherStopSignalsLeaveASummary)
{
    for (const int sig : {SIGQUIT, SIGXCPU, SIGUSR1, SIGALRM}) {
        TempDir dir;
        test::writeFile(dir / "c.yaml",
            demoConfig("source: {uri: synthetic://shapes, width: 64, height: 48, fps: 60}\n"
                       "run: {frames: 0}\n"));
        const int pid = test::spawnJetagent({"run", "-c", "c.yaml"}, dir.path());
        ASSERT_TRUE(waitForALoggedFrame(dir / "logs", 30'000)) << strsignal(sig);
        ::kill(pid, sig);
        EXPECT_EQ(test::waitExit(pid, 30'000), 0) << strsignal(sig) << "\n"
                                                  << test::readFile(dir / "spawn.err");
        const std::string run = test::onlyRunDirectory(dir / "logs");
        const auto files = test::checkRun(run, "shapes");
        EXPECT_GT(files.csvRecords, 0u) << strsignal(sig);
        EXPECT_EQ(files.summary["run"]["stop_reason"].get<std::string>().rfind("signal SIG", 0), 0u)
            << files.summary["run"];
    }
}

// A file-size limit (`ulimit -f`, systemd's LimitFSIZE=) used to end the run by SIGXFSZ: exit 153,
// no summary, a JSON line torn at the limit. Now a write past it fails as on a full disk: the lines
// are dropped and counted, every line written is whole, and the summary is written. 600 frames'
// JSON lines are about 150 kB, three times the limit.
TEST(Hardening, AFileSizeLimitIsHandledAsAFullDisk)
{
    TempDir dir;
    test::writeFile(dir / "c.yaml",
        demoConfig("source: {uri: synthetic://shapes, width: 64, height: 48}\n"
                   "run: {frames: 600, pacing: none}\n"));
    const auto r =
        test::runJetagentUnder("prlimit --fsize=51200 --", {"run", "-c", "c.yaml"}, dir.path());
    EXPECT_TRUE(r.exitCode == 0 || r.exitCode == 1) << r.exitCode << "\n" << r.err;
    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto summary = nlohmann::json::parse(test::readFile(run + "/summary.json"));
    EXPECT_EQ(summary["tasks"][0]["frames"]["processed"], 600) << summary["tasks"][0];
    EXPECT_GT(summary["tasks"][0]["log"]["lines_dropped_disk"].get<long long>(), 0)
        << summary["tasks"][0]["log"];
    const auto records = parseJsonLines(run + "/shapes.frames.jsonl");
    EXPECT_GT(records.size(), 10u);
    EXPECT_LE(fs::file_size(run + "/shapes.frames.jsonl"), 51200u);
}

// A process stopped for a while (SIGSTOP, a debugger, a suspended VM) measured nothing meanwhile:
// the summary says so, as a gap in capture with its length, instead of passing over it.
TEST(Hardening, AStoppedProcessShowsAsACaptureGapInTheSummary)
{
    TempDir dir;
    test::writeFile(dir / "c.yaml",
        demoConfig("source: {uri: synthetic://shapes, width: 64, height: 48, fps: 30}\n"
                   "run: {duration_s: 4}\n"));
    const int pid = test::spawnJetagent({"run", "-c", "c.yaml"}, dir.path());
    ASSERT_TRUE(waitForALoggedFrame(dir / "logs", 30'000));
    ::kill(pid, SIGSTOP);
    std::this_thread::sleep_for(std::chrono::milliseconds(1800));
    ::kill(pid, SIGCONT);
    EXPECT_EQ(test::waitExit(pid, 30'000), 0) << test::readFile(dir / "spawn.err");
    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto summary = nlohmann::json::parse(test::readFile(run + "/summary.json"));
    const auto& gaps = summary["source"]["capture_gaps"];
    EXPECT_GE(gaps["count"].get<int>(), 1) << gaps;
    EXPECT_GE(gaps["longest_s"].get<double>(), 1.7) << gaps;
    EXPECT_NE(test::readFile(run + "/summary.txt").find("gap(s) in capture"), std::string::npos);
}

} // namespace
} // namespace jetagent
