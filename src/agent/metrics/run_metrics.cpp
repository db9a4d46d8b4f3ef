// The run's figures as Prometheus metric families.
#include "metrics/run_metrics.h"

#include <algorithm>
#include <cstdlib>

#include "jetagent/base/format.h"
#include "jetagent/base/plugin.h"
#include "jetagent/power/sampler.h"

namespace jetagent {

namespace {

constexpr double kNsPerS = 1e9;

// A float reading as the shortest decimal that reads back as it (1.3 W, not 1.2999999523).
double readingOf(float value)
{
    std::string text;
    for (int precision = 1; precision <= 9; ++precision) {
        text = formatText("%.*g", precision, static_cast<double>(value));
        if (std::strtof(text.c_str(), nullptr) == value)
            break;
    }
    return std::strtod(text.c_str(), nullptr);
}

} // namespace

const char* const kLatencyHelp =
    "Stage latency of each successful frame in the steady state; the cold-start frame (the first "
    "inference) is left out, as in the run's summary. Failed frames have none.";

namespace {

MetricSample histogramOf(const StageBuckets& buckets, LatencyStage stage, MetricLabels labels)
{
    MetricSample s;
    s.labels = std::move(labels);
    const std::vector<int64_t>& bounds = buckets.bounds();
    const std::vector<uint64_t>& counts = buckets.counts(stage);
    uint64_t running = 0;
    s.bounds.reserve(bounds.size());
    s.cumulative.reserve(counts.size());
    for (size_t i = 0; i < counts.size(); ++i) {
        running += counts[i];
        if (i < bounds.size())
            s.bounds.push_back(static_cast<double>(bounds[i]) / kNsPerS);
        s.cumulative.push_back(running);
    }
    s.sum = static_cast<double>(buckets.sumNs(stage)) / kNsPerS;
    return s;
}

std::vector<TaskStreamFigures> streamsOf(const TaskStats& stats, size_t singleStream)
{
    std::vector<TaskStreamFigures> out;
    if (stats.streamStats.empty()) {
        out.push_back(
            {singleStream, stats.frames, stats.failed, stats.deadlineMisses, &stats.buckets});
        return out;
    }
    for (size_t k = 0; k < stats.streamStats.size() && k < stats.streamIds.size(); ++k) {
        const StreamStats& s = stats.streamStats[k];
        out.push_back({stats.streamIds[k], s.frames, s.failed, s.deadlineMisses, &s.buckets});
    }
    return out;
}

} // namespace

void addTaskStreamMetrics(MetricSet& set, const TaskMetricsInput& input, const TaskStreamFigures& f)
{
    MetricFamily& latency =
        set.family(kLatencyFamily, MetricType::Histogram, "seconds", kLatencyHelp);
    const std::string stream = f.runStream < input.streamNames.size()
        ? input.streamNames[f.runStream]
        : std::to_string(f.runStream);
    const MetricLabels labels = {{"task", input.task}, {"stream", stream}};
    // No bounds: the statistics were moved out to the summary as the run ended (the server
    // detaches a moment later); the histogram is left out rather than reset.
    if (f.buckets && !f.buckets->bounds().empty())
        for (size_t st = 0; st < kLatencyStages; ++st) {
            const auto stage = static_cast<LatencyStage>(st);
            MetricLabels withStage = labels;
            withStage.emplace_back("stage", latencyStageName(stage));
            latency.samples.push_back(histogramOf(*f.buckets, stage, std::move(withStage)));
        }
    set.add("jetagent_frames_processed", MetricType::Counter, "",
        "Frames the task processed, failed ones and the cold start included (the summary's "
        "frames.processed).",
        labels, static_cast<double>(f.frames));
    set.add("jetagent_frames_failed", MetricType::Counter, "",
        "Frames the task could not process (a failed inference, non-finite scores).", labels,
        static_cast<double>(f.failed));
    if (input.dropped)
        set.add("jetagent_frames_dropped", MetricType::Counter, "",
            "Frames the task's queue of the stream replaced by newer ones (live sources).", labels,
            static_cast<double>(input.dropped(f.runStream)));
    set.add("jetagent_deadline_misses", MetricType::Counter, "",
        "Successful frames whose end-to-end latency exceeded the task's deadline.", labels,
        static_cast<double>(f.deadlineMisses));
    if (input.queueDepth)
        set.add("jetagent_queue_depth", MetricType::Gauge, "",
            "Frames waiting in the task's queue of the stream.", labels,
            input.queueDepth(f.runStream));
    if (input.fps)
        set.add("jetagent_frames_per_second", MetricType::Gauge, "",
            "Results per second over the last second.", labels, input.fps(f.runStream));
}

MetricSample latencyHistogramOf(
    const std::vector<int64_t>& valuesNs, int64_t deadlineNs, MetricLabels labels)
{
    StageBuckets buckets(latencyBucketBounds(deadlineNs));
    for (int64_t v : valuesNs)
        buckets.add({0, 0, 0, v, 0});
    return histogramOf(buckets, LatencyStage::Inference, std::move(labels));
}

void addDeadlineMetric(MetricSet& set, const std::string& task, int64_t deadlineNs)
{
    if (deadlineNs > 0)
        set.add("jetagent_deadline_seconds", MetricType::Gauge, "seconds",
            "The task's end-to-end deadline (one of the latency histogram's bucket bounds).",
            {{"task", task}}, static_cast<double>(deadlineNs) / kNsPerS);
}

void addTaskMetrics(MetricSet& set, const TaskStats& stats, const TaskMetricsInput& input)
{
    for (const TaskStreamFigures& f : streamsOf(stats, input.singleStream))
        addTaskStreamMetrics(set, input, f);
    if (input.deadlineJudged)
        addDeadlineMetric(set, input.task, stats.deadlineNs());
}

void addBuildInfo(MetricSet& set, const BuildIdentity& build)
{
    set.add("jetagent_build", MetricType::Info, "", "The jetagent build and its engine backends.",
        {{"version", build.version}, {"engines", build.engines}}, 1.0);
}

std::string presentEngineBackends()
{
    // The registry's engine plugins and the backend names the config uses for them.
    static const std::pair<const char*, const char*> kEngines[] = {
        {"xnnpack", "xnnpack"}, {"opencv-dnn", "opencv"}, {"tensorrt", "tensorrt"}};
    std::string out;
    for (const PluginPresence& p : pluginPresence())
        for (const auto& [plugin, backend] : kEngines)
            if (p.present && p.plugin.name == std::string(plugin))
                out += (out.empty() ? "" : ",") + std::string(backend);
    return out;
}

void addBoardInfo(MetricSet& set, const BoardMetricsIdentity& board)
{
    set.add("jetagent_board", MetricType::Info, "",
        "The board: its module, L4T release and nvpmodel power mode (empty where unknown).",
        {{"module", board.module}, {"l4t", board.l4t}, {"power_mode", board.powerMode}}, 1.0);
}

void addModelInfo(MetricSet& set, const ModelIdentity& model)
{
    set.add("jetagent_model", MetricType::Info, "",
        "Each task's model (file name and SHA-256), engine backend and precision.",
        {{"task", model.task}, {"model", model.model}, {"sha256", model.sha256},
            {"backend", model.backend}, {"precision", model.precision}},
        1.0);
}

void addPowerMetrics(MetricSet& set, const PowerSampler& sampler)
{
    PowerSample sample;
    if (sampler.haveRails() && sampler.latest(sample)) {
        const char* help = "The rail's power in the sampler's newest sample.";
        for (size_t r = 0; r < sampler.rails().size() && r < sample.railW.size(); ++r)
            if ((sample.onlineMask & (1u << r)) != 0)
                set.add("jetagent_power_watts", MetricType::Gauge, "watts", help,
                    {{"rail", sampler.rails()[r].name}}, readingOf(sample.railW[r]));
        if ((sample.onlineMask & kTotalOnlineBit) != 0)
            set.add("jetagent_power_watts", MetricType::Gauge, "watts", help, {{"rail", "total"}},
                readingOf(sample.totalW));
        const PowerRunStats run = sampler.runStats();
        const char* energyHelp =
            "Energy the rail delivered since the sampler started (\"total\": the board's input).";
        for (const RailRunStats& rail : run.rails)
            set.add("jetagent_energy_joules", MetricType::Counter, "joules", energyHelp,
                {{"rail", rail.name}}, rail.energyJ);
        set.add("jetagent_energy_joules", MetricType::Counter, "joules", energyHelp,
            {{"rail", "total"}}, run.total.energyJ);
    }
    BoardStateSample state;
    const BoardStateReader* reader = sampler.stateReader();
    if (!reader || !sampler.latestState(state))
        return;
    const auto& zones = reader->zones();
    for (size_t z = 0; z < zones.size() && z < state.zones.size(); ++z)
        if (zones[z].shown && state.zones[z].online)
            set.add("jetagent_temperature_celsius", MetricType::Gauge, "celsius",
                "The thermal zone's temperature in the newest state sample.",
                {{"zone", zones[z].type}}, state.zones[z].celsius);
    const char* clockHelp = "Current clock: cpu (the fastest online core), gpu, emc.";
    int64_t cpuKHz = -1;
    for (int c = 0; c < state.cpuCount && c < kMaxCpus; ++c)
        cpuKHz = std::max(cpuKHz, state.cpuFreqKHz[static_cast<size_t>(c)]);
    if (cpuKHz > 0)
        set.add("jetagent_clock_hertz", MetricType::Gauge, "hertz", clockHelp, {{"clock", "cpu"}},
            static_cast<double>(cpuKHz) * 1e3);
    if (state.haveGpu && state.gpuFreqHz > 0)
        set.add("jetagent_clock_hertz", MetricType::Gauge, "hertz", clockHelp, {{"clock", "gpu"}},
            static_cast<double>(state.gpuFreqHz));
    if (state.emcHz > 0)
        set.add("jetagent_clock_hertz", MetricType::Gauge, "hertz", clockHelp, {{"clock", "emc"}},
            static_cast<double>(state.emcHz));
    BoardStateSample previous;
    if (reader->haveThrottleCounters() && sampler.stateAt(state.timeNs - 1, previous)) {
        bool rose = false;
        for (size_t i = 0; i < state.throttleEvents.size(); ++i)
            rose = rose || state.throttleEvents[i] > previous.throttleEvents[i];
        set.add("jetagent_throttled", MetricType::Gauge, "",
            "1 while the board reports throttling (its over-current event counts rose between the "
            "two newest state samples).",
            {}, rose ? 1.0 : 0.0);
    }
}

} // namespace jetagent
