// Energy from sampled power: trapezoidal integration over any time window, with linear
// interpolation at the window's edges.
#pragma once

#include <cstddef>
#include <cstdint>

namespace jetagent {

struct EnergyWindow {
    double joules = 0.0;
    bool covered = false; // the samples span the whole window (else joules covers only the
                          // overlapping part and must not be reported as the window's energy)
    int samplesInside = 0; // samples strictly inside (t0, t1)
    bool shorterThanUpdate = false; // the window is shorter than the sensor's update period, so
                                    // the figure is an interpolation, not a measurement
};

// Trapezoidal integral over [t0, t1] of the piecewise-linear power curve through the points
// (timeNs(i), watts(i)), i < n, ascending in time. `Get` callables let callers integrate a ring
// without copying it. `updatePeriodNs` (0 = unknown) sets shorterThanUpdate.
template <typename TimeAt, typename WattsAt>
EnergyWindow integratePower(
    size_t n, TimeAt timeNs, WattsAt watts, int64_t t0, int64_t t1, int64_t updatePeriodNs = 0)
{
    EnergyWindow w;
    w.shorterThanUpdate = updatePeriodNs > 0 && t1 - t0 < updatePeriodNs;
    if (n < 2 || t1 <= t0)
        return w;
    w.covered = timeNs(0) <= t0 && timeNs(n - 1) >= t1;
    auto valueAt = [&](size_t i, int64_t t) {
        const double ta = static_cast<double>(timeNs(i));
        const double tb = static_cast<double>(timeNs(i + 1));
        const double pa = watts(i);
        const double pb = watts(i + 1);
        return tb > ta ? pa + (pb - pa) * (static_cast<double>(t) - ta) / (tb - ta) : pa;
    };
    double sum = 0.0; // watt-nanoseconds
    for (size_t i = 0; i + 1 < n; ++i) {
        const int64_t a = timeNs(i);
        const int64_t b = timeNs(i + 1);
        if (b <= t0)
            continue;
        if (a >= t1)
            break;
        const int64_t lo = a > t0 ? a : t0;
        const int64_t hi = b < t1 ? b : t1;
        if (hi > lo)
            sum += 0.5 * (valueAt(i, lo) + valueAt(i, hi)) * static_cast<double>(hi - lo);
        if (a > t0 && a < t1)
            ++w.samplesInside;
    }
    if (timeNs(n - 1) > t0 && timeNs(n - 1) < t1)
        ++w.samplesInside;
    w.joules = sum * 1e-9;
    return w;
}

} // namespace jetagent
