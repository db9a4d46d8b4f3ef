// What the constant folder's operator families share: the constant tensor being evaluated, the node
// with its inputs, the index arithmetic, and each family's evaluators (internal to engines/onnx/).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "jetagent/base/status.h"
#include "onnx_util.h"

namespace jetagent {
namespace fold {

// Larger results stay computed at run time: as initializers they would bloat the model file. The
// same bound keeps big weights from being decoded just because a foldable node reads them.
constexpr int64_t kMaxFoldedElements = 1000000;

constexpr int32_t kInt64 = onnx::TensorProto_DataType_INT64;
constexpr int32_t kInt32 = onnx::TensorProto_DataType_INT32;
constexpr int32_t kBool = onnx::TensorProto_DataType_BOOL;
constexpr int32_t kFloat = onnx::TensorProto_DataType_FLOAT;
// Read only by DequantizeLinear (its quantized input and zero point): held in `ints`.
constexpr int32_t kInt8 = onnx::TensorProto_DataType_INT8;
constexpr int32_t kUint8 = onnx::TensorProto_DataType_UINT8;

// A constant tensor being evaluated: the element types the folder computes exactly.
struct Value {
    int32_t type = kInt64; // INT64, INT32, BOOL or FLOAT (INT8, UINT8: DequantizeLinear's inputs)
    std::vector<int64_t> dims;
    std::vector<int64_t> ints; // INT64, INT32 and BOOL (0 or 1) elements
    std::vector<float> floats; // FLOAT elements
    // Kept as the folded initializer's doc_string: what a backend may want to know about how
    // the values were made (DequantizeLinear's int8 scales, onnx_util.h's kDequantizedNote).
    std::string note;

    bool isFloat() const { return type == kFloat; }
    bool isInteger() const { return type == kInt64 || type == kInt32; }
    // The number of elements held.
    int64_t count() const { return static_cast<int64_t>(isFloat() ? floats.size() : ints.size()); }
};

// One node being evaluated, with its constant inputs.
struct NodeContext {
    const onnx::NodeProto& node;
    int index;
    int64_t opset;
    std::vector<const Value*> inputs; // nullptr for an absent optional input

    const Value* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
    // Inputs 0 to N - 1, for a structured binding; nullptr for each that is absent.
    template <size_t N>
    std::array<const Value*, N> inputsUpTo() const
    {
        std::array<const Value*, N> operands {};
        for (size_t i = 0; i < N; ++i)
            operands[i] = input(i);
        return operands;
    }

    Status invalid(const std::string& what) const
    {
        return Status::invalid(onnxutil::nodeLabel(node, index) + ": " + what);
    }
};

// A node evaluator: sets `out` to the node's single output, leaves it empty to keep the node (an
// input type or size it does not fold), or returns InvalidInput for a malformed node.
using Evaluator = Status (*)(const NodeContext&, std::optional<Value>*);

// Shapes and indices shared by the families (fold_value.cpp).

std::string dimsText(const std::vector<int64_t>& dims);
const char* typeName(int32_t type);
// The element count of `dims`, when no dimension is negative and the count is small enough to
// fold; false otherwise. Checked before every multiplication so that no product overflows.
bool foldableCount(const std::vector<int64_t>& dims, int64_t* count);
// Strides of a tensor of `dims` broadcast to `rank` dimensions: 0 along broadcast axes.
std::vector<int64_t> broadcastStrides(const std::vector<int64_t>& dims, size_t rank);
// Numpy's multidirectional broadcast; false when the shapes are incompatible.
bool broadcastDims(
    const std::vector<int64_t>& a, const std::vector<int64_t>& b, std::vector<int64_t>* out);
// For each element of a tensor of `dims`, in row-major order, `start` plus its coordinates times
// `strides`: the flat source index that broadcasts, transposes and slices read it from.
std::vector<int64_t> sourceIndices(const std::vector<int64_t>& dims,
    const std::vector<int64_t>& strides, int64_t start, int64_t count);
// A tensor of `dims` whose elements are read from `source` at `indices`.
Value take(const Value& source, std::vector<int64_t> dims, const std::vector<int64_t>& indices);
// A 0-D or 1-D integer tensor as a list (axes, starts, shape arguments).
bool intList(const Value* v, std::vector<int64_t>* out);
// The operands of Reshape and Expand: the data at input 0 and a shape at input 1; `missing` is the
// error when either is absent.
Status dataAndShape(const NodeContext& c, const std::string& missing, const Value** data,
    std::vector<int64_t>* shape);
// Normalizes a possibly negative axis for a tensor of `rank`; false when out of range.
bool normalizeAxis(int64_t* axis, int64_t rank);
// The same for an axis of node `c`, with an error naming the axis and the rank.
Status normalizeAxisOf(const NodeContext& c, int64_t* axis, int64_t rank);
// The `axis` attribute of node `c` (0 when absent) over a tensor of `dims`, normalized; an error
// when it is out of range, or `ofScalar` when `dims` has no axis at all.
Status axisAttribute(const NodeContext& c, const std::vector<int64_t>& dims,
    const std::string& ofScalar, int64_t* axis);

// The evaluators (see Evaluator), one family per file.

// fold_shape.cpp: dimensions relabelled without moving data (Unsqueeze, Squeeze, Reshape) and
// tensors generated from a shape or bounds (ConstantOfShape, Range).
Status evaluateUnsqueeze(const NodeContext& c, std::optional<Value>* out);
Status evaluateSqueeze(const NodeContext& c, std::optional<Value>* out);
Status evaluateReshape(const NodeContext& c, std::optional<Value>* out);
Status evaluateConstantOfShape(const NodeContext& c, std::optional<Value>* out);
Status evaluateRange(const NodeContext& c, std::optional<Value>* out);

// fold_tensor.cpp: elements copied, gathered, scattered or rearranged (Identity, Gather, Concat,
// Slice, Transpose, Expand, ScatterND).
Status evaluateIdentity(const NodeContext& c, std::optional<Value>* out);
Status evaluateGather(const NodeContext& c, std::optional<Value>* out);
Status evaluateConcat(const NodeContext& c, std::optional<Value>* out);
Status evaluateSlice(const NodeContext& c, std::optional<Value>* out);
Status evaluateTranspose(const NodeContext& c, std::optional<Value>* out);
Status evaluateExpand(const NodeContext& c, std::optional<Value>* out);
Status evaluateScatterND(const NodeContext& c, std::optional<Value>* out);

// fold_elementwise.cpp: element by element, with numpy broadcasting (Cast, Add/Sub/Mul/Div, Mod,
// Pow, Equal, Not, Where, Floor/Ceil/Sqrt/Neg).
Status evaluateCast(const NodeContext& c, std::optional<Value>* out);
Status evaluateArithmetic(const NodeContext& c, std::optional<Value>* out);
Status evaluateMod(const NodeContext& c, std::optional<Value>* out);
Status evaluatePow(const NodeContext& c, std::optional<Value>* out);
Status evaluateNot(const NodeContext& c, std::optional<Value>* out);
Status evaluateEqual(const NodeContext& c, std::optional<Value>* out);
Status evaluateWhere(const NodeContext& c, std::optional<Value>* out);
Status evaluateUnary(const NodeContext& c, std::optional<Value>* out);

// fold_quantize.cpp: QuantizeLinear and DequantizeLinear of constants (a QDQ model's weights
// and biases).
Status evaluateQuantizeLinear(const NodeContext& c, std::optional<Value>* out);
Status evaluateDequantizeLinear(const NodeContext& c, std::optional<Value>* out);

} // namespace fold
} // namespace jetagent
