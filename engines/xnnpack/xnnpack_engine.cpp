// XnnpackEngine: builds a Plan from the prepared model once; each session instantiates the plan's
// steps over its own arena, so a run copies the inputs in, calls the steps and allocates nothing.
#include "xnnpack_engine.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <new>
#include <optional>
#include <thread>

#include <onnx/onnx_pb.h>
#include <pthreadpool.h>
#include <xnnpack.h>
#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include "graph_compiler.h"
#include "jetagent/base/clock.h"
#include "jetagent/base/log.h"
#include "jetagent/engines/cache_file.h"
#include "jetagent/engines/sha256.h"
#include "qdq_plan.h"
#include "quantize.h"
#include "steps.h"

#ifndef JETAGENT_XNNPACK_VERSION
#define JETAGENT_XNNPACK_VERSION "unknown version"
#endif

namespace jetagent {

namespace {

using xnnplan::Plan;

// XNNPACK is initialised once per process; a CPU it has no kernels for is refused here.
Status initialiseXnnpack()
{
    static std::once_flag once;
    static xnn_status result = xnn_status_uninitialized;
    std::call_once(once, [] { result = xnn_initialize(nullptr); });
    if (result == xnn_status_unsupported_hardware)
        return Status::unsupported("XNNPACK has no kernels for this CPU");
    if (result != xnn_status_success)
        return Status::runtime("XNNPACK failed to initialise");
    return Status();
}

// The instruction sets XNNPACK's kernels will use here, as it picks them at run time.
std::string instructionSets()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return "x86-64 AVX-512F kernels";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return "x86-64 AVX2+FMA3 kernels";
    if (__builtin_cpu_supports("avx"))
        return "x86-64 AVX kernels";
    return "x86-64 SSE2 kernels";
#elif defined(__aarch64__)
    const unsigned long caps = getauxval(AT_HWCAP);
    std::string s = "aarch64 NEON kernels";
    if (caps & HWCAP_ASIMDHP)
        s += ", fp16 arithmetic (ARMv8.2)";
    if (caps & HWCAP_ASIMDDP)
        s += ", dot product";
    return s;
#else
    return "this CPU's kernels";
#endif
}

// Whether the CPU computes in fp16 natively (ARMv8.2's FP16 and its Advanced SIMD form), which
// XNNPACK's fp16 kernels need to be worth running.
bool nativeFp16()
{
#if defined(__aarch64__)
    const unsigned long caps = getauxval(AT_HWCAP);
    return (caps & HWCAP_FPHP) && (caps & HWCAP_ASIMDHP);
#else
    return false;
#endif
}

// One pool for every xnnpack engine of the process, sized by the first engine that asks. Its
// workers sleep after each inference (the last step yields them) instead of spinning.
class SharedPool {
public:
    static pthreadpool_t get(int threads, int* size)
    {
        static std::mutex mutex;
        static pthreadpool_t pool = nullptr;
        static int poolSize = 0;
        std::lock_guard<std::mutex> lock(mutex);
        const int want = threads > 0
            ? threads
            : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
        if (poolSize == 0) {
            poolSize = want;
            if (want > 1)
                pool = pthreadpool_create(static_cast<size_t>(want));
            if (want > 1 && !pool)
                poolSize = 1;
        } else if (want != poolSize) {
            logger("engine")->info("xnnpack: the process's thread pool already has {} threads; "
                                   "an engine asking for {} shares it",
                poolSize, want);
        }
        *size = poolSize;
        return pool;
    }
};

struct AlignedFree {
    void operator()(float* p) const { ::operator delete[](p, std::align_val_t(64)); }
};
using Arena = std::unique_ptr<float[], AlignedFree>;

class XnnpackSession final : public Session {
public:
    XnnpackSession(std::shared_ptr<const ModelFile> model, std::shared_ptr<const Plan> plan,
        pthreadpool_t pool)
        : model_(std::move(model)), plan_(std::move(plan)), pool_(pool)
    {
    }

    Status init()
    {
        const size_t floats = static_cast<size_t>(plan_->arenaFloats);
        arena_.reset(
            static_cast<float*>(::operator new[](floats * sizeof(float), std::align_val_t(64))));
        std::memset(arena_.get(), 0, floats * sizeof(float));
        for (size_t i = 0; i < plan_->steps.size(); ++i) {
            auto exec = plan_->steps[i]->instantiate(
                arena_.get(), *plan_, pool_, i + 1 == plan_->steps.size());
            if (!exec)
                return exec.status().withContext("model '" + model_->path + "'");
            execs_.push_back(std::move(exec.value()));
        }
        // The outputs stay where the plan put them in the arena, at the shapes it was built for.
        for (const int id : plan_->outputs) {
            const xnnplan::Value& v = plan_->values[static_cast<size_t>(id)];
            ConstTensorView view;
            view.data = plan_->address(arena_.get(), id);
            view.shape.rank = std::min(static_cast<int>(v.dims.size()), TensorShape::kMaxRank);
            std::copy_n(v.dims.begin(), view.shape.rank, view.shape.dims.begin());
            outputViews().push_back(view);
        }
        return Status();
    }

    Status run(const TensorView* inputs, size_t inputCount, RunTiming* timing) override
    {
        if (inputCount != plan_->inputs.size())
            return Status::invalid("model '" + model_->path + "' takes " +
                std::to_string(plan_->inputs.size()) + " inputs, " + std::to_string(inputCount) +
                " given");
        const int64_t start = monotonicNs();
        for (size_t i = 0; i < inputCount; ++i) {
            const xnnplan::Value& v = plan_->values[static_cast<size_t>(plan_->inputs[i])];
            const TensorShape& shape = inputs[i].shape;
            bool same = shape.rank == static_cast<int>(v.dims.size());
            for (int d = 0; same && d < shape.rank; ++d)
                same = shape[d] == v.dims[static_cast<size_t>(d)];
            if (!same || !inputs[i].data)
                return Status::invalid("model '" + model_->path + "': input '" + v.name + "' is " +
                    shape.toString() + ", the engine was built for " + dimsOf(v));
            std::memcpy(plan_->address(arena_.get(), plan_->inputs[i]), inputs[i].data,
                static_cast<size_t>(v.count()) * sizeof(float));
        }
        int64_t stepStart = stepTimes_.empty() ? 0 : monotonicNs();
        for (size_t i = 0; i < execs_.size(); ++i) {
            Status s = execs_[i]->run(pool_);
            if (observer_ && s.ok())
                observer_(i, arena_.get());
            if (!stepTimes_.empty()) {
                const int64_t now = monotonicNs();
                stepTimes_[i] += now - stepStart;
                stepStart = now;
            }
            if (!s.ok())
                return Status::runtime("inference on model '" + model_->path + "' failed at " +
                    plan_->steps[i]->node + ": " + s.message());
        }
        if (timing) {
            timing->hostToDeviceNs = -1;
            timing->deviceToHostNs = -1;
            timing->computeNs = monotonicNs() - start;
        }
        return Status();
    }

    bool enableStepTimes(bool on) override
    {
        stepTimes_.assign(on ? execs_.size() : 0, 0);
        return true;
    }
    const std::vector<int64_t>* stepTimesNs() const override { return &stepTimes_; }

    // Calibration: called after each step with the session's arena.
    using Observer = std::function<void(size_t step, const float* arena)>;
    void setObserver(Observer observer) { observer_ = std::move(observer); }

private:
    static std::string dimsOf(const xnnplan::Value& v)
    {
        std::string s;
        for (int64_t d : v.dims)
            s += (s.empty() ? "" : "x") + std::to_string(d);
        return s;
    }

    std::shared_ptr<const ModelFile> model_;
    std::shared_ptr<const Plan> plan_;
    pthreadpool_t pool_;
    Arena arena_;
    std::vector<std::unique_ptr<xnnplan::StepExec>> execs_;
    std::vector<int64_t> stepTimes_; // empty: not timing steps
    Observer observer_;
};

const char* typeName(xnnplan::DType type)
{
    return type == xnnplan::DType::QS8 ? "int8" : type == xnnplan::DType::F16 ? "fp16" : "fp32";
}

// What a step computes in (inspect's column): the type of the value it writes, or for a
// conversion between the int8 (or fp16) and fp32 parts, both ("int8>fp32").
// An int8 plan's dense convolutions and fully connected layers onto oneDNN's int8 kernels, where
// the build has oneDNN and engine.onednn is on; what moved, for the engine's description. A model's
// own scales (QDQ) were chosen for exact 8-bit products: they go to oneDNN only where its kernels
// compute those (VNNI); calibrated scales go anyway (2x XNNPACK's int8 on AVX2, measured in
// docs/cpu-engine.md, for a 7-bit weight's rounding).
std::string int8OnOneDnn([[maybe_unused]] Plan* plan, [[maybe_unused]] const EngineOptions& options,
    [[maybe_unused]] bool modelScales, size_t* folded)
{
    *folded = 0;
#ifdef JETAGENT_HAVE_ONEDNN
    if (modelScales && !xnnplan::oneDnnHasVnni())
        return "; not on oneDNN int8 (this CPU has no VNNI: its 7-bit weights would round the "
               "model's own weights)";
    if (options.onednn && xnnplan::oneDnnAvailable()) {
        const auto moved = xnnplan::moveInt8ToOneDnn(plan);
        *folded = moved.residuals;
        return ", " + std::to_string(moved.convolutions) + " convolutions on oneDNN int8 (" +
            std::to_string(moved.residuals) +
            (moved.residuals == 1 ? " residual addition" : " residual additions") + " folded in)";
    }
#endif
    return "";
}

std::string precisionOf(const xnnplan::StepDef& step, const xnnplan::Plan& plan)
{
    if (const auto* c = dynamic_cast<const xnnplan::ConvertStep*>(&step))
        return std::string(typeName(c->from)) + ">" + typeName(c->to);
    if (step.output < 0)
        return "";
    return typeName(plan.rootOf(step.output).type);
}

class XnnpackEngine final : public Engine {
public:
    XnnpackEngine(std::shared_ptr<const ModelFile> model, std::shared_ptr<const Plan> plan,
        pthreadpool_t pool, EngineDescription description)
        : model_(std::move(model)),
          plan_(std::move(plan)),
          pool_(pool),
          description_(std::move(description))
    {
    }

    const std::vector<TensorInfo>& inputs() const override { return model_->inputs; }
    const std::vector<TensorInfo>& outputs() const override { return model_->outputs; }
    const EngineDescription& description() const override { return description_; }

    Expected<std::unique_ptr<Session>> createSession() const override
    {
        {
            // The session made at build time to check the model serves the first caller, so the
            // common case (one session per engine) packs the weights once.
            std::lock_guard<std::mutex> lock(spareMutex_);
            if (spare_)
                return std::unique_ptr<Session>(std::move(spare_));
        }
        return newSession();
    }

    Expected<std::unique_ptr<Session>> newSession() const
    {
        auto session = std::make_unique<XnnpackSession>(model_, plan_, pool_);
        Status s = session->init();
        if (!s.ok())
            return s;
        return std::unique_ptr<Session>(std::move(session));
    }

    const Plan& plan() const { return *plan_; }
    std::vector<EngineStep> steps() const override
    {
        std::vector<EngineStep> list;
        for (const auto& step : plan_->steps)
            list.push_back({step->node, step->op, step->library(), precisionOf(*step, *plan_)});
        return list;
    }
    void setSpare(std::unique_ptr<Session> spare, int64_t buildNs)
    {
        spare_ = std::move(spare);
        description_.buildNs = buildNs;
    }

private:
    std::shared_ptr<const ModelFile> model_;
    std::shared_ptr<const Plan> plan_;
    pthreadpool_t pool_;
    EngineDescription description_;
    mutable std::mutex spareMutex_;
    mutable std::unique_ptr<Session> spare_;
};

Status checkOptions(const EngineOptions& options)
{
    if (options.device != Device::Cpu)
        return Status::unsupported(std::string("the xnnpack backend runs on the CPU; device: ") +
            deviceName(options.device) + " needs the tensorrt backend (or opencv with CUDA)");
    if (options.precision == Precision::Fp16 && !nativeFp16())
        return Status::unsupported(
            "fp16 on the xnnpack backend needs a CPU with native fp16 arithmetic (ARMv8.2, such "
            "as Orin's Cortex-A78AE); this one has none, and emulated fp16 is slower than fp32: "
            "use precision: fp32 (or int8)");
    if (options.threads < 0)
        return Status::invalid("threads must be 0 (all cores) or more");
    const char* tensorrtOnly = options.tensorRTOnlySetting();
    if (tensorrtOnly)
        return Status::unsupported(std::string("the xnnpack backend has no setting ") +
            tensorrtOnly + "; it is a tensorrt backend setting");
    return Status();
}

// int8: the ranges of every value of the fp32 `plan` over the calibration samples, from the cache
// where an earlier build of the same model, preparation and samples left them.
Expected<xnnplan::RangeTable> calibrationRanges(const std::shared_ptr<xnnplan::Plan>& plan,
    const std::shared_ptr<const ModelFile>& model, const PreparedModel& prepared,
    const EngineOptions& options, pthreadpool_t pool, bool useCache, std::string* how)
{
    CalibrationData& data = *options.calibration;
    auto log = logger("engine");
    Sha256 keyHash;
    const std::string keyText = "jetagent xnnpack calibration 1\nmodel " + model->sha256 +
        "\nprepared " + prepared.key + "\nfusion " + (options.fusion ? "on" : "off") +
        "\nsamples " + data.key() + "\n";
    keyHash.update(keyText.data(), keyText.size());
    const std::string key = keyHash.finishHex();
    std::string path;
    if (!options.cacheDir.empty()) {
        path = options.cacheDir + "/xnnpack/" + key + ".ranges";
        // Checked against its digest: a flipped digit still parses, and quantizes every frame
        // wrongly without a word.
        CacheEntryRead cached = useCache ? readCacheEntry(path) : CacheEntryRead {};
        if (cached.bytes) {
            auto table = xnnplan::parseRanges(*cached.bytes);
            if (table) {
                *how = "calibration ranges from the cache (" + path + ")";
                return table;
            }
            cached.damaged = table.status().message();
        }
        if (!cached.damaged.empty())
            log->warn("int8: the cached ranges {} are damaged ({}); calibrating again and "
                      "replacing them",
                path, cached.damaged);
    }

    if (plan->inputs.size() != 1)
        return Status::unsupported("int8 calibration feeds models of one input; '" + model->path +
            "' has " + std::to_string(plan->inputs.size()));
    const xnnplan::Value& input = plan->values[static_cast<size_t>(plan->inputs[0])];
    const TensorShape& sample = data.sampleShape();
    bool same = input.dims.size() == static_cast<size_t>(sample.rank) + 1;
    for (int d = 0; same && d < sample.rank; ++d)
        same = input.dims[static_cast<size_t>(d) + 1] == sample[d];
    if (!same)
        return Status::invalid("the calibration samples are " + sample.toString() +
            ", the model's input '" + input.name + "' takes samples of its shape after the batch");
    const int64_t start = monotonicNs();
    XnnpackSession session(model, plan, pool);
    if (Status s = session.init(); !s.ok())
        return s;
    xnnplan::RangeTable ranges;
    session.setObserver([&](size_t step, const float* arena) {
        xnnplan::observeStep(*plan, step, arena, &ranges);
    });
    const size_t sampleFloats = static_cast<size_t>(sample.elementCount());
    const size_t engineBatch = static_cast<size_t>(input.dims[0]);
    std::vector<float> batch(static_cast<size_t>(data.batchSize()) * sampleFloats);
    std::vector<float> feed(engineBatch * sampleFloats);
    size_t filled = 0, samples = 0, runs = 0;
    data.rewind();
    for (;;) {
        auto more = data.nextBatch(batch.data());
        if (!more)
            return more.status().withContext("int8 calibration");
        if (!more.value())
            break;
        for (int i = 0; i < data.batchSize(); ++i) {
            std::copy_n(batch.data() + static_cast<size_t>(i) * sampleFloats, sampleFloats,
                feed.data() + filled * sampleFloats);
            ++samples;
            if (++filled < engineBatch)
                continue;
            TensorView view;
            view.data = feed.data();
            view.shape.rank = static_cast<int>(input.dims.size());
            std::copy(input.dims.begin(), input.dims.end(), view.shape.dims.begin());
            if (Status s = session.run(&view, 1, nullptr); !s.ok())
                return s.withContext("int8 calibration");
            filled = 0;
            ++runs;
        }
    }
    data.rewind();
    if (runs == 0)
        return Status::invalid("int8 calibration: " + data.description() + " gave " +
            std::to_string(samples) + " samples, fewer than the engine's batch of " +
            std::to_string(engineBatch));
    *how = "calibrated on " + std::to_string(runs * engineBatch) + " samples of " +
        data.description() + " in " +
        std::to_string(static_cast<int64_t>(nsToMs(monotonicNs() - start))) + " ms";
    if (!path.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(options.cacheDir + "/xnnpack", ec);
        Status s = ec
            ? Status::io("cannot create " + options.cacheDir + "/xnnpack: " + ec.message())
            : writeCacheEntry(path, xnnplan::formatRanges(ranges));
        if (!s.ok())
            log->warn("int8: calibration ranges not kept: {}", s.message());
        else
            *how += ", kept in " + path;
    }
    return ranges;
}

} // namespace

bool xnnpackAvailable()
{
    return initialiseXnnpack().ok();
}

std::string xnnpackDetails()
{
    Status s = initialiseXnnpack();
    if (!s.ok())
        return "XNNPACK " JETAGENT_XNNPACK_VERSION ": " + s.message();
    std::string oneDnn;
#ifdef JETAGENT_HAVE_ONEDNN
    oneDnn = xnnplan::oneDnnAvailable()
        ? "; convolutions and linear layers on oneDNN " JETAGENT_ONEDNN_VERSION
        : "; oneDNN " JETAGENT_ONEDNN_VERSION " is compiled in but cannot run here";
#endif
    return "XNNPACK " JETAGENT_XNNPACK_VERSION ", " + instructionSets() +
        ", fp32, int8 (calibrated, or a QDQ model's own scales)" +
        std::string(nativeFp16() ? ", fp16" : "") +
        "; reference kernels for the operators XNNPACK lacks" + oneDnn;
}

std::vector<std::string> xnnpackOperators()
{
    return xnnplan::claimedOperators();
}

namespace {

// A compiled fp32 plan lowered to the precision asked for: fp16 where the CPU computes in it; int8
// with a QDQ model's own scales or calibrated ones (dense convolutions then on oneDNN's int8
// kernels where the build has them). What runs in which precision, for the engine's description.
Expected<std::string> lowerPrecision(const std::shared_ptr<Plan>& plan,
    const std::shared_ptr<const ModelFile>& model, const PreparedModel& prepared,
    const EngineOptions& options, pthreadpool_t pool)
{
    const bool int8 = options.precision == Precision::Int8;
    const bool half = options.precision == Precision::Fp16;
    std::string lowered;
    if (half) {
        const auto summary = xnnplan::halvePlan(plan.get());
        lowered = std::to_string(summary.int8Steps) + " steps fp16, " +
            std::to_string(summary.floatSteps) + " fp32, " + std::to_string(summary.converts) +
            " conversions";
    }
    // A QDQ model in int8 runs with its own quantization parameters (explicit quantization, as
    // TensorRT reads them): no calibration. In fp32 its QuantizeLinear/DequantizeLinear run as
    // ONNX defines them, exactly.
    const bool qdq = xnnplan::hasQdq(*plan);
    if (qdq && !int8) // each pair in one pass over the data: the same values
        xnnplan::fuseQdqPairs(plan.get(), true);
    if (int8 && qdq) {
        const xnnplan::ParamTable params = xnnplan::fuseQdqPairs(plan.get());
        auto summary = xnnplan::quantizePlanExplicit(plan.get(), params);
        if (!summary)
            return summary.status().withContext("int8 for model '" + model->path + "'");
        const size_t dropped = xnnplan::dropIdentityRequantizations(plan.get());
        size_t folded = 0; // additions that became oneDNN steps' sums: steps no more
        const std::string onOneDnn = int8OnOneDnn(plan.get(), options, true, &folded);
        lowered = std::to_string(summary.value().int8Steps - dropped - folded) + " steps int8, " +
            std::to_string(summary.value().floatSteps) + " float, " +
            std::to_string(summary.value().converts) + " conversions" + onOneDnn +
            "; the model's own quantization (QDQ: " + std::to_string(params.size()) +
            " values' scales and zero points)" +
            (options.calibration ? "; engine.calibration is not used" : "");
    } else if (int8 && !options.calibration) {
        return Status::invalid("int8 on the xnnpack backend needs calibration samples (or a QDQ "
                               "model, which brings its own scales): the task's "
                               "engine.calibration.source (or compare's --calibration), images or "
                               "a video preprocessed as inference is");
    } else if (int8) {
        std::string how;
        auto ranges = calibrationRanges(plan, model, prepared, options, pool, true, &how);
        if (!ranges)
            return ranges.status().withContext("model '" + model->path + "'");
        auto summary = xnnplan::quantizePlan(plan.get(), ranges.value());
        if (!summary && how.find("from the cache") != std::string::npos) {
            // A table that parses but does not fit this plan: calibrate afresh (the plan is
            // unchanged when quantizePlan refuses a table).
            logger("engine")->warn("int8: {}; calibrating again", summary.status().message());
            ranges = calibrationRanges(plan, model, prepared, options, pool, false, &how);
            if (!ranges)
                return ranges.status().withContext("model '" + model->path + "'");
            summary = xnnplan::quantizePlan(plan.get(), ranges.value());
        }
        if (!summary)
            return summary.status().withContext("int8 for model '" + model->path + "'");
        size_t folded = 0;
        const std::string onOneDnn = int8OnOneDnn(plan.get(), options, false, &folded);
        lowered = std::to_string(summary.value().int8Steps - folded) + " steps int8, " +
            std::to_string(summary.value().floatSteps) + " float, " +
            std::to_string(summary.value().converts) + " conversions" + onOneDnn + "; " + how;
    }
    return lowered;
}

} // namespace

Expected<std::shared_ptr<const Engine>> buildXnnpackEngine(std::shared_ptr<const ModelFile> model,
    const PreparedModel& prepared, const EngineOptions& options)
{
    const int64_t start = monotonicNs();
    Status s = checkOptions(options);
    if (s.ok())
        s = initialiseXnnpack();
    if (!s.ok())
        return s;
    onnx::ModelProto proto;
    if (!proto.ParseFromString(*prepared.bytes))
        return Status::invalid("the prepared form of model '" + model->path + "' does not parse");
    xnnplan::CompileOptions compile;
    compile.fuseActivations = options.fusion;
    // int8 is calibrated and quantized on XNNPACK's fp32 plan; its dense convolutions then move
    // to oneDNN's int8 kernels (below).
    const bool int8 = options.precision == Precision::Int8;
    const bool half = options.precision == Precision::Fp16;
    compile.oneDnn = options.onednn && !int8 && !half;
    compile.zeroCopy = !int8 && !half;
    // Where every convolution runs on oneDNN (its AVX-512 kernels: chooseConvLibrary), a
    // concatenation that one 1x1 convolution reads becomes that convolution's parts summed.
    if (compile.oneDnn && compile.zeroCopy && compile.fuseActivations && xnnplan::oneDnnHasAvx512())
        xnnplan::splitConcatBeforeConv(&proto);
    auto plan = xnnplan::compileModel(proto, compile);
    if (!plan)
        return plan.status().withContext("xnnpack cannot run model '" + model->path + "'");
    // threads: 0 (all cores) runs a small model on the calling thread alone: splitting well
    // under a millisecond of work costs more in wake-ups, and a worker preempted by the agent's
    // own threads stalls the whole step (measured: the demo model's p90 went from 0.36 ms on one
    // thread to 11 ms on two, with capture and preprocessing sharing the two cores). The size is
    // one image's: a batch of several cameras' frames of a small model is still small work (four
    // streams of the demo model on two threads, under load: 52 ms an inference against 1.8 ms).
    constexpr int64_t kSmallModelMacs = 50'000'000;
    const int64_t imageMacs = plan.value()->macs / std::max<int64_t>(options.batch, 1);
    int threads = 1;
    pthreadpool_t pool = nullptr;
    if (options.threads != 0 || imageMacs >= kSmallModelMacs)
        pool = SharedPool::get(options.threads, &threads);
    auto lowering = lowerPrecision(plan.value(), model, prepared, options, pool);
    if (!lowering)
        return lowering.status();
    const std::string lowered = lowering.value();

    size_t onOneDnn = 0;
    for (const auto& step : plan.value()->steps)
        onOneDnn += std::string(step->library()) == "onednn";
    EngineDescription description;
    description.backend = "xnnpack";
    description.backendVersion = "XNNPACK " JETAGENT_XNNPACK_VERSION;
#ifdef JETAGENT_HAVE_ONEDNN
    if (onOneDnn > 0)
        description.backendVersion += " + oneDNN " JETAGENT_ONEDNN_VERSION;
#endif
    description.target = "cpu";
    description.options = options;
    description.options.threads = threads;
    description.modelPath = model->path;
    description.modelSha256 = model->sha256;
    description.modelBytes = model->fileBytes + model->externalBytes;
    description.preparation = prepared.passList;
    description.preparedKey = prepared.key;
    description.preparedFromCache = prepared.fromCache;
    description.prepareNs = prepared.ns;
    description.lowered = lowered;
    auto engine =
        std::make_shared<XnnpackEngine>(std::move(model), plan.value(), pool, description);
    // One session now, so that a model XNNPACK refuses fails at start-up; its packing is part of
    // the build time.
    auto probe = engine->newSession();
    if (!probe)
        return probe.status();
    engine->setSpare(std::move(probe.value()), monotonicNs() - start + prepared.ns);
    const Plan& p = *plan.value();
    // Which nodes our reference kernels run (the rest are XNNPACK's): at info, once per build.
    std::string onReference;
    size_t reference = 0;
    for (const auto& step : p.steps) {
        if (std::string(step->library()) != "reference")
            continue;
        constexpr size_t kNamed = 8;
        if (reference < kNamed)
            onReference += (reference ? "; " : ": ") + step->node;
        else if (reference == kNamed)
            onReference += "; ... (`jetagent inspect --prepared --backend xnnpack` lists them all)";
        ++reference;
    }
    logger("engine")->info("xnnpack: '{}' compiled into {} steps, {} on oneDNN, {} on reference "
                           "kernels{}; arena {:.1f} MiB, weights {:.1f} MiB, {} thread(s); built "
                           "in {:.1f} ms{}",
        engine->description().modelPath, p.steps.size(), onOneDnn, reference, onReference,
        static_cast<double>(p.arenaFloats) * 4 / (1 << 20),
        static_cast<double>(p.weightFloats) * 4 / (1 << 20), threads,
        nsToMs(engine->description().buildNs),
        lowered.empty() ? ""
                        : std::string("; ") + precisionName(options.precision) + ": " + lowered);
    return std::shared_ptr<const Engine>(std::move(engine));
}

} // namespace jetagent
