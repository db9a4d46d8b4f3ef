// Frame log lines: CSV and JSON Lines formats, escaping, the writer thread and its loss counting.
#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "jetagent/base/clock.h"
#include "jetagent/base/text.h"
#include "jetagent/power/sampler.h"
#include "output/frame_log.h"
#include "run/recorder.h"
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

// A record as the recorder passes it to the logs: its stage times and deadline derived.
FrameRecord finished(FrameRecord r, int64_t deadlineNs)
{
    r.times = Recorder::derive(r, deadlineNs);
    return r;
}

TEST(TaskLog, CsvLineHasTheHeaderColumnsAndStageTimes)
{
    TaskLog log("t", {"cat", "dog, \"big\""}, 16);
    std::string line;
    log.formatCsv(finished(sampleRecord(), 4'000'000), line);
    EXPECT_EQ(line,
        "42,1000000000,0.5000,0.5000,3.0000,2.9000,0.2500,4.2500,1,\"dog, \"\"big\"\"\",0.750000,"
        "\"dog, \"\"big\"\"\",1,1,0,1,main\n");
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
    TaskLog log("t", {"cat", "dog \"big\""}, 16);
    std::string line;
    FrameRecord r = sampleRecord();
    r.truth = 0;
    log.formatJson(finished(r, 0), line);
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

// Found by the labels fuzz target (tests/fuzz/regressions/labels): a Latin-1 labels file made the
// log throw nlohmann's type_error 316.
TEST(TaskLog, LabelsThatAreNotUtf8GiveJsonLinesThatParse)
{
    TaskLog log("t", {"caf\xe9", "\xff\xfe"}, 16);
    std::string line;
    log.formatJson(finished(sampleRecord(), 0), line);
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["top"][0]["label"], "\xef\xbf\xbd\xef\xbf\xbd"); // two U+FFFD
    EXPECT_EQ(j["top"][1]["label"], "caf\xef\xbf\xbd");
    std::string csv;
    log.formatCsv(finished(sampleRecord(), 0), csv);
    EXPECT_NE(csv.find("\xff\xfe"), std::string::npos) << "the CSV keeps the file's bytes";
}

TEST(TaskLog, UnpacedFramesKeepTheirQueueingOutOfEndToEndAndHaveNoDeadline)
{
    // Deadline 1 ms: the paced record (4.25 ms end to end) misses it.
    TaskLog paced("t", {"cat", "dog"}, 16);
    std::string line;
    paced.formatCsv(finished(sampleRecord(), 1'000'000), line);
    EXPECT_NE(line.find(",1,1,0,1,main\n"), std::string::npos) << line; // correct, missed, ...

    TaskLog log("t", {"cat", "dog"}, 16);
    log.enableQueueColumn();
    FrameRecord r = sampleRecord();
    r.unpaced = true;
    r.capturedNs -= 40'000'000; // 40 ms in the FIFO behind earlier frames, 0.5 ms before that
    std::string csv, json;
    log.formatCsv(finished(r, 1'000'000), csv);
    log.formatJson(finished(r, 1'000'000), json);
    // wait 0, end to end from the dequeue (3.75 ms), deadline_miss empty, queue_ms at the end.
    EXPECT_EQ(csv,
        "42,960000000,0.0000,0.5000,3.0000,2.9000,0.2500,3.7500,1,dog,0.750000,dog,1,,0,1,"
        "main,40.5000\n");
    const auto j = nlohmann::json::parse(json);
    EXPECT_DOUBLE_EQ(j["wait_ms"].get<double>(), 0.0);
    EXPECT_DOUBLE_EQ(j["e2e_ms"].get<double>(), 3.75);
    EXPECT_DOUBLE_EQ(j["queue_ms"].get<double>(), 40.5);
    EXPECT_TRUE(j["deadline_miss"].is_null());

    // The header names the column last.
    test::TempDir dir;
    FrameLogWriter writer;
    ASSERT_TRUE(writer.open(dir.path(), {&log}, true, false).ok());
    writer.stop();
    EXPECT_EQ(test::readLines(dir / "t.frames.csv")[0], std::string(kFrameCsvHeader) + ",queue_ms");
}

TEST(TaskLog, FailedFramesHaveNoResult)
{
    TaskLog log("t", {"a"}, 16);
    FrameRecord r = sampleRecord();
    r.ok = false;
    r.topK = 0;
    r.truth = -1;
    std::string csv, json;
    log.formatCsv(finished(r, 1), csv);
    log.formatJson(finished(r, 1), json);
    EXPECT_NE(csv.find(",1,,,,0,0,0,0,main\n"), std::string::npos) << csv;
    const auto j = nlohmann::json::parse(json);
    EXPECT_TRUE(j["top"].empty());
    EXPECT_TRUE(j["truth"].is_null());
    EXPECT_EQ(j["ok"], false);
}

TEST(FrameLogWriter, WritesEveryRecordAndCountsLossesWhenTheQueueIsFull)
{
    test::TempDir dir;
    TaskLog log("task", {"a", "b"}, 8);
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
    TaskLog log("task", {"a"}, 8);
    FrameLogWriter writer;
    const Status s = writer.open(dir.path(), {&log}, true, false);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("task.frames.csv"), std::string::npos);
    EXPECT_EQ(test::readFile(dir / "task.frames.csv"), "precious\n");
}

} // namespace
} // namespace jetagent

namespace jetagent {
namespace {

// A rail that always reads the same power: the energy of any window is power x time, exactly.
class ConstantRail : public PowerRail {
public:
    explicit ConstantRail(double watts) : watts_(watts)
    {
        info_.name = "VDD_IN";
        info_.driver = "test";
        info_.device = "constant";
    }
    int read(int64_t, RailReading& out) override
    {
        out.powerW = watts_;
        return 0;
    }
    int reopen() override { return 0; }

private:
    double watts_;
};

constexpr double kRailWatts = 4.0;
constexpr int64_t kMs = 1'000'000;

std::unique_ptr<PowerSampler> constantSampler()
{
    std::vector<std::unique_ptr<PowerRail>> rails;
    rails.push_back(std::make_unique<ConstantRail>(kRailWatts));
    PowerSamplerOptions options;
    options.railHz = 200.0;
    options.stateHz = 1.0;
    options.ringCapacity = 256;
    return std::make_unique<PowerSampler>(std::move(rails), "VDD_IN", nullptr, options);
}

// A record whose windows lie in the sampler's future, so the writer must wait for it.
FrameRecord recordAt(int64_t start, int batch)
{
    FrameRecord r = sampleRecord();
    r.intervalStartNs = start;
    r.capturedNs = start + 10 * kMs;
    r.dequeuedNs = start + 20 * kMs;
    r.preprocessedNs = start + 30 * kMs;
    r.inferredNs = start + 80 * kMs; // inference 50 ms
    r.doneNs = start + 100 * kMs; // frame interval 100 ms
    r.batch = batch;
    return r;
}

TEST(TaskLogEnergy, FramesGetTheEnergyOfTheirWindowsOnceTheSamplerCoversThem)
{
    test::TempDir dir;
    auto sampler = constantSampler();
    ASSERT_TRUE(sampler->start().ok());
    TaskLog log("t", {"cat", "dog"}, 16);
    log.enableEnergyColumns();
    Recorder recorder({{"t", 0, {&log}}}, 1000, 16, sampler.get());
    FrameLogWriter writer;
    ASSERT_TRUE(writer.open(dir.path(), {&log}, true, true).ok());
    writer.start();
    recorder.start();

    const int64_t now = monotonicNs();
    recorder.submit(0, recordAt(now, 1));
    recorder.submit(0, recordAt(now, 2));
    FrameRecord old = recordAt(now - 60'000 * kMs, 1); // a minute before the sampler started
    recorder.submit(0, old);
    // Let the sampler pass the windows' end, then stop as the agent does: sampler, recorder,
    // writer.
    std::this_thread::sleep_for(std::chrono::milliseconds(160));
    sampler->stop();
    recorder.stop();
    writer.stop();

    const auto lines = test::readLines(dir / "t.frames.csv");
    ASSERT_EQ(lines.size(), 4u);
    EXPECT_EQ(lines[0], std::string(kFrameCsvHeader) + "," + kFrameCsvEnergyColumns);
    const size_t columns = splitFields(lines[0], ',').size();
    const auto single = splitFields(lines[1], ',');
    const auto batched = splitFields(lines[2], ',');
    const auto uncovered = splitFields(lines[3], ',');
    ASSERT_EQ(single.size(), columns);
    ASSERT_EQ(uncovered.size(), columns);
    const double inferenceMj = kRailWatts * 50.0; // W x ms = mJ
    const double frameMj = kRailWatts * 100.0;
    EXPECT_NEAR(std::stod(single[columns - 4]), inferenceMj, inferenceMj * 1e-3);
    EXPECT_NEAR(std::stod(single[columns - 3]), frameMj, frameMj * 1e-3);
    EXPECT_NEAR(std::stod(single[columns - 2]), kRailWatts, kRailWatts * 1e-3);
    EXPECT_EQ(single[columns - 1], "0"); // 50 ms is longer than any update period known here
    // A batch of two shares its windows: half each, at the same power.
    EXPECT_NEAR(std::stod(batched[columns - 4]), inferenceMj / 2, inferenceMj * 1e-3);
    EXPECT_NEAR(std::stod(batched[columns - 3]), frameMj / 2, frameMj * 1e-3);
    EXPECT_NEAR(std::stod(batched[columns - 2]), kRailWatts, kRailWatts * 1e-3);
    // No samples for the old frame's window: empty fields, never a made-up figure.
    EXPECT_EQ(uncovered[columns - 4], "");
    EXPECT_EQ(uncovered[columns - 3], "");

    const auto json = nlohmann::json::parse(test::readLines(dir / "t.frames.jsonl")[0]);
    EXPECT_NEAR(json["inference_energy_mJ"].get<double>(), inferenceMj, inferenceMj * 1e-3);
    EXPECT_TRUE(nlohmann::json::parse(test::readLines(dir / "t.frames.jsonl")[2])["frame_energy_mJ"]
                    .is_null());

    const TaskStats stats = recorder.stats(0);
    const TaskEnergy& energy = stats.energy;
    EXPECT_EQ(energy.frameNj.count(), 2u);
    EXPECT_EQ(energy.frames, 2u);
    EXPECT_EQ(energy.uncovered, 1u);
    EXPECT_NEAR(energy.totalFrameJ, (frameMj + frameMj / 2) * 1e-3, frameMj * 1e-6);
}

TEST(TaskLogEnergy, WithoutPowerTheColumnsAreAbsent)
{
    test::TempDir dir;
    TaskLog log("t", {"cat"}, 16);
    FrameLogWriter writer;
    ASSERT_TRUE(writer.open(dir.path(), {&log}, true, false).ok());
    writer.start();
    writer.stop();
    EXPECT_EQ(test::readLines(dir / "t.frames.csv")[0], kFrameCsvHeader);
}

} // namespace
} // namespace jetagent

namespace jetagent {
namespace {

TEST(TaskLog, EachRecordNamesItsStream)
{
    TaskLog log("t", {"cat", "dog"}, 16);
    log.setStreamNames({"front", "rear"});
    FrameRecord r;
    r.stream = 1;
    r.doneNs = r.inferredNs = r.preprocessedNs = r.dequeuedNs = r.capturedNs = 1000;
    r.times = Recorder::derive(r, 0);
    std::string csv, json;
    log.formatCsv(r, csv);
    log.formatJson(r, json);
    EXPECT_NE(csv.find(",rear\n"), std::string::npos) << csv;
    EXPECT_NE(json.find("{\"frame\":0,\"stream\":\"rear\","), std::string::npos) << json;
}

} // namespace
} // namespace jetagent
