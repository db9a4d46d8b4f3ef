// `jetagent report`: the run logs read back (segments, damaged lines), the figures derived from
// them (percentiles, decimation, inference and GPIO windows) and the command on a real run.
#include <cmath>
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "jetagent/power/fixture_boards.h"
#include "run_log.h"
#include "run_report.h"
#include "sysfs_fixture.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace jetagent {
namespace {

constexpr double kNaNForTest = std::numeric_limits<double>::quiet_NaN();

using json = nlohmann::json;
using test::runJetagent;
using test::TempDir;
using test::writeFile;

// A stand-in for Chart.js where no browser draws the page: the command needs a file to inline.
constexpr const char* kFakeChartJs = "window.Chart = function () {};\n";

constexpr const char* kHeader = "frame_id,capture_ns,wait_ms,preprocess_ms,inference_ms,"
                                "compute_ms,postprocess_ms,e2e_ms,batch,top1_label,top1_score,"
                                "truth_label,correct,deadline_miss,cold_start,ok";

// A frame line of kHeader's columns: capture at `captureNs`, the stages as given, e2e their sum.
std::string frameLine(int id, long long captureNs, double wait, double pre, double inf, double post,
    int miss = 0, int cold = 0, int ok = 1, const std::string& label = "circle")
{
    std::ostringstream line;
    line << id << ',' << captureNs << ',' << wait << ',' << pre << ',' << inf << ',' << inf << ','
         << post << ',' << (wait + pre + inf + post) << ",1," << label << ",0.9,,0," << miss << ','
         << cold << ',' << ok << '\n';
    return line.str();
}

// The JSON the page carries for its readers (element report-data).
json reportData(const std::string& page)
{
    const std::string open = "<script type=\"application/json\" id=\"report-data\">";
    const size_t start = page.find(open);
    if (start == std::string::npos)
        return json();
    const size_t from = start + open.size();
    return json::parse(page.substr(from, page.find("</script>", from) - from), nullptr, false);
}

TEST(RunLog, SegmentsAreReadByHeaderNameAndDamagedLinesAreSkippedAndCounted)
{
    TempDir dir;
    // The second segment orders its columns differently and adds one; a quoted label holds a comma.
    writeFile(dir / "a.frames.csv",
        std::string("frame_id,e2e_ms,top1_label\n") + "1,10.5,cat\n" + "2,11,\"dog, big\"\n" +
            "3,12\n" + // a field short
            "4,abc,cat\n" + // not a number
            "5,13.5,cat,x\n" // a field too many
    );
    writeFile(dir / "a.frames_000001.csv",
        std::string("e2e_ms,frame_id,window,top1_label\n") + "14,6,1,cat\n" + "15,7,1,cat\n" +
            "16,8,2,c"); // the crash cut the last line
    auto table =
        readCsvSegments({dir / "a.frames.csv", dir / "a.frames_000001.csv"}, {"top1_label"});
    ASSERT_TRUE(table.ok()) << table.status().message();
    EXPECT_EQ(table->rows(), 4u);
    EXPECT_EQ(table->damaged.count, 4u);
    ASSERT_EQ(table->damaged.examples.size(), 4u);
    EXPECT_NE(table->damaged.examples[0].find("a.frames.csv:4: 2 fields"), std::string::npos)
        << table->damaged.examples[0];
    EXPECT_NE(table->damaged.examples[1].find("e2e_ms is not a number"), std::string::npos);
    EXPECT_NE(table->damaged.examples[3].find("a.frames_000001.csv:4"), std::string::npos);
    EXPECT_NE(table->damaged.examples[3].find("cut short"), std::string::npos);
    const auto& id = *table->column("frame_id");
    const auto& e2e = *table->column("e2e_ms");
    EXPECT_EQ(id, (std::vector<double> {1, 2, 6, 7}));
    EXPECT_EQ(e2e, (std::vector<double> {10.5, 11, 14, 15}));
    const auto& window = *table->column("window");
    EXPECT_TRUE(std::isnan(window[0]) && std::isnan(window[1]));
    EXPECT_EQ(window[2], 1.0);
    EXPECT_EQ(splitCsvLine("1,\"dog, \"\"big\"\"\",3"),
        (std::vector<std::string> {"1", "dog, \"big\"", "3"}));
}

TEST(RunLog, PercentilesAreNearestRankOverTheFiniteValues)
{
    std::vector<double> values;
    for (int i = 100; i >= 1; --i)
        values.push_back(i);
    values.push_back(std::nan(""));
    const Percentiles p = percentiles(values);
    EXPECT_EQ(p.count, 100u);
    EXPECT_EQ(p.min, 1);
    EXPECT_EQ(p.p50, 50);
    EXPECT_EQ(p.p90, 90);
    EXPECT_EQ(p.p99, 99);
    EXPECT_EQ(p.max, 100);
    EXPECT_DOUBLE_EQ(p.mean, 50.5);
    EXPECT_EQ(percentiles({7}).p99, 7);
    EXPECT_EQ(percentiles({}).count, 0u);
}

TEST(RunLog, DecimationKeepsEachBucketsExtremes)
{
    constexpr size_t kRows = 100'000;
    constexpr size_t kSpike = 54'321;
    constexpr size_t kDip = 777;
    std::vector<double> y(kRows);
    for (size_t i = 0; i < kRows; ++i)
        y[i] = std::sin(static_cast<double>(i) * 0.01);
    y[kSpike] = 1000;
    y[kDip] = -1000;
    const auto kept = decimateMinMax(y, 4000);
    EXPECT_LE(kept.size(), 4000u);
    EXPECT_GE(kept.size(), 3900u);
    EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
    EXPECT_NE(std::find(kept.begin(), kept.end(), kSpike), kept.end());
    EXPECT_NE(std::find(kept.begin(), kept.end(), kDip), kept.end());
    // Short series are kept whole, NaNs left out.
    EXPECT_EQ(decimateMinMax({1, std::nan(""), 3}, 4000), (std::vector<size_t> {0, 2}));
}

CsvColumns framesOf(const std::string& dir, const std::string& csv)
{
    writeFile(dir + "/t.frames.csv", csv);
    auto table = readCsvSegments({dir + "/t.frames.csv"}, {"top1_label", "truth_label"});
    EXPECT_TRUE(table.ok());
    return table.ok() ? std::move(table).value() : CsvColumns {};
}

TEST(RunLog, InferenceSpansStartAfterQueueWaitAndPreprocessAndMerge)
{
    TempDir dir;
    constexpr long long kOrigin = 5'000'000'000;
    // Frame 2's inference starts inside frame 1's: they merge. Frame 3 stands alone.
    const CsvColumns frames = framesOf(dir.path(),
        std::string(kHeader) + "\n" + frameLine(1, kOrigin, 1, 2, 10, 1) +
            frameLine(2, kOrigin + 5'000'000, 1, 2, 10, 1) +
            frameLine(3, kOrigin + 100'000'000, 0, 1, 4, 1));
    const auto spans = inferenceSpans(frames, kOrigin);
    ASSERT_EQ(spans.size(), 2u);
    EXPECT_NEAR(spans[0].startS, 0.003, 1e-9);
    EXPECT_NEAR(spans[0].endS, 0.018, 1e-9);
    EXPECT_NEAR(spans[1].startS, 0.101, 1e-9);
    EXPECT_NEAR(spans[1].endS, 0.105, 1e-9);
    // Asked for at most one, the gap between them no longer counts.
    EXPECT_EQ(inferenceSpans(frames, kOrigin, 1).size(), 1u);
}

TEST(RunLog, BusyPercentIsEachSlotsCoveredShareWithOverlapsCountedOnce)
{
    // Slots of 0.1 s ending at 0.1, 0.2, 0.3, 0.4; two tasks' spans overlap in the second.
    const std::vector<TimeSpan> spans = {{0.02, 0.07}, {0.11, 0.15}, {0.13, 0.19}, {0.29, 0.32}};
    const std::vector<double> ends = {0.1, 0.2, 0.3, 0.4, kNaNForTest};
    const std::vector<double> busy = busyPercent(spans, ends);
    ASSERT_EQ(busy.size(), 5u);
    EXPECT_NEAR(busy[0], 50.0, 1e-9); // 0.02..0.07 of 0..0.1
    EXPECT_NEAR(busy[1], 80.0, 1e-9); // 0.11..0.19, the overlap once
    EXPECT_NEAR(busy[2], 10.0, 1e-9); // 0.29..0.30, the span's part in this slot
    EXPECT_NEAR(busy[3], 20.0, 1e-9); // 0.30..0.32
    EXPECT_TRUE(std::isnan(busy[4])); // no end time
    EXPECT_TRUE(busyPercent({}, {0.1, 0.2}) == std::vector<double>({0.0, 0.0}));
}

TEST(RunLog, GpioWindowsSpanTheirFramesWithCountAndEnergy)
{
    TempDir dir;
    const CsvColumns frames = framesOf(dir.path(),
        "frame_id,capture_ns,e2e_ms,frame_energy_mJ,window\n"
        "1,1000000000,10,5,0\n"
        "2,1100000000,10,6,1\n"
        "3,1200000000,20,7,1\n"
        "4,1300000000,10,8,0\n"
        "5,1400000000,10,,2\n");
    const auto windows = gpioWindows(frames, 1'000'000'000);
    ASSERT_EQ(windows.size(), 2u);
    EXPECT_EQ(windows[0].window, 1);
    EXPECT_EQ(windows[0].frames, 2u);
    EXPECT_NEAR(windows[0].time.startS, 0.1, 1e-9);
    EXPECT_NEAR(windows[0].time.endS, 0.22, 1e-9);
    EXPECT_DOUBLE_EQ(windows[0].energyMj, 13);
    EXPECT_EQ(windows[1].window, 2);
    EXPECT_EQ(windows[1].frames, 1u);
    EXPECT_TRUE(std::isnan(windows[1].energyMj));
}

TEST(RunLog, FrameGapsAndSteadyValues)
{
    TempDir dir;
    const CsvColumns frames = framesOf(dir.path(),
        std::string(kHeader) + "\n" + frameLine(1, 1, 0, 1, 50, 1, 0, 1) +
            frameLine(2, 2, 0, 1, 5, 1) + frameLine(5, 5, 0, 1, 6, 1) +
            frameLine(6, 6, 0, 1, 99, 1, 0, 0, 0));
    const auto gaps = frameGaps(frames);
    ASSERT_EQ(gaps.size(), 1u);
    EXPECT_EQ(gaps[0].row, 2u);
    EXPECT_EQ(gaps[0].missing, 2u);
    // The cold start (50) and the failed frame (99) are left out, as the summary does.
    EXPECT_EQ(steadyValues(frames, "inference_ms"), (std::vector<double> {5, 6}));
}

TEST(RunLog, ADirectoryThatIsNoRunIsRefusedByName)
{
    TempDir dir;
    writeFile(dir / "notes.txt", "hello\n");
    auto files = findRunFiles(dir.path());
    ASSERT_FALSE(files.ok());
    EXPECT_EQ(files.status().kind(), ErrorKind::NotFound);
    EXPECT_NE(
        files.status().message().find(dir.path() + ": not a run directory"), std::string::npos)
        << files.status().message();
    writeFile(dir / "js", kFakeChartJs);
    auto r = runJetagent({"report", dir.path(), "--chart-js", dir / "js"}, dir.path());
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find(dir.path() + ": not a run directory"), std::string::npos) << r.err;
    EXPECT_EQ(runJetagent({"report"}, dir.path()).exitCode, 2);
    const auto missing = runJetagent({"report", dir / "missing"}, dir.path());
    EXPECT_EQ(missing.exitCode, 2);
    EXPECT_NE(missing.err.find("missing: no such directory"), std::string::npos) << missing.err;
    const auto file = runJetagent({"report", dir / "notes.txt"}, dir.path());
    EXPECT_EQ(file.exitCode, 2);
    EXPECT_NE(file.err.find("notes.txt: not a directory"), std::string::npos) << file.err;
}

TEST(RunReport, HelpTeachesWhatItReadsAndDraws)
{
    TempDir dir;
    auto r = runJetagent({"report", "--help"}, dir.path());
    EXPECT_EQ(r.exitCode, 0);
    for (const char* text : {"summary.json", "power.csv", "histogram", "GPIO", "Examples:", "-o"})
        EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
}

// A run that crashed: segments, no summary.json, a damaged line and a cut last line.
TEST(RunReport, ACrashedRunIsReportedFromItsCsvsWithTheDamageCounted)
{
    TempDir dir;
    const std::string run = dir / "run";
    fs::create_directories(run);
    std::string first = std::string(kHeader) + "\n";
    for (int i = 1; i <= 20; ++i)
        first += frameLine(i, 1'000'000'000LL + i * 33'000'000LL, 1, 2, 10 + i % 3, 1);
    first += "21,oops\n";
    writeFile(run + "/shapes.frames.csv", first);
    writeFile(run + "/shapes.frames_000001.csv",
        std::string(kHeader) + "\n" + frameLine(24, 1'800'000'000, 1, 2, 30, 1, 1) + "25,18");
    writeFile(dir / "js", kFakeChartJs);
    auto r =
        runJetagent({"report", run, "-o", dir / "out.html", "--chart-js", dir / "js"}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.err.find("2 damaged CSV line(s) skipped"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("no summary.json"), std::string::npos) << r.err;
    const std::string page = test::readFile(dir / "out.html");
    EXPECT_NE(page.find("2 damaged CSV line(s) skipped"), std::string::npos);
    EXPECT_NE(page.find("no summary.json: the run did not finish"), std::string::npos);
    EXPECT_NE(page.find("drop count unknown (no summary.json"), std::string::npos);
    EXPECT_NE(page.find("no power.csv (the run had no power rails)"), std::string::npos);
    EXPECT_NE(page.find("chart-latency-0\""), std::string::npos);
    const json data = reportData(page);
    ASSERT_TRUE(data.is_object()) << "no report-data in the page";
    EXPECT_EQ(data["damaged_lines"], 2);
    EXPECT_EQ(data["tasks"][0]["rows"], 21);
    EXPECT_EQ(data["tasks"][0]["stages_ms"]["inference"]["max"], 30.0);
    EXPECT_FALSE(fs::exists(run + "/report.html")) << "-o chose the path";
}

// The charts' configurations the page draws (element report-charts).
json reportCharts(const std::string& page)
{
    const std::string open = "<script type=\"application/json\" id=\"report-charts\">";
    const size_t start = page.find(open);
    if (start == std::string::npos)
        return json();
    const size_t from = start + open.size();
    return json::parse(page.substr(from, page.find("</script>", from) - from), nullptr, false);
}

const json* chartOf(const json& charts, const std::string& id)
{
    for (const json& chart : charts)
        if (chart["id"] == id)
            return &chart;
    return nullptr;
}

// A long run with GPIO windows and a damaged, segmented power.csv: plotted lines are cut to about
// 4000 points that keep the one spike, the tables count every row, windows are listed, power's
// damage counted.
TEST(RunReport, ALongRunIsPlottedInBucketsThatKeepItsSpikeAndCountedWhole)
{
    constexpr int kFrames = 30'000;
    constexpr int kSpikeFrame = 12'345;
    constexpr long long kStartNs = 2'000'000'000;
    TempDir dir;
    const std::string run = dir / "run";
    fs::create_directories(run);
    std::string csv = std::string(kHeader) + ",window\n";
    for (int i = 1; i <= kFrames; ++i) {
        std::string line = frameLine(i, kStartNs + i * 10'000'000LL, 0.5, 1,
            i == kSpikeFrame ? 400.0 : 5.0 + (i % 10) * 0.1, 0.5, 0, i == 1 ? 1 : 0);
        line.pop_back();
        csv += line + "," + (i > 100 && i <= 200 ? "1" : i > 1000 && i <= 1050 ? "2" : "0") + "\n";
    }
    writeFile(run + "/shapes.frames.csv", csv);
    writeFile(run + "/power.csv",
        "time_ns,t_s,VDD_IN_W,total_W,cpu-thermal_C,gpu_MHz\n"
        "2000000000,0,5,5,40,918\n"
        "2100000000,0.1,6,6,not-a-number,918\n"
        "2200000000,0.2,7,7,41,\n");
    writeFile(run + "/power_000001.csv",
        "time_ns,t_s,VDD_IN_W,total_W,cpu-thermal_C,gpu_MHz\n"
        "2300000000,0.3,8,8,42,1300\n");
    writeFile(dir / "js", kFakeChartJs);
    auto r = runJetagent({"report", run, "--chart-js", dir / "js"}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.err.find("1 damaged CSV line(s) skipped"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("power.csv:3: cpu-thermal_C is not a number"), std::string::npos) << r.err;
    const std::string page = test::readFile(run + "/report.html");
    const json charts = reportCharts(page);
    const json* latency = chartOf(charts, "chart-latency-0");
    ASSERT_NE(latency, nullptr);
    const json& e2e = (*latency)["config"]["data"]["datasets"][0]["data"];
    EXPECT_LE(e2e.size(), kReportMaxPoints);
    EXPECT_GE(e2e.size(), kReportMaxPoints / 2);
    double highest = 0;
    for (const json& point : e2e)
        highest = std::max(highest, point["y"].get<double>());
    EXPECT_DOUBLE_EQ(highest, 402.0) << "the spike's frame is kept";
    const json& sets = (*latency)["config"]["data"]["datasets"];
    EXPECT_EQ(sets.back()["label"], "GPIO window open");
    EXPECT_EQ(sets.back()["data"].size(), 8u) << "two windows, four corners each";
    EXPECT_EQ(sets.back()["yAxisID"], "onoff");
    EXPECT_EQ(sets[0]["yAxisID"], "y") << "the latency is drawn against the milliseconds axis";

    const json data = reportData(page);
    const json& inference = data["tasks"][0]["stages_ms"]["inference"];
    EXPECT_EQ(inference["count"], kFrames - 1) << "every row but the cold start";
    EXPECT_EQ(inference["max"], 400.0);
    ASSERT_EQ(data["tasks"][0]["windows"].size(), 2u);
    EXPECT_EQ(data["tasks"][0]["windows"][0]["frames"], 100);
    EXPECT_EQ(data["tasks"][0]["windows"][1]["frames"], 50);
    EXPECT_NE(page.find("id=\"table-windows-0\""), std::string::npos);
    EXPECT_EQ(data["power"]["rows"], 3) << "power.csv's segments are read too";
    EXPECT_EQ(data["power"]["damaged_lines"], 1);
    EXPECT_NE(chartOf(charts, "chart-power"), nullptr);
    EXPECT_NE(chartOf(charts, "chart-clocks"), nullptr);
    EXPECT_NE(page.find("id=\"chart-energy-0-omitted\""), std::string::npos)
        << "no energy columns: the chart is left out, saying why";
}

// The real thing: `jetagent run` on a fixture board (rails, so energy columns, and its power.csv),
// then `jetagent report`; the page's stage figures against
// summary.json's for the same run.
TEST(RunReport, ARealRunsPageAgreesWithItsSummary)
{
    TempDir dir;
    auto fixture = test::SysfsFixture::create(fixtures::orinNanoJp6());
    ASSERT_TRUE(fixture.ok()) << fixture.status().message();
    writeFile(dir / "c.yaml",
        "source: {uri: synthetic://shapes, width: 320, height: 240, fps: 30, seed: 5}\n"
        "run: {frames: 60, pacing: none}\n"
        "tasks:\n" +
            test::shapesTaskYaml() +
            "logging: {dir: logs, status_interval_s: 0}\n"
            "power: {sysfs_root: '" +
            (*fixture)->hostRoot() + "', log_interval_ms: 10}\n");
    auto r = runJetagent({"run", "-c", "c.yaml"}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::string run = test::onlyRunDirectory(dir / "logs");
    // The run's own power.csv, a row per 10 ms slot (power.log_interval_ms).
    const auto powerRows = test::readLines(run + "/power.csv");
    ASSERT_GE(powerRows.size(), 2u) << "the run wrote no power.csv rows";
    writeFile(dir / "js", kFakeChartJs);
    r = runJetagent({"report", run, "--chart-js", dir / "js"}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.err, "");
    const std::string page = test::readFile(run + "/report.html");
    for (const char* id : {"chart-latency-0\"", "chart-hist-0-end_to_end\"", "chart-energy-0\"",
             "chart-power\"", "chart-thermal\"", "chart-clocks\"", "table-run\"",
             "table-stages-0\"", "table-energy-0\""})
        EXPECT_NE(page.find(std::string("id=\"") + id), std::string::npos) << id;
    EXPECT_EQ(page.find("-omitted\""), std::string::npos) << "every chart has its data";
    EXPECT_NE(page.find("inference busy (any task, % of each slot)"), std::string::npos);

    const json data = reportData(page);
    ASSERT_TRUE(data.is_object());
    const json summary = json::parse(test::readFile(run + "/summary.json"));
    const json& latency = summary["tasks"][0]["latency_ms"];
    const json& stages = data["tasks"][0]["stages_ms"];
    for (const char* key :
        {"end_to_end", "wait", "preprocess", "inference", "postprocess", "queue"}) {
        SCOPED_TRACE(key);
        ASSERT_TRUE(stages.contains(key));
        EXPECT_EQ(stages[key]["count"], latency[key]["n"]);
        for (const char* figure : {"min", "p50", "p90", "p99", "max", "mean"}) {
            const double expected = latency[key][figure].get<double>();
            // The CSV and the summary both round to 1e-4 ms; the summary's percentiles are exact
            // up to its kept samples (far more than this run's), within 0.1% beyond.
            EXPECT_NEAR(stages[key][figure].get<double>(), expected, 2e-4 + expected * 1e-3)
                << figure;
        }
    }
    EXPECT_EQ(data["power"]["rows"], powerRows.size() - 1); // every row but the header
    EXPECT_TRUE(data["power"]["rails_W"].contains("VDD_IN_W"));
}

} // namespace
} // namespace jetagent
