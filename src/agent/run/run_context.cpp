// The context every result carries: what ran, where, with which versions.
#include "run/run_context.h"

#include <ctime>
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
