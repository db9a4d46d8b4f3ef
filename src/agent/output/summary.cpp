// The end-of-run summary as a JSON document (summary.json); summary_text.cpp prints it.
#include "output/summary.h"

#include <cmath>

#include <spdlog/fmt/fmt.h>

#include "config/config.h"
#include "jetagent/base/clock.h"
#include "jetagent/hal/gstreamer_source.h"
#include "run/latency_stats.h"
#include "service/gpio_signals.h"

namespace jetagent {

namespace {

using nlohmann::json;

const char* const kUnpacedDeadline =
    "unpaced run (pacing none): the source reads frames ahead into a FIFO as fast as it can, so "
    "no frame arrives at a time a deadline could count from";

double round4(double v)
{
    return std::round(v * 1e4) / 1e4;
}

json distributionJson(const SampleSeries& series)
{
    const Distribution d = summarize(series);
    json j;
    j["n"] = d.count;
    if (d.count == 0)
        return j;
    if (d.kept < d.count)
        j["percentiles_within"] = SampleSeries::kRelativeError; // from the histogram, not exact
    j["min"] = round4(d.min);
    j["mean"] = round4(d.mean);
    j["p50"] = round4(d.p50);
    j["p90"] = round4(d.p90);
    j["p95"] = round4(d.p95);
    j["p99"] = round4(d.p99);
    j["p99.9"] = round4(d.p999);
    j["max"] = round4(d.max);
    j["stddev"] = round4(d.stddev);
    j["cv"] = round4(d.cv);
    return j;
}

// The task's engines: backend, model, and what each was built as.
json enginesJson(const Task& task)
{
    json engines = json::array();
    for (const EngineDescription& e : task.engines()) {
        engines.push_back({{"backend", e.backend}, {"version", e.backendVersion},
            {"target", e.target}, {"device", deviceName(e.options.device)},
            {"precision", precisionName(e.options.precision)}, {"batch", e.options.batch},
            {"threads", e.options.threads}, {"fusion", e.options.fusion},
            {"build_ms", round4(nsToMs(e.buildNs))},
            {"model",
                {{"path", e.modelPath}, {"sha256", e.modelSha256}, {"bytes", e.modelBytes}}}});
        json& last = engines.back();
        if (e.options.dynamicBatch())
            last["batch_profile"] = {
                e.options.profileMin(), e.options.batch, e.options.profileMax()};
        if (!e.accelerator.empty())
            last["accelerator"] = e.accelerator;
        if (!e.planKey.empty())
            last["plan"] = {{"key", e.planKey}, {"from_cache", e.planFromCache}};
        if (!e.ioMemory.empty())
            last["io_memory"] = e.ioMemory;
        if (!e.lowered.empty())
            last["lowered"] = e.lowered;
    }
    return engines;
}

// What the frame log wrote, lost and removed, and where.
json logJson(const TaskLog& taskLog)
{
    json log = {{"lines_written", taskLog.written()}, {"lines_lost", taskLog.lost()},
        {"lines_dropped_disk", taskLog.linesDroppedDisk()}, {"write_errors", taskLog.writeErrors()},
        {"segments", taskLog.segmentsWritten()}, {"segments_removed", taskLog.segmentsRemoved()},
        {"bytes_written", taskLog.bytesWritten()}};
    if (!taskLog.csvPath().empty())
        log["csv"] = taskLog.csvPath();
    if (!taskLog.jsonlPath().empty())
        log["jsonl"] = taskLog.jsonlPath();
    return log;
}

json coldStartJson(const FrameRecord& c)
{
    json j = {{"frame", c.frameId}, {"e2e_ms", round4(nsToMs(c.times.endToEndNs))},
        {"wait_ms", round4(nsToMs(c.times.waitNs))},
        {"preprocess_ms", round4(nsToMs(c.times.preprocessNs))},
        {"inference_ms", round4(nsToMs(c.times.inferenceNs))},
        {"postprocess_ms", round4(nsToMs(c.times.postprocessNs))}};
    if (c.unpaced)
        j["queue_ms"] = round4(nsToMs(c.times.queueNs));
    return j;
}

json latencyJson(const TaskStats& s, bool unpaced)
{
    json j = {{"end_to_end", distributionJson(s.endToEnd)}, {"wait", distributionJson(s.wait)},
        {"preprocess", distributionJson(s.preprocess)},
        {"inference", distributionJson(s.inference)}, {"compute", distributionJson(s.compute)},
        {"postprocess", distributionJson(s.postprocess)}, {"service", distributionJson(s.service)},
        {"interval", distributionJson(s.interval)}};
    // Unpaced: the time in the FIFO, kept out of end to end (see FrameRecord::unpaced).
    if (unpaced)
        j["queue"] = distributionJson(s.queue);
    return j;
}

// Results per second between the first and the last result (batches finish together, so this is
// frames after the first batch over the time they took).
// p99 / p50 of the inference stage and of end to end: how much the slow tail stands out (1 is a
// flat distribution); null before there are samples.
json stabilityJson(const TaskStats& s)
{
    auto ratio = [](const SampleSeries& series) {
        if (series.count() == 0)
            return json(nullptr);
        const double p50 = static_cast<double>(series.percentile(50));
        return p50 > 0 ? json(round4(static_cast<double>(series.percentile(99)) / p50))
                       : json(nullptr);
    };
    return {{"inference_p99_over_p50", ratio(s.inference)},
        {"end_to_end_p99_over_p50", ratio(s.endToEnd)}};
}

double throughputFps(const TaskStats& s)
{
    const int64_t span = s.lastDoneNs - s.firstDoneNs;
    const uint64_t firstBatch = s.haveColdStart ? static_cast<uint64_t>(s.coldStart.batch) : 1;
    return span > 0 && s.frames > firstBatch
        ? round4(static_cast<double>(s.frames - firstBatch) / nsToS(span))
        : 0.0;
}

// The deadline and its misses; null without a deadline, and misses unjudged in unpaced runs.
json deadlineJson(const TaskStats& s, const TaskConfig& config, bool unpaced)
{
    if (s.deadlineNs() <= 0)
        return nullptr;
    json j = {{"ms", round4(nsToMs(s.deadlineNs()))},
        {"from", config.deadlineMs > 0 ? "config" : "source frame period"}, {"judged", !unpaced},
        {"frames_judged", s.deadlineJudged}, {"misses", s.deadlineMisses},
        {"miss_rate",
            s.deadlineJudged ? round4(static_cast<double>(s.deadlineMisses) /
                                   static_cast<double>(s.deadlineJudged))
                             : 0.0}};
    if (unpaced) {
        j["misses"] = nullptr;
        j["miss_rate"] = nullptr;
        j["why_not_judged"] = kUnpacedDeadline;
    }
    return j;
}

// Action tasks: the per-frame figures are each frame's cost (preprocessing, and the backbone in
// streaming mode; the clip inference on the frames that end a clip); these are the clips'.
json clipsJson(const TaskStats& s)
{
    json a = {{"results", s.results}, {"clips_with_gaps", s.clipsWithGaps},
        {"result_latency_ms", distributionJson(s.resultLatency)},
        {"clip_inference_ms", distributionJson(s.clipInference)}};
    if (s.haveColdResult) {
        const FrameRecord& c = s.coldResult;
        a["cold_result"] = {{"frame", c.frameId},
            {"result_latency_ms", round4(nsToMs(c.times.resultLatencyNs))},
            {"clip_inference_ms", round4(nsToMs(c.clipInferenceNs))}};
    }
    return a;
}

json slowestJson(const TaskStats& s, const RunOutcome& run)
{
    json slowest = json::array();
    for (size_t i = 0; i < s.slowCount; ++i) {
        slowest.push_back({{"frame", s.slowest[i].frameId},
            {"at_s", round4(nsToS(s.slowest[i].capturedNs - run.startNs))},
            {"e2e_ms", round4(nsToMs(s.slowest[i].endToEndNs))}});
        if (run.streams.size() > 1 && s.slowest[i].stream < run.streams.size())
            slowest.back()["stream"] = run.streams[s.slowest[i].stream].name;
    }
    return slowest;
}

// What a reader of the figures should know: percentiles on few samples, frames left out.
json notesJson(const TaskOutcome& t)
{
    const TaskStats& s = *t.stats;
    json notes = json::array();
    const uint64_t n = s.endToEnd.count();
    for (double p : {90.0, 95.0, 99.0, 99.9}) {
        const int64_t need = minSamplesForPercentile(p);
        if (static_cast<int64_t>(n) < need) {
            notes.push_back(fmt::format(
                "p{:g} rests on {} steady-state samples; it needs at least {} to mean much "
                "(MLPerf LoadGen's early-stopping minimum)",
                p, n, need));
        }
    }
    if (s.endToEnd.sampled())
        notes.push_back("percentiles come from a log-linear histogram of all " + std::to_string(n) +
            " frames, each within 0.1% of the exact value (exact up to " +
            std::to_string(s.endToEnd.exactKept()) +
            " frames, logging.max_summary_samples); min, mean and max are exact");
    if (t.dropped > 0)
        notes.push_back("the worker could not keep up with the source: " +
            std::to_string(t.dropped) + " frames were replaced by newer ones before inference");
    if (t.unrecorded > 0)
        notes.push_back(std::to_string(t.unrecorded) +
            " frames were left out of the statistics: the recorder fell behind the workers by more "
            "than its queue holds (a CPU starved for seconds)");
    if (t.log && t.log->lost() > 0)
        notes.push_back(std::to_string(t.log->lost()) +
            " frame-log lines were lost because the writer fell behind (logging.queue_capacity); "
            "the "
            "statistics include them");
    if (t.log && t.log->linesDroppedDisk() > 0)
        notes.push_back(std::to_string(t.log->linesDroppedDisk()) +
            " frame-log lines were dropped because writing failed (disk full or read-only?); the "
            "statistics and energy figures include them");
    return notes;
}

// The task's energy per inference and per frame; what the figures miss goes into `notes`.
json energyJson(const TaskEnergy& e, const RunOutcome& run, json& notes)
{
    json energy = {{"rail", run.power ? run.power->totalName : ""},
        {"estimate", run.power ? run.power->totalIsEstimate : true},
        {"inference_mJ", distributionJson(e.inferenceNj)},
        {"frame_mJ", distributionJson(e.frameNj)}, {"frames_energy_J", round4(e.totalFrameJ)},
        {"uncovered_frames", e.uncovered}, {"short_windows", e.shortWindows},
        {"cold_start_inference_mJ",
            e.coldStartInferenceMj >= 0 ? json(round4(e.coldStartInferenceMj)) : json(nullptr)}};
    energy["frames_per_joule"] = e.totalFrameJ > 0
        ? json(round4(static_cast<double>(e.frames) / e.totalFrameJ))
        : json(nullptr);
    if (e.shortWindows > 0)
        notes.push_back(std::to_string(e.shortWindows) +
            " inference windows were shorter than the power sensor's update period: their "
            "energy is interpolated between readings, not measured; the frame-interval energy "
            "and the run's averages are sound");
    if (e.uncovered > 0)
        notes.push_back(std::to_string(e.uncovered) +
            " frames have no energy figure: the sampler's ring did not cover their window "
            "(power.ring_capacity)");
    return energy;
}

// A task over several streams: each stream's figures, as the task's own are defined (steady
// state, nearest rank), with its drops and its share of the energy.
json streamsJson(const TaskOutcome& t, const RunOutcome& run, bool unpaced)
{
    const TaskStats& s = *t.stats;
    json streams = json::array();
    for (size_t k = 0; k < s.streamStats.size(); ++k) {
        const StreamStats& st = s.streamStats[k];
        const size_t id = s.streamIds[k];
        json j;
        j["name"] = id < run.streams.size() ? run.streams[id].name : std::to_string(id);
        uint64_t dropped = 0, timeouts = 0;
        for (size_t i = 0; i < t.streams.size(); ++i)
            if (t.streams[i] == id) {
                dropped = i < t.streamDropped.size() ? t.streamDropped[i] : 0;
                timeouts = i < t.streamTimeouts.size() ? t.streamTimeouts[i] : 0;
            }
        j["frames"] = {{"processed", st.frames}, {"dropped", dropped}, {"failed", st.failed}};
        // The batches that waited for this stream until the timeout (or a spare frame) and went
        // without it: which camera holds the others back.
        j["batch_timeouts"] = timeouts;
        j["latency_ms"] = {
            {"end_to_end", distributionJson(st.endToEnd)}, {"wait", distributionJson(st.wait)}};
        if (t.config->type == "action")
            j["latency_ms"]["result"] = distributionJson(st.resultLatency);
        const int64_t span = st.lastDoneNs - st.firstDoneNs;
        j["throughput_fps"] = span > 0 && st.frames > 1
            ? round4(static_cast<double>(st.frames - 1) / nsToS(span))
            : 0.0;
        if (s.deadlineNs() > 0 && !unpaced)
            j["deadline"] = {{"frames_judged", st.deadlineJudged}, {"misses", st.deadlineMisses},
                {"miss_rate",
                    st.deadlineJudged ? round4(static_cast<double>(st.deadlineMisses) /
                                            static_cast<double>(st.deadlineJudged))
                                      : 0.0}};
        else
            j["deadline"] = nullptr;
        j["accuracy"] = st.scored > 0
            ? json({{"scored", st.scored}, {"correct", st.correct},
                  {"top1",
                      round4(static_cast<double>(st.correct) / static_cast<double>(st.scored))}})
            : json(nullptr);
        if (t.energy)
            j["energy"] = {{"frames_energy_J", round4(st.energyJ)},
                {"frame_mJ_mean",
                    st.energyFrames > 0
                        ? json(round4(st.energyJ * 1e3 / static_cast<double>(st.energyFrames)))
                        : json(nullptr)}};
        streams.push_back(j);
    }
    return streams;
}

// How the task's batches were gathered from its streams.
json batchingJson(const TaskOutcome& t)
{
    const BatchStats& b = t.stats->batching;
    return {{"batch_size", t.task->batchSize()}, {"timeout_ms", round4(nsToMs(t.batchTimeoutNs))},
        {"batches", b.batches}, {"frames", b.frames},
        {"mean_fill",
            b.slots > 0 ? json(round4(static_cast<double>(b.frames) / static_cast<double>(b.slots)))
                        : json(nullptr)},
        {"mean_streams_per_batch",
            b.batches > 0
                ? json(round4(static_cast<double>(b.frames) / static_cast<double>(b.batches)))
                : json(nullptr)},
        {"multi_stream_batches", b.multiStream}, {"batches_that_waited", b.waited},
        {"batches_timed_out", b.timedOut}, {"wait_ms", distributionJson(b.waitNs)},
        {"capture_skew_ms", distributionJson(b.skewNs)},
        {"energy_split", "each inference's energy is shared equally by the frames of its batch"}};
}

json taskJson(const TaskOutcome& t, const RunOutcome& run)
{
    const TaskStats& s = *t.stats;
    json j;
    j["name"] = t.task->name();
    j["type"] = t.config->type;
    j["settings"] = t.task->describe();
    j["engines"] = enginesJson(*t.task);
    j["frames"] = {{"processed", s.frames}, {"dropped", t.dropped}, {"failed", s.failed},
        {"failed_non_finite", s.failedNonFinite}};
    if (t.log)
        j["log"] = logJson(*t.log);
    if (s.haveColdStart)
        j["cold_start"] = coldStartJson(s.coldStart);
    const bool unpaced = run.config && run.config->run.pacing == Pacing::None;
    j["latency_ms"] = latencyJson(s, unpaced);
    j["latency_from"] = unpaced ? "dequeue" : "capture";
    j["throughput_fps"] = throughputFps(s);
    j["deadline"] = deadlineJson(s, *t.config, unpaced);
    if (t.config->type == "action")
        j["clips"] = clipsJson(s);
    if (s.scored > 0) {
        j["accuracy"] = {{"scored", s.scored}, {"correct", s.correct},
            {"top1", round4(static_cast<double>(s.correct) / static_cast<double>(s.scored))}};
        // Top-5 where every scored result kept five labels (postprocess.top_k >= 5).
        j["accuracy"]["top5"] = s.scoredTop5 == s.scored
            ? json(round4(static_cast<double>(s.correctTop5) / static_cast<double>(s.scored)))
            : json(nullptr);
    } else {
        j["accuracy"] = nullptr;
    }
    j["stability"] = stabilityJson(s);
    j["slowest"] = slowestJson(s, run);
    json notes = notesJson(t);
    if (t.energy)
        j["energy"] = energyJson(s.energy, run, notes);
    if (t.streams.size() > 1) {
        json names = json::array();
        for (size_t id : t.streams)
            names.push_back(id < run.streams.size() ? run.streams[id].name : std::to_string(id));
        j["streams_served"] = names;
        j["streams"] = streamsJson(t, run, unpaced);
        j["batching"] = batchingJson(t);
    }
    j["notes"] = notes;
    return j;
}

json stateJson(const BoardStateSample& s)
{
    json j;
    if (s.haveGpu)
        j["gpu"] = {{"freq_MHz", round4(static_cast<double>(s.gpuFreqHz) / 1e6)},
            {"load_percent", round4(s.gpuLoadPercent)}};
    json cpus = json::array();
    for (int i = 0; i < s.cpuCount; ++i) {
        const int64_t khz = s.cpuFreqKHz[static_cast<size_t>(i)];
        cpus.push_back(khz >= 0 ? json(round4(static_cast<double>(khz) / 1e3)) : json(nullptr));
    }
    j["cpu_freq_MHz"] = cpus;
    j["emc_MHz"] = s.emcHz >= 0 ? json(round4(static_cast<double>(s.emcHz) / 1e6)) : json(nullptr);
    if (s.fanPwm >= 0 || s.fanRpm >= 0)
        j["fan"] = {{"pwm", s.fanPwm >= 0 ? json(s.fanPwm) : json(nullptr)},
            {"rpm", s.fanRpm >= 0 ? json(s.fanRpm) : json(nullptr)}};
    return j;
}

json railJson(const RailRunStats& r)
{
    json j = {{"name", r.name}, {"average_W", round4(r.averageW)}, {"peak_W", round4(r.peakW)},
        {"energy_J", round4(r.energyJ)}, {"samples", r.samples}, {"errors", r.errors},
        {"offline", r.offline}};
    if (!r.lastError.empty())
        j["last_error"] = r.lastError;
    return j;
}

json loadSeriesJson(const LoadSeries& l)
{
    if (l.samples == 0)
        return nullptr;
    return {{"mean", round4(l.mean())}, {"peak", round4(l.peak)}, {"samples", l.samples}};
}

// What tegrastats prints beside the rails, over the run: memory peaks and mean/peak loads.
json loadJson(const LoadRunStats& l)
{
    json j;
    const auto mb = [](int64_t kb) { return round4(static_cast<double>(kb) / 1024.0); };
    if (l.haveMemory)
        j["memory"] = {{"ram_total_MB", mb(l.ramTotalKB)},
            {"ram_used_peak_MB", mb(l.ramUsedPeakKB)}, {"swap_total_MB", mb(l.swapTotalKB)},
            {"swap_used_peak_MB", mb(l.swapUsedPeakKB)}};
    else
        j["memory"] = nullptr;
    j["cpu_load_percent"] = loadSeriesJson(l.cpu);
    j["emc_load_percent"] = loadSeriesJson(l.emc);
    j["gpu_load_percent"] = loadSeriesJson(l.gpu);
    return j;
}

json powerJson(const RunOutcome& o)
{
    const PowerSetup& p = *o.power;
    const PowerRunStats& s = o.powerStats;
    json j;
    j["board"] = p.identity.describe();
    j["model"] = p.identity.model;
    j["l4t"] = p.identity.l4tRelease;
    j["jetpack"] = p.identity.jetpack > 0 ? json(p.identity.jetpack) : json(nullptr);
    j["profile"] = {
        {"id", p.board.profile.id}, {"matched", p.board.matched}, {"reason", p.board.reason}};
    j["power_mode"] = p.powerMode.id >= 0
        ? json({{"id", p.powerMode.id}, {"name", p.powerMode.name}})
        : json(nullptr);
    const double wall = nsToS(s.endNs - s.startNs);
    j["sampling"] = {{"rail_hz", o.powerOptions.railHz}, {"state_hz", o.powerOptions.stateHz},
        {"rail_samples", s.railSamples}, {"overruns", s.overruns},
        {"sampler_cpu_s", round4(s.samplerCpuS)},
        {"sampler_cpu_percent_of_core", wall > 0 ? round4(100.0 * s.samplerCpuS / wall) : 0.0}};
    if (!p.rails.empty()) {
        json total = railJson(s.total);
        total["estimate"] = s.totalIsEstimate;
        total["note"] = p.totalNote;
        j["total"] = total;
    } else {
        j["total"] = nullptr;
    }
    json rails = json::array();
    for (size_t i = 0; i < s.rails.size(); ++i) {
        json r = railJson(s.rails[i]);
        if (i < p.rails.size())
            r["device"] = p.rails[i].driver + " " + p.rails[i].device;
        rails.push_back(r);
    }
    j["rails"] = rails;
    j["missing_rails"] = p.missingRails;
    json zones = json::array();
    for (const ZoneRunStats& z : s.zones) {
        if (z.everOnline)
            zones.push_back({{"zone", z.type}, {"start_C", round4(z.startC)},
                {"end_C", round4(z.endC)}, {"peak_C", round4(z.peakC)}});
        else
            zones.push_back({{"zone", z.type}, {"offline", z.offlineReason}});
    }
    j["thermal"] = zones;
    if (s.throttleEvents[0] >= 0 || s.throttleEvents[1] >= 0 || s.throttleEvents[2] >= 0) {
        auto count = [](int64_t v) { return v >= 0 ? json(v) : json(nullptr); };
        j["throttle_events"] = {{"under_voltage", count(s.throttleEvents[0])},
            {"over_current_average", count(s.throttleEvents[1])},
            {"over_current_instantaneous", count(s.throttleEvents[2])}};
    } else {
        j["throttle_events"] = nullptr;
    }
    j["state"] = {{"start", stateJson(s.first)}, {"end", stateJson(s.last)}};
    j["load"] = loadJson(s.load);
    j["log"] = o.powerLogPath.empty()
        ? json(nullptr)
        : json({{"csv", o.powerLogPath}, {"interval_ms", o.powerLogIntervalMs},
              {"rows", o.powerLogRows}, {"rows_dropped", o.powerLogRowsDropped}});
    return j;
}

} // namespace

namespace {

// The process's CPU time over the run (every thread: capture, workers, the engine's pool,
// recorder, logs) per frame processed, the cores it kept busy, and its peak resident memory.
json processJson(const RunOutcome& o)
{
    uint64_t frames = 0;
    for (const TaskOutcome& t : o.tasks)
        frames += t.stats->frames;
    const int64_t wall = o.endNs - o.startNs;
    const bool cpu = o.processCpuNs >= 0;
    return {{"cpu_s", cpu ? json(round4(nsToS(o.processCpuNs))) : json(nullptr)},
        {"cpu_ms_per_frame",
            cpu && frames > 0 ? json(round4(nsToMs(o.processCpuNs) / static_cast<double>(frames)))
                              : json(nullptr)},
        {"cpu_cores_busy",
            cpu && wall > 0
                ? json(round4(static_cast<double>(o.processCpuNs) / static_cast<double>(wall)))
                : json(nullptr)},
        {"peak_rss_mb", std::isfinite(o.peakRssMb) ? json(round4(o.peakRssMb)) : json(nullptr)}};
}

// The process's start-up (context.startup), from its start to the first frame the run captured:
// the loading (to main), opening the source, building the tasks, the wait for the first frame once
// the pipeline asked for it, and the rest (the command line, the config, the power monitor, the
// log files). The parts add up to the whole. Null unless this was the program's first run.
json startupJson(const StartupTimes& s)
{
    if (!s.known())
        return nullptr;
    const auto ms = [](int64_t ns) { return json(round4(nsToMs(ns))); };
    const bool started = s.processStartNs >= 0;
    const bool framed = s.firstFrameNs >= 0 && s.pipelineStartNs >= 0;
    const int64_t waitNs = framed ? s.firstFrameNs - s.pipelineStartNs : 0;
    return {{"to_first_frame_ms",
                started && framed ? ms(s.firstFrameNs - s.processStartNs) : json(nullptr)},
        {"loading_ms", started ? ms(s.mainStartNs - s.processStartNs) : json(nullptr)},
        {"source_open_ms", ms(s.sourceOpenNs)}, {"engine_build_ms", ms(s.engineBuildNs)},
        {"first_frame_wait_ms", framed ? ms(waitNs) : json(nullptr)},
        {"other_ms",
            framed ? ms(s.firstFrameNs - s.mainStartNs - s.sourceOpenNs - s.engineBuildNs - waitNs)
                   : json(nullptr)},
        {"process_start_resolution_ms", started ? ms(s.processStartResolutionNs) : json(nullptr)}};
}

} // namespace

json summaryJson(const RunOutcome& o)
{
    json j;
    j["jetagent_version"] = o.context.jetagentVersion;
    j["percentile_definition"] = kPercentileDefinition;
    j["context"] = {{"host", o.context.host}, {"os", o.context.os}, {"kernel", o.context.kernel},
        {"machine", o.context.machine}, {"cpu", o.context.cpu}, {"cores", o.context.cores},
        {"opencv", o.context.opencvVersion}, {"compiler", o.context.compiler},
        {"build_type", o.context.buildType}, {"startup", startupJson(o.context.startup)}};
    // No source password reaches a summary, whoever filled the outcome.
    json overrides = json::array();
    for (const std::string& item : o.overrides)
        overrides.push_back(withoutPasswords(item));
    j["config"] = {{"path", o.config ? o.config->path : ""}, {"overrides", overrides}};
    j["source"] = {{"uri", withoutPasswords(o.source.uri)}, {"kind", o.source.kind},
        {"width", o.source.width}, {"height", o.source.height}, {"fps", round4(o.source.fps)},
        {"live", o.source.live},
        {"pacing", o.config && o.config->run.pacing == Pacing::None ? "none" : "realtime"},
        {"frames_captured", o.framesCaptured}, {"skipped_files", o.sourceStats.skippedFiles}};
    if (!o.source.detail.empty())
        j["source"]["detail"] = withoutPasswords(o.source.detail);
    j["source"]["capture_gaps"] = {{"count", o.captureGaps},
        {"threshold_s", round4(nsToS(o.captureGapThresholdNs))},
        {"total_s", round4(nsToS(o.captureGapsNs))}, {"longest_s", round4(nsToS(o.longestGapNs))},
        {"longest_ended_at_s", round4(nsToS(o.longestGapAtNs))}};
    if (o.source.live) {
        const SourceStats& st = o.sourceStats;
        j["source"]["stats"] = {{"delivered", st.delivered},
            {"dropped_by_device", st.droppedByDevice}, {"stalls", st.stalls},
            {"disconnects", st.disconnects}, {"reconnects", st.reconnects},
            {"delivered_fps", round4(st.deliveredFps())}};
    }
    if (o.streams.size() > 1) {
        j["source"]["frames_captured"] = o.streams[0].captured;
        json streams = json::array();
        for (const StreamOutcome& st : o.streams) {
            json one = {{"name", st.name}, {"uri", withoutPasswords(st.source.uri)},
                {"kind", st.source.kind}, {"width", st.source.width}, {"height", st.source.height},
                {"fps", round4(st.source.fps)}, {"live", st.source.live},
                {"frames_captured", st.captured}, {"capture_gaps", st.captureGaps},
                {"longest_gap_s", round4(nsToS(st.longestGapNs))}};
            if (!st.source.detail.empty())
                one["detail"] = withoutPasswords(st.source.detail);
            if (st.source.live)
                one["stats"] = {{"delivered", st.stats.delivered},
                    {"dropped_by_device", st.stats.droppedByDevice}, {"stalls", st.stats.stalls},
                    {"disconnects", st.stats.disconnects}, {"reconnects", st.stats.reconnects},
                    {"delivered_fps", round4(st.stats.deliveredFps())}};
            streams.push_back(one);
        }
        j["streams"] = streams;
        j["frames_captured"] = o.framesCaptured;
    }
    if (o.display.enabled)
        j["display"] = {{"window", o.display.window},
            {"output", o.display.output.empty() ? json(nullptr) : json(o.display.output)},
            {"frames_shown", o.display.shown}, {"frames_recorded", o.display.recorded},
            {"frames_skipped", o.display.skipped}, {"frames_drawn", o.display.drawn},
            {"frames_with_earlier_result", o.display.earlierResult},
            {"mosaic",
                o.display.mosaicColumns > 0
                    ? json({{"columns", o.display.mosaicColumns}, {"rows", o.display.mosaicRows},
                          {"width", o.display.mosaicWidth}, {"height", o.display.mosaicHeight}})
                    : json(nullptr)}};
    if (o.display.enabled && o.display.streamed)
        j["display"]["stream"] = {{"address", o.display.streamAddress},
            {"encoder", o.display.encoder}, {"frames_sent", o.display.streamSent},
            {"frames_dropped", o.display.streamDropped},
            {"frames_unwatched", o.display.streamUnwatched}};
    if (!o.gpio.is_null())
        j["gpio"] = o.gpio;
    j["run"] = {{"started_utc", o.context.startedUtc},
        {"wall_s", round4(nsToS(o.endNs - o.startNs))}, {"stop_reason", o.stopReason},
        {"failure", o.failure.empty() ? json(nullptr) : json(o.failure)},
        {"directory", o.runDirectory}};
    j["process"] = processJson(o);
    json tasks = json::array();
    for (const TaskOutcome& t : o.tasks)
        tasks.push_back(taskJson(t, o));
    j["tasks"] = tasks;
    j["power"] = o.power ? powerJson(o) : json(nullptr);
    return j;
}

} // namespace jetagent
