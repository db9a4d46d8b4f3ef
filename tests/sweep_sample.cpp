// A sweep.json document built in code for the HTML report's tests (see sweep_sample.h).
#include "sweep_sample.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace jetagent::test {

namespace {

using json = nlohmann::json;

struct SampleModel {
    const char* name;
    double baselineP50Ms; // at batch 1 on the baseline engine
    double parameters;
    double macs;
};

constexpr SampleModel kModels[] = {
    {"resnet18", 12.0, 11689512, 1814073344},
    {"mobilenet_v2", 4.0, 3504872, 300774272},
    {"squeezenet1_1", 2.0, 1235496, 349152512},
};

struct SampleEngine {
    const char* spec;
    const char* backend;
    double speed; // latency factor against the baseline
    double batchExponent; // latency grows as batch^exponent
    double powerW;
};

const SampleEngine kEngines[] = {
    {"xnnpack", "xnnpack", 0.5, 0.8, 6.0},
    {kSampleBaseline, "xnnpack", 1.0, 0.9, 5.0},
};

constexpr const char* kFigureKeys[] = {"runs", "build_cold_ms", "build_warm_ms", "latency_min_ms",
    "latency_mean_ms", "latency_sd_ms", "latency_p50_ms", "latency_p90_ms", "latency_p95_ms",
    "latency_p99_ms", "latency_max_ms", "p99_over_p50", "latency_cov", "throughput_ips",
    "wall_throughput_ips", "rss_peak_mb", "rss_engine_mb", "heap_engine_mb",
    "mem_available_drop_mb", "gpu_memory_mb", "cpu_ms_per_inference", "cpu_utilisation", "power_w",
    "energy_mj", "dynamic_energy_mj", "inferences_per_j", "top1", "top5", "labelled_inputs",
    "agreement_rel_error", "agreement_top1", "parameters", "macs", "gflops"};

json measuredCell(const SampleModel& model, const SampleEngine& engine, size_t modelIndex,
    int batch, const SweepSampleOptions& options)
{
    json cell;
    const double p50 = model.baselineP50Ms * engine.speed * std::pow(batch, engine.batchExponent);
    const double mean = p50 * 1.05;
    cell["runs"] = 200;
    cell["build_cold_ms"] = 150.0 * (modelIndex + 1);
    cell["build_warm_ms"] = 20.0 * (modelIndex + 1);
    cell["latency_min_ms"] = p50 * 0.9;
    cell["latency_mean_ms"] = mean;
    cell["latency_sd_ms"] = p50 * 0.08;
    cell["latency_p50_ms"] = p50;
    cell["latency_p90_ms"] = p50 * 1.1;
    cell["latency_p95_ms"] = p50 * 1.15;
    const double p99 = p50 * (1.2 + 0.1 * static_cast<double>(modelIndex));
    cell["latency_p99_ms"] = p99;
    cell["latency_max_ms"] = p99 * 1.3;
    cell["p99_over_p50"] = p99 / p50;
    cell["latency_cov"] = 0.08;
    cell["throughput_ips"] = batch * 1000.0 / mean;
    cell["wall_throughput_ips"] = batch * 1000.0 / (mean * 1.02);
    cell["rss_peak_mb"] = 80.0 + model.parameters * 4 / 1e6;
    cell["rss_engine_mb"] = model.parameters * 4 / 1e6;
    cell["cpu_ms_per_inference"] = mean * 1.8;
    cell["cpu_utilisation"] = 1.8;
    cell["parameters"] = model.parameters;
    cell["macs"] = model.macs;
    cell["gflops"] = 2.0 * model.macs * batch / (mean * 1e6);
    if (options.energy && modelIndex == 0) {
        const double energy = engine.powerW * mean; // W x ms = mJ
        cell["power_w"] = engine.powerW;
        cell["energy_mj"] = energy;
        cell["dynamic_energy_mj"] = (engine.powerW - 3.0) * mean;
        cell["inferences_per_j"] = batch * 1000.0 / energy;
    }
    if (options.accuracy && modelIndex == 1) {
        cell["top1"] = 0.71;
        cell["top5"] = 0.90;
        cell["labelled_inputs"] = 500;
    }
    if (options.accuracy && engine.spec != std::string(kSampleBaseline)) {
        cell["agreement_rel_error"] = 1.5e-5;
        cell["agreement_top1"] = 1.0;
    }
    return cell;
}

json sampleCell(const SampleModel& model, const SampleEngine& engine, size_t modelIndex, int batch,
    const SweepSampleOptions& options)
{
    const bool fails = options.failedCell && modelIndex == 2 &&
        engine.spec == std::string(kSampleBaseline) && batch == options.batches.back();
    json cell = {{"model", model.name},
        {"model_path", std::string("models/") + model.name + ".onnx"}, {"engine", engine.spec},
        {"backend", engine.backend}, {"device", "cpu"}, {"precision", "fp32"}, {"batch", batch},
        {"threads", 0}, {"status", fails ? "failed" : "ok"}, {"error", fails ? kHostileError : ""}};
    const json figures =
        fails ? json::object() : measuredCell(model, engine, modelIndex, batch, options);
    for (const char* key : kFigureKeys)
        cell[key] = figures.contains(key) ? figures[key] : json();
    return cell;
}

const json* findCell(
    const json& cells, const std::string& model, const std::string& engine, int batch)
{
    for (const json& cell : cells)
        if (cell["model"] == model && cell["engine"] == engine && cell["batch"] == batch &&
            cell["status"] == "ok")
            return &cell;
    return nullptr;
}

json speedupRows(const json& cells, const SweepSampleOptions& options)
{
    json rows = json::array();
    for (const SampleModel& model : kModels)
        for (const int batch : options.batches) {
            const json* fast = findCell(cells, model.name, "xnnpack", batch);
            const json* base = findCell(cells, model.name, kSampleBaseline, batch);
            if (!fast || !base)
                continue;
            const double baseP50 = (*base)["latency_p50_ms"];
            const double fastP50 = (*fast)["latency_p50_ms"];
            rows.push_back(
                {{"model", model.name}, {"engine", "xnnpack"}, {"baseline", kSampleBaseline},
                    {"batch", batch}, {"threads", 0}, {"baseline_p50_ms", baseP50},
                    {"engine_p50_ms", fastP50}, {"speedup", baseP50 / fastP50},
                    {"parameters", model.parameters}, {"macs", model.macs}});
        }
    return rows;
}

// RTR, ASE and BSR per model, engine and batch size, when batch 1 and a larger one were measured.
json scalingRows(const json& cells, const SweepSampleOptions& options)
{
    json rows = json::array();
    if (options.batches.size() < 2)
        return rows;
    const auto ase = [&](const std::string& model, const std::string& engine, int batch) -> json {
        const json* one = findCell(cells, model, engine, 1);
        const json* at = findCell(cells, model, engine, batch);
        if (!one || !at)
            return json();
        return at->at("throughput_ips").get<double>() /
            (batch * one->at("throughput_ips").get<double>());
    };
    for (const SampleModel& model : kModels)
        for (const SampleEngine& engine : kEngines)
            for (const int batch : options.batches) {
                const json* at = findCell(cells, model.name, engine.spec, batch);
                const json own = ase(model.name, engine.spec, batch);
                if (!at || own.is_null())
                    continue;
                const json base = ase(model.name, kSampleBaseline, batch);
                const bool isBaseline = engine.spec == std::string(kSampleBaseline);
                rows.push_back({{"model", model.name}, {"engine", engine.spec}, {"threads", 0},
                    {"batch", batch}, {"throughput_ips", (*at)["throughput_ips"]},
                    {"rtr", own.get<double>() * batch}, {"ase", own},
                    {"bsr",
                        isBaseline || base.is_null()
                            ? json()
                            : json(own.get<double>() / base.get<double>())}});
            }
    return rows;
}

// The highest throughput per model whose p99 is within the budget.
json bestRows(const json& cells, const SweepSampleOptions& options)
{
    json rows = json::array();
    if (!options.latencyBudgetMs)
        return rows;
    for (const SampleModel& model : kModels) {
        const json* best = nullptr;
        for (const json& cell : cells)
            if (cell["model"] == model.name && cell["status"] == "ok" &&
                cell["latency_p99_ms"].get<double>() <= *options.latencyBudgetMs &&
                (!best || cell["throughput_ips"] > (*best)["throughput_ips"]))
                best = &cell;
        if (best)
            rows.push_back(
                {{"model", model.name}, {"engine", (*best)["engine"]}, {"batch", (*best)["batch"]},
                    {"threads", 0}, {"latency_p99_ms", (*best)["latency_p99_ms"]},
                    {"throughput_ips", (*best)["throughput_ips"]},
                    {"budget_ms", *options.latencyBudgetMs}});
    }
    return rows;
}

} // namespace

nlohmann::json sampleSweep(const SweepSampleOptions& options)
{
    json cells = json::array();
    for (size_t m = 0; m < std::size(kModels); ++m)
        for (const int batch : options.batches)
            for (const SampleEngine& engine : kEngines)
                cells.push_back(sampleCell(kModels[m], engine, m, batch, options));
    json study = {{"name", "classic CNNs <pre/post> & scaling"}, {"file", "studies/classic.yaml"},
        {"text", std::string("name: classic CNNs\n# ") + kHostileMarkup + "\nbatches: [1, 2, 4]\n"},
        {"models",
            {"models/resnet18.onnx", "models/mobilenet_v2.onnx", "models/squeezenet1_1.onnx"}},
        {"engines", {"xnnpack", kSampleBaseline}}, {"baseline", kSampleBaseline},
        {"batches", options.batches}, {"threads", {0}}, {"iterations", 200}, {"warmup", 10},
        {"rounds", 10}, {"inputs", "random"},
        {"latency_budget_ms", options.latencyBudgetMs ? json(*options.latencyBudgetMs) : json()}};
    json context = {{"host", "devbox"}, {"os", "Debian GNU/Linux 12 (bookworm)"},
        {"kernel", "Linux 6.1.0-26-amd64"}, {"cores", 2},
        {"board", {{"model", "x86-64 host"}, {"power_mode", nullptr}}},
        {"versions", {{"opencv", "4.6.0"}, {"xnnpack", "0.0~git20221221"}}}};
    json columns = json::array({
        {{"name", "latency_p50_ms"}, {"unit", "ms"},
            {"description", "median latency per inference"}},
        {{"name", "throughput_ips"}, {"unit", "images/s"}, {"description", "batch * 1000 / mean"}},
        {{"name", "energy_mj"}, {"unit", "mJ"}, {"description", "energy per inference"}},
    });
    json tables = {{"speedup", speedupRows(cells, options)},
        {"scaling", scalingRows(cells, options)}, {"best", bestRows(cells, options)}};
    return {{"format", "jetagent-sweep"}, {"format_version", 1}, {"jetagent_version", "0.1.0"},
        {"study", study}, {"context", context},
        {"idle_power_w", options.energy ? json(3.0) : json()}, {"interrupted", false},
        {"columns", columns}, {"cells", cells}, {"tables", tables}};
}

} // namespace jetagent::test
