// A task turns frames into results through one or more engines: classification (a result per
// frame) and action recognition (a result per clip of frames).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "jetagent/base/status.h"
#include "jetagent/engines/engine.h"
#include "jetagent/hal/frame_source.h"
#include "run/frame_record.h"

namespace jetagent {

class Task {
public:
    virtual ~Task() = default;
    Task() = default;
    Task(const Task&) = delete;
    Task& operator=(const Task&) = delete;

    virtual const std::string& name() const = 0;
    virtual int batchSize() const = 0;
    // Frames a live (latest-wins) queue keeps for this task, per stream, when it serves `streams`
    // of them. A classifier wants only the newest batch (its share of it per stream); an action
    // task absorbs the burst of a clip inference, since every frame it misses is a hole in its
    // clips.
    virtual size_t liveQueueCapacity(size_t streams) const
    {
        const size_t batch = static_cast<size_t>(batchSize() > 0 ? batchSize() : 1);
        return (batch + streams - 1) / (streams > 0 ? streams : 1);
    }
    // Before the run starts: the frames will come from the run's streams 0..count-1
    // (Frame::stream). A task that keeps state from frame to frame (score smoothing, clips) keeps
    // it per stream. It may allocate here, not in process().
    virtual void prepareStreams(size_t count) { (void)count; }
    virtual const std::vector<std::string>& labels() const = 0;
    virtual std::vector<EngineDescription> engines() const = 0;
    // The task's settings as they are in effect (defaults resolved), for the run summary.
    virtual nlohmann::json describe() const = 0;

    // Processes `count` frames (1..batchSize) that the worker took at `dequeuedNs`, filling one
    // record per frame with its timestamps and result. Called from the task's worker thread only,
    // with records reset to FrameRecord(). A frame that fails (its preprocessing, or the batch's
    // inference) gets its own record marked not ok with its FrameFailure, and the first error is
    // returned; the worker completes any record the task left unwritten (doneNs 0) as failed and
    // decides whether to go on.
    virtual Status process(
        const Frame* const* frames, size_t count, int64_t dequeuedNs, FrameRecord* records) = 0;
};

} // namespace jetagent
