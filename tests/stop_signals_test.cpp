// SignalGuard: signals reach the main loop through its pipe, in order; a second stop signal quits
// at once; the previous handlers come back afterwards.
#include <csignal>

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "service/stop_signals.h"

namespace jetagent {
namespace {

TEST(SignalGuard, DeliversSignalsToTheLoopInOrder)
{
    SignalGuard guard(true, true);
    ASSERT_GE(guard.fd(), 0);
    EXPECT_EQ(guard.wait(0), 0) << "nothing pending yet";
    ASSERT_EQ(raise(SIGHUP), 0);
    ASSERT_EQ(raise(SIGHUP), 0);
    ASSERT_EQ(raise(SIGTERM), 0);
    EXPECT_EQ(guard.wait(1000), SIGHUP);
    EXPECT_EQ(guard.wait(1000), SIGHUP);
    EXPECT_EQ(guard.wait(1000), SIGTERM);
    EXPECT_EQ(guard.wait(10), 0);
}

TEST(SignalGuard, RestoresThePreviousHandlers)
{
    struct sigaction before { };
    sigaction(SIGHUP, nullptr, &before);
    {
        SignalGuard guard(true, true);
        struct sigaction during { };
        sigaction(SIGHUP, nullptr, &during);
        EXPECT_NE(during.sa_handler, before.sa_handler);
    }
    struct sigaction after { };
    sigaction(SIGHUP, nullptr, &after);
    EXPECT_EQ(after.sa_handler, before.sa_handler);
}

TEST(SignalGuard, WithoutReloadSighupKeepsItsDefaultAction)
{
    const pid_t pid = fork();
    if (pid == 0) {
        SignalGuard guard(true, false);
        raise(SIGHUP);
        _exit(0); // not reached: SIGHUP's default action ends the process
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status));
    EXPECT_EQ(WTERMSIG(status), SIGHUP);
}

TEST(SignalGuard, ASecondStopSignalQuitsAtOnce)
{
    const pid_t pid = fork();
    if (pid == 0) {
        SignalGuard guard(true, true);
        raise(SIGTERM); // the first asks the loop to stop...
        if (guard.wait(1000) != SIGTERM)
            _exit(3);
        raise(SIGINT); // ...the second exits, 128 + the signal, as a shell reports it
        _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 128 + SIGINT);
}

} // namespace
} // namespace jetagent
