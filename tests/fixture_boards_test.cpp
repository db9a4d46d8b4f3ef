// The fixture boards' descriptions (power/fixtures/boards/*.yaml, compiled in): each one reads
// under its own file's name, in the order the tests and `power --fixture list` rely on, and a
// mistake in a description is named with its key and line.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "jetagent/fixtures/fixture_boards.h"

namespace jetagent::fixtures {
const std::vector<std::pair<std::string_view, std::string_view>>& embeddedFixtureBoards();
} // namespace jetagent::fixtures

namespace jetagent {
namespace {

using namespace fixtures;

TEST(FixtureBoards, EveryDescriptionReadsUnderItsFileName)
{
    const auto& files = embeddedFixtureBoards();
    ASSERT_EQ(fixtureBoards().size(), files.size()) << "a description failed to read (stderr)";
    std::vector<std::string> ids;
    for (size_t i = 0; i < files.size(); ++i) {
        EXPECT_EQ(std::string(files[i].first), fixtureBoards()[i].id + ".yaml");
        ids.push_back(fixtureBoards()[i].id);
    }
    EXPECT_EQ(ids,
        (std::vector<std::string> {"nano-jp4", "tx2-jp4", "xavier-nx-jp5", "orin-nano-jp6",
            "agx-orin-jp5", "x86-host", "thor-jp7"}));
    EXPECT_EQ(fixtureBoardIds(), ids) << "the help's list, read without parsing";
    // Thor's layout is only partly confirmed: the boards every test runs on leave it out.
    const std::vector<BoardSpec> ofRecord = allBoards();
    ASSERT_EQ(ofRecord.size(), 6u);
    EXPECT_EQ(ofRecord.back().id, "x86-host");
    EXPECT_EQ(findFixtureBoard("thor-jp7")->partlyConfirmed, true);
    EXPECT_EQ(findFixtureBoard("no-such-board"), nullptr);
}

TEST(FixtureBoards, ADescriptionReadsIntoItsSpec)
{
    auto board = parseFixtureBoard(R"(id: tiny
description: one chip
ina3221:
  - driver: iio
    controller: /sys/devices/platform/x.i2c
    client: 6-0041
    channels:
      - {label: IN, mV: 5000, mA: 1000, mW: 5048}
      - {label: NC, read_error: ENODATA}
      - {label: CPU, mV: 5000, mA: 300}
thermal_zones:
  - {type: cv0-thermal, read_error: EAGAIN, trips: [[passive, 99000]]}
cpus: {count: 3, cur_khz: 1000, busy_ticks: 20, idle_ticks: 180, offline: [2]}
nvpmodel: {status: pmode:0001, modes: {0: MAXN, 1: 5W}, default: 0}
expected:
  rails:
    - {name: IN, driver: ina3221x, device: 6-0041, channel: 1, watts: 5.048}
  total: IN
)",
        "tiny.yaml");
    ASSERT_TRUE(board) << board.status().message();
    ASSERT_EQ(board->ina3221.size(), 1u);
    const Ina3221Spec& chip = board->ina3221[0];
    EXPECT_TRUE(chip.legacyIio);
    EXPECT_EQ(chip.bus, 6);
    EXPECT_EQ(chip.address, 0x41);
    EXPECT_EQ(chip.channels[0].milliWatts, 5048);
    EXPECT_EQ(chip.channels[1].readErrno, ENODATA);
    EXPECT_EQ(chip.channels[2].milliWatts, -1);
    ASSERT_EQ(board->zones.size(), 1u);
    EXPECT_EQ(board->zones[0].readErrno, EAGAIN);
    EXPECT_EQ(board->zones[0].trips.size(), 1u);
    ASSERT_EQ(board->cpus.size(), 3u);
    EXPECT_EQ(board->cpus[0].online, -1); // cpu0 has no `online` file
    EXPECT_EQ(board->cpus[1].online, 1);
    EXPECT_EQ(board->cpus[2].online, 0);
    EXPECT_EQ(board->nvpmodelStatus, "pmode:0001\n");
    EXPECT_NE(board->nvpmodelConf.find("< POWER_MODEL ID=1 NAME=5W >"), std::string::npos);
    EXPECT_NE(board->nvpmodelConf.find("< PM_CONFIG DEFAULT=0 >"), std::string::npos);
    ASSERT_EQ(board->expectedRails.size(), 1u);
    EXPECT_DOUBLE_EQ(board->expectedRails[0].watts, 5.048);
    EXPECT_EQ(board->totalRail, "IN");
}

TEST(FixtureBoards, MistakesAreNamedWithTheirKeyAndLine)
{
    auto board = parseFixtureBoard(R"(id: broken
ina3221:
  - client: 1-40
    channels: []
thermal_zones:
  - {type: a, mC: 1, colour: red}
cpus: {count: 2, offline: [0]}
)",
        "broken.yaml");
    ASSERT_FALSE(board);
    const std::string message = board.status().message();
    EXPECT_NE(message.find("broken.yaml:3:"), std::string::npos) << message;
    EXPECT_NE(message.find("ina3221[0].client"), std::string::npos) << message;
    EXPECT_NE(message.find("ina3221[0].channels"), std::string::npos) << message;
    EXPECT_NE(message.find("broken.yaml:6:"), std::string::npos) << message;
    EXPECT_NE(message.find("thermal_zones[0].colour: unknown key"), std::string::npos) << message;
    EXPECT_NE(message.find("cpus.offline[0]"), std::string::npos) << message;
}

} // namespace
} // namespace jetagent
