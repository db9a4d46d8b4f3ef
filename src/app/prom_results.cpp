// Textfiles of finished work for node_exporter (prom_results.h).
#include "prom_results.h"

#include <chrono>
#include <filesystem>

#include "config/config.h"
#include "metrics/prom_textfile.h"
#include "metrics/run_metrics.h"

namespace jetagent {

namespace {

std::string textOr(const nlohmann::json& j, const char* key)
{
    return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

double unixNowS()
{
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace

void addSummaryIdentity(MetricSet& set, const nlohmann::json& summary)
{
    addBuildInfo(set, {textOr(summary, "jetagent_version"), presentEngineBackends()});
    const nlohmann::json& power = summary.value("power", nlohmann::json());
    if (power.is_object()) {
        const nlohmann::json& mode = power.value("power_mode", nlohmann::json());
        addBoardInfo(set, {textOr(power, "model"), textOr(power, "l4t"), textOr(mode, "name")});
    }
    for (const nlohmann::json& task : summary.value("tasks", nlohmann::json::array()))
        for (const nlohmann::json& e : task.value("engines", nlohmann::json::array())) {
            const nlohmann::json& model = e.value("model", nlohmann::json());
            addModelInfo(set,
                {textOr(task, "name"),
                    std::filesystem::path(textOr(model, "path")).filename().string(),
                    textOr(model, "sha256"), textOr(e, "backend"), textOr(e, "precision")});
        }
}

Status writeRunTextfile(const std::string& dir, const AgentConfig& config, const AgentRun& run)
{
    MetricSet set;
    addSummaryIdentity(set, run.summary);
    std::vector<std::string> streamNames;
    for (const StreamConfig& s : config.sources)
        streamNames.push_back(s.name);
    const nlohmann::json& tasks = run.summary.value("tasks", nlohmann::json::array());
    for (size_t i = 0; i < run.stats.size() && i < config.tasks.size(); ++i) {
        TaskMetricsInput input;
        input.task = i < tasks.size() ? textOr(tasks[i], "name") : config.tasks[i].name;
        input.streamNames = streamNames;
        const std::vector<size_t> served = config.taskStreams(i);
        input.singleStream = served.empty() ? 0 : served.front();
        input.deadlineJudged = config.run.pacing != Pacing::None;
        // The queues' drops, from the summary (the pipeline is gone): the task's own, or each
        // stream's row.
        const nlohmann::json task = i < tasks.size() ? tasks[i] : nlohmann::json::object();
        input.dropped = [&](size_t stream) -> uint64_t {
            const nlohmann::json& rows = task.value("streams", nlohmann::json());
            if (rows.is_array() && !rows.empty()) {
                for (const nlohmann::json& row : rows)
                    if (stream < streamNames.size() && textOr(row, "name") == streamNames[stream])
                        return row["frames"].value("dropped", uint64_t(0));
                return 0;
            }
            return task.value("frames", nlohmann::json::object()).value("dropped", uint64_t(0));
        };
        addTaskMetrics(set, run.stats[i], input);
    }
    const nlohmann::json& power = run.summary.value("power", nlohmann::json());
    if (power.is_object()) {
        const char* help =
            "Energy the rail delivered during the run (\"total\": the board's input).";
        for (const nlohmann::json& rail : power.value("rails", nlohmann::json::array()))
            set.add("jetagent_energy_joules", MetricType::Counter, "joules", help,
                {{"rail", textOr(rail, "name")}}, rail.value("energy_J", 0.0));
        const nlohmann::json& total = power.value("total", nlohmann::json());
        if (total.is_object())
            set.add("jetagent_energy_joules", MetricType::Counter, "joules", help,
                {{"rail", "total"}}, total.value("energy_J", 0.0));
    }
    addLastRunTimestamp(set, unixNowS());
    const std::string stem =
        config.path.empty() ? "" : std::filesystem::path(config.path).stem().string();
    return writePromTextfile(dir, promTextfileName("run", stem), set.families());
}

void PooledTaskFigures::add(const TaskStats& stats, const nlohmann::json& runSummary)
{
    if (!buckets)
        buckets = std::make_unique<StageBuckets>(stats.buckets.shareBounds());
    buckets->merge(stats.buckets);
    frames += stats.frames;
    failed += stats.failed;
    deadlineMisses += stats.deadlineMisses;
    summary = runSummary;
}

Status writeBenchTextfile(const std::string& dir, const PooledTaskFigures& pooled)
{
    MetricSet set;
    addSummaryIdentity(set, pooled.summary);
    TaskMetricsInput input;
    input.task = pooled.task;
    input.streamNames = {"bench"};
    addTaskStreamMetrics(
        set, input, {0, pooled.frames, pooled.failed, pooled.deadlineMisses, pooled.buckets.get()});
    // The bench's agent rounds are unpaced: no frame is judged against a deadline, so none is
    // given.
    addLastRunTimestamp(set, unixNowS());
    return writePromTextfile(dir, promTextfileName("bench", pooled.task), set.families());
}

Status writeSweepTextfile(const std::string& dir, const std::string& study,
    const std::string& version, const std::vector<CellResult>& cells)
{
    MetricSet set;
    addBuildInfo(set, {version, presentEngineBackends()});
    for (const CellResult& c : cells) {
        if (!c.ok || c.latencyNs.empty())
            continue;
        std::string task = c.key.model + "/" + c.key.engine + "/b" + std::to_string(c.key.batch);
        if (c.key.threads > 0)
            task += "/t" + std::to_string(c.key.threads);
        MetricFamily& latency =
            set.family(kLatencyFamily, MetricType::Histogram, "seconds", kLatencyHelp);
        latency.samples.push_back(latencyHistogramOf(
            c.latencyNs, 0, {{"task", task}, {"stream", "sweep"}, {"stage", "inference"}}));
        set.add("jetagent_frames_processed", MetricType::Counter, "",
            "Frames the task processed, failed ones and the cold start included (the summary's "
            "frames.processed).",
            {{"task", task}, {"stream", "sweep"}},
            static_cast<double>(c.latencyNs.size()) * c.key.batch);
        addModelInfo(set,
            {task, std::filesystem::path(c.modelPath).filename().string(), "", c.backend,
                c.precision});
    }
    addLastRunTimestamp(set, unixNowS());
    return writePromTextfile(dir, promTextfileName("sweep", study), set.families());
}

} // namespace jetagent
