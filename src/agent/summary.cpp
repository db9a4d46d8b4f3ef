// The end-of-run summary: a JSON document (summary.json) and the text printed from it
// (summary.txt).
#include "summary.h"

#include <cmath>

#include <spdlog/fmt/fmt.h>

#include "config.h"
#include "gpio_signals.h"
#include "jetagent/base/clock.h"
#include "jetagent/hal/gstreamer_source.h"
#include "latency_stats.h"

namespace jetagent {

namespace {

using nlohmann::json;

// The columns below give numbers an explicit right alignment ({:>8.3f}): fmt 9 pads nan and inf
// on the right without it, where printf (and these columns' readers) right-align every number.

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

json slowestJson(const TaskStats& s, int64_t runStartNs)
{
    json slowest = json::array();
    for (size_t i = 0; i < s.slowCount; ++i)
        slowest.push_back({{"frame", s.slowest[i].frameId},
            {"at_s", round4(nsToS(s.slowest[i].capturedNs - runStartNs))},
            {"e2e_ms", round4(nsToMs(s.slowest[i].endToEndNs))}});
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
    j["slowest"] = slowestJson(s, run.startNs);
    json notes = notesJson(t);
    if (t.energy)
        j["energy"] = energyJson(s.energy, run, notes);
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

std::string str(const json& j, const char* key)
{
    auto it = j.find(key);
    if (it == j.end() || it->is_null())
        return "";
    return it->is_string() ? it->get<std::string>() : it->dump();
}

// "  load      RAM peak 2148 of 7619 MB, swap 0 of 0 MB; CPU mean 23.1% peak 80.2%; ..."
void loadText(const json& l, std::string& out)
{
    std::vector<std::string> parts;
    if (!l["memory"].is_null()) {
        const json& m = l["memory"];
        parts.push_back(fmt::format("RAM peak {:.0f} of {:.0f} MB, swap peak {:.0f} of {:.0f} MB",
            m["ram_used_peak_MB"].get<double>(), m["ram_total_MB"].get<double>(),
            m["swap_used_peak_MB"].get<double>(), m["swap_total_MB"].get<double>()));
    }
    for (const auto& [key, name] : {std::pair<const char*, const char*> {"cpu_load_percent", "CPU"},
             {"emc_load_percent", "EMC"}, {"gpu_load_percent", "GPU"}}) {
        const json& series = l[key];
        if (!series.is_null())
            parts.push_back(fmt::format("{} mean {:.1f}% peak {:.1f}%", name,
                series["mean"].get<double>(), series["peak"].get<double>()));
    }
    if (parts.empty())
        return;
    out += "  load";
    for (size_t i = 0; i < parts.size(); ++i)
        out += (i == 0 ? " " : "; ") + parts[i];
    out += "\n";
}

void powerText(const json& p, std::string& out)
{
    out += fmt::format("board     {}; profile {}{}\n", str(p, "board"), str(p["profile"], "id"),
        p["profile"]["matched"].get<bool>() ? "" : " (unknown board)");
    if (!p["power_mode"].is_null())
        out += fmt::format("power     mode {} ({})", p["power_mode"]["id"].get<int>(),
            str(p["power_mode"], "name"));
    else
        out += "power     mode unknown";
    const json& sampling = p["sampling"];
    out +=
        fmt::format("; rails at {:g} Hz, {} samples, {} overruns; sampler used {:.3f}% of a core\n",
            sampling["rail_hz"].get<double>(), sampling["rail_samples"].get<unsigned long long>(),
            sampling["overruns"].get<unsigned long long>(),
            sampling["sampler_cpu_percent_of_core"].get<double>());
    if (!p["total"].is_null()) {
        const json& t = p["total"];
        const bool estimate = t["estimate"].get<bool>();
        const std::string label = estimate ? "total (estimate)" : "total = " + str(t, "name");
        out += fmt::format("  {:<22} avg {:>8.3f} W  peak {:>8.3f} W  {:>10.3f} J{}\n", label,
            t["average_W"].get<double>(), t["peak_W"].get<double>(), t["energy_J"].get<double>(),
            estimate ? "  sum of the rails below" : "");
        for (const json& r : p["rails"])
            out += fmt::format("  {:<22} avg {:>8.3f} W  peak {:>8.3f} W  {:>10.3f} J{}\n",
                str(r, "name"), r["average_W"].get<double>(), r["peak_W"].get<double>(),
                r["energy_J"].get<double>(),
                r["offline"].get<bool>() ? "  (offline at the end)" : "");
    } else {
        out += "  no power rails on this board: no power or energy figures\n";
    }
    for (const json& z : p["thermal"]) {
        if (z.contains("offline"))
            out += fmt::format("  {:<22} offline ({})\n", str(z, "zone"), str(z, "offline"));
        else
            out += fmt::format("  {:<22} start {:>6.1f} C  end {:>6.1f} C  peak {:>6.1f} C\n",
                str(z, "zone"), z["start_C"].get<double>(), z["end_C"].get<double>(),
                z["peak_C"].get<double>());
    }
    if (!p["throttle_events"].is_null())
        out += fmt::format(
            "  throttle events during the run: under-voltage {}, over-current avg {}, inst {}\n",
            str(p["throttle_events"], "under_voltage"),
            str(p["throttle_events"], "over_current_average"),
            str(p["throttle_events"], "over_current_instantaneous"));
    const json& end = p["state"]["end"];
    if (end.contains("gpu"))
        out += fmt::format("  GPU at the end {:.0f} MHz, load {:.1f}%\n",
            end["gpu"]["freq_MHz"].get<double>(), end["gpu"]["load_percent"].get<double>());
    if (!end["cpu_freq_MHz"].empty()) {
        out += "  CPU MHz at the end";
        for (const json& f : end["cpu_freq_MHz"])
            out += f.is_null() ? " off" : " " + std::to_string(static_cast<int>(f.get<double>()));
        out += "\n";
    }
    if (!end["emc_MHz"].is_null())
        out += fmt::format("  EMC at the end {:.0f} MHz\n", end["emc_MHz"].get<double>());
    if (p.contains("load"))
        loadText(p["load"], out);
}

// One row of a latency table: a distribution's min .. max and CoV; nothing when it is empty.
void distributionRow(const char* name, const json& d, std::string& out)
{
    if (d["n"].get<unsigned long long>() == 0)
        return;
    out += fmt::format("    {:<28} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f} "
                       "{:>8.3f} {:>6.3f}\n",
        name, d["min"].get<double>(), d["mean"].get<double>(), d["p50"].get<double>(),
        d["p90"].get<double>(), d["p95"].get<double>(), d["p99"].get<double>(),
        d["p99.9"].get<double>(), d["max"].get<double>(), d["cv"].get<double>());
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

} // namespace

json summaryJson(const RunOutcome& o)
{
    json j;
    j["jetagent_version"] = o.context.jetagentVersion;
    j["percentile_definition"] = kPercentileDefinition;
    j["context"] = {{"host", o.context.host}, {"os", o.context.os}, {"kernel", o.context.kernel},
        {"machine", o.context.machine}, {"cpu", o.context.cpu}, {"cores", o.context.cores},
        {"opencv", o.context.opencvVersion}, {"compiler", o.context.compiler},
        {"build_type", o.context.buildType}};
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
    if (o.display.enabled)
        j["display"] = {{"window", o.display.window},
            {"output", o.display.output.empty() ? json(nullptr) : json(o.display.output)},
            {"frames_shown", o.display.shown}, {"frames_recorded", o.display.recorded},
            {"frames_skipped", o.display.skipped},
            {"frames_with_earlier_result", o.display.earlierResult}};
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

namespace {

// The source, the run's length and how it ended, the camera's delivery, and a failure.
void sourceText(const json& j, std::string& out)
{
    const json& src = j["source"];
    const json& run = j["run"];
    out += fmt::format("source    {} ({}", str(src, "uri"), str(src, "kind"));
    if (src["width"].get<int>() > 0)
        out += fmt::format(", {}x{}", src["width"].get<int>(), src["height"].get<int>());
    out += fmt::format(", {:.2f} fps, pacing {})\n", src["fps"].get<double>(), str(src, "pacing"));
    out += fmt::format("run       {} frames captured in {:.2f} s; stopped: {}\n",
        src["frames_captured"].get<unsigned long long>(), run["wall_s"].get<double>(),
        str(run, "stop_reason"));
    if (src.contains("detail"))
        out += fmt::format("          {}\n", str(src, "detail"));
    if (src.value("skipped_files", 0ULL) > 0)
        out += fmt::format(
            "          {} image file(s) skipped: they could not be decoded (see the log)\n",
            src["skipped_files"].get<unsigned long long>());
    if (src.contains("capture_gaps") && src["capture_gaps"].value("count", 0ULL) > 0) {
        const json& g = src["capture_gaps"];
        out += fmt::format("GAPS      {} gap(s) in capture over {} s, {:.2f} s in all; the longest "
                           "{:.2f} s, ending at +{:.2f} s (the process was stopped or the source "
                           "stalled: no figure covers that time)\n",
            g["count"].get<unsigned long long>(), g.value("threshold_s", 0.0),
            g["total_s"].get<double>(), g["longest_s"].get<double>(),
            g["longest_ended_at_s"].get<double>());
    }
    if (src.contains("stats")) {
        const json& st = src["stats"];
        out += fmt::format("camera    {} frames delivered at {:.2f} fps; {} dropped by the device, "
                           "{} stalls, {} disconnects, {} reconnects\n",
            st["delivered"].get<unsigned long long>(), st["delivered_fps"].get<double>(),
            st["dropped_by_device"].get<unsigned long long>(),
            st["stalls"].get<unsigned long long>(), st["disconnects"].get<unsigned long long>(),
            st["reconnects"].get<unsigned long long>());
    }
    if (!run["failure"].is_null())
        out += fmt::format("FAILURE   {}\n", str(run, "failure"));
}

// The live view: the window, the recording, and the frames each took.
void displayText(const json& d, std::string& out)
{
    if (d.contains("stream")) {
        // A stream's frames: drawn for it, then sent, dropped or unwatched (RTSP, no client).
        const json& st = d["stream"];
        out += fmt::format("view      {}streaming {}: {} frames drawn for it ({} sent to the "
                           "encoder, {} dropped while it was behind, {} with no client playing), "
                           "{} skipped",
            d["window"].get<bool>() ? "window and " : "", str(st, "address"),
            d["frames_recorded"].get<unsigned long long>(),
            st["frames_sent"].get<unsigned long long>(),
            st["frames_dropped"].get<unsigned long long>(),
            st["frames_unwatched"].get<unsigned long long>(),
            d["frames_skipped"].get<unsigned long long>());
    } else {
        out += fmt::format("view      {}{}{}: {} frames shown, {} recorded, {} skipped",
            d["window"].get<bool>() ? "window" : "",
            d["window"].get<bool>() && !d["output"].is_null() ? " and " : "",
            d["output"].is_null() ? std::string() : "recording " + d["output"].get<std::string>(),
            d["frames_shown"].get<unsigned long long>(),
            d["frames_recorded"].get<unsigned long long>(),
            d["frames_skipped"].get<unsigned long long>());
    }
    const auto earlier = d["frames_with_earlier_result"].get<unsigned long long>();
    if (earlier > 0)
        out += fmt::format(
            "; {} drawn with an earlier frame's result (never inferred, marked so)", earlier);
    out += "\n";
}

void engineText(const json& e, std::string& out)
{
    const json& m = e["model"];
    out += fmt::format("  model     {} (sha256 {:.16}..., {} bytes)\n", str(m, "path"),
        str(m, "sha256"), m["bytes"].get<unsigned long long>());
    const int threads = e["threads"].get<int>();
    out += fmt::format(
        "  engine    {} on {}, {}, batch {}, threads {}, fusion {}; built in {:.1f} ms\n",
        str(e, "version"), str(e, "target"), str(e, "precision"), e["batch"].get<int>(),
        threads > 0 ? std::to_string(threads) : std::string("default"),
        e["fusion"].get<bool>() ? "on" : "off", e["build_ms"].get<double>());
    if (e.contains("lowered"))
        out += fmt::format("  {:<9} {}\n", str(e, "precision"), str(e, "lowered"));
}

// The frames the task processed, dropped and failed, and what its log wrote.
void framesText(const json& t, std::string& out)
{
    const json& f = t["frames"];
    out += fmt::format("  frames    {} processed, {} dropped, {} failed",
        f["processed"].get<unsigned long long>(), f["dropped"].get<unsigned long long>(),
        f["failed"].get<unsigned long long>());
    if (f.value("failed_non_finite", 0ULL) > 0)
        out += fmt::format(
            " ({} with NaN or infinite scores)", f["failed_non_finite"].get<unsigned long long>());
    if (t.contains("log")) {
        const json& log = t["log"];
        out += fmt::format("; log lines written {}, lost {}, dropped (disk) {}; {} file(s) written "
                           "(CSV and JSON Lines segments), {} removed by the cap",
            log["lines_written"].get<unsigned long long>(),
            log["lines_lost"].get<unsigned long long>(),
            log["lines_dropped_disk"].get<unsigned long long>(),
            log["segments"].get<unsigned long long>(),
            log["segments_removed"].get<unsigned long long>());
    }
    out += "\n";
}

// The cold start, the table of steady-state latencies, the throughput and the deadline.
void latencyText(const json& t, std::string& out)
{
    if (t.contains("cold_start")) {
        const json& c = t["cold_start"];
        out += fmt::format("  cold start frame {}: end to end {:.3f} ms (inference {:.3f} ms), "
                           "kept out of the figures below\n",
            c["frame"].get<unsigned long long>(), c["e2e_ms"].get<double>(),
            c["inference_ms"].get<double>());
    }
    const json& lat = t["latency_ms"];
    const unsigned long long n = lat["end_to_end"]["n"].get<unsigned long long>();
    const bool fromDequeue = str(t, "latency_from") == "dequeue";
    out += fmt::format(
        "  latency, ms (steady state, n={})   min     mean      p50      p90      p95      "
        "p99    p99.9      max    CoV\n",
        n);
    const char* rows[][2] = {
        {"end_to_end", fromDequeue ? "end to end (from dequeue)" : "end to end"},
        {"wait", "  wait"}, {"preprocess", "  preprocess"}, {"inference", "  inference"},
        {"compute", "    engine compute"}, {"postprocess", "  postprocess"}};
    for (const auto& row : rows)
        if (!(fromDequeue && std::string(row[0]) == "wait")) // zero by definition there
            distributionRow(row[1], lat[row[0]], out);
    if (lat.contains("queue"))
        distributionRow("queue (FIFO, not in e2e)", lat["queue"], out);
    if (t.contains("stability") && t["stability"]["inference_p99_over_p50"].is_number())
        out += fmt::format("  p99/p50   inference {:.2f}, end to end {:.2f} (1 = no slow tail)\n",
            t["stability"]["inference_p99_over_p50"].get<double>(),
            t["stability"]["end_to_end_p99_over_p50"].is_number()
                ? t["stability"]["end_to_end_p99_over_p50"].get<double>()
                : 0.0);
    out += fmt::format("  throughput {:.2f} fps (images/s)", t["throughput_fps"].get<double>());
    if (!t["deadline"].is_null()) {
        const json& d = t["deadline"];
        if (d["judged"].get<bool>())
            out += fmt::format("; deadline {:.3f} ms ({}): {} misses ({:.2f}%)",
                d["ms"].get<double>(), str(d, "from"), d["misses"].get<unsigned long long>(),
                100.0 * d["miss_rate"].get<double>());
        else
            out += fmt::format("; deadline {:.3f} ms ({}): not judged, {}", d["ms"].get<double>(),
                str(d, "from"), str(d, "why_not_judged"));
    }
    out += "\n";
}

// An action task's clips: results, gaps, the cold clip, and the clips' latencies.
void clipsText(const json& c, std::string& out)
{
    out += fmt::format("  clips     {} results, {} with missing frames",
        c["results"].get<unsigned long long>(), c["clips_with_gaps"].get<unsigned long long>());
    if (c.contains("cold_result"))
        out += fmt::format("; the first (cold) took {:.3f} ms, kept out of the figures below",
            c["cold_result"]["clip_inference_ms"].get<double>());
    out += "\n";
    const char* clipRows[][2] = {
        {"result_latency_ms", "result latency"}, {"clip_inference_ms", "  clip inference"}};
    for (const auto& row : clipRows)
        distributionRow(row[1], c[row[0]], out);
}

void slowestText(const json& slowest, std::string& out)
{
    out += "  slowest   ";
    bool first = true;
    for (const json& s : slowest) {
        // Captured before the run started (a camera that delivered its first frame while
        // opening) reads as a negative offset.
        out += fmt::format("{}frame {} at {:+.2f} s: {:.3f} ms", first ? "" : "; ",
            s["frame"].get<unsigned long long>(), s["at_s"].get<double>(),
            s["e2e_ms"].get<double>());
        first = false;
    }
    out += "\n";
}

void energyText(const json& e, std::string& out)
{
    const json& inf = e["inference_mJ"];
    const json& fr = e["frame_mJ"];
    if (fr["n"].get<unsigned long long>() == 0) {
        out += "  energy    no frame had its window covered by power samples\n";
        return;
    }
    out += fmt::format("  energy    per frame ({}{}, steady state), mJ: inference mean {:.3f} p50 "
                       "{:.3f} p99 {:.3f}; frame mean {:.3f} p50 {:.3f} p99 {:.3f}",
        str(e, "rail"), e["estimate"].get<bool>() ? ", estimate" : "", inf["mean"].get<double>(),
        inf["p50"].get<double>(), inf["p99"].get<double>(), fr["mean"].get<double>(),
        fr["p50"].get<double>(), fr["p99"].get<double>());
    if (!e["frames_per_joule"].is_null())
        out += fmt::format("; {:.2f} frames/J", e["frames_per_joule"].get<double>());
    out += "\n";
}

// One task's part of the summary.
void taskText(const json& t, std::string& out)
{
    out += fmt::format("\ntask {} ({})\n", str(t, "name"), str(t, "type"));
    for (const json& e : t["engines"])
        engineText(e, out);
    framesText(t, out);
    latencyText(t, out);
    const bool action = t.contains("clips");
    if (action)
        clipsText(t["clips"], out);
    if (!t["accuracy"].is_null()) {
        const json& a = t["accuracy"];
        out += fmt::format("  accuracy  top-1 {:.2f}%{} ({} of {} {} with a known class)\n",
            100.0 * a["top1"].get<double>(),
            a.contains("top5") && a["top5"].is_number()
                ? fmt::format(", top-5 {:.2f}%", 100.0 * a["top5"].get<double>())
                : std::string(),
            a["correct"].get<unsigned long long>(), a["scored"].get<unsigned long long>(),
            action ? "clips" : "frames");
    }
    if (!t["slowest"].empty())
        slowestText(t["slowest"], out);
    if (t.contains("energy"))
        energyText(t["energy"], out);
    for (const json& note : t["notes"])
        out += fmt::format("  note      {}\n", note.get<std::string>());
}

} // namespace

std::string summaryText(const json& j)
{
    std::string out;
    const json& ctx = j["context"];
    out += "== jetagent run summary ==\n";
    sourceText(j, out);
    if (j.contains("display"))
        displayText(j["display"], out);
    if (j.contains("gpio"))
        out += GpioSignals::summaryText(j["gpio"]);
    // Host, OS and CPU, leaving out what is unknown (a replayed board tree without os-release).
    std::string where;
    for (const char* key : {"host", "os", "cpu"})
        if (!str(ctx, key).empty())
            where += (where.empty() ? "" : ", ") + str(ctx, key);
    out += fmt::format("context   jetagent {}, OpenCV {}, {}; {} ({} cores)\n",
        str(j, "jetagent_version"), str(ctx, "opencv"), str(ctx, "compiler"), where,
        ctx["cores"].get<int>());
    if (!str(j["run"], "directory").empty())
        out += fmt::format("logs      {}\n", str(j["run"], "directory"));
    if (j.contains("process") && j["process"]["cpu_ms_per_frame"].is_number())
        out += fmt::format("process   CPU {:.3f} ms per frame ({:.2f} cores busy), peak RSS {:.1f} "
                           "MiB\n",
            j["process"]["cpu_ms_per_frame"].get<double>(),
            j["process"]["cpu_cores_busy"].is_number()
                ? j["process"]["cpu_cores_busy"].get<double>()
                : 0.0,
            j["process"]["peak_rss_mb"].is_number() ? j["process"]["peak_rss_mb"].get<double>()
                                                    : 0.0);
    if (j.contains("power") && !j["power"].is_null())
        powerText(j["power"], out);
    for (const json& t : j["tasks"])
        taskText(t, out);
    out += fmt::format("\npercentiles: {}\n", str(j, "percentile_definition"));
    return out;
}

} // namespace jetagent
