// The results of finished work as textfiles for node_exporter's textfile collector
// (--prom-textfile DIR on run, bench and sweep): the names /metrics uses (docs/prometheus.md),
// from the run's statistics and summary, plus jetagent_last_run_timestamp_seconds.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agent.h"
#include "jetagent/base/status.h"
#include "metrics/exposition.h"
#include "sweep.h"

namespace jetagent {

struct AgentConfig;

// Identity from a run's summary.json document: jetagent_build_info, jetagent_board_info (when
// power was read) and jetagent_model_info per task engine.
void addSummaryIdentity(MetricSet& set, const nlohmann::json& summary);

// `run`: DIR/jetagent_run.prom, or jetagent_run_<config file's stem>.prom when the config has a
// path: every task's histograms and counters by stream, the rails' energy, identity.
Status writeRunTextfile(const std::string& dir, const AgentConfig& config, const AgentRun& run);

// `bench`: the agent rounds' statistics of one task, pooled.
struct PooledTaskFigures {
    explicit PooledTaskFigures(std::string name) : task(std::move(name)) { }
    std::string task;
    std::unique_ptr<StageBuckets> buckets; // from the first round's bounds
    uint64_t frames = 0, failed = 0, deadlineMisses = 0;
    nlohmann::json summary; // the last round's, for identity
    void add(const TaskStats& stats, const nlohmann::json& runSummary);
};
// DIR/jetagent_bench_<task>.prom: the pooled histograms and counters, stream="bench".
Status writeBenchTextfile(const std::string& dir, const PooledTaskFigures& pooled);

// `sweep`: DIR/jetagent_sweep_<study>.prom: each measured cell as a task named
// "<model>/<engine>/b<batch>[/t<threads>]" on stream "sweep", its engine loop's Session::run
// times as the histogram's stage "inference", its inferences (runs x batch) as frames processed,
// and its model and engine as jetagent_model_info.
Status writeSweepTextfile(const std::string& dir, const std::string& study,
    const std::string& version, const std::vector<CellResult>& cells);

} // namespace jetagent
