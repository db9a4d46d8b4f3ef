// The action demo (firmware-config/demo-action.yaml) as fast as possible: both modes on the same
// synthetic motion, each scored against the known motions. Seconds of compute, hence "slow".
#include <gtest/gtest.h>

#include "run_checks.h"
#include "test_support.h"

namespace jetagent {
namespace {

constexpr int kFrames = 480; // demo-action.yaml's run.frames

TEST(DemoAction, BothModesRecogniseAtLeast90PercentOfTheClips)
{
    test::TempDir dir;
    auto r =
        test::runJetagent({"run", "--config", test::sourcePath("firmware-config/demo-action.yaml"),
                              "--as-fast-as-possible", "--log-dir", "logs"},
            dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::string run = test::onlyRunDirectory(dir / "logs");
    size_t index = 0;
    for (const char* task : {"motion-clip", "motion-streaming"}) {
        SCOPED_TRACE(task);
        const auto files = test::checkRun(run, task);
        const auto& t = files.summary["tasks"][index++];
        EXPECT_EQ(t["name"], task);
        EXPECT_EQ(t["type"], "action");
        // Every frame has its record; nothing was dropped offline.
        EXPECT_EQ(files.csvRecords, static_cast<size_t>(kFrames));
        EXPECT_EQ(t["frames"]["dropped"], 0);
        EXPECT_EQ(t["frames"]["failed"], 0);
        // A result every 4 frames once 16 are in: (480 - 16) / 4 + 1.
        EXPECT_EQ(t["clips"]["results"], (kFrames - 16) / 4 + 1);
        EXPECT_EQ(t["clips"]["clips_with_gaps"], 0);
        // Clips across two motions are not scored; most lie inside one 48-frame segment.
        EXPECT_GE(t["accuracy"]["scored"].get<int>(), 80);
        EXPECT_GE(t["accuracy"]["top1"].get<double>(), 0.90) << t["accuracy"].dump() << "\n"
                                                             << r.out;
    }
    EXPECT_NE(r.out.find("accuracy  top-1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("clips with a known class"), std::string::npos) << r.out;
}

} // namespace
} // namespace jetagent
