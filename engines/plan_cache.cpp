// The TensorRT plan cache: keys, metadata and atomic files (plan_cache.h).
#include "jetagent/engines/plan_cache.h"

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <filesystem>

#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include "jetagent/base/json_text.h"
#include "jetagent/engines/cache_file.h"
#include "jetagent/engines/sha256.h"

namespace jetagent {

namespace {

namespace fs = std::filesystem;

// Bump when the key's fields or their meaning change: every older entry then misses.
constexpr const char* kPlanKeyRevision = "jetagent-tensorrt-plan 1";
constexpr const char* kCalibrationKeyRevision = "jetagent-tensorrt-calibration 1";

constexpr const char* kNoCacheAdvice =
    ": plans are built in memory and rebuilt at every start (set engine.cache_dir to a writable "
    "directory to keep them)";

// Values are free text (GPU names): escaping keeps one field per line, so that no value can
// imitate another field and two different inputs never give the same text.
std::string escaped(const std::string& value)
{
    std::string out;
    out.reserve(value.size());
    for (char c : value) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '\n')
            out += "\\n";
        else if (c == '\r')
            out += "\\r";
        else
            out += c;
    }
    return out;
}

std::string sha256Hex(const std::string& text)
{
    return Sha256::hex(text.data(), text.size());
}

bool isKey(const std::string& key)
{
    return key.size() == 64 && std::all_of(key.begin(), key.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    });
}

std::string utcNow()
{
    const std::time_t now = std::time(nullptr);
    std::tm tm {};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

nlohmann::json metadataToJson(const std::string& key, const PlanMetadata& m)
{
    const PlanKeyInputs& in = m.inputs;
    return {{"key", key}, {"key_text", m.keyText}, {"model_path", m.modelPath},
        {"model_sha256", in.modelSha256}, {"prepared_key", in.preparedKey},
        {"precision", in.precision}, {"device", in.device}, {"gpu_fallback", in.gpuFallback},
        {"batch_min", in.batchMin}, {"batch_opt", in.batchOpt}, {"batch_max", in.batchMax},
        {"workspace_mb", in.workspaceMb}, {"calibration_key", in.calibrationKey},
        {"tensorrt_version", in.tensorrtVersion}, {"gpu_name", in.gpuName}, {"build_ms", m.buildMs},
        {"jetagent_version", m.jetagentVersion}, {"plan_bytes", m.planBytes},
        {"plan_sha256", m.planSha256}, {"created", m.created}};
}

// The metadata in `text`, or why it cannot be read.
Expected<PlanMetadata> metadataFromJson(const std::string& text)
{
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded())
        return Status::invalid("its metadata is not JSON");
    PlanMetadata m;
    PlanKeyInputs& in = m.inputs;
    try {
        m.keyText = j.at("key_text").get<std::string>();
        m.modelPath = j.at("model_path").get<std::string>();
        in.modelSha256 = j.at("model_sha256").get<std::string>();
        in.preparedKey = j.at("prepared_key").get<std::string>();
        in.precision = j.at("precision").get<std::string>();
        in.device = j.at("device").get<std::string>();
        in.gpuFallback = j.at("gpu_fallback").get<bool>();
        in.batchMin = j.at("batch_min").get<int>();
        in.batchOpt = j.at("batch_opt").get<int>();
        in.batchMax = j.at("batch_max").get<int>();
        in.workspaceMb = j.at("workspace_mb").get<int64_t>();
        in.calibrationKey = j.at("calibration_key").get<std::string>();
        in.tensorrtVersion = j.at("tensorrt_version").get<std::string>();
        in.gpuName = j.at("gpu_name").get<std::string>();
        m.buildMs = j.at("build_ms").get<int64_t>();
        m.jetagentVersion = j.at("jetagent_version").get<std::string>();
        m.planBytes = j.at("plan_bytes").get<uint64_t>();
        m.planSha256 = j.at("plan_sha256").get<std::string>();
        m.created = j.at("created").get<std::string>();
    } catch (const nlohmann::json::exception& e) {
        return Status::invalid(std::string("its metadata is incomplete (") + e.what() + ")");
    }
    return m;
}

} // namespace

std::string describePlanKey(const PlanKeyInputs& in)
{
    std::string text = std::string(kPlanKeyRevision) + "\n";
    auto line = [&text](const char* name, const std::string& value) {
        text += name;
        text += '=';
        text += escaped(value);
        text += '\n';
    };
    line("model_sha256", in.modelSha256);
    line("prepared_key", in.preparedKey);
    line("precision", in.precision);
    line("device", in.device);
    line("gpu_fallback", in.gpuFallback ? "true" : "false");
    line("batch_min", std::to_string(in.batchMin));
    line("batch_opt", std::to_string(in.batchOpt));
    line("batch_max", std::to_string(in.batchMax));
    line("workspace_mb", std::to_string(in.workspaceMb));
    line("calibration_key", in.calibrationKey);
    line("tensorrt_version", in.tensorrtVersion);
    line("gpu_name", in.gpuName);
    return text;
}

std::string planKey(const PlanKeyInputs& in)
{
    return sha256Hex(describePlanKey(in));
}

std::string calibrationTableKey(const PlanKeyInputs& in)
{
    return sha256Hex(std::string(kCalibrationKeyRevision) +
        "\nmodel_sha256=" + escaped(in.modelSha256) + "\nprepared_key=" + escaped(in.preparedKey) +
        "\ncalibration_key=" + escaped(in.calibrationKey) +
        "\ntensorrt_version=" + escaped(in.tensorrtVersion) + "\n");
}

PlanCache PlanCache::open(const std::string& cacheDir)
{
    PlanCache cache;
    if (cacheDir.empty()) {
        cache.warning_ = "no engine cache directory is configured (engine.cache_dir)";
        cache.warning_ += kNoCacheAdvice;
        return cache;
    }
    cache.dir_ = (fs::path(cacheDir) / "tensorrt").string();
    std::error_code ec;
    fs::create_directories(cache.dir_, ec);
    if (ec) {
        cache.warning_ = "engine cache directory '" + cache.dir_ + "' cannot be created (" +
            ec.message() + ")" + kNoCacheAdvice;
        return cache;
    }
    if (!fs::is_directory(cache.dir_, ec)) {
        cache.warning_ =
            "engine cache directory '" + cache.dir_ + "' is not a directory" + kNoCacheAdvice;
        return cache;
    }
    // Only creating a file answers for everything that can refuse one (permissions, a read-only
    // mount, immutable attributes, security modules); access(W_OK) does not.
    const auto [fd, probe] = makeTemporaryFile(cache.dir_ + "/.probe");
    if (fd < 0) {
        cache.warning_ = "engine cache directory '" + cache.dir_ + "' is not writable (" +
            errnoText(errno) + ")" + kNoCacheAdvice;
        return cache;
    }
    ::close(fd);
    ::unlink(probe.c_str());
    cache.usable_ = true;
    return cache;
}

PlanLookup PlanCache::loadPlan(const std::string& key) const
{
    PlanLookup lookup;
    if (!usable_)
        return lookup;
    if (!isKey(key)) {
        lookup.damaged = "'" + key + "' is not a plan key";
        return lookup;
    }
    const std::string planFile = planPath(key);
    const std::string metaPath = dir_ + "/" + key + ".json";
    // Metadata first, checked against its digest: a plan without it is not worth reading.
    CacheEntryRead metaText = readCacheEntry(metaPath);
    if (!metaText.damaged.empty()) {
        lookup.damaged = "its metadata: " + metaText.damaged;
        return lookup;
    }
    if (!metaText.bytes) {
        struct stat st { };
        if (::stat(planFile.c_str(), &st) == 0)
            lookup.damaged = "its plan has no metadata (a store was interrupted?)";
        return lookup;
    }
    auto plan = readFileIfPresent(planFile);
    if (!plan) {
        lookup.damaged = plan.status().message();
        return lookup;
    }
    if (!plan->has_value()) {
        lookup.damaged = "its metadata is there, its plan is missing";
        return lookup;
    }

    auto meta = metadataFromJson(*metaText.bytes);
    if (!meta) {
        lookup.damaged = meta.status().message();
        return lookup;
    }
    if (planKey(meta->inputs) != key || meta->keyText != describePlanKey(meta->inputs)) {
        lookup.damaged = "its metadata describes another plan";
        return lookup;
    }
    const std::string& bytes = **plan;
    if (bytes.size() != meta->planBytes) {
        lookup.damaged = "the plan has " + std::to_string(bytes.size()) +
            " bytes, its metadata says " + std::to_string(meta->planBytes);
        return lookup;
    }
    if (sha256Hex(bytes) != meta->planSha256) {
        lookup.damaged = "the plan's SHA-256 differs from its metadata's";
        return lookup;
    }
    lookup.plan = CachedPlan {std::move(**plan), std::move(meta.value())};
    return lookup;
}

Status PlanCache::storePlan(
    const std::string& key, const std::string& plan, PlanMetadata metadata) const
{
    if (!usable_)
        return Status::unsupported("no plan cache: " + warning_);
    if (planKey(metadata.inputs) != key)
        return Status::invalid("plan key '" + key + "' is not the key of the plan's inputs");
    metadata.keyText = describePlanKey(metadata.inputs);
    metadata.planBytes = plan.size();
    metadata.planSha256 = sha256Hex(plan);
    if (metadata.created.empty())
        metadata.created = utcNow();

    const std::string planFile = planPath(key);
    const std::string metaPath = dir_ + "/" + key + ".json";
    // An old entry's metadata goes first: while the new plan replaces the old one, readers find
    // no metadata (a plain miss) rather than metadata that describes the other plan.
    for (const std::string& old : {metaPath, cacheDigestPath(metaPath)})
        if (::unlink(old.c_str()) != 0 && errno != ENOENT)
            return Status::io("cannot remove '" + old + "': " + errnoText(errno));
    Status s = writeFileAtomically(planFile, plan);
    if (s)
        s = writeCacheEntry(metaPath, jsonText(metadataToJson(key, metadata), 1) + "\n");
    return s;
}

std::string PlanCache::planPath(const std::string& key) const
{
    if (!usable_)
        return std::string();
    return dir_ + "/" + key + ".plan";
}

std::string PlanCache::calibrationTablePath(const std::string& tableKey) const
{
    if (!usable_)
        return std::string();
    return dir_ + "/calibration-" + tableKey + ".table";
}

std::string PlanCache::timingCachePath(
    const std::string& tensorrtVersion, const std::string& gpuName) const
{
    if (!usable_)
        return std::string();
    const std::string id = sha256Hex(
        "tensorrt_version=" + escaped(tensorrtVersion) + "\ngpu_name=" + escaped(gpuName) + "\n");
    return dir_ + "/timing-" + id + ".cache";
}

Expected<std::vector<PlanMetadata>> PlanCache::listPlans(const std::string& cacheDir)
{
    std::vector<PlanMetadata> plans;
    if (cacheDir.empty())
        return plans;
    const fs::path dir = fs::path(cacheDir) / "tensorrt";
    std::error_code ec;
    if (!fs::exists(dir, ec))
        return plans;
    fs::directory_iterator it(dir, ec);
    if (ec)
        return Status::io("cannot list '" + dir.string() + "': " + ec.message());
    for (; it != fs::directory_iterator(); it.increment(ec)) {
        const fs::path& path = it->path();
        if (path.extension() != ".json" || !isKey(path.stem().string()))
            continue;
        auto text = readFileIfPresent(path.string());
        if (!text || !text->has_value())
            continue; // removed meanwhile, or unreadable: loadPlan reports it when it matters
        auto meta = metadataFromJson(**text);
        if (meta && planKey(meta->inputs) == path.stem().string())
            plans.push_back(std::move(meta.value()));
    }
    if (ec)
        return Status::io("cannot list '" + dir.string() + "': " + ec.message());
    // ISO 8601 UTC sorts as text.
    std::sort(plans.begin(), plans.end(),
        [](const PlanMetadata& a, const PlanMetadata& b) { return a.created < b.created; });
    return plans;
}

} // namespace jetagent
