// Exact cumulative-style bucket counts of a task's stage latencies, the form Prometheus'
// histograms take (/metrics, textfiles): bounds on a fixed log-spaced ladder with the task's
// deadline among them, so that fleets can count frames over the deadline from the buckets alone.
// Filled by the recorder's thread beside the summary's series (TaskStats), never by a worker.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace jetagent {

// The stages a histogram is kept for, in the order of their `stage` label.
enum class LatencyStage : uint8_t { EndToEnd, Wait, Preprocess, Inference, Postprocess };
constexpr size_t kLatencyStages = 5;
// "end_to_end", "wait", "preprocess", "inference", "postprocess".
const char* latencyStageName(LatencyStage stage);

// The bucket bounds (upper, inclusive, in nanoseconds, ascending) of a task with deadline
// `deadlineNs` (0: none): 0.5 ms to 10 s at 1, 1.5, 2, 3, 5 and 7 per decade, with the deadline
// inserted when it is not one of them already. Shared, immutable.
std::shared_ptr<const std::vector<int64_t>> latencyBucketBounds(int64_t deadlineNs);

// One histogram per stage over the same bounds. add() costs a binary search per stage and never
// allocates; counts are exact (no sampling).
class StageBuckets {
public:
    static constexpr size_t kMaxBounds = 28; // the ladder's 27 and a deadline
    // Heap memory of one StageBuckets at most (the counts and a copy of the bounds).
    static constexpr size_t kMaxHeapBytes =
        kLatencyStages * (kMaxBounds + 1) * sizeof(uint64_t) + kMaxBounds * sizeof(int64_t);

    explicit StageBuckets(std::shared_ptr<const std::vector<int64_t>> bounds);

    // Adds one frame's stage durations (ns; negative counts as 0), indexed by LatencyStage.
    void add(const std::array<int64_t, kLatencyStages>& stageNs);
    // Adds `other`'s counts (several runs pooled); false, changing nothing, when its bounds
    // differ.
    bool merge(const StageBuckets& other);

    // Empty, as every count, in a StageBuckets moved from (a TaskStats the recorder handed to the
    // summary while a reader may still look at it).
    const std::vector<int64_t>& bounds() const { return bounds_ ? *bounds_ : noBounds(); }
    std::shared_ptr<const std::vector<int64_t>> shareBounds() const { return bounds_; }
    // Frames whose stage took at most bounds()[i] and more than bounds()[i-1]; the last entry
    // (index bounds().size()) counts those above every bound.
    const std::vector<uint64_t>& counts(LatencyStage stage) const
    {
        return counts_[static_cast<size_t>(stage)];
    }
    int64_t sumNs(LatencyStage stage) const { return sumNs_[static_cast<size_t>(stage)]; }
    uint64_t count() const { return count_; }

private:
    static const std::vector<int64_t>& noBounds();

    std::shared_ptr<const std::vector<int64_t>> bounds_;
    std::array<std::vector<uint64_t>, kLatencyStages> counts_;
    std::array<int64_t, kLatencyStages> sumNs_ {};
    uint64_t count_ = 0;
};

} // namespace jetagent
