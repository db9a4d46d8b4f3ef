// The quantization family: QuantizeLinear and DequantizeLinear (opset 10, and 13 on with an axis),
// per tensor or per channel, uint8 or int8, run in fp32 by QdqStep with exact rounding. Their
// scales and zero points must be constants of the model.
#include <cmath>

#include "operators.h"

namespace jetagent {
namespace xnnplan {
namespace ops {

namespace {

const char* integerTypeName(int32_t type)
{
    switch (type) {
    case onnx::TensorProto::UINT8: return "uint8";
    case onnx::TensorProto::INT8: return "int8";
    case onnx::TensorProto::INT16: return "int16";
    case onnx::TensorProto::UINT16: return "uint16";
    case onnx::TensorProto::INT32: return "int32";
    case onnx::TensorProto::INT64: return "int64";
    case onnx::TensorProto::FLOAT: return "float32";
    case onnx::TensorProto::FLOAT16: return "float16";
    case onnx::TensorProto::DOUBLE: return "float64";
    case onnx::TensorProto::BOOL: return "bool";
    case 0: return "unknown";
    default: return "another type";
    }
}

// The integer type a QuantizeLinear writes or a DequantizeLinear reads: its zero point's, else
// (QuantizeLinear) output_dtype or uint8, (DequantizeLinear) its input's.
Expected<int32_t> integerType(CompileContext& cx, const onnx::NodeProto& node, bool quantize)
{
    const bool hasZero = node.input_size() > 2 && !node.input(2).empty();
    int32_t type = 0;
    if (hasZero) {
        const onnx::TensorProto* z = cx.constant(node.input(2));
        if (!z)
            return cx.fail(node, "its zero point '" + node.input(2) + "' is not a constant");
        type = z->data_type();
    }
    if (quantize && !hasZero)
        type = static_cast<int32_t>(intAttribute(node, "output_dtype", 0));
    if (quantize && type == 0)
        type = onnx::TensorProto::UINT8;
    if (!quantize) {
        const int32_t input = cx.elementType(node.input(0));
        if (type == 0)
            type = input;
        else if (input != 0 && input != type)
            return cx.fail(node,
                std::string("its input is ") + integerTypeName(input) + " and its zero point " +
                    integerTypeName(type));
    }
    if (type != onnx::TensorProto::UINT8 && type != onnx::TensorProto::INT8)
        return cx.fail(node,
            std::string("quantized type ") + integerTypeName(type) +
                " is not supported by the xnnpack backend (uint8 and int8 are)");
    return type;
}

} // namespace

Status quantizeLinear(CompileContext& cx, const onnx::NodeProto& node)
{
    const bool quantize = node.op_type() == "QuantizeLinear";
    if (node.input_size() < 2 || node.input(1).empty())
        return Status::invalid(cx.label(node) + ": has no scale input");
    if (intAttribute(node, "block_size", 0) != 0)
        return cx.fail(node, "blocked quantization (block_size) is not supported");
    auto type = integerType(cx, node, quantize);
    if (!type)
        return type.status();
    if (!cx.constant(node.input(1)))
        return cx.fail(node, "its scale '" + node.input(1) + "' is not a constant");
    auto operands = cx.unaryOperands(node);
    if (!operands)
        return operands.status();
    const Value& v = operands->input;
    auto scale = cx.constantFloats(node.input(1), node);
    if (!scale)
        return scale.status();
    std::vector<float> zero(scale->size(), 0.0f);
    if (node.input_size() > 2 && !node.input(2).empty()) {
        auto z = cx.constantInts(node.input(2), node);
        if (!z)
            return z.status();
        if (z->size() != scale->size())
            return Status::invalid(cx.label(node) + ": " + std::to_string(z->size()) +
                " zero points for " + std::to_string(scale->size()) + " scales");
        for (size_t i = 0; i < z->size(); ++i)
            zero[i] = static_cast<float>((*z)[i]);
    }
    for (float s : *scale)
        if (!std::isfinite(s) || s <= 0)
            return cx.fail(node, "a scale of " + std::to_string(s) + " (scales must be positive)");
    auto step = std::make_unique<QdqStep>();
    step->quantize = quantize;
    const bool signedType = type.value() == onnx::TensorProto::INT8;
    step->lo = signedType ? -128.0f : 0.0f;
    step->hi = signedType ? 127.0f : 255.0f;
    const size_t rank = v.dims.size();
    const std::vector<int64_t> phys = physicalDims(v.dims, v.layout);
    if (scale->size() == 1) {
        step->inner = static_cast<size_t>(v.count());
    } else {
        // Per axis (opset 13 on): a 1-D scale as long as the axis.
        const int64_t axis = normalizedAxis(intAttribute(node, "axis", 1), rank);
        if (cx.opset() < 13 || axis < 0 || axis >= static_cast<int64_t>(rank) ||
            static_cast<int64_t>(scale->size()) != v.dims[static_cast<size_t>(axis)])
            return cx.fail(node,
                std::to_string(scale->size()) + " scales do not fit axis " +
                    std::to_string(intAttribute(node, "axis", 1)) + " of " + dimsText(v.dims) +
                    (cx.opset() < 13 ? " (before opset 13 the scale is a scalar)" : ""));
        const size_t pos = static_cast<size_t>(
            physicalPosition(static_cast<int>(axis), static_cast<int>(rank), v.layout));
        step->outer = static_cast<size_t>(product(phys, 0, pos));
        step->channels = scale->size();
        step->inner = static_cast<size_t>(product(phys, pos + 1, phys.size()));
    }
    step->scale = std::move(scale.value());
    step->zeroPoint = std::move(zero);
    step->inputs = {operands->source};
    step->output = cx.addValue(node.output(0), operands->output, v.layout);
    cx.addStep(node, std::move(step));
    return Status();
}

// A Cast to the type the value has already (PyTorch's QDQ export casts each QuantizeLinear's
// uint8 output to uint8 before its DequantizeLinear): the value itself. Any other is refused.
Status cast(CompileContext& cx, const onnx::NodeProto& node)
{
    const int32_t from = cx.elementType(node.input(0));
    const int64_t to = intAttribute(node, "to", 0);
    if (from == 0 || from != to)
        return cx.fail(node,
            std::string("a Cast from ") + integerTypeName(from) + " to " +
                integerTypeName(static_cast<int32_t>(to)) +
                " (the xnnpack backend takes a Cast only to the type its input has already)");
    auto input = cx.computedInputCopy(node);
    if (!input)
        return input.status();
    const int id = cx.alias(node.output(0), input->first, input->second.dims);
    cx.plan().values[static_cast<size_t>(id)].layout = input->second.layout;
    return Status();
}

void takeWeightScales(const CompileContext& cx, const std::string& name,
    const std::vector<float>& weights, int64_t axis, WeightedStep* step)
{
    const onnx::TensorProto* t = cx.constant(name);
    const auto note = t ? onnxutil::parseDequantizedNote(t->doc_string()) : std::nullopt;
    if (!note || (note->axis != -1 && note->axis != axis) || t->dims_size() <= axis)
        return;
    const std::vector<int64_t> dims(t->dims().begin(), t->dims().end());
    const auto channels = static_cast<size_t>(dims[static_cast<size_t>(axis)]);
    std::vector<float> scales = note->scales;
    if (note->axis == -1 && scales.size() == 1)
        scales.assign(channels, scales[0]);
    if (scales.size() != channels ||
        static_cast<int64_t>(weights.size()) != product(dims, 0, dims.size()))
        return;
    const auto inner =
        static_cast<size_t>(product(dims, static_cast<size_t>(axis) + 1, dims.size()));
    // The note must still describe these weights (integers of int8 times the scales), in case a
    // later pass changed them.
    for (size_t i = 0; i < weights.size(); ++i) {
        const float q = weights[i] / scales[(i / inner) % channels];
        if (!(std::fabs(q - std::nearbyint(q)) <= 1e-3f && q >= -128.5f && q <= 127.5f))
            return;
    }
    step->weightScales = std::move(scales);
}

} // namespace ops
} // namespace xnnplan
} // namespace jetagent
