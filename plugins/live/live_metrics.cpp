// /metrics: the run's figures for Prometheus, from the recorder's statistics (under their lock,
// as the status document reads them), the pipeline's counters and the power sampler's newest
// samples; never from a worker. Written by the core's exposition writer (metrics/exposition.h),
// as the commands' textfiles are.
#include "http_live_server.h"

#include <chrono>

#include <httplib.h>

#include "jetagent/base/clock.h"
#include "jetagent/power/power_monitor.h"
#include "live_server_parts.h"
#include "run/run_context.h"

namespace jetagent {

double processStartUnixS()
{
    int64_t resolutionNs = 0;
    const int64_t startNs = processStartNs(resolutionNs);
    const double nowUnixS =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    if (startNs < 0)
        return nowUnixS; // unreadable: the server's start, near enough
    return nowUnixS - nsToS(monotonicNs() - startNs);
}

std::vector<MetricFamily> HttpLiveServer::buildMetrics()
{
    MetricSet set;
    std::lock_guard<std::mutex> lock(dataMutex_);
    addBuildInfo(set, run_.build);
    if (attached_) {
        addBoardInfo(set, run_.board);
        for (const ModelIdentity& m : run_.models)
            addModelInfo(set, m);
    }
    set.add("jetagent_running", MetricType::Gauge, "", "1 while a run is attached to the server.",
        {}, attached_ ? 1.0 : 0.0);
    set.add("jetagent_start_time_seconds", MetricType::Gauge, "seconds",
        "Unix time the jetagent process started.", {}, processStartUnixS_);
    if (attached_) {
        for (size_t i = 0; i < tasks_.size() && i < run_.tasks.size() && run_.readStats; ++i) {
            const LiveRun::TaskInfo& info = run_.tasks[i];
            const TaskState& state = *tasks_[i];
            TaskMetricsInput input;
            input.task = info.name;
            input.streamNames = run_.streams;
            input.singleStream = info.streams.empty() ? 0 : info.streams.front();
            input.deadlineJudged = info.deadlineNs > 0; // 0 in unpaced runs
            if (run_.streamDropped)
                input.dropped = [&](size_t stream) { return run_.streamDropped(i, stream); };
            if (run_.queueDepth)
                input.queueDepth = [&](size_t stream) { return run_.queueDepth(i, stream); };
            input.fps = [&](size_t stream) {
                return stream < state.fpsByStream.size() ? state.fpsByStream[stream] : 0.0;
            };
            run_.readStats(i, [&](const TaskStats& stats) { addTaskMetrics(set, stats, input); });
        }
        if (run_.reconnects)
            for (size_t s = 0; s < run_.streams.size(); ++s)
                set.add("jetagent_source_reconnects", MetricType::Counter, "",
                    "Times the stream's source came back after a loss.",
                    {{"stream", run_.streams[s]}}, static_cast<double>(run_.reconnects(s)));
    }
    if (power_)
        addPowerMetrics(set, power_->sampler());
    return set.families();
}

void HttpLiveServer::serveMetrics(const httplib::Request& req, httplib::Response& res)
{
    const int64_t cpuStart = threadCpuNs();
    const ExpositionFormat format = negotiateExposition(req.get_header_value("Accept"));
    res.set_header("Cache-Control", "no-store");
    res.set_content(writeExposition(buildMetrics(), format), expositionContentType(format));
    metricsCpuNs_.fetch_add(threadCpuNs() - cpuStart, std::memory_order_relaxed);
    metricsScrapes_.fetch_add(1, std::memory_order_relaxed);
}

} // namespace jetagent
