// Pieces of the ONNX models tests build in memory: node attributes and declared float tensors.
// Compiled once, as the library jetagent_onnx_builder.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace jetagent::test {

void setInt(onnx::NodeProto& node, const std::string& name, int64_t value);
void setInts(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values);
void setFloat(onnx::NodeProto& node, const std::string& name, float value);
void setString(onnx::NodeProto& node, const std::string& name, const std::string& value);

// Declares `value` a float32 tensor `name` of `dims`; a non-empty `batchName` names the first
// dimension symbolically instead ("batch": any batch size).
void declareFloatTensor(onnx::ValueInfoProto* value, const std::string& name,
    const std::vector<int64_t>& dims, const std::string& batchName = "");

} // namespace jetagent::test
