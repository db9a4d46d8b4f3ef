// `jetagent bench`: what the agent adds to the bare engine, both measured in one process,
// interleaved.
#include "bench.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "agent.h"
#include "compare.h"
#include "jetagent/base/clock.h"
#include "jetagent/base/format.h"
#include "jetagent/base/json_text.h"
#include "jetagent/base/log.h"
#include "jetagent/hal/gstreamer_source.h"
#include "metrics/prom_textfile.h"
#include "prom_results.h"
#include "run/latency_stats.h"
#include "run/run_context.h"
#include "tasks/action_task.h"
#include "tasks/classification_task.h"
#include "tasks/preprocess.h"

namespace jetagent {

namespace {

struct Figures {
    double median = 0, p90 = 0, mean = 0;
    size_t n = 0;
};

Figures figures(std::vector<int64_t> samples)
{
    Figures f;
    if (samples.empty())
        return f;
    std::sort(samples.begin(), samples.end());
    f.n = samples.size();
    f.median = nsToMs(nearestRankPercentile(samples, 50));
    f.p90 = nsToMs(nearestRankPercentile(samples, 90));
    double sum = 0;
    for (int64_t v : samples)
        sum += static_cast<double>(v);
    f.mean = sum / static_cast<double>(samples.size()) / 1e6;
    return f;
}

// The series' values after the first `skip`, in arrival order (a bench run keeps every value
// exactly: see logging.maxSummarySamples above).
void appendAfter(const SampleSeries& series, size_t skip, std::vector<int64_t>& out)
{
    const auto& kept = series.kept();
    if (kept.size() > skip)
        out.insert(out.end(), kept.begin() + static_cast<std::ptrdiff_t>(skip), kept.end());
}

nlohmann::json figuresJson(const Figures& f)
{
    return {{"median_ms", f.median}, {"p90_ms", f.p90}, {"mean_ms", f.mean}, {"n", f.n}};
}

nlohmann::json engineJson(const EngineDescription& e)
{
    return {{"model", e.modelPath}, {"model_sha256", e.modelSha256}, {"model_bytes", e.modelBytes},
        {"backend_version", e.backendVersion}, {"target", e.target},
        {"precision", precisionName(e.options.precision)}, {"batch", e.options.batch},
        {"threads", e.options.threads}, {"fusion", e.options.fusion}};
}

nlohmann::json contextJson(const RunContext& c)
{
    return {{"host", c.host}, {"os", c.os}, {"kernel", c.kernel}, {"machine", c.machine},
        {"cpu", c.cpu}, {"cores", c.cores}, {"jetagent", c.jetagentVersion},
        {"build_type", c.buildType}, {"compiler", c.compiler}, {"opencv", c.opencvVersion},
        {"started_utc", c.startedUtc}};
}

// --json must name a new file: checked before anything is measured.
Status checkJsonPath(const std::string& path)
{
    std::error_code ec;
    if (!path.empty() && std::filesystem::exists(path, ec))
        return Status::invalid("--json " + path + ": the file exists; give a new path");
    return Status();
}

// A directory of its own under the system temp directory, removed with the object: where the
// agent's rounds write when no --log-dir was given.
class ScratchDirectory {
public:
    ScratchDirectory() = default;
    ScratchDirectory(const ScratchDirectory&) = delete;
    ScratchDirectory& operator=(const ScratchDirectory&) = delete;
    ~ScratchDirectory()
    {
        std::error_code ec;
        if (!path_.empty())
            std::filesystem::remove_all(path_, ec);
    }

    Status create()
    {
        std::error_code ec;
        std::string pattern =
            (std::filesystem::temp_directory_path(ec) / "jetagent-bench-XXXXXX").string();
        if (ec || ::mkdtemp(pattern.data()) == nullptr)
            return Status::io("cannot create a temporary directory for the agent's run logs (" +
                pattern + "); give --log-dir DIR");
        path_ = pattern;
        return Status();
    }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

std::string describeEngine(const EngineDescription& e)
{
    std::string text = formatText(
        "%s (sha256 %.16s..., %llu bytes) on %s %s, %s, threads %s, fusion %s", e.modelPath.c_str(),
        e.modelSha256.c_str(), static_cast<unsigned long long>(e.modelBytes),
        e.backendVersion.c_str(), e.target.c_str(), precisionName(e.options.precision),
        e.options.threads > 0 ? std::to_string(e.options.threads).c_str() : "default (all cores)",
        e.options.fusion ? "on" : "off");
    return text;
}

// A pool of the source's frames, replayed by the action bench with new sequence numbers and
// capture times, so the source's own cost stays out of the figures.
Expected<std::vector<Frame>> readFramePool(FrameSource& source, const std::string& uri)
{
    constexpr size_t kPool = 64;
    constexpr int64_t kFirstFrameWaitNs = 5'000'000'000;
    std::vector<Frame> pool;
    const int64_t giveUp = monotonicNs() + kFirstFrameWaitNs;
    while (pool.size() < kPool && monotonicNs() < giveUp) {
        Frame frame;
        auto read = source.read(frame);
        if (!read)
            return read.status();
        if (read.value() == ReadResult::EndOfStream)
            break;
        if (read.value() == ReadResult::Frame)
            pool.push_back(std::move(frame));
    }
    if (pool.empty())
        return Status::invalid(
            "source " + withoutPasswords(uri) + " gave no frame to benchmark with");
    return pool;
}

// An action task's times per frame over the timed strides, split by what the frame did.
struct ActionSamples {
    uint64_t period = 0; // frames per stride
    uint64_t warmupFrames = 0;
    uint64_t timedPeriods = 0;
    std::vector<int64_t> withClip, withoutClip, clipInference, preprocess, frameInference;
    std::vector<int64_t> periods; // each stride's mean per frame
};

// Runs the task on the pool's frames, one at a time: first the warm-up (the ring filled, then a
// few clip inferences), then --rounds x --iterations strides, timed.
Expected<ActionSamples> timeActionTask(
    ActionTask& task, std::vector<Frame>& pool, const BenchOptions& options)
{
    const ActionConfig& action = task.config().action;
    ActionSamples samples;
    // Frames per stride (the config keeps both factors at 1 or more).
    samples.period = std::max<uint64_t>(1, static_cast<uint64_t>(action.stride) * action.frameStep);
    uint64_t sequence = 0;
    FrameRecord record;
    auto step = [&](int64_t* elapsed) -> Status {
        Frame& frame = pool[sequence % pool.size()];
        frame.sequence = sequence++;
        frame.captureNs = monotonicNs();
        const Frame* frames[] = {&frame};
        const int64_t start = monotonicNs();
        Status s = task.process(frames, 1, start, &record);
        *elapsed = monotonicNs() - start;
        return s;
    };
    samples.warmupFrames = static_cast<uint64_t>(task.clipLength() - 1) * action.frameStep + 1 +
        static_cast<uint64_t>(options.warmup) * samples.period;
    int64_t elapsed = 0;
    for (uint64_t i = 0; i < samples.warmupFrames; ++i)
        if (Status s = step(&elapsed); !s)
            return s;

    samples.timedPeriods =
        static_cast<uint64_t>(options.rounds) * static_cast<uint64_t>(options.iterations);
    for (uint64_t p = 0; p < samples.timedPeriods; ++p) {
        int64_t sum = 0;
        for (uint64_t i = 0; i < samples.period; ++i) {
            if (Status s = step(&elapsed); !s)
                return s;
            sum += elapsed;
            samples.preprocess.push_back(record.preprocessedNs - record.dequeuedNs);
            if (record.hasClip()) {
                samples.withClip.push_back(elapsed);
                samples.clipInference.push_back(record.clipInferenceNs);
            } else {
                samples.withoutClip.push_back(elapsed);
                samples.frameInference.push_back(record.inferredNs - record.preprocessedNs);
            }
        }
        samples.periods.push_back(sum / static_cast<int64_t>(samples.period));
    }
    return samples;
}

// Prints the action bench's configuration and figures.
void printActionBench(const AgentConfig& config, const RunContext& context, const ActionTask& task,
    const std::vector<Frame>& pool, const ActionSamples& samples)
{
    const ActionConfig& action = task.config().action;
    const int length = task.clipLength();
    const bool streaming = action.mode == ActionMode::Streaming;
    const auto engines = task.engines();
    const PreprocessConfig& pre = task.preprocessing();
    std::printf("== jetagent bench: an action task's cost per frame ==\n");
    std::printf("config      %s\n", config.path.c_str());
    std::printf("mode        %s, clips of T=%d frames (frame step %d, spanning %d frames), an "
                "inference every %d clip frames\n",
        streaming ? "streaming" : "clip", length, action.frameStep,
        (length - 1) * action.frameStep + 1, action.stride);
    if (streaming) {
        std::printf("backbone    %s\n", describeEngine(engines[0]).c_str());
        std::printf("head        %s\n", describeEngine(engines[1]).c_str());
    } else {
        std::printf("clip model  %s\n", describeEngine(engines[0]).c_str());
    }
    std::printf("input       frames preprocessed to 3x%dx%d; clip input %s; ring %zu planes, "
                "%.0f KiB\n",
        pre.cropHeight, pre.cropWidth,
        task.describe()["action"]["clip_input"].get<std::string>().c_str(), task.ring().planes(),
        static_cast<double>(task.ring().mappedBytes()) / 1024.0);
    std::printf("source      %s, %dx%d, %zu frames replayed\n",
        withoutPasswords(config.source().uri).c_str(), pool[0].image.cols, pool[0].image.rows,
        pool.size());
    std::printf("host        %s, %s, %d cores, %s; jetagent %s (%s)\n", context.host.c_str(),
        context.cpu.c_str(), context.cores, context.kernel.c_str(), context.jetagentVersion.c_str(),
        context.buildType.c_str());
    std::printf("method      ActionTask::process on one thread, %llu warm-up frames, then %llu "
                "periods of %llu frames (--rounds x --iterations)\n\n",
        static_cast<unsigned long long>(samples.warmupFrames),
        static_cast<unsigned long long>(samples.timedPeriods),
        static_cast<unsigned long long>(samples.period));
    std::printf("%-52s %9s %9s %9s %7s\n", "ms", "median", "p90", "mean", "n");
    auto row = [](const char* name, const Figures& f) {
        std::printf("%-52s %9.3f %9.3f %9.3f %7zu\n", name, f.median, f.p90, f.mean, f.n);
    };
    const Figures amortised = figures(samples.periods);
    row("per frame, amortised over each stride", amortised);
    row("  frames that infer no clip", figures(samples.withoutClip));
    row("    preprocess (into the ring, or for the backbone)", figures(samples.preprocess));
    if (streaming)
        row("    backbone pass", figures(samples.frameInference));
    row("  frames that end a clip", figures(samples.withClip));
    row(streaming ? "    temporal head" : "    clip model", figures(samples.clipInference));
    std::printf("\nper-frame cost: %.3f ms (median over %zu strides; %s)\n", amortised.median,
        amortised.n,
        streaming ? "one backbone pass per frame plus the head every stride"
                  : "preprocessing per frame plus one clip inference every stride");
}

// The action bench's --json document: the configuration and the figures.
nlohmann::json actionBenchJson(const AgentConfig& config, const BenchOptions& options,
    const RunContext& context, const ActionTask& task, const std::vector<Frame>& pool,
    const ActionSamples& samples)
{
    const ActionConfig& action = task.config().action;
    const bool streaming = action.mode == ActionMode::Streaming;
    const Figures amortised = figures(samples.periods);
    nlohmann::json engineList = nlohmann::json::array();
    for (const EngineDescription& e : task.engines())
        engineList.push_back(engineJson(e));
    return {{"bench", "action"}, {"config", config.path},
        {"source",
            {{"uri", withoutPasswords(config.source().uri)}, {"width", pool[0].image.cols},
                {"height", pool[0].image.rows}, {"frames_replayed", pool.size()}}},
        {"mode", streaming ? "streaming" : "clip"}, {"clip_length", task.clipLength()},
        {"frame_step", action.frameStep}, {"stride", action.stride}, {"engines", engineList},
        {"host", contextJson(context)},
        {"method",
            {{"rounds", options.rounds}, {"iterations", options.iterations},
                {"warmup", options.warmup}, {"warmup_frames", samples.warmupFrames},
                {"periods", samples.timedPeriods}, {"frames_per_period", samples.period}}},
        {"figures",
            {{"per_frame_amortised", figuresJson(amortised)},
                {"frames_without_clip", figuresJson(figures(samples.withoutClip))},
                {"preprocess", figuresJson(figures(samples.preprocess))},
                {"backbone_pass",
                    streaming ? figuresJson(figures(samples.frameInference)) : nullptr},
                {"frames_with_clip", figuresJson(figures(samples.withClip))},
                {streaming ? "temporal_head" : "clip_model",
                    figuresJson(figures(samples.clipInference))}}},
        {"per_frame_cost_ms", amortised.median}};
}

// An action task's cost per frame: its process() on the source's frames, one at a time, without
// the pipeline's threads, so each frame's time is the task's alone. A clip inference falls on one
// frame in `stride`; the amortised cost spreads it over them.
Status runActionBench(const AgentConfig& config, const BenchOptions& options)
{
    if (!options.logDir.empty())
        return Status::invalid("--log-dir: an action task's bench runs the task alone, not the "
                               "agent, and writes no run logs");
    const RunContext context = collectRunContext(detectBoard(SysfsRoot(config.power.sysfsRoot)));
    auto source = openFrameSource(config.source());
    if (!source)
        return source.status().withContext(config.where("source.uri"));
    auto created = ActionTask::create(config, 0, source.value()->info());
    if (!created)
        return created.status();
    ActionTask& task = *created.value();
    auto pool = readFramePool(*source.value(), config.source().uri);
    if (!pool)
        return pool.status();
    auto samples = timeActionTask(task, pool.value(), options);
    if (!samples)
        return samples.status();
    printActionBench(config, context, task, pool.value(), samples.value());
    return writeJsonOption(
        options.json, actionBenchJson(config, options, context, task, pool.value(), *samples));
}

// The agent's and the engine's samples over every round.
struct BenchSeries {
    std::vector<int64_t> engineRuns, interval, service, inference, preprocess, endToEnd;
    std::vector<double> roundRatios; // agent median / engine median of the same round
    std::string lastRunDir;
};

// What the report says about the configuration.
struct BenchSetup {
    const RunContext* context;
    const EngineDescription* engine;
    int batch;
    const PreprocessConfig* pre;
    int width, height; // the source's frames
    int fifoDepth;
};

// Prints the figures beside their configuration, and writes both to --json.
Status reportBench(const AgentConfig& config, const BenchOptions& options, const BenchSetup& setup,
    const BenchSeries& series)
{
    const Figures engine = figures(series.engineRuns);
    const Figures interval = figures(series.interval);
    const Figures service = figures(series.service);
    const Figures inference = figures(series.inference);
    const Figures preprocess = figures(series.preprocess);
    const Figures e2e = figures(series.endToEnd);
    const EngineDescription& e = *setup.engine;
    const RunContext& context = *setup.context;
    const PreprocessConfig& pre = *setup.pre;
    const int batch = setup.batch;
    std::vector<double> roundRatios = series.roundRatios;

    std::printf("== jetagent bench: the whole agent against the bare engine ==\n");
    std::printf("config      %s\n", config.path.c_str());
    std::printf("model       %s (sha256 %.16s..., %llu bytes), input %dx3x%dx%d\n",
        e.modelPath.c_str(), e.modelSha256.c_str(), static_cast<unsigned long long>(e.modelBytes),
        batch, pre.cropHeight, pre.cropWidth);
    std::printf("engine      %s on %s, %s, batch %d, threads %s, fusion %s\n",
        e.backendVersion.c_str(), e.target.c_str(), precisionName(e.options.precision),
        e.options.batch,
        e.options.threads > 0 ? std::to_string(e.options.threads).c_str() : "default (all cores)",
        e.options.fusion ? "on" : "off");
    std::printf("source      %s, %dx%d, as fast as possible (FIFO depth %d)\n",
        withoutPasswords(config.source().uri).c_str(), setup.width, setup.height, setup.fifoDepth);
    std::printf("host        %s, %s, %d cores, %s; jetagent %s (%s)\n", context.host.c_str(),
        context.cpu.c_str(), context.cores, context.kernel.c_str(), context.jetagentVersion.c_str(),
        context.buildType.c_str());
    std::printf("method      %d rounds, each: %d runs of the engine (a new session each round) "
                "then an agent run\n"
                "            of %d frames, after %d warm-up inferences each\n",
        options.rounds, options.iterations, options.iterations, options.warmup);
    if (options.logDir.empty())
        std::printf("agent logs  none kept (--log-dir DIR keeps the last round's)\n\n");
    else
        std::printf("agent logs  %s (last round)\n\n", series.lastRunDir.c_str());
    std::printf("%-52s %9s %9s %9s %7s\n", "ms per inference", "median", "p90", "mean", "n");
    auto row = [](const char* name, const Figures& f) {
        std::printf("%-52s %9.3f %9.3f %9.3f %7zu\n", name, f.median, f.p90, f.mean, f.n);
    };
    row("(a) bare engine: Session::run in a loop", engine);
    row("(b) whole agent: interval between results", interval);
    row("    worker service time (dequeue to result)", service);
    row("      preprocess", preprocess);
    row("      inference stage", inference);
    // No end-to-end row: the agent's rounds are unpaced, so their end to end is measured from the
    // dequeue (queueing kept apart, as every unpaced run reports it) and equals the service time.

    const double ratio = engine.median > 0 ? interval.median / engine.median : 0.0;
    std::printf(
        "\nagent / engine, pooled medians (b/a):   %.4f (the agent adds %+.3f ms, %+.2f%%)\n",
        ratio, interval.median - engine.median, 100.0 * (ratio - 1.0));

    // Each round's ratio compares an agent run with the engine loop just before it, so drift of the
    // machine (other tenants, clocks) cancels; their median is the figure the goal is judged on.
    std::sort(roundRatios.begin(), roundRatios.end());
    const size_t n = roundRatios.size();
    const double paired = n ? roundRatios[nearestRankIndex(n, 50)] : 0.0;
    const double q1 = n ? roundRatios[nearestRankIndex(n, 25)] : 0.0;
    const double q3 = n ? roundRatios[nearestRankIndex(n, 75)] : 0.0;
    std::printf("agent / engine, median of %zu paired rounds: %.4f (interquartile %.4f .. %.4f)\n",
        n, paired, q1, q3);
    const double allowance = std::max(0.03, 0.3 / engine.median);
    const bool met = paired - 1.0 <= allowance;
    std::printf("goal: the agent adds at most 3%% or 0.3 ms, whichever is larger (%.2f%% here): %s "
                "(paired: %+.2f%%)\n",
        100.0 * allowance, met ? "met" : "NOT met", 100.0 * (paired - 1.0));

    const nlohmann::json doc = {{"bench", "agent_vs_engine"}, {"config", config.path},
        {"engine", engineJson(e)}, {"input_shape", {batch, 3, pre.cropHeight, pre.cropWidth}},
        {"source",
            {{"uri", withoutPasswords(config.source().uri)}, {"width", setup.width},
                {"height", setup.height}, {"fifo_depth", setup.fifoDepth}}},
        {"host", contextJson(context)},
        {"method",
            {{"rounds", options.rounds}, {"iterations", options.iterations},
                {"warmup", options.warmup}}},
        {"agent_logs",
            options.logDir.empty() ? nlohmann::json(nullptr) : nlohmann::json(series.lastRunDir)},
        {"figures",
            {{"engine", figuresJson(engine)}, {"agent_interval", figuresJson(interval)},
                {"agent_service", figuresJson(service)},
                {"agent_preprocess", figuresJson(preprocess)},
                {"agent_inference", figuresJson(inference)},
                {"agent_end_to_end", figuresJson(e2e)}}},
        {"ratio_pooled_medians", ratio},
        {"ratio_paired", {{"rounds", n}, {"median", paired}, {"q1", q1}, {"q3", q3}}},
        {"goal", {{"allowance", allowance}, {"met", met}}}};
    return writeJsonOption(options.json, doc);
}

// The output paths, checked before any work: --json's folder, --prom-textfile's directory (not
// for an action task, whose figures are per clip).
Status checkOutputs(const AgentConfig& config, const BenchOptions& options)
{
    if (Status s = checkJsonPath(options.json); !s || options.promTextfile.empty())
        return s;
    if (Status s = checkPromTextfileDir(options.promTextfile); !s)
        return s;
    if (config.tasks[0].type == "action")
        return Status::invalid("--prom-textfile: not written for an action task's bench (its "
                               "figures are per clip); run the task with `jetagent run "
                               "--prom-textfile` instead");
    return Status();
}

} // namespace

Status runBench(const AgentConfig& config, const BenchOptions& options)
{
    if (config.tasks.empty())
        return Status::invalid(config.where("tasks") + ": the benchmark needs a task");
    if (Status s = checkOutputs(config, options); !s)
        return s;
    if (config.tasks[0].type == "action")
        return runActionBench(config, options);
    auto log = logger("bench");
    const RunContext context = collectRunContext(detectBoard(SysfsRoot(config.power.sysfsRoot)));

    // The bare engine: the first task's model and options, fed a preprocessed frame of the
    // configured source.
    auto source = openFrameSource(config.source());
    if (!source)
        return source.status().withContext(config.where("source.uri"));
    auto task = ClassificationTask::create(config, 0, source.value()->info());
    if (!task)
        return task.status();
    const ClassificationTask& classification = *task.value();
    const PreprocessConfig& pre = classification.preprocessing();
    const int batch = std::max(classification.batchSize(), 1);
    Frame frame;
    // A camera may take a moment to deliver its first frame; other sources answer at once.
    constexpr int64_t kFirstFrameWaitNs = 5'000'000'000;
    const int64_t giveUp = monotonicNs() + kFirstFrameWaitNs;
    auto read = source.value()->read(frame);
    while (read && read.value() == ReadResult::NoFrame && monotonicNs() < giveUp)
        read = source.value()->read(frame);
    if (!read || read.value() != ReadResult::Frame)
        return Status::invalid(
            "source " + withoutPasswords(config.source().uri) + " gave no frame to benchmark with");
    Preprocessor preprocessor(pre);
    std::vector<float> input(preprocessor.outputElements() * static_cast<size_t>(batch));
    for (int b = 0; b < batch; ++b)
        if (Status s = preprocessor.run(
                frame.image, input.data() + preprocessor.outputElements() * static_cast<size_t>(b));
            !s)
            return s.withContext("source " + config.source().uri);
    TensorView view {input.data(), TensorShape {batch, 3, pre.cropHeight, pre.cropWidth}};

    AgentConfig agentConfig = config;
    agentConfig.run.pacing = Pacing::None;
    agentConfig.run.frames =
        static_cast<uint64_t>(options.warmup + options.iterations) * static_cast<uint64_t>(batch);
    agentConfig.run.durationS = 0;
    agentConfig.logging.statusIntervalS = 0;
    // Every value of a round stays exact: the rounds' series are pooled below (appendAfter).
    agentConfig.logging.maxSummarySamples =
        std::max<uint64_t>(agentConfig.logging.maxSummarySamples, agentConfig.run.frames);
    agentConfig.tasks.resize(1);
    RunOptions runOptions;
    runOptions.printStatus = false;
    runOptions.printSummary = false;
    runOptions.runPrefix = "bench-";
    ScratchDirectory scratch;
    if (options.logDir.empty()) {
        if (Status s = scratch.create(); !s)
            return s;
        agentConfig.logging.dir = scratch.path();
    } else {
        agentConfig.logging.dir = options.logDir;
    }

    BenchSeries series;
    PooledTaskFigures pooled {config.tasks[0].name};
    std::vector<int64_t>& engineRuns = series.engineRuns;
    std::vector<int64_t>& agentInterval = series.interval;
    std::string& lastRunDir = series.lastRunDir;
    for (int round = 0; round < options.rounds; ++round) {
        const size_t engineBefore = engineRuns.size(), agentBefore = agentInterval.size();
        // A new session each round, as the agent builds its own each run: how fast a network runs
        // varies a little with where its buffers land, and both sides should sample that alike.
        auto session = classification.engine()->createSession();
        if (!session)
            return session.status();
        for (int i = 0; i < options.warmup + options.iterations; ++i) {
            const int64_t start = monotonicNs();
            if (Status s = session.value()->run(&view, 1, nullptr); !s)
                return s;
            if (i >= options.warmup)
                engineRuns.push_back(monotonicNs() - start);
        }
        auto run = runAgent(agentConfig, runOptions);
        if (!run)
            return run.status();
        exitIfAbandoned(*run);
        if (!run->failure.ok())
            return run->failure;
        const TaskStats& s = run->stats[0];
        pooled.add(s, run->summary);
        // The cold-start inference is already kept out of the series; skip the rest of the warm-up.
        const size_t skip = static_cast<size_t>(std::max(options.warmup - 1, 0));
        appendAfter(s.interval, skip, agentInterval);
        appendAfter(s.service, skip, series.service);
        appendAfter(s.inference, skip, series.inference);
        appendAfter(s.preprocess, skip, series.preprocess);
        appendAfter(s.endToEnd, skip, series.endToEnd);
        // One run directory at a time: the last round's is the one kept (with --log-dir).
        if (!lastRunDir.empty() && lastRunDir != run->runDirectory) {
            std::error_code ec;
            std::filesystem::remove_all(lastRunDir, ec);
        }
        lastRunDir = run->runDirectory;
        const Figures engineRound = figures(
            {engineRuns.begin() + static_cast<std::ptrdiff_t>(engineBefore), engineRuns.end()});
        const Figures agentRound =
            figures({agentInterval.begin() + static_cast<std::ptrdiff_t>(agentBefore),
                agentInterval.end()});
        if (engineRound.median > 0 && agentRound.n > 0)
            series.roundRatios.push_back(agentRound.median / engineRound.median);
        log->debug(
            "round {}: {} engine runs, agent run in {}", round + 1, engineRuns.size(), lastRunDir);
    }

    const BenchSetup setup {&context, &classification.engine()->description(), batch, &pre,
        frame.image.cols, frame.image.rows, agentConfig.run.queueDepth};
    if (Status s = reportBench(config, options, setup, series); !s || options.promTextfile.empty())
        return s;
    return writeBenchTextfile(options.promTextfile, pooled).withContext("--prom-textfile");
}

} // namespace jetagent
