// The reconnect state machine of live streams; see reconnect.h.
#include "jetagent/hal/reconnect.h"

#include <algorithm>

namespace jetagent {

namespace {

int64_t toNs(double seconds)
{
    return static_cast<int64_t>(seconds * 1e9);
}

} // namespace

const char* lossReasonName(LossReason reason)
{
    switch (reason) {
    case LossReason::OpenFailed: return "the pipeline did not start";
    case LossReason::Error: return "an error";
    case LossReason::EndOfStream: return "the end of the stream";
    case LossReason::Timeout: return "no frame in time";
    case LossReason::Stalled: return "no frame for the watchdog's time";
    }
    return "?";
}

ReconnectMachine::ReconnectMachine(const ReconnectPolicy& policy, int64_t nowNs)
    : policy_(policy),
      attemptStartNs_(nowNs),
      delayS_(std::min(policy.firstDelayS, policy.maxDelayS))
{
}

void ReconnectMachine::frame(int64_t nowNs)
{
    if (state_ == LinkState::Connecting) {
        if (disconnected_)
            ++reconnects_;
        disconnected_ = false;
        everStreamed_ = true;
        delayS_ = std::min(policy_.firstDelayS, policy_.maxDelayS);
        state_ = LinkState::Streaming;
    }
    if (state_ == LinkState::Streaming)
        lastFrameNs_ = nowNs;
}

void ReconnectMachine::lost(LossReason reason, int64_t nowNs)
{
    if (state_ == LinkState::Backoff || state_ == LinkState::Stopped)
        return;
    lastLoss_ = reason;
    if (!everStreamed_) {
        state_ = LinkState::Stopped;
        stopReason_ = StopReason::FirstAttemptFailed;
        return;
    }
    if (!policy_.reconnect) {
        state_ = LinkState::Stopped;
        stopReason_ = reason == LossReason::EndOfStream ? StopReason::Ended : StopReason::Failed;
        return;
    }
    if (state_ == LinkState::Streaming) {
        ++disconnects_;
        disconnected_ = true;
        lostAtNs_ = nowNs;
    }
    enterBackoff(nowNs);
}

void ReconnectMachine::enterBackoff(int64_t nowNs)
{
    retryAtNs_ = nowNs + toNs(delayS_);
    delayS_ = std::min(delayS_ * 2.0, policy_.maxDelayS);
    state_ = LinkState::Backoff;
}

void ReconnectMachine::tick(int64_t nowNs)
{
    switch (state_) {
    case LinkState::Backoff:
        if (nowNs >= retryAtNs_) {
            state_ = LinkState::Connecting;
            attemptStartNs_ = nowNs;
            ++attempts_;
        }
        break;
    case LinkState::Connecting:
        if (nowNs - attemptStartNs_ > toNs(policy_.attemptS))
            lost(LossReason::Timeout, nowNs);
        break;
    case LinkState::Streaming:
        if (policy_.reconnect && policy_.watchdogS > 0.0 &&
            nowNs - lastFrameNs_ > toNs(policy_.watchdogS))
            lost(LossReason::Stalled, nowNs);
        break;
    case LinkState::Stopped: break;
    }
}

void ReconnectMachine::stop()
{
    if (state_ == LinkState::Stopped)
        return;
    state_ = LinkState::Stopped;
    stopReason_ = StopReason::Requested;
}

} // namespace jetagent
