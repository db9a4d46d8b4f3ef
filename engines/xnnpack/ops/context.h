// The graph compiler's core, as the operator families see it (internal to engines/xnnpack/):
// one CompileContext per compilation owns the model's graph and shapes, the values made so far
// with their layouts, the nodes already fused into earlier steps, and the plan the steps go into.
// Each family (conv_pool.cpp, linear.cpp, elementwise.cpp, layout.cpp, normalize.cpp) turns its
// nodes into steps through this interface alone; graph_compiler.cpp walks the nodes and holds the
// operator table. Nothing here knows an operator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "../../onnx/onnx_util.h"
#include "../graph_compiler.h"
#include "../steps.h"

namespace jetagent {
namespace xnnplan {
namespace ops {

using onnxutil::findAttribute;
using onnxutil::floatAttribute;
using onnxutil::intAttribute;
using onnxutil::intsAttribute;
using onnxutil::stringAttribute;

// Far beyond any real model, small enough that no product of them overflows.
constexpr int64_t kMaxDim = int64_t(1) << 31;
// XNNPACK's element-wise operators take at most 6 dimensions (XNN_MAX_TENSOR_DIMS).
constexpr size_t kMaxRank = 6;

// "[1x3x224x224]".
std::string dimsText(const std::vector<int64_t>& dims);
// Where a logical axis sits in a value's physical order.
int physicalPosition(int axis, int rank, Layout layout);
// True when the two layouts of `dims` put the elements in the same memory order (the axes that
// move are all of length 1), so converting between them is free.
bool sameMemoryOrder(const std::vector<int64_t>& dims, Layout a, Layout b);
// A constant's values permuted from row-major `dims` into the physical order of `layout`.
std::vector<float> toLayout(
    const std::vector<float>& data, const std::vector<int64_t>& dims, Layout layout);
// A negative ONNX axis counted from the end.
int64_t normalizedAxis(int64_t axis, size_t rank);
// The rank-aligned dims of an operand broadcast against `rank` dimensions.
std::vector<int64_t> aligned(const std::vector<int64_t>& dims, size_t rank);

class CompileContext {
public:
    CompileContext(const onnx::ModelProto& model, const CompileOptions& options);
    CompileContext(const CompileContext&) = delete;
    CompileContext& operator=(const CompileContext&) = delete;

    // The walk over the nodes (graph_compiler.cpp): each through its family's function.
    Expected<std::shared_ptr<Plan>> compile();

    // The model.
    const onnx::GraphProto& graph() const { return graph_; }
    const onnxutil::GraphIndex& index() const { return index_; }
    const CompileOptions& options() const { return options_; }
    int64_t opset() const { return opset_; }
    int nodeIndex() const { return nodeIndex_; } // the node being compiled
    // Every value's static shape from shape inference, by name.
    const std::unordered_map<std::string, std::vector<int64_t>>& shapes() const { return shapes_; }
    // The element type (onnx::TensorProto::DataType) of a graph input, initializer or inferred
    // value; 0 when unknown.
    int32_t elementType(const std::string& name) const;
    // Records the shape of an intermediate the compiler makes (a variadic operator's pairs).
    void setShape(const std::string& name, std::vector<int64_t> dims)
    {
        shapes_[name] = std::move(dims);
    }
    // The shape of `name`, checked (known, rank and dimensions the backend takes).
    Expected<std::vector<int64_t>> shapeOf(const std::string& name, const onnx::NodeProto& node);
    const onnx::TensorProto* constant(const std::string& name) const
    {
        return index_.initializer(name);
    }
    // A constant's float values (counted in the plan's weights), or its integers.
    Expected<std::vector<float>> constantFloats(const std::string& name, const onnx::NodeProto& n);
    Expected<std::vector<int64_t>> constantInts(const std::string& name, const onnx::NodeProto& n);
    // A constant scalar float `name` (an exporter's eps, 2 or 0.5), or nullopt.
    std::optional<float> scalarConstant(const std::string& name) const;
    // The index of the one node reading `value` when it is of operator `op` and the value is no
    // graph output; -1 otherwise.
    int onlyReader(const std::string& value, const char* op) const;
    // The other operand of binary node `node`, given one of them; empty when `known` is not one.
    std::string otherOperand(int node, const std::string& known) const;

    // Errors naming the node.
    Status fail(const onnx::NodeProto& node, const std::string& what) const
    {
        return Status::unsupported(label(node) + ": " + what);
    }
    std::string label(const onnx::NodeProto& node) const
    {
        return onnxutil::nodeLabel(node, nodeIndex_);
    }

    // Values.
    Plan& plan() { return plan_; }
    const Plan& plan() const { return plan_; }
    int addValue(const std::string& name, std::vector<int64_t> dims, Layout layout);
    int valueOf(const std::string& name) const;
    // Input 0 of `node` as an earlier node (or the model's input) computed it; an error otherwise.
    Expected<int> computedInput(const onnx::NodeProto& node) const
    {
        const int id = valueOf(node.input(0));
        if (id < 0)
            return fail(node, "its input is not computed by an earlier node");
        return id;
    }
    // The same with a copy of the input's Value: adding values (a layout conversion, the output)
    // may move the plan's values, which a reference into them would not survive.
    Expected<std::pair<int, Value>> computedInputCopy(const onnx::NodeProto& node) const
    {
        auto id = computedInput(node);
        if (!id)
            return id.status();
        return std::make_pair(id.value(), plan_.values[static_cast<size_t>(id.value())]);
    }
    // What an operator from one computed tensor to another starts from: input 0 as
    // computedInputCopy gives it and the checked shape of output 0 (shapeOf).
    struct UnaryOperands {
        int source = -1;
        Value input;
        std::vector<int64_t> output;
    };
    Expected<UnaryOperands> unaryOperands(const onnx::NodeProto& node)
    {
        auto input = computedInputCopy(node);
        if (!input)
            return input.status();
        auto output = shapeOf(node.output(0), node);
        if (!output)
            return output.status();
        return UnaryOperands {input->first, std::move(input->second), std::move(output.value())};
    }
    // The value `name` (or `id`) in `layout`: itself, a free relabelling, or a permutation made
    // once and shared by every reader.
    Expected<int> need(const std::string& name, Layout layout, const onnx::NodeProto& node);
    int needId(int id, Layout layout);
    // A value reusing `of`'s memory unchanged under new dims (a reshape).
    int alias(const std::string& name, int of, std::vector<int64_t> dims);

    // Steps.
    template <typename S>
    S* addStep(const onnx::NodeProto& node, std::unique_ptr<S> step)
    {
        if (step->node.empty())
            step->node = label(node);
        step->op = node.op_type();
        S* raw = step.get();
        plan_.steps.push_back(std::move(step));
        return raw;
    }
    // Folds a following Relu or Clip into `range` and returns the name the step's output takes.
    std::string fuseActivation(const onnx::NodeProto& node, OutputRange* range, std::string* text);
    // Marks nodes as fused into an earlier step: the walk passes over them.
    void consume(int node) { consumed_.insert(node); }
    template <typename It>
    void consume(It begin, It end)
    {
        consumed_.insert(begin, end);
    }

private:
    Status collectShapes();
    Status checkInputType(const onnx::ValueInfoProto& input) const;
    Status checkOutputType(const onnx::ValueInfoProto& output) const;

    const onnx::GraphProto& graph_;
    onnxutil::GraphIndex index_;
    CompileOptions options_;
    int64_t opset_;
    int nodeIndex_ = 0;
    std::unordered_map<std::string, std::vector<int64_t>> shapes_;
    std::unordered_map<std::string, int32_t> types_;
    std::unordered_map<std::string, int> ids_;
    std::unordered_map<int64_t, int> converted_; // (value id * 2 + layout) -> converted value
    std::unordered_set<int> consumed_; // nodes fused into an earlier step
    Plan plan_;
};

} // namespace ops
} // namespace xnnplan
} // namespace jetagent
