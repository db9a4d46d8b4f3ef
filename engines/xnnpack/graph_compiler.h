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
