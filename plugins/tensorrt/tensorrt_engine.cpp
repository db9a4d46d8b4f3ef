// TensorRTEngine: TensorRT plans from the prepared ONNX model, on the GPU or a DLA core.
//
// Written against TensorRT 8.5 to 10.x and the CUDA runtime API. The parts that need neither
// (version table, option checks, cache keys) live in tensorrt_support and plan_cache, where they
// are tested on every machine; this file is only the thin layer that calls TensorRT and CUDA, and
// is validated on a board by tests/device/validate-tensorrt.sh.
#include "tensorrt_engine.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include <NvInfer.h>
#include <NvOnnxParser.h>
#include <cuda_runtime_api.h>

#include "jetagent/base/clock.h"
#include "jetagent/base/log.h"
#include "jetagent/base/plugin.h"
#include "jetagent/engines/engine_plugin.h"
#include "jetagent/engines/plan_cache.h"
#include "jetagent/engines/tensorrt_support.h"

#if NV_TENSORRT_MAJOR * 100 + NV_TENSORRT_MINOR < 805
#error "the tensorrt backend needs TensorRT 8.5 or later (JetPack 5.1): the named-tensor API"
#elif NV_TENSORRT_MAJOR > 10
#error                                                                                             \
    "TensorRT 11 removed weakly typed fp16/int8 builds and implicit int8 calibration; the tensorrt backend supports TensorRT 8.5 to 10.x"
#endif

// Weakly typed precision flags (10.12) and implicit int8 calibration (10.1) are deprecated in late
// 10.x releases, in favour of strongly typed networks with explicit quantization. They still work
// through 10.x and are the only way on 8.5/8.6 (JetPack 5), so the deprecation warnings are
// silenced exactly where they are used.
#define JETAGENT_TRT_DEPRECATED_BEGIN                                                              \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wdeprecated-declarations\"")
#define JETAGENT_TRT_DEPRECATED_END _Pragma("GCC diagnostic pop")

namespace jetagent {

namespace {

namespace nv = nvinfer1;

constexpr TensorRTFeatures kTrt = tensorRTFeatures(NV_TENSORRT_MAJOR, NV_TENSORRT_MINOR);
static_assert(kTrt.supported, "tensorRTFeatures disagrees with the version test above");
#if NV_TENSORRT_MAJOR >= 10
static_assert(!kTrt.explicitBatchFlag && !kTrt.platformQueries && kTrt.progressMonitor,
    "tensorRTFeatures disagrees with the NV_TENSORRT_MAJOR >= 10 paths below");
#else
static_assert(kTrt.explicitBatchFlag && kTrt.platformQueries && !kTrt.progressMonitor,
    "tensorRTFeatures disagrees with the NV_TENSORRT_MAJOR < 10 paths below");
#endif

const TensorRTVersion kHeaderVersion {NV_TENSORRT_MAJOR, NV_TENSORRT_MINOR, NV_TENSORRT_PATCH};

// TensorRT's messages go to the "tensorrt" logger. One logger for the process: TensorRT keeps the
// first one it is given for its lifetime. Errors are also kept, so that a failed call can be
// reported with TensorRT's own explanation.
class TrtLogger final : public nv::ILogger {
public:
    void log(Severity severity, nv::AsciiChar const* msg) noexcept override
    {
        try {
            auto log = logger("tensorrt");
            switch (severity) {
            case Severity::kINTERNAL_ERROR:
            case Severity::kERROR: {
                log->error("{}", msg);
                std::lock_guard<std::mutex> lock(mutex_);
                errors_ += (errors_.empty() ? "" : "; ") + std::string(msg);
                if (errors_.size() > 2000)
                    errors_.erase(0, errors_.size() - 2000);
                break;
            }
            case Severity::kWARNING: log->warn("{}", msg); break;
            case Severity::kINFO: log->debug("{}", msg); break;
            case Severity::kVERBOSE: log->trace("{}", msg); break;
            }
        } catch (...) { // NOLINT(bugprone-empty-catch): a log line must not escape into TensorRT
        }
    }

    // The errors logged since the last call, for an error message ("" when none).
    std::string takeErrors()
    {
        std::lock_guard<std::mutex> lock(mutex_);
        std::string e;
        e.swap(errors_);
        return e;
    }

private:
    std::mutex mutex_;
    std::string errors_;
};

TrtLogger& trtLogger()
{
    static TrtLogger instance;
    return instance;
}

std::string withTrtErrors(const std::string& message)
{
    const std::string errors = trtLogger().takeErrors();
    return errors.empty() ? message : message + " (TensorRT: " + errors + ")";
}

Status cudaCheck(cudaError_t error, const char* what)
{
    if (error == cudaSuccess)
        return Status();
    return Status::runtime(std::string(what) + " failed: " + cudaGetErrorString(error));
}

template <typename T>
struct Deleter {
    void operator()(T* p) const { delete p; } // TensorRT 8+ objects are deleted, not destroy()ed
};
template <typename T>
using TrtPtr = std::unique_ptr<T, Deleter<T>>;

int dlaCoresOf(nv::IRuntime& runtime)
{
    return runtime.getNbDLACores();
}

Expected<GpuPlatform> queryPlatform(nv::IRuntime& runtime)
{
    int count = 0;
    if (Status s = cudaCheck(cudaGetDeviceCount(&count), "finding a CUDA device"); !s)
        return s;
    if (count < 1)
        return Status::unsupported("no CUDA device is present");
    cudaDeviceProp prop {};
    if (Status s = cudaCheck(cudaGetDeviceProperties(&prop, 0), "reading the GPU's properties"); !s)
        return s;
    GpuPlatform p;
    p.name = prop.name;
    p.computeMajor = prop.major;
    p.computeMinor = prop.minor;
    p.integrated = prop.integrated != 0;
    p.canMapHostMemory = prop.canMapHostMemory != 0;
    p.dlaCores = dlaCoresOf(runtime);
    p.fastFp16 = computeHasFastFp16(p.computeMajor, p.computeMinor);
    p.fastInt8 = computeHasFastInt8(p.computeMajor, p.computeMinor);
    return p;
}

std::string dimsText(const nv::Dims& d)
{
    std::string s;
    for (int i = 0; i < d.nbDims; ++i)
        s += (i ? "x" : "") + (d.d[i] < 0 ? std::string("?") : std::to_string(d.d[i]));
    return s;
}

int64_t volume(const nv::Dims& d)
{
    int64_t v = 1;
    for (int i = 0; i < d.nbDims; ++i)
        v *= d.d[i];
    return v;
}

// Feeds CalibrationData to TensorRT's entropy calibrator: each batch is copied to one device
// buffer; the table is read from and written to the engine cache.
JETAGENT_TRT_DEPRECATED_BEGIN
class EntropyCalibrator final : public nv::IInt8EntropyCalibrator2 {
public:
    EntropyCalibrator(CalibrationData& data, std::string tablePath)
        : data_(data), tablePath_(std::move(tablePath))
    {
    }
    ~EntropyCalibrator() override
    {
        if (device_)
            cudaFree(device_);
    }
    EntropyCalibrator(const EntropyCalibrator&) = delete;
    EntropyCalibrator& operator=(const EntropyCalibrator&) = delete;

    Status prepare()
    {
        const size_t elements = static_cast<size_t>(data_.batchSize()) *
            static_cast<size_t>(data_.sampleShape().elementCount());
        host_.assign(elements, 0.0f);
        data_.rewind();
        return cudaCheck(cudaMalloc(&device_, elements * sizeof(float)),
            "allocating the calibration batch on the GPU");
    }

    // Explicit-batch networks take the batch from the calibration profile; TensorRT asks for 1.
    int32_t getBatchSize() const noexcept override { return 1; }

    bool getBatch(void* bindings[], char const* names[], int32_t nbBindings) noexcept override
    {
        (void)names;
        if (nbBindings != 1 || !error_.empty())
            return false;
        auto more = data_.nextBatch(host_.data());
        if (!more) {
            error_ = more.status().message();
            logger("tensorrt")->error("calibration: {}", error_);
            return false;
        }
        if (!more.value())
            return false;
        if (Status s = cudaCheck(cudaMemcpy(device_, host_.data(), host_.size() * sizeof(float),
                                     cudaMemcpyHostToDevice),
                "copying a calibration batch");
            !s) {
            error_ = s.message();
            return false;
        }
        ++batches_;
        bindings[0] = device_;
        return true;
    }

    void const* readCalibrationCache(std::size_t& length) noexcept override
    {
        length = 0;
        if (tablePath_.empty()) // no usable cache: calibrate at every build
            return nullptr;
        try {
            CacheEntryRead table = readCacheEntry(tablePath_);
            if (!table.damaged.empty())
                logger("tensorrt")
                    ->warn("int8: the calibration table {} is damaged ({}); calibrating again and "
                           "replacing it",
                        tablePath_, table.damaged);
            if (!table.bytes)
                return nullptr;
            table_ = std::move(*table.bytes);
            logger("tensorrt")->info("int8: using the calibration table {}", tablePath_);
            fromTable_ = true;
            length = table_.size();
            return table_.data();
        } catch (...) {
            return nullptr;
        }
    }

    void writeCalibrationCache(void const* ptr, std::size_t length) noexcept override
    {
        if (tablePath_.empty())
            return;
        try {
            Status s =
                writeCacheEntry(tablePath_, std::string(static_cast<const char*>(ptr), length));
            if (!s)
                logger("tensorrt")->warn("int8: calibration table not kept: {}", s.message());
        } catch (...) { // NOLINT(bugprone-empty-catch): nothing may escape into TensorRT
        }
    }

    const std::string& error() const { return error_; }
    int batches() const { return batches_; }
    bool fromTable() const { return fromTable_; }

private:
    CalibrationData& data_;
    std::string tablePath_;
    std::vector<float> host_;
    void* device_ = nullptr;
    std::string table_;
    std::string error_;
    int batches_ = 0;
    bool fromTable_ = false;
};
JETAGENT_TRT_DEPRECATED_END

#if NV_TENSORRT_MAJOR >= 10
// Logs the builder's top-level phases, so that a build of minutes shows it is alive.
class BuildProgress final : public nv::IProgressMonitor {
public:
    void phaseStart(
        char const* phaseName, char const* parentPhase, int32_t nbSteps) noexcept override
    {
        if (parentPhase != nullptr)
            return;
        try {
            logger("tensorrt")->info("build: {} ({} steps)", phaseName, nbSteps);
        } catch (...) { // NOLINT(bugprone-empty-catch): nothing may escape into TensorRT
        }
    }
    bool stepComplete(char const* /*phaseName*/, int32_t /*step*/) noexcept override
    {
        return true;
    }
    void phaseFinish(char const* /*phaseName*/) noexcept override { }
};
#endif

struct BuildInputs {
    const ModelFile& model;
    const PreparedModel& prepared;
    const EngineOptions& options;
    const GpuPlatform& platform;
    const PlanCache& cache;
    std::string calibrationTable; // int8: where the table is kept
};

// Sets the batch of every input with an open first dimension in `profile`; `*dynamic` says
// whether there was one (a network of fixed shapes takes no profile).
Status setBatchProfile(nv::INetworkDefinition& network, nv::IOptimizationProfile& profile, int min,
    int opt, int max, bool* dynamic)
{
    *dynamic = false;
    for (int i = 0; i < network.getNbInputs(); ++i) {
        const nv::ITensor* input = network.getInput(i);
        nv::Dims dims = input->getDimensions();
        for (int d = 1; d < dims.nbDims; ++d)
            if (dims.d[d] < 0)
                return Status::unsupported("input '" + std::string(input->getName()) + "' is " +
                    dimsText(dims) + ": only the batch dimension may be left open");
        if (dims.nbDims == 0 || dims.d[0] >= 0)
            continue;
        *dynamic = true;
        const std::pair<nv::OptProfileSelector, int> sizes[] = {
            {nv::OptProfileSelector::kMIN, min},
            {nv::OptProfileSelector::kOPT, opt},
            {nv::OptProfileSelector::kMAX, max},
        };
        for (const auto& [selector, batch] : sizes) {
            dims.d[0] = batch;
            if (!profile.setDimensions(input->getName(), selector, dims))
                return Status::invalid(withTrtErrors("TensorRT refused the batch profile " +
                    std::to_string(min) + "/" + std::to_string(opt) + "/" + std::to_string(max) +
                    " for input '" + input->getName() + "'"));
        }
    }
    return Status();
}

// A network parsed from the prepared model, its builder configuration, and the parser, which owns
// the network's weights until the plan is built.
struct ParsedNetwork {
    TrtPtr<nv::INetworkDefinition> network;
    TrtPtr<nv::IBuilderConfig> config;
    TrtPtr<nvonnxparser::IParser> parser;
};

Status parseNetwork(nv::IBuilder& builder, const BuildInputs& in, ParsedNetwork* parsed)
{
    uint32_t flags = 0;
#if NV_TENSORRT_MAJOR < 10
    flags = 1U << static_cast<uint32_t>(nv::NetworkDefinitionCreationFlag::kEXPLICIT_BATCH);
#endif
    parsed->network.reset(builder.createNetworkV2(flags));
    parsed->config.reset(builder.createBuilderConfig());
    if (!parsed->network || !parsed->config)
        return Status::runtime(withTrtErrors("TensorRT could not create a network definition"));
    parsed->parser.reset(nvonnxparser::createParser(*parsed->network, trtLogger()));
    const TrtPtr<nvonnxparser::IParser>& parser = parsed->parser;
    if (!parser ||
        !parser->parse(
            in.prepared.bytes->data(), in.prepared.bytes->size(), in.model.path.c_str())) {
        std::string why;
        for (int i = 0; parser && i < parser->getNbErrors(); ++i) {
            const nvonnxparser::IParserError* e = parser->getError(i);
            why += (why.empty() ? "" : "; ") + std::string(e->desc()) + " (node " +
                std::to_string(e->node()) + ")";
        }
        trtLogger().takeErrors();
        return Status::invalid("TensorRT's ONNX parser cannot load model '" + in.model.path +
            "': " + (why.empty() ? std::string("no reason given") : why));
    }
    return Status();
}

// The workspace limit, the precision flags (weakly typed: layers without a fast kernel fall back)
// and the DLA core with its GPU fallback.
void setBuildFlags(nv::IBuilderConfig& config, const BuildInputs& in)
{
    const EngineOptions& options = in.options;
    if (options.workspaceMb > 0)
        config.setMemoryPoolLimit(
            nv::MemoryPoolType::kWORKSPACE, static_cast<size_t>(options.workspaceMb) << 20U);

    const bool dla = options.device == Device::Dla0 || options.device == Device::Dla1;
    JETAGENT_TRT_DEPRECATED_BEGIN
    if (options.precision == Precision::Fp16)
        config.setFlag(nv::BuilderFlag::kFP16);
    if (options.precision == Precision::Int8) {
        config.setFlag(nv::BuilderFlag::kINT8);
        // Layers without an int8 kernel fall back to fp16 rather than fp32 where fp16 is fast.
        if (in.platform.fastFp16 || dla)
            config.setFlag(nv::BuilderFlag::kFP16);
    }
    JETAGENT_TRT_DEPRECATED_END
    if (dla) {
        config.setDefaultDeviceType(nv::DeviceType::kDLA);
        config.setDLACore(options.device == Device::Dla0 ? 0 : 1);
        if (options.gpuFallback)
            config.setFlag(nv::BuilderFlag::kGPU_FALLBACK);
    }
}

// Whether the parsed network has Q/DQ layers (the model's QuantizeLinear/DequantizeLinear).
bool hasQdqLayers(const nv::INetworkDefinition& network)
{
    for (int32_t i = 0; i < network.getNbLayers(); ++i) {
        const nv::LayerType type = network.getLayer(i)->getType();
        if (type == nv::LayerType::kQUANTIZE || type == nv::LayerType::kDEQUANTIZE)
            return true;
    }
    return false;
}

// int8: checks the calibration samples against the network's one input and sets up
// `*calibrator` with its own profile, fixed at the calibration batch.
Status setCalibration(nv::IBuilder& builder, const ParsedNetwork& parsed, const BuildInputs& in,
    std::unique_ptr<EntropyCalibrator>* calibrator)
{
    nv::INetworkDefinition& network = *parsed.network;
    CalibrationData& data = *in.options.calibration;
    if (network.getNbInputs() != 1)
        return Status::unsupported("int8 calibration feeds models of one input; '" + in.model.path +
            "' has " + std::to_string(network.getNbInputs()));
    const nv::Dims dims = network.getInput(0)->getDimensions();
    const TensorShape& sample = data.sampleShape();
    bool same = dims.nbDims == sample.rank + 1;
    for (int d = 1; same && d < dims.nbDims; ++d)
        same = dims.d[d] == sample[d - 1];
    if (!same)
        return Status::invalid("the calibration samples are " + sample.toString() +
            ", but the model's input is " + dimsText(dims));
    if (dims.d[0] >= 0 && dims.d[0] != data.batchSize())
        return Status::invalid("the model's batch is fixed at " + std::to_string(dims.d[0]) +
            ", so calibration.batch must be " + std::to_string(dims.d[0]) + ", not " +
            std::to_string(data.batchSize()));
    // Calibration runs its own profile, fixed at the calibration batch.
    nv::IOptimizationProfile* calibrationProfile = builder.createOptimizationProfile();
    bool calibrationDynamic = false;
    if (Status s = setBatchProfile(network, *calibrationProfile, data.batchSize(), data.batchSize(),
            data.batchSize(), &calibrationDynamic);
        !s)
        return s;
    *calibrator = std::make_unique<EntropyCalibrator>(data, in.calibrationTable);
    if (Status s = (*calibrator)->prepare(); !s)
        return s;
    JETAGENT_TRT_DEPRECATED_BEGIN
    if (calibrationDynamic && !parsed.config->setCalibrationProfile(calibrationProfile))
        return Status::invalid(withTrtErrors("TensorRT refused the calibration profile"));
    parsed.config->setInt8Calibrator(calibrator->get());
    JETAGENT_TRT_DEPRECATED_END
    logger("tensorrt")->info("int8: calibrating on {}", data.description());
    return Status();
}

// The timing cache spares the kernel timing of layers seen before (other models, other
// precisions), which is most of a build's minutes. Loads it from the plan cache into `config`
// and returns the path to keep it at; an empty path when there is none to keep.
std::string useTimingCache(
    nv::IBuilderConfig& config, const BuildInputs& in, TrtPtr<nv::ITimingCache>* timingCache)
{
    if (!in.options.timingCache || !in.cache.usable())
        return std::string();
    auto log = logger("tensorrt");
    std::string timingPath =
        in.cache.timingCachePath(kHeaderVersion.toString(), in.platform.describe());
    std::string blob;
    CacheEntryRead existing = readCacheEntry(timingPath);
    if (existing.bytes)
        blob = std::move(*existing.bytes);
    else if (!existing.damaged.empty())
        log->warn("the timing cache {} is damaged ({}); timing afresh and replacing it", timingPath,
            existing.damaged);
    timingCache->reset(config.createTimingCache(blob.data(), blob.size()));
    if (!*timingCache || !config.setTimingCache(**timingCache, false)) {
        log->warn("the timing cache {} cannot be used; building without it", timingPath);
        trtLogger().takeErrors();
        timingPath.clear();
    }
    return timingPath;
}

// Writes the timing cache back after a build; a failure only costs the next build its timings.
void keepTimingCache(const TrtPtr<nv::ITimingCache>& timingCache, const std::string& timingPath)
{
    if (!timingCache || timingPath.empty())
        return;
    TrtPtr<nv::IHostMemory> blob(timingCache->serialize());
    if (blob) {
        Status s = writeCacheEntry(
            timingPath, std::string(static_cast<const char*>(blob->data()), blob->size()));
        if (!s)
            logger("tensorrt")->warn("timing cache not kept: {}", s.message());
    }
}

Expected<std::string> buildPlan(nv::IBuilder& builder, const BuildInputs& in)
{
    const EngineOptions& options = in.options;
    auto log = logger("tensorrt");
    ParsedNetwork parsed;
    if (Status s = parseNetwork(builder, in, &parsed); !s)
        return s;
    nv::INetworkDefinition& network = *parsed.network;
    nv::IBuilderConfig& config = *parsed.config;
    setBuildFlags(config, in);

    // Profiles are owned by the builder.
    nv::IOptimizationProfile* profile = builder.createOptimizationProfile();
    bool dynamic = false;
    if (Status s = setBatchProfile(
            network, *profile, options.profileMin(), options.batch, options.profileMax(), &dynamic);
        !s)
        return s;
    if (dynamic && config.addOptimizationProfile(profile) < 0)
        return Status::invalid(withTrtErrors("TensorRT refused the optimization profile"));

    // A QDQ model is explicit quantization: the parser turns its QuantizeLinear and
    // DequantizeLinear into Q/DQ layers with the model's scales, and TensorRT runs int8 where they
    // say. Its builds need the int8 flag whatever the precision, and no calibrator.
    const bool explicitInt8 = hasQdqLayers(network);
    if (explicitInt8) {
        JETAGENT_TRT_DEPRECATED_BEGIN
        config.setFlag(nv::BuilderFlag::kINT8);
        JETAGENT_TRT_DEPRECATED_END
        log->info("'{}' is a QDQ model: int8 where its Q/DQ layers say, with its own scales (no "
                  "calibration)",
            in.model.path);
    }
    std::unique_ptr<EntropyCalibrator> calibrator;
    if (options.precision == Precision::Int8 && !explicitInt8 && !options.calibration)
        return Status::invalid("precision: int8: '" + in.model.path +
            "' has no QuantizeLinear/DequantizeLinear left for TensorRT after preparation (only "
            "its weights were quantized), so int8 needs calibration data: add calibration: "
            "{source: DIR or VIDEO} to the engine section");
    if (options.precision == Precision::Int8 && !explicitInt8)
        if (Status s = setCalibration(builder, parsed, in, &calibrator); !s)
            return s;

    TrtPtr<nv::ITimingCache> timingCache;
    const std::string timingPath = useTimingCache(config, in, &timingCache);

#if NV_TENSORRT_MAJOR >= 10
    BuildProgress progress;
    config.setProgressMonitor(&progress);
#endif
    log->info("building a {} {} plan for '{}' on {}: this takes minutes on a Nano; the plan is "
              "cached, so later starts load it in seconds",
        precisionName(options.precision), deviceName(options.device), in.model.path,
        in.platform.describe());
    const int64_t start = monotonicNs();
    TrtPtr<nv::IHostMemory> plan(builder.buildSerializedNetwork(network, config));
    if (calibrator && !calibrator->error().empty())
        return Status::invalid("int8 calibration failed: " + calibrator->error());
    if (!plan || plan->size() == 0)
        return Status::runtime(
            withTrtErrors("TensorRT could not build a plan for model '" + in.model.path + "'"));
    log->info("plan built in {:.1f} s ({} bytes){}", nsToMs(monotonicNs() - start) / 1000.0,
        plan->size(),
        calibrator ? (calibrator->fromTable() ? ", int8 scales from the cached calibration table"
                                              : ", calibrated on " +
                                 std::to_string(calibrator->batches()) + " batches")
                   : std::string());
    keepTimingCache(timingCache, timingPath);
    return std::string(static_cast<const char*>(plan->data()), plan->size());
}

struct IoTensor {
    std::string name;
    bool input = false;
    nv::Dims maxDims {}; // the shape at the profile's largest batch
    int64_t minBatch = 1; // inputs: the profile's smallest batch (a fixed model's batch)
    size_t maxBytes = 0;
};

// One execution context on its own stream, with buffers allocated once for the largest batch.
class TensorRTSession final : public Session {
public:
    TensorRTSession(std::shared_ptr<nv::ICudaEngine> engine, std::vector<IoTensor> tensors,
        IoMemory memory, bool cudaGraph, std::string modelPath)
        : engine_(std::move(engine)),
          tensors_(std::move(tensors)),
          memory_(memory),
          cudaGraph_(cudaGraph),
          modelPath_(std::move(modelPath))
    {
    }

    ~TensorRTSession() override
    {
        if (graphExec_)
            cudaGraphExecDestroy(graphExec_);
        if (graph_)
            cudaGraphDestroy(graph_);
        for (cudaEvent_t e : events_)
            if (e)
                cudaEventDestroy(e);
        for (Buffer& b : buffers_) {
            if (b.host)
                cudaFreeHost(b.host);
            if (b.device && memory_ == IoMemory::Device)
                cudaFree(b.device);
        }
        context_.reset(); // before the stream it ran on
        if (stream_)
            cudaStreamDestroy(stream_);
    }

    Status init()
    {
        context_.reset(engine_->createExecutionContext());
        if (!context_)
            return Status::runtime(withTrtErrors("TensorRT could not create an execution context"));
        if (Status s = cudaCheck(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                "creating a CUDA stream");
            !s)
            return s;
        for (cudaEvent_t& e : events_)
            if (Status s = cudaCheck(cudaEventCreate(&e), "creating a CUDA event"); !s)
                return s;
        buffers_.resize(tensors_.size());
        for (size_t i = 0; i < tensors_.size(); ++i) {
            Buffer& b = buffers_[i];
            const size_t bytes = tensors_[i].maxBytes;
            if (memory_ == IoMemory::Mapped) {
                // Pinned host memory the GPU reads and writes in place: on Jetson the two share
                // DRAM, so no copy is made in either direction.
                if (Status s = cudaCheck(cudaHostAlloc(&b.host, bytes, cudaHostAllocMapped),
                        "allocating mapped host memory");
                    !s)
                    return s;
                if (Status s = cudaCheck(cudaHostGetDevicePointer(&b.device, b.host, 0),
                        "mapping host memory into the GPU");
                    !s)
                    return s;
            } else {
                if (Status s =
                        cudaCheck(cudaMallocHost(&b.host, bytes), "allocating pinned memory");
                    !s)
                    return s;
                if (Status s = cudaCheck(cudaMalloc(&b.device, bytes), "allocating GPU memory"); !s)
                    return s;
            }
            if (!context_->setTensorAddress(tensors_[i].name.c_str(), b.device))
                return Status::runtime(withTrtErrors(
                    "TensorRT refused the buffer of tensor '" + tensors_[i].name + "'"));
        }
        return Status();
    }

    Status run(const TensorView* inputs, size_t inputCount, RunTiming* timing) override
    {
        if (inputCount != inputTensors())
            return Status::invalid("model '" + modelPath_ + "' takes " +
                std::to_string(inputTensors()) + " inputs, " + std::to_string(inputCount) +
                " given");
        size_t given = 0;
        for (size_t i = 0; i < tensors_.size(); ++i)
            if (tensors_[i].input)
                if (Status s = setInput(i, inputs[given++]); !s)
                    return s;

        // Host side of the transfer: into the pinned staging buffer, or (mapped) into the very
        // memory the GPU reads, which is then the whole transfer.
        const int64_t hostStart = monotonicNs();
        given = 0;
        for (size_t i = 0; i < tensors_.size(); ++i)
            if (tensors_[i].input) {
                const TensorView& v = inputs[given++];
                std::memcpy(buffers_[i].host, v.data,
                    static_cast<size_t>(v.shape.elementCount()) * sizeof(float));
            }
        const int64_t hostCopyNs = monotonicNs() - hostStart;

        cudaEventRecord(events_[0], stream_);
        if (memory_ == IoMemory::Device)
            for (size_t i = 0; i < tensors_.size(); ++i)
                if (tensors_[i].input)
                    cudaMemcpyAsync(buffers_[i].device, buffers_[i].host, bytesNow_[i],
                        cudaMemcpyHostToDevice, stream_);
        cudaEventRecord(events_[1], stream_);
        if (Status s = enqueue(); !s)
            return s;
        cudaEventRecord(events_[2], stream_);
        if (memory_ == IoMemory::Device)
            for (size_t i = 0; i < tensors_.size(); ++i)
                if (!tensors_[i].input)
                    cudaMemcpyAsync(buffers_[i].host, buffers_[i].device, bytesNow_[i],
                        cudaMemcpyDeviceToHost, stream_);
        cudaEventRecord(events_[3], stream_);
        if (Status s = cudaCheck(cudaStreamSynchronize(stream_), "running the engine"); !s)
            return s.withContext("model '" + modelPath_ + "'");

        if (timing) {
            float h2d = 0, compute = 0, d2h = 0;
            cudaEventElapsedTime(&h2d, events_[0], events_[1]);
            cudaEventElapsedTime(&compute, events_[1], events_[2]);
            cudaEventElapsedTime(&d2h, events_[2], events_[3]);
            timing->hostToDeviceNs = hostCopyNs + static_cast<int64_t>(h2d * 1e6);
            timing->computeNs = static_cast<int64_t>(compute * 1e6);
            timing->deviceToHostNs = static_cast<int64_t>(d2h * 1e6);
        }
        return Status();
    }

private:
    struct Buffer {
        void* host = nullptr;
        void* device = nullptr; // the mapped pointer in Mapped mode
    };

    size_t inputTensors() const
    {
        return static_cast<size_t>(std::count_if(
            tensors_.begin(), tensors_.end(), [](const IoTensor& t) { return t.input; }));
    }

    // Checks one input view against the engine and, when its shape changed, tells the context,
    // which then knows every output's shape.
    Status setInput(size_t t, const TensorView& view)
    {
        const IoTensor& tensor = tensors_[t];
        const nv::Dims& max = tensor.maxDims;
        bool fits = view.data != nullptr && view.shape.rank == max.nbDims;
        for (int d = 0; fits && d < max.nbDims; ++d)
            fits = view.shape[d] >= 1 && view.shape[d] <= max.d[d];
        if (!fits)
            return Status::invalid("model '" + modelPath_ + "': input '" + tensor.name +
                "' given " + view.shape.toString() + ", the engine takes up to " + dimsText(max));
        if (given_.size() == tensors_.size() && given_[t] == view.shape)
            return Status();
        // A batch below the profile's smallest (the last frames of a stream, a worker that found
        // fewer frames than a batch) runs padded up to it; output() shows the given rows only.
        TensorShape run = view.shape;
        run.dims[0] = std::max(run[0], tensor.minBatch);
        nv::Dims dims {};
        dims.nbDims = run.rank;
        for (int d = 0; d < dims.nbDims; ++d)
            dims.d[d] = static_cast<std::remove_reference_t<decltype(dims.d[0])>>(run[d]);
        if (!context_->setInputShape(tensor.name.c_str(), dims))
            return Status::invalid(withTrtErrors("model '" + modelPath_ + "': input '" +
                tensor.name + "' cannot take " + view.shape.toString() +
                " (outside the engine's batch profile)"));
        // Shapes changed: every tensor's current shape and size, and a new graph if one was kept.
        shapes_.assign(tensors_.size(), TensorShape());
        bytesNow_.assign(tensors_.size(), 0);
        for (size_t i = 0; i < tensors_.size(); ++i) {
            const nv::Dims s = context_->getTensorShape(tensors_[i].name.c_str());
            TensorShape& shape = shapes_[i];
            shape.rank = std::min(static_cast<int>(s.nbDims), TensorShape::kMaxRank);
            for (int d = 0; d < shape.rank; ++d)
                shape.dims[static_cast<size_t>(d)] = s.d[d];
            bytesNow_[i] = static_cast<size_t>(std::max<int64_t>(volume(s), 0)) * sizeof(float);
        }
        given_.resize(tensors_.size());
        given_[t] = view.shape;
        givenBatch_ = view.shape[0];
        runBatch_ = run[0];
        // What output() shows until the shapes change again: a padded run's given rows only
        // (they come first).
        std::vector<ConstTensorView>& outputs = outputViews();
        outputs.clear();
        for (size_t i = 0; i < tensors_.size(); ++i) {
            if (tensors_[i].input)
                continue;
            ConstTensorView out;
            out.data = static_cast<const float*>(buffers_[i].host);
            out.shape = shapes_[i];
            if (runBatch_ > givenBatch_ && out.shape.rank > 0 && out.shape[0] == runBatch_)
                out.shape.dims[0] = givenBatch_;
            outputs.push_back(out);
        }
        dropGraph();
        return Status();
    }

    void dropGraph()
    {
        if (graphExec_)
            cudaGraphExecDestroy(graphExec_);
        if (graph_)
            cudaGraphDestroy(graph_);
        graphExec_ = nullptr;
        graph_ = nullptr;
        enqueues_ = 0;
    }

    Status enqueue()
    {
        if (graphExec_)
            return cudaCheck(cudaGraphLaunch(graphExec_, stream_), "launching the CUDA graph");
        if (!context_->enqueueV3(stream_))
            return Status::runtime(
                withTrtErrors("TensorRT could not run model '" + modelPath_ + "'"));
        // The first enqueue at a shape does TensorRT's lazy set-up; the second is captured.
        if (cudaGraph_ && ++enqueues_ == 2)
            captureGraph();
        return Status();
    }

    // Captures one enqueue into a graph that later runs replay with one launch. A capture that
    // fails (some layers cannot be captured) is logged once and the session goes on without.
    void captureGraph()
    {
        cudaGraph_t graph = nullptr;
        if (cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal) != cudaSuccess)
            return giveUpGraph("cannot begin a capture");
        const bool queued = context_->enqueueV3(stream_);
        const cudaError_t ended = cudaStreamEndCapture(stream_, &graph);
        if (!queued || ended != cudaSuccess || !graph) {
            if (graph)
                cudaGraphDestroy(graph);
            trtLogger().takeErrors();
            return giveUpGraph("the enqueue cannot be captured");
        }
        if (cudaGraphInstantiateWithFlags(&graphExec_, graph, 0) != cudaSuccess) {
            cudaGraphDestroy(graph);
            graphExec_ = nullptr;
            return giveUpGraph("the captured graph cannot be instantiated");
        }
        graph_ = graph;
        logger("tensorrt")->debug("model '{}': enqueue captured into a CUDA graph", modelPath_);
    }

    void giveUpGraph(const char* why)
    {
        cudaGetLastError(); // clear the capture's error so the next call does not see it
        cudaGraph_ = false;
        logger("tensorrt")
            ->warn("model '{}': no CUDA graph ({}); running without one", modelPath_, why);
    }

    std::shared_ptr<nv::ICudaEngine> engine_;
    std::vector<IoTensor> tensors_;
    IoMemory memory_;
    bool cudaGraph_;
    std::string modelPath_;
    TrtPtr<nv::IExecutionContext> context_;
    cudaStream_t stream_ = nullptr;
    std::array<cudaEvent_t, 4> events_ {};
    std::vector<Buffer> buffers_;
    std::vector<TensorShape> shapes_; // current shape per tensor, as it runs
    std::vector<TensorShape> given_; // inputs: the shape last given to run()
    int64_t givenBatch_ = 0; // the batch given, and the batch it runs at (padded up to the
    int64_t runBatch_ = 0; // profile's smallest)
    std::vector<size_t> bytesNow_; // current size per tensor
    cudaGraph_t graph_ = nullptr;
    cudaGraphExec_t graphExec_ = nullptr;
    int enqueues_ = 0;
};

class TensorRTEngine final : public Engine {
public:
    TensorRTEngine(std::shared_ptr<const ModelFile> model, std::shared_ptr<nv::ICudaEngine> engine,
        std::vector<IoTensor> tensors, EngineDescription description, IoMemory memory)
        : model_(std::move(model)),
          engine_(std::move(engine)),
          tensors_(std::move(tensors)),
          description_(std::move(description)),
          memory_(memory)
    {
    }

    const std::vector<TensorInfo>& inputs() const override { return model_->inputs; }
    const std::vector<TensorInfo>& outputs() const override { return model_->outputs; }
    const EngineDescription& description() const override { return description_; }

    Expected<std::unique_ptr<Session>> createSession() const override
    {
        auto session = std::make_unique<TensorRTSession>(
            engine_, tensors_, memory_, description_.options.cudaGraph, model_->path);
        // Contexts are made one at a time: TensorRT 8.x does not promise that creating them
        // from several threads at once is safe.
        std::lock_guard<std::mutex> lock(sessionMutex_);
        if (Status s = session->init(); !s)
            return s.withContext("model '" + model_->path + "'");
        return std::unique_ptr<Session>(std::move(session));
    }

private:
    std::shared_ptr<const ModelFile> model_;
    std::shared_ptr<nv::ICudaEngine> engine_; // keeps its runtime alive (deserialize)
    std::vector<IoTensor> tensors_;
    EngineDescription description_;
    IoMemory memory_;
    mutable std::mutex sessionMutex_;
};

// The engine's inputs and outputs, checked to be float32 (what the engine interface carries).
// In the model's order (its inputs, then its outputs), which is the order of the engine
// interface; the plan's own order of I/O tensors is not promised to be the same.
Expected<std::vector<IoTensor>> describeTensors(nv::ICudaEngine& engine, const ModelFile& model)
{
    std::vector<IoTensor> tensors;
    auto add = [&](const TensorInfo& info, bool input) -> Status {
        for (int i = 0; i < engine.getNbIOTensors(); ++i) {
            const char* name = engine.getIOTensorName(i);
            if (info.name != name)
                continue;
            if ((engine.getTensorIOMode(name) == nv::TensorIOMode::kINPUT) != input)
                break;
            if (engine.getTensorDataType(name) != nv::DataType::kFLOAT)
                return Status::unsupported("model '" + model.path + "': tensor '" + info.name +
                    "' is not float32; the tensorrt backend carries float32 inputs and outputs");
            IoTensor t;
            t.name = info.name;
            t.input = input;
            tensors.push_back(std::move(t));
            return Status();
        }
        return Status::runtime("model '" + model.path + "': the plan has no " +
            (input ? "input" : "output") + " named '" + info.name + "'");
    };
    for (const TensorInfo& info : model.inputs)
        if (Status s = add(info, true); !s)
            return s;
    for (const TensorInfo& info : model.outputs)
        if (Status s = add(info, false); !s)
            return s;
    return tensors;
}

// Output shapes at the largest batch: a context set to the profile's maximum tells them.
Status sizeTensors(nv::ICudaEngine& engine, std::vector<IoTensor>& tensors, const std::string& path)
{
    TrtPtr<nv::IExecutionContext> context(engine.createExecutionContext());
    if (!context)
        return Status::runtime(withTrtErrors("TensorRT could not create an execution context"));
    for (IoTensor& t : tensors)
        if (t.input) {
            t.maxDims = engine.getProfileShape(t.name.c_str(), 0, nv::OptProfileSelector::kMAX);
            const nv::Dims min =
                engine.getProfileShape(t.name.c_str(), 0, nv::OptProfileSelector::kMIN);
            if (t.maxDims.nbDims < 0) // a fixed input has no profile entry
                t.maxDims = engine.getTensorShape(t.name.c_str());
            t.minBatch = min.nbDims > 0 ? min.d[0] : t.maxDims.nbDims > 0 ? t.maxDims.d[0] : 1;
            if (!context->setInputShape(t.name.c_str(), t.maxDims))
                return Status::runtime(withTrtErrors("model '" + path + "': input '" + t.name +
                    "' refuses its own maximum shape " + dimsText(t.maxDims)));
        }
    for (IoTensor& t : tensors) {
        if (!t.input)
            t.maxDims = context->getTensorShape(t.name.c_str());
        const int64_t v = volume(t.maxDims);
        if (v <= 0)
            return Status::unsupported("model '" + path + "': tensor '" + t.name + "' has shape " +
                dimsText(t.maxDims) +
                " at the largest batch; data-dependent shapes are not "
                "supported");
        t.maxBytes = static_cast<size_t>(v) * sizeof(float);
    }
    return Status();
}

// The engine keeps its runtime alive: TensorRT needs the runtime to outlive every engine it made,
// and sessions may outlive the Engine object that created them.
std::shared_ptr<nv::ICudaEngine> deserialize(
    const std::shared_ptr<nv::IRuntime>& runtime, const std::string& plan)
{
    nv::ICudaEngine* engine = runtime->deserializeCudaEngine(plan.data(), plan.size());
    if (!engine)
        return nullptr;
    return std::shared_ptr<nv::ICudaEngine>(engine, [runtime](nv::ICudaEngine* e) { delete e; });
}

// The engine of the plan cached under `planKeyHex`; null when there is none, or it is damaged, or
// this TensorRT cannot load it (the last two said in a warning: the caller rebuilds).
std::shared_ptr<nv::ICudaEngine> cachedEngine(const std::shared_ptr<nv::IRuntime>& runtime,
    const PlanCache& cache, const std::string& planKeyHex)
{
    if (!cache.usable())
        return nullptr;
    auto log = logger("tensorrt");
    PlanLookup hit = cache.loadPlan(planKeyHex);
    if (!hit.plan) {
        if (!hit.damaged.empty())
            log->warn("the cached plan {} is damaged ({}); rebuilding", cache.planPath(planKeyHex),
                hit.damaged);
        return nullptr;
    }
    std::shared_ptr<nv::ICudaEngine> engine = deserialize(runtime, hit.plan->bytes);
    if (!engine)
        log->warn("{}",
            withTrtErrors("the cached plan " + planKeyHex +
                " cannot be loaded by this TensorRT; rebuilding"));
    return engine;
}

// Builds a plan, loads it and keeps it in the cache under `planKeyHex` (a cache that cannot keep
// it costs the next start a build, not this one).
Expected<std::shared_ptr<nv::ICudaEngine>> builtEngine(const std::shared_ptr<nv::IRuntime>& runtime,
    BuildInputs in, const PlanKeyInputs& key, const std::string& planKeyHex)
{
    TrtPtr<nv::IBuilder> builder(nv::createInferBuilder(trtLogger()));
    if (!builder)
        return Status::runtime(withTrtErrors("TensorRT's builder cannot start"));
    // The table depends on the model, the data and TensorRT, not on the device, so a GPU
    // and a DLA build share it.
    if (in.options.precision == Precision::Int8)
        in.calibrationTable = in.cache.calibrationTablePath(calibrationTableKey(key));
    const int64_t buildStart = monotonicNs();
    auto built = buildPlan(*builder, in);
    if (!built)
        return built.status();
    const std::string plan = std::move(built).value();
    std::shared_ptr<nv::ICudaEngine> engine = deserialize(runtime, plan);
    if (!engine)
        return Status::runtime(withTrtErrors(
            "TensorRT cannot load the plan it just built for '" + in.model.path + "'"));
    if (in.cache.usable()) {
        PlanMetadata meta;
        meta.inputs = key;
        meta.modelPath = in.model.path;
        meta.buildMs = (monotonicNs() - buildStart) / 1'000'000;
        if (Status s = in.cache.storePlan(planKeyHex, plan, std::move(meta)); !s)
            logger("tensorrt")->warn("the plan is not kept in the cache: {}", s.message());
    }
    return engine;
}

struct RuntimeState {
    bool ok = false;
    std::string details;
};

const RuntimeState& runtimeState()
{
    static const RuntimeState state = [] {
        RuntimeState s;
        const TensorRTVersion lib = decodeTensorRTLibraryVersion(getInferLibVersion());
        int cudaRuntime = 0;
        cudaRuntimeGetVersion(&cudaRuntime);
        s.details = "TensorRT " + lib.toString();
        if (lib.major != kHeaderVersion.major || lib.minor != kHeaderVersion.minor)
            s.details += " (built against " + kHeaderVersion.toString() + ")";
        s.details += ", CUDA runtime " + std::to_string(cudaRuntime / 1000) + "." +
            std::to_string(cudaRuntime % 1000 / 10);
        if (lib.major != kHeaderVersion.major) {
            s.details += ": the library's major version differs from the headers'; rebuild";
            return s;
        }
        TrtPtr<nv::IRuntime> runtime(nv::createInferRuntime(trtLogger()));
        if (!runtime) {
            s.details += ": " + withTrtErrors("TensorRT's runtime cannot start");
            return s;
        }
        auto platform = queryPlatform(*runtime);
        if (!platform) {
            s.details += ": " + platform.status().message();
            return s;
        }
        s.details += ", GPU " + platform.value().describe();
        s.ok = true;
        return s;
    }();
    return state;
}

} // namespace

bool tensorRTAvailable()
{
    return runtimeState().ok;
}

std::string tensorRTDetails()
{
    return runtimeState().details;
}

Expected<std::shared_ptr<const Engine>> buildTensorRTEngine(std::shared_ptr<const ModelFile> model,
    const PreparedModel& prepared, const EngineOptions& options)
{
    const int64_t start = monotonicNs();
    auto log = logger("tensorrt");
    trtLogger().takeErrors();
    std::shared_ptr<nv::IRuntime> runtime(
        nv::createInferRuntime(trtLogger()), Deleter<nv::IRuntime>());
    if (!runtime)
        return Status::runtime(withTrtErrors("TensorRT's runtime cannot start"));
    auto platformOr = queryPlatform(*runtime);
    if (!platformOr)
        return platformOr.status();
    const GpuPlatform& platform = platformOr.value();
    if (Status s = checkTensorRTOptions(options, platform, isQdqModel(*model)); !s)
        return s;
    const IoMemory memory = resolveIoMemory(options.ioMemory, platform);
    const TensorRTVersion version = decodeTensorRTLibraryVersion(getInferLibVersion());

    const PlanKeyInputs key =
        tensorRTPlanKeyInputs(model->sha256, prepared.key, options, version, platform);
    const std::string planKeyHex = planKey(key);

    PlanCache cache = PlanCache::open(options.cacheDir);
    if (!cache.usable())
        log->warn("{}", cache.warning());

    std::shared_ptr<nv::ICudaEngine> engine = cachedEngine(runtime, cache, planKeyHex);
    const bool fromCache = engine != nullptr;
    if (!engine) {
        auto built = builtEngine(
            runtime, {*model, prepared, options, platform, cache, std::string()}, key, planKeyHex);
        if (!built)
            return built.status();
        engine = std::move(built).value();
    }

    auto tensors = describeTensors(*engine, *model);
    if (!tensors)
        return tensors.status();
    if (Status s = sizeTensors(*engine, tensors.value(), model->path); !s)
        return s;

    EngineDescription d;
    d.backend = "tensorrt";
    d.backendVersion = "TensorRT " + version.toString();
    d.target = std::string(deviceName(options.device)) +
        (options.device != Device::Gpu && options.gpuFallback ? "+gpu-fallback" : "");
    d.options = options;
    d.modelPath = model->path;
    d.modelSha256 = model->sha256;
    d.modelBytes = model->fileBytes + model->externalBytes;
    d.preparation = prepared.passList;
    d.preparedKey = prepared.key;
    d.preparedFromCache = prepared.fromCache;
    d.prepareNs = prepared.ns;
    d.buildNs = monotonicNs() - start + prepared.ns;
    d.accelerator = platform.describe();
    d.planKey = planKeyHex;
    d.planFromCache = fromCache;
    d.ioMemory = ioMemoryName(memory);
    log->info("'{}' ready on {} ({} {}, {} I/O memory, {}) in {:.1f} ms", model->path,
        d.accelerator, d.target, precisionName(options.precision), d.ioMemory,
        fromCache ? "plan from the cache" : "plan built", nsToMs(d.buildNs));
    return std::shared_ptr<const Engine>(new TensorRTEngine(
        std::move(model), std::move(engine), std::move(tensors).value(), std::move(d), memory));
}

} // namespace jetagent

JETAGENT_PLUGIN_ENTRY
{
    static const jetagent::EngineBackendApi api = {"tensorrt", jetagent::tensorRTAvailable,
        jetagent::tensorRTDetails, nullptr, jetagent::buildTensorRTEngine};
    static const jetagent::PluginDescriptor descriptor = {
        jetagent::kPluginAbi, JETAGENT_PLUGIN_VERSION, "tensorrt", &api};
    return &descriptor;
}
