// Constant folding of data movement: Identity, Gather, Concat, Slice, Transpose, Expand and
// ScatterND.
#include "fold_evaluators.h"

#include <algorithm>
#include <utility>

namespace jetagent {
namespace fold {

namespace {

int64_t product(const std::vector<int64_t>& dims, size_t begin, size_t end)
{
    int64_t n = 1;
    for (size_t i = begin; i < end; ++i)
        n *= dims[i];
    return n;
}

std::vector<int64_t> rowMajorStrides(const std::vector<int64_t>& dims)
{
    std::vector<int64_t> strides(dims.size(), 1);
    for (size_t i = dims.size(); i-- > 1;)
        strides[i - 1] = strides[i] * dims[i];
    return strides;
}

} // namespace

Status evaluateIdentity(const NodeContext& c, std::optional<Value>* out)
{
    if (!c.input(0))
        return c.invalid("has no input");
    *out = *c.input(0);
    return Status();
}

Status evaluateGather(const NodeContext& c, std::optional<Value>* out)
{
    const auto [data, indices] = c.inputsUpTo<2>();
    if (!data || !indices)
        return c.invalid("needs data and indices");
    if (!indices->isInteger())
        return c.invalid("indices must be int32 or int64");
    int64_t axis = 0;
    if (Status s = axisAttribute(c, data->dims, "cannot gather from a scalar", &axis); !s)
        return s;
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
    int64_t axis = 0;
    if (Status s = axisAttribute(c, first.dims, "cannot concatenate scalars", &axis); !s)
        return s;
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
        if (Status s = normalizeAxisOf(c, &axis, rank); !s)
            return s;
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
    *out = take(*in, dims, sourceIndices(dims, strides, 0, in->count()));
    return Status();
}

Status evaluateExpand(const NodeContext& c, std::optional<Value>* out)
{
    const Value* in = nullptr;
    std::vector<int64_t> shape;
    if (Status s = dataAndShape(c, "needs input and shape", &in, &shape); !s)
        return s;
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

Status evaluateScatterND(const NodeContext& c, std::optional<Value>* out)
{
    const auto [data, indices, updates] = c.inputsUpTo<3>();
    if (!data || !indices || !updates)
        return c.invalid("needs data, indices and updates");
    if (!indices->isInteger())
        return c.invalid("indices must be int32 or int64");
    if (updates->type != data->type)
        return c.invalid(std::string("updates are ") + typeName(updates->type) + ", data " +
            typeName(data->type));
    const auto* reduction = onnxutil::findAttribute(c.node, "reduction");
    if (reduction && reduction->s() != "none")
        return Status(); // opset 16's add/mul/max/min: left to the runtime
    const size_t rank = data->dims.size();
    if (indices->dims.empty() || indices->dims.back() < 1 ||
        static_cast<size_t>(indices->dims.back()) > rank)
        return c.invalid(
            "indices " + dimsText(indices->dims) + " do not index data " + dimsText(data->dims));
    const auto k = static_cast<size_t>(indices->dims.back());
    // updates = indices' dimensions but the last, then data's dimensions after the first k.
    std::vector<int64_t> expected(indices->dims.begin(), indices->dims.end() - 1);
    expected.insert(expected.end(), data->dims.begin() + static_cast<long>(k), data->dims.end());
    if (updates->dims != expected)
        return c.invalid("updates are " + dimsText(updates->dims) + ", not " + dimsText(expected) +
            " (indices " + dimsText(indices->dims) + ", data " + dimsText(data->dims) + ")");
    const int64_t slice = product(data->dims, k, rank);
    const int64_t tuples = product(indices->dims, 0, indices->dims.size() - 1);
    // Each element of the result: its index into data, or past data's elements into updates (one
    // take() then reads both). Repeated index tuples are applied in order, the last one wins.
    int64_t count = 0;
    if (!foldableCount(data->dims, &count))
        return Status();
    std::vector<int64_t> source(static_cast<size_t>(count));
    for (int64_t n = 0; n < count; ++n)
        source[static_cast<size_t>(n)] = n;
    for (int64_t t = 0; t < tuples; ++t) {
        int64_t offset = 0;
        for (size_t d = 0; d < k; ++d) {
            const int64_t dim = data->dims[d];
            int64_t index = indices->ints[static_cast<size_t>(t) * k + d];
            if (index < -dim || index >= dim)
                return c.invalid("index " + std::to_string(index) + " out of range for axis " +
                    std::to_string(d) + " of size " + std::to_string(dim));
            offset = offset * dim + (index < 0 ? index + dim : index);
        }
        for (int64_t i = 0; i < slice; ++i)
            source[static_cast<size_t>(offset * slice + i)] = count + t * slice + i;
    }
    Value both = *data;
    both.floats.insert(both.floats.end(), updates->floats.begin(), updates->floats.end());
    both.ints.insert(both.ints.end(), updates->ints.begin(), updates->ints.end());
    *out = take(both, data->dims, source);
    return Status();
}

} // namespace fold
} // namespace jetagent
