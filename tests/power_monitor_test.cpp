// PowerMonitor on each fixture board: identity, profile, discovered rails, the total, what is
// missing, and which rails an estimated total sums.
#include <algorithm>

#include <gtest/gtest.h>

#include "jetagent/power/power_monitor.h"
#include "sysfs_fixture.h"
#include "test_support.h"

namespace jetagent {
namespace {

struct BoardCase {
    test::BoardSpec spec;
    std::string profile;
};

std::vector<BoardCase> boardCases()
{
    return {{test::nanoJp4(), "nano"}, {test::tx2Jp4(), "tx2"}, {test::xavierNxJp5(), "xavier-nx"},
        {test::orinNanoJp6(), "orin-nano-nx"}, {test::agxOrinJp5(), "agx-orin"},
        {test::x86Host(), "generic-linux"}, {test::thorJp7(), "thor"}};
}

std::unique_ptr<PowerMonitor> openOn(const test::SysfsFixture& fixture)
{
    PowerMonitorOptions options;
    options.sysfsRoot = fixture.hostRoot();
    auto monitor = PowerMonitor::open(options);
    EXPECT_TRUE(monitor.ok()) << monitor.status().message();
    return monitor.ok() ? std::move(monitor).value() : nullptr;
}

std::vector<std::string> summed(const PowerSetup& setup)
{
    std::vector<std::string> names;
    for (const RailInfo& r : setup.rails)
        if (r.parent.empty() && r.inTotal)
            names.push_back(r.name);
    return names;
}

TEST(PowerMonitor, EachBoardGetsItsProfileRailsAndTotal)
{
    for (const BoardCase& c : boardCases()) {
        SCOPED_TRACE(c.spec.id);
        auto fixture = test::SysfsFixture::create(c.spec);
        ASSERT_TRUE(fixture.ok()) << fixture.status().message();
        auto monitor = openOn(**fixture);
        ASSERT_TRUE(monitor);
        const PowerSetup& setup = monitor->setup();
        EXPECT_EQ(setup.board.profile.id, c.profile);
        EXPECT_TRUE(setup.board.matched) << setup.board.reason;
        // Every rail the profile expects was found (Thor's carrier INA238 by its alias, VIN).
        EXPECT_TRUE(setup.missingRails.empty()) << setup.missingRails.front();
        std::vector<std::string> names;
        for (const RailInfo& r : setup.rails)
            names.push_back(r.name);
        for (const auto& expected : setup.board.profile.expectedRails)
            EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
        if (c.spec.totalRail.empty() && c.profile != "thor") {
            EXPECT_TRUE(setup.totalIsEstimate);
            EXPECT_EQ(setup.totalName, "sum of rails");
        } else {
            EXPECT_FALSE(setup.totalIsEstimate);
            EXPECT_EQ(setup.totalName, c.profile == "thor" ? "VIN" : c.spec.totalRail);
        }
        EXPECT_GT(setup.thermalZones, 0u);
        EXPECT_FALSE(setup.describe().empty());
    }
}

TEST(PowerMonitor, AnEstimatedTotalNeverCountsOverlappingRails)
{
    // AGX Orin: its four rails do not overlap, so all are summed.
    auto agx = test::SysfsFixture::create(test::agxOrinJp5());
    ASSERT_TRUE(agx.ok());
    auto agxMonitor = openOn(**agx);
    ASSERT_TRUE(agxMonitor);
    EXPECT_EQ(summed(agxMonitor->setup()),
        (std::vector<std::string> {"VDD_GPU_SOC", "VDD_CPU_CV", "VIN_SYS_5V0", "VDDQ_VDD2_1V8AO"}));

    // x86: psys contains the package and its core/uncore zones; the battery contains everything.
    auto host = test::SysfsFixture::create(test::x86Host());
    ASSERT_TRUE(host.ok());
    auto hostMonitor = openOn(**host);
    ASSERT_TRUE(hostMonitor);
    EXPECT_EQ(summed(hostMonitor->setup()), (std::vector<std::string> {"psys"}));

    // Without psys, the package stands for RAPL, and the battery still stays out.
    test::BoardSpec noPsys = test::x86Host();
    noPsys.rapl.erase(std::remove_if(noPsys.rapl.begin(), noPsys.rapl.end(),
                          [](const test::RaplZoneSpec& z) { return z.name == "psys"; }),
        noPsys.rapl.end());
    auto bare = test::SysfsFixture::create(noPsys);
    ASSERT_TRUE(bare.ok());
    auto bareMonitor = openOn(**bare);
    ASSERT_TRUE(bareMonitor);
    EXPECT_EQ(summed(bareMonitor->setup()), (std::vector<std::string> {"package-0"}));
}

TEST(PowerMonitor, AnUnknownJetsonRunsOnWhatIsDiscovered)
{
    test::BoardSpec spec = test::orinNanoJp6();
    spec.model = "NVIDIA Jetson Future Module";
    spec.compatible = {"nvidia,p9999-0000", "nvidia,tegra234"};
    auto fixture = test::SysfsFixture::create(spec);
    ASSERT_TRUE(fixture.ok());
    auto monitor = openOn(**fixture);
    ASSERT_TRUE(monitor);
    const PowerSetup& setup = monitor->setup();
    EXPECT_FALSE(setup.board.matched);
    EXPECT_EQ(setup.board.profile.id, "generic-linux");
    EXPECT_EQ(setup.rails.size(), 3u); // the sensors still work
    EXPECT_TRUE(setup.totalIsEstimate); // but without a profile nothing says VDD_IN is the total
}

TEST(PowerMonitor, BadRootAndBoardAreErrors)
{
    test::TempDir dir;
    PowerMonitorOptions options;
    options.sysfsRoot = dir / "missing";
    auto missing = PowerMonitor::open(options);
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.status().kind(), ErrorKind::NotFound);
    options.sysfsRoot = dir.path();
    options.board = "jetson-tk1";
    auto unknown = PowerMonitor::open(options);
    ASSERT_FALSE(unknown.ok());
    EXPECT_EQ(unknown.status().kind(), ErrorKind::InvalidInput);
}

} // namespace
} // namespace jetagent
