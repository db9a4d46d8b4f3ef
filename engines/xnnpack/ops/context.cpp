// The graph compiler's core: tensor bookkeeping for the operator families (shapes, constants,
// values and their layouts, activations fused into the step before them).
#include "context.h"

#include <algorithm>
#include <cmath>

namespace jetagent {
namespace xnnplan {
namespace ops {

CompileContext::CompileContext(const onnx::ModelProto& model, const CompileOptions& options)
    : graph_(model.graph()),
      index_(model.graph()),
      options_(options),
      opset_(onnxutil::defaultOpset(model))
{
}

std::string dimsText(const std::vector<int64_t>& dims)
{
    std::string text = "[";
    for (size_t i = 0; i < dims.size(); ++i)
        text += (i ? "x" : "") + std::to_string(dims[i]);
    return text + "]";
}

int physicalPosition(int axis, int rank, Layout layout)
{
    const auto order = physicalOrder(rank, layout);
    return static_cast<int>(std::find(order.begin(), order.end(), axis) - order.begin());
}

bool sameMemoryOrder(const std::vector<int64_t>& dims, Layout a, Layout b)
{
    if (a == b)
        return true;
    std::vector<int> pa, pb;
    for (int axis : physicalOrder(static_cast<int>(dims.size()), a))
        if (dims[static_cast<size_t>(axis)] != 1)
            pa.push_back(axis);
    for (int axis : physicalOrder(static_cast<int>(dims.size()), b))
        if (dims[static_cast<size_t>(axis)] != 1)
            pb.push_back(axis);
    return pa == pb;
}

std::vector<float> toLayout(
    const std::vector<float>& data, const std::vector<int64_t>& dims, Layout layout)
{
    if (sameMemoryOrder(dims, Layout::Plain, layout))
        return data;
    const auto order = physicalOrder(static_cast<int>(dims.size()), layout);
    const auto phys = physicalDims(dims, layout);
    std::vector<int64_t> strides(dims.size(), 1);
    for (size_t d = dims.size(); d-- > 1;)
        strides[d - 1] = strides[d] * dims[d];
    std::vector<float> out(data.size());
    std::vector<int64_t> index(phys.size(), 0);
    for (size_t o = 0; o < out.size(); ++o) {
        int64_t src = 0;
        for (size_t i = 0; i < phys.size(); ++i)
            src += index[i] * strides[static_cast<size_t>(order[i])];
        out[o] = data[static_cast<size_t>(src)];
        for (size_t i = phys.size(); i-- > 0;) {
            if (++index[i] < phys[i])
                break;
            index[i] = 0;
        }
    }
    return out;
}

int64_t normalizedAxis(int64_t axis, size_t rank)
{
    return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

std::vector<int64_t> aligned(const std::vector<int64_t>& dims, size_t rank)
{
    std::vector<int64_t> out(rank - dims.size(), 1);
    out.insert(out.end(), dims.begin(), dims.end());
    return out;
}

Status CompileContext::collectShapes()
{
    auto take = [&](const onnx::ValueInfoProto& v) {
        const auto& t = v.type().tensor_type();
        if (t.elem_type() != 0)
            types_[v.name()] = t.elem_type();
        if (!t.has_shape())
            return;
        std::vector<int64_t> dims;
        for (const auto& d : t.shape().dim()) {
            if (!d.has_dim_value())
                return;
            dims.push_back(d.dim_value());
        }
        shapes_[v.name()] = dims;
    };
    for (const auto* list : {&graph_.input(), &graph_.value_info(), &graph_.output()})
        for (const auto& v : *list)
            take(v);
    return Status();
}

int32_t CompileContext::elementType(const std::string& name) const
{
    if (const onnx::TensorProto* t = index_.initializer(name))
        return t->data_type();
    const auto it = types_.find(name);
    return it == types_.end() ? 0 : it->second;
}

Expected<std::vector<int64_t>> CompileContext::shapeOf(
    const std::string& name, const onnx::NodeProto& node)
{
    auto it = shapes_.find(name);
    if (it == shapes_.end())
        return fail(node,
            "the shape of '" + name +
                "' is unknown after shape inference (the xnnpack backend needs static shapes)");
    if (it->second.size() > kMaxRank)
        return fail(node,
            "'" + name + "' has rank " + std::to_string(it->second.size()) +
                ", more than the 6 dimensions the xnnpack backend handles");
    for (int64_t d : it->second)
        if (d < 1 || d > kMaxDim)
            return fail(node,
                "'" + name + "' has dimension " + std::to_string(d) + " in " +
                    dimsText(it->second) + " (each must be 1 to 2^31)");
    return it->second;
}

int CompileContext::addValue(const std::string& name, std::vector<int64_t> dims, Layout layout)
{
    Value v;
    v.name = name;
    v.dims = std::move(dims);
    v.layout = v.dims.size() >= 3 ? layout : Layout::Plain;
    plan_.values.push_back(std::move(v));
    const int id = static_cast<int>(plan_.values.size()) - 1;
    ids_[name] = id;
    return id;
}

int CompileContext::valueOf(const std::string& name) const
{
    auto it = ids_.find(name);
    return it == ids_.end() ? -1 : it->second;
}

int CompileContext::alias(const std::string& name, int of, std::vector<int64_t> dims)
{
    const int id = addValue(name, std::move(dims), Layout::Plain);
    plan_.values[static_cast<size_t>(id)].root = of;
    return id;
}

// The value in the wanted layout: itself, a free re-labelling when the memory order is the same,
// or a permutation computed once and shared by every reader.
int CompileContext::needId(int id, Layout layout)
{
    const Value& v = plan_.values[static_cast<size_t>(id)];
    const Layout want = v.dims.size() >= 3 ? layout : Layout::Plain;
    if (v.layout == want)
        return id;
    const int64_t key = int64_t(id) * 2 + (want == Layout::ChannelsLast ? 1 : 0);
    auto it = converted_.find(key);
    if (it != converted_.end())
        return it->second;
    const std::vector<int64_t> dims = v.dims;
    const Layout from = v.layout;
    const std::string name = v.name + (want == Layout::ChannelsLast ? "@nhwc" : "@nchw");
    int out;
    if (sameMemoryOrder(dims, from, want)) {
        out = addValue(name, dims, want);
        plan_.values[static_cast<size_t>(out)].root = id;
    } else {
        out = addValue(name, dims, want);
        auto step = std::make_unique<PermuteStep>();
        step->node = "layout of '" + plan_.values[static_cast<size_t>(id)].name + "' to " +
            (want == Layout::ChannelsLast ? "channels-last" : "row-major");
        step->op = "Transpose";
        step->inputs = {id};
        step->output = out;
        step->inputDims = physicalDims(dims, from);
        // Output physical axis i is logical axis outOrder[i], found in the input at its position.
        const int rank = static_cast<int>(dims.size());
        for (int axis : physicalOrder(rank, want))
            step->perm.push_back(physicalPosition(axis, rank, from));
        plan_.steps.push_back(std::move(step));
    }
    converted_[key] = out;
    return out;
}

Expected<int> CompileContext::need(
    const std::string& name, Layout layout, const onnx::NodeProto& node)
{
    const int id = valueOf(name);
    if (id < 0)
        return fail(node,
            "input '" + name + "' is neither computed by an earlier node nor a " +
                "model input (constant inputs are allowed only where the operator takes weights)");
    return needId(id, layout);
}

Expected<std::vector<float>> CompileContext::constantFloats(
    const std::string& name, const onnx::NodeProto& node)
{
    const onnx::TensorProto* t = constant(name);
    std::vector<float> values;
    if (!t)
        return fail(node, "'" + name + "' must be a constant of the model");
    if (t->data_type() != onnx::TensorProto::FLOAT || !onnxutil::readFloat(*t, &values))
        return Status::invalid(label(node) + ": constant '" + name +
            "' is not float32 data whose size matches its dims " +
            dimsText({t->dims().begin(), t->dims().end()}));
    plan_.weightFloats += static_cast<int64_t>(values.size());
    return values;
}

Expected<std::vector<int64_t>> CompileContext::constantInts(
    const std::string& name, const onnx::NodeProto& node)
{
    const onnx::TensorProto* t = constant(name);
    std::vector<int64_t> values;
    if (!t || !onnxutil::readInt64(*t, &values))
        return fail(node, "'" + name + "' must be a constant integer tensor");
    return values;
}

std::string CompileContext::fuseActivation(
    const onnx::NodeProto& node, OutputRange* range, std::string* text)
{
    const std::string& out = node.output(0);
    const auto& readers = index_.consumers(out);
    if (!options_.fuseActivations || readers.size() != 1 || index_.isGraphOutput(out))
        return out;
    const onnx::NodeProto& next = graph_.node(readers[0]);
    float lo = -INFINITY;
    float hi = INFINITY;
    if (next.op_type() == "Relu") {
        lo = 0;
    } else if (next.op_type() == "Clip") {
        if (opset_ < 11) {
            lo = floatAttribute(next, "min", lo);
            hi = floatAttribute(next, "max", hi);
        } else {
            std::vector<float> v;
            for (int i = 1; i < next.input_size() && i < 3; ++i) {
                if (next.input(i).empty())
                    continue;
                const onnx::TensorProto* t = constant(next.input(i));
                if (!t || !onnxutil::readFloat(*t, &v) || v.size() != 1)
                    return out;
                (i == 1 ? lo : hi) = v[0];
            }
        }
        if (!(lo <= hi))
            return out;
    } else {
        return out;
    }
    range->min = std::max(range->min, lo);
    range->max = std::min(range->max, hi);
    consumed_.insert(readers[0]);
    *text = " + " + onnxutil::nodeLabel(next, readers[0]);
    return next.output(0);
}

std::string CompileContext::otherOperand(int node, const std::string& known) const
{
    const auto& op = graph_.node(node);
    if (op.input_size() != 2)
        return "";
    return op.input(0) == known ? op.input(1) : op.input(1) == known ? op.input(0) : "";
}

int CompileContext::onlyReader(const std::string& value, const char* op) const
{
    const auto& readers = index_.consumers(value);
    if (readers.size() != 1 || index_.isGraphOutput(value) ||
        graph_.node(readers[0]).op_type() != op)
        return -1;
    return readers[0];
}

std::optional<float> CompileContext::scalarConstant(const std::string& name) const
{
    const onnx::TensorProto* t = constant(name);
    std::vector<float> v;
    if (!t || onnxutil::elementCount(*t) != 1 || !onnxutil::readFloat(*t, &v) || v.size() != 1)
        return std::nullopt;
    return v[0];
}

} // namespace ops
} // namespace xnnplan
} // namespace jetagent
