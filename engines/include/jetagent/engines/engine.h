// The engine interface: an immutable Engine built once per model, and one cheap Session per worker.
//
// In the style of ncnn's Net/Extractor split: an Engine holds everything that is expensive and
// shared (the parsed model, compiled plans); createSession() gives each worker its own mutable
// state, so workers never lock each other. Backends (OpenCV DNN today, TensorRT on Jetson)
// implement both classes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jetagent/base/enum_names.h"
#include "jetagent/base/status.h"
#include "jetagent/engines/model_file.h"
#include "jetagent/engines/tensor.h"

namespace jetagent {

enum class Precision { Fp32, Fp16, Int8 };
enum class Device { Cpu, Gpu, Dla0, Dla1 };
inline constexpr EnumName<Precision> kPrecisionNames[] = {
    {Precision::Fp32, "fp32"}, {Precision::Fp16, "fp16"}, {Precision::Int8, "int8"}};
inline constexpr EnumName<Device> kDeviceNames[] = {
    {Device::Cpu, "cpu"}, {Device::Gpu, "gpu"}, {Device::Dla0, "dla0"}, {Device::Dla1, "dla1"}};

const char* precisionName(Precision p);
const char* deviceName(Device d);
bool parsePrecision(const std::string& text, Precision* out);
bool parseDevice(const std::string& text, Device* out);

// Samples for int8 calibration, preprocessed exactly as inference preprocesses frames. The agent
// makes it (it knows the task's preprocessing); backends that calibrate (TensorRT) read it while
// they build. Not thread-safe: one build reads it at a time.
class CalibrationData {
public:
    virtual ~CalibrationData() = default;

    // Identifies the samples and their preprocessing (a hash, hex): a changed calibration set,
    // sample count or preprocessing gives a new key, so a cached calibration table is only ever
    // reused for the data it was computed from.
    virtual std::string key() const = 0;
    virtual std::string description() const = 0; // for logs: "200 images from /data/calib"
    virtual int batchSize() const = 0; // samples per batch (the first dimension)
    virtual const TensorShape& sampleShape() const = 0; // one sample: 3 x H x W
    // Writes the next batch, batchSize() x sampleShape() floats, to `out`. Returns false once
    // every batch was given (a last partial batch is not given); an unreadable sample is an error
    // naming it.
    virtual Expected<bool> nextBatch(float* out) = 0;
    virtual void rewind() = 0; // start again from the first batch
};

// Where a session keeps its input and output buffers on a GPU (TensorRT).
enum class IoMemory {
    Auto, // mapped where the GPU shares the host's memory (Jetson), device memory otherwise
    Mapped, // pinned host memory mapped into the GPU (zero-copy); no host<->device transfers
    Device, // device memory with pinned staging buffers and explicit copies
};
inline constexpr EnumName<IoMemory> kIoMemoryNames[] = {
    {IoMemory::Auto, "auto"}, {IoMemory::Mapped, "mapped"}, {IoMemory::Device, "device"}};
const char* ioMemoryName(IoMemory m);

// How to build an engine. Every field is validated by the backend, which says what it cannot do.
struct EngineOptions {
    std::string backend = "auto"; // which backend builds the engine: "auto" (resolveBackend:
                                  // tensorrt for gpu/dla, xnnpack for the CPU), "xnnpack",
                                  // "opencv" (CPU everywhere; CUDA where OpenCV has it), "tensorrt"
    Device device = Device::Cpu; // where inference runs; gpu needs a CUDA-enabled backend,
                                 // dla0/dla1 a Jetson with DLAs
    Precision precision = Precision::Fp32; // arithmetic; fp16/int8 are faster where the device
                                           // supports them, less exact
    int batch = 1; // frames per inference; >1 raises throughput and each frame's latency
    int threads = 0; // CPU threads for inference; 0 = the backend's default (all cores)
    bool fusion =
        true; // fuse layers (conv+bn+activation); false runs the unoptimised graph for comparison
    std::string cacheDir; // where prepared models (and compiled plans) are kept; empty = prepare
                          // in memory at every build (costs up to seconds per start)
    bool onednn = true; // xnnpack only: convolutions and linear layers on oneDNN where the build
                        // has it (x86-64); false keeps them all on XNNPACK. Other backends
                        // refuse false.

    // TensorRT only (other backends refuse values other than the defaults, except where noted).
    int batchMin = 0; // dynamic batch profile: the smallest batch a session may run; 0 = batch
    int batchMax = 0; // the largest; 0 = batch. `batch` is the profile's optimum (kOPT)
    int64_t workspaceMb = 0; // builder workspace limit in MiB; 0 = TensorRT's default
    bool gpuFallback = true; // dla0/dla1: layers the DLA cannot run go to the GPU; false: such a
                             // model fails to build
    bool timingCache = true; // keep the builder's timing cache in the cache directory (ignored by
                             // other backends)
    bool cudaGraph = false; // capture the enqueue into a CUDA graph (fixed shapes only)
    IoMemory ioMemory = IoMemory::Auto;
    std::shared_ptr<CalibrationData> calibration; // int8: the calibration samples

    // The first setting that only the tensorrt backend honours and that is not at its default
    // ("workspace_mb"), for other backends to refuse rather than silently ignore; nullptr: none.
    const char* tensorRTOnlySetting() const;

    int profileMin() const { return batchMin > 0 ? batchMin : batch; }
    int profileMax() const { return batchMax > 0 ? batchMax : batch; }
    bool dynamicBatch() const { return profileMin() != batch || profileMax() != batch; }
};

// Times of one Session::run. Backends that cannot separate transfers from compute leave the
// transfer times at -1 and report everything in computeNs.
struct RunTiming {
    int64_t hostToDeviceNs = -1;
    int64_t computeNs = 0;
    int64_t deviceToHostNs = -1;
};

// What an engine is, for logs and run summaries: a figure without its configuration cannot be
// reproduced.
struct EngineDescription {
    std::string backend; // "opencv"
    std::string backendVersion; // "OpenCV 4.6.0"
    std::string target; // what actually runs it: "cpu", "cuda", "cuda-fp16"
    EngineOptions options;
    std::string modelPath;
    std::string modelSha256;
    uint64_t modelBytes = 0;
    std::string preparation; // the pass list that prepared the model for this backend
    std::string preparedKey; // identifies the prepared model (model_prepare.h)
    bool preparedFromCache = false;
    int64_t prepareNs = 0; // preparing the model, or reading it from the cache
    int64_t buildNs = 0; // building or loading the engine, before the first inference (includes
                         // prepareNs)
    // Backends that compile plans for an accelerator (TensorRT):
    std::string accelerator; // the GPU as CUDA names it: "Orin (sm_87, integrated, 2 DLA cores)"
    std::string planKey; // the plan's cache key
    bool planFromCache = false; // the plan was loaded, not built
    std::string ioMemory; // "mapped" or "device": where the session buffers live
    // Backends that lower the precision themselves (xnnpack int8 and fp16): what runs in it, and
    // for int8 where the ranges came from ("9 steps int8, 2 float, 3 conversions; calibrated on
    // 64 samples of ..."). Empty for fp32.
    std::string lowered;
};

class Session {
public:
    virtual ~Session() = default;
    Session() = default;
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // Runs one inference. `inputs` holds one view per engine input, in Engine::inputs() order;
    // their first dimension is the batch. The data must stay valid until run() returns. On success
    // the outputs are readable through output() until the next run(). Errors name the model and
    // what failed.
    virtual Status run(const TensorView* inputs, size_t inputCount, RunTiming* timing) = 0;

    // The outputs, in the model's order; an index past the last gives an empty view. One
    // implementation for every backend: each keeps outputViews() up to date (where its buffers
    // or shapes change), so reading an output costs no virtual call and no copy.
    size_t outputCount() const { return outputViews_.size(); }
    ConstTensorView output(size_t index) const
    {
        return index < outputViews_.size() ? outputViews_[index] : ConstTensorView();
    }

    // Per-step times, for profiles (`inspect --profile`), where the backend runs compiled steps
    // (Engine::steps()): after enableStepTimes(true), each run() adds each step's time to
    // stepTimesNs() (one entry per step, in Engine::steps() order; set to zero by enabling).
    // Returns false where the backend cannot time its steps.
    virtual bool enableStepTimes(bool on)
    {
        (void)on;
        return false;
    }
    virtual const std::vector<int64_t>* stepTimesNs() const { return nullptr; }

protected:
    std::vector<ConstTensorView>& outputViews() { return outputViews_; }

private:
    std::vector<ConstTensorView> outputViews_;
};

// One step of a compiled engine: which library runs which node (`inspect --prepared --backend`).
struct EngineStep {
    std::string node; // "Conv '/layer1/Conv' + Relu '/layer1/Relu'" (fused nodes joined)
    std::string op; // the ONNX operator
    std::string library; // "xnnpack", "reference" (the backend's own kernels), ...
    // What it computes in: "fp32", "int8", "fp16", or a conversion "fp32>int8"; empty where the
    // backend does not say.
    std::string precision;
};

class Engine {
public:
    virtual ~Engine() = default;
    Engine() = default;
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    // Inputs and outputs as the model declares them.
    virtual const std::vector<TensorInfo>& inputs() const = 0;
    virtual const std::vector<TensorInfo>& outputs() const = 0;
    virtual const EngineDescription& description() const = 0;

    // A new independent session; safe to call from any thread.
    virtual Expected<std::unique_ptr<Session>> createSession() const = 0;

    // The compiled steps in order; empty where the backend's library decides alone (OpenCV DNN,
    // TensorRT).
    virtual std::vector<EngineStep> steps() const { return {}; }
};

// Prepares `model` for the backend `requested` names (resolveBackend; model_prepare.h, through
// the cache in requested.cacheDir) and builds an engine from the prepared model. Errors: an
// unknown or unavailable backend, or options it cannot honour (ErrorKind::Unsupported); a model
// that preparation or the backend cannot handle (InvalidInput); a cache directory that cannot be
// written (Io).
Expected<std::shared_ptr<const Engine>> buildEngine(
    std::shared_ptr<const ModelFile> model, const EngineOptions& requested);

struct BackendInfo {
    std::string name; // as written in config: engine.backend
    bool available; // compiled in and usable on this machine
    std::string details; // version and targets, or why it is not available
    // The ONNX operators the backend claims to run (the conformance tests hold it to each of them:
    // every ONNX node test of a claimed operator passes or is refused with a reason, never
    // mis-run). Empty: the backend makes no claim (OpenCV DNN, TensorRT: their own libraries
    // decide).
    std::vector<std::string> operators;
};

// Every backend this build knows, available or not.
std::vector<BackendInfo> listBackends();

// The backend `options` names, with "auto" resolved: tensorrt for device gpu, dla0 or dla1 (built
// in or not: its absence is then the build's error); for the CPU, xnnpack where this build has it,
// else opencv. Other names are returned as given.
std::string resolveBackend(const EngineOptions& options);

} // namespace jetagent
