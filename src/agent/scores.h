// Turning a classifier's output into scores: softmax, exponential smoothing across frames, top-k.
#pragma once

#include <cstddef>

#include "jetagent/base/enum_names.h"

namespace jetagent {

enum class OutputKind { Logits, Probabilities };
inline constexpr EnumName<OutputKind> kOutputKindNames[] = {
    {OutputKind::Logits, "logits"}, {OutputKind::Probabilities, "probabilities"}};

struct PostprocessConfig {
    OutputKind output =
        OutputKind::Logits; // logits get a softmax; probabilities are used as they are
    int topK = 5; // labels reported per frame (1..10)
    double smoothing = 0.0; // weight of the previous frames' scores, 0 = off, 0.9 = strong
};

// Numerically stable softmax of n values (out may equal in).
void softmax(const float* in, float* out, size_t n);

// The k highest scores' indices, highest first; ties go to the lower index. k <= n. No allocation.
void topK(const float* scores, size_t n, size_t k, int* indices);

// state = (1 - weight) * scores + weight * state; the first call copies. weight 0 makes it a copy.
void smoothScores(const float* scores, float* state, size_t n, double weight, bool first);

} // namespace jetagent
