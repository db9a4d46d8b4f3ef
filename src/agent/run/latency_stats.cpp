// Latency statistics the way users already read them: nearest-rank percentiles, CoV, sample
// minimums.
#include "run/latency_stats.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "jetagent/base/clock.h"

namespace jetagent {

const char* const kPercentileDefinition =
    "nearest rank: pP is the smallest sample with at least P% of samples at or below it "
    "(1-based rank ceil(P/100 * n) in ascending order; no interpolation, as trtexec); exact up "
    "to logging.max_summary_samples values, beyond that the midpoint of the log-linear "
    "histogram bucket holding that sample, within 0.1% of it";

size_t nearestRankIndex(size_t n, double percent)
{
    assert(n > 0 && percent > 0.0 && percent <= 100.0);
    // P/100 * n can land a hair above an integer in binary floating point (99.9% of 1000 is
    // 999.0000000000001); the tolerance keeps such exact products from rounding up a whole rank.
    const double product = percent / 100.0 * static_cast<double>(n);
    double rank = std::ceil(product - 1e-9 * std::max(1.0, product));
    rank = std::min(std::max(rank, 1.0), static_cast<double>(n));
    return static_cast<size_t>(rank) - 1;
}

int64_t nearestRankPercentile(const std::vector<int64_t>& sorted, double percent)
{
    return sorted[nearestRankIndex(sorted.size(), percent)];
}

int64_t minSamplesForPercentile(double percent)
{
    // With h samples under the bound and one over, LoadGen passes when the regularized incomplete
    // beta I_p(h, 2) = p^h (1 + h (1 - p)) falls to 1 - confidence; it then needs h + 1 samples in
    // all.
    const double p = percent / 100.0;
    const double limit = 1.0 - 0.99;
    int64_t h = 1;
    while (std::pow(p, static_cast<double>(h)) * (1.0 + static_cast<double>(h) * (1.0 - p)) > limit)
        ++h;
    return h + 1;
}

SampleSeries::SampleSeries(size_t exactKept)
    : exactKept_(std::max<size_t>(exactKept, 1)), buckets_(kBuckets)
{
    // Written once, then emptied: the pages are resident from the start, so the process reaches its
    // resident size at start-up rather than over the first exactKept values (which a soak's memory
    // trend would read as growth: 8 series x 80 kB per task over the demo's first few minutes).
    kept_.resize(exactKept_);
    kept_.clear();
}

size_t SampleSeries::bucketOf(int64_t value)
{
    constexpr uint64_t kSub = uint64_t(1) << kSubBucketBits;
    const uint64_t v = static_cast<uint64_t>(std::max<int64_t>(value, 0));
    if (v < kSub)
        return static_cast<size_t>(v);
    // v in [2^e, 2^(e+1)) with e >= kSubBucketBits: 512 buckets of width 2^(e - 9).
    const int e = std::min(63 - __builtin_clzll(v), kTopExponent);
    if (e == kTopExponent)
        return kBuckets - 1;
    const int shift = e - kSubBucketBits;
    const uint64_t sub = (v >> shift) - kSub;
    return static_cast<size_t>(kSub + static_cast<uint64_t>(shift) * kSub + sub);
}

int64_t SampleSeries::bucketMidpoint(size_t bucket)
{
    constexpr size_t kSub = size_t(1) << kSubBucketBits;
    if (bucket < kSub)
        return static_cast<int64_t>(bucket);
    const size_t shift = (bucket - kSub) / kSub;
    const uint64_t sub = (bucket - kSub) % kSub + kSub;
    const uint64_t low = sub << shift;
    return static_cast<int64_t>(low + ((uint64_t(1) << shift) >> 1));
}

void SampleSeries::add(int64_t value)
{
    value = std::max<int64_t>(value, 0);
    ++count_;
    if (count_ == 1) {
        min_ = max_ = value;
    } else {
        min_ = std::min(min_, value);
        max_ = std::max(max_, value);
    }
    // Welford's running mean and sum of squared deviations.
    const double delta = static_cast<double>(value) - mean_;
    mean_ += delta / static_cast<double>(count_);
    m2_ += delta * (static_cast<double>(value) - mean_);

    if (kept_.size() < exactKept_)
        kept_.push_back(value); // within the capacity allocated up front
    ++buckets_[bucketOf(value)];
}

double SampleSeries::stddev() const
{
    return count_ > 0 ? std::sqrt(m2_ / static_cast<double>(count_)) : 0.0;
}

int64_t SampleSeries::percentile(double percent) const
{
    if (count_ == 0)
        return 0;
    if (!sampled()) {
        std::vector<int64_t> sorted = kept_;
        const size_t rank = nearestRankIndex(sorted.size(), percent);
        std::nth_element(
            sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(rank), sorted.end());
        return sorted[rank];
    }
    const uint64_t rank = nearestRankIndex(static_cast<size_t>(count_), percent) + 1;
    if (rank == count_)
        return max_; // the top rank is the maximum, known exactly
    uint64_t seen = 0;
    for (size_t b = 0; b + 1 < buckets_.size(); ++b) {
        seen += buckets_[b];
        if (seen >= rank)
            return std::clamp(bucketMidpoint(b), min_, max_);
    }
    return max_; // in the top bucket (2^40 and above): no finer position is known
}

Distribution summarize(const SampleSeries& series)
{
    Distribution d;
    d.count = series.count();
    d.kept = series.kept().size();
    if (d.count == 0)
        return d;
    d.min = nsToMs(series.min());
    d.max = nsToMs(series.max());
    d.mean = series.mean() / 1e6;
    d.stddev = series.stddev() / 1e6;
    d.cv = d.mean > 0 ? d.stddev / d.mean : 0.0;
    if (!series.sampled()) {
        std::vector<int64_t> sorted = series.kept();
        std::sort(sorted.begin(), sorted.end());
        d.p50 = nsToMs(nearestRankPercentile(sorted, 50));
        d.p90 = nsToMs(nearestRankPercentile(sorted, 90));
        d.p95 = nsToMs(nearestRankPercentile(sorted, 95));
        d.p99 = nsToMs(nearestRankPercentile(sorted, 99));
        d.p999 = nsToMs(nearestRankPercentile(sorted, 99.9));
        return d;
    }
    d.p50 = nsToMs(series.percentile(50));
    d.p90 = nsToMs(series.percentile(90));
    d.p95 = nsToMs(series.percentile(95));
    d.p99 = nsToMs(series.percentile(99));
    d.p999 = nsToMs(series.percentile(99.9));
    return d;
}

} // namespace jetagent
