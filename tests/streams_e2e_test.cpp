// Several cameras in one run, as a user configures them: four synthetic streams of known classes
// through one batched engine (paced at 30 fps for five seconds, hence the "slow" label), and two
// streams shared unevenly by three tasks.
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_checks.h"
#include "test_support.h"

namespace jetagent {
namespace {

// The demo's task on the shapes model, with the given extra keys.
std::string shapesTask(const std::string& name, const std::string& extra)
{
    return "  - name: " + name + "\n    model: " + test::sourcePath("models/shapes_cnn.onnx") +
        "\n    labels: " + test::sourcePath("models/shapes_labels.txt") + "\n" + extra +
        "    preprocess: {resize: stretch, crop: 64, interpolation: area, color: rgb, divisor: "
        "255, mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225]}\n";
}

// How many CSV records each stream has in a task's frame log.
std::map<std::string, size_t> recordsPerStream(const std::string& csv)
{
    std::map<std::string, size_t> counts;
    const auto lines = test::readLines(csv);
    for (size_t i = 1; i < lines.size(); ++i) {
        // The stream is the 17th field; nothing before it holds a comma (labels are plain words).
        size_t at = 0;
        for (int k = 0; k < 16 && at != std::string::npos; ++k)
            at = lines[i].find(',', at + 1);
        if (at == std::string::npos)
            continue;
        const size_t end = lines[i].find(',', at + 1);
        ++counts[lines[i].substr(at + 1, end == std::string::npos ? end : end - at - 1)];
    }
    return counts;
}

// firmware-config/demo-streams.yaml as the README runs it, cut to 150 frames a stream.
TEST(Streams, FourCamerasThroughOneBatchedEngineEachScoredAndCounted)
{
    test::TempDir dir;
    const std::vector<std::string> names {"front", "rear", "left", "right"};
    // The shipped demo of several cameras, cut to five seconds.
    auto r =
        test::runJetagent({"run", "--config", test::sourcePath("firmware-config/demo-streams.yaml"),
                              "--frames", "150", "--log-dir", "logs"},
            dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto files = test::checkRun(run, "shapes");
    const auto& s = files.summary;
    ASSERT_EQ(s["streams"].size(), 4u);
    for (size_t i = 0; i < names.size(); ++i) {
        EXPECT_EQ(s["streams"][i]["name"], names[i]);
        EXPECT_EQ(s["streams"][i]["frames_captured"], 150);
    }
    const auto& t = s["tasks"][0];
    EXPECT_EQ(t["streams_served"], nlohmann::json(names));
    ASSERT_EQ(t["streams"].size(), 4u);
    uint64_t processed = 0, dropped = 0;
    for (size_t i = 0; i < names.size(); ++i) {
        const auto& st = t["streams"][i];
        EXPECT_EQ(st["name"], names[i]);
        // Each stream on its own: every frame scored right (the demo model on its classes).
        ASSERT_TRUE(st["accuracy"].is_object()) << st.dump();
        EXPECT_EQ(st["accuracy"]["top1"].get<double>(), 1.0) << names[i];
        EXPECT_NEAR(st["throughput_fps"].get<double>(), 30.0, 3.0) << names[i];
        EXPECT_GT(st["latency_ms"]["end_to_end"]["n"].get<int>(), 100);
        processed += st["frames"]["processed"].get<uint64_t>();
        dropped += st["frames"]["dropped"].get<uint64_t>();
    }
    // The streams' figures add up to the task's.
    EXPECT_EQ(processed, t["frames"]["processed"].get<uint64_t>());
    EXPECT_EQ(dropped, t["frames"]["dropped"].get<uint64_t>());
    EXPECT_EQ(processed + dropped, 600u);
    EXPECT_EQ(files.csvRecords, processed);
    const auto perStream = recordsPerStream(run + "/shapes.frames.csv");
    for (size_t i = 0; i < names.size(); ++i)
        EXPECT_EQ(perStream.at(names[i]), t["streams"][i]["frames"]["processed"].get<size_t>());
    // One engine, batches of the four: most batches full, their frames captured within one
    // frame period of each other.
    const auto& b = t["batching"];
    EXPECT_EQ(b["batch_size"], 4);
    EXPECT_EQ(b["frames"].get<uint64_t>(), processed);
    EXPECT_GT(b["mean_fill"].get<double>(), 0.8);
    EXPECT_GT(b["multi_stream_batches"].get<uint64_t>(), 100u);
    EXPECT_LT(b["capture_skew_ms"]["p50"].get<double>(), 33.4);
    EXPECT_NE(r.out.find("per stream"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("skew"), std::string::npos) << r.out;
}

TEST(Streams, TwoStreamsThreeTasksEachServingItsOwn)
{
    test::TempDir dir;
    const std::string yaml = "sources:\n"
                             "  - {name: a, uri: synthetic://shapes, seed: 1}\n"
                             "  - {name: b, uri: synthetic://shapes, seed: 2}\n"
                             "run: {frames: 60, pacing: none}\n"
                             "logging: {status_interval_s: 0}\n"
                             "tasks:\n" +
        shapesTask("both", "    engine: {batch: 2}\n") +
        shapesTask("only_a", "    streams: [a]\n") + shapesTask("only_b", "    streams: b\n");
    test::writeFile(dir / "two.yaml", yaml);
    auto r =
        test::runJetagent({"run", "--config", dir / "two.yaml", "--log-dir", "logs"}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto s = test::checkRun(run, "both").summary;
    test::checkRun(run, "only_a");
    test::checkRun(run, "only_b");
    ASSERT_EQ(s["tasks"].size(), 3u);
    const auto& both = s["tasks"][0];
    ASSERT_EQ(both["streams"].size(), 2u);
    EXPECT_EQ(both["frames"]["processed"], 120); // offline: nothing dropped
    EXPECT_EQ(both["streams"][0]["frames"]["processed"], 60);
    EXPECT_EQ(both["streams"][1]["frames"]["processed"], 60);
    // A task of one stream has no per-stream part; its log names its stream on every line.
    for (const char* task : {"only_a", "only_b"}) {
        const auto& t = s["tasks"][task == std::string("only_a") ? 1 : 2];
        EXPECT_EQ(t["frames"]["processed"], 60) << task;
        EXPECT_FALSE(t.contains("streams")) << task;
        const auto counts = recordsPerStream(run + "/" + task + ".frames.csv");
        ASSERT_EQ(counts.size(), 1u) << task;
        EXPECT_EQ(counts.begin()->first, task == std::string("only_a") ? "a" : "b");
        EXPECT_EQ(counts.begin()->second, 60u);
    }
    EXPECT_EQ(recordsPerStream(run + "/both.frames.csv"),
        (std::map<std::string, size_t> {{"a", 60}, {"b", 60}}));
}

// --source on the command line: once, it replaces the source (NAME=URI names it); repeated, each
// is a stream, and synthetic ones get consecutive seeds.
TEST(Streams, RepeatedSourceOptionsAreStreams)
{
    test::TempDir dir;
    const std::string demo = test::sourcePath("firmware-config/demo.yaml");
    auto one = test::runJetagent({"run", "-c", demo, "-s", "cam=synthetic://shapes", "-n", "5",
                                     "--as-fast-as-possible", "--log-dir", "one"},
        dir.path());
    ASSERT_EQ(one.exitCode, 0) << one.err;
    EXPECT_EQ(recordsPerStream(test::onlyRunDirectory(dir / "one") + "/shapes.frames.csv"),
        (std::map<std::string, size_t> {{"cam", 5}}));

    auto two = test::runJetagent(
        {"run", "-c", demo, "-s", "left=synthetic://shapes", "-s", "synthetic://shapes", "-n", "5",
            "--as-fast-as-possible", "--log-dir", "two"},
        dir.path());
    ASSERT_EQ(two.exitCode, 0) << two.err;
    const std::string run = test::onlyRunDirectory(dir / "two");
    EXPECT_EQ(recordsPerStream(run + "/shapes.frames.csv"),
        (std::map<std::string, size_t> {{"left", 5}, {"stream1", 5}}));
    // Different seeds: the two streams' frames differ (their true classes, frame by frame, and
    // their capture-independent content), where the same seed would repeat them.
    std::map<std::string, std::vector<std::string>> truths;
    for (const std::string& line : test::readLines(run + "/shapes.frames.jsonl")) {
        const auto j = nlohmann::json::parse(line);
        truths[j["stream"].get<std::string>()].push_back(j["truth"].dump());
    }
    ASSERT_EQ(truths.size(), 2u);
    EXPECT_NE(truths["left"], truths["stream1"]);
}

} // namespace
} // namespace jetagent
