// Operator histogram, parameter count and multiply-accumulates of an ONNX model.
#include "jetagent/engines/model_info.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <onnx/onnx_pb.h>

#include "jetagent/engines/model_passes.h"
#include "jetagent/engines/model_validate.h"
#include "onnx_util.h"

namespace jetagent {

const char* const kMacOperators[] = {"Conv", "ConvTranspose", "Gemm", "MatMul", "Einsum", nullptr};

namespace {

int64_t product(const std::vector<int64_t>& dims, size_t from = 0)
{
    int64_t n = 1;
    for (size_t i = from; i < dims.size(); ++i)
        n *= dims[i];
    return n;
}

// The multiply-accumulates of an Einsum of two or more operands: every combination of its
// indices' values is one product of the operands (operands - 1 multiplications) summed into one
// output element, so the count is the product of all index sizes, the ellipsis's broadcast
// dimensions included, times operands - 1. One operand (a transpose, a sum, a diagonal) has none.
// nullopt when the equation does not fit the shapes. Letters are case-sensitive; blanks are
// ignored (torchvision's MaxViT writes "B G H I D, B G H J D -> B G H I J").
std::optional<int64_t> einsumMacs(
    const std::string& equation, const std::vector<std::vector<int64_t>>& shapes)
{
    std::string text;
    for (char c : equation)
        if (c != ' ')
            text += c;
    const std::string inputs = text.substr(0, text.find("->"));
    std::vector<std::string> terms(1);
    for (char c : inputs) {
        if (c == ',')
            terms.emplace_back();
        else
            terms.back() += c;
    }
    if (terms.size() != shapes.size())
        return std::nullopt;
    std::unordered_map<char, int64_t> sizes;
    std::vector<int64_t> ellipsis; // right-aligned, broadcast across operands
    for (size_t t = 0; t < terms.size(); ++t) {
        std::string term = terms[t];
        const size_t dots = term.find("...");
        const bool hasEllipsis = dots != std::string::npos;
        if (hasEllipsis)
            term.erase(dots, 3);
        for (char c : term)
            if (!std::isalpha(static_cast<unsigned char>(c)))
                return std::nullopt;
        const auto& shape = shapes[t];
        if (shape.size() < term.size() || (!hasEllipsis && shape.size() != term.size()))
            return std::nullopt;
        const size_t spanned = shape.size() - term.size();
        const size_t lead = hasEllipsis ? dots : term.size();
        for (size_t i = 0; i < term.size(); ++i) {
            const int64_t dim = shape[i < lead ? i : i + spanned];
            auto [it, added] = sizes.emplace(term[i], dim);
            if (!added && it->second != dim) {
                if (it->second != 1 && dim != 1)
                    return std::nullopt;
                it->second = std::max(it->second, dim);
            }
        }
        if (ellipsis.size() < spanned)
            ellipsis.insert(ellipsis.begin(), spanned - ellipsis.size(), 1);
        for (size_t i = 0; i < spanned; ++i) {
            int64_t& e = ellipsis[ellipsis.size() - spanned + i];
            e = std::max(e, shape[lead + i]);
        }
    }
    if (terms.size() < 2)
        return int64_t {0};
    int64_t n = product(ellipsis);
    for (const auto& [letter, size] : sizes)
        n *= size;
    return n * static_cast<int64_t>(terms.size() - 1);
}

bool isFloat(int32_t type)
{
    return type == onnx::TensorProto_DataType_FLOAT || type == onnx::TensorProto_DataType_FLOAT16 ||
        type == onnx::TensorProto_DataType_DOUBLE || type == onnx::TensorProto_DataType_BFLOAT16;
}

void countParameters(const onnx::GraphProto& graph, ModelStats* stats)
{
    const onnxutil::GraphIndex index(graph);
    // Identity of an initializer: the exporter's shared copy of a tensor that was separate in the
    // framework. Its output counts as a tensor of its own.
    std::unordered_map<std::string, const onnx::TensorProto*> tensors;
    for (const auto& init : graph.initializer())
        tensors.emplace(init.name(), &init);
    for (const auto& node : graph.node())
        if (node.op_type() == "Identity" && node.input_size() == 1 && node.output_size() == 1)
            if (const auto* init = index.initializer(node.input(0)))
                tensors.emplace(node.output(0), init);

    std::unordered_set<std::string> trainable, buffers;
    for (const auto& node : graph.node()) {
        const bool identityOfConstant = node.op_type() == "Identity" && node.input_size() == 1 &&
            index.initializer(node.input(0));
        if (identityOfConstant)
            continue;
        for (int slot = 0; slot < node.input_size(); ++slot) {
            const auto it = tensors.find(node.input(slot));
            if (it == tensors.end() || !isFloat(it->second->data_type()))
                continue;
            const bool statistics = node.op_type() == "BatchNormalization" && slot >= 3;
            // Bounds and scalars fed to Clip, Pad, Pow… are not weights.
            const bool scalar = onnxutil::elementCount(*it->second) <= 1 &&
                (node.op_type() == "Clip" || node.op_type() == "Pad" || node.op_type() == "Pow" ||
                    node.op_type() == "Div" || node.op_type() == "Mul" || node.op_type() == "Add" ||
                    node.op_type() == "Sub");
            if (statistics)
                buffers.insert(it->first);
            else if (!scalar)
                trainable.insert(it->first);
        }
    }
    for (const auto& name : trainable) {
        stats->parameters += onnxutil::elementCount(*tensors.at(name));
        ++stats->parameterTensors;
    }
    for (const auto& name : buffers)
        if (!trainable.count(name))
            stats->buffers += onnxutil::elementCount(*tensors.at(name));
    // What is neither a parameter nor a buffer: integer tables, shapes, scalars.
    std::unordered_set<const onnx::TensorProto*> used;
    for (const auto* set : {&trainable, &buffers})
        for (const auto& name : *set)
            used.insert(tensors.at(name));
    for (const auto& init : graph.initializer()) {
        if (!used.count(&init))
            stats->constants += onnxutil::elementCount(init);
        stats->weightBytes += init.raw_data().size() +
            static_cast<uint64_t>(init.float_data_size()) * 4 +
            static_cast<uint64_t>(init.int64_data_size()) * 8 +
            static_cast<uint64_t>(init.int32_data_size()) * 4 +
            static_cast<uint64_t>(init.double_data_size()) * 8;
    }
}

// A copy of the graph to infer shapes on, light enough for 500 MB models: large float
// initializers become graph inputs of the same shape (shape inference needs only their dims).
onnx::ModelProto shapeOnlyCopy(const onnx::ModelProto& model)
{
    constexpr int64_t kKeepElements = 4096;
    onnx::ModelProto copy;
    copy.set_ir_version(model.ir_version());
    *copy.mutable_opset_import() = model.opset_import();
    const auto& graph = model.graph();
    auto* g = copy.mutable_graph();
    g->set_name(graph.name());
    *g->mutable_node() = graph.node();
    *g->mutable_output() = graph.output();
    std::unordered_set<std::string> asInputs;
    for (const auto& init : graph.initializer()) {
        if (isFloat(init.data_type()) && onnxutil::elementCount(init) > kKeepElements) {
            auto* in = g->add_input();
            in->set_name(init.name());
            auto* t = in->mutable_type()->mutable_tensor_type();
            t->set_elem_type(init.data_type());
            for (int64_t d : init.dims())
                t->mutable_shape()->add_dim()->set_dim_value(d);
            asInputs.insert(init.name());
        } else {
            *g->add_initializer() = init;
        }
    }
    for (const auto& in : graph.input())
        if (!asInputs.count(in.name()))
            *g->add_input() = in;
    return copy;
}

// Checks a shape given for `input` against its rank, its fixed dimensions and the size limits.
Status checkGivenShape(const TensorInfo& input, const std::vector<int64_t>& dims)
{
    if (dims.size() != input.dims.size())
        return Status::invalid("input '" + input.name + "' has rank " +
            std::to_string(input.dims.size()) + " (" + input.shapeString() + "), the " +
            "shape given has " + std::to_string(dims.size()) + " dimensions");
    int64_t elements = 1;
    for (size_t d = 0; d < dims.size(); ++d) {
        if (dims[d] < 1 || dims[d] > kMaxModelDimension ||
            (input.dims[d] > 0 && input.dims[d] != dims[d]))
            return Status::invalid("input '" + input.name + "': dimension " + std::to_string(d) +
                " must be " +
                (input.dims[d] > 0 ? std::to_string(input.dims[d])
                                   : "1 to " + std::to_string(kMaxModelDimension)) +
                ", not " + std::to_string(dims[d]));
        if (elements > kMaxInputElements / dims[d])
            return Status::invalid("input '" + input.name + "': the shape given has " +
                "more than the " + std::to_string(kMaxInputElements) +
                " elements jetagent accepts for one input");
        elements *= dims[d];
    }
    return Status();
}

// Concrete shapes of every input into `stats->shapes`: the shape given, else the model's own with
// an open batch dimension taken as 1; any other open dimension needs a shape given.
Status concreteInputShapes(const ModelFile& model,
    const std::map<std::string, std::vector<int64_t>>& inputShapes, ModelStats* stats)
{
    for (const auto& given : inputShapes) {
        const std::string& name = given.first;
        const bool known = std::any_of(model.inputs.begin(), model.inputs.end(),
            [&](const TensorInfo& t) { return t.name == name; });
        if (!known) {
            std::string names;
            for (const auto& t : model.inputs)
                names += (names.empty() ? "" : ", ") + t.name;
            return Status::invalid("model '" + model.path + "' has no input '" + name +
                "' (its inputs: " + names + ")");
        }
    }
    for (const auto& input : model.inputs) {
        std::vector<int64_t> dims;
        const auto given = inputShapes.find(input.name);
        if (given != inputShapes.end()) {
            dims = given->second;
            if (Status s = checkGivenShape(input, dims); !s)
                return s;
        } else {
            dims = input.dims;
            for (size_t d = 0; d < dims.size(); ++d)
                if (dims[d] < 0) {
                    if (d != 0)
                        return Status::invalid("input '" + input.name + "' (" +
                            input.shapeString() + ") has an open dimension " + std::to_string(d) +
                            "; give its shape to count MACs (--input-shape " + input.name +
                            ":1x3x224x224)");
                    dims[d] = 1;
                }
        }
        stats->shapes[input.name] = dims;
    }
    return Status();
}

// Makes `copy` the shape-only copy of the model with the concrete input shapes, Einsums lowered to
// MatMul, identities removed, constants folded and shapes inferred. `einsumOutputs` receives the
// outputs of the model's own Einsums, whose multiply-accumulates are still reported as Einsum's.
Status shapedCopy(const ModelFile& model, const std::map<std::string, std::vector<int64_t>>& shapes,
    onnx::ModelProto& copy, std::unordered_set<std::string>* einsumOutputs)
{
    copy = shapeOnlyCopy(*model.proto);
    for (auto& value : *copy.mutable_graph()->mutable_input()) {
        const auto it = shapes.find(value.name());
        if (it == shapes.end())
            continue;
        auto* shape = value.mutable_type()->mutable_tensor_type()->mutable_shape();
        shape->clear_dim();
        for (int64_t d : it->second)
            shape->add_dim()->set_dim_value(d);
    }
    PassReport ignored;
    // ONNX's shape inference gives an Einsum's output a rank and no dimensions, which would leave
    // everything after it uncounted: the batched matrix products among them become MatMul first,
    // their multiply-accumulates still reported as Einsum's.
    for (const auto& node : copy.graph().node())
        if (node.op_type() == "Einsum" && node.output_size() == 1)
            einsumOutputs->insert(node.output(0));
    if (Status s = einsumToMatMul(copy, &ignored); !s)
        return s.withContext("counting MACs of '" + model.path + "'");
    if (Status s = eliminateIdentity(copy, &ignored); !s)
        return s.withContext("counting MACs of '" + model.path + "'");
    if (Status s = inferShapes(copy, &ignored); !s)
        return s.withContext("counting MACs of '" + model.path + "'");
    if (Status s = foldConstants(copy, &ignored); !s)
        return s.withContext("counting MACs of '" + model.path + "'");
    if (Status s = inferShapes(copy, &ignored); !s)
        return s.withContext("counting MACs of '" + model.path + "'");
    return Status();
}

// The multiply-accumulates of one Einsum, Conv, ConvTranspose, Gemm or MatMul node; nullopt when
// its shapes are not known or do not fit the operator.
std::optional<int64_t> nodeMacs(const onnx::NodeProto& node, const onnxutil::ShapeIndex& shapes)
{
    const std::string& op = node.op_type();
    if (op == "Einsum") {
        std::vector<std::vector<int64_t>> operands(static_cast<size_t>(node.input_size()));
        bool known = true;
        for (int k = 0; k < node.input_size(); ++k)
            known = known && shapes.staticShape(node.input(k), &operands[static_cast<size_t>(k)]);
        return known ? einsumMacs(onnxutil::stringAttribute(node, "equation", ""), operands)
                     : std::nullopt;
    }
    std::vector<int64_t> out, a, b;
    const bool shapesKnown = node.input_size() >= 2 && node.output_size() >= 1 &&
        shapes.staticShape(node.output(0), &out) && shapes.staticShape(node.input(0), &a) &&
        shapes.staticShape(node.input(1), &b);
    if (!shapesKnown)
        return std::nullopt;
    if (op == "Conv" && b.size() >= 3) {
        // Each output element sums over its group's input channels and the kernel window:
        // W is [Cout, Cin/group, k...].
        return product(out) * product(b, 1);
    }
    if (op == "ConvTranspose" && b.size() >= 3) {
        // Each input element scatters into Cout/group channels over the kernel window:
        // W is [Cin, Cout/group, k...].
        return product(a) * product(b, 1);
    }
    if (op == "Gemm" && a.size() == 2) {
        const int64_t k = onnxutil::intAttribute(node, "transA", 0) ? a[0] : a[1];
        return product(out) * k;
    }
    if (op == "MatMul" && !a.empty())
        return product(out) * a.back();
    return std::nullopt;
}

// Adds the multiply-accumulates of the shaped copy's nodes to `stats->macs` and, per operator,
// to `macs`; the nodes whose count is unknown go to `stats->uncounted`.
void countMacs(const onnx::GraphProto& g, const std::unordered_set<std::string>& einsumOutputs,
    std::unordered_map<std::string, int64_t>& macs, ModelStats* stats)
{
    const onnxutil::ShapeIndex shapes(g);
    for (int i = 0; i < g.node_size(); ++i) {
        const auto& node = g.node(i);
        const std::string& op = node.op_type();
        if (!node.domain().empty() && node.domain() != "ai.onnx")
            continue;
        if (op != "Einsum" && op != "Conv" && op != "ConvTranspose" && op != "Gemm" &&
            op != "MatMul")
            continue;
        const std::optional<int64_t> n = nodeMacs(node, shapes);
        if (!n) {
            stats->uncounted.push_back(onnxutil::nodeLabel(node, i));
            continue;
        }
        macs[op == "Einsum" || einsumOutputs.count(node.output(0)) ? "Einsum" : op] += *n;
        stats->macs += *n;
    }
}

} // namespace

Expected<ModelStats> modelStats(
    const ModelFile& model, const std::map<std::string, std::vector<int64_t>>& inputShapes)
{
    if (!model.proto)
        return Status::invalid("model '" + model.path + "' was not parsed");
    const auto& graph = model.proto->graph();
    ModelStats stats;

    std::unordered_map<std::string, int64_t> count;
    std::vector<std::string> order;
    for (const auto& node : graph.node()) {
        const std::string key = node.domain().empty() || node.domain() == "ai.onnx"
            ? node.op_type()
            : node.domain() + ":" + node.op_type();
        if (count[key]++ == 0)
            order.push_back(key);
    }
    stats.nodes = graph.node_size();
    countParameters(graph, &stats);

    if (Status s = concreteInputShapes(model, inputShapes, &stats); !s)
        return s;
    std::unordered_set<std::string> einsumOutputs;
    onnx::ModelProto copy;
    if (Status s = shapedCopy(model, stats.shapes, copy, &einsumOutputs); !s)
        return s;
    std::unordered_map<std::string, int64_t> macs;
    countMacs(copy.graph(), einsumOutputs, macs, &stats);

    for (const auto& key : order)
        stats.operators.push_back({key, count[key], macs.count(key) ? macs[key] : 0});
    std::stable_sort(stats.operators.begin(), stats.operators.end(),
        [](const OperatorStats& x, const OperatorStats& y) { return x.nodes > y.nodes; });
    return stats;
}

} // namespace jetagent
