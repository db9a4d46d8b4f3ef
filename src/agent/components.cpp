// What a config opens, and reloads (components.h).
#include "components.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "display/display.h"
#include "display/overlay_builder.h"
#include "jetagent/base/clock.h"
#include "jetagent/base/format.h"
#include "jetagent/base/json_text.h"
#include "jetagent/base/log.h"
#include "jetagent/base/process_usage.h"
#include "jetagent/engines/cache_file.h"
#include "jetagent/hal/gstreamer_source.h"
#include "jetagent/hal/sysfs.h"
#include "jetagent/power/power_monitor.h"
#include "live/live_server.h"
#include "output/frame_log.h"
#include "output/power_log.h"
#include "output/run_directory.h"
#include "output/status_lines.h"
#include "output/summary.h"
#include "run/event_loop.h"
#include "run/memory_budget.h"
#include "run/pipeline.h"
#include "run/run_context.h"
#include "service/gpio_signals.h"
#include "service/run_control.h"
#include "service/service.h"
#include "service/stop_signals.h"
#include "tasks/action_task.h"
#include "tasks/classification_task.h"

namespace fs = std::filesystem;

namespace jetagent {

// Opens the power monitor the config asks for; null (and no error) when sampling is off or the
// board has nothing to sample.
Expected<std::unique_ptr<PowerMonitor>> openPower(const AgentConfig& config)
{
    const PowerConfig& pc = config.power;
    if (pc.sampling == PowerSampling::Off)
        return std::unique_ptr<PowerMonitor>();
    auto log = logger("power");
    PowerMonitorOptions options;
    options.sysfsRoot = pc.sysfsRoot;
    options.board = pc.board;
    options.sampler.railHz = pc.railHz;
    options.sampler.stateHz = pc.stateHz;
    options.sampler.ringCapacity = static_cast<size_t>(pc.ringCapacity);
    // power.csv's rows lag the sampler by up to a second: 32 s of state samples at any state_hz.
    constexpr double kStateHistoryS = 32.0;
    options.sampler.stateHistory = std::max(
        options.sampler.stateHistory, static_cast<size_t>(std::ceil(pc.stateHz * kStateHistoryS)));
    auto opened = PowerMonitor::open(options);
    if (!opened) {
        const Status& s = opened.status();
        return s.withContext(
            config.where(s.kind() == ErrorKind::NotFound ? "power.sysfs_root" : "power.board"));
    }
    std::unique_ptr<PowerMonitor> monitor = std::move(opened).value();
    const PowerSetup& setup = monitor->setup();
    for (const auto& line : setup.describe())
        log->info("{}", line);
    if (!setup.board.matched)
        log->warn("unknown board: using the sensors found, without a profile's total rail or "
                  "known quirks");
    if (setup.rails.empty() && config.power.sampling == PowerSampling::On)
        return Status::unsupported(config.where("power.sampling") +
            ": 'on', but no power rails were found under " + pc.sysfsRoot +
            "; use 'auto' to run without energy figures");
    if (setup.rails.empty() && setup.thermalZones == 0) {
        log->info("nothing to sample: no rails, no thermal zones");
        return std::unique_ptr<PowerMonitor>();
    }
    return monitor;
}

// Identity of a file a task reads, so that a reload rebuilds a task whose model or labels were
// replaced on disk even when its config text is the same.
static std::string fileStamp(const std::string& path)
{
    if (path.empty())
        return "-";
    struct stat st { };
    if (::stat(path.c_str(), &st) != 0)
        return path + ": missing";
    return path + ": " + std::to_string(st.st_size) + " bytes, " +
        std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

static std::string taskKey(const AgentConfig& config, size_t index)
{
    const TaskConfig& t = config.tasks[index];
    return config.sectionText("tasks[" + std::to_string(index) + "]") + "\n" + fileStamp(t.model) +
        "\n" + fileStamp(t.labels) + "\n" + fileStamp(t.action.head);
}

// What the tasks see of the sources: a task built on them can be kept on others only when these
// are the same.
static std::string sourceShape(const Components& c)
{
    std::string text;
    for (const auto& source : c.sources) {
        const SourceInfo& info = source->info();
        text += std::to_string(info.width) + "x" + std::to_string(info.height);
        for (const auto& name : info.classNames)
            text += "," + name;
        text += ";";
    }
    return text;
}

// The source a task is built on: the first of its streams. The classes its other streams know
// must be the same (a task maps one list of source classes to its labels); streams that know none
// (cameras) go with any.
static Expected<const SourceInfo*> taskSource(
    const AgentConfig& config, size_t task, const Components& c)
{
    const std::vector<size_t> streams = config.taskStreams(task);
    size_t first = streams.front();
    for (size_t s : streams) {
        const SourceInfo& info = c.sources[s]->info();
        if (info.classNames.empty())
            continue;
        const SourceInfo& chosen = c.sources[first]->info();
        if (chosen.classNames.empty()) {
            first = s;
        } else if (info.classNames != chosen.classNames) {
            const std::string key = config.tasks[task].streams.empty()
                ? "tasks[" + std::to_string(task) + "]"
                : "tasks[" + std::to_string(task) + "].streams";
            return Status::invalid(config.where(key) + ": streams " + config.sources[first].name +
                " and " + config.sources[s].name +
                " know their classes in different lists (a directory's are its sub-directories "
                "in alphabetical order, a synthetic source's its own); a task scores the streams "
                "of one list, so give them separate tasks");
        }
    }
    return &c.sources[first]->info();
}

static Expected<std::unique_ptr<Task>> createTask(
    const AgentConfig& config, size_t index, const SourceInfo& info)
{
    if (config.tasks[index].type == "action") {
        auto task = ActionTask::create(config, index, info);
        if (!task)
            return task.status();
        return std::unique_ptr<Task>(std::move(task).value());
    }
    auto task = ClassificationTask::create(config, index, info);
    if (!task)
        return task.status();
    return std::unique_ptr<Task>(std::move(task).value());
}

// The tasks `next` will run, in order: its own, and those it keeps from `running`.
static std::vector<const Task*> tasksOf(const Components& next, const Components& running)
{
    std::vector<const Task*> tasks;
    for (size_t i = 0; i < next.tasks.size(); ++i)
        tasks.push_back(i < next.keptFrom.size() && next.keptFrom[i] >= 0
                ? running.tasks[static_cast<size_t>(next.keptFrom[i])].get()
                : next.tasks[i].get());
    return tasks;
}

// Builds the tasks of `config` on `info` into `out`, except those for which `old` (when given, and
// when it ran on the same source shape) has a task with the same key: those are only marked in
// out.keptFrom, for adoptKeptTasks once `old` has stopped.
static Status buildTasks(const AgentConfig& config, const Components& sources, Components* old,
    ServiceNotifier& notify, Components& out)
{
    const bool sameSource = old && old->sourceShape == sourceShape(sources);
    std::vector<int> claims(config.tasks.size(), -1);
    std::vector<bool> claimed(old ? old->tasks.size() : 0, false);
    std::vector<std::string> keys;
    for (size_t i = 0; i < config.tasks.size(); ++i) {
        keys.push_back(taskKey(config, i));
        for (size_t j = 0; sameSource && j < old->tasks.size(); ++j)
            if (!claimed[j] && old->tasks[j] && old->taskKeys[j] == keys[i]) {
                claims[i] = static_cast<int>(j);
                claimed[j] = true;
                break;
            }
    }
    std::vector<std::unique_ptr<Task>> built(config.tasks.size());
    for (size_t i = 0; i < config.tasks.size(); ++i) {
        if (claims[i] >= 0)
            continue;
        StartupKeepAlive keepAlive(notify, "building task " + config.tasks[i].name);
        auto info = taskSource(config, i, sources);
        if (!info)
            return info.status();
        auto task = createTask(config, i, *info.value());
        if (!task)
            return task.status();
        built[i] = std::move(task).value();
    }
    out.tasks = std::move(built);
    out.taskKeys = keys;
    out.keptFrom = claims;
    return Status();
}

// Moves the tasks `next` keeps from `old` into place; once `old` has stopped using them.
void adoptKeptTasks(Components& next, Components& old)
{
    for (size_t i = 0; i < next.keptFrom.size(); ++i)
        if (next.keptFrom[i] >= 0) {
            next.tasks[i] = std::move(old.tasks[static_cast<size_t>(next.keptFrom[i])]);
            logger("agent")->info("task {}: unchanged, kept", next.tasks[i]->name());
        }
    next.keptFrom.clear();
}

static Expected<std::unique_ptr<FrameSource>> openSource(const AgentConfig& config, size_t index)
{
    const StreamConfig& stream = config.sources[index];
    auto opened = openFrameSource(stream.source);
    if (!opened) {
        const Status& s = opened.status();
        return Status::error(s.kind(), withoutPasswords(s.message()))
            .withContext(config.where(stream.key + ".uri"));
    }
    return std::move(opened).value();
}

// Every stream's source, in order; none when one fails (its error names it).
static Status openSources(const AgentConfig& config, ServiceNotifier& notify, Components& c)
{
    c.sources.clear();
    for (size_t i = 0; i < config.sources.size(); ++i) {
        StartupKeepAlive keepAlive(
            notify, "opening " + withoutPasswords(config.sources[i].source.uri));
        auto source = openSource(config, i);
        if (!source) {
            c.sources.clear();
            return source.status();
        }
        c.sources.push_back(std::move(source).value());
    }
    c.sourceShape = sourceShape(c);
    return Status();
}

// http.listen and http.token, whether from the file or --serve: checked before anything opens.
static Status checkHttpConfig(const AgentConfig& config)
{
    std::string key;
    const std::string problem = httpConfigProblem(config.http, key);
    if (problem.empty())
        return Status();
    std::string text = config.where(key) + ": " + problem;
    if (key != "http.listen")
        text += " (the address is " + config.where("http.listen") + ")";
    return Status::invalid(text);
}

// The live web view, when http.listen asks for one; it reads the power monitor, opened before.
static Status openLiveServer(const AgentConfig& config, const RunOptions& options, Components& c)
{
    if (config.http.listen.empty())
        return Status();
    if (Status s = checkHttpConfig(config); !s)
        return s;
    if (options.liveChartJs.empty())
        return Status::unsupported(config.where("http.listen") +
            ": this command does not serve the live view (its page needs Chart.js); use `jetagent "
            "run`");
    auto live =
        LiveServer::start(config.http, options.liveChartJs, c.monitor.get(), c.tasks.size());
    if (!live)
        return live.status();
    c.live = std::move(live).value();
    return Status();
}

Status openComponents(
    const AgentConfig& config, const RunOptions& options, ServiceNotifier& notify, Components& c)
{
    const std::string& runPrefix = options.runPrefix;
    if (Status s = checkHttpConfig(config); !s)
        return s;
    const int64_t opening = monotonicNs();
    if (Status s = openSources(config, notify, c); !s)
        return s;
    c.sourceOpenNs = monotonicNs() - opening;
    const int64_t building = monotonicNs();
    if (Status s = buildTasks(config, c, nullptr, notify, c); !s)
        return s;
    c.engineBuildNs = monotonicNs() - building;
    c.keptFrom.clear();
    auto gpio = GpioSignals::open(config, tasksOf(c, c));
    if (!gpio)
        return gpio.status();
    c.gpio = std::move(gpio).value();
    auto power = openPower(config);
    if (!power)
        return power.status();
    c.monitor = std::move(power).value();
    if (Status s = openLiveServer(config, options, c); !s)
        return s;
    if (config.mqtt.enabled()) {
        auto mqtt =
            MqttTelemetry::start(config.mqtt, telemetryDeviceId(SysfsRoot(config.power.sysfsRoot)));
        if (!mqtt) {
            // "mqtt.password_file '...': ..." is placed at its key's line; others at the section's.
            const Status failure = mqtt.status();
            const std::string& message = failure.message();
            const std::string key = message.substr(0, message.find(' '));
            if (key.rfind("mqtt.", 0) == 0 && key.size() < message.size())
                return Status::error(
                    failure.kind(), config.where(key) + message.substr(key.size()));
            return failure.withContext(config.where("mqtt"));
        }
        c.mqtt = std::move(mqtt).value();
    }
    // The live view's video is the view's drawn frames, so the view runs for it too.
    if (config.display.window || !config.display.output.empty() || c.live) {
        size_t maxBatch = 1;
        for (const auto& task : c.tasks)
            maxBatch = std::max(maxBatch, static_cast<size_t>(std::max(task->batchSize(), 1)));
        // Every stream is shown (several as a mosaic), each task's results on its streams.
        std::vector<ViewStream> streams;
        for (size_t i = 0; i < c.sources.size(); ++i)
            streams.push_back({config.sources[i].name, c.sources[i]->info()});
        std::vector<std::vector<size_t>> served;
        for (size_t i = 0; i < c.tasks.size(); ++i)
            served.push_back(config.taskStreams(i));
        auto sink = DisplaySink::open(
            config.display, streams, config.run.pacing == Pacing::None, served, maxBatch);
        if (!sink)
            return sink.status();
        c.display = std::move(sink).value();
    }
    std::vector<SourceInfo> infos;
    for (const auto& source : c.sources)
        infos.push_back(source->info());
    if (Status s = checkMemoryBudget(config, infos, tasksOf(c, c),
            c.display ? c.display->frames().capacity() : 0, c.display != nullptr);
        !s)
        return s;
    auto runDir = createRunDirectory(config.logging.dir, runPrefix);
    if (!runDir)
        return runDir.status().withContext(config.where("logging.dir"));
    c.runDirectory = runDir.value();
    if (c.display)
        c.display->setSdpFile((fs::path(c.runDirectory) / "stream.sdp").string());
    return Status();
}

static Status prepareReload(const AgentConfig& current, Components& running,
    const RunOptions& options, ServiceNotifier& notify, Reload& reload)
{
    const AgentConfig& config = reload.config;
    if (running.display || config.display.window || !config.display.output.empty() ||
        !config.http.listen.empty())
        return Status::unsupported("reloading is not supported with a live window, a "
                                   "recording or the live web view (display.window, "
                                   "display.output, http.listen); restart instead");
    if (config.sectionText("mqtt") != current.sectionText("mqtt"))
        return Status::unsupported("reloading does not change the mqtt section (its connection "
                                   "and topics stay those the daemon started with); restart "
                                   "instead");
    reload.sourceChanged = config.sectionText("source") != current.sectionText("source") ||
        config.sectionText("sources") != current.sectionText("sources") ||
        config.sources.size() != current.sources.size();
    for (size_t i = 0; !reload.sourceChanged && i < config.sources.size(); ++i)
        reload.sourceChanged = config.sources[i].source.uri != current.sources[i].source.uri ||
            config.sources[i].name != current.sources[i].name;
    if (!reload.sourceChanged)
        if (Status s = buildTasks(config, running, &running, notify, reload.next); !s)
            return s;
    auto power = openPower(config);
    if (!power)
        return power.status();
    reload.next.monitor = std::move(power).value();
    auto runDir = createRunDirectory(config.logging.dir, options.runPrefix);
    if (!runDir)
        return runDir.status().withContext(config.where("logging.dir"));
    reload.next.runDirectory = runDir.value();
    return Status();
}

// The half of a reload done once the current run has drained and let go of its devices: a changed
// source is switched (a camera cannot be opened twice) and the GPIO lines are requested for the
// new config. On failure the old source and lines are taken back and the old config goes on
// (`switched` false); an error is returned only when even that fails.
Status finishReload(const AgentConfig& current, Components& running, ServiceNotifier& notify,
    Reload& reload, bool& switched)
{
    auto log = logger("agent");
    switched = false;
    Status problem;
    if (reload.sourceChanged) {
        running.sources.clear(); // a camera cannot be opened twice
        problem = openSources(reload.config, notify, reload.next);
        if (problem.ok())
            problem = buildTasks(reload.config, reload.next, &running, notify, reload.next);
    }
    if (problem.ok()) {
        auto gpio = GpioSignals::open(reload.config, tasksOf(reload.next, running));
        if (gpio)
            reload.next.gpio = std::move(gpio).value();
        else
            problem = gpio.status();
    }
    if (problem.ok()) {
        switched = true;
        reload.next.mqtt = std::move(running.mqtt); // one connection for the daemon's life
        return Status();
    }
    log->error("reload failed, keeping the previous config: {}", problem.message());
    reload.next.sources.clear();
    if (!running.sourcesOpen())
        if (Status s = openSources(current, notify, running); !s)
            return s.withContext("reopening the previous sources after a failed reload");
    Components none;
    auto gpio = GpioSignals::open(current, tasksOf(running, none));
    if (!gpio)
        return gpio.status().withContext(
            "requesting the previous config's GPIO lines again after a failed reload");
    running.gpio = std::move(gpio).value();
    return Status();
}

// A run whose every frame failed in some task measured nothing there: it must not end as a
// success. Ok when each task has at least one good frame (or none at all).

Status prepareReloadOf(const AgentConfig& config, Components& c, const RunOptions& options,
    ServiceNotifier& notify, std::unique_ptr<Reload>& pending)
{
    auto next = options.reload();
    if (!next)
        return next.status();
    auto reload = std::make_unique<Reload>();
    reload->config = std::move(next).value();
    notify.beginExtendedPhase(reload->config.run.startupTimeoutS, true);
    if (Status problem = prepareReload(config, c, options, notify, *reload); !problem) {
        if (!reload->next.runDirectory.empty())
            fs::remove(reload->next.runDirectory);
        return problem;
    }
    pending = std::move(reload);
    return Status();
}

// The run's event loop: the signals, the end of the pipeline, and the timers of the status lines,
// systemd's status, the stop deadline and a window's redraws. Returns once the pipeline has
// finished or `control` has abandoned the run.

} // namespace jetagent
