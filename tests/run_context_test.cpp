// The run context: the board, its OS and CPU as read under the given root, the rest from this
// process; and the process's start-up as the summary reports it.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "jetagent/base/clock.h"
#include "output/summary.h"
#include "run/run_context.h"
#include "test_support.h"

using namespace std::string_literals;

namespace jetagent {
namespace {

TEST(RunContext, DescribesTheBoardItIsGivenNotTheHost)
{
    // A run whose power.sysfs_root is a Jetson's tree reports that board, as its power figures do.
    test::TempDir dir;
    std::filesystem::create_directories(dir / "proc/device-tree");
    std::filesystem::create_directories(dir / "etc");
    test::writeFile(dir / "proc/device-tree/model", "NVIDIA Jetson AGX Orin Developer Kit\0"s);
    test::writeFile(dir / "etc/os-release", "PRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\n");
    const RunContext context = collectRunContext(detectBoard(SysfsRoot(dir.path())));
    EXPECT_EQ(context.cpu, "NVIDIA Jetson AGX Orin Developer Kit");
    EXPECT_EQ(context.os, "Ubuntu 22.04.4 LTS");
    EXPECT_FALSE(context.kernel.empty()); // the kernel is this process's: uname
    EXPECT_GT(context.cores, 0);
}

TEST(RunContext, CoresAreTheBoardsWhereItsTreeListsThem)
{
    test::TempDir dir;
    std::filesystem::create_directories(dir / "sys/devices/system/cpu");
    test::writeFile(dir / "sys/devices/system/cpu/online", "0-5\n");
    EXPECT_EQ(collectRunContext(detectBoard(SysfsRoot(dir.path()))).cores, 6);
}

TEST(ProcessStart, TheStartTimeIsField22CountedAfterTheCommandsLastParenthesis)
{
    // A command name may hold spaces and parentheses of its own ("a) (b" here): the fields are
    // counted from its last ')'. 22 fields: pid, comm, state, then 19 numbers ending in 4242.
    const std::string fields = " S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4242 99 100";
    EXPECT_EQ(startTicksFromStat("123 (a) (b)" + fields), 4242);
    EXPECT_EQ(startTicksFromStat("123 (jetagent)" + fields), 4242);
    EXPECT_EQ(startTicksFromStat("123 jetagent S 1 2"), -1); // no name in parentheses
    EXPECT_EQ(startTicksFromStat("123 (jetagent) S 1 2 3"), -1); // cut short
    EXPECT_EQ(startTicksFromStat("123 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 -5"), -1);
}

TEST(ProcessStart, ThisProcessStartedBeforeNowToAClockTick)
{
    int64_t resolution = 0;
    const int64_t start = processStartNs(resolution);
    ASSERT_GE(start, 0) << "/proc/self/stat unreadable";
    EXPECT_GT(resolution, 0);
    EXPECT_LE(start, monotonicNs());
}

// A summary of a run without tasks, with the given start-up.
nlohmann::json startupOf(const StartupTimes& startup)
{
    RunOutcome outcome;
    outcome.context.startup = startup;
    return summaryJson(outcome)["context"]["startup"];
}

TEST(StartupSummary, ThePartsAddUpToTheTimeToTheFirstFrame)
{
    StartupTimes t;
    t.processStartNs = 1'000'000'000;
    t.processStartResolutionNs = 10'000'000;
    t.mainStartNs = t.processStartNs + 150'000'000; // 150 ms of loading
    t.sourceOpenNs = 20'000'000;
    t.engineBuildNs = 300'000'000;
    t.pipelineStartNs = t.mainStartNs + 400'000'000;
    t.firstFrameNs = t.pipelineStartNs + 5'000'000;
    const nlohmann::json s = startupOf(t);
    EXPECT_DOUBLE_EQ(s["to_first_frame_ms"].get<double>(), 555.0) << s;
    EXPECT_DOUBLE_EQ(s["loading_ms"].get<double>(), 150.0);
    EXPECT_DOUBLE_EQ(s["source_open_ms"].get<double>(), 20.0);
    EXPECT_DOUBLE_EQ(s["engine_build_ms"].get<double>(), 300.0);
    EXPECT_DOUBLE_EQ(s["first_frame_wait_ms"].get<double>(), 5.0);
    EXPECT_DOUBLE_EQ(s["other_ms"].get<double>(), 80.0); // 400 ms to the pipeline, less 320
    EXPECT_DOUBLE_EQ(s["process_start_resolution_ms"].get<double>(), 10.0);

    RunOutcome outcome;
    outcome.context.startup = t;
    const std::string text = summaryText(summaryJson(outcome));
    EXPECT_NE(text.find("startup   555.0 ms from the process's start to the first frame: loading "
                        "150.0 ms, source open 20.0 ms, engine build 300.0 ms, first frame wait "
                        "5.0 ms, the rest 80.0 ms (the process's start known to 10 ms)\n"),
        std::string::npos)
        << text;
}

TEST(StartupSummary, WhatIsUnknownIsNullAndAReloadsRunHasNone)
{
    StartupTimes t;
    t.mainStartNs = 5'000'000'000; // /proc/self/stat unreadable, and no frame came
    t.sourceOpenNs = 1'000'000;
    const nlohmann::json s = startupOf(t);
    EXPECT_TRUE(s["to_first_frame_ms"].is_null()) << s;
    EXPECT_TRUE(s["loading_ms"].is_null());
    EXPECT_TRUE(s["first_frame_wait_ms"].is_null());
    EXPECT_TRUE(s["other_ms"].is_null());
    EXPECT_DOUBLE_EQ(s["source_open_ms"].get<double>(), 1.0);
    // Not the program's first run (a reload's, a benchmark's): no start-up at all.
    EXPECT_TRUE(startupOf(StartupTimes()).is_null());
}

} // namespace
} // namespace jetagent
