// What a run measured for one task, accumulated by the recorder from the frame records: the one
// place every figure of the summary comes from.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "run/frame_record.h"
#include "run/latency_buckets.h"
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
    uint16_t stream = 0; // the run's stream
    int64_t capturedNs = 0;
    int64_t endToEndNs = 0;
};

// One stream's share of a task that serves several: what its users compare across cameras.
// Steady state as in TaskStats (the task's cold start is its own); failed frames have no latency.
struct StreamStats {
    StreamStats(size_t exactSamples, std::shared_ptr<const std::vector<int64_t>> bounds)
        : endToEnd(exactSamples), wait(exactSamples), buckets(std::move(bounds))
    {
    }
    static constexpr size_t kSeries = 2;
    void add(const FrameRecord& r);

    SampleSeries endToEnd, wait;
    SampleSeries resultLatency {0}; // action results: histogram only
    uint64_t frames = 0; // records, failed ones included
    uint64_t failed = 0;
    uint64_t results = 0; // successful results (action tasks: clip results)
    uint64_t deadlineMisses = 0, deadlineJudged = 0;
    uint64_t scored = 0, correct = 0;
    int64_t firstDoneNs = 0, lastDoneNs = 0;
    uint64_t energyFrames = 0; // frames with an energy figure (each its share of its batch)
    double energyJ = 0.0; // the sum of their frame-interval energies
    StageBuckets buckets; // the steady state's stage latencies, as TaskStats::buckets
};

// How a task's batches were gathered from its streams (StreamBatcher), one entry per batch.
struct BatchStats {
    uint64_t batches = 0;
    uint64_t frames = 0; // frames in them
    uint64_t slots = 0; // slots the engine's batches offered: frames / slots is the mean fill
    uint64_t multiStream = 0; // batches with frames of two streams or more
    uint64_t waited = 0; // batches whose gather waited for more streams
    uint64_t timedOut = 0; // ... until the timeout, some stream having none
    SampleSeries waitNs {0}; // the wait each batch that waited added
    SampleSeries skewNs {0}; // spread of capture times across the streams of a batch (2+)
};

class TaskStats {
public:
    static constexpr size_t kSlowest = 5;

    // `exactSamples`: values per series whose percentiles stay exact (see SampleSeries).
    // `streams`: the run streams the task serves when there are several (each gets a
    // StreamStats); empty or one: none.
    TaskStats(size_t exactSamples, int64_t deadlineNs, const std::vector<size_t>& streams = {});

    // The memory the statistics take, whatever the run's length.
    size_t memoryBytes() const { return memoryBytesFor(endToEnd.exactKept(), streamStats.size()); }
    static size_t memoryBytesFor(size_t exactSamples, size_t streams = 0);
    static constexpr size_t kSeries = 13; // the SampleSeries below, energy's included

    // The statistics of run stream `stream`; null when the task keeps none for it.
    const StreamStats* forStream(size_t stream) const;

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
    BatchStats batching;
    // The steady state's stage latencies (the series above, cold start excluded) as exact bucket
    // counts for Prometheus' histograms; bounds from latencyBucketBounds(deadline).
    StageBuckets buckets;
    std::vector<StreamStats> streamStats; // per stream the task serves, when several
    std::vector<uint16_t> streamIds; // ... the run stream of each

private:
    StreamStats* streamOf(size_t stream);
    std::vector<int16_t> slotOf_; // run stream -> index in streamStats, -1 none
    int64_t deadlineNs_;
    int64_t previousDoneNs_ = 0;
};

} // namespace jetagent
