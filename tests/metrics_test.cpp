// Prometheus' expositions (metrics/): the writer's two formats, the latency buckets the recorder
// keeps, the families built from a task's statistics, and the textfiles of finished work.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "metrics/exposition.h"
#include "metrics/prom_textfile.h"
#include "metrics/run_metrics.h"
#include "run/recorder.h"
#include "test_support.h"

namespace jetagent {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kMs = 1'000'000;

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

// A histogram of 0.1, 0.5 and 2 s over the bounds 0.5 and 1.
std::vector<MetricFamily> sampleFamilies()
{
    MetricSet set;
    set.add("demo_frames", MetricType::Counter, "", "Frames \\ seen\nso far.",
        {{"task", "a\"b"}, {"stream", "x\\y\nz"}}, 42);
    set.add("demo_power_watts", MetricType::Gauge, "watts", "Power.", {{"rail", "VDD_IN"}}, 5.25);
    set.add("demo_build", MetricType::Info, "", "Build.", {{"version", "1.0"}}, 1);
    MetricFamily& h = set.family("demo_latency_seconds", MetricType::Histogram, "seconds", "Lat.");
    MetricSample s;
    s.labels = {{"stage", "end_to_end"}};
    s.bounds = {0.5, 1.0};
    s.cumulative = {2, 2, 3};
    s.sum = 2.6;
    h.samples.push_back(s);
    set.family("demo_empty", MetricType::Gauge, "", "Never set.");
    return set.families();
}

TEST(MetricsExposition, Text004)
{
    const std::string text = writeExposition(sampleFamilies(), ExpositionFormat::Text004);
    const std::string expected = "# HELP demo_frames_total Frames \\\\ seen\\nso far.\n"
                                 "# TYPE demo_frames_total counter\n"
                                 "demo_frames_total{task=\"a\\\"b\",stream=\"x\\\\y\\nz\"} 42\n"
                                 "# HELP demo_power_watts Power.\n"
                                 "# TYPE demo_power_watts gauge\n"
                                 "demo_power_watts{rail=\"VDD_IN\"} 5.25\n"
                                 "# HELP demo_build_info Build.\n"
                                 "# TYPE demo_build_info gauge\n"
                                 "demo_build_info{version=\"1.0\"} 1\n"
                                 "# HELP demo_latency_seconds Lat.\n"
                                 "# TYPE demo_latency_seconds histogram\n"
                                 "demo_latency_seconds_bucket{stage=\"end_to_end\",le=\"0.5\"} 2\n"
                                 "demo_latency_seconds_bucket{stage=\"end_to_end\",le=\"1\"} 2\n"
                                 "demo_latency_seconds_bucket{stage=\"end_to_end\",le=\"+Inf\"} 3\n"
                                 "demo_latency_seconds_sum{stage=\"end_to_end\"} 2.6\n"
                                 "demo_latency_seconds_count{stage=\"end_to_end\"} 3\n";
    EXPECT_EQ(text, expected);
}

TEST(MetricsExposition, OpenMetrics)
{
    const std::string text = writeExposition(sampleFamilies(), ExpositionFormat::OpenMetrics100);
    // Families are named without _total and _info, units declared, help escapes quotes too.
    EXPECT_TRUE(contains(text,
        "# HELP demo_frames Frames \\\\ seen\\nso far.\n# TYPE demo_frames counter\n"
        "demo_frames_total{"))
        << text;
    EXPECT_TRUE(contains(text,
        "# TYPE demo_power_watts gauge\n# UNIT demo_power_watts watts\n"
        "demo_power_watts{rail=\"VDD_IN\"} 5.25\n"))
        << text;
    EXPECT_TRUE(contains(text, "# TYPE demo_build info\ndemo_build_info{version=\"1.0\"} 1\n"))
        << text;
    EXPECT_TRUE(contains(text, "# UNIT demo_latency_seconds seconds\n")) << text;
    EXPECT_FALSE(contains(text, "demo_empty")) << "a family without samples is left out";
    ASSERT_GE(text.size(), 6u);
    EXPECT_EQ(text.substr(text.size() - 6), "# EOF\n");
}

TEST(MetricsExposition, ContentNegotiation)
{
    EXPECT_EQ(negotiateExposition(""), ExpositionFormat::Text004);
    EXPECT_EQ(negotiateExposition("text/plain;version=0.0.4"), ExpositionFormat::Text004);
    // What Prometheus 2.x sends.
    EXPECT_EQ(negotiateExposition("application/openmetrics-text;version=1.0.0,application/"
                                  "openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;"
                                  "q=0.5,*/*;q=0.1"),
        ExpositionFormat::OpenMetrics100);
    EXPECT_STREQ(expositionContentType(ExpositionFormat::Text004),
        "text/plain; version=0.0.4; charset=utf-8");
    EXPECT_STREQ(expositionContentType(ExpositionFormat::OpenMetrics100),
        "application/openmetrics-text; version=1.0.0; charset=utf-8");
}

TEST(MetricsExposition, NumbersReadBackExactly)
{
    EXPECT_EQ(formatMetricNumber(0.0005), "0.0005");
    EXPECT_EQ(formatMetricNumber(0.0333), "0.0333");
    EXPECT_EQ(formatMetricNumber(10), "10");
    EXPECT_EQ(formatMetricNumber(1.5104e9), "1510400000");
    EXPECT_EQ(formatMetricNumber(-0.0), "-0");
    EXPECT_EQ(formatMetricNumber(1e300), "1e+300");
    EXPECT_EQ(formatMetricNumber(0.1 + 0.2), "0.30000000000000004");
    EXPECT_EQ(formatMetricNumber(1.0 / 0.0), "+Inf");
    EXPECT_EQ(formatMetricNumber(-1.0 / 0.0), "-Inf");
    EXPECT_EQ(formatMetricNumber(std::nan("")), "NaN");
}

TEST(LatencyBuckets, LadderWithTheDeadlineAmongTheBounds)
{
    const auto plain = latencyBucketBounds(0);
    ASSERT_EQ(plain->size(), 27u);
    EXPECT_EQ(plain->front(), 500'000);
    EXPECT_EQ(plain->back(), 10'000'000'000);
    EXPECT_TRUE(std::is_sorted(plain->begin(), plain->end()));
    for (size_t i = 1; i < plain->size(); ++i)
        EXPECT_LE((*plain)[i] * 10, (*plain)[i - 1] * 20) << "neighbours within a factor of 2";
    // 33.3 ms is not on the ladder: inserted in order; 50 ms is: not twice.
    const auto odd = latencyBucketBounds(33'300'000);
    EXPECT_EQ(odd->size(), 28u);
    EXPECT_TRUE(std::is_sorted(odd->begin(), odd->end()));
    EXPECT_NE(std::find(odd->begin(), odd->end(), 33'300'000), odd->end());
    EXPECT_EQ(latencyBucketBounds(50 * kMs)->size(), 27u);
    EXPECT_LE(odd->size(), StageBuckets::kMaxBounds);
}

TEST(LatencyBuckets, UpperBoundsAreInclusiveAndCountsExact)
{
    StageBuckets b(latencyBucketBounds(33'300'000));
    const auto& bounds = b.bounds();
    const size_t deadline =
        static_cast<size_t>(std::find(bounds.begin(), bounds.end(), 33'300'000) - bounds.begin());
    b.add({33'300'000, 0, 0, 0, 0}); // exactly the deadline: its bucket
    b.add({33'300'001, 0, 0, 0, 0}); // just over: the next
    b.add({20'000'000'000, -5, 0, 0, 0}); // past every bound; a negative wait counts as 0
    EXPECT_EQ(b.count(), 3u);
    const auto& e2e = b.counts(LatencyStage::EndToEnd);
    EXPECT_EQ(e2e[deadline], 1u);
    EXPECT_EQ(e2e[deadline + 1], 1u);
    EXPECT_EQ(e2e.back(), 1u);
    EXPECT_EQ(b.counts(LatencyStage::Wait).front(), 3u);
    EXPECT_EQ(b.sumNs(LatencyStage::EndToEnd), 33'300'000 + 33'300'001 + 20'000'000'000);

    StageBuckets other(b.shareBounds());
    other.add({1 * kMs, 1 * kMs, 1 * kMs, 1 * kMs, 1 * kMs});
    ASSERT_TRUE(b.merge(other));
    EXPECT_EQ(b.count(), 4u);
    StageBuckets foreign(latencyBucketBounds(0));
    EXPECT_FALSE(b.merge(foreign)) << "other bounds are refused";
    EXPECT_EQ(b.count(), 4u);
}

// A record with stages of 1 (wait), 2, `inferMs` and 1 ms.
FrameRecord record(uint64_t id, uint16_t stream, int64_t inferMs, bool cold = false)
{
    FrameRecord r;
    r.frameId = id;
    r.stream = stream;
    r.capturedNs = 1'000 * kMs + static_cast<int64_t>(id) * 40 * kMs;
    r.dequeuedNs = r.capturedNs + 1 * kMs;
    r.preprocessedNs = r.dequeuedNs + 2 * kMs;
    r.inferredNs = r.preprocessedNs + inferMs * kMs;
    r.doneNs = r.inferredNs + 1 * kMs;
    r.batch = 1;
    r.coldStart = cold;
    return r;
}

TEST(TaskStatsBuckets, SteadyStateOnlyLikeTheSummarySeries)
{
    TaskStats stats(100, 20 * kMs);
    for (uint64_t i = 0; i < 10; ++i) {
        FrameRecord r = record(i, 0, i == 0 ? 200 : static_cast<int64_t>(i) * 3, i == 0);
        r.times = Recorder::derive(r, stats.deadlineNs());
        stats.add(r);
    }
    FrameRecord failed = record(10, 0, 5);
    failed.ok = false;
    failed.times = Recorder::derive(failed, stats.deadlineNs());
    stats.add(failed);
    // The cold start and the failed frame are in neither the series nor the buckets.
    EXPECT_EQ(stats.buckets.count(), stats.endToEnd.count());
    EXPECT_EQ(stats.buckets.count(), 9u);
    EXPECT_EQ(stats.buckets.sumNs(LatencyStage::Inference),
        static_cast<int64_t>(3 + 6 + 9 + 12 + 15 + 18 + 21 + 24 + 27) * kMs);
    const auto& bounds = stats.buckets.bounds();
    EXPECT_NE(std::find(bounds.begin(), bounds.end(), 20 * kMs), bounds.end());
}

std::string exposition(const MetricSet& set)
{
    return writeExposition(set.families(), ExpositionFormat::Text004);
}

TEST(RunMetrics, OneStreamTaskIsLabelledWithItsStream)
{
    TaskStats stats(100, 33'300'000);
    for (uint64_t i = 0; i < 5; ++i) {
        FrameRecord r = record(i, 1, 4 + static_cast<int64_t>(i) * 10, i == 0);
        r.times = Recorder::derive(r, stats.deadlineNs());
        stats.add(r);
    }
    TaskMetricsInput input;
    input.task = "shapes";
    input.streamNames = {"front", "main"};
    input.singleStream = 1;
    input.dropped = [](size_t stream) -> uint64_t { return stream == 1 ? 7 : 0; };
    input.queueDepth = [](size_t) { return 1.0; };
    MetricSet set;
    addTaskMetrics(set, stats, input);
    const std::string text = exposition(set);
    const std::string labels = "task=\"shapes\",stream=\"main\"";
    EXPECT_TRUE(contains(text, "jetagent_frames_processed_total{" + labels + "} 5\n")) << text;
    EXPECT_TRUE(contains(text, "jetagent_frames_dropped_total{" + labels + "} 7\n")) << text;
    EXPECT_TRUE(contains(text, "jetagent_frames_failed_total{" + labels + "} 0\n")) << text;
    EXPECT_TRUE(contains(text, "jetagent_queue_depth{" + labels + "} 1\n")) << text;
    EXPECT_FALSE(contains(text, "jetagent_frames_per_second")) << "no fps without a source";
    // End to end 18, 28, 38, 48 ms (the cold start left out): two within the deadline.
    EXPECT_TRUE(contains(text, "jetagent_deadline_misses_total{" + labels + "} 2\n")) << text;
    EXPECT_TRUE(contains(text,
        "jetagent_frame_latency_seconds_bucket{" + labels +
            ",stage=\"end_to_end\",le=\"0.0333\"} 2\n"))
        << text;
    EXPECT_TRUE(contains(
        text, "jetagent_frame_latency_seconds_count{" + labels + ",stage=\"inference\"} 4\n"))
        << text;
    EXPECT_TRUE(contains(text, "jetagent_deadline_seconds{task=\"shapes\"} 0.0333\n")) << text;
    for (const char* stage : {"end_to_end", "wait", "preprocess", "inference", "postprocess"})
        EXPECT_TRUE(contains(text, std::string("stage=\"") + stage + "\",le=\"+Inf\"} 4\n"))
            << stage;
    // An unpaced run judges no frame: its deadline is not given.
    input.deadlineJudged = false;
    MetricSet unpaced;
    addTaskMetrics(unpaced, stats, input);
    EXPECT_FALSE(contains(exposition(unpaced), "jetagent_deadline_seconds"));
}

TEST(RunMetrics, AStreamEachForATaskOverSeveral)
{
    TaskStats stats(100, 0, {0, 2});
    for (uint64_t i = 0; i < 6; ++i) {
        FrameRecord r = record(i, i % 2 == 0 ? 0 : 2, 5, i == 0);
        r.times = Recorder::derive(r, 0);
        stats.add(r);
    }
    TaskMetricsInput input;
    input.task = "t";
    input.streamNames = {"front", "side", "rear"};
    MetricSet set;
    addTaskMetrics(set, stats, input);
    const std::string text = exposition(set);
    EXPECT_TRUE(contains(text, "jetagent_frames_processed_total{task=\"t\",stream=\"front\"} 3\n"))
        << text;
    EXPECT_TRUE(contains(text, "jetagent_frames_processed_total{task=\"t\",stream=\"rear\"} 3\n"))
        << text;
    EXPECT_FALSE(contains(text, "stream=\"side\"")) << "the task does not serve it";
    EXPECT_FALSE(contains(text, "jetagent_deadline_seconds")) << "no deadline, no gauge";
    EXPECT_TRUE(contains(text,
        "jetagent_frame_latency_seconds_count{task=\"t\",stream=\"front\",stage=\"end_to_end\"} "
        "2\n"))
        << text;
}

// Between the recorder handing its statistics to the summary (a move) and the live server's
// detach, a scrape reads statistics moved from: their histograms are left out, nothing crashes.
TEST(RunMetrics, StatisticsMovedOutLeaveNoHistogram)
{
    TaskStats stats(100, 0, {0, 2});
    for (uint64_t i = 0; i < 4; ++i) {
        FrameRecord r = record(i, i % 2 == 0 ? 0 : 2, 5, i == 0);
        r.times = Recorder::derive(r, 0);
        stats.add(r);
    }
    TaskStats single(100, 0);
    const TaskStats taken = std::move(stats);
    const TaskStats takenSingle = std::move(single);
    EXPECT_EQ(taken.buckets.count(), 3u);
    TaskMetricsInput input;
    input.task = "t";
    input.streamNames = {"front", "side", "rear"};
    MetricSet set;
    addTaskMetrics(set, stats, input); // NOLINT(bugprone-use-after-move): the case tested
    addTaskMetrics(set, single, input); // NOLINT(bugprone-use-after-move)
    EXPECT_FALSE(contains(exposition(set), "jetagent_frame_latency_seconds"));
    StageBuckets moved(latencyBucketBounds(0));
    StageBuckets into = std::move(moved);
    EXPECT_FALSE(moved.merge(into)); // NOLINT(bugprone-use-after-move)
}

TEST(PromTextfile, DirectoryCheckedAndFileReplacedWhole)
{
    test::TempDir dir;
    const std::string missing = (fs::path(dir.path()) / "nope").string();
    Status s = checkPromTextfileDir(missing);
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(contains(s.message(), "--prom-textfile " + missing)) << s.message();
    const std::string file = (fs::path(dir.path()) / "file").string();
    std::ofstream(file) << "x";
    s = checkPromTextfileDir(file);
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(contains(s.message(), "not a directory")) << s.message();
    EXPECT_FALSE(checkPromTextfileDir("").ok());
    ASSERT_TRUE(checkPromTextfileDir(dir.path()).ok());

    EXPECT_EQ(promTextfileName("run"), "jetagent_run.prom");
    EXPECT_EQ(promTextfileName("bench", "shapes cnn/v1.2"), "jetagent_bench_shapes_cnn_v1_2.prom");
    MetricSet set;
    addLastRunTimestamp(set, 1.7e9);
    for (int i = 0; i < 2; ++i)
        ASSERT_TRUE(writePromTextfile(dir.path(), "jetagent_run.prom", set.families()).ok());
    size_t files = 0;
    for (const auto& entry : fs::directory_iterator(dir.path()))
        files += entry.path().filename() != "file";
    EXPECT_EQ(files, 1u) << "no temporary file is left";
    std::ifstream in(fs::path(dir.path()) / "jetagent_run.prom");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, test::readFile(dir / "jetagent_run.prom"));
    EXPECT_TRUE(contains(text, "jetagent_last_run_timestamp_seconds{work=\"run\"} 1700000000\n"))
        << text;
}

} // namespace
} // namespace jetagent
