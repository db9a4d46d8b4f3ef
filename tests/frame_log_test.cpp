// Frame log lines: CSV and JSON Lines formats, escaping, the writer thread and its loss counting.
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "frame_log.h"
#include "test_support.h"

namespace jetagent {
namespace {

FrameRecord sampleRecord()
{
    FrameRecord r;
    r.frameId = 42;
    r.capturedNs = 1'000'000'000;
    r.dequeuedNs = 1'000'500'000; // wait 0.5 ms
    r.preprocessedNs = 1'001'000'000; // preprocess 0.5 ms
    r.inferredNs = 1'004'000'000; // inference 3 ms
    r.doneNs = 1'004'250'000; // postprocess 0.25 ms
    r.computeNs = 2'900'000;
    r.batch = 1;
    r.topK = 2;
    r.labels = {1, 0};
    r.scores = {0.75f, 0.25f};
    r.truth = 1;
    return r;
}

TEST(TaskLog, CsvLineHasTheHeaderColumnsAndStageTimes)
{
    TaskLog log("t", {"cat", "dog, \"big\""}, 4'000'000, 16);
    std::string line;
    log.formatCsv(sampleRecord(), line);
    EXPECT_EQ(line,
        "42,1000000000,0.5000,0.5000,3.0000,2.9000,0.2500,4.2500,1,\"dog, \"\"big\"\"\",0.750000,"
        "\"dog, \"\"big\"\"\",1,1,0,1\n");
    // As many fields as header columns (the quoted label holds a comma, so count outside quotes).
    size_t fields = 1;
    bool quoted = false;
    for (char c : line) {
        if (c == '"')
            quoted = !quoted;
        else if (c == ',' && !quoted)
            ++fields;
    }
    size_t columns = 1;
    for (const char* p = kFrameCsvHeader; *p; ++p)
        columns += *p == ',';
    EXPECT_EQ(fields, columns);
}

TEST(TaskLog, JsonLineParsesWithEveryField)
{
    TaskLog log("t", {"cat", "dog \"big\""}, 0, 16);
    std::string line;
    FrameRecord r = sampleRecord();
    r.truth = 0;
    log.formatJson(r, line);
    ASSERT_EQ(line.back(), '\n');
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["frame"], 42);
    EXPECT_DOUBLE_EQ(j["e2e_ms"].get<double>(), 4.25);
    EXPECT_DOUBLE_EQ(j["inference_ms"].get<double>(), 3.0);
    EXPECT_EQ(j["top"][0]["label"], "dog \"big\"");
    EXPECT_DOUBLE_EQ(j["top"][1]["score"].get<double>(), 0.25);
    EXPECT_EQ(j["truth"], "cat");
    EXPECT_EQ(j["correct"], false);
    EXPECT_EQ(j["deadline_miss"], false); // no deadline
    EXPECT_EQ(j["ok"], true);
}

TEST(TaskLog, FailedFramesHaveNoResult)
{
    TaskLog log("t", {"a"}, 1, 16);
    FrameRecord r = sampleRecord();
    r.ok = false;
    r.topK = 0;
    r.truth = -1;
    std::string csv, json;
    log.formatCsv(r, csv);
    log.formatJson(r, json);
    EXPECT_NE(csv.find(",1,,,,0,0,0,0\n"), std::string::npos) << csv;
    const auto j = nlohmann::json::parse(json);
    EXPECT_TRUE(j["top"].empty());
    EXPECT_TRUE(j["truth"].is_null());
    EXPECT_EQ(j["ok"], false);
}

TEST(FrameLogWriter, WritesEveryRecordAndCountsLossesWhenTheQueueIsFull)
{
    test::TempDir dir;
    TaskLog log("task", {"a", "b"}, 0, 8);
    for (int i = 0; i < 20; ++i) { // no writer yet: 8 fit, 12 are lost
        FrameRecord r = sampleRecord();
        r.frameId = static_cast<uint64_t>(i);
        r.labels = {0, 1};
        log.submit(r);
    }
    EXPECT_EQ(log.lost(), 12u);
    FrameLogWriter writer;
    ASSERT_TRUE(writer.open(dir.path(), {&log}, true, true).ok());
    writer.start();
    writer.stop();
    EXPECT_EQ(log.written(), 8u);
    const auto csv = test::readLines(dir / "task.frames.csv");
    ASSERT_EQ(csv.size(), 9u);
    EXPECT_EQ(csv[0], kFrameCsvHeader);
    EXPECT_EQ(csv[1].substr(0, 2), "0,");
    EXPECT_EQ(test::readLines(dir / "task.frames.jsonl").size(), 8u);
}

TEST(FrameLogWriter, NeverOverwritesExistingLogs)
{
    test::TempDir dir;
    test::writeFile(dir / "task.frames.csv", "precious\n");
    TaskLog log("task", {"a"}, 0, 8);
    FrameLogWriter writer;
    const Status s = writer.open(dir.path(), {&log}, true, false);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("task.frames.csv"), std::string::npos);
    EXPECT_EQ(test::readFile(dir / "task.frames.csv"), "precious\n");
}

} // namespace
} // namespace jetagent
