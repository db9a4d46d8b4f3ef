// sysfs access: integer parsing, pread re-reads, paths and canonical() under a root, fault seam.
#include <atomic>
#include <cerrno>
#include <cstring>
#include <set>
#include <thread>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "jetagent/hal/sysfs.h"
#include "sysfs_fixture.h"

namespace jetagent {
namespace {

using test::SysfsFixture;
using test::SysfsTree;

constexpr int64_t kMilliAmps = 1234;

int parse(const std::string& text, int64_t& value)
{
    return parseSysfsInt(text.data(), text.size(), value);
}

std::unique_ptr<SysfsFixture> build(const SysfsTree& tree)
{
    auto fixture = SysfsFixture::create(tree);
    EXPECT_TRUE(fixture.ok()) << fixture.status().message();
    return fixture.ok() ? std::move(fixture.value()) : nullptr;
}

TEST(SysfsParse, PlainNumbersWithTheKernelsNewline)
{
    int64_t value = 0;
    EXPECT_EQ(parse("5000\n", value), 0);
    EXPECT_EQ(value, 5000);
    EXPECT_EQ(parse("0", value), 0);
    EXPECT_EQ(value, 0);
    EXPECT_EQ(parse("+17\n", value), 0);
    EXPECT_EQ(value, 17);
}

TEST(SysfsParse, BlanksAroundAndUnitsAfterAreIgnored)
{
    int64_t value = 0;
    EXPECT_EQ(parse("  \t42 \r\n", value), 0);
    EXPECT_EQ(value, 42);
    EXPECT_EQ(parse("1234 ma\n", value), 0); // the legacy driver's current limits
    EXPECT_EQ(value, kMilliAmps);
    EXPECT_EQ(parse("1234 mA", value), 0);
    EXPECT_EQ(value, kMilliAmps);
    EXPECT_EQ(parse(std::string("77\0junk", 7), value), 0); // device-tree style NUL end
    EXPECT_EQ(value, 77);
}

TEST(SysfsParse, NegativeNumbers)
{
    int64_t value = 0;
    EXPECT_EQ(parse("-256000\n", value), 0);
    EXPECT_EQ(value, -256000);
}

TEST(SysfsParse, GarbageIsEinval)
{
    int64_t value = 99;
    for (const char* garbage : {"abc", "12abc", "-", "+", "0x10", "- 5", "1.5", "N/A\n"})
        EXPECT_EQ(parse(garbage, value), EINVAL) << garbage;
    EXPECT_EQ(value, 99) << "a failed parse leaves the value alone";
}

TEST(SysfsParse, EmptyOrBlankIsEnodata)
{
    int64_t value = 0;
    EXPECT_EQ(parse("", value), ENODATA);
    EXPECT_EQ(parse(" \n", value), ENODATA);
    EXPECT_EQ(parse(std::string("\0", 1), value), ENODATA);
}

TEST(SysfsParse, BeyondInt64IsErange)
{
    int64_t value = 0;
    EXPECT_EQ(parse("9223372036854775807", value), 0);
    EXPECT_EQ(value, INT64_MAX);
    EXPECT_EQ(parse("9223372036854775808", value), ERANGE);
}

TEST(SysfsAttribute, RereadsTheFileEachTimeWithoutReopening)
{
    SysfsTree tree;
    tree.file("/sys/devices/x/curr1_input", "800\n");
    auto fixture = build(tree);
    ASSERT_TRUE(fixture);
    SysfsAttribute attribute;
    ASSERT_EQ(attribute.open(fixture->hostPath("/sys/devices/x/curr1_input")), 0);
    int64_t value = 0;
    ASSERT_EQ(attribute.readInt(value), 0);
    EXPECT_EQ(value, 800);
    ASSERT_TRUE(fixture->writeValue("/sys/devices/x/curr1_input", kMilliAmps).ok());
    ASSERT_EQ(attribute.readInt(value), 0);
    EXPECT_EQ(value, kMilliAmps);
}

TEST(SysfsAttribute, ErrorsAreValues)
{
    SysfsTree tree;
    tree.file("/sys/devices/x/empty", "");
    tree.file("/sys/devices/x/garbage", "on fire\n");
    auto fixture = build(tree);
    ASSERT_TRUE(fixture);
    int64_t value = 0;
    SysfsAttribute closed;
    EXPECT_EQ(closed.readInt(value), EBADF);
    SysfsAttribute missing;
    EXPECT_EQ(missing.open(fixture->hostPath("/sys/devices/x/none")), ENOENT);
    EXPECT_FALSE(missing.isOpen());
    EXPECT_EQ(missing.path(), fixture->hostPath("/sys/devices/x/none"));
    SysfsAttribute empty;
    ASSERT_EQ(empty.open(fixture->hostPath("/sys/devices/x/empty")), 0);
    EXPECT_EQ(empty.readInt(value), ENODATA);
    SysfsAttribute garbage;
    ASSERT_EQ(garbage.open(fixture->hostPath("/sys/devices/x/garbage")), 0);
    EXPECT_EQ(garbage.readInt(value), EINVAL);
}

TEST(SysfsAttribute, MovedAttributeKeepsItsFile)
{
    SysfsTree tree;
    tree.file("/sys/devices/x/in1_input", "5000\n");
    auto fixture = build(tree);
    ASSERT_TRUE(fixture);
    SysfsAttribute first;
    ASSERT_EQ(first.open(fixture->hostPath("/sys/devices/x/in1_input")), 0);
    SysfsAttribute second(std::move(first));
    // NOLINTNEXTLINE(bugprone-use-after-move,clang-analyzer-cplusplus.Move): on purpose
    EXPECT_FALSE(first.isOpen());
    int64_t value = 0;
    ASSERT_EQ(second.readInt(value), 0);
    EXPECT_EQ(value, 5000);
    EXPECT_EQ(second.reopen(), 0);
    ASSERT_EQ(second.readInt(value), 0);
}

TEST(SysfsRoot, PathsJoinUnderTheRoot)
{
    EXPECT_EQ(SysfsRoot("/").path("/sys/class/hwmon"), "/sys/class/hwmon");
    EXPECT_EQ(SysfsRoot("/tmp/fixture/").path("/sys/class/hwmon"), "/tmp/fixture/sys/class/hwmon");
    EXPECT_EQ(SysfsRoot("/tmp/fixture").path("sys"), "/tmp/fixture/sys");
    EXPECT_EQ(SysfsRoot("/tmp/fixture").root(), "/tmp/fixture");
}

TEST(SysfsRoot, ReadsTextBytesAndIntegers)
{
    SysfsTree tree;
    tree.file("/proc/device-tree/model", std::string("NVIDIA Jetson\0", 14));
    tree.file("/sys/devices/x/name", "ina3221\n\n");
    tree.file("/sys/devices/x/value", " -12 mV\n");
    tree.file("/sys/devices/x/garbage", "abc\n");
    auto fixture = build(tree);
    ASSERT_TRUE(fixture);
    const SysfsRoot root = fixture->root();
    EXPECT_EQ(root.readText("/sys/devices/x/name").value(), "ina3221");
    EXPECT_EQ(root.readText("/proc/device-tree/model").value(), "NVIDIA Jetson");
    EXPECT_EQ(
        root.readBytes("/proc/device-tree/model").value(), std::string("NVIDIA Jetson\0", 14));
    EXPECT_EQ(root.readInt("/sys/devices/x/value"), -12);
    EXPECT_EQ(root.readInt("/sys/devices/x/garbage"), std::nullopt);
    EXPECT_EQ(root.readInt("/sys/devices/x/none"), std::nullopt);
    const auto missing = root.readText("/sys/devices/x/none");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.status().message().find("/sys/devices/x/none"), std::string::npos);
}

TEST(SysfsRoot, ListIsSortedAndEmptyForAMissingDirectory)
{
    SysfsTree tree;
    for (const char* name : {"hwmon2", "hwmon0", "hwmon1"})
        tree.file(std::string("/sys/devices/h/") + name + "/name", "x\n");
    auto fixture = build(tree);
    ASSERT_TRUE(fixture);
    EXPECT_EQ(fixture->root().list("/sys/devices/h"),
        (std::vector<std::string> {"hwmon0", "hwmon1", "hwmon2"}));
    EXPECT_TRUE(fixture->root().list("/sys/class/nothing").empty());
    EXPECT_TRUE(fixture->root().isDirectory("/sys/devices/h"));
    EXPECT_FALSE(fixture->root().isDirectory("/sys/devices/h/hwmon0/name"));
    EXPECT_TRUE(fixture->root().exists("/sys/devices/h/hwmon0/name"));
}

TEST(SysfsRoot, CanonicalFollowsRelativeLinksInsideTheRoot)
{
    SysfsTree tree;
    const std::string device = "/sys/devices/platform/c240000.i2c/i2c-1/1-0040";
    tree.file(device + "/hwmon/hwmon3/name", "ina3221\n");
    tree.link("/sys/class/hwmon/hwmon3", device + "/hwmon/hwmon3");
    tree.link(device + "/hwmon/hwmon3/device", device);
    auto fixture = build(tree);
    ASSERT_TRUE(fixture);
    const SysfsRoot root = fixture->root();
    EXPECT_EQ(root.canonical("/sys/class/hwmon/hwmon3"), device + "/hwmon/hwmon3");
    EXPECT_EQ(root.canonical("/sys/class/hwmon/hwmon3/device"), device);
    EXPECT_EQ(root.canonical("/"), "/");
    EXPECT_EQ(root.canonical("/sys/class/hwmon/hwmon9"), "")
        << "a missing path resolves to nothing";
}

TEST(SysfsRoot, CanonicalOutsideTheRootIsEmpty)
{
    SysfsTree tree;
    tree.file("/sys/devices/x/name", "x\n");
    auto fixture = build(tree);
    ASSERT_TRUE(fixture);
    // Links written by hand: one absolute (to the host's own /), one climbing out of the root.
    const std::string escape = fixture->hostPath("/sys/class/escape");
    const std::string climb = fixture->hostPath("/sys/class/climb");
    ASSERT_EQ(::mkdir(fixture->hostPath("/sys/class").c_str(), 0755), 0);
    ASSERT_EQ(::symlink("/", escape.c_str()), 0);
    ASSERT_EQ(::symlink("../../..", climb.c_str()), 0);
    EXPECT_EQ(fixture->root().canonical("/sys/class/escape"), "");
    EXPECT_EQ(fixture->root().canonical("/sys/class/climb"), "");
    // A sibling directory whose name extends the root's is outside too.
    const std::string sibling = fixture->hostRoot() + "-sibling";
    ASSERT_EQ(::mkdir(sibling.c_str(), 0755), 0);
    const std::string toSibling = fixture->hostPath("/sys/class/sibling");
    ASSERT_EQ(::symlink(sibling.c_str(), toSibling.c_str()), 0);
    EXPECT_EQ(fixture->root().canonical("/sys/class/sibling"), "");
    ::rmdir(sibling.c_str());
}

TEST(SysfsFaults, ReadsFailWithTheRegisteredErrnoUntilCleared)
{
    SysfsTree tree;
    tree.file("/sys/devices/x/in1_input", "5000\n");
    auto fixture = build(tree);
    ASSERT_TRUE(fixture);
    const std::string path = fixture->hostPath("/sys/devices/x/in1_input");
    SysfsAttribute attribute;
    ASSERT_EQ(attribute.open(path), 0);
    int64_t value = 0;
    setSysfsReadFaults(std::make_shared<const SysfsReadFaults>(SysfsReadFaults {{path, ENODATA}}));
    EXPECT_EQ(attribute.readInt(value), ENODATA);
    EXPECT_FALSE(fixture->root().readText("/sys/devices/x/in1_input").ok());
    EXPECT_EQ(fixture->root().readInt("/sys/devices/x/in1_input"), std::nullopt);
    setSysfsReadFaults(nullptr);
    EXPECT_EQ(attribute.readInt(value), 0);
    EXPECT_EQ(value, 5000);
}

TEST(SysfsFaults, AFaultOnADeviceFileHitsItThroughClassLinks)
{
    SysfsTree tree;
    const std::string device = "/sys/devices/platform/i2c/1-0040/hwmon/hwmon0";
    tree.file(device + "/curr1_input", "100\n");
    tree.link("/sys/class/hwmon/hwmon0", device);
    tree.fault(device + "/curr1_input", EAGAIN);
    auto fixture = build(tree);
    ASSERT_TRUE(fixture);
    SysfsAttribute attribute;
    ASSERT_EQ(attribute.open(fixture->hostPath("/sys/class/hwmon/hwmon0/curr1_input")), 0);
    int64_t value = 0;
    EXPECT_EQ(attribute.readInt(value), EAGAIN);
    fixture->clearFault("/sys/class/hwmon/hwmon0/curr1_input");
    EXPECT_EQ(attribute.readInt(value), 0);
}

TEST(SysfsFaults, PermissionErrorsFailTheOpen)
{
    SysfsTree tree;
    tree.file("/sys/devices/virtual/powercap/intel-rapl/intel-rapl:0/energy_uj", "1\n", 0400);
    tree.fault("/sys/devices/virtual/powercap/intel-rapl/intel-rapl:0/energy_uj", EACCES);
    auto fixture = build(tree);
    ASSERT_TRUE(fixture);
    SysfsAttribute attribute;
    EXPECT_EQ(attribute.open(fixture->hostPath(
                  "/sys/devices/virtual/powercap/intel-rapl/intel-rapl:0/energy_uj")),
        EACCES);
    const auto text =
        fixture->root().readText("/sys/devices/virtual/powercap/intel-rapl/intel-rapl:0/energy_uj");
    ASSERT_FALSE(text.ok());
    EXPECT_NE(text.status().message().find(std::strerror(EACCES)), std::string::npos);
}

TEST(SysfsFaults, TwoLiveFixturesKeepTheirOwnFaults)
{
    SysfsTree tree;
    tree.file("/sys/devices/x/temp", "1000\n");
    tree.fault("/sys/devices/x/temp", EAGAIN);
    auto first = build(tree);
    auto second = build(tree);
    ASSERT_TRUE(first && second);
    int64_t value = 0;
    SysfsAttribute a;
    SysfsAttribute b;
    ASSERT_EQ(a.open(first->hostPath("/sys/devices/x/temp")), 0);
    ASSERT_EQ(b.open(second->hostPath("/sys/devices/x/temp")), 0);
    EXPECT_EQ(a.readInt(value), EAGAIN);
    EXPECT_EQ(b.readInt(value), EAGAIN);
    second.reset();
    EXPECT_EQ(a.readInt(value), EAGAIN) << "the other fixture's faults stay registered";
}

TEST(SysfsFaults, ReplacingTheTableWhileAnotherThreadReadsIsSafe)
{
    constexpr int kReplacements = 500;
    SysfsTree tree;
    tree.file("/sys/devices/x/in1_input", "5000\n");
    auto fixture = build(tree);
    ASSERT_TRUE(fixture);
    const std::string path = fixture->hostPath("/sys/devices/x/in1_input");
    SysfsAttribute attribute;
    ASSERT_EQ(attribute.open(path), 0);
    std::atomic<bool> done {false};
    std::atomic<int> unexpected {0};
    std::thread reader([&] {
        int64_t value = 0;
        while (!done.load()) {
            const int error = attribute.readInt(value);
            if (error != 0 && error != EIO)
                ++unexpected;
        }
    });
    for (int i = 0; i < kReplacements; ++i)
        setSysfsReadFaults(i % 2 == 0
                ? std::make_shared<const SysfsReadFaults>(SysfsReadFaults {{path, EIO}})
                : nullptr);
    done = true;
    reader.join();
    setSysfsReadFaults(nullptr);
    EXPECT_EQ(unexpected.load(), 0);
}

} // namespace
} // namespace jetagent

namespace jetagent {
namespace {

TEST(SysfsFixtureTree, SeedsChangeTheHwmonNumbering)
{
    constexpr uint32_t kSeeds[] = {test::kDefaultHwmonSeed, 1, 2, 977};
    std::set<std::string> directories;
    for (const uint32_t seed : kSeeds) {
        const SysfsTree tree = test::lowerBoard(test::agxOrinJp5(), seed);
        const auto it = tree.hwmons().find("1-0040");
        ASSERT_NE(it, tree.hwmons().end());
        directories.insert(it->second);
    }
    EXPECT_GE(directories.size(), 2u) << "the seeds must exercise more than one numbering";
}

TEST(SysfsFixtureTree, LinksAreRelativeAndResolveIntoTheDeviceTree)
{
    auto made = SysfsFixture::create(test::orinNanoJp6());
    ASSERT_TRUE(made.ok()) << made.status().message();
    const SysfsFixture& fixture = *made.value();
    const std::string hwmon = fixture.hwmonDirectory("1-0040");
    char target[4096] = {};
    ASSERT_GT(::readlink(fixture.hostPath(hwmon).c_str(), target, sizeof target - 1), 0);
    EXPECT_EQ(std::string(target).rfind("../../devices/platform/", 0), 0u) << target;
    EXPECT_EQ(fixture.root().canonical("/sys/bus/i2c/devices/1-0040"),
        "/sys/devices/platform/bus@0/c240000.i2c/i2c-1/1-0040");
    EXPECT_EQ(fixture.root().canonical("/sys/class/devfreq/17000000.gpu/device"),
        "/sys/devices/platform/bus@0/17000000.gpu");
    EXPECT_EQ(fixture.root().readBytes(hwmon + "/name").value(), "ina3221\n");
}

TEST(SysfsFixtureTree, IdentityFilesAsTheBoardWritesThem)
{
    auto made = SysfsFixture::create(test::orinNanoJp6());
    ASSERT_TRUE(made.ok()) << made.status().message();
    // Device-tree strings: each NUL-terminated (the literals' own final NUL is not counted).
    constexpr char kCompatible[] =
        "nvidia,p3768-0000+p3767-0005\0nvidia,p3767-0005\0nvidia,tegra234\0";
    constexpr char kModel[] = "NVIDIA Jetson Orin Nano Developer Kit\0";
    const SysfsRoot root = made.value()->root();
    EXPECT_EQ(root.readBytes("/proc/device-tree/compatible").value(),
        std::string(kCompatible, sizeof kCompatible - 1));
    EXPECT_EQ(
        root.readBytes("/proc/device-tree/model").value(), std::string(kModel, sizeof kModel - 1));
    EXPECT_EQ(root.readInt("/sys/module/tegra_fuse/parameters/tegra_chip_id"), 35);
    const auto release = root.readText("/etc/nv_tegra_release");
    ASSERT_TRUE(release.ok());
    EXPECT_EQ(release.value().rfind("# R36 (release), REVISION: 4.3,", 0), 0u);

    auto host = SysfsFixture::create(test::x86Host());
    ASSERT_TRUE(host.ok()) << host.status().message();
    EXPECT_FALSE(host.value()->root().exists("/proc/device-tree"));
    const auto cpuinfo = host.value()->root().readText("/proc/cpuinfo");
    ASSERT_TRUE(cpuinfo.ok());
    EXPECT_NE(cpuinfo.value().find("model name\t: 11th Gen Intel(R) Core(TM) i7-1185G7"),
        std::string::npos);
}

} // namespace
} // namespace jetagent
