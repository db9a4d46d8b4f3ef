// Constant folding: nodes whose inputs are all known become initializers, so that backends that
// cannot compute shapes at run time (OpenCV DNN) see constant Reshape, Slice and Expand arguments.
#include "jetagent/engines/model_passes.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "onnx_util.h"

namespace jetagent {

namespace {

using onnxutil::nodeLabel;

// Larger results stay computed at run time: as initializers they would bloat the model file. The
// same bound keeps big weights from being decoded just because a foldable node reads them.
constexpr int64_t kMaxFoldedElements = 1000000;
// Each round uncovers shapes one computed Reshape or Slice further: ShuffleNetV2 needs two rounds
// per block (its channel split, then its channel shuffle), 30 in all. The bound caps the time a
// pathological graph can take (a round costs about 2 ms on ShuffleNet's 900 nodes).
constexpr int kMaxRounds = 64;

constexpr int32_t kInt64 = onnx::TensorProto_DataType_INT64;
constexpr int32_t kInt32 = onnx::TensorProto_DataType_INT32;
constexpr int32_t kBool = onnx::TensorProto_DataType_BOOL;
constexpr int32_t kFloat = onnx::TensorProto_DataType_FLOAT;

// A constant tensor being evaluated: the element types the folder computes exactly.
struct Value {
    int32_t type = kInt64; // INT64, INT32, BOOL or FLOAT
    std::vector<int64_t> dims;
    std::vector<int64_t> ints; // INT64, INT32 and BOOL (0 or 1) elements
    std::vector<float> floats; // FLOAT elements

    bool isFloat() const { return type == kFloat; }
    bool isInteger() const { return type == kInt64 || type == kInt32; }
};

template <typename T>
const std::vector<T>& elementsOf(const Value& v);
template <>
const std::vector<int64_t>& elementsOf(const Value& v)
{
    return v.ints;
}
template <>
const std::vector<float>& elementsOf(const Value& v)
{
    return v.floats;
}

std::string dimsText(const std::vector<int64_t>& dims)
{
    std::string text = "[";
    for (size_t i = 0; i < dims.size(); ++i)
        text += (i ? "," : "") + std::to_string(dims[i]);
    return text + "]";
}

const char* typeName(int32_t type)
{
    switch (type) {
    case kInt64: return "int64";
    case kInt32: return "int32";
    case kBool: return "bool";
    case kFloat: return "float";
    default: return "other";
    }
}

// The element count of `dims`, when no dimension is negative and the count is small enough to
// fold; false otherwise. Checked before every multiplication so that no product overflows.
bool foldableCount(const std::vector<int64_t>& dims, int64_t* count)
{
    if (std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d < 0; }))
        return false;
    if (std::find(dims.begin(), dims.end(), 0) != dims.end()) {
        *count = 0;
        return true;
    }
    int64_t n = 1;
    for (int64_t d : dims) {
        if (d > kMaxFoldedElements / n)
            return false;
        n *= d;
    }
    *count = n;
    return true;
}

int64_t product(const std::vector<int64_t>& dims, size_t begin, size_t end)
{
    int64_t n = 1;
    for (size_t i = begin; i < end; ++i)
        n *= dims[i];
    return n;
}

// Two's-complement wrap to the element type, as ONNX runtimes compute INT32 arithmetic.
int64_t wrapTo(int32_t type, int64_t v)
{
    if (type != kInt32)
        return v;
    return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
}

std::vector<int64_t> rowMajorStrides(const std::vector<int64_t>& dims)
{
    std::vector<int64_t> strides(dims.size(), 1);
    for (size_t i = dims.size(); i-- > 1;)
        strides[i - 1] = strides[i] * dims[i];
    return strides;
}

// Strides of a tensor of `dims` broadcast to `rank` dimensions: 0 along broadcast axes.
std::vector<int64_t> broadcastStrides(const std::vector<int64_t>& dims, size_t rank)
{
    std::vector<int64_t> strides(rank, 0);
    const size_t offset = rank - dims.size();
    int64_t stride = 1;
    for (size_t i = dims.size(); i-- > 0;) {
        strides[offset + i] = dims[i] == 1 ? 0 : stride;
        stride *= dims[i];
    }
    return strides;
}

// Numpy's multidirectional broadcast; false when the shapes are incompatible.
bool broadcastDims(
    const std::vector<int64_t>& a, const std::vector<int64_t>& b, std::vector<int64_t>* out)
{
    const size_t rank = std::max(a.size(), b.size());
    std::vector<int64_t> dims(rank, 1);
    for (size_t i = 0; i < rank; ++i) {
        const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
        const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
        if (da == db || db == 1)
            dims[i] = da;
        else if (da == 1)
            dims[i] = db;
        else
            return false;
    }
    *out = std::move(dims);
    return true;
}

// For each element of a tensor of `dims`, in row-major order, `start` plus its coordinates times
// `strides`: the flat source index that broadcasts, transposes and slices read it from.
std::vector<int64_t> sourceIndices(const std::vector<int64_t>& dims,
    const std::vector<int64_t>& strides, int64_t start, int64_t count)
{
    std::vector<int64_t> indices(static_cast<size_t>(count));
    std::vector<int64_t> position(dims.size(), 0);
    int64_t flat = start;
    for (int64_t n = 0; n < count; ++n) {
        indices[static_cast<size_t>(n)] = flat;
        for (size_t i = dims.size(); i-- > 0;) {
            flat += strides[i];
            if (++position[i] < dims[i])
                break;
            flat -= strides[i] * position[i];
            position[i] = 0;
        }
    }
    return indices;
}

// A tensor of `dims` whose elements are read from `source` at `indices`.
Value take(const Value& source, std::vector<int64_t> dims, const std::vector<int64_t>& indices)
{
    Value out;
    out.type = source.type;
    out.dims = std::move(dims);
    if (source.isFloat()) {
        out.floats.reserve(indices.size());
        for (int64_t i : indices)
            out.floats.push_back(source.floats[static_cast<size_t>(i)]);
    } else {
        out.ints.reserve(indices.size());
        for (int64_t i : indices)
            out.ints.push_back(source.ints[static_cast<size_t>(i)]);
    }
    return out;
}

Value reshaped(const Value& source, std::vector<int64_t> dims)
{
    Value out = source;
    out.dims = std::move(dims);
    return out;
}

// One node being evaluated, with its constant inputs.
struct NodeContext {
    const onnx::NodeProto& node;
    int index;
    int64_t opset;
    std::vector<const Value*> inputs; // nullptr for an absent optional input

    const Value* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }

    Status invalid(const std::string& what) const
    {
        return Status::invalid(nodeLabel(node, index) + ": " + what);
    }
};

// A node evaluator: sets `out` to the node's single output, leaves it empty to keep the node (an
// input type or size it does not fold), or returns InvalidInput for a malformed node.
using Evaluator = Status (*)(const NodeContext&, std::optional<Value>*);

// A 0-D or 1-D integer tensor as a list (axes, starts, shape arguments).
bool intList(const Value* v, std::vector<int64_t>* out)
{
    if (!v || !v->isInteger() || v->dims.size() > 1)
        return false;
    *out = v->ints;
    return true;
}

// Normalizes a possibly negative axis for a tensor of `rank`; false when out of range.
bool normalizeAxis(int64_t* axis, int64_t rank)
{
    if (*axis < -rank || *axis >= rank)
        return false;
    if (*axis < 0)
        *axis += rank;
    return true;
}

Status evaluateIdentity(const NodeContext& c, std::optional<Value>* out)
{
    if (!c.input(0))
        return c.invalid("has no input");
    *out = *c.input(0);
    return Status();
}

Status evaluateGather(const NodeContext& c, std::optional<Value>* out)
{
    const Value* data = c.input(0);
    const Value* indices = c.input(1);
    if (!data || !indices)
        return c.invalid("needs data and indices");
    if (!indices->isInteger())
        return c.invalid("indices must be int32 or int64");
    const int64_t rank = static_cast<int64_t>(data->dims.size());
    if (rank == 0)
        return c.invalid("cannot gather from a scalar");
    int64_t axis = onnxutil::intAttribute(c.node, "axis", 0);
    if (!normalizeAxis(&axis, rank))
        return c.invalid(
            "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
    const auto a = static_cast<size_t>(axis);
    std::vector<int64_t> dims(data->dims.begin(), data->dims.begin() + axis);
    dims.insert(dims.end(), indices->dims.begin(), indices->dims.end());
    dims.insert(dims.end(), data->dims.begin() + axis + 1, data->dims.end());
    int64_t count = 0;
    if (!foldableCount(dims, &count))
        return Status();
    const int64_t dim = data->dims[a];
    std::vector<int64_t> rows;
    rows.reserve(indices->ints.size());
    for (int64_t index : indices->ints) {
        if (index < -dim || index >= dim)
            return c.invalid("index " + std::to_string(index) + " out of range for axis " +
                std::to_string(axis) + " of size " + std::to_string(dim));
        rows.push_back(index < 0 ? index + dim : index);
    }
    const int64_t outer = product(data->dims, 0, a);
    const int64_t inner = product(data->dims, a + 1, data->dims.size());
    std::vector<int64_t> source;
    source.reserve(static_cast<size_t>(count));
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t row : rows)
            for (int64_t i = 0; i < inner; ++i)
                source.push_back((o * dim + row) * inner + i);
    *out = take(*data, std::move(dims), source);
    return Status();
}

// Axes of Squeeze/Unsqueeze: an input from opset 13, an attribute before. False when absent.
Status squeezeAxes(const NodeContext& c, std::vector<int64_t>* axes, bool* present)
{
    if (c.opset >= 13) {
        *present = c.input(1) != nullptr;
        if (*present && !intList(c.input(1), axes))
            return c.invalid("axes must be a 1-D integer tensor");
        return Status();
    }
    *present = onnxutil::findAttribute(c.node, "axes") != nullptr;
    *axes = onnxutil::intsAttribute(c.node, "axes");
    return Status();
}

Status evaluateUnsqueeze(const NodeContext& c, std::optional<Value>* out)
{
    const Value* data = c.input(0);
    if (!data)
        return c.invalid("has no data input");
    std::vector<int64_t> axes;
    bool present = false;
    if (Status s = squeezeAxes(c, &axes, &present); !s)
        return s;
    if (!present)
        return c.invalid("has no axes");
    const auto rank = static_cast<int64_t>(data->dims.size() + axes.size());
    std::vector<bool> inserted(static_cast<size_t>(rank), false);
    for (int64_t axis : axes) {
        if (!normalizeAxis(&axis, rank))
            return c.invalid("axis " + std::to_string(axis) + " out of range for output rank " +
                std::to_string(rank));
        if (inserted[static_cast<size_t>(axis)])
            return c.invalid("axis " + std::to_string(axis) + " given twice");
        inserted[static_cast<size_t>(axis)] = true;
    }
    std::vector<int64_t> dims;
    dims.reserve(inserted.size());
    size_t next = 0;
    for (bool one : inserted)
        dims.push_back(one ? 1 : data->dims[next++]);
    *out = reshaped(*data, std::move(dims));
    return Status();
}

Status evaluateSqueeze(const NodeContext& c, std::optional<Value>* out)
{
    const Value* data = c.input(0);
    if (!data)
        return c.invalid("has no data input");
    std::vector<int64_t> axes;
    bool present = false;
    if (Status s = squeezeAxes(c, &axes, &present); !s)
        return s;
    const auto rank = static_cast<int64_t>(data->dims.size());
    std::vector<bool> removed(data->dims.size(), false);
    if (!present)
        for (size_t i = 0; i < data->dims.size(); ++i)
            removed[i] = data->dims[i] == 1;
    for (int64_t axis : axes) {
        if (!normalizeAxis(&axis, rank))
            return c.invalid(
                "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
        if (data->dims[static_cast<size_t>(axis)] != 1)
            return c.invalid("cannot squeeze axis " + std::to_string(axis) + " of size " +
                std::to_string(data->dims[static_cast<size_t>(axis)]));
        removed[static_cast<size_t>(axis)] = true;
    }
    std::vector<int64_t> dims;
    for (size_t i = 0; i < data->dims.size(); ++i)
        if (!removed[i])
            dims.push_back(data->dims[i]);
    *out = reshaped(*data, std::move(dims));
    return Status();
}

Status evaluateConcat(const NodeContext& c, std::optional<Value>* out)
{
    if (c.inputs.empty())
        return c.invalid("has no inputs");
    for (const Value* v : c.inputs)
        if (!v)
            return c.invalid("has an empty input name");
    if (!onnxutil::findAttribute(c.node, "axis"))
        return c.invalid("has no axis");
    const Value& first = *c.inputs[0];
    const auto rank = static_cast<int64_t>(first.dims.size());
    if (rank == 0)
        return c.invalid("cannot concatenate scalars");
    int64_t axis = onnxutil::intAttribute(c.node, "axis", 0);
    if (!normalizeAxis(&axis, rank))
        return c.invalid(
            "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
    const auto a = static_cast<size_t>(axis);
    std::vector<int64_t> dims = first.dims;
    dims[a] = 0;
    for (const Value* v : c.inputs) {
        if (v->type != first.type)
            return c.invalid(
                std::string("concatenates ") + typeName(first.type) + " with " + typeName(v->type));
        if (v->dims.size() != first.dims.size())
            return c.invalid("concatenates tensors of ranks " + std::to_string(rank) + " and " +
                std::to_string(v->dims.size()));
        for (size_t i = 0; i < dims.size(); ++i)
            if (i != a && v->dims[i] != first.dims[i])
                return c.invalid("concatenates shapes " + dimsText(first.dims) + " and " +
                    dimsText(v->dims) + " along axis " + std::to_string(axis));
        dims[a] += v->dims[a];
    }
    int64_t count = 0;
    if (!foldableCount(dims, &count))
        return Status();
    Value result;
    result.type = first.type;
    const int64_t outer = product(first.dims, 0, a);
    const int64_t inner = product(first.dims, a + 1, first.dims.size());
    for (int64_t o = 0; o < outer; ++o)
        for (const Value* v : c.inputs) {
            const int64_t block = v->dims[a] * inner;
            if (first.isFloat())
                result.floats.insert(result.floats.end(), v->floats.begin() + o * block,
                    v->floats.begin() + (o + 1) * block);
            else
                result.ints.insert(result.ints.end(), v->ints.begin() + o * block,
                    v->ints.begin() + (o + 1) * block);
        }
    result.dims = std::move(dims);
    *out = std::move(result);
    return Status();
}

// A float converted to an integer type by truncation, as C and ONNX runtimes cast; false when the
// result is undefined (NaN, infinity, out of range).
bool truncateFloat(float f, int32_t type, int64_t* out)
{
    const double limit = type == kInt32 ? 2147483648.0 : 9223372036854775808.0;
    if (!std::isfinite(f) || static_cast<double>(f) >= limit || static_cast<double>(f) < -limit)
        return false;
    *out = static_cast<int64_t>(f);
    return true;
}

Status evaluateCast(const NodeContext& c, std::optional<Value>* out)
{
    const Value* in = c.input(0);
    if (!in)
        return c.invalid("has no input");
    const auto* to = onnxutil::findAttribute(c.node, "to");
    if (!to || to->type() != onnx::AttributeProto::INT)
        return c.invalid("has no 'to' attribute");
    if (to->i() != kInt64 && to->i() != kInt32 && to->i() != kBool && to->i() != kFloat)
        return Status();
    const auto type = static_cast<int32_t>(to->i());
    Value result;
    result.type = type;
    result.dims = in->dims;
    if (type == kFloat) {
        if (in->isFloat())
            result.floats = in->floats;
        else
            for (int64_t v : in->ints)
                result.floats.push_back(static_cast<float>(v));
    } else if (in->isFloat()) {
        for (float f : in->floats) {
            int64_t v = 0;
            if (type == kBool)
                v = f != 0.0f;
            else if (!truncateFloat(f, type, &v))
                return Status();
            result.ints.push_back(v);
        }
    } else {
        for (int64_t v : in->ints)
            result.ints.push_back(type == kBool ? v != 0 : wrapTo(type, v));
    }
    *out = std::move(result);
    return Status();
}

// Applies `op` to the broadcast elements of `a` and `b`; false when `op` refuses an element.
template <typename T, typename R, typename Op>
bool combine(const Value& a, const Value& b, const std::vector<int64_t>& dims, int64_t count, Op op,
    std::vector<R>* out)
{
    const auto ia = sourceIndices(dims, broadcastStrides(a.dims, dims.size()), 0, count);
    const auto ib = sourceIndices(dims, broadcastStrides(b.dims, dims.size()), 0, count);
    const auto& va = elementsOf<T>(a);
    const auto& vb = elementsOf<T>(b);
    out->resize(static_cast<size_t>(count));
    for (size_t n = 0; n < out->size(); ++n)
        if (!op(va[static_cast<size_t>(ia[n])], vb[static_cast<size_t>(ib[n])], &(*out)[n]))
            return false;
    return true;
}

// The broadcast shape of a binary node's two inputs, which must share an element type.
Status binaryShape(const NodeContext& c, std::vector<int64_t>* dims, int64_t* count, bool* fits)
{
    const Value* a = c.input(0);
    const Value* b = c.input(1);
    if (!a || !b)
        return c.invalid("needs two inputs");
    if (a->type != b->type)
        return c.invalid(
            std::string("combines ") + typeName(a->type) + " with " + typeName(b->type));
    if (!broadcastDims(a->dims, b->dims, dims))
        return c.invalid("cannot broadcast " + dimsText(a->dims) + " with " + dimsText(b->dims));
    *fits = foldableCount(*dims, count);
    return Status();
}

Status evaluateArithmetic(const NodeContext& c, std::optional<Value>* out)
{
    std::vector<int64_t> dims;
    int64_t count = 0;
    bool fits = false;
    if (Status s = binaryShape(c, &dims, &count, &fits); !s)
        return s;
    const Value& a = *c.input(0);
    const Value& b = *c.input(1);
    if (!fits || a.type == kBool)
        return Status();
    const std::string& op = c.node.op_type();
    const char kind = op == "Add" ? '+' : op == "Sub" ? '-' : op == "Mul" ? '*' : '/';
    Value result;
    result.type = a.type;
    bool computed = false;
    if (a.isFloat()) {
        computed = combine<float>(
            a, b, dims, count,
            [kind](float x, float y, float* r) {
                *r = kind == '+' ? x + y : kind == '-' ? x - y : kind == '*' ? x * y : x / y;
                return true;
            },
            &result.floats);
    } else {
        const int32_t type = a.type;
        computed = combine<int64_t>(
            a, b, dims, count,
            [kind, type](int64_t x, int64_t y, int64_t* r) {
                // Unsigned arithmetic wraps where signed overflow would be undefined.
                const auto ux = static_cast<uint64_t>(x);
                const auto uy = static_cast<uint64_t>(y);
                if (kind == '+')
                    *r = static_cast<int64_t>(ux + uy);
                else if (kind == '-')
                    *r = static_cast<int64_t>(ux - uy);
                else if (kind == '*')
                    *r = static_cast<int64_t>(ux * uy);
                else if (y == 0 || (x == std::numeric_limits<int64_t>::min() && y == -1))
                    return false; // undefined: the runtime's problem, not the folder's
                else
                    *r = x / y; // truncates toward zero, as ONNX specifies
                if (kind == '/' && wrapTo(type, *r) != *r)
                    return false;
                *r = wrapTo(type, *r);
                return true;
            },
            &result.ints);
    }
    if (!computed)
        return Status();
    result.dims = std::move(dims);
    *out = std::move(result);
    return Status();
}

Status evaluateEqual(const NodeContext& c, std::optional<Value>* out)
{
    std::vector<int64_t> dims;
    int64_t count = 0;
    bool fits = false;
    if (Status s = binaryShape(c, &dims, &count, &fits); !s)
        return s;
    if (!fits)
        return Status();
    const Value& a = *c.input(0);
    const Value& b = *c.input(1);
    Value result;
    result.type = kBool;
    if (a.isFloat())
        combine<float>(
            a, b, dims, count,
            [](float x, float y, int64_t* r) {
                *r = x == y;
                return true;
            },
            &result.ints);
    else
        combine<int64_t>(
            a, b, dims, count,
            [](int64_t x, int64_t y, int64_t* r) {
                *r = x == y;
                return true;
            },
            &result.ints);
    result.dims = std::move(dims);
    *out = std::move(result);
    return Status();
}

Status evaluateWhere(const NodeContext& c, std::optional<Value>* out)
{
    const Value* condition = c.input(0);
    const Value* x = c.input(1);
    const Value* y = c.input(2);
    if (!condition || !x || !y)
        return c.invalid("needs condition, X and Y");
    if (condition->type != kBool)
        return c.invalid(std::string("condition is ") + typeName(condition->type) + ", not bool");
    if (x->type != y->type)
        return c.invalid(
            std::string("selects between ") + typeName(x->type) + " and " + typeName(y->type));
    std::vector<int64_t> dims;
    if (!broadcastDims(condition->dims, x->dims, &dims) || !broadcastDims(dims, y->dims, &dims))
        return c.invalid("cannot broadcast " + dimsText(condition->dims) + ", " +
            dimsText(x->dims) + " and " + dimsText(y->dims));
    int64_t count = 0;
    if (!foldableCount(dims, &count))
        return Status();
    const auto ic = sourceIndices(dims, broadcastStrides(condition->dims, dims.size()), 0, count);
    const auto ix = sourceIndices(dims, broadcastStrides(x->dims, dims.size()), 0, count);
    const auto iy = sourceIndices(dims, broadcastStrides(y->dims, dims.size()), 0, count);
    std::vector<int64_t> source(static_cast<size_t>(count));
    // Index into X, or into Y offset past X's elements, so that one take() reads both.
    Value both = *x;
    const auto xSize = static_cast<int64_t>(x->isFloat() ? x->floats.size() : x->ints.size());
    both.floats.insert(both.floats.end(), y->floats.begin(), y->floats.end());
    both.ints.insert(both.ints.end(), y->ints.begin(), y->ints.end());
    for (size_t n = 0; n < source.size(); ++n)
        source[n] = condition->ints[static_cast<size_t>(ic[n])] ? ix[n] : xSize + iy[n];
    *out = take(both, std::move(dims), source);
    return Status();
}

Status evaluateExpand(const NodeContext& c, std::optional<Value>* out)
{
    const Value* in = c.input(0);
    std::vector<int64_t> shape;
    if (!in || !c.input(1))
        return c.invalid("needs input and shape");
    if (!intList(c.input(1), &shape))
        return c.invalid("shape must be a 1-D integer tensor");
    if (std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; }))
        return c.invalid("shape " + dimsText(shape) + " has a negative dimension");
    std::vector<int64_t> dims;
    if (!broadcastDims(in->dims, shape, &dims))
        return c.invalid("cannot expand " + dimsText(in->dims) + " to " + dimsText(shape));
    int64_t count = 0;
    if (!foldableCount(dims, &count))
        return Status();
    const auto source = sourceIndices(dims, broadcastStrides(in->dims, dims.size()), 0, count);
    *out = take(*in, std::move(dims), source);
    return Status();
}

Status evaluateSlice(const NodeContext& c, std::optional<Value>* out)
{
    const Value* data = c.input(0);
    if (!data)
        return c.invalid("has no data input");
    std::vector<int64_t> starts;
    std::vector<int64_t> ends;
    std::vector<int64_t> axes;
    std::vector<int64_t> steps;
    bool hasAxes = false;
    bool hasSteps = false;
    if (c.opset < 10) {
        if (!onnxutil::findAttribute(c.node, "starts") || !onnxutil::findAttribute(c.node, "ends"))
            return c.invalid("needs starts and ends attributes");
        starts = onnxutil::intsAttribute(c.node, "starts");
        ends = onnxutil::intsAttribute(c.node, "ends");
        hasAxes = onnxutil::findAttribute(c.node, "axes") != nullptr;
        axes = onnxutil::intsAttribute(c.node, "axes");
    } else {
        if (!c.input(1) || !c.input(2))
            return c.invalid("needs starts and ends");
        hasAxes = c.input(3) != nullptr;
        hasSteps = c.input(4) != nullptr;
        if (!intList(c.input(1), &starts) || !intList(c.input(2), &ends) ||
            (hasAxes && !intList(c.input(3), &axes)) || (hasSteps && !intList(c.input(4), &steps)))
            return c.invalid("starts, ends, axes and steps must be 1-D integer tensors");
    }
    const size_t n = starts.size();
    if (ends.size() != n || (hasAxes && axes.size() != n) || (hasSteps && steps.size() != n))
        return c.invalid("starts, ends, axes and steps differ in length");
    const auto rank = static_cast<int64_t>(data->dims.size());
    std::vector<int64_t> dims = data->dims;
    std::vector<int64_t> begin(dims.size(), 0);
    std::vector<int64_t> step(dims.size(), 1);
    std::vector<bool> seen(dims.size(), false);
    for (size_t k = 0; k < n; ++k) {
        int64_t axis = hasAxes ? axes[k] : static_cast<int64_t>(k);
        if (!normalizeAxis(&axis, rank))
            return c.invalid(
                "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
        const auto a = static_cast<size_t>(axis);
        if (seen[a])
            return c.invalid("axis " + std::to_string(axis) + " given twice");
        seen[a] = true;
        const int64_t stride = hasSteps ? steps[k] : 1;
        if (stride == 0)
            return c.invalid("step is 0");
        const int64_t dim = data->dims[a];
        int64_t start = starts[k] < 0 ? starts[k] + dim : starts[k];
        int64_t end = ends[k] < 0 ? ends[k] + dim : ends[k];
        int64_t length = 0;
        // Clamped as numpy does: a forward slice to [0, dim], a backward one to [-1, dim - 1].
        if (stride > 0) {
            start = std::max<int64_t>(0, std::min(start, dim));
            end = std::max<int64_t>(0, std::min(end, dim));
            length = end > start ? (end - start - 1) / stride + 1 : 0;
        } else if (dim > 0) {
            start = std::max<int64_t>(0, std::min(start, dim - 1));
            end = std::max<int64_t>(-1, std::min(end, dim - 1));
            length = start > end ? 1 - (start - end - 1) / stride : 0;
        }
        begin[a] = length > 0 ? start : 0;
        // A single element needs no step; a huge one would overflow the stride arithmetic.
        step[a] = length > 1 ? stride : 1;
        dims[a] = length;
    }
    int64_t count = 0;
    if (!foldableCount(dims, &count))
        return Status();
    const auto strides = rowMajorStrides(data->dims);
    std::vector<int64_t> sliceStrides(dims.size());
    int64_t offset = 0;
    for (size_t i = 0; i < dims.size(); ++i) {
        sliceStrides[i] = strides[i] * step[i];
        offset += begin[i] * strides[i];
    }
    *out = take(*data, dims, sourceIndices(dims, sliceStrides, offset, count));
    return Status();
}

Status evaluateReshape(const NodeContext& c, std::optional<Value>* out)
{
    const Value* data = c.input(0);
    std::vector<int64_t> shape;
    if (!data || !c.input(1))
        return c.invalid("needs data and shape");
    if (!intList(c.input(1), &shape))
        return c.invalid("shape must be a 1-D integer tensor");
    const bool allowZero = onnxutil::intAttribute(c.node, "allowzero", 0) != 0;
    const auto total =
        static_cast<int64_t>(data->isFloat() ? data->floats.size() : data->ints.size());
    std::vector<int64_t> dims = shape;
    int inferred = -1;
    int64_t known = 1;
    for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] == 0 && !allowZero) {
            if (i >= data->dims.size())
                return c.invalid("shape " + dimsText(shape) + " copies dimension " +
                    std::to_string(i) + " of a rank-" + std::to_string(data->dims.size()) +
                    " input");
            dims[i] = data->dims[i];
        }
        if (dims[i] == -1) {
            if (inferred >= 0)
                return c.invalid("shape " + dimsText(shape) + " has more than one -1");
            inferred = static_cast<int>(i);
            continue;
        }
        if (dims[i] < -1)
            return c.invalid("shape " + dimsText(shape) + " has a negative dimension");
        if (__builtin_mul_overflow(known, dims[i], &known))
            return c.invalid("shape " + dimsText(shape) + " overflows");
    }
    if (inferred >= 0) {
        if (known == 0 || total % known != 0)
            return c.invalid(
                "cannot reshape " + std::to_string(total) + " elements to " + dimsText(shape));
        dims[static_cast<size_t>(inferred)] = total / known;
    } else if (known != total) {
        return c.invalid(
            "cannot reshape " + std::to_string(total) + " elements to " + dimsText(shape));
    }
    *out = reshaped(*data, std::move(dims));
    return Status();
}

Status evaluateConstantOfShape(const NodeContext& c, std::optional<Value>* out)
{
    std::vector<int64_t> dims;
    if (!c.input(0))
        return c.invalid("has no shape input");
    if (!intList(c.input(0), &dims))
        return c.invalid("shape must be a 1-D integer tensor");
    if (std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d < 0; }))
        return c.invalid("shape " + dimsText(dims) + " has a negative dimension");
    int64_t count = 0;
    if (!foldableCount(dims, &count))
        return Status();
    Value result;
    result.type = kFloat;
    float fill = 0.0f;
    int64_t intFill = 0;
    if (const auto* value = onnxutil::findAttribute(c.node, "value")) {
        if (value->type() != onnx::AttributeProto::TENSOR ||
            onnxutil::elementCount(value->t()) != 1)
            return c.invalid("value must be a one-element tensor");
        result.type = value->t().data_type();
        std::vector<int64_t> ints;
        std::vector<float> floats;
        if (result.type == kFloat && onnxutil::readFloat(value->t(), &floats))
            fill = floats[0];
        else if ((result.type == kInt64 || result.type == kInt32 || result.type == kBool) &&
            onnxutil::readInt64(value->t(), &ints))
            intFill = ints[0];
        else
            return Status();
    }
    if (result.isFloat())
        result.floats.assign(static_cast<size_t>(count), fill);
    else
        result.ints.assign(static_cast<size_t>(count), intFill);
    result.dims = std::move(dims);
    *out = std::move(result);
    return Status();
}

Status evaluateRange(const NodeContext& c, std::optional<Value>* out)
{
    const Value* start = c.input(0);
    const Value* limit = c.input(1);
    const Value* delta = c.input(2);
    if (!start || !limit || !delta)
        return c.invalid("needs start, limit and delta");
    for (const Value* v : {start, limit, delta})
        if ((v->isFloat() ? v->floats.size() : v->ints.size()) != 1 || v->dims.size() > 1)
            return c.invalid("start, limit and delta must be scalars");
    if (start->type != limit->type || start->type != delta->type)
        return c.invalid("start, limit and delta differ in type");
    if (start->type == kBool)
        return Status();
    Value result;
    result.type = start->type;
    int64_t count = 0;
    if (start->isFloat()) {
        const float s = start->floats[0];
        const float d = delta->floats[0];
        if (d == 0.0f)
            return c.invalid("delta is 0");
        const float steps = std::ceil((limit->floats[0] - s) / d);
        if (!std::isfinite(steps) || steps > static_cast<float>(kMaxFoldedElements))
            return Status();
        count = std::max<int64_t>(0, static_cast<int64_t>(steps));
        for (int64_t i = 0; i < count; ++i)
            result.floats.push_back(s + static_cast<float>(i) * d);
    } else {
        const int64_t s = start->ints[0];
        const int64_t d = delta->ints[0];
        if (d == 0)
            return c.invalid("delta is 0");
        int64_t span = 0;
        if (__builtin_sub_overflow(limit->ints[0], s, &span))
            return Status();
        int64_t steps = span / d;
        if (span % d != 0 && ((span % d > 0) == (d > 0)))
            ++steps; // ceil of the exact quotient
        if (steps > kMaxFoldedElements)
            return Status();
        count = std::max<int64_t>(0, steps);
        for (int64_t i = 0; i < count; ++i)
            result.ints.push_back(s + i * d);
    }
    result.dims = {count};
    *out = std::move(result);
    return Status();
}

Status evaluateUnary(const NodeContext& c, std::optional<Value>* out)
{
    const Value* in = c.input(0);
    if (!in)
        return c.invalid("has no input");
    const std::string& op = c.node.op_type();
    Value result = *in;
    if (op == "Neg" && in->isInteger()) {
        for (int64_t& v : result.ints)
            v = wrapTo(in->type, static_cast<int64_t>(0 - static_cast<uint64_t>(v)));
    } else if (!in->isFloat()) {
        return Status();
    } else {
        for (float& v : result.floats)
            v = op == "Floor"  ? std::floor(v)
                : op == "Ceil" ? std::ceil(v)
                : op == "Sqrt" ? std::sqrt(v)
                               : -v;
    }
    *out = std::move(result);
    return Status();
}

Status evaluateTranspose(const NodeContext& c, std::optional<Value>* out)
{
    const Value* in = c.input(0);
    if (!in)
        return c.invalid("has no input");
    const size_t rank = in->dims.size();
    std::vector<int64_t> perm = onnxutil::intsAttribute(c.node, "perm");
    if (!onnxutil::findAttribute(c.node, "perm"))
        for (size_t i = 0; i < rank; ++i)
            perm.push_back(static_cast<int64_t>(rank - 1 - i));
    std::vector<bool> used(rank, false);
    if (perm.size() != rank)
        return c.invalid("perm " + dimsText(perm) + " does not match rank " + std::to_string(rank));
    for (int64_t p : perm) {
        if (p < 0 || p >= static_cast<int64_t>(rank) || used[static_cast<size_t>(p)])
            return c.invalid("perm " + dimsText(perm) + " is not a permutation");
        used[static_cast<size_t>(p)] = true;
    }
    const auto inStrides = rowMajorStrides(in->dims);
    std::vector<int64_t> dims(rank);
    std::vector<int64_t> strides(rank);
    for (size_t i = 0; i < rank; ++i) {
        dims[i] = in->dims[static_cast<size_t>(perm[i])];
        strides[i] = inStrides[static_cast<size_t>(perm[i])];
    }
    const auto count = static_cast<int64_t>(in->isFloat() ? in->floats.size() : in->ints.size());
    *out = take(*in, dims, sourceIndices(dims, strides, 0, count));
    return Status();
}

const std::unordered_map<std::string, Evaluator>& evaluators()
{
    static const std::unordered_map<std::string, Evaluator> table = {
        {"Identity", evaluateIdentity},
        {"Gather", evaluateGather},
        {"Unsqueeze", evaluateUnsqueeze},
        {"Squeeze", evaluateSqueeze},
        {"Concat", evaluateConcat},
        {"Cast", evaluateCast},
        {"Add", evaluateArithmetic},
        {"Sub", evaluateArithmetic},
        {"Mul", evaluateArithmetic},
        {"Div", evaluateArithmetic},
        {"Equal", evaluateEqual},
        {"Where", evaluateWhere},
        {"Expand", evaluateExpand},
        {"Slice", evaluateSlice},
        {"Reshape", evaluateReshape},
        {"ConstantOfShape", evaluateConstantOfShape},
        {"Range", evaluateRange},
        {"Floor", evaluateUnary},
        {"Ceil", evaluateUnary},
        {"Sqrt", evaluateUnary},
        {"Neg", evaluateUnary},
        {"Transpose", evaluateTranspose},
    };
    return table;
}

onnx::TensorProto tensorOf(const std::string& name, const Value& v)
{
    if (v.type == kFloat)
        return onnxutil::makeFloatTensor(name, v.dims, v.floats);
    if (v.type == kInt64)
        return onnxutil::makeInt64Tensor(name, v.dims, v.ints);
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(v.type);
    for (int64_t d : v.dims)
        t.add_dims(d);
    if (v.type == kInt32) {
        std::vector<int32_t> narrow(v.ints.begin(), v.ints.end());
        t.set_raw_data(narrow.data(), narrow.size() * sizeof(int32_t));
    } else {
        std::vector<uint8_t> bytes(v.ints.begin(), v.ints.end());
        t.set_raw_data(bytes.data(), bytes.size());
    }
    return t;
}

// The tensor a Constant node holds, or nullopt for forms the folder leaves alone (strings,
// sparse tensors).
std::optional<onnx::TensorProto> constantNodeTensor(onnx::NodeProto* node)
{
    for (auto& attr : *node->mutable_attribute()) {
        const std::string& name = attr.name();
        if (name == "value" && attr.type() == onnx::AttributeProto::TENSOR) {
            onnx::TensorProto t;
            t.Swap(attr.mutable_t()); // the node goes away: take its tensor without a copy
            return t;
        }
        if (name == "value_float" && attr.type() == onnx::AttributeProto::FLOAT)
            return onnxutil::makeFloatTensor("", {}, {attr.f()});
        if (name == "value_floats" && attr.type() == onnx::AttributeProto::FLOATS)
            return onnxutil::makeFloatTensor("", {static_cast<int64_t>(attr.floats_size())},
                {attr.floats().begin(), attr.floats().end()});
        if (name == "value_int" && attr.type() == onnx::AttributeProto::INT)
            return onnxutil::makeInt64Tensor("", {}, {attr.i()});
        if (name == "value_ints" && attr.type() == onnx::AttributeProto::INTS)
            return onnxutil::makeInt64Tensor("", {static_cast<int64_t>(attr.ints_size())},
                {attr.ints().begin(), attr.ints().end()});
    }
    return std::nullopt;
}

// What the note on a consumer calls its input `i`: the argument names of the ops whose constant
// arguments matter to backends, "input i" for the rest.
std::string inputRole(const std::string& op, size_t i)
{
    static const std::unordered_map<std::string, std::vector<const char*>> roles = {
        {"Reshape", {"data", "shape"}},
        {"Expand", {"input", "shape"}},
        {"Slice", {"data", "starts", "ends", "axes", "steps"}},
        {"Resize", {"X", "roi", "scales", "sizes"}},
        {"Upsample", {"X", "scales"}},
        {"Pad", {"data", "pads", "constant_value", "axes"}},
        {"Tile", {"input", "repeats"}},
        {"Split", {"input", "split"}},
        {"Squeeze", {"data", "axes"}},
        {"Unsqueeze", {"data", "axes"}},
        {"Clip", {"input", "min", "max"}},
        {"TopK", {"X", "K"}},
        {"ConstantOfShape", {"input"}},
    };
    const auto it = roles.find(op);
    if (it != roles.end() && i < it->second.size())
        return it->second[i];
    return "input " + std::to_string(i);
}

std::string describe(const Value& v)
{
    constexpr size_t kMaxShown = 16;
    if (v.isFloat() || v.ints.size() > kMaxShown)
        return std::string("(") + typeName(v.type) + " " + dimsText(v.dims) + ")";
    if (v.dims.empty() && v.ints.size() == 1)
        return std::to_string(v.ints[0]);
    return dimsText(v.ints);
}

class ConstantFolder {
public:
    explicit ConstantFolder(onnx::ModelProto& model)
        : model_(model),
          graph_(*model.mutable_graph()),
          opset_(onnxutil::defaultOpset(model)),
          given_(graph_)
    {
    }

    Status run(PassReport* report)
    {
        for (int round = 0; round < kMaxRounds; ++round) {
            int folded = 0;
            if (Status s = foldRound(&folded); !s)
                return s;
            folded_ += folded;
            if (folded == 0)
                break;
            if (Status s = reinferShapes(); !s)
                return s;
        }
        if (report) {
            report->folded += folded_;
            addNotes(report);
        }
        return Status();
    }

private:
    // One pass over the graph in order: what folds is known to every later node of the round.
    Status foldRound(int* folded)
    {
        // value_info is the same throughout a round (shape inference runs between rounds).
        shapes_.emplace(graph_);
        std::vector<bool> remove(static_cast<size_t>(graph_.node_size()), false);
        const auto& table = evaluators();
        for (int i = 0; i < graph_.node_size(); ++i) {
            onnx::NodeProto* node = graph_.mutable_node(i);
            if (!node->domain().empty() && node->domain() != "ai.onnx")
                continue;
            if (node->output_size() != 1 || node->output(0).empty())
                continue;
            const std::string& op = node->op_type();
            const auto evaluator = table.find(op);
            if (op != "Constant" && op != "Shape" && evaluator == table.end())
                continue;

            std::optional<onnx::TensorProto> tensor;
            std::optional<Value> result;
            if (op == "Constant") {
                if (node->attribute_size() == 0)
                    return Status::invalid(nodeLabel(*node, i) + ": has no value");
            } else if (op == "Shape") {
                if (node->input_size() < 1 || node->input(0).empty())
                    return Status::invalid(nodeLabel(*node, i) + ": has no input");
                result = evaluateShape(*node);
            } else {
                NodeContext context {*node, i, opset_, {}};
                bool known = false;
                if (Status s = gatherInputs(&context, &known); !s)
                    return s;
                if (!known)
                    continue;
                if (Status s = evaluator->second(context, &result); !s)
                    return s;
            }
            if (op != "Constant" && !result)
                continue;

            const std::string& name = node->output(0);
            if (initializer(name) || given_.isGraphInput(name))
                return Status::invalid(nodeLabel(*node, i) + ": output '" + name +
                    "' is already a graph input or initializer");
            if (result) {
                tensor = tensorOf(name, *result);
                // A copy of an initializer (exporters share weights that way) is not news.
                if (op != "Identity" || computed_.count(node->input(0)) != 0)
                    computed_.insert(name);
                values_[name] = std::move(*result);
            } else {
                tensor = constantNodeTensor(node);
                if (!tensor)
                    continue; // a string or sparse constant: nothing here computes with it
            }
            tensor->set_name(name);
            addInitializer(std::move(*tensor));
            remove[static_cast<size_t>(i)] = true;
            ++*folded;
        }
        removeNodes(remove);
        return Status();
    }

    // The known shape of a value: decoded constants first, then initializers, inputs, value_info.
    std::optional<Value> evaluateShape(const onnx::NodeProto& node) const
    {
        const std::string& input = node.input(0);
        std::vector<int64_t> dims;
        const onnx::TensorProto* tensor = initializer(input);
        if (const auto it = values_.find(input); it != values_.end())
            dims = it->second.dims;
        else if (tensor)
            dims.assign(tensor->dims().begin(), tensor->dims().end());
        else if (!shapes_->staticShape(input, &dims))
            return std::nullopt;
        // Opset 15's start and end pick a range of dimensions, clamped like a slice.
        const auto rank = static_cast<int64_t>(dims.size());
        const auto clamp = [rank](int64_t axis) {
            return std::max<int64_t>(0, std::min(rank, axis < 0 ? axis + rank : axis));
        };
        const int64_t start = clamp(onnxutil::intAttribute(node, "start", 0));
        const int64_t end = clamp(onnxutil::intAttribute(node, "end", rank));
        Value result;
        result.type = kInt64;
        if (end > start)
            result.ints.assign(dims.begin() + start, dims.begin() + end);
        result.dims = {static_cast<int64_t>(result.ints.size())};
        return result;
    }

    const onnx::TensorProto* initializer(const std::string& name) const
    {
        if (const auto* t = given_.initializer(name))
            return t;
        const auto it = added_.find(name);
        return it == added_.end() ? nullptr : it->second;
    }

    // Points the context at the node's constant inputs, decoding initializers on first use.
    // `known` stays false when an input is computed at run time, too large to decode, or of an
    // element type the folder does not compute with.
    Status gatherInputs(NodeContext* context, bool* known)
    {
        *known = false;
        for (const auto& input : context->node.input()) {
            if (input.empty()) {
                context->inputs.push_back(nullptr);
                continue;
            }
            if (const auto it = values_.find(input); it != values_.end()) {
                context->inputs.push_back(&it->second);
                continue;
            }
            const onnx::TensorProto* tensor = initializer(input);
            if (!tensor)
                return Status();
            const std::vector<int64_t> dims(tensor->dims().begin(), tensor->dims().end());
            int64_t count = 0;
            if (!foldableCount(dims, &count) ||
                tensor->data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
                return Status();
            Value value;
            value.type = tensor->data_type();
            value.dims = dims;
            bool read = false;
            if (value.type == kFloat)
                read = onnxutil::readFloat(*tensor, &value.floats);
            else if (value.type == kInt64 || value.type == kInt32 || value.type == kBool)
                read = onnxutil::readInt64(*tensor, &value.ints);
            else
                return Status();
            if (!read)
                return context->invalid(
                    "the data of input '" + input + "' does not match its shape " + dimsText(dims));
            context->inputs.push_back(&values_.emplace(input, std::move(value)).first->second);
        }
        *known = true;
        return Status();
    }

    void addInitializer(onnx::TensorProto tensor)
    {
        // IR 3 lists every initializer among the graph inputs as well.
        if (model_.ir_version() < 4) {
            auto* input = graph_.add_input();
            input->set_name(tensor.name());
            auto* type = input->mutable_type()->mutable_tensor_type();
            type->set_elem_type(tensor.data_type());
            auto* shape = type->mutable_shape();
            for (int64_t d : tensor.dims())
                shape->add_dim()->set_dim_value(d);
        }
        auto* stored = graph_.add_initializer();
        stored->Swap(&tensor);
        added_.emplace(stored->name(), stored);
    }

    // Drops the marked nodes, keeping the order of the rest.
    void removeNodes(const std::vector<bool>& remove)
    {
        auto* nodes = graph_.mutable_node();
        int kept = 0;
        for (int i = 0; i < nodes->size(); ++i)
            if (!remove[static_cast<size_t>(i)]) {
                if (kept != i)
                    nodes->SwapElements(kept, i);
                ++kept;
            }
        nodes->DeleteSubrange(kept, nodes->size() - kept);
    }

    // Shapes downstream of what folded may now be known. Stale value_info would be merged with
    // the new inference and could hide a changed shape, so it goes first.
    Status reinferShapes()
    {
        graph_.clear_value_info();
        try {
            onnx::shape_inference::InferShapes(model_, onnxutil::checkedSchemaRegistry());
        } catch (const std::exception& e) {
            return Status::invalid(
                std::string("shape inference after folding constants failed: ") + e.what());
        }
        return Status();
    }

    // One note per remaining node that now reads a computed constant (Constant nodes that merely
    // became initializers are not worth a line).
    void addNotes(PassReport* report) const
    {
        // As model_passes.cpp's notes: past this many, the count in the report says the rest.
        constexpr size_t kMaxNotes = 40;
        for (int i = 0; i < graph_.node_size(); ++i) {
            const auto& node = graph_.node(i);
            std::string changed;
            for (int k = 0; k < node.input_size(); ++k) {
                const auto it = values_.find(node.input(k));
                if (it == values_.end() || computed_.count(node.input(k)) == 0)
                    continue;
                changed += (changed.empty() ? "" : ", ") +
                    inputRole(node.op_type(), static_cast<size_t>(k)) + " " + describe(it->second);
            }
            if (changed.empty())
                continue;
            if (report->notes.size() >= kMaxNotes) {
                report->notes.emplace_back("...");
                return;
            }
            report->notes.push_back(nodeLabel(node, i) + ": " + changed + " now constant");
        }
    }

    onnx::ModelProto& model_;
    onnx::GraphProto& graph_;
    const int64_t opset_;
    // The initializers and inputs the graph came with. The pass adds initializers but never
    // removes or reorders them, so this index stays valid throughout (its node maps do not).
    const onnxutil::GraphIndex given_;
    // The shapes known at the start of the round (from value_info, rebuilt each round).
    std::optional<onnxutil::ShapeIndex> shapes_;
    // Initializers the pass added, by name; protobuf never moves an element once added.
    std::unordered_map<std::string, const onnx::TensorProto*> added_;
    int folded_ = 0;
    // Decoded constants by value name: initializers read by foldable nodes and computed outputs.
    std::unordered_map<std::string, Value> values_;
    // Outputs of evaluated nodes (not of Constant nodes): the changes a note reports.
    std::unordered_set<std::string> computed_;
};

} // namespace

Status foldConstants(onnx::ModelProto& model, PassReport* report)
{
    if (report)
        report->pass = "fold-constants";
    return ConstantFolder(model).run(report);
}

} // namespace jetagent
