// The agent's configuration: one YAML file mapped to typed structs with defaults.
#include "config.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "jetagent/base/regular_file.h"
#include "jetagent/base/yaml_document.h"
#include "jetagent/engines/model_prepare.h"

namespace fs = std::filesystem;

namespace jetagent {

namespace {

size_t editDistance(const std::string& a, const std::string& b)
{
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t up = row[j];
            row[j] =
                std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = up;
        }
    }
    return row[b.size()];
}

std::string describeNode(const YAML::Node& node)
{
    if (node.IsMap())
        return "a mapping";
    if (node.IsSequence())
        return "a list";
    if (node.IsNull())
        return "nothing";
    return "'" + node.Scalar() + "'";
}

// Collects errors as "file:line:col: key: message" and remembers where each key was.
class ConfigReader {
public:
    ConfigReader(std::string file, AgentConfig& config)
        : file_(std::move(file)), config_(config) { }

    void error(const YAML::Node& node, const std::string& key, const std::string& message)
    {
        std::ostringstream out;
        out << file_;
        if (node.IsDefined() && node.Mark().line >= 0)
            out << ':' << node.Mark().line + 1 << ':' << node.Mark().column + 1;
        out << ": " << key << ": " << message;
        errors.push_back(out.str());
    }

    // The same at a line alone, for a value whose own position means nothing (see yamlValueLine).
    void errorAtLine(int line, const std::string& key, const std::string& message)
    {
        errors.push_back(file_ + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " +
            key + ": " + message);
    }

    void remember(const std::string& key, int line)
    {
        if (line > 0)
            config_.lines[key] = line;
    }

    std::vector<std::string> errors;

private:
    std::string file_;
    AgentConfig& config_;
};

// One YAML mapping being read: each known key is taken once; finish() reports the rest as unknown.
class MapReader {
public:
    // YAML::Node is a handle: copying it shares the parsed document.
    MapReader(ConfigReader& reader, const YAML::Node& node, std::string path)
        : reader_(reader), node_(node), path_(std::move(path))
    {
    }

    std::string keyPath(const std::string& key) const
    {
        return path_.empty() ? key : path_ + "." + key;
    }

    // The value under `key`, or an undefined node when absent.
    YAML::Node take(const std::string& key)
    {
        known_.insert(key);
        if (!node_.IsMap())
            return YAML::Node(YAML::NodeType::Undefined);
        for (const auto& entry : node_)
            if (entry.first.IsScalar() && entry.first.Scalar() == key) {
                keyLines_[key] = yamlValueLine(entry.first, entry.second);
                reader_.remember(keyPath(key), keyLines_[key]);
                return entry.second;
            }
        return YAML::Node(YAML::NodeType::Undefined);
    }

    void error(const std::string& key, const YAML::Node& at, const std::string& message)
    {
        // An empty value ("key:" and nothing) has the position of the next token, lines later.
        const auto line = keyLines_.find(key);
        if (at.IsDefined() && at.IsNull() && line != keyLines_.end())
            reader_.errorAtLine(line->second, keyPath(key), message);
        else
            reader_.error(at, keyPath(key), message);
    }

    bool integer(const std::string& key, int64_t& out, int64_t lo, int64_t hi)
    {
        YAML::Node n = take(key);
        if (!n.IsDefined())
            return false;
        if (!n.IsScalar())
            return fail(key, n, "expected an integer, got " + describeNode(n));
        const std::string& s = n.Scalar();
        errno = 0;
        char* end = nullptr;
        long long v = std::strtoll(s.c_str(), &end, 10);
        if (s.empty() || *end != '\0' || errno == ERANGE)
            return fail(key, n, "expected an integer, got '" + s + "'");
        if (v < lo || v > hi)
            return fail(key, n,
                "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + " (got " +
                    s + ")");
        out = v;
        return true;
    }

    template <typename T>
    bool integerAs(const std::string& key, T& out, int64_t lo, int64_t hi)
    {
        int64_t v = 0;
        if (!integer(key, v, lo, hi))
            return false;
        out = static_cast<T>(v);
        return true;
    }

    bool number(const std::string& key, double& out, double lo, double hi, bool loInclusive = true)
    {
        YAML::Node n = take(key);
        if (!n.IsDefined())
            return false;
        double v = 0.0;
        if (!parseNumber(n, v))
            return fail(key, n, "expected a number, got " + describeNode(n));
        if (!(loInclusive ? v >= lo : v > lo) || v > hi) {
            std::ostringstream range;
            range << "must be " << (loInclusive ? "at least " : "greater than ") << lo
                  << " and at most " << hi << " (got " << n.Scalar() << ")";
            return fail(key, n, range.str());
        }
        out = v;
        return true;
    }

    bool boolean(const std::string& key, bool& out)
    {
        YAML::Node n = take(key);
        if (!n.IsDefined())
            return false;
        bool v = false;
        if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v))
            return fail(key, n, "expected true or false, got " + describeNode(n));
        out = v;
        return true;
    }

    // A text value; `allowEmpty` takes "" (a quoted empty string) as a value of its own.
    bool string(const std::string& key, std::string& out, bool allowEmpty = false)
    {
        YAML::Node n = take(key);
        if (!n.IsDefined())
            return false;
        const bool quotedEmpty = allowEmpty && n.IsScalar() && n.Tag() == "!";
        if (!n.IsScalar() || (n.Scalar().empty() && !quotedEmpty))
            return fail(key, n, "expected a text value, got " + describeNode(n));
        out = n.Scalar();
        return true;
    }

    // A text value that must be one of `choices`; returns its index.
    bool choice(const std::string& key, const std::vector<std::string>& choices, int& index)
    {
        std::string v;
        if (!string(key, v))
            return false;
        auto it = std::find(choices.begin(), choices.end(), v);
        if (it == choices.end()) {
            std::string list;
            for (const auto& c : choices)
                list += (list.empty() ? "" : ", ") + c;
            return fail(key, node_[key], "must be one of " + list + " (got '" + v + "')");
        }
        index = static_cast<int>(it - choices.begin());
        return true;
    }

    // Three numbers, one per colour channel.
    bool triple(const std::string& key, std::array<float, 3>& out, bool positive)
    {
        YAML::Node n = take(key);
        if (!n.IsDefined())
            return false;
        if (!n.IsSequence() || n.size() != 3)
            return fail(
                key, n, "expected a list of 3 numbers (one per channel), got " + describeNode(n));
        std::array<float, 3> v {};
        for (size_t i = 0; i < 3; ++i) {
            double d = 0.0;
            if (!parseNumber(n[i], d))
                return fail(key, n[i], "expected a number, got " + describeNode(n[i]));
            if (positive && !(d > 0.0))
                return fail(
                    key, n[i], "every value must be greater than 0 (got " + n[i].Scalar() + ")");
            v[i] = static_cast<float>(d);
        }
        out = v;
        return true;
    }

    void finish()
    {
        if (!node_.IsMap())
            return;
        for (auto it = node_.begin(); it != node_.end(); ++it) {
            const std::string key = it->first.Scalar();
            if (known_.count(key))
                continue;
            std::string hint;
            size_t best = 3;
            for (const auto& k : known_) {
                size_t d = editDistance(key, k);
                if (d < best) {
                    best = d;
                    hint = k;
                }
            }
            std::string known;
            for (const auto& k : known_)
                known += (known.empty() ? "" : ", ") + k;
            reader_.error(it->first, keyPath(key),
                "unknown key" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
                    "; known here: " + known);
        }
    }

private:
    static bool parseNumber(const YAML::Node& n, double& out)
    {
        if (!n.IsScalar() || n.Scalar().empty())
            return false;
        const std::string& s = n.Scalar();
        errno = 0;
        char* end = nullptr;
        double v = std::strtod(s.c_str(), &end);
        if (*end != '\0' || errno == ERANGE || !std::isfinite(v))
            return false;
        out = v;
        return true;
    }

    bool fail(const std::string& key, const YAML::Node& at, const std::string& message)
    {
        error(key, at, message);
        return false;
    }

    ConfigReader& reader_;
    YAML::Node node_;
    std::string path_;
    std::set<std::string> known_;
    std::map<std::string, int> keyLines_; // the line each taken key's value is reported at
};

// Checks that `node` is a mapping (or absent) and reports it otherwise.
bool expectMap(ConfigReader& reader, const YAML::Node& node, const std::string& key)
{
    if (!node.IsDefined() || node.IsMap())
        return true;
    reader.error(node, key, "expected a mapping of keys, got " + describeNode(node));
    return false;
}

std::string resolve(const std::string& baseDir, const std::string& path)
{
    if (path.empty() || fs::path(path).is_absolute() || baseDir.empty())
        return path;
    return (fs::path(baseDir) / path).lexically_normal().string();
}

// "~/x" as shells read it, so that a config can name a directory in the user's home.
std::string expandHome(const std::string& path)
{
    if (path != "~" && path.rfind("~/", 0) != 0)
        return path;
    const char* home = std::getenv("HOME"); // NOLINT(concurrency-mt-unsafe): read at start-up
    return home && *home ? std::string(home) + path.substr(1) : path;
}

void readCamera(ConfigReader& reader, const YAML::Node& node, CameraOptions& camera)
{
    if (!expectMap(reader, node, "source.camera"))
        return;
    MapReader m(reader, node, "source.camera");
    if (m.string("format", camera.format)) {
        const std::string& f = camera.format;
        const bool fourcc = f.size() == 4 || f == "MJPEG" || f == "mjpeg";
        if (f != "auto" && !fourcc)
            m.error("format", node["format"],
                "expected auto or a four-character V4L2 format such as YUYV, MJPG, NV12, RGB3, "
                "BGR3 or GREY (got '" +
                    f + "')");
    }
    m.integerAs("buffers", camera.buffers, 2, 32);
    m.number("stall_timeout_s", camera.stallTimeoutS, 0.05, 3600.0);
    m.number("reconnect_max_s", camera.reconnectMaxS, 0.1, 3600.0);
    m.integerAs("flip", camera.flip, 0, 7);
    m.integerAs("latency_ms", camera.latencyMs, 0, 10000);
    const YAML::Node controls = m.take("controls");
    if (controls.IsDefined() && !controls.IsMap()) {
        m.error("controls", controls,
            "expected a mapping of control names to values (see `jetagent probe cameras`), "
            "got " +
                describeNode(controls));
    } else if (controls.IsDefined()) {
        camera.controls.clear();
        for (auto it = controls.begin(); it != controls.end(); ++it) {
            const std::string name = it->first.Scalar();
            if (!it->second.IsScalar() || it->second.Scalar().empty()) {
                reader.error(it->second, "source.camera.controls." + name,
                    "expected a number, true/false or a menu entry's name, got " +
                        describeNode(it->second));
                continue;
            }
            camera.controls.push_back({name, it->second.Scalar()});
        }
    }
    m.finish();
}

void readSource(ConfigReader& reader, const YAML::Node& node, SourceOptions& source)
{
    if (!expectMap(reader, node, "source"))
        return;
    MapReader m(reader, node, "source");
    m.string("uri", source.uri);
    for (const char* key : {"width", "height"}) {
        int& side = std::string(key) == "width" ? source.width : source.height;
        if (m.integerAs(key, side, 0, 8192) && side > 0 && side < 16)
            m.error(key, node[key],
                "must be 0 (the source's own size) or between 16 and 8192 (got " +
                    std::to_string(side) + ")");
    }
    m.number("fps", source.fps, 0.0, 1000.0, true);
    m.integerAs("seed", source.seed, 0, INT64_MAX);
    m.boolean("loop", source.loop);
    m.integerAs(
        "max_image_pixels", source.maxImagePixels, 1, static_cast<int64_t>(kMaxImagePixelsCeiling));
    readCamera(reader, m.take("camera"), source.camera);
    m.finish();
}

void readRun(ConfigReader& reader, const YAML::Node& node, RunConfig& run)
{
    if (!expectMap(reader, node, "run"))
        return;
    MapReader m(reader, node, "run");
    m.integerAs("frames", run.frames, 0, INT64_MAX);
    m.number("duration_s", run.durationS, 0.0, 1e9);
    int pacing = 0;
    if (m.choice("pacing", {"realtime", "none"}, pacing))
        run.pacing = pacing == 0 ? Pacing::Realtime : Pacing::None;
    m.integerAs("queue_depth", run.queueDepth, 1, 1024);
    m.integerAs("memory_budget_mb", run.memoryBudgetMb, 0, int64_t(1) << 30);
    m.number("startup_timeout_s", run.startupTimeoutS, 0.0, 1e7);
    m.finish();
}

void readCalibration(ConfigReader& reader, const YAML::Node& node, const std::string& path,
    CalibrationConfig& calibration)
{
    if (!expectMap(reader, node, path))
        return;
    MapReader m(reader, node, path);
    if (!m.take("source").IsDefined())
        m.error("source", node, "missing: a directory of images or a video file to calibrate on");
    m.string("source", calibration.source);
    m.integerAs("frames", calibration.frames, 1, 1'000'000);
    m.integerAs("batch", calibration.batch, 1, 256);
    m.finish();
}

void readEngine(ConfigReader& reader, const YAML::Node& node, const std::string& path,
    EngineOptions& engine, CalibrationConfig& calibration)
{
    if (!expectMap(reader, node, path))
        return;
    MapReader m(reader, node, path);
    m.string("backend", engine.backend);
    int index = 0;
    if (m.choice("device", {"cpu", "gpu", "dla0", "dla1"}, index))
        parseDevice(
            std::vector<std::string> {"cpu", "gpu", "dla0", "dla1"}[static_cast<size_t>(index)],
            &engine.device);
    if (m.choice("precision", {"fp32", "fp16", "int8"}, index))
        parsePrecision(
            std::vector<std::string> {"fp32", "fp16", "int8"}[static_cast<size_t>(index)],
            &engine.precision);
    m.integerAs("batch", engine.batch, 1, 256);
    m.integerAs("threads", engine.threads, 0, 256);
    m.boolean("fusion", engine.fusion);
    m.boolean("onednn", engine.onednn);
    m.string("cache_dir", engine.cacheDir, true); // "" = no cache
    m.integerAs("batch_min", engine.batchMin, 0, 256);
    m.integerAs("batch_max", engine.batchMax, 0, 256);
    if (engine.profileMin() > engine.batch)
        m.error("batch_min", node["batch_min"],
            "is " + std::to_string(engine.batchMin) + ", above batch (" +
                std::to_string(engine.batch) + "), the batch the profile is optimised for");
    if (engine.profileMax() < engine.batch)
        m.error("batch_max", node["batch_max"],
            "is " + std::to_string(engine.batchMax) + ", below batch (" +
                std::to_string(engine.batch) + "), the batch the profile is optimised for");
    m.integerAs("workspace_mb", engine.workspaceMb, 0, 1 << 20);
    m.boolean("dla_gpu_fallback", engine.gpuFallback);
    m.boolean("timing_cache", engine.timingCache);
    m.boolean("cuda_graph", engine.cudaGraph);
    if (m.choice("io_memory", {"auto", "mapped", "device"}, index))
        engine.ioMemory = index == 0 ? IoMemory::Auto
            : index == 1             ? IoMemory::Mapped
                                     : IoMemory::Device;
    const YAML::Node calib = m.take("calibration");
    if (calib.IsDefined())
        readCalibration(reader, calib, path + ".calibration", calibration);
    m.finish();
}

void readPreprocess(
    ConfigReader& reader, const YAML::Node& node, const std::string& path, PreprocessConfig& pre)
{
    if (!expectMap(reader, node, path))
        return;
    MapReader m(reader, node, path);
    int index = 0;
    if (m.choice("resize", {"shorter_side", "stretch"}, index))
        pre.resize = index == 0 ? ResizeMode::ShorterSide : ResizeMode::Stretch;
    m.integerAs("resize_size", pre.resizeSize, 0, 16384);
    YAML::Node crop = m.take("crop");
    if (crop.IsDefined()) {
        // A single size for square crops, or [width, height].
        auto dimension = [&](const YAML::Node& n, int& out) {
            bool valid = n.IsScalar() && !n.Scalar().empty();
            int64_t v = 0;
            if (valid) {
                char* end = nullptr;
                v = std::strtoll(n.Scalar().c_str(), &end, 10);
                valid = *end == '\0' && v >= 0 && v <= 8192;
            }
            if (!valid) {
                m.error("crop", n,
                    "expected a size from 1 to 8192 pixels (0: the model's), got " +
                        describeNode(n));
                return false;
            }
            out = static_cast<int>(v);
            return true;
        };
        if (crop.IsSequence() && crop.size() == 2) {
            int w = 0, h = 0;
            if (dimension(crop[0], w) && dimension(crop[1], h) && (w == 0) != (h == 0))
                m.error(
                    "crop", crop, "width and height must both be sizes, or both 0 (the model's)");
            else if (w > 0 || h > 0) {
                pre.cropWidth = w;
                pre.cropHeight = h;
            }
        } else if (crop.IsScalar()) {
            int s = 0;
            if (dimension(crop, s))
                pre.cropWidth = pre.cropHeight = s;
        } else {
            m.error("crop", crop, "expected a size or [width, height], got " + describeNode(crop));
        }
    }
    if (m.choice("interpolation", {"nearest", "linear", "area", "cubic"}, index))
        pre.interpolation = static_cast<Interpolation>(index);
    if (m.choice("color", {"rgb", "bgr"}, index))
        pre.color = index == 0 ? ColorOrder::Rgb : ColorOrder::Bgr;
    double divisor = 0.0;
    if (m.number("divisor", divisor, 0.0, 1e9, false))
        pre.divisor = static_cast<float>(divisor);
    m.triple("mean", pre.mean, false);
    m.triple("std", pre.std, true);
    m.finish();
    // Every pixel value v in 0..255 becomes ((v / divisor) - mean) / std in float32; values that
    // are finite as written can still overflow or divide by zero once rounded to float
    // (divisor: 1e-300 is 0 in float32), and every score after them would be NaN. The refusal
    // names the value that does it, as written and at its line, or all three when only their
    // combination overflows.
    for (size_t c = 0; c < 3; ++c)
        for (const float v : {0.0f, 255.0f}) {
            const float x = ((v / pre.divisor) - pre.mean[c]) / pre.std[c];
            if (std::isfinite(x))
                continue;
            const auto usable = [](float f) { return std::isfinite(f) && f != 0.0f; };
            std::string key; // the one value that does it, if one does
            float asFloat = 0.0f;
            if (!usable(pre.divisor)) {
                key = "divisor";
                asFloat = pre.divisor;
            } else if (!usable(pre.std[c])) {
                key = "std";
                asFloat = pre.std[c];
            } else if (!std::isfinite(pre.mean[c])) {
                key = "mean";
                asFloat = pre.mean[c];
            }
            const std::string advice = "; use values of the size the model was trained with "
                                       "(e.g. divisor 255, ImageNet's mean and std)";
            // A value's node (the channel's for mean and std) and its text as written; a value
            // left at its default has neither, and shows as the float it is.
            const auto valueNode = [&](const std::string& name) {
                const YAML::Node n = node[name];
                if (!n.IsDefined() || name == "divisor" || !n.IsSequence())
                    return n;
                return YAML::Node(n[c]);
            };
            const auto written = [&](const std::string& name, float fallback) {
                const YAML::Node n = valueNode(name);
                if (n.IsDefined() && n.IsScalar())
                    return n.Scalar();
                std::ostringstream f;
                f << fallback;
                return f.str();
            };
            std::ostringstream text;
            if (!key.empty()) {
                text << written(key, asFloat)
                     << (key == "divisor" ? "" : " (channel " + std::to_string(c) + ")") << " is "
                     << asFloat << " in float32, so pixel value " << v
                     << " becomes a non-finite number in float32 (((v / divisor) - mean) / std)"
                     << advice;
                const YAML::Node n = valueNode(key);
                reader.error(n.IsDefined() ? n : node, path + "." + key, text.str());
            } else {
                text << "divisor " << written("divisor", pre.divisor) << ", mean "
                     << written("mean", pre.mean[c]) << " and std " << written("std", pre.std[c])
                     << " (channel " << c << ") turn pixel value " << v
                     << " into a non-finite number in float32 (((v / divisor) - mean) / std)"
                     << advice;
                reader.error(node, path, text.str());
            }
            return;
        }
}

void readPostprocess(
    ConfigReader& reader, const YAML::Node& node, const std::string& path, PostprocessConfig& post)
{
    if (!expectMap(reader, node, path))
        return;
    MapReader m(reader, node, path);
    int index = 0;
    if (m.choice("output", {"logits", "probabilities"}, index))
        post.output = index == 0 ? OutputKind::Logits : OutputKind::Probabilities;
    m.integerAs("top_k", post.topK, 1, 10);
    double smoothing = 0.0;
    if (m.number("smoothing", smoothing, 0.0, 0.999))
        post.smoothing = smoothing;
    m.finish();
}

void readAction(
    ConfigReader& reader, const YAML::Node& node, const std::string& path, ActionConfig& action)
{
    if (!expectMap(reader, node, path))
        return;
    MapReader m(reader, node, path);
    int index = 0;
    if (m.choice("mode", {"clip", "streaming"}, index))
        action.mode = index == 0 ? ActionMode::Clip : ActionMode::Streaming;
    m.integerAs("clip_length", action.clipLength, 0, 1024);
    m.integerAs("stride", action.stride, 1, 1 << 20);
    m.integerAs("frame_step", action.frameStep, 1, 1024);
    if (m.choice("layout", {"ncthw", "ntchw"}, index))
        action.layout = index == 0 ? ClipLayout::Ncthw : ClipLayout::Ntchw;
    m.string("head", action.head);
    if (action.mode == ActionMode::Streaming && action.head.empty())
        m.error("head", node,
            "missing: streaming mode needs the temporal head's ONNX file (the task's model is the "
            "per-frame backbone)");
    if (action.mode == ActionMode::Clip && !action.head.empty())
        m.error("head", node["head"],
            "is for streaming mode only; in clip mode the task's model takes the whole clip");
    if (action.mode == ActionMode::Streaming && node["layout"].IsDefined())
        m.error("layout", node["layout"],
            "is for clip mode only; a streaming head takes N x T x D embeddings");
    m.finish();
}

bool validTaskName(const std::string& name)
{
    return !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '_' || c == '-' || c == '.';
    });
}

void readTasks(ConfigReader& reader, const YAML::Node& node, const std::string& baseDir,
    std::vector<TaskConfig>& tasks)
{
    if (!node.IsDefined()) {
        reader.error(node, "tasks", "missing: a config needs at least one task (a model to run)");
        return;
    }
    if (!node.IsSequence() || node.size() == 0) {
        reader.error(
            node, "tasks", "expected a list of at least one task, got " + describeNode(node));
        return;
    }
    std::set<std::string> names;
    for (size_t i = 0; i < node.size(); ++i) {
        const std::string path = "tasks[" + std::to_string(i) + "]";
        const YAML::Node t = node[i];
        if (!expectMap(reader, t, path))
            continue;
        reader.remember(path, t.Mark().line + 1);
        TaskConfig task;
        task.engine.cacheDir = defaultCacheDir();
        MapReader m(reader, t, path);
        int type = 0;
        if (m.choice("type", {"classification", "action"}, type))
            task.type = type == 0 ? "classification" : "action";
        if (!m.take("model").IsDefined())
            m.error("model", t, "missing: the ONNX model to run");
        m.string("model", task.model);
        m.string("labels", task.labels);
        m.number("deadline_ms", task.deadlineMs, 0.0, 1e7);
        readEngine(reader, m.take("engine"), path + ".engine", task.engine, task.calibration);
        readPreprocess(reader, m.take("preprocess"), path + ".preprocess", task.preprocess);
        readPostprocess(reader, m.take("postprocess"), path + ".postprocess", task.postprocess);
        const YAML::Node action = m.take("action");
        if (task.type == "action") {
            // The section is optional (clip mode, T from the model) but its keys are checked
            // even when it is absent, so a streaming task without a head is caught.
            readAction(reader, action.IsDefined() ? action : YAML::Node(YAML::NodeType::Map),
                path + ".action", task.action);
        } else if (action.IsDefined()) {
            m.error("action", action, "is for tasks of type action only");
        }
        if (m.string("name", task.name) && !validTaskName(task.name))
            m.error("name", t["name"],
                "may hold only letters, digits, '_', '-' and '.' (it names log files)");
        m.finish();

        if (task.name.empty() && !task.model.empty())
            task.name = fs::path(task.model).stem().string();
        if (!task.name.empty() && !names.insert(task.name).second)
            m.error("name", t,
                "task name '" + task.name + "' is used twice; give each task its own name");
        task.model = resolve(baseDir, task.model);
        task.labels = resolve(baseDir, task.labels);
        task.action.head = resolve(baseDir, task.action.head);
        task.engine.cacheDir = resolve(baseDir, expandHome(task.engine.cacheDir));
        task.calibration.source = resolve(baseDir, expandHome(task.calibration.source));
        tasks.push_back(std::move(task));
    }
}

void readLogging(ConfigReader& reader, const YAML::Node& node, LoggingConfig& logging)
{
    if (!expectMap(reader, node, "logging"))
        return;
    MapReader m(reader, node, "logging");
    m.string("dir", logging.dir);
    m.boolean("csv", logging.csv);
    m.boolean("jsonl", logging.jsonl);
    m.integerAs("queue_capacity", logging.queueCapacity, 16, 1 << 20);
    int level = 0;
    const std::vector<std::string> levels = {"trace", "debug", "info", "warn", "error"};
    if (m.choice("level", levels, level))
        logging.level = levels[static_cast<size_t>(level)];
    m.number("status_interval_s", logging.statusIntervalS, 0.0, 3600.0);
    m.integerAs("max_summary_samples", logging.maxSummarySamples, 1000, 1'000'000);
    // Whole MiB: up to 64 GiB a file and 64 TiB in all (the counts stay within an int).
    m.integerAs("max_file_mb", logging.maxFileMb, 0, 1 << 16);
    m.integerAs("max_total_mb", logging.maxTotalMb, 0, 1 << 26);
    if (logging.maxTotalMb > 0) {
        // The cap removes closed segments only: it needs rotation, and room for the file being
        // written beside at least one closed segment.
        const YAML::Node at = node["max_total_mb"] ? node["max_total_mb"] : node["max_file_mb"];
        const std::string key = node["max_total_mb"] ? "max_total_mb" : "max_file_mb";
        if (logging.maxFileMb == 0)
            m.error(key, at,
                "a cap on the total (max_total_mb " + std::to_string(logging.maxTotalMb) +
                    ") needs rotation: set max_file_mb above 0, or max_total_mb: 0 for no cap");
        else if (logging.maxTotalMb < 2 * static_cast<int64_t>(logging.maxFileMb))
            m.error(key, at,
                "max_total_mb (" + std::to_string(logging.maxTotalMb) +
                    ") must be at least 2 x max_file_mb (" + std::to_string(logging.maxFileMb) +
                    "), so that the file being written and a closed one fit; 0 = no cap");
    }
    m.finish();
}

void readPower(
    ConfigReader& reader, const YAML::Node& node, const std::string& baseDir, PowerConfig& power)
{
    if (!expectMap(reader, node, "power"))
        return;
    MapReader m(reader, node, "power");
    int sampling = 0;
    if (m.choice("sampling", {"auto", "on", "off"}, sampling))
        power.sampling = sampling == 0 ? PowerSampling::Auto
            : sampling == 1            ? PowerSampling::On
                                       : PowerSampling::Off;
    if (m.string("board", power.board) && power.board != "auto" &&
        (power.board.find('/') != std::string::npos ||
            fs::path(power.board).extension() == ".yaml"))
        power.board = resolve(baseDir, expandHome(power.board));
    if (m.string("sysfs_root", power.sysfsRoot))
        power.sysfsRoot = resolve(baseDir, expandHome(power.sysfsRoot));
    m.number("rail_hz", power.railHz, 0.0, 1000.0, false);
    m.number("state_hz", power.stateHz, 0.0, 100.0, false);
    m.integerAs("ring_capacity", power.ringCapacity, 64, 10'000'000);
    if (power.stateHz > power.railHz)
        m.error("state_hz", node["state_hz"],
            "must not be higher than rail_hz (" + std::to_string(power.railHz) + ")");
    m.finish();
}

void readDisplay(ConfigReader& reader, const YAML::Node& node, DisplayConfig& display)
{
    if (!expectMap(reader, node, "display"))
        return;
    MapReader m(reader, node, "display");
    m.boolean("window", display.window);
    if (m.string("output", display.output)) {
        if (display.output.rfind("file://", 0) == 0)
            display.output = display.output.substr(7);
        display.output = expandHome(display.output);
        if (display.output.empty())
            m.error("output", node["output"], "names no file");
    }
    m.number("fps", display.fps, 0.0, 1000.0);
    m.finish();
}

// chip and line of a GPIO section: the line is an offset (a number) or a line name.
void readGpioLine(MapReader& m, const YAML::Node& node, GpioLineSpec& line)
{
    if (!m.take("line").IsDefined())
        m.error(
            "line", node, "missing: the line's offset on the chip, or its name (see `gpioinfo`)");
    m.string("chip", line.chip);
    std::string text;
    if (!m.string("line", text))
        return;
    const bool digits =
        std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
    if (digits) {
        int64_t offset = 0;
        if (m.integer("line", offset, 0, 65535))
            line.offset = offset;
    } else {
        line.name = text;
    }
}

void readGpio(ConfigReader& reader, const YAML::Node& node, GpioConfig& gpio)
{
    if (!expectMap(reader, node, "gpio"))
        return;
    MapReader m(reader, node, "gpio");
    int index = 0;
    const YAML::Node marker = m.take("marker");
    if (marker.IsDefined() && expectMap(reader, marker, "gpio.marker")) {
        GpioMarkerConfig& c = gpio.marker;
        c.enabled = true;
        MapReader s(reader, marker, "gpio.marker");
        readGpioLine(s, marker, c.line);
        if (s.choice("mode", {"busy", "toggle"}, index))
            c.mode = index == 0 ? MarkerMode::Busy : MarkerMode::Toggle;
        s.string("task", c.task);
        s.boolean("active_low", c.activeLow);
        s.finish();
    }
    const YAML::Node alert = m.take("alert");
    if (alert.IsDefined() && expectMap(reader, alert, "gpio.alert")) {
        GpioAlertConfig& c = gpio.alert;
        c.enabled = true;
        MapReader s(reader, alert, "gpio.alert");
        readGpioLine(s, alert, c.line);
        s.string("task", c.task);
        if (!s.take("label").IsDefined())
            s.error("label", alert, "missing: the label whose score raises the alert");
        s.string("label", c.label);
        s.number("threshold", c.threshold, 0.0, 1.0);
        s.number("hold_s", c.holdS, 0.0, 3600.0);
        s.boolean("active_low", c.activeLow);
        s.finish();
    }
    const YAML::Node trigger = m.take("trigger");
    if (trigger.IsDefined() && expectMap(reader, trigger, "gpio.trigger")) {
        GpioTriggerConfig& c = gpio.trigger;
        c.enabled = true;
        MapReader s(reader, trigger, "gpio.trigger");
        readGpioLine(s, trigger, c.line);
        if (s.choice("mode", {"level", "toggle"}, index))
            c.mode = index == 0 ? TriggerMode::Level : TriggerMode::Toggle;
        s.number("debounce_ms", c.debounceMs, 0.0, 10000.0);
        s.boolean("active_low", c.activeLow);
        s.finish();
    }
    m.finish();
}

} // namespace

std::string AgentConfig::where(const std::string& key) const
{
    auto option = overriddenBy.find(key);
    if (option != overriddenBy.end())
        return option->second + " (" + key + ")";
    auto it = lines.find(key);
    std::string file = path.empty() ? "config" : path;
    if (it == lines.end())
        return file + ": " + key;
    return file + ":" + std::to_string(it->second) + ": " + key;
}

Expected<AgentConfig> parseConfig(
    const std::string& text, const std::string& name, const std::string& baseDir)
{
    AgentConfig config;
    config.path = name;
    auto document = parseYamlDocument(text, name);
    if (!document)
        return document.status();
    const YAML::Node root = std::move(document).value();
    if (!root.IsMap())
        return Status::invalid(name +
            ": expected a mapping with source, run, tasks, logging, power, display and gpio "
            "sections, "
            "got " +
            describeNode(root));

    ConfigReader reader(name, config);
    try {
        MapReader top(reader, root, "");
        readSource(reader, top.take("source"), config.source);
        readRun(reader, top.take("run"), config.run);
        readTasks(reader, top.take("tasks"), baseDir, config.tasks);
        readLogging(reader, top.take("logging"), config.logging);
        readPower(reader, top.take("power"), baseDir, config.power);
        readDisplay(reader, top.take("display"), config.display);
        readGpio(reader, top.take("gpio"), config.gpio);
        top.finish();
        // Each section's text, to tell on a reload what changed (comments and layout do not
        // count: the text is re-emitted from the parsed node).
        for (const auto& entry : root) {
            const std::string key = entry.first.as<std::string>();
            if (key == "tasks" && entry.second.IsSequence())
                for (size_t i = 0; i < entry.second.size(); ++i)
                    config.sections["tasks[" + std::to_string(i) + "]"] =
                        YAML::Dump(entry.second[i]);
            else
                config.sections[key] = YAML::Dump(entry.second);
        }
    } catch (const YAML::Exception& e) {
        reader.errors.push_back(name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    if (!reader.errors.empty()) {
        std::string all;
        for (const auto& e : reader.errors)
            all += (all.empty() ? "" : "\n") + e;
        return Status::invalid(all);
    }
    return config;
}

Expected<AgentConfig> loadConfig(const std::string& path)
{
    constexpr uint64_t kMaxConfigBytes = uint64_t(4) << 20; // a config is a few KiB
    std::string text;
    if (Status s = readRegularFile(path, "config file '" + path + "'", kMaxConfigBytes, text); !s)
        return s;
    return parseConfig(text, path, fs::path(path).parent_path().string());
}

} // namespace jetagent
