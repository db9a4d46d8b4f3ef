// The demo exactly as the README runs it: paced at 30 fps for 300 frames (ten seconds of real time,
// hence the "slow" label).
#include <gtest/gtest.h>

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

} // namespace
} // namespace jetagent
