// The power sampler against rails whose power is a known function of time: fake rails for the
// sampler's own logic, and INA3221 fixture files rewritten by a writer thread for the whole chain.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <time.h>

#include <gtest/gtest.h>

#include "jetagent/base/clock.h"
#include "jetagent/base/log.h"
#include "jetagent/power/board_profile.h"
#include "jetagent/power/board_state.h"
#include "jetagent/power/rails.h"
#include "jetagent/power/sampler.h"
#include "sysfs_fixture.h"
#include "test_support.h"

namespace jetagent {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr double kPi = 3.14159265358979323846;
constexpr double kEnergyTolerance = 0.01; // the 1% the sampler promises against analytic energy
// How long a test waits for something the sampler does within a few periods; generous, since the
// machine may be busy, and only reached when the test fails.
constexpr int64_t kPatienceNs = 2'000 * kMs;

// Power as a function of seconds since an origin, with its analytic integral.
struct Waveform {
    enum class Shape { Constant, Ramp, Sine } shape = Shape::Constant;
    double a = 0.0; // constant; ramp start; sine mean (W)
    double b = 0.0; // ramp slope (W/s); sine amplitude (W)
    double hz = 0.0; // sine frequency

    double power(double t) const
    {
        switch (shape) {
        case Shape::Constant: return a;
        case Shape::Ramp: return a + b * t;
        case Shape::Sine: return a + b * std::sin(2 * kPi * hz * t);
        }
        return 0.0;
    }
    double energy(double t0, double t1) const
    {
        switch (shape) {
        case Shape::Constant: return a * (t1 - t0);
        case Shape::Ramp: return a * (t1 - t0) + 0.5 * b * (t1 * t1 - t0 * t0);
        case Shape::Sine: {
            const double w = 2 * kPi * hz;
            return a * (t1 - t0) - b / w * (std::cos(w * t1) - std::cos(w * t0));
        }
        }
        return 0.0;
    }
};

Waveform constant(double watts)
{
    return {Waveform::Shape::Constant, watts, 0.0, 0.0};
}
Waveform ramp(double startW, double slopeWPerS)
{
    return {Waveform::Shape::Ramp, startW, slopeWPerS, 0.0};
}
Waveform sine(double meanW, double amplitudeW, double hz)
{
    return {Waveform::Shape::Sine, meanW, amplitudeW, hz};
}

const Waveform kSine = sine(5.0, 2.0, 2.0);
const Waveform kRamp = ramp(1.0, 3.0);
const Waveform kConstant = constant(2.5);

// A rail whose reading is its waveform at the time the sampler passes in; `averaged` rails return
// the mean since their previous read, as RAPL does. Failures are switched on and off by the test.
class FakeRail final : public PowerRail {
public:
    FakeRail(const std::string& name, Waveform waveform, int64_t originNs, bool averaged,
        const std::string& parent, int64_t updatePeriodNs)
        : waveform_(waveform), originNs_(originNs), previousNs_(originNs)
    {
        info_.name = name;
        info_.driver = "fake";
        info_.device = "test";
        info_.parent = parent;
        info_.averaged = averaged;
        info_.updatePeriodNs = updatePeriodNs;
    }

    int read(int64_t nowNs, RailReading& out) override
    {
        if (const int error = failWith.load())
            return error;
        reads.fetch_add(1);
        const double t = seconds(nowNs);
        if (info_.averaged && nowNs > previousNs_)
            out.powerW = waveform_.energy(seconds(previousNs_), t) / nsToS(nowNs - previousNs_);
        else
            out.powerW = waveform_.power(t);
        highestReading = std::max(highestReading, out.powerW);
        previousNs_ = nowNs;
        return 0;
    }
    // Like a sysfs file that is still there but whose reads fail: reopening works, reading not.
    int reopen() override
    {
        reopens.fetch_add(1);
        return 0;
    }

    double energy(int64_t t0, int64_t t1) const
    {
        return waveform_.energy(seconds(t0), seconds(t1));
    }

    std::atomic<int> failWith {0};
    std::atomic<int> reads {0};
    std::atomic<int> reopens {0};
    // Written by the sampler's thread only; read by the test after stop() has joined it.
    double highestReading = -1.0;

private:
    double seconds(int64_t ns) const { return nsToS(ns - originNs_); }

    Waveform waveform_;
    int64_t originNs_;
    int64_t previousNs_;
};

struct RailSpec {
    RailSpec(std::string railName, Waveform railWaveform, bool isAveraged = false,
        std::string parentRail = "", int64_t railUpdatePeriodNs = 0)
        : name(std::move(railName)),
          waveform(railWaveform),
          averaged(isAveraged),
          parent(std::move(parentRail)),
          updatePeriodNs(railUpdatePeriodNs)
    {
    }
    std::string name;
    Waveform waveform;
    bool averaged;
    std::string parent;
    int64_t updatePeriodNs;
};

// Fake rails handed to a sampler, with pointers kept to steer and check them.
struct Rig {
    int64_t originNs = monotonicNs();
    std::vector<FakeRail*> fakes;
    std::unique_ptr<PowerSampler> sampler;

    Rig(const std::vector<RailSpec>& specs, const std::string& total, PowerSamplerOptions options)
    {
        std::vector<std::unique_ptr<PowerRail>> rails;
        for (const RailSpec& s : specs) {
            auto rail = std::make_unique<FakeRail>(
                s.name, s.waveform, originNs, s.averaged, s.parent, s.updatePeriodNs);
            fakes.push_back(rail.get());
            rails.push_back(std::move(rail));
        }
        sampler = std::make_unique<PowerSampler>(std::move(rails), total, nullptr, options);
    }
};

PowerSamplerOptions fastOptions()
{
    PowerSamplerOptions o;
    o.railHz = 200.0;
    o.stateHz = 20.0;
    o.ringCapacity = 1024;
    return o;
}

void sleepMs(int ms)
{
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// Polls `done` every millisecond until it holds or kPatienceNs pass; returns whether it held.
bool waitFor(const std::function<bool()>& done)
{
    const int64_t until = monotonicNs() + kPatienceNs;
    while (!done()) {
        if (monotonicNs() > until)
            return false;
        sleepMs(1);
    }
    return true;
}

double relativeError(double measured, double exact)
{
    return std::abs(measured - exact) / std::abs(exact);
}

TEST(Sampler, EnergyOverWindowsMatchesAnalyticEnergy)
{
    Rig rig({{"SINE", kSine}, {"RAMP", kRamp}, {"FLAT", kConstant}}, "", fastOptions());
    PowerSampler& s = *rig.sampler;
    ASSERT_TRUE(s.start().ok());
    constexpr int kRunMs = 600;
    sleepMs(kRunMs);
    s.stop();
    const PowerRunStats stats = s.runStats();
    ASSERT_GT(stats.endNs - stats.startNs, kRunMs / 2 * kMs);

    struct Window {
        int64_t offsetMs, lengthMs;
    };
    // Short (a few frames' worth), medium and almost the whole run, at odd offsets.
    const Window windows[] = {{13, 50}, {101, 33}, {207, 100}, {55, 300}, {5, kRunMs / 2 + 200}};
    for (const Window& w : windows) {
        const int64_t t0 = stats.startNs + w.offsetMs * kMs;
        const int64_t t1 = std::min(t0 + w.lengthMs * kMs, stats.endNs);
        double sum = 0.0;
        for (size_t r = 0; r < rig.fakes.size(); ++r) {
            const EnergyWindow e = s.energy(t0, t1, static_cast<int>(r));
            SCOPED_TRACE(s.rails()[r].name + " window at +" + std::to_string(w.offsetMs) + " ms");
            EXPECT_TRUE(e.covered);
            EXPECT_GT(e.samplesInside, 0);
            const double exact = rig.fakes[r]->energy(t0, t1);
            EXPECT_LT(relativeError(e.joules, exact), kEnergyTolerance)
                << e.joules << " J measured, " << exact << " J exact";
            sum += exact;
        }
        const EnergyWindow total = s.energy(t0, t1);
        EXPECT_TRUE(total.covered);
        EXPECT_LT(relativeError(total.joules, sum), kEnergyTolerance);
    }
}

TEST(Sampler, RunStatsAverageIsEnergyOverTimeAndPeakTheHighestReading)
{
    Rig rig({{"SINE", kSine}, {"FLAT", kConstant}}, "SINE", fastOptions());
    PowerSampler& s = *rig.sampler;
    EXPECT_EQ(s.totalName(), "SINE");
    EXPECT_FALSE(s.totalIsEstimate());
    ASSERT_TRUE(s.start().ok());
    const int64_t wallStart = monotonicNs();
    sleepMs(500); // contains the sine's first peak, at 125 ms
    s.stop();
    const double wallS = nsToS(monotonicNs() - wallStart);
    const PowerRunStats stats = s.runStats();

    ASSERT_EQ(stats.rails.size(), 2u);
    const RailRunStats& sine = stats.rails[0];
    const double exact = rig.fakes[0]->energy(stats.startNs, stats.endNs);
    const double durationS = nsToS(stats.endNs - stats.startNs);
    EXPECT_EQ(sine.name, "SINE");
    EXPECT_LT(relativeError(sine.energyJ, exact), kEnergyTolerance);
    EXPECT_LT(relativeError(sine.averageW, exact / durationS), kEnergyTolerance);
    EXPECT_NEAR(sine.averageW, sine.energyJ / durationS, 1e-9);
    // The peak is the highest reading the rail gave, never above the crest. How close to the crest
    // that reading came depends on when the sampler ran (a loaded machine skips periods), so the
    // test holds it to the readings taken, and only asks that the samples reached the upper half.
    EXPECT_NEAR(sine.peakW, rig.fakes[0]->highestReading, 1e-5); // readings are kept as float
    EXPECT_LE(sine.peakW, kSine.a + kSine.b + 1e-5);
    EXPECT_GT(sine.peakW, kSine.a + kSine.b / 2);
    EXPECT_EQ(sine.samples, stats.railSamples);
    EXPECT_EQ(sine.errors, 0u);
    EXPECT_FALSE(sine.offline);
    EXPECT_TRUE(sine.lastError.empty());

    const RailRunStats& flat = stats.rails[1];
    EXPECT_NEAR(flat.averageW, kConstant.a, 1e-5);
    EXPECT_NEAR(flat.peakW, kConstant.a, 1e-5);

    // The total is the named rail itself.
    EXPECT_EQ(stats.total.name, "SINE");
    EXPECT_FALSE(stats.totalIsEstimate);
    EXPECT_NEAR(stats.total.energyJ, sine.energyJ, 1e-6);

    // About 100 samples in 0.5 s; a busy machine may cost some periods, counted as overruns.
    EXPECT_GT(stats.railSamples + stats.overruns, 80u);
    EXPECT_LT(stats.railSamples, 120u);
    EXPECT_GT(stats.samplerCpuS, 0.0);
    EXPECT_LT(stats.samplerCpuS, wallS);
    // No state reader: nothing known about zones or throttling.
    EXPECT_TRUE(stats.zones.empty());
    EXPECT_EQ(stats.throttleEvents[0], -1);
    BoardStateSample state;
    EXPECT_FALSE(s.latestState(state));
}

TEST(Sampler, EstimatedTotalSumsTopLevelRailsOnly)
{
    // CORE is part of PKG (as RAPL's core zone is of its package): adding it would count it twice.
    Rig rig(
        {{"PKG", kSine}, {"CORE", kConstant, false, "PKG"}, {"PSYS", kRamp}}, "", fastOptions());
    PowerSampler& s = *rig.sampler;
    EXPECT_TRUE(s.totalIsEstimate());
    EXPECT_EQ(s.totalName(), "sum of rails");
    ASSERT_TRUE(s.start().ok());
    sleepMs(300);
    s.stop();
    const PowerRunStats stats = s.runStats();
    EXPECT_TRUE(stats.totalIsEstimate);
    const double exact = rig.fakes[0]->energy(stats.startNs, stats.endNs) +
        rig.fakes[2]->energy(stats.startNs, stats.endNs);
    EXPECT_LT(relativeError(stats.total.energyJ, exact), kEnergyTolerance);
    const EnergyWindow window = s.energy(stats.startNs, stats.endNs);
    EXPECT_TRUE(window.covered);
    EXPECT_LT(relativeError(window.joules, exact), kEnergyTolerance);

    PowerSample last;
    ASSERT_TRUE(s.latest(last));
    EXPECT_EQ(last.onlineMask, 0b111u | kTotalOnlineBit);
    EXPECT_NEAR(last.totalW, last.railW[0] + last.railW[2], 1e-5);
}

TEST(Sampler, UnknownTotalRailFallsBackToTheEstimate)
{
    Rig rig({{"A", kConstant}, {"B", kConstant}}, "VDD_IN", fastOptions());
    EXPECT_TRUE(rig.sampler->totalIsEstimate());
    EXPECT_EQ(rig.sampler->totalName(), "sum of rails");
}

TEST(Sampler, AveragedRailIsIntegratedAsAStaircase)
{
    // RAPL-like: each reading is the mean since the previous one. At 20 Hz on a steep ramp, a
    // trapezoid through the means would lag by half a period: slope·25 ms, about 6% here.
    constexpr double kRailHz = 20.0;
    const Waveform steep = ramp(1.0, 10.0);
    PowerSamplerOptions o = fastOptions();
    o.railHz = kRailHz;
    o.stateHz = kRailHz;
    Rig rig({{"package-0", steep, true}}, "", o);
    PowerSampler& s = *rig.sampler;
    ASSERT_TRUE(s.start().ok());
    sleepMs(500);
    s.stop();
    const PowerRunStats stats = s.runStats();
    ASSERT_GE(stats.railSamples, 5u);

    // On sample times the staircase is exact.
    const double exact = rig.fakes[0]->energy(stats.startNs, stats.endNs);
    EXPECT_LT(relativeError(stats.rails[0].energyJ, exact), 0.001);
    const EnergyWindow whole = s.energy(stats.startNs, stats.endNs, 0);
    EXPECT_TRUE(whole.covered);
    EXPECT_LT(relativeError(whole.joules, exact), 0.001);
    // The total of averaged rails is averaged too.
    EXPECT_LT(relativeError(s.energy(stats.startNs, stats.endNs).joules, exact), 0.001);

    // Between sample times, only the two partial steps at the edges are approximate.
    const int64_t t0 = stats.startNs + 73 * kMs, t1 = stats.endNs - 61 * kMs;
    const EnergyWindow inner = s.energy(t0, t1, 0);
    EXPECT_TRUE(inner.covered);
    EXPECT_LT(relativeError(inner.joules, rig.fakes[0]->energy(t0, t1)), kEnergyTolerance);
}

TEST(Sampler, FailingRailGoesOfflineOthersGoOnAndItComesBack)
{
    test::LogCapture logs("power");
    PowerSamplerOptions o = fastOptions(); // rails every 5 ms, retries every 50 ms
    Rig rig({{"SINE", kSine}, {"FLAT", kConstant}}, "", o);
    PowerSampler& s = *rig.sampler;
    FakeRail& flat = *rig.fakes[1];
    constexpr uint32_t kFlatBit = 1u << 1;
    auto latestMask = [&] {
        PowerSample p;
        return s.latest(p) ? p.onlineMask : 0u;
    };
    ASSERT_TRUE(s.start().ok());
    sleepMs(100);

    const int64_t failedAt = monotonicNs();
    flat.failWith = EIO;
    ASSERT_TRUE(waitFor([&] { return (latestMask() & kFlatBit) == 0; }));
    const PowerRunStats before = s.runStats();
    constexpr int kOfflineMs = 150;
    sleepMs(kOfflineMs);
    const PowerRunStats during = s.runStats();

    // The other rail kept its rate; the failed one is offline, with the error named.
    EXPECT_GT(during.rails[0].samples, before.rails[0].samples + kOfflineMs / 10);
    EXPECT_TRUE(during.rails[1].offline);
    EXPECT_EQ(during.rails[1].lastError, "EIO");
    EXPECT_EQ(during.rails[1].samples, before.rails[1].samples);
    // Retried (reopen, then one read) at the state rate, not read every rail period.
    EXPECT_GT(flat.reopens.load(), 0);
    EXPECT_GE(during.rails[1].errors, 2u);
    EXPECT_LT(during.rails[1].errors, static_cast<uint64_t>(kOfflineMs / 5 / 2));
    EXPECT_EQ(latestMask() & kTotalOnlineBit, 0u); // the sum misses a rail: not a total
    // Logged once, at warn, with the errno's text, however many reads failed.
    EXPECT_EQ(logs.count({"FLAT", "Input/output error", "EIO"}), 1);

    // While it is out, windows up to now are covered for the other rail only.
    const int64_t now = s.latestNs();
    EXPECT_TRUE(s.energy(now - 20 * kMs, now, 0).covered);
    EXPECT_FALSE(s.energy(now - 20 * kMs, now, 1).covered);
    EXPECT_FALSE(s.energy(now - 20 * kMs, now).covered);

    flat.failWith = 0;
    ASSERT_TRUE(waitFor([&] { return (latestMask() & kFlatBit) != 0; }));
    const int64_t backAt = monotonicNs();
    sleepMs(30);
    s.stop();
    const PowerRunStats after = s.runStats();
    EXPECT_FALSE(after.rails[1].offline);
    EXPECT_GT(after.rails[1].samples, during.rails[1].samples);
    EXPECT_EQ(logs.count({"FLAT", "EIO"}), 1);

    // Across the gap, the constant rail's energy is interpolated: exact, and covered.
    const int64_t t0 = failedAt - 50 * kMs, t1 = backAt + 20 * kMs;
    const EnergyWindow gap = s.energy(t0, t1, 1);
    EXPECT_TRUE(gap.covered);
    EXPECT_LT(relativeError(gap.joules, flat.energy(t0, t1)), kEnergyTolerance);
    const EnergyWindow total = s.energy(t0, t1);
    EXPECT_TRUE(total.covered);
    EXPECT_LT(relativeError(total.joules, flat.energy(t0, t1) + rig.fakes[0]->energy(t0, t1)),
        kEnergyTolerance);
}

TEST(Sampler, OptionsAreValidatedNamingTheOption)
{
    struct Case {
        double railHz, stateHz;
        size_t capacity;
        const char* option;
    };
    const Case bad[] = {
        {0.0, 1.0, 64, "railHz"},
        {-5.0, 1.0, 64, "railHz"},
        {1001.0, 1.0, 64, "railHz"},
        {std::nan(""), 1.0, 64, "railHz"},
        {100.0, 0.0, 64, "stateHz"},
        {100.0, 101.0, 64, "stateHz"},
        {100.0, std::nan(""), 64, "stateHz"},
        {100.0, 2.0, 15, "ringCapacity"},
    };
    for (const Case& c : bad) {
        Rig rig({{"A", kConstant}}, "", PowerSamplerOptions {c.railHz, c.stateHz, c.capacity});
        const Status status = rig.sampler->start();
        SCOPED_TRACE(c.option);
        ASSERT_FALSE(status.ok());
        EXPECT_EQ(status.kind(), ErrorKind::InvalidInput);
        EXPECT_NE(status.message().find(c.option), std::string::npos) << status.message();
    }
    // The limits themselves are allowed.
    Rig edge({{"A", kConstant}}, "", PowerSamplerOptions {1000.0, 1000.0, 16});
    EXPECT_TRUE(edge.sampler->start().ok());
    edge.sampler->stop();
}

TEST(Sampler, WarnsWhenFasterThanTheChipRefreshes)
{
    test::LogCapture logs("power");
    constexpr int64_t kChipPeriodNs = 7 * kMs; // the INA3221 driver's default for three channels
    PowerSamplerOptions o = fastOptions(); // 5 ms
    Rig rig({{"VDD_IN", kConstant, false, "", kChipPeriodNs}, {"OTHER", kConstant}}, "", o);
    EXPECT_EQ(rig.sampler->updatePeriodNs(), kChipPeriodNs);
    ASSERT_TRUE(rig.sampler->start().ok());
    rig.sampler->stop();
    EXPECT_EQ(logs.count({"VDD_IN", "refreshes every 7.0 ms", "readings will repeat"}), 1);
    EXPECT_EQ(logs.count({"OTHER"}), 0);

    o.railHz = 100.0; // 10 ms: slower than the chip, nothing to say
    Rig slow({{"VDD_IN", kConstant, false, "", kChipPeriodNs}}, "", o);
    ASSERT_TRUE(slow.sampler->start().ok());
    slow.sampler->stop();
    EXPECT_EQ(logs.count({"VDD_IN"}), 1);
}

TEST(Sampler, StopTakesALastSampleAndIsIdempotent)
{
    Rig rig({{"FLAT", kConstant}}, "", fastOptions());
    PowerSampler& s = *rig.sampler;
    s.stop(); // before start: nothing to do
    PowerSample none;
    EXPECT_FALSE(s.latest(none));
    ASSERT_TRUE(s.start().ok());
    EXPECT_FALSE(s.start().ok()); // a sampler runs once
    sleepMs(50);
    const int64_t stopAt = monotonicNs();
    s.stop();
    // The last sample is taken on the way out, so a window ending at the stop is covered.
    EXPECT_GE(s.latestNs(), stopAt);
    EXPECT_TRUE(s.energy(stopAt - 30 * kMs, stopAt, 0).covered);

    const PowerRunStats first = s.runStats();
    s.stop();
    sleepMs(20);
    const PowerRunStats second = s.runStats();
    EXPECT_EQ(first.railSamples, second.railSamples);
    EXPECT_EQ(first.samplerCpuS, second.samplerCpuS);
}

TEST(Sampler, RingWrapsOldWindowsAreNotCoveredRunStatsKeepTheWholeRun)
{
    PowerSamplerOptions o = fastOptions();
    o.ringCapacity = 16; // 80 ms at 200 Hz
    Rig rig({{"SINE", kSine}}, "", o);
    PowerSampler& s = *rig.sampler;
    ASSERT_TRUE(s.start().ok());
    sleepMs(300);
    s.stop();
    const PowerRunStats stats = s.runStats();
    ASSERT_GT(stats.railSamples, 2 * o.ringCapacity);

    const EnergyWindow old = s.energy(stats.startNs + 10 * kMs, stats.startNs + 50 * kMs, 0);
    EXPECT_FALSE(old.covered);
    EXPECT_EQ(old.joules, 0.0);
    const EnergyWindow recent = s.energy(stats.endNs - 40 * kMs, stats.endNs, 0);
    EXPECT_TRUE(recent.covered);
    EXPECT_LT(
        relativeError(recent.joules, rig.fakes[0]->energy(stats.endNs - 40 * kMs, stats.endNs)),
        kEnergyTolerance);

    // The run's statistics were accumulated sample by sample, not from the ring.
    const double exact = rig.fakes[0]->energy(stats.startNs, stats.endNs);
    EXPECT_LT(relativeError(stats.rails[0].energyJ, exact), kEnergyTolerance);
    EXPECT_EQ(stats.rails[0].samples, stats.railSamples);
}

TEST(Sampler, BadRailIndexGivesAnUncoveredWindow)
{
    Rig rig({{"FLAT", kConstant}}, "", fastOptions());
    ASSERT_TRUE(rig.sampler->start().ok());
    sleepMs(30);
    rig.sampler->stop();
    const int64_t end = rig.sampler->latestNs();
    EXPECT_TRUE(rig.sampler->energy(end - 10 * kMs, end, 0).covered);
    EXPECT_FALSE(rig.sampler->energy(end - 10 * kMs, end, 1).covered);
    EXPECT_FALSE(rig.sampler->energy(end - 10 * kMs, end, -2).covered);
}

// ---- The whole chain: INA3221 hwmon files discovered by discoverRails, rewritten in place ------

constexpr int64_t kMilliVolts =
    5000; // every rail at constant voltage; the current carries the shape
// Same digit count high and low, so that even a read racing a rewrite sees digits of one or the
// other.
constexpr int64_t kSquareLowMa = 1000, kSquareHighMa = 2000;
constexpr int64_t kSquareHalfPeriodNs = 250 * kMs;
constexpr int64_t kRampStartMa = 1000;
constexpr double kRampMaPerS = 600.0; // stays below 10000 mA for the test's length
constexpr int64_t kWriterPeriodNs = 1 * kMs;

double watts(int64_t milliVolts, double milliAmps)
{
    return static_cast<double>(milliVolts) * milliAmps * 1e-6;
}

// Plays a square wave of current into one rail's files and a ramp into another's, from its own
// thread at 1 kHz, and knows the energy of what it played: for the square, from the times its
// edges were actually written; for the ramp, the analytic integral of the continuous ramp.
class WaveformWriter {
public:
    WaveformWriter(test::SysfsFixture& fixture, std::string squareRail, std::string rampRail)
        : fixture_(fixture), squareRail_(std::move(squareRail)), rampRail_(std::move(rampRail))
    {
        edges_.reserve(kMaxEdges);
    }
    ~WaveformWriter() { stop(); }
    WaveformWriter(const WaveformWriter&) = delete;
    WaveformWriter& operator=(const WaveformWriter&) = delete;

    // Writes the first values, then starts the thread.
    Status start()
    {
        originNs_ = monotonicNs();
        if (Status s = fixture_.setRailMilli(squareRail_, kMilliVolts, kSquareHighMa); !s.ok())
            return s;
        edges_.push_back({monotonicNs(), kSquareHighMa});
        if (Status s = fixture_.setRailMilli(rampRail_, kMilliVolts, kRampStartMa); !s.ok())
            return s;
        thread_ = std::thread([this] { run(); });
        return {};
    }
    void stop()
    {
        stop_ = true;
        if (thread_.joinable())
            thread_.join();
    }
    // Valid after stop().
    const std::string& error() const { return error_; }

    double squareEnergy(int64_t t0, int64_t t1) const
    {
        double joules = 0.0;
        for (size_t i = 0; i < edges_.size(); ++i) {
            const int64_t from = std::max(edges_[i].timeNs, t0);
            const int64_t to = std::min(i + 1 < edges_.size() ? edges_[i + 1].timeNs : t1, t1);
            if (to > from)
                joules +=
                    watts(kMilliVolts, static_cast<double>(edges_[i].milliAmps)) * nsToS(to - from);
        }
        return joules;
    }
    double rampEnergy(int64_t t0, int64_t t1) const
    {
        const double a = nsToS(t0 - originNs_), b = nsToS(t1 - originNs_);
        const double milliAmpSeconds =
            static_cast<double>(kRampStartMa) * (b - a) + 0.5 * kRampMaPerS * (b * b - a * a);
        return watts(kMilliVolts, milliAmpSeconds);
    }

private:
    struct Edge {
        int64_t timeNs;
        int64_t milliAmps;
    };
    static constexpr size_t kMaxEdges = 1024;

    void run()
    {
        int64_t next = originNs_;
        int64_t level = kSquareHighMa;
        while (!stop_) {
            next += kWriterPeriodNs;
            const timespec until {
                static_cast<time_t>(next / 1'000'000'000), static_cast<long>(next % 1'000'000'000)};
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr);
            const int64_t now = monotonicNs();
            const int64_t wanted =
                ((now - originNs_) / kSquareHalfPeriodNs) % 2 == 0 ? kSquareHighMa : kSquareLowMa;
            if (wanted != level && edges_.size() < kMaxEdges) {
                if (Status s = fixture_.setRailMilli(squareRail_, kMilliVolts, wanted); !s.ok()) {
                    error_ = s.message();
                    return;
                }
                edges_.push_back({monotonicNs(), wanted}); // once the new current is in the file
                level = wanted;
            }
            const int64_t rampMa = std::llround(
                static_cast<double>(kRampStartMa) + kRampMaPerS * nsToS(now - originNs_));
            if (Status s = fixture_.setRailMilli(rampRail_, kMilliVolts, rampMa); !s.ok()) {
                error_ = s.message();
                return;
            }
        }
    }

    test::SysfsFixture& fixture_;
    std::string squareRail_, rampRail_;
    int64_t originNs_ = 0;
    std::vector<Edge> edges_; // written by the thread, read after stop()
    std::string error_;
    std::atomic<bool> stop_ {false};
    std::thread thread_;
};

// The Orin Nano's one INA3221 with its three rails, discovered as the agent discovers them.
struct FixtureRig {
    std::unique_ptr<test::SysfsFixture> fixture;
    std::unique_ptr<PowerSampler> sampler;
    std::string failure; // why the rig could not be built

    explicit FixtureRig(PowerSamplerOptions options)
    {
        auto created = test::SysfsFixture::create(test::orinNanoJp6());
        if (!created) {
            failure = created.status().message();
            return;
        }
        fixture = std::move(created).value();
        RailDiscovery found = discoverRails(fixture->root(), monotonicNs());
        if (found.rails.size() != 3) {
            failure = "discovered " + std::to_string(found.rails.size()) + " rails, not 3";
            return;
        }
        sampler = std::make_unique<PowerSampler>(
            std::move(found.rails), fixture->board().totalRail, nullptr, options);
    }
};

TEST(Sampler, FixtureInaWaveformsGiveTheAnalyticEnergy)
{
    PowerSamplerOptions o;
    o.railHz = 500.0;
    o.stateHz = 10.0;
    o.ringCapacity = 4096;
    FixtureRig rig(o);
    ASSERT_TRUE(rig.sampler) << rig.failure;
    PowerSampler& s = *rig.sampler;
    ASSERT_EQ(s.rails()[0].name, "VDD_IN");
    ASSERT_EQ(s.rails()[1].name, "VDD_CPU_GPU_CV");
    ASSERT_EQ(s.rails()[2].name, "VDD_SOC");
    EXPECT_EQ(s.totalName(), "VDD_IN");

    WaveformWriter writer(*rig.fixture, "VDD_IN", "VDD_CPU_GPU_CV");
    ASSERT_TRUE(writer.start().ok());
    ASSERT_TRUE(s.start().ok());
    constexpr int kRunMs = 1000; // four edges of the square wave
    sleepMs(kRunMs);
    s.stop();
    writer.stop();
    ASSERT_EQ(writer.error(), "");

    const PowerRunStats stats = s.runStats();
    ASSERT_GT(stats.endNs - stats.startNs, kRunMs / 2 * kMs);
    // VDD_SOC is left as the fixture built it.
    const test::InaChannelSpec& soc = rig.fixture->board().ina3221.at(0).channels[2];
    const double socW = watts(soc.milliVolts, static_cast<double>(soc.milliAmps));
    const std::function<double(int64_t, int64_t)> exact[] = {
        [&](int64_t a, int64_t b) { return writer.squareEnergy(a, b); },
        [&](int64_t a, int64_t b) { return writer.rampEnergy(a, b); },
        [&](int64_t, int64_t) { return 0.0; }};

    // Over the whole run, from the run's statistics and from the ring.
    for (size_t r = 0; r < 3; ++r) {
        SCOPED_TRACE(stats.rails[r].name);
        const double whole = r == 2 ? socW * nsToS(stats.endNs - stats.startNs)
                                    : exact[r](stats.startNs, stats.endNs);
        EXPECT_LT(relativeError(stats.rails[r].energyJ, whole), kEnergyTolerance)
            << stats.rails[r].energyJ << " J measured, " << whole << " J played";
        EXPECT_EQ(stats.rails[r].errors, 0u);

        const int64_t t0 = stats.startNs + 20 * kMs, t1 = stats.endNs - 20 * kMs;
        const EnergyWindow w = s.energy(t0, t1, static_cast<int>(r));
        EXPECT_TRUE(w.covered);
        const double played = r == 2 ? socW * nsToS(t1 - t0) : exact[r](t0, t1);
        EXPECT_LT(relativeError(w.joules, played), kEnergyTolerance)
            << w.joules << " J measured, " << played << " J played";
    }
    EXPECT_NEAR(stats.total.energyJ, stats.rails[0].energyJ, 1e-9);
    EXPECT_NEAR(stats.rails[0].peakW, watts(kMilliVolts, kSquareHighMa), 1e-4);
    EXPECT_NEAR(stats.rails[2].averageW, socW, 1e-4);

    // Frame-sized windows along the ramp.
    for (int64_t offset = 100 * kMs; offset + 200 * kMs < stats.endNs - stats.startNs;
         offset += 200 * kMs) {
        const int64_t t0 = stats.startNs + offset, t1 = t0 + 200 * kMs;
        EXPECT_LT(
            relativeError(s.energy(t0, t1, 1).joules, writer.rampEnergy(t0, t1)), kEnergyTolerance);
    }
}

TEST(Sampler, FixtureRailReadFaultTakesItOfflineAndBack)
{
    PowerSamplerOptions o = fastOptions();
    FixtureRig rig(o);
    ASSERT_TRUE(rig.sampler) << rig.failure;
    PowerSampler& s = *rig.sampler;
    const std::string socCurrent = rig.fixture->tree().rails().at("VDD_SOC").current;
    constexpr uint32_t kSocBit = 1u << 2;
    auto latestMask = [&] {
        PowerSample p;
        return s.latest(p) ? p.onlineMask : 0u;
    };
    ASSERT_TRUE(s.start().ok());
    sleepMs(50);
    ASSERT_EQ(latestMask(), 0b111u | kTotalOnlineBit);

    rig.fixture->setFault(socCurrent, ENODATA); // as an unconnected channel reads
    ASSERT_TRUE(waitFor([&] { return (latestMask() & kSocBit) == 0; }));
    sleepMs(60);
    const PowerRunStats during = s.runStats();
    EXPECT_TRUE(during.rails[2].offline);
    EXPECT_EQ(during.rails[2].lastError, "ENODATA");
    EXPECT_FALSE(during.rails[0].offline);
    // The named total does not depend on the other rails.
    EXPECT_NE(latestMask() & kTotalOnlineBit, 0u);

    rig.fixture->clearFault(socCurrent);
    ASSERT_TRUE(waitFor([&] { return (latestMask() & kSocBit) != 0; }));
    s.stop();
    const PowerRunStats after = s.runStats();
    EXPECT_FALSE(after.rails[2].offline);
    EXPECT_GT(after.rails[2].samples, during.rails[2].samples);
    EXPECT_GT(after.rails[0].samples, during.rails[0].samples);
}

TEST(Sampler, FixtureBoardStateGivesZonesThrottleEventsAndFirstLastState)
{
    auto created = test::SysfsFixture::create(test::orinNanoJp6());
    ASSERT_TRUE(created) << created.status().message();
    test::SysfsFixture& fixture = *created.value();
    // Three zones shown: one that warms up and cools, one steady, one that never reads (EAGAIN).
    BoardProfile profile;
    profile.id = "test";
    profile.thermalZones = {"cpu-thermal", "gpu-thermal", "cv0-thermal"};
    auto state = std::make_unique<BoardStateReader>(fixture.root(), profile);
    ASSERT_EQ(state->zones().size(), 9u);
    ASSERT_EQ(state->zones()[0].type, "cpu-thermal");
    ASSERT_TRUE(state->haveThrottleCounters());
    const std::string cpuTemp = state->zones()[0].directory + "/temp";
    const std::string oc2 = fixture.hwmonDirectory("soctherm_oc") + "/oc2_event_cnt";

    PowerSamplerOptions o = fastOptions(); // state every 50 ms
    PowerSampler s(
        discoverRails(fixture.root(), monotonicNs()).rails, "VDD_IN", std::move(state), o);
    ASSERT_TRUE(s.start().ok());
    // Each value is held for several state periods, so the sampler cannot miss it.
    constexpr int kHoldMs = 150;
    sleepMs(kHoldMs);
    ASSERT_TRUE(fixture.writeValue(cpuTemp, 52000).ok());
    sleepMs(kHoldMs);
    ASSERT_TRUE(fixture.writeValue(cpuTemp, 49500).ok());
    ASSERT_TRUE(fixture.writeValue(oc2, 5).ok()); // from 2: three over-current events
    sleepMs(kHoldMs);
    s.stop();

    BoardStateSample latest;
    ASSERT_TRUE(s.latestState(latest));
    ASSERT_EQ(latest.zones.size(), 9u);
    EXPECT_NEAR(latest.zones[0].celsius, 49.5, 1e-9);

    const PowerRunStats stats = s.runStats();
    ASSERT_EQ(stats.zones.size(), 3u); // shown zones only
    EXPECT_EQ(stats.zones[0].type, "cpu-thermal");
    EXPECT_TRUE(stats.zones[0].everOnline);
    EXPECT_NEAR(stats.zones[0].startC, 47.0, 1e-9);
    EXPECT_NEAR(stats.zones[0].peakC, 52.0, 1e-9);
    EXPECT_NEAR(stats.zones[0].endC, 49.5, 1e-9);
    EXPECT_TRUE(stats.zones[1].everOnline);
    EXPECT_NEAR(stats.zones[1].peakC, 46.5, 1e-9);
    EXPECT_EQ(stats.zones[2].type, "cv0-thermal");
    EXPECT_FALSE(stats.zones[2].everOnline);
    EXPECT_EQ(stats.zones[2].offlineReason, "EAGAIN");

    EXPECT_EQ(stats.throttleEvents[0], 0);
    EXPECT_EQ(stats.throttleEvents[1], 3);
    EXPECT_EQ(stats.throttleEvents[2], 0);
    EXPECT_EQ(stats.first.throttleEvents[1], 2);
    EXPECT_NEAR(stats.first.zones[0].celsius, 47.0, 1e-9);
    EXPECT_NEAR(stats.last.zones[0].celsius, 49.5, 1e-9);
    EXPECT_TRUE(stats.last.haveGpu);
}

// The run's memory peaks and mean/peak loads (what tegrastats prints), from the state samples:
// the fixture's RAM use rises for a while and falls back, its cores turn busy for one interval.
TEST(Sampler, RunStatsGiveMemoryPeaksAndMeanLoads)
{
    fixtures::BoardSpec board = test::orinNanoJp6();
    auto created = test::SysfsFixture::create(board);
    ASSERT_TRUE(created) << created.status().message();
    test::SysfsFixture& fixture = *created.value();
    // Written over in place by one write, never truncated (the reader keeps the file open, and
    // an emptied file would read as damaged): the texts below only ever keep or grow in length.
    auto rewrite = [&](const std::string& absolute, const std::string& text) {
        std::fstream out(fixture.hostPath(absolute), std::ios::in | std::ios::out);
        ASSERT_TRUE(out.is_open()) << absolute;
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
        out.flush();
        ASSERT_TRUE(out.good()) << absolute;
    };
    auto meminfo = [](int64_t availableKB) {
        return "MemTotal:        8000000 kB\nMemFree:          100000 kB\nMemAvailable:    " +
            std::to_string(availableKB) +
            " kB\nSwapTotal:       1000000 kB\nSwapFree:         900000 kB\n";
    };
    { // before the sampler starts: the fixture's own text replaced
        std::ofstream out(fixture.hostPath("/proc/meminfo"), std::ios::trunc);
        out << meminfo(6000000); // 2,000,000 kB used
        ASSERT_TRUE(out.good());
    }

    PowerSamplerOptions o = fastOptions(); // state every 50 ms
    PowerSampler s(discoverRails(fixture.root(), monotonicNs()).rails, "VDD_IN",
        std::make_unique<BoardStateReader>(fixture.root(), BoardProfile {}), o);
    ASSERT_TRUE(s.start().ok());
    constexpr int kHoldMs = 150; // several state periods each
    sleepMs(kHoldMs);
    rewrite("/proc/meminfo", meminfo(5000000)); // 3,000,000 kB used: the peak
    // Every core 25% busy over the next 400 ticks; the counters then stand still again.
    for (fixtures::CpuSpec& cpu : board.cpus) {
        cpu.busyTicks += 100;
        cpu.idleTicks += 300;
    }
    rewrite("/proc/stat", test::procStatText(board));
    sleepMs(kHoldMs);
    rewrite("/proc/meminfo", meminfo(5500000));
    sleepMs(kHoldMs);
    s.stop();

    const LoadRunStats load = s.runStats().load;
    ASSERT_TRUE(load.haveMemory);
    EXPECT_EQ(load.ramTotalKB, 8000000);
    EXPECT_EQ(load.ramUsedPeakKB, 3000000);
    EXPECT_EQ(load.swapTotalKB, 1000000);
    EXPECT_EQ(load.swapUsedPeakKB, 100000);
    // One interval had ticks: only the sample that read it knows the load.
    EXPECT_EQ(load.cpu.samples, 1u);
    EXPECT_NEAR(load.cpu.mean(), 25.0, 1e-6);
    EXPECT_NEAR(load.cpu.peak, 25.0, 1e-6);
    EXPECT_EQ(load.emc.samples, 0u) << "no actmon in this tree";
    BoardStateSample latest;
    ASSERT_TRUE(s.latestState(latest));
    if (latest.haveGpu) {
        EXPECT_GT(load.gpu.samples, 2u);
        EXPECT_NEAR(load.gpu.mean(), latest.gpuLoadPercent, 1e-9)
            << "the fixture's GPU holds still";
    }
}

// stateAt(): the newest state sample at or before a time, from a short bounded history: what the
// power log shows at a row's end, though the sampler has moved on since.
TEST(Sampler, StateAtGivesTheNewestSampleAtOrBeforeATimeFromABoundedHistory)
{
    auto created = test::SysfsFixture::create(test::orinNanoJp6());
    ASSERT_TRUE(created) << created.status().message();
    test::SysfsFixture& fixture = *created.value();
    BoardProfile profile;
    profile.id = "test";
    auto state = std::make_unique<BoardStateReader>(fixture.root(), profile);
    const std::string cpuTemp = state->zones()[0].directory + "/temp";
    PowerSamplerOptions o = fastOptions(); // state every 50 ms
    o.stateHistory = 4;
    PowerSampler s(
        discoverRails(fixture.root(), monotonicNs()).rails, "VDD_IN", std::move(state), o);
    BoardStateSample sample;
    EXPECT_FALSE(s.stateAt(monotonicNs(), sample)) << "none before start";
    ASSERT_TRUE(s.start().ok());
    sleepMs(120);
    const int64_t before = monotonicNs();
    ASSERT_TRUE(fixture.writeValue(cpuTemp, 52000).ok());
    sleepMs(120);

    ASSERT_TRUE(s.stateAt(before, sample));
    EXPECT_LE(sample.timeNs, before);
    EXPECT_GT(sample.timeNs, before - 60'000'000) << "the newest one at or before it";
    EXPECT_NEAR(sample.zones[0].celsius, 47.0, 1e-9) << "the value then, not now";
    ASSERT_TRUE(s.stateAt(monotonicNs(), sample));
    EXPECT_NEAR(sample.zones[0].celsius, 52.0, 1e-9);

    sleepMs(300); // more than four state periods: `before` has left the history
    s.stop();
    EXPECT_FALSE(s.stateAt(before, sample));
}

} // namespace
} // namespace jetagent
