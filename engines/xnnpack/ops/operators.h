// The operator families' entry points (internal to engines/xnnpack/): one function per ONNX
// operator or group of operators, which graph_compiler.cpp's operator table names, and the few
// that one family lends another. Each turns its node (and any it fuses) into checked steps
// through the CompileContext, or returns the error that names the node.
#pragma once

#include "context.h"

namespace jetagent {
namespace xnnplan {
namespace ops {

// What compiles one node: the type of every entry of the operator table.
using OperatorFn = Status(CompileContext& cx, const onnx::NodeProto& node);

// Convolution and pooling (conv_pool.cpp).
OperatorFn conv, pool, globalPool;

// Linear layers and matrix products (linear.cpp).
OperatorFn gemm, einsum;

// Element-wise operators and activations (elementwise.cpp).
OperatorFn binary, unary;
// A GELU, SiLU (x * Sigmoid(x)), HardSwish (x * HardSigmoid(x)) or Sigmoid right after `producer`
// joins its step as one of oneDNN's post-ops: when every reader of the producer's output is a node
// of the pattern, those nodes are consumed, *gelu set to its form and the pattern's last node
// returned (else `producer`).
const onnx::NodeProto& fuseGeluAfter(
    CompileContext& cx, const onnx::NodeProto& producer, GeluForm* gelu, std::string* text);

// Layout and shape (layout.cpp).
OperatorFn reshape, transpose, concat, split, slice, gather, pad;
// After the walk: channel pieces that only XNNPACK convolutions read are read by them in place.
void readInPlace(CompileContext& cx);

// Normalisation and reductions (normalize.cpp).
OperatorFn batchNorm, softmax, layerNormalization, reduce;
// An inference-mode BatchNormalization over `c` channels as y = x scale + shift, checked.
Status batchNormAffine(CompileContext& cx, const onnx::NodeProto& node, size_t c,
    std::vector<float>* scale, std::vector<float>* shift);

// QuantizeLinear and DequantizeLinear in fp32 (qdq.cpp).
OperatorFn quantizeLinear, cast;
// A QDQ model's own weight scales for `step`, from constant `name` (as the constant folder noted
// them when it dequantized the weights), when they run along `axis` of the weights (the output
// channels) or are one for the whole tensor, and the weights divide by them into int8 integers.
void takeWeightScales(const CompileContext& cx, const std::string& name,
    const std::vector<float>& weights, int64_t axis, WeightedStep* step);

} // namespace ops
} // namespace xnnplan
} // namespace jetagent
