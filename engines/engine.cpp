// Engine option names and the table of backends this build knows.
#include "jetagent/engines/engine.h"

#include "jetagent/base/clock.h"
#include "jetagent/base/log.h"
#include "jetagent/base/plugin.h"
#include "jetagent/engines/engine_plugin.h"
#include "jetagent/engines/model_prepare.h"
#include "jetagent/engines/tensorrt_support.h"

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

// One row per backend; a backend that is compiled out still has a row saying so. Every backend
// lives in a plugin (jetagent/base/plugin.h), the CPU engine's in the core package: a row names
// the plugin, whose table is loaded the first time the backend is asked about.
struct BackendEntry {
    const char* name;
    const char* plugin; // nullptr: compiled into the core
    bool (*available)();
    std::string (*details)();
    std::vector<std::string> (*operators)(); // what the backend claims to run; nullptr: no claim
    Expected<std::shared_ptr<const Engine>> (*build)(
        std::shared_ptr<const ModelFile>, const PreparedModel&, const EngineOptions&);
};

const BackendEntry kBackends[] = {
#ifdef JETAGENT_HAVE_XNNPACK
    {"xnnpack", "xnnpack", nullptr, nullptr, nullptr, nullptr},
#else
    {"xnnpack", nullptr, [] { return false; },
        [] {
            return std::string("not compiled in (XNNPACK was not found when this jetagent was "
                               "built: install libxnnpack-dev and libpthreadpool-dev, or see "
                               "docs/cpu-engine.md for releases that lack them)");
        },
        nullptr, nullptr},
#endif
    {"opencv", "opencv-dnn", nullptr, nullptr, nullptr, nullptr},
    {"tensorrt", "tensorrt", nullptr, nullptr, nullptr, nullptr},
};

// The row with the plugin's functions filled in, or the plugin's load error.
Expected<BackendEntry> resolveEntry(const BackendEntry& entry)
{
    if (entry.plugin == nullptr)
        return entry;
    auto plugin = loadPlugin(entry.plugin);
    if (!plugin)
        return plugin.status();
    const auto* api = static_cast<const EngineBackendApi*>(plugin.value()->api);
    if (api == nullptr || api->backend == nullptr || std::string(api->backend) != entry.name)
        return Status::unsupported(std::string("plugin '") + entry.plugin +
            "' does not provide the engine backend '" + entry.name + "'");
    BackendEntry resolved = entry;
    resolved.available = api->available;
    resolved.details = api->details;
    resolved.operators = api->operators;
    resolved.build = api->build;
    return resolved;
}

} // namespace

std::vector<BackendInfo> listBackends()
{
    std::vector<BackendInfo> list;
    for (const auto& row : kBackends) {
        auto b = resolveEntry(row);
        if (!b) {
            list.push_back({row.name, false, b.status().message(), {}});
            continue;
        }
        list.push_back({b.value().name, b.value().available(), b.value().details(),
            b.value().operators ? b.value().operators() : std::vector<std::string>()});
    }
    return list;
}

std::string resolveBackend(const EngineOptions& options)
{
    if (options.backend != "auto")
        return options.backend;
    if (options.device != Device::Cpu)
        return "tensorrt";
    // The CPU engine, unless this build has none or it cannot run here. Its plugin missing is an
    // installation to repair, not a reason to pick another backend: the build names the package.
    for (const auto& row : kBackends) {
        if (std::string(row.name) != "xnnpack")
            continue;
        auto b = resolveEntry(row);
        if (!b || b.value().available())
            return row.name;
    }
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
    for (const auto& row : kBackends) {
        if (options.backend != row.name)
            continue;
        auto resolved = resolveEntry(row);
        if (!resolved)
            return resolved.status().withContext(
                "engine backend '" + options.backend + "'" + chosen + " is not available");
        const BackendEntry& b = resolved.value();
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
