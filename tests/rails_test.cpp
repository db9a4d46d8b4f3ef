// Power-rail discovery and reading against fixture sysfs trees of six boards (and Thor).
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <thread>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "jetagent/power/rails.h"
#include "sysfs_fixture.h"

namespace jetagent {
namespace {

using test::BoardSpec;
using test::SysfsFixture;

constexpr double kWattsTolerance = 1e-9;
constexpr int64_t kNsPerSecond = 1000000000;
constexpr int64_t kDiscoveryNs = 1000 * kNsPerSecond;
constexpr int64_t kIna3221UpdateNs = 7 * 1000000; // update_interval 7 ms
// Seeds that give different hwmon numberings; discovery must not care which.
constexpr uint32_t kSeeds[] = {test::kDefaultHwmonSeed, 1, 2, 977};

std::unique_ptr<SysfsFixture> build(const BoardSpec& board, uint32_t seed = test::kDefaultHwmonSeed)
{
    auto fixture = SysfsFixture::create(board, seed);
    EXPECT_TRUE(fixture.ok()) << fixture.status().message();
    return fixture.ok() ? std::move(fixture.value()) : nullptr;
}

const PowerRail* findRail(const RailDiscovery& found, const std::string& name)
{
    for (const auto& rail : found.rails)
        if (rail->info().name == name)
            return rail.get();
    return nullptr;
}

PowerRail* findRail(RailDiscovery& found, const std::string& name)
{
    for (auto& rail : found.rails)
        if (rail->info().name == name)
            return rail.get();
    return nullptr;
}

// The skipped line that starts with `prefix`; "" when none or more than one does.
std::string skippedLine(const RailDiscovery& found, const std::string& prefix)
{
    std::string match;
    int count = 0;
    for (const std::string& line : found.skipped)
        if (line.compare(0, prefix.size(), prefix) == 0) {
            match = line;
            ++count;
        }
    return count == 1 ? match : std::string();
}

void expectExactlyTheBoardsRails(const SysfsFixture& fixture, const RailDiscovery& found)
{
    EXPECT_TRUE(std::is_sorted(found.skipped.begin(), found.skipped.end()))
        << "skipped lines come in a stable order: " << ::testing::PrintToString(found.skipped);
    const BoardSpec& board = fixture.board();
    ASSERT_EQ(found.rails.size(), board.expectedRails.size());
    for (size_t i = 0; i < board.expectedRails.size(); ++i) {
        const test::ExpectedRail& want = board.expectedRails[i];
        const RailInfo& got = found.rails[i]->info();
        SCOPED_TRACE(board.id + " rail " + want.name);
        EXPECT_EQ(got.name, want.name);
        EXPECT_EQ(got.driver, want.driver);
        EXPECT_EQ(got.device, want.device);
        EXPECT_EQ(got.channel, want.channel);
        EXPECT_EQ(got.parent, want.parent);
        EXPECT_EQ(got.averaged, got.driver == "intel-rapl");
        // Rails under hwmon are reported by their (shuffled) class directory.
        const std::string hwmon = fixture.hwmonDirectory(want.device);
        if (!hwmon.empty()) {
            EXPECT_EQ(got.directory, hwmon);
        }
    }
    ASSERT_EQ(found.skipped.size(), board.expectedSkipped.size())
        << "skipped: " << ::testing::PrintToString(found.skipped);
    for (const std::string& prefix : board.expectedSkipped)
        EXPECT_FALSE(skippedLine(found, prefix).empty())
            << "no single skipped line starts with " << prefix;
}

class RailsOnBoard : public ::testing::TestWithParam<BoardSpec> { };

TEST_P(RailsOnBoard, DiscoversExactlyTheExpectedRailsWhateverTheHwmonNumbering)
{
    for (const uint32_t seed : kSeeds) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        auto fixture = build(GetParam(), seed);
        ASSERT_TRUE(fixture);
        const RailDiscovery found = discoverRails(fixture->root(), kDiscoveryNs);
        expectExactlyTheBoardsRails(*fixture, found);
    }
}

TEST_P(RailsOnBoard, FirstReadingsMatchTheFixtureValues)
{
    auto fixture = build(GetParam());
    ASSERT_TRUE(fixture);
    RailDiscovery found = discoverRails(fixture->root(), kDiscoveryNs);
    ASSERT_EQ(found.rails.size(), GetParam().expectedRails.size());
    for (size_t i = 0; i < found.rails.size(); ++i) {
        const test::ExpectedRail& want = GetParam().expectedRails[i];
        if (found.rails[i]->info().averaged)
            continue; // RAPL: see the wrap tests
        RailReading reading;
        ASSERT_EQ(found.rails[i]->read(kDiscoveryNs + kNsPerSecond, reading), 0) << want.name;
        EXPECT_NEAR(reading.powerW, want.watts, kWattsTolerance) << want.name;
    }
}

TEST_P(RailsOnBoard, TotalRailIsDiscoveredWhereTheBoardHasOne)
{
    // Module-input rails by the names the boards give them.
    const std::string inputNames[] = {"VDD_IN", "POM_5V_IN", "VIN"};
    const BoardSpec& board = GetParam();
    auto fixture = build(board);
    ASSERT_TRUE(fixture);
    const RailDiscovery found = discoverRails(fixture->root(), kDiscoveryNs);
    if (!board.totalRail.empty()) {
        EXPECT_NE(findRail(found, board.totalRail), nullptr);
        return;
    }
    // No total rail (AGX Orin, hosts): nothing discovered may pass for one.
    for (const std::string& name : inputNames)
        EXPECT_EQ(findRail(found, name), nullptr) << name;
}

std::string boardName(const ::testing::TestParamInfo<BoardSpec>& info)
{
    std::string name = info.param.id;
    std::replace(name.begin(), name.end(), '-', '_');
    return name;
}

INSTANTIATE_TEST_SUITE_P(
    RailsBoards, RailsOnBoard, ::testing::ValuesIn(test::allBoards()), boardName);

TEST(Rails, ThorCarrierIna238IsFoundBesideTheModuleIna3221)
{
    for (const uint32_t seed : kSeeds) {
        auto fixture = build(test::thorJp7(), seed);
        ASSERT_TRUE(fixture);
        expectExactlyTheBoardsRails(*fixture, discoverRails(fixture->root(), kDiscoveryNs));
    }
}

TEST(Rails, Ina238PowerComesFromItsMicrowattRegister)
{
    constexpr double kCarrierWatts = 11.412; // power1_input 11412000 µW
    constexpr double kCarrierVolts = 19.0;
    constexpr double kCarrierAmps = 0.6;
    auto fixture = build(test::thorJp7());
    ASSERT_TRUE(fixture);
    RailDiscovery found = discoverRails(fixture->root(), kDiscoveryNs);
    PowerRail* carrier = findRail(found, "ina238");
    ASSERT_NE(carrier, nullptr);
    EXPECT_TRUE(carrier->info().hasVoltageCurrent);
    RailReading reading;
    ASSERT_EQ(carrier->read(kDiscoveryNs, reading), 0);
    EXPECT_NEAR(reading.powerW, kCarrierWatts, kWattsTolerance);
    EXPECT_NEAR(reading.voltageV, kCarrierVolts, kWattsTolerance);
    EXPECT_NEAR(reading.currentA, kCarrierAmps, kWattsTolerance);
}

TEST(Rails, Ina2xxNamesGainTheirDeviceWhenTheChipNameRepeats)
{
    constexpr int kSecondAddress = 0x45;
    BoardSpec board = test::thorJp7();
    test::Ina2xxSpec second = board.ina2xx[0];
    second.address = kSecondAddress;
    board.ina2xx.push_back(second);
    auto fixture = build(board);
    ASSERT_TRUE(fixture);
    const RailDiscovery found = discoverRails(fixture->root(), kDiscoveryNs);
    EXPECT_NE(findRail(found, "ina238-1-0044"), nullptr);
    EXPECT_NE(findRail(found, "ina238-1-0045"), nullptr);
    EXPECT_EQ(findRail(found, "ina238"), nullptr);
}

TEST(Rails, HwmonPowerIsVoltageTimesCurrent)
{
    constexpr int64_t kMilliVolts = 5104;
    constexpr int64_t kMilliAmps = 1875;
    constexpr double kWatts = 5.104 * 1.875;
    auto fixture = build(test::orinNanoJp6());
    ASSERT_TRUE(fixture);
    RailDiscovery found = discoverRails(fixture->root(), kDiscoveryNs);
    PowerRail* input = findRail(found, "VDD_IN");
    ASSERT_NE(input, nullptr);
    EXPECT_TRUE(input->info().hasVoltageCurrent);
    ASSERT_TRUE(fixture->setRailMilli("VDD_IN", kMilliVolts, kMilliAmps).ok());
    RailReading reading;
    ASSERT_EQ(input->read(kDiscoveryNs, reading), 0);
    EXPECT_NEAR(reading.voltageV, 5.104, kWattsTolerance);
    EXPECT_NEAR(reading.currentA, 1.875, kWattsTolerance);
    EXPECT_NEAR(reading.powerW, kWatts, kWattsTolerance);
}

TEST(Rails, LegacyIioPowerIsTheDriversOwnFigure)
{
    // nanoJp4's POM_5V_IN: 5000 mV and 1000 mA, but in_power0_input reads 5048 mW.
    constexpr double kDriverWatts = 5.048;
    constexpr double kVoltsTimesAmps = 5.0;
    auto fixture = build(test::nanoJp4());
    ASSERT_TRUE(fixture);
    RailDiscovery found = discoverRails(fixture->root(), kDiscoveryNs);
    PowerRail* input = findRail(found, "POM_5V_IN");
    ASSERT_NE(input, nullptr);
    RailReading reading;
    ASSERT_EQ(input->read(kDiscoveryNs, reading), 0);
    EXPECT_NEAR(reading.powerW, kDriverWatts, kWattsTolerance);
    EXPECT_NEAR(reading.voltageV * reading.currentA, kVoltsTimesAmps, kWattsTolerance);
    EXPECT_EQ(input->info().updatePeriodNs, 0) << "the legacy driver does not expose its period";
}

TEST(Rails, UpdatePeriodComesFromUpdateInterval)
{
    auto fixture = build(test::xavierNxJp5());
    ASSERT_TRUE(fixture);
    const RailDiscovery found = discoverRails(fixture->root(), kDiscoveryNs);
    ASSERT_FALSE(found.rails.empty());
    for (const auto& rail : found.rails)
        EXPECT_EQ(rail->info().updatePeriodNs, kIna3221UpdateNs) << rail->info().name;
}

TEST(Rails, NcChannelsAreSkippedAndTheirInputsFailWithEnodata)
{
    auto fixture = build(test::agxOrinJp5());
    ASSERT_TRUE(fixture);
    const RailDiscovery found = discoverRails(fixture->root(), kDiscoveryNs);
    EXPECT_NE(skippedLine(found, "1-0041 in1").find("NC"), std::string::npos);
    EXPECT_NE(skippedLine(found, "1-0041 in3").find("NC"), std::string::npos);
    EXPECT_EQ(findRail(found, "NC"), nullptr);
    // The quirk the skip avoids: reading an NC channel fails.
    const std::string hwmon = fixture->hwmonDirectory("1-0041");
    ASSERT_FALSE(hwmon.empty());
    SysfsAttribute input;
    ASSERT_EQ(input.open(fixture->hostPath(hwmon + "/in1_input")), 0);
    int64_t value = 0;
    EXPECT_EQ(input.readInt(value), ENODATA);
}

TEST(Rails, ShuntSumChannelIsNotARail)
{
    auto fixture = build(test::agxOrinJp5());
    ASSERT_TRUE(fixture);
    const RailDiscovery found = discoverRails(fixture->root(), kDiscoveryNs);
    for (const char* chip : {"1-0040 in7", "1-0041 in7"})
        EXPECT_NE(skippedLine(found, chip).find("sum of shunt voltages"), std::string::npos)
            << chip;
    EXPECT_EQ(findRail(found, "sum of shunt voltages"), nullptr);
}

TEST(Rails, UsbPowerDeliverySuppliesAreSkipped)
{
    for (const BoardSpec& board : {test::agxOrinJp5(), test::x86Host(), test::xavierNxJp5()}) {
        auto fixture = build(board);
        ASSERT_TRUE(fixture);
        const RailDiscovery found = discoverRails(fixture->root(), kDiscoveryNs);
        for (const auto& rail : found.rails)
            EXPECT_FALSE(rail->info().name.rfind("ucsi-source-psy-", 0) == 0 ||
                rail->info().name == "usb-charger")
                << rail->info().name;
        for (const std::string& line : found.skipped)
            if (line.rfind("ucsi", 0) == 0 || line.rfind("usb-charger", 0) == 0) {
                EXPECT_NE(line.find("USB-PD"), std::string::npos) << line;
            }
    }
}

TEST(Rails, PowerSupplyWithPowerNowReadsMicrowatts)
{
    constexpr int64_t kPowerNowUw = 7250000;
    constexpr double kWatts = 7.25;
    BoardSpec board = test::x86Host();
    for (test::PowerSupplySpec& supply : board.powerSupplies)
        if (supply.name == "BAT0") {
            supply.powerNowUw = kPowerNowUw;
            supply.voltageNowUv = -1;
            supply.currentNowUa = -1;
        }
    auto fixture = build(board);
    ASSERT_TRUE(fixture);
    RailDiscovery found = discoverRails(fixture->root(), kDiscoveryNs);
    PowerRail* battery = findRail(found, "BAT0");
    ASSERT_NE(battery, nullptr);
    EXPECT_FALSE(battery->info().hasVoltageCurrent);
    RailReading reading;
    ASSERT_EQ(battery->read(kDiscoveryNs, reading), 0);
    EXPECT_NEAR(reading.powerW, kWatts, kWattsTolerance);
}

TEST(Rails, RaplMmioDuplicateIsSkipped)
{
    auto fixture = build(test::x86Host());
    ASSERT_TRUE(fixture);
    const RailDiscovery found = discoverRails(fixture->root(), kDiscoveryNs);
    EXPECT_NE(skippedLine(found, "intel-rapl-mmio:0").find("duplicate"), std::string::npos);
    int packages = 0;
    for (const auto& rail : found.rails)
        packages += rail->info().name == "package-0" ? 1 : 0;
    EXPECT_EQ(packages, 1);
}

TEST(Rails, RaplPermissionDeniedIsSkippedWithTheReason)
{
    BoardSpec board = test::x86Host();
    for (test::RaplZoneSpec& zone : board.rapl)
        if (zone.name == "psys")
            zone.permissionDenied = true;
    auto fixture = build(board);
    ASSERT_TRUE(fixture);
    const RailDiscovery found = discoverRails(fixture->root(), kDiscoveryNs);
    EXPECT_EQ(findRail(found, "psys"), nullptr);
    const std::string line = skippedLine(found, "intel-rapl:1");
    EXPECT_NE(line.find("permission denied"), std::string::npos) << line;
    EXPECT_NE(findRail(found, "package-0"), nullptr);
}

TEST(Rails, RaplEnergyDeltaHandlesOneWrap)
{
    constexpr uint64_t kRange = 262143328850;
    EXPECT_EQ(raplEnergyDeltaUj(1000, 4000, kRange), 3000u);
    EXPECT_EQ(raplEnergyDeltaUj(5, 5, kRange), 0u);
    EXPECT_EQ(raplEnergyDeltaUj(kRange - 1500000, 500000, kRange), 2000000u);
    EXPECT_EQ(raplEnergyDeltaUj(kRange, 0, kRange), 0u);
    // A range of 0 (unreadable) or a previous value beyond it cannot be unwrapped: count from 0.
    EXPECT_EQ(raplEnergyDeltaUj(9000, 100, 0), 100u);
    EXPECT_EQ(raplEnergyDeltaUj(kRange + 10, 100, kRange), 100u);
}

TEST(Rails, RaplReadIsTheMeanPowerSinceTheLastReadAcrossAWrap)
{
    // x86Host's package-0 counter starts 1.5 J below its range.
    constexpr uint64_t kRange = 262143328850;
    constexpr uint64_t kAfterWrapUj = 500000; // 1.5 J before the wrap + 0.5 J after = 2 J
    constexpr double kWrapWatts = 2.0; // over one second
    constexpr uint64_t kLaterUj = kAfterWrapUj + 3000000; // 3 J in half a second
    constexpr double kLaterWatts = 6.0;
    auto fixture = build(test::x86Host());
    ASSERT_TRUE(fixture);
    RailDiscovery found = discoverRails(fixture->root(), kDiscoveryNs);
    PowerRail* package = findRail(found, "package-0");
    ASSERT_NE(package, nullptr);
    EXPECT_TRUE(package->info().averaged);
    EXPECT_FALSE(package->info().hasVoltageCurrent);

    ASSERT_TRUE(fixture->setRaplEnergy("intel-rapl:0", kAfterWrapUj).ok());
    RailReading reading;
    ASSERT_EQ(package->read(kDiscoveryNs + kNsPerSecond, reading), 0);
    EXPECT_NEAR(reading.powerW, kWrapWatts, kWattsTolerance);

    ASSERT_TRUE(fixture->setRaplEnergy("intel-rapl:0", kLaterUj).ok());
    ASSERT_EQ(package->read(kDiscoveryNs + kNsPerSecond + kNsPerSecond / 2, reading), 0);
    EXPECT_NEAR(reading.powerW, kLaterWatts, kWattsTolerance);
    static_assert(kLaterUj < kRange, "the second read must not wrap");
}

TEST(Rails, RaplSubZonesOfTwoPackagesGetUniqueNames)
{
    BoardSpec board = test::x86Host();
    board.rapl.push_back({"intel-rapl:2", "package-1", 1000, 262143328850, false});
    board.rapl.push_back({"intel-rapl:2:0", "core", 1000, 262143328850, false});
    auto fixture = build(board);
    ASSERT_TRUE(fixture);
    const RailDiscovery found = discoverRails(fixture->root(), kDiscoveryNs);
    const PowerRail* first = findRail(found, "core-intel-rapl:0:0");
    const PowerRail* second = findRail(found, "core-intel-rapl:2:0");
    ASSERT_NE(first, nullptr);
    ASSERT_NE(second, nullptr);
    EXPECT_EQ(first->info().parent, "package-0");
    EXPECT_EQ(second->info().parent, "package-1");
}

TEST(Rails, AFailingReadReturnsItsErrnoAndRecovers)
{
    auto fixture = build(test::orinNanoJp6());
    ASSERT_TRUE(fixture);
    RailDiscovery found = discoverRails(fixture->root(), kDiscoveryNs);
    PowerRail* soc = findRail(found, "VDD_SOC");
    ASSERT_NE(soc, nullptr);
    const std::string current = fixture->hwmonDirectory("1-0040") + "/curr3_input";
    RailReading reading;
    for (const int error : {ENODATA, EAGAIN, EIO}) {
        fixture->setFault(current, error);
        EXPECT_EQ(soc->read(kDiscoveryNs, reading), error);
    }
    fixture->clearFault(current);
    EXPECT_EQ(soc->read(kDiscoveryNs, reading), 0);
    EXPECT_EQ(soc->reopen(), 0);
    EXPECT_EQ(soc->read(kDiscoveryNs, reading), 0);
}

TEST(Rails, AnEmptyTreeHasNoRails)
{
    test::SysfsTree tree;
    tree.directory("/sys/class/hwmon");
    auto fixture = SysfsFixture::create(tree);
    ASSERT_TRUE(fixture.ok()) << fixture.status().message();
    const RailDiscovery found = discoverRails(fixture.value()->root(), kDiscoveryNs);
    EXPECT_TRUE(found.rails.empty());
    EXPECT_TRUE(found.skipped.empty());
}

TEST(RailsFixture, RewritesKeepOneFixedLengthAndNeverTruncate)
{
    constexpr int64_t kLongMilliAmps = 123456789;
    constexpr int64_t kShortMilliAmps = 7;
    constexpr off_t kRewrittenSize = test::kRewriteWidth + 1;
    auto fixture = build(test::orinNanoJp6());
    ASSERT_TRUE(fixture);
    const std::string current =
        fixture->hostPath(fixture->hwmonDirectory("1-0040") + "/curr1_input");
    struct stat st { };
    for (const int64_t milliAmps : {kLongMilliAmps, kShortMilliAmps}) {
        ASSERT_TRUE(fixture->setRailMilli("VDD_IN", 5000, milliAmps).ok());
        ASSERT_EQ(::stat(current.c_str(), &st), 0);
        EXPECT_EQ(st.st_size, kRewrittenSize);
        EXPECT_EQ(
            fixture->root().readInt(fixture->hwmonDirectory("1-0040") + "/curr1_input"), milliAmps);
    }
}

TEST(RailsFixture, SetRailWattsKeepsTheVoltage)
{
    constexpr double kWatts = 9.0; // 5 V × 1.8 A
    auto fixture = build(test::tx2Jp4());
    ASSERT_TRUE(fixture);
    RailDiscovery found = discoverRails(fixture->root(), kDiscoveryNs);
    PowerRail* ddr = findRail(found, "VDD_SYS_DDR");
    ASSERT_NE(ddr, nullptr);
    ASSERT_TRUE(fixture->setRailWatts("VDD_SYS_DDR", kWatts).ok());
    RailReading reading;
    ASSERT_EQ(ddr->read(kDiscoveryNs, reading), 0);
    EXPECT_NEAR(reading.voltageV, 4.8, kWattsTolerance);
    EXPECT_NEAR(reading.powerW, kWatts, 0.001); // the current is written to the mA
    EXPECT_FALSE(fixture->setRailWatts("NO_SUCH_RAIL", kWatts).ok());
}

TEST(RailsFixture, AConcurrentReaderNeverSeesAPartialValue)
{
    constexpr int64_t kValues[] = {800, 123456789};
    constexpr int kRewrites = 2000;
    auto fixture = build(test::orinNanoJp6());
    ASSERT_TRUE(fixture);
    RailDiscovery found = discoverRails(fixture->root(), kDiscoveryNs);
    PowerRail* input = findRail(found, "VDD_IN");
    ASSERT_NE(input, nullptr);
    ASSERT_TRUE(fixture->setRailMilli("VDD_IN", 5000, kValues[0]).ok());
    std::atomic<bool> done {false};
    std::atomic<int> bad {0};
    std::thread reader([&] {
        RailReading reading;
        while (!done.load()) {
            const bool read = input->read(kDiscoveryNs, reading) == 0;
            bool whole = false;
            for (const int64_t milliAmps : kValues)
                whole = whole ||
                    std::fabs(reading.currentA - static_cast<double>(milliAmps) / 1000.0) < 1e-6;
            if (!read || !whole)
                ++bad;
        }
    });
    for (int i = 0; i < kRewrites; ++i)
        ASSERT_TRUE(fixture->setRailMilli("VDD_IN", 5000, kValues[i % 2]).ok());
    done = true;
    reader.join();
    EXPECT_EQ(bad.load(), 0);
}

} // namespace
} // namespace jetagent
