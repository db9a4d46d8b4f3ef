// Fixture sysfs trees on disk, with injected read faults registered with the sysfs seam.
#include "sysfs_fixture.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <mutex>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace jetagent::test {

namespace {

// ---- Live fixtures' faults, merged into the one table the seam holds ----

std::mutex g_faultsMutex;
std::map<const SysfsFixture*, std::map<std::string, int>> g_liveFaults;

void publishAllFaults()
{
    auto merged = std::make_shared<SysfsReadFaults>();
    for (const auto& [owner, faults] : g_liveFaults)
        merged->insert(faults.begin(), faults.end());
    setSysfsReadFaults(merged->empty() ? nullptr : std::move(merged));
}

} // namespace

// ---- SysfsFixture ----

Expected<std::unique_ptr<SysfsFixture>> SysfsFixture::create(const BoardSpec& board, uint32_t seed)
{
    return create(lowerBoard(board, seed), board);
}

Expected<std::unique_ptr<SysfsFixture>> SysfsFixture::create(SysfsTree tree, BoardSpec board)
{
    std::error_code ec;
    const std::string label = board.id.empty() ? "tree" : board.id;
    std::string pattern =
        (fs::temp_directory_path(ec) / ("jetagent-sysfs-" + label + "-XXXXXX")).string();
    if (ec || ::mkdtemp(pattern.data()) == nullptr)
        return Status::io("cannot create a fixture directory " + pattern + ": " + errnoText(errno));
    std::unique_ptr<SysfsFixture> fixture(new SysfsFixture());
    fixture->root_ = fs::canonical(pattern, ec).string();
    if (ec)
        fixture->root_ = pattern;
    fixture->board_ = std::move(board);
    fixture->tree_ = std::move(tree);
    if (Status written = fixture->tree_.write(fixture->root_); !written.ok())
        return written.withContext("fixture " + label);
    for (const auto& [path, error] : fixture->tree_.faults())
        fixture->faults_[fixture->root_ + path] = error;
    fixture->publishFaults();
    return fixture;
}

SysfsFixture::~SysfsFixture()
{
    {
        const std::lock_guard<std::mutex> lock(g_faultsMutex);
        if (g_liveFaults.erase(this) > 0)
            publishAllFaults();
    }
    std::error_code ec;
    if (!root_.empty())
        fs::remove_all(root_, ec);
}

void SysfsFixture::publishFaults()
{
    const std::lock_guard<std::mutex> lock(g_faultsMutex);
    g_liveFaults[this] = faults_;
    publishAllFaults();
}

std::string SysfsFixture::hwmonDirectory(const std::string& key) const
{
    const auto it = tree_.hwmons().find(key);
    return it == tree_.hwmons().end() ? std::string() : it->second;
}

Status SysfsFixture::writeValue(const std::string& absolute, int64_t value)
{
    char text[kRewriteWidth + 2];
    std::snprintf(text, sizeof text, "%-*" PRId64 "\n", kRewriteWidth, value);
    const std::string host = hostPath(absolute);
    const int fd = ::open(host.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return Status::io("cannot open " + host + ": " + errnoText(errno));
    const size_t length = static_cast<size_t>(kRewriteWidth) + 1;
    const ssize_t written = ::pwrite(fd, text, length, 0);
    const int error = errno;
    ::close(fd);
    if (written != static_cast<ssize_t>(length))
        return Status::io("cannot write " + host + ": " + errnoText(written < 0 ? error : EIO));
    return {};
}

Status SysfsFixture::setRailMilli(const std::string& rail, int64_t milliVolts, int64_t milliAmps)
{
    const auto it = tree_.rails().find(rail);
    if (it == tree_.rails().end())
        return Status::notFound("no rail " + rail + " in fixture " + board_.id);
    const RailFiles& files = it->second;
    if (!files.voltage.empty())
        if (Status s = writeValue(files.voltage, milliVolts * files.voltageScale); !s.ok())
            return s;
    if (!files.current.empty())
        if (Status s = writeValue(files.current, milliAmps * files.currentScale); !s.ok())
            return s;
    if (!files.power.empty()) {
        const double milliWatts =
            static_cast<double>(milliVolts) * static_cast<double>(milliAmps) / 1000.0;
        if (Status s = writeValue(
                files.power, std::llround(milliWatts * static_cast<double>(files.powerScale)));
            !s.ok())
            return s;
    }
    return {};
}

Status SysfsFixture::setRailWatts(const std::string& rail, double watts)
{
    const auto it = tree_.rails().find(rail);
    if (it == tree_.rails().end())
        return Status::notFound("no rail " + rail + " in fixture " + board_.id);
    const RailFiles& files = it->second;
    if (files.voltage.empty()) {
        if (files.power.empty())
            return Status::invalid("rail " + rail + " has neither voltage nor power files");
        return writeValue(
            files.power, std::llround(watts * 1000.0 * static_cast<double>(files.powerScale)));
    }
    const auto raw = root().readInt(files.voltage);
    if (!raw || *raw <= 0)
        return Status::io("cannot read the voltage of rail " + rail);
    const int64_t milliVolts = *raw / files.voltageScale;
    const int64_t milliAmps = std::llround(watts * 1e6 / static_cast<double>(milliVolts));
    return setRailMilli(rail, milliVolts, milliAmps);
}

Status SysfsFixture::setRaplEnergy(const std::string& zoneId, uint64_t microJoules)
{
    return writeValue(raplZoneDirectory(zoneId) + "/energy_uj", static_cast<int64_t>(microJoules));
}

void SysfsFixture::setFault(const std::string& absolute, int error)
{
    std::error_code ec;
    const fs::path resolved = fs::canonical(hostPath(absolute), ec);
    faults_[ec ? hostPath(absolute) : resolved.string()] = error;
    publishFaults();
}

void SysfsFixture::clearFault(const std::string& absolute)
{
    std::error_code ec;
    const fs::path resolved = fs::canonical(hostPath(absolute), ec);
    faults_.erase(ec ? hostPath(absolute) : resolved.string());
    publishFaults();
}

} // namespace jetagent::test
