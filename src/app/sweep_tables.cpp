// The sweep's results as data: the column table, CSV (written and read back for --resume), JSON
// cells, the derived tables (speed-up, RTR/ASE/BSR, best under a latency budget) and Markdown.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "html_report.h"
#include "jetagent/base/text.h"
#include "sweep.h"

namespace jetagent {

namespace {

// A figure's column: the CellFigures member it reads and writes.
struct FigureColumn {
    SweepColumn column;
    double CellFigures::*member;
};

const std::vector<FigureColumn>& figureColumns()
{
    using F = CellFigures;
    static const std::vector<FigureColumn> columns = {
        {{"runs", "count", "timed Session::run calls (each of `batch` inputs)"}, &F::runs},
        {{"build_cold_ms", "ms", "building the engine with an empty cache"}, &F::buildColdMs},
        {{"build_warm_ms", "ms", "building it again from the cache"}, &F::buildWarmMs},
        {{"latency_min_ms", "ms", "per inference (one run of `batch` inputs)"}, &F::latencyMinMs},
        {{"latency_mean_ms", "ms", "mean per inference"}, &F::latencyMeanMs},
        {{"latency_sd_ms", "ms", "standard deviation"}, &F::latencySdMs},
        {{"latency_p50_ms", "ms", "nearest-rank median"}, &F::latencyP50Ms},
        {{"latency_p90_ms", "ms", "nearest-rank p90"}, &F::latencyP90Ms},
        {{"latency_p95_ms", "ms", "nearest-rank p95"}, &F::latencyP95Ms},
        {{"latency_p99_ms", "ms", "nearest-rank p99"}, &F::latencyP99Ms},
        {{"latency_max_ms", "ms", "slowest inference"}, &F::latencyMaxMs},
        {{"p99_over_p50", "ratio", "stability: p99 / p50"}, &F::p99OverP50},
        {{"latency_cov", "ratio", "coefficient of variation: sd / mean"}, &F::latencyCov},
        {{"throughput_ips", "images/s", "batch / mean latency"}, &F::throughputIps},
        {{"wall_throughput_ips", "images/s", "images over the cell's wall time"},
            &F::wallThroughputIps},
        {{"rss_peak_mb", "MiB", "the process's peak resident memory during the cell"},
            &F::rssPeakMb},
        {{"rss_engine_mb", "MiB",
             "resident memory the engine and session added (less where freed memory is reused)"},
            &F::rssEngineMb},
        {{"heap_engine_mb", "MiB", "C heap in use that the engine and session added"},
            &F::heapEngineMb},
        {{"mem_available_drop_mb", "MiB", "MemAvailable before the build less after the warm-up"},
            &F::memAvailableDropMb},
        {{"gpu_memory_mb", "MiB", "device memory, where the backend reports it"}, &F::gpuMemoryMb},
        {{"cpu_ms_per_inference", "ms", "process CPU time per inference"}, &F::cpuMsPerInference},
        {{"cpu_utilisation", "cores", "process CPU time / wall time while timed"},
            &F::cpuUtilisation},
        {{"power_w", "W", "mean total power over the timed runs"}, &F::powerW},
        {{"energy_mj", "mJ", "energy per inference"}, &F::energyMj},
        {{"dynamic_energy_mj", "mJ", "energy per inference above the idle power"},
            &F::dynamicEnergyMj},
        {{"inferences_per_j", "1/J", "inferences per joule"}, &F::inferencesPerJ},
        {{"top1", "fraction", "top-1 accuracy on labelled inputs"}, &F::top1},
        {{"top5", "fraction", "top-5 accuracy on labelled inputs"}, &F::top5},
        {{"labelled_inputs", "count", "labelled inputs scored"}, &F::labelledInputs},
        {{"agreement_rel_error", "ratio", "max |out - baseline| / max |baseline|"},
            &F::agreementRelError},
        {{"agreement_top1", "fraction", "inputs whose top-1 class is the baseline's"},
            &F::agreementTop1},
        {{"parameters", "count", "trainable parameters (inspect)"}, &F::parameters},
        {{"macs", "count", "multiply-accumulates per image (inspect)"}, &F::macs},
        {{"gflops", "GFLOP/s", "achieved: 2 x MACs x batch / mean latency"}, &F::gflops},
    };
    return columns;
}

// The key and description columns that precede the figures.
const char* const kKeyColumns[] = {"model", "engine", "batch", "threads", "backend", "device",
    "precision", "status", "error", "model_path"};

std::string csvField(const std::string& value)
{
    if (value.find_first_of(",\"\n\r") == std::string::npos)
        return value;
    std::string out = "\"";
    for (char c : value)
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

// The records of a CSV text, each a list of fields (RFC 4180: a quoted field may hold commas,
// doubled quotes and line breaks); false when a quoted field is not closed.
bool splitCsv(const std::string& text, std::vector<std::vector<std::string>>& records)
{
    records.assign(1, std::vector<std::string>(1));
    bool quoted = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        std::string& field = records.back().back();
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            records.back().emplace_back();
        } else if (c == '\n') {
            records.emplace_back(1);
        } else if (c != '\r') {
            field += c;
        }
    }
    if (records.back().size() == 1 && records.back()[0].empty())
        records.pop_back(); // the final line break
    return !quoted;
}

std::string figureText(double v)
{
    if (std::isnan(v))
        return "";
    std::string out;
    appendFormat(out, "{}", v); // the shortest text that reads back exactly (--resume)
    return out;
}

bool sameGroup(const CellKey& a, const CellKey& b)
{
    return a.model == b.model && a.batch == b.batch && a.threads == b.threads;
}

std::string mdNumber(const nlohmann::json& v, int decimals)
{
    if (!v.is_number())
        return "-";
    std::string out;
    appendFormat(out, "{:.{}f}", v.get<double>(), decimals);
    return out;
}

std::string mdCount(const nlohmann::json& v)
{
    if (!v.is_number())
        return "-";
    const double d = v.get<double>();
    std::string out;
    if (d >= 1e9)
        appendFormat(out, "{:.2f} G", d / 1e9);
    else if (d >= 1e6)
        appendFormat(out, "{:.2f} M", d / 1e6);
    else
        appendFormat(out, "{:.0f}", d);
    return out;
}

} // namespace

nlohmann::json numberOrNull(double v)
{
    return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

const std::vector<SweepColumn>& sweepColumns()
{
    static const std::vector<SweepColumn> columns = [] {
        std::vector<SweepColumn> all = {{"model", "", "the model file's name"},
            {"engine", "", "the engine spec (compare's syntax)"},
            {"batch", "images", "inputs per inference"},
            {"threads", "count", "CPU threads asked for (0 = the backend's default)"},
            {"backend", "", "the backend that ran it"}, {"device", "", "cpu, gpu, dla0, dla1"},
            {"precision", "", "fp32, fp16, int8"}, {"status", "", "ok or failed"},
            {"error", "", "why the cell failed"}, {"model_path", "", "the ONNX file"}};
        for (const FigureColumn& f : figureColumns())
            all.push_back(f.column);
        return all;
    }();
    return columns;
}

std::string cellsCsv(const std::vector<CellResult>& cells)
{
    std::string out;
    bool first = true;
    for (const SweepColumn& c : sweepColumns()) {
        out += first ? "" : ",";
        first = false;
        out += c.name;
    }
    out += '\n';
    for (const CellResult& cell : cells) {
        const std::string keys[] = {cell.key.model, cell.key.engine, std::to_string(cell.key.batch),
            std::to_string(cell.key.threads), cell.backend, cell.device, cell.precision,
            cell.ok ? "ok" : "failed", cell.error, cell.modelPath};
        for (size_t i = 0; i < std::size(keys); ++i)
            out += (i ? "," : "") + csvField(keys[i]);
        for (const FigureColumn& f : figureColumns())
            out += "," + figureText(cell.figures.*f.member);
        out += '\n';
    }
    return out;
}

Expected<std::vector<CellResult>> parseCellsCsv(const std::string& text, const std::string& name)
{
    std::vector<std::vector<std::string>> records;
    if (!splitCsv(text, records))
        return Status::invalid(name + ": a quoted field is not closed");
    if (records.empty())
        return Status::invalid(name + ": empty (no header line)");
    const std::vector<std::string>& header = records[0];
    std::map<std::string, size_t> at;
    for (size_t i = 0; i < header.size(); ++i)
        at[header[i]] = i;
    for (const char* key : kKeyColumns)
        if (!at.count(key))
            return Status::invalid(
                name + ": line 1: no column '" + key + "' (not a CSV that jetagent sweep wrote)");
    std::vector<CellResult> cells;
    for (size_t n = 1; n < records.size(); ++n) {
        const std::vector<std::string>& fields = records[n];
        const std::string where = name + ": record " + std::to_string(n + 1);
        if (fields.size() != header.size())
            return Status::invalid(where + ": " + std::to_string(fields.size()) +
                " fields where the header has " + std::to_string(header.size()));
        CellResult c;
        c.key.model = fields[at["model"]];
        c.key.engine = fields[at["engine"]];
        try {
            c.key.batch = std::stoi(fields[at["batch"]]);
            c.key.threads = std::stoi(fields[at["threads"]]);
            for (const FigureColumn& f : figureColumns()) {
                auto it = at.find(f.column.name);
                if (it != at.end() && !fields[it->second].empty())
                    c.figures.*f.member = std::stod(fields[it->second]);
            }
        } catch (const std::exception&) {
            return Status::invalid(where + ": a number that cannot be read");
        }
        c.backend = fields[at["backend"]];
        c.device = fields[at["device"]];
        c.precision = fields[at["precision"]];
        c.ok = fields[at["status"]] == "ok";
        c.error = fields[at["error"]];
        c.modelPath = fields[at["model_path"]];
        cells.push_back(std::move(c));
    }
    return cells;
}

nlohmann::json cellJson(const CellResult& cell)
{
    nlohmann::json j = {{"model", cell.key.model}, {"engine", cell.key.engine},
        {"batch", cell.key.batch}, {"threads", cell.key.threads}, {"backend", cell.backend},
        {"device", cell.device}, {"precision", cell.precision},
        {"status", cell.ok ? "ok" : "failed"}, {"error", cell.error},
        {"model_path", cell.modelPath}};
    for (const FigureColumn& f : figureColumns())
        j[f.column.name] = numberOrNull(cell.figures.*f.member);
    return j;
}

std::vector<SpeedupRow> speedupTable(
    const std::vector<CellResult>& cells, const std::string& baseline)
{
    std::vector<SpeedupRow> rows;
    for (const CellResult& base : cells) {
        if (!base.ok || base.key.engine != baseline || !(base.figures.latencyP50Ms > 0))
            continue;
        for (const CellResult& c : cells) {
            if (!c.ok || c.key.engine == baseline || !sameGroup(c.key, base.key) ||
                !(c.figures.latencyP50Ms > 0))
                continue;
            SpeedupRow r;
            r.model = c.key.model;
            r.engine = c.key.engine;
            r.baseline = baseline;
            r.batch = c.key.batch;
            r.threads = c.key.threads;
            r.baselineP50Ms = base.figures.latencyP50Ms;
            r.engineP50Ms = c.figures.latencyP50Ms;
            r.speedup = r.baselineP50Ms / r.engineP50Ms;
            r.parameters = c.figures.parameters;
            r.macs = c.figures.macs;
            rows.push_back(r);
        }
    }
    return rows;
}

std::vector<ScalingRow> scalingTable(
    const std::vector<CellResult>& cells, const std::string& baseline)
{
    // Throughput per (model, engine, threads) and batch.
    using Series = std::tuple<std::string, std::string, int>;
    std::map<Series, std::map<int, double>> series;
    std::vector<Series> order;
    for (const CellResult& c : cells) {
        if (!c.ok || !(c.figures.throughputIps > 0))
            continue;
        const Series s {c.key.model, c.key.engine, c.key.threads};
        if (!series.count(s))
            order.push_back(s);
        series[s][c.key.batch] = c.figures.throughputIps;
    }
    auto ase = [&](const Series& s, int batch) {
        auto it = series.find(s);
        if (it == series.end() || !it->second.count(1) || !it->second.count(batch))
            return kNotMeasured;
        return it->second.at(batch) / (batch * it->second.at(1));
    };
    std::vector<ScalingRow> rows;
    for (const Series& s : order) {
        const auto& byBatch = series[s];
        if (!byBatch.count(1) || byBatch.size() < 2)
            continue;
        for (const auto& [batch, throughput] : byBatch) {
            ScalingRow r;
            std::tie(r.model, r.engine, r.threads) = s;
            r.batch = batch;
            r.throughputIps = throughput;
            r.rtr = throughput / byBatch.at(1);
            r.ase = r.rtr / batch;
            const double baseAse = ase({r.model, baseline, r.threads}, batch);
            if (baseAse > 0)
                r.bsr = r.ase / baseAse;
            rows.push_back(r);
        }
    }
    return rows;
}

std::vector<BestRow> bestUnderBudget(const std::vector<CellResult>& cells, double budgetMs)
{
    std::vector<BestRow> rows;
    if (!(budgetMs > 0))
        return rows;
    for (const CellResult& c : cells) {
        if (!c.ok || !(c.figures.latencyP99Ms <= budgetMs) || !(c.figures.throughputIps > 0))
            continue;
        auto it = std::find_if(
            rows.begin(), rows.end(), [&](const BestRow& r) { return r.model == c.key.model; });
        if (it != rows.end() && it->throughputIps >= c.figures.throughputIps)
            continue;
        BestRow r {c.key.model, c.key.engine, c.key.batch, c.key.threads, c.figures.latencyP99Ms,
            c.figures.throughputIps, budgetMs};
        if (it != rows.end())
            *it = r;
        else
            rows.push_back(r);
    }
    return rows;
}

bool isUnsteady(const nlohmann::json& cell)
{
    const auto it = cell.find("latency_cov");
    return cell.value("status", "") == "ok" && it != cell.end() && it->is_number() &&
        it->get<double>() > kUnsteadyCov;
}

std::string sweepMarkdown(const nlohmann::json& d)
{
    std::string out;
    appendFormat(out, "# Sweep: {}\n\n", d["study"].value("name", "sweep"));
    const nlohmann::json& ctx = d["context"];
    appendFormat(out,
        "{}, {}, jetagent {}. Latency per inference (one run of `batch` "
        "images), nearest-rank percentiles.\n\n",
        ctx.value("board", ctx.value("host", "")), ctx.value("os", ""),
        d.value("jetagent_version", ""));

    out += "## Cells\n\n| model | engine | batch | threads | p50 ms | p99 ms | p99/p50 | images/s "
           "| build ms | heap MiB | CPU ms/inf | mJ/inf | status |\n"
           "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n";
    for (const auto& c : d["cells"]) {
        const std::string build =
            mdNumber(c["build_cold_ms"].is_number() ? c["build_cold_ms"] : c["build_warm_ms"], 0);
        appendFormat(out, "| {} | `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            markdownCell(c["model"].get<std::string>()),
            markdownCell(c["engine"].get<std::string>()), c["batch"].get<int>(),
            c["threads"].get<int>(), mdNumber(c["latency_p50_ms"], 2),
            mdNumber(c["latency_p99_ms"], 2), mdNumber(c["p99_over_p50"], 2),
            mdNumber(c["throughput_ips"], 1), build, mdNumber(c["heap_engine_mb"], 0),
            mdNumber(c["cpu_ms_per_inference"], 2), mdNumber(c["energy_mj"], 1),
            c["status"] != "ok" ? "failed: " + markdownCell(c["error"].get<std::string>())
                : isUnsteady(c) ? "ok, unsteady (CoV " + mdNumber(c["latency_cov"], 2) + ")"
                                : std::string("ok"));
    }
    if (std::any_of(d["cells"].begin(), d["cells"].end(), isUnsteady))
        appendFormat(out,
            "\nUnsteady: the latencies' standard deviation is over {:.0f}% of their mean (CoV); "
            "something else ran, the clocks moved or the model's runs differ. Measure again "
            "before quoting these cells.\n",
            kUnsteadyCov * 100);

    const auto& speedup = d["tables"]["speedup"];
    if (!speedup.empty()) {
        out += "\n## Speed-up over the baseline (p50)\n\n| model | parameters | MACs | batch | "
               "engine | baseline ms | engine ms | speed-up |\n|---|--:|--:|--:|---|--:|--:|--:|\n";
        for (const auto& r : speedup)
            appendFormat(out, "| {} | {} | {} | {} | `{}` | {} | {} | {}x |\n",
                markdownCell(r["model"].get<std::string>()), mdCount(r["parameters"]),
                mdCount(r["macs"]), r["batch"].get<int>(),
                markdownCell(r["engine"].get<std::string>()), mdNumber(r["baseline_p50_ms"], 2),
                mdNumber(r["engine_p50_ms"], 2), mdNumber(r["speedup"], 2));
    }
    const auto& scaling = d["tables"]["scaling"];
    if (!scaling.empty()) {
        out += "\n## Batch scaling\n\nRTR(b) = T(b)/T(1), ASE(b) = T(b)/(b T(1)), BSR(b) = "
               "ASE(b)/ASE_baseline(b); T = images/s.\n\n| model | engine | threads | batch | "
               "images/s | RTR | ASE | BSR |\n|---|---|--:|--:|--:|--:|--:|--:|\n";
        for (const auto& r : scaling)
            appendFormat(out, "| {} | `{}` | {} | {} | {} | {} | {} | {} |\n",
                markdownCell(r["model"].get<std::string>()),
                markdownCell(r["engine"].get<std::string>()), r["threads"].get<int>(),
                r["batch"].get<int>(), mdNumber(r["throughput_ips"], 1), mdNumber(r["rtr"], 2),
                mdNumber(r["ase"], 2), mdNumber(r["bsr"], 2));
    }
    const auto& best = d["tables"]["best"];
    if (!best.empty()) {
        out += "\n## Best configuration under the latency budget (p99)\n\n| model | engine | "
               "batch | threads | p99 ms | images/s | budget ms |\n|---|---|--:|--:|--:|--:|--:|\n";
        for (const auto& r : best)
            appendFormat(out, "| {} | `{}` | {} | {} | {} | {} | {} |\n",
                markdownCell(r["model"].get<std::string>()),
                markdownCell(r["engine"].get<std::string>()), r["batch"].get<int>(),
                r["threads"].get<int>(), mdNumber(r["latency_p99_ms"], 2),
                mdNumber(r["throughput_ips"], 1), mdNumber(r["budget_ms"], 1));
    }
    return out;
}

} // namespace jetagent
