// The constant folder's shape and index arithmetic, shared by its operator families.
#include "fold_evaluators.h"

#include <algorithm>
#include <utility>

namespace jetagent {
namespace fold {

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
    case kInt8: return "int8";
    case kUint8: return "uint8";
    default: return "other";
    }
}

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

bool intList(const Value* v, std::vector<int64_t>* out)
{
    if (!v || !v->isInteger() || v->dims.size() > 1)
        return false;
    *out = v->ints;
    return true;
}

Status dataAndShape(const NodeContext& c, const std::string& missing, const Value** data,
    std::vector<int64_t>* shape)
{
    *data = c.input(0);
    if (!*data || !c.input(1))
        return c.invalid(missing);
    if (!intList(c.input(1), shape))
        return c.invalid("shape must be a 1-D integer tensor");
    return Status();
}

bool normalizeAxis(int64_t* axis, int64_t rank)
{
    if (*axis < -rank || *axis >= rank)
        return false;
    if (*axis < 0)
        *axis += rank;
    return true;
}

Status normalizeAxisOf(const NodeContext& c, int64_t* axis, int64_t rank)
{
    if (!normalizeAxis(axis, rank))
        return c.invalid(
            "axis " + std::to_string(*axis) + " out of range for rank " + std::to_string(rank));
    return Status();
}

Status axisAttribute(const NodeContext& c, const std::vector<int64_t>& dims,
    const std::string& ofScalar, int64_t* axis)
{
    if (dims.empty())
        return c.invalid(ofScalar);
    *axis = onnxutil::intAttribute(c.node, "axis", 0);
    return normalizeAxisOf(c, axis, static_cast<int64_t>(dims.size()));
}

} // namespace fold
} // namespace jetagent
