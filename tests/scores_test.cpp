// Softmax, top-k and smoothing against straightforward references.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "tasks/scores.h"

namespace jetagent {
namespace {

TEST(Softmax, MatchesDoublePrecisionReferenceAndSumsToOne)
{
    const std::vector<float> logits = {1.5f, -3.0f, 0.0f, 12.25f, 12.0f, -100.0f};
    std::vector<float> out(logits.size());
    softmax(logits.data(), out.data(), logits.size());
    double denominator = 0;
    for (float l : logits)
        denominator += std::exp(static_cast<double>(l));
    double sum = 0;
    for (size_t i = 0; i < logits.size(); ++i) {
        EXPECT_NEAR(out[i], std::exp(static_cast<double>(logits[i])) / denominator, 1e-6);
        sum += out[i];
    }
    EXPECT_NEAR(sum, 1.0, 1e-6);
}

TEST(Softmax, LargeLogitsDoNotOverflow)
{
    const std::vector<float> logits = {1000.0f, 999.0f};
    std::vector<float> out(2);
    softmax(logits.data(), out.data(), 2);
    EXPECT_NEAR(out[0], 1.0 / (1.0 + std::exp(-1.0)), 1e-6);
    EXPECT_FALSE(std::isnan(out[1]));
}

TEST(TopK, OrdersHighestFirstAndBreaksTiesByIndex)
{
    const std::vector<float> s = {0.1f, 0.7f, 0.3f, 0.7f, 0.05f, 0.9f};
    int idx[4];
    topK(s.data(), s.size(), 4, idx);
    EXPECT_EQ(idx[0], 5);
    EXPECT_EQ(idx[1], 1); // tie with 3: lower index first
    EXPECT_EQ(idx[2], 3);
    EXPECT_EQ(idx[3], 2);
    int one[1];
    topK(s.data(), s.size(), 1, one);
    EXPECT_EQ(one[0], 5);
}

TEST(Smoothing, ExponentialWeightOfHistory)
{
    std::vector<float> state(2);
    const float a[] = {1.0f, 0.0f};
    const float b[] = {0.0f, 1.0f};
    smoothScores(a, state.data(), 2, 0.75, true); // first: copy
    EXPECT_FLOAT_EQ(state[0], 1.0f);
    smoothScores(b, state.data(), 2, 0.75, false);
    EXPECT_FLOAT_EQ(state[0], 0.75f);
    EXPECT_FLOAT_EQ(state[1], 0.25f);
    smoothScores(b, state.data(), 2, 0.0, false); // off: copy
    EXPECT_FLOAT_EQ(state[1], 1.0f);
}

} // namespace
} // namespace jetagent
