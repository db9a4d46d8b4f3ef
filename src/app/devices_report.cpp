// Sweeps from several boards or power modes compared cell by cell (devices_report.h).
#include "devices_report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include <spdlog/fmt/fmt.h>

#include "jetagent/base/regular_file.h"
#include "report_file.h"
#include "version.h" // JETAGENT_VERSION

namespace jetagent {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// A sweep of a few hundred cells is well under 1 MiB; this bounds what a stray file costs.
constexpr uint64_t kMaxSweepJsonBytes = 64u << 20;
// How many cells of each sweep the refusal names before "and N more".
constexpr size_t kCellsNamed = 6;

// The figures each device's entry carries, copied from its sweep's cell as they are.
constexpr const char* kFigures[] = {"latency_p50_ms", "latency_p99_ms", "latency_mean_ms",
    "throughput_ips", "energy_mj", "power_w", "inferences_per_j"};

int intOf(const json& object, const char* key)
{
    return static_cast<int>(jsonNumber(object, key).value_or(0));
}

// "CPU 1510 MHz, GPU 625 MHz, EMC 2133 MHz" from the context's clocks, "" when none were read.
std::string clocksText(const json& context)
{
    const json& clocks = jsonMember(context, "clocks");
    std::string text;
    for (const auto& [key, name] : {std::pair<const char*, const char*> {"cpu_mhz", "CPU"},
             {"gpu_mhz", "GPU"}, {"emc_mhz", "EMC"}}) {
        if (const auto mhz = jsonNumber(clocks, key))
            text += fmt::format("{}{} {:.0f} MHz", text.empty() ? "" : ", ", name, *mhz);
    }
    return text;
}

// The board's name: the context's module, else its board line without what follows " (" (the
// SoC and L4T release, or where the tree was read); a host is named by its CPU.
std::string moduleOf(const json& context)
{
    std::string module = jsonString(context, "module");
    if (module.empty()) {
        module = jsonString(context, "board");
        module = module.substr(0, module.find(" ("));
    }
    if (module.empty() || module == "Linux host") {
        std::string cpu = jsonString(context, "cpu");
        if (!cpu.empty())
            return cpu;
    }
    return module.empty() ? jsonString(context, "host") : module;
}

// A directory without its trailing slashes: "out/a/" is named "a".
std::string trimmedDir(std::string dir)
{
    while (dir.size() > 1 && dir.back() == '/')
        dir.pop_back();
    return dir;
}

// Each sweep's label: module · power mode · clocks, with the directory added to labels that
// would otherwise be the same (the same board twice); the path as given if even that is shared.
std::vector<std::string> deviceLabels(const std::vector<SweepSource>& sweeps)
{
    std::vector<std::string> labels;
    for (const SweepSource& s : sweeps) {
        const json& context = jsonMember(s.sweep, "context");
        std::string label = moduleOf(context);
        for (const std::string& part : {jsonString(context, "power_mode"), clocksText(context)})
            if (!part.empty())
                label += (label.empty() ? "" : " · ") + part;
        labels.push_back(label.empty() ? s.dir : label);
    }
    const std::vector<std::string> plain = labels;
    for (size_t i = 0; i < labels.size(); ++i) {
        if (std::count(plain.begin(), plain.end(), plain[i]) < 2)
            continue;
        std::string name = fs::path(trimmedDir(sweeps[i].dir)).filename().string();
        bool nameShared = false;
        for (size_t j = 0; j < labels.size(); ++j)
            nameShared = nameShared ||
                (j != i && plain[j] == plain[i] &&
                    fs::path(trimmedDir(sweeps[j].dir)).filename().string() == name);
        labels[i] = plain[i] + " (" + (nameShared ? sweeps[i].dir : name) + ")";
    }
    return labels;
}

// A cell's place in the comparison: the sweep's own key (model, engine spec, batch, threads) and
// the precision the engine resolved to (the spec may leave it to the backend).
using DeviceCellKey = std::tuple<std::string, std::string, std::string, int, int>;

DeviceCellKey keyOf(const json& cell)
{
    return {jsonString(cell, "model"), jsonString(cell, "engine"), jsonString(cell, "precision"),
        intOf(cell, "batch"), intOf(cell, "threads")};
}

std::string keyText(const DeviceCellKey& key)
{
    const auto& [model, engine, precision, batch, threads] = key;
    return fmt::format("{} · {}{} · batch {}{}", model, engine,
        precision.empty() ? "" : " · " + precision, batch,
        threads > 0 ? fmt::format(" · {} threads", threads) : std::string());
}

// The cells of every sweep in one order: first appearance, the baseline's first. A failed cell,
// whose precision is unknown, joins the row of the same model, engine, batch and threads.
struct CellTable {
    std::vector<DeviceCellKey> keys;
    std::vector<std::vector<const json*>> bySweep; // [row][sweep], null when missing
};

CellTable tableOf(const std::vector<SweepSource>& sweeps)
{
    CellTable t;
    std::map<DeviceCellKey, size_t> rowOf;
    auto rowFor = [&](const DeviceCellKey& key) {
        const auto [it, added] = rowOf.emplace(key, t.keys.size());
        if (added) {
            t.keys.push_back(key);
            t.bySweep.emplace_back(sweeps.size(), nullptr);
        }
        return it->second;
    };
    for (const bool ok : {true, false})
        for (size_t s = 0; s < sweeps.size(); ++s)
            for (const json& cell : jsonMember(sweeps[s].sweep, "cells")) {
                if (!cell.is_object() || (jsonString(cell, "status") == "ok") != ok)
                    continue;
                DeviceCellKey key = keyOf(cell);
                if (!ok && std::get<2>(key).empty()) {
                    const auto same = std::find_if(t.keys.begin(), t.keys.end(), [&](auto& k) {
                        return std::get<0>(k) == std::get<0>(key) &&
                            std::get<1>(k) == std::get<1>(key) &&
                            std::get<3>(k) == std::get<3>(key) &&
                            std::get<4>(k) == std::get<4>(key);
                    });
                    if (same != t.keys.end())
                        key = *same;
                }
                const size_t row = rowFor(key);
                if (!t.bySweep[row][s])
                    t.bySweep[row][s] = &cell;
            }
    return t;
}

bool measured(const json* cell)
{
    return cell && jsonString(*cell, "status") == "ok";
}

// Every sweep after the first shares at least one measured cell with it, or the refusal names
// each directory with the cells it has.
Status checkShared(const std::vector<SweepSource>& sweeps, const std::vector<std::string>& labels,
    const CellTable& t)
{
    std::vector<size_t> alone;
    for (size_t s = 1; s < sweeps.size(); ++s) {
        bool shares = false;
        for (const auto& row : t.bySweep)
            shares = shares || (measured(row[0]) && measured(row[s]));
        if (!shares)
            alone.push_back(s);
    }
    if (alone.empty())
        return Status();
    std::string message = "the sweeps share no cells: ";
    for (size_t i = 0; i < alone.size(); ++i)
        message += (i ? ", " : "") + sweeps[alone[i]].dir;
    message += alone.size() == 1 ? " has" : " have";
    message += " no cell (model x engine x precision x batch x threads) measured in the first, " +
        sweeps[0].dir + ", the baseline of the speed-ups. What each holds:";
    for (size_t s = 0; s < sweeps.size(); ++s) {
        std::vector<std::string> cells;
        for (size_t r = 0; r < t.keys.size(); ++r)
            if (measured(t.bySweep[r][s]))
                cells.push_back(keyText(t.keys[r]));
        message += "\n  " + sweeps[s].dir + " (" + labels[s] + "): ";
        if (cells.empty())
            message += "no measured cell";
        for (size_t i = 0; i < cells.size() && i < kCellsNamed; ++i)
            message += (i ? "; " : "") + cells[i];
        if (cells.size() > kCellsNamed)
            message += fmt::format("; and {} more", cells.size() - kCellsNamed);
    }
    return Status::invalid(message);
}

json deviceJson(const SweepSource& s, const std::string& label)
{
    const json& context = jsonMember(s.sweep, "context");
    size_t cells = 0;
    for (const json& cell : jsonMember(s.sweep, "cells"))
        cells += cell.is_object() && jsonString(cell, "status") == "ok";
    return {{"label", label}, {"dir", s.dir}, {"module", moduleOf(context)},
        {"board", jsonString(context, "board")}, {"power_mode", jsonMember(context, "power_mode")},
        {"clocks", clocksText(context)}, {"host", jsonString(context, "host")},
        {"study", jsonString(jsonMember(s.sweep, "study"), "name")},
        {"started_utc", jsonString(context, "started_utc")},
        {"jetagent_version", jsonString(s.sweep, "jetagent_version")}, {"cells_measured", cells}};
}

json entryJson(const json* cell, const json* baseline)
{
    if (!cell)
        return {{"status", "missing"}};
    json entry = {{"status", measured(cell) ? "ok" : "failed"}};
    if (!measured(cell)) {
        entry["error"] = jsonString(*cell, "error");
        return entry;
    }
    for (const char* key : kFigures) {
        const auto value = jsonNumber(*cell, key);
        entry[key] = value ? json(*value) : json();
    }
    const auto mine = jsonNumber(*cell, "throughput_ips");
    const auto base =
        measured(baseline) ? jsonNumber(*baseline, "throughput_ips") : std::optional<double>();
    entry["speedup"] = mine && base && *mine > 0 && *base > 0 ? json(*mine / *base) : json();
    return entry;
}

std::string speedupText(const json& entry)
{
    const auto v = jsonNumber(entry, "speedup");
    return v ? formatNumber(*v) + "x" : "—";
}

// An entry's status as a reader wants it: ok, "failed: why" or "missing (not in this sweep)".
std::string statusText(const json& entry)
{
    std::string status = jsonString(entry, "status");
    if (status == "failed")
        return "failed: " + jsonString(entry, "error");
    if (status == "missing")
        return "missing (not in this sweep)";
    return status;
}

std::string cellTitle(const json& cell)
{
    return keyText({jsonString(cell, "model"), jsonString(cell, "engine"),
        jsonString(cell, "precision"), intOf(cell, "batch"), intOf(cell, "threads")});
}

const char* const kSpeedupDefinition =
    "speed-up = the device's throughput / the first device's, for the same cell (throughput = "
    "batch / mean latency per inference, so it is also the first's mean latency / the device's)";

// A grouped bar chart: one group per cell, one bar per device; omitted when no device has `key`.
void cellBarChart(HtmlPage& page, const json& comparison, const char* id, const std::string& title,
    const char* key, const std::string& axisTitle, bool logAxis, const std::string& missing)
{
    const std::vector<const json*> devices = jsonItems(comparison, "devices");
    const std::vector<const json*> cells = jsonItems(comparison, "cells");
    json labels = json::array();
    for (const json* cell : cells)
        labels.push_back(cellTitle(*cell));
    json datasets = json::array();
    for (size_t d = 0; d < devices.size(); ++d) {
        json data = json::array();
        json notes = json::array();
        bool any = false;
        for (const json* cell : cells) {
            const json& entries = jsonMember(*cell, "devices");
            const json& entry = entries.is_array() && d < entries.size() ? entries[d] : json();
            const auto value = jsonNumber(entry, key);
            data.push_back(value ? json(*value) : json());
            notes.push_back(value ? "p50 " + formatValue(jsonMember(entry, "latency_p50_ms")) +
                        " ms, " + formatValue(jsonMember(entry, "throughput_ips")) + " images/s"
                                  : statusText(entry));
            any = any || value.has_value();
        }
        if (any)
            datasets.push_back(chartDataset(
                jsonString(*devices[d], "label"), std::move(data), std::move(notes), d));
    }
    if (datasets.empty()) {
        page.omittedChart(id, title, missing);
        return;
    }
    const json config = {{"type", "bar"}, {"data", {{"labels", labels}, {"datasets", datasets}}},
        {"options",
            {{"scales",
                {{"x", chartAxis("cell")},
                    {"y",
                        logAxis ? chartAxis(axisTitle, "logarithmic")
                                : axisFromZero(axisTitle)}}}}}};
    page.chart(id, title, config, kChartWidth, kChartHeight);
}

void devicesTable(HtmlPage& page, const json& comparison)
{
    std::vector<std::vector<std::string>> rows;
    for (const json* d : jsonItems(comparison, "devices"))
        rows.push_back({jsonString(*d, "label"), jsonString(*d, "dir"), jsonString(*d, "board"),
            formatValue(jsonMember(*d, "power_mode")), jsonString(*d, "clocks"),
            jsonString(*d, "host"), jsonString(*d, "study"),
            formatValue(jsonMember(*d, "cells_measured")), jsonString(*d, "started_utc")});
    page.table("table-devices",
        {{"device", "", "the label used below", false}, {"directory", "", "", false},
            {"board", "", "the sweep's context", false}, {"power mode", "", "nvpmodel", false},
            {"clocks", "", "when the sweep wrote its results", false}, {"host", "", "", false},
            {"study", "", "", false}, {"cells", "", "measured cells", true},
            {"started", "", "UTC", false}},
        rows);
}

void cellsTable(HtmlPage& page, const json& comparison)
{
    const std::vector<const json*> devices = jsonItems(comparison, "devices");
    std::vector<std::vector<std::string>> rows;
    for (const json* cell : jsonItems(comparison, "cells")) {
        const json& entries = jsonMember(*cell, "devices");
        for (size_t d = 0; d < devices.size(); ++d) {
            const json& entry = entries.is_array() && d < entries.size() ? entries[d] : json();
            rows.push_back({jsonString(*cell, "model"), jsonString(*cell, "engine"),
                jsonString(*cell, "precision"), formatValue(jsonMember(*cell, "batch")),
                formatValue(jsonMember(*cell, "threads")),
                fmt::format("{} of {}", intOf(*cell, "measured_on"), devices.size()),
                jsonString(*devices[d], "label"), statusText(entry),
                formatValue(jsonMember(entry, "latency_p50_ms")),
                formatValue(jsonMember(entry, "latency_p99_ms")),
                formatValue(jsonMember(entry, "throughput_ips")), speedupText(entry),
                formatValue(jsonMember(entry, "energy_mj"))});
        }
    }
    page.table("table-cells",
        {{"model", "", "", false}, {"engine", "", "the sweep's engine spec", false},
            {"precision", "", "as the engine resolved it", false}, {"batch", "", "", true},
            {"threads", "", "0 = the backend's default", true},
            {"measured on", "", "devices with the cell measured", false}, {"device", "", "", false},
            {"status", "", "", false},
            {"p50", "ms", "nearest-rank median latency per inference", true},
            {"p99", "ms", "nearest-rank p99", true}, {"throughput", "images/s", "", true},
            {"speed-up", "vs first", kSpeedupDefinition, true},
            {"energy", "mJ/inference", "— where the device had no power rails", true}},
        rows);
}

HtmlPage devicesPage(const json& comparison)
{
    HtmlPage page("jetagent: devices compared");
    page.heading(1, "Devices compared");
    page.paragraph("Written by jetagent " + jsonString(comparison, "jetagent_version") +
        ". Cells are keyed by model x engine x precision x batch x threads; the first device is "
        "the baseline: " +
        jsonString(comparison, "speedup_definition") + ".");
    page.heading(2, "Devices");
    devicesTable(page, comparison);
    page.heading(2, "Charts");
    cellBarChart(page, comparison, "chart-speedup", "Speed-up against the first device, per cell",
        "speedup", "speed-up (throughput / the first device's)", false,
        "no cell was measured on the first device and another");
    cellBarChart(page, comparison, "chart-latency", "Latency per inference, p50 (log axis)",
        "latency_p50_ms", "p50 latency per inference (ms, log scale)", true,
        "no cell measured a latency");
    cellBarChart(page, comparison, "chart-energy", "Energy per inference", "energy_mj",
        "energy per inference (mJ)", false, "no device had power rails (no energy figures)");
    page.heading(2, "Every cell on every device");
    cellsTable(page, comparison);
    return page;
}

} // namespace

bool isSweepDirectory(const std::string& dir)
{
    std::error_code ec;
    return fs::exists(fs::symlink_status(fs::path(dir) / "sweep.json", ec));
}

Expected<json> readSweepDocument(const std::string& dir)
{
    const std::string path = (fs::path(dir) / "sweep.json").string();
    std::string text;
    if (Status s = readRegularFile(path, path, kMaxSweepJsonBytes, text, FileLinks::Refuse); !s)
        return s;
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::parse_error& e) {
        return Status::invalid(fmt::format(
            "{}: not valid JSON (at byte {}); write it again with jetagent sweep", path, e.byte));
    }
    if (!doc.is_object() || jsonString(doc, "format") != "jetagent-sweep")
        return Status::invalid(
            path + ": not a sweep's results (no \"format\": \"jetagent-sweep\")");
    if (!jsonMember(doc, "cells").is_array())
        return Status::invalid(path + ": holds no \"cells\" array");
    return doc;
}

Expected<json> compareDevices(const std::vector<SweepSource>& sweeps)
{
    if (sweeps.size() < 2)
        return Status::invalid("comparing devices needs two or more sweep directories");
    const std::vector<std::string> labels = deviceLabels(sweeps);
    const CellTable t = tableOf(sweeps);
    if (Status s = checkShared(sweeps, labels, t); !s)
        return s;
    json devices = json::array();
    for (size_t s = 0; s < sweeps.size(); ++s)
        devices.push_back(deviceJson(sweeps[s], labels[s]));
    json cells = json::array();
    for (size_t r = 0; r < t.keys.size(); ++r) {
        const auto& [model, engine, precision, batch, threads] = t.keys[r];
        json entries = json::array();
        size_t on = 0;
        for (size_t s = 0; s < sweeps.size(); ++s) {
            entries.push_back(entryJson(t.bySweep[r][s], t.bySweep[r][0]));
            on += measured(t.bySweep[r][s]);
        }
        cells.push_back(
            {{"model", model}, {"engine", engine}, {"precision", precision}, {"batch", batch},
                {"threads", threads}, {"measured_on", on}, {"devices", std::move(entries)}});
    }
    return json {{"format", "jetagent-devices"}, {"format_version", 1},
        {"jetagent_version", JETAGENT_VERSION},
        {"key", {"model", "engine", "precision", "batch", "threads"}},
        {"speedup_definition", kSpeedupDefinition}, {"devices", std::move(devices)},
        {"cells", std::move(cells)}};
}

std::string devicesMarkdown(const json& c)
{
    const std::vector<const json*> devices = jsonItems(c, "devices");
    std::string out = "# Devices compared\n\n| device | directory | board | power mode | clocks "
                      "| study | cells |\n|---|---|---|---|---|---|--:|\n";
    for (const json* d : devices)
        out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n",
            markdownCell(jsonString(*d, "label")), markdownCell(jsonString(*d, "dir")),
            markdownCell(jsonString(*d, "board")),
            markdownCell(formatValue(jsonMember(*d, "power_mode"))),
            markdownCell(jsonString(*d, "clocks")), markdownCell(jsonString(*d, "study")),
            formatValue(jsonMember(*d, "cells_measured")));
    out += fmt::format("\nCells are keyed by model x engine x precision x batch x threads. The "
                       "first device, {}, is the baseline: {}. Latency per inference (one run of "
                       "`batch` images), nearest-rank percentiles; energy per inference in mJ, — "
                       "where a device had no power rails.\n",
        devices.empty() ? std::string() : markdownCell(jsonString(*devices[0], "label")),
        kSpeedupDefinition);
    for (const json* cell : jsonItems(c, "cells")) {
        out += fmt::format("\n## {} (measured on {} of {})\n\n| device | p50 ms | p99 ms | "
                           "images/s | speed-up | mJ/inference | status |\n"
                           "|---|--:|--:|--:|--:|--:|---|\n",
            markdownCell(cellTitle(*cell)), intOf(*cell, "measured_on"), devices.size());
        const json& entries = jsonMember(*cell, "devices");
        for (size_t d = 0; d < devices.size(); ++d) {
            const json& e = entries.is_array() && d < entries.size() ? entries[d] : json();
            out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n",
                markdownCell(jsonString(*devices[d], "label")),
                formatValue(jsonMember(e, "latency_p50_ms")),
                formatValue(jsonMember(e, "latency_p99_ms")),
                formatValue(jsonMember(e, "throughput_ips")), speedupText(e),
                formatValue(jsonMember(e, "energy_mj")), markdownCell(statusText(e)));
        }
    }
    return out;
}

std::string devicesHtml(const json& comparison, const std::string& chartJs)
{
    return devicesPage(comparison).render(chartJs, comparison);
}

Expected<DevicesReportResult> writeDevicesReport(const DevicesReportOptions& options)
{
    std::vector<SweepSource> sweeps;
    std::error_code ec;
    for (size_t i = 0; i < options.sweepDirs.size(); ++i)
        for (size_t j = 0; j < i; ++j)
            if (fs::equivalent(options.sweepDirs[i], options.sweepDirs[j], ec))
                return Status::invalid(options.sweepDirs[j] + " and " + options.sweepDirs[i] +
                    " are the same sweep: give each directory once");
    for (const std::string& dir : options.sweepDirs) {
        auto doc = readSweepDocument(dir);
        if (!doc)
            return doc.status();
        sweeps.push_back({dir, std::move(doc).value()});
    }
    auto comparison = compareDevices(sweeps);
    if (!comparison)
        return comparison.status();

    DevicesReportResult result;
    result.htmlPath = options.output.empty() ? kDevicesReportName : options.output;
    const fs::path html(result.htmlPath);
    result.markdownPath = (html.extension() == ".html" || html.extension() == ".htm")
        ? fs::path(html).replace_extension(".md").string()
        : result.htmlPath + ".md";
    const bool replace = options.output.empty() || options.force;
    const fs::path outDir = html.has_parent_path() ? html.parent_path() : fs::path(".");
    for (const SweepSource& s : sweeps)
        if (fs::equivalent(outDir, s.dir, ec))
            return Status::invalid(result.htmlPath + " would be written into the sweep directory " +
                s.dir + ", whose files are this report's inputs: name a page elsewhere with -o");
    for (const std::string& path : {result.htmlPath, result.markdownPath})
        if (Status s = outputFault(path, replace); !s)
            return s;
    auto js = chartJsSource(options.chartJs);
    if (!js)
        return js.status();

    const HtmlPage built = devicesPage(*comparison);
    const std::string page = built.render(js.value(), *comparison);
    if (Status s = writeReportFile(result.markdownPath, devicesMarkdown(*comparison), replace); !s)
        return s;
    if (Status s = writeReportFile(result.htmlPath, page, replace); !s)
        return s;
    result.bytes = page.size();
    result.charts = static_cast<size_t>(built.chartCount());
    for (const json& cell : (*comparison)["cells"]) {
        ++result.cells;
        result.sharedCells += cell["measured_on"].get<size_t>() == sweeps.size();
    }
    return result;
}

} // namespace jetagent
