// The run's figures as Prometheus metric families, under the names every jetagent exposition
// shares (docs/prometheus.md): per task and stream the stage-latency histograms and frame
// counters from the recorder's statistics, the board's power, temperatures and clocks from the
// power sampler's newest samples, and identity (_info) metrics. Read from the bounded statistics
// only, never from a worker: building them costs the run nothing but the statistics' lock.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "metrics/exposition.h"
#include "run/task_stats.h"

namespace jetagent {

class PowerSampler;

// What a task's metrics read besides its statistics.
struct TaskMetricsInput {
    std::string task; // the `task` label
    std::vector<std::string> streamNames; // every run stream's name, by run stream
    // The run stream a task that serves one stream serves (its statistics keep no StreamStats).
    size_t singleStream = 0;
    // Optional, by run stream (null: left out): frames the task's queue dropped, frames waiting in
    // it, results per second lately.
    std::function<uint64_t(size_t)> dropped;
    std::function<double(size_t)> queueDepth;
    std::function<double(size_t)> fps;
    // Whether the deadline is judged (paced runs): false leaves jetagent_deadline_seconds out,
    // as an unpaced run judges no frame against it.
    bool deadlineJudged = true;
};

// Adds task `input.task`'s families: jetagent_frame_latency_seconds{task,stream,stage}, the
// frames processed, failed, dropped and deadline-miss counters, queue depth and fps gauges, and
// jetagent_deadline_seconds{task} when the task has a deadline.
void addTaskMetrics(MetricSet& set, const TaskStats& stats, const TaskMetricsInput& input);

// One stream's share of a task as its metrics read it (a task's own figures when it serves one
// stream; pooled figures of several runs for `bench`).
struct TaskStreamFigures {
    size_t runStream = 0; // names the stream through TaskMetricsInput::streamNames
    uint64_t frames = 0, failed = 0, deadlineMisses = 0;
    const StageBuckets* buckets = nullptr;
};
// The per-stream part of addTaskMetrics; addDeadlineMetric the rest.
void addTaskStreamMetrics(
    MetricSet& set, const TaskMetricsInput& input, const TaskStreamFigures& figures);
void addDeadlineMetric(MetricSet& set, const std::string& task, int64_t deadlineNs);

// Identity, each an _info metric valued 1.
struct BuildIdentity {
    std::string version;
    std::string engines; // the engine backends present, comma separated ("xnnpack,opencv")
};
struct BoardMetricsIdentity {
    std::string module; // the board's model ("NVIDIA Jetson Orin Nano ..."), "" unknown
    std::string l4t; // "R36.4.3", "" when not a Jetson
    std::string powerMode; // nvpmodel's name ("15W"), "" unknown
};
struct ModelIdentity {
    std::string task, model, sha256, backend, precision; // model: the file's name
};
void addBuildInfo(MetricSet& set, const BuildIdentity& build);
// The engine backends whose plugins are installed ("xnnpack,opencv,tensorrt"), without loading
// any.
std::string presentEngineBackends();
void addBoardInfo(MetricSet& set, const BoardMetricsIdentity& board);
void addModelInfo(MetricSet& set, const ModelIdentity& model);

// The sampler's newest readings: jetagent_power_watts{rail} and the run's
// jetagent_energy_joules_total{rail} (the rails and "total"), jetagent_temperature_celsius{zone}
// (shown zones), jetagent_clock_hertz{clock} (cpu: the fastest online core, gpu, emc, where read)
// and jetagent_throttled (where the board counts throttle events: 1 when the count rose between
// the two newest state samples). Nothing where nothing was read.
void addPowerMetrics(MetricSet& set, const PowerSampler& sampler);

// jetagent_frame_latency_seconds' sample of `valuesNs` (one stage's latencies) over the ladder of
// latencyBucketBounds(`deadlineNs`): for figures not kept by a recorder (a sweep's engine loops).
MetricSample latencyHistogramOf(
    const std::vector<int64_t>& valuesNs, int64_t deadlineNs, MetricLabels labels);
extern const char* const kLatencyHelp;

// The family names, for tests and the textfiles.
constexpr const char* kLatencyFamily = "jetagent_frame_latency_seconds";
constexpr const char* kLastRunFamily = "jetagent_last_run_timestamp_seconds";

} // namespace jetagent
