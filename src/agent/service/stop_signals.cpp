// Signals for commands that run until stopped.
#include "service/stop_signals.h"

#include <atomic>
#include <cerrno>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

namespace jetagent {

namespace {

// The handler only touches lock-free atomics, write() and _exit(), so it is async-signal-safe in
// whichever thread runs it.
std::atomic<int> g_writeFd {-1};
std::atomic<int> g_stopCount {0};
std::atomic<bool> g_serving {false};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");

extern "C" void onSignal(int sig)
{
    const int savedErrno = errno;
    // The second stop signal goes to a loop that serves them (it writes the summary of what was
    // measured and quits); otherwise, and at the third, the process ends here and now.
    if (sig != SIGHUP) {
        const int earlier = g_stopCount.fetch_add(1);
        if (earlier >= 2 || (earlier == 1 && !g_serving.load()))
            _exit(128 + sig);
    }
    const unsigned char byte = static_cast<unsigned char>(sig);
    const int fd = g_writeFd.load();
    if (fd >= 0) {
        // A full pipe (hundreds of unread signals) loses this one; the loop has plenty to read.
        [[maybe_unused]] const ssize_t n = ::write(fd, &byte, 1);
    }
    errno = savedErrno;
}

} // namespace

SignalGuard::SignalGuard(bool enabled, bool reload) : enabled_(enabled), reload_(reload)
{
    if (!enabled_)
        return;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
        // Without the pipe, signals keep their default actions: the run can still be killed.
        enabled_ = false;
        return;
    }
    readFd_ = fds[0];
    g_stopCount = 0;
    g_serving = false;
    g_writeFd = fds[1];
    struct sigaction action { };
    action.sa_handler = onSignal;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < kStopSignalCount; ++i)
        sigaction(kStopSignals[i], &action, &previousStop_[i]);
    if (reload_)
        sigaction(SIGHUP, &action, &previousHup_);
}

SignalGuard::~SignalGuard()
{
    if (!enabled_)
        return;
    for (size_t i = 0; i < kStopSignalCount; ++i)
        sigaction(kStopSignals[i], &previousStop_[i], nullptr);
    if (reload_)
        sigaction(SIGHUP, &previousHup_, nullptr);
    const int writeFd = g_writeFd.exchange(-1);
    ::close(writeFd);
    ::close(readFd_);
}

int SignalGuard::wait(int ms)
{
    if (!enabled_) {
        ::poll(nullptr, 0, ms);
        return 0;
    }
    pollfd p {readFd_, POLLIN, 0};
    if (::poll(&p, 1, ms) <= 0)
        return 0;
    unsigned char byte = 0;
    return ::read(readFd_, &byte, 1) == 1 ? byte : 0;
}

void SignalGuard::setServing(bool serving)
{
    g_serving = enabled_ && serving;
}

const char* signalName(int sig)
{
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGXCPU: return "SIGXCPU (the CPU-time limit)";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    case SIGALRM: return "SIGALRM";
    case SIGVTALRM: return "SIGVTALRM";
    case SIGPROF: return "SIGPROF";
    default: return "a signal";
    }
}

} // namespace jetagent
