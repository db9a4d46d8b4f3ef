// The on-disk cache of compiled TensorRT plans, int8 calibration tables and timing caches.
//
// Free of TensorRT and CUDA so that it builds and is tested everywhere: the TensorRT backend
// hands it bytes. A plan is keyed by everything that changes what TensorRT builds (model,
// preparation, precision, device, batch profile, workspace, calibration, TensorRT version, GPU),
// and is stored as <cacheDir>/tensorrt/<key>.plan beside <key>.json, its metadata, which holds the
// plan's SHA-256 and has its own digest beside it (<key>.json.sha256, cache_file.h). Calibration
// tables and timing caches are cache entries with digests too (readCacheEntry, writeCacheEntry).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jetagent/base/status.h"
#include "jetagent/engines/cache_file.h"

namespace jetagent {

// Everything that, when changed, must give a different plan. Settings that do not change the
// plan (model path, threads, cuda_graph, io_memory, timing_cache, logging) are deliberately
// absent: changing them reuses the cached plan.
struct PlanKeyInputs {
    std::string modelSha256; // of the source model's bytes (ModelFile::sha256)
    std::string preparedKey; // the preparation applied to it (PreparedModel::key)
    std::string precision; // "fp32", "fp16", "int8" (precisionName)
    std::string device; // "gpu", "dla0", "dla1" (deviceName)
    bool gpuFallback = true; // DLA: layers it cannot run go to the GPU
    int batchMin = 1; // the optimisation profile's kMIN, kOPT and kMAX batch
    int batchOpt = 1;
    int batchMax = 1;
    int64_t workspaceMb = 0; // builder workspace limit; 0 = TensorRT's default
    std::string calibrationKey; // int8: CalibrationData::key(); empty otherwise
    std::string tensorrtVersion; // "10.3.0": plans are not portable between versions
    std::string gpuName; // "Orin (nvgpu), sm_87": nor between GPUs
};

// The canonical text a plan key is the hash of: a revision line, then one name=value line per
// field of `in` in a fixed order (newlines and backslashes in values escaped). Kept in the
// metadata so that a user can see why two plans differ.
std::string describePlanKey(const PlanKeyInputs& in);

// The plan's cache key: SHA-256 of describePlanKey(in), 64 lower-case hex digits.
std::string planKey(const PlanKeyInputs& in);

// Where an int8 calibration table may be reused: SHA-256 (hex) of the model, its preparation,
// the calibration samples (calibrationKey) and the TensorRT version. Precision, device, batch
// profile and GPU do not enter: the table records activation ranges of the network on the data.
std::string calibrationTableKey(const PlanKeyInputs& in);

// What is known of a cached plan; written as <key>.json beside it.
struct PlanMetadata {
    PlanKeyInputs inputs; // what the plan was built from (planKey(inputs) is its key)
    std::string keyText; // describePlanKey(inputs); filled by storePlan
    std::string modelPath; // the model file the plan was built from, for people reading it
    int64_t buildMs = 0; // how long TensorRT took to build it
    std::string jetagentVersion; // the program that built it (optional; engines cannot see it)
    uint64_t planBytes = 0; // filled by storePlan
    std::string planSha256; // of the plan's bytes; filled by storePlan
    std::string created; // ISO 8601 UTC ("2026-11-22T14:15:37Z"); storePlan fills it when empty
};

struct CachedPlan {
    std::string bytes; // the serialised plan, as TensorRT's builder gave it
    PlanMetadata metadata;
};

// What loadPlan found.
struct PlanLookup {
    std::optional<CachedPlan> plan; // set on a hit
    // On a miss: why the entry that was there cannot be used ("the plan has 10 bytes, its
    // metadata says 20"), for the caller to log before it rebuilds. Empty when there was no
    // entry (or no usable cache) at all.
    std::string damaged;
};

class PlanCache {
public:
    // Opens (creating it if missing) <cacheDir>/tensorrt and checks that a file can be created
    // in it. Never fails: a cache that cannot be used is returned with usable() false and a
    // warning() to log; plans are then built in memory at every start. An empty cacheDir means
    // no cache is configured.
    static PlanCache open(const std::string& cacheDir);

    bool usable() const { return usable_; }
    // Why the cache is not usable, for the log (names the directory and the reason); empty when
    // it is usable.
    const std::string& warning() const { return warning_; }
    // <cacheDir>/tensorrt; empty when no cache directory is configured.
    const std::string& directory() const { return dir_; }

    // Reads the plan stored under `key` (planKey). A missing plan or metadata file is a plain
    // miss. An entry whose metadata is unreadable or differs from its digest (or has none), whose
    // key text does not hash to `key`, or whose plan differs in size or SHA-256 from the metadata
    // is a miss with the reason in PlanLookup::damaged: never an error. Hashes the whole plan
    // (hundreds of MB/s with the CPU's SHA-256 instructions): TensorRT is not robust against a
    // corrupted plan.
    PlanLookup loadPlan(const std::string& key) const;

    // Stores `plan` under `key`, which must be planKey(metadata.inputs) (else InvalidInput).
    // Fills keyText, planBytes, planSha256 and (when empty) created in what it writes. The plan is
    // written first and the metadata last, each atomically, so that a crash leaves at worst a
    // plan without metadata (a miss). Errors (Io; Unsupported when the cache is not usable) are
    // for the caller to log as a warning: the plan in memory is still good.
    Status storePlan(const std::string& key, const std::string& plan, PlanMetadata metadata) const;

    // Where the plan for `key` is (or would be) kept, for messages; empty when not usable.
    std::string planPath(const std::string& key) const;

    // The int8 calibration table for `tableKey` (calibrationTableKey): a path in the cache
    // directory, which may not exist yet. Empty when the cache is not usable.
    std::string calibrationTablePath(const std::string& tableKey) const;

    // The builder's timing cache for a TensorRT version on a GPU (timings are valid for those
    // alone). A path in the cache directory, which may not exist yet; empty when not usable.
    std::string timingCachePath(
        const std::string& tensorrtVersion, const std::string& gpuName) const;

    // The metadata of every plan in <cacheDir>/tensorrt whose metadata can be read, oldest
    // first; creates nothing (an absent directory gives none). Plans are not hashed: an entry
    // listed here may still be found damaged by loadPlan. A directory that cannot be listed is an
    // error (Io) naming it.
    static Expected<std::vector<PlanMetadata>> listPlans(const std::string& cacheDir);

private:
    std::string dir_;
    bool usable_ = false;
    std::string warning_;
};

} // namespace jetagent
