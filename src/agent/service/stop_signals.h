// Signals for commands that run until stopped: SIGINT/SIGTERM ask the main loop to stop cleanly (a
// second one quits at once, after the summary of what was measured where a loop serves it), and
// SIGHUP, where the command reloads, asks it to reload. The other signals whose default action
// ends the process, and that something other than a bug sends (SIGQUIT from Ctrl-\, SIGXCPU at a
// CPU-time limit such as systemd's LimitCPU=, SIGUSR1/2, SIGALRM, SIGVTALRM, SIGPROF from a stray
// kill or timer), stop the run the same way: the summary of what was measured is written. nginx
// takes SIGQUIT as a graceful stop too.
#pragma once

#include <csignal>
#include <cstddef>

namespace jetagent {

// Installs the handlers for its lifetime (when enabled) and restores the previous ones after.
// Handlers rather than blocked signals and a signalfd: threads that libraries start (TBB's
// workers, for one) do not inherit a mask set later, and one of them taking the signal must not
// kill the run. The handler writes the signal's number into a pipe the main loop polls, which is
// what a signalfd would give it: signals arrive in order, one read each, in the loop's own thread.
class SignalGuard {
public:
    // `reload`: SIGHUP is caught too (and reported by wait()); otherwise it keeps its default
    // action.
    explicit SignalGuard(bool enabled, bool reload = false);
    ~SignalGuard();
    SignalGuard(const SignalGuard&) = delete;
    SignalGuard& operator=(const SignalGuard&) = delete;

    // Waits up to `ms` (a signal cuts the wait short); returns a signal that arrived, or 0.
    int wait(int ms);
    // While a loop is serving the signals (calling wait() every few milliseconds), a second stop
    // signal is delivered to it too, so that it can write what was measured before it quits; at
    // other times (start-up, shutdown) and at the third, the second one ends the process at once.
    void setServing(bool serving);
    // The pipe's read end, for a loop that polls other descriptors too; -1 when disabled.
    int fd() const { return enabled_ ? readFd_ : -1; }

private:
    bool enabled_;
    bool reload_;
    int readFd_ = -1;
    static constexpr int kStopSignals[] = {
        SIGINT, SIGTERM, SIGQUIT, SIGXCPU, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF};
    static constexpr size_t kStopSignalCount = sizeof kStopSignals / sizeof kStopSignals[0];
    struct sigaction previousStop_[kStopSignalCount] { };
    struct sigaction previousHup_ { };
};

// "SIGINT", "SIGTERM", "SIGHUP", the other stop signals' names, or "a signal".
const char* signalName(int sig);

} // namespace jetagent
