// GStreamer's start-up (gst_init.h), in each plugin that drives GStreamer.
#include "gst_init.h"

#include <mutex>

#include <gst/gst.h>

namespace jetagent {

bool detail::initGStreamer(std::string* why)
{
    static std::once_flag once;
    static bool ready = false;
    static std::string problem;
    std::call_once(once, [] {
        GError* raw = nullptr;
        ready = gst_init_check(nullptr, nullptr, &raw) != FALSE;
        if (!ready)
            problem = raw != nullptr ? raw->message : "gst_init failed";
        if (raw != nullptr)
            g_error_free(raw);
    });
    if (why != nullptr)
        *why = problem;
    return ready;
}

} // namespace jetagent
