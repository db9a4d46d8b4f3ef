// Latency statistics the way users already read them: nearest-rank percentiles, CoV, sample
// minimums.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace jetagent {

// The percentile definition used everywhere in jetagent, stated in every summary.
extern const char* const kPercentileDefinition;

// Nearest rank: the smallest sample with at least `percent`% of all samples at or below it, i.e.
// the sample of 1-based rank ceil(percent / 100 * n) in ascending order (trtexec's rule, written
// otherwise). `sorted` must be ascending and non-empty; percent in (0, 100].
int64_t nearestRankPercentile(const std::vector<int64_t>& sorted, double percent);
size_t nearestRankIndex(size_t n, double percent);

// The fewest samples for which a percentile estimate means something: MLPerf LoadGen's
// early-stopping rule (binomial, 99% confidence, one sample over the bound). 64 for p90, 662 for
// p99.
int64_t minSamplesForPercentile(double percent);

// A stream of latencies in nanoseconds. Count, min, max, mean and deviation are exact over all
// values; percentiles come from the values kept: all of them up to `maxKept`, then a uniform
// reservoir sample.
class SampleSeries {
public:
    explicit SampleSeries(size_t maxKept = 1'000'000, uint64_t seed = 0x6a657461ull);

    void reserve(size_t n);
    void add(int64_t value);

    uint64_t count() const { return count_; }
    int64_t min() const { return min_; }
    int64_t max() const { return max_; }
    double mean() const { return mean_; }
    double stddev() const; // population standard deviation
    bool sampled() const { return count_ > kept_.size(); }
    const std::vector<int64_t>& kept() const { return kept_; }

private:
    size_t maxKept_;
    uint64_t rng_;
    uint64_t count_ = 0;
    int64_t min_ = 0;
    int64_t max_ = 0;
    double mean_ = 0.0;
    double m2_ = 0.0;
    std::vector<int64_t> kept_;
};

// A summary of one series, in milliseconds.
struct Distribution {
    uint64_t count = 0;
    size_t kept = 0; // samples the percentiles were computed from
    double min = 0, mean = 0, max = 0, stddev = 0, cv = 0;
    double p50 = 0, p90 = 0, p95 = 0, p99 = 0, p999 = 0;
};

Distribution summarize(const SampleSeries& series);

} // namespace jetagent
