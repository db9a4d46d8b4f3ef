// The command line's declaration: every command's options, validators and help (cli_options.h).
#include "cli_options.h"

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
#include "jetagent/base/format.h"
#include "jetagent/base/json_text.h"
#include "jetagent/base/log.h"
#include "jetagent/base/plugin.h"
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

// The longer help of compare, sweep and report (their footers).
const char* const kCompareHelp =
    "\nRuns MODEL through the REFERENCE engine and the CANDIDATE engine on the same inputs, read\n"
    "from --inputs and preprocessed once (so both see identical tensors), and reports how far\n"
    "the candidate's outputs are from the reference's, and both engines' latencies. Inputs are\n"
    "read 32 at a time (so memory does not grow with --frames) and the engines take turns batch\n"
    "by batch, so that drift on a shared machine reaches both alike. Use it to trust a TensorRT "
    "fp16/int8 engine, or the CPU's own int8, against an\n"
    "fp32 engine before deploying it.\n\n"
    "Engine specs: BACKEND[:DEVICE[:PRECISION]][,key=value...]\n"
    "  BACKEND    auto, xnnpack, opencv, tensorrt (`jetagent backends` lists what this build\n"
    "             has; auto: tensorrt for gpu/dla, xnnpack for cpu)\n"
    "  DEVICE     cpu, gpu, dla0, dla1              PRECISION  fp32, fp16, int8\n"
    "  keys       the config's engine keys: fusion=on|off, onednn=on|off (xnnpack:\n"
    "             convolutions and linear layers on oneDNN, x86-64), threads=N, batch=N,\n"
    "             batch_min=N, batch_max=N, workspace_mb=N, dla_gpu_fallback=on|off,\n"
    "             timing_cache=on|off, cuda_graph=on|off, io_memory=auto|mapped|device\n"
    "  What a spec leaves out comes from --config's task engine section, else the defaults\n"
    "  (cpu, fp32, batch 1, fusion on). The opencv backend's thread pool is shared by the whole\n"
    "  process, so two opencv engines must have the same threads.\n\n"
    "Preprocessing: --config's task preprocess section; without --config torchvision's ImageNet\n"
    "evaluation (shorter side resized to crop x 256/224, centre crop of the model's H x W,\n"
    "RGB, /255, ImageNet mean and std).\n\n"
    "Per output tensor:\n"
    "  max abs error     max |cand - ref| over every value of every input\n"
    "  relative error    max |cand - ref| / max |ref| over the same (one scale for the whole\n"
    "                    output: a per-value ratio explodes where the reference is near zero)\n"
    "  top-1 agreement   fraction of inputs whose argmax is the same (outputs of >= 2 values)\n"
    "  top-5 overlap     mean of |top5(ref) & top5(cand)| / 5 (outputs of >= 5 values)\n"
    "Latency per engine: median, p90 and p99 of Session::run wall time over one run per batch\n"
    "of inputs, after --warmup untimed runs; and the means of the parts the backend times\n"
    "(host-to-device, compute, device-to-host; '-' where it does not separate them).\n\n"
    "--reference-model runs the reference on another model with the same input (the model\n"
    "before simplification or quantization); both engines default to MODEL.\n\n"
    "int8 engines calibrate on --calibration (or the task's engine.calibration), preprocessed\n"
    "as the inputs are.\n\n"
    "Exit codes: 0 every threshold given holds; 1 one does not (the report names it); 2 usage,\n"
    "configuration or input error, or a backend this build does not have.\n\n"
    "Examples:\n"
    "  jetagent compare models/shapes_cnn.onnx --candidate opencv:cpu:fp32,fusion=off \\\n"
    "      --config firmware-config/demo.yaml --frames 100\n"
    "  jetagent compare resnet18.onnx --candidate tensorrt:gpu:fp16 --min-top1 0.99 --json r.json\n"
    "  jetagent compare resnet18.onnx --candidate tensorrt:gpu:int8 --calibration calib/ \\\n"
    "      --inputs file://images/\n"
    "  jetagent compare models/shapes_cnn.onnx --config firmware-config/demo.yaml \\\n"
    "      --reference xnnpack:cpu:fp32 --candidate xnnpack:cpu:int8 --calibration calib/ \\\n"
    "      --min-top1 0.99          int8 on the CPU (calib/: `jetagent capture --seed 7 ...`)\n";

const char* const kSweepHelp = R"(
A cell is one model x engine x batch size x thread count. The engines of one model, batch and
thread count take turns in --rounds rounds, so that drift on a shared machine hits each alike.
Each cell: its engine built twice (cold, with an empty cache, then warm, from the cache), --warmup
untimed runs, then --iterations timed runs (or --duration seconds) of Session::run.

Writes into OUT: results.csv (one row per cell, units in the column names), sweep.json (the cells,
the derived tables and the context), sweep.md (tables for papers and issues) and report.html (an
offline page with charts; needs Debian's libjs-chart.js). A cell that fails is recorded with its
error and the sweep goes on. Ctrl-C stops within the current run (or build) and writes the
groups done; --resume continues a sweep in the same directory, skipping the cells in its results.csv.

Examples:
  jetagent sweep --models models/reference --engines xnnpack,opencv -o out/cnn
  jetagent sweep --models mobilenet_v2 --batch 1,2,4,8,16 --iterations 100 -o out/scaling
  jetagent sweep firmware-config/studies/cnn-pre-post.yaml -o out/pre-post
)";

const char* const kReportHelp = R"(
Reads one run directory, as `jetagent run` or the service writes it under logging.dir:
summary.json, every <task>.frames.csv segment and, when the run read power rails, power.csv.
Writes one HTML page that opens offline (Chart.js from Debian's libjs-chart.js inlined):
  - the run: config, board and power mode, tasks, frame counts, drops, failures
  - per task: end-to-end and inference latency over time, with deadline misses, failed frames
    and gaps in frame_id marked; a histogram and a percentile table (min, p50, p90, p99, max,
    mean, count; nearest rank, from every CSV row) per stage; energy per frame over time;
    the GPIO measurement windows (time, frames, energy); for a task over several streams (the
    stream column), a table per stream (frames, missing ids, failed, fps, end-to-end p50, p99,
    max, deadline misses, top-1) and an end-to-end line per stream
  - power per rail over time with the frames' inference windows, temperatures and clocks
A chart without data is left out with a line saying why. Plotted series are cut to about 4000
points, each bucket's min and max kept, so spikes stay; the tables use every row. Damaged CSV
lines (a wrong field count, a non-number, a last line cut by a crash) are skipped and counted,
on the page and on stderr, each quoted at most as a short escaped excerpt; a line over 64 KiB is
damaged too, and never held whole. A run that crashed before its summary.json is reported from
its CSVs. The run's files are read only as regular files in RUN_DIR: a symbolic link (even to a
file inside), a FIFO, a device or a directory by a run file's name is refused, naming it.
A frame CSV's frame_id must be a non-negative integer (at most 2^64-1) greater than the line
before's of its stream (each stream numbers its own frames), and power.csv's time_ns must never go back: a repeated or out-of-order line is damaged,
skipped and counted like the others; a segment whose header names a column twice is skipped.

The page: -o PATH names a new file; an existing one is refused (exit 2) unless --force is given,
and even then only a regular file is replaced, never a link, a device, a FIFO or a directory.
Without -o the page is RUN_DIR/report.html, and running report again replaces it (if it is a
regular file). The page is written to a temporary file beside it and renamed into place.

Sweeps of several devices: given two or more sweep directories (what `jetagent sweep -o` wrote,
each with its sweep.json), report compares them cell by cell (model x engine x precision x batch
x threads; the precision as the engine resolved it) and writes ./devices-report.html and
./devices-report.md (-o PAGE.html: PAGE.md beside it; the defaults are replaced when report runs
again, a path given only with --force; never into a sweep directory). Each device is labelled by
its sweep's context (module, power mode, clocks), with the directory added where two are the
same. The first directory is the baseline: speed-up = the device's throughput / the first's for
the same cell (throughput = batch / mean latency). Per cell and device: p50 and p99 latency,
images/s, speed-up, energy per inference (mJ; "—" without power rails), and on how many devices
the cell was measured; a cell a sweep lacks is shown as missing, one that failed as failed.
A sweep that shares no measured cell with the first is refused (exit 2), naming each directory
and its cells. A run directory among sweep directories is refused too.

Examples:
  jetagent report jetagent-logs/20260101T120000Z         writes .../report.html
  jetagent report RUN -o /tmp/run.html                   elsewhere (a new file)
  jetagent report RUN -o /tmp/run.html --force           replacing an earlier page there
  chromium --headless --screenshot RUN/report.html       a picture of it
  jetagent report out/agx-maxn out/agx-15w out/nano      three sweeps compared (vs agx-maxn)
)";
static_assert(kMaxCsvLineBytes == 64 * 1024, "kReportHelp names the line bound: 64 KiB");

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

std::string boardProfileIds()
{
    std::string ids;
    for (const std::string& id : builtinBoardProfileIds())
        ids += (ids.empty() ? "" : ", ") + id;
    return ids;
}

std::string fixtureBoardIds()
{
    std::string ids;
    for (const std::string& id : fixtures::fixtureBoardIds())
        ids += (ids.empty() ? "" : ", ") + id;
    return ids;
}

// Which plugins are installed, for the top-level help and `backends --help`.
std::string pluginsHelp()
{
    std::string text = "Plugins (loaded only when a run asks for them; `jetagent backends` "
                       "says more):\n";
    for (const PluginPresence& p : pluginPresence())
        text += formatText("  %-11s %-14s %s\n", p.plugin.name,
            p.present ? "present" : "not installed", p.plugin.provides);
    return text;
}

} // namespace

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
            "  jetagent report out/agx-orin out/orin-nano             sweeps of two boards "
            "compared\n"
            "  jetagent inspect model.onnx --prepared                 parameters, MACs, "
            "preparation\n"
            "  jetagent power --csv power.csv                         live rails and "
            "temperatures\n"
            "  jetagent probe cameras                                 cameras, formats, controls\n"
            "  jetagent probe gpio                                    GPIO chips and lines\n"
            "  jetagent run -c my.yaml -s v4l2:///dev/video0 --display   the live camera demo\n"
            "  jetagent <command> --help                              options of one command\n\n") +
        pluginsHelp() + "\n" + kExitCodes);
}

namespace {

// run: the config, the keys the command line replaces, and how a stop waits.
void declareRun(CLI::App& app, RunCommand& run)
{
    run.cmd = app.add_subcommand("run", "Run models on a source, log every frame, print a summary");
    run.cmd
        ->add_option("-c,--config", run.options.config,
            "Agent config (YAML); see firmware-config/ for examples")
        ->required();
    run.cmd->add_option("-s,--source", run.options.sources,
        "Source URI, replacing source.uri of the config. Repeat it for several streams\n"
        "(NAME=URI names one; otherwise stream0, stream1, ...): they replace the config's\n"
        "sources, each with the first source's other settings (synthetic ones with seeds\n"
        "seed, seed+1, ... so that they differ), and every task serves them all");
    run.cmd
        ->add_option("-n,--frames", run.options.frames, "Stop after N source frames (0: no limit)")
        ->transform(wholeNumber(0, kMaxCount));
    run.cmd->add_option("-d,--duration", run.options.duration, "Stop after S seconds (0: no limit)")
        ->check(kSeconds);
    run.cmd->add_option(
        "-o,--log-dir", run.options.logDir, "Directory for run logs, replacing logging.dir");
    run.cmd->add_flag("--as-fast-as-possible", run.options.asFastAsPossible,
        "Do not pace files and generated sources at their frame rate; queue every frame instead "
        "of\n"
        "dropping late ones (offline evaluation and throughput)");
    run.cmd->add_flag("--display", run.options.display,
        "Show the frames in a window with the results, fps, latency, power and temperature\n"
        "drawn on them (the live demo; q or Esc stops the run; the window is in the\n"
        "jetagent-opencv package). Headless without it");
    run.cmd->add_option("--output", run.options.output,
        "Send the annotated frames (each with its own result) to a new video file\n"
        "(file://annotated.mp4; .mp4, .mkv, .mov, .avi; an existing file is refused, never\n"
        "overwritten), or over the network as H.264: rtp://HOST:PORT (RTP/UDP to one receiver;\n"
        "the SDP it needs is logged at start) or rtsp://@:PORT/PATH (an RTSP server on every\n"
        "interface, rtsp://127.0.0.1:PORT/PATH for this machine only; encodes only while a\n"
        "client plays). Files need the jetagent-opencv package, rtsp:// jetagent-rtsp");
    run.cmd->add_option("--serve", run.options.serve,
        "[ADDR:]PORT: serve a live web view of the run (video, results, latency, power and\n"
        "temperature charts; JSON at /api/status, /api/frames, /api/events) on "
        "127.0.0.1:PORT,\n"
        "or on ADDR, which needs http.token in the config unless it is loopback");
    run.cmd->add_option("--prom-textfile", run.options.promTextfile,
        "At the end, write the run's figures for Prometheus (docs/prometheus.md) to\n"
        "DIR/jetagent_run_<config>.prom, for node_exporter's --collector.textfile.directory");
    run.cmd
        ->add_option("--stop-timeout", run.options.stopTimeout,
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
    bench.cmd->add_option("--prom-textfile", bench.options.promTextfile,
        "Also write the agent rounds' latency histograms and counters for Prometheus\n"
        "(docs/prometheus.md) to DIR/jetagent_bench_<task>.prom, for node_exporter's\n"
        "--collector.textfile.directory");
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
        "-s,--source", capture.options.uri, "Source URI (replaces the config's)");
    capture.cmd
        ->add_option("-n,--frames", capture.count, "Frames to save (0: until the source ends)")
        ->transform(wholeNumber(0, kMaxCount));
    capture.cmd->add_option("--out", capture.out, "Output directory; must be new or empty")
        ->required();
    capture.cmd->add_option("--width", capture.options.width, "Synthetic frame width")
        ->capture_default_str()
        ->transform(wholeNumber(16, 8192));
    capture.cmd->add_option("--height", capture.options.height, "Synthetic frame height")
        ->capture_default_str()
        ->transform(wholeNumber(16, 8192));
    capture.cmd->add_option("--seed", capture.options.seed, "Synthetic stream seed")
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
    inspect.cmd->add_option("--calibration", inspect.options.calibration,
        "xnnpack: compile (and profile) the int8 engine, calibrated on these images (a directory "
        "or a video) resized to the model's input");
    inspect.cmd
        ->add_option("--calibration-frames", inspect.options.calibrationFrames,
            "Samples --calibration takes")
        ->check(CLI::Range(1, 100000));
    inspect.cmd->add_flag_callback(
        "--no-onednn", [&inspect] { inspect.options.onednn = false; },
        "xnnpack: keep every convolution and linear layer on XNNPACK (engine.onednn: false), as on "
        "ARM");
    inspect.cmd->add_flag("--int8", inspect.options.int8,
        "xnnpack: compile a QDQ model (QuantizeLinear/DequantizeLinear) in int8 with its own "
        "scales,\nas precision: int8 runs it (the steps show which run int8 and where conversions "
        "remain)");
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
    sweep.cmd->add_option("--prom-textfile", o.promTextfile,
        "Also write each cell's engine-loop latency histogram for Prometheus\n"
        "(docs/prometheus.md) to DIR/jetagent_sweep_<study>.prom, for node_exporter's\n"
        "--collector.textfile.directory");
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

// report: one run's logs as an offline HTML page, or sweeps of several devices compared.
void declareReport(CLI::App& app, ReportCommand& report)
{
    RunReportOptions& o = report.options;
    report.cmd = app.add_subcommand("report",
        "One run's logs (a run's or the service's) as an offline HTML page with charts, or "
        "sweeps of several devices compared cell by cell");
    report.cmd
        ->add_option("dirs", report.dirs,
            "The run's directory (under logging.dir), or two or more sweep directories (the "
            "first is the baseline)")
        ->required();
    report.cmd->add_option("-o,--output", o.output,
        "The page's path: a new file, never overwritten without --force (default "
        "RUN_DIR/report.html, which replaces the run's earlier report; for sweeps "
        "./devices-report.html, the Markdown beside it as .md)");
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

} // namespace

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
        "backends", "List inference backends and plugins, and whether this build can use them");
    c.backends->footer("\n" + pluginsHelp());
    c.version = app.add_subcommand("version", "Print the version of jetagent and of its libraries");
    pointToPages(app, c);
}
} // namespace jetagent
