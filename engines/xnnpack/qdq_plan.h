// Explicit int8 for the xnnpack backend (internal to engines/xnnpack/): a QDQ model's
// QuantizeLinear/DequantizeLinear pairs give the int8 parameters of the values between its
// operators, as TensorRT's explicit quantization reads them; no calibration is needed.
#pragma once

#include "jetagent/base/status.h"
#include "plan.h"
#include "quantize.h"

namespace jetagent {
namespace xnnplan {

// Whether the compiled plan has QuantizeLinear or DequantizeLinear steps (a QDQ model).
bool hasQdq(const Plan& plan);

// Fuses each QuantizeLinear of one scale and zero point whose readers are all DequantizeLinear
// of the same ones into one fake-quantization step (the same values in fp32), and returns the
// int8 parameters the pairs fix: the pair's output's, and its input's where no other pair set
// them; a DequantizeLinear of a model input and a QuantizeLinear of a model output fix their
// float side's. A uint8 zero point z becomes the int8 one z - 128 (the same scale; exact).
// `oneReader`: only pairs of one DequantizeLinear (an fp32 plan, whose steps may write over a
// value nothing reads afterwards: the outputs of several DequantizeLinear are not made one).
ParamTable fuseQdqPairs(Plan* plan, bool oneReader = false);

// After quantizePlanExplicit: drops the requantizations between equal parameters (a pair right
// after the int8 step that wrote its input with the pair's parameters), whose output becomes an
// alias of their input. Plans memory again. Returns how many it dropped.
size_t dropIdentityRequantizations(Plan* plan);

} // namespace xnnplan
} // namespace jetagent
