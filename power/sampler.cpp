// The power sampler thread: rails at an absolute-deadline rate into a fixed ring, board state at a
// slow rate from the same thread, energy queries and run statistics for readers.
#include "jetagent/power/sampler.h"

#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "jetagent/base/clock.h"
#include "jetagent/base/format.h"
#include "jetagent/base/log.h"
#include "jetagent/base/thread_guard.h"

namespace jetagent {

// Locking: one mutex guards the ring, the run accumulators and the latest board state. The sampler
// takes it once per sample, after all reads, to copy one PowerSample (80 bytes) and update the
// accumulators; readers take it to integrate a window (a binary search, then a walk over the
// window's samples only) or to copy statistics. A per-frame window holds it for well under a
// microsecond; a window over a full 16384-sample ring for about 100 µs, which delays at most one
// rail deadline by that much. A seqlock would spare the sampler even that, but readers would then
// read slots the writer may be overwriting, which C++ calls a data race.
//
// Offline rails: a rail whose read fails leaves its bit clear in the samples it misses. Energy
// queries and the run's accumulated energy skip those samples and interpolate linearly between
// the rail's last reading before the gap and its first after it, so a short outage costs accuracy,
// not the window. A window that ends after the rail's newest valid reading is not covered. The
// estimated total's energy is the sum of its rails' energies, each interpolated across its own
// gaps (interpolating the sum would lose the other rails' readings too); it is covered only when
// every rail's is. A sample's totalW is valid only when all its rails read (kTotalOnlineBit): a sum
// missing a rail would silently read low.
//
// Averaged rails (RAPL): each reading is the mean power since the rail's previous read, so the
// power curve is a staircase — the reading at t_k holds over (t_{k-1}, t_k] — and is integrated as
// one (exact, since RAPL differences an energy counter); a trapezoid through the means would lag
// by half a period.

namespace {

constexpr int64_t kNsPerS = 1'000'000'000;
// The longest single sleep: stop() is noticed within this even at very slow rates.
constexpr int64_t kStopCheckNs = 50'000'000;
constexpr int kMinRingCapacity = 16;
constexpr double kMaxRailHz = 1000.0;

// A rate or count as the user wrote it: "100", "0.5", "nan".
std::string number(double value)
{
    std::string text = formatText("%g", value);
    return text;
}

// The symbolic name of the errors rails report; numbers for the rest.
std::string railErrnoName(int error)
{
    switch (error) {
    case ENODATA: return "ENODATA";
    case EAGAIN: return "EAGAIN";
    case EIO: return "EIO";
    case ENOENT: return "ENOENT";
    case ENODEV: return "ENODEV";
    case ENXIO: return "ENXIO";
    case EBADF: return "EBADF";
    case EINVAL: return "EINVAL";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case EBUSY: return "EBUSY";
    case ETIMEDOUT: return "ETIMEDOUT";
    case EREMOTEIO: return "EREMOTEIO";
    case ENOMEM: return "ENOMEM";
    default: return "errno " + std::to_string(error);
    }
}

timespec toTimespec(int64_t ns)
{
    timespec ts {};
    ts.tv_sec = static_cast<time_t>(ns / kNsPerS);
    ts.tv_nsec = static_cast<long>(ns % kNsPerS);
    return ts;
}

int64_t threadCpuNs(clockid_t clock)
{
    timespec ts {};
    if (clock_gettime(clock, &ts) != 0)
        return 0;
    return static_cast<int64_t>(ts.tv_sec) * kNsPerS + ts.tv_nsec;
}

// One series' running integral, peak and counts over the whole run (not only what the ring holds).
struct Accumulator {
    uint64_t samples = 0;
    uint64_t errors = 0;
    int lastError = 0;
    bool offline = false;
    double energyJ = 0.0;
    double peakW = 0.0;
    int64_t firstNs = -1; // first valid reading; -1 before it
    int64_t lastNs = -1;
    double lastW = 0.0;

    void add(int64_t timeNs, double watts, bool averaged)
    {
        if (firstNs < 0) {
            firstNs = timeNs;
            peakW = watts;
        } else {
            const double dtS = nsToS(timeNs - lastNs);
            energyJ += averaged ? watts * dtS : 0.5 * (lastW + watts) * dtS;
            peakW = std::max(peakW, watts);
        }
        ++samples;
        lastNs = timeNs;
        lastW = watts;
    }

    void fill(RailRunStats& out) const
    {
        out.samples = samples;
        out.errors = errors;
        out.offline = offline;
        out.lastError = lastError != 0 ? railErrnoName(lastError) : std::string();
        out.energyJ = energyJ;
        out.peakW = peakW;
        const int64_t span = lastNs - firstNs;
        // A single reading has no duration: its power is the best average there is.
        out.averageW = firstNs < 0 ? 0.0 : span > 0 ? energyJ / nsToS(span) : lastW;
    }
};

// Energy of one rail over [t0, t1] from the ring, skipping the samples where it was offline. The
// caller holds the lock; `scratch` has the ring's capacity reserved.
EnergyWindow integrateRail(const std::vector<PowerSample>& ring, uint64_t written,
    std::vector<uint32_t>& scratch, int rail, bool averaged, int64_t updateNs, int64_t t0,
    int64_t t1)
{
    if (written == 0 || t1 <= t0) {
        EnergyWindow none;
        none.shorterThanUpdate = updateNs > 0 && t1 - t0 < updateNs;
        return none;
    }
    const uint32_t bit = 1u << rail;
    const uint64_t cap = ring.size();
    const uint64_t oldest = written > cap ? written - cap : 0;
    auto at = [&](uint64_t sequence) -> const PowerSample& { return ring[sequence % cap]; };
    auto valid = [&](uint64_t sequence) { return (at(sequence).onlineMask & bit) != 0; };

    // The last sample at or before t0 (or the oldest), then back to a valid one.
    uint64_t lo = oldest, hi = written; // the first sample after t0 lies in [lo, hi]
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (at(mid).timeNs <= t0)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t first = lo > oldest ? lo - 1 : oldest;
    while (first > oldest && !valid(first))
        --first;

    // Valid samples from there until the first at or after t1.
    scratch.clear();
    int inside = 0;
    for (uint64_t s = first; s < written; ++s) {
        if (!valid(s))
            continue;
        scratch.push_back(static_cast<uint32_t>(s % cap)); // capacity reserved: no allocation
        const int64_t t = ring[scratch.back()].timeNs;
        if (t > t0 && t < t1)
            ++inside;
        if (t >= t1)
            break;
    }
    const size_t n = scratch.size();
    const size_t r = static_cast<size_t>(rail);
    EnergyWindow w;
    if (!averaged) {
        w = integratePower(
            n, [&](size_t i) { return ring[scratch[i]].timeNs; },
            [&](size_t i) { return ring[scratch[i]].railW[r]; }, t0, t1, updateNs);
    } else {
        // A staircase as a piecewise-linear curve: reading k holds from sample k-1 to sample k, as
        // the points (t[k-1], P[k]) and (t[k], P[k]); the vertical steps between have no width.
        const size_t points = n >= 2 ? 2 * (n - 1) : 0;
        w = integratePower(
            points,
            [&](size_t j) {
                const size_t k = j / 2 + 1;
                return ring[scratch[j % 2 == 0 ? k - 1 : k]].timeNs;
            },
            [&](size_t j) { return ring[scratch[j / 2 + 1]].railW[r]; }, t0, t1, updateNs);
    }
    w.samplesInside = inside; // the staircase's doubled points would count twice
    return w;
}

struct ZoneAccumulator {
    bool everOnline = false;
    double startC = 0.0, endC = 0.0, peakC = 0.0;
    const char* offlineReason = "";
};

// One state sample's memory and loads into the run's figures.
void addLoad(const BoardStateSample& s, LoadRunStats& load)
{
    const MemoryUse& memory = s.load.memory;
    if (memory.online) {
        load.haveMemory = true;
        load.ramTotalKB = memory.ramTotalKB;
        load.swapTotalKB = memory.swapTotalKB;
        load.ramUsedPeakKB = std::max(load.ramUsedPeakKB, memory.ramUsedKB);
        load.swapUsedPeakKB = std::max(load.swapUsedPeakKB, memory.swapUsedKB);
    }
    double busy = 0.0;
    int cores = 0;
    for (int c = 0; c < s.load.cpuCount && c < kMaxLoadCpus; ++c) {
        const double percent = s.load.cpuLoadPercent[static_cast<size_t>(c)];
        if (percent >= 0.0) {
            busy += percent;
            ++cores;
        }
    }
    if (cores > 0)
        load.cpu.add(busy / cores);
    if (s.load.emcLoadPercent >= 0.0)
        load.emc.add(s.load.emcLoadPercent);
    if (s.haveGpu)
        load.gpu.add(s.gpuLoadPercent);
}

} // namespace

struct PowerSampler::Impl {
    std::vector<std::unique_ptr<PowerRail>> rails;
    PowerSamplerOptions options;
    std::vector<int> totalParts; // rails summed for the estimated total
    int64_t totalUpdatePeriodNs = 0; // the estimate's: the longest of its rails'

    std::thread thread;
    std::mutex stopMutex; // serialises start() and stop()
    std::atomic<bool> stopRequested {false};
    bool started = false;

    mutable std::mutex mutex; // guards everything below
    std::vector<PowerSample> ring; // slot = sequence % capacity
    uint64_t written = 0; // samples ever written
    int64_t firstSampleNs = 0;
    mutable std::vector<uint32_t> scratch; // ring slots of one query's valid samples
    std::array<Accumulator, kMaxRails> railAccum {};
    Accumulator totalAccum; // the estimate's complete samples: their count and peak
    uint64_t overruns = 0;
    std::vector<ZoneAccumulator> zones;
    LoadRunStats load;
    bool haveState = false;
    BoardStateSample firstState, lastState;
    std::vector<BoardStateSample> stateRing; // the last options.stateHistory state samples
    uint64_t statesWritten = 0;
    bool threadRunning = false;
    clockid_t cpuClock {}; // the sampler thread's CPU clock, readable from any thread
    bool haveCpuClock = false; // else the CPU time is known only once the thread has ended
    int64_t finalCpuNs = 0;

    // Sampler-thread-only state.
    std::array<bool, kMaxRails> online {};
    std::array<bool, kMaxRails> retryPending {};
    std::array<int, kMaxRails> loggedError {}; // errno last logged at warn, to log each cause once
    BoardStateSample stateScratch;

    size_t capacity() const { return ring.size(); }
};

PowerSampler::PowerSampler(std::vector<std::unique_ptr<PowerRail>> rails, std::string totalRail,
    std::unique_ptr<BoardStateReader> state, PowerSamplerOptions options)
    : impl_(std::make_unique<Impl>()), state_(std::move(state))
{
    auto log = logger("power");
    if (rails.size() > static_cast<size_t>(kMaxRails)) {
        log->warn("{} rails found; sampling the first {} only", rails.size(), kMaxRails);
        rails.resize(kMaxRails);
    }
    impl_->rails = std::move(rails);
    impl_->options = options;
    for (const auto& rail : impl_->rails)
        infos_.push_back(rail->info());
    for (size_t r = 0; r < infos_.size(); ++r) {
        updatePeriodNs_ = std::max(updatePeriodNs_, infos_[r].updatePeriodNs);
        if (!totalRail.empty() && infos_[r].name == totalRail && totalIndex_ < 0)
            totalIndex_ = static_cast<int>(r);
    }
    if (totalIndex_ >= 0) {
        totalName_ = totalRail;
        return;
    }
    if (!totalRail.empty() && !infos_.empty())
        log->warn("total rail {} not found among the {} rails; the total is the sum of top-level "
                  "rails (an estimate)",
            totalRail, infos_.size());
    totalName_ = "sum of rails";
    for (size_t r = 0; r < infos_.size(); ++r) {
        if (!infos_[r].parent.empty() || !infos_[r].inTotal)
            continue; // part of another rail, or overlapping one: counting it would count twice
        impl_->totalParts.push_back(static_cast<int>(r));
        impl_->totalUpdatePeriodNs = std::max(impl_->totalUpdatePeriodNs, infos_[r].updatePeriodNs);
    }
}

PowerSampler::~PowerSampler()
{
    stop();
}

Status PowerSampler::start()
{
    const PowerSamplerOptions& o = impl_->options;
    // Written so that NaN fails too.
    if (!(o.railHz > 0.0 && o.railHz <= kMaxRailHz))
        return Status::invalid("power sampler option railHz = " + number(o.railHz) +
            ": must be in (0, 1000] reads per second");
    if (!(o.stateHz > 0.0 && o.stateHz <= o.railHz))
        return Status::invalid("power sampler option stateHz = " + number(o.stateHz) +
            ": must be in (0, railHz = " + number(o.railHz) + "] reads per second");
    if (o.ringCapacity < static_cast<size_t>(kMinRingCapacity))
        return Status::invalid(
            "power sampler option ringCapacity = " + std::to_string(o.ringCapacity) +
            ": must be at least " + std::to_string(kMinRingCapacity) + " samples");
    if (o.stateHistory < 1)
        return Status::invalid("power sampler option stateHistory = 0: must be at least 1");
    if (o.ringCapacity > UINT32_MAX)
        return Status::invalid("power sampler option ringCapacity = " +
            std::to_string(o.ringCapacity) + ": must be at most " + std::to_string(UINT32_MAX));

    std::lock_guard<std::mutex> startStop(impl_->stopMutex);
    if (impl_->started)
        return Status::runtime("the power sampler was already started; a sampler runs once");

    auto log = logger("power");
    const int64_t periodNs = static_cast<int64_t>(std::llround(1e9 / o.railHz));
    for (const RailInfo& info : infos_)
        if (info.updatePeriodNs > periodNs)
            log->warn("{} ({} {}): the chip refreshes every {:.1f} ms, slower than the {:g} Hz "
                      "rail rate; readings will repeat",
                info.name, info.driver, info.device, nsToMs(info.updatePeriodNs), o.railHz);

    {
        std::lock_guard<std::mutex> lock(impl_->mutex);
        // Sized once: the sampler never allocates per sample.
        impl_->ring.assign(o.ringCapacity, PowerSample {});
        impl_->scratch.reserve(o.ringCapacity);
        impl_->written = 0;
        if (state_) {
            impl_->zones.assign(state_->zones().size(), ZoneAccumulator {});
            // Zone vectors sized once too: a state sample copied into a slot reuses its storage.
            BoardStateSample sized;
            sized.zones.resize(state_->zones().size());
            impl_->stateRing.assign(o.stateHistory, sized);
        }
        impl_->statesWritten = 0;
        impl_->load = LoadRunStats {};
    }
    impl_->online.fill(true);
    impl_->retryPending.fill(false);
    impl_->loggedError.fill(0);
    impl_->stopRequested.store(false);
    impl_->started = true;
    impl_->thread = std::thread([this] {
        guardThread(
            "the power sampler", [this] { run(); },
            [](const std::string& why) {
                logger("power")->error(
                    "{}; no more power samples (frames after it have no energy)", why);
            });
    });
    // Return once the first rail sample is in, so that every window that starts after start()
    // returns is covered (the agent's first frame follows at once). A sampler thread that cannot
    // take a sample within a second is not waited for.
    const int64_t giveUp = monotonicNs() + 1'000'000'000;
    while (latestNs() == 0 && monotonicNs() < giveUp)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    return {};
}

void PowerSampler::stop()
{
    std::lock_guard<std::mutex> startStop(impl_->stopMutex);
    impl_->stopRequested.store(true);
    if (impl_->thread.joinable())
        impl_->thread.join();
}

void PowerSampler::run()
{
    Impl& m = *impl_;
    pthread_setname_np(pthread_self(), "jetagent-power");
    {
        std::lock_guard<std::mutex> lock(m.mutex);
        m.haveCpuClock = pthread_getcpuclockid(pthread_self(), &m.cpuClock) == 0;
        m.threadRunning = true;
    }
    const int64_t periodNs = static_cast<int64_t>(std::llround(1e9 / m.options.railHz));
    const int64_t statePeriodNs = static_cast<int64_t>(std::llround(1e9 / m.options.stateHz));
    int64_t next = monotonicNs();
    int64_t nextState = next;
    while (!m.stopRequested.load(std::memory_order_relaxed)) {
        takeRailSample();
        if (monotonicNs() >= nextState) {
            // After the rail sample, so the state's few dozen reads never delay a rail deadline.
            takeStateSample();
            nextState += statePeriodNs;
            const int64_t now = monotonicNs();
            if (nextState <= now)
                nextState = now + statePeriodNs;
        }
        next += periodNs;
        int64_t now = monotonicNs();
        if (now >= next) {
            // Missed deadlines are skipped, not made up with a burst of back-to-back samples.
            const int64_t missed = (now - next) / periodNs + 1;
            next += missed * periodNs;
            std::lock_guard<std::mutex> lock(m.mutex);
            m.overruns += static_cast<uint64_t>(missed);
        }
        while (now < next && !m.stopRequested.load(std::memory_order_relaxed)) {
            const timespec until = toTimespec(std::min(next, now + kStopCheckNs));
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr);
            now = monotonicNs();
        }
    }
    // The last samples: windows that end when stop() was called are covered, and the run's last
    // state is its state at the end, not up to 1/stateHz before it.
    takeRailSample();
    if (state_)
        takeStateSample();
    std::lock_guard<std::mutex> lock(m.mutex);
    m.finalCpuNs = threadCpuNs(CLOCK_THREAD_CPUTIME_ID);
    m.threadRunning = false;
}

void PowerSampler::takeRailSample()
{
    Impl& m = *impl_;
    struct Failure {
        int rail;
        int error;
    };
    std::array<Failure, kMaxRails> failures {};
    std::array<int, kMaxRails> recovered {};
    int failureCount = 0, recoveredCount = 0;
    std::array<int, kMaxRails> readErrors {}; // this sample's error per rail; 0 = read or skipped

    PowerSample sample;
    const int64_t readNs = monotonicNs();
    for (size_t r = 0; r < m.rails.size(); ++r) {
        if (!m.online[r] && !m.retryPending[r])
            continue; // offline rails are retried at the state rate, not every period
        m.retryPending[r] = false;
        RailReading reading;
        const int error = m.rails[r]->read(readNs, reading);
        if (error == 0) {
            sample.railW[r] = static_cast<float>(reading.powerW);
            sample.onlineMask |= 1u << r;
            if (!m.online[r])
                recovered[static_cast<size_t>(recoveredCount++)] = static_cast<int>(r);
            m.online[r] = true;
        } else {
            readErrors[r] = error;
            if (m.online[r] && m.loggedError[r] != error) {
                failures[static_cast<size_t>(failureCount++)] = {static_cast<int>(r), error};
                m.loggedError[r] = error;
            }
            m.online[r] = false;
        }
    }
    sample.timeNs = monotonicNs();

    bool totalValid = false;
    if (totalIndex_ >= 0) {
        totalValid = (sample.onlineMask >> totalIndex_) & 1u;
        sample.totalW = sample.railW[static_cast<size_t>(totalIndex_)];
    } else if (!m.totalParts.empty()) {
        totalValid = true;
        float sum = 0.0f;
        for (int r : m.totalParts) {
            totalValid = totalValid && ((sample.onlineMask >> r) & 1u);
            sum += sample.railW[static_cast<size_t>(r)];
        }
        sample.totalW = sum;
    }
    if (totalValid)
        sample.onlineMask |= kTotalOnlineBit;

    {
        std::lock_guard<std::mutex> lock(m.mutex);
        if (m.written == 0)
            m.firstSampleNs = sample.timeNs;
        m.ring[m.written % m.capacity()] = sample;
        ++m.written;
        for (size_t r = 0; r < m.rails.size(); ++r) {
            Accumulator& a = m.railAccum[r];
            if ((sample.onlineMask >> r) & 1u) {
                a.add(sample.timeNs, sample.railW[r], infos_[r].averaged);
                a.offline = false;
            } else {
                a.offline = true;
                if (readErrors[r] != 0) {
                    ++a.errors;
                    a.lastError = readErrors[r];
                }
            }
        }
        if (totalValid)
            m.totalAccum.add(sample.timeNs, sample.totalW, false);
    }
    latestNs_.store(sample.timeNs, std::memory_order_release);

    // Logged after the lock is released: a slow log sink must not hold up readers.
    if (failureCount + recoveredCount > 0) {
        auto log = logger("power");
        for (int i = 0; i < failureCount; ++i) {
            const RailInfo& info =
                infos_[static_cast<size_t>(failures[static_cast<size_t>(i)].rail)];
            const int error = failures[static_cast<size_t>(i)].error;
            log->warn("{} ({} {}): read failed: {} ({}); rail offline, retried every {:.1f} s",
                info.name, info.driver, info.device, errnoText(error), railErrnoName(error),
                1.0 / m.options.stateHz);
        }
        for (int i = 0; i < recoveredCount; ++i) {
            const RailInfo& info = infos_[static_cast<size_t>(recovered[static_cast<size_t>(i)])];
            log->info("{} ({} {}): back online", info.name, info.driver, info.device);
        }
    }
}

void PowerSampler::takeStateSample()
{
    Impl& m = *impl_;
    for (size_t r = 0; r < m.rails.size(); ++r)
        if (!m.online[r])
            m.retryPending[r] = m.rails[r]->reopen() == 0; // the next rail sample tries a read
    if (!state_)
        return;
    BoardStateSample& s = m.stateScratch;
    state_->read(monotonicNs(), s);

    std::lock_guard<std::mutex> lock(m.mutex);
    if (!m.haveState)
        m.firstState = s;
    m.lastState = s; // same sizes each time: the vectors' storage is reused
    m.haveState = true;
    m.stateRing[m.statesWritten % m.stateRing.size()] = s;
    ++m.statesWritten;
    const size_t zoneCount = std::min(m.zones.size(), s.zones.size());
    for (size_t z = 0; z < zoneCount; ++z) {
        ZoneAccumulator& a = m.zones[z];
        const ZoneReading& reading = s.zones[z];
        if (!reading.online) {
            if (!a.everOnline)
                a.offlineReason = reading.offlineReason;
            continue;
        }
        if (!a.everOnline) {
            a.everOnline = true;
            a.startC = a.peakC = reading.celsius;
        }
        a.endC = reading.celsius;
        a.peakC = std::max(a.peakC, reading.celsius);
    }
    addLoad(s, m.load);
}

EnergyWindow PowerSampler::energy(int64_t t0, int64_t t1, int rail) const
{
    if (rail < -1 || rail >= static_cast<int>(infos_.size()))
        return {};
    const Impl& m = *impl_;
    std::lock_guard<std::mutex> lock(m.mutex);
    auto integrate = [&](int r) {
        const RailInfo& info = infos_[static_cast<size_t>(r)];
        return integrateRail(
            m.ring, m.written, m.scratch, r, info.averaged, info.updatePeriodNs, t0, t1);
    };
    if (rail >= 0)
        return integrate(rail);
    if (totalIndex_ >= 0)
        return integrate(totalIndex_);

    EnergyWindow sum;
    sum.shorterThanUpdate = m.totalUpdatePeriodNs > 0 && t1 - t0 < m.totalUpdatePeriodNs;
    if (m.totalParts.empty())
        return sum;
    sum.covered = true;
    sum.samplesInside = INT32_MAX;
    for (int r : m.totalParts) {
        const EnergyWindow w = integrate(r);
        sum.joules += w.joules;
        sum.covered = sum.covered && w.covered;
        sum.samplesInside = std::min(sum.samplesInside, w.samplesInside);
    }
    return sum;
}

bool PowerSampler::latest(PowerSample& out) const
{
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (impl_->written == 0)
        return false;
    out = impl_->ring[(impl_->written - 1) % impl_->capacity()];
    return true;
}

bool PowerSampler::latestState(BoardStateSample& out) const
{
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (!impl_->haveState)
        return false;
    out = impl_->lastState;
    return true;
}

bool PowerSampler::stateAt(int64_t timeNs, BoardStateSample& out) const
{
    const Impl& m = *impl_;
    std::lock_guard<std::mutex> lock(m.mutex);
    const uint64_t cap = m.stateRing.size();
    const uint64_t oldest = m.statesWritten > cap ? m.statesWritten - cap : 0;
    for (uint64_t s = m.statesWritten; s > oldest; --s) {
        const BoardStateSample& sample = m.stateRing[(s - 1) % cap];
        if (sample.timeNs <= timeNs) {
            out = sample;
            return true;
        }
    }
    return false;
}

int64_t PowerSampler::startNs() const
{
    std::lock_guard<std::mutex> lock(impl_->mutex);
    return impl_->written > 0 ? impl_->firstSampleNs : 0;
}

PowerRunStats PowerSampler::runStats() const
{
    const Impl& m = *impl_;
    PowerRunStats stats;
    std::array<Accumulator, kMaxRails> rails {};
    Accumulator total;
    std::vector<ZoneAccumulator> zones;
    bool haveState = false;
    {
        std::lock_guard<std::mutex> lock(m.mutex);
        rails = m.railAccum;
        total = m.totalAccum;
        zones = m.zones;
        haveState = m.haveState;
        if (haveState) {
            stats.first = m.firstState;
            stats.last = m.lastState;
        }
        stats.load = m.load;
        if (m.written > 0) {
            stats.startNs = m.firstSampleNs;
            stats.endNs = m.ring[(m.written - 1) % m.capacity()].timeNs;
        }
        stats.railSamples = m.written;
        stats.overruns = m.overruns;
        // While the thread runs it cannot exit: it clears threadRunning under this lock first.
        const int64_t cpuNs = !m.threadRunning ? m.finalCpuNs
            : m.haveCpuClock                   ? threadCpuNs(m.cpuClock)
                                               : 0;
        stats.samplerCpuS = nsToS(cpuNs);
    }
    for (size_t r = 0; r < infos_.size(); ++r) {
        RailRunStats rs;
        rs.name = infos_[r].name;
        rails[r].fill(rs);
        stats.rails.push_back(std::move(rs));
    }
    stats.totalIsEstimate = totalIsEstimate();
    if (totalIndex_ >= 0) {
        stats.total = stats.rails[static_cast<size_t>(totalIndex_)];
    } else {
        // The sum of the rails' own integrals and averages, each across its own gaps; the count
        // and peak are those of the samples in which every rail read.
        total.fill(stats.total);
        stats.total.energyJ = 0.0;
        stats.total.averageW = 0.0;
        for (int r : m.totalParts) {
            const RailRunStats& part = stats.rails[static_cast<size_t>(r)];
            stats.total.energyJ += part.energyJ;
            stats.total.averageW += part.averageW;
            stats.total.errors += part.errors;
            if (part.offline) {
                stats.total.offline = true;
                stats.total.lastError = part.lastError;
            }
        }
    }
    stats.total.name = totalName_;

    if (state_) {
        const auto& infos = state_->zones();
        for (size_t z = 0; z < infos.size() && z < zones.size(); ++z) {
            if (!infos[z].shown)
                continue;
            ZoneRunStats zs;
            zs.type = infos[z].type;
            zs.everOnline = zones[z].everOnline;
            zs.startC = zones[z].startC;
            zs.endC = zones[z].endC;
            zs.peakC = zones[z].peakC;
            if (!zs.everOnline)
                zs.offlineReason = zones[z].offlineReason;
            stats.zones.push_back(std::move(zs));
        }
    }
    if (haveState)
        for (size_t k = 0; k < stats.throttleEvents.size(); ++k)
            if (stats.first.throttleEvents[k] >= 0 && stats.last.throttleEvents[k] >= 0)
                stats.throttleEvents[k] =
                    stats.last.throttleEvents[k] - stats.first.throttleEvents[k];
    return stats;
}

} // namespace jetagent
