// One frame's record through one task: its timestamps, engine timing and result. Plain data, fixed
// size, so the worker hands it to the log writer without allocating.
#pragma once

#include <array>
#include <cstdint>
#include <limits>

namespace jetagent {

// Why a frame failed (FrameRecord::ok false).
enum class FrameFailure : uint8_t {
    None,
    Preprocess, // the frame could not be made into the model's input (an image too large to
                // resize, say): it never reached the engine
    Inference, // the engine or the task returned an error
    NonFiniteOutput, // the model's scores held NaN or infinity: no result can be read from them
};

// The name logs and summaries give a failure.
inline const char* frameFailureName(FrameFailure failure)
{
    switch (failure) {
    case FrameFailure::None: return "none";
    case FrameFailure::Preprocess: return "preprocessing error";
    case FrameFailure::Inference: return "inference error";
    case FrameFailure::NonFiniteOutput: return "non-finite output";
    }
    return "unknown";
}

// The figures derived from a record's timestamps: computed once, by the recorder
// (Recorder::derive), and read by the statistics, the sinks and the summary.
struct FrameTimes {
    int64_t endToEndNs = 0;
    int64_t waitNs = 0;
    int64_t preprocessNs = 0;
    int64_t inferenceNs = 0;
    int64_t postprocessNs = 0;
    int64_t queueNs = 0; // unpaced runs only: the time in the FIFO, kept out of end to end
    int64_t serviceNs = 0; // dequeued -> done: the worker's time for the frame
    int64_t resultLatencyNs = 0; // action records that carry a clip's result
    bool deadlineJudged = false; // the run is paced and the task has a deadline
    bool deadlineMissed = false;
};

struct FrameRecord {
    static constexpr int kMaxTopK = 10;

    uint64_t frameId = 0; // the source's sequence number
    // CLOCK_MONOTONIC timestamps, contiguous so that the stages add up to the end-to-end latency
    // exactly: wait = dequeued - start, preprocess = preprocessed - dequeued, inference = inferred
    // - preprocessed, postprocess = done - inferred, end to end = done - start, where the start is
    // the capture in paced runs and the dequeue in unpaced ones (see `unpaced`).
    int64_t capturedNs = 0;
    int64_t dequeuedNs = 0;
    int64_t preprocessedNs = 0;
    int64_t inferredNs = 0;
    int64_t doneNs = 0;
    int64_t computeNs = 0; // the engine's own figure for its compute, inside the inference stage
    // Start of the frame interval: the task's previous result (for its first frame, the dequeue),
    // so that the intervals of consecutive results tile the run and their energies add up to it.
    int64_t intervalStartNs = 0;
    // Energy of the total rail, in millijoules, shared equally by the frames of a batch: over the
    // inference stage and over the frame interval. Filled in by the log writer once the power
    // sampler has covered the frame; NaN when power is not sampled or the window was not covered.
    double inferenceEnergyMj = std::numeric_limits<double>::quiet_NaN();
    double frameEnergyMj = std::numeric_limits<double>::quiet_NaN();
    bool energyWindowShort = false; // the inference window is shorter than the sensor's update
                                    // period: its energy is interpolated, not measured
    int32_t batch = 1; // frames that shared the inference
    // The batch the frame was gathered into (StreamBatcher): the slots the engine's batch offered
    // (batch / capacity is its fill; the engine computes the empty slots as padding, never
    // scored), the distinct streams in it, whether its gather waited for other streams until the
    // timeout, that wait, and the spread of the capture times of its streams' first frames (0 with
    // one stream). The same in every record of the batch; `batchFirst` marks the one that counts
    // the batch in the statistics.
    int32_t batchCapacity = 1;
    int32_t batchStreams = 1;
    bool batchTimedOut = false;
    bool batchFirst = true;
    int64_t batchWaitNs = 0;
    int64_t batchSkewNs = 0;
    uint16_t stream = 0; // the run's stream the frame came from: its index in the config's sources
    int32_t topK = 0; // valid entries in labels/scores
    std::array<int32_t, kMaxTopK> labels {};
    std::array<float, kMaxTopK> scores {};
    int32_t truth = -1; // label index of the true class, -1 when unknown
    bool ok = true; // false when inference failed for this frame
    FrameFailure failure = FrameFailure::None; // why, when ok is false
    bool coldStart = false; // the task's first frame: first-run allocations and warm-up included
    // An unpaced run (pacing none): the source reads ahead into a FIFO as fast as it can, so the
    // time from capture to dequeue is queueing behind earlier frames that grows with the FIFO's
    // depth, not latency the frame would see in the field. Latency then starts at the dequeue, the
    // queueing is reported on its own, and no deadline is judged.
    bool unpaced = false;

    // Action tasks give every frame a record (its preprocessing, and in streaming mode its
    // backbone pass); the frames after which a clip was inferred carry the result, labels and
    // scores and truth included, and the clip's window. Classification records always have a
    // result and no clip.
    bool hasResult = true;
    int32_t clipFrames = 0; // frames in the clip (T); 0 when the record has no clip
    int32_t clipGaps = 0; // source frames missing from the window beyond the frame step: frames
                          // the task never saw (dropped by a live queue or the device)
    uint64_t clipFirstId = 0; // sequence numbers of the clip's oldest and newest frame
    uint64_t clipLastId = 0;
    int64_t clipFirstNs = 0; // their capture times; see resultLatencyNs()
    int64_t clipLastNs = 0;
    int64_t clipInferenceNs = 0; // wall time of the clip model (clip mode) or the temporal head
                                 // (streaming), inside the inference stage

    // The GPIO trigger's measurement window the frame was captured in (1, 2, ...); 0 outside any
    // window or without a trigger.
    uint32_t window = 0;

    // Filled in by the recorder from the definitions below; zero until then.
    FrameTimes times;

    // Every figure derived from the timestamps, defined here and nowhere else (the recorder
    // evaluates them once per record, into `times`).
    int64_t latencyStartNs() const { return unpaced ? dequeuedNs : capturedNs; }
    int64_t endToEndNs() const { return doneNs - latencyStartNs(); }
    int64_t waitNs() const { return dequeuedNs - latencyStartNs(); } // 0 when unpaced
    int64_t queueNs() const { return unpaced ? dequeuedNs - capturedNs : 0; } // unpaced only
    int64_t preprocessNs() const { return preprocessedNs - dequeuedNs; }
    int64_t inferenceNs() const { return inferredNs - preprocessedNs; }
    int64_t postprocessNs() const { return doneNs - inferredNs; }
    // Action results: from the newest clip frame's capture (unpaced: its dequeue, when later) to
    // the result.
    int64_t resultLatencyNs() const
    {
        return doneNs - (unpaced && dequeuedNs > clipLastNs ? dequeuedNs : clipLastNs);
    }
    // Deadlines mean something only where frames arrive at the source's pace.
    static bool deadlineJudged(int64_t deadlineNs, bool unpacedRun)
    {
        return deadlineNs > 0 && !unpacedRun;
    }
    bool deadlineMissed(int64_t deadlineNs) const
    {
        return deadlineJudged(deadlineNs, unpaced) && ok && endToEndNs() > deadlineNs;
    }
    bool hasClip() const { return clipFrames > 0; }
    bool correct() const { return ok && truth >= 0 && topK > 0 && labels[0] == truth; }
};

} // namespace jetagent
