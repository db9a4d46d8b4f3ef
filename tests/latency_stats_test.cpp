// Percentiles and summary statistics against hand-computed values.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "run/latency_stats.h"
#include "run/task_stats.h"

namespace jetagent {
namespace {

TEST(NearestRank, HandComputedSetOfTen)
{
    // Sorted: 1 2 3 5 8 13 21 34 55 89. Rank ceil(P/100*10): p50 -> 5th = 8, p90 -> 9th = 55,
    // p95 -> ceil(9.5)=10th = 89, p10 -> 1st = 1, p11 -> ceil(1.1)=2nd = 2.
    std::vector<int64_t> v = {34, 1, 89, 5, 13, 2, 55, 3, 21, 8};
    std::sort(v.begin(), v.end());
    EXPECT_EQ(nearestRankPercentile(v, 50), 8);
    EXPECT_EQ(nearestRankPercentile(v, 90), 55);
    EXPECT_EQ(nearestRankPercentile(v, 95), 89);
    EXPECT_EQ(nearestRankPercentile(v, 99.9), 89);
    EXPECT_EQ(nearestRankPercentile(v, 10), 1);
    EXPECT_EQ(nearestRankPercentile(v, 11), 2);
    EXPECT_EQ(nearestRankPercentile(v, 100), 89);
}

TEST(NearestRank, ExactProductsDoNotRoundUpARank)
{
    // 99.9% of 1000 is exactly rank 999, though 99.9/100*1000 is 999.0000000000001 in doubles.
    std::vector<int64_t> v(1000);
    std::iota(v.begin(), v.end(), 1);
    EXPECT_EQ(nearestRankPercentile(v, 99.9), 999);
    EXPECT_EQ(nearestRankPercentile(v, 99), 990);
    EXPECT_EQ(nearestRankPercentile(v, 90), 900);
    EXPECT_EQ(nearestRankPercentile(v, 50), 500);
    std::vector<int64_t> hundred(100);
    std::iota(hundred.begin(), hundred.end(), 1);
    EXPECT_EQ(nearestRankPercentile(hundred, 99.9), 100);
    EXPECT_EQ(nearestRankPercentile(hundred, 95), 95);
}

TEST(NearestRank, AgreesWithTrtexecFormula)
{
    // trtexec: sorted[max(N - 1 - floor((1 - P/100) * N), 0)], for P and N where the products are
    // exact.
    for (size_t n : {1u, 2u, 7u, 10u, 64u, 100u, 250u, 1000u}) {
        for (double p : {50.0, 90.0, 95.0, 99.0}) {
            const double q = (100.0 - p) / 100.0 * static_cast<double>(n);
            const auto trt = static_cast<size_t>(
                std::max<double>(static_cast<double>(n) - 1 - std::floor(q + 1e-9), 0));
            EXPECT_EQ(nearestRankIndex(n, p), trt) << "n=" << n << " p=" << p;
        }
    }
}

TEST(MinimumSamples, MatchMLPerfLoadGen)
{
    EXPECT_EQ(minSamplesForPercentile(90), 64);
    EXPECT_EQ(minSamplesForPercentile(99), 662);
    EXPECT_GT(minSamplesForPercentile(95), 64);
    EXPECT_LT(minSamplesForPercentile(95), 662);
    EXPECT_GT(minSamplesForPercentile(99.9), 6000);
}

TEST(SampleSeries, MomentsOfAKnownSet)
{
    SampleSeries s;
    for (int64_t v : {2, 4, 4, 4, 5, 5, 7, 9})
        s.add(v * 1'000'000); // ms in ns
    const Distribution d = summarize(s);
    EXPECT_EQ(d.count, 8u);
    EXPECT_DOUBLE_EQ(d.mean, 5.0);
    EXPECT_DOUBLE_EQ(d.stddev, 2.0); // population standard deviation of the classic example
    EXPECT_DOUBLE_EQ(d.cv, 0.4);
    EXPECT_DOUBLE_EQ(d.min, 2.0);
    EXPECT_DOUBLE_EQ(d.max, 9.0);
    EXPECT_DOUBLE_EQ(d.p50, 4.0); // rank 4 of 2 4 4 4 5 5 7 9
    EXPECT_DOUBLE_EQ(d.p90, 9.0); // rank ceil(7.2) = 8
}

TEST(SampleSeries, BeyondTheExactValuesMomentsStayExactAndMemoryBounded)
{
    SampleSeries s(1000);
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<int64_t> uniform(0, 999'999);
    double sum = 0;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int i = 0; i < 100000; ++i) {
        const int64_t v = uniform(rng);
        s.add(v);
        sum += static_cast<double>(v);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    EXPECT_EQ(s.count(), 100000u);
    EXPECT_EQ(s.kept().size(), 1000u);
    EXPECT_TRUE(s.sampled());
    EXPECT_EQ(s.min(), lo);
    EXPECT_EQ(s.max(), hi);
    EXPECT_NEAR(s.mean(), sum / 100000.0, 1e-6);
    // The first 1000 values of a uniform stream: their median lands near the middle (~6 sigma).
    std::vector<int64_t> kept = s.kept();
    std::sort(kept.begin(), kept.end());
    EXPECT_NEAR(static_cast<double>(nearestRankPercentile(kept, 50)), 500000.0, 100000.0);
}

// The histogram's percentiles against the exact nearest-rank values of the same stream, for a
// spread of shapes and counts: each within SampleSeries::kRelativeError (0.1%) of the exact one.
TEST(SampleSeries, HistogramPercentilesAreWithinAThousandthOfTheExactOnes)
{
    std::mt19937_64 rng(11);
    std::lognormal_distribution<double> latency(std::log(5e6), 0.6); // ~5 ms, long right tail
    std::uniform_int_distribution<int64_t> small(0, 2000); // exact buckets and the first octaves
    for (const size_t n : {size_t(100), size_t(20'000), size_t(1'000'000)}) {
        for (int shape = 0; shape < 2; ++shape) {
            SampleSeries s(50); // exact for 50 values only: the histogram answers from there on
            std::vector<int64_t> all;
            all.reserve(n);
            for (size_t i = 0; i < n; ++i) {
                const int64_t v = shape == 0 ? static_cast<int64_t>(latency(rng)) : small(rng);
                s.add(v);
                all.push_back(v);
            }
            std::sort(all.begin(), all.end());
            ASSERT_TRUE(s.sampled());
            for (double p : {1.0, 50.0, 90.0, 95.0, 99.0, 99.9, 100.0}) {
                const auto exact = static_cast<double>(nearestRankPercentile(all, p));
                const auto approx = static_cast<double>(s.percentile(p));
                EXPECT_LE(std::abs(approx - exact), SampleSeries::kRelativeError * exact + 0.5)
                    << "n=" << n << " shape=" << shape << " p" << p << ": exact " << exact
                    << ", histogram " << approx;
            }
            EXPECT_EQ(s.percentile(100), all.back()); // the top rank is the exact maximum
        }
    }
}

TEST(SampleSeries, ExactWhileTheValuesFitAndTheSameMemoryAtAnyCount)
{
    SampleSeries s(1000);
    const size_t before = s.memoryBytes();
    for (int64_t v = 1000; v >= 1; --v)
        s.add(v * 1'000'003); // values whose buckets are wider than 1
    EXPECT_FALSE(s.sampled());
    EXPECT_EQ(s.percentile(50), 500 * 1'000'003); // exact: rank 500 of 1000
    const Distribution d = summarize(s);
    EXPECT_EQ(d.kept, d.count);
    for (int i = 0; i < 3'000'000; ++i)
        s.add(int64_t(1) << 50); // past the histogram's top: the last bucket, max stays exact
    EXPECT_TRUE(s.sampled());
    EXPECT_EQ(s.memoryBytes(), before);
    EXPECT_EQ(s.max(), int64_t(1) << 50);
    EXPECT_EQ(s.percentile(99), int64_t(1) << 50); // clamped into [min, max]
    s.add(-5); // a negative value counts as 0
    EXPECT_EQ(s.min(), 0);
}

// Pages of `p` the kernel holds for this process (mincore), from `bytes` bytes at `p`.
size_t residentPages(const void* p, size_t bytes)
{
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> in((bytes + page - 1) / page);
    EXPECT_EQ(::mincore(const_cast<void*>(p), bytes, in.data()), 0);
    return static_cast<size_t>(
        std::count_if(in.begin(), in.end(), [](unsigned char c) { return c & 1; }));
}

// The histogram's counters cost memory only on the pages where values fell: none at first, one
// after values of one bucket, and a copy holds the same pages.
TEST(ZeroPages, OnlyWrittenPagesAreResidentAndCopiesStaySmall)
{
    constexpr size_t kCount = SampleSeries::kBuckets;
    ZeroPages counters(kCount);
    const size_t bytes = kCount * sizeof(uint64_t);
    EXPECT_EQ(residentPages(counters.data(), bytes), 0u);
    counters[9000] += 3;
    counters[9001] += 1;
    EXPECT_EQ(residentPages(counters.data(), bytes), 1u);
    const ZeroPages copy(counters);
    EXPECT_EQ(residentPages(copy.data(), bytes), 1u);
    EXPECT_EQ(copy[9000], 3u);
    EXPECT_EQ(copy[9001], 1u);
    ZeroPages moved(std::move(counters));
    EXPECT_EQ(moved[9000], 3u);
    EXPECT_EQ(moved.size(), kCount);
    // Read back whole: every other counter is zero.
    uint64_t sum = 0;
    for (size_t i = 0; i < kCount; ++i)
        sum += copy[i];
    EXPECT_EQ(sum, 4u);
}

} // namespace
// Top-1 and top-5 accuracy by hand: a frame counts for top-5 only when its result holds five
// labels, and its true class among the first five is a top-5 hit.
TEST(TaskStatsAccuracy, TopOneAndTopFiveByHand)
{
    TaskStats stats(100, 0);
    auto record = [](int truth, std::vector<int32_t> labels) {
        FrameRecord r;
        r.truth = truth;
        r.topK = static_cast<int32_t>(labels.size());
        for (size_t i = 0; i < labels.size(); ++i)
            r.labels[i] = labels[i];
        r.times.endToEndNs = 1'000'000;
        return r;
    };
    stats.add(record(3, {3, 1, 2, 0, 4})); // top-1 and top-5
    stats.add(record(4, {3, 1, 2, 0, 4})); // top-5 only (fifth)
    stats.add(record(5, {3, 1, 2, 0, 4})); // neither
    stats.add(record(2, {2, 1, 0})); // top-1; three labels: not judged for top-5
    stats.add(record(-1, {0, 1, 2, 3, 4})); // no known class: not scored
    EXPECT_EQ(stats.scored, 4u);
    EXPECT_EQ(stats.correct, 2u);
    EXPECT_EQ(stats.scoredTop5, 3u);
    EXPECT_EQ(stats.correctTop5, 2u);
}

} // namespace jetagent
