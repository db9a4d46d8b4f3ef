// The end-of-run summary as text (summary.txt and the console), printed from its JSON document.
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

// The columns below give numbers an explicit right alignment ({:>8.3f}): fmt 9 pads nan and inf
// on the right without it, where printf (and these columns' readers) right-align every number.

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

// The source, the run's length and how it ended, the camera's delivery, and a failure.
void sourceText(const json& j, std::string& out)
{
    const json& src = j["source"];
    const json& run = j["run"];
    if (j.contains("streams")) { // several: streamsText lists each source
        out += fmt::format("run       {} frames captured from {} streams in {:.2f} s, pacing {}; "
                           "stopped: {}\n",
            j.value("frames_captured", 0ULL), j["streams"].size(), run["wall_s"].get<double>(),
            str(src, "pacing"), str(run, "stop_reason"));
        if (!run["failure"].is_null())
            out += fmt::format("FAILURE   {}\n", str(run, "failure"));
        return;
    }
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

// Several streams: one line each, what its source is and what it delivered.
void streamsText(const json& j, std::string& out)
{
    out += "streams\n";
    for (const json& s : j["streams"]) {
        out += fmt::format("  {:<12} {} ({}", str(s, "name"), str(s, "uri"), str(s, "kind"));
        if (s["width"].get<int>() > 0)
            out += fmt::format(", {}x{}", s["width"].get<int>(), s["height"].get<int>());
        out += fmt::format(", {:.2f} fps): {} frames", s["fps"].get<double>(),
            s["frames_captured"].get<unsigned long long>());
        if (s.value("capture_gaps", 0ULL) > 0)
            out += fmt::format(", {} gap(s), the longest {:.2f} s",
                s["capture_gaps"].get<unsigned long long>(), s.value("longest_gap_s", 0.0));
        if (s.contains("stats"))
            out += fmt::format(", {} stalls, {} disconnects, {} reconnects",
                s["stats"]["stalls"].get<unsigned long long>(),
                s["stats"]["disconnects"].get<unsigned long long>(),
                s["stats"]["reconnects"].get<unsigned long long>());
        out += "\n";
    }
}

// A task over several streams: how its batches were gathered, and a row per stream.
void taskStreamsText(const json& t, std::string& out)
{
    const json& b = t["batching"];
    out += fmt::format("  batching  batch {} over {} streams, timeout {:.3f} ms: {} batches, mean "
                       "fill {:.2f}, {} with several streams; {} waited for a stream ({} until "
                       "the timeout)",
        b["batch_size"].get<int>(), t["streams_served"].size(), b["timeout_ms"].get<double>(),
        b["batches"].get<unsigned long long>(),
        b["mean_fill"].is_number() ? b["mean_fill"].get<double>() : 0.0,
        b["multi_stream_batches"].get<unsigned long long>(),
        b["batches_that_waited"].get<unsigned long long>(),
        b["batches_timed_out"].get<unsigned long long>());
    if (b["wait_ms"]["n"].get<unsigned long long>() > 0)
        out += fmt::format(", wait mean {:.3f} p99 {:.3f} ms", b["wait_ms"]["mean"].get<double>(),
            b["wait_ms"]["p99"].get<double>());
    out += "\n";
    if (b["capture_skew_ms"]["n"].get<unsigned long long>() > 0) {
        const json& k = b["capture_skew_ms"];
        out += fmt::format("  skew      capture times of the streams batched together, ms: p50 "
                           "{:.3f} p99 {:.3f} max {:.3f} (n={})\n",
            k["p50"].get<double>(), k["p99"].get<double>(), k["max"].get<double>(),
            k["n"].get<unsigned long long>());
    }
    out += "  per stream    frames  dropped  failed      fps   e2e p50   e2e p99   e2e max  "
           "misses   top-1\n";
    for (const json& s : t["streams"]) {
        const json& f = s["frames"];
        const json& e = s["latency_ms"]["end_to_end"];
        const bool any = e["n"].get<unsigned long long>() > 0;
        out += fmt::format("    {:<10} {:>7} {:>8} {:>7} {:>8.2f} {:>9} {:>9} {:>9} {:>7} {:>7}\n",
            str(s, "name"), f["processed"].get<unsigned long long>(),
            f["dropped"].get<unsigned long long>(), f["failed"].get<unsigned long long>(),
            s["throughput_fps"].get<double>(),
            any ? fmt::format("{:.3f}", e["p50"].get<double>()) : std::string("-"),
            any ? fmt::format("{:.3f}", e["p99"].get<double>()) : std::string("-"),
            any ? fmt::format("{:.3f}", e["max"].get<double>()) : std::string("-"),
            s["deadline"].is_null()
                ? std::string("-")
                : std::to_string(s["deadline"]["misses"].get<unsigned long long>()),
            s["accuracy"].is_null()
                ? std::string("-")
                : fmt::format("{:.2f}%", 100.0 * s["accuracy"]["top1"].get<double>()));
    }
    if (t.contains("energy"))
        out += "  note      each inference's energy is shared equally by the frames of its batch, "
               "whichever stream they came from\n";
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
    if (d.contains("mosaic") && d["mosaic"].is_object()) {
        const json& m = d["mosaic"];
        out += fmt::format("; a {}x{} mosaic of the streams ({}x{}; the counts above are "
                           "mosaics), {} frames drawn into its tiles",
            m["columns"].get<int>(), m["rows"].get<int>(), m["width"].get<int>(),
            m["height"].get<int>(), d["frames_drawn"].get<unsigned long long>());
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
        out += fmt::format("{}frame {}{} at {:+.2f} s: {:.3f} ms", first ? "" : "; ",
            s["frame"].get<unsigned long long>(),
            s.contains("stream") ? " of " + str(s, "stream") : std::string(),
            s["at_s"].get<double>(), s["e2e_ms"].get<double>());
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
    if (t.contains("streams"))
        taskStreamsText(t, out);
    if (!t["slowest"].empty())
        slowestText(t["slowest"], out);
    if (t.contains("energy"))
        energyText(t["energy"], out);
    for (const json& note : t["notes"])
        out += fmt::format("  note      {}\n", note.get<std::string>());
}

// "startup   412.3 ms from the process's start to the first frame: loading 170.0 ms, ..."; nothing
// when the summary has no start-up (a reload's run, a benchmark's).
void startupText(const json& ctx, std::string& out)
{
    if (!ctx.contains("startup") || ctx["startup"].is_null())
        return;
    const json& s = ctx["startup"];
    const auto number = [&s](const char* key) {
        auto it = s.find(key);
        return it != s.end() && it->is_number() ? it->get<double>() : -1.0;
    };
    const auto part = [&number](const char* key, const char* name) {
        return number(key) >= 0 ? fmt::format("{} {:.1f} ms", name, number(key))
                                : fmt::format("{} unknown", name);
    };
    out += "startup   ";
    if (number("to_first_frame_ms") >= 0)
        out += fmt::format(
            "{:.1f} ms from the process's start to the first frame: ", number("to_first_frame_ms"));
    out += part("loading_ms", "loading") + ", " + part("source_open_ms", "source open") + ", " +
        part("engine_build_ms", "engine build") + ", " +
        part("first_frame_wait_ms", "first frame wait") + ", " + part("other_ms", "the rest");
    if (number("process_start_resolution_ms") > 0)
        out += fmt::format(
            " (the process's start known to {:g} ms)", number("process_start_resolution_ms"));
    out += "\n";
}

} // namespace

std::string summaryText(const json& j)
{
    std::string out;
    const json& ctx = j["context"];
    out += "== jetagent run summary ==\n";
    sourceText(j, out);
    if (j.contains("streams"))
        streamsText(j, out);
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
    startupText(ctx, out);
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
