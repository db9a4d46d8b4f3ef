// Board state against fixture trees: thermal quirks, trips, GPU, CPUs, EMC, throttling, fan, modes.
#include <cerrno>
#include <string>

#include <gtest/gtest.h>

#include "jetagent/power/board_state.h"
#include "sysfs_fixture.h"

namespace jetagent {
namespace {

using test::BoardSpec;
using test::SysfsFixture;

constexpr double kCelsiusTolerance = 1e-9;
constexpr int64_t kNowNs = 5000000000;
constexpr int64_t kPowerGated = -256000; // JetPack 5 GPU/CV zones while power-gated
constexpr int64_t kPmicConstant = 100000; // PMIC-Die: always 100 °C, not a sensor
const char* const kGatedWhy = "power-gated";
const char* const kPmicWhy = "constant, not a sensor";

std::unique_ptr<SysfsFixture> build(const BoardSpec& board)
{
    auto fixture = SysfsFixture::create(board);
    EXPECT_TRUE(fixture.ok()) << fixture.status().message();
    return fixture.ok() ? std::move(fixture.value()) : nullptr;
}

// What a Jetson profile says about bogus readings (built here, not parsed: the YAML is another
// module's business).
BoardProfile quirkProfile()
{
    BoardProfile profile;
    profile.id = "test";
    profile.badReadings = {{"", kPowerGated, kGatedWhy}, {"PMIC-Die", kPmicConstant, kPmicWhy}};
    return profile;
}

int zoneIndex(const BoardStateReader& reader, const std::string& type)
{
    for (size_t i = 0; i < reader.zones().size(); ++i)
        if (reader.zones()[i].type == type)
            return static_cast<int>(i);
    return -1;
}

ZoneReading zoneReading(
    const BoardStateReader& reader, const BoardStateSample& sample, const std::string& type)
{
    const int index = zoneIndex(reader, type);
    EXPECT_GE(index, 0) << "no zone " << type;
    return index < 0 ? ZoneReading {} : sample.zones[static_cast<size_t>(index)];
}

TEST(BoardState, ClassifyAPlainReadingAsDegrees)
{
    constexpr int64_t kMilli = 45500;
    const ZoneReading reading = classifyThermalReading(0, kMilli, "cpu-thermal", quirkProfile());
    EXPECT_TRUE(reading.online);
    EXPECT_NEAR(reading.celsius, 45.5, kCelsiusTolerance);
}

TEST(BoardState, ClassifyAnyReadErrorAsOfflineNamingTheErrno)
{
    const BoardProfile profile = quirkProfile();
    EXPECT_STREQ(classifyThermalReading(EAGAIN, 0, "cv0-thermal", profile).offlineReason, "EAGAIN");
    EXPECT_STREQ(
        classifyThermalReading(ENODATA, 0, "cv0-thermal", profile).offlineReason, "ENODATA");
    EXPECT_STREQ(classifyThermalReading(EIO, 0, "cv0-thermal", profile).offlineReason, "EIO");
    const ZoneReading unknown = classifyThermalReading(EHOSTDOWN, 0, "cv0-thermal", profile);
    EXPECT_FALSE(unknown.online);
    EXPECT_STRNE(unknown.offlineReason, "");
}

TEST(BoardState, ClassifyAnEmptyReadAsOffline)
{
    const ZoneReading reading =
        classifyThermalReading(kThermalEmptyRead, 0, "cv1-thermal", quirkProfile());
    EXPECT_FALSE(reading.online);
    EXPECT_STREQ(reading.offlineReason, "empty read");
}

TEST(BoardState, ClassifyProfileBadReadingsByZone)
{
    const BoardProfile profile = quirkProfile();
    // An entry with no zone applies to every zone.
    const ZoneReading gated = classifyThermalReading(0, kPowerGated, "GPU-therm", profile);
    EXPECT_FALSE(gated.online);
    EXPECT_STREQ(gated.offlineReason, "power-gated (-256000)");
    // PMIC-Die's constant is bogus there only: 100 °C elsewhere is a (hot) temperature.
    EXPECT_STREQ(classifyThermalReading(0, kPmicConstant, "PMIC-Die", profile).offlineReason,
        "constant, not a sensor (100000)");
    const ZoneReading hot = classifyThermalReading(0, kPmicConstant, "CPU-therm", profile);
    EXPECT_TRUE(hot.online);
    EXPECT_NEAR(hot.celsius, 100.0, kCelsiusTolerance);
    // Without a profile entry the gated value is just a number.
    EXPECT_TRUE(classifyThermalReading(0, kPowerGated, "GPU-therm", BoardProfile {}).online);
}

TEST(BoardState, OrinNanoJetPack6CvZonesFailingOrEmptyAreOffline)
{
    auto fixture = build(test::orinNanoJp6());
    ASSERT_TRUE(fixture);
    BoardStateReader reader(fixture->root(), quirkProfile());
    const std::vector<std::string> kTypes = {"cpu-thermal", "gpu-thermal", "cv0-thermal",
        "cv1-thermal", "cv2-thermal", "soc0-thermal", "soc1-thermal", "soc2-thermal", "tj-thermal"};
    ASSERT_EQ(reader.zones().size(), kTypes.size());
    for (size_t i = 0; i < kTypes.size(); ++i)
        EXPECT_EQ(reader.zones()[i].type, kTypes[i]);
    EXPECT_EQ(reader.zones()[2].directory, "/sys/class/thermal/thermal_zone2");

    BoardStateSample sample;
    reader.read(kNowNs, sample);
    ASSERT_EQ(sample.zones.size(), kTypes.size());
    EXPECT_EQ(sample.timeNs, kNowNs);
    EXPECT_STREQ(zoneReading(reader, sample, "cv0-thermal").offlineReason, "EAGAIN");
    EXPECT_STREQ(zoneReading(reader, sample, "cv1-thermal").offlineReason, "empty read");
    EXPECT_STREQ(zoneReading(reader, sample, "cv2-thermal").offlineReason, "EAGAIN");
    const ZoneReading cpu = zoneReading(reader, sample, "cpu-thermal");
    EXPECT_TRUE(cpu.online);
    EXPECT_NEAR(cpu.celsius, 47.0, kCelsiusTolerance);
}

TEST(BoardState, AgxOrinPowerGatedZonesAreOffline)
{
    auto fixture = build(test::agxOrinJp5());
    ASSERT_TRUE(fixture);
    BoardStateReader reader(fixture->root(), quirkProfile());
    BoardStateSample sample;
    reader.read(kNowNs, sample);
    for (const char* gated : {"GPU-therm", "CV0-therm", "CV1-therm", "CV2-therm"}) {
        const ZoneReading reading = zoneReading(reader, sample, gated);
        EXPECT_FALSE(reading.online) << gated;
        EXPECT_STREQ(reading.offlineReason, "power-gated (-256000)") << gated;
    }
    EXPECT_TRUE(zoneReading(reader, sample, "tj-therm").online);
}

TEST(BoardState, PmicDieConstantIsOfflineOnNanoAndTx2)
{
    for (const BoardSpec& board : {test::nanoJp4(), test::tx2Jp4()}) {
        auto fixture = build(board);
        ASSERT_TRUE(fixture);
        BoardStateReader reader(fixture->root(), quirkProfile());
        BoardStateSample sample;
        reader.read(kNowNs, sample);
        const ZoneReading pmic = zoneReading(reader, sample, "PMIC-Die");
        EXPECT_FALSE(pmic.online) << board.id;
        EXPECT_STREQ(pmic.offlineReason, "constant, not a sensor (100000)") << board.id;
    }
}

TEST(BoardState, ZoneReadingsFollowTheFileAndItsFaults)
{
    constexpr int64_t kLaterMilli = 63250;
    auto fixture = build(test::xavierNxJp5());
    ASSERT_TRUE(fixture);
    BoardStateReader reader(fixture->root(), quirkProfile());
    const int cpu = zoneIndex(reader, "CPU-therm");
    ASSERT_GE(cpu, 0);
    const std::string temp = reader.zones()[static_cast<size_t>(cpu)].directory + "/temp";
    BoardStateSample sample;
    ASSERT_TRUE(fixture->writeValue(temp, kLaterMilli).ok());
    reader.read(kNowNs, sample);
    EXPECT_NEAR(sample.zones[static_cast<size_t>(cpu)].celsius, 63.25, kCelsiusTolerance);
    fixture->setFault(temp, EIO);
    reader.read(kNowNs, sample);
    EXPECT_STREQ(sample.zones[static_cast<size_t>(cpu)].offlineReason, "EIO");
    fixture->clearFault(temp);
    reader.read(kNowNs, sample);
    EXPECT_TRUE(sample.zones[static_cast<size_t>(cpu)].online);
}

TEST(BoardState, TripPointsAreReadInCelsius)
{
    auto fixture = build(test::nanoJp4());
    ASSERT_TRUE(fixture);
    BoardStateReader reader(fixture->root(), BoardProfile {});
    const int cpu = zoneIndex(reader, "CPU-therm");
    ASSERT_GE(cpu, 0);
    const std::vector<TripPoint>& trips = reader.zones()[static_cast<size_t>(cpu)].trips;
    ASSERT_EQ(trips.size(), 2u);
    EXPECT_EQ(trips[0].type, "passive");
    EXPECT_NEAR(trips[0].celsius, 99.0, kCelsiusTolerance);
    EXPECT_EQ(trips[1].type, "critical");
    EXPECT_NEAR(trips[1].celsius, 104.5, kCelsiusTolerance);
    const int fan = zoneIndex(reader, "thermal-fan-est");
    ASSERT_GE(fan, 0);
    EXPECT_EQ(reader.zones()[static_cast<size_t>(fan)].trips.size(), 3u);
    EXPECT_TRUE(reader.zones()[static_cast<size_t>(zoneIndex(reader, "PLL-therm"))].trips.empty());
}

TEST(BoardState, ShownZonesAreTheProfilesListOrAllWithoutOne)
{
    auto fixture = build(test::orinNanoJp6());
    ASSERT_TRUE(fixture);
    BoardProfile profile;
    profile.thermalZones = {"cpu-thermal", "gpu-thermal", "tj-thermal"};
    BoardStateReader listed(fixture->root(), profile);
    for (const ThermalZoneInfo& zone : listed.zones()) {
        const bool wanted =
            zone.type == "cpu-thermal" || zone.type == "gpu-thermal" || zone.type == "tj-thermal";
        EXPECT_EQ(zone.shown, wanted) << zone.type;
    }
    BoardStateReader unknownBoard(fixture->root(), BoardProfile {});
    for (const ThermalZoneInfo& zone : unknownBoard.zones())
        EXPECT_TRUE(zone.shown) << zone.type;
}

TEST(BoardState, GpuIsTheDevfreqDeviceWithAGpuDeviceTreeNode)
{
    struct Case {
        BoardSpec board;
        std::string device;
        int64_t hz;
        double loadPercent;
    };
    const Case cases[] = {
        {test::nanoJp4(), "/sys/class/devfreq/57000000.gpu", 76800000, 12.3},
        {test::tx2Jp4(), "/sys/class/devfreq/17000000.gp10b", 114750000, 0.0},
        {test::xavierNxJp5(), "/sys/class/devfreq/17000000.gv11b", 114750000, 25.0},
        {test::orinNanoJp6(), "/sys/class/devfreq/17000000.gpu", 306000000, 8.7},
        {test::agxOrinJp5(), "/sys/class/devfreq/17000000.ga10b", 306000000, 0.0},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.board.id);
        auto fixture = build(c.board);
        ASSERT_TRUE(fixture);
        BoardStateReader reader(fixture->root(), BoardProfile {});
        // The boards that also have a `vic` devfreq device list it first: it must be passed by.
        EXPECT_EQ(reader.gpuDevice(), c.device);
        BoardStateSample sample;
        reader.read(kNowNs, sample);
        EXPECT_TRUE(sample.haveGpu);
        EXPECT_EQ(sample.gpuFreqHz, c.hz);
        EXPECT_NEAR(sample.gpuLoadPercent, c.loadPercent, kCelsiusTolerance);
    }
}

TEST(BoardState, HostWithoutTegraSensorsHasNoGpuEmcThrottleOrFan)
{
    auto fixture = build(test::x86Host());
    ASSERT_TRUE(fixture);
    BoardStateReader reader(fixture->root(), BoardProfile {});
    EXPECT_EQ(reader.gpuDevice(), "");
    EXPECT_FALSE(reader.haveEmc());
    EXPECT_FALSE(reader.haveThrottleCounters());
    EXPECT_FALSE(reader.haveFan());
    BoardStateSample sample;
    reader.read(kNowNs, sample);
    EXPECT_FALSE(sample.haveGpu);
    EXPECT_EQ(sample.emcHz, -1);
    EXPECT_EQ(sample.throttleEvents[0], -1);
    EXPECT_EQ(sample.fanPwm, -1);
    EXPECT_EQ(sample.fanRpm, -1);
    EXPECT_EQ(sample.cpuCount, 8);
    ASSERT_EQ(sample.zones.size(), 2u);
    EXPECT_TRUE(sample.zones[0].online);
}

TEST(BoardState, OfflineCoresReadMinusOneAndComeBackWhenOnline)
{
    constexpr int64_t kA57KHz = 2035200;
    auto fixture = build(test::tx2Jp4()); // MAXQ: Denver cores cpu1 and cpu2 offline
    ASSERT_TRUE(fixture);
    BoardStateReader reader(fixture->root(), BoardProfile {});
    BoardStateSample sample;
    reader.read(kNowNs, sample);
    ASSERT_EQ(sample.cpuCount, 6);
    const int64_t expected[] = {kA57KHz, -1, -1, kA57KHz, kA57KHz, kA57KHz};
    for (int cpu = 0; cpu < 6; ++cpu)
        EXPECT_EQ(sample.cpuFreqKHz[static_cast<size_t>(cpu)], expected[cpu]) << "cpu" << cpu;

    ASSERT_TRUE(fixture->writeValue("/sys/devices/system/cpu/cpu1/online", 1).ok());
    reader.read(kNowNs, sample);
    EXPECT_EQ(sample.cpuFreqKHz[1], kA57KHz);
    EXPECT_EQ(sample.cpuFreqKHz[2], -1);
}

TEST(BoardState, EmcRateAndSocthermCounters)
{
    constexpr int64_t kOrinNanoEmcHz = 2133000000;
    auto fixture = build(test::orinNanoJp6());
    ASSERT_TRUE(fixture);
    BoardStateReader reader(fixture->root(), BoardProfile {});
    EXPECT_TRUE(reader.haveEmc());
    EXPECT_TRUE(reader.haveThrottleCounters());
    BoardStateSample sample;
    reader.read(kNowNs, sample);
    EXPECT_EQ(sample.emcHz, kOrinNanoEmcHz);
    EXPECT_EQ(sample.throttleEvents, (std::array<int64_t, 3> {0, 2, 0}));

    auto nano = build(test::nanoJp4()); // no soctherm_oc before Orin
    ASSERT_TRUE(nano);
    BoardStateReader nanoReader(nano->root(), BoardProfile {});
    EXPECT_FALSE(nanoReader.haveThrottleCounters());
    nanoReader.read(kNowNs, sample);
    EXPECT_EQ(sample.throttleEvents, (std::array<int64_t, 3> {-1, -1, -1}));
}

TEST(BoardState, EmcRateFromTheClockFrameworkWithoutABpmp)
{
    constexpr int64_t kNanoEmcHz = 1600000000;
    test::BoardSpec spec = test::nanoJp4();
    spec.emcHz = -1; // no BPMP debugfs on T210
    test::SysfsTree tree = test::lowerBoard(spec);
    tree.file("/sys/kernel/debug/clk/emc/clk_rate", std::to_string(kNanoEmcHz) + "\n");
    auto fixture = SysfsFixture::create(std::move(tree), spec);
    ASSERT_TRUE(fixture.ok()) << fixture.status().message();
    BoardStateReader reader(fixture.value()->root(), BoardProfile {});
    EXPECT_TRUE(reader.haveEmc());
    BoardStateSample sample;
    reader.read(kNowNs, sample);
    EXPECT_EQ(sample.emcHz, kNanoEmcHz);
    // The EMC load needs that rate: actmon's 160000 kHz of 1600 MHz.
    EXPECT_NEAR(sample.load.emcLoadPercent, 10.0, 1e-9);
}

TEST(BoardState, FanOnTheJetPack4Layout)
{
    auto fixture = build(test::nanoJp4());
    ASSERT_TRUE(fixture);
    BoardStateReader reader(fixture->root(), BoardProfile {});
    EXPECT_TRUE(reader.haveFan());
    BoardStateSample sample;
    reader.read(kNowNs, sample);
    EXPECT_EQ(sample.fanPwm, 80);
    EXPECT_EQ(sample.fanRpm, 1534);
}

TEST(BoardState, FanOnTheHwmonLayout)
{
    for (const uint32_t seed : {test::kDefaultHwmonSeed, 5u}) {
        auto made = SysfsFixture::create(test::xavierNxJp5(), seed);
        ASSERT_TRUE(made.ok()) << made.status().message();
        BoardStateReader reader(made.value()->root(), BoardProfile {});
        EXPECT_TRUE(reader.haveFan());
        BoardStateSample sample;
        reader.read(kNowNs, sample);
        EXPECT_EQ(sample.fanPwm, 108);
        EXPECT_EQ(sample.fanRpm, 2100);
    }
}

TEST(BoardState, ReadReusesTheSamplesZoneStorage)
{
    auto fixture = build(test::agxOrinJp5());
    ASSERT_TRUE(fixture);
    BoardStateReader reader(fixture->root(), quirkProfile());
    BoardStateSample sample;
    reader.read(kNowNs, sample);
    const ZoneReading* storage = sample.zones.data();
    reader.read(kNowNs + 1, sample);
    EXPECT_EQ(sample.zones.data(), storage);
}

TEST(BoardState, PowerModeIdAndNameOnEachBoard)
{
    struct Case {
        BoardSpec board;
        int id;
        std::string name;
    };
    const Case cases[] = {
        {test::nanoJp4(), 0, "MAXN"},
        {test::tx2Jp4(), 1, "MAXQ"},
        {test::xavierNxJp5(), 2, "MODE_15W_6CORE"},
        {test::orinNanoJp6(), 0, "15W"},
        {test::agxOrinJp5(), 3, "MODE_50W"}, // status carries " fmode:quiet" after the mode
        {test::x86Host(), -1, ""},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.board.id);
        auto fixture = build(c.board);
        ASSERT_TRUE(fixture);
        const PowerModeInfo mode = readPowerMode(fixture->root());
        EXPECT_EQ(mode.id, c.id);
        EXPECT_EQ(mode.name, c.name);
        EXPECT_EQ(mode.source, c.id < 0 ? "" : "/var/lib/nvpmodel/status");
    }
}

TEST(BoardState, PowerModeWithoutTheModeTableHasAnIdOnly)
{
    BoardSpec board = test::orinNanoJp6();
    board.nvpmodelConf.clear();
    board.nvpmodelStatus = "pmode:0002\n";
    auto fixture = build(board);
    ASSERT_TRUE(fixture);
    const PowerModeInfo mode = readPowerMode(fixture->root());
    EXPECT_EQ(mode.id, 2);
    EXPECT_EQ(mode.name, "");
}

TEST(BoardState, PowerModeGarbageStatusIsUnknown)
{
    BoardSpec board = test::orinNanoJp6();
    board.nvpmodelStatus = "pmode:\n";
    auto fixture = build(board);
    ASSERT_TRUE(fixture);
    EXPECT_EQ(readPowerMode(fixture->root()).id, -1);
}

} // namespace
} // namespace jetagent
