// The action demo (firmware-config/demo-action.yaml) as fast as possible: both modes on the same
// synthetic motion, each scored against the known motions. Seconds of compute, hence "slow".
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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

// The action demo in int8 (the xnnpack backend), calibrated on frames of another seed captured as
// a user would: every clip result of both modes has the fp32 run's top-1 label (the bar
// is 99%), and both still recognise the motions.
TEST(DemoAction, Int8AgreesWithFp32OnEveryClip)
{
    test::TempDir dir;
    auto captured = test::runJetagent({"capture", "--source", "synthetic://motion", "--seed", "7",
                                          "-n", "480", "--out", dir / "calib"},
        dir.path());
    ASSERT_EQ(captured.exitCode, 0) << captured.err;
    std::string config = test::readFile(test::sourcePath("firmware-config/demo-action.yaml"));
    const std::string models = test::sourcePath("models");
    for (size_t at; (at = config.find("../models")) != std::string::npos;)
        config.replace(at, 9, models);
    for (size_t at = 0; (at = config.find("precision: fp32", at)) != std::string::npos;)
        config.replace(at, 15,
            "precision: int8\n      calibration: {source: " + (dir / "calib") +
                ", frames: 480, batch: 1}");
    test::writeFile(dir / "int8.yaml", config);
    std::vector<std::vector<std::string>> labels[2];
    for (int run = 0; run < 2; ++run) {
        const std::string logs = run ? "logs-int8" : "logs-fp32";
        auto r = test::runJetagent(
            {"run", "--config",
                run ? dir / "int8.yaml" : test::sourcePath("firmware-config/demo-action.yaml"),
                "--as-fast-as-possible", "--log-dir", logs},
            dir.path());
        ASSERT_EQ(r.exitCode, 0) << r.err;
        const std::string runDir = test::onlyRunDirectory(dir / logs);
        size_t index = 0;
        for (const char* task : {"motion-clip", "motion-streaming"}) {
            SCOPED_TRACE(std::string(task) + (run ? " int8" : " fp32"));
            const auto files = test::checkRun(runDir, task);
            const auto& t = files.summary["tasks"][index++];
            EXPECT_GE(t["accuracy"]["top1"].get<double>(), 0.90) << t["accuracy"].dump();
            if (run) {
                EXPECT_TRUE(t["engines"][0].contains("lowered")) << t["engines"].dump();
            }
            std::vector<std::string> top;
            std::istringstream lines(test::readFile(runDir + "/" + task + ".frames.jsonl"));
            for (std::string line; std::getline(lines, line);) {
                const auto record = nlohmann::json::parse(line);
                if (record["result"] == true)
                    top.push_back(record["top"][0]["label"].get<std::string>());
            }
            labels[run].push_back(top);
        }
    }
    for (size_t task = 0; task < 2; ++task) {
        ASSERT_EQ(labels[0][task].size(), labels[1][task].size());
        ASSERT_EQ(labels[0][task].size(), static_cast<size_t>((kFrames - 16) / 4 + 1));
        size_t same = 0;
        for (size_t i = 0; i < labels[0][task].size(); ++i)
            same += labels[0][task][i] == labels[1][task][i];
        std::printf("[ figures  ] %s: int8 agrees with fp32 on %zu of %zu clip results\n",
            task ? "streaming" : "clip", same, labels[0][task].size());
        EXPECT_GE(static_cast<double>(same), 0.99 * static_cast<double>(labels[0][task].size()));
    }
}

} // namespace
} // namespace jetagent
