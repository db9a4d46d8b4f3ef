// `jetagent sweep`: the papers' experiments in one command. A study is a matrix of models x
// engines x batch sizes x thread counts; each cell is measured (latency, throughput, build time,
// memory, CPU time, power and energy) with the engines of one model alternating in rounds, and
// the results go to one directory as CSV, JSON, Markdown and an offline HTML report.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "jetagent/base/status.h"

namespace jetagent {

// ---- The study ------------------------------------------------------------------------------

struct Study {
    std::string name = "sweep";
    std::string file; // the study file, "" when given by flags
    std::string text; // the study file as read (kept in the results)
    std::vector<std::string> models; // ONNX files, in the order given (directories expanded)
    std::vector<std::string> engines = {"xnnpack"}; // compare's engine specs
    // Engines added when this build and machine have their backend (a study that runs wherever
    // it is taken: tensorrt on a board, left out elsewhere); those left out are in `skipped`.
    std::vector<std::string> optionalEngines;
    std::vector<std::string> skipped; // "tensorrt:gpu:fp16: the tensorrt backend is not available"
    std::string baseline; // an engine of `engines`; "" = the first
    std::vector<int> batches = {1};
    std::vector<int> threads = {0}; // 0 = the backend's default
    std::string inputs = "random"; // "random" or a frame source URI (image models)
    std::string config; // an agent config whose first task's preprocessing frames get (as the
                        // model was trained); "" = torchvision's ImageNet preprocessing
    std::string labels; // the model's labels file: a labelled source's class names are looked
                        // up in it (else a class's index is the model's output index)
    int iterations = 200; // timed inferences per cell
    double durationS = 0; // > 0: timed runs per cell last this long instead
    int warmup = 10; // untimed inferences per cell before its first round
    int rounds = 10; // the cells of a model take turns this many times
    double latencyBudgetMs = 0; // > 0: the best configuration per model under it
    std::string cacheDir; // prepared models and plans; "" = OUT/cache
    // Power rails: a sysfs root ("" = no sampling; "/" = this board) and its board profile.
    std::string sysfsRoot;
    std::string board = "auto";
    double idleSeconds = 2.0; // the idle power measurement before the sweep
};

// Reads a study file. Model entries are paths (a directory stands for its .onnx files, sorted);
// a bare name ("resnet18") is `modelDir`/NAME.onnx. Errors name the file, line and key. With
// `resolve` false the matrix is left unchecked (resolveStudy), for flags to replace keys first.
Expected<Study> loadStudy(
    const std::string& path, const std::string& modelDir, bool resolve = true);

// Expands the models list (directories, bare names) and checks the matrix: engines parse,
// batches and threads in range, the baseline among the engines. Used for flags and files alike.
Status resolveStudy(Study& study, const std::string& modelDir);

// ---- One cell's results -----------------------------------------------------------------------

constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

struct CellKey {
    std::string model; // the file's stem
    std::string engine; // the spec as given
    int batch = 1;
    int threads = 0;
    bool operator==(const CellKey& o) const
    {
        return model == o.model && engine == o.engine && batch == o.batch && threads == o.threads;
    }
};

// Every figure of a cell; NaN = not measured (an empty CSV field, null in JSON).
struct CellFigures {
    double runs = kNotMeasured;
    double buildColdMs = kNotMeasured, buildWarmMs = kNotMeasured;
    double latencyMinMs = kNotMeasured, latencyMeanMs = kNotMeasured, latencySdMs = kNotMeasured;
    double latencyP50Ms = kNotMeasured, latencyP90Ms = kNotMeasured, latencyP95Ms = kNotMeasured;
    double latencyP99Ms = kNotMeasured, latencyMaxMs = kNotMeasured;
    double p99OverP50 = kNotMeasured, latencyCov = kNotMeasured;
    double throughputIps = kNotMeasured, wallThroughputIps = kNotMeasured;
    double rssPeakMb = kNotMeasured, rssEngineMb = kNotMeasured, heapEngineMb = kNotMeasured;
    double memAvailableDropMb = kNotMeasured;
    double gpuMemoryMb = kNotMeasured;
    double cpuMsPerInference = kNotMeasured, cpuUtilisation = kNotMeasured;
    double powerW = kNotMeasured, energyMj = kNotMeasured, dynamicEnergyMj = kNotMeasured;
    double inferencesPerJ = kNotMeasured;
    double top1 = kNotMeasured, top5 = kNotMeasured, labelledInputs = kNotMeasured;
    double agreementRelError = kNotMeasured, agreementTop1 = kNotMeasured;
    double parameters = kNotMeasured, macs = kNotMeasured, gflops = kNotMeasured;
};

struct CellResult {
    CellKey key;
    std::string modelPath;
    std::string backend, device, precision; // as resolved
    bool ok = false;
    std::string error; // why the cell failed
    CellFigures figures;
    // The timed runs' wall times (ns, one per Session::run of `batch` inputs), for
    // --prom-textfile's histograms; empty for cells a --resume read back.
    std::vector<int64_t> latencyNs;
};

// One column of the CSV (and one key of a JSON cell): its name with the unit in it, the unit
// alone, and what it is.
struct SweepColumn {
    const char* name;
    const char* unit;
    const char* description;
};
const std::vector<SweepColumn>& sweepColumns();

// ---- Derived tables ---------------------------------------------------------------------------

struct SpeedupRow {
    std::string model, engine, baseline;
    int batch = 1, threads = 0;
    double baselineP50Ms = 0, engineP50Ms = 0, speedup = 0;
    double parameters = kNotMeasured, macs = kNotMeasured;
};
// Every engine's p50 speed-up over the baseline engine's cell of the same model, batch and
// threads (the papers' pre/post-optimisation table). Failed cells give no row.
std::vector<SpeedupRow> speedupTable(
    const std::vector<CellResult>& cells, const std::string& baseline);

struct ScalingRow {
    std::string model, engine;
    int threads = 0, batch = 1;
    double throughputIps = 0;
    double rtr = 0; // relative throughput rate T(b) / T(1)
    double ase = 0; // average scaling efficiency T(b) / (b T(1))
    double bsr = kNotMeasured; // batch scaling ratio ASE_engine(b) / ASE_baseline(b)
};
// Per model, engine and thread count with a batch-1 cell: RTR, ASE and BSR for each batch size.
std::vector<ScalingRow> scalingTable(
    const std::vector<CellResult>& cells, const std::string& baseline);

struct BestRow {
    std::string model, engine;
    int batch = 1, threads = 0;
    double latencyP99Ms = 0, throughputIps = 0, budgetMs = 0;
};
// Per model, the cell with the highest throughput whose p99 latency is within the budget.
std::vector<BestRow> bestUnderBudget(const std::vector<CellResult>& cells, double budgetMs);

// ---- Outputs ----------------------------------------------------------------------------------

// A figure as JSON: the number, or null when it was not measured (NaN) or is not finite.
nlohmann::json numberOrNull(double v);
std::string cellsCsv(const std::vector<CellResult>& cells);
// Reads a CSV written by cellsCsv (for --resume). Errors name the line.
Expected<std::vector<CellResult>> parseCellsCsv(const std::string& text, const std::string& name);
nlohmann::json cellJson(const CellResult& cell);
std::string sweepMarkdown(const nlohmann::json& document);

// A cell whose latencies' CoV (sd / mean) is above this is marked unsteady in sweep.md and on the
// console: a figure to measure again before quoting it.
constexpr double kUnsteadyCov = 0.3;
// Whether a cell of sweep.json ("cells") is ok but unsteady.
bool isUnsteady(const nlohmann::json& cell);

// ---- Running ----------------------------------------------------------------------------------

struct SweepOptions {
    std::string studyFile; // "" = the flags alone
    Study flags; // what the flags give (over the file's values where `given` names them)
    std::vector<std::string> given; // the flags given: "models", "engines", "batch", ...
    std::string modelDir = "models/reference";
    std::string out; // the output directory
    bool resume = false;
    std::string chartJs; // Chart.js for the HTML report; "" = Debian's libjs-chart.js
    // "" = none; else node_exporter's textfile directory: each cell's engine-loop latencies as
    // histograms in DIR/jetagent_sweep_<study>.prom (prom_results.h)
    std::string promTextfile;
    // Called once per cell when it is done, and once the idle power is measured (for tests and
    // tools that follow the sweep); either may be empty.
    std::function<void(const CellResult&)> onCell;
    std::function<void(double idleW)> onIdleMeasured;
};

// The study a sweep runs: --study's file, if any, with the flags given on the command line over
// it, resolved against --model-dir and checked.
Expected<Study> studyOfOptions(const SweepOptions& options);

// Runs the study into options.out. Cells that fail are recorded and the sweep goes on; SIGINT
// stops it after the current cell's turn and everything done is written. Errors: a bad study,
// an output directory holding another study, files that cannot be written.
Status runSweep(const SweepOptions& options);

} // namespace jetagent
