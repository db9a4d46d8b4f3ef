// The jetagent binary on fixture sysfs trees: `jetagent power` and runs that log energy per frame.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "jetagent/base/text.h"
#include "jetagent/hal/board_identity.h"
#include "run_checks.h"
#include "sysfs_fixture.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace jetagent {
namespace {

using test::runJetagent;
using test::TempDir;

size_t column(const std::vector<std::string>& header, const std::string& name)
{
    for (size_t i = 0; i < header.size(); ++i)
        if (header[i] == name)
            return i;
    ADD_FAILURE() << "no column " << name;
    return 0;
}

std::unique_ptr<test::SysfsFixture> board(const test::BoardSpec& spec)
{
    auto fixture = test::SysfsFixture::create(spec);
    EXPECT_TRUE(fixture.ok()) << fixture.status().message();
    return fixture.ok() ? std::move(fixture).value() : nullptr;
}

// The fixture's VDD_IN reading in watts (mV x mA).
double railWatts(const test::BoardSpec& spec, const std::string& name)
{
    for (const auto& r : spec.expectedRails)
        if (r.name == name)
            return r.watts;
    ADD_FAILURE() << "the fixture has no rail " << name;
    return 0.0;
}

TEST(PowerCommand, LiveLinesAndCsvWithUnitsOnOrinNano)
{
    TempDir dir;
    auto fixture = board(test::orinNanoJp6());
    ASSERT_TRUE(fixture);
    auto r = runJetagent({"power", "--sysfs-root", fixture->hostRoot(), "-i", "100", "-d", "0.75",
                             "--csv", "power.csv"},
        dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("profile: orin-nano-nx"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("total: VDD_IN"), std::string::npos) << r.out;
    size_t lines = 0;
    std::istringstream out(r.out);
    for (std::string line; std::getline(out, line);)
        if (line.rfind('[', 0) == 0) {
            ++lines;
            EXPECT_NE(line.find("VDD_IN "), std::string::npos) << line;
            EXPECT_NE(line.find("mode "), std::string::npos) << line;
        }
    EXPECT_GE(lines, 5u) << r.out;
    EXPECT_NE(r.out.find("== jetagent power:"), std::string::npos) << r.out;

    const auto csv = test::readLines(dir / "power.csv");
    ASSERT_GE(csv.size(), 6u);
    const auto header = splitFields(csv[0], ',');
    const size_t vddIn = column(header, "VDD_IN_W");
    const size_t average = column(header, "VDD_IN_avg_W");
    column(header, "total_W");
    column(header, "gpu_freq_MHz");
    column(header, "power_mode");
    const double expected = railWatts(fixture->board(), "VDD_IN");
    for (size_t i = 1; i < csv.size(); ++i) {
        const auto row = splitFields(csv[i], ',');
        ASSERT_EQ(row.size(), header.size()) << csv[i];
        EXPECT_NEAR(std::stod(row[vddIn]), expected, 1e-3) << csv[i];
        EXPECT_NEAR(std::stod(row[average]), expected, 1e-3) << csv[i];
    }
}

// ISO 8601 with milliseconds and the zone's offset: "2026-11-27T03:35:12.345+00:00".
bool isIso8601WithZone(const std::string& text)
{
    const std::string shape = "dddd-dd-ddTdd:dd:dd.ddd+dd:dd";
    if (text.size() != shape.size())
        return false;
    for (size_t i = 0; i < shape.size(); ++i) {
        const bool digit = std::isdigit(static_cast<unsigned char>(text[i])) != 0;
        if (shape[i] == 'd'       ? !digit
                : shape[i] == '+' ? text[i] != '+' && text[i] != '-'
                                  : text[i] != shape[i])
            return false;
    }
    return true;
}

// What tegrastats shows beside the rails, as columns: memory, the largest free block, each core's
// load, EMC load, the engines' clocks, and the wall clock beside the monotonic one.
TEST(PowerCommand, CsvCarriesWallTimeMemoryLoadsAndEnginesOnXavierNx)
{
    TempDir dir;
    const test::BoardSpec spec = test::xavierNxJp5();
    auto fixture = board(spec);
    ASSERT_TRUE(fixture);
    auto r = runJetagent({"power", "--sysfs-root", fixture->hostRoot(), "-i", "100", "-d", "0.5",
                             "--csv", "power.csv"},
        dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    bool sawLine = false;
    std::istringstream out(r.out);
    for (std::string line; std::getline(out, line);)
        if (line.rfind('[', 0) == 0) {
            sawLine = true;
            EXPECT_NE(line.find("RAM 2491/7583MB (lfb 700x4MB) SWAP 79/3791MB"), std::string::npos)
                << line;
            EXPECT_NE(line.find("EMC 20%@1600MHz"), std::string::npos) << line;
            EXPECT_NE(line.find("NVDEC 717MHz NVENC off NVJPG off"), std::string::npos) << line;
        }
    EXPECT_TRUE(sawLine) << r.out;

    const auto csv = test::readLines(dir / "power.csv");
    ASSERT_GE(csv.size(), 3u);
    const auto header = splitFields(csv[0], ',');
    ASSERT_GE(header.size(), 3u);
    EXPECT_EQ(header[0], "time_s");
    EXPECT_EQ(header[1], "monotonic_ns");
    EXPECT_EQ(header[2], "wall_time");
    const size_t ramUsed = column(header, "ram_used_kB");
    const size_t ramTotal = column(header, "ram_total_kB");
    const size_t swapUsed = column(header, "swap_used_kB");
    const size_t lfbBlocks = column(header, "lfb_blocks");
    const size_t lfbKB = column(header, "lfb_block_kB");
    const size_t cpu0Load = column(header, "cpu0_load_percent");
    const size_t emcLoad = column(header, "emc_load_percent");
    const size_t nvdecOn = column(header, "nvdec_on");
    const size_t nvdecMHz = column(header, "nvdec_MHz");
    const size_t nvencOn = column(header, "nvenc_on");
    const size_t nvencMHz = column(header, "nvenc_MHz");
    for (size_t i = 1; i < csv.size(); ++i) {
        const auto row = splitFields(csv[i], ',');
        ASSERT_EQ(row.size(), header.size()) << csv[i];
        EXPECT_TRUE(isIso8601WithZone(row[2])) << row[2];
        EXPECT_EQ(std::stoll(row[ramUsed]), spec.memory.totalKB - spec.memory.availableKB);
        EXPECT_EQ(std::stoll(row[ramTotal]), spec.memory.totalKB);
        EXPECT_EQ(std::stoll(row[swapUsed]), spec.memory.swapTotalKB - spec.memory.swapFreeKB);
        EXPECT_EQ(row[lfbBlocks], "700");
        EXPECT_EQ(row[lfbKB], "4096");
        // The fixture's /proc/stat stands still: no ticks pass, so no load can be given.
        EXPECT_EQ(row[cpu0Load], "") << csv[i];
        EXPECT_NEAR(std::stod(row[emcLoad]), 20.0, 1e-9);
        EXPECT_EQ(row[nvdecOn], "1");
        EXPECT_NEAR(std::stod(row[nvdecMHz]), 716.8, 1e-9);
        EXPECT_EQ(row[nvencOn], "0");
        EXPECT_EQ(row[nvencMHz], "") << "an engine that is off has no clock";
    }
}

TEST(PowerCommand, AHostHasNoEmcLoadOrEngineColumns)
{
    TempDir dir;
    auto fixture = board(test::x86Host());
    ASSERT_TRUE(fixture);
    auto r = runJetagent({"power", "--sysfs-root", fixture->hostRoot(), "-i", "100", "-d", "0.3",
                             "--csv", "power.csv"},
        dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    const auto csv = test::readLines(dir / "power.csv");
    ASSERT_GE(csv.size(), 2u);
    EXPECT_EQ(csv[0].find("emc_load_percent"), std::string::npos) << csv[0];
    EXPECT_EQ(csv[0].find("_on,"), std::string::npos) << csv[0];
    column(splitFields(csv[0], ','), "ram_used_kB");
    column(splitFields(csv[0], ','), "cpu7_load_percent");
}

// --json: stdout is one JSON object per line with the CSV's columns, offline readings null, and
// nothing else; the setup and the summary go to stderr.
TEST(PowerCommand, JsonLinesMatchTheCsvColumnsWithNullsForOffline)
{
    TempDir dir;
    auto fixture = board(test::xavierNxJp5());
    ASSERT_TRUE(fixture);
    auto r = runJetagent({"power", "--sysfs-root", fixture->hostRoot(), "-i", "100", "-d", "0.5",
                             "--json", "--csv", "power.csv"},
        dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    EXPECT_NE(r.err.find("== jetagent power:"), std::string::npos) << r.err;
    const auto csv = test::readLines(dir / "power.csv");
    ASSERT_GE(csv.size(), 2u);
    const auto header = splitFields(csv[0], ',');
    size_t objects = 0;
    std::istringstream out(r.out);
    for (std::string line; std::getline(out, line);) {
        const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
        ASSERT_TRUE(j.is_object()) << "not a JSON object: " << line;
        ++objects;
        ASSERT_EQ(j.size(), header.size()) << line;
        for (const std::string& name : header)
            EXPECT_TRUE(j.contains(name)) << name;
        EXPECT_TRUE(j["cpu0_load_percent"].is_null());
        EXPECT_TRUE(j["nvenc_MHz"].is_null());
        EXPECT_EQ(j["nvdec_on"], true);
        EXPECT_EQ(j["nvenc_on"], false);
        EXPECT_NEAR(j["emc_load_percent"].get<double>(), 20.0, 1e-9);
        EXPECT_TRUE(isIso8601WithZone(j["wall_time"].get<std::string>()));
        EXPECT_NEAR(j["VDD_IN_W"].get<double>(), railWatts(fixture->board(), "VDD_IN"), 1e-3);
    }
    EXPECT_EQ(objects, csv.size() - 1) << r.out;
}

// --idle: VDD_IN reads 3 W through the baseline and 8 W from a while into the measurement, so the
// lines end 5 W above idle, and every above-idle figure is the total's less the baseline.
TEST(PowerCommand, IdleBaselineThenPowerAboveIt)
{
    constexpr double kIdleW = 3.0;
    constexpr double kLoadW = 8.0;
    TempDir dir;
    auto fixture = board(test::orinNanoJp6());
    ASSERT_TRUE(fixture);
    ASSERT_TRUE(fixture->setRailWatts("VDD_IN", kIdleW).ok());
    std::thread schedule([&] {
        // The CSV is created just before the baseline starts; the load comes well after it ends.
        const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (!fs::exists(dir / "power.csv") && std::chrono::steady_clock::now() < giveUp)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        std::this_thread::sleep_for(std::chrono::milliseconds(1200));
        EXPECT_TRUE(fixture->setRailWatts("VDD_IN", kLoadW).ok());
    });
    auto r = runJetagent({"power", "--sysfs-root", fixture->hostRoot(), "--idle", "0.5", "-i",
                             "100", "-d", "2", "--csv", "power.csv"},
        dir.path());
    schedule.join();
    ASSERT_EQ(r.exitCode, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("idle      3.000 W total over"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("above idle"), std::string::npos) << r.out;

    const auto csv = test::readLines(dir / "power.csv");
    ASSERT_GE(csv.size(), 10u);
    const auto header = splitFields(csv[0], ',');
    const size_t seconds = column(header, "time_s");
    const size_t total = column(header, "total_W");
    const size_t totalAvg = column(header, "total_avg_W");
    const size_t idle = column(header, "idle_W");
    const size_t above = column(header, "above_idle_W");
    const size_t aboveAvg = column(header, "above_idle_avg_W");
    const size_t energy = column(header, "energy_above_idle_J");
    for (size_t i = 1; i < csv.size(); ++i) {
        const auto row = splitFields(csv[i], ',');
        ASSERT_EQ(row.size(), header.size()) << csv[i];
        EXPECT_NEAR(std::stod(row[idle]), kIdleW, 1e-3) << csv[i];
        EXPECT_NEAR(std::stod(row[above]), std::stod(row[total]) - kIdleW, 2e-3) << csv[i];
        EXPECT_NEAR(std::stod(row[aboveAvg]), std::stod(row[totalAvg]) - kIdleW, 2e-3) << csv[i];
        // Energy above idle is the average above idle over the time measured so far (the
        // sampler's span, a little longer than the line's time_s).
        EXPECT_NEAR(std::stod(row[energy]), std::stod(row[aboveAvg]) * std::stod(row[seconds]),
            0.05 + 0.05 * std::fabs(std::stod(row[energy])))
            << csv[i];
    }
    const auto last = splitFields(csv.back(), ',');
    EXPECT_NEAR(std::stod(last[above]), kLoadW - kIdleW, 1e-2) << csv.back();
    EXPECT_GT(std::stod(last[energy]), 0.0) << csv.back();
}

TEST(PowerCommand, IdleWithoutRailsIsAUsageError)
{
    TempDir dir;
    fs::create_directories(dir / "empty-root");
    auto r = runJetagent(
        {"power", "--sysfs-root", dir / "empty-root", "--idle", "1", "-d", "1"}, dir.path());
    EXPECT_EQ(r.exitCode, 2) << r.out;
    EXPECT_NE(r.err.find("--idle needs power rails"), std::string::npos) << r.err;
}

TEST(PowerCommand, AnExistingCsvIsNeverOverwritten)
{
    TempDir dir;
    auto fixture = board(test::xavierNxJp5());
    ASSERT_TRUE(fixture);
    test::writeFile(dir / "old.csv", "earlier measurement\n");
    auto r =
        runJetagent({"power", "--sysfs-root", fixture->hostRoot(), "-d", "0.2", "--csv", "old.csv"},
            dir.path());
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("old.csv' already exists"), std::string::npos) << r.err;
    EXPECT_EQ(test::readFile(dir / "old.csv"), "earlier measurement\n");
}

TEST(PowerCommand, WithoutSensorsItSaysWhatIsMissing)
{
    TempDir dir;
    // Nothing but /proc/stat: two cores whose clocks are not known.
    fs::create_directories(dir / "empty-root/proc");
    test::writeFile(dir / "empty-root/proc/stat",
        "cpu  20 0 10 100 0 0 0 0 0 0\ncpu0 10 0 5 50 0 0 0 0 0 0\ncpu1 10 0 5 50 0 0 0 0 0 0\n");
    auto r = runJetagent(
        {"power", "--sysfs-root", dir / "empty-root", "-i", "100", "-d", "0.3"}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("rails: none found"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("no rails"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("| |"), std::string::npos) << "no empty section for missing zones";
    EXPECT_NE(r.out.find("| CPU ["), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("] MHz"), std::string::npos) << "no clock unit where no clock is known";
}

TEST(PowerCommand, BadRootOrBoardIsAUsageError)
{
    TempDir dir;
    auto r = runJetagent({"power", "--sysfs-root", dir / "nowhere", "-d", "0.1"}, dir.path());
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("nowhere"), std::string::npos) << r.err;
    r = runJetagent({"power", "--board", "jetson-tk1", "--list"}, dir.path());
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("agx-orin"), std::string::npos) << r.err; // lists the known ids
}

TEST(PowerCommand, ListDescribesAgxOrinAndItsEstimatedTotal)
{
    TempDir dir;
    auto fixture = board(test::agxOrinJp5());
    ASSERT_TRUE(fixture);
    auto r = runJetagent({"power", "--sysfs-root", fixture->hostRoot(), "--list"}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("profile: agx-orin"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("total: sum of rails of VDD_GPU_SOC, VDD_CPU_CV, VIN_SYS_5V0, "
                         "VDDQ_VDD2_1V8AO (an estimate)"),
        std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("VDD_GPU_SOC"), std::string::npos) << r.out;
    // Zones with their trip points; power-gated ones offline, never -256 C.
    EXPECT_NE(r.out.find("zone CPU-therm: 45.5 C; trips passive 99.0 C critical 104.5 C"),
        std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("zone GPU-therm: offline (power-gated"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("-256.0 C"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("[ "), std::string::npos) << "--list prints no live lines";
}

std::string runConfig(const std::string& root, const std::string& power)
{
    return "source: {uri: synthetic://shapes, width: 320, height: 240, fps: 30, seed: 5}\n"
           "run: {frames: 40, pacing: none}\n"
           "tasks:\n" +
        test::shapesTaskYaml() +
        "logging: {dir: logs, status_interval_s: 0}\n"
        "power: {sysfs_root: '" +
        root + "'" + power + "}\n";
}

TEST(AgentRunPower, EveryFrameCarriesTheEnergyOfItsWindows)
{
    TempDir dir;
    auto fixture = board(test::orinNanoJp6());
    ASSERT_TRUE(fixture);
    test::writeFile(dir / "c.yaml", runConfig(fixture->hostRoot(), ", rail_hz: 200"));
    auto r = runJetagent({"run", "-c", "c.yaml"}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto files = test::checkRun(run, "shapes");
    EXPECT_EQ(files.csvRecords, 40u);

    // The fixture's rails hold still, so each window's energy is the rail's power times its time.
    const double watts = railWatts(fixture->board(), "VDD_IN");
    const auto csv = test::readLines(run + "/shapes.frames.csv");
    const auto header = splitFields(csv[0], ',');
    const size_t inferenceMs = column(header, "inference_ms");
    const size_t inferenceMj = column(header, "inference_energy_mJ");
    const size_t frameMj = column(header, "frame_energy_mJ");
    const size_t power = column(header, "inference_power_W");
    double frameSum = 0.0;
    for (size_t i = 1; i < csv.size(); ++i) {
        const auto row = splitFields(csv[i], ',');
        ASSERT_EQ(row.size(), header.size());
        ASSERT_FALSE(row[inferenceMj].empty()) << "every frame's window is covered: " << csv[i];
        const double expected = watts * std::stod(row[inferenceMs]);
        // Four decimals in the log: the rounding of a short window dominates the tolerance.
        EXPECT_NEAR(std::stod(row[inferenceMj]), expected, expected * 0.01 + 2e-3) << csv[i];
        EXPECT_NEAR(std::stod(row[power]), watts, watts * 0.01 + 0.05) << csv[i];
        frameSum += std::stod(row[frameMj]);
    }

    const auto& s = files.summary;
    const auto& p = s["power"];
    ASSERT_FALSE(p.is_null());
    EXPECT_EQ(p["profile"]["id"], "orin-nano-nx");
    EXPECT_TRUE(p["profile"]["matched"].get<bool>());
    EXPECT_EQ(p["total"]["name"], "VDD_IN");
    EXPECT_FALSE(p["total"]["estimate"].get<bool>());
    EXPECT_NEAR(p["total"]["average_W"].get<double>(), watts, watts * 1e-3);
    EXPECT_NEAR(p["total"]["peak_W"].get<double>(), watts, watts * 1e-3);
    EXPECT_EQ(p["rails"].size(), 3u);
    EXPECT_GT(p["sampling"]["rail_samples"].get<int>(), 0);
    EXPECT_FALSE(p["thermal"].empty());
    EXPECT_EQ(p["power_mode"]["id"].get<int>() >= 0, true);

    const auto& e = s["tasks"][0]["energy"];
    EXPECT_EQ(e["rail"], "VDD_IN");
    EXPECT_EQ(e["frame_mJ"]["n"], 39); // the cold start is kept apart, as for latency
    EXPECT_GT(e["cold_start_inference_mJ"].get<double>(), 0.0);
    EXPECT_EQ(e["uncovered_frames"], 0);
    // The frame intervals tile the run, so their energies add up (to the log's rounding).
    EXPECT_NEAR(e["frames_energy_J"].get<double>(), frameSum * 1e-3, 1e-3);
    EXPECT_NEAR(e["frames_per_joule"].get<double>(), 40.0 / (frameSum * 1e-3), 0.5);
    const std::string text = test::readFile(run + "/summary.txt");
    EXPECT_NE(text.find("energy    per frame (VDD_IN, steady state)"), std::string::npos) << text;
    EXPECT_NE(text.find("profile orin-nano-nx"), std::string::npos) << text;

    // The run's context is the board the run was pointed at, not this machine; what the tree does
    // not hold (it has no os-release) is left out, not printed empty.
    const BoardIdentity id = detectBoard(SysfsRoot(fixture->hostRoot()));
    ASSERT_FALSE(id.model.empty());
    EXPECT_EQ(s["context"]["cpu"], id.model);
    EXPECT_EQ(s["context"]["cores"].get<int>(), id.onlineCpus);
    EXPECT_GT(id.onlineCpus, 0);
    EXPECT_EQ(text.find(", ,"), std::string::npos) << text;
    EXPECT_NE(
        text.find(id.model + " (" + std::to_string(id.onlineCpus) + " cores)"), std::string::npos)
        << text;
}

TEST(AgentRunPower, SamplingOnWithoutRailsFailsNamingTheKey)
{
    TempDir dir;
    fs::create_directories(dir / "empty-root");
    test::writeFile(dir / "c.yaml", runConfig(dir / "empty-root", ", sampling: on"));
    auto r = runJetagent({"run", "-c", "c.yaml"}, dir.path());
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("power.sampling"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("no power rails"), std::string::npos) << r.err;
}

TEST(AgentRunPower, SamplingOffLeavesTheLogsAsTheyWere)
{
    TempDir dir;
    auto fixture = board(test::orinNanoJp6());
    ASSERT_TRUE(fixture);
    test::writeFile(dir / "c.yaml", runConfig(fixture->hostRoot(), ", sampling: off"));
    auto r = runJetagent({"run", "-c", "c.yaml"}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto files = test::checkRun(run, "shapes");
    EXPECT_TRUE(files.summary["power"].is_null());
    // The 17 columns (the stream last) and an unpaced run's queue_ms: no energy columns.
    EXPECT_EQ(splitFields(test::readLines(run + "/shapes.frames.csv")[0], ',').size(), 18u);
}

// A run of `seconds` at the source's pace with power: options added to the power section.
std::string timedRunConfig(const std::string& root, double seconds, const std::string& power)
{
    return "source: {uri: synthetic://shapes, width: 320, height: 240, fps: 30, seed: 5}\n"
           "run: {duration_s: " +
        std::to_string(seconds) +
        "}\n"
        "tasks:\n" +
        test::shapesTaskYaml() +
        "logging: {dir: logs, status_interval_s: 0}\n"
        "power: {sysfs_root: '" +
        root + "'" + power + "}\n";
}

// The first file named `name` under `dir` (recursively); "" when there is none.
std::string findFile(const std::string& dir, const std::string& name)
{
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().filename() == name)
            return it->path().string();
    return {};
}

// The fixture's VDD_IN reads 3 W until the run has gone on for half a second, then 8 W: power.csv
// has a row every 100 ms whose rails follow that schedule, whose zones are the fixture's, and
// whose total adds up to the summary's energy.
TEST(AgentRunPower, PowerCsvFollowsTheRailsScheduleAndAddsUpToTheSummary)
{
    constexpr double kBeforeW = 3.0;
    constexpr double kAfterW = 8.0;
    constexpr double kIntervalS = 0.1;
    TempDir dir;
    auto fixture = board(test::orinNanoJp6());
    ASSERT_TRUE(fixture);
    ASSERT_TRUE(fixture->setRailWatts("VDD_IN", kBeforeW).ok());
    test::writeFile(dir / "c.yaml", timedRunConfig(fixture->hostRoot(), 2.0, ""));
    std::thread schedule([&] {
        // power.csv is created just before the first frame: the switch comes 0.5 s into the run.
        const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (findFile(dir / "logs", "power.csv").empty() &&
            std::chrono::steady_clock::now() < giveUp)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        EXPECT_TRUE(fixture->setRailWatts("VDD_IN", kAfterW).ok());
    });
    auto r = runJetagent({"run", "-c", "c.yaml"}, dir.path());
    schedule.join();
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto files = test::checkRun(run, "shapes");
    const auto& p = files.summary["power"];
    ASSERT_FALSE(p.is_null());

    // The header: time, the rails by their summary names, the total, the shown zones, the state.
    std::string expected = "time_ns,t_s";
    for (const auto& rail : p["rails"])
        expected += "," + rail["name"].get<std::string>() + "_W";
    expected += ",total_W";
    for (const auto& zone : p["thermal"])
        expected += "," + zone["zone"].get<std::string>() + "_C";
    expected += ",gpu_MHz,gpu_load_pct,cpu_MHz,emc_MHz,fan_rpm";
    // What tegrastats prints beside them and this board has: memory and CPU load (no actmon, no
    // engine clocks in the JetPack 6 tree).
    expected += ",ram_used_MB,swap_used_MB,cpu_load_pct";
    const auto csv = test::readLines(run + "/power.csv");
    ASSERT_GE(csv.size(), 12u) << "two seconds at 100 ms";
    EXPECT_EQ(csv[0], expected);
    const auto header = splitFields(csv[0], ',');
    const size_t timeNs = column(header, "time_ns");
    const size_t seconds = column(header, "t_s");
    const size_t vddIn = column(header, "VDD_IN_W");
    const size_t total = column(header, "total_W");

    int before = 0, after = 0, between = 0;
    double energyJ = 0.0;
    int64_t previous = 0;
    for (size_t i = 1; i < csv.size(); ++i) {
        const auto row = splitFields(csv[i], ',');
        ASSERT_EQ(row.size(), header.size()) << csv[i];
        for (const std::string& cell : row)
            EXPECT_EQ(cell.find("nan"), std::string::npos) << csv[i];
        const int64_t t = std::stoll(row[timeNs]);
        const double dt = i == 1 ? kIntervalS : (t - previous) * 1e-9;
        if (i == 1)
            EXPECT_NEAR(std::stod(row[seconds]), kIntervalS, 1e-6) << csv[i];
        else if (i + 1 < csv.size())
            EXPECT_EQ(t - previous, 100'000'000) << "slots tile the run: " << csv[i];
        else
            EXPECT_LE(t - previous, 100'000'000) << "the last slot may be partial: " << csv[i];
        previous = t;
        ASSERT_FALSE(row[vddIn].empty()) << "the sampler covers every slot: " << csv[i];
        const double watts = std::stod(row[vddIn]);
        EXPECT_EQ(row[total], row[vddIn]) << "VDD_IN is the total on this board";
        if (std::abs(watts - kBeforeW) < 0.01 && after == 0)
            ++before;
        else if (std::abs(watts - kAfterW) < 0.01)
            ++after;
        else
            ++between; // the slot in which the reading stepped (or a step back: counted too)
        energyJ += std::stod(row[total]) * dt;
    }
    EXPECT_GE(before, 3) << "3 W for the first half second";
    EXPECT_GE(after, 8) << "8 W for the rest";
    EXPECT_LE(between, 2) << "a step moves one slot, or two when it straddles their boundary";
    EXPECT_NEAR(
        energyJ, p["total"]["energy_J"].get<double>(), p["total"]["energy_J"].get<double>() * 0.03);
    EXPECT_EQ(p["log"]["rows"].get<size_t>(), csv.size() - 1);
    EXPECT_EQ(p["log"]["interval_ms"], 100);

    // The fixture's state holds still: each row shows it, and an offline zone is an empty cell.
    const auto last = splitFields(csv.back(), ',');
    for (const auto& zone : p["thermal"]) {
        const std::string& cell = last[column(header, zone["zone"].get<std::string>() + "_C")];
        if (zone.contains("offline"))
            EXPECT_EQ(cell, "") << zone;
        else
            EXPECT_NEAR(std::stod(cell), zone["end_C"].get<double>(), 1e-3) << zone;
    }
    EXPECT_NEAR(std::stod(last[column(header, "gpu_MHz")]), 306.0, 1e-3);
    EXPECT_NEAR(std::stod(last[column(header, "cpu_MHz")]), 1510.4, 1e-3);
    EXPECT_NEAR(std::stod(last[column(header, "emc_MHz")]), 2133.0, 1e-3);
    EXPECT_EQ(last[column(header, "fan_rpm")], "1800");
    // The fixture's /proc/meminfo: MemTotal 7802040 kB, MemAvailable 5603112 kB, no swap used.
    EXPECT_NEAR(std::stod(last[column(header, "ram_used_MB")]), (7802040 - 5603112) / 1024.0, 0.05);
    EXPECT_NEAR(std::stod(last[column(header, "swap_used_MB")]), 0.0, 1e-9);
    // Its /proc/stat does not advance: no load can be known, and the cell says so by being empty.
    EXPECT_EQ(last[column(header, "cpu_load_pct")], "");

    // The summary's run-wide figures of the same readings: the memory's peak, no CPU load.
    const auto& load = p["load"];
    ASSERT_TRUE(load.is_object()) << p.dump(1);
    EXPECT_NEAR(load["memory"]["ram_total_MB"].get<double>(), 7802040 / 1024.0, 1e-3);
    EXPECT_NEAR(
        load["memory"]["ram_used_peak_MB"].get<double>(), (7802040 - 5603112) / 1024.0, 1e-3);
    EXPECT_TRUE(load["cpu_load_percent"].is_null()) << load;
}

TEST(AgentRunPower, LogIntervalZeroWritesNoPowerCsv)
{
    TempDir dir;
    auto fixture = board(test::orinNanoJp6());
    ASSERT_TRUE(fixture);
    test::writeFile(dir / "c.yaml", runConfig(fixture->hostRoot(), ", log_interval_ms: 0"));
    auto r = runJetagent({"run", "-c", "c.yaml"}, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::string run = test::onlyRunDirectory(dir / "logs");
    const auto files = test::checkRun(run, "shapes");
    EXPECT_FALSE(fs::exists(run + "/power.csv"));
    EXPECT_TRUE(files.summary["power"]["log"].is_null());
    EXPECT_FALSE(files.summary["power"]["total"].is_null()) << "sampling itself goes on";
}

TEST(AgentRunPower, ABadLogIntervalIsRefusedNamingTheKey)
{
    TempDir dir;
    auto fixture = board(test::orinNanoJp6());
    ASSERT_TRUE(fixture);
    for (const char* bad : {"5", "-1", "60001"}) {
        test::writeFile(dir / "c.yaml",
            runConfig(fixture->hostRoot(), std::string(", log_interval_ms: ") + bad));
        auto r = runJetagent({"run", "-c", "c.yaml"}, dir.path());
        EXPECT_EQ(r.exitCode, 2) << bad;
        EXPECT_NE(r.err.find("power.log_interval_ms"), std::string::npos) << bad << ": " << r.err;
        EXPECT_NE(r.err.find("60000"), std::string::npos) << bad << ": " << r.err;
    }
    EXPECT_FALSE(fs::exists(dir / "logs")) << "nothing ran";
}

// The service's runs: a reload (SIGHUP) starts a new run directory with a fresh sampler, and each
// run has its own power.csv, at its own interval, from its own start; SIGTERM writes the last.
TEST(AgentRunPower, EachRunOfTheServiceWritesItsOwnPowerCsv)
{
    TempDir dir;
    auto fixture = board(test::orinNanoJp6());
    ASSERT_TRUE(fixture);
    const std::string config = dir / "c.yaml";
    test::writeFile(config, timedRunConfig(fixture->hostRoot(), 0.0, ", log_interval_ms: 100"));
    const int pid = test::spawnJetagent({"run", "--config", config}, dir.path());
    ASSERT_GT(pid, 0);
    auto waitForRows = [&](size_t runs) {
        const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (std::chrono::steady_clock::now() < giveUp) {
            std::vector<std::string> found;
            std::error_code ec;
            for (const auto& e : fs::directory_iterator(dir / "logs", ec))
                if (fs::exists(e.path() / "power.csv") &&
                    test::readLines((e.path() / "power.csv").string()).size() >= 3)
                    found.push_back(e.path().string());
            if (found.size() >= runs)
                return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return false;
    };
    ASSERT_TRUE(waitForRows(1)) << test::readFile(dir / "spawn.err");
    test::writeFile(config, timedRunConfig(fixture->hostRoot(), 0.0, ", log_interval_ms: 200"));
    ASSERT_EQ(::kill(pid, SIGHUP), 0);
    ASSERT_TRUE(waitForRows(2)) << test::readFile(dir / "spawn.err");
    ASSERT_EQ(::kill(pid, SIGTERM), 0);
    ASSERT_EQ(test::waitExit(pid, 30'000), 0) << test::readFile(dir / "spawn.err");

    std::vector<std::string> runs;
    for (const auto& e : fs::directory_iterator(dir / "logs"))
        runs.push_back(e.path().string());
    std::sort(runs.begin(), runs.end());
    ASSERT_EQ(runs.size(), 2u);
    const int64_t intervals[] = {100'000'000, 200'000'000};
    for (size_t r = 0; r < runs.size(); ++r) {
        const auto csv = test::readLines(runs[r] + "/power.csv");
        ASSERT_GE(csv.size(), 3u) << runs[r];
        const auto first = splitFields(csv[1], ',');
        const auto second = splitFields(csv[2], ',');
        EXPECT_NEAR(std::stod(first[1]), intervals[r] * 1e-9, 1e-6) << "from the run's start";
        EXPECT_EQ(std::stoll(second[0]) - std::stoll(first[0]), intervals[r]) << runs[r];
        const auto summary = nlohmann::json::parse(test::readFile(runs[r] + "/summary.json"));
        EXPECT_EQ(summary["power"]["log"]["rows"].get<size_t>(), csv.size() - 1) << runs[r];
    }
}

} // namespace
} // namespace jetagent
