// One run of the agent: open the source, build the tasks, run the pipeline, log and summarise.
#include "agent.h"

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

#include "action_task.h"
#include "classification_task.h"
#include "display.h"
#include "event_loop.h"
#include "frame_log.h"
#include "gpio_signals.h"
#include "jetagent/base/clock.h"
#include "jetagent/base/format.h"
#include "jetagent/base/json_text.h"
#include "jetagent/base/log.h"
#include "jetagent/base/process_usage.h"
#include "jetagent/engines/cache_file.h"
#include "jetagent/hal/gstreamer_source.h"
#include "jetagent/power/power_monitor.h"
#include "live_server.h"
#include "pipeline.h"
#include "power_log.h"
#include "run_context.h"
#include "run_control.h"
#include "service.h"
#include "stop_signals.h"
#include "summary.h"

namespace fs = std::filesystem;

namespace jetagent {

void setLogLevel(const std::string& level)
{
    spdlog::set_level(spdlog::level::from_str(level));
}

Expected<std::string> createRunDirectory(const std::string& base, const std::string& prefix)
{
    std::error_code ec;
    fs::create_directories(base, ec);
    if (ec)
        return Status::invalid("cannot create log directory '" + base + "': " + ec.message());
    const std::string stem = (fs::path(base) / (prefix + utcStamp())).string();
    for (int attempt = 1; attempt < 1000; ++attempt) {
        const std::string dir = attempt == 1 ? stem : stem + "-" + std::to_string(attempt);
        // mkdir, not create_directories: an existing directory must fail, so no earlier run is
        // overwritten.
        if (::mkdir(dir.c_str(), 0755) == 0)
            return dir;
        if (errno != EEXIST)
            return Status::invalid(
                "cannot create run directory '" + dir + "': " + errnoText(errno));
    }
    return Status::invalid("cannot find a free run directory name under '" + base + "'");
}

namespace {

std::string statusLine(
    const std::string& name, const LiveView& v, const std::vector<std::string>& labels, double fps)
{
    if (!v.haveLast)
        return name + ": waiting for the first result";
    auto label = [&](int i) {
        return i >= 0 && static_cast<size_t>(i) < labels.size()
            ? labels[static_cast<size_t>(i)].c_str()
            : "?";
    };
    const FrameRecord& r = v.last;
    std::string text = formatText("%s: frame %llu -> %s %.3f", name.c_str(),
        static_cast<unsigned long long>(r.frameId), r.topK > 0 ? label(r.labels[0]) : "(failed)",
        r.topK > 0 ? static_cast<double>(r.scores[0]) : 0.0);
    if (r.truth >= 0)
        appendText(text, " (truth %s)", label(r.truth));
    appendText(text, " | e2e %.2f ms | %.1f fps | %llu frames", nsToMs(r.times.endToEndNs), fps,
        static_cast<unsigned long long>(v.frames));
    if (v.scored > 0)
        appendText(text, " | top-1 %.1f%%",
            100.0 * static_cast<double>(v.correct) / static_cast<double>(v.scored));
    return text;
}

// "5.231 W VDD_IN, 48.5 C (tj-thermal)" for the status line; "" when nothing is known yet.
std::string powerStatus(const PowerMonitor& power)
{
    std::string text;
    PowerSample sample;
    const PowerSampler& sampler = power.sampler();
    if (sampler.haveRails() && sampler.latest(sample)) {
        text = formatText("%.3f W %s%s", static_cast<double>(sample.totalW),
            sampler.totalName().c_str(), sampler.totalIsEstimate() ? " (est.)" : "");
    }
    BoardStateSample state;
    if (sampler.stateReader() && sampler.latestState(state)) {
        const auto& zones = sampler.stateReader()->zones();
        int hottest = -1;
        for (size_t i = 0; i < zones.size() && i < state.zones.size(); ++i)
            if (zones[i].shown && state.zones[i].online &&
                (hottest < 0 ||
                    state.zones[i].celsius > state.zones[static_cast<size_t>(hottest)].celsius))
                hottest = static_cast<int>(i);
        if (hottest >= 0) {
            appendText(text, "%s%.1f C (%s)", text.empty() ? "" : ", ",
                state.zones[static_cast<size_t>(hottest)].celsius,
                zones[static_cast<size_t>(hottest)].type.c_str());
        }
    }
    return text;
}

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

// Builds the live view's overlay from the tasks' results at the frame being drawn and the power
// monitor; called from the view's thread, once per frame.
class OverlayBuilder {
public:
    OverlayBuilder(const std::vector<std::unique_ptr<Task>>& tasks, const PowerMonitor* monitor)
        : tasks_(&tasks), monitor_(monitor)
    {
    }

    void operator()(const std::vector<TaskAtFrame>& atFrame, Overlay& overlay) const
    {
        constexpr int32_t kShownResults = 3;
        for (size_t i = 0; i < tasks_->size() && i < atFrame.size(); ++i) {
            const Task& task = *(*tasks_)[i];
            const TaskAtFrame& a = atFrame[i];
            OverlayTask t;
            t.name = task.name();
            t.haveResult = a.haveResult;
            t.fps = a.fps;
            if (a.haveResult) {
                const FrameRecord& r = a.result;
                t.failed = !r.ok || r.topK == 0;
                for (int32_t k = 0; k < std::min(r.topK, kShownResults); ++k) {
                    const int32_t label = r.labels[static_cast<size_t>(k)];
                    const auto& labels = task.labels();
                    t.top.emplace_back(label >= 0 && static_cast<size_t>(label) < labels.size()
                            ? labels[static_cast<size_t>(label)]
                            : "#" + std::to_string(label),
                        r.scores[static_cast<size_t>(k)]);
                }
                t.endToEndMs = nsToMs(r.hasClip() ? r.resultLatencyNs() : r.endToEndNs());
                t.resultFrame = r.frameId;
                t.origin = !a.inferred ? OverlayTask::Origin::EarlierFrame
                    : r.hasClip()      ? OverlayTask::Origin::Clip
                                       : OverlayTask::Origin::ThisFrame;
            }
            overlay.tasks.push_back(std::move(t));
        }
        if (monitor_)
            overlay.board = powerStatus(*monitor_);
    }

private:
    const std::vector<std::unique_ptr<Task>>* tasks_;
    const PowerMonitor* monitor_;
};

// Identity of a file a task reads, so that a reload rebuilds a task whose model or labels were
// replaced on disk even when its config text is the same.
std::string fileStamp(const std::string& path)
{
    if (path.empty())
        return "-";
    struct stat st { };
    if (::stat(path.c_str(), &st) != 0)
        return path + ": missing";
    return path + ": " + std::to_string(st.st_size) + " bytes, " +
        std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

std::string taskKey(const AgentConfig& config, size_t index)
{
    const TaskConfig& t = config.tasks[index];
    return config.sectionText("tasks[" + std::to_string(index) + "]") + "\n" + fileStamp(t.model) +
        "\n" + fileStamp(t.labels) + "\n" + fileStamp(t.action.head);
}

// What the tasks see of a source: a task built on one source can be kept on another only when
// these are the same.
std::string sourceShape(const SourceInfo& info)
{
    std::string text = std::to_string(info.width) + "x" + std::to_string(info.height);
    for (const auto& name : info.classNames)
        text += "," + name;
    return text;
}

Expected<std::unique_ptr<Task>> createTask(
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

// What a config opens. A reload keeps the source and the tasks whose settings did not change.
struct Components {
    std::unique_ptr<FrameSource> source;
    std::string sourceShape;
    std::vector<std::unique_ptr<Task>> tasks;
    std::vector<std::string> taskKeys;
    std::vector<int> keptFrom; // per task: the index of the running task it keeps, or -1
    std::unique_ptr<PowerMonitor> monitor;
    // Before the view: the view's thread hands its frames to the server until it is stopped.
    std::unique_ptr<LiveServer> live;
    std::unique_ptr<DisplaySink> display;
    std::unique_ptr<GpioSignals> gpio; // requested anew for each run: stop() releases the lines
    std::string runDirectory;
};

// The tasks `next` will run, in order: its own, and those it keeps from `running`.
std::vector<const Task*> tasksOf(const Components& next, const Components& running)
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
Status buildTasks(const AgentConfig& config, const SourceInfo& info, Components* old,
    ServiceNotifier& notify, Components& out)
{
    const bool sameSource = old && old->sourceShape == sourceShape(info);
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
        auto task = createTask(config, i, info);
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

Expected<std::unique_ptr<FrameSource>> openSource(const AgentConfig& config)
{
    auto opened = openFrameSource(config.source);
    if (!opened) {
        const Status& s = opened.status();
        return Status::error(s.kind(), withoutPasswords(s.message()))
            .withContext(config.where("source.uri"));
    }
    return std::move(opened).value();
}

// Everything a config needs before its first frame, opened from nothing: the start-up.
// The most memory the run can take in frames in flight (each a BGR frame of the source's size) and
// statistics, against run.memory_budget_mb (0: three quarters of the machine's memory). Refused at
// start-up, naming the keys, rather than an allocation that fails in a worker an hour into the run.
Status checkMemoryBudget(const AgentConfig& config, const SourceInfo& source,
    const std::vector<const Task*>& tasks, DisplaySink* display)
{
    constexpr uint64_t kMiB = uint64_t(1) << 20;
    const uint64_t frameBytes =
        uint64_t(std::max(source.width, 1)) * uint64_t(std::max(source.height, 1)) * 3;
    const size_t frames = Pipeline::framesInFlight(
        config.run, tasks, display ? display->frames().capacity() : 0, display != nullptr);
    const uint64_t statsBytes = tasks.size() *
        (TaskStats::memoryBytesFor(config.logging.maxSummarySamples) +
            uint64_t(std::max(config.logging.queueCapacity, 1)) * sizeof(FrameRecord));
    const uint64_t total = frames * frameBytes + statsBytes;
    const uint64_t machine = uint64_t(std::max(::sysconf(_SC_PHYS_PAGES), 0L)) *
        uint64_t(std::max(::sysconf(_SC_PAGE_SIZE), 0L));
    // A configured budget may be below the machine's memory, never above it: a plan that cannot
    // fit in the machine is refused whatever the budget says.
    const bool configured = config.run.memoryBudgetMb > 0;
    uint64_t budget = configured ? uint64_t(config.run.memoryBudgetMb) * kMiB : machine / 4 * 3;
    const char* limit =
        configured ? "run.memory_budget_mb" : "three quarters of this machine's memory";
    if (machine > 0 && budget > machine) {
        budget = machine;
        limit = "this machine's memory";
    }
    if (budget == 0 || total <= budget)
        return Status();
    const std::string text = formatText(
        "this run may hold %zu frames of %dx%d at once (%llu MiB; the tasks' queues, "
        "run.queue_depth "
        "%d when pacing is none, and their batches) and %llu MiB of statistics: %llu MiB, more "
        "than %s (%llu MiB). Lower run.queue_depth, the source's size or "
        "logging.max_summary_samples, or raise run.memory_budget_mb",
        frames, source.width, source.height,
        static_cast<unsigned long long>(frames * frameBytes / kMiB), config.run.queueDepth,
        static_cast<unsigned long long>(statsBytes / kMiB),
        static_cast<unsigned long long>(total / kMiB), limit,
        static_cast<unsigned long long>(budget / kMiB));
    return Status::invalid(config.where("run.queue_depth") + ": " + text);
}

// http.listen and http.token, whether from the file or --serve: checked before anything opens.
Status checkHttpConfig(const AgentConfig& config)
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
Status openLiveServer(const AgentConfig& config, const RunOptions& options, Components& c)
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
    {
        StartupKeepAlive keepAlive(notify, "opening " + withoutPasswords(config.source.uri));
        auto source = openSource(config);
        if (!source)
            return source.status();
        c.source = std::move(source).value();
        c.sourceShape = sourceShape(c.source->info());
    }
    if (Status s = buildTasks(config, c.source->info(), nullptr, notify, c); !s)
        return s;
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
    // The live view's video is the view's drawn frames, so the view runs for it too.
    if (config.display.window || !config.display.output.empty() || c.live) {
        size_t maxBatch = 1;
        for (const auto& task : c.tasks)
            maxBatch = std::max(maxBatch, static_cast<size_t>(std::max(task->batchSize(), 1)));
        auto sink = DisplaySink::open(config.display, c.source->info(),
            config.run.pacing == Pacing::None, c.tasks.size(), maxBatch);
        if (!sink)
            return sink.status();
        c.display = std::move(sink).value();
    }
    if (Status s = checkMemoryBudget(config, c.source->info(), tasksOf(c, c), c.display.get()); !s)
        return s;
    auto runDir = createRunDirectory(config.logging.dir, runPrefix);
    if (!runDir)
        return runDir.status().withContext(config.where("logging.dir"));
    c.runDirectory = runDir.value();
    if (c.display)
        c.display->setSdpFile((fs::path(c.runDirectory) / "stream.sdp").string());
    return Status();
}

// A reload's new components, prepared while the current config runs. The source is only kept or
// marked for reopening here: a camera cannot be opened twice, so a changed source is switched
// after the current run has drained (finishReload).
struct Reload {
    AgentConfig config;
    Components next;
    bool sourceChanged = false;
};

Status prepareReload(const AgentConfig& current, Components& running, const RunOptions& options,
    ServiceNotifier& notify, Reload& reload)
{
    const AgentConfig& config = reload.config;
    if (running.display || config.display.window || !config.display.output.empty() ||
        !config.http.listen.empty())
        return Status::unsupported("reloading is not supported with a live window, a "
                                   "recording or the live web view (display.window, "
                                   "display.output, http.listen); restart instead");
    reload.sourceChanged = config.sectionText("source") != current.sectionText("source") ||
        config.source.uri != current.source.uri;
    if (!reload.sourceChanged)
        if (Status s = buildTasks(config, running.source->info(), &running, notify, reload.next);
            !s)
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
        running.source.reset();
        StartupKeepAlive keepAlive(notify, "opening " + withoutPasswords(reload.config.source.uri));
        auto source = openSource(reload.config);
        if (source) {
            reload.next.source = std::move(source).value();
            reload.next.sourceShape = sourceShape(reload.next.source->info());
            problem = buildTasks(
                reload.config, reload.next.source->info(), &running, notify, reload.next);
        } else {
            problem = source.status();
        }
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
        return Status();
    }
    log->error("reload failed, keeping the previous config: {}", problem.message());
    reload.next.source.reset();
    if (!running.source) {
        auto old = openSource(current);
        if (!old)
            return old.status().withContext("reopening the previous source after a failed reload");
        running.source = std::move(old).value();
    }
    Components none;
    auto gpio = GpioSignals::open(current, tasksOf(running, none));
    if (!gpio)
        return gpio.status().withContext(
            "requesting the previous config's GPIO lines again after a failed reload");
    running.gpio = std::move(gpio).value();
    return Status();
}

// The one-line state systemd shows in `systemctl status`.
std::string serviceStatus(const AgentConfig& config, const Recorder& recorder,
    const std::vector<std::unique_ptr<Task>>& tasks, const std::vector<double>& fps)
{
    std::string text = withoutPasswords(config.source.uri);
    for (size_t i = 0; i < tasks.size(); ++i) {
        const LiveView view = recorder.live(i);
        if (view.haveLast)
            appendText(text, " | %s: %.1f fps, last %.2f ms, %llu frames", tasks[i]->name().c_str(),
                i < fps.size() ? fps[i] : 0.0, nsToMs(view.last.times.endToEndNs),
                static_cast<unsigned long long>(view.frames));
        else
            text += " | " + tasks[i]->name() + ": waiting for frames";
    }
    return text;
}

// A run whose every frame failed in some task measured nothing there: it must not end as a
// success. Ok when each task has at least one good frame (or none at all).
Status everyFrameFailed(
    const std::vector<std::unique_ptr<Task>>& tasks, const std::vector<TaskStats>& stats)
{
    for (size_t i = 0; i < tasks.size(); ++i) {
        const TaskStats& s = stats[i];
        if (s.frames == 0 || s.failed < s.frames)
            continue;
        std::string why = s.failedNonFinite == s.frames ? "its model's scores were NaN or infinite"
                                                        : "see the errors above";
        return Status::runtime("task " + tasks[i]->name() + ": every one of its " +
            std::to_string(s.frames) + " frame(s) failed (" + why + ")");
    }
    return Status();
}

// summary.json and summary.txt, each written whole or not at all (a temporary file, fsync,
// rename): a full disk or a crash can never leave a truncated summary behind.
Status writeSummary(const std::string& dir, const nlohmann::json& summary, const std::string& text)
{
    Status json =
        writeFileAtomically((fs::path(dir) / "summary.json").string(), jsonText(summary, 2) + "\n");
    Status txt = writeFileAtomically((fs::path(dir) / "summary.txt").string(), text);
    const Status& first = json.ok() ? txt : json;
    return first.ok()
        ? first
        : Status::io("could not write the run's summary into " + dir + ": " + first.message());
}

// How one config run ended.
struct RunEnd {
    AgentRun run;
    bool reload = false; // drained for a reload that is ready in `pending`
    bool stopSignal = false;
    bool startFailed = false; // the logs could not be opened: nothing ran
};

// The run's summary: what the pipeline, the source, the window and the power sampler measured,
// as summary.json and summary.txt in the run directory (and on stdout when asked). Normally after
// the pipeline has been joined; after a stop that timed out (`stopFailure` set) while a hung thread
// still runs: the statistics are then snapshots and the window is left alone.
AgentRun summariseRun(RunOutcome& outcome, const AgentConfig& config, Components& c,
    const Pipeline& pipeline, const Recorder& recorder,
    const std::vector<std::unique_ptr<TaskLog>>& logs, const PowerLog* powerLog,
    const RunOptions& options, const Status& stopFailure)
{
    const bool joined = stopFailure.ok();
    const auto& tasks = c.tasks;
    outcome.framesCaptured = pipeline.framesCaptured();
    const Pipeline::CaptureGaps gaps = pipeline.captureGaps();
    outcome.captureGaps = gaps.count;
    outcome.captureGapsNs = gaps.totalNs;
    outcome.longestGapNs = gaps.longestNs;
    outcome.longestGapAtNs = gaps.longestAtNs;
    outcome.captureGapThresholdNs = gaps.thresholdNs;
    outcome.sourceStats = c.source->stats();
    if (c.display && joined) {
        DisplaySink& display = *c.display;
        outcome.display.enabled = true;
        outcome.display.window = config.display.window;
        outcome.display.output = display.outputPath();
        outcome.display.shown = display.framesShown();
        outcome.display.recorded = display.framesRecorded();
        outcome.display.skipped = display.framesSkipped();
        outcome.display.earlierResult = display.framesWithEarlierResult();
        if (const StreamOut* stream = display.stream()) {
            outcome.display.streamed = true;
            outcome.display.encoder = stream->encoder();
            outcome.display.streamAddress = stream->address();
            outcome.display.streamSent = stream->framesSent();
            outcome.display.streamDropped = stream->framesDropped();
            outcome.display.streamUnwatched = stream->framesUnwatched();
        }
    }
    outcome.startNs = pipeline.startNs();
    outcome.endNs = joined ? pipeline.endNs() : monotonicNs();
    outcome.processCpuNs = processCpuNs() - pipeline.processCpuAtStartNs();
    outcome.peakRssMb = processMemory().peakMb;
    outcome.stopReason = pipeline.stopReason();

    std::vector<TaskStats> stats;
    stats.reserve(tasks.size());
    for (size_t i = 0; i < tasks.size(); ++i)
        stats.push_back(recorder.stats(i));
    Status failure = joined ? pipeline.failure() : stopFailure;
    if (failure.ok())
        failure = everyFrameFailed(tasks, stats);
    outcome.failure = failure.message();
    outcome.tasks.clear();
    for (size_t i = 0; i < tasks.size(); ++i)
        outcome.tasks.push_back({tasks[i].get(), &config.tasks[i], &stats[i], pipeline.dropped(i),
            logs[i].get(), recorder.lost(i), c.monitor && c.monitor->sampler().haveRails()});
    if (c.gpio)
        outcome.gpio = c.gpio->summaryJson();
    if (c.monitor) {
        outcome.power = &c.monitor->setup();
        outcome.powerOptions.railHz = config.power.railHz;
        outcome.powerOptions.stateHz = config.power.stateHz;
        outcome.powerStats = c.monitor->sampler().runStats();
    }
    if (powerLog) {
        outcome.powerLogPath = powerLog->path();
        outcome.powerLogRows = powerLog->rowsWritten();
        outcome.powerLogRowsDropped = powerLog->linesDroppedDisk();
        outcome.powerLogIntervalMs = config.power.logIntervalMs;
    }

    AgentRun run;
    run.summary = summaryJson(outcome);
    run.runDirectory = outcome.runDirectory;
    run.failure = failure;
    run.stats = std::move(stats);
    const std::string text = summaryText(run.summary);
    if (Status s = writeSummary(outcome.runDirectory, run.summary, text); !s) {
        logger("agent")->error("{}", s.message());
        if (run.failure.ok())
            run.failure = s;
    }
    if (options.printSummary)
        std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
    return run;
}

// SIGHUP: the config file read again and prepared beside the running one (its new tasks built,
// its run directory made); `pending` holds it once it is ready.
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
Expected<int> serveRun(const AgentConfig& config, Components& c, const RunOptions& options,
    SignalGuard& signals, ServiceNotifier& notify, Pipeline& pipeline, const Recorder& recorder,
    RunControl& control, std::vector<double>& fps)
{
    const auto& tasks = c.tasks;
    EventLoop loop;
    auto stopTimer = loop.addTimer([&](uint64_t) {
        if (control.onStopTimeout() == RunControl::Next::Abandon)
            loop.quit(1);
    });
    if (!stopTimer)
        return stopTimer.status();
    if (signals.fd() >= 0)
        if (Status s = loop.watch(signals.fd(),
                [&] {
                    const int sig = signals.wait(0);
                    if (sig == 0)
                        return;
                    switch (control.onSignal(sig)) {
                    case RunControl::Next::ArmStopTimer:
                        loop.setTimer(*stopTimer, control.stopTimeoutNs());
                        break;
                    case RunControl::Next::Abandon: loop.quit(1); break;
                    case RunControl::Next::Continue: break;
                    }
                });
            !s)
            return s;
    if (pipeline.finishedFd() >= 0) {
        if (Status s = loop.watch(pipeline.finishedFd(), [&] { loop.quit(0); }); !s)
            return s;
    } else {
        // No eventfd to be had: the end of the run is looked for ten times a second.
        auto poll = loop.addTimer([&](uint64_t) {
            if (pipeline.finished())
                loop.quit(0);
        });
        if (!poll)
            return poll.status();
        loop.setTimer(*poll, 100'000'000, 100'000'000);
    }

    // systemd's status line, with each task's rate over the last period.
    constexpr int64_t kNotifyPeriodNs = 5'000'000'000;
    int64_t rateStart = monotonicNs();
    std::vector<uint64_t> framesAtRate(tasks.size(), 0);
    auto notifyTimer = loop.addTimer([&](uint64_t) {
        const int64_t now = monotonicNs();
        const double seconds = nsToS(now - rateStart);
        for (size_t i = 0; i < tasks.size(); ++i) {
            const uint64_t frames = recorder.live(i).frames;
            fps[i] = static_cast<double>(frames - framesAtRate[i]) / seconds;
            framesAtRate[i] = frames;
        }
        rateStart = now;
        if (control.state() == RunControl::State::Running)
            notify.status(serviceStatus(config, recorder, tasks, fps));
    });
    if (!notifyTimer)
        return notifyTimer.status();
    loop.setTimer(*notifyTimer, kNotifyPeriodNs, kNotifyPeriodNs);

    // The console's status lines (logging.status_interval_s).
    const int64_t statusPeriod = static_cast<int64_t>(config.logging.statusIntervalS * 1e9);
    int64_t lastStatus = monotonicNs();
    std::vector<uint64_t> framesAtLastStatus(tasks.size(), 0);
    if (options.printStatus && statusPeriod > 0) {
        auto statusTimer = loop.addTimer([&](uint64_t) {
            const int64_t now = monotonicNs();
            for (size_t i = 0; i < tasks.size(); ++i) {
                const LiveView view = recorder.live(i);
                const double rate = static_cast<double>(view.frames - framesAtLastStatus[i]) /
                    nsToS(now - lastStatus);
                framesAtLastStatus[i] = view.frames;
                std::string line = statusLine(tasks[i]->name(), view, tasks[i]->labels(), rate);
                if (c.monitor) {
                    const std::string p = powerStatus(*c.monitor);
                    if (!p.empty())
                        line += " | " + p;
                }
                logger("status")->info("{}", line);
            }
            lastStatus = now;
        });
        if (!statusTimer)
            return statusTimer.status();
        loop.setTimer(*statusTimer, statusPeriod, statusPeriod);
    }

    // A window is served from this thread (GUI toolkits want their window's thread), at about
    // 60 Hz.
    if (c.display && c.display->hasWindow()) {
        auto windowTimer = loop.addTimer([&](uint64_t) { c.display->pumpWindow(); });
        if (!windowTimer)
            return windowTimer.status();
        loop.setTimer(*windowTimer, 15'000'000, 15'000'000);
    }

    signals.setServing(true);
    return loop.run();
}

// Copies the config file into the run directory, beside the logs it explains. The copy is the
// record of the run, so it keeps what the user wrote, secrets included (a source URI's password,
// http.token); it is therefore created readable by its owner only (0600, never wider even for a
// moment), whatever the umask or the original's mode.
void keepConfigCopy(const AgentConfig& config, const std::string& runDirectory)
{
    if (config.path.empty())
        return;
    const std::string copy = (fs::path(runDirectory) / "config.yaml").string();
    std::string problem;
    std::ifstream in(config.path, std::ios::binary);
    const int fd = in ? ::open(copy.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600) : -1;
    if (!in)
        problem = "cannot read it";
    else if (fd < 0)
        problem = errnoText(errno);
    else {
        const std::string text(
            (std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        size_t done = 0;
        while (done < text.size()) {
            const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                problem = errnoText(errno);
                break;
            }
            done += static_cast<size_t>(n);
        }
        if (::close(fd) != 0 && problem.empty())
            problem = errnoText(errno);
        if (in.bad() && problem.empty())
            problem = "reading it failed";
    }
    if (!problem.empty())
        logger("agent")->warn("could not copy {} into {}: {}", config.path, runDirectory, problem);
}

// One run's frame logs, recorder, log writer and pipeline, torn down (members in reverse order)
// when the run ends.
struct RunParts {
    std::vector<std::unique_ptr<TaskLog>> logs;
    // Both on the heap: a run abandoned with a thread hung in an engine leaves them to it.
    std::unique_ptr<Recorder> recorder;
    std::unique_ptr<PowerLog> powerLog; // power.csv; null when power.log_interval_ms is 0
    FrameLogWriter writer;
    std::unique_ptr<Pipeline> pipeline;

    // The normal end: the pipeline joined, then everything stopped in the order that loses no
    // record. A second stop signal from here on is not acted on: the run is already ending, and
    // quitting at once would lose the summary it is about to write (a third still ends the
    // process).
    void stop(Components& c, WatchdogPinger& watchdog)
    {
        pipeline->join();
        watchdog.setProbe(nullptr);
        if (c.gpio)
            c.gpio->stop();
        if (c.display)
            c.display->stop();
        // The sampler's last sample covers the last frame; only then may the recorder give up
        // waiting for it, and the logs have every record once the recorder has stopped.
        if (c.monitor)
            c.monitor->sampler().stop();
        recorder->stop();
        writer.stop();
    }

    // A thread that never returns (an inference hung in an engine) can neither be joined nor have
    // its objects destroyed under it: what was recorded is flushed, and the pipeline is left
    // running (see abandon()).
    void stopAbandoned(Components& c, WatchdogPinger& watchdog)
    {
        watchdog.setProbe(nullptr);
        if (c.monitor)
            c.monitor->sampler().stop();
        recorder->stop(); // what the workers handed over; a hung one hands over nothing more
        writer.stop();
        if (c.gpio)
            c.gpio->stop(); // outputs inactive: a marker must not stay high
    }

    // Leaves the pipeline and the recorder to the hung thread; the caller ends the process.
    void abandon()
    {
        [[maybe_unused]] Pipeline* abandonedPipeline = pipeline.release();
        [[maybe_unused]] Recorder* abandonedRecorder = recorder.release();
    }
};

// Every task's frame log (the summary reports its counts; a recorder's sink only when a file is
// written) and the recorder over them. Returns the tasks the pipeline runs.
std::vector<Task*> setUpRecording(
    const AgentConfig& config, const Components& c, bool energy, bool files, RunParts& parts)
{
    const auto& tasks = c.tasks;
    const SourceInfo& source = c.source->info();
    std::vector<Recorder::Task> recorded;
    std::vector<Task*> running;
    for (size_t i = 0; i < tasks.size(); ++i) {
        const TaskConfig& tc = config.tasks[i];
        int64_t deadline = static_cast<int64_t>(tc.deadlineMs * 1e6);
        if (deadline <= 0 && source.fps > 0)
            deadline = static_cast<int64_t>(1e9 / source.fps);
        Recorder::Task r {tasks[i]->name(), deadline, {}};
        parts.logs.push_back(std::make_unique<TaskLog>(tasks[i]->name(), tasks[i]->labels(),
            static_cast<size_t>(config.logging.queueCapacity)));
        TaskLog& l = *parts.logs.back();
        if (energy)
            l.enableEnergyColumns();
        if (tc.type == "action")
            l.enableClipColumns();
        if (c.gpio && c.gpio->hasTrigger())
            l.enableWindowColumn();
        if (config.run.pacing == Pacing::None)
            l.enableQueueColumn();
        if (files)
            r.sinks.push_back(&l);
        if (c.live)
            r.sinks.push_back(c.live->sink(i));
        recorded.push_back(std::move(r));
        running.push_back(tasks[i].get());
    }
    // Its queue holds seconds of records at any rate: the recorder does no I/O of its own.
    constexpr size_t kRecorderQueue = 4096;
    parts.recorder = std::make_unique<Recorder>(std::move(recorded),
        static_cast<size_t>(config.logging.maxSummarySamples), kRecorderQueue,
        energy ? &c.monitor->sampler() : nullptr);
    return running;
}

// Starts the power sampler, before the first frame so that every frame's window is covered, and
// opens the frame-log files. An error means nothing may run.
Status startSamplerAndLogs(const AgentConfig& config, const Components& c, bool files,
    const std::string& runDirectory, RunParts& parts)
{
    if (c.monitor)
        if (Status s = c.monitor->sampler().start(); !s)
            return s.withContext(config.where("power"));
    if (c.monitor && c.monitor->sampler().haveRails() && config.power.logIntervalMs > 0) {
        const PowerSetup& setup = c.monitor->setup();
        const BoardStateReader* state = c.monitor->sampler().stateReader();
        PowerLogColumns columns;
        columns.gpu = setup.haveGpu;
        columns.cpu = state && state->haveCpuFreq();
        columns.emc = setup.haveEmc;
        columns.fan = setup.haveFan;
        if (state) {
            const SystemLoadReader& load = state->systemLoad();
            columns.memory = load.haveMemory();
            columns.cpuLoad = load.haveCpuLoad();
            columns.emcLoad = load.haveEmcLoad() && setup.haveEmc;
            columns.engines = load.engines();
        }
        parts.powerLog = std::make_unique<PowerLog>(
            c.monitor->sampler(), int64_t(config.power.logIntervalMs) * 1'000'000, columns);
    }
    if (!files && !parts.powerLog)
        return Status();
    std::vector<SegmentedLog*> others;
    if (parts.powerLog)
        others.push_back(parts.powerLog.get());
    std::vector<TaskLog*> raw;
    raw.reserve(parts.logs.size());
    for (auto& l : parts.logs)
        raw.push_back(l.get());
    // The cap counts every run under logging.dir: the previous run's writer has stopped (its
    // files are closed) before this one opens.
    FrameLogOptions logOptions;
    logOptions.root = config.logging.dir;
    logOptions.maxFileBytes = static_cast<uint64_t>(config.logging.maxFileMb) << 20;
    logOptions.maxTotalBytes = static_cast<uint64_t>(config.logging.maxTotalMb) << 20;
    if (Status s = parts.writer.open(
            runDirectory, raw, config.logging.csv, config.logging.jsonl, logOptions, others);
        !s)
        return Status::invalid(s.message()).withContext(config.where("logging.dir"));
    parts.writer.start();
    return Status();
}

// Starts the recorder, the window, the GPIO signals and then the pipeline.
void startRun(Components& c, RunParts& parts, bool firstRun, const std::string& runDirectory)
{
    const SourceInfo& source = c.source->info();
    Pipeline& pipeline = *parts.pipeline;
    parts.recorder->start();
    auto log = logger("agent");
    log->info("running {} task(s) on {} ({}); logs in {}", c.tasks.size(),
        withoutPasswords(source.uri), source.kind, runDirectory);
    if (firstRun && !source.detail.empty())
        log->info("source: {}", withoutPasswords(source.detail));
    if (c.display && c.live) {
        LiveServer* live = c.live.get();
        c.display->setCanvasListener(
            [live](cv::Mat& canvas, uint64_t frame) { live->onCanvas(canvas, frame); });
    }
    if (c.display)
        c.display->start(OverlayBuilder(c.tasks, c.monitor.get()),
            [&pipeline] { pipeline.requestStop("the window was closed"); });
    if (c.gpio) {
        pipeline.setHooks(c.gpio->hooks());
        c.gpio->start(monotonicNs());
    }
    pipeline.start();
}

// What the live view shows of the run: its context and tasks, and the pipeline's counters.
LiveRun liveRunOf(const RunOutcome& outcome, const AgentConfig& config, const Components& c,
    const Pipeline& pipeline, const Recorder& recorder)
{
    LiveRun run;
    const RunContext& x = outcome.context;
    const SourceInfo& source = outcome.source;
    run.context = {{"jetagent_version", x.jetagentVersion}, {"started_utc", x.startedUtc},
        {"context",
            {{"host", x.host}, {"os", x.os}, {"kernel", x.kernel}, {"machine", x.machine},
                {"cpu", x.cpu}, {"cores", x.cores}, {"opencv", x.opencvVersion},
                {"build_type", x.buildType}}},
        {"board",
            c.monitor ? nlohmann::json(c.monitor->setup().identity.model)
                      : nlohmann::json(nullptr)},
        {"config", {{"path", config.path}, {"overrides", outcome.overrides}}},
        {"source",
            {{"uri", source.uri}, {"kind", source.kind}, {"width", source.width},
                {"height", source.height}, {"fps", source.fps}, {"live", source.live},
                {"pacing", config.run.pacing == Pacing::None ? "none" : "realtime"}}},
        {"run_directory", outcome.runDirectory}};
    nlohmann::json tasks = nlohmann::json::array();
    for (size_t i = 0; i < c.tasks.size(); ++i) {
        const TaskConfig& tc = config.tasks[i];
        tasks.push_back({{"name", c.tasks[i]->name()}, {"type", tc.type}, {"model", tc.model}});
        int64_t deadline = static_cast<int64_t>(tc.deadlineMs * 1e6);
        if (deadline <= 0 && source.fps > 0)
            deadline = static_cast<int64_t>(1e9 / source.fps);
        if (config.run.pacing == Pacing::None)
            deadline = 0;
        run.tasks.push_back({c.tasks[i]->name(), c.tasks[i]->labels(), deadline});
    }
    run.context["tasks"] = tasks;
    run.dropped = [&pipeline](size_t task) { return pipeline.dropped(task); };
    run.lost = [&recorder](size_t task) { return recorder.lost(task); };
    return run;
}

// The watchdog's probe: every task finished a frame since the last ping.
void probeEveryTask(WatchdogPinger& watchdog, const Recorder& recorder, size_t tasks)
{
    auto last = std::make_shared<std::vector<uint64_t>>(tasks, 0);
    watchdog.setProbe([&recorder, last] {
        bool all = true;
        for (size_t i = 0; i < last->size(); ++i) {
            const uint64_t frames = recorder.live(i).frames;
            all = all && frames > (*last)[i];
            (*last)[i] = frames;
        }
        return all;
    });
}

// Runs `config` on `c` until it ends, a stop signal, or a reload is ready (then `pending` holds
// it). Writes the run's logs and summary either way.
RunEnd runOnce(const AgentConfig& config, Components& c, const RunOptions& options,
    SignalGuard& signals, ServiceNotifier& notify, WatchdogPinger& watchdog,
    std::unique_ptr<Reload>& pending, bool firstRun)
{
    RunOutcome outcome;
    outcome.context = collectRunContext(
        c.monitor ? c.monitor->setup().identity : detectBoard(SysfsRoot(config.power.sysfsRoot)));
    outcome.config = &config;
    // What the summaries and the live view show: no source password, wherever it was given.
    for (const std::string& o : options.overrides)
        outcome.overrides.push_back(withoutPasswords(o));
    outcome.source = c.source->info();
    outcome.source.uri = withoutPasswords(outcome.source.uri);
    outcome.source.detail = withoutPasswords(outcome.source.detail);
    outcome.runDirectory = c.runDirectory;
    keepConfigCopy(config, outcome.runDirectory);

    const bool energy = c.monitor && c.monitor->sampler().haveRails();
    const bool files = config.logging.csv || config.logging.jsonl;
    RunParts parts;
    const std::vector<Task*> running = setUpRecording(config, c, energy, files, parts);
    Recorder& recorder = *parts.recorder;
    RunEnd end;
    const Status startProblem = startSamplerAndLogs(config, c, files, outcome.runDirectory, parts);
    parts.pipeline =
        std::make_unique<Pipeline>(*c.source, config.run, running, recorder, c.display.get());
    Pipeline& pipeline = *parts.pipeline;
    if (!startProblem.ok()) {
        // Nothing ran: the pipeline never starts, and the run ends with the problem as its failure.
        end.run.failure = startProblem;
        end.run.runDirectory = outcome.runDirectory;
        end.startFailed = true;
        if (c.monitor)
            c.monitor->sampler().stop();
        parts.writer.stop();
        return end;
    }
    // The live view reads this run's counters until the run ends (the guard, destroyed before
    // the pipeline it refers to).
    struct LiveDetach {
        LiveServer* live;
        ~LiveDetach()
        {
            if (live)
                live->detach();
        }
    } liveDetach {c.live.get()};
    if (c.live)
        c.live->attach(liveRunOf(outcome, config, c, pipeline, recorder));
    startRun(c, parts, firstRun, outcome.runDirectory);
    probeEveryTask(watchdog, recorder, c.tasks.size());

    std::vector<double> fps(c.tasks.size(), 0.0);
    notify.ready(serviceStatus(config, recorder, c.tasks, fps));
    RunControl control(
        {[&] { return prepareReloadOf(config, c, options, notify, pending); },
            [&] {
                fs::remove(pending->next.runDirectory); // still empty: the reload never ran
                pending.reset();
            },
            [&pipeline](const std::string& reason) { pipeline.requestStop(reason); }},
        options.reload ? config.path : std::string(), options.stopTimeoutS, notify);
    const Expected<int> looped =
        serveRun(config, c, options, signals, notify, pipeline, recorder, control, fps);
    end.stopSignal = control.stopSignalled();
    if (!looped || control.state() == RunControl::State::Abandoned) {
        // The summary of what was measured is written, then the run ends at once and the caller
        // ends the process (see RunParts::stopAbandoned).
        const std::string why = looped ? control.abandonReason()
                                       : "the event loop failed: " + looped.status().message();
        logger("agent")->error(
            "{}; writing the logs and the summary of what was measured, then exiting", why);
        parts.stopAbandoned(c, watchdog);
        end.run = summariseRun(outcome, config, c, pipeline, recorder, parts.logs,
            parts.powerLog.get(), options, Status::runtime(why));
        signals.setServing(false);
        end.run.exitAtOnce = looped ? control.exitCode() : 1;
        parts.abandon();
        return end;
    }
    parts.stop(c, watchdog);
    end.run = summariseRun(outcome, config, c, pipeline, recorder, parts.logs, parts.powerLog.get(),
        options, Status());
    signals.setServing(false);
    end.reload = pending != nullptr && pipeline.failure().ok() && !end.stopSignal;
    return end;
}

} // namespace

void exitIfAbandoned(const AgentRun& run)
{
    if (run.exitAtOnce == 0)
        return;
    std::fflush(nullptr);
    std::_Exit(run.exitAtOnce);
}

Expected<AgentRun> runAgent(const AgentConfig& initial, const RunOptions& options)
{
    auto log = logger("agent");
    ServiceNotifier notify =
        options.notify ? ServiceNotifier::fromEnvironment() : ServiceNotifier();
    // First of all: a SIGHUP or SIGTERM that arrives while models load must not kill the process
    // by its default action. One that arrives during start-up is acted on once the run starts.
    SignalGuard signals(options.handleSignals, options.handleSignals && options.reload != nullptr);
    notify.beginExtendedPhase(initial.run.startupTimeoutS, false);
    Components running;
    if (Status s = openComponents(initial, options, notify, running); !s) {
        notify.send("STATUS=start-up failed: " + s.message().substr(0, s.message().find('\n')));
        return s;
    }
    WatchdogPinger watchdog(notify);

    AgentConfig config = initial;
    std::vector<std::string> directories;
    std::unique_ptr<Reload> pending;
    for (bool first = true;; first = false) {
        RunEnd end = runOnce(config, running, options, signals, notify, watchdog, pending, first);
        if (first && end.startFailed)
            return end.run.failure; // a bad log directory is a start-up error, like a bad model
        directories.push_back(end.run.runDirectory);
        if (end.run.exitAtOnce != 0) {
            // A thread of the run never returned and still uses the running components: they are
            // left to it, never destroyed, and the caller ends the process.
            [[maybe_unused]] auto* abandoned = new Components(std::move(running));
            end.run.runDirectories = directories;
            return std::move(end.run);
        }
        if (!end.reload) {
            if (!end.stopSignal)
                notify.stopping("stopping: " +
                    (end.run.failure.ok() ? std::string("the run ended")
                                          : end.run.failure.message()));
            end.run.runDirectories = directories;
            return std::move(end.run);
        }
        std::unique_ptr<Reload> reload = std::move(pending);
        bool switched = false;
        if (Status s = finishReload(config, running, notify, *reload, switched); !s) {
            log->error("{}", s.message());
            notify.stopping("stopping: " + s.message());
            end.run.failure = s;
            end.run.runDirectories = directories;
            return std::move(end.run);
        }
        if (!switched) {
            // The old config goes on, in a new run directory of its own, with a fresh power
            // monitor of its own settings (a sampler runs once).
            running.runDirectory = reload->next.runDirectory;
            running.monitor.reset();
            auto power = openPower(config);
            if (power)
                running.monitor = std::move(power).value();
            else
                log->warn(
                    "power sampling is off after the failed reload: {}", power.status().message());
            continue;
        }
        if (!reload->sourceChanged) {
            reload->next.source = std::move(running.source);
            reload->next.sourceShape = running.sourceShape;
        }
        adoptKeptTasks(reload->next, running);
        running = std::move(reload->next);
        config = std::move(reload->config);
        log->info("reload: now running {}", config.path);
    }
}

} // namespace jetagent
