// What a running config does about signals: a small state machine of its own.
//
//   Running   --SIGHUP, the new config prepared-------> Reloading: the frames in flight finish,
//                                                       then the new config runs
//   Running   --SIGHUP, the new config refused--------> Running (the old config goes on)
//   Running,
//   Reloading --SIGTERM or SIGINT----------------------> Stopping: the frames in flight finish
//   Stopping  --a second stop signal, or the stop------> Abandoned: what was measured is written
//               timeout with a frame still in flight     and the process ends at once
//
// It decides and says what it decided (the log, systemd's status); the agent does the work
// through the callbacks, and its event loop arms the stop timer and ends on Abandoned.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "jetagent/base/status.h"

namespace jetagent {

class ServiceNotifier;

class RunControl {
public:
    enum class State { Running, Reloading, Stopping, Abandoned };

    struct Callbacks {
        // Loads and prepares the config to reload (the agent keeps it); an error leaves the
        // running config as it is.
        std::function<Status()> prepareReload;
        // A stop signal came while a prepared reload waited for the frames in flight: drop it.
        std::function<void()> dropReload;
        // Ends capture; the frames in flight finish (Pipeline::requestStop).
        std::function<void(const std::string& reason)> requestStop;
    };

    // `configPath`: empty when there is no file to reload (SIGHUP is then ignored, logged).
    // `stopTimeoutS`: how long the frames in flight may take after a stop signal (0: no limit).
    RunControl(
        Callbacks callbacks, std::string configPath, double stopTimeoutS, ServiceNotifier& notify);

    // What to do next, for the event loop.
    enum class Next { Continue, ArmStopTimer, Abandon };
    Next onSignal(int sig);
    // The stop timer expired (the frames in flight did not finish in time).
    Next onStopTimeout();

    State state() const { return state_; }
    bool stopSignalled() const { return stopSignalled_; }
    // The stop timer's delay, once armed.
    int64_t stopTimeoutNs() const { return static_cast<int64_t>(stopTimeoutS_ * 1e9); }
    // Abandoned: why, and the process's exit status (128 + the signal, or 1 after a timeout).
    const std::string& abandonReason() const { return abandonReason_; }
    int exitCode() const { return exitCode_; }

private:
    Next reload();
    Next stop(int sig);
    Next abandon(std::string why, int exitCode);

    Callbacks callbacks_;
    std::string configPath_;
    double stopTimeoutS_;
    ServiceNotifier& notify_;
    State state_ = State::Running;
    bool stopSignalled_ = false;
    std::string abandonReason_;
    int exitCode_ = 0;
};

} // namespace jetagent
