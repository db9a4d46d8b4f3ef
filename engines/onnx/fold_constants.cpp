// Constant folding: nodes whose inputs are all known become initializers, so that backends that
// cannot compute shapes at run time (OpenCV DNN) see constant Reshape, Slice and Expand arguments.
// This file: the rounds over the graph and the evaluator table; each operator family in fold_*.cpp.
#include "jetagent/engines/model_passes.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "fold_evaluators.h"
#include "onnx_util.h"

namespace jetagent {
namespace fold {

namespace {

using onnxutil::nodeLabel;

// Each round uncovers shapes one computed Reshape or Slice further: ShuffleNetV2 needs two rounds
// per block (its channel split, then its channel shuffle), 30 in all; MaxViT's 14 blocks of window
// and grid attention need 65. The bound caps the time a pathological graph can take (a round costs
// about 2 ms on ShuffleNet's 900 nodes, 60 ms on MaxViT's 4,800).
constexpr int kMaxRounds = 256;

const std::unordered_map<std::string, Evaluator>& evaluators()
{
    static const std::unordered_map<std::string, Evaluator> table = {
        {"Identity", evaluateIdentity},
        {"Gather", evaluateGather},
        {"Unsqueeze", evaluateUnsqueeze},
        {"Squeeze", evaluateSqueeze},
        {"Concat", evaluateConcat},
        {"Cast", evaluateCast},
        {"Add", evaluateArithmetic},
        {"Sub", evaluateArithmetic},
        {"Mul", evaluateArithmetic},
        {"Div", evaluateArithmetic},
        {"Equal", evaluateEqual},
        {"Where", evaluateWhere},
        {"Expand", evaluateExpand},
        {"Slice", evaluateSlice},
        {"Reshape", evaluateReshape},
        {"ConstantOfShape", evaluateConstantOfShape},
        {"Range", evaluateRange},
        {"Floor", evaluateUnary},
        {"Ceil", evaluateUnary},
        {"Sqrt", evaluateUnary},
        {"Neg", evaluateUnary},
        {"Transpose", evaluateTranspose},
        {"Mod", evaluateMod},
        {"Pow", evaluatePow},
        {"Not", evaluateNot},
        {"ScatterND", evaluateScatterND},
        {"QuantizeLinear", evaluateQuantizeLinear},
        {"DequantizeLinear", evaluateDequantizeLinear},
    };
    return table;
}

onnx::TensorProto tensorOf(const std::string& name, const Value& v)
{
    if (v.type == kFloat) {
        onnx::TensorProto t = onnxutil::makeFloatTensor(name, v.dims, v.floats);
        if (!v.note.empty())
            t.set_doc_string(v.note);
        return t;
    }
    if (v.type == kInt64)
        return onnxutil::makeInt64Tensor(name, v.dims, v.ints);
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(v.type);
    for (int64_t d : v.dims)
        t.add_dims(d);
    if (v.type == kInt32) {
        std::vector<int32_t> narrow(v.ints.begin(), v.ints.end());
        t.set_raw_data(narrow.data(), narrow.size() * sizeof(int32_t));
    } else {
        std::vector<uint8_t> bytes(v.ints.begin(), v.ints.end());
        t.set_raw_data(bytes.data(), bytes.size());
    }
    return t;
}

// The tensor a Constant node holds, or nullopt for forms the folder leaves alone (strings,
// sparse tensors).
std::optional<onnx::TensorProto> constantNodeTensor(onnx::NodeProto* node)
{
    for (auto& attr : *node->mutable_attribute()) {
        const std::string& name = attr.name();
        if (name == "value" && attr.type() == onnx::AttributeProto::TENSOR) {
            onnx::TensorProto t;
            t.Swap(attr.mutable_t()); // the node goes away: take its tensor without a copy
            return t;
        }
        if (name == "value_float" && attr.type() == onnx::AttributeProto::FLOAT)
            return onnxutil::makeFloatTensor("", {}, {attr.f()});
        if (name == "value_floats" && attr.type() == onnx::AttributeProto::FLOATS)
            return onnxutil::makeFloatTensor("", {static_cast<int64_t>(attr.floats_size())},
                {attr.floats().begin(), attr.floats().end()});
        if (name == "value_int" && attr.type() == onnx::AttributeProto::INT)
            return onnxutil::makeInt64Tensor("", {}, {attr.i()});
        if (name == "value_ints" && attr.type() == onnx::AttributeProto::INTS)
            return onnxutil::makeInt64Tensor("", {static_cast<int64_t>(attr.ints_size())},
                {attr.ints().begin(), attr.ints().end()});
    }
    return std::nullopt;
}

// What the note on a consumer calls its input `i`: the argument names of the ops whose constant
// arguments matter to backends, "input i" for the rest.
std::string inputRole(const std::string& op, size_t i)
{
    static const std::unordered_map<std::string, std::vector<const char*>> roles = {
        {"Reshape", {"data", "shape"}},
        {"Expand", {"input", "shape"}},
        {"Slice", {"data", "starts", "ends", "axes", "steps"}},
        {"Resize", {"X", "roi", "scales", "sizes"}},
        {"Upsample", {"X", "scales"}},
        {"Pad", {"data", "pads", "constant_value", "axes"}},
        {"Tile", {"input", "repeats"}},
        {"Split", {"input", "split"}},
        {"Squeeze", {"data", "axes"}},
        {"Unsqueeze", {"data", "axes"}},
        {"Clip", {"input", "min", "max"}},
        {"TopK", {"X", "K"}},
        {"ConstantOfShape", {"input"}},
    };
    const auto it = roles.find(op);
    if (it != roles.end() && i < it->second.size())
        return it->second[i];
    return "input " + std::to_string(i);
}

std::string describe(const Value& v)
{
    constexpr size_t kMaxShown = 16;
    if (v.isFloat() || v.ints.size() > kMaxShown)
        return std::string("(") + typeName(v.type) + " " + dimsText(v.dims) + ")";
    if (v.dims.empty() && v.ints.size() == 1)
        return std::to_string(v.ints[0]);
    return dimsText(v.ints);
}

class ConstantFolder {
public:
    explicit ConstantFolder(onnx::ModelProto& model)
        : model_(model),
          graph_(*model.mutable_graph()),
          opset_(onnxutil::defaultOpset(model)),
          given_(graph_)
    {
    }

    Status run(PassReport* report)
    {
        for (int round = 0; round < kMaxRounds; ++round) {
            int folded = 0;
            if (Status s = foldRound(&folded); !s)
                return s;
            folded_ += folded;
            if (folded == 0)
                break;
            if (Status s = reinferShapes(); !s)
                return s;
        }
        if (report) {
            report->folded += folded_;
            addNotes(report);
        }
        return Status();
    }

private:
    // One pass over the graph in order: what folds is known to every later node of the round.
    Status foldRound(int* folded)
    {
        // value_info is the same throughout a round (shape inference runs between rounds).
        shapes_.emplace(graph_);
        std::vector<bool> remove(static_cast<size_t>(graph_.node_size()), false);
        const auto& table = evaluators();
        const auto uses = useCounts();
        for (int i = 0; i < graph_.node_size(); ++i) {
            onnx::NodeProto* node = graph_.mutable_node(i);
            if (!node->domain().empty() && node->domain() != "ai.onnx")
                continue;
            if (node->output_size() != 1 || node->output(0).empty())
                continue;
            const std::string& op = node->op_type();
            if (op == "Transpose") {
                bool done = false;
                if (Status s = foldLargeTranspose(*node, i, uses, &done); !s)
                    return s;
                if (done) {
                    remove[static_cast<size_t>(i)] = true;
                    ++*folded;
                    continue;
                }
            }
            const auto evaluator = table.find(op);
            if (op != "Constant" && op != "Shape" && evaluator == table.end())
                continue;

            std::optional<onnx::TensorProto> tensor;
            std::optional<Value> result;
            if (op == "Constant") {
                if (node->attribute_size() == 0)
                    return Status::invalid(nodeLabel(*node, i) + ": has no value");
            } else if (op == "Shape") {
                if (node->input_size() < 1 || node->input(0).empty())
                    return Status::invalid(nodeLabel(*node, i) + ": has no input");
                result = evaluateShape(*node);
            } else {
                NodeContext context {*node, i, opset_, {}};
                bool known = false;
                if (Status s = gatherInputs(&context, &known); !s)
                    return s;
                if (!known)
                    continue;
                if (Status s = evaluator->second(context, &result); !s)
                    return s;
            }
            if (op != "Constant" && !result)
                continue;

            const std::string& name = node->output(0);
            if (initializer(name) || given_.isGraphInput(name))
                return Status::invalid(nodeLabel(*node, i) + ": output '" + name +
                    "' is already a graph input or initializer");
            if (result) {
                tensor = tensorOf(name, *result);
                // A copy of an initializer (exporters share weights that way) is not news.
                if (op != "Identity" || computed_.count(node->input(0)) != 0)
                    computed_.insert(name);
                values_[name] = std::move(*result);
            } else {
                tensor = constantNodeTensor(node);
                if (!tensor)
                    continue; // a string or sparse constant: nothing here computes with it
            }
            tensor->set_name(name);
            addInitializer(std::move(*tensor));
            remove[static_cast<size_t>(i)] = true;
            ++*folded;
        }
        removeNodes(remove);
        return Status();
    }

    // The known shape of a value: decoded constants first, then initializers, inputs, value_info.
    std::optional<Value> evaluateShape(const onnx::NodeProto& node) const
    {
        const std::string& input = node.input(0);
        std::vector<int64_t> dims;
        const onnx::TensorProto* tensor = initializer(input);
        if (const auto it = values_.find(input); it != values_.end())
            dims = it->second.dims;
        else if (tensor)
            dims.assign(tensor->dims().begin(), tensor->dims().end());
        else if (!shapes_->staticShape(input, &dims))
            return std::nullopt;
        // Opset 15's start and end pick a range of dimensions, clamped like a slice.
        const auto rank = static_cast<int64_t>(dims.size());
        const auto clamp = [rank](int64_t axis) {
            return std::max<int64_t>(0, std::min(rank, axis < 0 ? axis + rank : axis));
        };
        const int64_t start = clamp(onnxutil::intAttribute(node, "start", 0));
        const int64_t end = clamp(onnxutil::intAttribute(node, "end", rank));
        Value result;
        result.type = kInt64;
        if (end > start)
            result.ints.assign(dims.begin() + start, dims.begin() + end);
        result.dims = {static_cast<int64_t>(result.ints.size())};
        return result;
    }

    // How many nodes and graph outputs read each value.
    std::unordered_map<std::string, int> useCounts() const
    {
        std::unordered_map<std::string, int> uses;
        for (const auto& node : graph_.node())
            for (const auto& input : node.input())
                ++uses[input];
        for (const auto& output : graph_.output())
            ++uses[output.name()];
        return uses;
    }

    // A weight stored transposed for its only reader (exports without the exporter's own constant
    // folding give every nn.Linear weight as Transpose(W)): folded whatever its size, since the
    // result replaces the tensor rather than adding to the model (`prune` drops the original).
    // `done` stays false for anything else, which the Transpose evaluator then considers.
    Status foldLargeTranspose(const onnx::NodeProto& node, int index,
        const std::unordered_map<std::string, int>& uses, bool* done)
    {
        *done = false;
        if (node.input_size() != 1 || values_.count(node.input(0)) != 0)
            return Status();
        const onnx::TensorProto* tensor = initializer(node.input(0));
        const auto use = uses.find(node.input(0));
        if (!tensor || use == uses.end() || use->second != 1 || tensor->data_type() != kFloat ||
            tensor->data_location() == onnx::TensorProto_DataLocation_EXTERNAL ||
            given_.isGraphInput(node.input(0)))
            return Status();
        Value value;
        value.type = kFloat;
        value.dims.assign(tensor->dims().begin(), tensor->dims().end());
        int64_t count = 0;
        if (foldableCount(value.dims, &count))
            return Status(); // small enough for the evaluator, which keeps it for later nodes
        if (std::any_of(value.dims.begin(), value.dims.end(), [](int64_t d) { return d < 0; }))
            return Status();
        if (!onnxutil::readFloat(*tensor, &value.floats))
            return Status::invalid(nodeLabel(node, index) + ": the data of input '" +
                node.input(0) + "' does not match its shape " + dimsText(value.dims));
        NodeContext context {node, index, opset_, {&value}};
        std::optional<Value> result;
        if (Status s = evaluateTranspose(context, &result); !s || !result)
            return s;
        const std::string& name = node.output(0);
        if (initializer(name) || given_.isGraphInput(name))
            return Status::invalid(nodeLabel(node, index) + ": output '" + name +
                "' is already a graph input or initializer");
        addInitializer(tensorOf(name, *result));
        *done = true;
        return Status();
    }

    const onnx::TensorProto* initializer(const std::string& name) const
    {
        if (const auto* t = given_.initializer(name))
            return t;
        const auto it = added_.find(name);
        return it == added_.end() ? nullptr : it->second;
    }

    // Points the context at the node's constant inputs, decoding initializers on first use.
    // `known` stays false when an input is computed at run time, too large to decode, or of an
    // element type the folder does not compute with.
    Status gatherInputs(NodeContext* context, bool* known)
    {
        *known = false;
        for (const auto& input : context->node.input()) {
            if (input.empty()) {
                context->inputs.push_back(nullptr);
                continue;
            }
            // DequantizeLinear's 8-bit inputs are decoded for it alone (kept apart from the
            // values other evaluators read), and its and QuantizeLinear's data input whatever its
            // size: the result replaces the weights, which `prune` drops.
            const bool dequantize = context->node.op_type() == "DequantizeLinear";
            auto& cache = dequantize ? quantized_ : values_;
            if (const auto it = cache.find(input); it != cache.end()) {
                context->inputs.push_back(&it->second);
                continue;
            }
            if (dequantize && values_.count(input)) {
                context->inputs.push_back(&values_.at(input));
                continue;
            }
            const onnx::TensorProto* tensor = initializer(input);
            if (!tensor)
                return Status();
            const std::vector<int64_t> dims(tensor->dims().begin(), tensor->dims().end());
            int64_t count = 0;
            const bool anySize = (dequantize || context->node.op_type() == "QuantizeLinear") &&
                context->inputs.empty() &&
                std::none_of(dims.begin(), dims.end(), [](int64_t d) { return d < 0; });
            if ((!foldableCount(dims, &count) && !anySize) ||
                tensor->data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
                return Status();
            Value value;
            value.type = tensor->data_type();
            value.dims = dims;
            bool read = false;
            if (value.type == kFloat)
                read = onnxutil::readFloat(*tensor, &value.floats);
            else if (value.type == kInt64 || value.type == kInt32 || value.type == kBool ||
                (dequantize && (value.type == kInt8 || value.type == kUint8)))
                read = onnxutil::readInt64(*tensor, &value.ints);
            else
                return Status();
            if (!read)
                return context->invalid(
                    "the data of input '" + input + "' does not match its shape " + dimsText(dims));
            context->inputs.push_back(&cache.emplace(input, std::move(value)).first->second);
        }
        *known = true;
        return Status();
    }

    void addInitializer(onnx::TensorProto tensor)
    {
        // IR 3 lists every initializer among the graph inputs as well.
        if (model_.ir_version() < 4) {
            auto* input = graph_.add_input();
            input->set_name(tensor.name());
            auto* type = input->mutable_type()->mutable_tensor_type();
            type->set_elem_type(tensor.data_type());
            auto* shape = type->mutable_shape();
            for (int64_t d : tensor.dims())
                shape->add_dim()->set_dim_value(d);
        }
        auto* stored = graph_.add_initializer();
        stored->Swap(&tensor);
        added_.emplace(stored->name(), stored);
    }

    // Drops the marked nodes, keeping the order of the rest.
    void removeNodes(const std::vector<bool>& remove)
    {
        auto* nodes = graph_.mutable_node();
        int kept = 0;
        for (int i = 0; i < nodes->size(); ++i)
            if (!remove[static_cast<size_t>(i)]) {
                if (kept != i)
                    nodes->SwapElements(kept, i);
                ++kept;
            }
        nodes->DeleteSubrange(kept, nodes->size() - kept);
    }

    // Shapes downstream of what folded may now be known. Stale value_info would be merged with
    // the new inference and could hide a changed shape, so it goes first.
    Status reinferShapes()
    {
        graph_.clear_value_info();
        try {
            onnx::shape_inference::InferShapes(model_, onnxutil::checkedSchemaRegistry());
        } catch (const std::exception& e) {
            return Status::invalid(
                std::string("shape inference after folding constants failed: ") + e.what());
        }
        return Status();
    }

    // One note per remaining node that now reads a computed constant (Constant nodes that merely
    // became initializers are not worth a line).
    void addNotes(PassReport* report) const
    {
        // As model_passes.cpp's notes: past this many, the count in the report says the rest.
        constexpr size_t kMaxNotes = 40;
        for (int i = 0; i < graph_.node_size(); ++i) {
            const auto& node = graph_.node(i);
            std::string changed;
            for (int k = 0; k < node.input_size(); ++k) {
                const auto it = values_.find(node.input(k));
                if (it == values_.end() || computed_.count(node.input(k)) == 0)
                    continue;
                changed += (changed.empty() ? "" : ", ") +
                    inputRole(node.op_type(), static_cast<size_t>(k)) + " " + describe(it->second);
            }
            if (changed.empty())
                continue;
            if (report->notes.size() >= kMaxNotes) {
                report->notes.emplace_back("...");
                return;
            }
            report->notes.push_back(nodeLabel(node, i) + ": " + changed + " now constant");
        }
    }

    onnx::ModelProto& model_;
    onnx::GraphProto& graph_;
    const int64_t opset_;
    // The initializers and inputs the graph came with. The pass adds initializers but never
    // removes or reorders them, so this index stays valid throughout (its node maps do not).
    const onnxutil::GraphIndex given_;
    // The shapes known at the start of the round (from value_info, rebuilt each round).
    std::optional<onnxutil::ShapeIndex> shapes_;
    // Initializers the pass added, by name; protobuf never moves an element once added.
    std::unordered_map<std::string, const onnx::TensorProto*> added_;
    int folded_ = 0;
    // Decoded constants by value name: initializers read by foldable nodes and computed outputs.
    std::unordered_map<std::string, Value> values_;
    // Initializers decoded for DequantizeLinear, by value name.
    std::unordered_map<std::string, Value> quantized_;
    // Outputs of evaluated nodes (not of Constant nodes): the changes a note reports.
    std::unordered_set<std::string> computed_;
};

} // namespace

} // namespace fold

Status foldConstants(onnx::ModelProto& model, PassReport* report)
{
    if (report)
        report->pass = "fold-constants";
    return fold::ConstantFolder(model).run(report);
}

} // namespace jetagent
