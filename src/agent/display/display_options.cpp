// The `display` section's check.
#include "display/display_options.h"

#include "jetagent/hal/stream_out.h"

namespace jetagent {

std::string outputSchemeProblem(const std::string& output)
{
    const size_t scheme = output.find("://");
    if (scheme == std::string::npos || scheme == 0 || output.find('/') < scheme ||
        isStreamUri(output) || output.rfind("file://", 0) == 0)
        return "";
    return "'" + output.substr(0, scheme) +
        "://' is not an output jetagent writes: a file (PATH or file://PATH, .mp4, .mkv, .mov or "
        ".avi), rtp://HOST:PORT or rtsp://@:PORT/PATH";
}

} // namespace jetagent
