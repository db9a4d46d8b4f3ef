// What a run measured for one task, accumulated by its worker from the frame records.
#include "task_stats.h"

#include <algorithm>

namespace jetagent {

TaskStats::TaskStats(size_t exactSamples, int64_t deadlineNs)
    : endToEnd(exactSamples),
      wait(exactSamples),
      preprocess(exactSamples),
      inference(exactSamples),
      compute(exactSamples),
      postprocess(exactSamples),
      queue(exactSamples),
      service(exactSamples),
      interval(exactSamples),
      resultLatency(exactSamples),
      clipInference(exactSamples),
      deadlineNs_(deadlineNs)
{
}

size_t TaskStats::memoryBytesFor(size_t exactSamples)
{
    return sizeof(TaskStats) +
        kSeries *
        (SampleSeries::kHistogramBytes + std::max<size_t>(exactSamples, 1) * sizeof(int64_t));
}

void TaskStats::add(const FrameRecord& r)
{
    if (frames == 0) {
        firstCapturedNs = r.capturedNs;
        firstDoneNs = r.doneNs;
    }
    ++frames;
    lastDoneNs = r.doneNs;
    if (!r.ok) {
        ++failed;
        if (r.failure == FrameFailure::NonFiniteOutput)
            ++failedNonFinite;
        return;
    }
    const int64_t e2e = r.endToEndNs();
    if (FrameRecord::deadlineJudged(deadlineNs_, r.unpaced))
        ++deadlineJudged;
    if (r.deadlineMissed(deadlineNs_))
        ++deadlineMisses;
    if (r.truth >= 0) {
        ++scored;
        if (r.correct())
            ++correct;
    }
    if (r.hasClip()) {
        ++results;
        if (r.clipGaps > 0)
            ++clipsWithGaps;
        if (r.coldStart && !haveColdResult) {
            coldResult = r;
            haveColdResult = true;
        } else if (!r.coldStart) {
            resultLatency.add(r.resultLatencyNs());
            clipInference.add(r.clipInferenceNs);
        }
    }
    if (r.coldStart) {
        if (!haveColdStart) {
            coldStart = r;
            haveColdStart = true;
        }
        return;
    }
    endToEnd.add(e2e);
    wait.add(r.waitNs());
    preprocess.add(r.preprocessNs());
    inference.add(r.inferenceNs());
    compute.add(r.computeNs);
    postprocess.add(r.postprocessNs());
    if (r.unpaced)
        queue.add(r.queueNs());
    service.add(r.doneNs - r.dequeuedNs);
    // Frames of one batch finish together; the interval is measured between batches.
    if (previousDoneNs_ > 0 && r.doneNs != previousDoneNs_)
        interval.add(r.doneNs - previousDoneNs_);
    previousDoneNs_ = r.doneNs;

    // Keep the slowest frames, so a summary can say when the outliers happened, not only how bad
    // they were.
    if (slowCount < kSlowest || e2e > slowest[slowCount - 1].endToEndNs) {
        size_t pos = slowCount < kSlowest ? slowCount++ : kSlowest - 1;
        while (pos > 0 && e2e > slowest[pos - 1].endToEndNs) {
            slowest[pos] = slowest[pos - 1];
            --pos;
        }
        slowest[pos] = {r.frameId, r.capturedNs, e2e};
    }
}

} // namespace jetagent
