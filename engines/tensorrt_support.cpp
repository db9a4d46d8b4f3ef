// The TensorRT backend's version table, GPU capabilities and option checks (no TensorRT needed).
#include "jetagent/engines/tensorrt_support.h"

namespace jetagent {

std::string TensorRTVersion::toString() const
{
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

TensorRTVersion decodeTensorRTLibraryVersion(int32_t number)
{
    TensorRTVersion v;
    // 10.0.0 is 100000; the largest number of the old encoding is 9.9.99 (9999).
    const int32_t majorUnit = number >= 100000 ? 10000 : 1000;
    v.major = number / majorUnit;
    v.minor = (number % majorUnit) / 100;
    v.patch = number % 100;
    return v;
}

bool computeHasFastFp16(int major, int minor)
{
    if (major >= 7)
        return true;
    return (major == 5 && minor == 3) || (major == 6 && minor != 1);
}

bool computeHasFastInt8(int major, int minor)
{
    return major >= 7 || (major == 6 && minor == 1);
}

std::string GpuPlatform::describe() const
{
    std::string s = name + " (sm_" + std::to_string(computeMajor) + std::to_string(computeMinor);
    s += integrated ? ", integrated" : ", discrete";
    if (dlaCores > 0)
        s += ", " + std::to_string(dlaCores) + " DLA core" + (dlaCores > 1 ? "s" : "");
    return s + ")";
}

Status checkTensorRTOptions(
    const EngineOptions& options, const GpuPlatform& platform, bool qdqModel)
{
    const bool dla = options.device == Device::Dla0 || options.device == Device::Dla1;
    if (options.device == Device::Cpu)
        return Status::unsupported(
            "the tensorrt backend runs on the GPU or a DLA core: set device: gpu, dla0 or dla1 "
            "(or backend: xnnpack for the CPU)");
    if (!options.onednn)
        return Status::unsupported(
            "the tensorrt backend has no setting onednn; it is an xnnpack backend setting");
    if (dla) {
        const int core = options.device == Device::Dla0 ? 0 : 1;
        if (core >= platform.dlaCores)
            return Status::unsupported(std::string("device: ") + deviceName(options.device) + ": " +
                platform.describe() + " has " +
                (platform.dlaCores == 0 ? std::string("no DLA cores")
                                        : std::to_string(platform.dlaCores) + " DLA core") +
                (platform.dlaCores > 1 ? "s" : "") + " (Xavier and Orin AGX/NX have two)");
        if (options.precision == Precision::Fp32)
            return Status::unsupported(std::string("device: ") + deviceName(options.device) +
                ": a DLA core computes in fp16 or int8 only; set precision: fp16 or int8");
        if (options.dynamicBatch())
            return Status::unsupported(std::string("device: ") + deviceName(options.device) +
                ": a DLA core runs fixed shapes only; leave batch_min and batch_max unset");
        if (options.cudaGraph)
            return Status::unsupported(std::string("cuda_graph: jetagent captures CUDA graphs "
                                                   "for GPU engines only, not on ") +
                deviceName(options.device));
    } else if (!options.gpuFallback) {
        return Status::invalid(
            "dla_gpu_fallback: false applies to DLA devices only (device is gpu)");
    }
    if (options.precision == Precision::Fp16 && !platform.fastFp16)
        return Status::unsupported("precision: fp16: " + platform.describe() +
            " has no fast fp16 arithmetic, so fp16 would be slower than fp32; use fp32");
    if (options.precision == Precision::Int8) {
        if (!platform.fastInt8 && !dla)
            return Status::unsupported("precision: int8: " + platform.describe() +
                " has no fast int8 arithmetic (it needs compute capability 6.1 or 7.0 on, such "
                "as Xavier and Orin); use fp16");
        if (!options.calibration && !qdqModel)
            return Status::invalid(
                "precision: int8 needs calibration data: add calibration: {source: DIR or VIDEO} "
                "to the engine section (a few hundred frames like those the camera will see), or "
                "a QDQ model, which brings its own scales");
    }
    if (options.calibration && options.calibration->batchSize() < 1)
        return Status::invalid("calibration.batch must be at least 1");
    if (options.cudaGraph && options.dynamicBatch())
        return Status::unsupported(
            "cuda_graph: a CUDA graph replays fixed shapes; it cannot be used with a dynamic batch "
            "(batch_min/batch_max)");
    if (options.ioMemory == IoMemory::Mapped && !platform.canMapHostMemory)
        return Status::unsupported(
            "io_memory: mapped: " + platform.describe() + " cannot map host memory; use device");
    if (options.workspaceMb < 0)
        return Status::invalid("workspace_mb must be 0 (TensorRT's default) or more");
    return Status();
}

IoMemory resolveIoMemory(IoMemory requested, const GpuPlatform& platform)
{
    if (requested != IoMemory::Auto)
        return requested;
    return platform.integrated && platform.canMapHostMemory ? IoMemory::Mapped : IoMemory::Device;
}

int64_t tensorRTPreparedBatch(const EngineOptions& options)
{
    const bool calibrating = options.precision == Precision::Int8 && options.calibration;
    return options.dynamicBatch() || calibrating ? 0 : options.batch;
}

PlanKeyInputs tensorRTPlanKeyInputs(const std::string& modelSha256, const std::string& preparedKey,
    const EngineOptions& options, const TensorRTVersion& version, const GpuPlatform& platform)
{
    PlanKeyInputs key;
    key.modelSha256 = modelSha256;
    key.preparedKey = preparedKey;
    key.precision = precisionName(options.precision);
    key.device = deviceName(options.device);
    key.gpuFallback = options.gpuFallback;
    key.batchMin = options.profileMin();
    key.batchOpt = options.batch;
    key.batchMax = options.profileMax();
    key.workspaceMb = options.workspaceMb;
    if (options.precision == Precision::Int8 && options.calibration)
        key.calibrationKey = options.calibration->key();
    key.tensorrtVersion = version.toString();
    key.gpuName = platform.describe();
    return key;
}

} // namespace jetagent
