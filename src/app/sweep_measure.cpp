// Timed turns and process figures for `jetagent sweep`.
#include "sweep_measure.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include "jetagent/base/clock.h"
#include "run/latency_stats.h"

namespace jetagent {

Status runTimedTurn(Session& session, TensorView view, const float* pool, size_t windows,
    size_t windowStride, int64_t runs, int64_t untilNs, std::vector<int64_t>& latencies,
    TurnTotals& totals, const std::function<bool()>& stopRequested)
{
    const int64_t cpu0 = processCpuNs();
    const int64_t t0 = monotonicNs();
    int64_t last = t0;
    int64_t nextPoll = stopRequested ? t0 + kStopPollNs : INT64_MAX;
    totals.stopped = false;
    for (int64_t i = 0; i < runs && (untilNs == 0 || last < untilNs); ++i) {
        if (last >= nextPoll) {
            if (stopRequested()) {
                totals.stopped = true;
                break;
            }
            nextPoll = last + kStopPollNs;
        }
        // The sessions read their input through the view: pointing it at another window costs
        // nothing and keeps every run from seeing the very same data.
        view.data = const_cast<float*>(pool + static_cast<size_t>(i) % windows * windowStride);
        const int64_t start = monotonicNs();
        if (Status s = session.run(&view, 1, nullptr); !s)
            return s;
        last = monotonicNs();
        latencies.push_back(last - start);
    }
    totals.cpuNs += processCpuNs() - cpu0;
    totals.wallNs += last - t0;
    totals.startNs = t0;
    totals.endNs = last;
    return Status();
}

void fillLatencyFigures(std::vector<int64_t> wallNs, int batch, CellFigures& f)
{
    if (wallNs.empty())
        return;
    std::sort(wallNs.begin(), wallNs.end());
    const double n = static_cast<double>(wallNs.size());
    double sum = 0;
    for (int64_t v : wallNs)
        sum += static_cast<double>(v);
    const double mean = sum / n;
    double squares = 0;
    for (int64_t v : wallNs)
        squares += (static_cast<double>(v) - mean) * (static_cast<double>(v) - mean);
    const double sd = wallNs.size() > 1 ? std::sqrt(squares / (n - 1)) : 0.0;
    f.runs = n;
    f.latencyMinMs = nsToMs(wallNs.front());
    f.latencyMaxMs = nsToMs(wallNs.back());
    f.latencyMeanMs = mean / 1e6;
    f.latencySdMs = sd / 1e6;
    f.latencyP50Ms = nsToMs(nearestRankPercentile(wallNs, 50));
    f.latencyP90Ms = nsToMs(nearestRankPercentile(wallNs, 90));
    f.latencyP95Ms = nsToMs(nearestRankPercentile(wallNs, 95));
    f.latencyP99Ms = nsToMs(nearestRankPercentile(wallNs, 99));
    f.p99OverP50 = f.latencyP99Ms / f.latencyP50Ms;
    f.latencyCov = mean > 0 ? sd / mean : kNotMeasured;
    f.throughputIps = mean > 0 ? batch * 1e9 / mean : kNotMeasured;
    if (f.macs > 0 && mean > 0)
        f.gflops = 2.0 * f.macs * batch / mean; // per ns = GFLOP/s
}

} // namespace jetagent
