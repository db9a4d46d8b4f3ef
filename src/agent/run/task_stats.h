// What a run measured for one task, accumulated by the recorder from the frame records: the one
// place every figure of the summary comes from.
#pragma once

#include <array>
#include <cstdint>

#include "run/frame_record.h"
#include "run/latency_stats.h"

namespace jetagent {

// Per-frame energy of one task (values in nanojoules).
struct TaskEnergy {
    SampleSeries inferenceNj; // each steady-state frame's share of its inference window
    SampleSeries frameNj; // each steady-state frame's share of its frame interval
    double coldStartInferenceMj = -1.0; // the cold-start frames' inference energy; -1 unknown
    uint64_t frames = 0; // frames with an energy figure, cold start included
    double totalFrameJ = 0.0; // sum of their frame-interval energies: the energy of the frames run
    uint64_t uncovered = 0; // frames whose window the sampler did not cover (no figure)
    uint64_t shortWindows = 0; // inference windows shorter than the sensor's update period
};

struct SlowFrame {
    uint64_t frameId = 0;
    int64_t capturedNs = 0;
    int64_t endToEndNs = 0;
};

class TaskStats {
public:
    static constexpr size_t kSlowest = 5;

    // `exactSamples`: values per series whose percentiles stay exact (see SampleSeries).
    TaskStats(size_t exactSamples, int64_t deadlineNs);

    // The memory the statistics take, whatever the run's length.
    size_t memoryBytes() const { return memoryBytesFor(endToEnd.exactKept()); }
    static size_t memoryBytesFor(size_t exactSamples);
    static constexpr size_t kSeries = 13; // the SampleSeries below, energy's included

    // Adds one record whose times the recorder has derived (FrameRecord::times). The cold-start
    // frames (the first inference) are kept apart from the steady-state series; failed frames are
    // counted but have no latency.
    void add(const FrameRecord& r);
    // Adds the record's energy (FrameRecord::inferenceEnergyMj and frameEnergyMj; NaN where the
    // sampler did not cover its window). Only when power is sampled.
    void addEnergy(const FrameRecord& r);

    int64_t deadlineNs() const { return deadlineNs_; }

    // Steady state: every successful frame after the first inference. In unpaced runs end to end
    // starts at the dequeue and `queue` holds the time each frame sat in the FIFO before it (see
    // FrameRecord::unpaced); in paced runs `queue` stays empty.
    SampleSeries endToEnd, wait, preprocess, inference, compute, postprocess, queue;
    SampleSeries service; // dequeued -> done: the worker's time per frame, waiting excluded
    SampleSeries
        interval; // between consecutive results: the run's pace, everything the agent does included
    // Action tasks: the records that carry a clip's result, steady state (the first clip
    // inference is kept apart as coldResult). Result latency is the newest clip frame's capture
    // to its result; clip inference the clip model's or the head's wall time.
    SampleSeries resultLatency, clipInference;
    uint64_t results = 0; // successful results, cold one included
    uint64_t clipsWithGaps = 0; // ... whose window missed frames the task never saw
    bool haveColdResult = false;
    FrameRecord coldResult;
    uint64_t frames = 0; // records, failed ones included
    uint64_t failed = 0;
    uint64_t failedNonFinite = 0; // ... of them because the model's scores were NaN or infinite
    uint64_t deadlineMisses = 0; // successful frames (cold start included) over the deadline
    uint64_t deadlineJudged = 0; // successful frames judged against it (none in unpaced runs)
    uint64_t scored = 0; // successful frames whose true class is known
    uint64_t correct = 0; // ... and whose top-1 label is it
    uint64_t scoredTop5 = 0; // scored frames whose result holds five labels or more
    uint64_t correctTop5 = 0; // ... with the true class among the first five
    bool haveColdStart = false;
    FrameRecord coldStart; // the first frame of the first inference
    int64_t firstCapturedNs = 0;
    int64_t firstDoneNs = 0;
    int64_t lastDoneNs = 0;
    TaskEnergy energy;
    std::array<SlowFrame, kSlowest>
        slowest {}; // highest end-to-end first; frameId meaningful up to slowCount
    size_t slowCount = 0;

private:
    int64_t deadlineNs_;
    int64_t previousDoneNs_ = 0;
};

} // namespace jetagent
