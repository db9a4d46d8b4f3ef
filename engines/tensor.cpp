// Tensor descriptions and non-owning views passed across the engine interface.
#include "jetagent/engines/tensor.h"

#include <cassert>

namespace jetagent {

const char* dataTypeName(DataType type)
{
    switch (type) {
    case DataType::Float32: return "float32";
    case DataType::Float16: return "float16";
    case DataType::Int8: return "int8";
    case DataType::UInt8: return "uint8";
    case DataType::Int32: return "int32";
    case DataType::Int64: return "int64";
    case DataType::Bool: return "bool";
    case DataType::Other: break;
    }
    return "other";
}

TensorShape::TensorShape(std::initializer_list<int64_t> list)
{
    assert(list.size() <= static_cast<size_t>(kMaxRank));
    for (int64_t d : list)
        dims[static_cast<size_t>(rank++)] = d;
}

int64_t TensorShape::elementCount() const
{
    int64_t n = 1;
    for (int i = 0; i < rank; ++i)
        n *= dims[static_cast<size_t>(i)];
    return n;
}

std::string TensorShape::toString() const
{
    std::string s;
    for (int i = 0; i < rank; ++i) {
        if (i)
            s += 'x';
        s += std::to_string(dims[static_cast<size_t>(i)]);
    }
    return s;
}

bool TensorShape::operator==(const TensorShape& other) const
{
    if (rank != other.rank)
        return false;
    for (int i = 0; i < rank; ++i)
        if (dims[static_cast<size_t>(i)] != other.dims[static_cast<size_t>(i)])
            return false;
    return true;
}

std::string TensorInfo::shapeString() const
{
    std::string s;
    for (size_t i = 0; i < dims.size(); ++i) {
        if (i)
            s += " x ";
        if (dims[i] >= 0)
            s += std::to_string(dims[i]);
        else if (i < dimNames.size() && !dimNames[i].empty())
            s += dimNames[i];
        else
            s += '?';
    }
    return s;
}

} // namespace jetagent
