// `jetagent compare`'s plan and figures (internal to src/app): what the command line and the config
// resolve to, what the engines did, and the report and JSON document made of them
// (compare_report.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare.h"
#include "config/config.h"
#include "jetagent/engines/model_file.h"

namespace jetagent {

// What the command line and the config resolve to before any engine is built: the task, the
// source, both engines' settings, the models and the preprocessing.
struct ComparePlan {
    AgentConfig agent;
    TaskConfig task;
    SourceOptions source;
    std::string key = "compare"; // the task's key in messages: tasks[N], or compare
    std::string modelPath;
    std::string referenceSpec; // as the report names the reference
    EngineOptions referenceOptions, candidateOptions;
    CalibrationConfig calibration;
    bool anyInt8 = false;
    std::shared_ptr<const ModelFile> model, referenceModel;
    PreprocessConfig pre;

    const TensorInfo& input() const { return model->inputs[0]; }
};

// What the engines did over every input.
struct CompareFigures {
    size_t count = 0; // inputs compared
    size_t window = 0; // inputs per turn of each engine
    std::vector<OutputAgreement> agreements;
    LatencyFigures referenceLatency, candidateLatency;
    nlohmann::json reference, candidate; // engineJson of each, with its latency
};

// The JSON document, less its checks.
nlohmann::json compareDocument(
    const CompareOptions& options, const ComparePlan& plan, const CompareFigures& figures);

// The checks the thresholds ask for: each over every output it applies to, judged by the worst.
// The message of each that fails is added to `failed`.
Expected<nlohmann::json> judgeChecks(const CompareOptions& options, const std::string& modelPath,
    const std::vector<OutputAgreement>& agreements, std::vector<std::string>& failed);

// The report's text: the model, inputs, engines and preprocessing; then the tables of outputs and
// latencies.
std::string compareReport(const CompareOptions& options, const ComparePlan& plan,
    const CompareFigures& figures, const nlohmann::json& doc);
std::string outputTable(const std::vector<OutputAgreement>& agreements);
std::string latencyTable(const CompareFigures& figures, int warmup);

} // namespace jetagent
