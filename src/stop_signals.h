// SIGINT/SIGTERM for commands that run until stopped: the first asks the main loop to stop
// cleanly, a second quits at once.
#pragma once

#include <csignal>

namespace jetagent {

// Installs the handlers for its lifetime (when enabled) and restores the previous ones after.
// A handler rather than blocked signals: threads that libraries start (TBB's workers, for one) do
// not inherit a mask set later, and one of them taking the signal must not kill the run.
class SignalGuard {
public:
    explicit SignalGuard(bool enabled);
    ~SignalGuard();
    SignalGuard(const SignalGuard&) = delete;
    SignalGuard& operator=(const SignalGuard&) = delete;

    // Waits up to `ms` (a signal cuts the wait short); returns a signal that arrived, or 0.
    int wait(int ms);

private:
    bool enabled_;
    struct sigaction previousInt_ { };
    struct sigaction previousTerm_ { };
};

// "SIGINT", "SIGTERM" or "a signal".
const char* signalName(int sig);

} // namespace jetagent
