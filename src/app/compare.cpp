// `jetagent compare`: one model through a reference engine and a candidate engine on the same
// preprocessed inputs.
#include "compare.h"

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

// An engine's settings and how it did, for the report and the JSON document.
nlohmann::json engineJson(
    const std::string& spec, const EngineDescription& e, const LatencyFigures& l)
{
    const EngineOptions& o = e.options;
    auto part = [](double ms) { return ms < 0 ? nlohmann::json(nullptr) : nlohmann::json(ms); };
    return {{"spec", spec}, {"backend", e.backend}, {"backend_version", e.backendVersion},
        {"target", e.target}, {"device", deviceName(o.device)},
        {"precision", precisionName(o.precision)}, {"batch", o.batch},
        {"batch_min", o.profileMin()}, {"batch_max", o.profileMax()}, {"threads", o.threads},
        {"fusion", o.fusion}, {"onednn", o.onednn}, {"workspace_mb", o.workspaceMb},
        {"dla_gpu_fallback", o.gpuFallback}, {"timing_cache", o.timingCache},
        {"cuda_graph", o.cudaGraph}, {"io_memory", ioMemoryName(o.ioMemory)},
        {"calibration", o.calibration ? nlohmann::json(o.calibration->description()) : nullptr},
        {"cache_dir", o.cacheDir}, {"model", e.modelPath}, {"model_sha256", e.modelSha256},
        {"preparation", e.preparation}, {"prepared_key", e.preparedKey},
        {"prepared_from_cache", e.preparedFromCache}, {"prepare_ms", nsToMs(e.prepareNs)},
        {"accelerator", e.accelerator}, {"plan_key", e.planKey},
        {"plan_from_cache", e.planFromCache}, {"io_memory_used", e.ioMemory},
        {"build_ms", nsToMs(e.buildNs)},
        {"lowered", e.lowered.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.lowered)},
        {"latency_ms",
            {{"runs", l.runs}, {"median", l.medianMs}, {"p90", l.p90Ms}, {"p99", l.p99Ms},
                {"mean", l.meanMs}}},
        {"p99_over_p50", l.medianMs > 0 ? nlohmann::json(l.p99Ms / l.medianMs) : nullptr},
        {"images_per_s", l.imagesPerS > 0 ? nlohmann::json(l.imagesPerS) : nullptr},
        {"cpu_ms_per_run", l.cpuMsPerRun >= 0 ? nlohmann::json(l.cpuMsPerRun) : nullptr},
        {"rss_mb", std::isfinite(l.rssMb) ? nlohmann::json(l.rssMb) : nullptr},
        {"timing_mean_ms",
            {{"h2d", part(l.hostToDeviceMs)}, {"compute", part(l.computeMs)},
                {"d2h", part(l.deviceToHostMs)}}}};
}

// Inputs are read and preprocessed a window at a time, and both engines run on a window before
// the next is read: memory holds one window of inputs and of reference outputs whatever --frames
// is. Within a window the engines take turns batch by batch.
constexpr size_t kWindowFrames = 32;

// The frames of --inputs, preprocessed, one window at a time.
class InputWindows {
public:
    InputWindows(FrameSource& source, const PreprocessConfig& pre, std::string uri, uint64_t limit,
        size_t windowFrames)
        : source_(source),
          preprocessor_(pre),
          uri_(std::move(uri)),
          limit_(limit),
          window_(windowFrames),
          data_(windowFrames * preprocessor_.outputElements())
    {
    }

    // Reads the next window; its frames, 0 once the source or --frames is exhausted.
    Expected<size_t> next()
    {
        constexpr int64_t kFrameWaitNs = 10'000'000'000; // a camera's first frame, a stall
        int64_t giveUp = monotonicNs() + kFrameWaitNs;
        size_t count = 0;
        while (count < window_ && read_ < limit_ && !ended_) {
            auto read = source_.read(frame_);
            if (!read)
                return read.status().withContext("--inputs");
            if (read.value() == ReadResult::EndOfStream) {
                ended_ = true;
                break;
            }
            if (read.value() == ReadResult::NoFrame) {
                if (monotonicNs() > giveUp)
                    return Status::runtime("--inputs " + uri_ + ": no frame for 10 s");
                continue;
            }
            giveUp = monotonicNs() + kFrameWaitNs;
            if (Status s = preprocessor_.run(
                    frame_.image, data_.data() + count * preprocessor_.outputElements());
                !s)
                return s.withContext("--inputs " + uri_);
            ++count;
            ++read_;
        }
        return count;
    }

    const float* data() const { return data_.data(); }
    uint64_t framesRead() const { return read_; }

private:
    FrameSource& source_;
    Preprocessor preprocessor_;
    std::string uri_;
    uint64_t limit_;
    size_t window_;
    std::vector<float> data_;
    Frame frame_;
    uint64_t read_ = 0;
    bool ended_ = false;
};

// One engine's session, its timings over every input, and its outputs for the current window:
// per output, frames x classes floats.
class EngineRun {
public:
    EngineRun(std::string role, const TensorShape& sample) : role_(std::move(role)), sample_(sample)
    {
    }

    Status start(const Engine& engine)
    {
        batch_ = engine.description().options.batch;
        auto created = engine.createSession();
        if (!created)
            return created.status().withContext(role_ + " engine");
        session_ = std::move(created).value();
        buffer_.assign(sampleElements() * static_cast<size_t>(batch_), 0.0f);
        view_ =
            TensorView {buffer_.data(), TensorShape {batch_, sample_[0], sample_[1], sample_[2]}};
        return Status();
    }

    // Untimed runs on the window's first batch.
    Status warmUp(const float* inputs, size_t frames, int runs)
    {
        fill(inputs, frames, 0);
        for (int i = 0; i < runs; ++i)
            if (Status s = session_->run(&view_, 1, nullptr); !s)
                return s.withContext(role_ + " engine, warm-up");
        return Status();
    }

    // A new window: the outputs kept so far are dropped.
    void beginWindow()
    {
        for (auto& rows : outputs_)
            rows.clear();
    }

    // One timed run on the batch of the window's inputs from `first` (of `frames`); keeps its
    // outputs. Returns the inputs it covered.
    Expected<size_t> runBatch(const float* inputs, size_t frames, size_t first)
    {
        fill(inputs, frames, first);
        RunTiming timing;
        const int64_t cpu0 = processCpuNs();
        const int64_t start = monotonicNs();
        if (Status s = session_->run(&view_, 1, &timing); !s)
            return s.withContext(role_ + " engine");
        wallNs_.push_back(monotonicNs() - start);
        cpuNs_ += processCpuNs() - cpu0;
        timings_.push_back(timing);
        const size_t rows = std::min(frames - first, static_cast<size_t>(batch_));
        if (Status s = keepOutputs(rows); !s)
            return s;
        return rows;
    }

    int batch() const { return batch_; }
    int64_t cpuNs() const { return cpuNs_; }
    size_t outputCount() const { return outputs_.size(); }
    size_t classes(size_t output) const { return classes_[output]; }
    const float* rows(size_t output) const { return outputs_[output].data(); }
    const std::vector<int64_t>& wallNs() const { return wallNs_; }
    const std::vector<RunTiming>& timings() const { return timings_; }

private:
    size_t sampleElements() const { return static_cast<size_t>(sample_.elementCount()); }

    // Rows past the window's last input (a last partial batch) repeat it; they are not compared.
    void fill(const float* inputs, size_t frames, size_t first)
    {
        for (size_t r = 0; r < static_cast<size_t>(batch_); ++r) {
            const size_t frame = std::min(first + r, frames - 1);
            std::copy_n(inputs + frame * sampleElements(), sampleElements(),
                buffer_.begin() + static_cast<std::ptrdiff_t>(r * sampleElements()));
        }
    }

    // The session's outputs are known once it has run: the first run fixes their number and
    // sizes, and every later run must give the same.
    Status keepOutputs(size_t rows)
    {
        const size_t count = session_->outputCount();
        if (classes_.empty()) {
            classes_.assign(count, 0);
            outputs_.resize(count);
        } else if (count != classes_.size()) {
            return Status::runtime(role_ + " engine: gave " + std::to_string(count) +
                " outputs, earlier " + std::to_string(classes_.size()));
        }
        for (size_t o = 0; o < count; ++o) {
            const ConstTensorView out = session_->output(o);
            if (out.data == nullptr || out.shape.rank < 1 || out.shape[0] != batch_)
                return Status::runtime(role_ + " engine: output " + std::to_string(o) + " is " +
                    out.shape.toString() + " for a batch of " + std::to_string(batch_));
            const size_t perRow =
                static_cast<size_t>(out.shape.elementCount()) / static_cast<size_t>(batch_);
            if (classes_[o] == 0)
                classes_[o] = perRow;
            else if (classes_[o] != perRow)
                return Status::runtime(role_ + " engine: output " + std::to_string(o) + " gave " +
                    std::to_string(perRow) + " values per input, earlier " +
                    std::to_string(classes_[o]));
            outputs_[o].insert(outputs_[o].end(), out.data, out.data + rows * perRow);
        }
        return Status();
    }

    std::string role_;
    TensorShape sample_;
    int batch_ = 1;
    std::unique_ptr<Session> session_;
    std::vector<float> buffer_;
    TensorView view_ {};
    std::vector<size_t> classes_;
    std::vector<std::vector<float>> outputs_;
    std::vector<int64_t> wallNs_;
    std::vector<RunTiming> timings_;
    int64_t cpuNs_ = 0; // process CPU time over the timed runs
};

// Runs both engines over every window of `inputs` (the first already read), accumulating how far
// the candidate is from the reference per output. Returns the frames compared.
Expected<size_t> compareWindows(InputWindows& inputs, size_t firstWindow, const Engine& reference,
    EngineRun& ref, EngineRun& cand, std::vector<OutputAgreement>& agreements)
{
    size_t count = 0;
    for (size_t frames = firstWindow; frames > 0;) {
        // The engines take turns batch by batch (whichever is behind runs next), so that drift on
        // a shared machine reaches both alike.
        ref.beginWindow();
        cand.beginWindow();
        size_t refDone = 0, candDone = 0;
        while (refDone < frames || candDone < frames) {
            const bool refTurn = refDone < frames && (refDone <= candDone || candDone >= frames);
            EngineRun& run = refTurn ? ref : cand;
            size_t& done = refTurn ? refDone : candDone;
            auto covered = run.runBatch(inputs.data(), frames, done);
            if (!covered)
                return covered.status();
            done += covered.value();
        }
        if (ref.outputCount() != cand.outputCount())
            return Status::runtime("the reference engine gives " +
                std::to_string(ref.outputCount()) + " outputs, the candidate " +
                std::to_string(cand.outputCount()));
        if (agreements.empty()) {
            for (size_t o = 0; o < ref.outputCount(); ++o) {
                OutputAgreement a;
                a.name = o < reference.outputs().size() ? reference.outputs()[o].name
                                                        : "output" + std::to_string(o);
                a.classes = ref.classes(o);
                if (cand.classes(o) != a.classes)
                    return Status::runtime("output '" + a.name + "': the reference gives " +
                        std::to_string(a.classes) + " values per input, the candidate " +
                        std::to_string(cand.classes(o)));
                agreements.push_back(a);
            }
        }
        for (size_t o = 0; o < agreements.size(); ++o) {
            OutputAgreement& a = agreements[o];
            for (size_t i = 0; i < frames; ++i)
                accumulateAgreement(a, ref.rows(o) + i * a.classes, cand.rows(o) + i * a.classes);
        }
        count += frames;
        auto next = inputs.next();
        if (!next)
            return next.status();
        frames = next.value();
    }
    return count;
}

} // namespace

namespace {

// Everything that can be wrong with the command line alone, found before any file is read.
Status checkCommandLine(const CompareOptions& options)
{
    if (options.candidate.empty())
        return Status::invalid(
            "--candidate is required (an engine spec such as tensorrt:gpu:fp16)");
    if (options.frames == 0)
        return Status::invalid("--frames must be at least 1");
    if (options.minTop1 > 1)
        return Status::invalid("--min-top1 is a fraction of the inputs, 0 to 1");
    if (!options.json.empty() && std::filesystem::exists(options.json))
        return Status::invalid("--json " + options.json + ": the file exists; give a new path");
    return Status();
}

// The task, the source and the model path: --config's task, else the defaults.
Status resolveTask(const CompareOptions& options, ComparePlan& plan)
{
    if (!options.config.empty()) {
        auto loaded = loadConfig(options.config);
        if (!loaded)
            return loaded.status();
        plan.agent = std::move(loaded).value();
        if (options.task >= plan.agent.tasks.size())
            return Status::invalid("--task " + std::to_string(options.task) + ": " +
                options.config + " has " + std::to_string(plan.agent.tasks.size()) + " task(s)");
        plan.task = plan.agent.tasks[options.task];
        if (plan.task.type != "classification")
            return Status::invalid(
                plan.agent.where("tasks[" + std::to_string(options.task) + "].type") +
                ": compare takes a task with one image input (type: classification)");
        plan.source = plan.agent.source();
        plan.key = "tasks[" + std::to_string(options.task) + "]";
    } else {
        plan.agent.path = "the default preprocessing (no --config)";
        plan.task.engine.backend = "opencv"; // the default reference: opencv:cpu:fp32
        plan.task.engine.cacheDir = defaultCacheDir();
        plan.source.uri = "synthetic://shapes";
    }
    if (!options.inputs.empty())
        plan.source.uri = options.inputs;
    plan.source.loop = false;
    if (!options.cacheDir.empty())
        plan.task.engine.cacheDir = options.cacheDir;
    plan.modelPath = options.model.empty() ? plan.task.model : options.model;
    if (plan.modelPath.empty())
        return Status::invalid("no model: give MODEL.onnx, or --config with a task");
    return Status();
}

// Both engines' settings from their specs over the task's engine section, each backend checked
// against this build.
Status resolveEngines(const CompareOptions& options, ComparePlan& plan)
{
    const EngineOptions& base = plan.task.engine;
    plan.referenceSpec = options.reference.empty()
        ? (options.config.empty() ? std::string("opencv:cpu:fp32")
                                  : resolveBackend(base) + ":" + deviceName(base.device) + ":" +
                      precisionName(base.precision) + " (" + plan.key + ".engine)")
        : options.reference;
    EngineOptions& referenceOptions = plan.referenceOptions;
    EngineOptions& candidateOptions = plan.candidateOptions;
    referenceOptions = base;
    if (!options.reference.empty()) {
        auto parsed = parseEngineSpec(options.reference, base);
        if (!parsed)
            return parsed.status().withContext("--reference");
        referenceOptions = parsed.value();
    }
    auto candidateParsed = parseEngineSpec(options.candidate, base);
    if (!candidateParsed)
        return candidateParsed.status().withContext("--candidate");
    candidateOptions = candidateParsed.value();
    // Reports name the backend that ran, not "auto".
    referenceOptions.backend = resolveBackend(referenceOptions);
    candidateOptions.backend = resolveBackend(candidateOptions);
    if (referenceOptions.backend == "opencv" && candidateOptions.backend == "opencv" &&
        referenceOptions.threads != candidateOptions.threads)
        return Status::invalid("the opencv backend's thread pool is shared by the process: give "
                               "both engines the same threads (reference " +
            std::to_string(referenceOptions.threads) + ", candidate " +
            std::to_string(candidateOptions.threads) + ")");
    for (const EngineOptions* o : {&referenceOptions, &candidateOptions}) {
        const char* role = o == &referenceOptions ? "--reference" : "--candidate";
        bool known = false;
        for (const BackendInfo& b : listBackends()) {
            if (b.name != o->backend)
                continue;
            known = true;
            if (!b.available)
                return Status::unsupported(std::string(role) + ": backend '" + b.name +
                    "' is not available in this build: " + b.details +
                    " (`jetagent backends` lists the backends this build has)");
        }
        if (!known)
            return Status::invalid(std::string(role) + ": unknown backend '" + o->backend +
                "' (see `jetagent backends`)");
    }
    plan.calibration = plan.task.calibration;
    if (!options.calibration.empty())
        plan.calibration.source = options.calibration;
    plan.anyInt8 = referenceOptions.precision == Precision::Int8 ||
        candidateOptions.precision == Precision::Int8;
    if (!options.calibration.empty() && !plan.anyInt8)
        return Status::invalid("--calibration is for int8 engines; neither engine is int8");
    return Status();
}

// The model, which must take one float32 image batch that both engines' batch fits, and the
// reference's own model when --reference-model gives one with the same input.
Status loadModels(const CompareOptions& options, ComparePlan& plan)
{
    const std::string& modelPath = plan.modelPath;
    auto model = loadModelFile(modelPath);
    if (!model)
        return model.status();
    const ModelFile& file = *model.value();
    if (file.inputs.size() != 1)
        return Status::invalid("model '" + modelPath + "' has " +
            std::to_string(file.inputs.size()) +
            " inputs; compare feeds models that take one image batch, N x 3 x H x W");
    const TensorInfo& input = file.inputs[0];
    if (input.dims.size() != 4 || (input.dims[1] != 3 && input.dims[1] != -1) ||
        input.type != DataType::Float32)
        return Status::invalid("model '" + modelPath + "': input '" + input.name + "' is " +
            dataTypeName(input.type) + " " + input.shapeString() +
            "; compare feeds float32 image batches, N x 3 x H x W");
    for (const EngineOptions* o : {&plan.referenceOptions, &plan.candidateOptions})
        if (input.dims[0] > 0 && input.dims[0] != o->batch)
            return Status::invalid("model '" + modelPath + "' has a fixed batch of " +
                std::to_string(input.dims[0]) +
                "; give its engines batch=" + std::to_string(input.dims[0]));

    plan.model = model.value();
    plan.referenceModel = model.value();
    if (!options.referenceModel.empty()) {
        auto loaded = loadModelFile(options.referenceModel);
        if (!loaded)
            return loaded.status().withContext("--reference-model");
        const auto& other = loaded.value()->inputs;
        if (other.size() != 1 || other[0].dims != input.dims || other[0].type != input.type)
            return Status::invalid("--reference-model " + options.referenceModel + ": its input (" +
                (other.empty() ? std::string("none") : other[0].shapeString()) +
                ") is not the same as the input of " + modelPath + " (" + input.shapeString() +
                ")");
        plan.referenceModel = loaded.value();
    }
    return Status();
}

// The preprocessing for the model's input, and the int8 engines' calibration data made with it.
Status resolvePreprocessing(const CompareOptions& options, ComparePlan& plan)
{
    const TensorInfo& input = plan.input();
    plan.pre = plan.task.preprocess;
    if (Status s = resolveImageInput(
            plan.agent, plan.key, input.dims[2], input.dims[3], input.shapeString(), plan.pre);
        !s)
        return options.config.empty()
            ? Status::invalid(
                  s.message() + " (with --config, that task's preprocess section sets the crop)")
            : s;

    if (plan.anyInt8 && !plan.calibration.source.empty()) {
        if (!options.makeCalibration)
            return Status::unsupported(
                "int8 calibration data cannot be made by this build of compare yet (calibration "
                "source " +
                plan.calibration.source + ")");
        auto data = options.makeCalibration(
            plan.calibration, plan.pre, [&](const std::string& name) -> std::string {
                if (name == "source" && !options.calibration.empty())
                    return "--calibration";
                return options.config.empty()
                    ? "calibration " + name + " (default)"
                    : plan.agent.where(plan.key + ".engine.calibration." + name);
            });
        if (!data)
            return data.status();
        for (EngineOptions* o : {&plan.referenceOptions, &plan.candidateOptions})
            if (o->precision == Precision::Int8)
                o->calibration = data.value();
    }
    return Status();
}

// Builds both engines and runs every input through each, a window at a time.
Expected<CompareFigures> runEngines(const CompareOptions& options, const ComparePlan& plan)
{
    const TensorShape sample {3, plan.pre.cropHeight, plan.pre.cropWidth};
    // The inputs, preprocessed once: both engines get the very same tensors. The first window is
    // read before the engines are built, so that a source that gives nothing fails at once.
    auto opened = openFrameSource(plan.source);
    if (!opened)
        return opened.status().withContext("--inputs");
    CompareFigures figures;
    const int maxBatch = std::max(plan.referenceOptions.batch, plan.candidateOptions.batch);
    figures.window = (kWindowFrames + static_cast<size_t>(maxBatch) - 1) /
        static_cast<size_t>(maxBatch) * static_cast<size_t>(maxBatch);
    InputWindows inputs(*opened.value(), plan.pre, plan.source.uri, options.frames, figures.window);
    auto firstWindow = inputs.next();
    if (!firstWindow)
        return firstWindow.status();
    if (firstWindow.value() == 0)
        return Status::invalid("--inputs " + withoutPasswords(plan.source.uri) + " gave no frame");

    // Each engine is built, its session opened and warmed up before the next is built: the
    // resident memory each adds is then its own. One that cannot be built still fails before any
    // timed run.
    EngineRun ref("reference", sample), cand("candidate", sample);
    std::shared_ptr<const Engine> engines[2];
    double rssMb[2] = {kNotMeasuredMb, kNotMeasuredMb};
    const std::pair<EngineRun*, const char*> roles[2] = {
        {&ref, "--reference "}, {&cand, "--candidate "}};
    for (size_t i = 0; i < 2; ++i) {
        const double before = processMemory().rssMb;
        auto built = buildEngine(i == 0 ? plan.referenceModel : plan.model,
            i == 0 ? plan.referenceOptions : plan.candidateOptions);
        if (!built) {
            Status failed = built.status().withContext(
                roles[i].second + (i == 0 ? plan.referenceSpec : options.candidate));
            // The default reference is OpenCV DNN, which loads no Swin or ConvNeXt: say what to
            // give instead.
            if (i == 0 && options.reference.empty() && options.config.empty())
                failed = Status::error(failed.kind(),
                    failed.message() +
                        " (opencv:cpu:fp32 is the default reference without --config; give "
                        "--reference xnnpack:cpu:fp32 for a model OpenCV DNN cannot load)");
            return failed;
        }
        engines[i] = built.value();
        if (Status s = roles[i].first->start(*engines[i]); !s)
            return s;
        if (Status s = roles[i].first->warmUp(inputs.data(), firstWindow.value(), options.warmup);
            !s)
            return s;
        rssMb[i] = processMemory().rssMb - before;
    }
    const auto reference = engines[0];
    const auto candidate = engines[1];
    auto compared =
        compareWindows(inputs, firstWindow.value(), *reference, ref, cand, figures.agreements);
    if (!compared)
        return compared.status();
    figures.count = compared.value();
    figures.referenceLatency = latencyFigures(ref.wallNs(), ref.timings());
    figures.candidateLatency = latencyFigures(cand.wallNs(), cand.timings());
    for (size_t i = 0; i < 2; ++i) {
        const EngineRun& run = *roles[i].first;
        LatencyFigures& l = i == 0 ? figures.referenceLatency : figures.candidateLatency;
        if (l.meanMs > 0)
            l.imagesPerS = run.batch() * 1000.0 / l.meanMs;
        if (l.runs > 0)
            l.cpuMsPerRun = static_cast<double>(run.cpuNs()) / 1e6 / static_cast<double>(l.runs);
        l.rssMb = rssMb[i];
    }
    figures.reference =
        engineJson(plan.referenceSpec, reference->description(), figures.referenceLatency);
    figures.candidate =
        engineJson(options.candidate, candidate->description(), figures.candidateLatency);
    return figures;
}

} // namespace

Expected<CompareResult> runCompare(const CompareOptions& options)
{
    // Everything that can be wrong with the command line is found before any engine is built.
    if (Status s = checkCommandLine(options); !s)
        return s;
    ComparePlan plan;
    for (auto step : {resolveTask, resolveEngines, loadModels, resolvePreprocessing})
        if (Status s = step(options, plan); !s)
            return s;
    auto figures = runEngines(options, plan);
    if (!figures)
        return figures.status();

    CompareResult result;
    nlohmann::json& doc = result.document;
    doc = compareDocument(options, plan, figures.value());
    auto checks = judgeChecks(options, plan.modelPath, figures->agreements, result.failedChecks);
    if (!checks)
        return checks.status();
    doc["checks"] = checks.value();
    doc["passed"] = result.failedChecks.empty();

    std::string& t = result.text;
    t = compareReport(options, plan, figures.value(), doc) + outputTable(figures->agreements) +
        latencyTable(figures.value(), options.warmup);
    if (!checks->empty()) {
        t += "\nchecks\n";
        for (const auto& c : checks.value())
            t += std::string(c["passed"].get<bool>() ? "  PASS  " : "  FAIL  ") +
                c["message"].get<std::string>() + "\n";
    }

    if (!options.json.empty())
        if (Status s = writeJsonOption(options.json, doc); !s)
            return s;
    return result;
}

} // namespace jetagent
