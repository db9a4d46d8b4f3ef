// `jetagent compare`: one model through a reference engine and a candidate engine on the same
// preprocessed inputs.
#include "compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>

#include "config.h"
#include "jetagent/base/clock.h"
#include "jetagent/base/format.h"
#include "jetagent/base/json_text.h"
#include "jetagent/base/text_split.h"
#include "jetagent/engines/model_prepare.h"
#include "jetagent/hal/gstreamer_source.h"
#include "latency_stats.h"
#include "preprocess.h"
#include "sweep_measure.h"
#include "task_setup.h"

namespace jetagent {

const char* const kCompareHelp =
    "\nRuns MODEL through the REFERENCE engine and the CANDIDATE engine on the same inputs, read\n"
    "from --inputs and preprocessed once (so both see identical tensors), and reports how far\n"
    "the candidate's outputs are from the reference's, and both engines' latencies. Inputs are\n"
    "read 32 at a time (so memory does not grow with --frames) and the engines take turns batch\n"
    "by batch, so that drift on a shared machine reaches both alike. Use it to trust a TensorRT "
    "fp16/int8 engine, or the CPU's own int8, against an\n"
    "fp32 engine before deploying it.\n\n"
    "Engine specs: BACKEND[:DEVICE[:PRECISION]][,key=value...]\n"
    "  BACKEND    auto, xnnpack, opencv, tensorrt (`jetagent backends` lists what this build\n"
    "             has; auto: tensorrt for gpu/dla, xnnpack for cpu)\n"
    "  DEVICE     cpu, gpu, dla0, dla1              PRECISION  fp32, fp16, int8\n"
    "  keys       the config's engine keys: fusion=on|off, onednn=on|off (xnnpack:\n"
    "             convolutions and linear layers on oneDNN, x86-64), threads=N, batch=N,\n"
    "             batch_min=N, batch_max=N, workspace_mb=N, dla_gpu_fallback=on|off,\n"
    "             timing_cache=on|off, cuda_graph=on|off, io_memory=auto|mapped|device\n"
    "  What a spec leaves out comes from --config's task engine section, else the defaults\n"
    "  (cpu, fp32, batch 1, fusion on). The opencv backend's thread pool is shared by the whole\n"
    "  process, so two opencv engines must have the same threads.\n\n"
    "Preprocessing: --config's task preprocess section; without --config torchvision's ImageNet\n"
    "evaluation (shorter side resized to crop x 256/224, centre crop of the model's H x W,\n"
    "RGB, /255, ImageNet mean and std).\n\n"
    "Per output tensor:\n"
    "  max abs error     max |cand - ref| over every value of every input\n"
    "  relative error    max |cand - ref| / max |ref| over the same (one scale for the whole\n"
    "                    output: a per-value ratio explodes where the reference is near zero)\n"
    "  top-1 agreement   fraction of inputs whose argmax is the same (outputs of >= 2 values)\n"
    "  top-5 overlap     mean of |top5(ref) & top5(cand)| / 5 (outputs of >= 5 values)\n"
    "Latency per engine: median, p90 and p99 of Session::run wall time over one run per batch\n"
    "of inputs, after --warmup untimed runs; and the means of the parts the backend times\n"
    "(host-to-device, compute, device-to-host; '-' where it does not separate them).\n\n"
    "--reference-model runs the reference on another model with the same input (the model\n"
    "before simplification or quantization); both engines default to MODEL.\n\n"
    "int8 engines calibrate on --calibration (or the task's engine.calibration), preprocessed\n"
    "as the inputs are.\n\n"
    "Exit codes: 0 every threshold given holds; 1 one does not (the report names it); 2 usage,\n"
    "configuration or input error, or a backend this build does not have.\n\n"
    "Examples:\n"
    "  jetagent compare models/shapes_cnn.onnx --candidate opencv:cpu:fp32,fusion=off \\\n"
    "      --config firmware-config/demo.yaml --frames 100\n"
    "  jetagent compare resnet18.onnx --candidate tensorrt:gpu:fp16 --min-top1 0.99 --json r.json\n"
    "  jetagent compare resnet18.onnx --candidate tensorrt:gpu:int8 --calibration calib/ \\\n"
    "      --inputs file://images/\n"
    "  jetagent compare models/shapes_cnn.onnx --config firmware-config/demo.yaml \\\n"
    "      --reference xnnpack:cpu:fp32 --candidate xnnpack:cpu:int8 --calibration calib/ \\\n"
    "      --min-top1 0.99          int8 on the CPU (calib/: `jetagent capture --seed 7 ...`)\n";

namespace {

constexpr double kNsPerMs = 1e6;

bool parseSwitch(const std::string& value, bool* out)
{
    if (value == "on" || value == "true" || value == "1" || value == "yes") {
        *out = true;
        return true;
    }
    if (value == "off" || value == "false" || value == "0" || value == "no") {
        *out = false;
        return true;
    }
    return false;
}

bool parseCount(const std::string& value, int64_t lowest, int64_t highest, int64_t* out)
{
    if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos ||
        value.size() > 9)
        return false;
    const int64_t v = std::stoll(value);
    if (v < lowest || v > highest)
        return false;
    *out = v;
    return true;
}

Status setSpecKey(
    const std::string& spec, const std::string& key, const std::string& value, EngineOptions& o)
{
    auto bad = [&](const std::string& expected) {
        return Status::invalid(
            "engine spec '" + spec + "': " + key + "=" + value + ": expected " + expected);
    };
    int64_t n = 0;
    constexpr int64_t kMaxBatch = 256;
    constexpr int64_t kMaxThreads = 256;
    constexpr int64_t kMaxWorkspaceMb = int64_t {1} << 20;
    if (key == "fusion")
        return parseSwitch(value, &o.fusion) ? Status() : bad("on or off");
    if (key == "onednn")
        return parseSwitch(value, &o.onednn) ? Status() : bad("on or off");
    if (key == "dla_gpu_fallback")
        return parseSwitch(value, &o.gpuFallback) ? Status() : bad("on or off");
    if (key == "timing_cache")
        return parseSwitch(value, &o.timingCache) ? Status() : bad("on or off");
    if (key == "cuda_graph")
        return parseSwitch(value, &o.cudaGraph) ? Status() : bad("on or off");
    if (key == "io_memory") {
        for (IoMemory m : {IoMemory::Auto, IoMemory::Mapped, IoMemory::Device})
            if (value == ioMemoryName(m)) {
                o.ioMemory = m;
                return Status();
            }
        return bad("auto, mapped or device");
    }
    if (key == "threads") {
        if (!parseCount(value, 0, kMaxThreads, &n))
            return bad("0 (the backend's default) to 256");
        o.threads = static_cast<int>(n);
        return Status();
    }
    if (key == "batch" || key == "batch_min" || key == "batch_max") {
        if (!parseCount(value, key == "batch" ? 1 : 0, kMaxBatch, &n))
            return bad(key == "batch" ? "1 to 256" : "0 (= batch) to 256");
        (key == "batch"              ? o.batch
                : key == "batch_min" ? o.batchMin
                                     : o.batchMax) = static_cast<int>(n);
        return Status();
    }
    if (key == "workspace_mb") {
        if (!parseCount(value, 0, kMaxWorkspaceMb, &n))
            return bad("0 (TensorRT's default) to 1048576");
        o.workspaceMb = n;
        return Status();
    }
    return Status::invalid("engine spec '" + spec + "': unknown key '" + key +
        "' (known: fusion, onednn, threads, batch, batch_min, batch_max, workspace_mb, "
        "dla_gpu_fallback, timing_cache, cuda_graph, io_memory)");
}

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

Status writeComparisonJson(const std::string& path, const nlohmann::json& document)
{
    std::ofstream out(path);
    out << jsonText(document, 2) << "\n";
    out.close();
    if (!out)
        return Status::io("--json " + path + ": cannot be written");
    return Status();
}

} // namespace

Expected<EngineOptions> parseEngineSpec(const std::string& spec, const EngineOptions& base)
{
    const std::vector<std::string> items = splitFields(spec, ',');
    const std::vector<std::string> head = splitFields(items[0], ':');
    if (head[0].empty())
        return Status::invalid("engine spec '" + spec +
            "': no backend (expected BACKEND[:DEVICE[:PRECISION]][,key=value...], such as "
            "opencv:cpu:fp32)");
    if (head.size() > 3)
        return Status::invalid("engine spec '" + spec + "': '" + items[0] +
            "' has more than three parts (BACKEND:DEVICE:PRECISION)");
    EngineOptions o = base;
    if (head[0] != base.backend) {
        // Settings of another backend would be refused by this one; keep only the shared ones.
        const EngineOptions defaults;
        o.batchMin = defaults.batchMin;
        o.batchMax = defaults.batchMax;
        o.workspaceMb = defaults.workspaceMb;
        o.gpuFallback = defaults.gpuFallback;
        o.timingCache = defaults.timingCache;
        o.cudaGraph = defaults.cudaGraph;
        o.ioMemory = defaults.ioMemory;
        o.onednn = defaults.onednn;
        o.device = defaults.device;
        o.precision = defaults.precision;
    }
    o.backend = head[0];
    if (head.size() > 1 && !parseDevice(head[1], &o.device))
        return Status::invalid("engine spec '" + spec + "': unknown device '" + head[1] +
            "' (known: cpu, gpu, dla0, dla1)");
    if (head.size() > 2 && !parsePrecision(head[2], &o.precision))
        return Status::invalid("engine spec '" + spec + "': unknown precision '" + head[2] +
            "' (known: fp32, fp16, int8)");
    for (size_t i = 1; i < items.size(); ++i) {
        const size_t equals = items[i].find('=');
        if (equals == std::string::npos || equals == 0)
            return Status::invalid("engine spec '" + spec + "': '" + items[i] +
                "' is not key=value (such as fusion=off)");
        if (Status s = setSpecKey(spec, items[i].substr(0, equals), items[i].substr(equals + 1), o);
            !s)
            return s;
    }
    if (o.profileMin() > o.batch || o.profileMax() < o.batch)
        return Status::invalid("engine spec '" + spec + "': the batch profile " +
            std::to_string(o.profileMin()) + ".." + std::to_string(o.profileMax()) +
            " does not contain batch " + std::to_string(o.batch));
    return o;
}

double OutputAgreement::relativeError() const
{
    if (nonFinite > 0)
        return std::numeric_limits<double>::infinity();
    if (maxAbsReference == 0)
        return maxAbsError == 0 ? 0.0 : std::numeric_limits<double>::infinity();
    return maxAbsError / maxAbsReference;
}

double OutputAgreement::top1Agreement() const
{
    return inputs == 0 ? 0.0 : static_cast<double>(top1Agreements) / static_cast<double>(inputs);
}

double OutputAgreement::top5Overlap() const
{
    return inputs == 0 ? 0.0 : top5OverlapSum / static_cast<double>(inputs);
}

std::vector<size_t> topK(const float* row, size_t size, size_t k)
{
    std::vector<size_t> order(size);
    std::iota(order.begin(), order.end(), size_t {0});
    k = std::min(k, size);
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
        [row](size_t a, size_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
    order.resize(k);
    return order;
}

void accumulateAgreement(OutputAgreement& a, const float* reference, const float* candidate)
{
    for (size_t i = 0; i < a.classes; ++i) {
        if (!std::isfinite(reference[i]) || !std::isfinite(candidate[i])) {
            ++a.nonFinite;
            continue;
        }
        const double r = reference[i];
        a.maxAbsError = std::max(a.maxAbsError, std::fabs(static_cast<double>(candidate[i]) - r));
        a.maxAbsReference = std::max(a.maxAbsReference, std::fabs(r));
    }
    ++a.inputs;
    if (a.hasTop1() &&
        topK(reference, a.classes, 1).front() == topK(candidate, a.classes, 1).front())
        ++a.top1Agreements;
    if (a.hasTop5()) {
        constexpr size_t kTop = 5;
        const auto ref = topK(reference, a.classes, kTop);
        const auto cand = topK(candidate, a.classes, kTop);
        size_t common = 0;
        for (size_t c : cand)
            common += static_cast<size_t>(std::count(ref.begin(), ref.end(), c));
        a.top5OverlapSum += static_cast<double>(common) / static_cast<double>(kTop);
    }
}

LatencyFigures latencyFigures(std::vector<int64_t> wallNs, const std::vector<RunTiming>& timings)
{
    LatencyFigures f;
    f.runs = wallNs.size();
    if (wallNs.empty())
        return f;
    std::sort(wallNs.begin(), wallNs.end());
    constexpr double kMedian = 50, kP90 = 90, kP99 = 99;
    f.medianMs = nsToMs(nearestRankPercentile(wallNs, kMedian));
    f.p90Ms = nsToMs(nearestRankPercentile(wallNs, kP90));
    f.p99Ms = nsToMs(nearestRankPercentile(wallNs, kP99));
    f.meanMs = static_cast<double>(std::accumulate(wallNs.begin(), wallNs.end(), int64_t {0})) /
        static_cast<double>(wallNs.size()) / kNsPerMs;
    // A part is reported only when every run gave it.
    auto mean = [&timings](int64_t RunTiming::*part) {
        if (timings.empty())
            return -1.0;
        double sum = 0;
        for (const RunTiming& t : timings) {
            if (t.*part < 0)
                return -1.0;
            sum += static_cast<double>(t.*part);
        }
        return sum / static_cast<double>(timings.size()) / kNsPerMs;
    };
    f.hostToDeviceMs = mean(&RunTiming::hostToDeviceNs);
    f.computeMs = mean(&RunTiming::computeNs);
    f.deviceToHostMs = mean(&RunTiming::deviceToHostNs);
    return f;
}

namespace {

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
        plan.source = plan.agent.source;
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
        if (Status s = writeComparisonJson(options.json, doc); !s)
            return s;
    return result;
}

} // namespace jetagent
