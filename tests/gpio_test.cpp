// GPIO: the chip interface through its fake, and the marker, alert and trigger signals.
#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "config/config.h"
#include "fake_gpio.h"
#include "fake_tasks.h"
#include "jetagent/base/clock.h"
#include "output/frame_log.h"
#include "run/pipeline.h"
#include "service/gpio_signals.h"

namespace jetagent {
namespace {

using test::CountingSource;
using test::FakeGpio;
using test::FakeTask;

constexpr const char* kChip = "gpiochip0";
constexpr unsigned kLines = 64;
constexpr unsigned kMarker = 12;
constexpr unsigned kAlert = 13;
constexpr unsigned kTrigger = 50;
constexpr int64_t kMs = 1'000'000;

Expected<AgentConfig> config(const std::string& gpio)
{
    return parseConfig("tasks:\n"
                       "  - name: watch\n"
                       "    model: a.onnx\n"
                       "  - name: other\n"
                       "    model: b.onnx\n" +
            gpio,
        "gpio.yaml", "/base");
}

struct Fixture {
    Fixture()
    {
        gpio.addChip(kChip, kLines, {{"PQ.06", kAlert}});
        tasks = {&watch, &other};
    }

    // Opens the signals for a config's gpio section; fails the test when it does not open.
    std::unique_ptr<GpioSignals> open(const std::string& section)
    {
        auto c = config(section);
        EXPECT_TRUE(c.ok()) << c.status().message();
        if (!c.ok())
            return nullptr;
        auto s = GpioSignals::open(*c, tasks, gpio.opener());
        EXPECT_TRUE(s.ok()) << s.status().message();
        return s.ok() ? std::move(s.value()) : nullptr;
    }

    // The error opening a config's gpio section with the fake chip.
    std::string openError(const std::string& section)
    {
        auto c = config(section);
        if (!c.ok())
            return c.status().message();
        auto s = GpioSignals::open(*c, tasks, gpio.opener());
        EXPECT_FALSE(s.ok());
        return s.ok() ? "" : s.status().message();
    }

    FakeGpio gpio;
    FakeTask watch {"watch"};
    FakeTask other {"other"};
    std::vector<const Task*> tasks;
};

FrameRecord result(float personScore, int64_t capturedNs = 0)
{
    FrameRecord r;
    r.capturedNs = capturedNs ? capturedNs : monotonicNs();
    r.doneNs = r.capturedNs + 2 * kMs;
    r.topK = 2;
    r.labels[0] = personScore >= 0.5f ? 1 : 0;
    r.labels[1] = personScore >= 0.5f ? 0 : 1;
    r.scores[0] = personScore >= 0.5f ? personScore : 1.0f - personScore;
    r.scores[1] = personScore >= 0.5f ? 1.0f - personScore : personScore;
    return r;
}

TEST(GpioSignals, NoGpioSectionMeansNoSignals)
{
    Fixture f;
    auto c = config("");
    ASSERT_TRUE(c.ok());
    auto s = GpioSignals::open(*c, f.tasks, f.gpio.opener());
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->get(), nullptr);
}

TEST(GpioSignals, BusyMarkerIsActiveExactlyWhileTheTaskInfers)
{
    constexpr uint64_t kFrames = 20;
    Fixture f;
    auto s = f.open("gpio:\n  marker: {chip: gpiochip0, line: 12, mode: busy, task: watch}\n");
    ASSERT_TRUE(s);
    EXPECT_TRUE(f.gpio.requested(kChip, kMarker));
    std::atomic<int> seenActive {0};
    std::atomic<int> seenInactive {0};
    f.watch.probe = [&] { ++(f.gpio.value(kChip, kMarker) ? seenActive : seenInactive); };

    CountingSource source(kFrames);
    RunConfig run;
    run.pacing = Pacing::None;
    {
        Recorder recorder({{"watch", 0, {}}, {"other", 0, {}}}, 1000, 64, nullptr);
        recorder.start();
        Pipeline pipeline(source, run, {&f.watch, &f.other}, recorder);
        pipeline.setHooks(s->hooks());
        s->start();
        pipeline.start();
        ASSERT_TRUE(pipeline.waitFinished(10'000));
        pipeline.join();
    }
    s->stop();
    EXPECT_EQ(seenActive.load(), static_cast<int>(kFrames));
    EXPECT_EQ(seenInactive.load(), 0);
    const auto changes = f.gpio.changes(kChip, kMarker);
    // Requested inactive, then up and down once per frame of the watched task only.
    ASSERT_EQ(changes.size(), 1 + 2 * kFrames);
    EXPECT_FALSE(changes[0].active);
    for (size_t i = 1; i < changes.size(); ++i)
        EXPECT_EQ(changes[i].active, i % 2 == 1) << i;
    EXPECT_FALSE(f.gpio.requested(kChip, kMarker)); // released on stop
    EXPECT_EQ(s->summaryJson()["marker"]["changes"], 2 * kFrames);
}

TEST(GpioSignals, ToggleMarkerFlipsOncePerFrameAndEndsInactive)
{
    constexpr int kFrames = 5;
    Fixture f;
    auto s = f.open("gpio:\n  marker: {line: 12, mode: toggle, task: other, active_low: true}\n");
    ASSERT_TRUE(s);
    s->start();
    for (int i = 0; i < kFrames; ++i) {
        FrameRecord r = result(0.1f);
        s->beforeInference(1, static_cast<uint64_t>(i));
        s->afterInference(1, r);
        s->beforeInference(0, static_cast<uint64_t>(i)); // not the marker's task
        s->afterInference(0, r);
    }
    auto changes = f.gpio.changes(kChip, kMarker);
    ASSERT_EQ(changes.size(), 1u + kFrames);
    for (size_t i = 1; i < changes.size(); ++i)
        EXPECT_EQ(changes[i].active, i % 2 == 1) << i;
    s->stop();
    changes = f.gpio.changes(kChip, kMarker);
    EXPECT_FALSE(changes.back().active); // an odd count ended active: stop drives it inactive
    EXPECT_EQ(changes.size(), 2u + kFrames);
}

TEST(GpioSignals, AlertRisesOnCrossingHoldsAndFallsAfterFramesStop)
{
    Fixture f;
    auto s = f.open("gpio:\n  alert: {line: PQ.06, label: person, threshold: 0.8, hold_s: 0.05}\n");
    ASSERT_TRUE(s);
    s->start();
    FrameRecord below = result(0.7f);
    s->afterInference(0, below);
    FrameRecord otherTask = result(0.95f);
    s->afterInference(1, otherTask); // another task's result does not count
    EXPECT_FALSE(s->alertActive());
    EXPECT_FALSE(f.gpio.value(kChip, kAlert));

    FrameRecord above = result(0.85f);
    const int64_t lastAbove = monotonicNs();
    s->afterInference(0, above);
    EXPECT_TRUE(f.gpio.value(kChip, kAlert));
    // No more frames: the alert still falls, and never before the hold time.
    ASSERT_TRUE(f.gpio.waitFor([&] { return !f.gpio.value(kChip, kAlert); }));
    const auto changes = f.gpio.changes(kChip, kAlert);
    ASSERT_EQ(changes.size(), 3u); // requested inactive, raised, lowered
    EXPECT_TRUE(changes[1].active);
    EXPECT_GE(changes[2].ns - lastAbove, 50 * kMs);
    s->stop();
    const auto j = s->summaryJson()["alert"];
    EXPECT_EQ(j["raised"], 1);
    EXPECT_EQ(j["label"], "person");
    EXPECT_GT(j["active_s"].get<double>(), 0.0);
}

TEST(GpioSignals, AlertStaysUpWhileResultsKeepCrossing)
{
    Fixture f;
    // A long hold, so that a slow machine cannot let it lapse between the frames below.
    auto s = f.open("gpio:\n  alert: {line: 13, task: watch, label: person, threshold: 0.6, "
                    "hold_s: 2}\n");
    ASSERT_TRUE(s);
    s->start();
    for (int i = 0; i < 10; ++i) {
        FrameRecord r = result(i % 2 ? 0.9f : 0.2f); // below in between: the hold covers it
        s->afterInference(0, r);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_TRUE(s->alertActive());
    EXPECT_EQ(f.gpio.changes(kChip, kAlert).size(), 2u); // requested, raised once
    s->stop();
    EXPECT_FALSE(f.gpio.value(kChip, kAlert)); // stop drives it inactive
    EXPECT_FALSE(f.gpio.requested(kChip, kAlert));
    EXPECT_EQ(s->summaryJson()["alert"]["raised"], 1);
}

// Waits until the signals have handled `edges` edges in all.
void drain(FakeGpio& gpio, const GpioSignals& s, uint64_t edges)
{
    ASSERT_TRUE(gpio.waitFor([&] { return s.edgesRead() == edges; }));
    EXPECT_EQ(gpio.pendingEvents(kChip, kTrigger), 0u);
}

TEST(GpioSignals, LevelTriggerWindowsNumberTheFramesCapturedInThem)
{
    Fixture f;
    auto s = f.open("gpio:\n  trigger: {line: 50, mode: level, debounce_ms: 1}\n");
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->hasTrigger());
    const int64_t t0 = monotonicNs();
    s->start(t0);
    f.gpio.injectEdge(kChip, kTrigger, GpioEdge::Rising, t0 + 10 * kMs);
    f.gpio.injectEdge(kChip, kTrigger, GpioEdge::Falling, t0 + 20 * kMs);
    f.gpio.injectEdge(kChip, kTrigger, GpioEdge::Rising, t0 + 30 * kMs);
    drain(f.gpio, *s, 3);
    EXPECT_EQ(s->currentWindow(), 2u);

    const std::vector<std::pair<int64_t, uint32_t>> expected = {{t0 + 5 * kMs, 0},
        {t0 + 12 * kMs, 1}, {t0 + 19 * kMs, 1}, {t0 + 25 * kMs, 0}, {t0 + 31 * kMs, 2}};
    for (const auto& [captured, window] : expected) {
        FrameRecord r = result(0.1f, captured);
        r.window = 99; // overwritten, also with 0
        s->afterInference(0, r);
        EXPECT_EQ(r.window, window) << (captured - t0) / kMs << " ms";
    }
    FrameRecord second = result(0.1f, t0 + 32 * kMs);
    s->afterInference(1, second);
    EXPECT_EQ(second.window, 2u);

    s->stop();
    const auto t = s->summaryJson()["trigger"];
    ASSERT_EQ(t["windows"].size(), 2u);
    const auto& w1 = t["windows"][0];
    EXPECT_EQ(w1["id"], 1);
    EXPECT_EQ(w1["start_ns"], t0 + 10 * kMs);
    EXPECT_EQ(w1["end_ns"], t0 + 20 * kMs);
    EXPECT_DOUBLE_EQ(w1["start_s"].get<double>(), 0.01);
    EXPECT_DOUBLE_EQ(w1["duration_s"].get<double>(), 0.01);
    EXPECT_EQ(w1["closed_by"], "edge");
    EXPECT_EQ(w1["tasks"]["watch"]["frames"], 2);
    EXPECT_DOUBLE_EQ(w1["tasks"]["watch"]["mean_e2e_ms"].get<double>(), 2.0);
    EXPECT_EQ(w1["tasks"]["other"]["frames"], 0);
    EXPECT_TRUE(w1["tasks"]["other"]["mean_e2e_ms"].is_null());
    const auto& w2 = t["windows"][1];
    EXPECT_EQ(w2["closed_by"], "end of run");
    EXPECT_EQ(w2["tasks"]["watch"]["frames"], 1);
    EXPECT_EQ(w2["tasks"]["other"]["frames"], 1);
    EXPECT_EQ(t["edges"], 3);
    const std::string text = GpioSignals::summaryText(s->summaryJson());
    EXPECT_NE(text.find("window 1: 0.010 s to 0.020 s"), std::string::npos) << text;
    EXPECT_NE(text.find("2 windows, 3 edges"), std::string::npos) << text;
}

TEST(GpioSignals, ToggleTriggerOpensAndClosesOnActivatingEdges)
{
    Fixture f;
    auto s = f.open("gpio:\n  trigger: {line: 50, mode: toggle, debounce_ms: 0}\n");
    ASSERT_TRUE(s);
    const int64_t t0 = monotonicNs();
    s->start(t0);
    f.gpio.injectEdge(kChip, kTrigger, GpioEdge::Rising, t0 + 1 * kMs);
    f.gpio.injectEdge(kChip, kTrigger, GpioEdge::Falling, t0 + 2 * kMs);
    drain(f.gpio, *s, 2);
    EXPECT_EQ(s->currentWindow(), 1u); // a release does not close it
    f.gpio.injectEdge(kChip, kTrigger, GpioEdge::Rising, t0 + 3 * kMs);
    f.gpio.injectEdge(kChip, kTrigger, GpioEdge::Falling, t0 + 4 * kMs);
    drain(f.gpio, *s, 4);
    EXPECT_EQ(s->currentWindow(), 0u);
    f.gpio.injectEdge(kChip, kTrigger, GpioEdge::Rising, t0 + 5 * kMs);
    drain(f.gpio, *s, 5);
    EXPECT_EQ(s->currentWindow(), 2u);
    s->stop();
    EXPECT_EQ(s->summaryJson()["trigger"]["windows"].size(), 2u);
}

TEST(GpioSignals, TriggerBounceWithinTheDebounceTimeIsIgnored)
{
    Fixture f;
    auto s = f.open("gpio:\n  trigger: {line: 50, debounce_ms: 5}\n");
    ASSERT_TRUE(s);
    const int64_t t0 = monotonicNs();
    s->start(t0);
    // A press that bounces, then a release that bounces.
    for (int64_t at : {0, 1, 2, 3})
        f.gpio.injectEdge(
            kChip, kTrigger, at % 2 ? GpioEdge::Falling : GpioEdge::Rising, t0 + at * kMs);
    drain(f.gpio, *s, 4);
    EXPECT_EQ(s->currentWindow(), 1u); // the falling bounces did not close it
    for (int64_t at : {100, 101, 102})
        f.gpio.injectEdge(
            kChip, kTrigger, at % 2 ? GpioEdge::Rising : GpioEdge::Falling, t0 + at * kMs);
    drain(f.gpio, *s, 7);
    EXPECT_EQ(s->currentWindow(), 0u); // the rising bounce did not open another
    s->stop();
    const auto t = s->summaryJson()["trigger"];
    EXPECT_EQ(t["windows"].size(), 1u);
    EXPECT_EQ(t["edges"], 2);
    EXPECT_EQ(t["bounces_ignored"], 5);
    EXPECT_EQ(t["windows"][0]["end_ns"], t0 + 100 * kMs);
}

TEST(GpioSignals, LevelTriggerAlreadyActiveAtStartOpensTheFirstWindow)
{
    Fixture f;
    f.gpio.setLevel(kChip, kTrigger, true);
    auto s = f.open("gpio:\n  trigger: {line: 50}\n");
    ASSERT_TRUE(s);
    s->start();
    EXPECT_EQ(s->currentWindow(), 1u);
    s->stop();
    EXPECT_EQ(s->currentWindow(), 0u);
    EXPECT_FALSE(f.gpio.requested(kChip, kTrigger));
}

TEST(GpioSignals, ConfigProblemsNameTheKey)
{
    Fixture f;
    auto has = [](const std::string& message, const std::string& part) {
        EXPECT_NE(message.find(part), std::string::npos) << message;
    };
    std::string e = f.openError("gpio:\n  marker: {line: 12, task: nope}\n");
    has(e, "gpio.yaml:7: gpio.marker.task");
    has(e, "no task named 'nope' (tasks: watch, other)");

    e = f.openError("gpio:\n  alert:\n    line: 13\n    label: cat\n");
    has(e, "gpio.yaml:9: gpio.alert.label");
    has(e, "no label 'cat'");

    e = f.openError("gpio:\n  marker: {line: 12, mode: blink}\n");
    has(e, "gpio.marker.mode: must be one of busy, toggle (got 'blink')");
    e = f.openError("gpio:\n  trigger: {line: 50, mode: edge}\n");
    has(e, "gpio.trigger.mode: must be one of level, toggle");
    e = f.openError("gpio:\n  trigger: {chip: gpiochip0}\n");
    has(e, "gpio.trigger.line: missing");
    e = f.openError("gpio:\n  alert: {line: 13, threshold: 1.5, label: person}\n");
    has(e, "gpio.alert.threshold: must be at least 0 and at most 1");
    e = f.openError("gpio:\n  trigger: {line: 50, edge: rising}\n");
    has(e, "gpio.trigger.edge: unknown key");

    e = f.openError("gpio:\n  marker: {chip: gpiochip7, line: 12}\n");
    has(e, "gpio.marker.chip");
    has(e, "'gpiochip7' not found");
    e = f.openError("gpio:\n  marker: {line: 64}\n");
    has(e, "gpio.yaml:7: gpio.marker.line");
    has(e, "line 64 does not exist on gpiochip0, which has 64 lines");
    e = f.openError("gpio:\n  trigger: {line: PZ.99}\n");
    has(e, "gpio.trigger.line");
    has(e, "no line named 'PZ.99' on gpiochip0 ('fake-gpiochip0', 64 lines");
    // Two signals on one line: the second finds it busy.
    e = f.openError("gpio:\n  marker: {line: 13}\n  alert: {line: PQ.06, label: person}\n");
    has(e, "gpio.alert.line");
    has(e, "busy");
    EXPECT_FALSE(f.gpio.requested(kChip, kAlert)); // the marker's line was released again
}

TEST(GpioChipLibgpiod, AMissingChipNamesItAndTheChipsPresent)
{
    auto chip = openGpiodChip("gpiochip-jetagent-test");
    ASSERT_FALSE(chip.ok());
    EXPECT_EQ(chip.status().kind(), ErrorKind::NotFound);
    const std::string m = chip.status().message();
    EXPECT_NE(m.find("GPIO chip 'gpiochip-jetagent-test' not found"), std::string::npos) << m;
    if (listGpioChips().empty())
        EXPECT_NE(m.find("no GPIO chips are present"), std::string::npos) << m;
    else
        EXPECT_NE(m.find("chips present: " + listGpioChips().front()), std::string::npos) << m;
}

TEST(GpioFrameLog, WindowColumnOnlyWhenEnabled)
{
    FrameRecord r = result(0.9f);
    r.window = 3;
    TaskLog plain("t", {"background", "person"}, 16);
    std::string csv;
    std::string json;
    plain.formatCsv(r, csv);
    plain.formatJson(r, json);
    EXPECT_EQ(json.find("window"), std::string::npos);
    TaskLog windowed("t", {"background", "person"}, 16);
    windowed.enableWindowColumn();
    std::string csvW;
    std::string jsonW;
    windowed.formatCsv(r, csvW);
    windowed.formatJson(r, jsonW);
    EXPECT_EQ(csvW, csv.substr(0, csv.size() - 1) + ",3\n");
    EXPECT_NE(jsonW.find(",\"window\":3}"), std::string::npos) << jsonW;
}

} // namespace
} // namespace jetagent

namespace jetagent {
namespace {

TEST(GpioProbe, ListsLinesWithNamesAndWhoHoldsThem)
{
    test::FakeGpio gpio;
    gpio.addChip("gpiochip0", 3, {{"PQ.06", 1}});
    auto held = gpio.opener()("gpiochip0");
    ASSERT_TRUE(held.ok());
    auto line = (*held)->requestOutput(2, "jetagent-marker", false, false);
    ASSERT_TRUE(line.ok());

    const auto reports = probeGpio({"gpiochip0", "gpiochip9"}, gpio.opener());
    ASSERT_EQ(reports.size(), 2u);
    ASSERT_EQ(reports[0].lines.size(), 3u);
    EXPECT_EQ(reports[0].lines[1].name, "PQ.06");
    EXPECT_FALSE(reports[0].lines[1].used);
    EXPECT_TRUE(reports[0].lines[2].used);
    EXPECT_EQ(reports[0].lines[2].consumer, "jetagent-marker");
    EXPECT_NE(reports[1].error.find("'gpiochip9' not found"), std::string::npos);
    const std::string text = formatGpioReport(reports);
    EXPECT_NE(text.find("gpiochip0 [fake-gpiochip0] 3 lines"), std::string::npos) << text;
    EXPECT_NE(text.find("PQ.06"), std::string::npos) << text;
    EXPECT_NE(text.find("used by jetagent-marker, output"), std::string::npos) << text;
    EXPECT_NE(text.find("gpiochip9: GPIO chip 'gpiochip9' not found"), std::string::npos) << text;
    EXPECT_EQ(formatGpioReport({}), "No GPIO chips: /dev/gpiochip* does not exist.\n");
}

} // namespace
} // namespace jetagent
