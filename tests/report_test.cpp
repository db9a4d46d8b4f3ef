// `jetagent report`: the run logs read back (segments, damaged lines), the figures derived from
// them (percentiles, decimation, inference and GPIO windows) and the command on a real run.
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstring>

#include <cmath>
#include <filesystem>
#include <functional>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "html_report.h"
#include "jetagent/base/regular_file.h"
#include "jetagent/fixtures/fixture_boards.h"
#include "live/live_page.h"
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
using test::runJetagentUnder;
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

// The frame CSV of a task that serves several streams: kHeader and the stream column last.
const std::string kStreamHeader = std::string(kHeader) + ",stream";
// How `report` reads a frame CSV: each stream's frame ids in order apart.
const CsvOrder kStreamOrder = {"frame_id", "", "stream"};

// A line of kStreamHeader's columns: inference the whole of e2e, the other stages 0.
std::string streamLine(const std::string& stream, int id, long long captureNs, double e2e,
    int ok = 1, int miss = 0, const std::string& truth = "", int correct = 0, int cold = 0)
{
    std::ostringstream line;
    line << id << ',' << captureNs << ",0,0," << e2e << ',' << e2e << ",0," << e2e
         << ",2,circle,0.9," << truth << ',' << correct << ',' << miss << ',' << cold << ',' << ok
         << ',' << stream << '\n';
    return line.str();
}

constexpr long long kStreamStartNs = 1'000'000'000;
constexpr long long kStreamPeriodNs = 33'000'000;

// Two streams batched together, as a task of batch 2 logs them: ids 1..10 each, interleaved.
// s0: frame 1 the cold start, 2 a deadline miss, 7 failed; every frame has a true class, the odd
// ones right; e2e 10 + id ms. s1: frame 5 dropped; no true class; e2e 20 ms. Then s1's frame 3
// appended again (a damaged copy).
std::string twoStreamCsv()
{
    std::string csv = kStreamHeader + "\n";
    for (int i = 1; i <= 10; ++i) {
        const long long capture = kStreamStartNs + i * kStreamPeriodNs;
        csv += streamLine("s0", i, capture, 10 + i, i == 7 ? 0 : 1, i == 2 ? 1 : 0, "circle", i % 2,
            i == 1 ? 1 : 0);
        if (i != 5)
            csv += streamLine("s1", i, capture + 1'000'000, 20, 1, 0, "", 0, i == 1 ? 1 : 0);
    }
    return csv + streamLine("s1", 3, kStreamStartNs + 3 * kStreamPeriodNs + 1'000'000, 20);
}

// A task over several streams: every stream numbers its own frames, so ids repeat across streams
// and are ordered within each; its figures are each stream's alone, as the summary's.
TEST(RunLog, EachStreamKeepsItsOwnFrameIdOrderAndFigures)
{
    TempDir dir;
    writeFile(dir / "t.frames.csv", twoStreamCsv());
    auto table =
        readCsvSegments({dir / "t.frames.csv"}, {"top1_label", "truth_label"}, kStreamOrder);
    ASSERT_TRUE(table.ok()) << table.status().message();
    EXPECT_EQ(table->rows(), 19u);
    ASSERT_EQ(table->damaged.count, 1u);
    EXPECT_NE(table->damaged.examples[0].find(
                  "t.frames.csv:21: frame_id 3 is not greater than the previous line's 10 of "
                  "stream 's1' (a repeated or out-of-order line)"),
        std::string::npos)
        << table->damaged.examples[0];
    EXPECT_TRUE(table->grouped());
    EXPECT_EQ(table->groupNames, (std::vector<std::string> {"s0", "s1"}));
    ASSERT_EQ(table->groups.size(), 19u);
    EXPECT_EQ(table->groups[0], 0u);
    EXPECT_EQ(table->groups[1], 1u);

    const auto gaps = frameGaps(*table);
    ASSERT_EQ(gaps.size(), 1u) << "ids repeated across streams are no gap";
    EXPECT_EQ(table->groups[gaps[0].row], 1u);
    EXPECT_EQ(gaps[0].missing, 1u);

    const auto streams = streamFigures(*table);
    ASSERT_EQ(streams.size(), 2u);
    const StreamFigures& s0 = streams[0];
    EXPECT_EQ(s0.name, "s0");
    EXPECT_EQ(s0.frames, 10u);
    EXPECT_EQ(s0.failed, 1u);
    EXPECT_EQ(s0.missing, 0u);
    // Warm, ok frames 2..10 but 7: e2e 12..20 but 17, nearest rank.
    EXPECT_EQ(s0.endToEnd.count, 8u);
    EXPECT_EQ(s0.endToEnd.p50, 15);
    EXPECT_EQ(s0.endToEnd.p99, 20);
    EXPECT_EQ(s0.deadlineJudged, 9u);
    EXPECT_EQ(s0.deadlineMisses, 1u);
    EXPECT_EQ(s0.scored, 9u) << "the failed frame is not scored";
    EXPECT_EQ(s0.correct, 4u) << "frames 1, 3, 5, 9";
    // Results from capture + e2e: frame i done at i * 34 ms + 10 ms, nine periods of 34 ms.
    EXPECT_NEAR(s0.fps, 9 / 0.306, 1e-6);
    const StreamFigures& s1 = streams[1];
    EXPECT_EQ(s1.name, "s1");
    EXPECT_EQ(s1.frames, 9u);
    EXPECT_EQ(s1.missing, 1u);
    EXPECT_EQ(s1.scored, 0u);
    EXPECT_EQ(s1.endToEnd.count, 8u);
    EXPECT_EQ(s1.endToEnd.p99, 20);
    // Frames 1..10 but 5, captured a period apart, each 20 ms.
    EXPECT_NEAR(s1.fps, 8 / 0.297, 1e-6);
}

// Logs of older runs have no stream column: one group, read and counted as before.
TEST(RunLog, AFrameCsvWithoutAStreamColumnIsOneStream)
{
    TempDir dir;
    writeFile(dir / "t.frames.csv",
        std::string(kHeader) + "\n" + frameLine(1, 1, 0, 1, 50, 1) + frameLine(2, 2, 0, 1, 5, 1) +
            frameLine(2, 3, 0, 1, 5, 1) + frameLine(4, 4, 0, 1, 6, 1));
    auto table = readCsvSegments({dir / "t.frames.csv"}, {"top1_label"}, kStreamOrder);
    ASSERT_TRUE(table.ok()) << table.status().message();
    EXPECT_EQ(table->rows(), 3u);
    EXPECT_EQ(table->damaged.count, 1u) << "a repeated id is still damage";
    EXPECT_FALSE(table->grouped());
    EXPECT_EQ(table->groupNames, (std::vector<std::string> {""}));
    const auto streams = streamFigures(*table);
    ASSERT_EQ(streams.size(), 1u);
    EXPECT_EQ(streams[0].frames, 3u);
    EXPECT_EQ(streams[0].missing, 1u);
}

// A stream value is a name, and a table has few of them: anything else is a damaged line, quoted
// escaped, and adds no stream.
TEST(RunLog, AStreamValueThatIsNoNameOrOneTooManyIsDamaged)
{
    TempDir dir;
    std::string csv = kStreamHeader + "\n" + streamLine("\x1b[2Jx", 1, 1, 5) +
        streamLine(std::string(kMaxCsvGroupBytes + 1, 'a'), 1, 2, 5) +
        streamLine("a,b", 1, 3, 5); // a field too many, whatever the stream
    for (size_t k = 0; k <= kMaxCsvGroups; ++k)
        csv += streamLine("s" + std::to_string(k), 1, 10 + static_cast<long long>(k), 5);
    writeFile(dir / "t.frames.csv", csv);
    auto table = readCsvSegments({dir / "t.frames.csv"}, {"top1_label"}, kStreamOrder);
    ASSERT_TRUE(table.ok()) << table.status().message();
    EXPECT_EQ(table->rows(), kMaxCsvGroups);
    EXPECT_EQ(table->groupNames.size(), kMaxCsvGroups);
    EXPECT_EQ(table->damaged.count, 4u);
    ASSERT_GE(table->damaged.examples.size(), 4u);
    EXPECT_NE(
        table->damaged.examples[0].find("stream is not a name: '\\x1b[2Jx'"), std::string::npos)
        << table->damaged.examples[0];
    EXPECT_NE(table->damaged.examples[1].find("stream is not a name: 'aaaa"), std::string::npos);
    EXPECT_NE(table->damaged.examples[2].find("fields, the header has"), std::string::npos);
    EXPECT_NE(table->damaged.examples[3].find(
                  "stream 's256' is one more than the 256 distinct values a table may have"),
        std::string::npos)
        << table->damaged.examples[3];
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

TEST(RunLog, AnExcerptIsShortAndEscaped)
{
    EXPECT_EQ(escapedExcerpt("12.5ms"), "12.5ms");
    EXPECT_EQ(escapedExcerpt(std::string("a\x01\0\\b\n", 6)), "a\\x01\\x00\\x5cb\\x0a");
    EXPECT_EQ(escapedExcerpt("\xff\xfe"), "\\xff\\xfe");
    const std::string forty(40, 'x');
    EXPECT_EQ(escapedExcerpt(forty), forty) << "40 bytes fit whole";
    EXPECT_EQ(escapedExcerpt(forty + "y"), forty + "...");
    // An escape is never cut in half: it goes whole or not at all.
    EXPECT_EQ(escapedExcerpt(std::string(38, 'x') + "\x01"), std::string(38, 'x') + "...");
    std::string tenEscapes;
    for (int i = 0; i < 10; ++i)
        tenEscapes += "\\x7f";
    EXPECT_EQ(escapedExcerpt(std::string(100'000, '\x7f')), tenEscapes + "...");
}

// A line over the bound is damaged and skipped (the lines after it still read); one at the bound
// is a line like any other; a NUL inside a number is not a number.
TEST(RunLog, ALineLongerThanTheBoundIsDamagedAndTheRestIsRead)
{
    TempDir dir;
    const std::string header = "frame_id,top1_label,e2e_ms\n";
    // "2," + label + ",5": exactly kMaxCsvLineBytes.
    const std::string atBound = "2," + std::string(kMaxCsvLineBytes - 4, 'L') + ",5\n";
    const std::string overBound = "3," + std::string(kMaxCsvLineBytes, 'L') + ",5\n";
    writeFile(dir / "t.frames.csv",
        header + "1,a,4\n" + atBound + overBound +
            std::string("4,a,1\0"
                        "9\n",
                8) +
            "5,a,6\n");
    auto table = readCsvSegments({dir / "t.frames.csv"}, {"top1_label"});
    ASSERT_TRUE(table.ok()) << table.status().message();
    EXPECT_EQ(*table->column("frame_id"), (std::vector<double> {1, 2, 5}));
    EXPECT_EQ(*table->column("e2e_ms"), (std::vector<double> {4, 5, 6}));
    ASSERT_EQ(table->damaged.count, 2u);
    EXPECT_EQ(table->damaged.examples[0],
        dir / "t.frames.csv:4: a line of " + std::to_string(overBound.size() - 1) +
            " bytes, longer than the " + std::to_string(kMaxCsvLineBytes) + " a line may have");
    EXPECT_EQ(
        table->damaged.examples[1], dir / "t.frames.csv:5: e2e_ms is not a number: '1\\x009'");
}

// Segments that cannot be a CSV are skipped whole, each counted once, never quoted at length: a
// first line longer than the bound (read no further), a binary file, too many columns.
TEST(RunLog, ASegmentWithoutAReadableHeaderIsSkippedWhole)
{
    TempDir dir;
    writeFile(dir / "long.csv", std::string(3 * kMaxCsvLineBytes, 'h') + "\n1\n");
    std::string binary;
    for (int i = 0; i < 4096; ++i)
        binary += static_cast<char>((i * 37 + 11) % 256);
    writeFile(dir / "binary.csv", "e2e_ms" + binary + "\n");
    std::string wide = "c0";
    for (size_t i = 1; i <= kMaxCsvColumns; ++i)
        wide += ",c" + std::to_string(i);
    writeFile(dir / "wide.csv", wide + "\n");
    writeFile(dir / "good.csv", "e2e_ms\n7\n");
    auto table =
        readCsvSegments({dir / "long.csv", dir / "binary.csv", dir / "wide.csv", dir / "good.csv"});
    ASSERT_TRUE(table.ok()) << table.status().message();
    EXPECT_EQ(table->names, (std::vector<std::string> {"e2e_ms"}));
    EXPECT_EQ(*table->column("e2e_ms"), (std::vector<double> {7}));
    ASSERT_EQ(table->damaged.count, 3u);
    EXPECT_EQ(table->damaged.examples[0],
        dir / "long.csv:1: no header (the first line is longer than " +
            std::to_string(kMaxCsvLineBytes) + " bytes)");
    EXPECT_NE(
        table->damaged.examples[1].find("binary.csv:1: no header (byte 0x"), std::string::npos)
        << table->damaged.examples[1];
    EXPECT_NE(table->damaged.examples[1].find("binary data, not a CSV"), std::string::npos);
    EXPECT_EQ(table->damaged.examples[2],
        dir / "wide.csv:1: no header (" + std::to_string(kMaxCsvColumns + 1) +
            " columns, more than " + std::to_string(kMaxCsvColumns) + ")");
}

// What a run directory can hold by a segment's name that is not a regular file in it: each is
// refused by name and kind, and a link's target is never read.
struct HostileEntry {
    const char* what;
    const char* name; // in the run directory
    std::function<void(const std::string& path, const std::string& outside)> make;
    const char* why; // in the error
};

const char* const kLinkWhy = "is a symbolic link, which is not followed here";

std::vector<HostileEntry> hostileEntries()
{
    auto link = [](const char* target) {
        return [target](const std::string& path, const std::string& outside) {
            fs::create_symlink(std::string(target) == "OUTSIDE" ? outside : target, path);
        };
    };
    return {
        {"a link to a file outside", "shapes.frames.csv", link("OUTSIDE"), kLinkWhy},
        {"a link to a file inside", "shapes.frames_000001.csv", link("kept.csv"), kLinkWhy},
        {"a link to /dev/zero", "shapes.frames_000001.csv", link("/dev/zero"), kLinkWhy},
        {"a dangling link", "shapes.frames_000001.csv", link("gone.csv"), kLinkWhy},
        {"a FIFO", "shapes.frames_000001.csv",
            [](const std::string& path, const std::string&) {
                ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
            },
            "is a FIFO (named pipe), not a regular file"},
        {"a directory", "shapes.frames_000002.csv",
            [](const std::string& path, const std::string&) { fs::create_directory(path); },
            "is a directory, not a regular file"},
        {"power.csv as a link outside", "power.csv", link("OUTSIDE"), kLinkWhy},
        {"summary.json as a link outside", "summary.json", link("OUTSIDE"), kLinkWhy},
    };
}

// The secret a link points at: a one-column "CSV" whose line a reader of it would quote as damaged
// ("x is not a number: 'root:SECRET-HASH:...'"), as /etc/shadow's lines were.
constexpr const char* kSecret = "x\nroot:SECRET-HASH:19000:0:99999:7:::\n";

TEST(RunLog, ARunFileThatIsNotARegularFileIsRefusedByNameAndKind)
{
    TempDir dir, elsewhere;
    writeFile(elsewhere / "shadow", kSecret);
    writeFile(dir / "kept.csv", "e2e_ms\n1\n");
    for (const HostileEntry& entry : hostileEntries()) {
        SCOPED_TRACE(entry.what);
        const std::string path = dir / (std::string("x-") + entry.name);
        entry.make(path, elsewhere / "shadow");
        auto table = readCsvSegments({dir / "kept.csv", path});
        ASSERT_FALSE(table.ok());
        EXPECT_EQ(table.status().kind(), ErrorKind::InvalidInput);
        EXPECT_EQ(table.status().message().rfind(path + " " + entry.why, 0), 0u)
            << table.status().message();
        fs::remove(path);
    }
    // A device named directly (not through a link) is refused by its kind, never opened.
    uint64_t size = 0;
    auto zero = openRegularFile("/dev/zero", "/dev/zero", size, FileLinks::Refuse);
    ASSERT_FALSE(zero.ok());
    EXPECT_EQ(zero.status().message(), "/dev/zero is a character device, not a regular file");
    // Followed where the caller asks for it (a config the user named).
    fs::create_symlink(dir / "kept.csv", dir / "link.csv");
    EXPECT_TRUE(openRegularFile(dir / "link.csv", "link", size, FileLinks::Follow).ok());
    EXPECT_FALSE(openRegularFile(dir / "link.csv", "link", size, FileLinks::Refuse).ok());
}

TEST(RunReport, HelpTeachesWhatItReadsAndDraws)
{
    TempDir dir;
    auto r = runJetagent({"report", "--help"}, dir.path());
    EXPECT_EQ(r.exitCode, 0);
    for (const char* text :
        {"summary.json", "power.csv", "histogram", "GPIO", "a table per stream", "Examples:", "-o"})
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

// A run directory that `report` reads whole: a summary, two frame segments, power.csv.
std::string writeGoodRun(const TempDir& dir)
{
    const std::string run = dir / "run";
    fs::create_directories(run);
    std::string csv = std::string(kHeader) + "\n";
    for (int i = 1; i <= 5; ++i)
        csv += frameLine(i, 1'000'000'000LL + i * 33'000'000LL, 1, 2, 10, 1);
    writeFile(run + "/shapes.frames.csv", csv);
    writeFile(run + "/shapes.frames_000001.csv",
        std::string(kHeader) + "\n" + frameLine(6, 1'300'000'000, 1, 2, 10, 1));
    writeFile(run + "/power.csv", "time_ns,VDD_IN_W\n1000000000,5\n");
    writeFile(run + "/summary.json", R"({"run": {"stop_reason": "frames"}, "tasks": []})");
    writeFile(run + "/kept.csv", "e2e_ms\n1\n");
    writeFile(dir / "js", kFakeChartJs);
    return run;
}

// A file named like a frame CSV whose task name jetagent could not have written (an escape
// sequence, a newline) is refused with its name escaped, never printed raw.
TEST(RunReport, AFrameCsvNameWithControlBytesIsRefusedEscaped)
{
    TempDir dir;
    const std::string run = writeGoodRun(dir);
    writeFile(run + "/\x1b[2J\nx.frames.csv", std::string(kHeader) + "\n");
    auto r = runJetagent({"report", run, "--chart-js", dir / "js"}, dir.path());
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find(run + ": '\\x1b[2J\\x0ax.frames.csv' is no frame CSV jetagent writes"),
        std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << "the escape reached the terminal";
}

// Where the user meets it: `jetagent report` on a run directory with one hostile entry refuses
// the run (exit 2) naming the file and why, writes no page, and never shows what a link points
// at; a FIFO does not block it (bounded by `timeout`).
TEST(RunReport, ARunFileThatIsALinkAFifoOrADirectoryIsRefusedAndNothingOfItShown)
{
    TempDir elsewhere;
    writeFile(elsewhere / "shadow", kSecret);
    {
        TempDir dir;
        const std::string run = writeGoodRun(dir);
        auto r = runJetagent({"report", run, "--chart-js", dir / "js"}, dir.path());
        ASSERT_EQ(r.exitCode, 0) << "the run without a hostile entry is reported: " << r.err;
    }
    for (const HostileEntry& entry : hostileEntries()) {
        SCOPED_TRACE(entry.what);
        TempDir dir;
        const std::string run = writeGoodRun(dir);
        const std::string path = run + "/" + entry.name;
        fs::remove(path);
        entry.make(path, elsewhere / "shadow");
        auto r =
            runJetagentUnder("timeout 60", {"report", run, "--chart-js", dir / "js"}, dir.path());
        EXPECT_EQ(r.exitCode, 2) << r.err;
        EXPECT_NE(r.err.find("jetagent: " + path + " " + entry.why), std::string::npos) << r.err;
        EXPECT_EQ(r.err.find("SECRET"), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(run + "/report.html")) << "no page from a refused run";
    }
}

// Damaged lines where the user meets them: an over-long line, a binary segment and a long
// hostile cell are counted, on stderr and on the page, each quoted at most as a short escaped
// excerpt; the good frames around them are reported.
TEST(RunReport, DamagedLinesAreCountedAndQuotedOnlyAsShortEscapedExcerpts)
{
    TempDir dir;
    const std::string run = dir / "run";
    fs::create_directories(run);
    const std::string marker = "\x1b[2JSECRET-" + std::string(500, 'z');
    std::string csv = std::string(kHeader) + "\n";
    for (int i = 1; i <= 3; ++i)
        csv += frameLine(i, 1'000'000'000LL + i * 33'000'000LL, 1, 2, 10, 1);
    csv += "4," + std::string(2 * kMaxCsvLineBytes, 'Q') + "\n";
    std::string cells = frameLine(5, 1'200'000'000, 1, 2, 10, 1);
    cells.replace(cells.find(",1,2,"), 2, "," + marker); // wait_ms holds the marker
    csv += cells;
    csv += frameLine(6, 1'300'000'000, 1, 2, 10, 1);
    writeFile(run + "/shapes.frames.csv", csv);
    std::string binary;
    for (int i = 0; i < 1 << 16; ++i)
        binary += static_cast<char>((i * 131 + 7) % 256);
    writeFile(run + "/shapes.frames_000001.csv", binary);
    writeFile(dir / "js", kFakeChartJs);
    auto r = runJetagent({"report", run, "--chart-js", dir / "js"}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.err.find("3 damaged CSV line(s) skipped"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("shapes.frames.csv:5: a line of " +
                  std::to_string(2 * kMaxCsvLineBytes + 2) + " bytes, longer than the"),
        std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("shapes.frames.csv:6: wait_ms is not a number: '\\x1b[2JSECRET-zzz"),
        std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("shapes.frames_000001.csv:1: no header"), std::string::npos) << r.err;
    const std::string page = test::readFile(run + "/report.html");
    for (const std::string& text : {r.err, page}) {
        EXPECT_EQ(text.find(std::string(41, 'z')), std::string::npos) << "quoted at length";
        EXPECT_EQ(text.find("\x1b"), std::string::npos) << "a control byte is echoed";
        EXPECT_EQ(text.find("QQQQQQQQQQ"), std::string::npos) << "the long line is echoed";
    }
    const json data = reportData(page);
    ASSERT_TRUE(data.is_object());
    EXPECT_EQ(data["damaged_lines"], 3);
    EXPECT_EQ(data["tasks"][0]["rows"], 4);
}

// Damaged copies where the user meets them: rows appended again to a frame CSV, frame ids out of
// range or negative, power rows whose time goes back and a power segment naming a column twice
// are counted as damaged (stderr and the page) and left out of the tables, which count the run's
// frames once.
TEST(RunReport, RepeatedOrOutOfRangeFrameIdsAndBackwardPowerTimesAreDamaged)
{
    constexpr int kFrames = 10;
    TempDir dir;
    const std::string run = dir / "run";
    fs::create_directories(run);
    std::string csv = std::string(kHeader) + "\n";
    std::string lines;
    for (int i = 1; i <= kFrames; ++i)
        lines += frameLine(i, 1'000'000'000LL + i * 33'000'000LL, 1, 2, 10, 1);
    csv += lines;
    // Lines 2-5 appended again (4 repeated frames), then two ids that are no uint64.
    std::istringstream again(lines);
    std::string line;
    for (int i = 1; i <= 5 && std::getline(again, line); ++i)
        if (i >= 2)
            csv += line + "\n";
    std::string huge = frameLine(11, 1'400'000'000, 1, 2, 10, 1);
    huge.replace(0, 2, "99999999999999999999999");
    std::string negative = frameLine(12, 1'500'000'000, 1, 2, 10, 1);
    negative.replace(0, 2, "-5");
    csv += huge + negative;
    writeFile(run + "/shapes.frames.csv", csv);
    writeFile(run + "/power.csv",
        "time_ns,VDD_IN_W\n1000000000,5\n1100000000,5\n1050000000,9\n1200000000,5\n");
    writeFile(run + "/power_000001.csv", "time_ns,VDD_IN_W,VDD_IN_W\n1300000000,5,6\n");
    writeFile(dir / "js", kFakeChartJs);
    auto r = runJetagent({"report", run, "--chart-js", dir / "js"}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.err.find("8 damaged CSV line(s) skipped"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("shapes.frames.csv:12: frame_id 2 is not greater than the previous "
                         "line's 10 (a repeated or out-of-order line)"),
        std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("shapes.frames.csv:16: frame_id is out of range"), std::string::npos)
        << r.err;
    // Only the first five damaged lines are quoted; the rest are counted.
    const std::string page = test::readFile(run + "/report.html");
    EXPECT_NE(page.find("8 damaged CSV line(s) skipped"), std::string::npos);
    const json data = reportData(page);
    ASSERT_TRUE(data.is_object());
    EXPECT_EQ(data["damaged_lines"], 8);
    EXPECT_EQ(data["tasks"][0]["rows"], kFrames);
    EXPECT_EQ(data["tasks"][0]["stages_ms"]["end_to_end"]["count"], kFrames);
    EXPECT_EQ(data["power"]["rows"], 3);
    EXPECT_EQ(data["power"]["damaged_lines"], 2);
    EXPECT_EQ(data["power"]["rails_W"]["VDD_IN_W"]["max"], 5.0) << "the backward row is left out";

    // The reasons of the lines not quoted above (five are kept), read directly.
    writeFile(dir / "negative.csv", "frame_id,e2e_ms\n-5,1\n");
    auto frames = readCsvSegments({dir / "negative.csv"}, {}, {"frame_id", "", ""});
    ASSERT_TRUE(frames.ok());
    ASSERT_EQ(frames->damaged.examples.size(), 1u);
    EXPECT_NE(frames->damaged.examples[0].find(
                  "negative.csv:2: frame_id is not a non-negative integer: '-5'"),
        std::string::npos)
        << frames->damaged.examples[0];
    auto power =
        readCsvSegments({run + "/power.csv", run + "/power_000001.csv"}, {}, {"", "time_ns", ""});
    ASSERT_TRUE(power.ok());
    ASSERT_EQ(power->damaged.examples.size(), 2u);
    EXPECT_NE(power->damaged.examples[0].find("power.csv:4: time_ns goes back"), std::string::npos)
        << power->damaged.examples[0];
    EXPECT_NE(power->damaged.examples[1].find(
                  "power_000001.csv:1: a header that names column 'VDD_IN_W' twice"),
        std::string::npos)
        << power->damaged.examples[1];
}

// `report -o` overwrites nothing unless --force, and even then replaces only a regular file: a
// device, a FIFO, a directory or a link at the path stays what it was. The run's own report.html
// is replaced when report runs again, unless it is no regular file.
TEST(RunReport, AnExistingOutputIsRefusedUnlessForcedAndNeverReplacedWhenNotARegularFile)
{
    TempDir dir;
    const std::string run = writeGoodRun(dir);
    const std::vector<std::string> js = {"--chart-js", dir / "js"};
    auto report = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = {"report", run};
        args.insert(args.end(), js.begin(), js.end());
        args.insert(args.end(), extra.begin(), extra.end());
        return runJetagent(args, dir.path());
    };
    const std::string kept = dir / "kept.html";
    writeFile(kept, "an earlier page");
    auto r = report({"-o", kept});
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find("jetagent: " + kept + " exists"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
    EXPECT_EQ(test::readFile(kept), "an earlier page");
    r = report({"-o", kept, "--force"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(test::readFile(kept).find("report-data"), std::string::npos) << "--force replaced it";

    struct Target {
        std::string name;
        std::function<bool(const std::string&)> make;
        std::function<bool(const fs::path&)> still;
        const char* kind;
    };
    const std::vector<Target> targets = {
        {"fifo", [](const std::string& p) { return ::mkfifo(p.c_str(), 0644) == 0; },
            [](const fs::path& p) { return fs::is_fifo(fs::symlink_status(p)); },
            "is a FIFO (named pipe)"},
        {"dir", [](const std::string& p) { return fs::create_directory(p); },
            [](const fs::path& p) { return fs::is_directory(fs::symlink_status(p)); },
            "is a directory"},
        {"link",
            [&](const std::string& p) {
                fs::create_symlink(kept, p);
                return true;
            },
            [](const fs::path& p) { return fs::is_symlink(fs::symlink_status(p)); },
            "is a symbolic link"},
        // /dev/null's numbers (1, 3): mknod needs root, skipped (said so) without it.
        {"null",
            [](const std::string& p) {
                return ::mknod(p.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0;
            },
            [](const fs::path& p) { return fs::is_character_file(fs::symlink_status(p)); },
            "is a character device"},
    };
    for (const Target& target : targets) {
        SCOPED_TRACE(target.name);
        const std::string path = dir / target.name;
        if (!target.make(path)) {
            std::printf("[  SKIPPED ] %s: cannot be made here (%s)\n", target.name.c_str(),
                std::strerror(errno));
            continue;
        }
        for (const std::vector<std::string>& extra : {std::vector<std::string> {"-o", path},
                 std::vector<std::string> {"-o", path, "--force"}}) {
            r = report(extra);
            EXPECT_EQ(r.exitCode, 2) << r.err;
            EXPECT_NE(r.err.find("jetagent: " + path + " "), std::string::npos) << r.err;
            EXPECT_TRUE(target.still(path)) << "replaced";
        }
        EXPECT_NE(report({"-o", path, "--force"}).err.find(target.kind), std::string::npos);
    }
    EXPECT_EQ(test::readFile(kept).find("an earlier page"), std::string::npos);

    // The default page: replaced when report runs again, refused when it is no regular file.
    ASSERT_EQ(report({}).exitCode, 0);
    r = report({});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    fs::remove(run + "/report.html");
    ASSERT_EQ(::mkfifo((run + "/report.html").c_str(), 0644), 0);
    r = report({});
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find(run + "/report.html is a FIFO"), std::string::npos) << r.err;
    EXPECT_TRUE(fs::is_fifo(fs::symlink_status(run + "/report.html")));
    for (const auto& entry : fs::directory_iterator(dir.path()))
        EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos)
            << "a temporary file left behind: " << entry.path();
    for (const auto& entry : fs::directory_iterator(run))
        EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos)
            << "a temporary file left behind: " << entry.path();
}

// The largest resident set of any child waited for so far, in KiB (RUSAGE_CHILDREN keeps the
// maximum over every child).
long childrenPeakRssKib()
{
    struct rusage usage { };
    getrusage(RUSAGE_CHILDREN, &usage);
    return usage.ru_maxrss;
}

// The report streams: a 1 GiB line (a sparse file, no disk used) raises the peak RSS of
// `jetagent report` by less than a few MiB over the same run without it.
TEST(RunReport, AGigabyteLineDoesNotRaiseTheReportsMemory)
{
    constexpr uintmax_t kLineBytes = 1ULL << 30;
    constexpr long kAllowedGrowthKib = 8 * 1024;
    TempDir dir;
    const std::string run = writeGoodRun(dir);
    auto small = runJetagent({"report", run, "--chart-js", dir / "js"}, dir.path());
    ASSERT_EQ(small.exitCode, 0) << small.err;
    const long smallKib = childrenPeakRssKib();
    // A header, then a line of zero bytes to the end of the file; and a segment that is one line
    // of zero bytes, its header: both counted as damaged, neither held.
    writeFile(run + "/shapes.frames_000002.csv", std::string(kHeader) + "\n");
    fs::resize_file(run + "/shapes.frames_000002.csv", kLineBytes);
    writeFile(run + "/shapes.frames_000003.csv", "");
    fs::resize_file(run + "/shapes.frames_000003.csv", kLineBytes);
    auto large = runJetagent({"report", run, "--chart-js", dir / "js"}, dir.path());
    ASSERT_EQ(large.exitCode, 0) << large.err;
    EXPECT_NE(large.err.find("2 damaged CSV line(s) skipped"), std::string::npos) << large.err;
    const uintmax_t lineBytes = kLineBytes - std::string(kHeader).size() - 1;
    EXPECT_NE(large.err.find(
                  "shapes.frames_000002.csv:2: a line of " + std::to_string(lineBytes) + " bytes"),
        std::string::npos)
        << large.err;
    EXPECT_NE(large.err.find("shapes.frames_000003.csv:1: no header (the first line is longer"),
        std::string::npos)
        << large.err;
    const long largeKib = childrenPeakRssKib();
    std::printf("peak RSS of report: %ld KiB, with two 1 GiB lines %ld KiB\n", smallKib, largeKib);
    EXPECT_LT(largeKib - smallKib, kAllowedGrowthKib) << "the report holds a line whole";
}

// summary.json that is not valid JSON says what is wrong, where: a number out of range, a syntax
// error; valid JSON that is not an object says what it holds.
TEST(RunReport, ADamagedSummarySaysWhatIsWrongAndWhere)
{
    TempDir dir;
    const std::string run = writeGoodRun(dir);
    struct Case {
        std::string text;
        std::string expected; // after "RUN/summary.json: "
    };
    const std::string overflow = R"({"run": {"wall_s": 1e400}})";
    const std::string syntax = "{\"run\": tru}";
    const Case cases[] = {
        {overflow,
            "not valid JSON: number overflow parsing '1e400', at byte " +
                std::to_string(overflow.find("1e400") + 5)},
        // The library's wording after this is its own; where it stopped is what matters.
        {syntax, "not valid JSON: parse error at line 1, column 12: syntax error"},
        {"[1, 2]", "not a JSON object (it holds an array)"},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.text);
        writeFile(run + "/summary.json", c.text);
        auto r = runJetagent({"report", run, "--chart-js", dir / "js"}, dir.path());
        EXPECT_EQ(r.exitCode, 2) << r.err;
        EXPECT_NE(r.err.find(run + "/summary.json: " + c.expected), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("move it aside to report the run from its CSVs"), std::string::npos);
    }
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

// A task over two streams where the user meets it: the page tables each stream's figures, draws
// an end-to-end line per stream and says whose frame ids a gap is in; the run's streams are in its
// header. A run of one stream (an older run, without the column) gets no stream table.
TEST(RunReport, ATaskOverSeveralStreamsIsTabledAndDrawnPerStream)
{
    TempDir dir;
    const std::string run = dir / "run";
    fs::create_directories(run);
    writeFile(run + "/shapes.frames.csv", twoStreamCsv());
    writeFile(run + "/summary.json",
        R"({"run": {"stop_reason": "frames"}, "tasks": [], "streams": [)"
        R"({"name": "s0", "uri": "synthetic://shapes"}, {"name": "s1", "uri": "file://a.mp4"}]})");
    writeFile(dir / "js", kFakeChartJs);
    auto r = runJetagent({"report", run, "--chart-js", dir / "js"}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.err.find("1 damaged CSV line(s) skipped"), std::string::npos) << r.err;
    const std::string page = test::readFile(run + "/report.html");
    EXPECT_NE(page.find("id=\"table-streams-0\""), std::string::npos);
    EXPECT_NE(page.find("s0 (synthetic://shapes), s1 (file://a.mp4)"), std::string::npos);

    const json data = reportData(page);
    ASSERT_TRUE(data.is_object());
    EXPECT_EQ(data["tasks"][0]["rows"], 19);
    const json& streams = data["tasks"][0]["streams"];
    ASSERT_EQ(streams.size(), 2u) << streams.dump();
    EXPECT_EQ(streams[0]["name"], "s0");
    EXPECT_EQ(streams[0]["frames"], 10);
    EXPECT_EQ(streams[0]["failed"], 1);
    EXPECT_EQ(streams[0]["e2e_ms"]["p50"], 15.0);
    EXPECT_EQ(streams[0]["deadline"]["misses"], 1);
    EXPECT_EQ(streams[0]["accuracy"]["correct"], 4);
    EXPECT_EQ(streams[0]["accuracy"]["scored"], 9);
    EXPECT_EQ(streams[1]["missing_ids"], 1);
    EXPECT_TRUE(streams[1]["accuracy"].is_null()) << "no frame of s1 has a true class";

    const json charts = reportCharts(page);
    const json* latency = chartOf(charts, "chart-latency-0");
    ASSERT_NE(latency, nullptr);
    const json& sets = (*latency)["config"]["data"]["datasets"];
    ASSERT_GE(sets.size(), 3u);
    EXPECT_EQ(sets[0]["label"], "end to end, s0");
    EXPECT_EQ(sets[0]["data"].size(), 10u);
    EXPECT_EQ(sets[1]["label"], "end to end, s1");
    EXPECT_EQ(sets[1]["data"].size(), 9u);
    EXPECT_NE(sets[0]["borderColor"], sets[1]["borderColor"]);
    EXPECT_EQ(sets[2]["label"], "inference");
    EXPECT_EQ(sets[2]["data"].size(), 19u);
    EXPECT_NE(
        latency->dump().find("1 frame id(s) of s1 missing before this one"), std::string::npos);

    // The streams' order is the run's configuration, wherever each stream's first line falls.
    writeFile(run + "/summary.json",
        R"({"run": {"stop_reason": "frames"}, "tasks": [], "streams": [)"
        R"({"name": "s1", "uri": "file://a.mp4"}, {"name": "s0", "uri": "synthetic://shapes"}]})");
    r = runJetagent({"report", run, "--chart-js", dir / "js"}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::string swapped = test::readFile(run + "/report.html");
    const json swappedData = reportData(swapped);
    const json& reordered = swappedData["tasks"][0]["streams"];
    ASSERT_EQ(reordered.size(), 2u);
    EXPECT_EQ(reordered[0]["name"], "s1");
    EXPECT_EQ(reordered[0]["frames"], 9);
    EXPECT_EQ(reordered[1]["name"], "s0");
    EXPECT_EQ(reordered[1]["frames"], 10);
    const json swappedCharts = reportCharts(swapped);
    const json* drawn = chartOf(swappedCharts, "chart-latency-0");
    ASSERT_NE(drawn, nullptr);
    EXPECT_EQ((*drawn)["config"]["data"]["datasets"][0]["label"], "end to end, s1");
    EXPECT_EQ((*drawn)["config"]["data"]["datasets"][0]["data"].size(), 9u);

    TempDir older;
    const std::string one = writeGoodRun(older);
    r = runJetagent({"report", one, "--chart-js", older / "js"}, older.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.err, "");
    const std::string plain = test::readFile(one + "/report.html");
    EXPECT_EQ(plain.find("table-streams-"), std::string::npos);
    EXPECT_TRUE(reportData(plain)["tasks"][0]["streams"].is_null());
    const json plainCharts = reportCharts(plain);
    const json* single = chartOf(plainCharts, "chart-latency-0");
    ASSERT_NE(single, nullptr);
    EXPECT_EQ((*single)["config"]["data"]["datasets"][0]["label"], "end to end");
    EXPECT_EQ((*single)["config"]["data"]["datasets"][0]["data"].size(), 6u);
}

// The real thing for several streams: `jetagent run` over two synthetic streams through one task
// of batch 2, then `jetagent report`; each stream's figures on the page against summary.json's.
TEST(RunReport, ARealRunOfTwoStreamsAgreesWithItsSummaryPerStream)
{
    TempDir dir;
    writeFile(dir / "c.yaml",
        "sources:\n"
        "  - {name: left, uri: synthetic://shapes, width: 320, height: 240, fps: 30, seed: 5}\n"
        "  - {name: right, uri: synthetic://shapes, width: 320, height: 240, fps: 30, seed: 6}\n"
        "run: {frames: 40, pacing: none}\n"
        "tasks:\n" +
            test::shapesTaskYaml("shapes", "    engine: {batch: 2}\n") +
            "logging: {dir: logs, status_interval_s: 0}\n");
    auto r = runJetagent({"run", "-c", "c.yaml"}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::string run = test::onlyRunDirectory(dir / "logs");
    writeFile(dir / "js", kFakeChartJs);
    r = runJetagent({"report", run, "--chart-js", dir / "js"}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.err, "") << "no line of a two-stream log is damage";
    const json data = reportData(test::readFile(run + "/report.html"));
    ASSERT_TRUE(data.is_object());
    const json summary = json::parse(test::readFile(run + "/summary.json"));
    const json& expected = summary["tasks"][0]["streams"];
    const json& streams = data["tasks"][0]["streams"];
    ASSERT_EQ(expected.size(), 2u) << summary["tasks"][0].dump();
    ASSERT_EQ(streams.size(), 2u);
    for (size_t k = 0; k < 2; ++k) {
        SCOPED_TRACE(expected[k]["name"].get<std::string>());
        EXPECT_EQ(streams[k]["name"], expected[k]["name"]);
        EXPECT_EQ(streams[k]["frames"], expected[k]["frames"]["processed"]);
        EXPECT_EQ(streams[k]["failed"], expected[k]["frames"]["failed"]);
        EXPECT_EQ(streams[k]["missing_ids"], expected[k]["frames"]["dropped"]);
        const json& e2e = expected[k]["latency_ms"]["end_to_end"];
        EXPECT_EQ(streams[k]["e2e_ms"]["count"], e2e["n"]);
        for (const char* figure : {"p50", "p99", "max"})
            EXPECT_NEAR(streams[k]["e2e_ms"][figure].get<double>(), e2e[figure].get<double>(),
                2e-4 + e2e[figure].get<double>() * 1e-3)
                << figure;
        EXPECT_EQ(streams[k]["accuracy"]["scored"], expected[k]["accuracy"]["scored"]);
        EXPECT_EQ(streams[k]["accuracy"]["correct"], expected[k]["accuracy"]["correct"]);
        // The CSV's times are rounded to 1e-4 ms; the rate spans the first to the last result.
        EXPECT_NEAR(streams[k]["fps"].get<double>(), expected[k]["throughput_fps"].get<double>(),
            expected[k]["throughput_fps"].get<double>() * 1e-2);
    }
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

// The pages are web/'s files with their {{placeholders}} filled: none is left on a report page or
// the live page, and the text put in (Chart.js here) is never itself searched for placeholders.
TEST(WebPages, EveryPlaceholderIsFilledAndWhatIsPutInIsNotRescanned)
{
    const std::string chartJs = "var chartJs = '{{title}} {{body}} {{chart_js}}';";
    HtmlPage report("A report");
    report.paragraph("Some text.");
    const std::string live = livePageHtml(chartJs);
    for (std::string page : {report.render(chartJs, nlohmann::json::object()), live}) {
        const size_t at = page.find(chartJs);
        ASSERT_NE(at, std::string::npos);
        page.erase(at, chartJs.size());
        EXPECT_EQ(page.find(chartJs), std::string::npos) << "Chart.js inlined twice";
        EXPECT_EQ(page.find("{{"), std::string::npos) << page.substr(page.find("{{"), 40);
    }
    const std::string html = report.render(chartJs, nlohmann::json::object());
    EXPECT_NE(html.find("<title>A report</title>"), std::string::npos);
    EXPECT_NE(html.find("<body data-charts-expected=\"0\">"), std::string::npos);
    EXPECT_NE(
        html.find("<p>Some text.</p>\n<script type=\"application/json\" id=\"report-charts\">[]"),
        std::string::npos);
    EXPECT_NE(live.find("<title>jetagent live view</title>"), std::string::npos);
}

} // namespace
} // namespace jetagent
