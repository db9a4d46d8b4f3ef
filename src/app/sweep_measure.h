// The measuring half of `jetagent sweep`: one cell's engine, session and timed turns, and the
// process figures (RSS, CPU time, MemAvailable) read around them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "jetagent/base/process_usage.h"
#include "jetagent/engines/engine.h"
#include "sweep.h"

namespace jetagent {

// What one turn of timed runs adds to a cell.
struct TurnTotals {
    int64_t wallNs = 0; // from the first run's start to the last run's end
    int64_t cpuNs = 0; // process CPU time over the same span
    int64_t startNs = 0, endNs = 0; // CLOCK_MONOTONIC, for energy windows
    bool stopped = false; // `stopRequested` said yes before the turn's runs were done
};

// How often a turn asks whether to stop: Ctrl-C is answered within a run plus this, and the
// question (a signal poll, a system call) costs nothing measurable per run.
constexpr int64_t kStopPollNs = 200'000'000;

// `runs` timed Session::run calls (fewer when CLOCK_MONOTONIC passes `untilNs`, if non-zero);
// input window k (of `windows`, each `windowStride` floats
// apart in `pool`) feeds run k modulo windows. Each run's wall time is appended to `latencies`
// (reserved by the caller, so the loop allocates nothing). This loop is all the sweep adds to a
// bare Session::run loop (bench/sweep_overhead measures it). `stopRequested`, when given, is
// asked every kStopPollNs; a yes ends the turn early with totals.stopped set.
Status runTimedTurn(Session& session, TensorView view, const float* pool, size_t windows,
    size_t windowStride, int64_t runs, int64_t untilNs, std::vector<int64_t>& latencies,
    TurnTotals& totals, const std::function<bool()>& stopRequested = {});

// Latency figures of a cell from its runs' wall times (ns), as CellFigures fields.
void fillLatencyFigures(std::vector<int64_t> wallNs, int batch, CellFigures& f);

} // namespace jetagent
