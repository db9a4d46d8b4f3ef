// Preparation passes other than constant folding (fold_constants.cpp): batch, shapes, Identity and
// Dropout, BatchNormalization folding, OpenCV canonical forms, pruning.
#include "jetagent/engines/model_passes.h"

#include <cmath>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "jetagent/engines/model_validate.h"
#include "onnx_util.h"

namespace jetagent {

using onnxutil::GraphIndex;
using onnxutil::keepOnly;
using onnxutil::nodeLabel;

namespace {

void begin(PassReport* report, const char* name)
{
    if (report)
        report->pass = name;
}

void note(PassReport* report, std::string line)
{
    // A graph of hundreds of identical rewrites needs no hundred lines: the counts say it.
    constexpr size_t kMaxNotes = 40;
    if (!report)
        return;
    if (report->notes.size() < kMaxNotes)
        report->notes.push_back(std::move(line));
    else if (report->notes.size() == kMaxNotes)
        report->notes.emplace_back("...");
}

onnx::TensorShapeProto* shapeOf(onnx::ValueInfoProto* value)
{
    return value->mutable_type()->mutable_tensor_type()->mutable_shape();
}

// A constant scalar `name`, from an initializer or a Constant node (passes before fold-constants
// still see the exporter's Constant nodes); nullopt otherwise.
std::optional<float> constantScalar(
    const std::string& name, const onnx::GraphProto& graph, const GraphIndex& index)
{
    std::vector<float> value;
    if (const auto* t = index.initializer(name))
        return onnxutil::readFloat(*t, &value) && value.size() == 1 ? std::optional<float>(value[0])
                                                                    : std::nullopt;
    const int producer = index.producer(name);
    if (producer < 0 || graph.node(producer).op_type() != "Constant")
        return std::nullopt;
    for (const auto& attr : graph.node(producer).attribute())
        if (attr.name() == "value" && attr.type() == onnx::AttributeProto::TENSOR &&
            onnxutil::readFloat(attr.t(), &value) && value.size() == 1)
            return value[0];
    return std::nullopt;
}

bool isInferenceDropout(
    const onnx::NodeProto& node, const onnx::GraphProto& graph, const GraphIndex& index)
{
    if (node.op_type() != "Dropout" || node.input_size() < 1)
        return false;
    // The mask output is only meaningful in training; if anything reads it, keep the node.
    if (node.output_size() > 1 && !node.output(1).empty() &&
        (!index.consumers(node.output(1)).empty() || index.isGraphOutput(node.output(1))))
        return false;
    // A ratio of 0 drops nothing, in training mode too (Swin's functional dropouts export with
    // training_mode true and p = 0).
    if (node.input_size() >= 2 && !node.input(1).empty() &&
        constantScalar(node.input(1), graph, index) == 0.0f)
        return true;
    // Opset 12+: training_mode input; absent or a constant false means inference.
    if (node.input_size() >= 3 && !node.input(2).empty()) {
        const auto* mode = index.initializer(node.input(2));
        std::vector<int64_t> value;
        if (!mode || !onnxutil::readInt64(*mode, &value) || value.size() != 1 || value[0] != 0)
            return false;
    }
    return onnxutil::intAttribute(node, "is_test", 1) != 0;
}

// A graph input at the engine's batch stays within the limit on input sizes: the model's checks
// saw it with the batch it declared, usually 1 or none.
Status checkBatchedSize(const onnx::ValueInfoProto& value, int64_t batch,
    const std::unordered_set<std::string>& initializers)
{
    if (initializers.count(value.name()) || !value.type().tensor_type().has_shape())
        return Status();
    int64_t elements = 1;
    std::string dims;
    bool tooLarge = false;
    for (const auto& dim : value.type().tensor_type().shape().dim()) {
        const int64_t d = dim.has_dim_value() ? dim.dim_value() : 1;
        dims += (dims.empty() ? "" : "x") + std::to_string(d);
        if (d <= 0)
            continue;
        tooLarge |= elements > kMaxInputElements / d;
        if (!tooLarge)
            elements *= d;
    }
    if (tooLarge)
        return Status::invalid("input '" + value.name() + "' at batch " + std::to_string(batch) +
            " is " + dims + ", more than the " + std::to_string(kMaxInputElements) +
            " elements jetagent accepts for one input; use a smaller batch");
    return Status();
}

} // namespace

Status setBatch(onnx::ModelProto& model, int64_t batch, PassReport* report)
{
    begin(report, batch > 0 ? "set-batch" : "free-batch");
    if (batch < 0)
        return Status::invalid("batch must be 0 (free) or more, not " + std::to_string(batch));
    auto* graph = model.mutable_graph();
    std::unordered_set<std::string> initializers;
    for (const auto& init : graph->initializer())
        initializers.insert(init.name());
    auto apply = [&](onnx::ValueInfoProto* value, const char* what) {
        if (initializers.count(value->name()) || !value->type().has_tensor_type())
            return;
        auto* shape = shapeOf(value);
        if (shape->dim_size() == 0)
            return;
        auto* dim = shape->mutable_dim(0);
        const std::string before =
            dim->has_dim_value() ? std::to_string(dim->dim_value()) : "'" + dim->dim_param() + "'";
        if (batch > 0) {
            if (dim->has_dim_value() && dim->dim_value() == batch)
                return;
            dim->set_dim_value(batch);
        } else {
            if (dim->has_dim_param())
                return;
            dim->set_dim_param("batch");
        }
        if (report)
            ++report->rewritten;
        note(report,
            std::string(what) + " '" + value->name() + "': batch " + before + " -> " +
                (batch > 0 ? std::to_string(batch) : std::string("'batch'")));
    };
    for (auto& value : *graph->mutable_input()) {
        apply(&value, "input");
        if (Status s = checkBatchedSize(value, batch, initializers); !s)
            return s;
    }
    for (auto& value : *graph->mutable_output())
        apply(&value, "output");
    // Shapes inferred for the old batch would contradict the new one.
    graph->clear_value_info();
    return Status();
}

Status inferShapes(onnx::ModelProto& model, PassReport* report)
{
    begin(report, "infer-shapes");
    model.mutable_graph()->clear_value_info();
    try {
        // Data propagation carries the values of Shape→Gather→Concat chains into the shapes of
        // the Reshapes they feed, so one run sees through a whole dynamic-batch export.
        onnx::shape_inference::InferShapes(
            model, onnxutil::checkedSchemaRegistry(), onnx::ShapeInferenceOptions(false, 0, true));
    } catch (const std::exception& e) {
        return Status::invalid(std::string("ONNX shape inference failed: ") + e.what());
    }
    return Status();
}

Status eliminateIdentity(onnx::ModelProto& model, PassReport* report)
{
    begin(report, "eliminate-identity");
    auto* graph = model.mutable_graph();
    const GraphIndex index(*graph);

    std::vector<bool> drop(static_cast<size_t>(graph->node_size()), false);
    // Removed output -> what replaces it, resolved to the end of its chain when it is added: nodes
    // are in topological order (checkStructure), so the input's own alias, if any, is already
    // resolved, and a chain of any length costs one lookup per node.
    std::unordered_map<std::string, std::string> alias;
    auto resolve = [&alias](const std::string& name) -> const std::string& {
        const auto it = alias.find(name);
        return it == alias.end() ? name : it->second;
    };
    std::vector<onnx::TensorProto> expanded;
    int expandedCount = 0;
    for (int i = 0; i < graph->node_size(); ++i) {
        const auto& node = graph->node(i);
        const bool identity = node.op_type() == "Identity" && node.input_size() == 1;
        if (!identity && !isInferenceDropout(node, *graph, index))
            continue;
        if (node.output_size() < 1 || node.input(0).empty())
            continue;
        const std::string& in = node.input(0);
        const std::string& out = node.output(0);
        if (index.isGraphOutput(out))
            continue; // renaming a graph output would change the model's interface
        if (const auto* init = index.initializer(in)) {
            // The exporter shares one tensor between layers through Identity; give each its own.
            expanded.push_back(*init);
            expanded.back().set_name(out);
            ++expandedCount;
        } else {
            std::string target = resolve(in);
            alias[out] = std::move(target);
        }
        drop[static_cast<size_t>(i)] = true;
        if (report)
            ++report->removed;
    }
    if (expanded.empty() && alias.empty())
        return Status();

    // One lookup per input in a sorted graph; the loop only goes on in a graph out of order.
    onnxutil::forEachInputName(graph, [&](std::string* name) {
        for (auto it = alias.find(*name); it != alias.end(); it = alias.find(*name))
            *name = it->second;
    });
    onnxutil::removeNodes(graph, drop);
    for (auto& init : expanded)
        *graph->add_initializer() = std::move(init);
    if (expandedCount > 0)
        note(report,
            std::to_string(expandedCount) +
                " Identity nodes of initializers replaced by their own copies of the tensor");
    if (!alias.empty())
        note(report, std::to_string(alias.size()) + " Identity/Dropout nodes bypassed");
    return Status();
}

namespace {

// The Conv node that BatchNormalization node `bn` folds into, or -1: `bn` runs in inference mode
// with constant statistics and unused extra outputs, and is the only reader of a Conv whose
// weight and bias are constant.
int foldTarget(const onnx::GraphProto& graph, const GraphIndex& index, const onnx::NodeProto& bn)
{
    if (bn.op_type() != "BatchNormalization" || bn.input_size() != 5)
        return -1;
    if (onnxutil::intAttribute(bn, "training_mode", 0) != 0)
        return -1;
    bool extraOutputsUsed = false;
    for (int o = 1; o < bn.output_size(); ++o)
        extraOutputsUsed |= !bn.output(o).empty() &&
            (!index.consumers(bn.output(o)).empty() || index.isGraphOutput(bn.output(o)));
    if (extraOutputsUsed)
        return -1;
    const std::string& x = bn.input(0);
    const int convAt = index.producer(x);
    if (convAt < 0 || graph.node(convAt).op_type() != "Conv" || index.consumers(x).size() != 1 ||
        index.isGraphOutput(x))
        return -1;
    const auto& conv = graph.node(convAt);
    if (conv.input_size() < 2 || !index.initializer(conv.input(1)))
        return -1;
    if (conv.input_size() >= 3 && !conv.input(2).empty() && !index.initializer(conv.input(2)))
        return -1;
    for (int slot = 1; slot <= 4; ++slot)
        if (!index.initializer(bn.input(slot)))
            return -1; // statistics computed at run time: nothing to fold
    return convAt;
}

// The weight and bias of Conv node `conv` (node `convAt`) with BatchNormalization node `bn` (node
// `at`) folded in: each output channel scaled by scale / sqrt(var + epsilon) and shifted.
Status foldedParameters(const onnx::NodeProto& bn, int at, const onnx::NodeProto& conv, int convAt,
    const GraphIndex& index, std::vector<float>* weight, std::vector<float>* bias)
{
    std::vector<float> scale, shift, mean, var;
    const std::string label = nodeLabel(bn, at);
    if (!onnxutil::readFloat(*index.initializer(bn.input(1)), &scale) ||
        !onnxutil::readFloat(*index.initializer(bn.input(2)), &shift) ||
        !onnxutil::readFloat(*index.initializer(bn.input(3)), &mean) ||
        !onnxutil::readFloat(*index.initializer(bn.input(4)), &var))
        return Status::invalid(label + ": parameters are not float tensors");
    if (!onnxutil::readFloat(*index.initializer(conv.input(1)), weight))
        return Status::invalid(
            nodeLabel(conv, convAt) + ": weight '" + conv.input(1) + "' is not float");
    const auto& wdims = index.initializer(conv.input(1))->dims();
    if (wdims.size() < 3)
        return Status::invalid(nodeLabel(conv, convAt) + ": weight '" + conv.input(1) +
            "' has rank " + std::to_string(wdims.size()) + "; Conv weights have rank 3 or more");
    const auto channels = static_cast<size_t>(wdims[0]);
    for (const auto* p : {&scale, &shift, &mean, &var})
        if (p->size() != channels)
            return Status::invalid(label + ": " + std::to_string(p->size()) +
                " parameters for a Conv of " + std::to_string(channels) + " output channels");
    bias->assign(channels, 0.0f);
    if (conv.input_size() >= 3 && !conv.input(2).empty() &&
        (!onnxutil::readFloat(*index.initializer(conv.input(2)), bias) || bias->size() != channels))
        return Status::invalid(nodeLabel(conv, convAt) + ": bias '" + conv.input(2) +
            "' does not hold " + std::to_string(channels) + " floats");

    const double epsilon = onnxutil::floatAttribute(bn, "epsilon", 1e-5f);
    const size_t perChannel = weight->size() / channels;
    for (size_t c = 0; c < channels; ++c) {
        const double k = scale[c] / std::sqrt(static_cast<double>(var[c]) + epsilon);
        for (size_t j = 0; j < perChannel; ++j)
            (*weight)[c * perChannel + j] = static_cast<float>((*weight)[c * perChannel + j] * k);
        (*bias)[c] = static_cast<float>(((*bias)[c] - mean[c]) * k + shift[c]);
    }
    return Status();
}

// Writes folded weights and biases into the graph's initializers. Weights read by more than the
// Conv being folded are copied first, so the other readers keep the original values; a Conv
// without a bias gets a new one.
class FoldedWriter {
public:
    FoldedWriter(onnx::GraphProto* graph, const GraphIndex& index) : graph_(graph), index_(index)
    {
        for (int i = 0; i < graph->initializer_size(); ++i)
            initializerIndex_.emplace(graph->initializer(i).name(), i);
    }

    void write(
        onnx::NodeProto* conv, const std::vector<float>& weight, const std::vector<float>& bias)
    {
        auto* w = privateInitializer(conv->input(1), conv, 1);
        w->clear_float_data();
        w->set_raw_data(weight.data(), weight.size() * sizeof(float));
        if (conv->input_size() >= 3 && !conv->input(2).empty()) {
            auto* bt = privateInitializer(conv->input(2), conv, 2);
            bt->clear_float_data();
            bt->set_raw_data(bias.data(), bias.size() * sizeof(float));
            return;
        }
        const std::string biasName =
            newName(conv->name().empty() ? "conv_bias" : conv->name() + "_bias");
        *graph_->add_initializer() =
            onnxutil::makeFloatTensor(biasName, {static_cast<int64_t>(bias.size())}, bias);
        initializerIndex_.emplace(biasName, graph_->initializer_size() - 1);
        while (conv->input_size() < 3)
            conv->add_input("");
        conv->set_input(2, biasName);
    }

private:
    std::string newName(const std::string& base)
    {
        if (!unique_)
            unique_.emplace(*graph_);
        return unique_->make(base);
    }

    onnx::TensorProto* privateInitializer(const std::string& name, onnx::NodeProto* conv, int slot)
    {
        const int at = initializerIndex_.at(name);
        if (index_.consumers(name).size() <= 1 && !index_.isGraphOutput(name))
            return graph_->mutable_initializer(at);
        const std::string copyName = newName(name + "_folded");
        auto* copy = graph_->add_initializer();
        *copy = graph_->initializer(at);
        copy->set_name(copyName);
        initializerIndex_.emplace(copyName, graph_->initializer_size() - 1);
        conv->set_input(slot, copyName);
        return copy;
    }

    onnx::GraphProto* graph_;
    const GraphIndex& index_;
    // Built when the first name is needed: most graphs fold nothing that needs one.
    std::optional<onnxutil::UniqueNames> unique_;
    std::unordered_map<std::string, int> initializerIndex_;
};

} // namespace

Status foldBatchNorm(onnx::ModelProto& model, PassReport* report)
{
    begin(report, "fold-batchnorm");
    auto* graph = model.mutable_graph();
    const GraphIndex index(*graph);
    FoldedWriter writer(graph, index);
    std::vector<bool> drop(static_cast<size_t>(graph->node_size()), false);
    for (int i = 0; i < graph->node_size(); ++i) {
        const auto& bn = graph->node(i);
        const int convAt = foldTarget(*graph, index, bn);
        if (convAt < 0)
            continue;
        auto* conv = graph->mutable_node(convAt);
        std::vector<float> weight, bias;
        if (Status s = foldedParameters(bn, i, *conv, convAt, index, &weight, &bias); !s)
            return s;
        writer.write(conv, weight, bias);
        conv->set_output(0, bn.output(0));
        drop[static_cast<size_t>(i)] = true;
        if (report)
            ++report->folded;
    }
    if (report && report->folded > 0)
        note(report,
            std::to_string(report->folded) +
                " BatchNormalization nodes folded into the Conv before them");
    onnxutil::removeNodes(graph, drop);
    return Status();
}

namespace {

// Moves constant input `slot` of `node` into an INTS attribute; false when it is not constant.
bool intsInputToAttribute(
    onnx::NodeProto* node, int slot, const char* attribute, const GraphIndex& index)
{
    if (node->input_size() <= slot || node->input(slot).empty())
        return false;
    const auto* init = index.initializer(node->input(slot));
    std::vector<int64_t> values;
    if (!init || !onnxutil::readInt64(*init, &values))
        return false;
    onnxutil::setIntsAttribute(node, attribute, values);
    node->mutable_input()->DeleteSubrange(slot, node->input_size() - slot);
    return true;
}

bool scalarInput(const onnx::NodeProto& node, int slot, const GraphIndex& index, float* out)
{
    if (node.input_size() <= slot || node.input(slot).empty())
        return false;
    const auto* init = index.initializer(node.input(slot));
    std::vector<float> values;
    if (!init || !onnxutil::readFloat(*init, &values) || values.size() != 1)
        return false;
    *out = values[0];
    return true;
}

} // namespace

Status canonicalizeForOpenCV(onnx::ModelProto& model, PassReport* report)
{
    begin(report, "canonicalize-opencv");
    auto* graph = model.mutable_graph();
    const GraphIndex index(*graph);
    const onnxutil::ShapeIndex shapes(*graph);
    // Counted per kind so that the notes stay short on large graphs.
    std::unordered_map<std::string, int> rewrites;

    for (int i = 0; i < graph->node_size(); ++i) {
        auto* node = graph->mutable_node(i);
        const std::string& op = node->op_type();
        std::string what;
        if (op == "Clip" && node->input_size() > 1) {
            // Opset 11 made Clip's bounds inputs; OpenCV reads only the attributes of opset 6.
            float lo = 0, hi = 0;
            const bool hasLo = node->input(1).empty() || scalarInput(*node, 1, index, &lo);
            const bool hasHi = node->input_size() < 3 || node->input(2).empty() ||
                scalarInput(*node, 2, index, &hi);
            if (!hasLo || !hasHi)
                continue; // bounds computed at run time: leave it for the backend to refuse
            if (!node->input(1).empty())
                onnxutil::setFloatAttribute(node, "min", lo);
            if (node->input_size() >= 3 && !node->input(2).empty())
                onnxutil::setFloatAttribute(node, "max", hi);
            node->mutable_input()->DeleteSubrange(1, node->input_size() - 1);
            what = "Clip bounds -> attributes";
        } else if (op == "Split" && intsInputToAttribute(node, 1, "split", index)) {
            what = "Split sizes -> attribute";
        } else if ((op == "Squeeze" || op == "Unsqueeze" || op == "ReduceSum" ||
                       op == "ReduceMean" || op == "ReduceMax" || op == "ReduceMin" ||
                       op == "ReduceProd" || op == "ReduceL2") &&
            intsInputToAttribute(node, 1, "axes", index)) {
            what = op + " axes -> attribute";
        } else if ((op == "GlobalAveragePool" || op == "GlobalMaxPool") &&
            node->input_size() == 1 && shapes.rank(node->input(0)) > 4) {
            // OpenCV's pooling layer handles at most two spatial dims as a global pool.
            const int rank = shapes.rank(node->input(0));
            node->set_op_type(op == "GlobalAveragePool" ? "ReduceMean" : "ReduceMax");
            std::vector<int64_t> axes;
            for (int a = 2; a < rank; ++a)
                axes.push_back(a);
            onnxutil::setIntsAttribute(node, "axes", axes);
            onnxutil::setIntAttribute(node, "keepdims", 1);
            what = op + " " + std::to_string(rank) + "-D -> " + node->op_type();
        } else if (op == "Conv" && !onnxutil::findAttribute(*node, "kernel_shape") &&
            node->input_size() >= 2) {
            const auto* w = index.initializer(node->input(1));
            if (!w || w->dims_size() < 3)
                continue;
            onnxutil::setIntsAttribute(
                node, "kernel_shape", std::vector<int64_t>(w->dims().begin() + 2, w->dims().end()));
            what = "Conv kernel_shape from weights";
        } else {
            continue;
        }
        if (report)
            ++report->rewritten;
        ++rewrites[what];
    }
    for (const auto& [what, count] : rewrites)
        note(report, what + ": " + std::to_string(count) + (count == 1 ? " node" : " nodes"));

    // OpenCV refuses graph outputs without a shape; shape inference may know it.
    std::unordered_map<std::string, const onnx::ValueInfoProto*> inferred;
    for (const auto& value : graph->value_info())
        if (value.type().tensor_type().has_shape())
            inferred.emplace(value.name(), &value);
    for (auto& output : *graph->mutable_output()) {
        if (output.type().tensor_type().has_shape())
            continue;
        const auto it = inferred.find(output.name());
        if (it == inferred.end())
            continue;
        *output.mutable_type() = it->second->type();
        if (report)
            ++report->rewritten;
        note(report, "output '" + output.name() + "': shape taken from shape inference");
    }
    return Status();
}

Status einsumToMatMul(onnx::ModelProto& model, PassReport* report)
{
    begin(report, "einsum-matmul");
    auto* graph = model.mutable_graph();
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (int i = 0; i < graph->node_size(); ++i) {
        onnx::NodeProto& node = *graph->mutable_node(i);
        const bool standard = node.domain().empty() || node.domain() == "ai.onnx";
        const auto product = standard && node.op_type() == "Einsum" && node.input_size() == 2
            ? onnxutil::einsumAsMatMul(onnxutil::stringAttribute(node, "equation", ""))
            : std::nullopt;
        if (!product) {
            nodes.Add()->Swap(&node);
            continue;
        }
        const std::string label = nodeLabel(node, i);
        if (product->transposeB) {
            onnx::NodeProto* flip = nodes.Add();
            flip->set_op_type("Transpose");
            flip->set_name(node.name() + "/transpose_b");
            flip->add_input(node.input(1));
            flip->add_output(node.output(0) + "/b_transposed");
            std::vector<int64_t> perm(product->rank);
            for (size_t k = 0; k < perm.size(); ++k)
                perm[k] = static_cast<int64_t>(k);
            std::swap(perm[perm.size() - 2], perm[perm.size() - 1]);
            onnxutil::setIntsAttribute(flip, "perm", perm);
            node.set_input(1, flip->output(0));
        }
        node.set_op_type("MatMul");
        node.clear_attribute();
        if (report) {
            ++report->rewritten;
            note(report,
                label + ": a batched matrix product" +
                    (product->transposeB ? ", B's last two axes transposed" : ""));
        }
        nodes.Add()->Swap(&node);
    }
    graph->mutable_node()->Swap(&nodes);
    return Status();
}

Status pruneUnused(onnx::ModelProto& model, PassReport* report)
{
    begin(report, "prune");
    auto* graph = model.mutable_graph();
    std::unordered_set<std::string> needed;
    for (const auto& output : graph->output())
        needed.insert(output.name());
    // Walk backwards: a node is live when something live reads one of its outputs.
    std::vector<bool> drop(static_cast<size_t>(graph->node_size()), false);
    int removed = 0;
    for (int i = graph->node_size() - 1; i >= 0; --i) {
        const auto& node = graph->node(i);
        bool live = false;
        for (const auto& out : node.output())
            live |= !out.empty() && needed.count(out) != 0;
        if (!live) {
            drop[static_cast<size_t>(i)] = true;
            ++removed;
            continue;
        }
        for (const auto& in : node.input())
            needed.insert(in);
        for (const auto& attr : node.attribute()) {
            // Subgraphs read outer values by name.
            auto collect = [&](const onnx::GraphProto& g) {
                onnxutil::forEachInputName(g, [&](const std::string& n) { needed.insert(n); });
            };
            if (attr.has_g())
                collect(attr.g());
            for (const auto& g : attr.graphs())
                collect(g);
        }
    }
    onnxutil::removeNodes(graph, drop);

    std::unordered_set<std::string> unused;
    keepOnly(graph->mutable_initializer(), [&](const onnx::TensorProto& init) {
        if (needed.count(init.name()) != 0)
            return true;
        unused.insert(init.name());
        return false;
    });
    // Old exporters (IR < 4) list initializers as graph inputs too; those entries go with them.
    // Real inputs stay even when nothing reads them: they are part of the model's interface.
    keepOnly(graph->mutable_input(),
        [&](const onnx::ValueInfoProto& v) { return unused.count(v.name()) == 0; });
    keepOnly(graph->mutable_value_info(),
        [&](const onnx::ValueInfoProto& v) { return needed.count(v.name()) != 0; });

    if (report) {
        report->removed += removed;
        if (removed > 0)
            note(report, std::to_string(removed) + " nodes whose outputs nothing reads");
        if (!unused.empty())
            note(report, std::to_string(unused.size()) + " initializers nothing reads");
    }
    return Status();
}

} // namespace jetagent
