// `jetagent sweep`: runs a study's matrix cell by cell, the engines of one model, batch size and
// thread count taking turns, and writes what was measured after every group of cells.
#include "sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <thread>

#include "compare.h"
#include "config/config.h"
#include "jetagent/base/clock.h"
#include "jetagent/base/json_text.h"
#include "jetagent/base/regular_file.h"
#include "jetagent/base/text.h"
#include "jetagent/engines/cache_file.h"
#include "jetagent/engines/model_file.h"
#include "jetagent/engines/model_info.h"
#include "jetagent/hal/board_identity.h"
#include "jetagent/hal/frame_source.h"
#include "jetagent/hal/sysfs.h"
#include "jetagent/power/power_monitor.h"
#include "metrics/prom_textfile.h"
#include "prom_results.h"
#include "run/run_context.h"
#include "service/stop_signals.h"
#include "sweep_html.h"
#include "sweep_measure.h"
#include "tasks/image_input.h"
#include "tasks/labels.h"
#include "tasks/preprocess.h"
#include "tasks/scores.h"

namespace jetagent {

namespace fs = std::filesystem;

namespace {

constexpr const char* kCsvName = "results.csv";
constexpr const char* kStudyMarker = "study.json"; // what this directory holds
constexpr uint64_t kMaxCsvBytes = 64 << 20;
constexpr size_t kRandomWindows = 4; // distinct random input windows per batch size
constexpr size_t kMaxSourceInputs = 256; // frames read from an --inputs source

// The model of a group: its file, input and inspect figures.
struct ModelPlan {
    std::string path, stem;
    std::shared_ptr<const ModelFile> file;
    TensorShape sample; // one input without its batch dimension
    int64_t fixedBatch = -1; // > 0 when the model's batch dimension is fixed
    double parameters = kNotMeasured, macs = kNotMeasured; // per image
};

// The inputs of one model: `count` samples back to back, preprocessed once, and their classes
// when the source knows them (-1 otherwise).
struct InputPool {
    std::vector<float> data;
    size_t sampleElements = 0;
    size_t count = 0;
    std::vector<int> truth; // model output index per sample, -1 unknown
};

// One cell being measured.
struct CellRun {
    CellResult result;
    EngineOptions options;
    std::shared_ptr<const Engine> engine;
    std::unique_ptr<Session> session;
    std::vector<int64_t> latencies;
    TurnTotals totals;
    double energyJ = 0;
    int64_t energyNs = 0;
    bool energyCovered = true;
    std::pair<int64_t, int64_t> turnWindow {0, 0}; // this round's turn, until its energy is added
    std::vector<float> probe; // output 0 for the first input window (agreement with the baseline)
    size_t probeClasses = 0;

    void fail(const Status& s)
    {
        result.ok = false;
        result.error = s.message();
        session.reset();
        engine.reset();
    }
};

struct SweepState {
    Study study;
    std::string out;
    std::vector<CellResult> cells; // done, in the order they finished (earlier runs' first)
    std::unique_ptr<PowerMonitor> power;
    double idlePowerW = kNotMeasured;
    bool interrupted = false;
    std::function<void(const CellResult&)> onCell;
};

std::string outPath(const SweepState& s, const char* name)
{
    return (fs::path(s.out) / name).string();
}

nlohmann::json studyJson(const Study& s)
{
    return {{"name", s.name}, {"file", s.file.empty() ? nlohmann::json() : nlohmann::json(s.file)},
        {"models", s.models}, {"engines", s.engines}, {"baseline", s.baseline},
        {"batches", s.batches}, {"threads", s.threads}, {"iterations", s.iterations},
        {"duration_s", s.durationS}, {"warmup", s.warmup}, {"rounds", s.rounds},
        {"inputs", s.inputs}, {"labels", s.labels}, {"config", s.config},
        {"engines_left_out", s.skipped},
        {"latency_budget_ms",
            s.latencyBudgetMs > 0 ? nlohmann::json(s.latencyBudgetMs) : nlohmann::json()},
        {"power", {{"sysfs_root", s.sysfsRoot}, {"board", s.board}}}};
}

// What identifies a study's cells: two runs with the same matrix may share a directory (--resume).
nlohmann::json studyIdentity(const Study& s)
{
    nlohmann::json j = studyJson(s);
    j.erase("file");
    return j;
}

// The directory must be new, empty, or hold this very study (and then only with --resume).
Status prepareOutDir(const SweepState& s, bool resume)
{
    std::error_code ec;
    fs::create_directories(s.out, ec);
    if (ec)
        return Status::io("cannot create the output directory " + s.out + ": " + ec.message());
    const std::string marker = outPath(s, kStudyMarker);
    if (!fs::exists(marker)) {
        if (!fs::is_empty(s.out, ec))
            return Status::invalid("the output directory " + s.out +
                " is not empty and holds no sweep; give a new or empty directory");
        return writeFileAtomically(marker, jsonText(studyIdentity(s.study), 2) + "\n");
    }
    std::string text;
    if (Status st = readRegularFile(marker, marker, 1 << 20, text); !st)
        return st;
    const nlohmann::json held = nlohmann::json::parse(text, nullptr, false);
    if (held != studyIdentity(s.study))
        return Status::invalid("the output directory " + s.out + " holds another study (its " +
            kStudyMarker + " differs from this one's matrix); give a new directory");
    if (!resume && fs::exists(outPath(s, kCsvName)))
        return Status::invalid("the output directory " + s.out +
            " already holds results of this study; --resume continues it, or give a new "
            "directory");
    return Status();
}

Status loadDoneCells(SweepState& s)
{
    const std::string csv = outPath(s, kCsvName);
    if (!fs::exists(csv))
        return Status();
    std::string text;
    if (Status st = readRegularFile(csv, csv, kMaxCsvBytes, text); !st)
        return st;
    auto cells = parseCellsCsv(text, csv);
    if (!cells)
        return cells.status();
    s.cells = std::move(cells).value();
    return Status();
}

bool isDone(const SweepState& s, const CellKey& key)
{
    return std::any_of(
        s.cells.begin(), s.cells.end(), [&](const CellResult& c) { return c.key == key; });
}

Expected<ModelPlan> planModel(const std::string& path)
{
    ModelPlan m;
    m.path = path;
    m.stem = fs::path(path).stem().string();
    auto file = loadModelFile(path);
    if (!file)
        return file.status();
    m.file = file.value();
    if (m.file->inputs.size() != 1 || m.file->inputs[0].type != DataType::Float32)
        return Status::invalid(path +
            ": the sweep feeds models with one float32 input; this one has " +
            std::to_string(m.file->inputs.size()) + " inputs");
    const TensorInfo& in = m.file->inputs[0];
    if (in.dims.size() < 2 || in.dims.size() > static_cast<size_t>(TensorShape::kMaxRank))
        return Status::invalid(path + ": input '" + in.name + "' is " + in.shapeString() +
            "; the sweep needs a batch dimension and a sample shape");
    m.fixedBatch = in.dims[0];
    m.sample.rank = static_cast<int>(in.dims.size()) - 1;
    for (size_t i = 1; i < in.dims.size(); ++i) {
        if (in.dims[i] <= 0)
            return Status::invalid(path + ": input '" + in.name + "' is " + in.shapeString() +
                "; every dimension but the batch must be fixed");
        m.sample.dims[i - 1] = in.dims[i];
    }
    auto stats = modelStats(*m.file, {});
    if (stats) {
        m.parameters = static_cast<double>(stats->parameters);
        if (stats->uncounted.empty())
            m.macs = static_cast<double>(stats->macs);
    }
    return m;
}

// Random N(0, 1) samples, the same for every engine and every run of the sweep (seeded).
InputPool randomInputs(const ModelPlan& m, int maxBatch)
{
    InputPool pool;
    pool.sampleElements = static_cast<size_t>(m.sample.elementCount());
    pool.count = static_cast<size_t>(maxBatch) * kRandomWindows;
    pool.data.resize(pool.count * pool.sampleElements);
    std::mt19937 rng(20261126);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float& v : pool.data)
        v = normal(rng);
    pool.truth.assign(pool.count, -1);
    return pool;
}

// Frames of a source, preprocessed for an image model (N x 3 x H x W) with torchvision's
// ImageNet normalisation, and their classes where the source knows them (by the labels file's
// line of the class name, else the class index itself, ImageFolder's order).
Expected<InputPool> sourceInputs(
    const ModelPlan& m, const Study& study, const std::vector<std::string>& labels)
{
    if (m.sample.rank != 3 || m.sample[0] != 3)
        return Status::invalid(m.path + ": frames from " + study.inputs +
            " feed image models (3 x H x W); this one takes " + m.sample.toString());
    SourceOptions so;
    so.uri = study.inputs;
    auto source = openFrameSource(so);
    if (!source)
        return source.status().withContext("inputs");
    const SourceInfo& info = source.value()->info();
    PreprocessConfig pre;
    if (!study.config.empty()) {
        auto agent = loadConfig(study.config);
        if (!agent)
            return agent.status().withContext("config");
        if (agent->tasks.empty())
            return Status::invalid("config " + study.config +
                " has no task to take the "
                "preprocessing from");
        pre = agent->tasks[0].preprocess;
        if (Status s = resolveImageInput(
                agent.value(), "tasks[0]", m.sample[1], m.sample[2], m.sample.toString(), pre);
            !s)
            return s.withContext(m.path);
    } else {
        pre.cropHeight = static_cast<int>(m.sample[1]);
        pre.cropWidth = static_cast<int>(m.sample[2]);
        pre.resizeSize = pre.cropHeight * 256 / 224;
    }
    Preprocessor preprocessor(pre);
    InputPool pool;
    pool.sampleElements = preprocessor.outputElements();
    Frame frame;
    // A camera gets 10 s to give its frames; a file or a synthetic source is read to the count or
    // its end, however slow the machine (a loaded one cut the synthetic shapes at 248 of 256).
    const int64_t giveUp = info.live ? monotonicNs() + 10'000'000'000 : INT64_MAX;
    while (pool.count < kMaxSourceInputs && monotonicNs() < giveUp) {
        auto read = source.value()->read(frame);
        if (!read)
            return read.status().withContext("inputs");
        if (read.value() == ReadResult::EndOfStream)
            break;
        if (read.value() == ReadResult::NoFrame)
            continue;
        pool.data.resize((pool.count + 1) * pool.sampleElements);
        if (Status s =
                preprocessor.run(frame.image, pool.data.data() + pool.count * pool.sampleElements);
            !s)
            return s.withContext("inputs " + study.inputs);
        int truth = -1;
        if (frame.truthClass >= 0 &&
            static_cast<size_t>(frame.truthClass) < info.classNames.size()) {
            truth = frame.truthClass;
            if (!labels.empty()) {
                auto it = std::find(labels.begin(), labels.end(), info.classNames[truth]);
                truth = it == labels.end() ? -1 : static_cast<int>(it - labels.begin());
            }
        }
        pool.truth.push_back(truth);
        ++pool.count;
    }
    if (pool.count == 0)
        return Status::invalid("inputs " + study.inputs + " gave no frame");
    return pool;
}

// Builds a cell's engine twice, cold (an empty cache) then warm (from the cache), keeps the warm
// one and opens its session.
Status buildCell(CellRun& c, const ModelPlan& m)
{
    auto cold = buildEngine(m.file, c.options);
    if (!cold)
        return cold.status();
    const EngineDescription& d0 = cold.value()->description();
    const bool fromCache = d0.preparedFromCache || d0.planFromCache;
    if (!fromCache)
        c.result.figures.buildColdMs = nsToMs(d0.buildNs);
    cold = Expected<std::shared_ptr<const Engine>>(nullptr); // free it before the second build
    auto warm = buildEngine(m.file, c.options);
    if (!warm)
        return warm.status();
    c.engine = warm.value();
    const EngineDescription& d = c.engine->description();
    c.result.figures.buildWarmMs = nsToMs(d.buildNs);
    c.result.backend = d.backend;
    c.result.device = deviceName(d.options.device);
    c.result.precision = precisionName(d.options.precision);
    auto session = c.engine->createSession();
    if (!session)
        return session.status();
    c.session = std::move(session).value();
    return Status();
}

TensorView inputView(const ModelPlan& m, const InputPool& pool, int batch)
{
    TensorView v;
    v.data = const_cast<float*>(pool.data.data());
    v.shape.rank = m.sample.rank + 1;
    v.shape.dims[0] = batch;
    for (int i = 0; i < m.sample.rank; ++i)
        v.shape.dims[static_cast<size_t>(i) + 1] = m.sample[i];
    return v;
}

// Warm-up runs, then the probe output (the first window) kept for agreement and, with labelled
// inputs, one untimed pass over every whole window scored for top-1 and top-5.
Status warmUpCell(CellRun& c, const ModelPlan& m, const InputPool& pool, int warmup)
{
    const int batch = c.result.key.batch;
    TensorView view = inputView(m, pool, batch);
    for (int i = 0; i < warmup; ++i)
        if (Status s = c.session->run(&view, 1, nullptr); !s)
            return s.withContext("warm-up");
    if (Status s = c.session->run(&view, 1, nullptr); !s)
        return s;
    const ConstTensorView out = c.session->output(0);
    if (out.data == nullptr || out.shape.rank < 1 || out.shape[0] != batch)
        return Status::runtime(
            "output 0 is " + out.shape.toString() + " for a batch of " + std::to_string(batch));
    c.probeClasses = static_cast<size_t>(out.shape.elementCount()) / static_cast<size_t>(batch);
    c.probe.assign(out.data, out.data + out.shape.elementCount());

    size_t labelled = 0, top1 = 0, top5 = 0;
    const size_t windows = pool.count / static_cast<size_t>(batch);
    for (size_t w = 0; w < windows && c.probeClasses >= 2; ++w) {
        bool any = false;
        for (int r = 0; r < batch; ++r)
            any = any || pool.truth[w * static_cast<size_t>(batch) + static_cast<size_t>(r)] >= 0;
        if (!any)
            continue;
        view.data = const_cast<float*>(pool.data.data() + w * batch * pool.sampleElements);
        if (Status s = c.session->run(&view, 1, nullptr); !s)
            return s.withContext("accuracy pass");
        const float* scores = c.session->output(0).data;
        for (size_t r = 0; r < static_cast<size_t>(batch); ++r) {
            const int truth = pool.truth[w * static_cast<size_t>(batch) + r];
            if (truth < 0)
                continue;
            const auto best = topK(scores + r * c.probeClasses, c.probeClasses, 5);
            ++labelled;
            top1 += !best.empty() && best[0] == static_cast<size_t>(truth);
            top5 += std::find(best.begin(), best.end(), static_cast<size_t>(truth)) != best.end();
        }
    }
    if (labelled > 0) {
        c.result.figures.labelledInputs = static_cast<double>(labelled);
        c.result.figures.top1 = static_cast<double>(top1) / static_cast<double>(labelled);
        c.result.figures.top5 = c.probeClasses >= 5
            ? static_cast<double>(top5) / static_cast<double>(labelled)
            : kNotMeasured;
    }
    return Status();
}

// The energy of the round's turns from the sampler's ring, once it has samples past the last
// turn's end (one wait per round, not per turn).
void addRoundEnergy(std::vector<CellRun>& group, const SweepState& s)
{
    if (!s.power || !s.power->sampler().haveRails())
        return;
    const PowerSampler& sampler = s.power->sampler();
    int64_t lastEnd = 0;
    for (const CellRun& c : group)
        if (c.turnWindow.second > 0)
            lastEnd = std::max(lastEnd, c.turnWindow.second);
    const int64_t waitUntil =
        monotonicNs() + 4 * std::max<int64_t>(sampler.updatePeriodNs(), 50'000'000);
    while (sampler.latestNs() < lastEnd && monotonicNs() < waitUntil)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    for (CellRun& c : group) {
        if (c.turnWindow.second <= 0)
            continue;
        const EnergyWindow w = sampler.energy(c.turnWindow.first, c.turnWindow.second);
        c.energyCovered = c.energyCovered && w.covered;
        c.energyJ += w.joules;
        c.energyNs += c.turnWindow.second - c.turnWindow.first;
        c.turnWindow = {0, 0};
    }
}

void finishFigures(CellRun& c, const SweepState& s, const ModelPlan& m)
{
    CellFigures& f = c.result.figures;
    f.parameters = m.parameters;
    f.macs = m.macs;
    fillLatencyFigures(c.latencies, c.result.key.batch, f);
    c.result.latencyNs = c.latencies;
    const double runs = static_cast<double>(c.latencies.size());
    if (c.totals.wallNs > 0) {
        f.wallThroughputIps =
            runs * c.result.key.batch * 1e9 / static_cast<double>(c.totals.wallNs);
        f.cpuUtilisation =
            static_cast<double>(c.totals.cpuNs) / static_cast<double>(c.totals.wallNs);
    }
    if (runs > 0)
        f.cpuMsPerInference = static_cast<double>(c.totals.cpuNs) / 1e6 / runs;
    if (s.power && s.power->sampler().haveRails() && c.energyCovered && c.energyNs > 0 &&
        runs > 0) {
        f.powerW = c.energyJ / (static_cast<double>(c.energyNs) * 1e-9);
        f.energyMj = c.energyJ * 1e3 / runs;
        f.inferencesPerJ = runs / c.energyJ;
        if (std::isfinite(s.idlePowerW)) {
            // Power at idle level to the last few bits (a constant rail) is no dynamic energy,
            // not a rounding residue of 1e-16 mJ.
            double above = f.powerW - s.idlePowerW;
            if (std::fabs(above) <= 1e-9 * std::max(f.powerW, s.idlePowerW))
                above = 0.0;
            f.dynamicEnergyMj = above * static_cast<double>(c.energyNs) * 1e-9 * 1e3 / runs;
        }
    }
    c.result.ok = true;
}

// Agreement of each cell's probe output with the baseline cell's of the same group.
void addAgreement(std::vector<CellRun>& group, const std::string& baseline)
{
    auto base = std::find_if(group.begin(), group.end(),
        [&](const CellRun& c) { return c.result.key.engine == baseline && c.result.ok; });
    if (base == group.end() || base->probeClasses == 0)
        return;
    for (CellRun& c : group) {
        if (!c.result.ok || c.probeClasses != base->probeClasses)
            continue;
        OutputAgreement a;
        a.classes = c.probeClasses;
        for (int r = 0; r < c.result.key.batch; ++r)
            accumulateAgreement(a, base->probe.data() + static_cast<size_t>(r) * a.classes,
                c.probe.data() + static_cast<size_t>(r) * a.classes);
        c.result.figures.agreementRelError = a.relativeError();
        if (a.hasTop1())
            c.result.figures.agreementTop1 = a.top1Agreement();
    }
}

// Runs per turn for each round: `iterations` split as evenly as the rounds allow.
int64_t runsInRound(const Study& study, int round)
{
    const int64_t base = study.iterations / study.rounds;
    return base + (round < study.iterations % study.rounds ? 1 : 0);
}

// One group (model, batch, threads): every engine built, warmed up, then the timed turns in
// rounds. Returns false when a stop signal cut it short (its cells are then not recorded).
bool runGroup(SweepState& s, SignalGuard& signals, const ModelPlan& m, const InputPool& pool,
    int batch, int threads)
{
    std::vector<CellRun> group;
    for (const std::string& spec : s.study.engines) {
        CellKey key {m.stem, spec, batch, threads};
        if (isDone(s, key))
            continue;
        CellRun c;
        c.result.key = key;
        c.result.modelPath = m.path;
        EngineOptions base;
        base.cacheDir = s.study.cacheDir;
        base.batch = batch;
        base.threads = threads;
        auto parsed = parseEngineSpec(spec, base);
        c.options = parsed ? parsed.value() : base;
        group.push_back(std::move(c));
    }
    if (group.empty())
        return true;
    std::printf(
        "%s, batch %d, threads %d: %zu engine(s)\n", m.stem.c_str(), batch, threads, group.size());
    std::fflush(stdout);
    signals.setServing(false);

    const size_t stride = static_cast<size_t>(batch) * pool.sampleElements;
    const size_t windows = std::max<size_t>(1, pool.count / static_cast<size_t>(batch));
    for (CellRun& c : group) {
        if (m.fixedBatch > 0 && m.fixedBatch != batch) {
            c.fail(
                Status::invalid("the model's batch is fixed at " + std::to_string(m.fixedBatch)));
            continue;
        }
        resetPeakRss();
        const double rss0 = processMemory().rssMb;
        const double heap0 = heapInUseMb();
        const double avail0 = memAvailableMb();
        try {
            Status st = buildCell(c, m);
            if (st)
                st = warmUpCell(c, m, pool, s.study.warmup);
            if (!st) {
                c.fail(st);
                continue;
            }
        } catch (const std::bad_alloc&) {
            c.fail(Status::runtime("out of memory"));
            continue;
        }
        c.result.figures.rssEngineMb = processMemory().rssMb - rss0;
        c.result.figures.heapEngineMb = heapInUseMb() - heap0;
        c.result.figures.memAvailableDropMb = avail0 - memAvailableMb();
        c.latencies.reserve(static_cast<size_t>(s.study.iterations) + 16);
        if (signals.wait(0) != 0) {
            s.interrupted = true;
            return false;
        }
    }
    // While engines build (minutes, for TensorRT), a second Ctrl-C ends the process at once;
    // between turns it is taken as the first is.
    signals.setServing(true);

    const bool timed = s.study.durationS > 0;
    for (int round = 0; round < s.study.rounds; ++round) {
        for (CellRun& c : group) {
            if (!c.session)
                continue;
            TensorView view = inputView(m, pool, batch);
            const int64_t until = timed
                ? monotonicNs() + static_cast<int64_t>(s.study.durationS * 1e9 / s.study.rounds)
                : 0;
            const int64_t runs = timed ? INT64_MAX : runsInRound(s.study, round);
            Status st = runTimedTurn(*c.session, view, pool.data.data(), windows, stride, runs,
                until, c.latencies, c.totals, [&signals] { return signals.wait(0) != 0; });
            if (!st) {
                c.fail(st);
                continue;
            }
            c.turnWindow = {c.totals.startNs, c.totals.endNs};
            if (c.totals.stopped || signals.wait(0) != 0) {
                s.interrupted = true;
                return false;
            }
        }
        addRoundEnergy(group, s);
    }
    for (CellRun& c : group) {
        c.result.figures.rssPeakMb = processMemory().peakMb;
        if (c.session)
            finishFigures(c, s, m);
    }
    addAgreement(group, s.study.baseline);
    for (CellRun& c : group) {
        const CellFigures& f = c.result.figures;
        if (c.result.ok)
            std::printf("  %-36s p50 %9.3f ms  p99 %9.3f ms  %9.1f images/s%s\n",
                c.result.key.engine.c_str(), f.latencyP50Ms, f.latencyP99Ms, f.throughputIps,
                f.latencyCov > kUnsteadyCov ? "  unsteady: CoV over 0.3" : "");
        else
            std::printf(
                "  %-36s failed: %s\n", c.result.key.engine.c_str(), c.result.error.c_str());
        s.cells.push_back(c.result);
        if (s.onCell)
            s.onCell(c.result);
    }
    std::fflush(stdout);
    return true;
}

// The clocks the board ran at, in MHz (the fastest CPU core; the GPU; the EMC where readable), as
// `report` shows beside each device: a power mode is its clocks.
nlohmann::json clocksJson(const BoardStateSample& state)
{
    nlohmann::json clocks = nlohmann::json::object();
    int64_t cpuKHz = 0;
    for (int i = 0; i < state.cpuCount && i < kMaxCpus; ++i)
        cpuKHz = std::max(cpuKHz, state.cpuFreqKHz[static_cast<size_t>(i)]);
    if (cpuKHz > 0)
        clocks["cpu_mhz"] = static_cast<double>(cpuKHz) / 1e3;
    if (state.haveGpu && state.gpuFreqHz > 0)
        clocks["gpu_mhz"] = static_cast<double>(state.gpuFreqHz) / 1e6;
    if (state.emcHz > 0)
        clocks["emc_mhz"] = static_cast<double>(state.emcHz) / 1e6;
    return clocks;
}

nlohmann::json sweepDocument(const SweepState& s, const RunContext& ctx, const BoardIdentity& board)
{
    nlohmann::json cells = nlohmann::json::array();
    for (const CellResult& c : s.cells)
        cells.push_back(cellJson(c));
    nlohmann::json columns = nlohmann::json::array();
    for (const SweepColumn& c : sweepColumns())
        columns.push_back({{"name", c.name}, {"unit", c.unit}, {"description", c.description}});
    nlohmann::json speedup = nlohmann::json::array(), scaling = nlohmann::json::array(),
                   best = nlohmann::json::array();
    for (const SpeedupRow& r : speedupTable(s.cells, s.study.baseline))
        speedup.push_back({{"model", r.model}, {"engine", r.engine}, {"baseline", r.baseline},
            {"batch", r.batch}, {"threads", r.threads}, {"baseline_p50_ms", r.baselineP50Ms},
            {"engine_p50_ms", r.engineP50Ms}, {"speedup", r.speedup},
            {"parameters", numberOrNull(r.parameters)}, {"macs", numberOrNull(r.macs)}});
    for (const ScalingRow& r : scalingTable(s.cells, s.study.baseline))
        scaling.push_back({{"model", r.model}, {"engine", r.engine}, {"threads", r.threads},
            {"batch", r.batch}, {"throughput_ips", r.throughputIps}, {"rtr", r.rtr}, {"ase", r.ase},
            {"bsr", numberOrNull(r.bsr)}});
    for (const BestRow& r : bestUnderBudget(s.cells, s.study.latencyBudgetMs))
        best.push_back({{"model", r.model}, {"engine", r.engine}, {"batch", r.batch},
            {"threads", r.threads}, {"latency_p99_ms", r.latencyP99Ms},
            {"throughput_ips", r.throughputIps}, {"budget_ms", r.budgetMs}});
    nlohmann::json study = studyJson(s.study);
    study["text"] = s.study.text;
    // Power read from another tree (a fixture board, a copy of a board's /sys) describes that
    // board, not this host: the context says so beside the host's own facts.
    const std::string root = s.study.sysfsRoot.empty() ? "/" : s.study.sysfsRoot;
    const std::string boardText = board.describe() +
        (root == "/" ? "" : " (read from the tree at " + root + ", not this machine's /sys)");
    nlohmann::json context = {{"host", ctx.host}, {"os", ctx.os}, {"kernel", ctx.kernel},
        {"machine", ctx.machine}, {"cpu", ctx.cpu}, {"cores", ctx.cores}, {"board", boardText},
        {"sysfs_root", root}, {"jetagent", ctx.jetagentVersion}, {"build_type", ctx.buildType},
        {"compiler", ctx.compiler}, {"opencv", ctx.opencvVersion}, {"started_utc", ctx.startedUtc}};
    for (const BackendInfo& b : listBackends())
        if (b.available)
            context["backends"][b.name] = b.details;
    if (s.power) {
        const PowerSetup& p = s.power->setup();
        context["power_mode"] =
            p.powerMode.name.empty() ? nlohmann::json() : nlohmann::json(p.powerMode.name);
        context["power_total_rail"] = p.totalName;
        BoardStateSample state;
        if (s.power->sampler().latestState(state))
            context["clocks"] = clocksJson(state);
    }
    if (!board.model.empty())
        context["module"] = board.model; // what `report` labels a device by
    return {{"format", "jetagent-sweep"}, {"format_version", 1},
        {"jetagent_version", ctx.jetagentVersion}, {"study", study}, {"context", context},
        {"idle_power_w", numberOrNull(s.idlePowerW)}, {"interrupted", s.interrupted},
        {"columns", columns}, {"cells", cells},
        {"tables", {{"speedup", speedup}, {"scaling", scaling}, {"best", best}}}};
}

Status writeCsv(const SweepState& s)
{
    return writeFileAtomically(outPath(s, kCsvName), cellsCsv(s.cells));
}

// Everything but the CSV (written after every group), from the cells done.
Status writeReports(const SweepState& s, const std::string& chartJs, const RunContext& ctx,
    const BoardIdentity& board)
{
    const nlohmann::json doc = sweepDocument(s, ctx, board);
    if (Status st = writeFileAtomically(outPath(s, "sweep.json"), jsonText(doc, 2) + "\n"); !st)
        return st;
    if (Status st = writeFileAtomically(outPath(s, "sweep.md"), sweepMarkdown(doc)); !st)
        return st;
    auto js = chartJsSource(chartJs);
    if (!js)
        return js.status().withContext("the HTML report (the CSV, JSON and Markdown are written)");
    return writeFileAtomically(outPath(s, "report.html"), sweepHtml(doc, js.value()));
}

Status measureIdlePower(SweepState& s)
{
    if (s.study.sysfsRoot.empty())
        return Status();
    PowerMonitorOptions po;
    po.sysfsRoot = s.study.sysfsRoot;
    po.board = s.study.board;
    auto monitor = PowerMonitor::open(po);
    if (!monitor)
        return monitor.status().withContext("power");
    s.power = std::move(monitor).value();
    if (!s.power->sampler().haveRails()) {
        std::printf("power: no rails under %s; no energy figures\n", s.study.sysfsRoot.c_str());
        return Status();
    }
    if (Status st = s.power->sampler().start(); !st)
        return st.withContext("power");
    if (s.study.idleSeconds <= 0)
        return Status();
    std::printf("power: measuring idle power for %.1f s\n", s.study.idleSeconds);
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::milliseconds(200)); // the first samples
    const int64_t t0 = monotonicNs();
    std::this_thread::sleep_for(
        std::chrono::milliseconds(static_cast<int64_t>(s.study.idleSeconds * 1000)));
    const int64_t t1 = monotonicNs();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const EnergyWindow w = s.power->sampler().energy(t0, t1);
    if (w.covered)
        s.idlePowerW = w.joules / nsToS(t1 - t0);
    return Status();
}

Expected<std::vector<std::string>> readLabels(const std::string& path)
{
    std::vector<std::string> labels;
    if (path.empty())
        return labels;
    std::string text;
    if (Status s = readRegularFile(path, "labels file " + path, 16 << 20, text); !s)
        return s;
    for (std::string& line : splitLines(text))
        labels.push_back(trimSpace(line));
    return labels;
}

} // namespace

Status runSweep(const SweepOptions& options)
{
    if (options.out.empty())
        return Status::invalid("no output directory (-o, --out DIR)");
    if (!options.promTextfile.empty())
        if (Status st = checkPromTextfileDir(options.promTextfile); !st)
            return st;
    auto study = studyOfOptions(options);
    if (!study)
        return study.status();
    SweepState s;
    s.study = std::move(study).value();
    s.out = options.out;
    s.onCell = options.onCell;
    if (s.study.cacheDir.empty())
        s.study.cacheDir = outPath(s, "cache");
    auto labels = readLabels(s.study.labels);
    if (!labels)
        return labels.status();
    if (Status st = prepareOutDir(s, options.resume); !st)
        return st;
    if (options.resume)
        if (Status st = loadDoneCells(s); !st)
            return st;
    const BoardIdentity board =
        detectBoard(SysfsRoot(s.study.sysfsRoot.empty() ? "/" : s.study.sysfsRoot));
    // The host's own facts (CPU, cores, OS) even when the board is read from another tree.
    const RunContext ctx = collectRunContext(s.study.sysfsRoot.empty() || s.study.sysfsRoot == "/"
            ? board
            : detectBoard(SysfsRoot("/")));
    if (Status st = measureIdlePower(s); !st)
        return st;
    if (options.onIdleMeasured && s.power)
        options.onIdleMeasured(s.idlePowerW);

    for (const std::string& left : s.study.skipped)
        std::printf("left out (optional, not available here): %s\n", left.c_str());
    SignalGuard signals(true);
    int maxBatch = *std::max_element(s.study.batches.begin(), s.study.batches.end());
    for (const std::string& path : s.study.models) {
        if (s.interrupted)
            break;
        auto plan = planModel(path);
        Expected<InputPool> pool = Status::invalid("no inputs");
        if (plan)
            pool = s.study.inputs == "random"
                ? Expected<InputPool>(randomInputs(plan.value(), maxBatch))
                : sourceInputs(plan.value(), s.study, labels.value());
        if (!plan || !pool)
            std::printf("%s: cannot be run (%s); its cells are recorded as failed\n", path.c_str(),
                (plan ? pool.status() : plan.status()).message().c_str());
        for (int batch : s.study.batches)
            for (int threads : s.study.threads) {
                if (s.interrupted)
                    break;
                if (!plan || !pool) {
                    // The model cannot be run at all: each of its cells says why.
                    const Status why = plan ? pool.status() : plan.status();
                    for (const std::string& spec : s.study.engines) {
                        CellResult c;
                        c.key = {fs::path(path).stem().string(), spec, batch, threads};
                        c.modelPath = path;
                        c.error = why.message();
                        if (!isDone(s, c.key))
                            s.cells.push_back(c);
                    }
                    continue;
                }
                if (!runGroup(s, signals, plan.value(), pool.value(), batch, threads))
                    break;
                if (Status st = writeCsv(s); !st)
                    return st;
            }
    }
    if (Status st = writeCsv(s); !st)
        return st;
    if (s.power)
        s.power->sampler().stop();
    Status reports = writeReports(s, options.chartJs, ctx, board);
    if (reports.ok() && !options.promTextfile.empty())
        reports =
            writeSweepTextfile(options.promTextfile, s.study.name, ctx.jetagentVersion, s.cells)
                .withContext("--prom-textfile");
    const bool anyOk =
        std::any_of(s.cells.begin(), s.cells.end(), [](const CellResult& c) { return c.ok; });
    if (reports.ok() && !s.cells.empty() && !anyOk)
        reports =
            Status::runtime("every cell failed (their errors are in " + outPath(s, kCsvName) + ")");
    std::printf("%s: %zu cell(s), %zu failed%s\n", s.out.c_str(), s.cells.size(),
        static_cast<size_t>(std::count_if(
            s.cells.begin(), s.cells.end(), [](const CellResult& c) { return !c.ok; })),
        s.interrupted ? "; interrupted (--resume continues)" : "");
    return reports;
}

} // namespace jetagent
