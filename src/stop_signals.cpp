// SIGINT/SIGTERM for commands that run until stopped.
#include "stop_signals.h"

#include <atomic>
#include <ctime>

#include <unistd.h>

namespace jetagent {

namespace {

// The handler only touches lock-free atomics and _exit, so it is async-signal-safe in whichever
// thread runs it.
std::atomic<int> g_pendingSignal {0};
std::atomic<int> g_signalCount {0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");

extern "C" void onStopSignal(int sig)
{
    if (g_signalCount.fetch_add(1) >= 1)
        _exit(128 + sig);
    g_pendingSignal.store(sig);
}

} // namespace

SignalGuard::SignalGuard(bool enabled) : enabled_(enabled)
{
    if (!enabled_)
        return;
    g_pendingSignal = 0;
    g_signalCount = 0;
    struct sigaction action { };
    action.sa_handler = onStopSignal;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previousInt_);
    sigaction(SIGTERM, &action, &previousTerm_);
}

SignalGuard::~SignalGuard()
{
    if (!enabled_)
        return;
    sigaction(SIGINT, &previousInt_, nullptr);
    sigaction(SIGTERM, &previousTerm_, nullptr);
}

int SignalGuard::wait(int ms)
{
    timespec timeout {ms / 1000, static_cast<long>(ms % 1000) * 1'000'000L};
    if (g_pendingSignal.load() == 0)
        nanosleep(&timeout, nullptr);
    return enabled_ ? g_pendingSignal.exchange(0) : 0;
}

const char* signalName(int sig)
{
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "a signal";
    }
}

} // namespace jetagent
