// The run context: the board, its OS and CPU as read under the given root, the rest from this
// process.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "run/run_context.h"
#include "test_support.h"

using namespace std::string_literals;

namespace jetagent {
namespace {

TEST(RunContext, DescribesTheBoardItIsGivenNotTheHost)
{
    // A run whose power.sysfs_root is a Jetson's tree reports that board, as its power figures do.
    test::TempDir dir;
    std::filesystem::create_directories(dir / "proc/device-tree");
    std::filesystem::create_directories(dir / "etc");
    test::writeFile(dir / "proc/device-tree/model", "NVIDIA Jetson AGX Orin Developer Kit\0"s);
    test::writeFile(dir / "etc/os-release", "PRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\n");
    const RunContext context = collectRunContext(detectBoard(SysfsRoot(dir.path())));
    EXPECT_EQ(context.cpu, "NVIDIA Jetson AGX Orin Developer Kit");
    EXPECT_EQ(context.os, "Ubuntu 22.04.4 LTS");
    EXPECT_FALSE(context.kernel.empty()); // the kernel is this process's: uname
    EXPECT_GT(context.cores, 0);
}

TEST(RunContext, CoresAreTheBoardsWhereItsTreeListsThem)
{
    test::TempDir dir;
    std::filesystem::create_directories(dir / "sys/devices/system/cpu");
    test::writeFile(dir / "sys/devices/system/cpu/online", "0-5\n");
    EXPECT_EQ(collectRunContext(detectBoard(SysfsRoot(dir.path()))).cores, 6);
}

} // namespace
} // namespace jetagent
