// Small ONNX graphs (onnx_builder.h) run on the xnnpack backend, and the double-precision
// formulas the engine's operator and pattern tests hold them to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "jetagent/engines/engine.h"
#include "onnx_builder.h"

namespace jetagent::test {

// Whether this build has the xnnpack backend and it is available.
bool xnnpackBuilt();

// Runs `g` on the xnnpack backend (`options`, batch and backend set here) with `input` for its
// only input of shape `dims`; its outputs, and the plan's steps where `steps` is given.
testing::AssertionResult runXnnpackWith(EngineOptions options, const GraphBuilder& g,
    std::vector<float> input, const std::vector<int64_t>& dims,
    std::vector<std::vector<float>>* outputs, std::vector<EngineStep>* steps);

// The same with the default options; the operators of the plan's steps where `ops` is given.
testing::AssertionResult runXnnpack(const GraphBuilder& g, std::vector<float> input,
    const std::vector<int64_t>& dims, std::vector<std::vector<float>>* outputs,
    std::vector<std::string>* ops = nullptr);

// `n` values in [-0.5, 0.5) from `seed` (the same on every machine).
std::vector<float> noise(size_t n, uint32_t seed);

// Every element of `got` within 1e-5 + 1e-5 |want| of `want`.
void expectNear(const std::vector<float>& got, const std::vector<double>& want, const char* what);

// A convolution in double precision over NCHW `x` ([n][c][h][w]) with [m][c][k][k] weights, stride
// 1 and `pad` on every side.
std::vector<double> convolve(const std::vector<double>& x, size_t n, size_t c, size_t h, size_t w,
    const std::vector<float>& weights, size_t m, size_t k, size_t pad);

// Runs `g` on two threads (the process's pool is sized by its first engine: one run per test) and
// expects `want`; the plan's steps.
void expectOnTwoThreads(const GraphBuilder& g, const std::vector<float>& x,
    const std::vector<int64_t>& dims, const std::vector<double>& want,
    std::vector<EngineStep>* steps);

} // namespace jetagent::test
