// ServiceNotifier: the sd_notify datagrams, to path and abstract sockets, and the environment it
// reads; the watchdog pinger's "only while frames flow".
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "service/service.h"
#include "test_support.h"

namespace jetagent {
namespace {

// A bound datagram socket: a path, or "@name" in the abstract namespace.
class Receiver {
public:
    explicit Receiver(const std::string& name)
    {
        fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un address {};
        address.sun_family = AF_UNIX;
        name.copy(address.sun_path, name.size());
        if (name[0] == '@')
            address.sun_path[0] = '\0';
        const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
        EXPECT_EQ(::bind(fd_, reinterpret_cast<const sockaddr*>(&address), length), 0);
    }
    ~Receiver() { ::close(fd_); }
    Receiver(const Receiver&) = delete;
    Receiver& operator=(const Receiver&) = delete;

    // The next datagram, or "" after `ms`.
    std::string next(int ms = 2000)
    {
        pollfd p {fd_, POLLIN, 0};
        if (::poll(&p, 1, ms) <= 0)
            return "";
        char buffer[1024];
        const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
        return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : "";
    }

private:
    int fd_ = -1;
};

TEST(ServiceNotifier, SendsTheProtocolsMessagesToAPathSocket)
{
    test::TempDir dir;
    Receiver systemd(dir / "notify");
    ServiceNotifier notify = ServiceNotifier::toSocket(dir / "notify", 0);
    ASSERT_TRUE(notify.enabled());
    EXPECT_EQ(notify.watchdogPingNs(), 0);
    notify.ready("up");
    EXPECT_EQ(systemd.next(), "READY=1\nSTATUS=up");
    notify.status("30 fps");
    EXPECT_EQ(systemd.next(), "STATUS=30 fps");
    notify.watchdog();
    EXPECT_EQ(systemd.next(), "WATCHDOG=1");
    notify.extendTimeout(30'000'000);
    EXPECT_EQ(systemd.next(), "EXTEND_TIMEOUT_USEC=30000000");
    notify.stopping("bye");
    EXPECT_EQ(systemd.next(), "STOPPING=1\nSTATUS=bye");

    // RELOADING=1 carries CLOCK_MONOTONIC in microseconds: between two readings around it.
    const auto usec = [] {
        timespec t {};
        clock_gettime(CLOCK_MONOTONIC, &t);
        return static_cast<long long>(t.tv_sec) * 1'000'000LL + t.tv_nsec / 1000;
    };
    const long long before = usec();
    notify.reloading("again");
    const long long after = usec();
    const std::string reloading = systemd.next();
    ASSERT_EQ(reloading.rfind("RELOADING=1\nMONOTONIC_USEC=", 0), 0u) << reloading;
    const long long stamp = std::stoll(reloading.substr(reloading.find('=', 12) + 1));
    EXPECT_GE(stamp, before);
    EXPECT_LE(stamp, after);
    EXPECT_NE(reloading.find("\nSTATUS=again"), std::string::npos);
}

TEST(ServiceNotifier, ReachesAnAbstractSocket)
{
    const std::string name = "@jetagent-test-" + std::to_string(getpid());
    Receiver systemd(name);
    ServiceNotifier notify = ServiceNotifier::toSocket(name, 0);
    notify.ready("abstract");
    EXPECT_EQ(systemd.next(), "READY=1\nSTATUS=abstract");
}

TEST(ServiceNotifier, ReadsTheEnvironmentLikeSdWatchdogEnabled)
{
    test::TempDir dir;
    Receiver systemd(dir / "notify");
    unsetenv("NOTIFY_SOCKET");
    EXPECT_FALSE(ServiceNotifier::fromEnvironment().enabled());

    setenv("NOTIFY_SOCKET", (dir / "notify").c_str(), 1);
    setenv("WATCHDOG_USEC", "4000000", 1);
    setenv("WATCHDOG_PID", std::to_string(getpid()).c_str(), 1);
    ServiceNotifier ours = ServiceNotifier::fromEnvironment();
    EXPECT_TRUE(ours.enabled());
    EXPECT_EQ(ours.watchdogPingNs(), 2'000'000'000); // half the interval

    // A watchdog meant for another process (WATCHDOG_PID), or a bad value, is not ours.
    setenv("WATCHDOG_PID", std::to_string(getpid() + 1).c_str(), 1);
    EXPECT_EQ(ServiceNotifier::fromEnvironment().watchdogPingNs(), 0);
    unsetenv("WATCHDOG_PID");
    setenv("WATCHDOG_USEC", "soon", 1);
    EXPECT_EQ(ServiceNotifier::fromEnvironment().watchdogPingNs(), 0);

    // A socket name that is neither a path nor @name: no notifications, no crash.
    setenv("NOTIFY_SOCKET", "relative/socket", 1);
    EXPECT_FALSE(ServiceNotifier::fromEnvironment().enabled());
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
}

TEST(ServiceNotifier, WithoutASocketEverythingIsANoOp)
{
    ServiceNotifier none;
    EXPECT_FALSE(none.enabled());
    EXPECT_FALSE(none.send("READY=1"));
    WatchdogPinger pinger(none);
    pinger.setProbe([] { return true; });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(pinger.pings(), 0u);
}

TEST(WatchdogPinger, PingsOnlyWhileTheProbeSaysFramesFlow)
{
    test::TempDir dir;
    Receiver systemd(dir / "notify");
    ServiceNotifier notify = ServiceNotifier::toSocket(dir / "notify", 100'000); // every 50 ms
    std::atomic<bool> flowing {true};
    WatchdogPinger pinger(notify);
    pinger.setProbe([&flowing] { return flowing.load(); });
    EXPECT_EQ(systemd.next(), "WATCHDOG=1");
    EXPECT_EQ(systemd.next(), "WATCHDOG=1");

    flowing = false;
    // A ping already on its way may still arrive; then nothing, however long.
    systemd.next(120);
    const uint64_t pings = pinger.pings();
    EXPECT_EQ(systemd.next(300), "");
    EXPECT_EQ(pinger.pings(), pings);
    EXPECT_GT(pinger.withheld(), 0u);

    flowing = true;
    EXPECT_EQ(systemd.next(), "WATCHDOG=1");
    pinger.setProbe(nullptr); // between runs: nothing flows
    systemd.next(120);
    EXPECT_EQ(systemd.next(300), "");
}

} // namespace
} // namespace jetagent
