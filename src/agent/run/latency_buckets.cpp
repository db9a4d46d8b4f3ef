// Bucket counts of stage latencies for Prometheus' histograms.
#include "run/latency_buckets.h"

#include <algorithm>

namespace jetagent {

const char* latencyStageName(LatencyStage stage)
{
    switch (stage) {
    case LatencyStage::EndToEnd: return "end_to_end";
    case LatencyStage::Wait: return "wait";
    case LatencyStage::Preprocess: return "preprocess";
    case LatencyStage::Inference: return "inference";
    case LatencyStage::Postprocess: return "postprocess";
    }
    return "unknown";
}

std::shared_ptr<const std::vector<int64_t>> latencyBucketBounds(int64_t deadlineNs)
{
    // Six steps a decade (1, 1.5, 2, 3, 5, 7) keep neighbouring bounds within a factor of 1.67:
    // a quantile Prometheus interpolates from them lies in the bucket of the exact one.
    static const int64_t kSteps[] = {100, 150, 200, 300, 500, 700}; // per 100 of a decade
    std::vector<int64_t> bounds = {500'000, 700'000}; // 0.5 ms, 0.7 ms
    for (int64_t decade = 1'000'000; decade <= 1'000'000'000; decade *= 10)
        for (int64_t step : kSteps)
            bounds.push_back(decade / 100 * step);
    bounds.push_back(10'000'000'000); // 10 s
    if (deadlineNs > 0 && !std::binary_search(bounds.begin(), bounds.end(), deadlineNs))
        bounds.insert(std::upper_bound(bounds.begin(), bounds.end(), deadlineNs), deadlineNs);
    return std::make_shared<const std::vector<int64_t>>(std::move(bounds));
}

const std::vector<int64_t>& StageBuckets::noBounds()
{
    static const std::vector<int64_t> none;
    return none;
}

StageBuckets::StageBuckets(std::shared_ptr<const std::vector<int64_t>> bounds)
    : bounds_(std::move(bounds))
{
    for (auto& c : counts_)
        c.assign(bounds_->size() + 1, 0);
}

void StageBuckets::add(const std::array<int64_t, kLatencyStages>& stageNs)
{
    ++count_;
    for (size_t s = 0; s < kLatencyStages; ++s) {
        const int64_t v = std::max<int64_t>(stageNs[s], 0);
        // The first bound at or above the value: bounds are inclusive upper limits ("le").
        const size_t i = static_cast<size_t>(
            std::lower_bound(bounds_->begin(), bounds_->end(), v) - bounds_->begin());
        ++counts_[s][i];
        sumNs_[s] += v;
    }
}

bool StageBuckets::merge(const StageBuckets& other)
{
    if (!bounds_ || other.bounds() != bounds())
        return false;
    for (size_t s = 0; s < kLatencyStages; ++s) {
        for (size_t i = 0; i < counts_[s].size(); ++i)
            counts_[s][i] += other.counts_[s][i];
        sumNs_[s] += other.sumNs_[s];
    }
    count_ += other.count_;
    return true;
}

} // namespace jetagent
