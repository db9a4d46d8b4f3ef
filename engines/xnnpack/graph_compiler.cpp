// The graph compiler's walk: one pass over the prepared model's nodes in order, each turned into
// checked steps by its operator family's function (ops/), found in the operator table below; then
// the in-place reading of channel pieces and the memory plan.
#include "graph_compiler.h"

#include <algorithm>
#include <unordered_map>

#include "ops/operators.h"

namespace jetagent {
namespace xnnplan {

namespace {

using Handler = ops::OperatorFn*;

// Every operator the compiler claims, and the function of its family that compiles it.
const std::unordered_map<std::string, Handler>& operatorTable()
{
    static const std::unordered_map<std::string, Handler> table = {
        {"Conv", &ops::conv},
        {"Gemm", &ops::gemm},
        {"MatMul", &ops::gemm},
        {"Einsum", &ops::einsum},
        {"LayerNormalization", &ops::layerNormalization},
        {"MaxPool", &ops::pool},
        {"AveragePool", &ops::pool},
        {"GlobalAveragePool", &ops::globalPool},
        {"GlobalMaxPool", &ops::globalPool},
        {"Add", &ops::binary},
        {"Sub", &ops::binary},
        {"Mul", &ops::binary},
        {"Div", &ops::binary},
        {"Min", &ops::binary},
        {"Max", &ops::binary},
        {"Relu", &ops::unary},
        {"Clip", &ops::unary},
        {"Sigmoid", &ops::unary},
        {"HardSwish", &ops::unary},
        {"HardSigmoid", &ops::unary},
        {"LeakyRelu", &ops::unary},
        {"Elu", &ops::unary},
        {"Tanh", &ops::unary},
        {"Neg", &ops::unary},
        {"Abs", &ops::unary},
        {"Floor", &ops::unary},
        {"Ceil", &ops::unary},
        {"Sqrt", &ops::unary},
        {"Exp", &ops::unary},
        {"Log", &ops::unary},
        {"Erf", &ops::unary},
        {"Pow", &ops::unary},
        {"Identity", &ops::reshape},
        {"Dropout", &ops::reshape},
        {"BatchNormalization", &ops::batchNorm},
        {"Reshape", &ops::reshape},
        {"Flatten", &ops::reshape},
        {"Squeeze", &ops::reshape},
        {"Unsqueeze", &ops::reshape},
        {"Transpose", &ops::transpose},
        {"Concat", &ops::concat},
        {"Split", &ops::split},
        {"Slice", &ops::slice},
        {"Gather", &ops::gather},
        {"Softmax", &ops::softmax},
        {"ReduceMean", &ops::reduce},
        {"ReduceMax", &ops::reduce},
        {"Pad", &ops::pad},
        {"QuantizeLinear", &ops::quantizeLinear},
        {"DequantizeLinear", &ops::quantizeLinear},
        {"Cast", &ops::cast},
    };
    return table;
}

} // namespace

namespace ops {

namespace {

bool isByte(int32_t type)
{
    return type == onnx::TensorProto::UINT8 || type == onnx::TensorProto::INT8;
}

} // namespace

// Inputs are float32, or uint8/int8 read by DequantizeLinear alone (held as floats of their
// integers, as the Session passes every tensor).
Status CompileContext::checkInputType(const onnx::ValueInfoProto& input) const
{
    const int32_t type = input.type().tensor_type().elem_type();
    if (type == onnx::TensorProto::FLOAT)
        return Status();
    if (!isByte(type)) {
        const auto& readers = index_.consumers(input.name());
        return Status::unsupported("model input '" + input.name() + "' is not float32" +
            (readers.empty() ? std::string()
                             : " (" + onnxutil::nodeLabel(graph_.node(readers[0]), readers[0]) +
                        " reads it)") +
            ": the xnnpack backend runs float32 models, with uint8 or int8 inputs where "
            "DequantizeLinear reads them");
    }
    for (int reader : index_.consumers(input.name())) {
        const onnx::NodeProto& node = graph_.node(reader);
        if (node.op_type() != "DequantizeLinear" || node.input(0) != input.name())
            return Status::unsupported(onnxutil::nodeLabel(node, reader) + " reads model input '" +
                input.name() +
                "', which is an 8-bit integer tensor: the xnnpack backend takes those only "
                "where DequantizeLinear reads them");
    }
    return Status();
}

// An 8-bit integer output must be what a QuantizeLinear writes (its integers as floats).
Status CompileContext::checkOutputType(const onnx::ValueInfoProto& output) const
{
    const int32_t type = output.type().tensor_type().elem_type();
    if (!isByte(type))
        return Status();
    const int producer = index_.producer(output.name());
    if (producer >= 0 && graph_.node(producer).op_type() == "QuantizeLinear")
        return Status();
    return Status::unsupported("model output '" + output.name() + "' is an 8-bit integer tensor" +
        (producer >= 0 ? " computed by " + onnxutil::nodeLabel(graph_.node(producer), producer)
                       : std::string()) +
        ": the xnnpack backend gives those only from QuantizeLinear");
}

Expected<std::shared_ptr<Plan>> CompileContext::compile()
{
    Status s = collectShapes();
    if (!s.ok())
        return s;
    for (const auto& input : graph_.input()) {
        if (index_.initializer(input.name()))
            continue;
        if (Status typed = checkInputType(input); !typed.ok())
            return typed;
        auto dims = shapes_.find(input.name());
        if (dims == shapes_.end() || dims->second.empty())
            return Status::unsupported("model input '" + input.name() + "' has no static shape");
        plan_.inputs.push_back(addValue(input.name(), dims->second, Layout::Plain));
    }
    const auto& table = operatorTable();
    for (nodeIndex_ = 0; nodeIndex_ < graph_.node_size(); ++nodeIndex_) {
        const onnx::NodeProto& node = graph_.node(nodeIndex_);
        if (consumed_.count(nodeIndex_))
            continue;
        if (!node.domain().empty() && node.domain() != "ai.onnx")
            return Status::unsupported(label(node) + ": operator domain '" + node.domain() +
                "' is not supported by the xnnpack backend");
        auto handler = table.find(node.op_type());
        if (handler == table.end())
            return Status::unsupported(label(node) + ": operator " + node.op_type() +
                " is not supported by the xnnpack backend");
        if (node.input_size() < 1 || node.output_size() < 1 || node.input(0).empty())
            return Status::invalid(label(node) + ": has no input or no output");
        s = handler->second(*this, node);
        if (!s.ok())
            return s;
    }
    for (const auto& output : graph_.output()) {
        if (Status typed = checkOutputType(output); !typed.ok())
            return typed;
        const int id = valueOf(output.name());
        if (id < 0)
            return Status::unsupported("model output '" + output.name() +
                "' is not computed by any node (a constant output is not supported)");
        plan_.outputs.push_back(needId(id, Layout::Plain));
    }
    if (options_.zeroCopy)
        readInPlace(*this);
    planMemory(&plan_);
    return std::make_shared<Plan>(std::move(plan_));
}

} // namespace ops

std::vector<std::string> claimedOperators()
{
    std::vector<std::string> names;
    for (const auto& entry : operatorTable())
        names.push_back(entry.first);
    std::sort(names.begin(), names.end());
    return names;
}

Expected<std::shared_ptr<Plan>> compileModel(
    const onnx::ModelProto& model, const CompileOptions& options)
{
    ops::CompileContext context(model, options);
    return context.compile();
}

} // namespace xnnplan
} // namespace jetagent
