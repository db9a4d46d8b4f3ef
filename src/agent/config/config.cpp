// The agent's configuration: one YAML file mapped to typed structs with defaults.
#include "config/config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "jetagent/base/regular_file.h"
#include "jetagent/base/yaml_document.h"
#include "jetagent/base/yaml_reader.h"
#include "jetagent/engines/model_prepare.h"
#include "jetagent/hal/stream_out.h"

namespace fs = std::filesystem;

namespace jetagent {

namespace {

// power.log_interval_ms: shorter slots than the 100 Hz rail rate's would hold one sample or
// none; longer ones than a minute would not show a run's course.
constexpr int kMinPowerLogIntervalMs = 10;
constexpr int kMaxPowerLogIntervalMs = 60'000;

// source.fps and display.fps: one frame every 100 s at the slowest (a slower rate would be a
// period the pacing cannot wait out: 1e-300 fps is an infinite one, and the run went unpaced),
// a millisecond apart at the fastest.
constexpr double kMinFps = 0.01;
constexpr double kMaxFps = 1000.0;

// Three numbers, one per colour channel.
bool readTriple(YamlMapReader& m, const std::string& key, std::array<float, 3>& out, bool positive)
{
    const YAML::Node n = m.take(key);
    if (!n.IsDefined())
        return false;
    if (!n.IsSequence() || n.size() != 3) {
        m.error(
            key, n, "expected a list of 3 numbers (one per channel), got " + describeYamlNode(n));
        return false;
    }
    std::array<float, 3> v {};
    for (size_t i = 0; i < 3; ++i) {
        double d = 0.0;
        if (!yamlNumber(n[i], d)) {
            m.error(key, n[i], "expected a number, got " + describeYamlNode(n[i]));
            return false;
        }
        if (positive && !(d > 0.0)) {
            m.error(key, n[i], "every value must be greater than 0 (got " + n[i].Scalar() + ")");
            return false;
        }
        v[i] = static_cast<float>(d);
    }
    out = v;
    return true;
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

void readCamera(
    YamlFileReader& reader, const YAML::Node& node, const std::string& path, CameraOptions& camera)
{
    readMapping(reader, node, path, [&](YamlMapReader& m) {
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
                    describeYamlNode(controls));
        } else if (controls.IsDefined()) {
            camera.controls.clear();
            for (auto it = controls.begin(); it != controls.end(); ++it) {
                const std::string name = it->first.Scalar();
                if (!it->second.IsScalar() || it->second.Scalar().empty()) {
                    reader.error(it->second, path + ".controls." + name,
                        "expected a number, true/false or a menu entry's name, got " +
                            describeYamlNode(it->second));
                    continue;
                }
                camera.controls.push_back({name, it->second.Scalar()});
            }
        }
    });
}

// A stream's source: `path` is "source" or "sources[N]"; a name is read where one may be given.
void readSource(
    YamlFileReader& reader, const YAML::Node& node, const std::string& path, StreamConfig& stream)
{
    SourceOptions& source = stream.source;
    stream.name.clear(); // the default is set by the caller, once the name is known to be absent
    readMapping(reader, node, path, [&](YamlMapReader& m) {
        if (m.string("name", stream.name) && !validStreamName(stream.name))
            m.error("name", node["name"],
                "may hold only letters, digits, '_', '-' and '.', at most " +
                    std::to_string(kMaxStreamName) +
                    " of them, and not start with '.' or '-' (it names the stream in logs and "
                    "file names)");
        m.string("uri", source.uri);
        for (const char* key : {"width", "height"}) {
            int& side = std::string(key) == "width" ? source.width : source.height;
            if (m.integerAs(key, side, 0, 8192) && side > 0 && side < 16)
                m.error(key, node[key],
                    "must be 0 (the source's own size) or between 16 and 8192 (got " +
                        std::to_string(side) + ")");
        }
        m.numberOrZero("fps", source.fps, kMinFps, kMaxFps, "the source's own rate");
        m.integerAs("seed", source.seed, 0, INT64_MAX);
        m.boolean("loop", source.loop);
        m.integerAs("max_image_pixels", source.maxImagePixels, 1,
            static_cast<int64_t>(kMaxImagePixelsCeiling));
        readCamera(reader, m.take("camera"), path + ".camera", source.camera);
    });
}

// `source:` (one stream) or `sources:` (a list of them, each named), not both.
void readSources(YamlFileReader& reader, const YAML::Node& single, const YAML::Node& list,
    std::vector<StreamConfig>& streams)
{
    if (single.IsDefined() && list.IsDefined()) {
        reader.error(list, "sources",
            "is given beside source: use `sources:` (a list) for several streams, or `source:` "
            "for one, not both");
        return;
    }
    if (!list.IsDefined()) {
        streams.assign(1, StreamConfig());
        streams[0].key = "source";
        readSource(reader, single, "source", streams[0]);
        if (streams[0].name.empty())
            streams[0].name = defaultStreamName(0, true);
        return;
    }
    if (!list.IsSequence() || list.size() == 0 || list.size() > kMaxStreams) {
        reader.error(list, "sources",
            "expected a list of 1 to " + std::to_string(kMaxStreams) +
                " sources (each a mapping with name, uri and the source keys), got " +
                (list.IsSequence() ? std::to_string(list.size()) + " of them"
                                   : describeYamlNode(list)));
        return;
    }
    streams.clear();
    std::set<std::string> names;
    for (size_t i = 0; i < list.size(); ++i) {
        StreamConfig stream;
        stream.key = "sources[" + std::to_string(i) + "]";
        const YAML::Node item = list[i];
        if (!reader.expectMap(item, stream.key))
            continue;
        reader.remember(stream.key, item.Mark().line + 1);
        // Synthetic streams without a seed of their own differ: the Nth gets seed N + 1, so that
        // `sources:` of the same generator are not the same frames four times.
        stream.source.seed = i + 1;
        readSource(reader, item, stream.key, stream);
        if (stream.name.empty())
            stream.name = defaultStreamName(i);
        if (!names.insert(stream.name).second)
            reader.error(item["name"].IsDefined() ? item["name"] : item, stream.key + ".name",
                "stream name '" + stream.name + "' is used twice; give each source its own name");
        streams.push_back(std::move(stream));
    }
}

void readRun(YamlFileReader& reader, const YAML::Node& node, RunConfig& run)
{
    readMapping(reader, node, "run", [&](YamlMapReader& m) {
        m.integerAs("frames", run.frames, 0, INT64_MAX);
        m.numberOrZero("duration_s", run.durationS, 0.001, 1e9, "no limit");
        m.choice("pacing", kPacingNames, run.pacing);
        m.integerAs("queue_depth", run.queueDepth, 1, 1024);
        m.integerAs("memory_budget_mb", run.memoryBudgetMb, 0, int64_t(1) << 30);
        m.numberOrZero("startup_timeout_s", run.startupTimeoutS, 0.1, 1e7, "no limit");
    });
}

void readCalibration(YamlFileReader& reader, const YAML::Node& node, const std::string& path,
    CalibrationConfig& calibration)
{
    readMapping(reader, node, path, [&](YamlMapReader& m) {
        if (!m.take("source").IsDefined())
            m.error(
                "source", node, "missing: a directory of images or a video file to calibrate on");
        m.string("source", calibration.source);
        m.integerAs("frames", calibration.frames, 1, 1'000'000);
        m.integerAs("batch", calibration.batch, 1, 256);
    });
}

void readEngine(YamlFileReader& reader, const YAML::Node& node, const std::string& path,
    EngineOptions& engine, CalibrationConfig& calibration)
{
    readMapping(reader, node, path, [&](YamlMapReader& m) {
        m.string("backend", engine.backend);
        m.choice("device", kDeviceNames, engine.device);
        m.choice("precision", kPrecisionNames, engine.precision);
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
        m.choice("io_memory", kIoMemoryNames, engine.ioMemory);
        const YAML::Node calib = m.take("calibration");
        if (calib.IsDefined())
            readCalibration(reader, calib, path + ".calibration", calibration);
    });
}

void readPreprocess(
    YamlFileReader& reader, const YAML::Node& node, const std::string& path, PreprocessConfig& pre)
{
    if (!reader.expectMap(node, path))
        return;
    YamlMapReader m(reader, node, path);
    m.choice("resize", kResizeModeNames, pre.resize);
    m.integerAs("resize_size", pre.resizeSize, 0, 16384);
    YAML::Node crop = m.take("crop");
    if (crop.IsDefined()) {
        // A single size for square crops, or [width, height].
        auto dimension = [&](const YAML::Node& n, int& out) {
            int64_t v = 0;
            if (!yamlInteger(n, v) || v < 0 || v > 8192) {
                m.error("crop", n,
                    "expected a size from 1 to 8192 pixels (0: the model's), got " +
                        describeYamlNode(n));
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
            m.error(
                "crop", crop, "expected a size or [width, height], got " + describeYamlNode(crop));
        }
    }
    m.choice("interpolation", kInterpolationNames, pre.interpolation);
    m.choice("color", kColorOrderNames, pre.color);
    double divisor = 0.0;
    if (m.number("divisor", divisor, 0.0, 1e9, false))
        pre.divisor = static_cast<float>(divisor);
    readTriple(m, "mean", pre.mean, false);
    readTriple(m, "std", pre.std, true);
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

void readPostprocess(YamlFileReader& reader, const YAML::Node& node, const std::string& path,
    PostprocessConfig& post)
{
    if (!reader.expectMap(node, path))
        return;
    YamlMapReader m(reader, node, path);
    m.choice("output", kOutputKindNames, post.output);
    m.integerAs("top_k", post.topK, 1, 10);
    double smoothing = 0.0;
    if (m.number("smoothing", smoothing, 0.0, 0.999))
        post.smoothing = smoothing;
    m.finish();
}

void readAction(
    YamlFileReader& reader, const YAML::Node& node, const std::string& path, ActionConfig& action)
{
    readMapping(reader, node, path, [&](YamlMapReader& m) {
        m.choice("mode", kActionModeNames, action.mode);
        m.integerAs("clip_length", action.clipLength, 0, 1024);
        m.integerAs("stride", action.stride, 1, 1 << 20);
        m.integerAs("frame_step", action.frameStep, 1, 1024);
        m.choice("layout", kClipLayoutNames, action.layout);
        m.string("head", action.head);
        if (action.mode == ActionMode::Streaming && action.head.empty())
            m.error("head", node,
                "missing: streaming mode needs the temporal head's ONNX file (the task's model is "
                "the "
                "per-frame backbone)");
        if (action.mode == ActionMode::Clip && !action.head.empty())
            m.error("head", node["head"],
                "is for streaming mode only; in clip mode the task's model takes the whole clip");
        if (action.mode == ActionMode::Streaming && node["layout"].IsDefined())
            m.error("layout", node["layout"],
                "is for clip mode only; a streaming head takes N x T x D embeddings");
    });
}

bool nameChars(const std::string& name, size_t max)
{
    return !name.empty() && name.size() <= max && name[0] != '.' && name[0] != '-' &&
        std::all_of(name.begin(), name.end(),
            [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '-' || c == '.'; });
}

// A task's name starts its log files' names ("<name>.frames_000001.jsonl"), which a file system
// takes up to 255 bytes long.
constexpr size_t kMaxTaskName = 200;

bool validTaskName(const std::string& name)
{
    // Not "." or "..", nor a hidden file's name ("...frames.csv" would not show in a listing), nor
    // one that shell tools would take for an option ("-x.frames.csv").
    return nameChars(name, kMaxTaskName);
}

void readTasks(YamlFileReader& reader, const YAML::Node& node, const std::string& baseDir,
    std::vector<TaskConfig>& tasks)
{
    if (!node.IsDefined()) {
        reader.error(node, "tasks", "missing: a config needs at least one task (a model to run)");
        return;
    }
    if (!node.IsSequence() || node.size() == 0) {
        reader.error(
            node, "tasks", "expected a list of at least one task, got " + describeYamlNode(node));
        return;
    }
    std::set<std::string> names;
    for (size_t i = 0; i < node.size(); ++i) {
        const std::string path = "tasks[" + std::to_string(i) + "]";
        const YAML::Node t = node[i];
        if (!reader.expectMap(t, path))
            continue;
        reader.remember(path, t.Mark().line + 1);
        TaskConfig task;
        task.engine.cacheDir = defaultCacheDir();
        YamlMapReader m(reader, t, path);
        m.choice("type", {"classification", "action"}, task.type);
        if (!m.take("model").IsDefined())
            m.error("model", t, "missing: the ONNX model to run");
        m.string("model", task.model);
        m.string("labels", task.labels);
        m.numberOrZero("deadline_ms", task.deadlineMs, 0.001, 1e7, "the source's frame period");
        const YAML::Node streams = m.take("streams");
        if (streams.IsDefined()) {
            if (streams.IsScalar())
                task.streams = {streams.Scalar()};
            else if (streams.IsSequence() && streams.size() == 0)
                m.error("streams", streams,
                    "is empty: name the sources the task serves, or leave the key out for all");
            else if (streams.IsSequence())
                for (const auto& item : streams) {
                    if (!item.IsScalar() || item.Scalar().empty()) {
                        reader.error(item, path + ".streams",
                            "expected stream names, got " + describeYamlNode(item));
                        continue;
                    }
                    task.streams.push_back(item.Scalar());
                }
            else
                m.error("streams", streams,
                    "expected a list of the names of the sources the task serves (default: all), "
                    "got " +
                        describeYamlNode(streams));
            reader.remember(path + ".streams", streams.Mark().line + 1);
        }
        m.numberOrZero("batch_timeout_ms", task.batchTimeoutMs, 0.0, 60000.0,
            "half the fastest stream's frame period");
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
                "may hold only letters, digits, '_', '-' and '.', at most " +
                    std::to_string(kMaxTaskName) +
                    " of them, and not start with '.' or '-' (it names log files)");
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

void readLogging(YamlFileReader& reader, const YAML::Node& node, LoggingConfig& logging)
{
    readMapping(reader, node, "logging", [&](YamlMapReader& m) {
        m.string("dir", logging.dir);
        m.boolean("csv", logging.csv);
        m.boolean("jsonl", logging.jsonl);
        if (int64_t capacity = 0; m.integerOrZero("queue_capacity", capacity, 16, 1 << 20,
                "ten seconds of the source's frames, 256 to 4096"))
            logging.queueCapacity = static_cast<int>(capacity);
        m.choice("level", {"trace", "debug", "info", "warn", "error"}, logging.level);
        m.numberOrZero("status_interval_s", logging.statusIntervalS, 0.1, 3600.0, "none");
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
    });
}

void readPower(
    YamlFileReader& reader, const YAML::Node& node, const std::string& baseDir, PowerConfig& power)
{
    readMapping(reader, node, "power", [&](YamlMapReader& m) {
        m.choice("sampling", kPowerSamplingNames, power.sampling);
        if (m.string("board", power.board) && power.board != "auto" &&
            (power.board.find('/') != std::string::npos ||
                fs::path(power.board).extension() == ".yaml"))
            power.board = resolve(baseDir, expandHome(power.board));
        if (m.string("sysfs_root", power.sysfsRoot))
            power.sysfsRoot = resolve(baseDir, expandHome(power.sysfsRoot));
        m.number("rail_hz", power.railHz, 0.1, 1000.0);
        m.number("state_hz", power.stateHz, 0.01, 100.0);
        m.integerAs("ring_capacity", power.ringCapacity, 64, 10'000'000);
        if (m.integerAs("log_interval_ms", power.logIntervalMs, 0, kMaxPowerLogIntervalMs) &&
            power.logIntervalMs > 0 && power.logIntervalMs < kMinPowerLogIntervalMs)
            m.error("log_interval_ms", node["log_interval_ms"],
                "must be 0 (no power.csv) or from " + std::to_string(kMinPowerLogIntervalMs) +
                    " to " + std::to_string(kMaxPowerLogIntervalMs) + " ms");
        if (power.stateHz > power.railHz)
            m.error("state_hz", node["state_hz"],
                "must not be higher than rail_hz (" + std::to_string(power.railHz) + ")");
    });
}

void readDisplay(YamlFileReader& reader, const YAML::Node& node, DisplayConfig& display)
{
    readMapping(reader, node, "display", [&](YamlMapReader& m) {
        m.boolean("window", display.window);
        if (m.string("output", display.output)) {
            if (std::string why = outputSchemeProblem(display.output); !why.empty()) {
                m.error("output", node["output"], why);
            } else if (isStreamUri(display.output)) {
                if (auto t = parseStreamUri(display.output); !t)
                    m.error("output", node["output"], t.status().message());
            } else {
                if (display.output.rfind("file://", 0) == 0)
                    display.output = display.output.substr(7);
                display.output = expandHome(display.output);
                if (display.output.empty())
                    m.error("output", node["output"], "names no file");
            }
        }
        m.numberOrZero("fps", display.fps, kMinFps, kMaxFps, "the source's rate");
        m.integerAs("bitrate_kbps", display.bitrateKbps, 0, 100000);
    });
}

void readHttp(YamlFileReader& reader, const YAML::Node& node, HttpConfig& http)
{
    readMapping(reader, node, "http", [&](YamlMapReader& m) {
        m.string("listen", http.listen, true);
        m.string("token", http.token, true);
        m.boolean("metrics_only", http.metricsOnly);
        std::string key;
        if (std::string problem = httpConfigProblem(http, key); !problem.empty()) {
            const std::string name = key.substr(std::string("http.").size());
            m.error(name, node[name].IsDefined() ? node[name] : node, problem);
        }
    });
}

void readMqtt(
    YamlFileReader& reader, const YAML::Node& node, const std::string& baseDir, MqttConfig& mqtt)
{
    if (!node.IsDefined())
        return; // no telemetry
    readMapping(reader, node, "mqtt", [&](YamlMapReader& m) {
        m.string("host", mqtt.host);
        m.integerAs("port", mqtt.port, 1, 65535);
        m.string("client_id", mqtt.clientId);
        m.string("username", mqtt.username);
        if (m.string("password_file", mqtt.passwordFile))
            mqtt.passwordFile = resolve(baseDir, expandHome(mqtt.passwordFile));
        m.integerAs("keepalive_s", mqtt.keepaliveS, 5, 3600);
        const YAML::Node tls = m.take("tls");
        if (tls.IsDefined())
            readMapping(reader, tls, "mqtt.tls", [&](YamlMapReader& t) {
                for (auto [key, file] :
                    {std::pair<const char*, std::string*> {"ca_file", &mqtt.tls.caFile},
                        {"cert_file", &mqtt.tls.certFile}, {"key_file", &mqtt.tls.keyFile}})
                    if (t.string(key, *file))
                        *file = resolve(baseDir, expandHome(*file));
                t.boolean("insecure", mqtt.tls.insecure);
            });
        m.string("topic_prefix", mqtt.topicPrefix);
        m.number("interval_s", mqtt.intervalS, 0.1, 86400.0);
        m.integerAs("queue", mqtt.queue, 1, 1'000'000);
        m.number("drain_s", mqtt.drainS, 0.0, 600.0);
        std::string key;
        if (std::string problem = mqttConfigProblem(mqtt, key); !problem.empty()) {
            const std::string first = key.substr(0, key.find('.'));
            const YAML::Node section = node[first].IsDefined() ? node[first] : node;
            const bool inTls = first == "tls" && section.IsMap() && section[key.substr(4)];
            m.error(key, inTls ? section[key.substr(4)] : section, problem);
        }
    });
}

// chip and line of a GPIO section: the line is an offset (a number) or a line name.
void readGpioLine(YamlMapReader& m, const YAML::Node& node, GpioLineSpec& line)
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

// One GPIO section (marker, alert, trigger) of the mapping `gpio`: absent, it stays disabled;
// present, it is enabled with its line, what `fields` reads (given the section's node) and
// active_low.
template <typename Section, typename Fields>
void readGpioSection(YamlFileReader& reader, YamlMapReader& gpio, const std::string& key,
    Section& section, Fields fields)
{
    const YAML::Node node = gpio.take(key);
    if (!node.IsDefined())
        return;
    readMapping(reader, node, gpio.keyPath(key), [&](YamlMapReader& s) {
        section.enabled = true;
        readGpioLine(s, node, section.line);
        fields(s, node);
        s.boolean("active_low", section.activeLow);
    });
}

void readGpio(YamlFileReader& reader, const YAML::Node& node, GpioConfig& gpio)
{
    readMapping(reader, node, "gpio", [&](YamlMapReader& m) {
        GpioMarkerConfig& marker = gpio.marker;
        readGpioSection(reader, m, "marker", marker, [&](YamlMapReader& s, const YAML::Node&) {
            s.choice("mode", kMarkerModeNames, marker.mode);
            s.string("task", marker.task);
        });
        GpioAlertConfig& alert = gpio.alert;
        readGpioSection(reader, m, "alert", alert, [&](YamlMapReader& s, const YAML::Node& at) {
            s.string("task", alert.task);
            if (!s.take("label").IsDefined())
                s.error("label", at, "missing: the label whose score raises the alert");
            s.string("label", alert.label);
            s.number("threshold", alert.threshold, 0.0, 1.0);
            s.number("hold_s", alert.holdS, 0.0, 3600.0);
        });
        GpioTriggerConfig& trigger = gpio.trigger;
        readGpioSection(reader, m, "trigger", trigger, [&](YamlMapReader& s, const YAML::Node&) {
            s.choice("mode", kTriggerModeNames, trigger.mode);
            s.number("debounce_ms", trigger.debounceMs, 0.0, 10000.0);
        });
    });
}

int lineOf(const YamlFileReader& reader, const std::string& key)
{
    auto it = reader.lines().find(key);
    return it == reader.lines().end() ? 0 : it->second;
}

// Each task's streams name sources of the config, once each; every source is served by a task.
void checkTaskStreams(YamlFileReader& reader, const AgentConfig& config)
{
    std::vector<bool> served(config.sources.size(), false);
    for (size_t t = 0; t < config.tasks.size(); ++t) {
        const TaskConfig& task = config.tasks[t];
        const std::string key = "tasks[" + std::to_string(t) + "].streams";
        const int line = lineOf(reader, key);
        std::set<std::string> seen;
        for (const std::string& name : task.streams) {
            const int index = config.streamIndex(name);
            if (index < 0) {
                std::string known;
                for (const StreamConfig& s : config.sources)
                    known += (known.empty() ? "" : ", ") + s.name;
                reader.errorAtLine(
                    line, key, "no source is named '" + name + "' (the sources: " + known + ")");
                continue;
            }
            if (!seen.insert(name).second)
                reader.errorAtLine(line, key, "'" + name + "' is named twice");
            served[static_cast<size_t>(index)] = true;
        }
        if (task.streams.empty())
            served.assign(served.size(), true);
    }
    if (config.tasks.empty())
        return;
    for (size_t s = 0; s < served.size(); ++s)
        if (!served[s]) {
            reader.errorAtLine(lineOf(reader, config.sources[s].key), config.sources[s].key,
                "no task serves stream '" + config.sources[s].name +
                    "' (list it in a task's `streams`, or remove it)");
        }
}

} // namespace

bool validStreamName(const std::string& name)
{
    return nameChars(name, kMaxStreamName);
}

std::string defaultStreamName(size_t index, bool single)
{
    return single ? std::string("main") : "stream" + std::to_string(index);
}

int AgentConfig::streamIndex(const std::string& name) const
{
    for (size_t i = 0; i < sources.size(); ++i)
        if (sources[i].name == name)
            return static_cast<int>(i);
    return -1;
}

std::vector<size_t> AgentConfig::taskStreams(size_t task) const
{
    std::vector<size_t> out;
    if (task < tasks.size())
        for (const std::string& name : tasks[task].streams)
            if (const int i = streamIndex(name); i >= 0)
                out.push_back(static_cast<size_t>(i));
    if (out.empty())
        for (size_t i = 0; i < sources.size(); ++i)
            out.push_back(i);
    return out;
}

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
            ": expected a mapping with source, run, tasks, logging, power, display, http, mqtt and "
            "gpio "
            "sections, "
            "got " +
            describeYamlNode(root));

    YamlFileReader reader(name);
    try {
        YamlMapReader top(reader, root, "");
        const YAML::Node single = top.take("source");
        readSources(reader, single, top.take("sources"), config.sources);
        readRun(reader, top.take("run"), config.run);
        readTasks(reader, top.take("tasks"), baseDir, config.tasks);
        checkTaskStreams(reader, config);
        readLogging(reader, top.take("logging"), config.logging);
        readPower(reader, top.take("power"), baseDir, config.power);
        readDisplay(reader, top.take("display"), config.display);
        readHttp(reader, top.take("http"), config.http);
        readMqtt(reader, top.take("mqtt"), baseDir, config.mqtt);
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
        reader.addError(name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    if (!reader.errors().empty())
        return Status::invalid(reader.joinedErrors());
    config.lines = reader.lines();
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
