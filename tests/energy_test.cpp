// integratePower against analytic integrals: constant, ramp and sine power, windows of every shape.
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include <gtest/gtest.h>

#include "jetagent/power/energy.h"

namespace jetagent {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kSecond = 1'000'000'000;
constexpr double kPi = 3.14159265358979323846;
// Far from zero, as CLOCK_MONOTONIC is on a board that has been up for a day.
constexpr int64_t kBootNs = 86'400 * kSecond;
// Trapezoids are exact for piecewise-linear power; what is left is rounding.
constexpr double kExactTolerance = 1e-9;

struct Series {
    std::vector<int64_t> timeNs;
    std::vector<double> watts;
};

// Samples of `power` (of seconds since kBootNs) every `stepNs` from `fromNs` to `toNs`, inclusive.
Series sample(
    const std::function<double(double)>& power, int64_t fromNs, int64_t toNs, int64_t stepNs)
{
    Series s;
    for (int64_t t = fromNs; t <= toNs; t += stepNs) {
        s.timeNs.push_back(kBootNs + t);
        s.watts.push_back(power(static_cast<double>(t) / kSecond));
    }
    return s;
}

EnergyWindow integrate(const Series& s, int64_t t0, int64_t t1, int64_t updatePeriodNs = 0)
{
    return integratePower(
        s.timeNs.size(), [&](size_t i) { return s.timeNs[i]; },
        [&](size_t i) { return s.watts[i]; }, kBootNs + t0, kBootNs + t1, updatePeriodNs);
}

double seconds(int64_t ns)
{
    return static_cast<double>(ns) / kSecond;
}

constexpr double kConstantW = 4.5;
constexpr int64_t kStep = 10 * kMs; // 100 Hz, the sampler's default

TEST(Energy, ConstantPowerGivesPowerTimesDuration)
{
    const Series s = sample([](double) { return kConstantW; }, 0, kSecond, kStep);
    const int64_t t0 = 123 * kMs + 456, t1 = 876 * kMs + 789;
    const EnergyWindow w = integrate(s, t0, t1);
    EXPECT_TRUE(w.covered);
    EXPECT_NEAR(w.joules, kConstantW * seconds(t1 - t0), kExactTolerance);
    EXPECT_FALSE(w.shorterThanUpdate);
}

// P(t) = a + b·t: trapezoids and the linear interpolation at the edges are both exact.
constexpr double kRampStartW = 1.0;
constexpr double kRampSlopeWPerS = 8.0;

double ramp(double t)
{
    return kRampStartW + kRampSlopeWPerS * t;
}

double rampEnergy(double t0, double t1)
{
    return kRampStartW * (t1 - t0) + 0.5 * kRampSlopeWPerS * (t1 * t1 - t0 * t0);
}

TEST(Energy, LinearRampIsIntegratedExactly)
{
    const Series s = sample(ramp, 0, kSecond, kStep);
    const int64_t t0 = 37 * kMs + 1, t1 = 951 * kMs + 3;
    const EnergyWindow w = integrate(s, t0, t1);
    EXPECT_TRUE(w.covered);
    EXPECT_NEAR(w.joules, rampEnergy(seconds(t0), seconds(t1)), kExactTolerance);
}

// A sine is curved, so trapezoids err: by at most (t1 - t0)·h²·max|P''| / 12 over whole steps, plus
// the two partial steps at the edges, each at most h³·max|P''| / 8 (interpolation error times h).
constexpr double kSineMeanW = 6.0;
constexpr double kSineAmplitudeW = 2.0;
constexpr double kSineHz = 3.0;

double sine(double t)
{
    return kSineMeanW + kSineAmplitudeW * std::sin(2 * kPi * kSineHz * t);
}

double sineEnergy(double t0, double t1)
{
    const double w = 2 * kPi * kSineHz;
    return kSineMeanW * (t1 - t0) - kSineAmplitudeW / w * (std::cos(w * t1) - std::cos(w * t0));
}

double sineErrorBound(double h, double duration)
{
    const double w = 2 * kPi * kSineHz;
    const double maxCurvature = kSineAmplitudeW * w * w;
    return duration * h * h * maxCurvature / 12 + 2 * h * h * h * maxCurvature / 8;
}

TEST(Energy, SineIsWithinTheTrapezoidErrorBound)
{
    const Series s = sample(sine, 0, kSecond, kStep);
    const int64_t t0 = 55 * kMs + 5, t1 = 905 * kMs + 7;
    const EnergyWindow w = integrate(s, t0, t1);
    EXPECT_TRUE(w.covered);
    const double exact = sineEnergy(seconds(t0), seconds(t1));
    EXPECT_NEAR(w.joules, exact, sineErrorBound(seconds(kStep), seconds(t1 - t0)));
    EXPECT_NEAR(w.joules, exact, 0.01 * exact); // the 1% the sampler promises
}

TEST(Energy, SineErrorShrinksWithTheSquareOfTheStep)
{
    // Edges on sample times of both series, so only the trapezoid error itself is left: about
    // h²/12·(P'(t0) - P'(t1)), which is not zero here: 250 ms is three quarter periods at 3 Hz,
    // where P' is 0 while at 0 it is at its maximum.
    const int64_t t0 = 0, t1 = 250 * kMs;
    const int64_t coarse = 25 * kMs, fine = 5 * kMs;
    const Series sc = sample(sine, 0, kSecond, coarse), sf = sample(sine, 0, kSecond, fine);
    const double exact = sineEnergy(seconds(t0), seconds(t1));
    const double coarseError = std::abs(integrate(sc, t0, t1).joules - exact);
    const double fineError = std::abs(integrate(sf, t0, t1).joules - exact);
    ASSERT_GT(fineError, 0.0);
    // (25/5)² = 25 in theory; higher-order terms make it a little less.
    EXPECT_GT(coarseError / fineError, 20.0);
    EXPECT_LT(coarseError / fineError, 30.0);
}

TEST(Energy, WindowInsideOneIntervalInterpolates)
{
    const Series s = sample(ramp, 0, kSecond, kStep);
    const int64_t t0 = 502 * kMs, t1 = 507 * kMs; // between the samples at 500 and 510 ms
    const EnergyWindow w = integrate(s, t0, t1);
    EXPECT_TRUE(w.covered);
    EXPECT_EQ(w.samplesInside, 0);
    EXPECT_NEAR(w.joules, rampEnergy(seconds(t0), seconds(t1)), kExactTolerance);
}

TEST(Energy, WindowAcrossManyIntervalsCountsTheSamplesInside)
{
    const Series s = sample(ramp, 0, kSecond, kStep);
    const int64_t t0 = 105 * kMs, t1 = 395 * kMs; // samples at 110, 120, ..., 390 ms inside
    const EnergyWindow w = integrate(s, t0, t1);
    EXPECT_TRUE(w.covered);
    EXPECT_EQ(w.samplesInside, 29);
    EXPECT_NEAR(w.joules, rampEnergy(seconds(t0), seconds(t1)), kExactTolerance);
}

TEST(Energy, WindowOnTheFirstAndLastSampleIsCovered)
{
    const Series s = sample(ramp, 0, kSecond, kStep);
    const EnergyWindow whole = integrate(s, 0, kSecond);
    EXPECT_TRUE(whole.covered);
    EXPECT_EQ(whole.samplesInside, static_cast<int>(s.timeNs.size()) - 2); // ends are not inside
    EXPECT_NEAR(whole.joules, rampEnergy(0, 1), kExactTolerance);

    // Edges on sample times inside the series.
    const EnergyWindow part = integrate(s, 200 * kMs, 300 * kMs);
    EXPECT_TRUE(part.covered);
    EXPECT_EQ(part.samplesInside, 9);
    EXPECT_NEAR(part.joules, rampEnergy(0.2, 0.3), kExactTolerance);
}

TEST(Energy, WindowPartlyOutsideIsNotCoveredAndCountsOnlyTheOverlap)
{
    const Series s = sample(ramp, 100 * kMs, 500 * kMs, kStep);

    const EnergyWindow before = integrate(s, 50 * kMs, 200 * kMs);
    EXPECT_FALSE(before.covered);
    EXPECT_NEAR(before.joules, rampEnergy(0.1, 0.2), kExactTolerance);

    const EnergyWindow after = integrate(s, 450 * kMs, 600 * kMs);
    EXPECT_FALSE(after.covered);
    EXPECT_NEAR(after.joules, rampEnergy(0.45, 0.5), kExactTolerance);

    const EnergyWindow around = integrate(s, 0, kSecond);
    EXPECT_FALSE(around.covered);
    EXPECT_NEAR(around.joules, rampEnergy(0.1, 0.5), kExactTolerance);

    const EnergyWindow outside = integrate(s, 600 * kMs, 700 * kMs);
    EXPECT_FALSE(outside.covered);
    EXPECT_EQ(outside.joules, 0.0);
    EXPECT_EQ(outside.samplesInside, 0);
}

TEST(Energy, ShorterThanUpdateFlagsWindowsBelowTheSensorPeriod)
{
    constexpr int64_t kUpdate = 7 * kMs; // the mainline INA3221 driver's default for 3 channels
    const Series s = sample(ramp, 0, kSecond, kStep);
    EXPECT_TRUE(integrate(s, 100 * kMs, 105 * kMs, kUpdate).shorterThanUpdate);
    EXPECT_FALSE(integrate(s, 100 * kMs, 107 * kMs, kUpdate).shorterThanUpdate);
    EXPECT_FALSE(integrate(s, 100 * kMs, 150 * kMs, kUpdate).shorterThanUpdate);
    EXPECT_FALSE(integrate(s, 100 * kMs, 105 * kMs, 0).shorterThanUpdate); // 0: unknown
    // Set even when there is nothing to integrate.
    EXPECT_TRUE(integrate(Series {}, 100 * kMs, 105 * kMs, kUpdate).shorterThanUpdate);
}

TEST(Energy, EmptyOrSingleSampleGivesNothing)
{
    const EnergyWindow empty = integrate(Series {}, 0, kSecond);
    EXPECT_FALSE(empty.covered);
    EXPECT_EQ(empty.joules, 0.0);
    EXPECT_EQ(empty.samplesInside, 0);

    const Series one = sample(ramp, 500 * kMs, 500 * kMs, kStep);
    ASSERT_EQ(one.timeNs.size(), 1u);
    const EnergyWindow single = integrate(one, 0, kSecond);
    EXPECT_FALSE(single.covered);
    EXPECT_EQ(single.joules, 0.0);
}

TEST(Energy, EmptyOrReversedWindowGivesNothing)
{
    const Series s = sample(ramp, 0, kSecond, kStep);
    const EnergyWindow empty = integrate(s, 300 * kMs, 300 * kMs);
    EXPECT_FALSE(empty.covered);
    EXPECT_EQ(empty.joules, 0.0);
    const EnergyWindow reversed = integrate(s, 400 * kMs, 300 * kMs);
    EXPECT_FALSE(reversed.covered);
    EXPECT_EQ(reversed.joules, 0.0);
}

TEST(Energy, UnevenSpacingAndRepeatedTimestamps)
{
    // A late sample (scheduling jitter) and two samples with the same time: still exact for a ramp,
    // and no division by a zero-length interval.
    Series s;
    for (int64_t t : {0 * kMs, 10 * kMs, 27 * kMs, 27 * kMs, 30 * kMs, 41 * kMs, 50 * kMs}) {
        s.timeNs.push_back(kBootNs + t);
        s.watts.push_back(ramp(seconds(t)));
    }
    const EnergyWindow w = integrate(s, 5 * kMs, 45 * kMs);
    EXPECT_TRUE(w.covered);
    EXPECT_TRUE(std::isfinite(w.joules));
    EXPECT_NEAR(w.joules, rampEnergy(0.005, 0.045), kExactTolerance);
}

} // namespace
} // namespace jetagent
