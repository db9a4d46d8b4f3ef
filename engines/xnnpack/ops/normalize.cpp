// The normalisation and reduction family: BatchNormalization, Softmax, LayerNormalization (and
// the LayerNorm pattern PyTorch exported before opset 17), ReduceMean and ReduceMax.
#include <algorithm>
#include <cmath>

#include "operators.h"

namespace jetagent {
namespace xnnplan {
namespace ops {

Status batchNormAffine(CompileContext& cx, const onnx::NodeProto& node, size_t c,
    std::vector<float>* scale, std::vector<float>* shift)
{
    const std::string where = cx.label(node);
    if (node.input_size() != 5 || (node.output_size() > 1 && !node.output(1).empty()))
        return cx.fail(node, "only inference-mode BatchNormalization (5 inputs, 1 output) runs");
    if (intAttribute(node, "training_mode", 0) != 0)
        return cx.fail(node,
            "training_mode=1 (statistics of the batch instead of the given mean and variance) "
            "is not supported");
    std::vector<float> p[4];
    for (int i = 0; i < 4; ++i) {
        auto v = cx.constantFloats(node.input(i + 1), node);
        if (!v)
            return v.status();
        if (v->size() != c)
            return Status::invalid(where + ": '" + node.input(i + 1) + "' has " +
                std::to_string(v->size()) + " values for " + std::to_string(c) + " channels");
        p[i] = std::move(v.value());
    }
    const float epsilon = floatAttribute(node, "epsilon", 1e-5f);
    scale->resize(c);
    shift->resize(c);
    for (size_t i = 0; i < c; ++i) {
        const double s = p[0][i] / std::sqrt(static_cast<double>(p[3][i]) + epsilon);
        (*scale)[i] = static_cast<float>(s);
        (*shift)[i] = static_cast<float>(p[1][i] - p[2][i] * s);
        if (!std::isfinite((*scale)[i]) || !std::isfinite((*shift)[i]))
            return Status::invalid(where + ": channel " + std::to_string(i) +
                " has a non-finite scale or shift (variance + epsilon <= 0?)");
    }
    return Status();
}

Status batchNorm(CompileContext& cx, const onnx::NodeProto& node)
{
    const std::string where = cx.label(node);
    auto x = cx.shapeOf(node.input(0), node);
    if (!x)
        return x.status();
    if (x->size() < 2)
        return Status::invalid(where + ": input " + dimsText(*x) + " has no channel axis");
    const size_t c = static_cast<size_t>((*x)[1]);
    auto step = std::make_unique<ChannelAffineStep>();
    if (Status s = batchNormAffine(cx, node, c, &step->scale, &step->shift); !s.ok())
        return s;
    auto input = cx.computedInputCopy(node);
    if (!input)
        return input.status();
    const auto& [source, v] = *input;
    const Layout layout = v.layout;
    if (layout == Layout::ChannelsLast) {
        step->outer = static_cast<size_t>(v.count()) / c;
        step->inner = 1;
    } else {
        step->outer = static_cast<size_t>((*x)[0]);
        step->inner = static_cast<size_t>(product(*x, 2, x->size()));
    }
    std::string fused;
    const std::string outName = cx.fuseActivation(node, &step->range, &fused);
    step->node = where + fused;
    step->inputs = {source};
    step->output = cx.addValue(outName, *x, layout);
    cx.addStep(node, std::move(step));
    return Status();
}

Status softmax(CompileContext& cx, const onnx::NodeProto& node)
{
    auto input = cx.computedInputCopy(node);
    if (!input)
        return input.status();
    const auto& [source, v] = *input;
    const size_t rank = v.dims.size();
    const int64_t axis = normalizedAxis(intAttribute(node, "axis", cx.opset() < 13 ? 1 : -1), rank);
    if (axis < 0 || axis >= static_cast<int64_t>(rank))
        return Status::invalid(cx.label(node) + ": axis is out of range for " + dimsText(v.dims));
    auto step = std::make_unique<SoftmaxStep>();
    int in = source;
    Layout layout = v.layout;
    if (cx.opset() < 13) {
        // The input coerced to 2-D at the axis: one softmax over everything from the axis on.
        in = cx.needId(source, Layout::Plain);
        layout = Layout::Plain;
        step->channels = static_cast<size_t>(product(v.dims, static_cast<size_t>(axis), rank));
    } else {
        if (physicalPosition(static_cast<int>(axis), static_cast<int>(rank), layout) !=
            static_cast<int>(rank) - 1) {
            in = cx.needId(source, Layout::Plain);
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
            there->node = cx.label(node) + " (axis " + std::to_string(axis) + " moved innermost)";
            there->inputDims = v.dims;
            there->perm = perm;
            there->inputs = {in};
            there->output = cx.addValue(node.output(0) + "@moved", moved, Layout::Plain);
            step->inputs = {there->output};
            cx.addStep(node, std::move(there));
            step->rows = static_cast<size_t>(v.count()) / step->channels;
            step->output = cx.addValue(node.output(0) + "@softmax", moved, Layout::Plain);
            auto home = std::make_unique<PermuteStep>();
            home->node = cx.label(node) + " (axis " + std::to_string(axis) + " moved back)";
            home->inputDims = moved;
            home->perm = back;
            home->inputs = {step->output};
            cx.addStep(node, std::move(step));
            home->output = cx.addValue(node.output(0), v.dims, Layout::Plain);
            cx.addStep(node, std::move(home));
            return Status();
        }
    }
    step->rows = static_cast<size_t>(v.count()) / step->channels;
    const std::vector<int64_t> dims = v.dims;
    step->inputs = {in};
    step->output = cx.addValue(node.output(0), dims, layout);
    cx.addStep(node, std::move(step));
    return Status();
}

// ONNX's LayerNormalization (opset 17): x normalised over its axes from `axis` on, times Scale plus
// B (constants of the model broadcast to those axes), and where asked the Mean and InvStdDev of
// each normalised block, of x's rank with the normalised axes of size 1.
Status layerNormalization(CompileContext& cx, const onnx::NodeProto& node)
{
    const std::string where = cx.label(node);
    if (node.input_size() < 2 || node.input(1).empty())
        return Status::invalid(where + ": needs X and Scale");
    auto x = cx.shapeOf(node.input(0), node);
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
        return cx.fail(node, "a stash_type other than float (1) is not supported");
    const std::vector<int64_t> normalized(x->begin() + axis, x->end());
    const int64_t channels = product(*x, static_cast<size_t>(axis), x->size());
    auto step = std::make_unique<LayerNormStep>();
    // Scale and B broadcast (numpy's rules, right-aligned) to the normalised axes.
    const auto expand = [&](const std::string& name, const char* what,
                            std::vector<float>* out) -> Status {
        const onnx::TensorProto* t = cx.constant(name);
        if (!t)
            return cx.fail(node, std::string("a ") + what + " that is not a constant of the model");
        std::vector<float> values;
        if (!onnxutil::readFloat(*t, &values))
            return cx.fail(node, std::string("a ") + what + " that is not float");
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
    auto in = cx.need(node.input(0), Layout::Plain, node);
    if (!in)
        return in.status();
    step->channels = static_cast<size_t>(channels);
    step->rows = static_cast<size_t>(product(*x, 0, static_cast<size_t>(axis)));
    step->epsilon = floatAttribute(node, "epsilon", 1e-5f);
    step->node = where;
    step->inputs = {in.value()};
    step->output = cx.addValue(node.output(0), *x, Layout::Plain);
    std::vector<int64_t> statDims = *x;
    for (size_t i = static_cast<size_t>(axis); i < statDims.size(); ++i)
        statDims[i] = 1;
    for (int k = 1; k < 3; ++k) {
        if (node.output_size() <= k || node.output(k).empty())
            continue;
        (k == 1 ? step->meanOutput : step->invStdDevOutput) =
            static_cast<int>(step->extraOutputs.size());
        step->extraOutputs.push_back(cx.addValue(node.output(k), statDims, Layout::Plain));
    }
    cx.addStep(node, std::move(step));
    return Status();
}

namespace {

// A LayerNorm over the last axis as PyTorch exports it before opset 17, starting at its first
// ReduceMean: m = ReduceMean(x); d = Sub(x, m); v = ReduceMean(Pow(d, 2)); n = Div(d,
// Sqrt(Add(v, eps))); then optionally Mul by a constant scale and Add a constant bias, each of the
// last axis's length. It becomes one step when every intermediate is read only inside the pattern;
// `fused` stays false otherwise and the nodes compile one by one.
Status fuseLayerNorm(CompileContext& cx, const onnx::NodeProto& mean, bool* fused)
{
    *fused = false;
    if (!cx.options().fuseActivations || mean.input_size() != 1 || cx.valueOf(mean.input(0)) < 0)
        return Status();
    const std::string& x = mean.input(0);
    const auto found = cx.shapes().find(x);
    if (found == cx.shapes().end() || found->second.empty())
        return Status();
    const std::vector<int64_t> dims = found->second;
    const auto rank = static_cast<int64_t>(dims.size());
    const auto lastAxisOnly = [&](const onnx::NodeProto& n) {
        const auto axes = intsAttribute(n, "axes");
        return n.input_size() == 1 && axes.size() == 1 && (axes[0] == -1 || axes[0] == rank - 1) &&
            intAttribute(n, "keepdims", 1) == 1;
    };
    const auto nodeAt = [&](int i) -> const onnx::NodeProto& { return cx.graph().node(i); };
    if (!lastAxisOnly(mean))
        return Status();
    std::vector<int> nodes; // after the first ReduceMean, in the pattern's order
    const int sub = cx.onlyReader(mean.output(0), "Sub");
    if (sub < 0 || nodeAt(sub).input(0) != x || nodeAt(sub).input(1) != mean.output(0))
        return Status();
    const std::string& d = nodeAt(sub).output(0);
    // d feeds the Pow and the Div, nothing else.
    const auto& dReaders = cx.index().consumers(d);
    if (dReaders.size() != 2 || cx.index().isGraphOutput(d))
        return Status();
    int pow = -1;
    int div = -1;
    for (int r : dReaders) {
        if (nodeAt(r).op_type() == "Pow" && nodeAt(r).input(0) == d)
            pow = r;
        else if (nodeAt(r).op_type() == "Div" && nodeAt(r).input(0) == d)
            div = r;
    }
    if (pow < 0 || div < 0 || cx.scalarConstant(nodeAt(pow).input(1)) != 2.0f)
        return Status();
    const int variance = cx.onlyReader(nodeAt(pow).output(0), "ReduceMean");
    if (variance < 0 || !lastAxisOnly(nodeAt(variance)))
        return Status();
    const int add = cx.onlyReader(nodeAt(variance).output(0), "Add");
    if (add < 0 || nodeAt(add).input(0) != nodeAt(variance).output(0))
        return Status();
    const auto eps = cx.scalarConstant(nodeAt(add).input(1));
    const int sqrt = cx.onlyReader(nodeAt(add).output(0), "Sqrt");
    if (!eps || sqrt < 0 || nodeAt(div).input(1) != nodeAt(sqrt).output(0) ||
        cx.onlyReader(nodeAt(sqrt).output(0), "Div") != div)
        return Status();
    nodes = {sub, pow, variance, add, sqrt, div};
    const int64_t channels = dims.back();
    // The optional affine part: a constant of the last axis's length (or one value) on either side.
    const auto affine = [&](int n, const std::string& from, std::vector<float>* values) {
        if (n < 0)
            return false;
        const onnx::NodeProto& op = nodeAt(n);
        const std::string& other = op.input(0) == from ? op.input(1) : op.input(0);
        const onnx::TensorProto* t = cx.constant(other);
        if (!t || t->dims_size() > 1 || !onnxutil::readFloat(*t, values))
            return false;
        if (values->size() == 1)
            values->assign(static_cast<size_t>(channels), (*values)[0]);
        return static_cast<int64_t>(values->size()) == channels;
    };
    auto step = std::make_unique<LayerNormStep>();
    std::string out = nodeAt(div).output(0);
    const int scale = cx.onlyReader(out, "Mul");
    if (affine(scale, out, &step->scale)) {
        nodes.push_back(scale);
        out = nodeAt(scale).output(0);
        const int bias = cx.onlyReader(out, "Add");
        if (affine(bias, out, &step->bias)) {
            nodes.push_back(bias);
            out = nodeAt(bias).output(0);
        }
    } else {
        step->scale.clear();
    }
    auto in = cx.need(x, Layout::Plain, mean);
    if (!in)
        return in.status();
    step->channels = static_cast<size_t>(channels);
    step->rows = static_cast<size_t>(product(dims, 0, dims.size() - 1));
    step->epsilon = *eps;
    step->node = cx.label(mean) + " to " + onnxutil::nodeLabel(nodeAt(nodes.back()), nodes.back()) +
        " (LayerNorm)";
    step->inputs = {in.value()};
    step->output = cx.addValue(out, dims, Layout::Plain);
    for (int n : nodes)
        cx.consume(n);
    cx.addStep(mean, std::move(step))->op = "LayerNormalization";
    *fused = true;
    return Status();
}

} // namespace

Status reduce(CompileContext& cx, const onnx::NodeProto& node)
{
    if (node.op_type() == "ReduceMean") {
        bool fused = false;
        if (Status s = fuseLayerNorm(cx, node, &fused); !s || fused)
            return s;
    }
    auto operands = cx.unaryOperands(node);
    if (!operands)
        return operands.status();
    const auto& [source, v, y] = *operands;
    const size_t rank = v.dims.size();
    std::vector<int64_t> axes = intsAttribute(node, "axes");
    if (node.input_size() > 1 && !node.input(1).empty()) {
        auto a = cx.constantInts(node.input(1), node);
        if (!a)
            return a.status();
        axes = a.value();
    }
    const bool keep = intAttribute(node, "keepdims", 1) != 0;
    if (axes.empty() && intAttribute(node, "noop_with_empty_axes", 0) != 0)
        return cx.fail(node, "noop_with_empty_axes=1 without axes is not supported");
    std::vector<bool> reduced(rank, axes.empty());
    for (int64_t a : axes) {
        const int64_t axis = normalizedAxis(a, rank);
        if (axis < 0 || axis >= static_cast<int64_t>(rank))
            return Status::invalid(
                cx.label(node) + ": axis " + std::to_string(a) + " is out of range");
        reduced[static_cast<size_t>(axis)] = true;
    }
    const bool isMean = node.op_type() == "ReduceMean";
    // The mean over every spatial axis of a channels-last tensor is a global average pool.
    bool spatial = rank >= 3 && !reduced[0] && !reduced[1];
    for (size_t d = 2; d < rank; ++d)
        spatial = spatial && reduced[d];
    Layout layout = v.layout;
    if (!keep && layout == Layout::ChannelsLast && !(spatial && y.size() == 2))
        layout = Layout::Plain; // the kept axes must lie in the output's row-major order
    const int in = cx.needId(source, layout);
    if (isMean && spatial && layout == Layout::ChannelsLast) {
        auto step = std::make_unique<GlobalAveragePoolStep>();
        step->batch = static_cast<size_t>(v.dims[0]);
        step->channels = static_cast<size_t>(v.dims[1]);
        step->width = static_cast<size_t>(product(v.dims, 2, rank));
        step->inputs = {in};
        step->output = cx.addValue(node.output(0), y, keep ? layout : Layout::Plain);
        cx.addStep(node, std::move(step));
        return Status();
    }
    auto step = std::make_unique<ReduceStep>();
    step->max = !isMean;
    step->inputDims = physicalDims(v.dims, layout);
    for (int axis : physicalOrder(static_cast<int>(rank), layout))
        step->reduce.push_back(reduced[static_cast<size_t>(axis)]);
    step->inputs = {in};
    step->output = cx.addValue(node.output(0), y, keep ? layout : Layout::Plain);
    cx.addStep(node, std::move(step));
    return Status();
}

} // namespace ops
} // namespace xnnplan
} // namespace jetagent
