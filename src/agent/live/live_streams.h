// What the live view shows of a task that serves several streams: one row per stream and how its
// batches were gathered, taken from the recorder's statistics once a second (never from the hot
// path), for /api/status and the page's stream table.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "run/task_stats.h"
#include <nlohmann/json.hpp>

namespace jetagent {

// What the previous status saw of a task's streams, for their rates: each stream's results (in
// TaskStats::streamStats' order) and when. Starts empty: the first status has no rate.
struct StreamRates {
    std::vector<uint64_t> results;
    int64_t atNs = 0;
};

// One row per stream `stats` keeps (TaskStats::streamStats, in its order), as an array:
//   name          the stream's name (`names`, by run stream; its index when unnamed)
//   frames        records, failed ones included; results: successful results (clip results
//                 for action tasks); failed
//   fps           results per second since the previous status (`rates`, which this updates to
//                 `nowNs`); null on the first
//   dropped       frames the task's queue of that stream replaced by newer ones (`dropped(run
//                 stream)`; null when not given)
//   end_to_end_ms {p50, p99}: the stream's steady state over the whole run, nearest rank as the
//                 summary's; null before a result
//   top1          the share of frames whose true class is known with it as top-1 label; null when
//                 none is known; scored: those frames
// Empty when the task serves one stream.
nlohmann::json liveStreamRows(const TaskStats& stats, const std::vector<std::string>& names,
    const std::function<uint64_t(size_t)>& dropped, int64_t nowNs, StreamRates& rates);

// How the task's batches were gathered (TaskStats::batching): batch_size (the engine's batch),
// timeout_ms (`timeoutNs`; null when unknown), batches, mean_fill (frames per slot offered; null
// before a batch), multi_stream (batches with frames of two streams or more), waited (batches
// whose gather waited for more streams) and timed_out (... until the timeout).
nlohmann::json liveBatching(const BatchStats& batching, int64_t timeoutNs);

} // namespace jetagent
