// The end-of-run summary: a JSON document (summary.json) and the text printed from it
// (summary.txt).
#include "summary.h"

#include <cmath>
#include <cstdio>

#include "jetagent/base/clock.h"
#include "latency_stats.h"
#include "text.h"

namespace jetagent {

namespace {

using nlohmann::json;

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
        j["percentiles_from"] = d.kept; // a uniform sample of the run
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

json taskJson(const TaskOutcome& t, const RunOutcome& run)
{
    const TaskStats& s = *t.stats;
    json j;
    j["name"] = t.task->name();
    j["type"] = t.config->type;
    j["settings"] = t.task->describe();
    json engines = json::array();
    for (const EngineDescription& e : t.task->engines()) {
        engines.push_back({{"backend", e.backend}, {"version", e.backendVersion},
            {"target", e.target}, {"device", deviceName(e.options.device)},
            {"precision", precisionName(e.options.precision)}, {"batch", e.options.batch},
            {"threads", e.options.threads}, {"fusion", e.options.fusion},
            {"build_ms", round4(nsToMs(e.buildNs))},
            {"model",
                {{"path", e.modelPath}, {"sha256", e.modelSha256}, {"bytes", e.modelBytes}}}});
    }
    j["engines"] = engines;

    j["frames"] = {{"processed", s.frames}, {"dropped", t.dropped}, {"failed", s.failed}};
    if (t.log) {
        json log = {{"lines_written", t.log->written()}, {"lines_lost", t.log->lost()},
            {"write_errors", t.log->writeErrors()}};
        if (!t.log->csvPath().empty())
            log["csv"] = t.log->csvPath();
        if (!t.log->jsonlPath().empty())
            log["jsonl"] = t.log->jsonlPath();
        j["log"] = log;
    }

    if (s.haveColdStart) {
        const FrameRecord& c = s.coldStart;
        j["cold_start"] = {{"frame", c.frameId}, {"e2e_ms", round4(nsToMs(c.endToEndNs()))},
            {"wait_ms", round4(nsToMs(c.dequeuedNs - c.capturedNs))},
            {"preprocess_ms", round4(nsToMs(c.preprocessedNs - c.dequeuedNs))},
            {"inference_ms", round4(nsToMs(c.inferredNs - c.preprocessedNs))},
            {"postprocess_ms", round4(nsToMs(c.doneNs - c.inferredNs))}};
    }
    j["latency_ms"] = {{"end_to_end", distributionJson(s.endToEnd)},
        {"wait", distributionJson(s.wait)}, {"preprocess", distributionJson(s.preprocess)},
        {"inference", distributionJson(s.inference)}, {"compute", distributionJson(s.compute)},
        {"postprocess", distributionJson(s.postprocess)}, {"service", distributionJson(s.service)},
        {"interval", distributionJson(s.interval)}};

    // Results per second between the first and the last result (batches finish together, so this is
    // frames after the first batch over the time they took).
    const int64_t span = s.lastDoneNs - s.firstDoneNs;
    const uint64_t completed = s.frames - s.failed;
    const uint64_t firstBatch = s.haveColdStart ? static_cast<uint64_t>(s.coldStart.batch) : 1;
    j["throughput_fps"] = span > 0 && s.frames > firstBatch
        ? round4(static_cast<double>(s.frames - firstBatch) / nsToS(span))
        : 0.0;

    j["deadline"] = {{"ms", round4(nsToMs(s.deadlineNs()))},
        {"from", t.config->deadlineMs > 0 ? "config" : "source frame period"},
        {"misses", s.deadlineMisses},
        {"miss_rate",
            completed
                ? round4(static_cast<double>(s.deadlineMisses) / static_cast<double>(completed))
                : 0.0}};
    if (s.deadlineNs() <= 0)
        j["deadline"] = nullptr;

    if (s.scored > 0)
        j["accuracy"] = {{"scored", s.scored}, {"correct", s.correct},
            {"top1", round4(static_cast<double>(s.correct) / static_cast<double>(s.scored))}};
    else
        j["accuracy"] = nullptr;

    json slowest = json::array();
    for (size_t i = 0; i < s.slowCount; ++i)
        slowest.push_back({{"frame", s.slowest[i].frameId},
            {"at_s", round4(nsToS(s.slowest[i].capturedNs - run.startNs))},
            {"e2e_ms", round4(nsToMs(s.slowest[i].endToEndNs))}});
    j["slowest"] = slowest;

    json notes = json::array();
    const uint64_t n = s.endToEnd.count();
    for (double p : {90.0, 95.0, 99.0, 99.9}) {
        const int64_t need = minSamplesForPercentile(p);
        if (static_cast<int64_t>(n) < need) {
            char text[200];
            std::snprintf(text, sizeof text,
                "p%g rests on %llu steady-state samples; it needs at least %lld to mean much "
                "(MLPerf LoadGen's early-stopping minimum)",
                p, static_cast<unsigned long long>(n), static_cast<long long>(need));
            notes.push_back(text);
        }
    }
    if (s.endToEnd.sampled())
        notes.push_back("percentiles come from a uniform sample of " +
            std::to_string(s.endToEnd.kept().size()) + " of " + std::to_string(n) +
            " frames (logging.max_summary_samples); min, mean and max are exact");
    if (t.dropped > 0)
        notes.push_back("the worker could not keep up with the source: " +
            std::to_string(t.dropped) + " frames were replaced by newer ones before inference");
    if (t.log && t.log->lost() > 0)
        notes.push_back(std::to_string(t.log->lost()) +
            " frame-log lines were lost because the writer fell behind (logging.queue_capacity); "
            "the "
            "statistics include them");
    j["notes"] = notes;
    return j;
}

std::string str(const json& j, const char* key)
{
    auto it = j.find(key);
    if (it == j.end() || it->is_null())
        return "";
    return it->is_string() ? it->get<std::string>() : it->dump();
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
    j["config"] = {{"path", o.config ? o.config->path : ""}, {"overrides", o.overrides}};
    j["source"] = {{"uri", o.source.uri}, {"kind", o.source.kind}, {"width", o.source.width},
        {"height", o.source.height}, {"fps", round4(o.source.fps)}, {"live", o.source.live},
        {"pacing", o.config && o.config->run.pacing == Pacing::None ? "none" : "realtime"},
        {"frames_captured", o.framesCaptured}};
    j["run"] = {{"started_utc", o.context.startedUtc},
        {"wall_s", round4(nsToS(o.endNs - o.startNs))}, {"stop_reason", o.stopReason},
        {"failure", o.failure.empty() ? json(nullptr) : json(o.failure)},
        {"directory", o.runDirectory}};
    json tasks = json::array();
    for (const TaskOutcome& t : o.tasks)
        tasks.push_back(taskJson(t, o));
    j["tasks"] = tasks;
    return j;
}

std::string summaryText(const json& j)
{
    std::string out;
    const json& src = j["source"];
    const json& run = j["run"];
    const json& ctx = j["context"];
    out += "== jetagent run summary ==\n";
    appendf(out, "source    %s (%s", str(src, "uri").c_str(), str(src, "kind").c_str());
    if (src["width"].get<int>() > 0)
        appendf(out, ", %dx%d", src["width"].get<int>(), src["height"].get<int>());
    appendf(out, ", %.2f fps, pacing %s)\n", src["fps"].get<double>(), str(src, "pacing").c_str());
    appendf(out, "run       %llu frames captured in %.2f s; stopped: %s\n",
        src["frames_captured"].get<unsigned long long>(), run["wall_s"].get<double>(),
        str(run, "stop_reason").c_str());
    if (!run["failure"].is_null())
        appendf(out, "FAILURE   %s\n", str(run, "failure").c_str());
    appendf(out, "context   jetagent %s, OpenCV %s, %s; %s, %s, %s (%d cores)\n",
        str(j, "jetagent_version").c_str(), str(ctx, "opencv").c_str(),
        str(ctx, "compiler").c_str(), str(ctx, "host").c_str(), str(ctx, "os").c_str(),
        str(ctx, "cpu").c_str(), ctx["cores"].get<int>());
    if (!str(run, "directory").empty())
        appendf(out, "logs      %s\n", str(run, "directory").c_str());

    for (const json& t : j["tasks"]) {
        appendf(out, "\ntask %s (%s)\n", str(t, "name").c_str(), str(t, "type").c_str());
        for (const json& e : t["engines"]) {
            const json& m = e["model"];
            appendf(out, "  model     %s (sha256 %.16s..., %llu bytes)\n", str(m, "path").c_str(),
                str(m, "sha256").c_str(), m["bytes"].get<unsigned long long>());
            const int threads = e["threads"].get<int>();
            appendf(out,
                "  engine    %s on %s, %s, batch %d, threads %s, fusion %s; built in %.1f ms\n",
                str(e, "version").c_str(), str(e, "target").c_str(), str(e, "precision").c_str(),
                e["batch"].get<int>(), threads > 0 ? std::to_string(threads).c_str() : "default",
                e["fusion"].get<bool>() ? "on" : "off", e["build_ms"].get<double>());
        }
        const json& f = t["frames"];
        appendf(out, "  frames    %llu processed, %llu dropped, %llu failed",
            f["processed"].get<unsigned long long>(), f["dropped"].get<unsigned long long>(),
            f["failed"].get<unsigned long long>());
        if (t.contains("log"))
            appendf(out, "; log lines written %llu, lost %llu",
                t["log"]["lines_written"].get<unsigned long long>(),
                t["log"]["lines_lost"].get<unsigned long long>());
        out += "\n";
        if (t.contains("cold_start")) {
            const json& c = t["cold_start"];
            appendf(out,
                "  cold start frame %llu: end to end %.3f ms (inference %.3f ms), kept out of the "
                "figures below\n",
                c["frame"].get<unsigned long long>(), c["e2e_ms"].get<double>(),
                c["inference_ms"].get<double>());
        }
        const json& lat = t["latency_ms"];
        const unsigned long long n = lat["end_to_end"]["n"].get<unsigned long long>();
        appendf(out,
            "  latency, ms (steady state, n=%llu)   min     mean      p50      p90      p95      "
            "p99    p99.9      max    CoV\n",
            n);
        const char* rows[][2] = {{"end_to_end", "end to end"}, {"wait", "  wait"},
            {"preprocess", "  preprocess"}, {"inference", "  inference"},
            {"compute", "    engine compute"}, {"postprocess", "  postprocess"}};
        for (const auto& row : rows) {
            const json& d = lat[row[0]];
            if (d["n"].get<unsigned long long>() == 0)
                continue;
            appendf(out, "    %-28s %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %6.3f\n",
                row[1], d["min"].get<double>(), d["mean"].get<double>(), d["p50"].get<double>(),
                d["p90"].get<double>(), d["p95"].get<double>(), d["p99"].get<double>(),
                d["p99.9"].get<double>(), d["max"].get<double>(), d["cv"].get<double>());
        }
        appendf(out, "  throughput %.2f fps", t["throughput_fps"].get<double>());
        if (!t["deadline"].is_null()) {
            const json& d = t["deadline"];
            appendf(out, "; deadline %.3f ms (%s): %llu misses (%.2f%%)", d["ms"].get<double>(),
                str(d, "from").c_str(), d["misses"].get<unsigned long long>(),
                100.0 * d["miss_rate"].get<double>());
        }
        out += "\n";
        if (!t["accuracy"].is_null()) {
            const json& a = t["accuracy"];
            appendf(out, "  accuracy  top-1 %.2f%% (%llu of %llu frames with a known class)\n",
                100.0 * a["top1"].get<double>(), a["correct"].get<unsigned long long>(),
                a["scored"].get<unsigned long long>());
        }
        if (!t["slowest"].empty()) {
            out += "  slowest   ";
            bool first = true;
            for (const json& s : t["slowest"]) {
                appendf(out, "%sframe %llu at +%.2f s: %.3f ms", first ? "" : "; ",
                    s["frame"].get<unsigned long long>(), s["at_s"].get<double>(),
                    s["e2e_ms"].get<double>());
                first = false;
            }
            out += "\n";
        }
        for (const json& note : t["notes"])
            appendf(out, "  note      %s\n", note.get<std::string>().c_str());
    }
    appendf(out, "\npercentiles: %s\n", str(j, "percentile_definition").c_str());
    return out;
}

} // namespace jetagent
