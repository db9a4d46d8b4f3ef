// `jetagent inspect`: a model's interface, operators, parameters and MACs, and its preparation.
#include "inspect.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "jetagent/base/clock.h"
#include "jetagent/base/json_text.h"
#include "jetagent/base/text.h"
#include "jetagent/engines/engine.h"
#include "jetagent/engines/model_file.h"
#include "jetagent/engines/model_info.h"
#include "jetagent/engines/model_prepare.h"
#include "tasks/image_input.h"

namespace jetagent {

namespace {

// 25557032 -> "25,557,032": parameter counts are read digit by digit against published ones.
std::string grouped(int64_t n)
{
    std::string digits = std::to_string(n < 0 ? -n : n);
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0)
            out.push_back(',');
        out.push_back(digits[i]);
    }
    return n < 0 ? "-" + out : out;
}

std::string engineering(double v)
{
    std::string s;
    if (v >= 1e9)
        appendFormat(s, "{:.2f} G", v / 1e9);
    else if (v >= 1e6)
        appendFormat(s, "{:.1f} M", v / 1e6);
    else if (v >= 1e3)
        appendFormat(s, "{:.1f} k", v / 1e3);
    else
        appendFormat(s, "{:.0f}", v);
    return s;
}

std::string shapeText(const std::vector<int64_t>& dims)
{
    std::string s;
    for (size_t i = 0; i < dims.size(); ++i)
        s += (i ? "x" : "") + std::to_string(dims[i]);
    return s.empty() ? "scalar" : s;
}

nlohmann::json tensorJson(const TensorInfo& t)
{
    nlohmann::json dims = nlohmann::json::array();
    for (size_t i = 0; i < t.dims.size(); ++i) {
        if (t.dims[i] >= 0)
            dims.push_back(t.dims[i]);
        else if (!t.dimNames[i].empty())
            dims.push_back(t.dimNames[i]);
        else
            dims.push_back(nullptr);
    }
    return {{"name", t.name}, {"type", dataTypeName(t.type)}, {"shape", dims}};
}

void textReport(const ModelFile& m, const ModelStats& s, int64_t loadNs, std::string& out)
{
    appendFormat(out, "model       {}\n", m.path);
    appendFormat(out, "            {} bytes{}, sha256 {}\n",
        grouped(static_cast<int64_t>(m.fileBytes)),
        m.externalBytes ? " + " + grouped(static_cast<int64_t>(m.externalBytes)) + " external"
                        : std::string(),
        m.sha256);
    appendFormat(out, "format      ONNX IR {}, opset {}, producer {}\n", m.irVersion, m.opset,
        m.producer.empty() ? "(none)" : m.producer);
    appendFormat(out, "checked     parsed, ONNX checker and shape inference passed in {:.0f} ms\n",
        nsToMs(loadNs));
    size_t width = 4;
    for (const auto* list : {&m.inputs, &m.outputs})
        for (const auto& t : *list)
            width = std::max(width, t.name.size());
    for (const auto& t : m.inputs)
        appendFormat(out, "input       {:<{}} {:<8} {}\n", t.name, width, dataTypeName(t.type),
            t.shapeString());
    for (const auto& t : m.outputs)
        appendFormat(out, "output      {:<{}} {:<8} {}\n", t.name, width, dataTypeName(t.type),
            t.shapeString());
    appendFormat(
        out, "parameters  {} trainable in {} tensors\n", grouped(s.parameters), s.parameterTensors);
    if (s.buffers > 0)
        appendFormat(out, "            {} BatchNormalization running statistics (not trainable)\n",
            grouped(s.buffers));
    if (s.constants > 0)
        appendFormat(out, "            {} other constant elements (shapes, axes, tables)\n",
            grouped(s.constants));
    appendFormat(out, "            {:.1f} MiB of initializers\n",
        static_cast<double>(s.weightBytes) / 1048576.0);
    std::string shapes;
    for (const auto& [name, dims] : s.shapes)
        shapes += (shapes.empty() ? "" : ", ") + name + " " + shapeText(dims);
    appendFormat(out, "MACs        {} ({}) for {}\n", grouped(s.macs),
        engineering(static_cast<double>(s.macs)), shapes);
    out.append(
        "            counted: Conv (grouped, depthwise, 1-/2-/3-D), ConvTranspose, Gemm, MatMul,\n"
        "            Einsum, one per multiply-add; element-wise ops, pooling, normalisation and\n"
        "            activations are not counted\n");
    if (!s.uncounted.empty())
        appendFormat(out, "            not counted, shapes unknown: {} nodes (first: {})\n",
            s.uncounted.size(), s.uncounted.front());
    appendFormat(out, "\noperators   {} nodes\n", s.nodes);
    appendFormat(out, "  {:<22} {:>6} {:>18} {:>7}\n", "op", "nodes", "MACs", "share");
    for (const auto& op : s.operators) {
        if (op.macs > 0)
            appendFormat(out, "  {:<22} {:6} {:>18} {:6.2f}%\n", op.op, op.nodes, grouped(op.macs),
                s.macs > 0 ? 100.0 * static_cast<double>(op.macs) / static_cast<double>(s.macs)
                           : 0.0);
        else
            appendFormat(out, "  {:<22} {:6}\n", op.op, op.nodes);
    }
    for (const auto& w : m.warnings)
        appendFormat(out, "warning: {}\n", w);
}

void textPrepared(const PreparedModel& p, const InspectOptions& o, std::string& out)
{
    appendFormat(out, "\nprepared    for {}, batch {}: {} -> {} nodes, {} bytes, {} {:.0f} ms\n",
        o.backend, o.batch > 0 ? std::to_string(o.batch) : "free", p.nodesBefore, p.nodesAfter,
        grouped(static_cast<int64_t>(p.bytes->size())),
        p.fromCache ? "read from the cache in" : "in", nsToMs(p.ns));
    if (!p.cachePath.empty())
        appendFormat(out, "            cache {}\n", p.cachePath);
    if (p.fromCache)
        out.append("            (what the passes did when the model was prepared:)\n");
    appendFormat(
        out, "  {:<22} {:>8} {:>8} {:>10} {:>9}\n", "pass", "removed", "folded", "rewritten", "ms");
    for (const auto& r : p.passes) {
        appendFormat(out, "  {:<22} {:8} {:8} {:10} {:9.1f}\n", r.pass, r.removed, r.folded,
            r.rewritten, nsToMs(r.ns));
        for (const auto& line : r.notes)
            appendFormat(out, "      {}\n", line);
    }
}

// The compiled engine's steps: the library of each, and how many each library runs.
void textSteps(const std::vector<EngineStep>& steps, std::string& out)
{
    std::map<std::string, int> perLibrary;
    int conversions = 0;
    for (const auto& step : steps) {
        ++perLibrary[step.library];
        conversions += step.precision.find('>') != std::string::npos;
    }
    std::string counts;
    for (const auto& [library, n] : perLibrary)
        counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " on " + library;
    if (conversions > 0)
        counts += "; " + std::to_string(conversions) + " of them conversions between types";
    appendFormat(out, "\ncompiled    {} steps: {}\n", steps.size(), counts);
    appendFormat(out, "  {:<10} {:<9} {:<20} {}\n", "library", "type", "operator", "node");
    for (const auto& step : steps)
        appendFormat(
            out, "  {:<10} {:<9} {:<20} {}\n", step.library, step.precision, step.op, step.node);
}

// Where a compiled engine's time goes: each step's mean over the timed runs.
struct Profile {
    int runs = 0;
    int warmup = 0;
    int threads = 0;
    int batch = 1;
    std::vector<int64_t> runNs; // sorted
    std::vector<double> stepMs; // mean per run, in step order
    double median() const { return nsToMs(runNs[runNs.size() / 2]); }
    double stepSum() const
    {
        double sum = 0;
        for (double ms : stepMs)
            sum += ms;
        return sum;
    }
};

Expected<Profile> profileEngine(const Engine& engine, const InspectOptions& options)
{
    auto created = engine.createSession();
    if (!created)
        return created.status();
    Session& session = *created.value();
    // A fixed pseudo-random image-like input in [0, 1): the kernels' speed does not depend on it.
    std::vector<std::vector<float>> data;
    std::vector<TensorView> views;
    uint32_t state = 12345;
    for (const TensorInfo& t : engine.inputs()) {
        TensorShape shape;
        shape.rank = static_cast<int>(t.dims.size());
        for (int d = 0; d < shape.rank; ++d) {
            const int64_t dim = t.dims[static_cast<size_t>(d)];
            shape.dims[static_cast<size_t>(d)] = d == 0 ? options.batch : (dim > 0 ? dim : 1);
        }
        if (t.type != DataType::Float32)
            return Status::unsupported("--profile feeds float32 inputs; input '" + t.name +
                "' is " + dataTypeName(t.type));
        data.emplace_back(static_cast<size_t>(shape.elementCount()));
        for (float& v : data.back()) {
            state = state * 1664525u + 1013904223u;
            v = static_cast<float>(state >> 8) / 16777216.0f;
        }
        views.push_back({data.back().data(), shape});
    }
    Profile p;
    p.runs = options.profileRuns;
    p.warmup = options.warmupRuns;
    p.threads = options.threads;
    p.batch = options.batch;
    for (int i = 0; i < options.warmupRuns; ++i) {
        Status s = session.run(views.data(), views.size(), nullptr);
        if (!s.ok())
            return s;
    }
    if (!session.enableStepTimes(true) || !session.stepTimesNs())
        return Status::unsupported("this backend cannot time its steps");
    for (int i = 0; i < options.profileRuns; ++i) {
        const int64_t start = monotonicNs();
        Status s = session.run(views.data(), views.size(), nullptr);
        if (!s.ok())
            return s;
        p.runNs.push_back(monotonicNs() - start);
    }
    std::sort(p.runNs.begin(), p.runNs.end());
    for (int64_t ns : *session.stepTimesNs())
        p.stepMs.push_back(nsToMs(ns) / options.profileRuns);
    return p;
}

// The profile: per operator and library, then the slowest steps.
void textProfile(const Profile& p, const std::vector<EngineStep>& steps, std::string& out)
{
    const double sum = p.stepSum();
    appendFormat(out,
        "\nprofile     batch {}, threads {}, {} timed runs after {} warm-up: run median {:.3f} ms, "
        "min {:.3f} ms;\n            the steps' mean times add up to {:.3f} ms\n",
        p.batch, p.threads > 0 ? std::to_string(p.threads) : "default", p.runs, p.warmup,
        p.median(), nsToMs(p.runNs.front()), sum);
    struct Group {
        int steps = 0;
        double ms = 0;
    };
    std::map<std::pair<std::string, std::string>, Group> groups;
    for (size_t i = 0; i < steps.size() && i < p.stepMs.size(); ++i) {
        Group& g = groups[{steps[i].op,
            steps[i].library + (steps[i].precision.empty() ? "" : " " + steps[i].precision)}];
        ++g.steps;
        g.ms += p.stepMs[i];
    }
    std::vector<std::pair<std::pair<std::string, std::string>, Group>> byTime(
        groups.begin(), groups.end());
    std::stable_sort(byTime.begin(), byTime.end(),
        [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
    appendFormat(out, "  {:<20} {:<16} {:>6} {:>10} {:>7}\n", "operator", "library, type", "steps",
        "mean ms", "share");
    for (const auto& [key, g] : byTime)
        appendFormat(out, "  {:<20} {:<16} {:6} {:10.3f} {:6.1f}%\n", key.first, key.second,
            g.steps, g.ms, sum > 0 ? 100.0 * g.ms / sum : 0.0);
    std::vector<size_t> order(std::min(steps.size(), p.stepMs.size()));
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(
        order.begin(), order.end(), [&](size_t a, size_t b) { return p.stepMs[a] > p.stepMs[b]; });
    const size_t shown = std::min<size_t>(order.size(), 15);
    appendFormat(out, "  the {} slowest steps:\n  {:>4} {:>10} {:>7}  {:<10} {:<9} {}\n", shown,
        "step", "mean ms", "share", "library", "type", "node");
    for (size_t k = 0; k < shown; ++k) {
        const size_t i = order[k];
        appendFormat(out, "  {:4} {:10.3f} {:6.1f}%  {:<10} {:<9} {}\n", i + 1, p.stepMs[i],
            sum > 0 ? 100.0 * p.stepMs[i] / sum : 0.0, steps[i].library, steps[i].precision,
            steps[i].node);
    }
}

// The --json document: the model, its parameters, operators and MACs, and what preparation,
// compilation and profiling gave (`prepared` and `profile` null when not asked for).
nlohmann::json jsonReport(const ModelFile& m, const ModelStats& s, int64_t loadNs,
    const InspectOptions& options, const PreparedModel* prepared,
    const std::vector<EngineStep>& steps, const Profile* profile)
{
    nlohmann::json j;
    j["model"] = {{"path", m.path}, {"sha256", m.sha256}, {"bytes", m.fileBytes},
        {"external_bytes", m.externalBytes}, {"ir_version", m.irVersion}, {"opset", m.opset},
        {"producer", m.producer}, {"load_ms", nsToMs(loadNs)}};
    for (const auto& t : m.inputs)
        j["inputs"].push_back(tensorJson(t));
    for (const auto& t : m.outputs)
        j["outputs"].push_back(tensorJson(t));
    j["parameters"] = {{"trainable", s.parameters}, {"tensors", s.parameterTensors},
        {"batchnorm_statistics", s.buffers}, {"other_constants", s.constants},
        {"initializer_bytes", s.weightBytes}};
    nlohmann::json ops = nlohmann::json::array();
    for (const auto& op : s.operators)
        ops.push_back({{"op", op.op}, {"nodes", op.nodes}, {"macs", op.macs}});
    j["operators"] = ops;
    j["nodes"] = s.nodes;
    nlohmann::json shapesJson = nlohmann::json::object();
    for (const auto& [name, dims] : s.shapes)
        shapesJson[name] = dims;
    std::vector<std::string> counted;
    for (const char* const* op = kMacOperators; *op; ++op)
        counted.emplace_back(*op);
    j["macs"] = {{"total", s.macs}, {"input_shapes", shapesJson}, {"counted_operators", counted},
        {"uncounted_nodes", s.uncounted}};
    if (prepared) {
        const PreparedModel& p = *prepared;
        nlohmann::json passes = nlohmann::json::array();
        for (const auto& r : p.passes)
            passes.push_back({{"pass", r.pass}, {"removed", r.removed}, {"folded", r.folded},
                {"rewritten", r.rewritten}, {"ms", nsToMs(r.ns)}, {"notes", r.notes}});
        j["prepared"] = {{"backend", options.backend}, {"batch", options.batch},
            {"pass_list", p.passList}, {"nodes_before", p.nodesBefore},
            {"nodes_after", p.nodesAfter}, {"bytes", p.bytes->size()}, {"key", p.key},
            {"from_cache", p.fromCache}, {"cache_path", p.cachePath}, {"ms", nsToMs(p.ns)},
            {"passes", passes}};
        if (!steps.empty()) {
            nlohmann::json list = nlohmann::json::array();
            for (const auto& step : steps)
                list.push_back({{"node", step.node}, {"op", step.op}, {"library", step.library},
                    {"precision",
                        step.precision.empty() ? nlohmann::json(nullptr)
                                               : nlohmann::json(step.precision)}});
            j["prepared"]["steps"] = list;
        }
        if (profile) {
            const Profile& r = *profile;
            nlohmann::json runs = nlohmann::json::array();
            for (int64_t ns : r.runNs)
                runs.push_back(nsToMs(ns));
            nlohmann::json stepMs = nlohmann::json::array();
            for (double ms : r.stepMs)
                stepMs.push_back(ms);
            j["profile"] = {{"batch", r.batch}, {"threads", r.threads}, {"runs", r.runs},
                {"warmup", r.warmup}, {"run_ms_sorted", runs}, {"run_median_ms", r.median()},
                {"step_mean_ms", stepMs}};
        }
    }
    return j;
}

} // namespace

Status parseInputShapes(
    const std::vector<std::string>& texts, std::map<std::string, std::vector<int64_t>>* shapes)
{
    for (const auto& text : texts) {
        const auto colon = text.rfind(':');
        const std::string name = colon == std::string::npos ? std::string() : text.substr(0, colon);
        const std::string dims = colon == std::string::npos ? text : text.substr(colon + 1);
        std::vector<int64_t> values;
        size_t pos = 0;
        bool ok = !dims.empty();
        while (ok && pos <= dims.size()) {
            const size_t x = dims.find('x', pos);
            const std::string part =
                dims.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
            char* end = nullptr;
            const long long v = std::strtoll(part.c_str(), &end, 10);
            ok = !part.empty() && *end == '\0' && v > 0;
            values.push_back(v);
            if (x == std::string::npos)
                break;
            pos = x + 1;
        }
        if (!ok)
            return Status::invalid("--input-shape '" + text +
                "': expected [NAME:]DIMxDIMx... with positive sizes, e.g. input:1x3x224x224");
        (*shapes)[name] = values;
    }
    return Status();
}

namespace {

// --calibration's samples: its images preprocessed as a task with no preprocess section would
// (resized and cropped to the model's input, ImageNet's normalisation).
Expected<std::shared_ptr<CalibrationData>> calibrationFor(
    const ModelFile& m, const InspectOptions& options)
{
    if (!options.makeCalibration)
        return Status::unsupported("int8 calibration data cannot be made by this build of inspect");
    if (m.inputs.size() != 1 || m.inputs[0].dims.size() != 4)
        return Status::invalid("--calibration feeds models of one image input, N x 3 x H x W; '" +
            m.path + "' has " + std::to_string(m.inputs.size()) + " inputs");
    const TensorInfo& input = m.inputs[0];
    PreprocessConfig pre;
    if (Status s = resolveImageInput(
            AgentConfig {}, "inspect", input.dims[2], input.dims[3], input.shapeString(), pre);
        !s)
        return s;
    CalibrationConfig config;
    config.source = options.calibration;
    config.frames = options.calibrationFrames;
    config.batch = 1;
    return options.makeCalibration(config, pre, [](const std::string& name) -> std::string {
        return name == "source" ? "--calibration" : "calibration " + name + " (inspect's)";
    });
}

} // namespace

Status inspectModel(const InspectOptions& requested, std::string* out)
{
    InspectOptions options = requested;
    EngineOptions cpu; // inspect prepares for the CPU's backend unless told otherwise
    cpu.backend = options.backend;
    options.backend = resolveBackend(cpu);
    const int64_t start = monotonicNs();
    auto model = loadModelFile(options.model);
    if (!model)
        return model.status();
    const int64_t loadNs = monotonicNs() - start;
    const ModelFile& m = *model.value();

    std::map<std::string, std::vector<int64_t>> shapes;
    if (Status s = parseInputShapes(options.inputShapes, &shapes); !s)
        return s;
    if (auto unnamed = shapes.find(""); unnamed != shapes.end()) {
        if (m.inputs.size() != 1)
            return Status::invalid("model '" + m.path + "' has " + std::to_string(m.inputs.size()) +
                " inputs: name the one each --input-shape is for (NAME:DIMxDIM...)");
        shapes[m.inputs[0].name] = unnamed->second;
        shapes.erase(unnamed);
    }
    auto stats = modelStats(m, shapes);
    if (!stats)
        return stats.status();

    Expected<PreparedModel> prepared = Status::invalid("not prepared");
    std::vector<EngineStep> steps;
    if (options.prepared) {
        PrepareOptions p;
        p.backend = options.backend;
        p.batch = options.batch;
        p.cacheDir = options.cacheDir;
        prepared = prepareModel(m, p);
        if (!prepared)
            return prepared.status();
    }
    Expected<Profile> profile = Status::invalid("not profiled");
    if (!options.calibration.empty() && (!options.prepared || options.backend != "xnnpack"))
        return Status::invalid("--calibration builds the xnnpack backend's int8 engine; the "
                               "backend is " +
            options.backend + " (give --backend xnnpack)");
    if (options.profileRuns > 0 && options.backend != "xnnpack")
        return Status::invalid("--profile times the compiled steps of the xnnpack backend; " +
            options.backend +
            " has none to time (use jetagent compare or bench for its run times)");
    if (options.prepared && options.backend == "xnnpack") {
        // The compiled steps say which library runs each node; a node nothing can run is the
        // build's error, naming it.
        EngineOptions e;
        e.backend = options.backend;
        e.batch = options.batch > 0 ? options.batch : 1;
        e.threads = options.threads;
        e.onednn = options.onednn;
        e.cacheDir = options.cacheDir;
        if (options.int8)
            e.precision = Precision::Int8; // a QDQ model: its own scales
        if (!options.calibration.empty()) {
            auto data = calibrationFor(m, options);
            if (!data)
                return data.status();
            e.precision = Precision::Int8;
            e.calibration = data.value();
        }
        auto engine = buildEngine(model.value(), e);
        if (!engine)
            return engine.status();
        steps = engine.value()->steps();
        if (options.profileRuns > 0) {
            InspectOptions run = options;
            run.batch = e.batch;
            profile = profileEngine(*engine.value(), run);
            if (!profile)
                return profile.status().withContext("--profile");
        }
    }

    if (!options.json) {
        textReport(m, stats.value(), loadNs, *out);
        if (options.prepared)
            textPrepared(prepared.value(), options, *out);
        if (!steps.empty())
            textSteps(steps, *out);
        if (profile)
            textProfile(profile.value(), steps, *out);
        return Status();
    }

    const nlohmann::json j = jsonReport(m, stats.value(), loadNs, options,
        options.prepared ? &prepared.value() : nullptr, steps,
        profile ? &profile.value() : nullptr);
    *out = jsonText(j, 2) + "\n";
    return Status();
}

} // namespace jetagent
