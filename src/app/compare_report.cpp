// `jetagent compare`'s report and JSON document (compare_plan.h).
#include "compare_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>

#include "config/config.h"
#include "jetagent/base/clock.h"
#include "jetagent/base/format.h"
#include "jetagent/base/json_text.h"
#include "jetagent/base/text.h"
#include "jetagent/engines/model_prepare.h"
#include "jetagent/hal/gstreamer_source.h"
#include "run/latency_stats.h"
#include "sweep_measure.h"
#include "tasks/image_input.h"
#include "tasks/labels.h"
#include "tasks/preprocess.h"
#include "tasks/scores.h"

namespace jetagent {

namespace {

std::string formatMs(double ms)
{
    if (ms < 0)
        return "-";
    std::string text = formatText("%.3f", ms);
    return text;
}

std::string describePreprocessing(const PreprocessConfig& p)
{
    std::string text = p.resize == ResizeMode::ShorterSide
        ? formatText(
              "shorter side to %d, centre crop %dx%d", p.resizeSize, p.cropWidth, p.cropHeight)
        : formatText("stretch to %dx%d", p.cropWidth, p.cropHeight);
    appendText(text, ", %s, %s, /%g, mean [%g, %g, %g], std [%g, %g, %g]",
        nameOf(kInterpolationNames, p.interpolation), nameOf(kColorOrderNames, p.color),
        static_cast<double>(p.divisor), static_cast<double>(p.mean[0]),
        static_cast<double>(p.mean[1]), static_cast<double>(p.mean[2]),
        static_cast<double>(p.std[0]), static_cast<double>(p.std[1]),
        static_cast<double>(p.std[2]));
    return text;
}

std::string engineLine(const nlohmann::json& e)
{
    std::string text = formatText(
        "%s\n            %s, device %s (target %s), %s, batch %d, threads %s, fusion %s; built in "
        "%.1f ms (%s)",
        e["spec"].get<std::string>().c_str(), e["backend_version"].get<std::string>().c_str(),
        e["device"].get<std::string>().c_str(), e["target"].get<std::string>().c_str(),
        e["precision"].get<std::string>().c_str(), e["batch"].get<int>(),
        e["threads"].get<int>() > 0 ? std::to_string(e["threads"].get<int>()).c_str() : "default",
        e["fusion"].get<bool>() ? "on" : "off", e["build_ms"].get<double>(),
        e["plan_key"].get<std::string>().empty()
            ? (e["prepared_from_cache"].get<bool>() ? "model prepared from the cache"
                                                    : "model prepared afresh")
            : (e["plan_from_cache"].get<bool>() ? "plan from the cache" : "plan built"));
    std::string line = text;
    if (e["lowered"].is_string())
        line += "\n            " + e["precision"].get<std::string>() + ": " +
            e["lowered"].get<std::string>();
    return line;
}

} // namespace

// The JSON document, less its checks.
nlohmann::json compareDocument(
    const CompareOptions& options, const ComparePlan& plan, const CompareFigures& figures)
{
    const ModelFile& file = *plan.model;
    const TensorInfo& input = plan.input();
    nlohmann::json doc;
    doc["model"] = {{"path", plan.modelPath}, {"sha256", file.sha256}, {"bytes", file.fileBytes},
        {"input", input.name}, {"input_shape", input.shapeString()}};
    doc["inputs"] = {{"uri", withoutPasswords(plan.source.uri)}, {"frames", figures.count},
        {"config",
            options.config.empty() ? nlohmann::json(nullptr) : nlohmann::json(plan.agent.path)},
        {"task", options.config.empty() ? nlohmann::json(nullptr) : nlohmann::json(options.task)},
        {"preprocess", describePreprocess(plan.pre)}};
    doc["reference"] = figures.reference;
    doc["candidate"] = figures.candidate;
    doc["relative_error_definition"] =
        "max|cand - ref| / max|ref| over every value of every input, per output";
    doc["warmup"] = options.warmup;
    doc["window_frames"] = figures.window;
    nlohmann::json outputs = nlohmann::json::array();
    for (const OutputAgreement& a : figures.agreements) {
        const double rel = a.relativeError();
        outputs.push_back({{"name", a.name}, {"values_per_input", a.classes}, {"inputs", a.inputs},
            {"max_abs_error", a.maxAbsError}, {"max_abs_reference", a.maxAbsReference},
            {"relative_error", std::isfinite(rel) ? nlohmann::json(rel) : nlohmann::json(nullptr)},
            {"non_finite", a.nonFinite},
            {"top1_agreement",
                a.hasTop1() ? nlohmann::json(a.top1Agreement()) : nlohmann::json(nullptr)},
            {"top5_overlap",
                a.hasTop5() ? nlohmann::json(a.top5Overlap()) : nlohmann::json(nullptr)}});
    }
    doc["outputs"] = outputs;
    return doc;
}

// The checks the thresholds ask for: each over every output it applies to, judged by the worst.
// The message of each that fails is added to `failed`.
Expected<nlohmann::json> judgeChecks(const CompareOptions& options, const std::string& modelPath,
    const std::vector<OutputAgreement>& agreements, std::vector<std::string>& failed)
{
    nlohmann::json checks = nlohmann::json::array();
    std::string line;
    if (options.maxRelError >= 0) {
        double worst = 0;
        std::string where = agreements.empty() ? "" : agreements[0].name;
        for (const OutputAgreement& a : agreements)
            if (!(a.relativeError() <= worst)) {
                worst = a.relativeError();
                where = a.name;
            }
        const bool ok = worst <= options.maxRelError;
        line = formatText("relative error %.3g on output '%s' %s --max-rel-error %g", worst,
            where.c_str(), ok ? "within" : "exceeds", options.maxRelError);
        checks.push_back({{"check", "max_rel_error"}, {"threshold", options.maxRelError},
            {"value", std::isfinite(worst) ? nlohmann::json(worst) : nlohmann::json(nullptr)},
            {"output", where}, {"passed", ok}, {"message", line}});
        if (!ok)
            failed.emplace_back(line);
    }
    if (options.minTop1 >= 0) {
        double worst = 2;
        std::string where;
        for (const OutputAgreement& a : agreements)
            if (a.hasTop1() && a.top1Agreement() < worst) {
                worst = a.top1Agreement();
                where = a.name;
            }
        if (where.empty())
            return Status::invalid(
                "--min-top1: no output of '" + modelPath + "' has two or more values per input");
        const bool ok = worst >= options.minTop1;
        line = formatText("top-1 agreement %.4f on output '%s' %s --min-top1 %g", worst,
            where.c_str(), ok ? "meets" : "is below", options.minTop1);
        checks.push_back({{"check", "min_top1"}, {"threshold", options.minTop1}, {"value", worst},
            {"output", where}, {"passed", ok}, {"message", line}});
        if (!ok)
            failed.emplace_back(line);
    }
    return checks;
}

// The report's table of outputs: errors and agreements, one row each.
std::string outputTable(const std::vector<OutputAgreement>& agreements)
{
    std::string t;
    std::string line;
    t += "relative error = max|cand - ref| / max|ref| over every value of every input\n";
    line = formatText("%-20s %8s %12s %12s %12s %9s %9s\n", "output", "values", "max abs err",
        "max |ref|", "rel error", "top-1", "top-5");
    t += line;
    for (const OutputAgreement& a : agreements) {
        std::string top1 = "-", top5 = "-";
        if (a.hasTop1())
            top1 = formatText("%.2f%%", 100.0 * a.top1Agreement());
        if (a.hasTop5())
            top5 = formatText("%.2f%%", 100.0 * a.top5Overlap());
        line = formatText("%-20s %8zu %12.4g %12.4g %12.4g %9s %9s\n", a.name.c_str(), a.classes,
            a.maxAbsError, a.maxAbsReference, a.relativeError(), top1.c_str(), top5.c_str());
        t += line;
        if (a.nonFinite > 0)
            t += "  " + std::to_string(a.nonFinite) + " values were NaN or infinite\n";
    }
    return t;
}

// The report's table of latencies, one row per engine.
std::string latencyTable(const CompareFigures& figures, int warmup)
{
    std::string t;
    std::string line = formatText("\n%-12s %6s %9s %9s %9s %7s %9s %9s %9s %9s %8s %7s\n",
        "latency ms", "runs", "median", "p90", "p99", "p99/p50", "images/s", "H2D", "compute",
        "D2H", "CPU ms", "RSS MiB");
    t += line;
    auto latencyRow = [&](const char* name, const LatencyFigures& l) {
        line = formatText("%-12s %6zu %9.3f %9.3f %9.3f %7.2f %9.1f %9s %9s %9s %8s %7s\n", name,
            l.runs, l.medianMs, l.p90Ms, l.p99Ms, l.medianMs > 0 ? l.p99Ms / l.medianMs : 0.0,
            l.imagesPerS, formatMs(l.hostToDeviceMs).c_str(), formatMs(l.computeMs).c_str(),
            formatMs(l.deviceToHostMs).c_str(), formatMs(l.cpuMsPerRun).c_str(),
            std::isfinite(l.rssMb) ? std::to_string(static_cast<long>(std::lround(l.rssMb))).c_str()
                                   : "-");
        t += line;
    };
    latencyRow("reference", figures.referenceLatency);
    latencyRow("candidate", figures.candidateLatency);
    line = formatText(
        "(Session::run wall time, one run per batch, after %d warm-up runs, the engines taking "
        "turns\nbatch by batch; H2D/compute/D2H: means of the backend's own timing; CPU ms: "
        "process CPU time\nper run; RSS: resident memory the engine and its session added)\n",
        warmup);
    t += line;
    return t;
}

// The report printed: the model, the inputs, both engines, the tables and the checks.
std::string compareReport(const CompareOptions& options, const ComparePlan& plan,
    const CompareFigures& figures, const nlohmann::json& doc)
{
    const ModelFile& file = *plan.model;
    const TensorInfo& input = plan.input();
    std::string t;
    std::string line;
    t += "== jetagent compare: candidate against reference, on the same inputs ==\n";
    line = formatText("model       %s (sha256 %.16s..., %llu bytes), input %s %s\n",
        plan.modelPath.c_str(), file.sha256.c_str(),
        static_cast<unsigned long long>(file.fileBytes), input.name.c_str(),
        input.shapeString().c_str());
    t += line;
    t += "inputs      " + withoutPasswords(plan.source.uri) + ", " + std::to_string(figures.count) +
        " frames\n";
    t += "preprocess  " + describePreprocessing(plan.pre) +
        (options.config.empty() ? std::string(" (torchvision's ImageNet defaults)")
                                : " (" + plan.agent.path + " " + plan.key + ")") +
        "\n";
    if (!options.referenceModel.empty())
        t += "ref. model  " + options.referenceModel + " (sha256 " +
            plan.referenceModel->sha256.substr(0, 16) + "...)\n";
    t += "reference   " + engineLine(doc["reference"]) + "\n";
    t += "candidate   " + engineLine(doc["candidate"]) + "\n\n";
    return t;
}

Status writeJsonOption(const std::string& path, const nlohmann::json& document)
{
    if (path.empty())
        return Status();
    std::ofstream out(path);
    out << jsonText(document, 2) << "\n";
    out.close();
    if (!out)
        return Status::io("--json " + path + ": cannot be written");
    return Status();
}

} // namespace jetagent
