// formatText and appendText: printf's text whole, however long the strings put into it.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

#include "jetagent/base/format.h"
#include "jetagent/base/thread_guard.h"
#include "test_support.h"

namespace jetagent {
namespace {

TEST(FormatText, WritesTextOfAnyLengthWhole)
{
    EXPECT_EQ(formatText("%s: %d, %.2f", "a", 7, 1.5), "a: 7, 1.50");
    EXPECT_EQ(formatText("%s", ""), "");
    for (const size_t n : {0u, 1u, 127u, 128u, 129u, 1000u, 100000u}) {
        const std::string long_(n, 'x');
        const std::string text = formatText("[%s|%s]", long_.c_str(), long_.c_str());
        ASSERT_EQ(text.size(), 2 * n + 3) << n;
        EXPECT_EQ(text, "[" + long_ + "|" + long_ + "]") << n;
    }
}

TEST(FormatText, AppendKeepsWhatCameBefore)
{
    std::string out = "status";
    appendText(out, " | %s %llu", std::string(5000, 'y').c_str(), 42ULL);
    EXPECT_EQ(out, "status | " + std::string(5000, 'y') + " 42");
    appendText(out, "%s", "");
    EXPECT_EQ(out.size(), 6 + 3 + 5000 + 3u);
}

// A thread the system refuses (here: an address-space limit that leaves no room for its stack, as
// a tight `ulimit -v` does) is an error naming the thread and the limit, not an exception. In a
// child process, whose limit the test runner does not share.
TEST(StartThread, ARefusedThreadIsAnErrorNamingTheLimit)
{
    if (test::kAddressSanitizer)
        GTEST_SKIP()
            << "AddressSanitizer reserves terabytes of address space: no RLIMIT_AS under it";
    if (test::emulated())
        GTEST_SKIP() << "qemu-user reserves the guest's address space itself";
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        // The address space in use now, plus 1 MiB: no room for a thread's 8 MiB stack.
        std::ifstream status("/proc/self/status");
        std::string line;
        unsigned long long kb = 0;
        while (std::getline(status, line))
            if (line.rfind("VmSize:", 0) == 0)
                kb = std::stoull(line.substr(7));
        const rlimit limit {(kb + 1024) * 1024, (kb + 1024) * 1024};
        if (kb == 0 || ::setrlimit(RLIMIT_AS, &limit) != 0)
            ::_exit(3);
        std::thread thread;
        const Status s = startThread(thread, "sampler", [] {});
        if (thread.joinable())
            thread.join();
        if (s.ok())
            ::_exit(4);
        const bool named =
            s.message().find("cannot start the sampler thread") != std::string::npos &&
            s.message().find("ulimit -v") != std::string::npos;
        ::_exit(named ? 0 : 5);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "3: no limit set, 4: the thread started, 5: the error "
                                         "does not name the thread and the limit";
}

TEST(StartThread, AThreadThatStartsRuns)
{
    std::thread thread;
    int ran = 0;
    ASSERT_TRUE(startThread(thread, "worker", [&] { ran = 1; }).ok());
    thread.join();
    EXPECT_EQ(ran, 1);
}

} // namespace
} // namespace jetagent
