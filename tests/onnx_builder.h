// Pieces of the ONNX models tests build in memory: node attributes, declared float tensors and
// whole small graphs (GraphBuilder). Compiled once, as the library jetagent_onnx_builder.
#pragma once

#include <cstdint>
#include <random>
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

// Builds small ONNX models node by node.
class GraphBuilder {
public:
    explicit GraphBuilder(int opset = 13)
    {
        model_.set_ir_version(8);
        model_.set_producer_name("jetagent-test");
        model_.add_opset_import()->set_version(opset);
        model_.mutable_graph()->set_name("test");
    }

    GraphBuilder& input(const std::string& name, const std::vector<int64_t>& dims,
        const std::string& batchName = "")
    {
        declareFloatTensor(model_.mutable_graph()->add_input(), name, dims, batchName);
        return *this;
    }
    GraphBuilder& output(const std::string& name, const std::vector<int64_t>& dims,
        const std::string& batchName = "")
    {
        declareFloatTensor(model_.mutable_graph()->add_output(), name, dims, batchName);
        return *this;
    }
    onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
        const std::vector<std::string>& outputs, const std::string& name = "")
    {
        auto* n = model_.mutable_graph()->add_node();
        n->set_op_type(op);
        n->set_name(name.empty() ? op + "_" + std::to_string(model_.graph().node_size()) : name);
        for (const auto& i : inputs)
            n->add_input(i);
        for (const auto& o : outputs)
            n->add_output(o);
        return *n;
    }
    GraphBuilder& floats(
        const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v)
    {
        auto* t = model_.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto_DataType_FLOAT);
        for (int64_t d : dims)
            t->add_dims(d);
        t->set_raw_data(v.data(), v.size() * sizeof(float));
        return *this;
    }
    GraphBuilder& randomFloats(const std::string& name, const std::vector<int64_t>& dims, float lo,
        float hi, uint32_t seed)
    {
        int64_t n = 1;
        for (int64_t d : dims)
            n *= d;
        std::mt19937 rng(seed);
        std::uniform_real_distribution<float> dist(lo, hi);
        std::vector<float> v(static_cast<size_t>(n));
        for (auto& x : v)
            x = dist(rng);
        return floats(name, dims, v);
    }
    GraphBuilder& ints(
        const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& v)
    {
        auto* t = model_.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto_DataType_INT64);
        for (int64_t d : dims)
            t->add_dims(d);
        t->set_raw_data(v.data(), v.size() * sizeof(int64_t));
        return *this;
    }

    onnx::ModelProto& model() { return model_; }
    const onnx::ModelProto& model() const { return model_; }
    std::vector<char> bytes() const
    {
        const std::string s = model_.SerializeAsString();
        return {s.begin(), s.end()};
    }

private:
    onnx::ModelProto model_;
};

} // namespace jetagent::test
