// The parts of the TensorRT backend that need neither TensorRT nor a GPU, so that they are compiled
// and tested everywhere: which API paths a TensorRT version selects, how its library version
// number reads, what a GPU can do, and which engine settings a given board can honour.
#pragma once

#include <cstdint>
#include <string>

#include "jetagent/base/status.h"
#include "jetagent/engines/engine.h"
#include "jetagent/engines/plan_cache.h"

namespace jetagent {

// The API paths of one TensorRT version. The backend selects its code with preprocessor tests on
// NV_TENSORRT_MAJOR/MINOR (an API that a version lacks cannot be named at all); it checks with
// static_assert that those tests agree with this table, which the unit tests read for every
// version we support.
struct TensorRTFeatures {
    bool supported = false; // 8.5 to 10.x: the named-tensor API (enqueueV3, setTensorAddress,
                            // setInputShape) exists and weakly typed fp16/int8 still do
    bool explicitBatchFlag = false; // createNetworkV2 needs kEXPLICIT_BATCH (before 10; from 10
                                    // every network is explicit-batch and the flag is deprecated)
    bool platformQueries = false; // IBuilder::platformHasFastFp16/Int8 can be called without
                                  // deprecation (before 10; from 10 the GPU's compute capability
                                  // decides)
    bool progressMonitor = false; // IProgressMonitor reports build phases (10.0 on)
    bool calibratorDeprecated = false; // implicit int8 calibration is deprecated (10.1 on)
    bool weakTypingDeprecated = false; // BuilderFlag::kFP16/kINT8 are deprecated (10.12 on)
};

constexpr TensorRTFeatures tensorRTFeatures(int major, int minor)
{
    const int v = major * 100 + minor;
    TensorRTFeatures f;
    f.supported = v >= 805 && major <= 10;
    f.explicitBatchFlag = major < 10;
    f.platformQueries = major < 10;
    f.progressMonitor = major >= 10;
    f.calibratorDeprecated = v >= 1001;
    f.weakTypingDeprecated = v >= 1012;
    return f;
}

struct TensorRTVersion {
    int major = 0;
    int minor = 0;
    int patch = 0;
    std::string toString() const; // "10.3.0"
};

// getInferLibVersion()'s number: major * 1000 + minor * 100 + patch before TensorRT 10,
// major * 10000 + minor * 100 + patch from 10 on (where 8.6.1 is 8601 and 10.3.0 is 100300).
TensorRTVersion decodeTensorRTLibraryVersion(int32_t number);

// What the GPU (and the board around it) can do, as CUDA and TensorRT report it.
struct GpuPlatform {
    std::string name; // cudaDeviceProp::name: "Orin", "NVIDIA Tegra X1"
    int computeMajor = 0;
    int computeMinor = 0;
    bool integrated = false; // shares the host's memory (every Jetson)
    bool canMapHostMemory = false;
    int dlaCores = 0; // IBuilder::getNbDLACores
    bool fastFp16 = false;
    bool fastInt8 = false;

    std::string describe() const; // "Orin (sm_87, integrated, 2 DLA cores)"
};

// Fast fp16: compute capability 5.3 (Nano/TX1), 6.0, 6.2 (TX2) and 7.0 on; 6.1 has it in name
// only (1/64 rate). Fast int8 (dp4a or tensor cores): 6.1 and 7.0 on; not the Nano or TX2.
bool computeHasFastFp16(int major, int minor);
bool computeHasFastInt8(int major, int minor);

// Checks `options` for the tensorrt backend on `platform`. Errors (Unsupported for what this
// board cannot do, InvalidInput for contradictory settings) name the setting as written in
// config, so that the task's context makes a complete message. `qdqModel`: the model brings its
// own int8 scales (isQdqModel), so int8 needs no calibration data.
Status checkTensorRTOptions(
    const EngineOptions& options, const GpuPlatform& platform, bool qdqModel = false);

// Where a session keeps its buffers: Auto takes mapped memory on integrated GPUs, where it avoids
// every copy, and device memory on discrete ones.
IoMemory resolveIoMemory(IoMemory requested, const GpuPlatform& platform);

// The batch the prepared model is fixed at for TensorRT: the batch itself, or 0 (left free) when
// the engine needs runtime dimensions: a dynamic batch profile, or int8 calibration, which runs
// its own profile at the calibration batch.
int64_t tensorRTPreparedBatch(const EngineOptions& options);

// What the plan of `options` is keyed by (plan_cache.h): the model and its preparation, and of
// the options those that change the plan (precision, device, DLA fallback, batch profile,
// workspace, the calibration data for int8); the TensorRT version and the GPU. Threads, cuda_graph,
// io_memory and timing_cache change how a plan runs or is built, not the plan: they are left out.
PlanKeyInputs tensorRTPlanKeyInputs(const std::string& modelSha256, const std::string& preparedKey,
    const EngineOptions& options, const TensorRTVersion& version, const GpuPlatform& platform);

} // namespace jetagent
