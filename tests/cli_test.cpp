// The command line as users meet it: help texts, exit codes, and error messages.
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace jetagent {
namespace {

using test::runJetagent;
using test::sourcePath;
using test::TempDir;

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

TEST(Cli, FailureWhileRunningExitsWithOneAndKeepsTheSummary)
{
    // Files that exist but decode to nothing: the source opens, then fails on its first read.
    TempDir dir;
    std::filesystem::create_directories(dir / "images");
    test::writeFile(dir / "images/a.png", "not an image");
    test::writeFile(dir / "c.yaml", demoConfig(dir / "images"));
    auto r = runJetagent({"run", "-c", "c.yaml"}, dir.path());
    EXPECT_EQ(r.exitCode, 1) << r.err;
    EXPECT_TRUE(has(r.err, "the run ended early")) << r.err;
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

} // namespace
} // namespace jetagent
