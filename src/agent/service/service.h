// The systemd service protocol: sd_notify's datagrams to $NOTIFY_SOCKET, written here rather than
// linking libsystemd (the protocol is one sendto() of "KEY=value" lines). With NOTIFY_SOCKET unset
// every call does nothing, so the same code runs under systemd, in a terminal and in tests.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include <sys/socket.h>
#include <sys/un.h>

namespace jetagent {

class ServiceNotifier {
public:
    ServiceNotifier() = default; // disabled: every message is dropped
    ~ServiceNotifier();
    ServiceNotifier(ServiceNotifier&& other) noexcept;
    ServiceNotifier& operator=(ServiceNotifier&& other) noexcept;
    ServiceNotifier(const ServiceNotifier&) = delete;
    ServiceNotifier& operator=(const ServiceNotifier&) = delete;

    // Reads NOTIFY_SOCKET (a path, or "@name" for the abstract namespace), WATCHDOG_USEC and
    // WATCHDOG_PID (the watchdog is ours only when it names this process or is absent).
    static ServiceNotifier fromEnvironment();
    // To a given socket, for tests; `watchdogUsec` 0 means no watchdog.
    static ServiceNotifier toSocket(const std::string& socket, int64_t watchdogUsec);

    bool enabled() const { return fd_ >= 0; }
    // The interval at which WATCHDOG=1 is due (half of WATCHDOG_USEC, as sd_watchdog_enabled(3)
    // advises); 0 when systemd set no watchdog.
    int64_t watchdogPingNs() const { return watchdogUsec_ * 1000 / 2; }

    // One datagram of newline-separated KEY=value assignments. False when it could not be sent
    // (the first failure is logged; the run goes on: systemd's view is not worth a crash).
    // Thread-safe.
    bool send(const std::string& message);

    void ready(const std::string& status) { send("READY=1\nSTATUS=" + status); }
    void status(const std::string& status) { send("STATUS=" + status); }
    void watchdog() { send("WATCHDOG=1"); }
    // RELOADING=1 with the CLOCK_MONOTONIC time the reload began, as systemd 253's notify-reload
    // expects; older systemd reads RELOADING=1 alone.
    void reloading(const std::string& status);
    void stopping(const std::string& status) { send("STOPPING=1\nSTATUS=" + status); }
    void extendTimeout(int64_t usec) { send("EXTEND_TIMEOUT_USEC=" + std::to_string(usec)); }

    // Start-up (`reload` false) or a reload begins now, and may extend systemd's timeout for at
    // most `limitS` seconds in all (0: no limit). Thread-safe.
    void beginExtendedPhase(double limitS, bool reload);
    // When the phase's extensions must stop (CLOCK_MONOTONIC ns; 0: never), and what it is.
    int64_t phaseDeadlineNs() const { return phaseDeadlineNs_.load(); }
    double phaseLimitS() const { return phaseLimitS_.load(); }
    bool phaseIsReload() const { return phaseIsReload_.load(); }

private:
    int fd_ = -1;
    sockaddr_un address_ {};
    socklen_t addressLength_ = 0;
    int64_t watchdogUsec_ = 0;
    std::atomic<bool> failed_ {false};
    std::atomic<int64_t> phaseDeadlineNs_ {0};
    std::atomic<double> phaseLimitS_ {0.0};
    std::atomic<bool> phaseIsReload_ {false};
};

// While one of these lives, systemd is told every few seconds to wait longer for start-up or a
// reload (EXTEND_TIMEOUT_USEC): building engines can take minutes on a board, longer than any
// fixed TimeoutStartSec should be. But not for ever: past the phase's limit
// (ServiceNotifier::beginExtendedPhase, run.startup_timeout_s) the extensions stop; a start-up
// then fails at once (exit 1, saying why), and a reload is left to systemd's own timeout while the
// previous config keeps running.
class StartupKeepAlive {
public:
    StartupKeepAlive(ServiceNotifier& notifier, const std::string& status);
    ~StartupKeepAlive();
    StartupKeepAlive(const StartupKeepAlive&) = delete;
    StartupKeepAlive& operator=(const StartupKeepAlive&) = delete;

    static constexpr int64_t kExtendUsec = 30'000'000; // each message buys this much
    static constexpr int kPeriodMs = 10'000; // and is sent this often

private:
    void overrun(const std::string& status); // the phase's limit has passed

    ServiceNotifier& notifier_;
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool done_ = false;
};

// Pings the watchdog at its interval, but only while `flowing()` says frames are moving: a
// stalled camera or a hung engine stops the pings, and systemd restarts the service. Runs in its
// own thread, so that the main loop's other work (a reload building engines) does not matter.
class WatchdogPinger {
public:
    explicit WatchdogPinger(ServiceNotifier& notifier);
    ~WatchdogPinger();
    WatchdogPinger(const WatchdogPinger&) = delete;
    WatchdogPinger& operator=(const WatchdogPinger&) = delete;

    // What says whether frames moved since the last call; empty: nothing flows (no pings).
    // Called from the pinger's thread, under its lock.
    void setProbe(std::function<bool()> flowing);
    uint64_t pings() const { return pings_.load(); }
    uint64_t withheld() const { return withheld_.load(); }

private:
    void loop();

    ServiceNotifier& notifier_;
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::function<bool()> flowing_;
    bool done_ = false;
    std::atomic<uint64_t> pings_ {0};
    std::atomic<uint64_t> withheld_ {0};
};

} // namespace jetagent
