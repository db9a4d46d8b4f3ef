// One run of the agent: open the source, build the tasks, run the pipeline, log and summarise.
#include "agent.h"

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

void setLogLevel(const std::string& level)
{
    spdlog::set_level(spdlog::level::from_str(level));
}

namespace {
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
    const Pipeline& pipeline, Recorder& recorder, const std::vector<std::unique_ptr<TaskLog>>& logs,
    const PowerLog* powerLog, const RunOptions& options, const Status& stopFailure)
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
    outcome.sourceStats = c.source().stats();
    outcome.streams.clear();
    for (size_t i = 0; i < c.sources.size(); ++i) {
        StreamOutcome stream;
        stream.name = config.sources[i].name;
        stream.source = c.sources[i]->info();
        stream.source.uri = withoutPasswords(stream.source.uri);
        stream.source.detail = withoutPasswords(stream.source.detail);
        stream.stats = c.sources[i]->stats();
        stream.captured = pipeline.framesCaptured(i);
        const Pipeline::CaptureGaps g = pipeline.captureGaps(i);
        stream.captureGaps = g.count;
        stream.longestGapNs = g.longestNs;
        outcome.streams.push_back(std::move(stream));
    }
    if (c.display && joined) {
        DisplaySink& display = *c.display;
        outcome.display.enabled = true;
        outcome.display.window = config.display.window;
        outcome.display.output = display.outputPath();
        outcome.display.shown = display.framesShown();
        outcome.display.recorded = display.framesRecorded();
        outcome.display.skipped = display.framesSkipped();
        outcome.display.earlierResult = display.framesWithEarlierResult();
        outcome.display.drawn = display.framesDrawn();
        if (const MosaicLayout& m = display.layout(); m.cellWidth > 0) {
            outcome.display.mosaicColumns = m.columns;
            outcome.display.mosaicRows = m.rows;
            outcome.display.mosaicWidth = m.width();
            outcome.display.mosaicHeight = m.height();
        }
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
    outcome.context.startup.pipelineStartNs = pipeline.startNs();
    outcome.context.startup.firstFrameNs = pipeline.firstFrameNs();
    outcome.endNs = joined ? pipeline.endNs() : monotonicNs();
    outcome.processCpuNs = processCpuNs() - pipeline.processCpuAtStartNs();
    outcome.peakRssMb = processMemory().peakMb;
    outcome.stopReason = pipeline.stopReason();

    std::vector<TaskStats> stats;
    stats.reserve(tasks.size());
    for (size_t i = 0; i < tasks.size(); ++i)
        stats.push_back(recorder.takeStats(i)); // a move: the recorder has stopped
    Status failure = joined ? pipeline.failure() : stopFailure;
    if (failure.ok())
        failure = everyFrameFailed(tasks, stats);
    outcome.failure = failure.message();
    outcome.tasks.clear();
    for (size_t i = 0; i < tasks.size(); ++i) {
        outcome.tasks.push_back(
            {tasks[i].get(), &config.tasks[i], &stats[i], pipeline.dropped(i), logs[i].get(),
                recorder.lost(i), c.monitor && c.monitor->sampler().haveRails(), {}, {}, {}, 0});
        TaskOutcome& t = outcome.tasks.back();
        t.streams = pipeline.taskStreams(i);
        for (size_t s : t.streams) {
            t.streamDropped.push_back(pipeline.dropped(i, s));
            t.streamTimeouts.push_back(pipeline.batchTimeoutsWaitingFor(i, s));
        }
        t.batchTimeoutNs = pipeline.taskBatchTimeoutNs(i);
    }
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
    if (c.mqtt)
        run.summary["mqtt"] = c.mqtt->countersJson();
    run.runDirectory = outcome.runDirectory;
    run.failure = failure;
    run.stats = std::move(stats);
    const std::string text = summaryText(run.summary);
    if (Status s = writeSummary(outcome.runDirectory, run.summary, text); !s) {
        logger("agent")->error("{}", s.message());
        if (run.failure.ok())
            run.failure = s;
    }
    if (c.mqtt)
        c.mqtt->publishSummary(run.summary);
    if (options.printSummary)
        std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
    return run;
}

// SIGHUP: the config file read again and prepared beside the running one (its new tasks built,
// its run directory made); `pending` holds it once it is ready.
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
    std::vector<std::vector<uint64_t>> streamFramesAtLastStatus(tasks.size());
    if (options.printStatus && statusPeriod > 0) {
        auto statusTimer = loop.addTimer([&](uint64_t) {
            const int64_t now = monotonicNs();
            for (size_t i = 0; i < tasks.size(); ++i) {
                const LiveView view = recorder.live(i);
                const double rate = static_cast<double>(view.frames - framesAtLastStatus[i]) /
                    nsToS(now - lastStatus);
                framesAtLastStatus[i] = view.frames;
                std::string line = statusLine(tasks[i]->name(), view, tasks[i]->labels(), rate);
                // Several streams: each one's rate and drops since the last line.
                std::vector<uint64_t>& before = streamFramesAtLastStatus[i];
                before.resize(view.streamFrames.size(), 0);
                const std::vector<size_t>& streams = pipeline.taskStreams(i);
                for (size_t k = 0; k < view.streamFrames.size() && k < streams.size(); ++k) {
                    appendText(line, "%s%s %.1f fps", k == 0 ? " | streams " : ", ",
                        pipeline.streamName(streams[k]).c_str(),
                        static_cast<double>(view.streamFrames[k] - before[k]) /
                            nsToS(now - lastStatus));
                    if (const uint64_t d = pipeline.dropped(i, streams[k]))
                        appendText(line, " (%llu dropped)", static_cast<unsigned long long>(d));
                    before[k] = view.streamFrames[k];
                }
                if (c.monitor) {
                    const std::string p = powerStatusText(*c.monitor);
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

// How many records a queue between threads holds: `seconds` of the source's frames, from 256 to
// 4096, or 4096 for a run that does not pace itself (its rate is the engine's) or a source of
// unknown rate. A record is some 300 bytes and every slot is written as the ring turns, so a
// 30 fps run keeps 100 kB per queue rather than 1.2 MB.
size_t recordQueueCapacity(const SourceInfo& source, Pacing pacing, double seconds)
{
    constexpr size_t kMin = 256;
    constexpr size_t kMax = 4096;
    if (pacing == Pacing::None || !(source.fps > 0.0))
        return kMax;
    const double wanted = std::ceil(source.fps * seconds);
    return wanted >= double(kMax) ? kMax : std::max(kMin, static_cast<size_t>(wanted));
}

// Every task's frame log (the summary reports its counts; a recorder's sink only when a file is
// written) and the recorder over them. Returns the tasks the pipeline runs.
// The frames per second of the streams task `task` serves, together, and the fastest one's: what
// sizes its queues and, unless the config sets one, its deadline (the fastest stream's period).
struct TaskRate {
    double totalFps = 0.0; // 0 when some stream's rate is unknown
    double fastestFps = 0.0;
};
TaskRate taskRate(const AgentConfig& config, const Components& c, size_t task)
{
    TaskRate rate;
    bool unknown = false;
    for (size_t s : config.taskStreams(task)) {
        const double fps = c.sources[s]->info().fps;
        unknown = unknown || !(fps > 0.0);
        rate.totalFps += fps > 0.0 ? fps : 0.0;
        rate.fastestFps = std::max(rate.fastestFps, fps);
    }
    if (unknown)
        rate.totalFps = 0.0;
    return rate;
}

int64_t taskDeadlineNs(const AgentConfig& config, const Components& c, size_t task)
{
    // Rounded, not truncated: 33.3 ms is 33300000 ns, not 33299999 (a histogram bound and a
    // gauge Prometheus users compare with the configured figure).
    int64_t deadline = std::llround(config.tasks[task].deadlineMs * 1e6);
    const double fps = taskRate(config, c, task).fastestFps;
    if (deadline <= 0 && fps > 0)
        deadline = std::llround(1e9 / fps);
    return deadline;
}

std::vector<Task*> setUpRecording(
    const AgentConfig& config, const Components& c, bool energy, bool files, RunParts& parts)
{
    const auto& tasks = c.tasks;
    std::vector<Recorder::Task> recorded;
    std::vector<Task*> running;
    SourceInfo all; // every stream's frames, for the recorder's shared queue
    bool unknownRate = false;
    for (const auto& source : c.sources) {
        unknownRate = unknownRate || !(source->info().fps > 0.0);
        all.fps += source->info().fps;
    }
    if (unknownRate)
        all.fps = 0.0;
    for (size_t i = 0; i < tasks.size(); ++i) {
        const TaskConfig& tc = config.tasks[i];
        SourceInfo source; // the task's streams' frames
        source.fps = taskRate(config, c, i).totalFps;
        Recorder::Task r {tasks[i]->name(), taskDeadlineNs(config, c, i), {}};
        if (c.sources.size() > 1)
            r.streams = config.taskStreams(i);
        // The log's queue rides out seconds of a slow disk.
        const size_t logQueue = config.logging.queueCapacity > 0
            ? static_cast<size_t>(config.logging.queueCapacity)
            : recordQueueCapacity(source, config.run.pacing, 10.0);
        parts.logs.push_back(
            std::make_unique<TaskLog>(tasks[i]->name(), tasks[i]->labels(), logQueue));
        TaskLog& l = *parts.logs.back();
        std::vector<std::string> names;
        for (const StreamConfig& stream : config.sources)
            names.push_back(stream.name);
        l.setStreamNames(std::move(names));
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
    // Its queue holds seconds of records: the recorder does no I/O of its own, and takes them
    // every 20 ms or as soon as a queue is half full.
    parts.recorder = std::make_unique<Recorder>(std::move(recorded),
        static_cast<size_t>(config.logging.maxSummarySamples),
        recordQueueCapacity(all, config.run.pacing, 4.0), energy ? &c.monitor->sampler() : nullptr);
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
    Pipeline& pipeline = *parts.pipeline;
    parts.recorder->start();
    auto log = logger("agent");
    if (c.sources.size() == 1) {
        const SourceInfo& source = c.source().info();
        log->info("running {} task(s) on {} ({}); logs in {}", c.tasks.size(),
            withoutPasswords(source.uri), source.kind, runDirectory);
        if (firstRun && !source.detail.empty())
            log->info("source: {}", withoutPasswords(source.detail));
    } else {
        log->info("running {} task(s) on {} streams; logs in {}", c.tasks.size(), c.sources.size(),
            runDirectory);
        for (size_t i = 0; i < c.sources.size(); ++i) {
            const SourceInfo& source = c.sources[i]->info();
            log->info("stream {}: {} ({}){}{}", pipeline.streamName(i),
                withoutPasswords(source.uri), source.kind,
                firstRun && !source.detail.empty() ? ", " : "",
                firstRun ? withoutPasswords(source.detail) : std::string());
        }
    }
    if (c.display && c.live) {
        LiveServer* live = c.live.get();
        c.display->setCanvasListener(
            [live](Image& canvas, uint64_t frame) { live->onCanvas(canvas, frame); });
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
        int64_t deadline = taskDeadlineNs(config, c, i);
        if (config.run.pacing == Pacing::None)
            deadline = 0;
        run.tasks.push_back({c.tasks[i]->name(), c.tasks[i]->labels(), deadline,
            pipeline.taskBatchTimeoutNs(i), pipeline.taskStreams(i)});
        for (const EngineDescription& e : c.tasks[i]->engines())
            run.models.push_back({c.tasks[i]->name(), fs::path(e.modelPath).filename().string(),
                e.modelSha256, e.backend, precisionName(e.options.precision)});
    }
    run.context["tasks"] = tasks;
    // Every stream (the `source` above is the first), no password in any address.
    nlohmann::json streams = nlohmann::json::array();
    for (size_t i = 0; i < c.sources.size() && i < config.sources.size(); ++i) {
        const SourceInfo& info = c.sources[i]->info();
        streams.push_back({{"name", config.sources[i].name}, {"uri", withoutPasswords(info.uri)},
            {"kind", info.kind}, {"width", info.width}, {"height", info.height},
            {"fps", info.fps}});
        run.streams.push_back(config.sources[i].name);
    }
    run.context["streams"] = streams;
    run.dropped = [&pipeline](size_t task) { return pipeline.dropped(task); };
    run.lost = [&recorder](size_t task) { return recorder.lost(task); };
    run.streamDropped = [&pipeline](
                            size_t task, size_t stream) { return pipeline.dropped(task, stream); };
    run.readStats = [&recorder](size_t task, const LiveRun::StatsReader& read) {
        recorder.readStats(task, read);
    };
    run.queueDepth = [&pipeline](size_t task, size_t stream) {
        return static_cast<double>(pipeline.queueDepth(task, stream));
    };
    run.reconnects = [&pipeline](size_t stream) { return pipeline.reconnects(stream); };
    run.build = {x.jetagentVersion, presentEngineBackends()};
    if (c.monitor) {
        const PowerSetup& setup = c.monitor->setup();
        run.board = {setup.identity.model, setup.identity.l4tRelease, setup.powerMode.name};
    }
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
    if (firstRun && options.mainStartNs >= 0) {
        StartupTimes& startup = outcome.context.startup;
        startup.processStartNs = processStartNs(startup.processStartResolutionNs);
        startup.mainStartNs = options.mainStartNs;
        startup.sourceOpenNs = c.sourceOpenNs;
        startup.engineBuildNs = c.engineBuildNs;
    }
    // What the summaries and the live view show: no source password, wherever it was given.
    for (const std::string& o : options.overrides)
        outcome.overrides.push_back(withoutPasswords(o));
    outcome.source = c.source().info();
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
    std::vector<PipelineStream> streams;
    for (size_t i = 0; i < c.sources.size(); ++i)
        streams.push_back({config.sources[i].name, c.sources[i].get()});
    std::vector<TaskWiring> wiring;
    for (size_t i = 0; i < config.tasks.size(); ++i)
        wiring.push_back({config.taskStreams(i),
            config.tasks[i].batchTimeoutMs > 0
                ? static_cast<int64_t>(std::llround(config.tasks[i].batchTimeoutMs * 1e6))
                : int64_t(-1)});
    parts.pipeline = std::make_unique<Pipeline>(
        std::move(streams), config.run, running, std::move(wiring), recorder, c.display.get());
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
    struct MqttDetach { // the same for the MQTT status
        MqttTelemetry* mqtt;
        ~MqttDetach()
        {
            if (mqtt)
                mqtt->detach();
        }
    } mqttDetach {c.mqtt.get()};
    if (c.mqtt)
        c.mqtt->attach(liveRunOf(outcome, config, c, pipeline, recorder), c.monitor.get());
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
            reload->next.sources = std::move(running.sources);
            reload->next.sourceShape = running.sourceShape;
        }
        adoptKeptTasks(reload->next, running);
        running = std::move(reload->next);
        config = std::move(reload->config);
        log->info("reload: now running {}", config.path);
    }
}

} // namespace jetagent
