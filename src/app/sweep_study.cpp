// Study files for `jetagent sweep`: the matrix read from YAML (or flags) and checked before
// anything is built.
#include <algorithm>
#include <filesystem>
#include <set>

#include "compare.h"
#include "jetagent/base/regular_file.h"
#include "jetagent/base/yaml_document.h"
#include "jetagent/base/yaml_reader.h"
#include "sweep.h"

namespace jetagent {

namespace fs = std::filesystem;

namespace {

constexpr uint64_t kMaxStudyBytes = 1 << 20;
constexpr int kMaxBatch = 256;
constexpr int kMaxThreads = 256;

bool readIntList(YamlMapReader& map, YamlFileReader& file, const std::string& key,
    std::vector<int>& out, int lo, int hi)
{
    YAML::Node node = map.take(key);
    if (!node)
        return false;
    std::vector<int> values;
    if (node.IsScalar()) {
        int64_t v = 0;
        if (!file.integer(node, map.keyPath(key), v))
            return false;
        values.push_back(static_cast<int>(v));
    } else if (node.IsSequence() && node.size() > 0) {
        for (size_t i = 0; i < node.size(); ++i) {
            int64_t v = 0;
            if (!file.integer(node[i], map.keyPath(key) + "[" + std::to_string(i) + "]", v))
                return false;
            values.push_back(static_cast<int>(std::clamp<int64_t>(v, lo - 1, hi + 1)));
        }
    } else {
        map.error(key, node, "expected a number or a non-empty list of numbers");
        return false;
    }
    for (int v : values)
        if (v < lo || v > hi) {
            map.error(key, node,
                "values must be from " + std::to_string(lo) + " to " + std::to_string(hi));
            return false;
        }
    out = values;
    return true;
}

void readPower(YamlMapReader& top, YamlFileReader& file, Study& study)
{
    YAML::Node node = top.take("power");
    if (!node || !file.expectMap(node, "power"))
        return;
    YamlMapReader power(file, node, "power");
    power.string("sysfs_root", study.sysfsRoot);
    power.string("board", study.board);
    power.number("idle_s", study.idleSeconds, 0.0, 600.0);
    power.finish();
}

bool isModelName(const std::string& entry)
{
    return entry.find('/') == std::string::npos && fs::path(entry).extension() != ".onnx";
}

std::string describeList(const std::vector<int>& values)
{
    std::string out;
    for (int v : values)
        out += (out.empty() ? "" : ",") + std::to_string(v);
    return out;
}

} // namespace

Expected<Study> loadStudy(const std::string& path, const std::string& modelDir, bool resolve)
{
    std::string text;
    if (Status s = readRegularFile(path, "study file " + path, kMaxStudyBytes, text); !s)
        return s;
    auto parsed = parseYamlDocument(text, path);
    if (!parsed)
        return parsed.status();
    YamlFileReader file(path);
    Study study;
    study.file = path;
    study.text = text;
    study.engines.clear();
    if (!file.expectMap(parsed.value(), "the study")) {
        return Status::invalid(file.joinedErrors());
    }
    YamlMapReader top(file, parsed.value(), "");
    top.string("study", study.name);
    top.take("description"); // free text, kept in study.text
    top.stringList("models", study.models);
    top.stringList("engines", study.engines);
    top.stringList("optional_engines", study.optionalEngines);
    top.string("baseline", study.baseline);
    readIntList(top, file, "batches", study.batches, 1, kMaxBatch);
    readIntList(top, file, "threads", study.threads, 0, kMaxThreads);
    top.string("inputs", study.inputs);
    top.string("labels", study.labels);
    top.string("config", study.config);
    top.integerAs("iterations", study.iterations, 1, 100'000'000);
    top.number("duration_s", study.durationS, 0.0, 86400.0);
    top.integerAs("warmup", study.warmup, 0, 1'000'000);
    top.integerAs("rounds", study.rounds, 1, 100'000);
    top.number("latency_budget_ms", study.latencyBudgetMs, 0.0, 1e7);
    top.string("cache_dir", study.cacheDir);
    readPower(top, file, study);
    top.finish();
    if (!file.errors().empty())
        return Status::invalid(file.joinedErrors());
    if (study.engines.empty())
        study.engines = {"xnnpack"};
    if (!resolve)
        return study;
    if (Status s = resolveStudy(study, modelDir); !s)
        return s.withContext(path);
    return study;
}

Status resolveStudy(Study& study, const std::string& modelDir)
{
    if (study.models.empty())
        return Status::invalid("no models: give ONNX files or directories (models:, --models)");
    std::vector<std::string> models;
    for (const std::string& entry : study.models) {
        const std::string path =
            isModelName(entry) ? (fs::path(modelDir) / (entry + ".onnx")).string() : entry;
        std::error_code ec;
        if (fs::is_directory(path, ec)) {
            std::vector<std::string> found;
            for (const auto& e : fs::directory_iterator(path, ec))
                if (e.path().extension() == ".onnx" && e.is_regular_file(ec))
                    found.push_back(e.path().string());
            if (found.empty())
                return Status::invalid("models: directory " + path + " holds no .onnx file");
            std::sort(found.begin(), found.end());
            models.insert(models.end(), found.begin(), found.end());
        } else if (!fs::is_regular_file(path, ec)) {
            return Status::notFound("models: " + path + " is not a file" +
                (isModelName(entry) ? " (a bare name is looked up in the model directory, " +
                            modelDir + "; tools/export_torchvision.py " + entry + " makes it)"
                                    : std::string()));
        } else {
            models.push_back(path);
        }
    }
    std::set<std::string> stems;
    for (const std::string& m : models)
        if (!stems.insert(fs::path(m).stem().string()).second)
            return Status::invalid("models: two models are named " + fs::path(m).stem().string() +
                "; results are keyed by the file's name, so give each a different one");
    study.models = models;

    for (const std::string& spec : study.optionalEngines) {
        auto parsed = parseEngineSpec(spec, EngineOptions());
        if (!parsed)
            return parsed.status().withContext("optional_engines");
        const std::string backend = resolveBackend(parsed.value());
        const auto all = listBackends();
        const auto it = std::find_if(
            all.begin(), all.end(), [&](const BackendInfo& b) { return b.name == backend; });
        if (it != all.end() && it->available) {
            if (std::find(study.engines.begin(), study.engines.end(), spec) == study.engines.end())
                study.engines.push_back(spec);
        } else {
            study.skipped.push_back(
                spec + ": " + (it == all.end() ? "no backend " + backend : it->details));
        }
    }
    study.optionalEngines.clear();
    if (study.engines.empty())
        return Status::invalid("no engines: give compare's engine specs (engines:, --engines)");
    std::set<std::string> seen;
    for (const std::string& spec : study.engines) {
        if (!seen.insert(spec).second)
            return Status::invalid("engines: " + spec + " is given twice");
        auto parsed = parseEngineSpec(spec, EngineOptions());
        if (!parsed)
            return parsed.status().withContext("engines");
        const std::string backend = resolveBackend(parsed.value());
        const auto all = listBackends();
        if (std::none_of(
                all.begin(), all.end(), [&](const BackendInfo& b) { return b.name == backend; })) {
            std::string known;
            for (const BackendInfo& b : all)
                known += (known.empty() ? "" : ", ") + b.name;
            return Status::invalid(
                "engines: " + spec + ": no backend '" + backend + "' (known: auto, " + known + ")");
        }
        if (parsed->batch != 1 || parsed->threads != 0)
            return Status::invalid("engines: " + spec +
                ": batch and threads are the study's dimensions (batches:, threads:), not an "
                "engine's");
    }
    if (study.baseline.empty())
        study.baseline = study.engines.front();
    else if (!seen.count(study.baseline))
        return Status::invalid("baseline " + study.baseline + " is not one of the engines");
    for (auto* list : {&study.batches, &study.threads}) {
        std::set<int> unique(list->begin(), list->end());
        if (unique.size() != list->size())
            return Status::invalid(std::string(list == &study.batches ? "batches" : "threads") +
                ": a value is given twice (" + describeList(*list) + ")");
        for (int v : *list)
            if (v < (list == &study.batches ? 1 : 0) ||
                v > (list == &study.batches ? kMaxBatch : kMaxThreads))
                return Status::invalid(std::string(list == &study.batches ? "batches" : "threads") +
                    ": " + std::to_string(v) + " is out of range (" +
                    (list == &study.batches ? "1 to 256)" : "0, the backend's default, to 256)"));
    }
    if (study.iterations < 1 && study.durationS <= 0)
        return Status::invalid("iterations must be at least 1");
    if (study.rounds < 1)
        return Status::invalid("rounds must be at least 1");
    return Status();
}

Expected<Study> studyOfOptions(const SweepOptions& options)
{
    Study study;
    if (!options.studyFile.empty()) {
        auto loaded = loadStudy(options.studyFile, options.modelDir, false);
        if (!loaded)
            return loaded.status();
        study = std::move(loaded).value();
    }
    auto given = [&](const char* name) {
        return std::find(options.given.begin(), options.given.end(), name) != options.given.end();
    };
    const Study& f = options.flags;
    if (given("models"))
        study.models = f.models;
    if (given("engines"))
        study.engines = f.engines;
    if (given("baseline"))
        study.baseline = f.baseline;
    if (given("batch"))
        study.batches = f.batches;
    if (given("threads"))
        study.threads = f.threads;
    if (given("inputs"))
        study.inputs = f.inputs;
    if (given("labels"))
        study.labels = f.labels;
    if (given("config"))
        study.config = f.config;
    if (given("iterations"))
        study.iterations = f.iterations;
    if (given("duration"))
        study.durationS = f.durationS;
    if (given("warmup"))
        study.warmup = f.warmup;
    if (given("rounds"))
        study.rounds = f.rounds;
    if (given("budget"))
        study.latencyBudgetMs = f.latencyBudgetMs;
    if (given("sysfs-root"))
        study.sysfsRoot = f.sysfsRoot;
    if (given("board"))
        study.board = f.board;
    if (given("idle"))
        study.idleSeconds = f.idleSeconds;
    if (given("cache-dir"))
        study.cacheDir = f.cacheDir;
    if (given("name"))
        study.name = f.name;
    if (Status s = resolveStudy(study, options.modelDir); !s)
        return options.studyFile.empty() ? s : s.withContext(options.studyFile);
    if (study.rounds > study.iterations && study.durationS <= 0)
        study.rounds = study.iterations;
    return study;
}

} // namespace jetagent
