// Checks the logs of one jetagent run against vivid in the VM: frame count, timestamps, sequence
// numbers, capture rate, device drops and, for the recovery run, the reconnect.
//
//   jetagent_vivid_check capture  LOG_DIR --format F --width W --height H --fps R --min-frames N
//                                 [--tolerance T]
//   jetagent_vivid_check recovery LOG_DIR --format F --width W --height H --fps R --min-frames N
//                                 --reloaded-ns NS --min-frames-after M [--tolerance T]
//   jetagent_vivid_check streams  LOG_DIR --streams NAME:FORMAT,NAME:FORMAT --width W --height H
//                                 --fps R --min-frames N [--tolerance T] [--run-log FILE]
//   jetagent_vivid_check model MODEL_ONNX LABELS_TXT
//   jetagent_vivid_check stalls OUT_FILE LATE_MS
//
// LOG_DIR is the --log-dir of the run: it holds one run directory with summary.json and the task's
// <task>.frames.csv. Prints what it measured; exit status 0 when every check passes, 1 when one
// fails, 2 for bad arguments or unreadable logs. `streams` checks a run of one task over several
// devices (sources:): each stream as `capture` checks one, from its own rows of the log (the
// stream column) and its own entries of the summary, and, in FILE (the run's output), the format
// each stream negotiated. `model` writes the VM's task model: the mean of
// each colour plane of an 8x8 input (GlobalAveragePool), so the guest's task costs next to nothing
// and the test measures capture, not the emulated CPU's inference speed. `stalls` runs in the VM
// beside a scenario: it sleeps 10 ms at a time, as vivid's frame thread sleeps between frames, and
// on SIGTERM writes how late it woke (the worst, and how often by more than LATE_MS) to OUT_FILE.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr double kDefaultTolerance = 0.05; // the bound on the capture rate
constexpr double kNsPerSecond = 1e9;

struct Options {
    std::string mode;
    fs::path logDir;
    std::string format;
    int width = 0;
    int height = 0;
    double fps = 0.0;
    double tolerance = kDefaultTolerance;
    long long minFrames = 0;
    long long reloadedNs = -1; // recovery: CLOCK_MONOTONIC time the driver was loaded again
    long long minFramesAfter = 0; // recovery: frames captured after reloadedNs
    // streams: each stream's name and the pixel format it must negotiate, in sources: order.
    std::vector<std::pair<std::string, std::string>> streams;
    fs::path runLog; // streams: the run's output, where each stream's negotiated format is
};

struct FrameRow {
    long long id = 0;
    long long captureNs = 0;
    double waitMs = 0.0; // worker start - capture time
    double serviceMs = 0.0; // preprocess + inference + postprocess
    bool ok = false;
    std::string stream; // the stream column; empty in logs written before it
};

// Splits one CSV line; fields may be quoted with doubled quotes inside, as frame_log.cpp writes.
std::vector<std::string> splitCsv(const std::string& line)
{
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
            fields.back() += '"';
            ++i;
        } else if (c == '"') {
            quoted = !quoted;
        } else if (c == ',' && !quoted) {
            fields.emplace_back();
        } else if (c != '\r') {
            fields.back() += c;
        }
    }
    return fields;
}

bool parseInteger(const std::string& text, long long& value)
{
    if (text.empty())
        return false;
    char* end = nullptr;
    errno = 0;
    value = std::strtoll(text.c_str(), &end, 10);
    return errno == 0 && end != nullptr && *end == '\0';
}

bool parseNumber(const std::string& text, double& value)
{
    if (text.empty())
        return false;
    char* end = nullptr;
    errno = 0;
    value = std::strtod(text.c_str(), &end);
    return errno == 0 && end != nullptr && *end == '\0';
}

bool parseOptions(int argc, char** argv, Options& o)
{
    if (argc < 3)
        return false;
    o.mode = argv[1];
    o.logDir = argv[2];
    if (o.mode != "capture" && o.mode != "recovery" && o.mode != "streams")
        return false;
    std::map<std::string, std::string> flags;
    for (int i = 3; i + 1 < argc; i += 2)
        flags[argv[i]] = argv[i + 1];
    if ((argc - 3) % 2 != 0)
        return false;
    bool good = true;
    auto integer = [&](const char* key, long long& out, bool required) {
        const auto it = flags.find(key);
        if (it == flags.end()) {
            good = good && !required;
            return;
        }
        good = good && parseInteger(it->second, out);
        flags.erase(it);
    };
    auto number = [&](const char* key, double& out, bool required) {
        const auto it = flags.find(key);
        if (it == flags.end()) {
            good = good && !required;
            return;
        }
        good = good && parseNumber(it->second, out);
        flags.erase(it);
    };
    const bool recovery = o.mode == "recovery";
    long long width = 0;
    long long height = 0;
    if (const auto it = flags.find("--format"); it != flags.end()) {
        o.format = it->second;
        flags.erase(it);
    }
    if (const auto it = flags.find("--streams"); it != flags.end()) {
        std::stringstream list(it->second);
        for (std::string item; std::getline(list, item, ',');) {
            const size_t colon = item.find(':');
            if (colon == std::string::npos || colon == 0 || colon + 1 == item.size())
                good = false;
            else
                o.streams.emplace_back(item.substr(0, colon), item.substr(colon + 1));
        }
        flags.erase(it);
    }
    if (const auto it = flags.find("--run-log"); it != flags.end()) {
        o.runLog = it->second;
        flags.erase(it);
    }
    integer("--width", width, true);
    integer("--height", height, true);
    number("--fps", o.fps, true);
    number("--tolerance", o.tolerance, false);
    integer("--min-frames", o.minFrames, true);
    integer("--reloaded-ns", o.reloadedNs, recovery);
    integer("--min-frames-after", o.minFramesAfter, recovery);
    o.width = static_cast<int>(width);
    o.height = static_cast<int>(height);
    for (const auto& [key, value] : flags) {
        std::fprintf(stderr, "unknown option %s %s\n", key.c_str(), value.c_str());
        good = false;
    }
    const bool streams = o.mode == "streams";
    return good && (streams ? o.streams.size() >= 2 && o.format.empty() : !o.format.empty()) &&
        o.fps > 0.0;
}

// The one run directory under the --log-dir of a run.
bool findRunDir(const fs::path& logDir, fs::path& runDir)
{
    std::error_code ec;
    int found = 0;
    for (const auto& entry : fs::directory_iterator(logDir, ec)) {
        if (entry.is_directory() && fs::exists(entry.path() / "summary.json")) {
            runDir = entry.path();
            ++found;
        }
    }
    if (ec)
        std::fprintf(stderr, "cannot list %s: %s\n", logDir.c_str(), ec.message().c_str());
    else if (found != 1)
        std::fprintf(stderr, "expected one run directory with summary.json under %s, found %d\n",
            logDir.c_str(), found);
    return !ec && found == 1;
}

bool readFrames(const fs::path& csvPath, std::vector<FrameRow>& rows)
{
    std::ifstream in(csvPath);
    std::string line;
    if (!in || !std::getline(in, line)) {
        std::fprintf(stderr, "cannot read %s\n", csvPath.c_str());
        return false;
    }
    const std::vector<std::string> header = splitCsv(line);
    if (header.size() < 2 || header[0] != "frame_id" || header[1] != "capture_ns") {
        std::fprintf(
            stderr, "%s: the header does not start frame_id,capture_ns\n", csvPath.c_str());
        return false;
    }
    std::map<std::string, size_t> columns;
    for (size_t i = 0; i < header.size(); ++i)
        columns[header[i]] = i;
    for (const char* name : {"ok", "wait_ms", "preprocess_ms", "inference_ms", "postprocess_ms"}) {
        if (columns.count(name) == 0) {
            std::fprintf(stderr, "%s: no %s column\n", csvPath.c_str(), name);
            return false;
        }
    }
    size_t lineNumber = 1;
    while (std::getline(in, line)) {
        ++lineNumber;
        const std::vector<std::string> fields = splitCsv(line);
        FrameRow row;
        double preprocessMs = 0.0;
        double inferenceMs = 0.0;
        double postprocessMs = 0.0;
        if (fields.size() != header.size() || !parseInteger(fields[0], row.id) ||
            !parseInteger(fields[1], row.captureNs) ||
            !parseNumber(fields[columns["wait_ms"]], row.waitMs) ||
            !parseNumber(fields[columns["preprocess_ms"]], preprocessMs) ||
            !parseNumber(fields[columns["inference_ms"]], inferenceMs) ||
            !parseNumber(fields[columns["postprocess_ms"]], postprocessMs)) {
            std::fprintf(
                stderr, "%s:%zu: malformed row: %s\n", csvPath.c_str(), lineNumber, line.c_str());
            return false;
        }
        row.ok = fields[columns["ok"]] == "1";
        row.serviceMs = preprocessMs + inferenceMs + postprocessMs;
        if (const auto stream = columns.find("stream"); stream != columns.end())
            row.stream = fields[stream->second];
        rows.push_back(row);
    }
    return true;
}

class Checker {
public:
    void expect(bool good, const std::string& what)
    {
        std::printf("  %s %s\n", good ? "ok  " : "FAIL", what.c_str());
        failures_ += good ? 0 : 1;
    }
    int failures() const { return failures_; }

private:
    int failures_ = 0;
};

// printf into a std::string, for the lines the checks print.
__attribute__((format(printf, 1, 2))) std::string describe(const char* format, ...)
{
    std::vector<char> text(256);
    std::va_list args;
    va_start(args, format);
    std::vsnprintf(text.data(), text.size(), format, args);
    va_end(args);
    return text.data();
}

double rateOf(const std::vector<FrameRow>& rows, size_t first, size_t last)
{
    if (last <= first || rows[last].captureNs <= rows[first].captureNs)
        return 0.0;
    return static_cast<double>(last - first) * kNsPerSecond /
        static_cast<double>(rows[last].captureNs - rows[first].captureNs);
}

bool withinTolerance(double rate, const Options& o)
{
    return std::fabs(rate - o.fps) <= o.tolerance * o.fps;
}

// Checks that hold for every scenario: what was negotiated, every frame logged and processed,
// timestamps strictly increasing.
void checkCommon(
    const Options& o, const json& summary, const std::vector<FrameRow>& rows, Checker& check)
{
    const json& source = summary.at("source");
    const std::string detail = source.value("detail", std::string());
    std::printf("  source: %s\n", detail.c_str());
    check.expect(source.value("width", 0) == o.width && source.value("height", 0) == o.height,
        describe("size %dx%d as configured", source.value("width", 0), source.value("height", 0)));
    check.expect(detail.find(" " + o.format + " ") != std::string::npos,
        "negotiated pixel format " + o.format + " (from source.detail)");
    const double nominal = source.value("fps", 0.0);
    check.expect(withinTolerance(nominal, o),
        describe("nominal rate %.3f fps within %.0f%% of %.3f", nominal, o.tolerance * 100, o.fps));
    const auto captured = source.value("frames_captured", 0LL);
    check.expect(captured == static_cast<long long>(rows.size()),
        describe("every captured frame logged: %lld captured, %zu rows", captured, rows.size()));
    size_t notOk = 0;
    size_t nonIncreasing = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
        notOk += rows[i].ok ? 0 : 1;
        if (i > 0 && rows[i].captureNs <= rows[i - 1].captureNs)
            ++nonIncreasing;
    }
    check.expect(notOk == 0, describe("frames the task failed on: %zu", notOk));
    check.expect(nonIncreasing == 0,
        describe("capture_ns strictly increasing (%zu steps back or equal)", nonIncreasing));
    // A stage time is a difference of two CLOCK_MONOTONIC readings in order: never negative.
    size_t negativeWaits = 0;
    double minWaitMs = 0.0;
    double serviceSumMs = 0.0;
    double serviceMaxMs = 0.0;
    for (size_t i = 0; i < rows.size(); ++i) {
        negativeWaits += rows[i].waitMs < 0.0 ? 1 : 0;
        minWaitMs = i == 0 ? rows[i].waitMs : std::min(minWaitMs, rows[i].waitMs);
        serviceSumMs += rows[i].serviceMs;
        serviceMaxMs = std::max(serviceMaxMs, rows[i].serviceMs);
    }
    check.expect(negativeWaits == 0,
        describe("wait_ms >= 0 (%zu frames below, lowest %.3f ms)", negativeWaits, minWaitMs));
    if (!rows.empty())
        std::printf("  task time per frame: mean %.2f ms, max %.2f ms (frame period %.1f ms)\n",
            serviceSumMs / static_cast<double>(rows.size()), serviceMaxMs, 1000.0 / o.fps);
    check.expect(source.contains("stats"), "source.stats present (a live source)");
}

void checkCapture(
    const Options& o, const json& summary, const std::vector<FrameRow>& rows, Checker& check)
{
    const auto n = static_cast<long long>(rows.size());
    check.expect(n >= o.minFrames, describe("frames %lld >= %lld", n, o.minFrames));
    if (rows.empty())
        return;
    size_t gaps = 0;
    for (size_t i = 1; i < rows.size(); ++i)
        gaps += rows[i].id == rows[i - 1].id + 1 ? 0 : 1;
    check.expect(rows.front().id == 0, describe("first frame_id %lld is 0", rows.front().id));
    check.expect(gaps == 0, describe("frame_id consecutive (%zu gaps)", gaps));
    const double rate = rateOf(rows, 0, rows.size() - 1);
    check.expect(withinTolerance(rate, o),
        describe("capture rate %.3f fps within %.0f%% of %.3f", rate, o.tolerance * 100, o.fps));
    const json stats = summary.at("source").value("stats", json::object());
    const auto dropped = stats.value("dropped_by_device", -1LL);
    check.expect(dropped == 0, describe("source.stats.dropped_by_device %lld == 0", dropped));
}

void checkRecovery(
    const Options& o, const json& summary, const std::vector<FrameRow>& rows, Checker& check)
{
    const json stats = summary.at("source").value("stats", json::object());
    const auto disconnects = stats.value("disconnects", 0LL);
    const auto reconnects = stats.value("reconnects", 0LL);
    check.expect(disconnects >= 1, describe("source.stats.disconnects %lld >= 1", disconnects));
    check.expect(reconnects >= 1, describe("source.stats.reconnects %lld >= 1", reconnects));
    size_t before = 0;
    size_t idsNotIncreasing = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
        before += rows[i].captureNs < o.reloadedNs ? 1 : 0;
        if (i > 0 && rows[i].id <= rows[i - 1].id)
            ++idsNotIncreasing;
    }
    const size_t after = rows.size() - before;
    check.expect(static_cast<long long>(before) >= o.minFrames,
        describe("frames before the reload %zu >= %lld", before, o.minFrames));
    check.expect(static_cast<long long>(after) >= o.minFramesAfter,
        describe("frames after the reload %zu >= %lld", after, o.minFramesAfter));
    check.expect(idsNotIncreasing == 0,
        describe("frame_id strictly increasing across the reconnect (%zu steps back or equal)",
            idsNotIncreasing));
    if (after >= 2) {
        const double rate = rateOf(rows, before, rows.size() - 1);
        check.expect(withinTolerance(rate, o),
            describe("capture rate after the reload %.3f fps within %.0f%% of %.3f", rate,
                o.tolerance * 100, o.fps));
        std::printf("  first frame after the reload: %.3f s after the driver was loaded again\n",
            static_cast<double>(rows[before].captureNs - o.reloadedNs) / kNsPerSecond);
    }
}

const json* entryNamed(const json& list, const std::string& name)
{
    if (!list.is_array())
        return nullptr;
    for (const json& entry : list)
        if (entry.value("name", std::string()) == name)
            return &entry;
    return nullptr;
}

// One task over several devices: each stream captured at the nominal rate without a device drop
// or a gap in its frame ids, every frame it captured logged under its name and counted in the
// task's per-stream figures, and its own pixel format.
void checkStreams(const Options& o, const json& summary, const std::vector<FrameRow>& rows,
    const std::string& runLog, Checker& check)
{
    std::map<std::string, std::vector<FrameRow>> byStream;
    for (const FrameRow& row : rows)
        byStream[row.stream].push_back(row);
    std::string named;
    for (const auto& [name, format] : o.streams)
        named += (named.empty() ? "" : ",") + name;
    std::string logged;
    for (const auto& [name, streamRows] : byStream)
        logged += (logged.empty() ? "" : ",") + (name.empty() ? "(none)" : name);
    size_t known = 0;
    for (const auto& [name, format] : o.streams)
        known += byStream.count(name);
    check.expect(known == o.streams.size() && byStream.size() == o.streams.size(),
        "the log's stream column names exactly " + named + " (it has " + logged + ")");

    const json& task = summary.at("tasks").at(0);
    json served = json::array();
    for (const auto& [name, format] : o.streams)
        served.push_back(name);
    check.expect(task.value("streams_served", json()) == served,
        "the task serves " + served.dump() + " (" + task.value("streams_served", json()).dump() +
            ")");
    long long processedSum = 0;
    const json sources = summary.value("streams", json::array());
    const json taskStreams = task.value("streams", json::array());
    for (const auto& [name, format] : o.streams) {
        const std::vector<FrameRow>& own = byStream[name];
        std::printf("  stream %s: %zu frames\n", name.c_str(), own.size());
        const json* source = entryNamed(sources, name);
        const json* figures = entryNamed(taskStreams, name);
        check.expect(source != nullptr, "summary.streams has " + name);
        check.expect(figures != nullptr, "the task's streams have " + name);
        if (source == nullptr || figures == nullptr)
            continue;
        check.expect(source->value("kind", std::string()) == "v4l2" &&
                source->value("width", 0) == o.width && source->value("height", 0) == o.height,
            describe("%s: v4l2 at %dx%d", name.c_str(), source->value("width", 0),
                source->value("height", 0)));
        const double nominal = source->value("fps", 0.0);
        check.expect(withinTolerance(nominal, o),
            describe("%s: nominal rate %.3f fps within %.0f%% of %.3f", name.c_str(), nominal,
                o.tolerance * 100, o.fps));
        const auto captured = source->value("frames_captured", 0LL);
        check.expect(captured == static_cast<long long>(own.size()),
            describe("%s: every captured frame logged: %lld captured, %zu rows", name.c_str(),
                captured, own.size()));
        const json stats = source->value("stats", json::object());
        const auto dropped = stats.value("dropped_by_device", -1LL);
        check.expect(
            dropped == 0, describe("%s: stats.dropped_by_device %lld == 0", name.c_str(), dropped));
        const auto processed = figures->at("frames").value("processed", -1LL);
        processedSum += processed;
        check.expect(processed == static_cast<long long>(own.size()),
            describe("%s: the task's frames.processed %lld == its %zu rows", name.c_str(),
                processed, own.size()));
        check.expect(static_cast<long long>(own.size()) >= o.minFrames,
            describe("%s: frames %zu >= %lld", name.c_str(), own.size(), o.minFrames));
        if (own.empty())
            continue;
        size_t gaps = 0, nonIncreasing = 0, notOk = 0, negativeWaits = 0;
        for (size_t i = 0; i < own.size(); ++i) {
            notOk += own[i].ok ? 0 : 1;
            negativeWaits += own[i].waitMs < 0.0 ? 1 : 0;
            if (i == 0)
                continue;
            gaps += own[i].id == own[i - 1].id + 1 ? 0 : 1;
            nonIncreasing += own[i].captureNs > own[i - 1].captureNs ? 0 : 1;
        }
        check.expect(own.front().id == 0 && gaps == 0,
            describe("%s: frame_id from %lld, consecutive (%zu gaps)", name.c_str(), own.front().id,
                gaps));
        check.expect(nonIncreasing == 0,
            describe("%s: capture_ns strictly increasing (%zu steps back or equal)", name.c_str(),
                nonIncreasing));
        check.expect(
            notOk == 0, describe("%s: frames the task failed on: %zu", name.c_str(), notOk));
        check.expect(negativeWaits == 0,
            describe("%s: wait_ms >= 0 (%zu frames below)", name.c_str(), negativeWaits));
        const double rate = rateOf(own, 0, own.size() - 1);
        check.expect(withinTolerance(rate, o),
            describe("%s: capture rate %.3f fps within %.0f%% of %.3f", name.c_str(), rate,
                o.tolerance * 100, o.fps));
        if (!o.runLog.empty()) {
            // "stream cam1: v4l2:///dev/video1 (v4l2), /dev/video1 (vivid, ...) NV12 320x180 ..."
            std::string line;
            std::istringstream in(runLog);
            std::string found;
            while (std::getline(in, line))
                if (line.find("stream " + name + ": ") != std::string::npos)
                    found = line;
            check.expect(found.find(" " + format + " ") != std::string::npos,
                name + ": negotiated pixel format " + format + " (the run's log: " +
                    (found.empty() ? "no line for it" : found.substr(found.find("stream "))) + ")");
        }
    }
    const auto processed = task.at("frames").value("processed", -1LL);
    check.expect(processed == processedSum,
        describe(
            "the task's frames.processed %lld is its streams' sum %lld", processed, processedSum));
}

// `probe PROBE_JSON FORMATS WIDTH HEIGHT FPS`: what `jetagent probe cameras --json` said of vivid's
// /dev/video0: the driver and a capture device, each of FORMATS (comma-separated) offered and
// convertible with WIDTHxHEIGHT at FPS among its rates, and controls with names and ranges.
int checkProbe(int argc, char** argv)
{
    if (argc != 7) {
        std::fprintf(stderr, "usage: %s probe PROBE_JSON FORMATS WIDTH HEIGHT FPS\n", argv[0]);
        return 2;
    }
    json probe;
    try {
        std::ifstream in(argv[2]);
        probe = json::parse(in);
    } catch (const json::exception& e) {
        std::fprintf(stderr, "%s: %s\n", argv[2], e.what());
        return 2;
    }
    long long width = 0;
    long long height = 0;
    double fps = 0.0;
    if (!parseInteger(argv[4], width) || !parseInteger(argv[5], height) ||
        !parseNumber(argv[6], fps)) {
        std::fprintf(stderr, "probe: WIDTH, HEIGHT and FPS must be numbers\n");
        return 2;
    }
    std::printf("probe %s\n", argv[2]);
    Checker check;
    try {
        const json* camera = nullptr;
        for (const json& c : probe)
            if (c.at("path") == "/dev/video0")
                camera = &c;
        check.expect(camera != nullptr, "/dev/video0 probed");
        if (camera == nullptr)
            return 1;
        check.expect(camera->at("error").get<std::string>().empty(),
            "probed without error (" + camera->at("error").get<std::string>() + ")");
        check.expect(camera->at("driver") == "vivid", "driver vivid");
        check.expect(camera->at("capture").get<bool>(), "a capture device");
        check.expect(!camera->at("bus_info").get<std::string>().empty(), "bus-info given");
        std::stringstream formats(argv[3]);
        std::string fourcc;
        while (std::getline(formats, fourcc, ',')) {
            bool offered = false;
            bool convertible = false;
            bool rate = false;
            for (const json& f : camera->at("formats")) {
                if (f.at("fourcc") != fourcc)
                    continue;
                offered = true;
                convertible = f.at("convertible").get<bool>();
                for (const json& size : f.at("sizes"))
                    if (size.at("width") == width && size.at("height") == height)
                        for (const json& r : size.at("fps"))
                            rate = rate || std::abs(r.get<double>() - fps) < 1e-3;
            }
            check.expect(offered && convertible, fourcc + " offered and convertible");
            check.expect(rate,
                fourcc + " " + std::to_string(width) + "x" + std::to_string(height) + " at " +
                    argv[6] + " fps listed");
        }
        size_t ranged = 0;
        for (const json& c : camera->at("controls"))
            if (!c.at("name").get<std::string>().empty() &&
                c.at("maximum").get<long long>() > c.at("minimum").get<long long>())
                ++ranged;
        check.expect(
            ranged >= 4, "controls listed with names and ranges (" + std::to_string(ranged) + ")");
    } catch (const json::exception& e) {
        check.expect(false, std::string("probe JSON as expected: ") + e.what());
    }
    std::printf("probe: %d check(s) failed\n", check.failures());
    return check.failures() == 0 ? 0 : 1;
}

// `model MODEL_ONNX LABELS_TXT`: input 1x3x8x8, output 1x3, the mean of each plane; labels
// red, green, blue (the task's preprocessing gives RGB planes).
int writeModel(int argc, char** argv)
{
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s model MODEL_ONNX LABELS_TXT\n", argv[0]);
        return 2;
    }
    constexpr int kSide = 8;
    constexpr int kPlanes = 3;
    onnx::ModelProto model;
    model.set_ir_version(7);
    model.set_producer_name("jetagent_vivid_check");
    model.add_opset_import()->set_version(13);
    onnx::GraphProto* graph = model.mutable_graph();
    graph->set_name("plane_means");
    onnx::NodeProto* pool = graph->add_node();
    pool->set_op_type("GlobalAveragePool");
    pool->add_input("input");
    pool->add_output("pooled");
    onnx::NodeProto* flatten = graph->add_node();
    flatten->set_op_type("Flatten");
    flatten->add_input("pooled");
    flatten->add_output("output");
    auto shape = [](onnx::ValueInfoProto* value, const char* name, const std::vector<int>& dims) {
        value->set_name(name);
        auto* tensor = value->mutable_type()->mutable_tensor_type();
        tensor->set_elem_type(onnx::TensorProto_DataType_FLOAT);
        for (const int d : dims)
            tensor->mutable_shape()->add_dim()->set_dim_value(d);
    };
    shape(graph->add_input(), "input", {1, kPlanes, kSide, kSide});
    shape(graph->add_output(), "output", {1, kPlanes});
    std::ofstream modelFile(argv[2], std::ios::binary);
    std::ofstream labelsFile(argv[3]);
    modelFile << model.SerializeAsString();
    labelsFile << "red\ngreen\nblue\n";
    if (!modelFile.flush() || !labelsFile.flush()) {
        std::fprintf(stderr, "cannot write %s and %s\n", argv[2], argv[3]);
        return 2;
    }
    return 0;
}

volatile std::sig_atomic_t stopStalls = 0;

extern "C" void onStallsSignal(int /*signal*/)
{
    stopStalls = 1;
}

int64_t monotonicNow()
{
    timespec ts {};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// `stalls OUT_FILE LATE_MS`: until SIGTERM or SIGINT, how late 10 ms sleeps end.
int watchStalls(int argc, char** argv)
{
    double lateMs = 0.0;
    if (argc != 4 || !parseNumber(argv[3], lateMs) || lateMs <= 0.0) {
        std::fprintf(stderr, "usage: %s stalls OUT_FILE LATE_MS\n", argv[0]);
        return 2;
    }
    struct sigaction action { };
    action.sa_handler = onStallsSignal;
    sigaction(SIGTERM, &action, nullptr);
    sigaction(SIGINT, &action, nullptr);
    constexpr int64_t kSleepNs = 10'000'000;
    const timespec sleep {0, kSleepNs};
    long long wakes = 0;
    long long lateWakes = 0;
    int64_t worstNs = 0;
    while (stopStalls == 0) {
        const int64_t before = monotonicNow();
        if (clock_nanosleep(CLOCK_MONOTONIC, 0, &sleep, nullptr) != 0)
            continue; // a signal: the loop condition decides
        const int64_t lateNs = monotonicNow() - before - kSleepNs;
        ++wakes;
        worstNs = std::max(worstNs, lateNs);
        lateWakes += static_cast<double>(lateNs) / 1e6 > lateMs ? 1 : 0;
    }
    std::ofstream out(argv[2]);
    out << "wakes=" << wakes << " late_wakes=" << lateWakes
        << " worst_late_ms=" << static_cast<double>(worstNs) / 1e6 << "\n";
    return out.flush() ? 0 : 2;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc > 1 && std::string(argv[1]) == "probe")
        return checkProbe(argc, argv);
    if (argc > 1 && std::string(argv[1]) == "model")
        return writeModel(argc, argv);
    if (argc > 1 && std::string(argv[1]) == "stalls")
        return watchStalls(argc, argv);
    Options o;
    if (!parseOptions(argc, argv, o)) {
        std::fprintf(stderr,
            "usage: %s capture|recovery LOG_DIR --format F --width W --height H --fps R "
            "--min-frames N [--tolerance T] [--reloaded-ns NS --min-frames-after M]\n"
            "       %s streams LOG_DIR --streams NAME:FORMAT,... --width W --height H --fps R "
            "--min-frames N [--tolerance T] [--run-log FILE]\n"
            "       %s probe PROBE_JSON FORMATS WIDTH HEIGHT FPS\n"
            "       %s model MODEL_ONNX LABELS_TXT\n"
            "       %s stalls OUT_FILE LATE_MS\n",
            argc > 0 ? argv[0] : "jetagent_vivid_check",
            argc > 0 ? argv[0] : "jetagent_vivid_check",
            argc > 0 ? argv[0] : "jetagent_vivid_check",
            argc > 0 ? argv[0] : "jetagent_vivid_check",
            argc > 0 ? argv[0] : "jetagent_vivid_check");
        return 2;
    }
    fs::path runDir;
    if (!findRunDir(o.logDir, runDir))
        return 2;
    json summary;
    try {
        std::ifstream in(runDir / "summary.json");
        summary = json::parse(in);
    } catch (const json::exception& e) {
        std::fprintf(stderr, "%s: %s\n", (runDir / "summary.json").c_str(), e.what());
        return 2;
    }
    std::string runLog;
    if (!o.runLog.empty()) {
        std::ifstream in(o.runLog);
        std::stringstream text;
        text << in.rdbuf();
        if (!in) {
            std::fprintf(stderr, "cannot read %s\n", o.runLog.c_str());
            return 2;
        }
        runLog = text.str();
    }
    if (!summary.contains("source")) {
        std::fprintf(stderr, "%s has no source section\n", (runDir / "summary.json").c_str());
        return 2;
    }
    // The one task's log; the config has a single task.
    const std::string suffix = ".frames.csv";
    fs::path csvPath;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(runDir, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.size() > suffix.size() &&
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
            csvPath = entry.path();
    }
    std::vector<FrameRow> rows;
    if (csvPath.empty() || !readFrames(csvPath, rows)) {
        std::fprintf(stderr, "%s: no readable <task>.frames.csv\n", runDir.c_str());
        return 2;
    }
    std::printf("%s %s (%zu frames)\n", o.mode.c_str(), runDir.c_str(), rows.size());
    Checker check;
    try {
        if (o.mode == "streams") {
            checkStreams(o, summary, rows, runLog, check);
        } else {
            checkCommon(o, summary, rows, check);
            if (o.mode == "capture")
                checkCapture(o, summary, rows, check);
            else
                checkRecovery(o, summary, rows, check);
        }
    } catch (const json::exception& e) {
        check.expect(false, std::string("summary.json as expected: ") + e.what());
    }
    std::printf("%s: %d check(s) failed\n", o.mode.c_str(), check.failures());
    return check.failures() == 0 ? 0 : 1;
}
