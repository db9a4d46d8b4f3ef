// One run of the agent: open the source, build the tasks, run the pipeline, log and summarise.
#include "agent.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include <sys/stat.h>

#include "action_task.h"
#include "classification_task.h"
#include "display.h"
#include "frame_log.h"
#include "jetagent/base/clock.h"
#include "jetagent/base/log.h"
#include "jetagent/power/power_monitor.h"
#include "pipeline.h"
#include "run_context.h"
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

std::string statusLine(const std::string& name, const Pipeline::LiveView& v,
    const std::vector<std::string>& labels, double fps)
{
    char text[320];
    if (!v.haveLast) {
        std::snprintf(text, sizeof text, "%s: waiting for the first result", name.c_str());
        return text;
    }
    auto label = [&](int i) {
        return i >= 0 && static_cast<size_t>(i) < labels.size()
            ? labels[static_cast<size_t>(i)].c_str()
            : "?";
    };
    const FrameRecord& r = v.last;
    int n = std::snprintf(text, sizeof text, "%s: frame %llu -> %s %.3f", name.c_str(),
        static_cast<unsigned long long>(r.frameId), r.topK > 0 ? label(r.labels[0]) : "(failed)",
        r.topK > 0 ? static_cast<double>(r.scores[0]) : 0.0);
    if (r.truth >= 0)
        n += std::snprintf(
            text + n, sizeof text - static_cast<size_t>(n), " (truth %s)", label(r.truth));
    n += std::snprintf(text + n, sizeof text - static_cast<size_t>(n),
        " | e2e %.2f ms | %.1f fps | %llu frames", nsToMs(r.endToEndNs()), fps,
        static_cast<unsigned long long>(v.frames));
    if (v.scored > 0)
        std::snprintf(text + n, sizeof text - static_cast<size_t>(n), " | top-1 %.1f%%",
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
        char buffer[96];
        std::snprintf(buffer, sizeof buffer, "%.3f W %s%s", static_cast<double>(sample.totalW),
            sampler.totalName().c_str(), sampler.totalIsEstimate() ? " (est.)" : "");
        text = buffer;
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
            char buffer[96];
            std::snprintf(buffer, sizeof buffer, "%s%.1f C (%s)", text.empty() ? "" : ", ",
                state.zones[static_cast<size_t>(hottest)].celsius,
                zones[static_cast<size_t>(hottest)].type.c_str());
            text += buffer;
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

// Builds the live view's overlay from the tasks' latest results and the power monitor; called
// from the view's thread, once per frame.
class OverlayBuilder {
public:
    OverlayBuilder(const Pipeline& pipeline, const std::vector<std::unique_ptr<Task>>& tasks,
        const PowerMonitor* monitor)
        : pipeline_(&pipeline), tasks_(&tasks), monitor_(monitor)
    {
    }

    Overlay operator()()
    {
        constexpr int64_t kRateWindowNs = 1'000'000'000;
        constexpr int32_t kShownResults = 3;
        const int64_t now = monotonicNs();
        ++viewFrames_;
        if (rateStartNs_ == 0) {
            rateStartNs_ = now;
            framesAtStart_.assign(tasks_->size(), 0);
        }
        std::vector<uint64_t> frames(tasks_->size());
        Overlay overlay;
        for (size_t i = 0; i < tasks_->size(); ++i) {
            const Pipeline::LiveView view = pipeline_->live(i);
            const Task& task = *(*tasks_)[i];
            OverlayTask t;
            t.name = task.name();
            t.haveResult = view.haveLast && view.last.topK > 0;
            if (t.haveResult) {
                const FrameRecord& r = view.last;
                for (int32_t k = 0; k < std::min(r.topK, kShownResults); ++k) {
                    const int32_t label = r.labels[static_cast<size_t>(k)];
                    const auto& labels = task.labels();
                    t.top.emplace_back(label >= 0 && static_cast<size_t>(label) < labels.size()
                            ? labels[static_cast<size_t>(label)]
                            : "#" + std::to_string(label),
                        r.scores[static_cast<size_t>(k)]);
                }
                t.endToEndMs = nsToMs(r.endToEndNs());
            }
            t.fps = i < rates_.size() ? rates_[i] : 0.0;
            frames[i] = view.frames;
            overlay.tasks.push_back(std::move(t));
        }
        if (now - rateStartNs_ >= kRateWindowNs) {
            const double seconds = nsToS(now - rateStartNs_);
            rates_.resize(tasks_->size());
            for (size_t i = 0; i < tasks_->size(); ++i)
                rates_[i] = static_cast<double>(frames[i] - framesAtStart_[i]) / seconds;
            viewRate_ = static_cast<double>(viewFrames_) / seconds;
            viewFrames_ = 0;
            framesAtStart_ = frames;
            rateStartNs_ = now;
        }
        overlay.sourceFps = viewRate_;
        if (monitor_)
            overlay.board = powerStatus(*monitor_);
        return overlay;
    }

private:
    const Pipeline* pipeline_;
    const std::vector<std::unique_ptr<Task>>* tasks_;
    const PowerMonitor* monitor_;
    int64_t rateStartNs_ = 0;
    uint64_t viewFrames_ = 0;
    double viewRate_ = 0.0;
    std::vector<uint64_t> framesAtStart_;
    std::vector<double> rates_;
};

} // namespace

Expected<AgentRun> runAgent(const AgentConfig& config, const RunOptions& options)
{
    auto log = logger("agent");
    RunOutcome outcome;
    outcome.context = collectRunContext();
    outcome.config = &config;
    outcome.overrides = options.overrides;

    auto opened = openFrameSource(config.source);
    if (!opened)
        return opened.status().withContext(config.where("source.uri"));
    std::unique_ptr<FrameSource> source = std::move(opened).value();
    outcome.source = source->info();

    std::vector<std::unique_ptr<Task>> tasks;
    for (size_t i = 0; i < config.tasks.size(); ++i) {
        if (config.tasks[i].type == "action") {
            auto task = ActionTask::create(config, i, source->info());
            if (!task)
                return task.status();
            tasks.push_back(std::move(task).value());
            continue;
        }
        auto task = ClassificationTask::create(config, i, source->info());
        if (!task)
            return task.status();
        tasks.push_back(std::move(task).value());
    }

    auto power = openPower(config);
    if (!power)
        return power.status();
    std::unique_ptr<PowerMonitor> monitor = std::move(power).value();

    std::unique_ptr<DisplaySink> display;
    if (config.display.window || !config.display.output.empty()) {
        auto sink =
            DisplaySink::open(config.display, source->info(), config.run.pacing == Pacing::None);
        if (!sink)
            return sink.status();
        display = std::move(sink).value();
    }

    auto runDir = createRunDirectory(config.logging.dir, options.runPrefix);
    if (!runDir)
        return runDir.status().withContext(config.where("logging.dir"));
    outcome.runDirectory = runDir.value();
    if (!config.path.empty()) {
        std::error_code ec;
        fs::copy_file(config.path, fs::path(outcome.runDirectory) / "config.yaml", ec);
        if (ec)
            log->warn(
                "could not copy {} into {}: {}", config.path, outcome.runDirectory, ec.message());
    }

    // Before the writer and pipeline threads start, so that a signal never meets a run half set up.
    SignalGuard signals(options.handleSignals);

    std::vector<std::unique_ptr<TaskLog>> logs;
    std::vector<Pipeline::TaskSlot> slots;
    logs.reserve(tasks.size());
    slots.reserve(tasks.size());
    for (size_t i = 0; i < tasks.size(); ++i) {
        const TaskConfig& tc = config.tasks[i];
        int64_t deadline = static_cast<int64_t>(tc.deadlineMs * 1e6);
        if (deadline <= 0 && source->info().fps > 0)
            deadline = static_cast<int64_t>(1e9 / source->info().fps);
        logs.push_back(std::make_unique<TaskLog>(tasks[i]->name(), tasks[i]->labels(), deadline,
            static_cast<size_t>(config.logging.queueCapacity)));
        if (monitor && monitor->sampler().haveRails())
            logs.back()->attachPower(&monitor->sampler());
        if (tc.type == "action")
            logs.back()->enableClipColumns();
        slots.push_back({tasks[i].get(), logs.back().get(), deadline});
    }
    // The sampler starts before the first frame so that every frame's window is covered.
    if (monitor) {
        if (Status s = monitor->sampler().start(); !s)
            return s.withContext(config.where("power"));
    }
    const bool energy = monitor && monitor->sampler().haveRails();
    FrameLogWriter writer;
    if (config.logging.csv || config.logging.jsonl || energy) {
        std::vector<TaskLog*> raw;
        raw.reserve(logs.size());
        for (auto& l : logs)
            raw.push_back(l.get());
        if (Status s =
                writer.open(outcome.runDirectory, raw, config.logging.csv, config.logging.jsonl);
            !s)
            return Status::invalid(s.message()).withContext(config.where("logging.dir"));
        writer.start();
    }

    Pipeline pipeline(*source, config.run, slots,
        static_cast<size_t>(config.logging.maxSummarySamples),
        display ? &display->queue() : nullptr);
    log->info("running {} task(s) on {} ({}); logs in {}", tasks.size(), source->info().uri,
        source->info().kind, outcome.runDirectory);
    if (!source->info().detail.empty())
        log->info("source: {}", source->info().detail);
    if (display)
        display->start(OverlayBuilder(pipeline, tasks, monitor.get()),
            [&pipeline] { pipeline.requestStop("the window was closed"); });
    pipeline.start();

    const int64_t statusPeriod = static_cast<int64_t>(config.logging.statusIntervalS * 1e9);
    int64_t nextStatus = monotonicNs() + statusPeriod;
    std::vector<uint64_t> framesAtLastStatus(tasks.size(), 0);
    // With a window open the loop also serves it (GUI toolkits want their window's thread), so it
    // comes round at about 60 Hz instead of 10.
    const int loopMs = display && display->hasWindow() ? 15 : 100;
    while (!pipeline.waitFinished(0)) {
        if (display)
            display->pumpWindow();
        if (int sig = signals.wait(loopMs)) {
            log->info(
                "{}: stopping; finishing the frames in flight (send it again to quit at once)",
                signalName(sig));
            pipeline.requestStop(std::string("signal ") + signalName(sig));
        }
        const int64_t now = monotonicNs();
        if (options.printStatus && statusPeriod > 0 && now >= nextStatus) {
            for (size_t i = 0; i < tasks.size(); ++i) {
                const auto view = pipeline.live(i);
                const double fps = static_cast<double>(view.frames - framesAtLastStatus[i]) /
                    nsToS(statusPeriod + now - nextStatus);
                framesAtLastStatus[i] = view.frames;
                std::string line = statusLine(tasks[i]->name(), view, tasks[i]->labels(), fps);
                if (monitor) {
                    const std::string p = powerStatus(*monitor);
                    if (!p.empty())
                        line += " | " + p;
                }
                logger("status")->info("{}", line);
            }
            nextStatus = now + statusPeriod;
        }
    }
    pipeline.join();
    if (display)
        display->stop();
    // The sampler's last sample covers the last frame; only then may the writer give up waiting.
    if (monitor)
        monitor->sampler().stop();
    writer.stop();

    outcome.framesCaptured = pipeline.framesCaptured();
    outcome.sourceStats = source->stats();
    if (display) {
        outcome.display.enabled = true;
        outcome.display.window = config.display.window;
        outcome.display.output = display->outputPath();
        outcome.display.shown = display->framesShown();
        outcome.display.recorded = display->framesRecorded();
        outcome.display.skipped = display->framesSkipped();
    }
    outcome.startNs = pipeline.startNs();
    outcome.endNs = pipeline.endNs();
    outcome.stopReason = pipeline.stopReason();
    const Status failure = pipeline.failure();
    outcome.failure = failure.message();
    for (size_t i = 0; i < tasks.size(); ++i)
        outcome.tasks.push_back({tasks[i].get(), &config.tasks[i], &pipeline.stats(i),
            pipeline.dropped(i), logs[i].get()});
    if (monitor) {
        outcome.power = &monitor->setup();
        outcome.powerOptions.railHz = config.power.railHz;
        outcome.powerOptions.stateHz = config.power.stateHz;
        outcome.powerStats = monitor->sampler().runStats();
    }

    AgentRun run;
    run.summary = summaryJson(outcome);
    run.runDirectory = outcome.runDirectory;
    run.failure = failure;
    for (size_t i = 0; i < tasks.size(); ++i)
        run.stats.push_back(pipeline.stats(i));

    const std::string text = summaryText(run.summary);
    {
        std::ofstream json(fs::path(outcome.runDirectory) / "summary.json");
        json << run.summary.dump(2) << '\n';
        std::ofstream txt(fs::path(outcome.runDirectory) / "summary.txt");
        txt << text;
        if (!json || !txt)
            log->error("could not write the summary into {}", outcome.runDirectory);
    }
    if (options.printSummary)
        std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
    return run;
}

} // namespace jetagent
