// Constant folding of shape arithmetic: Unsqueeze, Squeeze, Reshape, ConstantOfShape and Range.
#include "fold_evaluators.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace jetagent {
namespace fold {

namespace {

Value reshaped(const Value& source, std::vector<int64_t> dims)
{
    Value out = source;
    out.dims = std::move(dims);
    return out;
}

// What Squeeze and Unsqueeze read: the data, and the axes from an input from opset 13, from an
// attribute before.
struct SqueezeOperands {
    const Value* data = nullptr;
    std::vector<int64_t> axes;
    bool axesGiven = false;
};

Status squeezeOperands(const NodeContext& c, SqueezeOperands* in)
{
    in->data = c.input(0);
    if (!in->data)
        return c.invalid("has no data input");
    if (c.opset >= 13) {
        in->axesGiven = c.input(1) != nullptr;
        if (in->axesGiven && !intList(c.input(1), &in->axes))
            return c.invalid("axes must be a 1-D integer tensor");
        return Status();
    }
    in->axesGiven = onnxutil::findAttribute(c.node, "axes") != nullptr;
    in->axes = onnxutil::intsAttribute(c.node, "axes");
    return Status();
}

} // namespace

Status evaluateUnsqueeze(const NodeContext& c, std::optional<Value>* out)
{
    SqueezeOperands in;
    if (Status s = squeezeOperands(c, &in); !s)
        return s;
    if (!in.axesGiven)
        return c.invalid("has no axes");
    const Value& data = *in.data;
    const auto rank = static_cast<int64_t>(data.dims.size() + in.axes.size());
    std::vector<bool> inserted(static_cast<size_t>(rank), false);
    for (int64_t axis : in.axes) {
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
        dims.push_back(one ? 1 : data.dims[next++]);
    *out = reshaped(data, std::move(dims));
    return Status();
}

Status evaluateSqueeze(const NodeContext& c, std::optional<Value>* out)
{
    SqueezeOperands in;
    if (Status s = squeezeOperands(c, &in); !s)
        return s;
    const Value& data = *in.data;
    const auto rank = static_cast<int64_t>(data.dims.size());
    std::vector<bool> removed(data.dims.size(), false);
    if (!in.axesGiven)
        for (size_t i = 0; i < data.dims.size(); ++i)
            removed[i] = data.dims[i] == 1;
    for (int64_t axis : in.axes) {
        if (Status s = normalizeAxisOf(c, &axis, rank); !s)
            return s;
        if (data.dims[static_cast<size_t>(axis)] != 1)
            return c.invalid("cannot squeeze axis " + std::to_string(axis) + " of size " +
                std::to_string(data.dims[static_cast<size_t>(axis)]));
        removed[static_cast<size_t>(axis)] = true;
    }
    std::vector<int64_t> dims;
    for (size_t i = 0; i < data.dims.size(); ++i)
        if (!removed[i])
            dims.push_back(data.dims[i]);
    *out = reshaped(data, std::move(dims));
    return Status();
}

Status evaluateReshape(const NodeContext& c, std::optional<Value>* out)
{
    const Value* data = nullptr;
    std::vector<int64_t> shape;
    if (Status s = dataAndShape(c, "needs data and shape", &data, &shape); !s)
        return s;
    const bool allowZero = onnxutil::intAttribute(c.node, "allowzero", 0) != 0;
    const int64_t total = data->count();
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
    const auto [start, limit, delta] = c.inputsUpTo<3>();
    if (!start || !limit || !delta)
        return c.invalid("needs start, limit and delta");
    for (const Value* v : {start, limit, delta})
        if (v->count() != 1 || v->dims.size() > 1)
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

} // namespace fold
} // namespace jetagent
