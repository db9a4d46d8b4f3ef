// The systemd service protocol.
#include "service/service.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <unistd.h>

#include "jetagent/base/clock.h"
#include "jetagent/base/format.h"
#include "jetagent/base/log.h"
#include "jetagent/base/status.h"
#include "jetagent/base/thread_guard.h"

namespace jetagent {

ServiceNotifier::~ServiceNotifier()
{
    if (fd_ >= 0)
        ::close(fd_);
}

ServiceNotifier::ServiceNotifier(ServiceNotifier&& other) noexcept
    : fd_(other.fd_),
      address_(other.address_),
      addressLength_(other.addressLength_),
      watchdogUsec_(other.watchdogUsec_),
      failed_(other.failed_.load()),
      phaseDeadlineNs_(other.phaseDeadlineNs_.load()),
      phaseLimitS_(other.phaseLimitS_.load()),
      phaseIsReload_(other.phaseIsReload_.load())
{
    other.fd_ = -1;
}

ServiceNotifier& ServiceNotifier::operator=(ServiceNotifier&& other) noexcept
{
    if (this != &other) {
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = other.fd_;
        address_ = other.address_;
        addressLength_ = other.addressLength_;
        watchdogUsec_ = other.watchdogUsec_;
        failed_ = other.failed_.load();
        phaseDeadlineNs_ = other.phaseDeadlineNs_.load();
        phaseLimitS_ = other.phaseLimitS_.load();
        phaseIsReload_ = other.phaseIsReload_.load();
        other.fd_ = -1;
    }
    return *this;
}

ServiceNotifier ServiceNotifier::toSocket(const std::string& socket, int64_t watchdogUsec)
{
    ServiceNotifier n;
    auto log = logger("service");
    if (socket.empty())
        return n;
    // A path, or an abstract socket named with a leading '@' (systemd's own notify socket is a
    // path; containers and tests use either).
    if (socket.size() >= sizeof(n.address_.sun_path) || (socket[0] != '/' && socket[0] != '@')) {
        log->warn(
            "NOTIFY_SOCKET '{}' is not a socket path or @name; not notifying systemd", socket);
        return n;
    }
    n.address_.sun_family = AF_UNIX;
    std::memcpy(n.address_.sun_path, socket.data(), socket.size());
    if (socket[0] == '@')
        n.address_.sun_path[0] = '\0';
    n.addressLength_ = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + socket.size());
    n.fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (n.fd_ < 0) {
        log->warn("cannot create the notify socket: {}; not notifying systemd", errnoText(errno));
        return n;
    }
    n.watchdogUsec_ = watchdogUsec > 0 ? watchdogUsec : 0;
    return n;
}

ServiceNotifier ServiceNotifier::fromEnvironment()
{
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read at start-up, before any thread sets variables
    const char* socket = std::getenv("NOTIFY_SOCKET");
    if (!socket || !*socket)
        return ServiceNotifier();
    int64_t watchdog = 0;
    if (const char* usec = std::getenv("WATCHDOG_USEC")) { // NOLINT(concurrency-mt-unsafe)
        char* end = nullptr;
        const long long v = std::strtoll(usec, &end, 10);
        bool ours = true;
        if (const char* pid = std::getenv("WATCHDOG_PID")) // NOLINT(concurrency-mt-unsafe)
            ours = std::strtoll(pid, nullptr, 10) == static_cast<long long>(::getpid());
        if (end && *end == '\0' && v > 0 && ours)
            watchdog = v;
    }
    return toSocket(socket, watchdog);
}

bool ServiceNotifier::send(const std::string& message)
{
    if (fd_ < 0)
        return false;
    const ssize_t n = ::sendto(fd_, message.data(), message.size(), MSG_NOSIGNAL,
        reinterpret_cast<const sockaddr*>(&address_), addressLength_);
    if (n == static_cast<ssize_t>(message.size()))
        return true;
    if (!failed_.exchange(true))
        logger("service")->warn("cannot notify systemd ({}); going on without it",
            n < 0 ? errnoText(errno) : std::string("short write"));
    return false;
}

void ServiceNotifier::reloading(const std::string& status)
{
    timespec now {};
    clock_gettime(CLOCK_MONOTONIC, &now);
    const long long usec = static_cast<long long>(now.tv_sec) * 1'000'000LL + now.tv_nsec / 1000;
    send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec) + "\nSTATUS=" + status);
}

namespace {

// Both helper threads sleep on `wake` until `done`: set it, wake the thread and wait for it.
void stopAndJoin(std::mutex& mutex, bool& done, std::condition_variable& wake, std::thread& thread)
{
    {
        std::lock_guard<std::mutex> lock(mutex);
        done = true;
    }
    wake.notify_all();
    if (thread.joinable())
        thread.join();
}

} // namespace

StartupKeepAlive::StartupKeepAlive(ServiceNotifier& notifier, const std::string& status)
    : notifier_(notifier)
{
    if (!notifier_.enabled())
        return;
    notifier_.send("EXTEND_TIMEOUT_USEC=" + std::to_string(kExtendUsec) + "\nSTATUS=" + status);
    thread_ = std::thread([this, status] {
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            const int64_t deadline = notifier_.phaseDeadlineNs();
            const int64_t now = monotonicNs();
            int64_t waitNs = int64_t(kPeriodMs) * 1'000'000;
            if (deadline > 0)
                waitNs = std::min(waitNs, std::max<int64_t>(deadline - now, 0));
            if (wake_.wait_for(lock, std::chrono::nanoseconds(waitNs), [this] { return done_; }))
                return;
            if (deadline > 0 && monotonicNs() >= deadline) {
                overrun(status);
                return;
            }
            notifier_.extendTimeout(kExtendUsec);
        }
    });
}

StartupKeepAlive::~StartupKeepAlive()
{
    stopAndJoin(mutex_, done_, wake_, thread_);
}

void StartupKeepAlive::overrun(const std::string& status)
{
    const bool reload = notifier_.phaseIsReload();
    std::string limit = formatText("%g", notifier_.phaseLimitS());
    const std::string why = std::string(reload ? "the reload" : "start-up") + " took longer than " +
        limit + " s (run.startup_timeout_s) while " + status;
    auto log = logger("service");
    if (reload) {
        // The previous config still runs: leave the verdict to systemd's reload timeout.
        log->error("{}; no longer extending systemd's timeout", why);
        notifier_.status(why);
        return;
    }
    log->error("{}; giving up (raise run.startup_timeout_s if the board needs longer)", why);
    notifier_.send("STATUS=start-up failed: " + why);
    std::fflush(nullptr);
    std::_Exit(1); // the main thread is inside a build that cannot be interrupted
}

void ServiceNotifier::beginExtendedPhase(double limitS, bool reload)
{
    phaseLimitS_ = limitS;
    phaseIsReload_ = reload;
    phaseDeadlineNs_ = limitS > 0 ? monotonicNs() + static_cast<int64_t>(limitS * 1e9) : 0;
}

WatchdogPinger::WatchdogPinger(ServiceNotifier& notifier) : notifier_(notifier)
{
    if (notifier_.enabled() && notifier_.watchdogPingNs() > 0)
        thread_ = std::thread([this] {
            guardThread(
                "the watchdog pinger", [this] { loop(); },
                [](const std::string& why) { logger("service")->error("{}", why); });
        });
}

WatchdogPinger::~WatchdogPinger()
{
    stopAndJoin(mutex_, done_, wake_, thread_);
}

void WatchdogPinger::setProbe(std::function<bool()> flowing)
{
    std::lock_guard<std::mutex> lock(mutex_);
    flowing_ = std::move(flowing);
}

void WatchdogPinger::loop()
{
    auto log = logger("service");
    const auto period = std::chrono::nanoseconds(notifier_.watchdogPingNs());
    bool warned = false;
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, period, [this] { return done_; })) {
        if (flowing_ && flowing_()) {
            notifier_.watchdog();
            ++pings_;
            if (warned)
                log->info("frames flow again; watchdog pings resumed");
            warned = false;
            continue;
        }
        ++withheld_;
        if (!warned && flowing_)
            log->warn("no frames for {:.1f} s: withholding the watchdog ping, so that systemd "
                      "restarts the service if this lasts",
                static_cast<double>(notifier_.watchdogPingNs()) / 1e9);
        warned = flowing_ != nullptr;
    }
}

} // namespace jetagent
