// Tensor descriptions and non-owning views passed across the engine interface.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace jetagent {

enum class DataType { Float32, Float16, Int8, UInt8, Int32, Int64, Bool, Other };

const char* dataTypeName(DataType type);

// A concrete shape of at most kMaxRank dimensions, held inline so that views never allocate.
struct TensorShape {
    static constexpr int kMaxRank = 8;
    std::array<int64_t, kMaxRank> dims {};
    int rank = 0;

    TensorShape() = default;
    TensorShape(std::initializer_list<int64_t> list);

    int64_t operator[](int i) const { return dims[static_cast<size_t>(i)]; }
    int64_t elementCount() const;
    std::string toString() const; // "1x3x224x224"
    bool operator==(const TensorShape& other) const;
    bool operator!=(const TensorShape& other) const { return !(*this == other); }
};

// A model input or output as the model file declares it. Dimensions the model leaves open are -1,
// with the model's symbolic name (such as "batch") in dimNames when it gives one.
struct TensorInfo {
    std::string name;
    DataType type = DataType::Other;
    std::vector<int64_t> dims;
    std::vector<std::string> dimNames;

    std::string shapeString() const; // "batch x 3 x 224 x 224", "? x 1000"
};

// Contiguous float32 data in row-major order. The owner of the memory decides its lifetime.
// A model input or output whose TensorInfo says uint8 or int8 (a quantized model's, which the
// xnnpack backend takes where DequantizeLinear reads it or QuantizeLinear writes it) is carried
// as floats holding its integers exactly (200 as 200.0f).
struct TensorView {
    float* data = nullptr;
    TensorShape shape;
};

struct ConstTensorView {
    const float* data = nullptr;
    TensorShape shape;
};

} // namespace jetagent
