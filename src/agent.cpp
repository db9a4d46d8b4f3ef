// One run of the agent: open the source, build the tasks, run the pipeline, log and summarise.
#include "agent.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include <sys/stat.h>

#include "classification_task.h"
#include "frame_log.h"
#include "jetagent/base/clock.h"
#include "jetagent/base/log.h"
#include "pipeline.h"
#include "run_context.h"
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

const char* signalName(int sig)
{
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "a signal";
    }
}

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

// SIGINT/SIGTERM during a run: the first asks the main loop to stop cleanly, a second quits at
// once. A handler rather than blocked signals: threads that libraries start (TBB's workers, for
// one) do not inherit a mask set later, and one of them taking the signal must not kill the run.
// The handler only touches lock-free atomics and _exit, so it is async-signal-safe in whichever
// thread runs it.
std::atomic<int> g_pendingSignal {0};
std::atomic<int> g_signalCount {0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");

extern "C" void onStopSignal(int sig)
{
    if (g_signalCount.fetch_add(1) >= 1)
        _exit(128 + sig);
    g_pendingSignal.store(sig);
}

class SignalGuard {
public:
    explicit SignalGuard(bool enabled) : enabled_(enabled)
    {
        if (!enabled_)
            return;
        g_pendingSignal = 0;
        g_signalCount = 0;
        struct sigaction action { };
        action.sa_handler = onStopSignal;
        action.sa_flags = SA_RESTART;
        sigemptyset(&action.sa_mask);
        sigaction(SIGINT, &action, &previousInt_);
        sigaction(SIGTERM, &action, &previousTerm_);
    }
    ~SignalGuard()
    {
        if (!enabled_)
            return;
        sigaction(SIGINT, &previousInt_, nullptr);
        sigaction(SIGTERM, &previousTerm_, nullptr);
    }
    SignalGuard(const SignalGuard&) = delete;
    SignalGuard& operator=(const SignalGuard&) = delete;

    // Waits up to `ms` (a signal cuts the wait short); returns a signal that arrived, or 0.
    int wait(int ms)
    {
        timespec timeout {ms / 1000, static_cast<long>(ms % 1000) * 1'000'000L};
        if (g_pendingSignal.load() == 0)
            nanosleep(&timeout, nullptr);
        return enabled_ ? g_pendingSignal.exchange(0) : 0;
    }

private:
    bool enabled_;
    struct sigaction previousInt_ { };
    struct sigaction previousTerm_ { };
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
        auto task = ClassificationTask::create(config, i, source->info());
        if (!task)
            return task.status();
        tasks.push_back(std::move(task).value());
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
        slots.push_back({tasks[i].get(), logs.back().get(), deadline});
    }
    FrameLogWriter writer;
    if (config.logging.csv || config.logging.jsonl) {
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

    Pipeline pipeline(
        *source, config.run, slots, static_cast<size_t>(config.logging.maxSummarySamples));
    log->info("running {} task(s) on {} ({}); logs in {}", tasks.size(), source->info().uri,
        source->info().kind, outcome.runDirectory);
    pipeline.start();

    const int64_t statusPeriod = static_cast<int64_t>(config.logging.statusIntervalS * 1e9);
    int64_t nextStatus = monotonicNs() + statusPeriod;
    std::vector<uint64_t> framesAtLastStatus(tasks.size(), 0);
    while (!pipeline.waitFinished(0)) {
        if (int sig = signals.wait(100)) {
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
                logger("status")->info(
                    "{}", statusLine(tasks[i]->name(), view, tasks[i]->labels(), fps));
            }
            nextStatus = now + statusPeriod;
        }
    }
    pipeline.join();
    writer.stop();

    outcome.framesCaptured = pipeline.framesCaptured();
    outcome.startNs = pipeline.startNs();
    outcome.endNs = pipeline.endNs();
    outcome.stopReason = pipeline.stopReason();
    const Status failure = pipeline.failure();
    outcome.failure = failure.message();
    for (size_t i = 0; i < tasks.size(); ++i)
        outcome.tasks.push_back({tasks[i].get(), &config.tasks[i], &pipeline.stats(i),
            pipeline.dropped(i), logs[i].get()});

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
