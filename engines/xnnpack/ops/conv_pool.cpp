// The convolution and pooling family: Conv (1-D, 2-D, 3-D; a residual Add after a oneDNN
// convolution fused into it), MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool.
#include <algorithm>
#include <cmath>

#include "operators.h"
#include "window.h"

namespace jetagent {
namespace xnnplan {
namespace ops {

namespace {

// ResNet's `relu(conv(x) + identity)`: oneDNN adds the convolution's result to what its output
// buffer holds (a "sum" post-op), so the step writes over the identity's memory and the Add (and a
// Relu or Clip after it) becomes part of the step. Only where that is safe: the convolution has no
// activation of its own and its result goes to this Add alone; the other operand is computed
// already, channels-last of the same shape (no broadcasting), is not the convolution's own input,
// and nothing in its memory is a model input or output or is read after this convolution but by
// the Add.
int fuseResidual(CompileContext& cx, const onnx::NodeProto& conv, ConvStep& step, int input,
    const std::vector<int64_t>& y, std::string* outName, std::string* text)
{
    const std::string& out = conv.output(0);
    if (!cx.options().fuseActivations || !step.onednn || *outName != out ||
        step.range.min != -INFINITY || step.range.max != INFINITY || cx.index().isGraphOutput(out))
        return -1;
    const auto& readers = cx.index().consumers(out);
    if (readers.size() != 1)
        return -1;
    const onnx::NodeProto& add = cx.graph().node(readers[0]);
    if (add.op_type() != "Add" || add.input_size() != 2 || add.input(0) == add.input(1))
        return -1;
    const std::string& other = add.input(0) == out ? add.input(1) : add.input(0);
    const int id = cx.valueOf(other);
    if (id < 0 || cx.index().isGraphOutput(other))
        return -1;
    const Value& v = cx.plan().values[static_cast<size_t>(id)];
    if (v.layout != Layout::ChannelsLast || v.dims != y)
        return -1;
    auto sum = cx.shapes().find(add.output(0));
    if (sum == cx.shapes().end() || sum->second != y)
        return -1;
    // Every value in the same memory (aliases, an earlier fused sum): no model input or output,
    // and no reader after this node but the Add. A layout conversion made for a reader (a name
    // with '@') is read by readers of the value it converts, which are checked.
    const Value* root = &cx.plan().rootOf(id);
    if (&cx.plan().rootOf(input) == root)
        return -1; // relu(conv(r) + r): the convolution would write over what it reads
    for (size_t u = 0; u < cx.plan().values.size(); ++u) {
        if (&cx.plan().rootOf(static_cast<int>(u)) != root)
            continue;
        for (int modelInput : cx.plan().inputs)
            if (modelInput == static_cast<int>(u))
                return -1;
        const std::string& name = cx.plan().values[u].name;
        if (cx.index().isGraphOutput(name))
            return -1;
        for (int reader : cx.index().consumers(name))
            if (reader != readers[0] && reader > cx.nodeIndex())
                return -1;
    }
    step.residual = true;
    cx.consume(readers[0]);
    *text += " + " + onnxutil::nodeLabel(add, readers[0]);
    std::string activation;
    *outName = cx.fuseActivation(add, &step.range, &activation);
    *text += activation;
    return id;
}

// Which library runs a convolution where this build has oneDNN (x86-64); XNNPACK otherwise.
// Measured per step with `inspect --profile` on the zoo and the modern set (docs/cpu-engine.md):
// - with oneDNN's AVX-512 kernels, oneDNN for every convolution: dense ones 30-40% faster than
//   XNNPACK's even with 3 input channels (the first convolutions: resnet18's 0.65 against 1.0 ms),
//   grouped ones (resnext50 28.2 against 31.4 ms, regnet_y_800mf 7.2 against 8.2 ms), and
//   depthwise ones about alike, but with their SiLU or HardSwish fused as a post-op where XNNPACK
//   runs it as two more steps (efficientnet_b0 6.5 against 7.4 ms);
// - with its AVX2 kernels (DNNL_MAX_CPU_ISA=AVX2 on the same machine), oneDNN only for dense ones
//   of at least 16 input channels: on the rest it was slower (alexnet's first, 3 channels: 1.48
//   against 0.62 ms; resnext50 58 against 52 ms), except for depthwise ones with more taps than
//   XNNPACK's largest depthwise kernel (5x5), which it runs as a grouped GEMM, 10x slower than
//   oneDNN's (ConvNeXt's 7x7).
void chooseConvLibrary(ConvStep& step, bool oneDnn)
{
    if (!oneDnn || !oneDnnAvailable()) {
        step.onednn = false;
        return;
    }
    const bool wideDepthwise = step.groups > 1 && step.groupInputChannels == 1 &&
        step.groupOutputChannels == 1 && step.kernelH * step.kernelW > 25;
    step.onednn =
        (step.groups == 1 && step.groupInputChannels >= 16) || wideDepthwise || oneDnnHasAvx512();
}

// A 3-D convolution as a 2-D one: its depth taps gathered beside the channels (unless the kernel
// has one tap at stride 1 without depth padding, where every frame is an image of the batch).
Status conv3d(CompileContext& cx, const onnx::NodeProto& node, std::unique_ptr<ConvStep> step,
    const std::vector<float>& weights, const std::vector<int64_t>& x, const std::vector<int64_t>& y,
    const std::vector<int64_t>& w, const SpatialWindow& window)
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
    auto in = cx.need(node.input(0), Layout::ChannelsLast, node);
    if (!in)
        return in.status();
    int convInput = in.value();
    const bool direct =
        taps == 1 && window.strides[0] == 1 && window.pads[0] == 0 && window.pads[3] == 0;
    if (!direct) {
        auto gather = std::make_unique<GatherTapsStep>();
        gather->node = cx.label(node) + " (depth taps)";
        gather->batch = static_cast<size_t>(x[0]);
        gather->inputDepth = static_cast<size_t>(x[2]);
        gather->outputDepth = static_cast<size_t>(y[2]);
        gather->pixels = static_cast<size_t>(x[3] * x[4]);
        gather->groups = groups;
        gather->channels = cig;
        gather->taps = taps;
        gather->stride = static_cast<size_t>(window.strides[0]);
        gather->dilation = static_cast<size_t>(window.dilations[0]);
        gather->pad = window.pads[0];
        gather->inputs = {in.value()};
        gather->output = cx.addValue(node.output(0) + "@taps",
            {y[0] * y[2], x[3], x[4], static_cast<int64_t>(groups * taps * cig)}, Layout::Plain);
        convInput = gather->output;
        cx.addStep(node, std::move(gather));
    }
    step->batch = static_cast<size_t>(y[0] * y[2]);
    std::string fused;
    const std::string outName = cx.fuseActivation(node, &step->range, &fused);
    step->node = cx.label(node) + fused;
    step->inputs = {convInput};
    step->output = cx.addValue(outName, y, Layout::ChannelsLast);
    cx.plan().macs += product(y, 0, y.size()) * static_cast<int64_t>(taps * cig * spatial);
    chooseConvLibrary(*step, cx.options().oneDnn);
    cx.addStep(node, std::move(step));
    return Status();
}

} // namespace

namespace {

// Conv's optional bias: one value per output channel (`m` of them); empty when absent.
Expected<std::vector<float>> convBias(CompileContext& cx, const onnx::NodeProto& node, int64_t m)
{
    if (node.input_size() <= 2 || node.input(2).empty())
        return std::vector<float>();
    auto b = cx.constantFloats(node.input(2), node);
    if (!b)
        return b.status();
    if (static_cast<int64_t>(b->size()) != m)
        return Status::invalid(cx.label(node) + ": bias has " + std::to_string(b->size()) +
            " values for " + std::to_string(m) + " output channels");
    return b;
}

// A 1-D or 2-D convolution from its checked step: the weights re-laid, the library chosen, a
// GELU (oneDNN), Relu or Clip and a residual Add (oneDNN) after it fused.
Status conv2d(CompileContext& cx, const onnx::NodeProto& node, std::unique_ptr<ConvStep> step,
    const std::vector<float>& weights, const std::vector<int64_t>& x, const std::vector<int64_t>& y)
{
    // [M][C/g][kh][kw] -> [g][M/g][kh][kw][C/g]
    const size_t cig = step->groupInputChannels;
    const size_t spatial = static_cast<size_t>(step->kernelH) * step->kernelW;
    step->kernel.resize(weights.size());
    for (size_t o = 0; o < static_cast<size_t>(y[1]); ++o)
        for (size_t ci = 0; ci < cig; ++ci)
            for (size_t k = 0; k < spatial; ++k)
                step->kernel[(o * spatial + k) * cig + ci] = weights[(o * cig + ci) * spatial + k];
    step->batch = static_cast<size_t>(x[0]);
    auto in = cx.need(node.input(0), Layout::ChannelsLast, node);
    if (!in)
        return in.status();
    std::string fused;
    chooseConvLibrary(*step, cx.options().oneDnn);
    const onnx::NodeProto& last =
        step->onednn ? fuseGeluAfter(cx, node, &step->gelu, &fused) : node;
    std::string outName = cx.fuseActivation(last, &step->range, &fused);
    cx.plan().macs += product(y, 0, y.size()) * static_cast<int64_t>(cig * spatial);
    const int residual = fuseResidual(cx, node, *step, in.value(), y, &outName, &fused);
    step->node = cx.label(node) + fused;
    step->inputs = {in.value()};
    step->output = cx.addValue(outName, y, Layout::ChannelsLast);
    if (residual >= 0) {
        // The sum is written over the residual, whose memory it takes (fuseResidual checked
        // that nothing reads the residual afterwards).
        step->inputs.push_back(residual);
        cx.plan().values[static_cast<size_t>(step->output)].root = residual;
    }
    cx.addStep(node, std::move(step));
    return Status();
}

} // namespace

Status conv(CompileContext& cx, const onnx::NodeProto& node)
{
    const std::string where = cx.label(node);
    if (node.input_size() < 2)
        return Status::invalid(where + ": Conv needs an input and weights");
    auto x = cx.shapeOf(node.input(0), node);
    if (!x)
        return x.status();
    const onnx::TensorProto* wt = cx.constant(node.input(1));
    if (!wt)
        return cx.fail(node, "weights that are not a constant of the model are not supported");
    const std::vector<int64_t> w(wt->dims().begin(), wt->dims().end());
    const size_t rank = x->size();
    if (rank < 3 || rank > 5 || w.size() != rank)
        return cx.fail(node,
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
    SpatialWindow window;
    Status s = readStrides(node, where, kernel, &window);
    if (s.ok())
        s = readPads(node, where, *x, &window);
    if (!s.ok())
        return s;
    auto weights = cx.constantFloats(node.input(1), node);
    if (!weights)
        return weights.status();
    auto bias = convBias(cx, node, m);
    if (!bias)
        return bias.status();

    auto step = std::make_unique<ConvStep>();
    step->groups = static_cast<uint32_t>(groups);
    step->groupInputChannels = static_cast<size_t>(c / groups);
    step->groupOutputChannels = static_cast<size_t>(m / groups);
    step->bias = std::move(bias.value());
    takeWeightScales(cx, node.input(1), weights.value(), 0, step.get());
    // 1-D and 2-D: the last two spatial axes (1-D as height 1); 3-D: depth handled apart.
    window.fill(*x, step.get());
    auto y = cx.shapeOf(node.output(0), node);
    if (!y)
        return y.status();
    for (size_t i = 0; i < n; ++i) {
        if (window.outputs(i, (*x)[2 + i]) != (*y)[2 + i])
            return Status::invalid(where + ": output " + dimsText(*y) +
                " does not follow from input " + dimsText(*x) + ", kernel, strides and pads");
    }
    if ((*y)[0] != (*x)[0] || (*y)[1] != m)
        return Status::invalid(where + ": output " + dimsText(*y) + " does not match " +
            std::to_string(m) + " output channels");
    if (n == 3)
        return conv3d(cx, node, std::move(step), weights.value(), *x, *y, w, window);

    return conv2d(cx, node, std::move(step), weights.value(), *x, *y);
}

namespace {

// A pooling's window from its attributes: kernel_shape (each 1 to 2^16), strides, dilations (none
// for AveragePool) and pads, over input `x`.
Status readPoolWindow(CompileContext& cx, const onnx::NodeProto& node,
    const std::vector<int64_t>& x, SpatialWindow* window)
{
    const std::string where = cx.label(node);
    const size_t n = x.size() - 2;
    const auto kernel = intsAttribute(node, "kernel_shape");
    if (kernel.size() != n)
        return Status::invalid(where + ": kernel_shape must have " + std::to_string(n) + " values");
    for (int64_t k : kernel)
        if (k < 1 || k > 65536)
            return Status::invalid(
                where + ": kernel_shape " + dimsText(kernel) + " is out of range");
    Status s = readStrides(node, where, kernel, window);
    if (s.ok() && node.op_type() != "MaxPool" && window->dilations != std::vector<int64_t>(n, 1))
        return cx.fail(node, "AveragePool with dilations is not supported");
    if (s.ok())
        s = readPads(node, where, x, window);
    return s;
}

// ceil_mode: the last window may hang past the end; it becomes extra padding at the end, which
// both pools leave out of the window (max ignores it, average does not count it). Checks that
// output `y` follows from input `x` and the window.
Status addCeilOverhang(const std::string& where, const std::vector<int64_t>& x,
    const std::vector<int64_t>& y, SpatialWindow* window)
{
    const size_t n = window->axes();
    for (size_t i = 0; i < n; ++i) {
        const int64_t span = window->span(i);
        const int64_t padded = window->padded(i, x[2 + i]);
        const int64_t out = y[2 + i];
        const int64_t stride = window->strides[i];
        if (padded < span)
            return Status::invalid(where + ": the window is larger than the padded input");
        const int64_t floorOut = window->outputs(i, x[2 + i]);
        const int64_t need = (out - 1) * stride + span - padded;
        if (out != floorOut && !(out == floorOut + 1 && need > 0 && need < stride))
            return Status::invalid(where + ": output " + dimsText(y) +
                " does not follow from input " + dimsText(x) + " and the window");
        if (need > 0)
            window->pads[i + n] += need;
    }
    return Status();
}

// count_include_pad=1: the pads `explicitPads` become zeros of an explicitly padded copy of
// `source` (a step added), which the pool then counts like any other element (the pools leave
// their own padding out of the count). Returns the copy; `x` becomes its shape and the window
// keeps only ceil_mode's overhang.
int padForAverage(CompileContext& cx, const onnx::NodeProto& node, int source,
    const std::vector<int64_t>& explicitPads, std::vector<int64_t>* x, SpatialWindow* window)
{
    const size_t n = window->axes();
    auto padStep = std::make_unique<PadStep>();
    padStep->node = cx.label(node) + " (count_include_pad: the padding)";
    std::vector<int64_t> padded = *x;
    for (int axis : physicalOrder(static_cast<int>(x->size()), Layout::ChannelsLast)) {
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
        window->pads[i + n] -= explicitPads[i + n];
        window->pads[i] = 0;
    }
    padStep->inputs = {source};
    padStep->output = cx.addValue(node.output(0) + "@padded", padded, Layout::ChannelsLast);
    const int out = padStep->output;
    *x = padded;
    cx.addStep(node, std::move(padStep));
    return out;
}

Status pool3d(CompileContext& cx, const onnx::NodeProto& node, int source,
    const SpatialWindow& window, const std::vector<int64_t>& x, const std::vector<int64_t>& y)
{
    auto step = std::make_unique<Pool3dStep>();
    step->max = node.op_type() == "MaxPool";
    step->batch = x[0];
    step->channels = x[1];
    for (size_t i = 0; i < 3; ++i) {
        step->inDims[i] = x[2 + i];
        step->outDims[i] = y[2 + i];
        step->kernel[i] = window.kernel[i];
        step->stride[i] = window.strides[i];
        step->padBegin[i] = window.pads[i];
        step->dilation[i] = window.dilations[i];
    }
    step->inputs = {source};
    step->output = cx.addValue(node.output(0), y, Layout::ChannelsLast);
    cx.addStep(node, std::move(step));
    return Status();
}

} // namespace

Status pool(CompileContext& cx, const onnx::NodeProto& node)
{
    const std::string where = cx.label(node);
    const bool isMax = node.op_type() == "MaxPool";
    if (node.output_size() > 1 && !node.output(1).empty())
        return cx.fail(node, "MaxPool's indices output is not supported");
    if (intAttribute(node, "storage_order", 0) != 0)
        return cx.fail(node, "storage_order=1 is not supported");
    auto x = cx.shapeOf(node.input(0), node);
    if (!x)
        return x.status();
    const size_t rank = x->size();
    if (rank < 3 || rank > 5)
        return cx.fail(node, "a " + std::to_string(rank) + "-D input (1-D to 3-D pooling only)");
    SpatialWindow window;
    if (Status s = readPoolWindow(cx, node, *x, &window); !s.ok())
        return s;
    const auto& pads = window.pads;
    const bool anyPad = std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p > 0; });
    const bool includePad = !isMax && intAttribute(node, "count_include_pad", 0) != 0 && anyPad;
    const std::vector<int64_t> explicitPads = pads;
    auto y = cx.shapeOf(node.output(0), node);
    if (!y)
        return y.status();
    if (Status s = addCeilOverhang(where, *x, *y, &window); !s.ok())
        return s;
    auto in = cx.need(node.input(0), Layout::ChannelsLast, node);
    if (!in)
        return in.status();
    int source = in.value();
    if (includePad)
        source = padForAverage(cx, node, source, explicitPads, &x.value(), &window);
    if (rank == 5)
        return pool3d(cx, node, source, window, *x, *y);
    auto step = std::make_unique<PoolStep>();
    step->max = isMax;
    window.fill(*x, step.get());
    step->channels = static_cast<size_t>((*x)[1]);
    step->batch = static_cast<size_t>((*x)[0]);
    // XNNPACK's pools need a window of more than one pixel; a 1x1 window at stride 1 is a copy.
    if (step->kernelH * step->kernelW == 1 && step->strideH == 1 && step->strideW == 1) {
        cx.alias(node.output(0), source, y.value());
        cx.plan().values.back().layout = Layout::ChannelsLast;
        return Status();
    }
    std::string fused;
    const std::string outName = cx.fuseActivation(node, &step->range, &fused);
    step->node = where + fused;
    step->inputs = {source};
    step->output = cx.addValue(outName, y.value(), Layout::ChannelsLast);
    cx.addStep(node, std::move(step));
    return Status();
}

Status globalPool(CompileContext& cx, const onnx::NodeProto& node)
{
    auto x = cx.shapeOf(node.input(0), node);
    if (!x)
        return x.status();
    auto y = cx.shapeOf(node.output(0), node);
    if (!y)
        return y.status();
    if (x->size() < 3)
        return Status::invalid(cx.label(node) + ": input " + dimsText(*x) + " has no spatial axes");
    auto in = cx.need(node.input(0), Layout::ChannelsLast, node);
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
        step->output = cx.addValue(node.output(0), y.value(), Layout::ChannelsLast);
        cx.addStep(node, std::move(step));
        return Status();
    }
    auto step = std::make_unique<GlobalAveragePoolStep>();
    step->batch = static_cast<size_t>((*x)[0]);
    step->channels = static_cast<size_t>((*x)[1]);
    step->width = static_cast<size_t>(product(*x, 2, x->size()));
    std::string fused;
    const std::string outName = cx.fuseActivation(node, &step->range, &fused);
    step->node = cx.label(node) + fused;
    step->inputs = {in.value()};
    step->output = cx.addValue(outName, y.value(), Layout::ChannelsLast);
    cx.addStep(node, std::move(step));
    return Status();
}

} // namespace ops
} // namespace xnnplan
} // namespace jetagent
