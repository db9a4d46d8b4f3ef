// RAM, swap, largest free block, CPU load, EMC load and engine clocks: the parsers on plain and
// damaged text, and the reader on every fixture board, with faults and rewritten counters.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "jetagent/power/board_state.h"
#include "jetagent/power/system_load.h"
#include "sysfs_fixture.h"

namespace jetagent {
namespace {

using test::BoardSpec;
using test::SysfsFixture;

constexpr double kTolerance = 1e-9;
constexpr int64_t kNowNs = 7000000000;
constexpr int64_t kPageKB = 4;

int parseMem(const std::string& text, MemoryUse& memory)
{
    return parseMeminfo(text.data(), text.size(), memory);
}

int parseBuddy(const std::string& text, LargestFreeBlock& block)
{
    return parseBuddyinfo(text.data(), text.size(), kPageKB, block);
}

int parseStat(const std::string& text, std::array<CpuTimes, kMaxLoadCpus>& cores, int& count)
{
    return parseProcStat(text.data(), text.size(), cores, count);
}

TEST(SystemLoad, MeminfoGivesUsedAsTotalLessAvailable)
{
    MemoryUse m;
    ASSERT_EQ(parseMem("MemTotal:        4059212 kB\nMemFree:          300000 kB\n"
                       "MemAvailable:    2712040 kB\nSwapTotal:       2029604 kB\n"
                       "SwapFree:        2000000 kB\n",
                  m),
        0);
    EXPECT_TRUE(m.online);
    EXPECT_EQ(m.ramTotalKB, 4059212);
    EXPECT_EQ(m.ramUsedKB, 4059212 - 2712040);
    EXPECT_EQ(m.swapTotalKB, 2029604);
    EXPECT_EQ(m.swapUsedKB, 29604);
}

TEST(SystemLoad, MeminfoWithoutSwapHasZeroSwap)
{
    MemoryUse m;
    ASSERT_EQ(parseMem("MemTotal: 1000 kB\nMemAvailable: 400 kB\n", m), 0);
    EXPECT_EQ(m.ramUsedKB, 600);
    EXPECT_EQ(m.swapTotalKB, 0);
    EXPECT_EQ(m.swapUsedKB, 0);
}

TEST(SystemLoad, DamagedMeminfoIsOffline)
{
    MemoryUse m;
    EXPECT_EQ(parseMem("", m), EINVAL);
    EXPECT_FALSE(m.online);
    EXPECT_EQ(parseMem("MemTotal: 1000 kB\n", m), EINVAL) << "no MemAvailable";
    EXPECT_EQ(parseMem("MemTotal: lots\nMemAvailable: 400 kB\n", m), EINVAL);
    EXPECT_EQ(parseMem("MemTotal: 1000 kB\nMemAvailable: 4000 kB\n", m), EINVAL)
        << "more available than there is";
    EXPECT_EQ(parseMem("MemTotalX: 1000 kB\nMemAvailable: 400 kB\n", m), EINVAL);
    EXPECT_FALSE(m.online);
}

TEST(SystemLoad, MeminfoWithDamagedSwapKeepsTheRam)
{
    MemoryUse m;
    ASSERT_EQ(
        parseMem(
            "MemTotal: 1000 kB\nMemAvailable: 400 kB\nSwapTotal: 100 kB\nSwapFree: 900 kB\n", m),
        0);
    EXPECT_EQ(m.ramUsedKB, 600);
    EXPECT_EQ(m.swapTotalKB, 0) << "free swap above the total is not believed";
}

TEST(SystemLoad, BuddyinfoGivesTheHighestOrderAndItsCountOverZones)
{
    LargestFreeBlock b;
    ASSERT_EQ(parseBuddy("Node 0, zone      DMA    412    301    188     97     61     30     18"
                         "      9      4      2     36\n"
                         "Node 0, zone   Normal   1523    812    402    210     98     51     23"
                         "     12      6      3     12\n",
                  b),
        0);
    EXPECT_TRUE(b.online);
    EXPECT_EQ(b.blockKB, kPageKB << 10); // 4 MB, as tegrastats' "lfb 48x4MB"
    EXPECT_EQ(b.count, 48);
}

TEST(SystemLoad, BuddyinfoHighestOrderInOneZoneOnly)
{
    LargestFreeBlock b;
    ASSERT_EQ(parseBuddy("Node 0, zone DMA 5 3 0 0\nNode 0, zone Normal 9 9 2 0\n", b), 0);
    EXPECT_EQ(b.blockKB, kPageKB << 2);
    EXPECT_EQ(b.count, 2);
}

TEST(SystemLoad, BuddyinfoAllEmptyHasNoFreeBlock)
{
    LargestFreeBlock b;
    ASSERT_EQ(parseBuddy("Node 0, zone Normal 0 0 0 0\n", b), 0);
    EXPECT_TRUE(b.online);
    EXPECT_EQ(b.blockKB, 0);
    EXPECT_EQ(b.count, 0);
}

TEST(SystemLoad, DamagedBuddyinfoLinesAreLeftOut)
{
    LargestFreeBlock b;
    EXPECT_EQ(parseBuddy("", b), EINVAL);
    EXPECT_EQ(parseBuddy("garbage\n", b), EINVAL);
    EXPECT_FALSE(b.online);
    EXPECT_EQ(parseBuddy("Node 0, zone Normal 1 2 x 9\n", b), EINVAL);
    // The damaged zone claims order 3; the good one tops out at order 1.
    ASSERT_EQ(parseBuddy("Node 0, zone DMA 1 2 3 4 oops\nNode 0, zone Normal 7 5 0\n", b), 0);
    EXPECT_EQ(b.blockKB, kPageKB << 1);
    EXPECT_EQ(b.count, 5);
}

TEST(SystemLoad, ProcStatIndexesCoresAndSkipsTheAggregate)
{
    std::array<CpuTimes, kMaxLoadCpus> cores;
    int count = 0;
    ASSERT_EQ(parseStat("cpu  900 0 300 5000 100 0 0 0 0 0\n"
                        "cpu0 300 10 100 2000 50 5 5 0 40 0\n"
                        "cpu3 600 0 200 3000 50 0 0 0 0 0\n"
                        "intr 1 2 3\nctxt 99\n",
                  cores, count),
        0);
    EXPECT_EQ(count, 4);
    EXPECT_TRUE(cores[0].valid);
    EXPECT_EQ(cores[0].busy, 300u + 10u + 100u + 5u + 5u) << "guest is inside user already";
    EXPECT_EQ(cores[0].total, cores[0].busy + 2000u + 50u);
    EXPECT_FALSE(cores[1].valid) << "an offline core has no line";
    EXPECT_FALSE(cores[2].valid);
    EXPECT_TRUE(cores[3].valid);
    EXPECT_EQ(cores[3].busy, 800u);
}

TEST(SystemLoad, DamagedProcStatLinesAreLeftOut)
{
    std::array<CpuTimes, kMaxLoadCpus> cores;
    int count = 0;
    EXPECT_EQ(parseStat("", cores, count), EINVAL);
    EXPECT_EQ(parseStat("cpu  1 2 3 4\nintr 5\n", cores, count), EINVAL) << "aggregate only";
    EXPECT_EQ(parseStat("cpu0 1 2 x 4\n", cores, count), EINVAL);
    EXPECT_EQ(parseStat("cpu99 1 2 3 4\n", cores, count), EINVAL) << "beyond the core limit";
    ASSERT_EQ(parseStat("cpu0 1 2\ncpu1 10 0 10 80 0 0 0 0\n", cores, count), 0);
    EXPECT_FALSE(cores[0].valid);
    EXPECT_TRUE(cores[1].valid);
    EXPECT_EQ(count, 2);
}

TEST(SystemLoad, CpuLoadIsTheBusyShareOfTheTicksBetweenReads)
{
    const CpuTimes before {true, 100, 1000};
    const CpuTimes after {true, 125, 1100};
    EXPECT_NEAR(cpuLoadPercent(before, after), 25.0, kTolerance);
    EXPECT_EQ(cpuLoadPercent(CpuTimes {}, after), -1.0) << "no earlier read";
    EXPECT_EQ(cpuLoadPercent(before, CpuTimes {}), -1.0) << "core went offline";
    EXPECT_EQ(cpuLoadPercent(before, before), -1.0) << "no ticks passed";
    EXPECT_EQ(cpuLoadPercent(after, before), -1.0) << "counters went back";
}

TEST(SystemLoad, EmcLoadIsActivityOverTheClock)
{
    EXPECT_NEAR(emcLoadPercent(160000, 1600000000), 10.0, kTolerance);
    EXPECT_EQ(emcLoadPercent(160000, -1), -1.0);
    EXPECT_EQ(emcLoadPercent(160000, 0), -1.0);
    EXPECT_EQ(emcLoadPercent(-1, 1600000000), -1.0);
}

std::unique_ptr<SysfsFixture> build(const BoardSpec& board)
{
    auto fixture = SysfsFixture::create(board);
    EXPECT_TRUE(fixture.ok()) << fixture.status().message();
    return fixture.ok() ? std::move(fixture.value()) : nullptr;
}

void rewrite(const SysfsFixture& fixture, const std::string& absolute, const std::string& text)
{
    std::ofstream out(fixture.hostPath(absolute), std::ios::trunc);
    out << text;
    ASSERT_TRUE(out.good()) << absolute;
}

// What the spec's buddyinfo says the largest free block is.
LargestFreeBlock expectedLargest(const BoardSpec& board)
{
    LargestFreeBlock b;
    int highest = -1;
    for (const auto& [zone, counts] : board.memory.buddyZones)
        for (size_t order = 0; order < counts.size(); ++order)
            if (counts[order] > 0 && static_cast<int>(order) >= highest) {
                if (static_cast<int>(order) > highest)
                    b.count = 0;
                highest = static_cast<int>(order);
                b.count += counts[order];
            }
    b.online = true;
    b.blockKB = highest < 0 ? 0 : kPageKB << highest;
    return b;
}

TEST(SystemLoad, EveryFixtureBoardGivesMemoryLargestBlockEmcAndEngines)
{
    for (const BoardSpec& board : test::fixtureBoards()) {
        SCOPED_TRACE(board.id);
        auto fixture = build(board);
        ASSERT_TRUE(fixture);
        BoardStateReader reader(fixture->root(), BoardProfile {});
        BoardStateSample sample;
        reader.read(kNowNs, sample);
        const SystemLoadSample& load = sample.load;

        ASSERT_TRUE(load.memory.online);
        EXPECT_EQ(load.memory.ramTotalKB, board.memory.totalKB);
        EXPECT_EQ(load.memory.ramUsedKB, board.memory.totalKB - board.memory.availableKB);
        EXPECT_EQ(load.memory.swapTotalKB, board.memory.swapTotalKB);
        EXPECT_EQ(load.memory.swapUsedKB, board.memory.swapTotalKB - board.memory.swapFreeKB);

        const LargestFreeBlock lfb = expectedLargest(board);
        EXPECT_TRUE(load.largestFree.online);
        EXPECT_EQ(load.largestFree.blockKB, lfb.blockKB);
        EXPECT_EQ(load.largestFree.count, lfb.count);
        EXPECT_GT(load.largestFree.count, 0);

        EXPECT_EQ(reader.systemLoad().haveEmcLoad(), !board.actmonPath.empty());
        if (board.actmonPath.empty()) {
            EXPECT_EQ(load.emcLoadPercent, -1.0);
        } else {
            EXPECT_NEAR(load.emcLoadPercent,
                100.0 * static_cast<double>(board.mcAllKHz) /
                    (static_cast<double>(board.emcHz) / 1000.0),
                kTolerance);
            EXPECT_GT(load.emcLoadPercent, 0.0);
            EXPECT_LT(load.emcLoadPercent, 100.0);
        }

        ASSERT_EQ(reader.systemLoad().engines().size(), board.engines.size());
        ASSERT_EQ(load.engines.size(), board.engines.size());
        for (size_t i = 0; i < board.engines.size(); ++i) {
            EXPECT_EQ(reader.systemLoad().engines()[i], board.engines[i].name);
            EXPECT_TRUE(load.engines[i].online);
            EXPECT_EQ(load.engines[i].on, board.engines[i].enableCount > 0);
            EXPECT_EQ(load.engines[i].hz, board.engines[i].rateHz);
        }
    }
}

TEST(SystemLoad, EveryFixtureBoardGivesCpuLoadOnceTheCountersAdvance)
{
    for (const BoardSpec& spec : test::fixtureBoards()) {
        SCOPED_TRACE(spec.id);
        auto fixture = build(spec);
        ASSERT_TRUE(fixture);
        BoardStateReader reader(fixture->root(), BoardProfile {});
        ASSERT_TRUE(reader.systemLoad().haveCpuLoad());
        BoardStateSample sample;
        reader.read(kNowNs, sample);
        ASSERT_EQ(sample.load.cpuCount, static_cast<int>(spec.cpus.size()));
        for (int c = 0; c < sample.load.cpuCount; ++c)
            EXPECT_EQ(sample.load.cpuLoadPercent[static_cast<size_t>(c)], -1.0)
                << "first read: no interval yet, core " << c;

        // Core c spends (10 × (c + 1)) % 100 of the next 200 ticks busy.
        BoardSpec board = spec;
        for (size_t c = 0; c < board.cpus.size(); ++c) {
            const uint64_t busy = 2 * ((10 * (c + 1)) % 100);
            board.cpus[c].busyTicks += busy;
            board.cpus[c].idleTicks += 200 - busy;
        }
        rewrite(*fixture, "/proc/stat", test::procStatText(board));
        reader.read(kNowNs + 1000000000, sample);
        for (size_t c = 0; c < board.cpus.size(); ++c) {
            if (board.cpus[c].online == 0)
                EXPECT_EQ(sample.load.cpuLoadPercent[c], -1.0) << "offline core " << c;
            else
                EXPECT_NEAR(sample.load.cpuLoadPercent[c],
                    static_cast<double>((10 * (c + 1)) % 100), kTolerance)
                    << "core " << c;
        }
    }
}

TEST(SystemLoad, HostWithoutActmonOrEngineClocksHasNeither)
{
    auto fixture = build(test::x86Host());
    ASSERT_TRUE(fixture);
    SystemLoadReader reader(fixture->root());
    EXPECT_FALSE(reader.haveEmcLoad());
    EXPECT_TRUE(reader.engines().empty());
    SystemLoadSample sample;
    reader.read(-1, sample);
    EXPECT_EQ(sample.emcLoadPercent, -1.0);
    EXPECT_TRUE(sample.engines.empty());
}

TEST(SystemLoad, ATreeWithoutProcHasEveryReadingOffline)
{
    test::SysfsTree tree;
    tree.directory("/sys");
    auto fixture = SysfsFixture::create(tree);
    ASSERT_TRUE(fixture.ok()) << fixture.status().message();
    SystemLoadReader reader(fixture.value()->root());
    EXPECT_FALSE(reader.haveMemory());
    EXPECT_FALSE(reader.haveLargestFree());
    EXPECT_FALSE(reader.haveCpuLoad());
    SystemLoadSample sample;
    reader.read(1600000000, sample);
    EXPECT_FALSE(sample.memory.online);
    EXPECT_FALSE(sample.largestFree.online);
    EXPECT_EQ(sample.cpuCount, 0);
    EXPECT_EQ(sample.emcLoadPercent, -1.0);
}

TEST(SystemLoad, FailingFilesAreOfflineAndComeBack)
{
    const BoardSpec board = test::xavierNxJp5();
    auto fixture = build(board);
    ASSERT_TRUE(fixture);
    SystemLoadReader reader(fixture->root());
    ASSERT_FALSE(reader.engines().empty());
    SystemLoadSample sample;
    reader.read(board.emcHz, sample);
    ASSERT_TRUE(sample.memory.online);

    fixture->setFault("/proc/meminfo", EIO);
    fixture->setFault("/proc/buddyinfo", EAGAIN);
    fixture->setFault("/proc/stat", EIO);
    fixture->setFault(board.actmonPath, ENODATA);
    fixture->setFault("/sys/kernel/debug/clk/" + board.engines[0].name + "/clk_enable_count", EIO);
    reader.read(board.emcHz, sample);
    EXPECT_FALSE(sample.memory.online);
    EXPECT_FALSE(sample.largestFree.online);
    EXPECT_EQ(sample.cpuCount, 0);
    EXPECT_EQ(sample.emcLoadPercent, -1.0);
    EXPECT_FALSE(sample.engines[0].online);
    EXPECT_TRUE(sample.engines[1].online) << "one engine failing leaves the others";

    fixture->clearFault("/proc/meminfo");
    fixture->clearFault("/proc/buddyinfo");
    fixture->clearFault("/proc/stat");
    fixture->clearFault(board.actmonPath);
    fixture->clearFault("/sys/kernel/debug/clk/" + board.engines[0].name + "/clk_enable_count");
    reader.read(board.emcHz, sample);
    EXPECT_TRUE(sample.memory.online);
    EXPECT_TRUE(sample.largestFree.online);
    EXPECT_GT(sample.emcLoadPercent, 0.0);
    EXPECT_TRUE(sample.engines[0].online);
    ASSERT_EQ(sample.cpuCount, static_cast<int>(board.cpus.size()));
    EXPECT_EQ(sample.cpuLoadPercent[0], -1.0) << "the read before failed: no interval yet";
}

TEST(SystemLoad, DamagedMeminfoOnDiskIsOfflineNotFatal)
{
    auto fixture = build(test::orinNanoJp6());
    ASSERT_TRUE(fixture);
    rewrite(*fixture, "/proc/meminfo", "MemTotal: banana\n");
    rewrite(*fixture, "/proc/stat", "cpu0 what\n");
    SystemLoadReader reader(fixture->root());
    SystemLoadSample sample;
    reader.read(-1, sample);
    EXPECT_FALSE(sample.memory.online);
    EXPECT_EQ(sample.cpuCount, 0);
    EXPECT_TRUE(sample.largestFree.online);
}

} // namespace
} // namespace jetagent
