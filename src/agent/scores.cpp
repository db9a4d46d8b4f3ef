// Turning a classifier's output into scores: softmax, exponential smoothing across frames, top-k.
#include "scores.h"

#include <algorithm>
#include <cmath>

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

} // namespace jetagent
