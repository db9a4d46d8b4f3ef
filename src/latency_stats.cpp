// Latency statistics the way users already read them: nearest-rank percentiles, CoV, sample
// minimums.
#include "latency_stats.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "jetagent/base/clock.h"

namespace jetagent {

const char* const kPercentileDefinition =
    "nearest rank: pP is the smallest sample with at least P% of samples at or below it "
    "(1-based rank ceil(P/100 * n) in ascending order; no interpolation, as trtexec)";

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

SampleSeries::SampleSeries(size_t maxKept, uint64_t seed)
    : maxKept_(std::max<size_t>(maxKept, 1)), rng_(seed)
{
}

void SampleSeries::reserve(size_t n)
{
    kept_.reserve(std::min(n, maxKept_));
}

void SampleSeries::add(int64_t value)
{
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

    if (kept_.size() < maxKept_) {
        kept_.push_back(value);
        return;
    }
    // Reservoir sampling (Algorithm R): every value seen so far stays with equal probability.
    rng_ += 0x9E3779B97F4A7C15ull;
    uint64_t z = rng_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const uint64_t slot = z % count_;
    if (slot < maxKept_)
        kept_[slot] = value;
}

double SampleSeries::stddev() const
{
    return count_ > 0 ? std::sqrt(m2_ / static_cast<double>(count_)) : 0.0;
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
    std::vector<int64_t> sorted = series.kept();
    std::sort(sorted.begin(), sorted.end());
    d.p50 = nsToMs(nearestRankPercentile(sorted, 50));
    d.p90 = nsToMs(nearestRankPercentile(sorted, 90));
    d.p95 = nsToMs(nearestRankPercentile(sorted, 95));
    d.p99 = nsToMs(nearestRankPercentile(sorted, 99));
    d.p999 = nsToMs(nearestRankPercentile(sorted, 99.9));
    return d;
}

} // namespace jetagent
