// The sweep's HTML report: sweep.json (what `jetagent sweep` writes) as one offline page.
#include "sweep_html.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace jetagent {

namespace {

using json = nlohmann::json;

// The P99/P50 chart has one horizontal bar per cell.
constexpr int kBarRowHeight = 22;
// Throughputs more than this many times apart are drawn on a log axis.
constexpr double kLogAxisSpread = 20.0;

// Point shapes and line dashes tell a second dimension apart where colour tells the first: the
// models on the energy scatter, the engines on the curves over batch sizes.
constexpr const char* kPointStyles[] = {
    "circle", "triangle", "rect", "rectRot", "star", "crossRot", "rectRounded", "cross", "line"};
const char* pointStyle(size_t index)
{
    return kPointStyles[index % (sizeof(kPointStyles) / sizeof(kPointStyles[0]))];
}
json dash(size_t index)
{
    static const json dashes[] = {
        json::array(), json::array({8, 4}), json::array({2, 3}), json::array({12, 3, 2, 3})};
    return dashes[index % (sizeof(dashes) / sizeof(dashes[0]))];
}

// A cell of the sweep with the members that place it in the matrix.
struct Cell {
    const json* figures;
    std::string model;
    std::string engine;
    int batch;
    int threads;
    bool ok;
};

// The cells and the matrix they span: models and engines in the order they were run, batch sizes
// and thread counts sorted.
struct SweepView {
    std::vector<Cell> cells;
    std::vector<std::string> models;
    std::vector<std::string> engines;
    std::vector<int> batches;
    std::vector<int> threads;
    std::string baseline; // the study's baseline engine, "" when none

    // A series' place among all engine and thread-count pairs: its colour on every chart, so an
    // engine looks the same everywhere.
    size_t seriesIndex(const std::string& engine, int threadCount) const
    {
        const auto e = std::find(engines.begin(), engines.end(), engine);
        const auto t = std::find(threads.begin(), threads.end(), threadCount);
        return static_cast<size_t>(e - engines.begin()) * threads.size() +
            static_cast<size_t>(t - threads.begin());
    }
    size_t modelIndex(const std::string& model) const
    {
        return static_cast<size_t>(std::find(models.begin(), models.end(), model) - models.begin());
    }
    bool severalThreads() const { return threads.size() > 1; }
    // An engine's series name; the thread count is part of it when the sweep varied it.
    std::string series(const std::string& engine, int threadCount) const
    {
        if (!severalThreads())
            return engine;
        return engine + " · " +
            (threadCount > 0 ? std::to_string(threadCount) + " threads"
                             : std::string("default threads"));
    }
    std::string label(const Cell& cell) const
    {
        return cell.model + " · " + series(cell.engine, cell.threads) + " · b" +
            std::to_string(cell.batch);
    }
};

void addOnce(std::vector<std::string>& list, const std::string& item)
{
    if (std::find(list.begin(), list.end(), item) == list.end())
        list.push_back(item);
}

SweepView viewOf(const json& sweep)
{
    SweepView view;
    std::set<int> batches;
    std::set<int> threads;
    for (const json* figures : jsonItems(sweep, "cells")) {
        if (!figures->is_object())
            continue;
        Cell cell {figures, jsonString(*figures, "model"), jsonString(*figures, "engine"),
            static_cast<int>(jsonNumber(*figures, "batch").value_or(0)),
            static_cast<int>(jsonNumber(*figures, "threads").value_or(0)),
            jsonString(*figures, "status") == "ok"};
        addOnce(view.models, cell.model);
        addOnce(view.engines, cell.engine);
        batches.insert(cell.batch);
        threads.insert(cell.threads);
        view.cells.push_back(std::move(cell));
    }
    view.batches.assign(batches.begin(), batches.end());
    view.threads.assign(threads.begin(), threads.end());
    view.baseline = jsonString(jsonMember(sweep, "study"), "baseline");
    return view;
}

// A figure as a chart value: the number, or null (a gap) when it was not measured.
json chartValue(const json& figures, const char* key)
{
    const std::optional<double> value = jsonNumber(figures, key);
    return value ? json(*value) : json();
}

std::string msText(const json& figures, const char* key)
{
    return formatValue(jsonMember(figures, key)) + " ms";
}

// (a) p50 latency per model, one bar per engine, at the smallest batch size measured.
void latencyChart(HtmlPage& page, const SweepView& view)
{
    const char* id = "chart-latency";
    std::optional<int> batch;
    for (const Cell& cell : view.cells)
        if (cell.ok && jsonNumber(*cell.figures, "latency_p50_ms"))
            batch = std::min(batch.value_or(cell.batch), cell.batch);
    if (!batch) {
        page.omittedChart(id, "Latency per inference (p50)",
            view.cells.empty() ? "the sweep holds no cells" : "no cell measured a latency");
        return;
    }
    json labels = json::array();
    std::vector<std::string> models;
    for (const std::string& model : view.models)
        for (const Cell& cell : view.cells)
            if (cell.model == model && cell.ok && cell.batch == *batch &&
                jsonNumber(*cell.figures, "latency_p50_ms")) {
                labels.push_back(model);
                models.push_back(model);
                break;
            }
    json datasets = json::array();
    for (const std::string& engine : view.engines)
        for (const int threads : view.threads) {
            json data = json::array();
            json notes = json::array();
            bool any = false;
            for (const std::string& model : models) {
                const auto it =
                    std::find_if(view.cells.begin(), view.cells.end(), [&](const Cell& c) {
                        return c.ok && c.model == model && c.engine == engine &&
                            c.threads == threads && c.batch == *batch;
                    });
                const bool found = it != view.cells.end();
                data.push_back(found ? chartValue(*it->figures, "latency_p50_ms") : json());
                notes.push_back(found ? "p99 " + msText(*it->figures, "latency_p99_ms") : "");
                any = any || (found && !data.back().is_null());
            }
            if (any)
                datasets.push_back(chartDataset(view.series(engine, threads), std::move(data),
                    std::move(notes), view.seriesIndex(engine, threads)));
        }
    const json config = {{"type", "bar"}, {"data", {{"labels", labels}, {"datasets", datasets}}},
        {"options",
            {{"scales",
                {{"x", chartAxis("model")},
                    {"y",
                        chartAxis("p50 latency per inference (ms, log scale)", "logarithmic")}}}}}};
    page.chart(id,
        "Latency per inference, p50 at batch " + std::to_string(*batch) +
            " (log axis; p99 in the tooltip)",
        config, kChartWidth, kChartHeight);
}

// Line series over the batch sizes: one per model and engine (and thread count), from `rows`
// (cells or scaling rows) whose `key` is a number; a colour per model, a dash per engine. Empty
// when no row has a value. `leaveOut` names an engine drawn nowhere (the baseline on the BSR
// chart, where it is 1 by definition and would hide the others' lines).
json seriesOverBatches(const SweepView& view, const std::vector<const json*>& rows, const char* key,
    const std::vector<int>& batches, const std::string& leaveOut = "")
{
    json datasets = json::array();
    for (const std::string& model : view.models)
        for (const std::string& engine : view.engines)
            for (const int threads : view.threads) {
                if (engine == leaveOut)
                    continue;
                json data(batches.size(), nullptr);
                json notes(batches.size(), "");
                bool any = false;
                for (const json* row : rows) {
                    const auto at = std::find(batches.begin(), batches.end(),
                        static_cast<int>(jsonNumber(*row, "batch").value_or(0)));
                    if (jsonString(*row, "model") != model ||
                        jsonString(*row, "engine") != engine ||
                        jsonNumber(*row, "threads").value_or(0) != threads || at == batches.end() ||
                        !jsonNumber(*row, key))
                        continue;
                    const size_t i = static_cast<size_t>(at - batches.begin());
                    data[i] = *jsonNumber(*row, key);
                    if (jsonNumber(*row, "latency_p50_ms"))
                        notes[i] = "p50 " + msText(*row, "latency_p50_ms");
                    any = true;
                }
                if (!any)
                    continue;
                const size_t series = view.seriesIndex(engine, threads);
                json set = chartDataset(model + " · " + view.series(engine, threads),
                    std::move(data), std::move(notes), view.modelIndex(model));
                set["spanGaps"] = true;
                set["fill"] = false;
                set["borderDash"] = dash(series);
                set["pointStyle"] = pointStyle(series);
                set["pointRadius"] = 4;
                datasets.push_back(std::move(set));
            }
    return datasets;
}

json lineChart(const std::vector<int>& batches, json datasets, const std::string& yTitle)
{
    json labels = json::array();
    for (const int batch : batches)
        labels.push_back(std::to_string(batch));
    return {{"type", "line"}, {"data", {{"labels", labels}, {"datasets", std::move(datasets)}}},
        {"options", {{"scales", {{"x", chartAxis("batch size")}, {"y", axisFromZero(yTitle)}}}}}};
}

// (b) images/s against batch size.
void throughputChart(HtmlPage& page, const SweepView& view)
{
    const char* id = "chart-throughput";
    const char* title = "Throughput against batch size";
    std::vector<const json*> rows;
    std::set<int> batches;
    for (const Cell& cell : view.cells)
        if (cell.ok && jsonNumber(*cell.figures, "throughput_ips")) {
            rows.push_back(cell.figures);
            batches.insert(cell.batch);
        }
    if (batches.size() < 2) {
        page.omittedChart(id, title,
            batches.empty() ? "no cell measured a throughput"
                            : "one batch size only: no scaling curves");
        return;
    }
    const std::vector<int> sizes(batches.begin(), batches.end());
    json config = lineChart(
        sizes, seriesOverBatches(view, rows, "throughput_ips", sizes), "throughput (images/s)");
    // Models far apart in speed (a video model beside a small CNN) get a log axis, so the slow
    // one's curve does not lie flat on zero.
    double lowest = std::numeric_limits<double>::infinity(), highest = 0;
    for (const json* row : rows)
        if (const auto t = jsonNumber(*row, "throughput_ips"); t && *t > 0) {
            lowest = std::min(lowest, *t);
            highest = std::max(highest, *t);
        }
    if (highest > kLogAxisSpread * lowest)
        config["options"]["scales"]["y"] =
            chartAxis("throughput (images/s, log scale)", "logarithmic");
    page.chart(id, title, config, kChartWidth, kChartHeight);
}

// (c) ASE and BSR against batch size, from the scaling table.
void scalingCharts(HtmlPage& page, const SweepView& view, const json& sweep)
{
    const std::vector<const json*> rows = jsonItems(jsonMember(sweep, "tables"), "scaling");
    std::set<int> batches;
    for (const json* row : rows)
        batches.insert(static_cast<int>(jsonNumber(*row, "batch").value_or(0)));
    const std::vector<int> sizes(batches.begin(), batches.end());
    struct Figure {
        const char* key;
        const char* id;
        const char* title;
        const char* axisTitle;
        const char* missing;
    };
    const Figure figures[] = {
        {"ase", "chart-ase", "Average scaling efficiency (ASE) against batch size",
            "ASE(b) = T(b) / (b · T(1))", "no cell has an ASE"},
        {"bsr", "chart-bsr",
            "Batch scaling ratio (BSR) against batch size (the baseline is 1 by definition)",
            "BSR(b) = ASE_engine(b) / ASE_baseline(b)",
            "no BSR values: BSR needs the baseline engine measured at the same batch sizes"},
    };
    for (const Figure& figure : figures) {
        if (rows.empty()) {
            page.omittedChart(figure.id, figure.title,
                "no scaling rows: they need batch 1 and a larger batch measured for an engine");
            continue;
        }
        const bool bsr = std::string(figure.key) == "bsr";
        json datasets = seriesOverBatches(view, rows, figure.key, sizes, bsr ? view.baseline : "");
        if (datasets.empty()) {
            page.omittedChart(figure.id, figure.title, figure.missing);
            continue;
        }
        page.chart(figure.id, figure.title, lineChart(sizes, std::move(datasets), figure.axisTitle),
            kChartWidth, kChartHeight);
    }
}

// (d) P99/P50 per cell: horizontal bars, coloured by engine.
void stabilityChart(HtmlPage& page, const SweepView& view)
{
    const char* id = "chart-p99-p50";
    const char* title = "Stability: P99 / P50 per cell (1 is perfectly steady)";
    json labels = json::array();
    json data = json::array();
    json notes = json::array();
    json colours = json::array();
    for (const Cell& cell : view.cells) {
        if (!cell.ok || !jsonNumber(*cell.figures, "p99_over_p50"))
            continue;
        labels.push_back(view.label(cell));
        data.push_back(*jsonNumber(*cell.figures, "p99_over_p50"));
        notes.push_back("p50 " + msText(*cell.figures, "latency_p50_ms") + ", p99 " +
            msText(*cell.figures, "latency_p99_ms"));
        colours.push_back(chartColour(view.seriesIndex(cell.engine, cell.threads)));
    }
    if (data.empty()) {
        page.omittedChart(id, title, "no cell has a P99/P50 ratio");
        return;
    }
    json set = chartDataset("P99 / P50", std::move(data), std::move(notes), 0);
    set["backgroundColor"] = colours;
    set["borderColor"] = colours;
    const json config = {{"type", "bar"},
        {"data", {{"labels", labels}, {"datasets", json::array({set})}}},
        {"options",
            {{"indexAxis", "y"}, {"plugins", {{"legend", {{"display", false}}}}},
                {"scales", {{"x", chartAxis("P99 / P50")}, {"y", chartAxis("cell")}}}}}};
    page.chart(
        id, title, config, kChartWidth, 80 + kBarRowHeight * static_cast<int>(labels.size()));
}

// (e) energy per inference against mean latency, one point per cell: a colour per engine and a
// point shape per model, each pair a legend entry, so every point says what it is.
void energyChart(HtmlPage& page, const SweepView& view)
{
    const char* id = "chart-energy";
    const char* title = "Energy per inference against latency (colour: engine, shape: model)";
    json datasets = json::array();
    for (const std::string& model : view.models)
        for (const std::string& engine : view.engines)
            for (const int threads : view.threads) {
                json points = json::array();
                json notes = json::array();
                for (const Cell& cell : view.cells) {
                    const json& f = *cell.figures;
                    if (!cell.ok || cell.model != model || cell.engine != engine ||
                        cell.threads != threads || !jsonNumber(f, "energy_mj") ||
                        !jsonNumber(f, "latency_mean_ms"))
                        continue;
                    points.push_back({{"x", *jsonNumber(f, "latency_mean_ms")},
                        {"y", *jsonNumber(f, "energy_mj")}});
                    notes.push_back("b" + std::to_string(cell.batch) + ": " +
                        formatValue(jsonMember(f, "power_w")) + " W, " +
                        formatValue(jsonMember(f, "inferences_per_j")) + " inferences/J");
                }
                if (points.empty())
                    continue;
                json set = chartDataset(model + " · " + view.series(engine, threads),
                    std::move(points), std::move(notes), view.seriesIndex(engine, threads));
                set["pointStyle"] = pointStyle(view.modelIndex(model));
                set["pointRadius"] = 6;
                datasets.push_back(std::move(set));
            }
    if (datasets.empty()) {
        page.omittedChart(
            id, title, "no cell has an energy per inference (no power rails were read)");
        return;
    }
    const json config = {{"type", "scatter"}, {"data", {{"datasets", datasets}}},
        {"options",
            {{"plugins", {{"legend", {{"labels", {{"usePointStyle", true}}}}}}},
                {"scales",
                    {{"x", chartAxis("mean latency per inference (ms)")},
                        {"y", axisFromZero("energy per inference (mJ)")}}}}}};
    page.chart(id, title, config, kChartWidth, kChartHeight);
}

// A table column read from `key` of each row; `scale` as for formatValue.
struct Field {
    const char* key;
    HtmlColumn column;
    double scale = 1.0;
};

void fieldTable(HtmlPage& page, const std::string& id, const std::vector<Field>& fields,
    const std::vector<const json*>& rows)
{
    std::vector<HtmlColumn> columns;
    columns.reserve(fields.size());
    for (const Field& field : fields)
        columns.push_back(field.column);
    std::vector<std::vector<std::string>> cells;
    cells.reserve(rows.size());
    for (const json* row : rows) {
        std::vector<std::string> line;
        line.reserve(fields.size());
        for (const Field& field : fields)
            line.push_back(formatValue(jsonMember(*row, field.key), field.scale));
        cells.push_back(std::move(line));
    }
    page.table(id, columns, cells);
}

Field text(const char* key, const char* name)
{
    return {key, {name, "", "", false}};
}

Field figure(const char* key, const char* name, const char* unit, double scale = 1.0)
{
    return {key, {name, unit, "", true}, scale};
}

// Flattened "key: value" rows ("clocks.cpu_mhz"), for the context and the study.
void flatten(
    const json& value, const std::string& prefix, std::vector<std::vector<std::string>>& rows)
{
    if (value.is_object() && !value.empty()) {
        for (const auto& [key, item] : value.items())
            flatten(item, prefix.empty() ? key : prefix + "." + key, rows);
        return;
    }
    rows.push_back({prefix, formatValue(value)});
}

void headerSection(HtmlPage& page, const json& sweep)
{
    const json& study = jsonMember(sweep, "study");
    const std::string name = jsonString(study, "name");
    page.heading(1, "jetagent sweep: " + (name.empty() ? std::string("unnamed study") : name));
    page.paragraph("Written by jetagent " + formatValue(jsonMember(sweep, "jetagent_version")) +
        " (sweep format " + formatValue(jsonMember(sweep, "format_version")) + ").");
    if (jsonMember(sweep, "interrupted").is_boolean() &&
        jsonMember(sweep, "interrupted").get<bool>())
        page.paragraph("The sweep was interrupted: only the cells below were measured.", "warning");
    std::vector<std::vector<std::string>> rows;
    for (const char* key : {"models", "engines", "baseline", "batches", "threads", "iterations",
             "warmup", "rounds", "inputs", "latency_budget_ms", "file"})
        rows.push_back({key, formatValue(jsonMember(study, key))});
    rows.push_back({"idle_power_w", formatValue(jsonMember(sweep, "idle_power_w"))});
    page.heading(2, "Study");
    page.table("study", {{"setting", "", "", false}, {"value", "", "", false}}, rows);
    if (!jsonString(study, "text").empty())
        page.append("<details><summary>The study file as read</summary><pre>" +
            htmlEscape(jsonString(study, "text")) + "</pre></details>\n");
    page.heading(2, "Context");
    rows.clear();
    flatten(jsonMember(sweep, "context"), "", rows);
    page.table("context", {{"key", "", "", false}, {"value", "", "", false}}, rows);
}

void chartsSection(HtmlPage& page, const SweepView& view, const json& sweep)
{
    page.heading(2, "Charts");
    latencyChart(page, view);
    throughputChart(page, view);
    scalingCharts(page, view, sweep);
    stabilityChart(page, view);
    energyChart(page, view);
}

// The derived tables: speed-up over the baseline, batch scaling, best under the latency budget.
void derivedTables(HtmlPage& page, const json& sweep)
{
    const json& tables = jsonMember(sweep, "tables");
    page.heading(2, "Speed-up over the baseline");
    const std::vector<const json*> speedup = jsonItems(tables, "speedup");
    if (speedup.empty())
        page.paragraph(
            "No speed-up rows: no engine and baseline were both measured on a model.", "omitted");
    else
        fieldTable(page, "table-speedup",
            {text("model", "model"), text("engine", "engine"), text("baseline", "baseline"),
                figure("batch", "batch", ""), figure("threads", "threads", ""),
                figure("baseline_p50_ms", "baseline p50", "ms"),
                figure("engine_p50_ms", "engine p50", "ms"), figure("speedup", "speed-up", "×"),
                figure("parameters", "parameters", ""), figure("macs", "MACs", "per image")},
            speedup);

    page.heading(2, "Batch scaling");
    const std::vector<const json*> scaling = jsonItems(tables, "scaling");
    if (scaling.empty())
        page.paragraph(
            "No scaling rows: they need batch 1 and a larger batch measured for an engine.",
            "omitted");
    else
        fieldTable(page, "table-scaling",
            {text("model", "model"), text("engine", "engine"), figure("threads", "threads", ""),
                figure("batch", "batch", ""), figure("throughput_ips", "throughput", "images/s"),
                figure("rtr", "RTR", "T(b)/T(1)"), figure("ase", "ASE", "RTR/b"),
                figure("bsr", "BSR", "ASE/ASE_baseline")},
            scaling);

    page.heading(2, "Best configuration under the latency budget");
    const std::vector<const json*> best = jsonItems(tables, "best");
    const std::optional<double> budget =
        jsonNumber(jsonMember(sweep, "study"), "latency_budget_ms");
    if (!best.empty())
        fieldTable(page, "table-best",
            {text("model", "model"), text("engine", "engine"), figure("batch", "batch", ""),
                figure("threads", "threads", ""), figure("latency_p99_ms", "p99 latency", "ms"),
                figure("throughput_ips", "throughput", "images/s"),
                figure("budget_ms", "budget", "ms")},
            best);
    else if (!budget)
        page.paragraph("No budget: the study sets no latency_budget_ms.", "omitted");
    else
        page.paragraph(
            "No configuration met the latency budget of " + formatNumber(*budget) + " ms.",
            "omitted");
}

void accuracyTable(HtmlPage& page, const SweepView& view)
{
    page.heading(2, "Accuracy and agreement with the baseline");
    std::vector<const json*> rows;
    for (const Cell& cell : view.cells)
        for (const char* key : {"top1", "top5", "agreement_rel_error", "agreement_top1"})
            if (jsonNumber(*cell.figures, key)) {
                rows.push_back(cell.figures);
                break;
            }
    if (rows.empty()) {
        page.paragraph("No accuracy figures: the inputs carried no labels and no cell was compared "
                       "with the baseline.",
            "omitted");
        return;
    }
    fieldTable(page, "table-accuracy",
        {text("model", "model"), text("engine", "engine"), figure("batch", "batch", ""),
            figure("threads", "threads", ""), figure("top1", "top-1", "%", 100.0),
            figure("top5", "top-5", "%", 100.0), figure("labelled_inputs", "labelled inputs", ""),
            figure("agreement_rel_error", "max relative error", "vs baseline"),
            figure("agreement_top1", "top-1 agreement", "%", 100.0)},
        rows);
}

void failedTable(HtmlPage& page, const SweepView& view)
{
    page.heading(2, "Failed cells");
    std::vector<const json*> rows;
    for (const Cell& cell : view.cells)
        if (!cell.ok)
            rows.push_back(cell.figures);
    if (rows.empty()) {
        page.paragraph("No cell failed.", "omitted");
        return;
    }
    fieldTable(page, "table-failed",
        {text("model", "model"), text("engine", "engine"), figure("batch", "batch", ""),
            figure("threads", "threads", ""), text("status", "status"), text("error", "error")},
        rows);
}

// Every cell with every figure: the placing members first, then the documented columns (with
// their units and descriptions), then any other member the cells carry.
void cellTable(HtmlPage& page, const SweepView& view, const json& sweep)
{
    page.heading(2, "All cells");
    if (view.cells.empty()) {
        page.paragraph("The sweep holds no cells.", "omitted");
        return;
    }
    std::vector<std::string> keys = {
        "model", "engine", "backend", "device", "precision", "batch", "threads", "status"};
    std::map<std::string, HtmlColumn> documented;
    for (const json* column : jsonItems(sweep, "columns")) {
        const std::string name = jsonString(*column, "name");
        if (name.empty())
            continue;
        documented[name] = {
            name, jsonString(*column, "unit"), jsonString(*column, "description"), false};
        addOnce(keys, name);
    }
    for (const Cell& cell : view.cells)
        for (const auto& [key, value] : cell.figures->items())
            addOnce(keys, key);
    std::vector<HtmlColumn> columns;
    std::vector<std::vector<std::string>> rows(view.cells.size());
    for (const std::string& key : keys) {
        const auto it = documented.find(key);
        HtmlColumn column = it != documented.end() ? it->second : HtmlColumn {key, "", "", false};
        bool numeric = false;
        for (size_t i = 0; i < view.cells.size(); ++i) {
            const json& value = jsonMember(*view.cells[i].figures, key.c_str());
            numeric = numeric || value.is_number();
            rows[i].push_back(formatValue(value));
        }
        column.numeric = numeric;
        columns.push_back(std::move(column));
    }
    page.table("table-cells", columns, rows);
}

} // namespace

std::string sweepHtml(const nlohmann::json& sweep, const std::string& chartJs)
{
    const SweepView view = viewOf(sweep);
    const std::string name = jsonString(jsonMember(sweep, "study"), "name");
    HtmlPage page("jetagent sweep: " + (name.empty() ? std::string("unnamed study") : name));
    headerSection(page, sweep);
    chartsSection(page, view, sweep);
    derivedTables(page, sweep);
    accuracyTable(page, view);
    failedTable(page, view);
    cellTable(page, view, sweep);
    return page.render(chartJs, sweep);
}

} // namespace jetagent
