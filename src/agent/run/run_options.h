// The `run` section: how long a run lasts, how frames are paced, and the memory it may take.
// A leaf: the configuration reader includes it without the pipeline.
#pragma once

#include <cstdint>

#include "jetagent/base/enum_names.h"

namespace jetagent {

enum class Pacing {
    Realtime, // non-live sources deliver frames at their rate; the worker takes the newest, drops
              // are counted
    None, // as fast as possible, for offline evaluation: a bounded FIFO, no frame is dropped
};
inline constexpr EnumName<Pacing> kPacingNames[] = {
    {Pacing::Realtime, "realtime"}, {Pacing::None, "none"}};

struct RunConfig {
    uint64_t frames = 0; // stop after this many source frames; 0 = no limit
    double durationS = 0.0; // stop after this many seconds; 0 = no limit
    Pacing pacing = Pacing::Realtime;
    int queueDepth =
        4; // frames buffered per task when pacing is none; more smooths jitter, costs memory
    // The most memory the frames in flight and the statistics may take, checked at start-up
    // against the source's frame size; 0 = three quarters of the machine's memory.
    int64_t memoryBudgetMb = 0;
    // Under systemd: the longest start-up (or reload) for which systemd's timeout is extended
    // while engines build; past it a start-up fails (exit 1) and says why. 0 = no limit.
    double startupTimeoutS = 1800.0;
};

} // namespace jetagent
