// The layout and shape family: Reshape and its kin (aliases of the same memory), Transpose,
// Concat, Split, Slice, Gather, Pad, ShuffleNet's channel shuffle, and the in-place reading and
// writing of channel pieces that spares their copies.
#include <algorithm>

#include "operators.h"

namespace jetagent {
namespace xnnplan {
namespace ops {

namespace {

// A Dropout is a copy only in inference: training mode (opset 12+: the training_mode input;
// before opset 7: is_test=0) drops a random ratio of the elements, unless the ratio is 0.
Status inferenceDropout(CompileContext& cx, const onnx::NodeProto& node)
{
    if (cx.opset() < 7 && findAttribute(node, "is_test") && intAttribute(node, "is_test", 1) == 0)
        return cx.fail(node, "training-mode Dropout (is_test=0) drops random elements");
    if (cx.opset() < 12 || node.input_size() < 3 || node.input(2).empty())
        return Status();
    const onnx::TensorProto* mode = cx.constant(node.input(2));
    std::vector<int64_t> training;
    if (!mode || !onnxutil::readInt64(*mode, &training) || training.size() != 1)
        return cx.fail(node, "a training_mode that is not a constant scalar is not supported");
    if (training[0] == 0)
        return Status();
    float ratio = 0.5f; // ONNX's default
    if (node.input_size() > 1 && !node.input(1).empty()) {
        const onnx::TensorProto* r = cx.constant(node.input(1));
        std::vector<float> v;
        if (!r || !onnxutil::readFloat(*r, &v) || v.size() != 1)
            return cx.fail(
                node, "training-mode Dropout with a ratio that is not a constant scalar");
        ratio = v[0];
    }
    if (ratio != 0.0f)
        return cx.fail(node,
            "training-mode Dropout (training_mode=1, ratio " + std::to_string(ratio) +
                ") drops random elements; only inference (or ratio 0) runs");
    return Status();
}

// ShuffleNet's Reshape [N,C,H,W] -> [N,g,C/g,H,W], Transpose (0,2,1,3,4), Reshape back: one
// channel shuffle over channels-last pixels. False (nothing done) for anything else.
bool channelShuffle(CompileContext& cx, const onnx::NodeProto& node)
{
    const auto& first = cx.index().consumers(node.output(0));
    if (first.size() != 1 || cx.index().isGraphOutput(node.output(0)))
        return false;
    const onnx::NodeProto& t = cx.graph().node(first[0]);
    if (t.op_type() != "Transpose" ||
        intsAttribute(t, "perm") != std::vector<int64_t> {0, 2, 1, 3, 4})
        return false;
    const auto& second = cx.index().consumers(t.output(0));
    if (second.size() != 1 || cx.index().isGraphOutput(t.output(0)))
        return false;
    const onnx::NodeProto& back = cx.graph().node(second[0]);
    if (back.op_type() != "Reshape")
        return false;
    auto x = cx.shapes().find(node.input(0));
    auto mid = cx.shapes().find(node.output(0));
    auto y = cx.shapes().find(back.output(0));
    if (x == cx.shapes().end() || mid == cx.shapes().end() || y == cx.shapes().end() ||
        x->second != y->second || x->second.size() != 4 || mid->second.size() != 5)
        return false;
    const auto& d = x->second;
    const auto& m = mid->second;
    if (m[0] != d[0] || m[1] * m[2] != d[1] || m[3] != d[2] || m[4] != d[3] || m[1] < 2)
        return false;
    const int source = cx.valueOf(node.input(0));
    if (source < 0)
        return false;
    auto step = std::make_unique<ChannelShuffleStep>();
    step->node = cx.label(node) + " + " + onnxutil::nodeLabel(t, first[0]) + " + " +
        onnxutil::nodeLabel(back, second[0]) + " (channel shuffle)";
    step->pixels = static_cast<size_t>(d[0] * d[2] * d[3]);
    step->groups = static_cast<size_t>(m[1]);
    step->groupChannels = static_cast<size_t>(m[2]);
    step->inputs = {cx.needId(source, Layout::ChannelsLast)};
    step->output = cx.addValue(back.output(0), d, Layout::ChannelsLast);
    cx.addStep(node, std::move(step));
    cx.consume(first[0]);
    cx.consume(second[0]);
    return true;
}

} // namespace

// Reshape, Flatten, Squeeze, Unsqueeze (and Identity, Dropout): the row-major data unchanged
// under new dims, so the output reuses the input's memory.
Status reshape(CompileContext& cx, const onnx::NodeProto& node)
{
    if (node.op_type() == "Reshape" && channelShuffle(cx, node))
        return Status();
    auto y = cx.shapeOf(node.output(0), node);
    if (!y)
        return y.status();
    auto x = cx.shapeOf(node.input(0), node);
    if (!x)
        return x.status();
    if (product(*x, 0, x->size()) != product(*y, 0, y->size()))
        return Status::invalid(
            cx.label(node) + ": " + dimsText(*x) + " cannot become " + dimsText(*y));
    const bool identity = node.op_type() == "Identity" || node.op_type() == "Dropout";
    if (identity && node.output_size() > 1 && !node.output(1).empty())
        return cx.fail(node, "Dropout's mask output is not supported");
    if (node.op_type() == "Dropout") {
        Status s = inferenceDropout(cx, node);
        if (!s.ok())
            return s;
    }
    auto computed = cx.computedInput(node);
    if (!computed)
        return computed.status();
    const int source = computed.value();
    if (identity) {
        const Layout layout = cx.plan().values[static_cast<size_t>(source)].layout;
        const int id = cx.alias(node.output(0), source, y.value());
        cx.plan().values[static_cast<size_t>(id)].layout = layout;
        return Status();
    }
    const int in = cx.needId(source, Layout::Plain);
    cx.alias(node.output(0), in, y.value());
    return Status();
}

Status transpose(CompileContext& cx, const onnx::NodeProto& node)
{
    auto input = cx.computedInputCopy(node);
    if (!input)
        return input.status();
    const auto& [source, v] = *input;
    const int rank = static_cast<int>(v.dims.size());
    std::vector<int64_t> perm = intsAttribute(node, "perm");
    if (perm.empty())
        for (int i = rank - 1; i >= 0; --i)
            perm.push_back(i);
    std::vector<int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < rank; ++i)
        if (static_cast<int>(sorted.size()) != rank || sorted[static_cast<size_t>(i)] != i)
            return Status::invalid(cx.label(node) + ": perm " + dimsText(perm) +
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
            const int id = cx.alias(node.output(0), source, dims);
            cx.plan().values[static_cast<size_t>(id)].layout = layout;
            return Status();
        }
    }
    auto step = std::make_unique<PermuteStep>();
    for (int64_t axis : perm)
        step->perm.push_back(physicalPosition(static_cast<int>(axis), rank, v.layout));
    step->inputDims = physicalDims(v.dims, v.layout);
    step->inputs = {source};
    step->output = cx.addValue(node.output(0), dims, Layout::Plain);
    cx.addStep(node, std::move(step));
    return Status();
}

namespace {

// A concatenation along the innermost physical axis (channels, channels-last): each input that an
// XNNPACK convolution computed for this concatenation alone is written by that convolution
// straight into its channels of the output (XNNPACK takes an output pixel stride), and its copy
// is dropped. A concatenation whose inputs all are so is no step at all.
void writeInPlace(
    CompileContext& cx, const onnx::NodeProto& node, CopyRowsStep& copy, size_t channels)
{
    std::vector<CopyRowsStep::Piece> kept;
    std::vector<int> keptInputs;
    for (const CopyRowsStep::Piece& piece : copy.pieces) {
        ConvStep* producer = nullptr;
        const Value& v = cx.plan().values[static_cast<size_t>(std::max(piece.input, 0))];
        const bool single = piece.input >= 0 && v.root < 0 &&
            std::count(copy.inputs.begin(), copy.inputs.end(), piece.input) == 1 &&
            cx.index().consumers(v.name).size() == 1 && !cx.index().isGraphOutput(v.name);
        if (single) {
            for (auto& step : cx.plan().steps)
                if (step->output == piece.input)
                    producer = dynamic_cast<ConvStep*>(step.get());
        }
        if (producer && !producer->onednn && !producer->residual && producer->outputStride == 0 &&
            piece.length == producer->groups * producer->groupOutputChannels) {
            producer->output = copy.output;
            producer->outputStride = channels;
            producer->outputOffset = piece.outOffset;
            producer->node += " -> " + cx.label(node);
            continue;
        }
        kept.push_back(piece);
        if (piece.input >= 0)
            keptInputs.push_back(piece.input);
    }
    copy.pieces = std::move(kept);
    copy.inputs = std::move(keptInputs);
}

// A concatenation of computed channels-last inputs along their channels whose output only a
// BatchNormalization reads, with that BatchNormalization (and a Relu or Clip after it) as one
// ConcatAffineStep; false where the pattern does not hold (nothing consumed).
Expected<bool> fuseConcatNorm(CompileContext& cx, const onnx::NodeProto& node,
    const CopyRowsStep& copy, const std::vector<int64_t>& y, size_t channels)
{
    const int bn = cx.onlyReader(node.output(0), "BatchNormalization");
    if (bn < 0 || !cx.options().zeroCopy || !cx.options().fuseActivations ||
        !copy.constants.empty() || copy.pieces.size() != copy.inputs.size())
        return false;
    const onnx::NodeProto& norm = cx.graph().node(bn);
    if (norm.input(0) != node.output(0))
        return false;
    auto step = std::make_unique<ConcatAffineStep>();
    if (Status s = batchNormAffine(cx, norm, channels, &step->scale, &step->shift); !s.ok())
        return s;
    cx.consume(bn);
    std::string fused;
    const std::string outName = cx.fuseActivation(norm, &step->range, &fused);
    step->node = cx.label(node) + " + " + onnxutil::nodeLabel(norm, bn) + fused;
    step->op = "Concat";
    for (const CopyRowsStep::Piece& piece : copy.pieces) {
        step->inputs.push_back(piece.input);
        step->channels.push_back(piece.length);
    }
    step->pixels = copy.pieces.empty() ? 0 : copy.pieces[0].rows;
    step->output = cx.addValue(outName, y, Layout::ChannelsLast);
    cx.addStep(node, std::move(step));
    return true;
}

} // namespace

Status concat(CompileContext& cx, const onnx::NodeProto& node)
{
    auto y = cx.shapeOf(node.output(0), node);
    if (!y)
        return y.status();
    const size_t rank = y->size();
    const int64_t axis = normalizedAxis(intAttribute(node, "axis", 0), rank);
    if (axis < 0 || axis >= static_cast<int64_t>(rank))
        return Status::invalid(cx.label(node) + ": axis is out of range for " + dimsText(*y));
    Layout layout = Layout::Plain;
    for (const auto& name : node.input()) {
        const int id = cx.valueOf(name);
        if (id >= 0 && cx.plan().values[static_cast<size_t>(id)].layout == Layout::ChannelsLast)
            layout = Layout::ChannelsLast;
    }
    const int p = physicalPosition(static_cast<int>(axis), static_cast<int>(rank), layout);
    const auto phys = physicalDims(*y, layout);
    const size_t outer = static_cast<size_t>(product(phys, 0, static_cast<size_t>(p)));
    const size_t inner = static_cast<size_t>(product(phys, static_cast<size_t>(p) + 1, rank));
    auto step = std::make_unique<CopyRowsStep>();
    step->output = cx.addValue(node.output(0), y.value(), layout);
    size_t offset = 0;
    for (const auto& name : node.input()) {
        std::vector<int64_t> dims;
        int source = -1;
        if (const onnx::TensorProto* t = cx.constant(name)) {
            // A constant input is held by the step, laid out as the output is.
            dims.assign(t->dims().begin(), t->dims().end());
            if (dims.size() != rank)
                return Status::invalid(cx.label(node) + ": constant '" + name + "' has rank " +
                    std::to_string(dims.size()) + ", the output " + std::to_string(rank));
            auto values = cx.constantFloats(name, node);
            if (!values)
                return values.status();
            step->constants.push_back(toLayout(values.value(), dims, layout));
            // XNNPACK's kernels may read up to XNN_EXTRA_BYTES (16) past an input's end.
            step->constants.back().resize(step->constants.back().size() + 4, 0.0f);
            source = CopyRowsStep::constantInput(step->constants.size() - 1);
        } else {
            auto in = cx.need(name, layout, node);
            if (!in)
                return in.status();
            source = in.value();
            dims = cx.plan().values[static_cast<size_t>(source)].dims;
            if (dims.size() != rank)
                return Status::invalid(cx.label(node) + ": input '" + name + "' has rank " +
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
        return Status::invalid(cx.label(node) + ": the inputs do not add up to " + dimsText(*y));
    const size_t channels = static_cast<size_t>(phys[static_cast<size_t>(p)]);
    if (layout == Layout::ChannelsLast && inner == 1 && p + 1 == static_cast<int>(rank)) {
        auto fused = fuseConcatNorm(cx, node, *step, *y, channels);
        if (!fused)
            return fused.status();
        if (*fused)
            return Status();
    }
    if (cx.options().zeroCopy && inner == 1 && p + 1 == static_cast<int>(rank))
        writeInPlace(cx, node, *step, channels);
    if (!step->pieces.empty())
        cx.addStep(node, std::move(step));
    return Status();
}

// A split or slice piece along channels (dense rows of a pixel's channels) whose result only
// XNNPACK convolutions read, as their whole input, is read by them in place: each takes the
// source with its channel offset and pixel stride, and the piece's copy is dropped (the step too,
// once it has none left). On x86 such readers are rare (oneDNN runs the dense convolutions and
// cannot read a strided input at speed); on ARM they are ShuffleNet's branch convolutions.
void readInPlace(CompileContext& cx)
{
    const size_t n = cx.plan().values.size();
    std::vector<int> readers(n, 0), convReaders(n, 0), writers(n, 0);
    std::vector<char> pinned(n, 0); // aliased, or a model output
    for (const Value& v : cx.plan().values)
        if (v.root >= 0)
            pinned[static_cast<size_t>(v.root)] = 1;
    for (int o : cx.plan().outputs)
        pinned[static_cast<size_t>(o)] = 1;
    for (const auto& step : cx.plan().steps) {
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
        for (auto& step : cx.plan().steps) {
            auto* conv = dynamic_cast<ConvStep*>(step.get());
            if (conv && !conv->inputs.empty() && conv->inputs[0] == value)
                convs.push_back(conv);
        }
        return convs;
    };
    for (auto& step : cx.plan().steps) {
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
    cx.plan().steps.erase(std::remove_if(cx.plan().steps.begin(), cx.plan().steps.end(),
                              [](const std::unique_ptr<StepDef>& step) {
                                  auto* copy = dynamic_cast<CopyRowsStep*>(step.get());
                                  return copy && copy->pieces.empty();
                              }),
        cx.plan().steps.end());
}

Status split(CompileContext& cx, const onnx::NodeProto& node)
{
    auto input = cx.computedInputCopy(node);
    if (!input)
        return input.status();
    const auto& [source, v] = *input;
    const size_t rank = v.dims.size();
    const int64_t axis = normalizedAxis(intAttribute(node, "axis", 0), rank);
    if (axis < 0 || axis >= static_cast<int64_t>(rank))
        return Status::invalid(cx.label(node) + ": axis is out of range for " + dimsText(v.dims));
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
        auto y = cx.shapeOf(node.output(i), node);
        if (!y)
            return y.status();
        if (y->size() != rank)
            return Status::invalid(
                cx.label(node) + ": output " + dimsText(*y) + " changes the rank");
        const int id = cx.addValue(node.output(i), y.value(), layout);
        (i == 0 ? step->output : step->extraOutputs.emplace_back()) = id;
        const size_t length = static_cast<size_t>((*y)[static_cast<size_t>(axis)]) * inner;
        if (length > 0)
            step->pieces.push_back({source, id, outer, length, rowLength, length, offset, 0});
        offset += length;
    }
    if (offset != rowLength)
        return Status::invalid(
            cx.label(node) + ": the outputs do not add up to " + dimsText(v.dims));
    cx.addStep(node, std::move(step));
    return Status();
}

Status slice(CompileContext& cx, const onnx::NodeProto& node)
{
    auto operands = cx.unaryOperands(node);
    if (!operands)
        return operands.status();
    const auto& [source, v, y] = *operands;
    const size_t rank = v.dims.size();
    std::vector<int64_t> starts, ends, axes, steps;
    if (cx.opset() < 10) {
        starts = intsAttribute(node, "starts");
        ends = intsAttribute(node, "ends");
        axes = intsAttribute(node, "axes");
    } else {
        for (int i = 1; i < node.input_size() && i < 5; ++i) {
            if (node.input(i).empty())
                continue;
            auto values = cx.constantInts(node.input(i), node);
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
        return Status::invalid(cx.label(node) + ": starts, ends, axes and steps differ in length");
    // The one axis whose extent changes; every other axis must be taken whole.
    int64_t sliced = -1;
    int64_t begin = 0;
    int64_t step = 1;
    for (size_t i = 0; i < axes.size(); ++i) {
        const int64_t axis = normalizedAxis(axes[i], rank);
        if (axis < 0 || axis >= static_cast<int64_t>(rank))
            return Status::invalid(
                cx.label(node) + ": axis " + std::to_string(axes[i]) + " is out of range");
        const int64_t dim = v.dims[static_cast<size_t>(axis)];
        if (steps[i] < 1)
            return cx.fail(node,
                "a step of " + std::to_string(steps[i]) + " (only positive steps are supported)");
        int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
        s = std::min(std::max<int64_t>(s, 0), dim);
        if (y[static_cast<size_t>(axis)] == dim && steps[i] == 1)
            continue;
        if (sliced >= 0)
            return cx.fail(node, "slicing more than one axis is not supported");
        sliced = axis;
        begin = s;
        step = steps[i];
    }
    if (sliced < 0) {
        const int id = cx.alias(node.output(0), source, y);
        cx.plan().values[static_cast<size_t>(id)].layout = v.layout;
        return Status();
    }
    const Layout layout = v.layout;
    const auto phys = physicalDims(v.dims, layout);
    const int p = physicalPosition(static_cast<int>(sliced), static_cast<int>(rank), layout);
    const size_t outer = static_cast<size_t>(product(phys, 0, static_cast<size_t>(p)));
    const size_t inner = static_cast<size_t>(product(phys, static_cast<size_t>(p) + 1, rank));
    const int64_t extent = y[static_cast<size_t>(sliced)];
    const size_t length = static_cast<size_t>(extent) * inner;
    if (extent > 0 && begin + (extent - 1) * step >= phys[static_cast<size_t>(p)])
        return Status::invalid(
            cx.label(node) + ": the slice runs past the input " + dimsText(v.dims));
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
        strided->output = cx.addValue(node.output(0), y, layout);
        cx.addStep(node, std::move(strided));
        return Status();
    }
    auto copy = std::make_unique<CopyRowsStep>();
    copy->inputs = {source};
    copy->output = cx.addValue(node.output(0), y, layout);
    if (length > 0)
        copy->pieces.push_back({source, copy->output, outer, length,
            static_cast<size_t>(phys[static_cast<size_t>(p)]) * inner, length,
            static_cast<size_t>(begin) * inner, 0});
    cx.addStep(node, std::move(copy));
    return Status();
}

// Gather of computed data by constant indices, as row copies: ViT's class token (x[:, 0]) and
// Swin's query, key and value (qkv[0], qkv[1], qkv[2]). Indices computed at run time are refused.
Status gather(CompileContext& cx, const onnx::NodeProto& node)
{
    if (node.input_size() != 2 || !cx.constant(node.input(1)))
        return cx.fail(node, "only indices that are constants of the model are supported");
    auto computed = cx.computedInput(node);
    if (!computed)
        return computed.status();
    auto indices = cx.constantInts(node.input(1), node);
    if (!indices)
        return indices.status();
    auto y = cx.shapeOf(node.output(0), node);
    if (!y)
        return y.status();
    auto in = cx.need(node.input(0), Layout::Plain, node);
    if (!in)
        return in.status();
    const std::vector<int64_t> x = cx.plan().values[static_cast<size_t>(in.value())].dims;
    const int64_t rank = static_cast<int64_t>(x.size());
    const int64_t axis = normalizedAxis(intAttribute(node, "axis", 0), static_cast<size_t>(rank));
    if (axis < 0 || axis >= rank)
        return Status::invalid(cx.label(node) + ": axis " +
            std::to_string(intAttribute(node, "axis", 0)) + " is out of range for " + dimsText(x));
    const int64_t dim = x[static_cast<size_t>(axis)];
    const auto a = static_cast<size_t>(axis);
    const size_t outer = static_cast<size_t>(product(x, 0, a));
    const size_t inner = static_cast<size_t>(product(x, a + 1, x.size()));
    const size_t taken = indices->size();
    if (product(*y, 0, y->size()) != static_cast<int64_t>(outer * taken * inner))
        return Status::invalid(cx.label(node) + ": output " + dimsText(*y) + " does not match " +
            std::to_string(taken) + " indices into axis " + std::to_string(axis) + " of " +
            dimsText(x));
    auto copy = std::make_unique<CopyRowsStep>();
    copy->inputs = {in.value()};
    copy->output = cx.addValue(node.output(0), y.value(), Layout::Plain);
    for (size_t j = 0; j < taken && inner > 0; ++j) {
        int64_t index = (*indices)[j];
        if (index < -dim || index >= dim)
            return Status::invalid(cx.label(node) + ": index " + std::to_string(index) +
                " is out of range for axis " + std::to_string(axis) + " of " + dimsText(x));
        if (index < 0)
            index += dim;
        copy->pieces.push_back(
            {in.value(), copy->output, outer, inner, static_cast<size_t>(dim) * inner,
                taken * inner, static_cast<size_t>(index) * inner, j * inner});
    }
    cx.addStep(node, std::move(copy));
    return Status();
}

Status pad(CompileContext& cx, const onnx::NodeProto& node)
{
    auto computed = cx.computedInput(node);
    if (!computed)
        return computed.status();
    const int source = computed.value();
    const onnx::AttributeProto* mode = findAttribute(node, "mode");
    if (mode && mode->s() != "constant")
        return cx.fail(node, "mode '" + mode->s() + "' (only constant padding is supported)");
    std::vector<int64_t> pads = intsAttribute(node, "pads");
    float value = floatAttribute(node, "value", 0.0f);
    if (cx.opset() >= 11) {
        auto p = cx.constantInts(node.input_size() > 1 ? node.input(1) : std::string(), node);
        if (!p)
            return p.status();
        pads = p.value();
        if (node.input_size() > 2 && !node.input(2).empty()) {
            auto v = cx.constantFloats(node.input(2), node);
            if (!v)
                return v.status();
            if (v->size() != 1)
                return Status::invalid(cx.label(node) + ": constant_value must be one value");
            value = (*v)[0];
        }
        if (node.input_size() > 3 && !node.input(3).empty())
            return cx.fail(node, "the axes input is not supported");
    }
    // A copy: adding values (a layout conversion, the output) may move the plan's values.
    const Value v = cx.plan().values[static_cast<size_t>(source)];
    const size_t rank = v.dims.size();
    if (pads.size() != 2 * rank)
        return Status::invalid(cx.label(node) + ": pads has " + std::to_string(pads.size()) +
            " values for a rank-" + std::to_string(rank) + " input");
    for (int64_t p : pads)
        if (p < 0 || p > kMaxDim)
            return cx.fail(
                node, "pads must be 0 to 2^31 (negative pads crop, which is not supported)");
    auto y = cx.shapeOf(node.output(0), node);
    if (!y)
        return y.status();
    for (size_t d = 0; d < rank; ++d)
        if ((*y)[d] != v.dims[d] + pads[d] + pads[d + rank])
            return Status::invalid(cx.label(node) + ": output " + dimsText(*y) +
                " does not follow from the input and pads");
    const Layout layout = v.layout;
    if (std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; })) {
        const int id = cx.alias(node.output(0), source, y.value());
        cx.plan().values[static_cast<size_t>(id)].layout = layout;
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
    step->output = cx.addValue(node.output(0), y.value(), layout);
    cx.addStep(node, std::move(step));
    return Status();
}

} // namespace ops
} // namespace xnnplan
} // namespace jetagent
