// The limits and checks every model passes before any library sees it: ONNX's checker and shape
// inference, the preparation passes, OpenCV, XNNPACK and TensorRT all divide by strides, index by
// axes and allocate by declared sizes without asking whether the file is sane.
#pragma once

#include <cstdint>
#include <string>

#include "jetagent/base/status.h"

namespace onnx {
class ModelProto;
class TensorProto;
} // namespace onnx

namespace jetagent {

// Ranks above this are refused (ONNX sets no limit; TensorRT's is 8, jetagent's sessions take 8).
constexpr int kMaxModelRank = 32;
// Any one dimension of a tensor, declared value or operator attribute (kernel, stride, pad, size):
// 16M, far beyond any image side or sequence length, and far below what overflows an int.
constexpr int64_t kMaxModelDimension = int64_t {1} << 24;
// Elements of one initializer or declared intermediate value (8 GiB of float32).
constexpr int64_t kMaxTensorElements = int64_t {1} << 31;
// Elements of one graph input, batch included (1 GiB of float32: a batch of 8 8K RGB frames fits).
constexpr int64_t kMaxInputElements = int64_t {1} << 28;
// Bytes of tensor data read from external data files, all tensors together.
constexpr int64_t kMaxExternalBytes = int64_t {1} << 36;
// Nesting of subgraphs (If branches, Loop and Scan bodies) within subgraphs.
constexpr int kMaxSubgraphDepth = 8;
// Resize and Upsample scales: at most this factor per dimension.
constexpr double kMaxResizeScale = 1024.0;

// Checks `model` against the limits above, and every operator attribute and constant argument a
// backend or ONNX's shape inference computes with against the range its operator defines:
// kernel, stride, dilation and group sizes of 1 or more, pads of 0 or more with one begin and one
// end per kernel dimension, axes within the rank where the rank is known, permutations that are
// permutations, Slice steps other than 0, finite positive scales and epsilons, and more. Every
// initializer, Constant value and tensor attribute holds exactly as many elements as its dims
// say, in the one field its type keeps them in. Subgraphs are checked the same way. Tensors must
// have their external data read in already (external data still marked external is refused).
// InvalidInput naming the file (`path`), the node (nodeLabel), the attribute, its value and the
// limit it breaks.
Status validateModel(const onnx::ModelProto& model, const std::string& path);

// The element count of `tensor`'s declared dims, with each dimension and the count checked against
// the limits above before any multiplication (so no product overflows). InvalidInput naming `what`
// ("model file 'm.onnx': initializer 'w'") and the offending dimension otherwise.
Expected<int64_t> checkedElementCount(const onnx::TensorProto& tensor, const std::string& what);

// Bytes per element of an ONNX tensor data type; 0 for STRING and for types this build does not
// know.
size_t onnxElementSize(int32_t dataType);

} // namespace jetagent
