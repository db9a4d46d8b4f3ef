// power.csv on its own: a PowerLog on the frame-log writer over a sampler whose one rail steps
// from 3 W to 8 W at a known time: rows per slot, their power, rotation and a full disk.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "jetagent/base/clock.h"
#include "jetagent/base/text.h"
#include "jetagent/power/sampler.h"
#include "output/frame_log.h"
#include "output/power_log.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace jetagent {
namespace {

constexpr double kBeforeW = 3.0;
constexpr double kAfterW = 8.0;
constexpr int64_t kMs = 1'000'000;
constexpr int64_t kIntervalNs = 50 * kMs;

// Reads kBeforeW until `stepNs` (CLOCK_MONOTONIC), kAfterW from then on.
class StepRail final : public PowerRail {
public:
    explicit StepRail(const std::atomic<int64_t>& stepNs) : stepNs_(stepNs)
    {
        info_.name = "VDD_IN";
        info_.driver = "test";
        info_.device = "step";
    }
    int read(int64_t nowNs, RailReading& out) override
    {
        const int64_t step = stepNs_.load();
        out.powerW = step > 0 && nowNs >= step ? kAfterW : kBeforeW;
        return 0;
    }
    int reopen() override { return 0; }

private:
    const std::atomic<int64_t>& stepNs_;
};

struct Fixture {
    std::atomic<int64_t> stepNs {0};
    std::unique_ptr<PowerSampler> sampler;

    Fixture()
    {
        std::vector<std::unique_ptr<PowerRail>> rails;
        rails.push_back(std::make_unique<StepRail>(stepNs));
        PowerSamplerOptions options;
        options.railHz = 200.0;
        options.stateHz = 1.0;
        sampler = std::make_unique<PowerSampler>(std::move(rails), "VDD_IN", nullptr, options);
    }
};

// The rows of every power*.csv segment under `dir` in order, each segment's header checked.
std::vector<std::vector<std::string>> rowsOf(const std::string& dir, const std::string& header)
{
    std::vector<std::string> paths;
    for (const auto& entry : fs::directory_iterator(dir))
        if (entry.path().filename().string().rfind("power", 0) == 0)
            paths.push_back(entry.path().string());
    std::sort(paths.begin(), paths.end());
    std::vector<std::vector<std::string>> rows;
    for (const std::string& path : paths) {
        const auto lines = test::readLines(path);
        EXPECT_FALSE(lines.empty()) << path;
        if (lines.empty())
            continue;
        EXPECT_EQ(lines[0], header) << path;
        for (size_t i = 1; i < lines.size(); ++i)
            rows.push_back(splitFields(lines[i], ','));
    }
    return rows;
}

// Runs the sampler and the writer for `runMs`, the rail stepping `stepMs` in.
void run(Fixture& f, FrameLogWriter& writer, int runMs, int stepMs)
{
    ASSERT_TRUE(f.sampler->start().ok());
    writer.start();
    f.stepNs = f.sampler->startNs() + stepMs * kMs;
    std::this_thread::sleep_for(std::chrono::milliseconds(runMs));
    f.sampler->stop(); // as the agent's stop path: the sampler's last sample, then the writer
    writer.stop();
}

TEST(PowerLog, RowsTileTheRunAndFollowTheRail)
{
    test::TempDir dir;
    Fixture f;
    PowerLog log(*f.sampler, kIntervalNs, PowerLogColumns {});
    FrameLogWriter writer;
    ASSERT_TRUE(writer.open(dir.path(), {}, false, false, {}, {&log}).ok());
    run(f, writer, 700, 300);

    const auto rows = rowsOf(dir.path(), "time_ns,t_s,VDD_IN_W,total_W");
    ASSERT_GE(rows.size(), 13u) << "700 ms in slots of 50 ms";
    EXPECT_EQ(log.rowsWritten(), rows.size());
    const int64_t start = f.sampler->startNs();
    const int64_t step = f.stepNs.load();
    double energyJ = 0.0;
    int64_t previous = start;
    for (size_t i = 0; i < rows.size(); ++i) {
        const auto& row = rows[i];
        ASSERT_EQ(row.size(), 4u);
        const int64_t t = std::stoll(row[0]);
        if (i + 1 < rows.size())
            EXPECT_EQ(t - previous, kIntervalNs) << "row " << i;
        else
            EXPECT_LE(t - previous, kIntervalNs) << "the last, partial slot";
        EXPECT_NEAR(std::stod(row[1]), nsToS(t - start), 1e-6);
        const double watts = std::stod(row[2]);
        EXPECT_EQ(row[3], row[2]) << "the rail is the total";
        // A slot wholly before the step reads 3 W, one wholly after it 8 W (one rail period of
        // 5 ms either side for the interpolation between the samples around the step).
        if (t < step - 5 * kMs)
            EXPECT_NEAR(watts, kBeforeW, 1e-3) << "row " << i;
        else if (previous > step + 5 * kMs)
            EXPECT_NEAR(watts, kAfterW, 1e-3) << "row " << i;
        else
            EXPECT_TRUE(watts >= kBeforeW && watts <= kAfterW) << "row " << i;
        energyJ += watts * nsToS(t - previous);
        previous = t;
    }
    EXPECT_EQ(previous, f.sampler->latestNs()) << "the last row ends at the last sample";
    const PowerRunStats stats = f.sampler->runStats();
    EXPECT_NEAR(energyJ, stats.total.energyJ, stats.total.energyJ * 1e-3);
}

TEST(PowerLog, SegmentsRotateWithTheFrameLogsAndKeepEveryRow)
{
    test::TempDir dir;
    Fixture f;
    PowerLog log(*f.sampler, kIntervalNs, PowerLogColumns {});
    FrameLogOptions options;
    options.maxFileBytes = 200; // three or four rows a segment
    FrameLogWriter writer;
    ASSERT_TRUE(writer.open(dir.path(), {}, false, false, options, {&log}).ok());
    run(f, writer, 600, 0);

    EXPECT_TRUE(fs::exists(dir / "power.csv"));
    EXPECT_TRUE(fs::exists(dir / "power_000001.csv"));
    EXPECT_GT(log.segmentsWritten(), 2u);
    const auto rows = rowsOf(dir.path(), "time_ns,t_s,VDD_IN_W,total_W");
    ASSERT_GE(rows.size(), 11u);
    for (size_t i = 1; i + 1 < rows.size(); ++i)
        EXPECT_EQ(std::stoll(rows[i][0]) - std::stoll(rows[i - 1][0]), kIntervalNs) << i;
}

// The power log's segments count in logging.max_total_mb like the frame logs': the oldest go,
// the newest rows stay.
TEST(PowerLog, TheTotalCapRemovesTheOldestSegments)
{
    test::TempDir dir;
    Fixture f;
    PowerLog log(*f.sampler, kIntervalNs, PowerLogColumns {});
    FrameLogOptions options;
    options.root = dir.path();
    options.maxFileBytes = 100; // the header and a row a segment
    options.maxTotalBytes = 400;
    FrameLogWriter writer;
    ASSERT_TRUE(writer.open(dir.path(), {}, false, false, options, {&log}).ok());
    run(f, writer, 600, 0);

    EXPECT_GT(log.segmentsRemoved(), 0u);
    EXPECT_FALSE(fs::exists(dir / "power.csv")) << "the oldest segment went first";
    uint64_t bytes = 0;
    for (const auto& entry : fs::directory_iterator(dir.path()))
        bytes += fs::file_size(entry.path());
    EXPECT_LE(bytes, options.maxTotalBytes);
    const auto rows = rowsOf(dir.path(), "time_ns,t_s,VDD_IN_W,total_W");
    ASSERT_FALSE(rows.empty());
    EXPECT_EQ(std::stoll(rows.back()[0]), f.sampler->latestNs()) << "the newest row stays";
}

// While `full`, every file created is /dev/full, where each write fails with ENOSPC.
class FullDisk : public FrameLogFiles {
public:
    std::atomic<bool> full {true};

    int create(const std::string& path) override
    {
        if (!full)
            return FrameLogFiles::create(path);
        const int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
        return fd >= 0 ? fd : -errno;
    }
};

TEST(PowerLog, AFullDiskDelaysTheRowsAndLosesNone)
{
    if (::access("/dev/full", W_OK) != 0)
        GTEST_SKIP() << "no writable /dev/full here";
    test::TempDir dir;
    Fixture f;
    FullDisk disk;
    PowerLog log(*f.sampler, kIntervalNs, PowerLogColumns {});
    FrameLogOptions options;
    options.files = &disk;
    options.retryNs = 100 * kMs;
    FrameLogWriter writer;
    ASSERT_TRUE(writer.open(dir.path(), {}, false, false, options, {&log}).ok());
    ASSERT_TRUE(f.sampler->start().ok());
    writer.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(1200)); // two write rounds fail
    EXPECT_EQ(log.lastWriteErrno(), ENOSPC);
    EXPECT_EQ(log.rowsWritten(), 0u);
    disk.full = false;
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    f.sampler->stop();
    writer.stop();

    EXPECT_EQ(log.linesDroppedDisk(), 0u);
    const auto rows = rowsOf(dir.path(), "time_ns,t_s,VDD_IN_W,total_W");
    ASSERT_GE(rows.size(), 36u) << "two seconds in slots of 50 ms";
    EXPECT_EQ(std::stoll(rows[0][0]), f.sampler->startNs() + kIntervalNs) << "the first slot";
    for (size_t i = 1; i + 1 < rows.size(); ++i)
        EXPECT_EQ(std::stoll(rows[i][0]) - std::stoll(rows[i - 1][0]), kIntervalNs) << i;
    for (const auto& row : rows)
        EXPECT_NEAR(std::stod(row[2]), kBeforeW, 1e-3) << "covered from the ring";
}

// A disk still full when the run ends: the rows never written are counted as dropped.
TEST(PowerLog, RowsADiskFullToTheEndLostAreCounted)
{
    if (::access("/dev/full", W_OK) != 0)
        GTEST_SKIP() << "no writable /dev/full here";
    test::TempDir dir;
    Fixture f;
    FullDisk disk;
    PowerLog log(*f.sampler, kIntervalNs, PowerLogColumns {});
    FrameLogOptions options;
    options.files = &disk;
    options.retryNs = 100 * kMs;
    FrameLogWriter writer;
    ASSERT_TRUE(writer.open(dir.path(), {}, false, false, options, {&log}).ok());
    run(f, writer, 500, 0);
    EXPECT_EQ(log.rowsWritten(), 0u);
    const int64_t span = f.sampler->latestNs() - f.sampler->startNs();
    EXPECT_EQ(
        log.linesDroppedDisk(), static_cast<uint64_t>((span + kIntervalNs - 1) / kIntervalNs));
}

} // namespace
} // namespace jetagent
