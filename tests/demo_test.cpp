// The demo exactly as the README runs it: paced at 30 fps for 300 frames (ten seconds of real time,
// hence the "slow" label).
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_checks.h"
#include "test_support.h"

namespace jetagent {
namespace {

TEST(Demo, LogsOneRecordPerFrameWithConsistentStagesAndAtLeast95PercentAccuracy)
{
    test::TempDir dir;
    auto r = test::runJetagent(
        {"run", "--config", test::sourcePath("firmware-config/demo.yaml"), "--log-dir", "logs"},
        dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto files = test::checkRun(run, "shapes");
    const auto& t = files.summary["tasks"][0];
    // One record per frame: every captured frame reached the log, none dropped or lost.
    EXPECT_EQ(files.summary["source"]["frames_captured"], 300);
    EXPECT_EQ(files.csvRecords, 300u);
    EXPECT_EQ(t["frames"]["dropped"], 0);
    EXPECT_EQ(t["frames"]["failed"], 0);
    // Accuracy from the log itself, and as the summary reports it.
    size_t correct = 0;
    for (const auto& line : test::readLines(run + "/shapes.frames.csv"))
        correct +=
            line.find(",1,0,") != std::string::npos || line.find(",1,1,") != std::string::npos;
    EXPECT_GE(correct, 285u);
    EXPECT_GE(t["accuracy"]["top1"].get<double>(), 0.95);
    EXPECT_EQ(t["accuracy"]["scored"], 300);
    EXPECT_NEAR(t["throughput_fps"].get<double>(), 30.0, 1.0);
    EXPECT_NE(r.out.find("accuracy  top-1"), std::string::npos) << r.out;
}

// int8 on the CPU backend, as a user runs it: calibration frames of another seed saved with
// `jetagent capture`, then `compare` of the int8 engine against fp32 on 500 frames of the demo's
// source. The bar: top-1 agreement >= 99%. The second run finds the calibration ranges in
// the cache and gives the very same figures. (Slow under emulation: a minute and a half.)
TEST(Demo, Int8CompareAgreesWithFp32OnTheDemoModel)
{
    test::TempDir dir;
    auto captured = test::runJetagent({"capture", "--source", "synthetic://shapes", "--seed", "7",
                                          "-n", "64", "--out", dir / "calib"},
        dir.path());
    ASSERT_EQ(captured.exitCode, 0) << captured.err;
    auto args = [&](const std::string& json) {
        return std::vector<std::string> {"compare", test::sourcePath("models/shapes_cnn.onnx"),
            "--config", test::sourcePath("firmware-config/demo.yaml"), "--reference",
            "xnnpack:cpu:fp32", "--candidate", "xnnpack:cpu:int8", "--calibration", dir / "calib",
            "--frames", "500", "--warmup", "2", "--cache-dir", dir / "cache", "--min-top1", "0.99",
            "--json", dir / json};
    };
    auto first = test::runJetagent(args("a.json"), dir.path());
    if (first.exitCode == 2 && first.err.find("xnnpack") != std::string::npos)
        GTEST_SKIP() << "no xnnpack backend: " << first.err;
    ASSERT_EQ(first.exitCode, 0) << first.out << first.err;
    EXPECT_NE(first.out.find("int8: "), std::string::npos) << first.out;
    EXPECT_NE(first.out.find("calibrated on 64 samples"), std::string::npos) << first.out;
    const auto a = nlohmann::json::parse(test::readFile(dir / "a.json"));
    EXPECT_EQ(a["candidate"]["precision"], "int8");
    EXPECT_EQ(a["candidate"]["backend"], "xnnpack");
    const double top1 = a["outputs"][0]["top1_agreement"].get<double>();
    EXPECT_GE(top1, 0.99);
    // int8 is not fp32: the logits differ, but not by much.
    const double rel = a["outputs"][0]["relative_error"].get<double>();
    EXPECT_GT(rel, 0.0);
    EXPECT_LT(rel, 0.05);

    auto second = test::runJetagent(args("b.json"), dir.path());
    ASSERT_EQ(second.exitCode, 0) << second.out << second.err;
    EXPECT_NE(second.out.find("calibration ranges from the cache"), std::string::npos)
        << second.out;
    const auto b = nlohmann::json::parse(test::readFile(dir / "b.json"));
    EXPECT_EQ(b["outputs"][0]["top1_agreement"].get<double>(), top1);
    EXPECT_EQ(b["outputs"][0]["relative_error"].get<double>(), rel);
}

} // namespace
} // namespace jetagent
