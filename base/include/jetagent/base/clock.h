// The one clock of jetagent: CLOCK_MONOTONIC in nanoseconds, the clock V4L2 stamps buffers with.
#pragma once

#include <cstdint>
#include <ctime>

namespace jetagent {

// Nanoseconds since an arbitrary point (boot); never jumps with wall-clock changes.
inline int64_t monotonicNs()
{
    timespec ts {};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

constexpr double nsToMs(int64_t ns)
{
    return static_cast<double>(ns) / 1e6;
}
constexpr double nsToS(int64_t ns)
{
    return static_cast<double>(ns) / 1e9;
}

} // namespace jetagent
