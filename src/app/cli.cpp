// The command line: jetagent run | bench | compare | sweep | report | inspect | power | probe |
// capture | backends | version.
#include "cli.h"

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
#include "devices_report.h"
#include "html_report.h"
#include "inspect.h"
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
#include "metrics/prom_textfile.h"
#include "output/logging.h"
#include "power_command.h"
#include "prom_results.h"
#include "run_report.h"
#include "sweep.h"
#include "tasks/calibration.h"
#include "version.h"

namespace jetagent {

namespace {

int report(const Status& status)
{
    std::fprintf(stderr, "jetagent: %s\n", status.message().c_str());
    return status.isUsageError() ? kExitUsage : kExitFailure;
}

// The command line's replacements of config keys, applied to `config` and listed in `overrides`.
void applyRunOverrides(const RunArgs& args, const CLI::App& cmd, AgentConfig& config,
    std::vector<std::string>& overrides)
{
    // NAME=URI names a stream; a URI whose '=' comes after other characters (a gst:// pipeline's
    // properties, say) is a URI.
    auto nameOf = [](const std::string& arg, std::string& name, std::string& uri) {
        const size_t eq = arg.find('=');
        if (eq != std::string::npos && validStreamName(arg.substr(0, eq))) {
            name = arg.substr(0, eq);
            uri = arg.substr(eq + 1);
            return true;
        }
        uri = arg;
        return false;
    };
    if (args.sources.size() == 1 && config.sources.size() == 1) {
        std::string name;
        nameOf(args.sources[0], name, config.source().uri);
        if (!name.empty())
            config.sources[0].name = name;
        overrides.push_back("source.uri=" + config.source().uri);
        config.overriddenBy["source.uri"] = "--source";
    } else if (!args.sources.empty()) {
        // Several streams: each takes the first source's settings, and every task serves all.
        const StreamConfig first = config.sources.front();
        config.sources.clear();
        for (size_t i = 0; i < args.sources.size(); ++i) {
            StreamConfig stream = first;
            stream.name = defaultStreamName(i);
            stream.key = "sources[" + std::to_string(i) + "]";
            std::string name;
            if (nameOf(args.sources[i], name, stream.source.uri))
                stream.name = name;
            stream.source.seed = first.source.seed + i;
            config.overriddenBy[stream.key + ".uri"] = "--source";
            overrides.push_back(stream.key + "=" + stream.name + "=" + stream.source.uri);
            config.sources.push_back(std::move(stream));
        }
        for (TaskConfig& task : config.tasks)
            task.streams.clear();
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
    if (cmd.count("--prom-textfile"))
        if (Status s = checkPromTextfileDir(args.promTextfile); !s)
            return report(s);
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
    options.mainStartNs = global.mainStartNs;
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
    // Written for a failed run too: what it measured until then.
    const Status textfile = args.promTextfile.empty()
        ? Status()
        : writeRunTextfile(args.promTextfile, config, *run).withContext("--prom-textfile");
    if (!run->failure.ok()) {
        std::fprintf(stderr, "jetagent: the run failed: %s\n", run->failure.message().c_str());
        return kExitFailure;
    }
    if (!textfile)
        return report(textfile);
    return kExitOk;
}

void printBackends()
{
    for (const BackendInfo& b : listBackends())
        std::printf("%-10s %-13s %s\n", b.name.c_str(), b.available ? "available" : "not available",
            b.details.c_str());
    std::printf(
        "\nplugins (in %s; loaded only when a run asks for them):\n", pluginDirectory().c_str());
    for (const PluginPresence& p : pluginPresence())
        std::printf("%-10s %-13s %s; %s\n", p.plugin.name, p.present ? "present" : "not installed",
            p.plugin.provides,
            p.present ? p.path.c_str()
                      : (std::string("install the ") + p.plugin.package + " package").c_str());
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

// report over two or more sweep directories: the devices compared.
int commandDevicesReport(const ReportCommand& command, const GlobalOptions& global)
{
    DevicesReportOptions options;
    options.sweepDirs = command.dirs;
    options.output = command.options.output;
    options.force = command.options.force;
    options.chartJs = command.options.chartJs;
    auto result = writeDevicesReport(options);
    if (!result)
        return report(result.status());
    if (!global.quiet)
        std::printf("%s: %zu bytes, %zu charts\n%s: %zu cells, %zu measured on every device\n",
            result->htmlPath.c_str(), result->bytes, result->charts, result->markdownPath.c_str(),
            result->cells, result->sharedCells);
    return kExitOk;
}

int commandReport(ReportCommand command, const GlobalOptions& global)
{
    setLogLevel(global.level("warn"));
    std::string runs, sweeps;
    for (const std::string& dir : command.dirs) {
        std::string& list = isSweepDirectory(dir) ? sweeps : runs;
        list += (list.empty() ? "" : ", ") + dir;
    }
    if (!sweeps.empty() && !runs.empty())
        return report(Status::invalid("report compares sweep directories or reports one run, not "
                                      "both: sweep(s) " +
            sweeps + "; not sweep(s) (no sweep.json): " + runs));
    if (!sweeps.empty() && command.dirs.size() == 1)
        return report(Status::invalid(sweeps +
            " is a sweep directory: its own report.html and sweep.md are there; give two or more "
            "sweep directories to compare devices"));
    if (!sweeps.empty())
        return commandDevicesReport(command, global);
    if (command.dirs.size() > 1)
        return report(Status::invalid(
            "report takes one run directory, or two or more sweep directories (with a "
            "sweep.json): " +
            runs + " hold no sweep"));
    command.options.runDir = command.dirs.front();
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
    SourceOptions source = capture.options;
    if (!capture.config.empty()) {
        auto config = loadConfig(capture.config);
        if (!config)
            return report(config.status());
        source = config->source();
        if (capture.cmd->count("--source"))
            source.uri = capture.options.uri;
        if (capture.cmd->count("--width"))
            source.width = capture.options.width;
        if (capture.cmd->count("--height"))
            source.height = capture.options.height;
        if (capture.cmd->count("--seed"))
            source.seed = capture.options.seed;
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
    o.prepared |= o.profileRuns > 0 || !o.calibration.empty();
    o.makeCalibration = makeCalibrationData;
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
        return commandRun(c.run.options, global, *c.run.cmd);
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

int runCli(int argc, char** argv, int64_t mainStartNs)
{
    CLI::App app(
        "jetagent " JETAGENT_VERSION
        " - how fast and how costly vision inference really is, frame by frame.\n"
        "Reads frames from a source, runs models on them through an inference engine, and logs\n"
        "every frame's stage times and result, with a summary at the end.",
        "jetagent");
    GlobalOptions global;
    global.mainStartNs = mainStartNs;
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
