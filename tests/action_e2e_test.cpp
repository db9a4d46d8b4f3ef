// Classification and action tasks side by side on one source, through the jetagent binary.
#include <gtest/gtest.h>

#include "run_checks.h"
#include "test_support.h"

namespace jetagent {
namespace {

// The frame id and capture time columns of a task's CSV log, one string per record.
std::vector<std::string> framesSeen(const std::string& csvPath)
{
    std::vector<std::string> frames;
    const auto lines = test::readLines(csvPath);
    for (size_t i = 1; i < lines.size(); ++i) {
        const size_t second = lines[i].find(',', lines[i].find(',') + 1);
        frames.push_back(lines[i].substr(0, second));
    }
    return frames;
}

TEST(ActionAgent, ConcurrentTasksSeeIdenticalFrames)
{
    test::TempDir dir;
    const std::string models = test::sourcePath("models");
    test::writeFile(dir / "three.yaml",
        "source: {uri: synthetic://motion, width: 160, height: 120, seed: 3}\n"
        "run: {frames: 64}\n"
        "tasks:\n"
        "  - name: shapes\n"
        "    model: " +
            models +
            "/shapes_cnn.onnx\n"
            "    preprocess: {resize: stretch, interpolation: area}\n"
            "  - name: clip\n"
            "    type: action\n"
            "    model: " +
            models +
            "/motion_clip3d.onnx\n"
            "    labels: " +
            models +
            "/motion_labels.txt\n"
            "    action: {stride: 4}\n"
            "    preprocess: {resize: stretch, interpolation: area}\n"
            "  - name: streaming\n"
            "    type: action\n"
            "    model: " +
            models +
            "/motion_backbone.onnx\n"
            "    labels: " +
            models +
            "/motion_labels.txt\n"
            "    action: {mode: streaming, head: " +
            models +
            "/motion_head.onnx, stride: 2}\n"
            "    preprocess: {resize: stretch, interpolation: area}\n"
            "logging: {status_interval_s: 0}\n");
    auto r = test::runJetagent(
        {"run", "-c", "three.yaml", "--as-fast-as-possible", "--log-dir", "logs"}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::string run = test::onlyRunDirectory(dir / "logs");
    for (const char* task : {"shapes", "clip", "streaming"})
        test::checkRun(run, task);

    // The same 64 frames, in the same order, with the same capture times: one frame read from
    // the source, shared by the three workers.
    const auto shapes = framesSeen(run + "/shapes.frames.csv");
    ASSERT_EQ(shapes.size(), 64u);
    EXPECT_EQ(framesSeen(run + "/clip.frames.csv"), shapes);
    EXPECT_EQ(framesSeen(run + "/streaming.frames.csv"), shapes);

    const auto summary = test::checkRun(run, "clip").summary;
    EXPECT_EQ(summary["source"]["frames_captured"], 64);
    EXPECT_EQ(summary["tasks"][1]["clips"]["results"], (64 - 16) / 4 + 1);
    EXPECT_EQ(summary["tasks"][2]["clips"]["results"], (64 - 16) / 2 + 1);
    EXPECT_EQ(summary["tasks"][2]["engines"].size(), 2u);
    EXPECT_TRUE(summary["tasks"][0]["accuracy"].is_null()); // shapes' labels know no motions
}

TEST(ActionAgent, StreamingWithoutAHeadIsAUsageErrorNamingTheKey)
{
    test::TempDir dir;
    test::writeFile(dir / "bad.yaml",
        "tasks:\n"
        "  - type: action\n"
        "    model: " +
            test::sourcePath("models/motion_backbone.onnx") +
            "\n"
            "    action:\n"
            "      mode: streaming\n"
            "      stride: 0\n");
    auto r = test::runJetagent({"run", "-c", "bad.yaml", "--log-dir", "logs"}, dir.path());
    EXPECT_EQ(r.exitCode, 2);
    // Both errors at once, each at its line (the head's at the action section's first key).
    EXPECT_NE(r.err.find("bad.yaml:5:7: tasks[0].action.head: missing"), std::string::npos)
        << r.err;
    EXPECT_NE(
        r.err.find("bad.yaml:6:15: tasks[0].action.stride: must be between 1"), std::string::npos)
        << r.err;
}

} // namespace
} // namespace jetagent
