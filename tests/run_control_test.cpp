// The daemon's loop: the event loop over descriptors and timers, and the run's signal state
// machine.
#include <chrono>
#include <csignal>
#include <string>
#include <vector>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "jetagent/base/clock.h"
#include "run/event_loop.h"
#include "service/run_control.h"
#include "service/service.h"

namespace jetagent {
namespace {

TEST(EventLoop, ADescriptorsInputCallsItsHandlerUntilItIsRead)
{
    int fds[2];
    ASSERT_EQ(::pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0);
    EventLoop loop;
    std::string read;
    ASSERT_TRUE(loop.watch(fds[0],
                        [&] {
                            char c = 0;
                            if (::read(fds[0], &c, 1) == 1)
                                read += c;
                            if (read.size() == 3)
                                loop.quit(7);
                        })
                    .ok());
    ASSERT_EQ(::write(fds[1], "abc", 3), 3); // one handler call per byte read: level-triggered
    auto code = loop.run();
    ASSERT_TRUE(code.ok());
    EXPECT_EQ(*code, 7);
    EXPECT_EQ(read, "abc");
    ::close(fds[0]);
    ::close(fds[1]);
}

TEST(EventLoop, TimersFireOnceOrPeriodicallyAndCanBeDisarmed)
{
    EventLoop loop;
    int once = 0;
    uint64_t ticks = 0;
    auto oneShot = loop.addTimer([&](uint64_t n) { once += static_cast<int>(n); });
    auto periodic = loop.addTimer([&](uint64_t n) { ticks += n; });
    auto never = loop.addTimer([&](uint64_t) { ADD_FAILURE() << "a disarmed timer fired"; });
    auto end = loop.addTimer([&](uint64_t) { loop.quit(0); });
    ASSERT_TRUE(oneShot && periodic && never && end);
    const int64_t start = monotonicNs();
    loop.setTimer(*oneShot, 5'000'000);
    loop.setTimer(*periodic, 10'000'000, 10'000'000);
    loop.setTimer(*never, 20'000'000);
    loop.setTimer(*never, 0); // disarmed before it was due
    loop.setTimer(*end, 105'000'000);
    ASSERT_TRUE(loop.run().ok());
    const double elapsedMs = static_cast<double>(monotonicNs() - start) / 1e6;
    EXPECT_EQ(once, 1);
    // Ten periods in 105 ms; expirations the loop was too busy to see are counted, not lost.
    EXPECT_EQ(ticks, static_cast<uint64_t>(elapsedMs / 10.0)) << elapsedMs << " ms";
    EXPECT_GE(elapsedMs, 105.0);
}

TEST(EventLoop, TheFirstQuitsCodeIsReturned)
{
    EventLoop loop;
    auto t = loop.addTimer([&](uint64_t) {
        loop.quit(3);
        loop.quit(4);
    });
    ASSERT_TRUE(t);
    loop.setTimer(*t, 1'000'000);
    auto code = loop.run();
    ASSERT_TRUE(code.ok());
    EXPECT_EQ(*code, 3);
}

// The state machine with callbacks that record what the agent was asked to do.
struct Agent {
    Status reloadResult;
    int prepared = 0;
    int dropped = 0;
    std::vector<std::string> stops;
    ServiceNotifier notify; // not under systemd: says nothing
    RunControl control(const std::string& path, double stopTimeoutS)
    {
        return RunControl({[this] {
                               ++prepared;
                               return reloadResult;
                           },
                              [this] { ++dropped; },
                              [this](const std::string& reason) { stops.push_back(reason); }},
            path, stopTimeoutS, notify);
    }
};

TEST(RunControl, AValidReloadDrainsTheRunAndFurtherHupsAreIgnored)
{
    Agent a;
    RunControl c = a.control("agent.yaml", 0);
    EXPECT_EQ(c.onSignal(SIGHUP), RunControl::Next::Continue);
    EXPECT_EQ(c.state(), RunControl::State::Reloading);
    EXPECT_EQ(a.prepared, 1);
    EXPECT_EQ(a.stops, std::vector<std::string> {"reload"});
    EXPECT_EQ(c.onSignal(SIGHUP), RunControl::Next::Continue);
    EXPECT_EQ(a.prepared, 1) << "a SIGHUP while reloading is ignored";
    EXPECT_FALSE(c.stopSignalled());
}

TEST(RunControl, AnInvalidReloadKeepsTheRunGoing)
{
    Agent a;
    a.reloadResult = Status::invalid("agent.yaml:3: bad");
    RunControl c = a.control("agent.yaml", 0);
    EXPECT_EQ(c.onSignal(SIGHUP), RunControl::Next::Continue);
    EXPECT_EQ(c.state(), RunControl::State::Running);
    EXPECT_TRUE(a.stops.empty());
    a.reloadResult = Status();
    c.onSignal(SIGHUP); // a later, valid one is taken
    EXPECT_EQ(c.state(), RunControl::State::Reloading);
    EXPECT_EQ(a.prepared, 2);
}

TEST(RunControl, WithoutAConfigFileSighupIsIgnored)
{
    Agent a;
    RunControl c = a.control("", 0);
    EXPECT_EQ(c.onSignal(SIGHUP), RunControl::Next::Continue);
    EXPECT_EQ(c.state(), RunControl::State::Running);
    EXPECT_EQ(a.prepared, 0);
}

TEST(RunControl, AStopDrainsArmsTheTimeoutAndASecondStopAbandons)
{
    Agent a;
    RunControl c = a.control("agent.yaml", 2.5);
    EXPECT_EQ(c.onSignal(SIGTERM), RunControl::Next::ArmStopTimer);
    EXPECT_EQ(c.stopTimeoutNs(), 2'500'000'000);
    EXPECT_EQ(c.state(), RunControl::State::Stopping);
    EXPECT_TRUE(c.stopSignalled());
    EXPECT_EQ(a.stops, std::vector<std::string> {"signal SIGTERM"});
    EXPECT_EQ(c.onSignal(SIGHUP), RunControl::Next::Continue); // no reload while stopping
    EXPECT_EQ(a.prepared, 0);
    EXPECT_EQ(c.onSignal(SIGINT), RunControl::Next::Abandon);
    EXPECT_EQ(c.state(), RunControl::State::Abandoned);
    EXPECT_EQ(c.exitCode(), 128 + SIGINT);
    EXPECT_EQ(c.abandonReason(), "a second SIGINT: quitting at once");
}

TEST(RunControl, AStopDuringAReloadDropsTheReload)
{
    Agent a;
    RunControl c = a.control("agent.yaml", 0);
    c.onSignal(SIGHUP);
    EXPECT_EQ(c.onSignal(SIGTERM), RunControl::Next::Continue) << "no timeout set: no timer";
    EXPECT_EQ(a.dropped, 1);
    EXPECT_EQ(c.state(), RunControl::State::Stopping);
    EXPECT_EQ(a.stops, (std::vector<std::string> {"reload", "signal SIGTERM"}));
}

TEST(RunControl, TheStopTimeoutAbandonsOnlyAStoppingRun)
{
    Agent a;
    RunControl c = a.control("agent.yaml", 1);
    EXPECT_EQ(c.onStopTimeout(), RunControl::Next::Continue) << "not stopping";
    c.onSignal(SIGTERM);
    EXPECT_EQ(c.onStopTimeout(), RunControl::Next::Abandon);
    EXPECT_EQ(c.exitCode(), 1);
    EXPECT_EQ(c.abandonReason(),
        "the frames in flight did not finish within 1 s of the stop signal (a hung camera or "
        "engine)");
}

} // namespace
} // namespace jetagent
