// `jetagent compare`: one model through a reference engine and a candidate engine on the same
// preprocessed inputs; how far the candidate's outputs are from the reference's, and both
// latencies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "jetagent/engines/engine.h"
#include "tasks/calibration.h"

namespace jetagent {

// Reads an engine spec, BACKEND[:DEVICE[:PRECISION]][,key=value...], over `base` (what the spec
// leaves out keeps base's value). Keys are the config's engine keys: fusion, threads, batch,
// batch_min, batch_max, workspace_mb, dla_gpu_fallback, timing_cache, cuda_graph, io_memory. When
// the backend differs from base's, base's backend-specific settings are dropped. Errors
// (InvalidInput) name the spec and the part that is wrong.
Expected<EngineOptions> parseEngineSpec(const std::string& spec, const EngineOptions& base);

// How far one output of the candidate is from the reference's, over every input compared.
struct OutputAgreement {
    std::string name;
    size_t classes = 0; // values per input (the output's elements after the batch dimension)
    size_t inputs = 0; // inputs compared
    double maxAbsError = 0; // max |cand - ref| over every element of every input
    double maxAbsReference = 0; // max |ref| over the same
    size_t nonFinite = 0; // candidate or reference values that are NaN or infinite
    size_t top1Agreements = 0; // inputs whose argmax is the same in both
    double top5OverlapSum = 0; // sum over inputs of |top5(ref) & top5(cand)| / 5

    // max|cand - ref| / max|ref|: one scale for the whole output, so values near zero do not
    // blow it up as a per-element ratio would. Infinite when a value is not finite, or when the
    // reference is all zeros and the candidate is not.
    double relativeError() const;
    bool hasTop1() const { return classes >= 2; }
    bool hasTop5() const { return classes >= 5; }
    double top1Agreement() const; // fraction of inputs; 0 with none
    double top5Overlap() const; // mean fraction; 0 with none
};

// Adds one input's output row (`classes` values of each) to `a`.
void accumulateAgreement(OutputAgreement& a, const float* reference, const float* candidate);

// Indices of the k largest values of `row`, largest first (ties: the lower index first).
std::vector<size_t> topK(const float* row, size_t size, size_t k);

constexpr double kNotMeasuredMb = std::numeric_limits<double>::quiet_NaN();

// Latency of Session::run and the means of its RunTiming parts, in milliseconds; a part the
// backend does not give (-1) has a negative mean.
struct LatencyFigures {
    size_t runs = 0;
    double medianMs = 0, p90Ms = 0, p99Ms = 0, meanMs = 0;
    double hostToDeviceMs = -1, computeMs = -1, deviceToHostMs = -1;
    double imagesPerS = 0; // batch / mean latency
    double cpuMsPerRun = -1; // process CPU time per run; -1 unknown
    double rssMb = kNotMeasuredMb; // resident memory the engine and its session added
};
LatencyFigures latencyFigures(std::vector<int64_t> wallNs, const std::vector<RunTiming>& timings);

// Makes int8 calibration samples from `calibration`, preprocessed as `pre`; `where` names a key of
// the calibration section ("source", "frames") in errors. src/calibration.h's makeCalibrationData
// has this signature; it is passed in so that this file does not depend on it.
using CalibrationFactory = std::function<Expected<std::shared_ptr<CalibrationData>>(
    const CalibrationConfig& calibration, const PreprocessConfig& pre,
    const std::function<std::string(const std::string& key)>& where)>;

struct CompareOptions {
    std::string model; // ONNX file; empty = the config task's model
    std::string referenceModel; // the reference runs this model instead (the same input): the
                                // model before an edit, such as simplification or quantization
    std::string candidate; // engine spec
    std::string reference; // engine spec; empty = the config task's engine, else opencv:cpu:fp32
    std::string inputs; // frame source URI; empty = the config's source, else synthetic://shapes
    uint64_t frames = 200; // inputs compared (fewer when a finite source ends first)
    std::string config; // agent config giving preprocessing and the reference's defaults
    size_t task = 0; // which task of the config
    std::string calibration; // int8 candidates: a calibration source replacing the config's
    std::string cacheDir; // replaces the config's engine cache directory (or the default)
    double maxRelError = -1; // the check is made when >= 0
    double minTop1 = -1; // the check is made when >= 0 (a fraction, 0..1)
    int warmup = 10; // untimed runs per engine before the timed pass
    std::string json; // write the JSON document here too
    CalibrationFactory makeCalibration; // empty: --calibration is refused
};

struct CompareResult {
    nlohmann::json document; // everything, as --json writes it
    std::string text; // the report printed
    std::vector<std::string> failedChecks; // empty when every threshold given holds
};

// `document` as indented JSON at `path`, the file a command's --json names (bench, compare);
// nothing when `path` is empty.
Status writeJsonOption(const std::string& path, const nlohmann::json& document);

// Builds both engines, runs the inputs through each and measures. Errors (usage, config, an
// unavailable backend) are returned; failed thresholds are in the result.
Expected<CompareResult> runCompare(const CompareOptions& options);

} // namespace jetagent
