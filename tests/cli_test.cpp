// The command line as users meet it: help texts, exit codes, and error messages. The table of
// exit codes in docs/running.md has a test here for each row (or in compare_test, power_e2e_test
// and service_e2e_test, named beside the row's test below).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <sys/stat.h>
#include <sys/wait.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "jetagent/base/plugin.h"
#include "jetagent/engines/engine.h"
#include "onnx_builder.h"
#include "test_support.h"

namespace jetagent {
namespace {

using test::runJetagent;
using test::sourcePath;
using test::TempDir;
namespace fs = std::filesystem;

bool has(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

// A config running the demo model on `source` with the given extra YAML appended to the task.
std::string demoConfig(const std::string& source,
    const std::string& model = sourcePath("models/shapes_cnn.onnx"),
    const std::string& engineLine = "")
{
    return "source: {uri: '" + source +
        "'}\n"
        "run: {frames: 20, pacing: none}\n"
        "tasks:\n"
        "  - model: " +
        model +
        "\n"
        "    labels: " +
        sourcePath("models/shapes_labels.txt") +
        "\n"
        "    preprocess: {resize: stretch, interpolation: area}\n" +
        engineLine + "logging: {dir: logs, status_interval_s: 0}\n";
}

TEST(Cli, HelpTeachesCommandsExamplesAndExitCodes)
{
    TempDir dir;
    auto r = runJetagent({"--help"}, dir.path());
    EXPECT_EQ(r.exitCode, 0);
    for (const char* part :
        {"run", "bench", "inspect", "capture", "backends", "version", "Examples:", "Exit codes"})
        EXPECT_TRUE(has(r.out, part)) << part << " missing from:\n" << r.out;

    auto run = runJetagent({"run", "--help"}, dir.path());
    EXPECT_EQ(run.exitCode, 0);
    for (const char* part :
        {"--config", "--source", "--frames", "--duration", "--log-dir", "--as-fast-as-possible",
            "synthetic://shapes", "file://PATH", "summary.json", "Exit codes"})
        EXPECT_TRUE(has(run.out, part)) << part << " missing from run --help:\n" << run.out;

    auto flag = runJetagent({"--version"}, dir.path());
    EXPECT_EQ(flag.exitCode, 0);
    EXPECT_EQ(flag.out.rfind("0.", 0), 0u) << flag.out;
    auto none = runJetagent({}, dir.path());
    EXPECT_EQ(none.exitCode, 2);
    EXPECT_TRUE(has(none.err, "a command is required")) << none.err;

    auto version = runJetagent({"version"}, dir.path());
    EXPECT_EQ(version.exitCode, 0);
    EXPECT_TRUE(has(version.out, "OpenCV")) << version.out;
    EXPECT_TRUE(has(version.out, "opencv")) << version.out;
}

TEST(Cli, UsageErrorsExitWithTwo)
{
    TempDir dir;
    EXPECT_EQ(runJetagent({}, dir.path()).exitCode, 2);
    EXPECT_EQ(runJetagent({"fly"}, dir.path()).exitCode, 2);
    EXPECT_EQ(runJetagent({"run"}, dir.path()).exitCode, 2); // --config is required
    EXPECT_EQ(runJetagent({"run", "-c", "x.yaml", "--frames", "-3"}, dir.path()).exitCode, 2);
    auto missing = runJetagent({"run", "--config", "absent.yaml"}, dir.path());
    EXPECT_EQ(missing.exitCode, 2);
    EXPECT_TRUE(has(missing.err, "config file 'absent.yaml' does not exist")) << missing.err;
    // An empty --serve used to run without a server and without a word.
    auto serve = runJetagent({"run", "-c", "x.yaml", "--serve", ""}, dir.path());
    EXPECT_EQ(serve.exitCode, 2);
    EXPECT_TRUE(has(serve.err, "--serve")) << serve.err;
    EXPECT_TRUE(has(serve.err, "an address is needed")) << serve.err;
    // So did a --duration too small to be anything but "no limit".
    auto tiny = runJetagent({"run", "-c", "x.yaml", "--duration", "1e-300"}, dir.path());
    EXPECT_EQ(tiny.exitCode, 2);
    EXPECT_TRUE(has(tiny.err, "0 (no limit) or from 0.001")) << tiny.err;
}

// CLI11 2.1 reads integers in base 0 without a range check: --frames 18446744073709551616 became
// 18446744073709551615 (a run without end), -1 wrapped as far, 010 was octal. Each integer
// option takes decimal digits within its range; anything else is a usage error naming both.
TEST(Cli, IntegerOptionsOutOfRangeAreUsageErrorsNamingTheRange)
{
    TempDir dir;
    const std::string counts = "must be a whole number from 0 to 9223372036854775807";
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"run", "-c", "x.yaml", "--frames", "18446744073709551616"},
            "--frames: " + counts + " (got 18446744073709551616)"},
        {{"run", "-c", "x.yaml", "--frames", "9223372036854775808"},
            "--frames: " + counts + " (got 9223372036854775808)"},
        {{"run", "-c", "x.yaml", "-n", "0x10"}, "--frames: " + counts + " (got 0x10)"},
        {{"run", "-c", "x.yaml", "-n", "1e3"}, "--frames: " + counts + " (got 1e3)"},
        {{"capture", "--out", "o", "--frames", "-1"}, "--frames: " + counts + " (got -1)"},
        {{"capture", "--out", "o", "--seed", "99999999999999999999"},
            "--seed: " + counts + " (got 99999999999999999999)"},
        {{"capture", "--out", "o", "--width", "4294967312"},
            "--width: must be a whole number from 16 to 8192 (got 4294967312)"},
        {{"compare", "m.onnx", "--frames", "0"},
            "--frames: must be a whole number from 1 to 1000000 (got 0)"},
    };
    for (const auto& [args, expected] : cases) {
        auto r = runJetagent(args, dir.path());
        EXPECT_EQ(r.exitCode, 2) << args.back() << ": " << r.err;
        EXPECT_TRUE(has(r.err, expected)) << args.back() << ": " << r.err;
    }
    // Leading zeros are decimal: 010 frames are ten.
    test::writeFile(dir / "c.yaml", demoConfig("synthetic://shapes"));
    auto ten = runJetagent({"run", "-c", "c.yaml", "--frames", "010"}, dir.path());
    ASSERT_EQ(ten.exitCode, 0) << ten.err;
    const auto summary = nlohmann::json::parse(
        test::readFile(test::onlyRunDirectory(dir / "logs") + "/summary.json"));
    EXPECT_EQ(summary["tasks"][0]["frames"]["processed"], 10) << summary["tasks"][0].dump(1);
}

// Configs as `jetagent run` reads them: aliases nested ten by ten, nine deep, took 37 s before
// being refused; a rate of 1e-300 fps ran unpaced. Both are refused at once, at their line.
TEST(Cli, AConfigWithNestedAliasesOrATinyRateIsRefusedAtItsLine)
{
    TempDir dir;
    std::string laughs = "tasks:\n  - model: m.onnx\na0: &a0 [lol, lol, lol, lol, lol, lol, lol, "
                         "lol, lol, lol]\n";
    for (int level = 1; level < 9; ++level) {
        const std::string alias = "*a" + std::to_string(level - 1);
        laughs += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [" + alias;
        for (int i = 1; i < 10; ++i)
            laughs += ", " + alias;
        laughs += "]\n";
    }
    test::writeFile(dir / "laughs.yaml", laughs);
    const auto start = std::chrono::steady_clock::now();
    auto r = runJetagent({"run", "-c", "laughs.yaml", "--frames", "1"}, dir.path());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_TRUE(has(r.err, "laughs.yaml:3:5: YAML anchor '&a0': anchors and aliases")) << r.err;
    EXPECT_LT(seconds, 5.0); // the whole process; the refusal itself takes microseconds

    test::writeFile(dir / "slow.yaml",
        "source: {uri: synthetic://shapes, fps: 1e-300}\n" +
            demoConfig("synthetic://shapes")
                .substr(demoConfig("synthetic://shapes").find('\n') + 1));
    r = runJetagent({"run", "-c", "slow.yaml"}, dir.path());
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_TRUE(has(r.err,
        "slow.yaml:1:40: source.fps: must be 0 (the source's own rate) or from "
        "0.01 to 1000 (got 1e-300)"))
        << r.err;
}

// A labels file saved with a UTF-8 byte-order mark: its first class is still matched to the
// source's, so every frame of the synthetic shapes (whose classes it names) is scored.
TEST(Cli, ALabelsFileWithAByteOrderMarkScoresItsFirstClass)
{
    TempDir dir;
    test::writeFile(dir / "labels.txt",
        "\xEF\xBB\xBF" + test::readFile(sourcePath("models/shapes_labels.txt")));
    std::string config = demoConfig("synthetic://shapes");
    const std::string labels = sourcePath("models/shapes_labels.txt");
    config.replace(config.find(labels), labels.size(), dir / "labels.txt");
    test::writeFile(dir / "c.yaml", config);
    auto r = runJetagent({"run", "-c", "c.yaml", "--frames", "30"}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto summary = nlohmann::json::parse(
        test::readFile(test::onlyRunDirectory(dir / "logs") + "/summary.json"));
    const auto& accuracy = summary["tasks"][0]["accuracy"];
    ASSERT_TRUE(accuracy.is_object()) << summary.dump(1);
    EXPECT_EQ(accuracy["scored"], 30) << accuracy.dump();
}

TEST(Cli, ProbeGpioNamesAMissingChipAndExitsWithTwo)
{
    TempDir dir;
    auto absent = runJetagent({"probe", "gpio", "--chip", "gpiochip-jetagent-absent"}, dir.path());
    EXPECT_EQ(absent.exitCode, 2);
    EXPECT_TRUE(has(absent.out, "GPIO chip 'gpiochip-jetagent-absent' not found")) << absent.out;
    // Without a chip named, listing what is there (maybe nothing) succeeds.
    EXPECT_EQ(runJetagent({"probe", "gpio"}, dir.path()).exitCode, 0);
}

TEST(Cli, ConfigErrorsNameFileLineAndKey)
{
    TempDir dir;
    test::writeFile(dir / "bad.yaml",
        "source:\n  uri: synthetic://shapes\n  widht: 640\ntasks:\n  - model: m.onnx\n");
    auto r = runJetagent({"run", "-c", "bad.yaml"}, dir.path());
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_TRUE(has(r.err, "bad.yaml:3:3: source.widht: unknown key (did you mean 'width'?)"))
        << r.err;
}

TEST(Cli, MissingOrCorruptModelIsAClearErrorWithExitTwo)
{
    TempDir dir;
    test::writeFile(dir / "missing.yaml", demoConfig("synthetic://shapes", dir / "gone.onnx"));
    auto missing = runJetagent({"run", "-c", "missing.yaml"}, dir.path());
    EXPECT_EQ(missing.exitCode, 2);
    EXPECT_TRUE(has(missing.err,
        "missing.yaml:4: tasks[0].model: model file '" + (dir / "gone.onnx") + "' does not exist"))
        << missing.err;

    const std::string model = test::readFile(sourcePath("models/shapes_cnn.onnx"));
    test::writeFile(dir / "cut.onnx", model.substr(0, model.size() - 1000));
    test::writeFile(dir / "corrupt.yaml", demoConfig("synthetic://shapes", dir / "cut.onnx"));
    auto corrupt = runJetagent({"run", "-c", "corrupt.yaml"}, dir.path());
    EXPECT_EQ(corrupt.exitCode, 2);
    EXPECT_TRUE(has(corrupt.err,
        "tasks[0].model: model file '" + (dir / "cut.onnx") + "' is not a valid ONNX model"))
        << corrupt.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "logs"))
        << "nothing is written for a run that cannot start";
}

TEST(Cli, BadSourcesAndEnginesExitWithTwo)
{
    TempDir dir;
    test::writeFile(dir / "c.yaml", demoConfig("synthetic://shapes"));
    auto source =
        runJetagent({"run", "-c", "c.yaml", "--source", "file://nowhere.mp4"}, dir.path());
    EXPECT_EQ(source.exitCode, 2);
    EXPECT_TRUE(has(source.err, "--source (source.uri): video file 'nowhere.mp4' does not exist"))
        << source.err;

    test::writeFile(dir / "trt.yaml",
        demoConfig("synthetic://shapes", sourcePath("models/shapes_cnn.onnx"),
            "    engine: {backend: tensorrt}\n"));
    auto trt = runJetagent({"run", "-c", "trt.yaml"}, dir.path());
    EXPECT_EQ(trt.exitCode, 2);
    EXPECT_TRUE(has(trt.err, "engine backend 'tensorrt' is not available")) << trt.err;
}

// The OpenCV backend lives in a plugin: missing, not a shared object, another plugin under its
// name, or one built for another ABI, a run that asks for it exits 2 naming what is wrong and what
// to install; with the build's own plugins it runs.
TEST(Cli, PluginsMissingForeignOrOfAnotherBuildAreUsageErrorsNamingThePackage)
{
    namespace fs = std::filesystem;
    TempDir dir;
    test::writeFile(dir / "cv.yaml",
        demoConfig("synthetic://shapes", sourcePath("models/shapes_cnn.onnx"),
            "    engine: {backend: opencv}\n"));
    auto runWith = [&](const std::string& pluginDir) {
        return test::runJetagentUnder("env JETAGENT_PLUGIN_DIR=" + pluginDir,
            {"run", "-c", "cv.yaml", "--frames", "3", "--as-fast-as-possible", "-o", "logs"},
            dir.path());
    };
    const std::string file = "jetagent-opencv-dnn.so";

    fs::create_directories(dir / "none");
    auto missing = runWith(dir / "none");
    EXPECT_EQ(missing.exitCode, 2) << missing.err;
    EXPECT_TRUE(has(missing.err, "engine backend 'opencv' is not available: plugin 'opencv-dnn'"))
        << missing.err;
    EXPECT_TRUE(has(missing.err, (dir / "none") + "/" + file + " does not exist")) << missing.err;
    EXPECT_TRUE(has(missing.err, "Install the jetagent-opencv package")) << missing.err;

    fs::create_directories(dir / "text");
    test::writeFile(fs::path(dir / "text") / file, "not a shared object\n");
    auto text = runWith(dir / "text");
    EXPECT_EQ(text.exitCode, 2) << text.err;
    EXPECT_TRUE(has(text.err, "cannot be loaded from " + (dir / "text") + "/" + file)) << text.err;

    fs::create_directories(dir / "foreign");
    fs::copy_file(std::string(JETAGENT_TEST_PLUGIN_BUILD_DIR) + "/jetagent-viewer.so",
        fs::path(dir / "foreign") / file);
    auto foreign = runWith(dir / "foreign");
    EXPECT_EQ(foreign.exitCode, 2) << foreign.err;
    EXPECT_TRUE(has(foreign.err, "is not the jetagent plugin 'opencv-dnn'")) << foreign.err;

    fs::create_directories(dir / "abi");
    fs::copy_file(JETAGENT_TEST_WRONG_ABI_PLUGIN, fs::path(dir / "abi") / file);
    auto abi = runWith(dir / "abi");
    EXPECT_EQ(abi.exitCode, 2) << abi.err;
    EXPECT_TRUE(has(abi.err,
        "was built for ABI " + std::to_string(kPluginAbi + 998) +
            ", jetagent 0.0.0-test, not this jetagent"))
        << abi.err;
    EXPECT_FALSE(fs::exists(dir / "logs")) << "nothing is written for a run that cannot start";

    auto works = runWith(JETAGENT_TEST_PLUGIN_BUILD_DIR);
    EXPECT_EQ(works.exitCode, 0) << works.err;
    auto listed = test::runJetagentUnder(
        "env JETAGENT_PLUGIN_DIR=" + (dir / "none"), {"backends"}, dir.path());
    EXPECT_EQ(listed.exitCode, 0);
    EXPECT_TRUE(has(listed.out, "opencv-dnn not installed")) << listed.out;
    EXPECT_TRUE(has(listed.out, "install the jetagent-opencv package")) << listed.out;
}

// GStreamer is a plugin of the core package (jetagent-gstreamer.so): a run from a generated source
// needs no plugin at all, and a run that asks for a GStreamer source or output without it is a
// usage error naming the package, before anything is written.
TEST(Cli, WithoutTheGStreamerPluginOnlyItsSourcesAndOutputsAreRefused)
{
    namespace fs = std::filesystem;
    TempDir dir;
    // Every plugin but GStreamer's away: the CPU engine's is there.
    fs::create_directories(dir / "none");
    fs::copy_file(std::string(JETAGENT_TEST_PLUGIN_BUILD_DIR) + "/jetagent-xnnpack.so",
        fs::path(dir / "none") / "jetagent-xnnpack.so");
    test::writeFile(
        dir / "c.yaml", demoConfig("synthetic://shapes", sourcePath("models/shapes_cnn.onnx"), ""));
    auto runWith = [&](const std::vector<std::string>& extra) {
        std::vector<std::string> args = {
            "run", "-c", "c.yaml", "--frames", "3", "--as-fast-as-possible", "-o", "logs"};
        args.insert(args.end(), extra.begin(), extra.end());
        return test::runJetagentUnder(
            "env JETAGENT_PLUGIN_DIR=" + (dir / "none"), args, dir.path());
    };
    auto plain = runWith({});
    EXPECT_EQ(plain.exitCode, 0) << plain.err;
    fs::remove_all(dir / "logs");

    const std::string missing = (dir / "none") + "/jetagent-gstreamer.so does not exist";
    for (const std::vector<std::string>& extra :
        std::vector<std::vector<std::string>> {{"-s", "rtsp://127.0.0.1:9/stream"},
            {"-s", "gst://videotestsrc ! videoconvert ! video/x-raw,format=BGR ! appsink"},
            {"--output", "rtp://127.0.0.1:5004"}}) {
        auto r = runWith(extra);
        EXPECT_EQ(r.exitCode, 2) << extra[1] << "\n" << r.err;
        EXPECT_TRUE(has(r.err, "plugin 'gstreamer'")) << r.err;
        EXPECT_TRUE(has(r.err, missing)) << r.err;
        EXPECT_TRUE(has(r.err, "Install the jetagent package")) << r.err;
        EXPECT_FALSE(fs::exists(dir / "logs")) << extra[1] << ": nothing is written";
    }
}

// The CPU engine is a plugin of the core package too: without it, a run with backend auto is a
// usage error naming it and the package, not a silent switch to another backend; `power` and the
// other commands that build no engine never need it.
TEST(Cli, WithoutTheCpuEnginePluginARunNamesItAndPowerStillWorks)
{
    namespace fs = std::filesystem;
    TempDir dir;
    fs::create_directories(dir / "none");
    test::writeFile(
        dir / "c.yaml", demoConfig("synthetic://shapes", sourcePath("models/shapes_cnn.onnx"), ""));
    const std::string env = "env JETAGENT_PLUGIN_DIR=" + (dir / "none");
    auto run = test::runJetagentUnder(
        env, {"run", "-c", "c.yaml", "--frames", "3", "-o", "logs"}, dir.path());
    EXPECT_EQ(run.exitCode, 2) << run.err;
    EXPECT_TRUE(has(run.err, "plugin 'xnnpack'")) << run.err;
    EXPECT_TRUE(has(run.err, (dir / "none") + "/jetagent-xnnpack.so does not exist")) << run.err;
    EXPECT_TRUE(has(run.err, "Install the jetagent package")) << run.err;
    EXPECT_FALSE(fs::exists(dir / "logs")) << "nothing is written for a run that cannot start";
    auto power =
        test::runJetagentUnder(env, {"power", "--fixture", "orin-nano-jp6", "--list"}, dir.path());
    EXPECT_EQ(power.exitCode, 0) << power.err;
}

TEST(Cli, FailureWhileRunningExitsWithOneAndKeepsTheSummary)
{
    // Files that exist but decode to nothing: the source opens, then fails on its first read.
    TempDir dir;
    std::filesystem::create_directories(dir / "images");
    test::writeFile(dir / "images/a.png", "not an image");
    test::writeFile(dir / "c.yaml", demoConfig(dir / "images"));
    auto r = runJetagent({"run", "-c", "c.yaml"}, dir.path());
    EXPECT_EQ(r.exitCode, 1) << r.err;
    EXPECT_TRUE(has(r.err, "the run failed: ")) << r.err;
    EXPECT_TRUE(has(r.out, "FAILURE")) << r.out;
    const std::string run = test::onlyRunDirectory(dir / "logs");
    EXPECT_TRUE(std::filesystem::exists(run + "/summary.json"));
}

TEST(Cli, CaptureWritesAnImageFolderAndRefusesToOverwrite)
{
    TempDir dir;
    auto r = runJetagent(
        {"capture", "--source", "synthetic://shapes", "--frames", "12", "--out", "frames"},
        dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    size_t files = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir / "frames"))
        files += e.is_regular_file();
    EXPECT_EQ(files, 12u);
    EXPECT_TRUE(std::filesystem::is_directory(dir / "frames/circle"));
    auto again = runJetagent(
        {"capture", "--source", "synthetic://shapes", "--frames", "12", "--out", "frames"},
        dir.path());
    EXPECT_EQ(again.exitCode, 2);
    EXPECT_TRUE(has(again.err, "is not empty")) << again.err;
    auto endless =
        runJetagent({"capture", "--source", "synthetic://shapes", "--out", "more"}, dir.path());
    EXPECT_EQ(endless.exitCode, 2);
}

TEST(Cli, InspectDescribesAModelInTextAndJson)
{
    TempDir dir;
    const std::string model = sourcePath("models/shapes_cnn.onnx");
    auto text = runJetagent({"inspect", model}, dir.path());
    ASSERT_EQ(text.exitCode, 0) << text.err;
    for (const char* part : {"opset 13", "input       input  float32  batch x 3 x 64 x 64",
             "output      logits float32  batch x 6", "trainable", "MACs", "Conv", "counted:"})
        EXPECT_TRUE(has(text.out, part)) << part << " missing from:\n" << text.out;

    auto json = runJetagent({"inspect", model, "--json", "--input-shape", "4x3x64x64", "--prepared",
                                "--batch", "4", "--no-cache"},
        dir.path());
    ASSERT_EQ(json.exitCode, 0) << json.err;
    const auto j = nlohmann::json::parse(json.out);
    EXPECT_EQ(j["inputs"][0]["shape"], nlohmann::json::parse(R"(["batch", 3, 64, 64])"));
    EXPECT_EQ(j["model"]["opset"], 13);
    EXPECT_GT(j["parameters"]["trainable"].get<int64_t>(), 10000);
    EXPECT_EQ(j["macs"]["input_shapes"]["input"], nlohmann::json::parse("[4, 3, 64, 64]"));
    int64_t perOp = 0;
    for (const auto& op : j["operators"])
        perOp += op["macs"].get<int64_t>();
    EXPECT_EQ(perOp, j["macs"]["total"].get<int64_t>());
    EXPECT_EQ(j["prepared"]["batch"], 4);
    EXPECT_FALSE(j["prepared"]["from_cache"].get<bool>());
    EXPECT_EQ(j["prepared"]["passes"][0]["pass"], "set-batch=4");

    // Through the cache: the second run reads what the first wrote.
    const std::string cache = dir / "cache";
    auto first = runJetagent({"inspect", model, "--prepared", "--cache-dir", cache}, dir.path());
    ASSERT_EQ(first.exitCode, 0) << first.err;
    auto second = runJetagent({"inspect", model, "--prepared", "--cache-dir", cache}, dir.path());
    ASSERT_EQ(second.exitCode, 0) << second.err;
    EXPECT_TRUE(has(second.out, "read from the cache")) << second.out;
    EXPECT_FALSE(has(first.out, "read from the cache")) << first.out;
}

// With the xnnpack backend, inspect also lists the compiled steps and the library of each.
TEST(Cli, InspectListsWhichLibraryRunsEachNodeOnXnnpack)
{
    bool xnnpack = false;
    for (const BackendInfo& b : listBackends())
        xnnpack = xnnpack || (b.name == "xnnpack" && b.available);
    if (!xnnpack)
        GTEST_SKIP() << "this build has no xnnpack backend";
    TempDir dir;
    const std::string model = sourcePath("models/shapes_cnn.onnx");
    auto text = runJetagent(
        {"inspect", model, "--prepared", "--backend", "xnnpack", "--no-cache"}, dir.path());
    ASSERT_EQ(text.exitCode, 0) << text.err;
    EXPECT_TRUE(has(text.out, "compiled    ")) << text.out;
    EXPECT_TRUE(has(text.out, " on xnnpack")) << text.out;
    // The input arrives row-major and the convolutions read channels-last: one conversion.
    EXPECT_TRUE(has(text.out, "layout of 'input' to channels-last")) << text.out;

    auto json = runJetagent(
        {"inspect", model, "--json", "--prepared", "--backend", "xnnpack", "--no-cache"},
        dir.path());
    ASSERT_EQ(json.exitCode, 0) << json.err;
    const auto j = nlohmann::json::parse(json.out);
    ASSERT_TRUE(j["prepared"].contains("steps")) << json.out;
    size_t convs = 0;
    for (const auto& step : j["prepared"]["steps"]) {
        EXPECT_TRUE(step["library"] == "xnnpack" || step["library"] == "reference" ||
            step["library"] == "onednn")
            << step;
        convs += step["op"] == "Conv" && step["library"] != "reference";
    }
    EXPECT_GE(convs, 2u) << json.out;
}

// inspect --int8 compiles a QDQ model as precision: int8 runs it, and says what each step runs
// in: the convolution between a QuantizeLinear/DequantizeLinear pair and one after it in int8,
// conversions at the float input and output; a model without Q/DQ nodes needs calibration.
TEST(Cli, InspectInt8ShowsWhichStepsOfAQdqModelRunInt8)
{
    bool xnnpack = false;
    for (const BackendInfo& b : listBackends())
        xnnpack = xnnpack || (b.name == "xnnpack" && b.available);
    if (!xnnpack)
        GTEST_SKIP() << "this build has no xnnpack backend";
    TempDir dir;
    test::GraphBuilder g;
    g.input("x", {1, 3, 8, 8});
    g.floats("s", {}, {0.05f});
    auto* w = g.model().mutable_graph()->add_initializer();
    w->set_name("w_q");
    w->set_data_type(onnx::TensorProto_DataType_INT8);
    for (int64_t d : {4, 3, 3, 3})
        w->add_dims(d);
    std::string raw;
    for (int i = 0; i < 4 * 3 * 3 * 3; ++i)
        raw.push_back(static_cast<char>(i % 7 - 3));
    w->set_raw_data(raw);
    g.floats("w_s", {4}, {0.01f, 0.02f, 0.01f, 0.03f});
    g.node("QuantizeLinear", {"x", "s"}, {"x_q"});
    g.node("DequantizeLinear", {"x_q", "s"}, {"x_r"});
    test::setInt(g.node("DequantizeLinear", {"w_q", "w_s"}, {"w"}), "axis", 0);
    test::setInts(g.node("Conv", {"x_r", "w"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
    g.node("QuantizeLinear", {"c", "s"}, {"c_q"});
    g.node("DequantizeLinear", {"c_q", "s"}, {"y"});
    g.output("y", {1, 4, 8, 8});
    const std::string model = dir.path() + "/qdq.onnx";
    const std::string bytes = g.model().SerializeAsString();
    test::writeFile(model, bytes);
    auto text = runJetagent(
        {"inspect", model, "--prepared", "--backend", "xnnpack", "--int8", "--no-cache"},
        dir.path());
    ASSERT_EQ(text.exitCode, 0) << text.err;
    EXPECT_TRUE(has(text.out, "type")) << text.out;
    EXPECT_TRUE(has(text.out, "int8      Conv")) << text.out;
    EXPECT_TRUE(has(text.out, "fp32>int8 QuantizeLinear")) << text.out;
    EXPECT_TRUE(has(text.out, "int8>fp32 DequantizeLinear")) << text.out;
    auto plain = runJetagent({"inspect", sourcePath("models/shapes_cnn.onnx"), "--prepared",
                                 "--backend", "xnnpack", "--int8", "--no-cache"},
        dir.path());
    EXPECT_NE(plain.exitCode, 0);
    EXPECT_TRUE(has(plain.err, "calibration")) << plain.err;
}

// inspect --calibration compiles the int8 engine: each step's type (int8, fp32, a conversion
// "fp32>int8") beside its library, and how many conversions remain; with oneDNN in the build the
// demo model's convolutions run on its int8 kernels. Without --backend xnnpack it is refused.
TEST(Cli, InspectCalibrationShowsTheInt8Steps)
{
    bool xnnpack = false;
    for (const BackendInfo& b : listBackends())
        xnnpack = xnnpack || (b.name == "xnnpack" && b.available);
    if (!xnnpack)
        GTEST_SKIP() << "this build has no xnnpack backend";
    TempDir dir;
    auto captured = runJetagent(
        {"capture", "--source", "synthetic://shapes", "--frames", "8", "--out", "calib"},
        dir.path());
    ASSERT_EQ(captured.exitCode, 0) << captured.err;
    const std::string model = sourcePath("models/shapes_cnn.onnx");
    auto text = runJetagent(
        {"inspect", model, "--backend", "xnnpack", "--calibration", "calib", "--no-cache"},
        dir.path());
    ASSERT_EQ(text.exitCode, 0) << text.err;
    EXPECT_TRUE(has(text.out, "fp32>int8 QuantizeLinear")) << text.out;
    EXPECT_TRUE(has(text.out, "int8>fp32 DequantizeLinear")) << text.out;
    EXPECT_TRUE(has(text.out, "conversions between types")) << text.out;

    auto json = runJetagent({"inspect", model, "--json", "--backend", "xnnpack", "--calibration",
                                "calib", "--no-cache"},
        dir.path());
    ASSERT_EQ(json.exitCode, 0) << json.err;
    const auto j = nlohmann::json::parse(json.out);
    size_t int8Convs = 0, oneDnn = 0;
    for (const auto& step : j["prepared"]["steps"]) {
        int8Convs += step["op"] == "Conv" && step["precision"] == "int8";
        oneDnn += step["library"] == "onednn";
    }
    EXPECT_GE(int8Convs, 2u) << json.out;
    if (oneDnn > 0) { // a build without oneDNN runs them on XNNPACK (XnnpackEngine.Int8*)
        EXPECT_TRUE(has(text.out, "onednn     int8")) << text.out;
    }

    auto refused = runJetagent(
        {"inspect", model, "--backend", "opencv", "--calibration", "calib", "--no-cache"},
        dir.path());
    EXPECT_NE(refused.exitCode, 0);
    EXPECT_TRUE(has(refused.err, "--calibration builds the xnnpack backend's int8 engine"))
        << refused.err;
}

// --profile times each compiled step: one mean per step, adding up to about a run, and the text
// names the operators and the slowest steps.
TEST(Cli, InspectProfileTimesEachCompiledStep)
{
    bool xnnpack = false;
    for (const BackendInfo& b : listBackends())
        xnnpack = xnnpack || (b.name == "xnnpack" && b.available);
    TempDir dir;
    const std::string model = sourcePath("models/shapes_cnn.onnx");
    auto opencv =
        runJetagent({"inspect", model, "--profile", "3", "--backend", "opencv"}, dir.path());
    EXPECT_EQ(opencv.exitCode, 2);
    EXPECT_TRUE(has(opencv.err, "--profile times the compiled steps of the xnnpack backend"))
        << opencv.err;
    auto stray = runJetagent({"inspect", model, "--threads", "1"}, dir.path());
    EXPECT_EQ(stray.exitCode, 2);
    EXPECT_TRUE(has(stray.err, "are for --profile N")) << stray.err;
    if (!xnnpack)
        GTEST_SKIP() << "this build has no xnnpack backend";

    auto json = runJetagent({"inspect", model, "--json", "--profile", "7", "--warmup", "1",
                                "--threads", "1", "--batch", "2", "--no-cache"},
        dir.path());
    ASSERT_EQ(json.exitCode, 0) << json.err;
    const auto j = nlohmann::json::parse(json.out);
    ASSERT_TRUE(j.contains("profile")) << json.out;
    const auto& p = j["profile"];
    EXPECT_EQ(p["runs"], 7);
    EXPECT_EQ(p["warmup"], 1);
    EXPECT_EQ(p["threads"], 1);
    EXPECT_EQ(p["batch"], 2);
    ASSERT_EQ(p["run_ms_sorted"].size(), 7u);
    ASSERT_EQ(p["step_mean_ms"].size(), j["prepared"]["steps"].size());
    double sum = 0;
    for (const auto& ms : p["step_mean_ms"]) {
        EXPECT_GE(ms.get<double>(), 0.0);
        sum += ms.get<double>();
    }
    // The steps run inside each timed run: their means add up to no more than the mean run.
    double runMean = 0;
    for (const auto& ms : p["run_ms_sorted"])
        runMean += ms.get<double>() / 7;
    EXPECT_GT(sum, 0.0);
    EXPECT_LE(sum, runMean * 1.0001) << json.out;

    auto text = runJetagent({"inspect", model, "--profile", "3", "--no-cache"}, dir.path());
    ASSERT_EQ(text.exitCode, 0) << text.err;
    EXPECT_TRUE(has(text.out, "profile     batch 1, threads default, 3 timed runs after 3 warm-up"))
        << text.out;
    EXPECT_TRUE(has(text.out, "slowest steps")) << text.out;
    EXPECT_TRUE(has(text.out, "Conv                 xnnpack") ||
        has(text.out, "Conv                 onednn"))
        << text.out;
}

TEST(Cli, InspectErrorsAreUsageErrors)
{
    TempDir dir;
    auto missing = runJetagent({"inspect", "nothing.onnx"}, dir.path());
    EXPECT_EQ(missing.exitCode, 2);
    EXPECT_TRUE(has(missing.err, "model file 'nothing.onnx' does not exist")) << missing.err;

    test::writeFile(dir / "text.onnx", "not a model");
    auto garbage = runJetagent({"inspect", "text.onnx"}, dir.path());
    EXPECT_EQ(garbage.exitCode, 2);
    EXPECT_TRUE(has(garbage.err, "'text.onnx' is not a valid ONNX model")) << garbage.err;

    const std::string model = sourcePath("models/shapes_cnn.onnx");
    auto rank = runJetagent({"inspect", model, "--input-shape", "1x3"}, dir.path());
    EXPECT_EQ(rank.exitCode, 2);
    EXPECT_TRUE(has(rank.err, "input 'input' has rank 4")) << rank.err;
    auto syntax = runJetagent({"inspect", model, "--input-shape", "1x3xfoo"}, dir.path());
    EXPECT_EQ(syntax.exitCode, 2);
    EXPECT_TRUE(has(syntax.err, "--input-shape '1x3xfoo'")) << syntax.err;
    auto help = runJetagent({"inspect", "--help"}, dir.path());
    EXPECT_EQ(help.exitCode, 0);
    for (const char* part : {"--json", "--input-shape", "--prepared", "--no-cache", "Examples"})
        EXPECT_TRUE(has(help.out, part)) << part << " missing from inspect --help";
}

// A Conv with strides of 0 killed `jetagent inspect` with SIGFPE inside ONNX's shape inference,
// and a FIFO given as the model hung it: both are now usage errors that say what is wrong.
TEST(Cli, InspectRefusesModelsThatWouldCrashOrHangIt)
{
    TempDir dir;
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(13);
    auto* graph = model.mutable_graph();
    graph->set_name("strides");
    test::declareFloatTensor(graph->add_input(), "x", {1, 3, 8, 8});
    test::declareFloatTensor(graph->add_output(), "y", {1, 2, 6, 6});
    auto* w = graph->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {2, 3, 3, 3})
        w->add_dims(d);
    for (int i = 0; i < 54; ++i)
        w->add_float_data(0.5f);
    auto* conv = graph->add_node();
    conv->set_op_type("Conv");
    conv->set_name("conv");
    conv->add_input("x");
    conv->add_input("w");
    conv->add_output("y");
    auto* strides = conv->add_attribute();
    strides->set_name("strides");
    strides->set_type(onnx::AttributeProto::INTS);
    strides->add_ints(0);
    strides->add_ints(0);
    test::writeFile(dir / "strides.onnx", model.SerializeAsString());
    auto refused = runJetagent({"inspect", "strides.onnx"}, dir.path());
    EXPECT_EQ(refused.exitCode, 2) << refused.err;
    EXPECT_TRUE(has(refused.err, "Conv 'conv': strides [0, 0]: each value must be 1 to"))
        << refused.err;

    ASSERT_EQ(::mkfifo((dir / "pipe.onnx").c_str(), 0600), 0);
    auto fifo = runJetagent({"inspect", "pipe.onnx"}, dir.path());
    EXPECT_EQ(fifo.exitCode, 2) << fifo.err;
    EXPECT_TRUE(has(fifo.err, "model file 'pipe.onnx' is a FIFO (named pipe), not a regular file"))
        << fifo.err;
}

// Exit 2, a source that cannot be opened: cameras named as jetson-inference's users name them.
TEST(Cli, CameraNumbersAndDeviceNodesAreV4L2Cameras)
{
    TempDir dir;
    test::writeFile(dir / "c.yaml", demoConfig("synthetic://shapes"));
    for (const char* source : {"97", "/dev/video97", "v4l2:///dev/video97"}) {
        auto r = runJetagent({"run", "-c", "c.yaml", "-s", source}, dir.path());
        EXPECT_EQ(r.exitCode, 2) << source << ": " << r.err;
        EXPECT_TRUE(has(r.err, "/dev/video97 does not exist; V4L2 capture devices found"))
            << source << ": " << r.err;
        EXPECT_FALSE(has(r.err, "video file")) << source << ": " << r.err;
    }
    // A file named like a number is still reachable.
    auto file = runJetagent({"run", "-c", "c.yaml", "-s", "file://0"}, dir.path());
    EXPECT_EQ(file.exitCode, 2) << file.err;
    EXPECT_TRUE(has(file.err, "video file '0' does not exist")) << file.err;
}

// Exit 2, an unknown scheme: the message says what this build reads, and nothing else.
TEST(Cli, HttpIsNotASourceAndTheMessageSaysWhatIs)
{
    TempDir dir;
    test::writeFile(dir / "c.yaml", demoConfig("synthetic://shapes"));
    auto http = runJetagent({"run", "-c", "c.yaml", "-s", "http://camera.local/x.mp4"}, dir.path());
    EXPECT_EQ(http.exitCode, 2) << http.err;
    for (const char* part : {"does not read http:// sources", "file sources never open the network",
             "rtsp://HOST/PATH", "gst://souphttpsrc location=http://camera.local/x.mp4",
             "synthetic://shapes", "v4l2://DEVICE", "csi://N", "gst://PIPELINE"})
        EXPECT_TRUE(has(http.err, part)) << part << " missing from: " << http.err;
    EXPECT_FALSE(has(http.err, "subdirectory")) << http.err; // no help text beyond the schemes
    EXPECT_EQ(std::count(http.err.begin(), http.err.end(), '\n'), 1) << http.err;

    auto other = runJetagent({"run", "-c", "c.yaml", "-s", "ftp://x/y.mp4"}, dir.path());
    EXPECT_EQ(other.exitCode, 2) << other.err;
    EXPECT_TRUE(has(other.err, "unknown source scheme 'ftp' in 'ftp://x/y.mp4'; sources: "))
        << other.err;
}

// Exit 2, a GStreamer source that cannot be opened, as for files and V4L2 cameras. Needs the
// GStreamer source's open errors to be input errors (the change to hal/gstreamer_source.cpp that
// names missing elements).
TEST(Cli, GStreamerSourcesThatCannotOpenExitWithTwo)
{
    TempDir dir;
    test::writeFile(dir / "c.yaml", demoConfig("synthetic://shapes"));
    auto gst =
        runJetagent({"run", "-c", "c.yaml", "-s", "gst://nosuchelement ! appsink"}, dir.path());
    EXPECT_EQ(gst.exitCode, 2) << gst.err;
    EXPECT_TRUE(has(gst.err, "nosuchelement")) << gst.err;
    if (std::system("gst-inspect-1.0 nvarguscamerasrc >/dev/null 2>&1") == 0)
        GTEST_SKIP() << "nvarguscamerasrc is installed: csi://0 may open a real camera";
    auto csi = runJetagent({"run", "-c", "c.yaml", "-s", "csi://0"}, dir.path());
    EXPECT_EQ(csi.exitCode, 2) << csi.err;
    EXPECT_TRUE(has(csi.err, "nvarguscamerasrc")) << csi.err;
}

// Exit 2, a device named to `probe cameras --device` that cannot be probed (as for probe gpio).
TEST(Cli, ProbeCamerasNamesAMissingDeviceAndExitsWithTwo)
{
    TempDir dir;
    auto absent = runJetagent({"probe", "cameras", "--device", "/dev/video97"}, dir.path());
    EXPECT_EQ(absent.exitCode, 2);
    EXPECT_TRUE(has(absent.out, "/dev/video97:")) << absent.out;
    EXPECT_TRUE(has(absent.out, "error: cannot open: No such file or directory")) << absent.out;
    auto json = runJetagent({"probe", "cameras", "--device", "/dev/video97", "--json"}, dir.path());
    EXPECT_EQ(json.exitCode, 2);
    // Without a device named, listing what is there (maybe nothing) succeeds.
    EXPECT_EQ(runJetagent({"probe", "cameras"}, dir.path()).exitCode, 0);
}

// The other rows: 0 in HelpTeachesCommandsExamplesAndExitCodes and service_e2e_test's
// SigtermLosesNoCompletedFrame; 1 while running in
// FailureWhileRunningExitsWithOneAndKeepsTheSummary, a compare check in compare_test's
// AThresholdThatDoesNotHoldExitsOneAndNamesIt, --stop-timeout in service_e2e_test's
// StopIsBoundedWhenAnInferenceHangs; 2 for the command line in UsageErrorsExitWithTwo, config in
// ConfigErrorsNameFileLineAndKey, models and backends in
// MissingOrCorruptModelIsAClearErrorWithExitTwo and BadSourcesAndEnginesExitWithTwo, files in
// BadSourcesAndEnginesExitWithTwo, GPIO chips in ProbeGpioNamesAMissingChipAndExitsWithTwo, outputs
// in CaptureWritesAnImageFolderAndRefusesToOverwrite, power_e2e_test's CSV test,
// agent_test's OutputRecordsTheAnnotatedStream (--output) and
// BenchWritesNoRunDirectoriesUnlessAskedAndJson below.

size_t benchScratchDirectories()
{
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(fs::temp_directory_path()))
        n += e.path().filename().string().rfind("jetagent-bench-", 0) == 0;
    return n;
}

TEST(Cli, BenchWritesNoRunDirectoriesUnlessAskedAndJson)
{
    TempDir dir;
    test::writeFile(dir / "c.yaml", demoConfig("synthetic://shapes"));
    const std::vector<std::string> quick {
        "bench", "-c", "c.yaml", "--rounds", "3", "--iterations", "10", "--warmup", "1"};
    const size_t scratchBefore = benchScratchDirectories();
    auto args = quick;
    args.insert(args.end(), {"--json", "b.json"});
    auto r = runJetagent(args, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    EXPECT_TRUE(has(r.out, "agent logs  none kept")) << r.out;
    EXPECT_FALSE(fs::exists(dir / "logs")) << "bench wrote the agent's run logs";
    EXPECT_EQ(benchScratchDirectories(), scratchBefore) << "the temporary log directory stayed";

    const auto doc = nlohmann::json::parse(test::readFile(dir / "b.json"));
    EXPECT_EQ(doc["bench"], "agent_vs_engine");
    EXPECT_EQ(doc["config"], "c.yaml");
    EXPECT_EQ(doc["method"]["rounds"], 3);
    EXPECT_EQ(doc["method"]["iterations"], 10);
    EXPECT_EQ(doc["figures"]["engine"]["n"], 30);
    EXPECT_EQ(doc["figures"]["agent_interval"]["n"], 27); // 9 intervals between 10 results
    EXPECT_GT(doc["figures"]["engine"]["median_ms"].get<double>(), 0.0);
    EXPECT_EQ(doc["ratio_paired"]["rounds"], 3);
    EXPECT_TRUE(doc["goal"]["met"].is_boolean());
    EXPECT_EQ(doc["engine"]["precision"], "fp32");
    EXPECT_EQ(doc["engine"]["model"], sourcePath("models/shapes_cnn.onnx"));
    EXPECT_EQ(doc["source"]["uri"], "synthetic://shapes");
    EXPECT_EQ(doc["input_shape"], nlohmann::json::parse("[1, 3, 64, 64]"));
    EXPECT_GT(doc["host"]["cores"].get<int>(), 0);
    EXPECT_TRUE(doc["agent_logs"].is_null());

    // --json never overwrites; the check comes before anything is measured.
    auto again = runJetagent(args, dir.path());
    EXPECT_EQ(again.exitCode, 2);
    EXPECT_TRUE(has(again.err, "--json b.json: the file exists")) << again.err;

    // --log-dir: the last round's run directory, and only it.
    args = quick;
    args.insert(args.end(), {"--log-dir", "kept"});
    auto kept = runJetagent(args, dir.path());
    ASSERT_EQ(kept.exitCode, 0) << kept.err;
    const std::string run = test::onlyRunDirectory(dir / "kept");
    EXPECT_TRUE(fs::exists(run + "/summary.json"));
    EXPECT_TRUE(has(kept.out, "kept/" + fs::path(run).filename().string() + " (last round)"))
        << kept.out;
}

TEST(Cli, BenchOfAnActionTaskWritesJsonToo)
{
    TempDir dir;
    const std::string config = sourcePath("firmware-config/demo-action.yaml");
    auto r = runJetagent({"bench", "-c", config, "--rounds", "1", "--iterations", "10", "--warmup",
                             "1", "--json", "a.json"},
        dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto doc = nlohmann::json::parse(test::readFile(dir / "a.json"));
    EXPECT_EQ(doc["bench"], "action");
    EXPECT_EQ(doc["method"]["periods"], 10);
    EXPECT_EQ(doc["figures"]["clip_model"]["n"], 10);
    EXPECT_GT(doc["per_frame_cost_ms"].get<double>(), 0.0);
    EXPECT_EQ(doc["engines"][0]["model"], sourcePath("models/motion_clip3d.onnx"));
    // It runs the task alone: there is no agent run whose logs --log-dir could keep.
    auto logs = runJetagent({"bench", "-c", config, "--log-dir", "logs"}, dir.path());
    EXPECT_EQ(logs.exitCode, 2);
    EXPECT_TRUE(has(logs.err, "--log-dir: an action task's bench")) << logs.err;
}

// Every command's help ends by naming its page of docs/, one that the source tree holds, and where
// the package installs it.
TEST(Cli, EveryHelpEndsWithItsDocumentationPage)
{
    TempDir dir;
    const std::vector<std::vector<std::string>> commands = {{}, {"run"}, {"bench"}, {"compare"},
        {"sweep"}, {"report"}, {"capture"}, {"inspect"}, {"power"}, {"probe"}, {"probe", "cameras"},
        {"probe", "gpio"}, {"backends"}, {"version"}};
    for (std::vector<std::string> args : commands) {
        args.push_back("--help");
        const auto r = runJetagent(args, dir.path());
        EXPECT_EQ(r.exitCode, 0) << args[0];
        const std::string marker = "\nDocumentation: docs/";
        const size_t at = r.out.rfind(marker);
        ASSERT_NE(at, std::string::npos) << args[0] << ":\n" << r.out;
        const size_t pageStart = at + marker.size() - std::string("docs/").size();
        const std::string page = r.out.substr(pageStart, r.out.find(' ', pageStart) - pageStart);
        EXPECT_TRUE(fs::is_regular_file(sourcePath(page))) << page << " named by " << args[0];
        EXPECT_TRUE(has(r.out.substr(at), "(installed: /")) << r.out.substr(at);
        EXPECT_EQ(r.out.find_first_not_of(" \n", r.out.find('\n', at + 1)), std::string::npos)
            << "the page is not the help's last line:\n"
            << r.out.substr(at);
    }
}

// The "Trying it without a board" commands of docs/power.md, as written there.
TEST(Cli, ReadmeTryingItWithoutABoardRunsAsWritten)
{
    std::ifstream readme(sourcePath("docs/power.md"));
    ASSERT_TRUE(readme) << "docs/power.md";
    std::string line;
    bool inSection = false, inBlock = false;
    std::vector<std::string> commands;
    while (std::getline(readme, line)) {
        if (line.rfind("**Trying it without a board.**", 0) == 0)
            inSection = true;
        else if (inSection && !inBlock && line == "```sh")
            inBlock = true;
        else if (inBlock && line == "```")
            break;
        else if (inBlock && !line.empty())
            commands.push_back(line.substr(0, line.find(" #")));
    }
    ASSERT_GE(commands.size(), 3u) << "no command block in the section";

    TempDir dir;
    std::string binary;
    for (const auto& a : test::jetagentCommand())
        binary += "'" + a + "' ";
    const std::string prefix = "build/src/jetagent ";
    for (const std::string& command : commands) {
        ASSERT_EQ(command.rfind(prefix, 0), 0u) << command;
        const std::string shell = "cd '" + dir.path() + "' && " + binary +
            command.substr(prefix.size()) + " >out.txt 2>err.txt </dev/null";
        const int status = std::system(shell.c_str());
        const std::string out = test::readFile(dir / "out.txt");
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
            << command << "\n"
            << out << test::readFile(dir / "err.txt");
        EXPECT_FALSE(out.empty()) << command;
        if (has(command, "--fixture list")) {
            for (const char* id : {"nano-jp4", "tx2-jp4", "xavier-nx-jp5", "orin-nano-jp6",
                     "agx-orin-jp5", "x86-host", "thor-jp7"})
                EXPECT_TRUE(has(out, id)) << id << " missing from:\n" << out;
        } else if (has(command, "orin-nano-jp6 --list")) {
            EXPECT_TRUE(has(out, "VDD_IN")) << out;
        } else if (has(command, "-d ")) {
            EXPECT_TRUE(has(out, " avg ")) << command << "\n" << out; // the closing summary
        }
    }
}

// A fixture name that does not exist, and a --sysfs-root that is not empty, are input errors.
TEST(Cli, PowerFixtureErrorsExitWithTwo)
{
    TempDir dir;
    auto unknown = runJetagent({"power", "--fixture", "orin-agx"}, dir.path());
    EXPECT_EQ(unknown.exitCode, 2);
    EXPECT_TRUE(has(unknown.err, "--fixture 'orin-agx': no such fixture board; known:"))
        << unknown.err;
    EXPECT_TRUE(has(unknown.err, "agx-orin-jp5")) << unknown.err;
    fs::create_directories(dir / "full");
    test::writeFile(dir / "full/x", "x");
    auto full = runJetagent(
        {"power", "--fixture", "x86-host", "--sysfs-root", dir / "full", "--list"}, dir.path());
    EXPECT_EQ(full.exitCode, 2);
    EXPECT_TRUE(has(full.err, "the directory is not empty")) << full.err;
}

// A fixture zone whose reads fail on the board (JetPack 6's power-gated cv0, EAGAIN) cannot fail
// from a file on disk: the tree --fixture writes leaves it empty, so it reads offline, never 0 C.
TEST(Cli, PowerFixtureTreeKeepsFailingZonesOffline)
{
    TempDir dir;
    auto r = runJetagent(
        {"power", "--fixture", "orin-nano-jp6", "--sysfs-root", dir / "tree", "-d", "0.3"},
        dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    // The closing summary: cv0 offline, no zone at 0 C, the zones that read at their values.
    EXPECT_TRUE(has(r.out, "cv0-thermal            offline (empty read)")) << r.out;
    EXPECT_FALSE(has(r.out, "start    0.0 C")) << r.out;
    EXPECT_TRUE(has(r.out, "cpu-thermal            start   47.0 C")) << r.out;
}

} // namespace
} // namespace jetagent
