// The top of every thread jetagent starts: an exception that escapes a thread's body (an
// allocation that failed, a library's own exception) would call std::terminate and lose what the
// run has recorded; here it is caught and handed to the thread's owner instead.
#pragma once

#include <exception>
#include <new>
#include <string>

#include "jetagent/base/log.h"

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

} // namespace jetagent
