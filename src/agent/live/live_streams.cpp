// The live view's stream rows and batching, from a task's statistics.
#include "live/live_streams.h"

#include <cmath>

#include "jetagent/base/clock.h"

namespace jetagent {

namespace {

// Rates over less than this are noise (a status asked for twice in a row).
constexpr int64_t kMinRateSpanNs = 100'000'000;

double round3(double v)
{
    return std::round(v * 1000.0) / 1000.0;
}

nlohmann::json percentileMs(const SampleSeries& series, double percent)
{
    return series.count() > 0 ? nlohmann::json(round3(nsToMs(series.percentile(percent))))
                              : nlohmann::json(nullptr);
}

} // namespace

nlohmann::json liveStreamRows(const TaskStats& stats, const std::vector<std::string>& names,
    const std::function<uint64_t(size_t)>& dropped, int64_t nowNs, StreamRates& rates)
{
    using nlohmann::json;
    json rows = json::array();
    const size_t n = stats.streamStats.size();
    const bool haveRate =
        rates.results.size() == n && rates.atNs > 0 && nowNs - rates.atNs >= kMinRateSpanNs;
    const double span = haveRate ? nsToS(nowNs - rates.atNs) : 0.0;
    for (size_t k = 0; k < n; ++k) {
        const StreamStats& st = stats.streamStats[k];
        const size_t id = k < stats.streamIds.size() ? stats.streamIds[k] : k;
        json row;
        row["name"] = id < names.size() ? names[id] : std::to_string(id);
        row["frames"] = st.frames;
        row["results"] = st.results;
        row["failed"] = st.failed;
        row["fps"] = haveRate && st.results >= rates.results[k]
            ? json(round3(static_cast<double>(st.results - rates.results[k]) / span))
            : json(nullptr);
        row["dropped"] = dropped ? json(dropped(id)) : json(nullptr);
        row["end_to_end_ms"] = {
            {"p50", percentileMs(st.endToEnd, 50)}, {"p99", percentileMs(st.endToEnd, 99)}};
        row["top1"] = st.scored > 0
            ? json(round3(static_cast<double>(st.correct) / static_cast<double>(st.scored)))
            : json(nullptr);
        row["scored"] = st.scored;
        rows.push_back(std::move(row));
    }
    if (rates.atNs == 0 || haveRate || rates.results.size() != n) {
        rates.results.resize(n);
        for (size_t k = 0; k < n; ++k)
            rates.results[k] = stats.streamStats[k].results;
        rates.atNs = nowNs;
    }
    return rows;
}

nlohmann::json liveBatching(const BatchStats& b, int64_t timeoutNs)
{
    using nlohmann::json;
    return {{"batch_size", b.batches > 0 ? json(b.slots / b.batches) : json(nullptr)},
        {"timeout_ms", timeoutNs > 0 ? json(round3(nsToMs(timeoutNs))) : json(nullptr)},
        {"batches", b.batches},
        {"mean_fill",
            b.slots > 0 ? json(round3(static_cast<double>(b.frames) / static_cast<double>(b.slots)))
                        : json(nullptr)},
        {"multi_stream", b.multiStream}, {"waited", b.waited}, {"timed_out", b.timedOut}};
}

} // namespace jetagent
