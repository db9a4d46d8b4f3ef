// Latency statistics the way users already read them: nearest-rank percentiles, CoV, sample
// minimums, in memory that does not grow with the run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "run/zero_pages.h"

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

// A stream of non-negative values (latencies in nanoseconds, energies in nanojoules) in memory
// that does not grow with the run. Count, min, max, mean and standard deviation are exact over
// every value. Percentiles are exact (nearest rank) while at most `exactKept` values have arrived;
// beyond that they come from a log-linear histogram of every value: values below 512 have a
// bucket each, and each power of two above is split into 512 equal buckets, so a percentile is
// the midpoint of the bucket that holds it, within 1/1024 (0.1%) of the true nearest-rank sample
// at any count (100 or 10^9), clamped to [min, max]. Values from 2^40 (18 minutes in ns) up share
// the top bucket. Memory: kHistogramBytes plus 8 bytes per exact value, all allocated up front so
// that add() never allocates. The exact values' pages are resident from the start; the
// histogram's only where values fell (ZeroPages: a run's latencies span a few powers of two, a
// few of its 32 pages).
class SampleSeries {
public:
    static constexpr size_t kDefaultExactKept = 10'000;
    static constexpr int kSubBucketBits = 9; // 512 linear buckets per power of two
    static constexpr int kTopExponent = 40; // 2^40 and above share the last bucket
    static constexpr size_t kBuckets = // the exact ones, 512 per power of two, the top one
        (size_t(1) << kSubBucketBits) * (kTopExponent - kSubBucketBits + 1) + 1;
    static constexpr size_t kHistogramBytes = kBuckets * sizeof(uint64_t);
    // The largest relative error of a percentile taken from the histogram.
    static constexpr double kRelativeError = 1.0 / (1 << (kSubBucketBits + 1));

    explicit SampleSeries(size_t exactKept = kDefaultExactKept);

    void add(int64_t value); // negative values count as 0

    uint64_t count() const { return count_; }
    int64_t min() const { return min_; }
    int64_t max() const { return max_; }
    double mean() const { return mean_; }
    double stddev() const; // population standard deviation
    // True once more values arrived than are kept exactly: percentiles come from the histogram.
    bool sampled() const { return count_ > kept_.size(); }
    // The first values, in arrival order (at most exactKept).
    const std::vector<int64_t>& kept() const { return kept_; }
    size_t exactKept() const { return exactKept_; }
    // Nearest-rank percentile (percent in (0, 100]); 0 when empty.
    int64_t percentile(double percent) const;
    // The series' memory, whatever the count.
    size_t memoryBytes() const { return kHistogramBytes + exactKept_ * sizeof(int64_t); }

private:
    static size_t bucketOf(int64_t value);
    static int64_t bucketMidpoint(size_t bucket);

    size_t exactKept_;
    uint64_t count_ = 0;
    int64_t min_ = 0;
    int64_t max_ = 0;
    double mean_ = 0.0;
    double m2_ = 0.0;
    std::vector<int64_t> kept_;
    ZeroPages buckets_;
};

// A summary of one series, in milliseconds.
struct Distribution {
    uint64_t count = 0;
    size_t kept = 0; // values kept exactly (the percentiles are exact when kept == count)
    double min = 0, mean = 0, max = 0, stddev = 0, cv = 0;
    double p50 = 0, p90 = 0, p95 = 0, p99 = 0, p999 = 0;
};

Distribution summarize(const SampleSeries& series);

} // namespace jetagent
