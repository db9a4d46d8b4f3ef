// Engine option names and the table of backends this build knows.
#include "jetagent/engines/engine.h"

#include "jetagent/base/clock.h"
#include "jetagent/base/log.h"
#include "jetagent/engines/model_prepare.h"
#include "jetagent/engines/tensorrt_support.h"
#include "opencv_dnn_engine.h"
#ifdef JETAGENT_HAVE_TENSORRT
#include "tensorrt_engine.h"
#endif
#ifdef JETAGENT_HAVE_XNNPACK
#include "xnnpack/xnnpack_engine.h"
#endif

namespace jetagent {

const char* precisionName(Precision p)
{
    return nameOf(kPrecisionNames, p);
}

const char* deviceName(Device d)
{
    return nameOf(kDeviceNames, d);
}

const char* ioMemoryName(IoMemory m)
{
    return nameOf(kIoMemoryNames, m);
}

const char* EngineOptions::tensorRTOnlySetting() const
{
    return dynamicBatch()            ? "batch_min/batch_max (a dynamic batch)"
        : workspaceMb > 0            ? "workspace_mb"
        : cudaGraph                  ? "cuda_graph"
        : ioMemory != IoMemory::Auto ? "io_memory"
        : !gpuFallback               ? "dla_gpu_fallback"
                                     : nullptr;
}

bool parsePrecision(const std::string& text, Precision* out)
{
    return parseName(kPrecisionNames, text, *out);
}

bool parseDevice(const std::string& text, Device* out)
{
    return parseName(kDeviceNames, text, *out);
}

namespace {

// One row per backend; a backend that is compiled out still has a row saying so.
struct BackendEntry {
    const char* name;
    bool (*available)();
    std::string (*details)();
    std::vector<std::string> (*operators)(); // what the backend claims to run; nullptr: no claim
    Expected<std::shared_ptr<const Engine>> (*build)(
        std::shared_ptr<const ModelFile>, const PreparedModel&, const EngineOptions&);
};

const BackendEntry kBackends[] = {
#ifdef JETAGENT_HAVE_XNNPACK
    {"xnnpack", xnnpackAvailable, xnnpackDetails, xnnpackOperators, buildXnnpackEngine},
#else
    {"xnnpack", [] { return false; },
        [] {
            return std::string("not compiled in (XNNPACK was not found when this jetagent was "
                               "built: install libxnnpack-dev and libpthreadpool-dev, or see "
                               "docs/cpu-engine.md for releases that lack them)");
        },
        nullptr, nullptr},
#endif
    {"opencv", [] { return true; }, openCVDnnDetails, nullptr, buildOpenCVDnnEngine},
#ifdef JETAGENT_HAVE_TENSORRT
    {"tensorrt", tensorRTAvailable, tensorRTDetails, nullptr, buildTensorRTEngine},
#else
    {"tensorrt", [] { return false; },
        [] {
            return std::string("not compiled in (TensorRT was not found when this jetagent was "
                               "built; on a Jetson, install JetPack's TensorRT packages and "
                               "configure with -DJETAGENT_TENSORRT=ON)");
        },
        nullptr, nullptr},
#endif
};

} // namespace

std::vector<BackendInfo> listBackends()
{
    std::vector<BackendInfo> list;
    for (const auto& b : kBackends)
        list.push_back({b.name, b.available(), b.details(),
            b.operators ? b.operators() : std::vector<std::string>()});
    return list;
}

std::string resolveBackend(const EngineOptions& options)
{
    if (options.backend != "auto")
        return options.backend;
    if (options.device != Device::Cpu)
        return "tensorrt";
    for (const auto& b : kBackends)
        if (std::string(b.name) == "xnnpack" && b.available())
            return b.name;
    return "opencv";
}

Expected<std::shared_ptr<const Engine>> buildEngine(
    std::shared_ptr<const ModelFile> model, const EngineOptions& requested)
{
    EngineOptions options = requested;
    options.backend = resolveBackend(requested);
    const std::string chosen = requested.backend == "auto"
        ? " (backend: auto chose it for device " + std::string(deviceName(options.device)) + ")"
        : std::string();
    for (const auto& b : kBackends) {
        if (options.backend != b.name)
            continue;
        if (!b.available() || !b.build)
            return Status::unsupported("engine backend '" + options.backend + "'" + chosen +
                " is not available: " + b.details());
        if (options.batch < 1)
            return Status::invalid("batch must be at least 1");
        PrepareOptions prepare;
        prepare.backend = b.name;
        prepare.batch = options.batch;
        if (options.backend == "tensorrt")
            prepare.batch = tensorRTPreparedBatch(options);
        prepare.cacheDir = options.cacheDir;
        auto prepared = prepareModel(*model, prepare);
        if (!prepared && prepared.status().kind() == ErrorKind::Io && !prepare.cacheDir.empty()) {
            // A cache that cannot be written costs time at every start, not the run.
            logger("engine")->warn(
                "{}; preparing '{}' in memory instead", prepared.status().message(), model->path);
            prepare.cacheDir.clear();
            prepared = prepareModel(*model, prepare);
        }
        if (!prepared)
            return prepared.status();
        const PreparedModel& p = prepared.value();
        logger("engine")->debug("{}: model '{}' prepared ({}) in {:.1f} ms, {} -> {} nodes{}",
            b.name, model->path, p.passList, nsToMs(p.ns), p.nodesBefore, p.nodesAfter,
            p.fromCache ? " (from the cache)" : "");
        auto engine = b.build(std::move(model), p, options);
        if (!engine && !chosen.empty())
            return engine.status().withContext(options.backend + chosen);
        return engine;
    }
    std::string known;
    for (const auto& b : kBackends)
        known += std::string(known.empty() ? "" : ", ") + b.name;
    return Status::invalid(
        "unknown engine backend '" + options.backend + "' (known: auto, " + known + ")");
}

} // namespace jetagent
