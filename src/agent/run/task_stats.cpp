// What a run measured for one task, accumulated by the recorder from the frame records.
#include "run/task_stats.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace jetagent {

namespace {

// A frame's durations in LatencyStage order.
std::array<int64_t, kLatencyStages> stageDurations(const FrameTimes& t)
{
    return {t.endToEndNs, t.waitNs, t.preprocessNs, t.inferenceNs, t.postprocessNs};
}

} // namespace

void StreamStats::add(const FrameRecord& r)
{
    if (frames == 0)
        firstDoneNs = r.doneNs;
    ++frames;
    lastDoneNs = r.doneNs;
    if (!r.ok) {
        ++failed;
        return;
    }
    const FrameTimes& t = r.times;
    if (t.deadlineJudged)
        ++deadlineJudged;
    if (t.deadlineMissed)
        ++deadlineMisses;
    if (r.truth >= 0) {
        ++scored;
        if (r.correct())
            ++correct;
    }
    if (r.hasResult)
        ++results;
    if (r.coldStart)
        return;
    endToEnd.add(t.endToEndNs);
    wait.add(t.waitNs);
    if (r.hasClip())
        resultLatency.add(t.resultLatencyNs);
    buckets.add(stageDurations(t));
}

TaskStats::TaskStats(size_t exactSamples, int64_t deadlineNs, const std::vector<size_t>& streams)
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
      buckets(latencyBucketBounds(deadlineNs)),
      deadlineNs_(deadlineNs)
{
    if (streams.size() < 2)
        return;
    const size_t top = *std::max_element(streams.begin(), streams.end());
    slotOf_.assign(top + 1, -1);
    streamStats.reserve(streams.size());
    for (size_t s : streams) {
        slotOf_[s] = static_cast<int16_t>(streamStats.size());
        streamStats.emplace_back(exactSamples, buckets.shareBounds());
        streamIds.push_back(static_cast<uint16_t>(s));
    }
}

size_t TaskStats::memoryBytesFor(size_t exactSamples, size_t streams)
{
    const size_t series =
        SampleSeries::kHistogramBytes + std::max<size_t>(exactSamples, 1) * sizeof(int64_t);
    const size_t perStream = streams < 2 ? 0
                                         : sizeof(StreamStats) + StreamStats::kSeries * series +
            SampleSeries::kHistogramBytes + // resultLatency
            StageBuckets::kMaxHeapBytes;
    return sizeof(TaskStats) + kSeries * series + 2 * SampleSeries::kHistogramBytes + // batching
        StageBuckets::kMaxHeapBytes + streams * perStream;
}

const StreamStats* TaskStats::forStream(size_t stream) const
{
    return stream < slotOf_.size() && slotOf_[stream] >= 0
        ? &streamStats[static_cast<size_t>(slotOf_[stream])]
        : nullptr;
}

StreamStats* TaskStats::streamOf(size_t stream)
{
    // The same lookup as forStream(), on a TaskStats this function may change.
    return const_cast<StreamStats*>( // NOLINT(cppcoreguidelines-pro-type-const-cast)
        std::as_const(*this).forStream(stream));
}

void TaskStats::add(const FrameRecord& r)
{
    if (frames == 0) {
        firstCapturedNs = r.capturedNs;
        firstDoneNs = r.doneNs;
    }
    ++frames;
    lastDoneNs = r.doneNs;
    if (StreamStats* s = streamOf(r.stream))
        s->add(r);
    if (r.batchFirst) {
        ++batching.batches;
        batching.frames += static_cast<uint64_t>(std::max(r.batch, 1));
        batching.slots += static_cast<uint64_t>(std::max(r.batchCapacity, r.batch));
        if (r.batchStreams > 1) {
            ++batching.multiStream;
            batching.skewNs.add(r.batchSkewNs);
        }
        if (r.batchWaitNs > 0) {
            ++batching.waited;
            batching.waitNs.add(r.batchWaitNs);
        }
        if (r.batchTimedOut)
            ++batching.timedOut;
    }
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
    if (r.hasResult || r.hasClip())
        ++results; // a classification's every frame, an action task's clip results
    if (r.hasClip()) {
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
    buckets.add(stageDurations(t));
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
        slowest[pos] = {r.frameId, r.stream, r.capturedNs, e2e};
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
    if (StreamStats* s = streamOf(r.stream)) {
        ++s->energyFrames;
        s->energyJ += r.frameEnergyMj * 1e-3;
    }
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
