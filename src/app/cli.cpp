// The command line: jetagent run | bench | compare | sweep | report | inspect | power | probe |
// capture | backends | version.
#include "cli.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <system_error>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <opencv2/core/version.hpp>

#include "agent.h"
#include "bench.h"
#include "camera_report.h"
#include "capture.h"
#include "compare.h"
#include "config/config.h"
#include "html_report.h"
#include "inspect.h"
#include "jetagent/base/json_text.h"
#include "jetagent/base/log.h"
#include "jetagent/base/text.h"
#include "jetagent/base/thread_guard.h"
#include "jetagent/engines/engine.h"
#include "jetagent/engines/model_prepare.h"
#include "jetagent/fixtures/fixture_boards.h"
#include "jetagent/hal/gpio.h"
#include "jetagent/hal/v4l2_io.h"
#include "jetagent/power/board_profile.h"
#include "output/logging.h"
#include "power_command.h"
#include "run_report.h"
#include "sweep.h"
#include "tasks/calibration.h"
#include "version.h"

namespace jetagent {

namespace {

// 0 or more. CLI11's NonNegativeNumber prints its upper bound, the largest double, in 309 digits.
const CLI::Validator kNonNegative(
    [](const std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !(v >= 0.0))
            return "must be a number, 0 or more (got " + text + ")";
        return std::string();
    },
    "NUMBER >= 0");

// A time in seconds: 0 (no limit) or from a millisecond to ten years. A value in between (1e-300)
// would round to 0 ns, which means no limit, and one past the range (1e300, inf) would overflow
// the nanosecond clock.
constexpr double kMinSeconds = 0.001, kMaxSeconds = 315'360'000.0;
const CLI::Validator kSeconds(
    [](const std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !(v == 0.0 || (v >= kMinSeconds && v <= kMaxSeconds)))
            return "must be 0 (no limit) or from 0.001 to 315360000 seconds (got " + text + ")";
        return std::string();
    },
    "SECONDS: 0 or 0.001 to 315360000");

// A whole number from `lo` to `hi`, written in decimal digits, for an integer option. CLI11 2.1
// reads integers with strtoull/strtoll in base 0: a value past the type's range was clamped or
// wrapped (--frames 18446744073709551616 became 18446744073709551615, -1 as much), and 010 was
// octal 8. Applied with transform(), it hands CLI11 the number's plain decimal form.
CLI::Validator wholeNumber(uint64_t lo, uint64_t hi)
{
    const std::string range = std::to_string(lo) + " to " + std::to_string(hi);
    return CLI::Validator(
        [lo, hi, range](std::string& text) -> std::string {
            std::string refusal = "must be a whole number from " + range + " (got " + text + ")";
            if (text.empty() || text.size() > 40 ||
                text.find_first_not_of("0123456789") != std::string::npos)
                return refusal;
            errno = 0;
            const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
            if (errno == ERANGE || v < lo || v > hi)
                return refusal;
            text = std::to_string(v);
            return std::string();
        },
        "INT from " + range);
}

constexpr uint64_t kMaxCount = INT64_MAX; // frames and seeds, as run.frames and source.seed take

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

const char* const kExitCodes =
    "Exit codes: 0 success; 2 usage, configuration or input error (a bad config key,\n"
    "a missing or corrupt model, a source that cannot be opened); 1 failure while running\n"
    "(also: every frame failed, the summary could not be written, a stop that outlasted\n"
    "--stop-timeout); 128+N a second stop signal N while frames drain (130 for Ctrl-C).";

int report(const Status& status)
{
    std::fprintf(stderr, "jetagent: %s\n", status.message().c_str());
    return status.isUsageError() ? kExitUsage : kExitFailure;
}

struct GlobalOptions {
    bool showVersion = false;
    bool verbose = false;
    bool quiet = false;
    std::string logLevel;

    // The level from the command line, if any, else `fallback`.
    std::string level(const std::string& fallback) const
    {
        if (!logLevel.empty())
            return logLevel;
        if (verbose)
            return "debug";
        if (quiet)
            return "warn";
        return fallback;
    }
};

struct RunArgs {
    std::string config;
    std::string source;
    uint64_t frames = 0;
    double duration = -1;
    std::string logDir;
    bool asFastAsPossible = false;
    bool display = false;
    std::string output;
    std::string serve;
    double stopTimeout = 15.0;
};

// Each command's option targets and its CLI11 subcommand, filled by its declare* function and read
// by its command* function once the line is parsed.
struct RunCommand {
    CLI::App* cmd = nullptr;
    RunArgs args;
};

struct BenchCommand {
    CLI::App* cmd = nullptr;
    std::string config;
    BenchOptions options;
};

struct CompareCommand {
    CLI::App* cmd = nullptr;
    CompareOptions options;
};

struct SweepCommand {
    CLI::App* cmd = nullptr;
    SweepOptions options;
    std::string batches, threads, engines;
};

struct ReportCommand {
    CLI::App* cmd = nullptr;
    RunReportOptions options;
};

struct CaptureCommand {
    CLI::App* cmd = nullptr;
    SourceOptions source;
    uint64_t count = 0;
    std::string out, format = "png", config;
};

struct InspectCommand {
    CLI::App* cmd = nullptr;
    InspectOptions options;
    bool noCache = false;
};

struct PowerCommand {
    CLI::App* cmd = nullptr;
    PowerCommandOptions options;
};

struct ProbeCommand {
    CLI::App* cmd = nullptr;
    CLI::App* cameras = nullptr;
    CLI::App* gpio = nullptr;
    std::vector<std::string> devices;
    bool json = false;
    std::vector<std::string> chips;
};

// Every command, in the order `jetagent --help` lists them.
struct Commands {
    RunCommand run;
    BenchCommand bench;
    CompareCommand compare;
    SweepCommand sweep;
    ReportCommand report;
    CaptureCommand capture;
    InspectCommand inspect;
    PowerCommand power;
    ProbeCommand probe;
    CLI::App* backends = nullptr;
    CLI::App* version = nullptr;
};

// The command line's replacements of config keys, applied to `config` and listed in `overrides`.
void applyRunOverrides(const RunArgs& args, const CLI::App& cmd, AgentConfig& config,
    std::vector<std::string>& overrides)
{
    if (cmd.count("--source")) {
        config.source.uri = args.source;
        overrides.push_back("source.uri=" + args.source);
        config.overriddenBy["source.uri"] = "--source";
    }
    if (cmd.count("--frames")) {
        config.run.frames = args.frames;
        overrides.push_back("run.frames=" + std::to_string(args.frames));
        config.overriddenBy["run.frames"] = "--frames";
    }
    if (cmd.count("--duration")) {
        config.run.durationS = args.duration;
        overrides.push_back("run.duration_s=" + std::to_string(args.duration));
        config.overriddenBy["run.duration_s"] = "--duration";
    }
    if (cmd.count("--log-dir")) {
        config.logging.dir = args.logDir;
        overrides.push_back("logging.dir=" + args.logDir);
        config.overriddenBy["logging.dir"] = "--log-dir";
    }
    if (args.asFastAsPossible) {
        config.run.pacing = Pacing::None;
        overrides.push_back("run.pacing=none");
        config.overriddenBy["run.pacing"] = "--as-fast-as-possible";
    }
    if (args.display) {
        config.display.window = true;
        overrides.push_back("display.window=true");
        config.overriddenBy["display.window"] = "--display";
    }
    if (cmd.count("--output")) {
        std::string path = args.output;
        if (path.rfind("file://", 0) == 0) // rtp:// and rtsp:// are checked with the config
            path = path.substr(7);
        config.display.output = path;
        overrides.push_back("display.output=" + path);
        config.overriddenBy["display.output"] = "--output";
    }
    if (cmd.count("--serve")) {
        config.http.listen = args.serve;
        overrides.push_back("http.listen=" + args.serve);
        config.overriddenBy["http.listen"] = "--serve";
    }
}

int commandRun(const RunArgs& args, const GlobalOptions& global, const CLI::App& cmd)
{
    // CLI11 runs no check on an empty value: `--serve ''` would run without a server.
    if (cmd.count("--serve") && args.serve.empty()) {
        std::fprintf(stderr, "jetagent run: --serve: an address is needed: [ADDR:]PORT\n");
        return kExitUsage;
    }
    auto loaded = loadConfig(args.config);
    if (!loaded)
        return report(loaded.status());
    AgentConfig config = std::move(loaded).value();

    RunOptions options;
    applyRunOverrides(args, cmd, config, options.overrides);
    setLogLevel(global.level(config.logging.level));
    options.printStatus = !global.quiet;
    options.notify = true;
    options.stopTimeoutS = args.stopTimeout;
    if (!config.http.listen.empty()) {
        auto chartJs = chartJsSource("");
        if (!chartJs)
            return report(chartJs.status().withContext("the live view (http.listen, --serve)"));
        options.liveChartJs = std::move(chartJs).value();
    }
    // SIGHUP: the same file, the same overrides; the log level follows the new config unless
    // the command line set it.
    options.reload = [&args, &cmd, &global]() -> Expected<AgentConfig> {
        auto reloaded = loadConfig(args.config);
        if (!reloaded)
            return reloaded.status();
        AgentConfig next = std::move(reloaded).value();
        std::vector<std::string> ignored;
        applyRunOverrides(args, cmd, next, ignored);
        setLogLevel(global.level(next.logging.level));
        return next;
    };

    auto run = runAgent(config, options);
    if (!run)
        return report(run.status());
    exitIfAbandoned(*run);
    if (!run->failure.ok()) {
        std::fprintf(stderr, "jetagent: the run failed: %s\n", run->failure.message().c_str());
        return kExitFailure;
    }
    return kExitOk;
}

std::string boardProfileIds()
{
    std::string ids;
    for (const BoardProfile& p : builtinBoardProfiles())
        ids += (ids.empty() ? "" : ", ") + p.id;
    return ids;
}

std::string fixtureBoardIds()
{
    std::string ids;
    for (const fixtures::BoardSpec& b : fixtures::fixtureBoards())
        ids += (ids.empty() ? "" : ", ") + b.id;
    return ids;
}

void printBackends()
{
    for (const BackendInfo& b : listBackends())
        std::printf("%-10s %-13s %s\n", b.name.c_str(), b.available ? "available" : "not available",
            b.details.c_str());
}

// The program description, the options before the command, and the examples of `jetagent --help`.
void declareGlobalOptions(CLI::App& app, GlobalOptions& global)
{
    // A plain flag rather than set_version_flag(), which CLI11 1.9 (Ubuntu 20.04, JetPack 5) lacks.
    app.add_flag("--version", global.showVersion, "Print the version and exit");
    app.require_subcommand(0, 1);
    app.fallthrough();
    app.add_flag("-v,--verbose", global.verbose, "Debug logging");
    app.add_flag("-q,--quiet", global.quiet, "Warnings and errors only; no status lines");
    app.add_option("--log-level", global.logLevel,
           "Log level: trace, debug, info, warn, error (overrides the config)")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
    app.footer(
        std::string(
            "\nExamples:\n"
            "  jetagent run --config firmware-config/demo.yaml        the demo: classify synthetic "
            "shapes\n"
            "  jetagent run --config firmware-config/demo-action.yaml action recognition, clip "
            "and streaming modes\n"
            "  jetagent run -c my.yaml --source file://clip.mp4 --as-fast-as-possible\n"
            "  jetagent bench -c firmware-config/bench-mobilenet_v2.yaml\n"
            "  jetagent compare m.onnx --candidate tensorrt:gpu:fp16   outputs and latency "
            "against the CPU\n"
            "  jetagent sweep --models DIR --engines xnnpack,opencv -o out   models x engines, "
            "report\n"
            "  jetagent report jetagent-logs/RUN                      one run as an HTML "
            "page\n"
            "  jetagent inspect model.onnx --prepared                 parameters, MACs, "
            "preparation\n"
            "  jetagent power --csv power.csv                         live rails and "
            "temperatures\n"
            "  jetagent probe cameras                                 cameras, formats, controls\n"
            "  jetagent probe gpio                                    GPIO chips and lines\n"
            "  jetagent run -c my.yaml -s v4l2:///dev/video0 --display   the live camera demo\n"
            "  jetagent <command> --help                              options of one command\n\n") +
        kExitCodes);
}

// run: the config, the keys the command line replaces, and how a stop waits.
void declareRun(CLI::App& app, RunCommand& run)
{
    run.cmd = app.add_subcommand("run", "Run models on a source, log every frame, print a summary");
    run.cmd
        ->add_option("-c,--config", run.args.config,
            "Agent config (YAML); see firmware-config/ for examples")
        ->required();
    run.cmd->add_option(
        "-s,--source", run.args.source, "Source URI, replacing source.uri of the config");
    run.cmd->add_option("-n,--frames", run.args.frames, "Stop after N source frames (0: no limit)")
        ->transform(wholeNumber(0, kMaxCount));
    run.cmd->add_option("-d,--duration", run.args.duration, "Stop after S seconds (0: no limit)")
        ->check(kSeconds);
    run.cmd->add_option(
        "-o,--log-dir", run.args.logDir, "Directory for run logs, replacing logging.dir");
    run.cmd->add_flag("--as-fast-as-possible", run.args.asFastAsPossible,
        "Do not pace files and generated sources at their frame rate; queue every frame instead "
        "of\n"
        "dropping late ones (offline evaluation and throughput)");
    run.cmd->add_flag("--display", run.args.display,
        "Show the frames in a window with the results, fps, latency, power and temperature\n"
        "drawn on them (the live demo; q or Esc stops the run). Headless without it");
    run.cmd->add_option("--output", run.args.output,
        "Send the annotated frames (each with its own result) to a new video file\n"
        "(file://annotated.mp4; .mp4, .mkv, .mov, .avi; an existing file is refused, never\n"
        "overwritten), or over the network as H.264: rtp://HOST:PORT (RTP/UDP to one receiver;\n"
        "the SDP it needs is logged at start) or rtsp://@:PORT/PATH (an RTSP server on every\n"
        "interface, rtsp://127.0.0.1:PORT/PATH for this machine only; encodes only while a\n"
        "client plays)");
    run.cmd->add_option("--serve", run.args.serve,
        "[ADDR:]PORT: serve a live web view of the run (video, results, latency, power and\n"
        "temperature charts; JSON at /api/status, /api/frames, /api/events) on "
        "127.0.0.1:PORT,\n"
        "or on ADDR, which needs http.token in the config unless it is loopback");
    run.cmd
        ->add_option("--stop-timeout", run.args.stopTimeout,
            "After SIGTERM/SIGINT, wait at most S seconds for the frames in flight; past it the\n"
            "logs are flushed and jetagent exits with status 1 (a hung camera or engine). 0: no "
            "limit")
        ->capture_default_str()
        ->check(kSeconds);
    run.cmd->footer(std::string("\nSources (--source or source.uri):\n") + frameSourceUriHelp() +
        "\nEach run writes into a new directory under the log directory: <task>.frames.csv and\n"
        "<task>.frames.jsonl (one line per frame: stage times, end-to-end latency, top-1 result),\n"
        "summary.json and summary.txt (percentiles, throughput, deadline misses, cold start,\n"
        "accuracy when the source knows the true classes, and the run's context), and a copy of "
        "the\n"
        "config. Ctrl-C stops the run cleanly; a second Ctrl-C quits at once.\n"
        "\nAs a service (systemd/jetagent.service): with NOTIFY_SOCKET set, jetagent tells "
        "systemd\n"
        "when it is ready (READY=1 once the source and engines are up), its state (STATUS=), and\n"
        "pings the watchdog (WatchdogSec=) only while frames flow. SIGHUP re-reads the config "
        "file:\n"
        "a valid one replaces the running one (a new run directory; the source and the engines of\n"
        "unchanged tasks are kept), a bad one is logged and the old one keeps running.\n" +
        kExitCodes);
}

// bench: the agent against the bare engine, or an action task's cost per frame.
void declareBench(CLI::App& app, BenchCommand& bench)
{
    bench.cmd = app.add_subcommand("bench",
        "Measure what the agent adds to the bare engine's latency, or an action task's cost "
        "per frame");
    bench.cmd
        ->add_option(
            "-c,--config", bench.config, "Agent config; its first task and its source are used")
        ->required();
    bench.cmd
        ->add_option("--iterations", bench.options.iterations,
            "Timed inferences per round (action tasks: clip inferences)")
        ->capture_default_str()
        ->transform(wholeNumber(10, 1000000));
    bench.cmd
        ->add_option("--warmup", bench.options.warmup, "Untimed inferences before each measurement")
        ->capture_default_str()
        ->transform(wholeNumber(1, 100000));
    bench.cmd->add_option("--rounds", bench.options.rounds, "Rounds of engine loop then agent run")
        ->capture_default_str()
        ->transform(wholeNumber(1, 100));
    bench.cmd->add_option("-o,--log-dir", bench.options.logDir,
        "Keep the last round's agent run directory under DIR (default: none is kept)");
    bench.cmd->add_option("--json", bench.options.json,
        "Also write the figures and the configuration as one JSON document to this new file");
    bench.cmd->footer(
        "\nTimes (a) the bare engine, Session::run in a loop on a preprocessed frame, and (b) the "
        "whole\n"
        "agent on the config's source as fast as possible, alternating them for several rounds, "
        "and\n"
        "prints both medians, their ratio and the configuration. The agent's figure is the "
        "interval\n"
        "between its results: everything it does per frame, threads and logging included.\n"
        "The agent's rounds write their logs into a temporary directory, removed at the end;\n"
        "--log-dir DIR keeps the last round's run directory there instead.\n\n"
        "When the first task is an action task, times instead its work per frame (preprocessing,\n"
        "the backbone in streaming mode) and its clip inferences, rounds x iterations strides of\n"
        "frames, and prints the per-frame cost amortised over each stride. Clip models are slow\n"
        "on a CPU: try --rounds 1 --iterations 10 --warmup 1 for r3d_18.\n"
        "  jetagent bench -c firmware-config/bench-action-r3d_18.yaml --rounds 1 --warmup 1");
}

// compare: one model through a reference and a candidate engine.
void declareCompare(CLI::App& app, CompareCommand& compare)
{
    compare.cmd = app.add_subcommand("compare",
        "Run one model through a reference and a candidate engine on the same inputs; report "
        "how far\nthe candidate's outputs are and both latencies (trust a TensorRT engine)");
    compare.cmd->add_option(
        "model", compare.options.model, "ONNX model file (default: the model of --config's task)");
    compare.cmd
        ->add_option("--candidate", compare.options.candidate,
            "Engine under test: BACKEND:DEVICE:PRECISION[,key=value...], e.g. tensorrt:gpu:fp16")
        ->required();
    compare.cmd->add_option("--reference", compare.options.reference,
        "Engine it is judged against (default: --config's task engine, else opencv:cpu:fp32)");
    compare.cmd->add_option("--reference-model", compare.options.referenceModel,
        "Run the reference on this model instead (same input; e.g. before an edit)");
    compare.cmd->add_option("--inputs", compare.options.inputs,
        "Frame source for the inputs: an image directory, a video file, synthetic://shapes\n"
        "(default: --config's source, else synthetic://shapes)");
    compare.cmd->add_option("-n,--frames", compare.options.frames, "Inputs compared (at most)")
        ->capture_default_str()
        ->transform(wholeNumber(1, 1000000));
    compare.cmd->add_option("-c,--config", compare.options.config,
        "Agent config: its task's preprocess section, engine defaults and calibration source");
    compare.cmd->add_option("--task", compare.options.task, "Which task of --config (0-based)")
        ->capture_default_str()
        ->transform(wholeNumber(0, kMaxCount));
    compare.cmd->add_option("--calibration", compare.options.calibration,
        "int8 engines: calibration images (a directory or video), replacing the task's "
        "engine.calibration.source");
    compare.cmd->add_option("--cache-dir", compare.options.cacheDir,
        "Engine cache for prepared models and plans (default: the config's, else the user's "
        "cache)");
    compare.cmd
        ->add_option("--max-rel-error", compare.options.maxRelError,
            "Fail (exit 1) when an output's relative error is above X")
        ->check(kNonNegative);
    compare.cmd
        ->add_option("--min-top1", compare.options.minTop1,
            "Fail (exit 1) when top-1 agreement is below F (a fraction, 0..1)")
        ->check(CLI::Range(0.0, 1.0));
    compare.cmd->add_option("--warmup", compare.options.warmup, "Untimed runs per engine first")
        ->capture_default_str()
        ->transform(wholeNumber(0, 100000));
    compare.cmd->add_option("--json", compare.options.json,
        "Also write everything as one JSON document to this new file");
    compare.cmd->footer(kCompareHelp);
}

// capture: a source's frames saved as images.
void declareCapture(CLI::App& app, CaptureCommand& capture)
{
    capture.cmd = app.add_subcommand(
        "capture", "Save a source's frames as images (class folders when known)");
    capture.cmd->add_option(
        "-c,--config", capture.config, "Take the source settings from this config");
    capture.cmd->add_option(
        "-s,--source", capture.source.uri, "Source URI (replaces the config's)");
    capture.cmd
        ->add_option("-n,--frames", capture.count, "Frames to save (0: until the source ends)")
        ->transform(wholeNumber(0, kMaxCount));
    capture.cmd->add_option("--out", capture.out, "Output directory; must be new or empty")
        ->required();
    capture.cmd->add_option("--width", capture.source.width, "Synthetic frame width")
        ->capture_default_str()
        ->transform(wholeNumber(16, 8192));
    capture.cmd->add_option("--height", capture.source.height, "Synthetic frame height")
        ->capture_default_str()
        ->transform(wholeNumber(16, 8192));
    capture.cmd->add_option("--seed", capture.source.seed, "Synthetic stream seed")
        ->capture_default_str()
        ->transform(wholeNumber(0, kMaxCount));
    capture.cmd->add_option("--format", capture.format, "png or jpg")
        ->capture_default_str()
        ->check(CLI::IsMember({"png", "jpg"}));
}

// inspect: an ONNX model's interface, operators and preparation.
void declareInspect(CLI::App& app, InspectCommand& inspect)
{
    inspect.cmd = app.add_subcommand(
        "inspect", "Describe an ONNX model: interface, operators, parameters, MACs, preparation");
    inspect.cmd->add_option("model", inspect.options.model, "ONNX model file")->required();
    inspect.cmd->add_flag(
        "--json", inspect.options.json, "Print one JSON document instead of text");
    inspect.cmd->add_option("--input-shape", inspect.options.inputShapes,
        "[NAME:]DIMxDIMx... shape to count MACs for (repeat per input); default: the model's own,\n"
        "with an open batch dimension taken as 1");
    inspect.cmd->add_flag("--prepared", inspect.options.prepared,
        "Also prepare the model for a backend and show what each pass changed");
    inspect.cmd
        ->add_option("--backend", inspect.options.backend,
            "Backend to prepare for (auto: the CPU's default, xnnpack where built in; xnnpack:\n"
            "also compile, and list which library runs each node)")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "xnnpack", "opencv", "tensorrt"}));
    inspect.cmd
        ->add_option("--batch", inspect.options.batch, "Batch to prepare for (0: leave it free)")
        ->capture_default_str()
        ->transform(wholeNumber(0, 4096));
    inspect.cmd->add_option("--cache-dir", inspect.options.cacheDir,
        "Engine cache to prepare through (default: the user's cache, " +
            (defaultCacheDir().empty() ? std::string("none here") : defaultCacheDir()) + ")");
    inspect.cmd->add_flag(
        "--no-cache", inspect.noCache, "Prepare in memory, ignoring the cache (times every pass)");
    inspect.cmd
        ->add_option("--profile", inspect.options.profileRuns,
            "Also run the compiled engine N times on a fixed input and show where the time goes:\n"
            "per operator and library, and the slowest steps (xnnpack; implies --prepared)")
        ->transform(wholeNumber(1, 100000));
    inspect.cmd
        ->add_option("--warmup", inspect.options.warmupRuns, "Untimed runs before --profile's")
        ->capture_default_str()
        ->transform(wholeNumber(0, 100000));
    inspect.cmd
        ->add_option("--threads", inspect.options.threads,
            "The profiled engine's threads (engine.threads; 0: the backend's default)")
        ->capture_default_str()
        ->transform(wholeNumber(0, 256));
    inspect.cmd->add_flag_callback(
        "--no-onednn", [&inspect] { inspect.options.onednn = false; },
        "xnnpack: keep every convolution and linear layer on XNNPACK (engine.onednn: false), as on "
        "ARM");
    inspect.cmd->footer(
        "\nChecks the model as every backend does before loading it (protobuf parse, external "
        "data,\n"
        "node inputs, known operators, the ONNX checker, shape inference) and reports\n"
        "its inputs and outputs (symbolic dimensions by name), opset and producer, the operator\n"
        "histogram, trainable parameters, and multiply-accumulates per operator type.\n\n"
        "Preparation rewrites a model into the form a backend reads: fixed or free batch,\n"
        "Identity/Dropout removed (shared initializers expanded), constants and shape arithmetic\n"
        "folded, BatchNormalization folded into Conv, operators canonicalised (Clip bounds,\n"
        "Split sizes, axes as attributes; 5-D global pooling as ReduceMean). Prepared models are\n"
        "cached under the cache directory, keyed by the model's SHA-256 and the pass list.\n\n"
        "Examples:\n"
        "  jetagent inspect model.onnx\n"
        "  jetagent inspect r3d_18.onnx --input-shape 1x3x16x112x112 --json\n"
        "  jetagent inspect resnet50.onnx --prepared --batch 8 --no-cache    time the "
        "preparation\n"
        "  jetagent inspect resnet50.onnx --profile 20    where xnnpack's time goes, per step\n");
}

// power: live rails, temperatures and clocks.
void declarePower(CLI::App& app, PowerCommand& power)
{
    power.cmd = app.add_subcommand("power",
        "Live power rails, temperatures, clocks and power mode, with CSV logging (like "
        "tegrastats)");
    power.cmd->add_option("-i,--interval", power.options.intervalMs, "Milliseconds between lines")
        ->capture_default_str()
        ->check(CLI::Range(10.0, 3'600'000.0));
    power.cmd->add_option("--csv", power.options.csvPath,
        "Also write one CSV row per line to this new file (units in the column names)");
    power.cmd
        ->add_option("-d,--duration", power.options.durationS, "Stop after S seconds (0: Ctrl-C)")
        ->capture_default_str()
        ->check(kSeconds);
    power.cmd
        ->add_option("--sysfs-root", power.options.sysfsRoot,
            "Read /sys, /proc and /etc under this directory (a copy of a board's tree)")
        ->capture_default_str();
    power.cmd
        ->add_option("--board", power.options.board,
            "Board profile: auto, a built-in id (" + boardProfileIds() + ") or a YAML file")
        ->capture_default_str();
    power.cmd
        ->add_option("--rate", power.options.railHz,
            "Rail samples per second behind the averages (the chip's own refresh is the useful "
            "limit)")
        ->capture_default_str()
        ->check(CLI::Range(0.1, 1000.0));
    power.cmd->add_flag("--json", power.options.json,
        "Print one JSON object per line on stdout (the CSV's columns, offline readings null); the "
        "setup and the summary go to stderr");
    power.cmd
        ->add_option("--idle", power.options.idleS,
            "First measure S seconds of baseline with the board at rest; each line then also "
            "gives the power and energy above it")
        ->check(CLI::Range(0.0, 86400.0));
    power.cmd->add_flag("--list", power.options.list,
        "Print the board, its profile and the sensors found, then exit");
    power.cmd->add_option("--fixture", power.options.fixture,
        "Read a built-in fixture board's tree instead of this machine's (" + fixtureBoardIds() +
            "; 'list' describes them): written into --sysfs-root DIR if given (a new or empty\n"
            "directory, kept for power.sysfs_root in a config), else into a temporary one");
    power.cmd->footer(
        "\nFinds the board's power rails (INA3221 under hwmon or the legacy iio driver, INA2xx,\n"
        "power_supply, Intel RAPL), thermal zones, GPU and CPU clocks, EMC rate, throttle "
        "counters,\n"
        "fan and nvpmodel mode by itself, and what tegrastats shows beside them: RAM and swap\n"
        "(/proc/meminfo), the largest free block (/proc/buddyinfo), each core's load (/proc/stat,\n"
        "between two readings, so the first line has none), EMC load (actmon, needs root) and the\n"
        "NVDEC/NVENC/NVJPG/VIC/DLA clocks (debugfs, needs root). It samples the rails at --rate "
        "in\n"
        "a thread of its own and prints one line per interval:\n\n"
        "  [    10.0s] VDD_IN 5231mW/5102mW ... | total 5231mW/5102mW | cpu-thermal@45.2C ... |\n"
        "              GPU 35%@612MHz | CPU [12%@1510,3%@1510] MHz | EMC 10%@2133MHz |\n"
        "              RAM 2199/7619MB (lfb 610x4MB) SWAP 0/3809MB | NVDEC 716MHz NVENC off |\n"
        "              mode 2 (15W)\n\n"
        "Each rail shows its newest reading and its true time-average since the start (energy\n"
        "over time, not tegrastats' or jtop's running blend). A total marked (est.) is the sum of\n"
        "the rails on boards that do not measure their input power; it misses what no rail sees.\n"
        "Zones that read a known bogus value (power-gated -256 C, a constant PMIC-Die) show "
        "'off'.\n"
        "A reading the board does not expose has no column; one that fails while running is an\n"
        "empty CSV cell, null in JSON, 'off' or '?' in the line. The CSV and JSON carry time_s,\n"
        "monotonic_ns and wall_time (ISO 8601 with the zone offset). --idle S measures the\n"
        "board at rest first; the lines then add the power above that baseline, and the CSV and\n"
        "JSON add idle_W, above_idle_W, above_idle_avg_W and energy_above_idle_J.\n"
        "Ctrl-C ends the measurement and prints averages, peaks, energy and temperatures.\n\n"
        "Examples:\n"
        "  jetagent power                                   live view, once a second\n"
        "  jetagent power -i 200 --csv run1.csv -d 600      ten minutes at 5 lines a second\n"
        "  jetagent power --idle 10 -d 60 --csv load.csv    10 s at rest, then a minute above it\n"
        "  jetagent power --json -i 500 | jq .total_W       one JSON object per line\n"
        "  jetagent power --list                            what this board has\n"
        "  jetagent power --fixture orin-nano-jp6 -d 3      an Orin Nano's tree, without the "
        "board\n");
}

// probe: the cameras and GPIO chips this machine has.
void declareProbe(CLI::App& app, ProbeCommand& probe)
{
    probe.cmd = app.add_subcommand("probe", "Describe the hardware jetagent can use");
    probe.cmd->require_subcommand(1);
    probe.cameras = probe.cmd->add_subcommand("cameras",
        "Every video device: driver, card, bus-info, formats, sizes, rates and controls");
    probe.cameras->add_option("--device", probe.devices,
        "Probe only this device node (repeatable); default: every /dev/video*");
    probe.cameras->add_flag("--json", probe.json, "Print one JSON document instead of text");
    probe.cameras->footer(
        "\nUse what it shows in a config: source.uri v4l2:///dev/videoN, or v4l2://CARD or\n"
        "v4l2://BUS-INFO (they survive renumbering); source.width, height and fps from the sizes\n"
        "and rates listed; source.camera.format from the formats jetagent converts (marked); and\n"
        "source.camera.controls by the control names listed.\n"
        "CSI cameras on Jetson are not V4L2 capture nodes jetagent reads: use csi://N.\n");
    probe.gpio = probe.cmd->add_subcommand("gpio",
        "Every GPIO chip and its lines: offsets, names, used or free (for the gpio section)");
    probe.gpio->add_option("--chip", probe.chips,
        "Probe only this chip (name, path, label or number; repeatable); default: every "
        "/dev/gpiochip*");
}

// sweep: a study's matrix of models x engines x batch sizes x threads.
void declareSweep(CLI::App& app, SweepCommand& sweep)
{
    SweepOptions& o = sweep.options;
    sweep.cmd = app.add_subcommand("sweep",
        "Measure models x engines x batch sizes x threads; write CSV, JSON, Markdown and HTML");
    sweep.cmd->add_option("study", o.studyFile,
        "Study file (YAML; see firmware-config/studies/); flags given replace its keys");
    sweep.cmd
        ->add_option("-o,--out", o.out,
            "Output directory (new or empty; or this study's "
            "with --resume)")
        ->required();
    sweep.cmd
        ->add_option("--models", o.flags.models,
            "ONNX files, directories of them, or names looked up in --model-dir (comma-separated "
            "or repeated)")
        ->delimiter(',');
    sweep.cmd->add_option("--model-dir", o.modelDir,
        "Where bare model names are looked up (tools/export_torchvision.py writes there)");
    sweep.cmd->add_option("--engines", sweep.engines,
        "Engine specs as compare takes them, separated by ';' or by ',' before a backend name "
        "(default: xnnpack)");
    sweep.cmd->add_option("--baseline", o.flags.baseline,
        "The engine speed-ups and agreement are measured against (default: the first)");
    sweep.cmd->add_option("--batch", sweep.batches, "Batch sizes, comma-separated (default 1)");
    sweep.cmd->add_option("--threads", sweep.threads,
        "Thread counts, comma-separated; 0 = the backend's default (default 0)");
    sweep.cmd
        ->add_option("--inputs", o.flags.inputs,
            "random (N(0,1) tensors of the model's shape) or a frame source URI for image models; "
            "a labelled one (a directory of class folders) gives top-1/top-5")
        ->capture_default_str();
    sweep.cmd->add_option("--labels", o.flags.labels,
        "The model's labels file: a labelled source's class names are looked up in it");
    sweep.cmd->add_option("-c,--config", o.flags.config,
        "Agent config whose first task's preprocessing the --inputs frames get (default: "
        "torchvision's ImageNet resize 256/224, crop, normalisation)");
    sweep.cmd->add_option("-n,--iterations", o.flags.iterations, "Timed inferences per cell")
        ->transform(wholeNumber(1, 100000000))
        ->capture_default_str();
    sweep.cmd
        ->add_option("--duration", o.flags.durationS,
            "Seconds of timed inferences per cell instead of --iterations")
        ->check(CLI::Range(0.0, 86400.0));
    sweep.cmd->add_option("--warmup", o.flags.warmup, "Untimed inferences per cell first")
        ->transform(wholeNumber(0, 1000000))
        ->capture_default_str();
    sweep.cmd
        ->add_option("--rounds", o.flags.rounds,
            "Turns each engine of a group takes (the runs are split among them)")
        ->transform(wholeNumber(1, 100000))
        ->capture_default_str();
    sweep.cmd
        ->add_option("--budget", o.flags.latencyBudgetMs,
            "Latency budget in ms: the best configuration per model whose p99 is within it")
        ->check(CLI::Range(0.0, 1e7));
    sweep.cmd->add_option("--sysfs-root", o.flags.sysfsRoot,
        "Sample power rails under this root ('/' on a board): power, energy per inference");
    sweep.cmd->add_option("--board", o.flags.board, "Board profile for the rails (default auto)");
    sweep.cmd
        ->add_option("--idle", o.flags.idleSeconds,
            "Seconds of idle power measured before the sweep (dynamic energy)")
        ->check(CLI::Range(0.0, 600.0))
        ->capture_default_str();
    sweep.cmd->add_option("--cache-dir", o.flags.cacheDir,
        "Prepared models and plans (default OUT/cache; cold builds need it empty)");
    sweep.cmd->add_option("--name", o.flags.name, "The study's name in the reports");
    sweep.cmd->add_flag("--resume", o.resume, "Continue the study in OUT, skipping its cells done");
    sweep.cmd->add_option("--chart-js", o.chartJs,
        "Chart.js file inlined in report.html (default: Debian's libjs-chart.js)");
    sweep.cmd->footer(kSweepHelp);
}

// report: one run's logs as an offline HTML page.
void declareReport(CLI::App& app, ReportCommand& report)
{
    RunReportOptions& o = report.options;
    report.cmd = app.add_subcommand(
        "report", "One run's logs (a run's or the service's) as an offline HTML page with charts");
    report.cmd->add_option("run_dir", o.runDir, "The run's directory (under logging.dir)")
        ->required();
    report.cmd->add_option("-o,--output", o.output,
        "The page's path: a new file, never overwritten without --force (default "
        "RUN_DIR/report.html, which replaces the run's earlier report)");
    report.cmd->add_flag("--force", o.force,
        "Let -o replace an existing regular file (never a link, device, FIFO or directory)");
    report.cmd->add_option("--chart-js", o.chartJs,
        std::string("Chart.js to inline (default ") + kDebianChartJsPath + ")");
    report.cmd->footer(kReportHelp);
}

// Ends a command's help with the page of docs/ that describes it: its path in the source tree and
// where the package installs it (the configured prefix's documentation directory).
void pointToPage(CLI::App& cmd, const std::string& page)
{
    std::string footer = cmd.get_footer();
    if (!footer.empty() && footer.back() != '\n')
        footer += '\n';
    cmd.footer(footer + "\nDocumentation: docs/" + page + " (installed: " + JETAGENT_DOC_DIR +
        "/docs/" + page + ")");
}

// The page each command's help names: the top level and `run` the running page, the measuring
// commands theirs.
void pointToPages(CLI::App& app, const Commands& c)
{
    pointToPage(app, "running.md");
    pointToPage(*c.run.cmd, "running.md");
    pointToPage(*c.bench.cmd, "sweeps-and-reports.md");
    pointToPage(*c.compare.cmd, "sweeps-and-reports.md");
    pointToPage(*c.sweep.cmd, "sweeps-and-reports.md");
    pointToPage(*c.report.cmd, "sweeps-and-reports.md");
    pointToPage(*c.capture.cmd, "cameras.md");
    pointToPage(*c.inspect.cmd, "models.md");
    pointToPage(*c.power.cmd, "power.md");
    pointToPage(*c.probe.cmd, "cameras.md");
    pointToPage(*c.probe.cameras, "cameras.md");
    pointToPage(*c.probe.gpio, "service.md");
    pointToPage(*c.backends, "cpu-engine.md");
    pointToPage(*c.version, "running.md");
}

// Every command, declared in the order `jetagent --help` lists them.
void declareCommands(CLI::App& app, Commands& c)
{
    declareRun(app, c.run);
    declareBench(app, c.bench);
    declareCompare(app, c.compare);
    declareSweep(app, c.sweep);
    declareReport(app, c.report);
    declareCapture(app, c.capture);
    declareInspect(app, c.inspect);
    declarePower(app, c.power);
    declareProbe(app, c.probe);
    c.backends = app.add_subcommand(
        "backends", "List inference backends and whether this build can use them");
    c.version = app.add_subcommand("version", "Print the version of jetagent and of its libraries");
    pointToPages(app, c);
}
int commandBench(const BenchCommand& bench, const GlobalOptions& global)
{
    auto config = loadConfig(bench.config);
    if (!config)
        return report(config.status());
    setLogLevel(global.level("warn"));
    Status s = runBench(config.value(), bench.options);
    return s ? kExitOk : report(s);
}

int commandCompare(const CompareCommand& compare, const GlobalOptions& global)
{
    setLogLevel(global.level("warn"));
    CompareOptions options = compare.options;
    options.makeCalibration = makeCalibrationData;
    auto result = runCompare(options);
    if (!result)
        return report(result.status());
    std::fputs(result->text.c_str(), stdout);
    if (result->failedChecks.empty())
        return kExitOk;
    for (const std::string& failed : result->failedChecks)
        std::fprintf(stderr, "jetagent: check failed: %s\n", failed.c_str());
    return kExitFailure;
}

// Splits --engines: specs hold commas of their own (xnnpack,fusion=false), so a ',' starts a new
// spec only where a backend name follows it; ';' always does.
std::vector<std::string> splitEngineSpecs(const std::string& text)
{
    std::vector<std::string> specs;
    std::string current;
    auto startsSpec = [](const std::string& rest) {
        const std::string name = rest.substr(0, rest.find_first_of(":,;"));
        if (name == "auto")
            return true;
        for (const BackendInfo& b : listBackends())
            if (b.name == name)
                return true;
        return false;
    };
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == ';' || (c == ',' && startsSpec(text.substr(i + 1)))) {
            specs.push_back(current);
            current.clear();
        } else {
            current += c;
        }
    }
    specs.push_back(current);
    specs.erase(
        std::remove_if(specs.begin(), specs.end(), [](const std::string& s) { return s.empty(); }),
        specs.end());
    return specs;
}

// "1,2,4" as numbers; false on anything else.
bool parseIntList(const std::string& text, std::vector<int>& out)
{
    out.clear();
    for (const std::string& field : splitFields(text, ',')) {
        char* end = nullptr;
        const long v = std::strtol(field.c_str(), &end, 10);
        if (field.empty() || *end != '\0' || v < 0 || v > 1'000'000)
            return false;
        out.push_back(static_cast<int>(v));
    }
    return !out.empty();
}

int commandSweep(const SweepCommand& sweep, const GlobalOptions& global)
{
    setLogLevel(global.level("warn"));
    SweepOptions options = sweep.options;
    for (const char* name : {"models", "baseline", "inputs", "labels", "config", "iterations",
             "duration", "warmup", "rounds", "budget", "sysfs-root", "board", "idle", "cache-dir",
             "name", "engines", "batch", "threads"})
        if (sweep.cmd->count(std::string("--") + name))
            options.given.push_back(name);
    if (sweep.cmd->count("--engines"))
        options.flags.engines = splitEngineSpecs(sweep.engines);
    if (sweep.cmd->count("--batch") && !parseIntList(sweep.batches, options.flags.batches))
        return report(Status::invalid(
            "--batch " + sweep.batches + ": expected batch sizes separated by commas (1,2,4)"));
    if (sweep.cmd->count("--threads") && !parseIntList(sweep.threads, options.flags.threads))
        return report(Status::invalid(
            "--threads " + sweep.threads + ": expected thread counts separated by commas (0,1,2)"));
    if (options.studyFile.empty() && options.flags.models.empty())
        return report(Status::invalid("give a study file or --models"));
    Status s = runSweep(options);
    return s ? kExitOk : report(s);
}

int commandReport(const ReportCommand& command, const GlobalOptions& global)
{
    setLogLevel(global.level("warn"));
    auto result = writeRunReport(command.options);
    if (!result)
        return report(result.status());
    if (result->noSummary)
        std::fprintf(stderr,
            "jetagent: %s has no summary.json (the run did not finish): reported from its CSVs\n",
            command.options.runDir.c_str());
    if (result->damaged.count > 0) {
        std::fprintf(stderr, "jetagent: %zu damaged CSV line(s) skipped\n", result->damaged.count);
        for (const std::string& line : result->damaged.examples)
            std::fprintf(stderr, "  %s\n", line.c_str());
    }
    if (!global.quiet)
        std::printf(
            "%s: %zu bytes, %zu charts\n", result->path.c_str(), result->bytes, result->charts);
    return kExitOk;
}

int commandCapture(const CaptureCommand& capture)
{
    SourceOptions source = capture.source;
    if (!capture.config.empty()) {
        auto config = loadConfig(capture.config);
        if (!config)
            return report(config.status());
        source = config->source;
        if (capture.cmd->count("--source"))
            source.uri = capture.source.uri;
        if (capture.cmd->count("--width"))
            source.width = capture.source.width;
        if (capture.cmd->count("--height"))
            source.height = capture.source.height;
        if (capture.cmd->count("--seed"))
            source.seed = capture.source.seed;
    } else if (source.uri.empty()) {
        return report(Status::invalid("capture needs --source or --config"));
    }
    Status s = captureFrames(source, capture.count, capture.out, capture.format);
    return s ? kExitOk : report(s);
}

int commandInspect(const InspectCommand& inspect, const GlobalOptions& global)
{
    setLogLevel(global.level("warn"));
    InspectOptions o = inspect.options;
    o.prepared |= o.profileRuns > 0;
    if ((inspect.cmd->count("--threads") || inspect.cmd->count("--warmup")) && o.profileRuns == 0)
        return report(Status::invalid("--threads and --warmup are for --profile N"));
    if (inspect.noCache)
        o.cacheDir.clear();
    else if (!inspect.cmd->count("--cache-dir"))
        o.cacheDir = defaultCacheDir();
    std::string out;
    Status s = inspectModel(o, &out);
    if (!s)
        return report(s);
    std::fputs(out.c_str(), stdout);
    return kExitOk;
}

int commandPower(const PowerCommand& power, const GlobalOptions& global)
{
    setLogLevel(global.level("warn"));
    PowerCommandOptions options = power.options;
    if (!options.fixture.empty() && power.cmd->count("--sysfs-root"))
        options.fixtureDir = options.sysfsRoot;
    Status s = runPowerCommand(options);
    return s ? kExitOk : report(s);
}

int commandProbe(const ProbeCommand& probe, const GlobalOptions& global)
{
    setLogLevel(global.level("warn"));
    if (*probe.cameras) {
        const auto cameras = probeCameras(systemV4L2Io(), probe.devices);
        if (probe.json)
            std::printf("%s\n", jsonText(cameraReportJson(cameras), 2).c_str());
        else
            std::fputs(formatCameraReport(cameras).c_str(), stdout);
        // As for GPIO chips: a device named with --device that cannot be probed is bad
        // input (the report says why); with none named, what was found is the answer.
        const bool failed = std::any_of(cameras.begin(), cameras.end(),
            [&](const CameraDescription& c) { return !probe.devices.empty() && !c.error.empty(); });
        return failed ? kExitUsage : kExitOk;
    }
    if (*probe.gpio) {
        const auto reports = probeGpio(probe.chips);
        std::fputs(formatGpioReport(reports).c_str(), stdout);
        // A chip asked for by name that cannot be opened is bad input; with no names, a
        // machine without chips is a fine answer.
        const bool missing = std::any_of(reports.begin(), reports.end(),
            [&](const GpioChipReport& r) { return !probe.chips.empty() && !r.error.empty(); });
        return missing ? kExitUsage : kExitOk;
    }
    return kExitUsage;
}

// Runs the one command the line named.
int runCommand(const Commands& c, const GlobalOptions& global)
{
    if (*c.run.cmd)
        return commandRun(c.run.args, global, *c.run.cmd);
    if (*c.bench.cmd)
        return commandBench(c.bench, global);
    if (*c.compare.cmd)
        return commandCompare(c.compare, global);
    if (*c.sweep.cmd)
        return commandSweep(c.sweep, global);
    if (*c.report.cmd)
        return commandReport(c.report, global);
    if (*c.capture.cmd)
        return commandCapture(c.capture);
    if (*c.inspect.cmd)
        return commandInspect(c.inspect, global);
    if (*c.power.cmd)
        return commandPower(c.power, global);
    if (*c.probe.cmd)
        return commandProbe(c.probe, global);
    if (*c.backends) {
        printBackends();
        return kExitOk;
    }
    if (*c.version) {
        std::printf(
            "jetagent %s (%s)\nOpenCV %s\n", JETAGENT_VERSION, JETAGENT_BUILD_TYPE, CV_VERSION);
        printBackends();
        return kExitOk;
    }
    return kExitUsage;
}

} // namespace

int runCli(int argc, char** argv)
{
    CLI::App app(
        "jetagent " JETAGENT_VERSION
        " - how fast and how costly vision inference really is, frame by frame.\n"
        "Reads frames from a source, runs models on them through an inference engine, and logs\n"
        "every frame's stage times and result, with a summary at the end.",
        "jetagent");
    GlobalOptions global;
    declareGlobalOptions(app, global);
    Commands commands;
    declareCommands(app, commands);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? kExitOk : kExitUsage;
    }
    if (global.showVersion) {
        std::printf("%s\n", JETAGENT_VERSION);
        return kExitOk;
    }
    if (app.get_subcommands().empty()) {
        std::fprintf(stderr,
            "%s\njetagent: a command is required (run, bench, compare, sweep, report, inspect, "
            "power, "
            "probe, "
            "capture, backends, version)\n",
            app.help().c_str());
        return kExitUsage;
    }

    try {
        setupLogging(global.level("info"));
        return runCommand(commands, global);
    } catch (const std::bad_alloc&) {
        const std::string limits = threadLimitsText();
        std::fprintf(
            stderr, "jetagent: out of memory%s%s\n", limits.empty() ? "" : ": ", limits.c_str());
        return kExitFailure;
    } catch (const std::system_error& e) {
        // Most often a thread the system would not start (EAGAIN): memory or threads ran out.
        const std::string limits = threadLimitsText();
        std::fprintf(stderr, "jetagent: the system refused a resource: %s%s%s\n", e.what(),
            limits.empty() ? "" : "; ", limits.c_str());
        return kExitFailure;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "jetagent: internal error: %s\n", e.what());
        return kExitFailure;
    }
}

} // namespace jetagent
