// What a running config does about signals (run_control.h).
#include "service/run_control.h"

#include <csignal>

#include "jetagent/base/log.h"
#include "service/service.h"
#include "service/stop_signals.h"

namespace jetagent {

RunControl::RunControl(
    Callbacks callbacks, std::string configPath, double stopTimeoutS, ServiceNotifier& notify)
    : callbacks_(std::move(callbacks)),
      configPath_(std::move(configPath)),
      stopTimeoutS_(stopTimeoutS),
      notify_(notify)
{
}

RunControl::Next RunControl::onSignal(int sig)
{
    if (state_ == State::Abandoned)
        return Next::Abandon;
    if (sig != SIGHUP)
        return state_ == State::Stopping
            ? abandon(std::string("a second ") + signalName(sig) + ": quitting at once", 128 + sig)
            : stop(sig);
    auto log = logger("agent");
    if (configPath_.empty()) {
        log->warn("SIGHUP: this run has no config file to reload; ignored");
        return Next::Continue;
    }
    if (state_ != State::Running) {
        log->info("SIGHUP: already stopping or reloading; ignored");
        return Next::Continue;
    }
    return reload();
}

RunControl::Next RunControl::reload()
{
    auto log = logger("agent");
    log->info("SIGHUP: reloading {}", configPath_);
    notify_.reloading("reloading " + configPath_);
    const Status problem = callbacks_.prepareReload();
    if (!problem.ok()) {
        log->error("reload failed, the previous config keeps running:\n{}", problem.message());
        notify_.ready("reload failed, the previous config keeps running: " +
            problem.message().substr(0, problem.message().find('\n')));
        return Next::Continue;
    }
    log->info("reload: the new config is valid; finishing the frames in flight");
    state_ = State::Reloading;
    callbacks_.requestStop("reload");
    return Next::Continue;
}

RunControl::Next RunControl::stop(int sig)
{
    logger("agent")->info(
        "{}: stopping; finishing the frames in flight (send it again to quit at once)",
        signalName(sig));
    notify_.stopping(std::string("stopping (") + signalName(sig) + ")");
    callbacks_.requestStop(std::string("signal ") + signalName(sig));
    if (state_ == State::Reloading)
        callbacks_.dropReload();
    state_ = State::Stopping;
    stopSignalled_ = true;
    return stopTimeoutS_ > 0 ? Next::ArmStopTimer : Next::Continue;
}

RunControl::Next RunControl::onStopTimeout()
{
    if (state_ != State::Stopping)
        return Next::Continue;
    // An inference that never returns (the sources' reads all return within a fraction of a
    // second, stalled or not): the exit status tells systemd (or the user) that the stop was not
    // clean.
    return abandon("the frames in flight did not finish within " +
            std::to_string(static_cast<int>(stopTimeoutS_)) +
            " s of the stop signal (a hung camera or engine)",
        1);
}

RunControl::Next RunControl::abandon(std::string why, int exitCode)
{
    state_ = State::Abandoned;
    abandonReason_ = std::move(why);
    exitCode_ = exitCode;
    return Next::Abandon;
}

} // namespace jetagent
