// Pieces of the ONNX models tests build in memory.
#include "onnx_builder.h"

namespace jetagent::test {

void setInt(onnx::NodeProto& node, const std::string& name, int64_t value)
{
    auto* attr = node.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::INT);
    attr->set_i(value);
}

void setInts(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values)
{
    auto* attr = node.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values)
        attr->add_ints(v);
}

void setFloat(onnx::NodeProto& node, const std::string& name, float value)
{
    auto* attr = node.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::FLOAT);
    attr->set_f(value);
}

void setString(onnx::NodeProto& node, const std::string& name, const std::string& value)
{
    auto* attr = node.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::STRING);
    attr->set_s(value);
}

void declareFloatTensor(onnx::ValueInfoProto* value, const std::string& name,
    const std::vector<int64_t>& dims, const std::string& batchName)
{
    value->set_name(name);
    auto* tensor = value->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
    for (size_t i = 0; i < dims.size(); ++i) {
        auto* dim = tensor->mutable_shape()->add_dim();
        if (i == 0 && !batchName.empty())
            dim->set_dim_param(batchName);
        else
            dim->set_dim_value(dims[i]);
    }
}

} // namespace jetagent::test
