// The graph compiler: one pass over the prepared model's nodes in order, each turned into checked
// steps over values with a chosen layout; activations fused into the step before them; then the
// memory plan.
#include "graph_compiler.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include <onnx/onnx_pb.h>

#include "../onnx/onnx_util.h"
#include "steps.h"

namespace jetagent {
namespace xnnplan {

namespace {

void chooseConvLibrary(ConvStep& step, bool oneDnn);
void chooseFullyConnectedLibrary(FullyConnectedStep& step, bool oneDnn);

using onnxutil::findAttribute;
using onnxutil::floatAttribute;
using onnxutil::intAttribute;
using onnxutil::intsAttribute;
using onnxutil::stringAttribute;

// Far beyond any real model, small enough that no product of them overflows.
constexpr int64_t kMaxDim = int64_t(1) << 31;
// XNNPACK's element-wise operators take at most 6 dimensions (XNN_MAX_TENSOR_DIMS).
constexpr size_t kMaxRank = 6;

std::string dimsText(const std::vector<int64_t>& dims)
{
    std::string text = "[";
    for (size_t i = 0; i < dims.size(); ++i)
        text += (i ? "x" : "") + std::to_string(dims[i]);
    return text + "]";
}

// Where a logical axis sits in a value's physical order.
int physicalPosition(int axis, int rank, Layout layout)
{
    const auto order = physicalOrder(rank, layout);
    return static_cast<int>(std::find(order.begin(), order.end(), axis) - order.begin());
}

// True when the two layouts of `dims` put the elements in the same memory order (the axes that
// move are all of length 1), so converting between them is free.
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

// A constant's values permuted from row-major `dims` into the physical order of `layout`.
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

class Compiler {
public:
    Compiler(const onnx::ModelProto& model, const CompileOptions& options)
        : graph_(model.graph()),
          index_(model.graph()),
          options_(options),
          opset_(onnxutil::defaultOpset(model))
    {
    }

    Expected<std::shared_ptr<Plan>> compile();

    using Handler = Status (Compiler::*)(const onnx::NodeProto&, int);
    static const std::unordered_map<std::string, Handler>& operatorTable();

private:
    // Values.
    Status collectShapes();
    Expected<std::vector<int64_t>> shapeOf(const std::string& name, const onnx::NodeProto& node);
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
    Expected<int> need(const std::string& name, Layout layout, const onnx::NodeProto& node);
    int needId(int id, Layout layout);
    int alias(const std::string& name, int of, std::vector<int64_t> dims);
    const onnx::TensorProto* constant(const std::string& name) const
    {
        return index_.initializer(name);
    }
    Expected<std::vector<float>> constantFloats(const std::string& name, const onnx::NodeProto& n);
    Expected<std::vector<int64_t>> constantInts(const std::string& name, const onnx::NodeProto& n);
    Status fail(const onnx::NodeProto& node, const std::string& what) const
    {
        return Status::unsupported(label(node) + ": " + what);
    }
    std::string label(const onnx::NodeProto& node) const
    {
        return onnxutil::nodeLabel(node, nodeIndex_);
    }
    template <typename S>
    S* addStep(const onnx::NodeProto& node, std::unique_ptr<S> step);
    // Folds a following Relu or Clip into `range` and returns the name the step's output takes.
    std::string fuseActivation(const onnx::NodeProto& node, OutputRange* range, std::string* text);
    // A residual Add after a oneDNN convolution, folded into it: the value added (-1: none).
    void writeInPlace(const onnx::NodeProto& node, CopyRowsStep& copy, size_t channels);
    void readInPlace();
    int fuseResidual(const onnx::NodeProto& conv, ConvStep& step, int input,
        const std::vector<int64_t>& y, std::string* outName, std::string* text);

    // Operators.
    Status conv(const onnx::NodeProto& node, int);
    Status conv3d(const onnx::NodeProto& node, std::unique_ptr<ConvStep> step,
        const std::vector<float>& weights, const std::vector<int64_t>& x,
        const std::vector<int64_t>& y, const std::vector<int64_t>& w,
        const std::vector<int64_t>& pads, const std::vector<int64_t>& strides,
        const std::vector<int64_t>& dilations);
    Status gemm(const onnx::NodeProto& node, int);
    Status batchMatMul(const onnx::NodeProto& node);
    Status fuseLayerNorm(const onnx::NodeProto& mean, bool* fused);
    Status layerNormalization(const onnx::NodeProto& node, int);
    // GELU as exported, from its first node: x, which form, the pattern's other nodes and the one
    // whose output is GELU's.
    struct GeluMatch {
        std::string x;
        GeluForm form = GeluForm::Erf;
        std::vector<int> rest;
        int last = -1;
    };
    std::optional<GeluMatch> matchGelu(const onnx::NodeProto& first) const;
    std::optional<GeluMatch> matchGeluErf(const onnx::NodeProto& first) const;
    std::optional<GeluMatch> matchGeluTanh(const onnx::NodeProto& first) const;
    std::string otherOperand(int node, const std::string& known) const;
    const onnx::NodeProto& fuseGeluAfter(
        const onnx::NodeProto& producer, GeluForm* gelu, std::string* text);
    Status fuseGelu(const onnx::NodeProto& first, bool* fused);
    int onlyReader(const std::string& value, const char* op) const;
    std::optional<float> scalarConstant(const std::string& name) const;
    Status einsum(const onnx::NodeProto& node, int);
    Status pool(const onnx::NodeProto& node, int);
    Status globalPool(const onnx::NodeProto& node, int);
    Status binary(const onnx::NodeProto& node, int);
    Status unary(const onnx::NodeProto& node, int);
    Status batchNorm(const onnx::NodeProto& node, int);
    Status reshape(const onnx::NodeProto& node, int);
    Status transpose(const onnx::NodeProto& node, int);
    Status concat(const onnx::NodeProto& node, int);
    Status split(const onnx::NodeProto& node, int);
    Status slice(const onnx::NodeProto& node, int);
    Status gather(const onnx::NodeProto& node, int);
    Status softmax(const onnx::NodeProto& node, int);
    Status reduce(const onnx::NodeProto& node, int);
    Status pad(const onnx::NodeProto& node, int);
    bool channelShuffle(const onnx::NodeProto& node);
    Status inferenceDropout(const onnx::NodeProto& node);

    const onnx::GraphProto& graph_;
    onnxutil::GraphIndex index_;
    CompileOptions options_;
    int64_t opset_;
    int nodeIndex_ = 0;
    std::unordered_map<std::string, std::vector<int64_t>> shapes_;
    std::unordered_map<std::string, int> ids_;
    std::unordered_map<int64_t, int> converted_; // (value id * 2 + layout) -> converted value
    std::unordered_set<int> consumed_; // nodes fused into an earlier step
    Plan plan_;
};

const std::unordered_map<std::string, Compiler::Handler>& Compiler::operatorTable()
{
    static const std::unordered_map<std::string, Handler> table = {
        {"Conv", &Compiler::conv},
        {"Gemm", &Compiler::gemm},
        {"MatMul", &Compiler::gemm},
        {"Einsum", &Compiler::einsum},
        {"LayerNormalization", &Compiler::layerNormalization},
        {"MaxPool", &Compiler::pool},
        {"AveragePool", &Compiler::pool},
        {"GlobalAveragePool", &Compiler::globalPool},
        {"GlobalMaxPool", &Compiler::globalPool},
        {"Add", &Compiler::binary},
        {"Sub", &Compiler::binary},
        {"Mul", &Compiler::binary},
        {"Div", &Compiler::binary},
        {"Min", &Compiler::binary},
        {"Max", &Compiler::binary},
        {"Relu", &Compiler::unary},
        {"Clip", &Compiler::unary},
        {"Sigmoid", &Compiler::unary},
        {"HardSwish", &Compiler::unary},
        {"HardSigmoid", &Compiler::unary},
        {"LeakyRelu", &Compiler::unary},
        {"Elu", &Compiler::unary},
        {"Tanh", &Compiler::unary},
        {"Neg", &Compiler::unary},
        {"Abs", &Compiler::unary},
        {"Floor", &Compiler::unary},
        {"Ceil", &Compiler::unary},
        {"Sqrt", &Compiler::unary},
        {"Exp", &Compiler::unary},
        {"Log", &Compiler::unary},
        {"Erf", &Compiler::unary},
        {"Pow", &Compiler::unary},
        {"Identity", &Compiler::reshape},
        {"Dropout", &Compiler::reshape},
        {"BatchNormalization", &Compiler::batchNorm},
        {"Reshape", &Compiler::reshape},
        {"Flatten", &Compiler::reshape},
        {"Squeeze", &Compiler::reshape},
        {"Unsqueeze", &Compiler::reshape},
        {"Transpose", &Compiler::transpose},
        {"Concat", &Compiler::concat},
        {"Split", &Compiler::split},
        {"Slice", &Compiler::slice},
        {"Gather", &Compiler::gather},
        {"Softmax", &Compiler::softmax},
        {"ReduceMean", &Compiler::reduce},
        {"ReduceMax", &Compiler::reduce},
        {"Pad", &Compiler::pad},
    };
    return table;
}

Status Compiler::collectShapes()
{
    auto take = [&](const onnx::ValueInfoProto& v) {
        const auto& t = v.type().tensor_type();
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

Expected<std::vector<int64_t>> Compiler::shapeOf(
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

int Compiler::addValue(const std::string& name, std::vector<int64_t> dims, Layout layout)
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

int Compiler::valueOf(const std::string& name) const
{
    auto it = ids_.find(name);
    return it == ids_.end() ? -1 : it->second;
}

int Compiler::alias(const std::string& name, int of, std::vector<int64_t> dims)
{
    const int id = addValue(name, std::move(dims), Layout::Plain);
    plan_.values[static_cast<size_t>(id)].root = of;
    return id;
}

// The value in the wanted layout: itself, a free re-labelling when the memory order is the same,
// or a permutation computed once and shared by every reader.
int Compiler::needId(int id, Layout layout)
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

Expected<int> Compiler::need(const std::string& name, Layout layout, const onnx::NodeProto& node)
{
    const int id = valueOf(name);
    if (id < 0)
        return fail(node,
            "input '" + name + "' is neither computed by an earlier node nor a " +
                "model input (constant inputs are allowed only where the operator takes weights)");
    return needId(id, layout);
}

Expected<std::vector<float>> Compiler::constantFloats(
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

Expected<std::vector<int64_t>> Compiler::constantInts(
    const std::string& name, const onnx::NodeProto& node)
{
    const onnx::TensorProto* t = constant(name);
    std::vector<int64_t> values;
    if (!t || !onnxutil::readInt64(*t, &values))
        return fail(node, "'" + name + "' must be a constant integer tensor");
    return values;
}

template <typename S>
S* Compiler::addStep(const onnx::NodeProto& node, std::unique_ptr<S> step)
{
    if (step->node.empty())
        step->node = label(node);
    step->op = node.op_type();
    S* raw = step.get();
    plan_.steps.push_back(std::move(step));
    return raw;
}

std::string Compiler::fuseActivation(
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

// ResNet's `relu(conv(x) + identity)`: oneDNN adds the convolution's result to what its output
// buffer holds (a "sum" post-op), so the step writes over the identity's memory and the Add (and a
// Relu or Clip after it) becomes part of the step. Only where that is safe: the convolution has no
// activation of its own and its result goes to this Add alone; the other operand is computed
// already, channels-last of the same shape (no broadcasting), is not the convolution's own input,
// and nothing in its memory is a model input or output or is read after this convolution but by
// the Add.
int Compiler::fuseResidual(const onnx::NodeProto& conv, ConvStep& step, int input,
    const std::vector<int64_t>& y, std::string* outName, std::string* text)
{
    const std::string& out = conv.output(0);
    if (!options_.fuseActivations || !step.onednn || *outName != out ||
        step.range.min != -INFINITY || step.range.max != INFINITY || index_.isGraphOutput(out))
        return -1;
    const auto& readers = index_.consumers(out);
    if (readers.size() != 1)
        return -1;
    const onnx::NodeProto& add = graph_.node(readers[0]);
    if (add.op_type() != "Add" || add.input_size() != 2 || add.input(0) == add.input(1))
        return -1;
    const std::string& other = add.input(0) == out ? add.input(1) : add.input(0);
    const int id = valueOf(other);
    if (id < 0 || index_.isGraphOutput(other))
        return -1;
    const Value& v = plan_.values[static_cast<size_t>(id)];
    if (v.layout != Layout::ChannelsLast || v.dims != y)
        return -1;
    auto sum = shapes_.find(add.output(0));
    if (sum == shapes_.end() || sum->second != y)
        return -1;
    // Every value in the same memory (aliases, an earlier fused sum): no model input or output,
    // and no reader after this node but the Add. A layout conversion made for a reader (a name
    // with '@') is read by readers of the value it converts, which are checked.
    const Value* root = &plan_.rootOf(id);
    if (&plan_.rootOf(input) == root)
        return -1; // relu(conv(r) + r): the convolution would write over what it reads
    for (size_t u = 0; u < plan_.values.size(); ++u) {
        if (&plan_.rootOf(static_cast<int>(u)) != root)
            continue;
        for (int modelInput : plan_.inputs)
            if (modelInput == static_cast<int>(u))
                return -1;
        const std::string& name = plan_.values[u].name;
        if (index_.isGraphOutput(name))
            return -1;
        for (int reader : index_.consumers(name))
            if (reader != readers[0] && reader > nodeIndex_)
                return -1;
    }
    step.residual = true;
    consumed_.insert(readers[0]);
    *text += " + " + onnxutil::nodeLabel(add, readers[0]);
    std::string activation;
    *outName = fuseActivation(add, &step.range, &activation);
    *text += activation;
    return id;
}

// Pads of a convolution or pooling from its attributes: [begin..., end...] per spatial axis.
Status spatialPads(const onnx::NodeProto& node, const std::string& where,
    const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
    const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations,
    std::vector<int64_t>* pads)
{
    const size_t n = kernel.size();
    const onnx::AttributeProto* autoPad = findAttribute(node, "auto_pad");
    const std::string mode = autoPad ? autoPad->s() : "NOTSET";
    if (mode == "NOTSET") {
        *pads = intsAttribute(node, "pads");
        if (pads->empty())
            pads->assign(2 * n, 0);
    } else if (mode == "VALID") {
        pads->assign(2 * n, 0);
    } else if (mode == "SAME_UPPER" || mode == "SAME_LOWER") {
        pads->assign(2 * n, 0);
        for (size_t i = 0; i < n; ++i) {
            const int64_t out = (in[i] + strides[i] - 1) / strides[i];
            const int64_t total = std::max<int64_t>(
                0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - in[i]);
            const int64_t small = total / 2;
            (*pads)[i] = mode == "SAME_UPPER" ? small : total - small;
            (*pads)[i + n] = total - (*pads)[i];
        }
    } else {
        return Status::invalid(where + ": auto_pad '" + mode + "' is not an ONNX value");
    }
    if (pads->size() != 2 * n)
        return Status::invalid(where + ": pads has " + std::to_string(pads->size()) +
            " values, expected " + std::to_string(2 * n));
    for (size_t i = 0; i < n; ++i) {
        if ((*pads)[i] < 0 || (*pads)[i + n] < 0 || (*pads)[i] > kMaxDim ||
            (*pads)[i + n] > kMaxDim)
            return Status::unsupported(where + ": pads must be 0 to 2^31 (negative pads crop)");
        if ((*pads)[i] >= kernel[i] * dilations[i] || (*pads)[i + n] >= kernel[i] * dilations[i])
            return Status::unsupported(where + ": a pad as large as the kernel window (" +
                std::to_string(kernel[i]) + ") is not supported");
    }
    return Status();
}

// strides / dilations of `n` spatial axes: absent is all ones; each must be 1 to 2^16.
Status spatialInts(const onnx::NodeProto& node, const std::string& where, const char* name,
    size_t n, std::vector<int64_t>* out)
{
    *out = intsAttribute(node, name);
    if (out->empty())
        out->assign(n, 1);
    if (out->size() != n)
        return Status::invalid(where + ": " + name + " has " + std::to_string(out->size()) +
            " values for " + std::to_string(n) + " spatial axes");
    for (int64_t v : *out)
        if (v < 1 || v > 65536)
            return Status::invalid(
                where + ": " + name + " " + std::to_string(v) + " is out of range (1 to 65536)");
    return Status();
}

Status Compiler::conv(const onnx::NodeProto& node, int)
{
    const std::string where = label(node);
    if (node.input_size() < 2)
        return Status::invalid(where + ": Conv needs an input and weights");
    auto x = shapeOf(node.input(0), node);
    if (!x)
        return x.status();
    const onnx::TensorProto* wt = constant(node.input(1));
    if (!wt)
        return fail(node, "weights that are not a constant of the model are not supported");
    const std::vector<int64_t> w(wt->dims().begin(), wt->dims().end());
    const size_t rank = x->size();
    if (rank < 3 || rank > 5 || w.size() != rank)
        return fail(node,
            "a " + std::to_string(rank) + "-D input with " + dimsText(w) +
                " weights is not a 1-D, 2-D or 3-D convolution");
    const int64_t groups = intAttribute(node, "group", 1);
    const int64_t c = (*x)[1];
    const int64_t m = w[0];
    if (groups < 1 || groups > c || c % groups != 0 || m % groups != 0 || w[1] != c / groups)
        return Status::invalid(where + ": group " + std::to_string(groups) + " does not fit " +
            std::to_string(c) + " input channels and weights " + dimsText(w));
    const size_t n = rank - 2;
    std::vector<int64_t> kernel(w.begin() + 2, w.end());
    const auto declared = intsAttribute(node, "kernel_shape");
    if (!declared.empty() && declared != kernel)
        return Status::invalid(where + ": kernel_shape " + dimsText(declared) +
            " does not match the weights " + dimsText(w));
    std::vector<int64_t> strides, dilations, pads;
    Status s = spatialInts(node, where, "strides", n, &strides);
    if (s.ok())
        s = spatialInts(node, where, "dilations", n, &dilations);
    if (s.ok())
        s = spatialPads(node, where, {x->begin() + 2, x->end()}, kernel, strides, dilations, &pads);
    if (!s.ok())
        return s;
    auto weights = constantFloats(node.input(1), node);
    if (!weights)
        return weights.status();
    std::vector<float> bias;
    if (node.input_size() > 2 && !node.input(2).empty()) {
        auto b = constantFloats(node.input(2), node);
        if (!b)
            return b.status();
        if (static_cast<int64_t>(b->size()) != m)
            return Status::invalid(where + ": bias has " + std::to_string(b->size()) +
                " values for " + std::to_string(m) + " output channels");
        bias = std::move(b.value());
    }

    auto step = std::make_unique<ConvStep>();
    step->groups = static_cast<uint32_t>(groups);
    step->groupInputChannels = static_cast<size_t>(c / groups);
    step->groupOutputChannels = static_cast<size_t>(m / groups);
    step->bias = std::move(bias);
    // 1-D and 2-D: the last two spatial axes (1-D as height 1); 3-D: depth handled apart.
    const size_t h = n == 1 ? 0 : n - 2; // index into the spatial vectors, or none for 1-D
    const size_t wi = n - 1;
    step->kernelH = n == 1 ? 1 : static_cast<uint32_t>(kernel[h]);
    step->kernelW = static_cast<uint32_t>(kernel[wi]);
    step->strideH = n == 1 ? 1 : static_cast<uint32_t>(strides[h]);
    step->strideW = static_cast<uint32_t>(strides[wi]);
    step->dilationH = n == 1 ? 1 : static_cast<uint32_t>(dilations[h]);
    step->dilationW = static_cast<uint32_t>(dilations[wi]);
    step->padTop = n == 1 ? 0 : static_cast<uint32_t>(pads[h]);
    step->padBottom = n == 1 ? 0 : static_cast<uint32_t>(pads[h + n]);
    step->padLeft = static_cast<uint32_t>(pads[wi]);
    step->padRight = static_cast<uint32_t>(pads[wi + n]);
    step->inputH = n == 1 ? 1 : static_cast<size_t>((*x)[rank - 2]);
    step->inputW = static_cast<size_t>((*x)[rank - 1]);
    auto y = shapeOf(node.output(0), node);
    if (!y)
        return y.status();
    for (size_t i = 0; i < n; ++i) {
        const int64_t span = dilations[i] * (kernel[i] - 1) + 1;
        const int64_t padded = (*x)[2 + i] + pads[i] + pads[i + n];
        if (padded < span || (padded - span) / strides[i] + 1 != (*y)[2 + i])
            return Status::invalid(where + ": output " + dimsText(*y) +
                " does not follow from input " + dimsText(*x) + ", kernel, strides and pads");
    }
    if ((*y)[0] != (*x)[0] || (*y)[1] != m)
        return Status::invalid(where + ": output " + dimsText(*y) + " does not match " +
            std::to_string(m) + " output channels");
    if (n == 3)
        return conv3d(node, std::move(step), weights.value(), *x, *y, w, pads, strides, dilations);

    // [M][C/g][kh][kw] -> [g][M/g][kh][kw][C/g]
    const size_t cig = step->groupInputChannels;
    const size_t spatial = static_cast<size_t>(step->kernelH) * step->kernelW;
    step->kernel.resize(weights->size());
    for (size_t o = 0; o < static_cast<size_t>(m); ++o)
        for (size_t ci = 0; ci < cig; ++ci)
            for (size_t k = 0; k < spatial; ++k)
                step->kernel[(o * spatial + k) * cig + ci] =
                    (*weights)[(o * cig + ci) * spatial + k];
    step->batch = static_cast<size_t>((*x)[0]);
    auto in = need(node.input(0), Layout::ChannelsLast, node);
    if (!in)
        return in.status();
    std::string fused;
    chooseConvLibrary(*step, options_.oneDnn);
    const onnx::NodeProto& last = step->onednn ? fuseGeluAfter(node, &step->gelu, &fused) : node;
    std::string outName = fuseActivation(last, &step->range, &fused);
    plan_.macs += product(*y, 0, y->size()) * static_cast<int64_t>(cig * spatial);
    const int residual = fuseResidual(node, *step, in.value(), y.value(), &outName, &fused);
    step->node = where + fused;
    step->inputs = {in.value()};
    step->output = addValue(outName, y.value(), Layout::ChannelsLast);
    if (residual >= 0) {
        // The sum is written over the residual, whose memory it takes (fuseResidual checked
        // that nothing reads the residual afterwards).
        step->inputs.push_back(residual);
        plan_.values[static_cast<size_t>(step->output)].root = residual;
    }
    addStep(node, std::move(step));
    return Status();
}

// Which library runs a convolution: oneDNN for dense ones (one group) of at least 16 input
// channels where this build has it (x86-64); XNNPACK otherwise. Measured per step with `inspect
// --profile` on the zoo and the demo models (docs/cpu-engine.md, on oneDNN's convolutions):
// oneDNN was faster on all but a few within the noise, from 0.6 to 600 M multiply-adds, except for
// convolutions of few input channels (resnet50's first, 3 channels: 3.4 ms against 1.4 ms).
void chooseConvLibrary(ConvStep& step, bool oneDnn)
{
    // Depthwise with more taps than XNNPACK's largest depthwise kernel (5x5): it runs them as a
    // grouped GEMM, 10x slower than oneDNN's depthwise kernel (ConvNeXt's 7x7).
    const bool wideDepthwise = step.groups > 1 && step.groupInputChannels == 1 &&
        step.groupOutputChannels == 1 && step.kernelH * step.kernelW > 25;
    step.onednn = oneDnn &&
        ((step.groups == 1 && step.groupInputChannels >= 16) || wideDepthwise) && oneDnnAvailable();
}

// Which library runs a fully connected layer: oneDNN for one of at least 16 rows (two bands of 8,
// onednn_steps.cpp) where this build has it (x86-64); XNNPACK otherwise, and for fewer rows, where
// the product is a matrix-vector one bound by reading the weights. Measured on the transformer
// set's linear layers (docs/cpu-engine.md, "Convolutions and linear layers on oneDNN"): oneDNN ran
// them at 110-135 GFLOP/s on two cores against XNNPACK's 50.
void chooseFullyConnectedLibrary(FullyConnectedStep& step, bool oneDnn)
{
    step.onednn = oneDnn && step.rows >= 16 && oneDnnAvailable();
}

// A 3-D convolution as a 2-D one: its depth taps gathered beside the channels (unless the kernel
// has one tap at stride 1 without depth padding, where every frame is an image of the batch).
Status Compiler::conv3d(const onnx::NodeProto& node, std::unique_ptr<ConvStep> step,
    const std::vector<float>& weights, const std::vector<int64_t>& x, const std::vector<int64_t>& y,
    const std::vector<int64_t>& w, const std::vector<int64_t>& pads,
    const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations)
{
    const size_t taps = static_cast<size_t>(w[2]);
    const size_t groups = step->groups;
    const size_t cig = step->groupInputChannels;
    const size_t m = static_cast<size_t>(w[0]);
    const size_t spatial = static_cast<size_t>(w[3] * w[4]);
    // [M][C/g][kd][kh][kw] -> [g][M/g][kh][kw][kd][C/g]
    step->kernel.resize(weights.size());
    for (size_t o = 0; o < m; ++o)
        for (size_t ci = 0; ci < cig; ++ci)
            for (size_t t = 0; t < taps; ++t)
                for (size_t k = 0; k < spatial; ++k)
                    step->kernel[((o * spatial + k) * taps + t) * cig + ci] =
                        weights[((o * cig + ci) * taps + t) * spatial + k];
    step->groupInputChannels = taps * cig;
    auto in = need(node.input(0), Layout::ChannelsLast, node);
    if (!in)
        return in.status();
    int convInput = in.value();
    const bool direct = taps == 1 && strides[0] == 1 && pads[0] == 0 && pads[3] == 0;
    if (!direct) {
        auto gather = std::make_unique<GatherTapsStep>();
        gather->node = label(node) + " (depth taps)";
        gather->batch = static_cast<size_t>(x[0]);
        gather->inputDepth = static_cast<size_t>(x[2]);
        gather->outputDepth = static_cast<size_t>(y[2]);
        gather->pixels = static_cast<size_t>(x[3] * x[4]);
        gather->groups = groups;
        gather->channels = cig;
        gather->taps = taps;
        gather->stride = static_cast<size_t>(strides[0]);
        gather->dilation = static_cast<size_t>(dilations[0]);
        gather->pad = pads[0];
        gather->inputs = {in.value()};
        gather->output = addValue(node.output(0) + "@taps",
            {y[0] * y[2], x[3], x[4], static_cast<int64_t>(groups * taps * cig)}, Layout::Plain);
        convInput = gather->output;
        addStep(node, std::move(gather));
    }
    step->batch = static_cast<size_t>(y[0] * y[2]);
    std::string fused;
    const std::string outName = fuseActivation(node, &step->range, &fused);
    step->node = label(node) + fused;
    step->inputs = {convInput};
    step->output = addValue(outName, y, Layout::ChannelsLast);
    plan_.macs += product(y, 0, y.size()) * static_cast<int64_t>(taps * cig * spatial);
    chooseConvLibrary(*step, options_.oneDnn);
    addStep(node, std::move(step));
    return Status();
}

Status Compiler::gemm(const onnx::NodeProto& node, int)
{
    const std::string where = label(node);
    const bool isGemm = node.op_type() == "Gemm";
    if (node.input_size() < 2)
        return Status::invalid(where + ": needs two inputs");
    auto a = shapeOf(node.input(0), node);
    if (!a)
        return a.status();
    const onnx::TensorProto* bt = constant(node.input(1));
    if (!isGemm && (!bt || bt->dims_size() != 2))
        return batchMatMul(node);
    if (!bt)
        return fail(node, "a B that is not a constant of the model is not supported");
    const std::vector<int64_t> b(bt->dims().begin(), bt->dims().end());
    if (b.size() != 2)
        return fail(
            node, "a constant operand of shape " + dimsText(b) + " (only 2-D is supported)");
    const bool transA = isGemm && intAttribute(node, "transA", 0) != 0;
    const bool transB = isGemm && intAttribute(node, "transB", 0) != 0;
    if (transA)
        return fail(node, "transA=1 is not supported");
    if (isGemm && a->size() != 2)
        return Status::invalid(where + ": Gemm's A must be 2-D, not " + dimsText(*a));
    const int64_t k = a->back();
    const int64_t outC = transB ? b[0] : b[1];
    if ((transB ? b[1] : b[0]) != k)
        return Status::invalid(where + ": A " + dimsText(*a) + " and B " + dimsText(b) +
            (transB ? " (transposed)" : "") + " do not multiply");
    auto weights = constantFloats(node.input(1), node);
    if (!weights)
        return weights.status();
    const float alpha = isGemm ? floatAttribute(node, "alpha", 1.0f) : 1.0f;
    const float beta = isGemm ? floatAttribute(node, "beta", 1.0f) : 1.0f;
    auto step = std::make_unique<FullyConnectedStep>();
    step->inputChannels = static_cast<size_t>(k);
    step->outputChannels = static_cast<size_t>(outC);
    step->rows = static_cast<size_t>(product(*a, 0, a->size() - 1));
    step->kernel.resize(weights->size());
    for (int64_t o = 0; o < outC; ++o)
        for (int64_t i = 0; i < k; ++i)
            step->kernel[static_cast<size_t>(o * k + i)] =
                alpha * (*weights)[static_cast<size_t>(transB ? o * k + i : i * outC + o)];
    if (isGemm && node.input_size() > 2 && !node.input(2).empty()) {
        const onnx::TensorProto* ct = constant(node.input(2));
        if (!ct)
            return fail(node, "a C that is not a constant of the model is not supported");
        // C broadcasts to [rows, outC]: only a C the same for every row is a bias ([], [1],
        // [outC], [1, 1] or [1, outC]); one that varies along the rows ([rows, 1] or a matrix)
        // is not, even where its element count happens to equal outC.
        const std::vector<int64_t> cd(ct->dims().begin(), ct->dims().end());
        const bool perColumn = !cd.empty() && cd.back() == outC;
        const bool bias = cd.size() <= 2 && (cd.empty() || cd.back() == 1 || perColumn) &&
            (cd.size() < 2 || cd[0] == 1);
        if (!bias)
            return fail(node,
                "a C of shape " + dimsText(cd) + " (only a bias the same for every row, of 1 or " +
                    std::to_string(outC) + " values, is supported)");
        auto c = constantFloats(node.input(2), node);
        if (!c)
            return c.status();
        if (c->size() == 1 && outC != 1)
            c->assign(static_cast<size_t>(outC), (*c)[0]);
        if (static_cast<int64_t>(c->size()) != outC)
            return Status::invalid(where + ": C " + dimsText(cd) + " does not broadcast to " +
                std::to_string(outC) + " columns");
        step->bias = std::move(c.value());
        for (float& v : step->bias)
            v *= beta;
    }
    auto in = need(node.input(0), Layout::Plain, node);
    if (!in)
        return in.status();
    auto y = shapeOf(node.output(0), node);
    if (!y)
        return y.status();
    if (product(*y, 0, y->size()) != static_cast<int64_t>(step->rows) * outC)
        return Status::invalid(where + ": output " + dimsText(*y) + " does not match " +
            std::to_string(step->rows) + " rows of " + std::to_string(outC));
    std::string fused;
    // nn.Linear exports as MatMul then Add of its bias: the bias joins the product.
    const onnx::NodeProto* biasAdd = nullptr;
    if (!isGemm && options_.fuseActivations) {
        const int add = onlyReader(node.output(0), "Add");
        if (add >= 0) {
            const onnx::NodeProto& plus = graph_.node(add);
            const std::string& other =
                plus.input(0) == node.output(0) ? plus.input(1) : plus.input(0);
            const onnx::TensorProto* t = constant(other);
            std::vector<float> values;
            if (t && t->dims_size() == 1 && t->dims(0) == outC &&
                onnxutil::readFloat(*t, &values)) {
                step->bias = std::move(values);
                biasAdd = &plus;
                consumed_.insert(add);
                fused = " + " + onnxutil::nodeLabel(plus, add);
            }
        }
    }
    const onnx::NodeProto* last = biasAdd ? biasAdd : &node;
    chooseFullyConnectedLibrary(*step, options_.oneDnn);
    if (step->onednn)
        last = &fuseGeluAfter(*last, &step->gelu, &fused);
    std::string activation;
    const std::string outName = fuseActivation(*last, &step->range, &activation);
    step->node = where + fused + activation;
    step->inputs = {in.value()};
    step->output = addValue(outName, y.value(), Layout::Plain);
    plan_.macs += static_cast<int64_t>(step->rows) * k * outC;
    addStep(node, std::move(step));
    return Status();
}

// MatMul with numpy's semantics where the fully connected path cannot take it: B computed at run
// time (attention's Q.K^T and P.V) or constant of rank other than 2. Batch dimensions broadcast;
// a 1-D A is a row and a 1-D B a column, their unit dimension dropped from the output.
Status Compiler::batchMatMul(const onnx::NodeProto& node)
{
    const std::string where = label(node);
    if (constant(node.input(0)))
        return fail(node, "a constant A with a computed B is not supported");
    auto a = shapeOf(node.input(0), node);
    if (!a)
        return a.status();
    const onnx::TensorProto* bt = constant(node.input(1));
    auto b = bt
        ? Expected<std::vector<int64_t>>(std::vector<int64_t>(bt->dims().begin(), bt->dims().end()))
        : shapeOf(node.input(1), node);
    if (!b)
        return b.status();
    auto y = shapeOf(node.output(0), node);
    if (!y)
        return y.status();
    std::vector<int64_t> da = *a;
    std::vector<int64_t> db = *b;
    if (da.empty() || db.empty())
        return Status::invalid(where + ": MatMul of a scalar");
    if (da.size() == 1)
        da.insert(da.begin(), 1);
    if (db.size() == 1)
        db.push_back(1);
    const int64_t m = da[da.size() - 2];
    const int64_t k = da.back();
    const int64_t n = db.back();
    if (db[db.size() - 2] != k)
        return Status::invalid(
            where + ": A " + dimsText(*a) + " and B " + dimsText(*b) + " do not multiply");
    const std::vector<int64_t> ba(da.begin(), da.end() - 2);
    const std::vector<int64_t> bb(db.begin(), db.end() - 2);
    const size_t rank = std::max(ba.size(), bb.size());
    std::vector<int64_t> batch(rank, 1);
    std::vector<int64_t> strideA(rank, 0), strideB(rank, 0);
    int64_t sa = m * k;
    int64_t sb = k * n;
    for (size_t i = 0; i < rank; ++i) {
        const size_t d = rank - 1 - i; // right-aligned
        const int64_t ea = i < ba.size() ? ba[ba.size() - 1 - i] : 1;
        const int64_t eb = i < bb.size() ? bb[bb.size() - 1 - i] : 1;
        if (ea != eb && ea != 1 && eb != 1)
            return Status::invalid(where + ": the batch dimensions of A " + dimsText(*a) +
                " and B " + dimsText(*b) + " do not broadcast");
        batch[d] = std::max(ea, eb);
        strideA[d] = ea == 1 ? 0 : sa;
        strideB[d] = eb == 1 ? 0 : sb;
        sa *= ea;
        sb *= eb;
    }
    const int64_t batches = product(batch, 0, batch.size());
    if (product(*y, 0, y->size()) != batches * m * n)
        return Status::invalid(where + ": output " + dimsText(*y) + " is not A " + dimsText(*a) +
            " times B " + dimsText(*b));
    auto step = std::make_unique<BatchMatMulStep>();
    step->m = static_cast<size_t>(m);
    step->k = static_cast<size_t>(k);
    step->n = static_cast<size_t>(n);
    std::vector<int64_t> index(rank, 0);
    for (int64_t e = 0; e < batches; ++e) {
        int64_t oa = 0;
        int64_t ob = 0;
        for (size_t d = 0; d < rank; ++d) {
            oa += index[d] * strideA[d];
            ob += index[d] * strideB[d];
        }
        step->aOffsets.push_back(static_cast<size_t>(oa));
        step->bOffsets.push_back(static_cast<size_t>(ob));
        for (size_t d = rank; d-- > 0;) {
            if (++index[d] < batch[d])
                break;
            index[d] = 0;
        }
    }
    auto in = need(node.input(0), Layout::Plain, node);
    if (!in)
        return in.status();
    step->inputs = {in.value()};
    if (bt) {
        auto weights = constantFloats(node.input(1), node);
        if (!weights)
            return weights.status();
        step->constantB = std::move(weights.value());
    } else {
        auto other = need(node.input(1), Layout::Plain, node);
        if (!other)
            return other.status();
        step->inputs.push_back(other.value());
    }
    step->node = where;
    step->output = addValue(node.output(0), y.value(), Layout::Plain);
    plan_.macs += batches * m * k * n;
    addStep(node, std::move(step));
    return Status();
}

// Einsum reaches the compiler only where preparation's einsum-matmul pass left it: an equation
// that is no batched matrix product of two operands.
Status Compiler::einsum(const onnx::NodeProto& node, int)
{
    return fail(node,
        "equation '" + stringAttribute(node, "equation", "") +
            "' (only batched matrix products of two operands are supported)");
}

Status Compiler::pool(const onnx::NodeProto& node, int)
{
    const std::string where = label(node);
    const bool isMax = node.op_type() == "MaxPool";
    if (node.output_size() > 1 && !node.output(1).empty())
        return fail(node, "MaxPool's indices output is not supported");
    if (intAttribute(node, "storage_order", 0) != 0)
        return fail(node, "storage_order=1 is not supported");
    auto x = shapeOf(node.input(0), node);
    if (!x)
        return x.status();
    const size_t rank = x->size();
    if (rank < 3 || rank > 5)
        return fail(node, "a " + std::to_string(rank) + "-D input (1-D to 3-D pooling only)");
    const size_t n = rank - 2;
    const auto kernel = intsAttribute(node, "kernel_shape");
    if (kernel.size() != n)
        return Status::invalid(where + ": kernel_shape must have " + std::to_string(n) + " values");
    for (int64_t k : kernel)
        if (k < 1 || k > 65536)
            return Status::invalid(
                where + ": kernel_shape " + dimsText(kernel) + " is out of range");
    std::vector<int64_t> strides, dilations, pads;
    Status s = spatialInts(node, where, "strides", n, &strides);
    if (s.ok())
        s = spatialInts(node, where, "dilations", n, &dilations);
    if (s.ok() && !isMax && dilations != std::vector<int64_t>(n, 1))
        return fail(node, "AveragePool with dilations is not supported");
    if (s.ok())
        s = spatialPads(node, where, {x->begin() + 2, x->end()}, kernel, strides, dilations, &pads);
    if (!s.ok())
        return s;
    const bool anyPad = std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p > 0; });
    // count_include_pad=1: the pads become zeros of an explicitly padded copy, which the pool
    // then counts like any other element (the pools leave their own padding out of the count).
    const bool includePad = !isMax && intAttribute(node, "count_include_pad", 0) != 0 && anyPad;
    const std::vector<int64_t> explicitPads = pads;
    auto y = shapeOf(node.output(0), node);
    if (!y)
        return y.status();
    // ceil_mode: the last window may hang past the end; it becomes extra padding at the end,
    // which both pools leave out of the window (max ignores it, average does not count it).
    for (size_t i = 0; i < n; ++i) {
        const int64_t span = dilations[i] * (kernel[i] - 1) + 1;
        const int64_t padded = (*x)[2 + i] + pads[i] + pads[i + n];
        const int64_t out = (*y)[2 + i];
        if (padded < span)
            return Status::invalid(where + ": the window is larger than the padded input");
        const int64_t floorOut = (padded - span) / strides[i] + 1;
        const int64_t need = (out - 1) * strides[i] + span - padded;
        if (out != floorOut && !(out == floorOut + 1 && need > 0 && need < strides[i]))
            return Status::invalid(where + ": output " + dimsText(*y) +
                " does not follow from input " + dimsText(*x) + " and the window");
        if (need > 0)
            pads[i + n] += need;
    }
    auto in = need(node.input(0), Layout::ChannelsLast, node);
    if (!in)
        return in.status();
    int source = in.value();
    if (includePad) {
        auto padStep = std::make_unique<PadStep>();
        padStep->node = where + " (count_include_pad: the padding)";
        std::vector<int64_t> padded = *x;
        for (int axis : physicalOrder(static_cast<int>(rank), Layout::ChannelsLast)) {
            const size_t a = static_cast<size_t>(axis);
            const int64_t before = a >= 2 ? explicitPads[a - 2] : 0;
            const int64_t after = a >= 2 ? explicitPads[a - 2 + n] : 0;
            padStep->inputShape.push_back(static_cast<size_t>((*x)[a]));
            padStep->before.push_back(static_cast<size_t>(before));
            padStep->after.push_back(static_cast<size_t>(after));
            padded[a] += before + after;
        }
        // What is left of the pool's own padding: ceil_mode's overhang at the end.
        for (size_t i = 0; i < n; ++i) {
            pads[i + n] -= explicitPads[i + n];
            pads[i] = 0;
        }
        padStep->inputs = {source};
        padStep->output = addValue(node.output(0) + "@padded", padded, Layout::ChannelsLast);
        source = padStep->output;
        *x = padded;
        addStep(node, std::move(padStep));
    }
    if (n == 3) {
        auto step = std::make_unique<Pool3dStep>();
        step->max = isMax;
        step->batch = (*x)[0];
        step->channels = (*x)[1];
        for (size_t i = 0; i < 3; ++i) {
            step->inDims[i] = (*x)[2 + i];
            step->outDims[i] = (*y)[2 + i];
            step->kernel[i] = kernel[i];
            step->stride[i] = strides[i];
            step->padBegin[i] = pads[i];
            step->dilation[i] = dilations[i];
        }
        step->inputs = {source};
        step->output = addValue(node.output(0), y.value(), Layout::ChannelsLast);
        addStep(node, std::move(step));
        return Status();
    }
    auto step = std::make_unique<PoolStep>();
    step->max = isMax;
    const size_t h = 0, wi = n - 1; // 2-D: [height, width]; 1-D: [width]
    step->kernelH = n == 1 ? 1 : static_cast<uint32_t>(kernel[h]);
    step->kernelW = static_cast<uint32_t>(kernel[wi]);
    step->strideH = n == 1 ? 1 : static_cast<uint32_t>(strides[h]);
    step->strideW = static_cast<uint32_t>(strides[wi]);
    step->dilationH = n == 1 ? 1 : static_cast<uint32_t>(dilations[h]);
    step->dilationW = static_cast<uint32_t>(dilations[wi]);
    step->padTop = n == 1 ? 0 : static_cast<uint32_t>(pads[h]);
    step->padBottom = n == 1 ? 0 : static_cast<uint32_t>(pads[h + n]);
    step->padLeft = static_cast<uint32_t>(pads[wi]);
    step->padRight = static_cast<uint32_t>(pads[wi + n]);
    step->inputH = n == 1 ? 1 : static_cast<size_t>((*x)[2]);
    step->inputW = static_cast<size_t>(x->back());
    step->channels = static_cast<size_t>((*x)[1]);
    step->batch = static_cast<size_t>((*x)[0]);
    // XNNPACK's pools need a window of more than one pixel; a 1x1 window at stride 1 is a copy.
    if (step->kernelH * step->kernelW == 1 && step->strideH == 1 && step->strideW == 1) {
        alias(node.output(0), source, y.value());
        plan_.values.back().layout = Layout::ChannelsLast;
        return Status();
    }
    std::string fused;
    const std::string outName = fuseActivation(node, &step->range, &fused);
    step->node = where + fused;
    step->inputs = {source};
    step->output = addValue(outName, y.value(), Layout::ChannelsLast);
    addStep(node, std::move(step));
    return Status();
}

Status Compiler::globalPool(const onnx::NodeProto& node, int)
{
    auto x = shapeOf(node.input(0), node);
    if (!x)
        return x.status();
    auto y = shapeOf(node.output(0), node);
    if (!y)
        return y.status();
    if (x->size() < 3)
        return Status::invalid(label(node) + ": input " + dimsText(*x) + " has no spatial axes");
    auto in = need(node.input(0), Layout::ChannelsLast, node);
    if (!in)
        return in.status();
    if (node.op_type() == "GlobalMaxPool") {
        auto step = std::make_unique<ReduceStep>();
        step->max = true;
        step->inputDims = physicalDims(*x, Layout::ChannelsLast);
        step->reduce.assign(x->size(), true);
        step->reduce.front() = false;
        step->reduce.back() = false;
        step->inputs = {in.value()};
        step->output = addValue(node.output(0), y.value(), Layout::ChannelsLast);
        addStep(node, std::move(step));
        return Status();
    }
    auto step = std::make_unique<GlobalAveragePoolStep>();
    step->batch = static_cast<size_t>((*x)[0]);
    step->channels = static_cast<size_t>((*x)[1]);
    step->width = static_cast<size_t>(product(*x, 2, x->size()));
    std::string fused;
    const std::string outName = fuseActivation(node, &step->range, &fused);
    step->node = label(node) + fused;
    step->inputs = {in.value()};
    step->output = addValue(outName, y.value(), Layout::ChannelsLast);
    addStep(node, std::move(step));
    return Status();
}

int64_t normalizedAxis(int64_t axis, size_t rank)
{
    return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

// The rank-aligned dims of an operand broadcast against `rank` dimensions.
std::vector<int64_t> aligned(const std::vector<int64_t>& dims, size_t rank)
{
    std::vector<int64_t> out(rank - dims.size(), 1);
    out.insert(out.end(), dims.begin(), dims.end());
    return out;
}

// The other operand of binary node `node`, given one of them; empty when `known` is not one.
std::string Compiler::otherOperand(int node, const std::string& known) const
{
    const auto& op = graph_.node(node);
    if (op.input_size() != 2)
        return "";
    return op.input(0) == known ? op.input(1) : op.input(1) == known ? op.input(0) : "";
}

std::optional<Compiler::GeluMatch> Compiler::matchGelu(const onnx::NodeProto& first) const
{
    if (!options_.fuseActivations)
        return std::nullopt;
    auto m = matchGeluErf(first);
    return m ? m : matchGeluTanh(first);
}

// The erf form (nn.GELU()): Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5), the division also as a
// multiplication by 1/sqrt 2 and every Add and Mul in either operand order; first: the Div.
std::optional<Compiler::GeluMatch> Compiler::matchGeluErf(const onnx::NodeProto& first) const
{
    if (first.input_size() != 2 || (first.op_type() != "Div" && first.op_type() != "Mul"))
        return std::nullopt;
    // x / c, x * c or c * x.
    const bool constantFirst = first.op_type() == "Mul" && constant(first.input(0));
    GeluMatch m;
    m.x = first.input(constantFirst ? 1 : 0);
    const auto divisor = scalarConstant(first.input(constantFirst ? 0 : 1));
    constexpr float kSqrt2 = 1.41421356f;
    const bool scaled = divisor &&
        (first.op_type() == "Div" ? std::fabs(*divisor - kSqrt2) < 1e-6f
                                  : std::fabs(*divisor - 1.0f / kSqrt2) < 1e-6f);
    if (!scaled)
        return std::nullopt;
    const auto out = [&](int n) -> const std::string& { return graph_.node(n).output(0); };
    const int erf = onlyReader(first.output(0), "Erf");
    const int plusOne = erf < 0 ? -1 : onlyReader(out(erf), "Add");
    if (plusOne < 0 || scalarConstant(otherOperand(plusOne, out(erf))) != 1.0f)
        return std::nullopt;
    const int times = onlyReader(out(plusOne), "Mul");
    if (times < 0 || otherOperand(times, out(plusOne)) != m.x)
        return std::nullopt;
    const int half = onlyReader(out(times), "Mul");
    if (half < 0 || scalarConstant(otherOperand(half, out(times))) != 0.5f)
        return std::nullopt;
    m.rest = {erf, plusOne, times, half};
    m.last = half;
    return m;
}

// The tanh form (nn.GELU(approximate="tanh")), as torch.onnx exports it:
// Mul(Mul(x, 0.5), Add(Tanh(Mul(Add(x, Mul(Mul(Mul(x, x), x), 0.044715)), sqrt(2/pi))), 1)),
// every Add and Mul in either operand order; first: the Mul of x by itself.
std::optional<Compiler::GeluMatch> Compiler::matchGeluTanh(const onnx::NodeProto& first) const
{
    if (first.op_type() != "Mul" || first.input_size() != 2 || first.input(0) != first.input(1))
        return std::nullopt;
    GeluMatch m;
    m.form = GeluForm::Tanh;
    m.x = first.input(0);
    const auto out = [&](int n) -> const std::string& { return graph_.node(n).output(0); };
    const auto near = [](std::optional<float> v, float want) {
        return v && std::fabs(*v - want) < 1e-6f;
    };
    const int cube = onlyReader(first.output(0), "Mul");
    if (cube < 0 || otherOperand(cube, first.output(0)) != m.x)
        return std::nullopt;
    const int kappa = onlyReader(out(cube), "Mul");
    if (kappa < 0 || !near(scalarConstant(otherOperand(kappa, out(cube))), 0.044715f))
        return std::nullopt;
    const int sum = onlyReader(out(kappa), "Add");
    if (sum < 0 || otherOperand(sum, out(kappa)) != m.x)
        return std::nullopt;
    const int beta = onlyReader(out(sum), "Mul");
    if (beta < 0 || !near(scalarConstant(otherOperand(beta, out(sum))), 0.7978845608f))
        return std::nullopt;
    const int tanh = onlyReader(out(beta), "Tanh");
    const int plusOne = tanh < 0 ? -1 : onlyReader(out(tanh), "Add");
    if (plusOne < 0 || scalarConstant(otherOperand(plusOne, out(tanh))) != 1.0f)
        return std::nullopt;
    const int product = onlyReader(out(plusOne), "Mul");
    if (product < 0)
        return std::nullopt;
    // The product's other operand is x * 0.5, read by the product alone and not compiled yet.
    const std::string halfX = otherOperand(product, out(plusOne));
    const int half = index_.producer(halfX);
    if (half < 0 || onlyReader(halfX, "Mul") != product || valueOf(halfX) >= 0 ||
        scalarConstant(otherOperand(half, m.x)) != 0.5f)
        return std::nullopt;
    m.rest = {cube, kappa, sum, beta, tanh, plusOne, half, product};
    m.last = product;
    return m;
}

// A GELU right after `producer` joins the step as one of oneDNN's post-ops: when every reader of
// the producer's output is a node of the pattern, those nodes are consumed, *gelu set to its form
// and the GELU's last node returned (else `producer`).
const onnx::NodeProto& Compiler::fuseGeluAfter(
    const onnx::NodeProto& producer, GeluForm* gelu, std::string* text)
{
    const std::string& out = producer.output(0);
    const auto& readers = index_.consumers(out);
    if (readers.size() < 2 || index_.isGraphOutput(out))
        return producer;
    for (int r : readers) {
        const auto m = matchGelu(graph_.node(r));
        if (!m || m->x != out)
            continue;
        const bool inside = std::all_of(readers.begin(), readers.end(), [&](int n) {
            return n == r || std::find(m->rest.begin(), m->rest.end(), n) != m->rest.end();
        });
        if (!inside)
            continue;
        *gelu = m->form;
        consumed_.insert(r);
        consumed_.insert(m->rest.begin(), m->rest.end());
        *text += m->form == GeluForm::Tanh ? " + GELU (tanh)" : " + GELU";
        return graph_.node(m->last);
    }
    return producer;
}

// GELU as PyTorch exports it, either form (matchGeluErf, matchGeluTanh), from its first node; one
// step when the intermediates are read only inside the pattern.
Status Compiler::fuseGelu(const onnx::NodeProto& first, bool* fused)
{
    *fused = false;
    const auto m = matchGelu(first);
    const int in = m ? valueOf(m->x) : -1;
    if (in < 0)
        return Status();
    // Element-wise: in whatever layout x has (MaxViT's GELUs sit between convolutions).
    const Value v = plan_.values[static_cast<size_t>(in)];
    auto step = std::make_unique<GeluStep>();
    step->count = static_cast<size_t>(v.count());
    step->form = m->form;
    step->node = label(first) + " to " + onnxutil::nodeLabel(graph_.node(m->last), m->last) +
        (m->form == GeluForm::Tanh ? " (GELU, tanh)" : " (GELU)");
    step->inputs = {in};
    step->output = addValue(graph_.node(m->last).output(0), v.dims, v.layout);
    consumed_.insert(m->rest.begin(), m->rest.end());
    addStep(first, std::move(step))->op = "Gelu";
    *fused = true;
    return Status();
}

Status Compiler::binary(const onnx::NodeProto& node, int)
{
    if (node.op_type() == "Div" || node.op_type() == "Mul") {
        bool fused = false;
        if (Status s = fuseGelu(node, &fused); !s || fused)
            return s;
    }
    static const std::unordered_map<std::string, BinaryKind> kinds = {{"Add", BinaryKind::Add},
        {"Sub", BinaryKind::Subtract}, {"Mul", BinaryKind::Multiply}, {"Div", BinaryKind::Divide},
        {"Min", BinaryKind::Minimum}, {"Max", BinaryKind::Maximum}};
    const std::string where = label(node);
    const bool variadic = node.op_type() == "Min" || node.op_type() == "Max";
    if (variadic && node.input_size() == 1) {
        // The minimum or maximum of one tensor is that tensor.
        auto computed = computedInput(node);
        if (!computed)
            return computed.status();
        const int source = computed.value();
        const Layout layout = plan_.values[static_cast<size_t>(source)].layout;
        const std::vector<int64_t> dims = plan_.values[static_cast<size_t>(source)].dims;
        const int id = alias(node.output(0), source, dims);
        plan_.values[static_cast<size_t>(id)].layout = layout;
        return Status();
    }
    if (variadic && node.input_size() > 2) {
        // Pairwise from the left, ((a, b), c), ..., each intermediate of the broadcast shape.
        std::string acc = node.input(0);
        for (int i = 1; i < node.input_size(); ++i) {
            const bool lastPair = i + 1 == node.input_size();
            const std::string out =
                lastPair ? node.output(0) : node.output(0) + "@" + std::to_string(i);
            if (!lastPair) {
                std::vector<int64_t> a, b;
                for (int k = 0; k < 2; ++k) {
                    const std::string& name = k == 0 ? acc : node.input(i);
                    std::vector<int64_t>& dims = k == 0 ? a : b;
                    if (const onnx::TensorProto* t = constant(name))
                        dims.assign(t->dims().begin(), t->dims().end());
                    else if (shapes_.count(name))
                        dims = shapes_.at(name);
                    else
                        return fail(node, "the shape of '" + name + "' is unknown");
                }
                const size_t r = std::max(a.size(), b.size());
                a = aligned(a, r);
                b = aligned(b, r);
                std::vector<int64_t> dims(r);
                for (size_t d = 0; d < r; ++d)
                    dims[d] = a[d] == 1 ? b[d] : a[d];
                shapes_[out] = dims;
            }
            onnx::NodeProto pair;
            pair.set_op_type(node.op_type());
            pair.set_name(node.name());
            pair.add_input(acc);
            pair.add_input(node.input(i));
            pair.add_output(out);
            Status s = binary(pair, 0);
            if (!s.ok())
                return s;
            acc = out;
        }
        return Status();
    }
    if (node.input_size() != 2)
        return fail(
            node, std::to_string(node.input_size()) + " inputs (the xnnpack backend takes two)");
    auto y = shapeOf(node.output(0), node);
    if (!y)
        return y.status();
    const size_t rank = y->size();
    // Before opset 7, broadcast=1 with an axis aligns B's first dimension with A's axis `axis`;
    // only the trailing alignment, which NumPy's rules give, is supported.
    if (opset_ < 7 && intAttribute(node, "broadcast", 0) != 0 && findAttribute(node, "axis")) {
        std::vector<int64_t> b;
        const onnx::TensorProto* bt = constant(node.input(1));
        if (bt)
            b.assign(bt->dims().begin(), bt->dims().end());
        else if (const int id = valueOf(node.input(1)); id >= 0)
            b = plan_.values[static_cast<size_t>(id)].dims;
        if (normalizedAxis(intAttribute(node, "axis", 0), rank) !=
            static_cast<int64_t>(rank) - static_cast<int64_t>(b.size()))
            return fail(node,
                "broadcast=1 with axis " + std::to_string(intAttribute(node, "axis", 0)) +
                    " (B aligned other than with A's trailing axes) is not supported");
    }
    // The output is channels-last when a computed operand of full rank is.
    Layout layout = Layout::Plain;
    for (int i = 0; i < 2; ++i) {
        const int id = valueOf(node.input(i));
        if (id >= 0 && plan_.values[static_cast<size_t>(id)].dims.size() == rank &&
            plan_.values[static_cast<size_t>(id)].layout == Layout::ChannelsLast)
            layout = Layout::ChannelsLast;
    }
    auto step = std::make_unique<BinaryStep>();
    step->kind = kinds.at(node.op_type());
    for (int i = 0; i < 2; ++i) {
        std::vector<size_t>& shape = i == 0 ? step->shapeA : step->shapeB;
        std::vector<float>& data = i == 0 ? step->constantA : step->constantB;
        const onnx::TensorProto* t = constant(node.input(i));
        std::vector<int64_t> dims;
        if (t) {
            dims.assign(t->dims().begin(), t->dims().end());
            if (dims.size() > rank)
                return Status::invalid(where + ": constant " + dimsText(dims) +
                    " has more dimensions than the output " + dimsText(*y));
            auto v = constantFloats(node.input(i), node);
            if (!v)
                return v.status();
            dims = aligned(dims, rank);
            data = toLayout(v.value(), dims, layout);
            if (data.empty())
                data.push_back(0); // never read: an empty tensor broadcasts to nothing
        } else {
            auto in = need(node.input(i), layout, node);
            if (!in)
                return in.status();
            const Value& v = plan_.values[static_cast<size_t>(in.value())];
            dims = aligned(v.dims, rank);
            // A lower-rank operand is read as it lies: fine only where the re-ordered axes are 1.
            if (v.dims.size() < rank && !sameMemoryOrder(dims, Layout::Plain, layout))
                return fail(node,
                    "broadcasting " + dimsText(v.dims) + " against " + dimsText(*y) +
                        " across the channel axis is not supported");
            step->inputs.push_back(in.value());
        }
        for (size_t d = 0; d < rank; ++d)
            if (dims[d] != 1 && dims[d] != (*y)[d])
                return Status::invalid(where + ": operand " + dimsText(dims) +
                    " does not broadcast to " + dimsText(*y));
        for (int64_t d : physicalDims(dims, layout))
            shape.push_back(static_cast<size_t>(d));
    }
    std::string fused;
    std::string outName = node.output(0);
    if (step->kind == BinaryKind::Add || step->kind == BinaryKind::Subtract ||
        step->kind == BinaryKind::Multiply || step->kind == BinaryKind::Divide)
        outName = fuseActivation(node, &step->range, &fused);
    step->node = where + fused;
    step->output = addValue(outName, y.value(), layout);
    addStep(node, std::move(step));
    return Status();
}

Status Compiler::unary(const onnx::NodeProto& node, int)
{
    const std::string& op = node.op_type();
    // Element-wise: the output keeps the input's layout.
    auto computed = computedInput(node);
    if (!computed)
        return computed.status();
    const int source = computed.value();
    // A copy: adding values (a layout conversion, the output) may move plan_.values.
    const Value v = plan_.values[static_cast<size_t>(source)];
    const std::vector<int64_t> dims = v.dims;
    const Layout layout = v.layout;
    const size_t count = static_cast<size_t>(v.count());
    // Pow by a constant scalar exponent: x*x and the square root on XNNPACK, the identity an
    // alias (decomposed LayerNorms square the deviation: Pow(d, 2)); any other exponent by the
    // reference kernel. A computed or per-element exponent is refused.
    float exponent = 1.0f;
    if (op == "Pow") {
        if (node.input_size() != 2 || !constant(node.input(1)))
            return fail(node, "only a constant exponent is supported");
        const auto* e = constant(node.input(1));
        if (onnxutil::elementCount(*e) != 1)
            return fail(node, "only a scalar exponent is supported");
        if (e->data_type() == onnx::TensorProto_DataType_FLOAT) {
            auto value = constantFloats(node.input(1), node);
            if (!value)
                return value.status();
            exponent = (*value)[0];
        } else {
            auto value = constantInts(node.input(1), node);
            if (!value)
                return value.status();
            exponent = static_cast<float>((*value)[0]);
        }
        if (exponent == 1.0f) {
            const int id = alias(node.output(0), source, dims);
            plan_.values[static_cast<size_t>(id)].layout = layout;
            return Status();
        }
    }
    static const std::unordered_map<std::string, UnaryKind> xnn = {{"Relu", UnaryKind::Clamp},
        {"Clip", UnaryKind::Clamp}, {"Sigmoid", UnaryKind::Sigmoid},
        {"HardSwish", UnaryKind::HardSwish}, {"LeakyRelu", UnaryKind::LeakyRelu},
        {"Elu", UnaryKind::Elu}, {"Neg", UnaryKind::Negate}, {"Abs", UnaryKind::Abs},
        {"Floor", UnaryKind::Floor}, {"Ceil", UnaryKind::Ceil}, {"Sqrt", UnaryKind::Sqrt}};
    auto it = xnn.find(op);
    const bool square = op == "Pow" && exponent == 2.0f;
    const bool root = op == "Pow" && exponent == 0.5f;
    if (it != xnn.end() || square || root) {
        auto step = std::make_unique<UnaryStep>();
        step->kind = square ? UnaryKind::Square : root ? UnaryKind::Sqrt : it->second;
        step->count = count;
        if (op == "Relu") {
            step->range.min = 0;
        } else if (op == "Clip") {
            float lo = -INFINITY;
            float hi = INFINITY;
            if (opset_ < 11) {
                lo = floatAttribute(node, "min", lo);
                hi = floatAttribute(node, "max", hi);
            } else {
                for (int i = 1; i < node.input_size() && i < 3; ++i) {
                    if (node.input(i).empty())
                        continue;
                    auto b = constantFloats(node.input(i), node);
                    if (!b)
                        return b.status();
                    if (b->size() != 1)
                        return Status::invalid(label(node) + ": Clip bounds must be scalars");
                    (i == 1 ? lo : hi) = (*b)[0];
                }
            }
            if (std::isnan(lo) || std::isnan(hi) || lo > hi)
                return Status::invalid(label(node) + ": Clip min " + std::to_string(lo) +
                    " is above max " + std::to_string(hi) + " or not a number");
            if (lo == hi)
                return fail(node, "Clip with min equal to max is not supported");
            step->range = {lo, hi};
        } else if (op == "LeakyRelu") {
            step->alpha = floatAttribute(node, "alpha", 0.01f);
        } else if (op == "Elu") {
            step->alpha = floatAttribute(node, "alpha", 1.0f);
        }
        if (!std::isfinite(step->alpha))
            return Status::invalid(label(node) + ": alpha is not a finite number");
        step->inputs = {source};
        step->output = addValue(node.output(0), dims, layout);
        addStep(node, std::move(step));
        return Status();
    }
    auto step = std::make_unique<RefUnaryStep>();
    static const std::unordered_map<std::string, RefUnaryKind> ref = {{"Tanh", RefUnaryKind::Tanh},
        {"HardSigmoid", RefUnaryKind::HardSigmoid}, {"Exp", RefUnaryKind::Exp},
        {"Log", RefUnaryKind::Log}, {"Erf", RefUnaryKind::Erf}, {"Pow", RefUnaryKind::Pow}};
    step->kind = ref.at(op);
    step->count = count;
    step->alpha = op == "Pow" ? exponent : floatAttribute(node, "alpha", 0.2f);
    step->beta = floatAttribute(node, "beta", 0.5f);
    step->inputs = {source};
    step->output = addValue(node.output(0), dims, layout);
    addStep(node, std::move(step));
    return Status();
}

Status Compiler::batchNorm(const onnx::NodeProto& node, int)
{
    const std::string where = label(node);
    if (node.input_size() != 5 || (node.output_size() > 1 && !node.output(1).empty()))
        return fail(node, "only inference-mode BatchNormalization (5 inputs, 1 output) runs");
    if (intAttribute(node, "training_mode", 0) != 0)
        return fail(node,
            "training_mode=1 (statistics of the batch instead of the given mean and variance) "
            "is not supported");
    auto x = shapeOf(node.input(0), node);
    if (!x)
        return x.status();
    if (x->size() < 2)
        return Status::invalid(where + ": input " + dimsText(*x) + " has no channel axis");
    const size_t c = static_cast<size_t>((*x)[1]);
    std::vector<float> p[4];
    for (int i = 0; i < 4; ++i) {
        auto v = constantFloats(node.input(i + 1), node);
        if (!v)
            return v.status();
        if (v->size() != c)
            return Status::invalid(where + ": '" + node.input(i + 1) + "' has " +
                std::to_string(v->size()) + " values for " + std::to_string(c) + " channels");
        p[i] = std::move(v.value());
    }
    const float epsilon = floatAttribute(node, "epsilon", 1e-5f);
    auto step = std::make_unique<ChannelAffineStep>();
    step->scale.resize(c);
    step->shift.resize(c);
    for (size_t i = 0; i < c; ++i) {
        const double s = p[0][i] / std::sqrt(static_cast<double>(p[3][i]) + epsilon);
        step->scale[i] = static_cast<float>(s);
        step->shift[i] = static_cast<float>(p[1][i] - p[2][i] * s);
        if (!std::isfinite(step->scale[i]) || !std::isfinite(step->shift[i]))
            return Status::invalid(where + ": channel " + std::to_string(i) +
                " has a non-finite scale or shift (variance + epsilon <= 0?)");
    }
    auto computed = computedInput(node);
    if (!computed)
        return computed.status();
    const int source = computed.value();
    // A copy: adding values (a layout conversion, the output) may move plan_.values.
    const Value v = plan_.values[static_cast<size_t>(source)];
    const Layout layout = v.layout;
    if (layout == Layout::ChannelsLast) {
        step->outer = static_cast<size_t>(v.count()) / c;
        step->inner = 1;
    } else {
        step->outer = static_cast<size_t>((*x)[0]);
        step->inner = static_cast<size_t>(product(*x, 2, x->size()));
    }
    std::string fused;
    const std::string outName = fuseActivation(node, &step->range, &fused);
    step->node = where + fused;
    step->inputs = {source};
    step->output = addValue(outName, *x, layout);
    addStep(node, std::move(step));
    return Status();
}

// Reshape, Flatten, Squeeze, Unsqueeze (and Identity, Dropout): the row-major data unchanged
// under new dims, so the output reuses the input's memory.
Status Compiler::reshape(const onnx::NodeProto& node, int)
{
    if (node.op_type() == "Reshape" && channelShuffle(node))
        return Status();
    auto y = shapeOf(node.output(0), node);
    if (!y)
        return y.status();
    auto x = shapeOf(node.input(0), node);
    if (!x)
        return x.status();
    if (product(*x, 0, x->size()) != product(*y, 0, y->size()))
        return Status::invalid(
            label(node) + ": " + dimsText(*x) + " cannot become " + dimsText(*y));
    const bool identity = node.op_type() == "Identity" || node.op_type() == "Dropout";
    if (identity && node.output_size() > 1 && !node.output(1).empty())
        return fail(node, "Dropout's mask output is not supported");
    if (node.op_type() == "Dropout") {
        Status s = inferenceDropout(node);
        if (!s.ok())
            return s;
    }
    auto computed = computedInput(node);
    if (!computed)
        return computed.status();
    const int source = computed.value();
    if (identity) {
        const Layout layout = plan_.values[static_cast<size_t>(source)].layout;
        const int id = alias(node.output(0), source, y.value());
        plan_.values[static_cast<size_t>(id)].layout = layout;
        return Status();
    }
    const int in = needId(source, Layout::Plain);
    alias(node.output(0), in, y.value());
    return Status();
}

// A Dropout is a copy only in inference: training mode (opset 12+: the training_mode input;
// before opset 7: is_test=0) drops a random ratio of the elements, unless the ratio is 0.
Status Compiler::inferenceDropout(const onnx::NodeProto& node)
{
    if (opset_ < 7 && findAttribute(node, "is_test") && intAttribute(node, "is_test", 1) == 0)
        return fail(node, "training-mode Dropout (is_test=0) drops random elements");
    if (opset_ < 12 || node.input_size() < 3 || node.input(2).empty())
        return Status();
    const onnx::TensorProto* mode = constant(node.input(2));
    std::vector<int64_t> training;
    if (!mode || !onnxutil::readInt64(*mode, &training) || training.size() != 1)
        return fail(node, "a training_mode that is not a constant scalar is not supported");
    if (training[0] == 0)
        return Status();
    float ratio = 0.5f; // ONNX's default
    if (node.input_size() > 1 && !node.input(1).empty()) {
        const onnx::TensorProto* r = constant(node.input(1));
        std::vector<float> v;
        if (!r || !onnxutil::readFloat(*r, &v) || v.size() != 1)
            return fail(node, "training-mode Dropout with a ratio that is not a constant scalar");
        ratio = v[0];
    }
    if (ratio != 0.0f)
        return fail(node,
            "training-mode Dropout (training_mode=1, ratio " + std::to_string(ratio) +
                ") drops random elements; only inference (or ratio 0) runs");
    return Status();
}

// ShuffleNet's Reshape [N,C,H,W] -> [N,g,C/g,H,W], Transpose (0,2,1,3,4), Reshape back: one
// channel shuffle over channels-last pixels. False (nothing done) for anything else.
bool Compiler::channelShuffle(const onnx::NodeProto& node)
{
    const auto& first = index_.consumers(node.output(0));
    if (first.size() != 1 || index_.isGraphOutput(node.output(0)))
        return false;
    const onnx::NodeProto& t = graph_.node(first[0]);
    if (t.op_type() != "Transpose" ||
        intsAttribute(t, "perm") != std::vector<int64_t> {0, 2, 1, 3, 4})
        return false;
    const auto& second = index_.consumers(t.output(0));
    if (second.size() != 1 || index_.isGraphOutput(t.output(0)))
        return false;
    const onnx::NodeProto& back = graph_.node(second[0]);
    if (back.op_type() != "Reshape")
        return false;
    auto x = shapes_.find(node.input(0));
    auto mid = shapes_.find(node.output(0));
    auto y = shapes_.find(back.output(0));
    if (x == shapes_.end() || mid == shapes_.end() || y == shapes_.end() ||
        x->second != y->second || x->second.size() != 4 || mid->second.size() != 5)
        return false;
    const auto& d = x->second;
    const auto& m = mid->second;
    if (m[0] != d[0] || m[1] * m[2] != d[1] || m[3] != d[2] || m[4] != d[3] || m[1] < 2)
        return false;
    const int source = valueOf(node.input(0));
    if (source < 0)
        return false;
    auto step = std::make_unique<ChannelShuffleStep>();
    step->node = label(node) + " + " + onnxutil::nodeLabel(t, first[0]) + " + " +
        onnxutil::nodeLabel(back, second[0]) + " (channel shuffle)";
    step->pixels = static_cast<size_t>(d[0] * d[2] * d[3]);
    step->groups = static_cast<size_t>(m[1]);
    step->groupChannels = static_cast<size_t>(m[2]);
    step->inputs = {needId(source, Layout::ChannelsLast)};
    step->output = addValue(back.output(0), d, Layout::ChannelsLast);
    addStep(node, std::move(step));
    consumed_.insert(first[0]);
    consumed_.insert(second[0]);
    return true;
}

Status Compiler::transpose(const onnx::NodeProto& node, int)
{
    auto computed = computedInput(node);
    if (!computed)
        return computed.status();
    const int source = computed.value();
    // A copy: adding values (a layout conversion, the output) may move plan_.values.
    const Value v = plan_.values[static_cast<size_t>(source)];
    const int rank = static_cast<int>(v.dims.size());
    std::vector<int64_t> perm = intsAttribute(node, "perm");
    if (perm.empty())
        for (int i = rank - 1; i >= 0; --i)
            perm.push_back(i);
    std::vector<int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < rank; ++i)
        if (static_cast<int>(sorted.size()) != rank || sorted[static_cast<size_t>(i)] != i)
            return Status::invalid(label(node) + ": perm " + dimsText(perm) +
                " is not a permutation of " + std::to_string(rank) + " axes");
    std::vector<int64_t> dims;
    dims.reserve(perm.size());
    for (int64_t axis : perm)
        dims.push_back(v.dims[static_cast<size_t>(axis)]);
    // A permutation that leaves the memory as it is in some layout of the output is a relabelling:
    // ConvNeXt's NCHW -> NHWC of a convolution's (channels-last) output, and back, before and
    // after its LayerNorm and linear layers (two copies per block otherwise, and a third to take
    // the block's sum back to channels-last).
    for (const Layout layout : {Layout::Plain, Layout::ChannelsLast}) {
        // Channels-last only for images (rank 4): a rank-3 value taken as channels-last spreads
        // that layout through a transformer's residual stream, a copy at each turn (ViT).
        if (layout == Layout::ChannelsLast && rank != 4)
            break;
        int previous = -1;
        bool inOrder = true;
        for (int axis : physicalOrder(rank, layout)) {
            const auto from = perm[static_cast<size_t>(axis)];
            if (v.dims[static_cast<size_t>(from)] == 1)
                continue;
            const int position = physicalPosition(static_cast<int>(from), rank, v.layout);
            inOrder &= position > previous;
            previous = position;
        }
        if (inOrder) {
            const int id = alias(node.output(0), source, dims);
            plan_.values[static_cast<size_t>(id)].layout = layout;
            return Status();
        }
    }
    auto step = std::make_unique<PermuteStep>();
    for (int64_t axis : perm)
        step->perm.push_back(physicalPosition(static_cast<int>(axis), rank, v.layout));
    step->inputDims = physicalDims(v.dims, v.layout);
    step->inputs = {source};
    step->output = addValue(node.output(0), dims, Layout::Plain);
    addStep(node, std::move(step));
    return Status();
}

Status Compiler::concat(const onnx::NodeProto& node, int)
{
    auto y = shapeOf(node.output(0), node);
    if (!y)
        return y.status();
    const size_t rank = y->size();
    const int64_t axis = normalizedAxis(intAttribute(node, "axis", 0), rank);
    if (axis < 0 || axis >= static_cast<int64_t>(rank))
        return Status::invalid(label(node) + ": axis is out of range for " + dimsText(*y));
    Layout layout = Layout::Plain;
    for (const auto& name : node.input()) {
        const int id = valueOf(name);
        if (id >= 0 && plan_.values[static_cast<size_t>(id)].layout == Layout::ChannelsLast)
            layout = Layout::ChannelsLast;
    }
    const int p = physicalPosition(static_cast<int>(axis), static_cast<int>(rank), layout);
    const auto phys = physicalDims(*y, layout);
    const size_t outer = static_cast<size_t>(product(phys, 0, static_cast<size_t>(p)));
    const size_t inner = static_cast<size_t>(product(phys, static_cast<size_t>(p) + 1, rank));
    auto step = std::make_unique<CopyRowsStep>();
    step->output = addValue(node.output(0), y.value(), layout);
    size_t offset = 0;
    for (const auto& name : node.input()) {
        std::vector<int64_t> dims;
        int source = -1;
        if (const onnx::TensorProto* t = constant(name)) {
            // A constant input is held by the step, laid out as the output is.
            dims.assign(t->dims().begin(), t->dims().end());
            if (dims.size() != rank)
                return Status::invalid(label(node) + ": constant '" + name + "' has rank " +
                    std::to_string(dims.size()) + ", the output " + std::to_string(rank));
            auto values = constantFloats(name, node);
            if (!values)
                return values.status();
            step->constants.push_back(toLayout(values.value(), dims, layout));
            // XNNPACK's kernels may read up to XNN_EXTRA_BYTES (16) past an input's end.
            step->constants.back().resize(step->constants.back().size() + 4, 0.0f);
            source = CopyRowsStep::constantInput(step->constants.size() - 1);
        } else {
            auto in = need(name, layout, node);
            if (!in)
                return in.status();
            source = in.value();
            dims = plan_.values[static_cast<size_t>(source)].dims;
            if (dims.size() != rank)
                return Status::invalid(label(node) + ": input '" + name + "' has rank " +
                    std::to_string(dims.size()) + ", the output " + std::to_string(rank));
            step->inputs.push_back(source);
        }
        const size_t length = static_cast<size_t>(dims[static_cast<size_t>(axis)]) * inner;
        if (length > 0)
            step->pieces.push_back({source, step->output, outer, length, length,
                static_cast<size_t>(phys[static_cast<size_t>(p)]) * inner, 0, offset});
        offset += length;
    }
    if (offset != static_cast<size_t>(phys[static_cast<size_t>(p)]) * inner)
        return Status::invalid(label(node) + ": the inputs do not add up to " + dimsText(*y));
    if (options_.zeroCopy && inner == 1 && p + 1 == static_cast<int>(rank))
        writeInPlace(node, *step, static_cast<size_t>(phys[static_cast<size_t>(p)]));
    if (!step->pieces.empty())
        addStep(node, std::move(step));
    return Status();
}

// A split or slice piece along channels (dense rows of a pixel's channels) whose result only
// XNNPACK convolutions read, as their whole input, is read by them in place: each takes the
// source with its channel offset and pixel stride, and the piece's copy is dropped (the step too,
// once it has none left). On x86 such readers are rare (oneDNN runs the dense convolutions and
// cannot read a strided input at speed); on ARM they are ShuffleNet's branch convolutions.
void Compiler::readInPlace()
{
    const size_t n = plan_.values.size();
    std::vector<int> readers(n, 0), convReaders(n, 0), writers(n, 0);
    std::vector<char> pinned(n, 0); // aliased, or a model output
    for (const Value& v : plan_.values)
        if (v.root >= 0)
            pinned[static_cast<size_t>(v.root)] = 1;
    for (int o : plan_.outputs)
        pinned[static_cast<size_t>(o)] = 1;
    for (const auto& step : plan_.steps) {
        for (int id : step->inputs)
            ++readers[static_cast<size_t>(id)];
        auto* conv = dynamic_cast<ConvStep*>(step.get());
        if (conv && !conv->onednn && !conv->residual && conv->inputs.size() == 1 &&
            conv->inputStride == 0)
            ++convReaders[static_cast<size_t>(conv->inputs[0])];
        if (step->output >= 0)
            ++writers[static_cast<size_t>(step->output)];
        for (int id : step->extraOutputs)
            ++writers[static_cast<size_t>(id)];
    }
    auto readersOf = [&](int value) {
        std::vector<ConvStep*> convs;
        for (auto& step : plan_.steps) {
            auto* conv = dynamic_cast<ConvStep*>(step.get());
            if (conv && !conv->inputs.empty() && conv->inputs[0] == value)
                convs.push_back(conv);
        }
        return convs;
    };
    for (auto& step : plan_.steps) {
        auto* copy = dynamic_cast<CopyRowsStep*>(step.get());
        if (!copy || copy->inputs.size() != 1 || !copy->constants.empty())
            continue;
        std::vector<CopyRowsStep::Piece> kept;
        for (const CopyRowsStep::Piece& piece : copy->pieces) {
            const size_t o = static_cast<size_t>(piece.output);
            // The source must keep its content until the readers run: not memory that another
            // value takes over later (a residual sum written over it, an alias).
            bool free = piece.input >= 0 && piece.outOffset == 0 &&
                piece.outStride == piece.length && !pinned[o] && writers[o] == 1 &&
                readers[o] > 0 && readers[o] == convReaders[o] &&
                !pinned[static_cast<size_t>(piece.input)];
            const auto convs = free ? readersOf(piece.output) : std::vector<ConvStep*>();
            for (const ConvStep* conv : convs)
                free = free && conv->groups * conv->groupInputChannels == piece.length &&
                    conv->batch * conv->inputH * conv->inputW == piece.rows;
            if (!free) {
                kept.push_back(piece);
                continue;
            }
            for (ConvStep* conv : convs) {
                conv->inputs[0] = piece.input;
                conv->inputStride = piece.inStride;
                conv->inputOffset = piece.inOffset;
                conv->node = copy->node + " -> " + conv->node;
            }
        }
        copy->pieces = std::move(kept);
        // The outputs no piece writes any more are nobody's: drop them from the step.
        std::vector<int> outputs;
        for (const auto& piece : copy->pieces)
            if (std::find(outputs.begin(), outputs.end(), piece.output) == outputs.end())
                outputs.push_back(piece.output);
        copy->output = outputs.empty() ? -1 : outputs[0];
        copy->extraOutputs.assign(
            outputs.empty() ? outputs.end() : outputs.begin() + 1, outputs.end());
    }
    plan_.steps.erase(std::remove_if(plan_.steps.begin(), plan_.steps.end(),
                          [](const std::unique_ptr<StepDef>& step) {
                              auto* copy = dynamic_cast<CopyRowsStep*>(step.get());
                              return copy && copy->pieces.empty();
                          }),
        plan_.steps.end());
}

// A concatenation along the innermost physical axis (channels, channels-last): each input that an
// XNNPACK convolution computed for this concatenation alone is written by that convolution
// straight into its channels of the output (XNNPACK takes an output pixel stride), and its copy
// is dropped. A concatenation whose inputs all are so is no step at all.
void Compiler::writeInPlace(const onnx::NodeProto& node, CopyRowsStep& copy, size_t channels)
{
    std::vector<CopyRowsStep::Piece> kept;
    std::vector<int> keptInputs;
    for (const CopyRowsStep::Piece& piece : copy.pieces) {
        ConvStep* producer = nullptr;
        const Value& v = plan_.values[static_cast<size_t>(std::max(piece.input, 0))];
        const bool single = piece.input >= 0 && v.root < 0 &&
            std::count(copy.inputs.begin(), copy.inputs.end(), piece.input) == 1 &&
            index_.consumers(v.name).size() == 1 && !index_.isGraphOutput(v.name);
        if (single) {
            for (auto& step : plan_.steps)
                if (step->output == piece.input)
                    producer = dynamic_cast<ConvStep*>(step.get());
        }
        if (producer && !producer->onednn && !producer->residual && producer->outputStride == 0 &&
            piece.length == producer->groups * producer->groupOutputChannels) {
            producer->output = copy.output;
            producer->outputStride = channels;
            producer->outputOffset = piece.outOffset;
            producer->node += " -> " + label(node);
            continue;
        }
        kept.push_back(piece);
        if (piece.input >= 0)
            keptInputs.push_back(piece.input);
    }
    copy.pieces = std::move(kept);
    copy.inputs = std::move(keptInputs);
}

Status Compiler::split(const onnx::NodeProto& node, int)
{
    auto computed = computedInput(node);
    if (!computed)
        return computed.status();
    const int source = computed.value();
    // A copy: adding values (a layout conversion, the output) may move plan_.values.
    const Value v = plan_.values[static_cast<size_t>(source)];
    const size_t rank = v.dims.size();
    const int64_t axis = normalizedAxis(intAttribute(node, "axis", 0), rank);
    if (axis < 0 || axis >= static_cast<int64_t>(rank))
        return Status::invalid(label(node) + ": axis is out of range for " + dimsText(v.dims));
    const Layout layout = v.layout;
    const auto phys = physicalDims(v.dims, layout);
    const int p = physicalPosition(static_cast<int>(axis), static_cast<int>(rank), layout);
    const size_t outer = static_cast<size_t>(product(phys, 0, static_cast<size_t>(p)));
    const size_t inner = static_cast<size_t>(product(phys, static_cast<size_t>(p) + 1, rank));
    const size_t rowLength = static_cast<size_t>(phys[static_cast<size_t>(p)]) * inner;
    auto step = std::make_unique<CopyRowsStep>();
    step->inputs = {source};
    size_t offset = 0;
    for (int i = 0; i < node.output_size(); ++i) {
        auto y = shapeOf(node.output(i), node);
        if (!y)
            return y.status();
        if (y->size() != rank)
            return Status::invalid(label(node) + ": output " + dimsText(*y) + " changes the rank");
        const int id = addValue(node.output(i), y.value(), layout);
        (i == 0 ? step->output : step->extraOutputs.emplace_back()) = id;
        const size_t length = static_cast<size_t>((*y)[static_cast<size_t>(axis)]) * inner;
        if (length > 0)
            step->pieces.push_back({source, id, outer, length, rowLength, length, offset, 0});
        offset += length;
    }
    if (offset != rowLength)
        return Status::invalid(label(node) + ": the outputs do not add up to " + dimsText(v.dims));
    addStep(node, std::move(step));
    return Status();
}

Status Compiler::slice(const onnx::NodeProto& node, int)
{
    auto computed = computedInput(node);
    if (!computed)
        return computed.status();
    const int source = computed.value();
    auto y = shapeOf(node.output(0), node);
    if (!y)
        return y.status();
    // A copy: adding values (a layout conversion, the output) may move plan_.values.
    const Value v = plan_.values[static_cast<size_t>(source)];
    const size_t rank = v.dims.size();
    std::vector<int64_t> starts, ends, axes, steps;
    if (opset_ < 10) {
        starts = intsAttribute(node, "starts");
        ends = intsAttribute(node, "ends");
        axes = intsAttribute(node, "axes");
    } else {
        for (int i = 1; i < node.input_size() && i < 5; ++i) {
            if (node.input(i).empty())
                continue;
            auto values = constantInts(node.input(i), node);
            if (!values)
                return values.status();
            (i == 1 ? starts : i == 2 ? ends : i == 3 ? axes : steps) = std::move(values.value());
        }
    }
    if (axes.empty())
        for (size_t i = 0; i < starts.size(); ++i)
            axes.push_back(static_cast<int64_t>(i));
    if (steps.empty())
        steps.assign(starts.size(), 1);
    if (starts.size() != ends.size() || axes.size() != starts.size() ||
        steps.size() != starts.size())
        return Status::invalid(label(node) + ": starts, ends, axes and steps differ in length");
    // The one axis whose extent changes; every other axis must be taken whole.
    int64_t sliced = -1;
    int64_t begin = 0;
    int64_t step = 1;
    for (size_t i = 0; i < axes.size(); ++i) {
        const int64_t axis = normalizedAxis(axes[i], rank);
        if (axis < 0 || axis >= static_cast<int64_t>(rank))
            return Status::invalid(
                label(node) + ": axis " + std::to_string(axes[i]) + " is out of range");
        const int64_t dim = v.dims[static_cast<size_t>(axis)];
        if (steps[i] < 1)
            return fail(node,
                "a step of " + std::to_string(steps[i]) + " (only positive steps are supported)");
        int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
        s = std::min(std::max<int64_t>(s, 0), dim);
        if ((*y)[static_cast<size_t>(axis)] == dim && steps[i] == 1)
            continue;
        if (sliced >= 0)
            return fail(node, "slicing more than one axis is not supported");
        sliced = axis;
        begin = s;
        step = steps[i];
    }
    if (sliced < 0) {
        const int id = alias(node.output(0), source, y.value());
        plan_.values[static_cast<size_t>(id)].layout = v.layout;
        return Status();
    }
    const Layout layout = v.layout;
    const auto phys = physicalDims(v.dims, layout);
    const int p = physicalPosition(static_cast<int>(sliced), static_cast<int>(rank), layout);
    const size_t outer = static_cast<size_t>(product(phys, 0, static_cast<size_t>(p)));
    const size_t inner = static_cast<size_t>(product(phys, static_cast<size_t>(p) + 1, rank));
    const int64_t extent = (*y)[static_cast<size_t>(sliced)];
    const size_t length = static_cast<size_t>(extent) * inner;
    if (extent > 0 && begin + (extent - 1) * step >= phys[static_cast<size_t>(p)])
        return Status::invalid(label(node) + ": the slice runs past the input " + dimsText(v.dims));
    if (step != 1) {
        // A strided slice (Swin's patch merging takes every second row and column): one pass of
        // our kernel, rather than one copy operator (and one wake of the pool) per row taken.
        auto strided = std::make_unique<StridedSliceStep>();
        strided->outer = outer;
        strided->inner = inner;
        strided->extent = static_cast<size_t>(phys[static_cast<size_t>(p)]);
        strided->count = static_cast<size_t>(extent);
        strided->begin = static_cast<size_t>(begin);
        strided->step = static_cast<size_t>(step);
        strided->inputs = {source};
        strided->output = addValue(node.output(0), y.value(), layout);
        addStep(node, std::move(strided));
        return Status();
    }
    auto copy = std::make_unique<CopyRowsStep>();
    copy->inputs = {source};
    copy->output = addValue(node.output(0), y.value(), layout);
    if (length > 0)
        copy->pieces.push_back({source, copy->output, outer, length,
            static_cast<size_t>(phys[static_cast<size_t>(p)]) * inner, length,
            static_cast<size_t>(begin) * inner, 0});
    addStep(node, std::move(copy));
    return Status();
}

// Gather of computed data by constant indices, as row copies: ViT's class token (x[:, 0]) and
// Swin's query, key and value (qkv[0], qkv[1], qkv[2]). Indices computed at run time are refused.
Status Compiler::gather(const onnx::NodeProto& node, int)
{
    if (node.input_size() != 2 || !constant(node.input(1)))
        return fail(node, "only indices that are constants of the model are supported");
    auto computed = computedInput(node);
    if (!computed)
        return computed.status();
    auto indices = constantInts(node.input(1), node);
    if (!indices)
        return indices.status();
    auto y = shapeOf(node.output(0), node);
    if (!y)
        return y.status();
    auto in = need(node.input(0), Layout::Plain, node);
    if (!in)
        return in.status();
    const std::vector<int64_t> x = plan_.values[static_cast<size_t>(in.value())].dims;
    const int64_t rank = static_cast<int64_t>(x.size());
    const int64_t axis = normalizedAxis(intAttribute(node, "axis", 0), static_cast<size_t>(rank));
    if (axis < 0 || axis >= rank)
        return Status::invalid(label(node) + ": axis " +
            std::to_string(intAttribute(node, "axis", 0)) + " is out of range for " + dimsText(x));
    const int64_t dim = x[static_cast<size_t>(axis)];
    const auto a = static_cast<size_t>(axis);
    const size_t outer = static_cast<size_t>(product(x, 0, a));
    const size_t inner = static_cast<size_t>(product(x, a + 1, x.size()));
    const size_t taken = indices->size();
    if (product(*y, 0, y->size()) != static_cast<int64_t>(outer * taken * inner))
        return Status::invalid(label(node) + ": output " + dimsText(*y) + " does not match " +
            std::to_string(taken) + " indices into axis " + std::to_string(axis) + " of " +
            dimsText(x));
    auto copy = std::make_unique<CopyRowsStep>();
    copy->inputs = {in.value()};
    copy->output = addValue(node.output(0), y.value(), Layout::Plain);
    for (size_t j = 0; j < taken && inner > 0; ++j) {
        int64_t index = (*indices)[j];
        if (index < -dim || index >= dim)
            return Status::invalid(label(node) + ": index " + std::to_string(index) +
                " is out of range for axis " + std::to_string(axis) + " of " + dimsText(x));
        if (index < 0)
            index += dim;
        copy->pieces.push_back(
            {in.value(), copy->output, outer, inner, static_cast<size_t>(dim) * inner,
                taken * inner, static_cast<size_t>(index) * inner, j * inner});
    }
    addStep(node, std::move(copy));
    return Status();
}

Status Compiler::softmax(const onnx::NodeProto& node, int)
{
    auto computed = computedInput(node);
    if (!computed)
        return computed.status();
    const int source = computed.value();
    // A copy: adding values (a layout conversion, the output) may move plan_.values.
    const Value v = plan_.values[static_cast<size_t>(source)];
    const size_t rank = v.dims.size();
    const int64_t axis = normalizedAxis(intAttribute(node, "axis", opset_ < 13 ? 1 : -1), rank);
    if (axis < 0 || axis >= static_cast<int64_t>(rank))
        return Status::invalid(label(node) + ": axis is out of range for " + dimsText(v.dims));
    auto step = std::make_unique<SoftmaxStep>();
    int in = source;
    Layout layout = v.layout;
    if (opset_ < 13) {
        // The input coerced to 2-D at the axis: one softmax over everything from the axis on.
        in = needId(source, Layout::Plain);
        layout = Layout::Plain;
        step->channels = static_cast<size_t>(product(v.dims, static_cast<size_t>(axis), rank));
    } else {
        if (physicalPosition(static_cast<int>(axis), static_cast<int>(rank), layout) !=
            static_cast<int>(rank) - 1) {
            in = needId(source, Layout::Plain);
            layout = Layout::Plain;
        }
        step->channels = static_cast<size_t>(v.dims[static_cast<size_t>(axis)]);
        if (physicalPosition(static_cast<int>(axis), static_cast<int>(rank), layout) !=
            static_cast<int>(rank) - 1) {
            // An outer axis of a row-major value: moved innermost, the softmax there, then
            // moved back.
            std::vector<int> perm;
            for (int d = 0; d < static_cast<int>(rank); ++d)
                if (d != axis)
                    perm.push_back(d);
            perm.push_back(static_cast<int>(axis));
            std::vector<int64_t> moved;
            std::vector<int> back(rank);
            for (size_t j = 0; j < rank; ++j) {
                moved.push_back(v.dims[static_cast<size_t>(perm[j])]);
                back[static_cast<size_t>(perm[j])] = static_cast<int>(j);
            }
            auto there = std::make_unique<PermuteStep>();
            there->node = label(node) + " (axis " + std::to_string(axis) + " moved innermost)";
            there->inputDims = v.dims;
            there->perm = perm;
            there->inputs = {in};
            there->output = addValue(node.output(0) + "@moved", moved, Layout::Plain);
            step->inputs = {there->output};
            addStep(node, std::move(there));
            step->rows = static_cast<size_t>(v.count()) / step->channels;
            step->output = addValue(node.output(0) + "@softmax", moved, Layout::Plain);
            auto home = std::make_unique<PermuteStep>();
            home->node = label(node) + " (axis " + std::to_string(axis) + " moved back)";
            home->inputDims = moved;
            home->perm = back;
            home->inputs = {step->output};
            addStep(node, std::move(step));
            home->output = addValue(node.output(0), v.dims, Layout::Plain);
            addStep(node, std::move(home));
            return Status();
        }
    }
    step->rows = static_cast<size_t>(v.count()) / step->channels;
    const std::vector<int64_t> dims = v.dims;
    step->inputs = {in};
    step->output = addValue(node.output(0), dims, layout);
    addStep(node, std::move(step));
    return Status();
}

// The index of the one node reading `value` when it is of operator `op` and the value is no
// graph output; -1 otherwise.
int Compiler::onlyReader(const std::string& value, const char* op) const
{
    const auto& readers = index_.consumers(value);
    if (readers.size() != 1 || index_.isGraphOutput(value) ||
        graph_.node(readers[0]).op_type() != op)
        return -1;
    return readers[0];
}

// A constant scalar float `name` (an exporter's eps, 2 or 0.5), or nullopt.
std::optional<float> Compiler::scalarConstant(const std::string& name) const
{
    const onnx::TensorProto* t = constant(name);
    std::vector<float> v;
    if (!t || onnxutil::elementCount(*t) != 1 || !onnxutil::readFloat(*t, &v) || v.size() != 1)
        return std::nullopt;
    return v[0];
}

// ONNX's LayerNormalization (opset 17): x normalised over its axes from `axis` on, times Scale plus
// B (constants of the model broadcast to those axes), and where asked the Mean and InvStdDev of
// each normalised block, of x's rank with the normalised axes of size 1.
Status Compiler::layerNormalization(const onnx::NodeProto& node, int)
{
    const std::string where = label(node);
    if (node.input_size() < 2 || node.input(1).empty())
        return Status::invalid(where + ": needs X and Scale");
    auto x = shapeOf(node.input(0), node);
    if (!x)
        return x.status();
    const auto rank = static_cast<int64_t>(x->size());
    int64_t axis = intAttribute(node, "axis", -1);
    if (axis < 0)
        axis += rank;
    if (axis < 0 || axis >= rank)
        return Status::invalid(where + ": axis " + std::to_string(intAttribute(node, "axis", -1)) +
            " is outside a tensor of rank " + std::to_string(rank));
    if (intAttribute(node, "stash_type", 1) != 1)
        return fail(node, "a stash_type other than float (1) is not supported");
    const std::vector<int64_t> normalized(x->begin() + axis, x->end());
    const int64_t channels = product(*x, static_cast<size_t>(axis), x->size());
    auto step = std::make_unique<LayerNormStep>();
    // Scale and B broadcast (numpy's rules, right-aligned) to the normalised axes.
    const auto expand = [&](const std::string& name, const char* what,
                            std::vector<float>* out) -> Status {
        const onnx::TensorProto* t = constant(name);
        if (!t)
            return fail(node, std::string("a ") + what + " that is not a constant of the model");
        std::vector<float> values;
        if (!onnxutil::readFloat(*t, &values))
            return fail(node, std::string("a ") + what + " that is not float");
        const std::vector<int64_t> dims(t->dims().begin(), t->dims().end());
        if (dims.size() > normalized.size())
            return Status::invalid(where + ": " + what + " " + dimsText(dims) +
                " does not broadcast to the normalised axes " + dimsText(normalized));
        const std::vector<int64_t> d = aligned(dims, normalized.size());
        for (size_t i = 0; i < d.size(); ++i)
            if (d[i] != 1 && d[i] != normalized[i])
                return Status::invalid(where + ": " + what + " " + dimsText(dims) +
                    " does not broadcast to the normalised axes " + dimsText(normalized));
        out->resize(static_cast<size_t>(channels));
        for (int64_t e = 0; e < channels; ++e) {
            int64_t rest = e, from = 0, stride = 1;
            for (size_t i = d.size(); i-- > 0;) {
                const int64_t index = rest % normalized[i];
                rest /= normalized[i];
                if (d[i] != 1)
                    from += index * stride;
                stride *= d[i];
            }
            (*out)[static_cast<size_t>(e)] = values[static_cast<size_t>(from)];
        }
        return Status();
    };
    if (Status s = expand(node.input(1), "Scale", &step->scale); !s)
        return s;
    if (node.input_size() > 2 && !node.input(2).empty())
        if (Status s = expand(node.input(2), "B", &step->bias); !s)
            return s;
    auto in = need(node.input(0), Layout::Plain, node);
    if (!in)
        return in.status();
    step->channels = static_cast<size_t>(channels);
    step->rows = static_cast<size_t>(product(*x, 0, static_cast<size_t>(axis)));
    step->epsilon = floatAttribute(node, "epsilon", 1e-5f);
    step->node = where;
    step->inputs = {in.value()};
    step->output = addValue(node.output(0), *x, Layout::Plain);
    std::vector<int64_t> statDims = *x;
    for (size_t i = static_cast<size_t>(axis); i < statDims.size(); ++i)
        statDims[i] = 1;
    for (int k = 1; k < 3; ++k) {
        if (node.output_size() <= k || node.output(k).empty())
            continue;
        (k == 1 ? step->meanOutput : step->invStdDevOutput) =
            static_cast<int>(step->extraOutputs.size());
        step->extraOutputs.push_back(addValue(node.output(k), statDims, Layout::Plain));
    }
    addStep(node, std::move(step));
    return Status();
}

// A LayerNorm over the last axis as PyTorch exports it before opset 17, starting at its first
// ReduceMean: m = ReduceMean(x); d = Sub(x, m); v = ReduceMean(Pow(d, 2)); n = Div(d,
// Sqrt(Add(v, eps))); then optionally Mul by a constant scale and Add a constant bias, each of the
// last axis's length. It becomes one step when every intermediate is read only inside the pattern;
// `fused` stays false otherwise and the nodes compile one by one.
Status Compiler::fuseLayerNorm(const onnx::NodeProto& mean, bool* fused)
{
    *fused = false;
    if (!options_.fuseActivations || mean.input_size() != 1 || valueOf(mean.input(0)) < 0)
        return Status();
    const std::string& x = mean.input(0);
    const auto found = shapes_.find(x);
    if (found == shapes_.end() || found->second.empty())
        return Status();
    const std::vector<int64_t> dims = found->second;
    const auto rank = static_cast<int64_t>(dims.size());
    const auto lastAxisOnly = [&](const onnx::NodeProto& n) {
        const auto axes = intsAttribute(n, "axes");
        return n.input_size() == 1 && axes.size() == 1 && (axes[0] == -1 || axes[0] == rank - 1) &&
            intAttribute(n, "keepdims", 1) == 1;
    };
    const auto nodeAt = [&](int i) -> const onnx::NodeProto& { return graph_.node(i); };
    if (!lastAxisOnly(mean))
        return Status();
    std::vector<int> nodes; // after the first ReduceMean, in the pattern's order
    const int sub = onlyReader(mean.output(0), "Sub");
    if (sub < 0 || nodeAt(sub).input(0) != x || nodeAt(sub).input(1) != mean.output(0))
        return Status();
    const std::string& d = nodeAt(sub).output(0);
    // d feeds the Pow and the Div, nothing else.
    const auto& dReaders = index_.consumers(d);
    if (dReaders.size() != 2 || index_.isGraphOutput(d))
        return Status();
    int pow = -1;
    int div = -1;
    for (int r : dReaders) {
        if (nodeAt(r).op_type() == "Pow" && nodeAt(r).input(0) == d)
            pow = r;
        else if (nodeAt(r).op_type() == "Div" && nodeAt(r).input(0) == d)
            div = r;
    }
    if (pow < 0 || div < 0 || scalarConstant(nodeAt(pow).input(1)) != 2.0f)
        return Status();
    const int variance = onlyReader(nodeAt(pow).output(0), "ReduceMean");
    if (variance < 0 || !lastAxisOnly(nodeAt(variance)))
        return Status();
    const int add = onlyReader(nodeAt(variance).output(0), "Add");
    if (add < 0 || nodeAt(add).input(0) != nodeAt(variance).output(0))
        return Status();
    const auto eps = scalarConstant(nodeAt(add).input(1));
    const int sqrt = onlyReader(nodeAt(add).output(0), "Sqrt");
    if (!eps || sqrt < 0 || nodeAt(div).input(1) != nodeAt(sqrt).output(0) ||
        onlyReader(nodeAt(sqrt).output(0), "Div") != div)
        return Status();
    nodes = {sub, pow, variance, add, sqrt, div};
    const int64_t channels = dims.back();
    // The optional affine part: a constant of the last axis's length (or one value) on either side.
    const auto affine = [&](int n, const std::string& from, std::vector<float>* values) {
        if (n < 0)
            return false;
        const onnx::NodeProto& op = nodeAt(n);
        const std::string& other = op.input(0) == from ? op.input(1) : op.input(0);
        const onnx::TensorProto* t = constant(other);
        if (!t || t->dims_size() > 1 || !onnxutil::readFloat(*t, values))
            return false;
        if (values->size() == 1)
            values->assign(static_cast<size_t>(channels), (*values)[0]);
        return static_cast<int64_t>(values->size()) == channels;
    };
    auto step = std::make_unique<LayerNormStep>();
    std::string out = nodeAt(div).output(0);
    const int scale = onlyReader(out, "Mul");
    if (affine(scale, out, &step->scale)) {
        nodes.push_back(scale);
        out = nodeAt(scale).output(0);
        const int bias = onlyReader(out, "Add");
        if (affine(bias, out, &step->bias)) {
            nodes.push_back(bias);
            out = nodeAt(bias).output(0);
        }
    } else {
        step->scale.clear();
    }
    auto in = need(x, Layout::Plain, mean);
    if (!in)
        return in.status();
    step->channels = static_cast<size_t>(channels);
    step->rows = static_cast<size_t>(product(dims, 0, dims.size() - 1));
    step->epsilon = *eps;
    step->node = label(mean) + " to " + onnxutil::nodeLabel(nodeAt(nodes.back()), nodes.back()) +
        " (LayerNorm)";
    step->inputs = {in.value()};
    step->output = addValue(out, dims, Layout::Plain);
    for (int n : nodes)
        consumed_.insert(n);
    addStep(mean, std::move(step))->op = "LayerNormalization";
    *fused = true;
    return Status();
}

Status Compiler::reduce(const onnx::NodeProto& node, int)
{
    if (node.op_type() == "ReduceMean") {
        bool fused = false;
        if (Status s = fuseLayerNorm(node, &fused); !s || fused)
            return s;
    }
    auto computed = computedInput(node);
    if (!computed)
        return computed.status();
    const int source = computed.value();
    auto y = shapeOf(node.output(0), node);
    if (!y)
        return y.status();
    // A copy: adding values (a layout conversion, the output) may move plan_.values.
    const Value v = plan_.values[static_cast<size_t>(source)];
    const size_t rank = v.dims.size();
    std::vector<int64_t> axes = intsAttribute(node, "axes");
    if (node.input_size() > 1 && !node.input(1).empty()) {
        auto a = constantInts(node.input(1), node);
        if (!a)
            return a.status();
        axes = a.value();
    }
    const bool keep = intAttribute(node, "keepdims", 1) != 0;
    if (axes.empty() && intAttribute(node, "noop_with_empty_axes", 0) != 0)
        return fail(node, "noop_with_empty_axes=1 without axes is not supported");
    std::vector<bool> reduced(rank, axes.empty());
    for (int64_t a : axes) {
        const int64_t axis = normalizedAxis(a, rank);
        if (axis < 0 || axis >= static_cast<int64_t>(rank))
            return Status::invalid(
                label(node) + ": axis " + std::to_string(a) + " is out of range");
        reduced[static_cast<size_t>(axis)] = true;
    }
    const bool isMean = node.op_type() == "ReduceMean";
    // The mean over every spatial axis of a channels-last tensor is a global average pool.
    bool spatial = rank >= 3 && !reduced[0] && !reduced[1];
    for (size_t d = 2; d < rank; ++d)
        spatial = spatial && reduced[d];
    Layout layout = v.layout;
    if (!keep && layout == Layout::ChannelsLast && !(spatial && y->size() == 2))
        layout = Layout::Plain; // the kept axes must lie in the output's row-major order
    const int in = needId(source, layout);
    if (isMean && spatial && layout == Layout::ChannelsLast) {
        auto step = std::make_unique<GlobalAveragePoolStep>();
        step->batch = static_cast<size_t>(v.dims[0]);
        step->channels = static_cast<size_t>(v.dims[1]);
        step->width = static_cast<size_t>(product(v.dims, 2, rank));
        step->inputs = {in};
        step->output = addValue(node.output(0), y.value(), keep ? layout : Layout::Plain);
        addStep(node, std::move(step));
        return Status();
    }
    auto step = std::make_unique<ReduceStep>();
    step->max = !isMean;
    step->inputDims = physicalDims(v.dims, layout);
    for (int axis : physicalOrder(static_cast<int>(rank), layout))
        step->reduce.push_back(reduced[static_cast<size_t>(axis)]);
    step->inputs = {in};
    step->output = addValue(node.output(0), y.value(), keep ? layout : Layout::Plain);
    addStep(node, std::move(step));
    return Status();
}

Status Compiler::pad(const onnx::NodeProto& node, int)
{
    auto computed = computedInput(node);
    if (!computed)
        return computed.status();
    const int source = computed.value();
    const onnx::AttributeProto* mode = findAttribute(node, "mode");
    if (mode && mode->s() != "constant")
        return fail(node, "mode '" + mode->s() + "' (only constant padding is supported)");
    std::vector<int64_t> pads = intsAttribute(node, "pads");
    float value = floatAttribute(node, "value", 0.0f);
    if (opset_ >= 11) {
        auto p = constantInts(node.input_size() > 1 ? node.input(1) : std::string(), node);
        if (!p)
            return p.status();
        pads = p.value();
        if (node.input_size() > 2 && !node.input(2).empty()) {
            auto v = constantFloats(node.input(2), node);
            if (!v)
                return v.status();
            if (v->size() != 1)
                return Status::invalid(label(node) + ": constant_value must be one value");
            value = (*v)[0];
        }
        if (node.input_size() > 3 && !node.input(3).empty())
            return fail(node, "the axes input is not supported");
    }
    // A copy: adding values (a layout conversion, the output) may move plan_.values.
    const Value v = plan_.values[static_cast<size_t>(source)];
    const size_t rank = v.dims.size();
    if (pads.size() != 2 * rank)
        return Status::invalid(label(node) + ": pads has " + std::to_string(pads.size()) +
            " values for a rank-" + std::to_string(rank) + " input");
    for (int64_t p : pads)
        if (p < 0 || p > kMaxDim)
            return fail(
                node, "pads must be 0 to 2^31 (negative pads crop, which is not supported)");
    auto y = shapeOf(node.output(0), node);
    if (!y)
        return y.status();
    for (size_t d = 0; d < rank; ++d)
        if ((*y)[d] != v.dims[d] + pads[d] + pads[d + rank])
            return Status::invalid(label(node) + ": output " + dimsText(*y) +
                " does not follow from the input and pads");
    const Layout layout = v.layout;
    if (std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; })) {
        const int id = alias(node.output(0), source, y.value());
        plan_.values[static_cast<size_t>(id)].layout = layout;
        return Status();
    }
    auto step = std::make_unique<PadStep>();
    step->value = value;
    for (int axis : physicalOrder(static_cast<int>(rank), layout)) {
        step->inputShape.push_back(static_cast<size_t>(v.dims[static_cast<size_t>(axis)]));
        step->before.push_back(static_cast<size_t>(pads[static_cast<size_t>(axis)]));
        step->after.push_back(static_cast<size_t>(pads[static_cast<size_t>(axis) + rank]));
    }
    step->inputs = {source};
    step->output = addValue(node.output(0), y.value(), layout);
    addStep(node, std::move(step));
    return Status();
}

Expected<std::shared_ptr<Plan>> Compiler::compile()
{
    Status s = collectShapes();
    if (!s.ok())
        return s;
    for (const auto& input : graph_.input()) {
        if (index_.initializer(input.name()))
            continue;
        if (input.type().tensor_type().elem_type() != onnx::TensorProto::FLOAT)
            return Status::unsupported("model input '" + input.name() +
                "' is not float32 (the xnnpack backend runs float32 models)");
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
        s = (this->*(handler->second))(node, nodeIndex_);
        if (!s.ok())
            return s;
    }
    for (const auto& output : graph_.output()) {
        const int id = valueOf(output.name());
        if (id < 0)
            return Status::unsupported("model output '" + output.name() +
                "' is not computed by any node (a constant output is not supported)");
        plan_.outputs.push_back(needId(id, Layout::Plain));
    }
    if (options_.zeroCopy)
        readInPlace();
    planMemory(&plan_);
    return std::make_shared<Plan>(std::move(plan_));
}

} // namespace

std::vector<std::string> claimedOperators()
{
    std::vector<std::string> ops;
    for (const auto& entry : Compiler::operatorTable())
        ops.push_back(entry.first);
    std::sort(ops.begin(), ops.end());
    return ops;
}

Expected<std::shared_ptr<Plan>> compileModel(
    const onnx::ModelProto& model, const CompileOptions& options)
{
    Compiler compiler(model, options);
    return compiler.compile();
}

} // namespace xnnplan
} // namespace jetagent
