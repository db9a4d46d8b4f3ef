// The top of every thread jetagent starts: an exception that escapes a thread's body (an
// allocation that failed, a library's own exception) would call std::terminate and lose what the
// run has recorded; here it is caught and handed to the thread's owner instead.
#pragma once

#include <exception>
#include <new>
#include <string>
#include <sys/resource.h>
#include <system_error>
#include <thread>
#include <utility>

#include "jetagent/base/log.h"
#include "jetagent/base/status.h"

namespace jetagent {

// Runs `body()`. If it throws, `onFailure(what)` is called with a message that names `thread`
// ("task shapes: out of memory (std::bad_alloc)"), so that the owner can end the run cleanly
// (its summary written). Should `onFailure` itself throw (memory may still be short), the
// failure is logged and the thread ends.
template <typename Body, typename OnFailure>
void guardThread(const std::string& thread, Body&& body, OnFailure&& onFailure) noexcept
{
    std::string what;
    try {
        body();
        return;
    } catch (const std::bad_alloc&) {
        what = "out of memory (std::bad_alloc)";
    } catch (const std::exception& e) {
        what = e.what();
    } catch (...) {
        what = "an unknown exception";
    }
    try {
        onFailure(thread + ": " + what);
    } catch (...) {
        try {
            logger("agent")->critical("{}: {}; and ending it failed too", thread, what);
        } catch (...) {
            // Nothing more can be said without memory.
        }
    }
}

// The limits a thread that cannot start may have run into: "the address-space limit (ulimit -v)
// is 800 MiB; the process limit (ulimit -u) is 1024" (only those set).
inline std::string threadLimitsText()
{
    std::string text;
    rlimit limit {};
    if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        text = "the address-space limit (ulimit -v) is " +
            std::to_string(static_cast<unsigned long long>(limit.rlim_cur >> 20)) + " MiB";
    if (::getrlimit(RLIMIT_NPROC, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        text += (text.empty() ? "" : "; ") + std::string("the process limit (ulimit -u) is ") +
            std::to_string(static_cast<unsigned long long>(limit.rlim_cur));
    return text;
}

// What to say when the system refused a thread: which, why, and the limits in force.
inline std::string threadStartError(const std::string& name, const std::exception& e)
{
    const std::string limits = threadLimitsText();
    return "cannot start the " + name + " thread: " + e.what() + " (memory or threads ran out" +
        (limits.empty() ? "" : ": " + limits) + ")";
}

// Starts `thread` running `body`. A thread the system cannot start (pthread_create's EAGAIN, as
// under a tight `ulimit -v`, where its stack no longer fits) is an error that names the thread
// and the limits in force, returned rather than thrown, so that the owner can end the run with
// its summary.
template <typename Body>
Status startThread(std::thread& thread, const std::string& name, Body&& body)
{
    try {
        thread = std::thread(std::forward<Body>(body));
        return Status();
    } catch (const std::system_error& e) {
        return Status::runtime(threadStartError(name, e));
    }
}

} // namespace jetagent
