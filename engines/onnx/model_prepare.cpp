// The preparation pipeline per backend, and its on-disk cache.
#include "jetagent/engines/model_prepare.h"

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>
#include <onnx/common/version.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include "jetagent/base/clock.h"
#include "jetagent/base/json_text.h"
#include "jetagent/base/log.h"
#include "jetagent/engines/cache_file.h"
#include "jetagent/engines/model_validate.h"
#include "jetagent/engines/sha256.h"

namespace jetagent {

namespace {

namespace fs = std::filesystem;

// Bump when a pass changes what it produces: cached models of older revisions are then ignored.
// Entries without a digest beside them (written before digests were kept) are prepared again once,
// with a warning, like any damaged entry.
constexpr const char* kPreparationRevision = "2"; // 2: Mod/Pow/Not/ScatterND fold, ratio-0 Dropout

using PassFn = Status (*)(onnx::ModelProto&, PassReport*);

struct NamedPass {
    const char* name;
    PassFn fn;
};

const NamedPass kPasses[] = {
    {"infer-shapes", inferShapes},
    {"eliminate-identity", eliminateIdentity},
    {"einsum-matmul", einsumToMatMul},
    {"fold-constants", foldConstants},
    {"fold-batchnorm", foldBatchNorm},
    {"canonicalize-opencv", canonicalizeForOpenCV},
    {"prune", pruneUnused},
};

Status runPass(onnx::ModelProto& model, const std::string& name, PassReport* report)
{
    const std::string batchPrefix = "set-batch=";
    if (name.rfind(batchPrefix, 0) == 0)
        return setBatch(model, std::stoll(name.substr(batchPrefix.size())), report);
    if (name == "free-batch")
        return setBatch(model, 0, report);
    for (const auto& pass : kPasses)
        if (name == pass.name)
            return pass.fn(model, report);
    return Status::invalid("unknown preparation pass '" + name + "'");
}

nlohmann::json reportToJson(const PreparedModel& p)
{
    nlohmann::json passes = nlohmann::json::array();
    for (const auto& r : p.passes)
        passes.push_back({{"pass", r.pass}, {"removed", r.removed}, {"folded", r.folded},
            {"rewritten", r.rewritten}, {"ms", nsToMs(r.ns)}, {"notes", r.notes}});
    return {{"pass_list", p.passList}, {"key", p.key}, {"bytes", p.bytes->size()},
        {"nodes_before", p.nodesBefore}, {"nodes_after", p.nodesAfter},
        {"prepare_ms", nsToMs(p.ns)}, {"passes", passes}};
}

bool reportFromJson(const nlohmann::json& j, PreparedModel* p)
{
    try {
        p->nodesBefore = j.at("nodes_before").get<int>();
        p->nodesAfter = j.at("nodes_after").get<int>();
        for (const auto& r : j.at("passes")) {
            PassReport report;
            report.pass = r.at("pass").get<std::string>();
            report.removed = r.at("removed").get<int>();
            report.folded = r.at("folded").get<int>();
            report.rewritten = r.at("rewritten").get<int>();
            report.ns = static_cast<int64_t>(r.at("ms").get<double>() * 1e6);
            report.notes = r.at("notes").get<std::vector<std::string>>();
            p->passes.push_back(std::move(report));
        }
        return true;
    } catch (const nlohmann::json::exception&) {
        return false;
    }
}

// A cached prepared model and its report, each checked against its digest; nullopt and the
// reason in `damaged` when either is damaged, nullopt alone when there is no entry.
std::optional<std::pair<std::string, std::string>> readCachedEntry(
    const fs::path& onnxPath, const fs::path& reportPath, std::string* damaged)
{
    CacheEntryRead model = readCacheEntry(onnxPath.string());
    CacheEntryRead report = readCacheEntry(reportPath.string());
    if (model.bytes && report.bytes)
        return std::make_pair(std::move(*model.bytes), std::move(*report.bytes));
    if (!model.damaged.empty())
        *damaged = "'" + onnxPath.string() + "': " + model.damaged;
    else if (!report.damaged.empty())
        *damaged = "'" + reportPath.string() + "': " + report.damaged;
    else if (model.bytes || report.bytes)
        *damaged =
            "half of it is missing ('" + (model.bytes ? reportPath : onnxPath).string() + "')";
    return std::nullopt;
}

} // namespace

Expected<std::vector<std::string>> preparationPasses(const std::string& backend, int64_t batch)
{
    const std::string batchPass = batch > 0 ? "set-batch=" + std::to_string(batch) : "free-batch";
    if (backend == "opencv")
        // Shapes are fixed first so that constant folding can resolve the shape arithmetic of
        // dynamic-batch exports; BatchNormalization folds once Identity copies are private.
        return std::vector<std::string> {batchPass, "infer-shapes", "eliminate-identity",
            "fold-constants", "fold-batchnorm", "infer-shapes", "canonicalize-opencv", "prune"};
    if (backend == "xnnpack")
        // As for OpenCV, without its dialect: the compiler reads standard ONNX. Einsum becomes
        // MatMul before shapes are inferred, so that its output's dimensions are known.
        return std::vector<std::string> {batchPass, "einsum-matmul", "infer-shapes",
            "eliminate-identity", "fold-constants", "fold-batchnorm", "infer-shapes", "prune"};
    if (backend == "tensorrt")
        return std::vector<std::string> {
            batchPass, "infer-shapes", "eliminate-identity", "fold-constants", "prune"};
    return Status::invalid("no preparation is defined for backend '" + backend + "'");
}

std::string defaultCacheDir()
{
    auto env = [](const char* name) {
        const char* v = std::getenv(name); // NOLINT(concurrency-mt-unsafe): read at start-up
        return v && *v ? std::string(v) : std::string();
    };
    std::string dir = env("CACHE_DIRECTORY");
    if (!dir.empty())
        return dir.substr(0, dir.find(':')); // systemd lists several as a:b
    dir = env("XDG_CACHE_HOME");
    if (!dir.empty())
        return dir + "/jetagent";
    dir = env("HOME");
    if (!dir.empty())
        return dir + "/.cache/jetagent";
    return std::string();
}

Expected<PreparedModel> prepareModel(const ModelFile& model, const PrepareOptions& options)
{
    const int64_t start = monotonicNs();
    auto passes = preparationPasses(options.backend, options.batch);
    if (!passes)
        return passes.status();
    if (!model.proto)
        return Status::invalid("model '" + model.path + "' was not parsed");

    PreparedModel prepared;
    for (const auto& p : passes.value())
        prepared.passList += (prepared.passList.empty() ? "" : ",") + p;
    Sha256 keyHash;
    const std::string material = model.sha256 + "\n" + prepared.passList + "\nrevision " +
        kPreparationRevision + "\nonnx " + onnx::LAST_RELEASE_VERSION;
    keyHash.update(material.data(), material.size());
    const std::string key = keyHash.finishHex();
    prepared.key = key;

    fs::path onnxPath, reportPath;
    if (!options.cacheDir.empty()) {
        const fs::path dir = fs::path(options.cacheDir) / "prepared";
        std::error_code ec;
        fs::create_directories(dir, ec);
        if (ec || !fs::is_directory(dir))
            return Status::io("engine cache directory '" + dir.string() +
                "' cannot be created: " + ec.message() +
                " (set engine.cache_dir to a writable directory, or to \"\" to prepare in "
                "memory every time)");
        if (::access(dir.c_str(), W_OK) != 0)
            return Status::io("engine cache directory '" + dir.string() +
                "' is not writable (set engine.cache_dir to a writable directory, or to \"\" "
                "to prepare in memory every time)");
        onnxPath = dir / (key + ".onnx");
        reportPath = dir / (key + ".json");
        prepared.cachePath = onnxPath.string();

        // Both files are checked against their digests (hundreds of MB/s with the CPU's SHA-256
        // instructions): the size alone let a flipped byte through to the backend.
        std::string damaged;
        if (auto entry = readCachedEntry(onnxPath, reportPath, &damaged)) {
            std::string& bytes = entry->first;
            const auto j = nlohmann::json::parse(entry->second, nullptr, false);
            PreparedModel cached = prepared;
            if (!j.is_discarded() && reportFromJson(j, &cached) &&
                j.value("bytes", uint64_t {0}) == bytes.size()) {
                cached.bytes = std::make_shared<const std::string>(std::move(bytes));
                cached.fromCache = true;
                cached.ns = monotonicNs() - start;
                return cached;
            }
            damaged = "its report does not describe it";
        }
        if (!damaged.empty())
            logger("engine")->warn(
                "prepared model '{}' in the cache is damaged ({}); preparing it again and "
                "replacing the entry",
                onnxPath.string(), damaged);
    }

    onnx::ModelProto copy = *model.proto;
    prepared.nodesBefore = copy.graph().node_size();
    for (const auto& name : passes.value()) {
        PassReport report;
        const int64_t passStart = monotonicNs();
        Status s = runPass(copy, name, &report);
        report.ns = monotonicNs() - passStart;
        report.pass = name; // as the pass list names it: "set-batch=8", not "set-batch"
        if (!s)
            return s.withContext("preparing model '" + model.path + "' for " + options.backend +
                " (pass " + name + ")");
        prepared.passes.push_back(std::move(report));
    }
    // The passes computed constants (Reshape shapes, Slice steps, Resize scales) that the checks
    // at load time could not see; the backends read them.
    if (Status s = validateModel(copy, model.path); !s)
        return s.withContext("preparing model '" + model.path + "' for " + options.backend);
    prepared.nodesAfter = copy.graph().node_size();
    auto bytes = std::make_shared<std::string>();
    if (copy.ByteSizeLong() > static_cast<size_t>(INT32_MAX))
        return Status::unsupported("prepared model '" + model.path +
            "' is larger than 2 GiB, more than one ONNX file holds; the " + options.backend +
            " backend cannot load it");
    if (!copy.SerializeToString(bytes.get()))
        return Status::runtime("cannot serialise the prepared model of '" + model.path + "'");
    prepared.bytes = std::move(bytes);
    prepared.ns = monotonicNs() - start;

    if (!onnxPath.empty()) {
        Status s = writeCacheEntry(onnxPath.string(), *prepared.bytes);
        if (s)
            s = writeCacheEntry(reportPath.string(), jsonText(reportToJson(prepared), 1));
        if (!s)
            return s.withContext("caching the prepared model of '" + model.path + "'");
    }
    return prepared;
}

} // namespace jetagent
