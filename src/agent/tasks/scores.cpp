// Turning a classifier's output into scores: softmax, exponential smoothing across frames, top-k.
#include "tasks/scores.h"

#include <algorithm>
#include <cmath>

#include "jetagent/base/format.h"
#include "jetagent/base/log.h"

namespace jetagent {

void softmax(const float* in, float* out, size_t n)
{
    if (n == 0)
        return;
    const float peak = *std::max_element(in, in + n);
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i) {
        out[i] = std::exp(in[i] - peak);
        sum += out[i];
    }
    const float inverse = static_cast<float>(1.0 / sum);
    for (size_t i = 0; i < n; ++i)
        out[i] *= inverse;
}

void topK(const float* scores, size_t n, size_t k, int* indices)
{
    // Insertion into a sorted list of k: k is at most 10, so this beats a heap and needs no memory.
    size_t filled = 0;
    for (size_t i = 0; i < n; ++i) {
        const float s = scores[i];
        if (filled == k && !(s > scores[indices[k - 1]]))
            continue;
        size_t pos = filled < k ? filled++ : k - 1;
        while (pos > 0 && s > scores[indices[pos - 1]]) {
            indices[pos] = indices[pos - 1];
            --pos;
        }
        indices[pos] = static_cast<int>(i);
    }
}

void smoothScores(const float* scores, float* state, size_t n, double weight, bool first)
{
    if (first || weight <= 0.0) {
        std::copy(scores, scores + n, state);
        return;
    }
    const float w = static_cast<float>(weight);
    for (size_t i = 0; i < n; ++i)
        state[i] = (1.0f - w) * scores[i] + w * state[i];
}

Status nonFiniteOutput(const std::string& model, uint64_t frameId)
{
    return Status::runtime("model '" + model + "' returned NaN or infinite scores for frame " +
        std::to_string(frameId) +
        " (a damaged model, or preprocessing settings that overflow); the frame counts as failed");
}

bool scoreRow(const float* row, size_t classes, const PostprocessConfig& post, float* probabilities,
    float* smoothed, bool& first, FrameRecord& record)
{
    if (!std::all_of(row, row + classes, [](float v) { return std::isfinite(v); })) {
        record.ok = false;
        record.failure = FrameFailure::NonFiniteOutput;
        record.topK = 0;
        return false;
    }
    if (post.output == OutputKind::Logits)
        softmax(row, probabilities, classes);
    else
        std::copy(row, row + classes, probabilities);
    smoothScores(probabilities, smoothed, classes, post.smoothing, first);
    first = false;
    const int k = post.topK;
    record.topK = k;
    topK(smoothed, classes, static_cast<size_t>(k), record.labels.data());
    for (int j = 0; j < k; ++j)
        record.scores[static_cast<size_t>(j)] =
            smoothed[static_cast<size_t>(record.labels[static_cast<size_t>(j)])];
    return true;
}

nlohmann::json describePostprocess(const PostprocessConfig& p)
{
    return {{"output", nameOf(kOutputKindNames, p.output)}, {"top_k", p.topK},
        {"smoothing", p.smoothing}};
}

} // namespace jetagent
