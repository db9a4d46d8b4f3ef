// What a run measured for one task, accumulated by the recorder from the frame records.
#include "run/task_stats.h"

#include <algorithm>
#include <cmath>

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
    const FrameTimes& t = r.times;
    const int64_t e2e = t.endToEndNs;
    if (t.deadlineJudged)
        ++deadlineJudged;
    if (t.deadlineMissed)
        ++deadlineMisses;
    if (r.truth >= 0) {
        ++scored;
        if (r.correct())
            ++correct;
        if (r.topK >= 5) {
            ++scoredTop5;
            for (int i = 0; i < 5; ++i)
                if (r.labels[static_cast<size_t>(i)] == r.truth) {
                    ++correctTop5;
                    break;
                }
        }
    }
    if (r.hasClip()) {
        ++results;
        if (r.clipGaps > 0)
            ++clipsWithGaps;
        if (r.coldStart && !haveColdResult) {
            coldResult = r;
            haveColdResult = true;
        } else if (!r.coldStart) {
            resultLatency.add(t.resultLatencyNs);
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
    wait.add(t.waitNs);
    preprocess.add(t.preprocessNs);
    inference.add(t.inferenceNs);
    compute.add(r.computeNs);
    postprocess.add(t.postprocessNs);
    if (r.unpaced)
        queue.add(t.queueNs);
    service.add(t.serviceNs);
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

void TaskStats::addEnergy(const FrameRecord& r)
{
    if (std::isnan(r.inferenceEnergyMj) || std::isnan(r.frameEnergyMj)) {
        ++energy.uncovered;
        return;
    }
    ++energy.frames;
    energy.totalFrameJ += r.frameEnergyMj * 1e-3;
    if (r.coldStart) {
        // Kept apart like the cold start's latency: first-run allocations are not the steady state.
        energy.coldStartInferenceMj = r.inferenceEnergyMj;
        return;
    }
    if (r.energyWindowShort)
        ++energy.shortWindows;
    energy.inferenceNj.add(static_cast<int64_t>(std::llround(r.inferenceEnergyMj * 1e6)));
    energy.frameNj.add(static_cast<int64_t>(std::llround(r.frameEnergyMj * 1e6)));
}

} // namespace jetagent
