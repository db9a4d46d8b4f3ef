// The context every result carries: what ran, where, with which versions.
#include "run/run_context.h"

#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include <sys/utsname.h>
#include <unistd.h>

#include <opencv2/core/version.hpp>

#include "version.h"

namespace jetagent {

namespace {

// The current UTC time, compact ("20261121T203000Z", for file names) or ISO 8601 with separators.
std::string utcString(bool compact)
{
    std::time_t now = std::time(nullptr);
    std::tm tm {};
    gmtime_r(&now, &tm);
    char buffer[64];
    if (compact)
        std::strftime(buffer, sizeof buffer, "%Y%m%dT%H%M%SZ", &tm);
    else
        std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buffer;
}

} // namespace

int64_t startTicksFromStat(const std::string& statLine)
{
    const size_t name = statLine.rfind(')');
    if (name == std::string::npos)
        return -1;
    // After the name: field 3 (the state) onwards; the start time is field 22.
    std::istringstream fields(statLine.substr(name + 1));
    std::string field;
    for (int i = 3; i <= 22; ++i)
        if (!(fields >> field))
            return -1;
    if (field.empty() || field.find_first_not_of("0123456789") != std::string::npos)
        return -1;
    try {
        return std::stoll(field);
    } catch (const std::out_of_range&) {
        return -1;
    }
}

int64_t processStartNs(int64_t& resolutionNs)
{
    std::ifstream in("/proc/self/stat");
    std::string line;
    const long ticksPerSecond = sysconf(_SC_CLK_TCK);
    if (!std::getline(in, line) || ticksPerSecond <= 0)
        return -1;
    const int64_t ticks = startTicksFromStat(line);
    if (ticks < 0)
        return -1;
    timespec boot {}, mono {};
    clock_gettime(CLOCK_BOOTTIME, &boot);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    constexpr int64_t kNsPerS = 1'000'000'000;
    const int64_t bootNs = static_cast<int64_t>(boot.tv_sec) * kNsPerS + boot.tv_nsec;
    const int64_t monoNs = static_cast<int64_t>(mono.tv_sec) * kNsPerS + mono.tv_nsec;
    resolutionNs = kNsPerS / ticksPerSecond;
    const int64_t startBootNs =
        ticks / ticksPerSecond * kNsPerS + ticks % ticksPerSecond * kNsPerS / ticksPerSecond;
    return startBootNs - (bootNs - monoNs);
}

std::string utcStamp()
{
    return utcString(true);
}

RunContext collectRunContext(const BoardIdentity& board)
{
    RunContext c;
    c.jetagentVersion = JETAGENT_VERSION;
    c.buildType = JETAGENT_BUILD_TYPE;
#if defined(__clang__)
    c.compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
    c.compiler = "gcc " __VERSION__;
#endif
    c.opencvVersion = CV_VERSION;
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) == 0)
        c.host = host;
    c.os = board.os;
    utsname u {};
    if (uname(&u) == 0) {
        c.kernel = std::string(u.sysname) + " " + u.release;
        c.machine = u.machine;
    }
    c.cpu = board.cpuModel.empty() ? board.model : board.cpuModel;
    // The board's online CPUs where the tree says (a replayed board's tree says its own), else
    // this machine's.
    c.cores = board.onlineCpus > 0 ? board.onlineCpus
                                   : static_cast<int>(std::thread::hardware_concurrency());
    c.startedUtc = utcString(false);
    return c;
}

} // namespace jetagent
