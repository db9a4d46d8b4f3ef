// Each step's own part in the int8 and fp16 passes (quantize.cpp): which role it takes, the
// scales its int8 kernel accepts, its int8 form and its fp16 weights. The passes ask the steps
// through StepDef's virtuals and know no step type.
#include <algorithm>
#include <cmath>

#include "steps.h"

namespace jetagent {
namespace xnnplan {

namespace {

int8_t quantize(float x, const Value& v)
{
    if (std::isnan(x))
        return static_cast<int8_t>(v.zeroPoint);
    const double q = std::nearbyint(static_cast<double>(x) / v.scale) + v.zeroPoint;
    return static_cast<int8_t>(std::clamp(q, -128.0, 127.0));
}

// int8 weights with one symmetric scale per output channel of `channels` rows of `per` weights.
void quantizeWeights(const std::vector<float>& weights, size_t channels, std::vector<int8_t>* q,
    std::vector<float>* scales)
{
    const size_t per = channels ? weights.size() / channels : 0;
    q->resize(weights.size());
    scales->resize(channels);
    for (size_t c = 0; c < channels; ++c) {
        float absMax = 0;
        for (size_t i = 0; i < per; ++i)
            absMax = std::max(absMax, std::fabs(weights[c * per + i]));
        const float scale = absMax > 0 ? absMax / 127.0f : 1.0f;
        (*scales)[c] = scale;
        for (size_t i = 0; i < per; ++i)
            (*q)[c * per + i] = static_cast<int8_t>(
                std::clamp(std::nearbyint(weights[c * per + i] / scale), -127.0f, 127.0f));
    }
}

std::vector<int32_t> quantizeBias(
    const std::vector<float>& bias, size_t channels, float inputScale, const std::vector<float>& k)
{
    std::vector<int32_t> out(channels, 0);
    for (size_t c = 0; c < channels && c < bias.size(); ++c) {
        const double q = std::nearbyint(bias[c] / (double(inputScale) * k[c]));
        out[c] = static_cast<int32_t>(std::clamp(q, -2147483647.0, 2147483647.0));
    }
    return out;
}

bool ratioIn(double ratio, double lo, double hi)
{
    return std::isfinite(ratio) && ratio >= lo && ratio < hi;
}

// The largest per-channel absolute weight over `per` weights per channel.
std::vector<float> channelAbsMax(const std::vector<float>& weights, size_t channels)
{
    std::vector<float> out(channels, 0);
    const size_t per = channels ? weights.size() / channels : 0;
    for (size_t c = 0; c < channels; ++c)
        for (size_t i = 0; i < per; ++i)
            out[c] = std::max(out[c], std::fabs(weights[c * per + i]));
    return out;
}

// XNNPACK's qc8 convolution takes input scale x weight scale / output scale below 256.
bool convScalesFit(
    const std::vector<float>& weights, size_t channels, const Value& in, const Value& out)
{
    for (float m : channelAbsMax(weights, channels)) {
        const double k = m > 0 ? m / 127.0 : 1.0;
        if (!ratioIn(double(in.scale) * k / out.scale, 0x1.0p-32, 256.0))
            return false;
    }
    return true;
}

std::vector<uint16_t> toHalfBits(const std::vector<float>& values)
{
    std::vector<uint16_t> out(values.size());
    for (size_t i = 0; i < values.size(); ++i)
        out[i] = halfBits(values[i]);
    return out;
}

// A QDQ model's int8 weights: `kernel` divided by its own per-channel `scales`, which gives the
// model's integers back exactly (they were multiplied by the same float).
void givenWeights(const std::vector<float>& kernel, const std::vector<float>& scales,
    std::vector<int8_t>* q, std::vector<float>* out)
{
    const size_t per = scales.empty() ? 0 : kernel.size() / scales.size();
    q->resize(kernel.size());
    for (size_t i = 0; i < kernel.size(); ++i)
        (*q)[i] = static_cast<int8_t>(
            std::clamp(std::nearbyint(kernel[i] / scales[i / per]), -128.0f, 127.0f));
    *out = scales;
}

// The int8 convolution of `kernel` and `bias` ([channels][...]) reading `input`, clamped to
// `range` in `output`'s parameters; with the model's weight scales where it gave them.
std::unique_ptr<QConvStep> quantizedConv(
    const WeightedStep& weighted, size_t channels, const Value& input, const Value& output)
{
    const std::vector<float>& kernel = weighted.kernel;
    const std::vector<float>& bias = weighted.bias;
    const OutputRange& range = weighted.range;
    auto step = std::make_unique<QConvStep>();
    if (weighted.weightScales.size() == channels && channels > 0)
        givenWeights(kernel, weighted.weightScales, &step->kernel, &step->kernelScale);
    else
        quantizeWeights(kernel, channels, &step->kernel, &step->kernelScale);
    step->bias = quantizeBias(bias, channels, input.scale, step->kernelScale);
    step->outputMin = quantize(range.min, output);
    step->outputMax = quantize(range.max, output);
    return step;
}

// The clamp of a lowered step, in its output's int8 parameters.
void quantizeRange(const OutputRange& range, const Plan& plan, int output, Int8Clamp* clamp)
{
    const Value& y = plan.rootOf(output);
    clamp->outputMin = quantize(range.min, y);
    clamp->outputMax = quantize(range.max, y);
}

} // namespace

void WeightedStep::toHalf()
{
    half = true;
    halfKernel = toHalfBits(kernel);
    halfBias = toHalfBits(bias);
    kernel = {};
    bias = {};
}

int64_t WeightedStep::lowerableWeights() const
{
    return static_cast<int64_t>(
        kernel.size() + bias.size() + (halfKernel.size() + halfBias.size() + 1) / 2);
}

// Convolutions and fully connected layers: int8 always (their inputs quantized where float),
// fp16 likewise; oneDNN's steps and fused residuals stay fp32.

LowRole ConvStep::lowRole(DType, bool, bool) const
{
    return !onednn && !residual ? LowRole::Compute : LowRole::Float;
}

bool ConvStep::int8ScalesFit(const std::vector<Value>& in, const Value& out) const
{
    return convScalesFit(kernel, groups * groupOutputChannels, in[0], out);
}

std::unique_ptr<StepDef> ConvStep::toInt8(const Plan& plan) const
{
    auto step = quantizedConv(
        *this, groups * groupOutputChannels, plan.rootOf(inputs[0]), plan.rootOf(output));
    static_cast<ConvGeometry&>(*step) = static_cast<const ConvGeometry&>(*this);
    return step;
}

LowRole FullyConnectedStep::lowRole(DType, bool, bool) const
{
    return LowRole::Compute;
}

bool FullyConnectedStep::int8ScalesFit(const std::vector<Value>& in, const Value& out) const
{
    return convScalesFit(kernel, outputChannels, in[0], out);
}

// As a 1x1 convolution over `rows` pixels.
std::unique_ptr<StepDef> FullyConnectedStep::toInt8(const Plan& plan) const
{
    auto step = quantizedConv(*this, outputChannels, plan.rootOf(inputs[0]), plan.rootOf(output));
    step->groupInputChannels = inputChannels;
    step->groupOutputChannels = outputChannels;
    step->batch = rows;
    step->inputH = step->inputW = 1;
    return step;
}

int64_t QConvStep::lowerableWeights() const
{
    return static_cast<int64_t>((kernel.size() + 3) / 4 + kernelScale.size() + bias.size());
}

// Additions (and in fp16 multiplications) of two computed values, one of them lowered already.
LowRole BinaryStep::lowRole(DType type, bool anyLow, bool) const
{
    const bool kindFits =
        kind == BinaryKind::Add || (type == DType::F16 && kind == BinaryKind::Multiply);
    return kindFits && constantA.empty() && constantB.empty() && inputs.size() == 2 && anyLow
        ? LowRole::Compute
        : LowRole::Float;
}

bool BinaryStep::int8ScalesFit(const std::vector<Value>& in, const Value& out) const
{
    return ratioIn(double(in[0].scale) / out.scale, 0x1.0p-10, 0x1.0p+8) &&
        ratioIn(double(in[1].scale) / out.scale, 0x1.0p-10, 0x1.0p+8);
}

std::unique_ptr<StepDef> BinaryStep::toInt8(const Plan& plan) const
{
    auto step = std::make_unique<QAddStep>();
    step->shapeA = shapeA;
    step->shapeB = shapeB;
    quantizeRange(range, plan, output, step.get());
    return step;
}

LowRole GlobalAveragePoolStep::lowRole(DType, bool anyLow, bool) const
{
    return anyLow ? LowRole::Compute : LowRole::Float;
}

bool GlobalAveragePoolStep::int8ScalesFit(const std::vector<Value>& in, const Value& out) const
{
    return ratioIn(double(in[0].scale) / out.scale, 0x1.0p-8, 0x1.0p+8);
}

std::unique_ptr<StepDef> GlobalAveragePoolStep::toInt8(const Plan& plan) const
{
    auto step = std::make_unique<QGlobalAveragePoolStep>();
    step->batch = batch;
    step->width = width;
    step->channels = channels;
    quantizeRange(range, plan, output, step.get());
    return step;
}

// Data movement: lowered where every input is.

LowRole PoolStep::lowRole(DType, bool, bool allLow) const
{
    return max && allLow ? LowRole::PassThrough : LowRole::Float;
}

std::unique_ptr<StepDef> PoolStep::toInt8(const Plan& plan) const
{
    auto step = std::make_unique<QMaxPoolStep>();
    static_cast<Window2d&>(*step) = static_cast<const Window2d&>(*this);
    step->channels = channels;
    quantizeRange(range, plan, output, step.get());
    return step;
}

// Clamps (and in fp16 HardSwish and LeakyRelu).
LowRole UnaryStep::lowRole(DType type, bool, bool allLow) const
{
    const bool kindFits = kind == UnaryKind::Clamp ||
        (type == DType::F16 && (kind == UnaryKind::HardSwish || kind == UnaryKind::LeakyRelu));
    return kindFits && allLow ? LowRole::PassThrough : LowRole::Float;
}

std::unique_ptr<StepDef> UnaryStep::toInt8(const Plan& plan) const
{
    auto step = std::make_unique<QClampStep>();
    step->count = count;
    quantizeRange(range, plan, output, step.get());
    return step;
}

LowRole PadStep::lowRole(DType, bool, bool allLow) const
{
    return allLow ? LowRole::PassThrough : LowRole::Float;
}

std::unique_ptr<StepDef> PadStep::toInt8(const Plan& plan) const
{
    auto step = std::make_unique<QPadStep>();
    step->inputShape = inputShape;
    step->before = before;
    step->after = after;
    step->value = quantize(value, plan.rootOf(output));
    return step;
}

// int8 only: XNNPACK's snapshot has no fp16 channel shuffle.
LowRole ChannelShuffleStep::lowRole(DType type, bool, bool allLow) const
{
    return type == DType::QS8 && allLow ? LowRole::PassThrough : LowRole::Float;
}

std::unique_ptr<StepDef> ChannelShuffleStep::toInt8(const Plan&) const
{
    auto step = std::make_unique<QChannelShuffleStep>();
    step->pixels = pixels;
    step->groups = groups;
    step->groupChannels = groupChannels;
    return step;
}

// Copies of computed values only (constants stay in fp32).
LowRole CopyRowsStep::lowRole(DType, bool, bool allLow) const
{
    bool computed = constants.empty();
    for (const auto& p : pieces)
        computed = computed && p.input >= 0;
    return computed && allLow ? LowRole::PassThrough : LowRole::Float;
}

std::unique_ptr<StepDef> CopyRowsStep::toInt8(const Plan&) const
{
    auto step = std::make_unique<QCopyRowsStep>();
    step->pieces = pieces;
    return step;
}

void CopyRowsStep::replaceInput(int from, int to)
{
    StepDef::replaceInput(from, to);
    for (auto& p : pieces)
        if (p.input == from)
            p.input = to;
}

} // namespace xnnplan
} // namespace jetagent
