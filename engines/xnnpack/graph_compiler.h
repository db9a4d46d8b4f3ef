// The xnnpack backend's graph compiler: a prepared ONNX model (shapes fixed and inferred,
// constants folded) into a Plan (internal to engines/xnnpack/).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "jetagent/base/status.h"
#include "plan.h"

namespace onnx {
class ModelProto;
}

namespace jetagent {
namespace xnnplan {

struct CompileOptions {
    bool fuseActivations = true; // Relu/Clip into the convolution, pooling or add before them
    bool oneDnn =
        true; // convolutions and linear layers on oneDNN where the build has it (choose*Library)
    // Concatenations along channels of XNNPACK convolutions' results are written in place (each
    // convolution writes its channels of the concatenation's output directly), and splits and
    // slices along channels that only XNNPACK convolutions read are read in place, and a
    // concatenation along channels that a BatchNormalization alone reads joins it (one pass). The
    // int8 and fp16 passes turn it off (a value written by several steps must be lowered as one;
    // a fused step of fp32 arithmetic would keep its inputs in fp32).
    bool zeroCopy = true;
};

// Rewrites, in place, each channel concatenation of two values that a 1x1 convolution (one group,
// unit strides, no padding, constant weights) alone reads into that convolution's two parts, one
// per value with its input channels' columns of the weights (the bias in the first), and their
// Add: conv(concat(a, b)) = conv_a(a) + conv_b(b). The compiler then folds the Add (and an
// activation after it) into the second part's oneDNN step as a sum, so the concatenation is never
// written: SqueezeNet's fire modules, whose concatenations were copies (oneDNN cannot write a
// convolution's output into a wider row at speed). Before that, a concatenation that a MaxPool
// alone reads becomes each value's pooling and their concatenation, which a 1x1 convolution after
// the pooling then splits the same way. Needs the value_info of the concatenations' inputs and of
// the convolutions' and poolings' outputs (the prepared model has them). Returns how many
// convolutions were split.
int splitConcatBeforeConv(onnx::ModelProto* model);

// Every node becomes a checked step or the compilation fails: an operator, attribute or shape the
// backend cannot run is an error (Unsupported or InvalidInput) naming the node, its operator and
// what is wrong. The model's inputs and outputs stay plain row-major float32, as the Session
// interface passes them; channels-last is chosen inside.
Expected<std::shared_ptr<Plan>> compileModel(
    const onnx::ModelProto& model, const CompileOptions& options);

// The ONNX operators the compiler claims (sorted): each runs, or is refused naming the attribute
// or shape it cannot take.
std::vector<std::string> claimedOperators();

} // namespace xnnplan
} // namespace jetagent
