// int8 for the xnnpack backend (internal to engines/xnnpack/): the ranges of a plan's values
// observed over calibration data, and the pass that turns a calibrated fp32 plan into a mixed one
// whose convolutions, fully connected layers, additions, poolings and data movement run on
// XNNPACK's int8 kernels, with conversions where an int8 part meets a float one.
#pragma once

#include <cstddef>
#include <limits>
#include <map>
#include <string>

#include "jetagent/base/status.h"
#include "plan.h"

namespace jetagent {
namespace xnnplan {

struct ValueRange {
    float min = std::numeric_limits<float>::infinity();
    float max = -std::numeric_limits<float>::infinity();
};
// By value name (names are unique within a plan and the same from one compilation of a model to
// the next, so a table can be cached).
using RangeTable = std::map<std::string, ValueRange>;

// Widens the ranges of the values step `step` of `plan` writes, by what `arena` holds after it ran
// (an fp32 plan's session arena). NaN and infinities are ignored.
void observeStep(const Plan& plan, size_t step, const float* arena, RangeTable* ranges);

// The table as text (one "name min max" line per value, floats in hex so that they read back
// exactly; a first line naming the format), and back. parseRanges names the line it cannot read.
std::string formatRanges(const RangeTable& ranges);
Expected<RangeTable> parseRanges(const std::string& text);

struct QuantizeSummary {
    size_t int8Steps = 0; // steps that run on int8 kernels
    size_t floatSteps = 0; // steps left in fp32 (no int8 kernel, or a scale XNNPACK cannot take)
    size_t converts = 0; // conversions added between the two
};

// Rewrites `plan`, an fp32 plan with no oneDNN steps whose values `ranges` covers, into an int8
// one: weights get one scale per output channel (symmetric, [-127, 127]), activations one scale
// and zero point per value from its calibrated range widened to hold 0 exactly; values that int8
// data movement (max pooling, clamps, concatenation, split, shuffle, padding) passes through share
// one scale and zero point. Model inputs and outputs stay float. Plans memory again. An error
// names the value the table does not cover (a table from another model).
Expected<QuantizeSummary> quantizePlan(Plan* plan, const RangeTable& ranges);

// Explicit int8: a value's int8 scale and zero point as a QDQ model gives them (qdq_plan.h), by
// root value name.
struct QuantParams {
    float scale = 1;
    int32_t zeroPoint = 0; // int8: a uint8 zero point z is z - 128 with the same scale
};
using ParamTable = std::map<std::string, QuantParams>;

// quantizePlan with the model's own parameters instead of calibrated ranges: a step runs int8
// where its lowRole allows it and every value it reads and writes has parameters in `params`
// (data movement's all the same ones) that its int8 kernel takes; the rest stays fp32, with
// conversions between. Weights with scales of the model's (WeightedStep::weightScales) keep them.
// Model inputs and outputs stay float. Plans memory again.
Expected<QuantizeSummary> quantizePlanExplicit(Plan* plan, const ParamTable& params);

// Rewrites `plan`, an fp32 plan with no oneDNN steps, into an fp16 one for CPUs with native fp16
// arithmetic: convolutions, fully connected layers, additions and multiplications of computed
// values, global means, max pooling, clamps, HardSwish, LeakyRelu, concatenation, split and padding
// run on XNNPACK's fp16 kernels (weights rounded to fp16); the rest stays fp32, with conversions
// between. Model inputs and outputs stay fp32. Plans memory again. The summary's int8Steps counts
// the fp16 steps.
QuantizeSummary halvePlan(Plan* plan);

} // namespace xnnplan
} // namespace jetagent
