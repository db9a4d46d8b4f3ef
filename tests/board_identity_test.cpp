// detectBoard against small fixture trees: device-tree strings with their NULs, release lines of
// every JetPack generation, the tegra_fuse chip id and x86 hosts without a device tree.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "jetagent/hal/board_identity.h"
#include "test_support.h"

using namespace std::string_literals;

namespace jetagent {
namespace {

// Writes `content` at the absolute path `absolute` inside `dir`, creating the folders.
void put(const test::TempDir& dir, const std::string& absolute, const std::string& content)
{
    const std::filesystem::path full = dir / absolute.substr(1);
    std::filesystem::create_directories(full.parent_path());
    test::writeFile(full.string(), content);
}

const std::string kOrinNanoCompatible =
    "nvidia,p3768-0000+p3767-0005\0nvidia,p3767-0005\0nvidia,tegra234\0"s;
const std::string kR36Release = "# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, "
                                "EABI: aarch64, DATE: Wed Jan  8 01:49:37 UTC 2025\n"
                                "# KERNEL_VARIANT: oot\n";

TEST(BoardIdentity, ReadsOrinNanoOnJetPack6)
{
    test::TempDir dir;
    put(dir, "/proc/device-tree/model", "NVIDIA Jetson Orin Nano Developer Kit\0"s);
    put(dir, "/proc/device-tree/compatible", kOrinNanoCompatible);
    put(dir, "/etc/nv_tegra_release", kR36Release);
    put(dir, "/sys/module/tegra_fuse/parameters/tegra_chip_id", "35\n");

    const BoardIdentity id = detectBoard(SysfsRoot(dir.path()));
    EXPECT_EQ(id.model, "NVIDIA Jetson Orin Nano Developer Kit");
    ASSERT_EQ(id.compatible.size(), 3u);
    EXPECT_EQ(id.compatible[0], "nvidia,p3768-0000+p3767-0005");
    EXPECT_EQ(id.compatible[1], "nvidia,p3767-0005");
    EXPECT_EQ(id.chip, "nvidia,tegra234");
    EXPECT_EQ(id.tegraChipId, 35);
    EXPECT_EQ(id.soc, "T234");
    EXPECT_EQ(id.l4tRelease, "R36.4.3");
    EXPECT_EQ(id.l4tMajor, 36);
    EXPECT_EQ(id.jetpack, 6);
    EXPECT_TRUE(id.isJetson());
    EXPECT_EQ(
        id.describe(), "NVIDIA Jetson Orin Nano Developer Kit (T234, L4T R36.4.3, JetPack 6)");
}

struct ReleaseCase {
    const char* name; // the test's name
    const char* line;
    const char* release;
    int major;
    int jetpack;
};

void PrintTo(const ReleaseCase& c, std::ostream* out)
{
    *out << c.name;
}

class ReleaseLine : public ::testing::TestWithParam<ReleaseCase> { };

TEST_P(ReleaseLine, GivesL4tReleaseAndJetPack)
{
    const ReleaseCase& c = GetParam();
    test::TempDir dir;
    put(dir, "/etc/nv_tegra_release", c.line);
    const BoardIdentity id = detectBoard(SysfsRoot(dir.path()));
    EXPECT_EQ(id.l4tRelease, c.release) << c.line;
    EXPECT_EQ(id.l4tMajor, c.major) << c.line;
    EXPECT_EQ(id.jetpack, c.jetpack) << c.line;
    EXPECT_EQ(id.isJetson(), c.major != 0) << c.line;
}

INSTANTIATE_TEST_SUITE_P(BoardIdentity, ReleaseLine,
    ::testing::Values(
        ReleaseCase {"R32",
            "# R32 (release), REVISION: 7.1, GCID: 29818004, BOARD: t210ref, EABI: aarch64, "
            "DATE: Sat Feb 19 17:05:08 UTC 2022\n",
            "R32.7.1", 32, 4},
        ReleaseCase {"R35",
            "# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref, EABI: aarch64, "
            "DATE: Tue Aug  1 19:57:35 UTC 2023\n",
            "R35.4.1", 35, 5},
        ReleaseCase {"R36",
            "# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64, "
            "DATE: Wed Jan  8 01:49:37 UTC 2025\n",
            "R36.4.3", 36, 6},
        ReleaseCase {"R38",
            "# R38 (release), REVISION: 2.0, GCID: 41844464, BOARD: generic, EABI: aarch64, "
            "DATE: Fri Aug 22 00:55:42 UTC 2025\n",
            "R38.2.0", 38, 7},
        // A revision with a third part, no REVISION field, an unknown future major, and text that
        // is not a release line at all.
        ReleaseCase {"ThreePartRevision", "# R35 (release), REVISION: 6.0.1, BOARD: t186ref\n",
            "R35.6.0.1", 35, 5},
        ReleaseCase {"NoRevision", "# R36 (release)\n", "R36", 36, 6},
        ReleaseCase {"UnknownMajor", "# R99 (release), REVISION: 1.0\n", "R99.1.0", 99, 0},
        ReleaseCase {"NotAReleaseLine", "nothing to see here\n", "", 0, 0}),
    [](const ::testing::TestParamInfo<ReleaseCase>& param) {
        return std::string(param.param.name);
    });

TEST(BoardIdentity, ChipIsTheNumberedTegraEntryNotTheFamilyAfterIt)
{
    // AGX Orin lists the family "nvidia,tegra23x" after the chip.
    test::TempDir dir;
    put(dir, "/proc/device-tree/compatible",
        "nvidia,p3737-0000+p3701-0005\0nvidia,p3701-0005\0nvidia,tegra234\0nvidia,tegra23x\0"s);
    const BoardIdentity id = detectBoard(SysfsRoot(dir.path()));
    EXPECT_EQ(id.compatible.size(), 4u);
    EXPECT_EQ(id.chip, "nvidia,tegra234");
    EXPECT_EQ(id.soc, "T234");
}

TEST(BoardIdentity, ThorIsT264ByItsCompatible)
{
    test::TempDir dir;
    put(dir, "/proc/device-tree/model", "NVIDIA Jetson AGX Thor Developer Kit\0"s);
    put(dir, "/proc/device-tree/compatible",
        "nvidia,p4071-0000+p3834-0008\0nvidia,p3834-0008\0nvidia,tegra264\0"s);
    const BoardIdentity id = detectBoard(SysfsRoot(dir.path()));
    EXPECT_EQ(id.chip, "nvidia,tegra264");
    EXPECT_EQ(id.soc, "T264");
    EXPECT_EQ(id.tegraChipId, 0);
    EXPECT_TRUE(id.isJetson());
}

TEST(BoardIdentity, SocFromTheFuseWhenThereIsNoDeviceTree)
{
    struct FuseCase {
        const char* id;
        const char* soc;
    };
    for (const FuseCase& c : {FuseCase {"33", "T210"}, FuseCase {"24", "T186"},
             FuseCase {"25", "T194"}, FuseCase {"35", "T234"}, FuseCase {"99", ""}}) {
        test::TempDir dir;
        put(dir, "/sys/module/tegra_fuse/parameters/tegra_chip_id", std::string(c.id) + "\n");
        const BoardIdentity id = detectBoard(SysfsRoot(dir.path()));
        EXPECT_EQ(id.soc, c.soc) << c.id;
        EXPECT_TRUE(id.chip.empty());
        EXPECT_TRUE(id.isJetson()) << c.id;
        EXPECT_EQ(id.describe().rfind("NVIDIA Jetson (model unknown)", 0), 0u) << id.describe();
    }
}

TEST(BoardIdentity, X86HostHasCpuModelAndNoJetsonFields)
{
    test::TempDir dir;
    put(dir, "/proc/cpuinfo",
        "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"
        "model name\t: Intel(R) Core(TM) i7-10700 CPU @ 2.90GHz\nstepping\t: 5\n\n"
        "processor\t: 1\nmodel name\t: Intel(R) Core(TM) i7-10700 CPU @ 2.90GHz\n");
    const BoardIdentity id = detectBoard(SysfsRoot(dir.path()));
    EXPECT_EQ(id.cpuModel, "Intel(R) Core(TM) i7-10700 CPU @ 2.90GHz");
    EXPECT_TRUE(id.model.empty());
    EXPECT_TRUE(id.compatible.empty());
    EXPECT_TRUE(id.chip.empty());
    EXPECT_TRUE(id.soc.empty());
    EXPECT_EQ(id.jetpack, 0);
    EXPECT_FALSE(id.isJetson());
    EXPECT_EQ(id.describe(), "Linux host (Intel(R) Core(TM) i7-10700 CPU @ 2.90GHz)");
}

TEST(BoardIdentity, OtherArmBoardIsNotAJetson)
{
    test::TempDir dir;
    put(dir, "/proc/device-tree/model", "Raspberry Pi 4 Model B Rev 1.4\0"s);
    put(dir, "/proc/device-tree/compatible", "raspberrypi,4-model-b\0brcm,bcm2711\0"s);
    const BoardIdentity id = detectBoard(SysfsRoot(dir.path()));
    EXPECT_EQ(id.chip, "brcm,bcm2711");
    EXPECT_TRUE(id.soc.empty());
    EXPECT_FALSE(id.isJetson());
    EXPECT_EQ(id.describe(), "Linux host (Raspberry Pi 4 Model B Rev 1.4)");
}

TEST(BoardIdentity, EmptyRootLeavesEveryFieldEmpty)
{
    test::TempDir dir;
    const BoardIdentity id = detectBoard(SysfsRoot(dir.path()));
    EXPECT_TRUE(id.model.empty());
    EXPECT_TRUE(id.compatible.empty());
    EXPECT_TRUE(id.chip.empty());
    EXPECT_EQ(id.tegraChipId, 0);
    EXPECT_TRUE(id.soc.empty());
    EXPECT_TRUE(id.l4tRelease.empty());
    EXPECT_EQ(id.l4tMajor, 0);
    EXPECT_EQ(id.jetpack, 0);
    EXPECT_TRUE(id.cpuModel.empty());
    EXPECT_FALSE(id.isJetson());
    EXPECT_EQ(id.describe(), "Linux host");
}

TEST(BoardIdentity, DeviceTreeModelWithoutItsNulAndEmptyEntries)
{
    // Written by hand (no trailing NUL, a doubled NUL) the strings read the same.
    test::TempDir dir;
    put(dir, "/proc/device-tree/model", "NVIDIA Jetson Nano Developer Kit");
    put(dir, "/proc/device-tree/compatible",
        "nvidia,p3449-0000-b00+p3448-0000-b00\0\0nvidia,jetson-nano\0nvidia,tegra210"s);
    const BoardIdentity id = detectBoard(SysfsRoot(dir.path()));
    EXPECT_EQ(id.model, "NVIDIA Jetson Nano Developer Kit");
    ASSERT_EQ(id.compatible.size(), 3u);
    EXPECT_EQ(id.compatible[1], "nvidia,jetson-nano");
    EXPECT_EQ(id.chip, "nvidia,tegra210");
    EXPECT_EQ(id.soc, "T210");
}

TEST(BoardIdentity, OsReleaseAndCpuModelComeFromTheRoot)
{
    test::TempDir dir;
    put(dir, "/etc/os-release",
        "NAME=\"Ubuntu\"\nPRETTY_NAME_EXTRA=x\nPRETTY_NAME=\"Ubuntu 22.04.5 LTS\"\nID=ubuntu\n");
    put(dir, "/proc/cpuinfo",
        "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ "
        "2.20GHz\n");
    const BoardIdentity id = detectBoard(SysfsRoot(dir.path()));
    // The key must be followed by the separator (blanks between allowed): PRETTY_NAME_EXTRA is
    // another key.
    EXPECT_EQ(id.os, "Ubuntu 22.04.5 LTS");
    EXPECT_EQ(id.cpuModel, "Intel(R) Xeon(R) CPU @ 2.20GHz");
}

TEST(BoardIdentity, OnlineCpusAreCountedFromTheKernelsList)
{
    const std::pair<std::string, int> cases[] = {{"0-5\n", 6}, {"0-3,5\n", 5}, {"0,2,4-7\n", 6},
        {"0\n", 1}, {"\n", 0}, {"0-x\n", 0}, {"3-1\n", 0}, {"0-3;\n", 0}};
    for (const auto& [list, count] : cases) {
        test::TempDir dir;
        put(dir, "/sys/devices/system/cpu/online", list);
        EXPECT_EQ(detectBoard(SysfsRoot(dir.path())).onlineCpus, count) << list;
    }
    test::TempDir none;
    EXPECT_EQ(detectBoard(SysfsRoot(none.path())).onlineCpus, 0);
}

} // namespace
} // namespace jetagent
