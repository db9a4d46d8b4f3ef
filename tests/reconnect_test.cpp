// The reconnect state machine of live streams: its transitions, backoff and bounds, on a clock the
// test moves.
#include <gtest/gtest.h>

#include "jetagent/hal/reconnect.h"

namespace jetagent {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kS = 1'000'000'000;

ReconnectPolicy policy()
{
    ReconnectPolicy p;
    p.firstDelayS = 0.1;
    p.maxDelayS = 1.0;
    p.attemptS = 3.0;
    p.watchdogS = 2.0;
    return p;
}

// A machine that has streamed since t=0 and is now at `t`.
ReconnectMachine streaming(int64_t t = 0)
{
    ReconnectMachine m(policy(), t);
    m.frame(t);
    return m;
}

TEST(ReconnectMachine, FirstFrameMakesItStream)
{
    ReconnectMachine m(policy(), 0);
    EXPECT_EQ(m.state(), LinkState::Connecting);
    m.tick(2 * kS);
    EXPECT_EQ(m.state(), LinkState::Connecting);
    m.frame(2 * kS);
    EXPECT_EQ(m.state(), LinkState::Streaming);
    EXPECT_TRUE(m.everStreamed());
    EXPECT_EQ(m.disconnects(), 0u);
    EXPECT_EQ(m.reconnects(), 0u);
}

TEST(ReconnectMachine, AFirstAttemptThatFailsIsAnOpenFailureNotARetry)
{
    for (const LossReason reason :
        {LossReason::OpenFailed, LossReason::Error, LossReason::EndOfStream}) {
        ReconnectMachine m(policy(), 0);
        m.lost(reason, 10 * kMs);
        EXPECT_EQ(m.state(), LinkState::Stopped);
        EXPECT_EQ(m.stopReason(), StopReason::FirstAttemptFailed);
        EXPECT_EQ(m.lastLoss(), reason);
        EXPECT_EQ(m.disconnects(), 0u);
    }
}

TEST(ReconnectMachine, FirstAttemptIsBounded)
{
    ReconnectMachine m(policy(), 0);
    m.tick(3 * kS); // at the bound: still trying
    EXPECT_EQ(m.state(), LinkState::Connecting);
    m.tick(3 * kS + 1);
    EXPECT_EQ(m.state(), LinkState::Stopped);
    EXPECT_EQ(m.stopReason(), StopReason::FirstAttemptFailed);
    EXPECT_EQ(m.lastLoss(), LossReason::Timeout);
}

TEST(ReconnectMachine, LossBacksOffDoublingUpToTheCapThenRecovers)
{
    ReconnectMachine m = streaming();
    int64_t t = 5 * kS;
    m.frame(t);
    m.lost(LossReason::Error, t);
    EXPECT_EQ(m.state(), LinkState::Backoff);
    EXPECT_EQ(m.disconnects(), 1u);
    EXPECT_EQ(m.lostAtNs(), t);
    // Delays of the failed attempts: 0.1, 0.2, 0.4, 0.8, then the cap of 1 s.
    const int64_t expected[] = {100 * kMs, 200 * kMs, 400 * kMs, 800 * kMs, kS, kS};
    for (const int64_t delay : expected) {
        EXPECT_EQ(m.retryAtNs() - t, delay);
        m.tick(m.retryAtNs() - 1);
        EXPECT_EQ(m.state(), LinkState::Backoff) << "not before its time";
        t = m.retryAtNs();
        m.tick(t);
        ASSERT_EQ(m.state(), LinkState::Connecting);
        t += 5 * kMs;
        m.lost(LossReason::OpenFailed, t); // the server still refuses
        ASSERT_EQ(m.state(), LinkState::Backoff);
    }
    EXPECT_EQ(m.disconnects(), 1u) << "failed attempts are not more disconnects";
    EXPECT_EQ(m.attempts(), 7u);
    m.tick(m.retryAtNs());
    m.frame(m.retryAtNs() + 300 * kMs);
    EXPECT_EQ(m.state(), LinkState::Streaming);
    EXPECT_EQ(m.reconnects(), 1u);
    // Backoff starts again from the first delay after a recovery.
    t = m.retryAtNs() + kS;
    m.frame(t);
    m.lost(LossReason::EndOfStream, t);
    EXPECT_EQ(m.retryAtNs() - t, 100 * kMs);
    EXPECT_EQ(m.disconnects(), 2u);
}

TEST(ReconnectMachine, EachReconnectAttemptIsBounded)
{
    ReconnectMachine m = streaming();
    m.lost(LossReason::Error, kS);
    m.tick(m.retryAtNs());
    const int64_t started = m.retryAtNs();
    m.tick(started + 3 * kS);
    EXPECT_EQ(m.state(), LinkState::Connecting);
    m.tick(started + 3 * kS + 1);
    EXPECT_EQ(m.state(), LinkState::Backoff);
    EXPECT_EQ(m.lastLoss(), LossReason::Timeout);
    EXPECT_EQ(m.disconnects(), 1u);
}

TEST(ReconnectMachine, WatchdogTurnsSilenceIntoALoss)
{
    ReconnectMachine m = streaming();
    m.frame(kS);
    m.tick(3 * kS); // 2 s without a frame: at the bound
    EXPECT_EQ(m.state(), LinkState::Streaming);
    m.tick(3 * kS + 1);
    EXPECT_EQ(m.state(), LinkState::Backoff);
    EXPECT_EQ(m.lastLoss(), LossReason::Stalled);
    EXPECT_EQ(m.disconnects(), 1u);
}

TEST(ReconnectMachine, WithoutReconnectALossEndsTheStream)
{
    ReconnectMachine ended = streaming();
    ended.setReconnect(false);
    ended.tick(100 * kS); // no watchdog for a stream that is not reopened: a stall only
    EXPECT_EQ(ended.state(), LinkState::Streaming);
    ended.lost(LossReason::EndOfStream, 100 * kS);
    EXPECT_EQ(ended.state(), LinkState::Stopped);
    EXPECT_EQ(ended.stopReason(), StopReason::Ended);

    ReconnectMachine failed = streaming();
    failed.setReconnect(false);
    failed.lost(LossReason::Error, kS);
    EXPECT_EQ(failed.stopReason(), StopReason::Failed);
    EXPECT_EQ(failed.disconnects(), 0u);
}

TEST(ReconnectMachine, StopEndsEveryState)
{
    ReconnectMachine connecting(policy(), 0);
    connecting.stop();
    EXPECT_EQ(connecting.state(), LinkState::Stopped);
    EXPECT_EQ(connecting.stopReason(), StopReason::Requested);

    ReconnectMachine backoff = streaming();
    backoff.lost(LossReason::Error, kS);
    backoff.stop();
    backoff.tick(100 * kS);
    EXPECT_EQ(backoff.state(), LinkState::Stopped);
    backoff.frame(100 * kS);
    EXPECT_EQ(backoff.state(), LinkState::Stopped);
    EXPECT_EQ(backoff.reconnects(), 0u);
}

TEST(ReconnectMachine, LossesInBackoffAreIgnored)
{
    ReconnectMachine m = streaming();
    m.lost(LossReason::Error, kS);
    const int64_t retry = m.retryAtNs();
    m.lost(LossReason::Error, kS + 1);
    EXPECT_EQ(m.retryAtNs(), retry);
    EXPECT_EQ(m.disconnects(), 1u);
}

TEST(ReconnectMachine, FirstDelayNeverExceedsTheCap)
{
    ReconnectPolicy p = policy();
    p.firstDelayS = 2.0;
    p.maxDelayS = 0.5;
    ReconnectMachine m(p, 0);
    m.frame(0);
    m.lost(LossReason::Error, kS);
    EXPECT_EQ(m.retryAtNs() - kS, 500 * kMs);
}

} // namespace
} // namespace jetagent
