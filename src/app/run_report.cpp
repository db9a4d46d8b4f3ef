// `jetagent report RUN_DIR`: one run's logs (a `run`'s or the service's) as one offline HTML page.
#include "run_report.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <utility>

#include <spdlog/fmt/fmt.h>

#include "html_report.h"
#include "jetagent/base/regular_file.h"
#include "jetagent/engines/cache_file.h"
#include "report_file.h"

namespace jetagent {

namespace {

using json = nlohmann::json;

constexpr int kWideChart = 1100;
constexpr int kTallChart = 420;
constexpr int kSmallChart = 540;
constexpr int kShortChart = 260;
constexpr int kHistogramBins = 40;
constexpr double kNsPerS = 1e9;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The frame CSV's text columns: read as whether they hold text, never counted as damage.
const std::set<std::string> kFrameTextColumns = {"top1_label", "truth_label"};
// Its lines' order: each stream's frame ids rise (a task's lines interleave its streams').
const CsvOrder kFrameOrder = {"frame_id", "", "stream"};

// The stages with a histogram and a percentile table: the CSV column, the name shown and the
// summary.json key of the same figure (tasks[].latency_ms.KEY).
struct Stage {
    const char* column;
    const char* name;
    const char* summaryKey;
};
constexpr Stage kStages[] = {{"queue_ms", "queue", "queue"}, {"wait_ms", "wait", "wait"},
    {"preprocess_ms", "preprocess", "preprocess"}, {"inference_ms", "inference", "inference"},
    {"postprocess_ms", "postprocess", "postprocess"}, {"e2e_ms", "end to end", "end_to_end"}};

std::string number(double value)
{
    if (!std::isfinite(value))
        return "—";
    return fmt::format("{:.4g}", value);
}

std::string textOf(const json& value)
{
    if (value.is_null())
        return "—";
    if (value.is_string())
        return value.get<std::string>();
    if (value.is_number())
        return number(value.get<double>());
    return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

json axis(const std::string& title, const char* type = "linear")
{
    return {{"type", type}, {"title", {{"display", true}, {"text", title}}}};
}

// A scatter dataset of (x, y) points; a line when `line`, else dots of `radius`.
json series(const std::string& label, json points, size_t colourIndex, bool line, int radius = 2)
{
    json set = {{"label", label}, {"data", std::move(points)},
        {"backgroundColor", chartColour(colourIndex)}, {"borderColor", chartColour(colourIndex)},
        {"showLine", line}, {"pointRadius", line ? 0 : radius}, {"borderWidth", 1},
        // Named, not left to Chart.js: it would take the first y scale by name ("onoff" < "y").
        {"yAxisID", "y"},
        // Chart.js draws a lower order on top: the marked frames over the lines.
        {"order", line ? 1 : 0}};
    return set;
}

json scatterConfig(json datasets, json scales)
{
    return {{"type", "scatter"}, {"data", {{"datasets", std::move(datasets)}}},
        {"options", {{"scales", std::move(scales)}, {"parsing", false}, {"normalized", true}}}};
}

// `y` against `x`, both columns of one table, cut to `maxPoints` keeping spikes; with `rows`,
// only the rows it marks.
json pointsOf(const std::vector<double>& x, const std::vector<double>& y,
    size_t maxPoints = kReportMaxPoints, const std::function<bool(size_t)>& rows = nullptr)
{
    json points = json::array();
    std::vector<double> paired(y.size(), kNaN);
    for (size_t i = 0; i < y.size() && i < x.size(); ++i)
        if (std::isfinite(x[i]) && (!rows || rows(i)))
            paired[i] = y[i];
    for (const size_t i : decimateMinMax(paired, maxPoints))
        points.push_back({{"x", x[i]}, {"y", y[i]}});
    return points;
}

// A stream's name as the page shows it: rows of a segment without the column have none.
std::string streamLabel(const std::string& name)
{
    return name.empty() ? "(no stream column)" : name;
}

// The colour of a stream's line: the first the task's own end-to-end line's, the others those the
// inference line and the markers leave free.
size_t streamColour(size_t stream)
{
    constexpr size_t kFree[] = {3, 5, 7, 8, 9};
    return stream == 0 ? 0 : kFree[(stream - 1) % (sizeof(kFree) / sizeof(kFree[0]))];
}

// One task's frames with the time of each row in seconds since the run's first capture.
struct TaskView {
    size_t index;
    std::string name;
    CsvColumns frames;
    std::vector<double> timeS;
    const json* summary; // its tasks[] entry in summary.json, or null
};

const std::vector<double>& col(const TaskView& task, const char* name)
{
    static const std::vector<double> none;
    const std::vector<double>* column = task.frames.column(name);
    return column ? *column : none;
}

// Rows of `task` where `column` equals 1 (or, with `zero`, 0), as points of `y` at their time.
json markedPoints(const TaskView& task, const char* column, bool zero, const std::vector<double>& y)
{
    const std::vector<double>& flag = col(task, column);
    json points = json::array();
    for (size_t r = 0; r < flag.size() && r < y.size(); ++r)
        if (std::isfinite(task.timeS[r]) && flag[r] == (zero ? 0.0 : 1.0) &&
            points.size() < kReportMaxPoints)
            points.push_back({{"x", task.timeS[r]}, {"y", std::isfinite(y[r]) ? y[r] : 0.0}});
    return points;
}

// `spans` as an on/off step line, shaded below, on a 0..1 axis of its own (onOffAxis()).
json stepSeries(const std::string& label, const std::vector<TimeSpan>& spans, const char* fill)
{
    json points = json::array();
    for (const TimeSpan& s : spans) {
        points.push_back({{"x", s.startS}, {"y", 0}});
        points.push_back({{"x", s.startS}, {"y", 1}});
        points.push_back({{"x", s.endS}, {"y", 1}});
        points.push_back({{"x", s.endS}, {"y", 0}});
    }
    json set = series(label, std::move(points), 0, true);
    set["yAxisID"] = "onoff";
    set["order"] = 2;
    set["fill"] = true;
    set["backgroundColor"] = fill;
    set["borderColor"] = "rgba(120,120,120,0.6)";
    return set;
}

json onOffAxis(const std::string& title)
{
    return {{"type", "linear"}, {"position", "right"}, {"min", 0}, {"max", 1},
        {"grid", {{"drawOnChartArea", false}}}, {"title", {{"display", true}, {"text", title}}}};
}

void latencyChart(
    HtmlPage& page, const TaskView& task, std::optional<uint64_t> summaryDrops, int64_t originNs)
{
    const std::string id = "chart-latency-" + std::to_string(task.index);
    const std::string title = task.name + ": latency per frame over time";
    const std::vector<double>& e2e = col(task, "e2e_ms");
    if (e2e.empty() || task.frames.rows() == 0) {
        page.omittedChart(id, title, "no frame has an e2e_ms (the CSV holds no readable frame)");
        return;
    }
    json datasets = json::array();
    const CsvColumns& frames = task.frames;
    if (frames.grouped()) {
        // A line per stream, their points shared out so that the chart holds as many as one line.
        const size_t streams = frames.groupNames.size();
        const size_t each = std::max<size_t>(kReportMaxPoints / streams, 2);
        for (uint32_t g = 0; g < streams; ++g)
            datasets.push_back(series("end to end, " + streamLabel(frames.groupNames[g]),
                pointsOf(task.timeS, e2e, each, [&](size_t r) { return frames.groups[r] == g; }),
                streamColour(g), true));
    } else {
        datasets.push_back(series("end to end", pointsOf(task.timeS, e2e), 0, true));
    }
    if (!col(task, "inference_ms").empty())
        datasets.push_back(
            series("inference", pointsOf(task.timeS, col(task, "inference_ms")), 1, true));
    struct Marker {
        const char* label;
        json points;
        size_t colourIndex;
    };
    std::vector<Marker> markers = {
        {"deadline miss", markedPoints(task, "deadline_miss", false, e2e), 2},
        {"failed (ok=0)", markedPoints(task, "ok", true, e2e), 6}};
    json drops = json::array();
    json dropNotes = json::array();
    uint64_t gapFrames = 0;
    for (const FrameGap& gap : frameGaps(task.frames)) {
        gapFrames += gap.missing;
        if (drops.size() >= kReportMaxPoints || !std::isfinite(task.timeS[gap.row]))
            continue;
        drops.push_back(
            {{"x", task.timeS[gap.row]}, {"y", std::isfinite(e2e[gap.row]) ? e2e[gap.row] : 0.0}});
        dropNotes.push_back(std::to_string(gap.missing) + " frame id(s)" +
            (task.frames.grouped()
                    ? " of " + streamLabel(task.frames.groupNames[task.frames.groups[gap.row]])
                    : std::string()) +
            " missing before this one");
    }
    for (Marker& m : markers)
        if (!m.points.empty())
            datasets.push_back(series(m.label, std::move(m.points), m.colourIndex, false, 4));
    if (!drops.empty()) {
        json set = series("dropped before (gap in frame_id)", std::move(drops), 4, false, 5);
        set["pointStyle"] = "triangle";
        set["notes"] = std::move(dropNotes);
        datasets.push_back(std::move(set));
    }
    json scales = {{"x", axis("seconds since the first capture")}, {"y", axis("milliseconds")}};
    std::vector<TimeSpan> windows;
    for (const WindowSpan& w : gpioWindows(task.frames, originNs))
        windows.push_back(w.time);
    if (!windows.empty()) {
        datasets.push_back(stepSeries("GPIO window open", windows, "rgba(89,161,79,0.15)"));
        scales["onoff"] = onOffAxis("GPIO window");
    }
    page.chart(id, title, scatterConfig(datasets, std::move(scales)), kWideChart, kTallChart);
    const std::string dropText = summaryDrops
        ? fmt::format("{} dropped by the run's count (summary.json)", *summaryDrops)
        : std::string("the run's drop count unknown (no summary.json, or none in it)");
    page.paragraph(fmt::format("{} frames logged; {} frame ids missing in the log; {}; each line "
                               "cut to at most {} points (every bucket's min and max kept).",
        task.frames.rows(), gapFrames, dropText, kReportMaxPoints));
}

// A histogram of `values` over [min, p99 + 10% of the range]; the last bin also holds the rest.
json histogramConfig(const std::vector<double>& values, const Percentiles& p, size_t colourIndex)
{
    const double low = p.min;
    double high = std::min(p.max, p.p99 + (p.p99 - p.min) * 0.1);
    if (!(high > low))
        high = low + 1e-3;
    const double width = (high - low) / kHistogramBins;
    std::vector<int> counts(kHistogramBins, 0);
    for (const double v : values)
        if (std::isfinite(v))
            ++counts[static_cast<size_t>(
                std::clamp(static_cast<int>((v - low) / width), 0, kHistogramBins - 1))];
    json labels = json::array();
    for (int b = 0; b < kHistogramBins; ++b)
        labels.push_back(number(low + width * b) + (b + 1 == kHistogramBins ? "+" : ""));
    json set = {{"label", "frames"}, {"data", counts},
        {"backgroundColor", chartColour(colourIndex)}, {"barPercentage", 1.0},
        {"categoryPercentage", 1.0}};
    return {{"type", "bar"}, {"data", {{"labels", labels}, {"datasets", json::array({set})}}},
        {"options",
            {{"plugins", {{"legend", {{"display", false}}}}},
                {"scales", {{"x", axis("ms (bin start)", "category")}, {"y", axis("frames")}}}}}};
}

json percentileJson(const Percentiles& p)
{
    auto value = [](double v) { return std::isfinite(v) ? json(v) : json(); };
    return {{"count", p.count}, {"min", value(p.min)}, {"p50", value(p.p50)}, {"p90", value(p.p90)},
        {"p99", value(p.p99)}, {"max", value(p.max)}, {"mean", value(p.mean)}};
}

std::vector<HtmlColumn> percentileColumns(const std::string& unit)
{
    return {{"figure", "", "", false}, {"min", unit, "", true}, {"p50", unit, "", true},
        {"p90", unit, "", true}, {"p99", unit, "nearest rank, as the run summary", true},
        {"max", unit, "", true}, {"mean", unit, "", true},
        {"count", "", "rows with a value, of every row read", true}};
}

std::vector<std::string> percentileRow(const std::string& name, const Percentiles& p)
{
    return {name, number(p.min), number(p.p50), number(p.p90), number(p.p99), number(p.max),
        number(p.mean), std::to_string(p.count)};
}

// The cold-start frame's stage times, which the tables leave out as the summary does.
void coldStartLine(HtmlPage& page, const TaskView& task)
{
    const std::vector<double>& cold = col(task, "cold_start");
    for (size_t r = 0; r < cold.size(); ++r) {
        if (cold[r] != 1.0)
            continue;
        std::string text = "cold start: frame " +
            number(col(task, "frame_id").empty() ? kNaN : col(task, "frame_id")[r]);
        for (const Stage& stage : kStages)
            if (const std::vector<double>* v = task.frames.column(stage.column))
                text += std::string(", ") + stage.name + " " + number((*v)[r]) + " ms";
        page.paragraph(text);
    }
}

json stageSection(HtmlPage& page, const TaskView& task)
{
    page.heading(3, task.name + ": stages");
    page.paragraph("Every CSV row of the frames the run summary counts: ok and not the cold start "
                   "(the first inference, with the engine's one-off setup; its row is below).");
    json stats = json::object();
    std::vector<std::vector<std::string>> rows;
    std::vector<std::pair<const Stage*, std::vector<double>>> present;
    for (const Stage& stage : kStages) {
        if (!task.frames.column(stage.column))
            continue;
        std::vector<double> values = steadyValues(task.frames, stage.column);
        const Percentiles p = percentiles(values);
        stats[stage.summaryKey] = percentileJson(p);
        rows.push_back(percentileRow(stage.name, p));
        present.emplace_back(&stage, std::move(values));
    }
    page.table("table-stages-" + std::to_string(task.index), percentileColumns("ms"), rows);
    coldStartLine(page, task);
    for (size_t i = 0; i < present.size(); ++i) {
        const Stage& stage = *present[i].first;
        const std::string id = "chart-hist-" + std::to_string(task.index) + "-" + stage.summaryKey;
        const std::string title = task.name + ": " + stage.name + " histogram";
        const Percentiles p = percentiles(present[i].second);
        if (p.count == 0) {
            page.omittedChart(
                id, title, std::string("no ok, warm frame has a ") + stage.column + " value");
            continue;
        }
        page.chart(id, title, histogramConfig(present[i].second, p, i), kSmallChart, kShortChart);
    }
    return stats;
}

json energySection(HtmlPage& page, const TaskView& task)
{
    const std::string id = "chart-energy-" + std::to_string(task.index);
    const std::string title = task.name + ": energy per frame over time";
    const std::vector<double>* frame = task.frames.column("frame_energy_mJ");
    const std::vector<double>* inference = task.frames.column("inference_energy_mJ");
    // The frames the summary's energy figures count: ok and not the cold start, as the stages'.
    const Percentiles pf =
        frame ? percentiles(steadyValues(task.frames, "frame_energy_mJ")) : Percentiles {};
    const Percentiles pi =
        inference ? percentiles(steadyValues(task.frames, "inference_energy_mJ")) : Percentiles {};
    if (pf.count == 0 && pi.count == 0) {
        page.omittedChart(id, title,
            frame ? "no frame's energy window was covered by the power sampler"
                  : "the run read no power rails (no frame_energy_mJ column)");
        return nullptr;
    }
    json datasets = json::array();
    if (pf.count)
        datasets.push_back(series("frame energy", pointsOf(task.timeS, *frame), 0, true));
    if (pi.count)
        datasets.push_back(series("inference energy", pointsOf(task.timeS, *inference), 1, true));
    page.chart(id, title,
        scatterConfig(
            datasets, {{"x", axis("seconds since the first capture")}, {"y", axis("millijoules")}}),
        kWideChart, kTallChart);
    page.table("table-energy-" + std::to_string(task.index), percentileColumns("mJ"),
        {percentileRow("frame_energy_mJ", pf), percentileRow("inference_energy_mJ", pi)});
    return {{"frame_mJ", percentileJson(pf)}, {"inference_mJ", percentileJson(pi)}};
}

json windowSection(HtmlPage& page, const TaskView& task, int64_t originNs)
{
    if (!task.frames.column("window")) {
        page.paragraph(
            task.name + ": no GPIO measurement windows (the run had no gpio.trigger)", "omitted");
        return nullptr;
    }
    const std::vector<WindowSpan> windows = gpioWindows(task.frames, originNs);
    page.heading(3, task.name + ": GPIO measurement windows");
    if (windows.empty()) {
        page.paragraph("the trigger opened no window while frames were logged", "omitted");
        return json::array();
    }
    json list = json::array();
    std::vector<std::vector<std::string>> rows;
    for (const WindowSpan& w : windows) {
        rows.push_back({std::to_string(w.window), number(w.time.startS), number(w.time.endS),
            number(w.time.endS - w.time.startS), std::to_string(w.frames), number(w.energyMj)});
        list.push_back({{"window", w.window}, {"start_s", w.time.startS}, {"end_s", w.time.endS},
            {"frames", w.frames},
            {"energy_mJ", std::isfinite(w.energyMj) ? json(w.energyMj) : json()}});
    }
    page.table("table-windows-" + std::to_string(task.index),
        {{"window", "", "", true}, {"start", "s", "first capture in it", true},
            {"end", "s", "last frame's result", true}, {"duration", "s", "", true},
            {"frames", "", "", true}, {"energy", "mJ", "sum of frame_energy_mJ", true}},
        rows);
    return list;
}

// The run's own drop count; none without a summary (a crashed run) or a count in it.
std::optional<uint64_t> summaryDrops(const json* summary)
{
    if (!summary)
        return std::nullopt;
    const json& dropped = jsonMember(jsonMember(*summary, "frames"), "dropped");
    return dropped.is_number_unsigned() ? std::optional<uint64_t>(dropped.get<uint64_t>())
                                        : std::nullopt;
}

// A task over several streams: each stream's frames, rate, latency, deadline misses and accuracy
// from its CSV rows, as the summary's tasks[].streams define them. Null for one stream.
json streamSection(HtmlPage& page, const TaskView& task)
{
    if (!task.frames.grouped())
        return nullptr;
    page.heading(3, task.name + ": streams");
    page.paragraph("Each stream's rows of the task's CSV: frames logged (failed ones included), "
                   "frame ids missing (frames replaced by newer ones before inference), the rate "
                   "of its results, end-to-end latency of its ok frames but the cold start "
                   "(nearest rank), deadline misses of the frames judged and top-1 accuracy of "
                   "the frames with a known class.");
    json list = json::array();
    std::vector<std::vector<std::string>> rows;
    for (const StreamFigures& s : streamFigures(task.frames)) {
        const double accuracy =
            s.scored > 0 ? static_cast<double>(s.correct) / static_cast<double>(s.scored) : kNaN;
        rows.push_back({streamLabel(s.name), std::to_string(s.frames), std::to_string(s.missing),
            std::to_string(s.failed), number(s.fps), number(s.endToEnd.p50), number(s.endToEnd.p99),
            number(s.endToEnd.max), s.deadlineJudged > 0 ? std::to_string(s.deadlineMisses) : "—",
            s.scored > 0 ? fmt::format("{:.2f}%", 100.0 * accuracy) : "—"});
        auto value = [](double v) { return std::isfinite(v) ? json(v) : json(); };
        list.push_back({{"name", s.name}, {"frames", s.frames}, {"missing_ids", s.missing},
            {"failed", s.failed}, {"fps", value(s.fps)}, {"e2e_ms", percentileJson(s.endToEnd)},
            {"deadline",
                s.deadlineJudged > 0
                    ? json({{"judged", s.deadlineJudged}, {"misses", s.deadlineMisses}})
                    : json()},
            {"accuracy",
                s.scored > 0
                    ? json({{"scored", s.scored}, {"correct", s.correct}, {"top1", accuracy}})
                    : json()}});
    }
    page.table("table-streams-" + std::to_string(task.index),
        {{"stream", "", "", false}, {"frames", "", "rows logged, failed ones included", true},
            {"missing ids", "", "gaps in the stream's frame_id: frames dropped", true},
            {"failed", "", "ok = 0", true}, {"fps", "", "results per second", true},
            {"e2e p50", "ms", "", true}, {"e2e p99", "ms", "nearest rank", true},
            {"e2e max", "ms", "", true},
            {"deadline misses", "", "— where no deadline was judged", true},
            {"top-1", "", "of the frames with a known class", true}},
        rows);
    return list;
}

json taskSection(HtmlPage& page, const TaskView& task, int64_t originNs)
{
    page.heading(2, "Task " + task.name);
    latencyChart(page, task, summaryDrops(task.summary), originNs);
    json data = {{"name", task.name}, {"rows", task.frames.rows()}, {"files", task.frames.files},
        {"damaged_lines", task.frames.damaged.count}};
    data["streams"] = streamSection(page, task);
    data["stages_ms"] = stageSection(page, task);
    data["energy"] = energySection(page, task);
    data["windows"] = windowSection(page, task, originNs);
    return data;
}

// The header: run, config, board and power mode, tasks and their frame counts.
void headerSection(HtmlPage& page, const RunFiles& run, const json& summary)
{
    page.heading(1, "jetagent report");
    page.paragraph("run directory: " + run.dir);
    if (summary.is_null()) {
        page.paragraph("no summary.json: the run did not finish (a crash or a kill); the page is "
                       "drawn from its CSVs alone",
            "warning");
        return;
    }
    const json& r = jsonMember(summary, "run");
    const json& power = jsonMember(summary, "power");
    std::vector<std::vector<std::string>> rows = {{"run", textOf(jsonMember(r, "directory"))},
        {"started (UTC)", textOf(jsonMember(r, "started_utc"))},
        {"wall time (s)", textOf(jsonMember(r, "wall_s"))},
        {"stop reason", textOf(jsonMember(r, "stop_reason"))},
        {"failure", textOf(jsonMember(r, "failure"))},
        {"config", textOf(jsonMember(jsonMember(summary, "config"), "path"))},
        {"overrides", textOf(jsonMember(jsonMember(summary, "config"), "overrides"))},
        {"source", textOf(jsonMember(jsonMember(summary, "source"), "uri"))},
        {"host", textOf(jsonMember(jsonMember(summary, "context"), "host"))},
        {"board", power.is_null() ? "— (no power rails)" : textOf(jsonMember(power, "board"))},
        {"power mode", textOf(jsonMember(jsonMember(power, "power_mode"), "name"))},
        {"jetagent", textOf(jsonMember(summary, "jetagent_version"))}};
    // A run of several streams: the source row holds the first one's, so every one follows it.
    const json& streams = jsonMember(summary, "streams");
    if (streams.is_array() && !streams.empty()) {
        std::string text;
        for (const json& s : streams)
            text += (text.empty() ? "" : ", ") + textOf(jsonMember(s, "name")) + " (" +
                textOf(jsonMember(s, "uri")) + ")";
        const auto source = std::find_if(rows.begin(), rows.end(),
            [](const std::vector<std::string>& row) { return row[0] == "source"; });
        rows.insert(source == rows.end() ? source : source + 1, {"streams", text});
    }
    page.table("table-run", {{"", "", "", false}, {"value", "", "", false}}, rows);
    std::vector<std::vector<std::string>> tasks;
    const json& list = jsonMember(summary, "tasks");
    if (list.is_array())
        for (const json& t : list) {
            const json& f = jsonMember(t, "frames");
            tasks.push_back({textOf(jsonMember(t, "name")), textOf(jsonMember(t, "type")),
                textOf(jsonMember(f, "processed")), textOf(jsonMember(f, "dropped")),
                textOf(jsonMember(f, "failed")),
                textOf(jsonMember(jsonMember(t, "deadline"), "misses"))});
        }
    page.table("table-tasks",
        {{"task", "", "", false}, {"type", "", "", false}, {"processed", "", "", true},
            {"dropped", "", "", true}, {"failed", "", "", true}, {"deadline misses", "", "", true}},
        tasks);
}

// power.csv's columns by kind: rails (*_W but total_W), the total, zones (*_C), clocks (*_MHz)
// and the others found (gpu_load_pct, fan_rpm, ...).
struct PowerColumns {
    std::vector<std::string> rails, zones, clocks, others;
    bool total = false;
};

bool endsWith(const std::string& text, const std::string& tail)
{
    return text.size() > tail.size() &&
        text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

PowerColumns classify(const CsvColumns& power)
{
    PowerColumns c;
    for (const std::string& name : power.names) {
        if (name == "time_ns" || name == "t_s")
            continue;
        if (name == "total_W")
            c.total = true;
        else if (endsWith(name, "_W"))
            c.rails.push_back(name);
        else if (endsWith(name, "_C"))
            c.zones.push_back(name);
        else if (endsWith(name, "_MHz"))
            c.clocks.push_back(name);
        else
            c.others.push_back(name);
    }
    return c;
}

// One chart of `names` of power.csv against time, or a line saying why it is missing.
bool powerChart(HtmlPage& page, const CsvColumns& power, const std::vector<double>& timeS,
    const std::vector<std::string>& names, const std::string& id, const std::string& title,
    const std::string& unit, const std::string& why, const json& extra = nullptr)
{
    json datasets = json::array();
    for (const std::string& name : names) {
        json points = pointsOf(timeS, *power.column(name));
        if (!points.empty())
            datasets.push_back(series(name, std::move(points), datasets.size(), true));
    }
    if (datasets.empty()) {
        page.omittedChart(id, title, why);
        return false;
    }
    json scales = {{"x", axis("seconds since the first capture")}, {"y", axis(unit)}};
    // An extra series with an axis of its own: {"dataset": ..., "axis": name, "scale": ...}.
    if (extra.is_object()) {
        datasets.push_back(extra["dataset"]);
        scales[extra["axis"].get<std::string>()] = extra["scale"];
    }
    page.chart(
        id, title, scatterConfig(std::move(datasets), std::move(scales)), kWideChart, kTallChart);
    return true;
}

// Fails as readCsvSegments() does when a power.csv segment cannot be read or is refused.
Expected<json> powerSection(HtmlPage& page, const RunFiles& run, const std::vector<TaskView>& tasks,
    int64_t originNs, DamagedLines& damaged)
{
    page.heading(2, "Power, temperatures and clocks");
    if (run.power.empty()) {
        const char* why = "no power.csv (the run had no power rails)";
        page.omittedChart("chart-power", "Power per rail over time", why);
        page.omittedChart("chart-thermal", "Temperatures over time", why);
        page.omittedChart("chart-clocks", "Clocks over time", why);
        return json();
    }
    auto read = readCsvSegments(run.power, {}, {"", "time_ns", ""});
    if (!read)
        return read.status();
    const CsvColumns& power = *read;
    damaged.count += power.damaged.count;
    for (const std::string& e : power.damaged.examples)
        if (damaged.examples.size() < DamagedLines::kExamplesKept)
            damaged.examples.push_back(e);
    std::vector<double> timeS(power.rows(), kNaN);
    if (const std::vector<double>* t = power.column("time_ns"))
        for (size_t r = 0; r < timeS.size(); ++r)
            timeS[r] = ((*t)[r] - static_cast<double>(originNs)) / kNsPerS;
    const PowerColumns kinds = classify(power);

    std::vector<std::string> rails = kinds.rails;
    if (kinds.total)
        rails.push_back("total_W");
    std::vector<TimeSpan> spans;
    for (const TaskView& task : tasks) {
        const auto own = inferenceSpans(task.frames, originNs, 0);
        spans.insert(spans.end(), own.begin(), own.end());
    }
    json busy = nullptr;
    if (!spans.empty()) {
        // How much of each power.csv slot the frames spent in inference, beside the power it drew.
        json set = series("inference busy (any task, % of each slot)",
            pointsOf(timeS, busyPercent(spans, timeS)), 0, true);
        set["yAxisID"] = "busy";
        set["stepped"] = "before";
        set["fill"] = true;
        set["order"] = 2;
        set["backgroundColor"] = "rgba(150,150,150,0.25)";
        set["borderColor"] = "rgba(120,120,120,0.6)";
        busy = {{"dataset", std::move(set)}, {"axis", "busy"},
            {"scale",
                {{"type", "linear"}, {"position", "right"}, {"min", 0}, {"max", 100},
                    {"grid", {{"drawOnChartArea", false}}},
                    {"title", {{"display", true}, {"text", "inference busy (%)"}}}}}};
    }
    powerChart(page, power, timeS, rails, "chart-power",
        "Power per rail over time, with the share of each slot spent in inference", "watts",
        "power.csv has no *_W column with a value", busy);
    if (spans.empty())
        page.paragraph("no inference windows: no frame has capture_ns and inference_ms", "omitted");
    powerChart(page, power, timeS, kinds.zones, "chart-thermal", "Temperatures over time",
        "degrees Celsius", "power.csv has no *_C (thermal zone) column with a value");
    powerChart(page, power, timeS, kinds.clocks, "chart-clocks", "Clocks over time", "MHz",
        "power.csv has no *_MHz (clock) column with a value");
    if (!kinds.others.empty())
        powerChart(page, power, timeS, kinds.others, "chart-power-other",
            "Other figures over time (load, fan)", "as named", "none of them has a value");
    json data = {
        {"files", power.files}, {"rows", power.rows()}, {"damaged_lines", power.damaged.count}};
    for (const std::string& name : rails)
        data["rails_W"][name] = percentileJson(percentiles(*power.column(name)));
    return data;
}

// tasks[] of summary.json whose name is `name`, or null.
const json* summaryTask(const json& summary, const std::string& name)
{
    const json& list = jsonMember(summary, "tasks");
    if (list.is_array())
        for (const json& t : list)
            if (jsonMember(t, "name").is_string() && t["name"].get<std::string>() == name)
                return &t;
    return nullptr;
}

Expected<std::vector<TaskView>> readTasks(
    const RunFiles& run, const json& summary, int64_t& originNs)
{
    std::vector<TaskView> tasks;
    double first = std::numeric_limits<double>::infinity();
    // Streams in the order the run configured them, where its summary says.
    std::vector<std::string> streams;
    const json& listed = jsonMember(summary, "streams");
    if (listed.is_array())
        for (const json& s : listed)
            if (jsonMember(s, "name").is_string())
                streams.push_back(s["name"].get<std::string>());
    for (const RunFiles::Task& t : run.tasks) {
        auto frames = readCsvSegments(t.csv, kFrameTextColumns, kFrameOrder);
        if (!frames)
            return frames.status();
        orderGroups(frames.value(), streams);
        tasks.push_back(
            {tasks.size(), t.name, std::move(frames).value(), {}, summaryTask(summary, t.name)});
        if (const std::vector<double>* capture = tasks.back().frames.column("capture_ns"))
            for (const double v : *capture)
                if (std::isfinite(v))
                    first = std::min(first, v);
    }
    originNs = std::isfinite(first) ? static_cast<int64_t>(first) : 0;
    for (TaskView& task : tasks) {
        task.timeS.assign(task.frames.rows(), kNaN);
        if (const std::vector<double>* capture = task.frames.column("capture_ns"))
            for (size_t r = 0; r < task.timeS.size(); ++r)
                task.timeS[r] = ((*capture)[r] - static_cast<double>(originNs)) / kNsPerS;
    }
    return tasks;
}

// A summary.json is a few kilobytes; a larger one is not the run's.
constexpr uint64_t kMaxSummaryBytes = 16 << 20;
// The parser's message quotes the token it stopped at, which may be a whole long string.
constexpr size_t kMaxJsonErrorBytes = 200;

// Records where and why a JSON parse failed: nlohmann's DOM parser without exceptions keeps
// neither, and its exceptions carry no position for a number out of range (1e400).
class JsonErrorSax : public nlohmann::json_sax<json> {
public:
    std::string message;
    size_t position = 0;

    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool key(string_t&) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t at, const std::string&, const json::exception& error) override
    {
        position = at;
        message = error.what();
        // "[json.exception.out_of_range.406] number overflow parsing '1e400'": the part after
        // the library's tag says what is wrong.
        const size_t tag = message.find("] ");
        if (message.rfind("[json.exception.", 0) == 0 && tag != std::string::npos)
            message.erase(0, tag + 2);
        return false;
    }
};

const char* jsonTypeText(const json& value)
{
    if (value.is_array())
        return "an array";
    if (value.is_string())
        return "a string";
    if (value.is_number())
        return "a number";
    if (value.is_boolean())
        return "a boolean";
    return "null";
}

Expected<json> readSummary(const std::string& path)
{
    if (path.empty())
        return json();
    std::string text;
    if (Status s = readRegularFile(path, path, kMaxSummaryBytes, text, FileLinks::Refuse); !s)
        return s;
    const char* const kAdvice =
        " (a damaged summary; move it aside to report the run from its CSVs)";
    json summary = json::parse(text, nullptr, false);
    if (summary.is_discarded()) {
        JsonErrorSax error;
        json::sax_parse(text, &error);
        // A syntax error names its line and column; a number out of range names neither.
        const std::string where = error.message.find(" at line ") == std::string::npos
            ? fmt::format(", at byte {}", error.position)
            : std::string();
        return Status::invalid(fmt::format("{}: not valid JSON: {}{}{}", path,
            escapedExcerpt(error.message, kMaxJsonErrorBytes), where, kAdvice));
    }
    if (!summary.is_object())
        return Status::invalid(
            path + ": not a JSON object (it holds " + jsonTypeText(summary) + ")" + kAdvice);
    return summary;
}

} // namespace

Expected<std::string> runReportHtml(
    const RunFiles& run, const std::string& chartJs, DamagedLines& damaged, size_t& charts)
{
    auto summary = readSummary(run.summary);
    if (!summary)
        return summary.status();
    int64_t originNs = 0;
    auto tasks = readTasks(run, *summary, originNs);
    if (!tasks)
        return tasks.status();

    HtmlPage page("jetagent report: " + run.dir);
    headerSection(page, run, *summary);
    for (const TaskView& task : *tasks) {
        damaged.count += task.frames.damaged.count;
        for (const std::string& e : task.frames.damaged.examples)
            if (damaged.examples.size() < DamagedLines::kExamplesKept)
                damaged.examples.push_back(e);
    }
    json data = {{"run_dir", run.dir},
        {"summary", run.summary.empty() ? json() : json(run.summary)},
        {"origin_capture_ns", originNs}, {"tasks", json::array()}};
    if (tasks->empty())
        page.paragraph("no <task>.frames.csv: the run logged no frame", "warning");
    for (const TaskView& task : *tasks)
        data["tasks"].push_back(taskSection(page, task, originNs));
    auto power = powerSection(page, run, *tasks, originNs, damaged);
    if (!power)
        return power.status();
    data["power"] = std::move(power).value();
    data["damaged_lines"] = damaged.count;
    if (damaged.count > 0) {
        std::string text = fmt::format("{} damaged CSV line(s) skipped:", damaged.count);
        for (const std::string& e : damaged.examples)
            text += " " + e + ";";
        page.paragraph(text, "warning");
    }
    charts = static_cast<size_t>(page.chartCount());
    return page.render(chartJs, data);
}

Expected<RunReportResult> writeRunReport(const RunReportOptions& options)
{
    auto run = findRunFiles(options.runDir);
    if (!run)
        return run.status();
    // Re-running `report` on a run is normal: its own page is replaced; a path given is not.
    const bool replace = options.output.empty() || options.force;
    const std::string path =
        options.output.empty() ? options.runDir + "/report.html" : options.output;
    // Refused before the run is read (a long one takes a while), and again when written.
    if (Status s = outputFault(path, replace); !s)
        return s;
    auto chartJs = chartJsSource(options.chartJs);
    if (!chartJs)
        return chartJs.status();
    RunReportResult result;
    result.noSummary = run->summary.empty();
    auto html = runReportHtml(*run, *chartJs, result.damaged, result.charts);
    if (!html)
        return html.status();
    result.path = path;
    result.bytes = html->size();
    if (Status s = writeReportFile(path, *html, replace); !s)
        return s.isUsageError() ? s : s.withContext("writing the report");
    return result;
}

} // namespace jetagent
