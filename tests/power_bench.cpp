// jetagent_power_bench: what the power sampler costs — one full rail sample in microseconds, and
// the sampler thread's share of one core at its rate — on a fixture INA3221 or a board's own rails.
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "jetagent/base/clock.h"
#include "jetagent/hal/board_identity.h"
#include "jetagent/power/rails.h"
#include "jetagent/power/sampler.h"
#include "sysfs_fixture.h"

namespace jetagent {
namespace {

namespace fs = std::filesystem;

// The targets the sampler is designed to: cheap enough to run at 100 Hz on every board, always.
constexpr double kSampleTargetUs = 50.0; // one full rail sample
constexpr double kCpuTargetPercent = 1.0; // 3 rails at 100 Hz, of one core
constexpr int kWarmupSamples = 200;
constexpr int kMaxTimedSamples = 20000;
constexpr int64_t kMaxTimedNs = 2'000'000'000; // real I2C-backed sysfs reads are far slower
constexpr double kMaxRateHz = 1000.0; // the sampler's own limit
constexpr double kMaxSeconds = 3600.0;
constexpr int kExitBadArguments = 2;
constexpr double kMaxBaselineS = 3.0; // the idle-wakeup baseline need not run as long as (b)

// Linux statfs magic numbers (linux/magic.h), to say what the rail files really are.
constexpr long kSysfsMagic = 0x62656572;
constexpr long kTmpfsMagic = 0x01021994;

std::atomic<bool> g_interrupted {false};

void onSignal(int)
{
    g_interrupted = true;
}

const char* const kUsage =
    R"(usage: jetagent_power_bench [--sysfs-root DIR] [--rate HZ] [--seconds S]

Measures the power sampler's cost:
  (a) one full rail sample (every rail read once): min / median / p99 / max in microseconds,
      nearest-rank percentiles, after a warm-up;
  (b) the sampler thread at its rate: its CPU time over wall time as a share of one core, the
      rate it achieved and the periods it missed (board state is not read: rails only).

options:
  --sysfs-root DIR  read the rails under DIR ("/" for the board's own); default: a fixture tree
                    with one INA3221 of three rails (Orin Nano, JetPack 6 layout), built in a
                    temporary directory under /dev/shm (or $TMPDIR) and removed at exit
  --rate HZ         rail samples per second for (b), in (0, 1000]; default 100
  --seconds S       how long (b) runs; default 10
  --help            this text

Targets: one sample < 50 us; the sampler < 1% of one core (3 rails at 100 Hz). A missed target
is reported as FAIL; the exit code is still 0 when the benchmark ran. Exit 2: bad arguments.
)";

struct Options {
    std::string sysfsRoot; // "" = build a fixture
    double rateHz = 100.0;
    double seconds = 10.0;
};

std::optional<double> parseNumber(const std::string& text)
{
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || errno != 0 || end != text.c_str() + text.size() || !std::isfinite(value))
        return std::nullopt;
    return value;
}

// Fills `options`; on a bad argument returns its message (empty for --help, which exits 0).
std::optional<std::string> parseArguments(int argc, char** argv, Options& options, bool& help)
{
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        std::string value;
        bool hasValue = false;
        if (const auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
            hasValue = true;
        }
        if (arg == "--help" || arg == "-h") {
            help = true;
            return std::nullopt;
        }
        if (arg != "--sysfs-root" && arg != "--rate" && arg != "--seconds")
            return "unknown argument '" + arg + "'";
        if (!hasValue) {
            if (i + 1 >= argc)
                return arg + " needs a value";
            value = argv[++i];
        }
        if (arg == "--sysfs-root") {
            std::error_code ec;
            if (value.empty() || !fs::is_directory(value, ec))
                return "--sysfs-root '" + value + "' is not a directory";
            options.sysfsRoot = value;
        } else if (arg == "--rate") {
            const auto hz = parseNumber(value);
            if (!hz || !(*hz > 0.0 && *hz <= kMaxRateHz))
                return "--rate '" + value + "' must be a number of samples per second in (0, 1000]";
            options.rateHz = *hz;
        } else {
            const auto s = parseNumber(value);
            if (!s || !(*s > 0.0 && *s <= kMaxSeconds))
                return "--seconds '" + value + "' must be a number of seconds in (0, 3600]";
            options.seconds = *s;
        }
    }
    return std::nullopt;
}

// A fixture tree written under a fresh directory, removed when this goes.
class FixtureDirectory {
public:
    ~FixtureDirectory()
    {
        std::error_code ec;
        if (!path_.empty())
            fs::remove_all(path_, ec);
    }
    // Writes `board` under /dev/shm (tmpfs, in memory like sysfs) or else the temp directory.
    Status create(const test::BoardSpec& board)
    {
        std::error_code ec;
        std::string parent = "/dev/shm";
        if (::access(parent.c_str(), W_OK) != 0)
            parent = fs::temp_directory_path(ec).string();
        std::string pattern = parent + "/jetagent-power-bench-XXXXXX";
        if (::mkdtemp(pattern.data()) == nullptr)
            return Status::io(
                "cannot create a directory like " + pattern + ": " + errnoText(errno));
        path_ = pattern;
        return test::lowerBoard(board).write(path_);
    }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

std::string filesystemOf(const std::string& path)
{
    struct statfs info { };
    if (::statfs(path.c_str(), &info) != 0)
        return "unknown (" + errnoText(errno) + ")";
    if (static_cast<long>(info.f_type) == kSysfsMagic)
        return "real sysfs";
    if (static_cast<long>(info.f_type) == kTmpfsMagic)
        return "tmpfs (a fixture, not the kernel's sysfs)";
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%lx", static_cast<unsigned long>(info.f_type));
    return std::string("another filesystem (magic ") + hex + ")";
}

std::string kernelLine()
{
    utsname u {};
    if (::uname(&u) != 0)
        return "unknown";
    return std::string(u.sysname) + " " + u.release + " " + u.machine;
}

// "model name" on x86, else "Hardware" or the ARM part number; with the online CPU count.
std::string cpuLine()
{
    std::ifstream in("/proc/cpuinfo");
    std::string line, model, hardware, part;
    auto valueOf = [](const std::string& l) {
        const auto colon = l.find(':');
        std::string v = colon == std::string::npos ? "" : l.substr(colon + 1);
        v.erase(0, v.find_first_not_of(" \t"));
        return v;
    };
    while (std::getline(in, line)) {
        if (model.empty() && line.rfind("model name", 0) == 0)
            model = valueOf(line);
        else if (hardware.empty() && line.rfind("Hardware", 0) == 0)
            hardware = valueOf(line);
        else if (part.empty() && line.rfind("CPU part", 0) == 0)
            part = "ARM CPU part " + valueOf(line);
    }
    std::string name = !model.empty() ? model : !hardware.empty() ? hardware : part;
    if (name.empty())
        name = "unknown CPU";
    return name + ", " + std::to_string(::sysconf(_SC_NPROCESSORS_ONLN)) + " online";
}

// Nearest rank, as everywhere in jetagent: the ceil(P/100 * N)-th smallest value.
int64_t nearestRank(const std::vector<int64_t>& sorted, double percent)
{
    const double rank = std::ceil(percent / 100.0 * static_cast<double>(sorted.size()));
    const size_t index = static_cast<size_t>(std::max(rank, 1.0)) - 1;
    return sorted[std::min(index, sorted.size() - 1)];
}

double us(int64_t ns)
{
    return static_cast<double>(ns) / 1e3;
}

const char* verdict(bool pass)
{
    return pass ? "PASS" : "FAIL";
}

struct SampleTiming {
    std::vector<int64_t> sortedNs;
    int failedReads = 0;
};

// Reads every rail once per iteration, as the sampler's thread does, timing each iteration.
SampleTiming timeFullSamples(std::vector<std::unique_ptr<PowerRail>>& rails)
{
    SampleTiming timing;
    timing.sortedNs.reserve(kMaxTimedSamples);
    RailReading reading;
    auto sampleOnce = [&] {
        const int64_t now = monotonicNs();
        for (auto& rail : rails)
            timing.failedReads += rail->read(now, reading) != 0 ? 1 : 0;
    };
    for (int i = 0; i < kWarmupSamples && !g_interrupted; ++i)
        sampleOnce();
    timing.failedReads = 0;
    const int64_t until = monotonicNs() + kMaxTimedNs;
    while (timing.sortedNs.size() < static_cast<size_t>(kMaxTimedSamples) && !g_interrupted) {
        const int64_t start = monotonicNs();
        sampleOnce();
        const int64_t end = monotonicNs();
        timing.sortedNs.push_back(end - start);
        if (end > until)
            break;
    }
    std::sort(timing.sortedNs.begin(), timing.sortedNs.end());
    return timing;
}

// A thread that only sleeps to the same absolute deadlines the sampler uses: what waking up at
// the rate costs on this kernel (timer, scheduler, in a VM the exits), with no sampling at all.
double idleWakeupCpuPercent(double rateHz, double seconds)
{
    double cpuS = 0.0, wallS = 0.0;
    std::thread idle([&] {
        const int64_t periodNs = static_cast<int64_t>(std::llround(1e9 / rateHz));
        const int64_t start = monotonicNs();
        const int64_t end = start + static_cast<int64_t>(seconds * 1e9);
        timespec cpu0 {}, cpu1 {};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
        for (int64_t next = start + periodNs; next < end && !g_interrupted; next += periodNs) {
            const timespec until {
                static_cast<time_t>(next / 1'000'000'000), static_cast<long>(next % 1'000'000'000)};
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr);
        }
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
        cpuS = static_cast<double>(cpu1.tv_sec - cpu0.tv_sec) +
            static_cast<double>(cpu1.tv_nsec - cpu0.tv_nsec) * 1e-9;
        wallS = nsToS(monotonicNs() - start);
    });
    idle.join();
    return wallS > 0 ? 100.0 * cpuS / wallS : 0.0;
}

int run(const Options& options)
{
    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);

    FixtureDirectory fixture;
    std::string root = options.sysfsRoot;
    std::string source;
    if (root.empty()) {
        test::BoardSpec board = test::orinNanoJp6();
        if (Status s = fixture.create(board); !s.ok()) {
            std::fprintf(stderr, "jetagent_power_bench: building the fixture tree: %s\n",
                s.message().c_str());
            return 1;
        }
        root = fixture.path();
        source = "fixture: " + board.description + ", written for this run";
    } else {
        source = "given with --sysfs-root";
    }
    const SysfsRoot sysfs(root);

    RailDiscovery found = discoverRails(sysfs, monotonicNs());
    if (found.rails.empty()) {
        std::fprintf(stderr,
            "jetagent_power_bench: no rails found under %s (INA3221, INA2xx, power_supply or "
            "RAPL); point --sysfs-root at a board's root or leave it out for the fixture\n",
            root.c_str());
        return 1;
    }
    if (found.rails.size() > static_cast<size_t>(kMaxRails))
        found.rails.resize(kMaxRails); // as the sampler would

    std::printf("jetagent_power_bench\n");
    std::printf("  root:      %s (%s)\n", root.c_str(), source.c_str());
    std::printf("  files:     %s\n",
        filesystemOf(sysfs.path(found.rails.front()->info().directory)).c_str());
    std::printf("  board:     %s\n", detectBoard(sysfs).describe().c_str());
    std::printf("  kernel:    %s\n", kernelLine().c_str());
    std::printf("  cpu:       %s\n", cpuLine().c_str());
    std::printf("  rails:     %zu\n", found.rails.size());
    for (const auto& rail : found.rails) {
        const RailInfo& i = rail->info();
        char refresh[32] = "unknown";
        if (i.updatePeriodNs > 0)
            std::snprintf(refresh, sizeof refresh, "%.1f ms", nsToMs(i.updatePeriodNs));
        std::printf("    %-16s %-12s %-14s ch%d  chip refresh %s%s\n", i.name.c_str(),
            i.driver.c_str(), i.device.c_str(), i.channel, refresh,
            i.averaged ? "  (averaged)" : "");
    }
    std::printf("  rate:      %.1f Hz (period %.2f ms)\n", options.rateHz, 1e3 / options.rateHz);
    std::printf("  duration:  %.1f s for (b)\n\n", options.seconds);

    const size_t railCount = found.rails.size();

    // (a) One full sample.
    const SampleTiming t = timeFullSamples(found.rails);
    if (t.sortedNs.empty()) {
        std::printf("interrupted before anything was measured\n");
        return 0;
    }
    const double medianUs = us(nearestRank(t.sortedNs, 50));
    const bool samplePass = medianUs < kSampleTargetUs;
    std::printf("(a) one full rail sample (%zu rails read once), %zu samples after %d warm-up\n",
        railCount, t.sortedNs.size(), kWarmupSamples);
    std::printf("    min %.2f us  median %.2f us  p99 %.2f us  max %.2f us\n",
        us(t.sortedNs.front()), medianUs, us(nearestRank(t.sortedNs, 99)), us(t.sortedNs.back()));
    if (t.failedReads > 0)
        std::printf("    %d rail reads failed (an unreadable channel; timed all the same)\n",
            t.failedReads);

    // (b) The sampler thread at the rate.
    PowerSamplerOptions samplerOptions;
    samplerOptions.railHz = options.rateHz;
    samplerOptions.stateHz = std::min(samplerOptions.stateHz, options.rateHz);
    PowerSampler sampler(std::move(found.rails), "", nullptr, samplerOptions);
    if (Status s = sampler.start(); !s.ok()) {
        std::fprintf(stderr, "jetagent_power_bench: %s\n", s.message().c_str());
        return 1;
    }
    const int64_t wallStart = monotonicNs();
    const int64_t wallEnd = wallStart + static_cast<int64_t>(options.seconds * 1e9);
    while (!g_interrupted && monotonicNs() < wallEnd)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    sampler.stop();
    const double wallS = nsToS(monotonicNs() - wallStart);
    const PowerRunStats stats = sampler.runStats();
    const double cpuPercent = 100.0 * stats.samplerCpuS / wallS;
    const double spanS = nsToS(stats.endNs - stats.startNs);
    const double achievedHz = spanS > 0 ? static_cast<double>(stats.railSamples - 1) / spanS : 0.0;
    const bool cpuPass = cpuPercent < kCpuTargetPercent;
    std::printf("\n(b) sampler thread at %.1f Hz for %.2f s%s\n", options.rateHz, wallS,
        g_interrupted ? " (interrupted)" : "");
    std::printf("    cpu %.4f s = %.3f%% of one core  (%.2f us per sample)\n", stats.samplerCpuS,
        cpuPercent,
        stats.railSamples > 0 ? stats.samplerCpuS * 1e6 / static_cast<double>(stats.railSamples)
                              : 0.0);
    std::printf("    samples %llu, achieved %.2f Hz, overruns %llu\n",
        static_cast<unsigned long long>(stats.railSamples), achievedHz,
        static_cast<unsigned long long>(stats.overruns));

    // The same deadlines without the work, to split (b) into waking up and sampling.
    const double baselineS = std::min(options.seconds, kMaxBaselineS);
    const double idlePercent =
        g_interrupted ? 0.0 : idleWakeupCpuPercent(options.rateHz, baselineS);
    if (!g_interrupted)
        std::printf("    baseline: a thread that only sleeps to the same deadlines, %.1f s: %.3f%% "
                    "of one core;\n    so sampling itself is about %.3f%% and waking up %.0f%% of "
                    "(b)\n",
            baselineS, idlePercent, std::max(cpuPercent - idlePercent, 0.0),
            cpuPercent > 0 ? 100.0 * std::min(idlePercent / cpuPercent, 1.0) : 0.0);

    std::printf("\ntargets\n");
    std::printf("  one sample median < %.0f us:            %.2f us  %s\n", kSampleTargetUs,
        medianUs, verdict(samplePass));
    std::printf("  sampler < %.0f%% of one core (3 rails at 100 Hz): %.3f%%  %s%s\n",
        kCpuTargetPercent, cpuPercent, verdict(cpuPass),
        railCount == 3 && options.rateHz == 100.0
            ? ""
            : "  (measured with this run's rails and rate, not the target's)");
    const int missed = (samplePass ? 0 : 1) + (cpuPass ? 0 : 1);
    if (missed == 0)
        std::printf("all targets met\n");
    else
        std::printf("%d target%s missed; the benchmark itself ran, so the exit code is 0\n", missed,
            missed == 1 ? "" : "s");
    return 0;
}

} // namespace
} // namespace jetagent

int main(int argc, char** argv)
{
    jetagent::Options options;
    bool help = false;
    if (const auto error = jetagent::parseArguments(argc, argv, options, help)) {
        std::fprintf(stderr, "jetagent_power_bench: %s\n\n%s", error->c_str(), jetagent::kUsage);
        return jetagent::kExitBadArguments;
    }
    if (help) {
        std::fputs(jetagent::kUsage, stdout);
        return 0;
    }
    spdlog::set_level(spdlog::level::warn); // the sampler's warnings, not its chatter
    return jetagent::run(options);
}
