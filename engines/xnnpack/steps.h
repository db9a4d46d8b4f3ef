// The steps a Plan is made of: XNNPACK operators, and our reference kernels where XNNPACK has
// nothing (internal to engines/xnnpack/). Each holds its parameters and re-laid weights; the graph
// compiler fills them in, checked, so that instantiate() only fails where XNNPACK itself refuses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include "plan.h"

namespace jetagent {
namespace xnnplan {

// The library a step names in profiles, held once for the steps on XNNPACK's operators and those
// on our reference kernels.
class XnnpackStep : public StepDef {
public:
    const char* library() const override { return "xnnpack"; }
};
class ReferenceStep : public StepDef {
public:
    const char* library() const override { return "reference"; }
};

// The activation a step applies to its result: none, GELU's exact (erf) form or its tanh
// approximation; on oneDNN steps also SiLU (x sigmoid(x), oneDNN's swish) and HardSwish.
enum class GeluForm { None, Erf, Tanh, Swish, HardSwish, Sigmoid };

// A clamp fused into the step's output (Relu, Clip); the full float range when none.
struct OutputRange {
    float min = -std::numeric_limits<float>::infinity();
    float max = std::numeric_limits<float>::infinity();
};

// The window a 2-D convolution or pooling slides over NHWC images, and the images it runs on.
struct Window2d {
    uint32_t padTop = 0, padRight = 0, padBottom = 0, padLeft = 0;
    uint32_t kernelH = 1, kernelW = 1, strideH = 1, strideW = 1, dilationH = 1, dilationW = 1;
    size_t batch = 0, inputH = 0, inputW = 0;
};

// A convolution's window and channels (its float and int8 steps share them).
struct ConvGeometry : Window2d {
    uint32_t groups = 1;
    size_t groupInputChannels = 0, groupOutputChannels = 0;
};

// What convolutions and fully connected layers share: float weights (or their fp16 form once
// halved), the fused clamp, and oneDNN's part: whether it runs them, a GELU fused after them, and
// the kernel re-laid for oneDNN's kernels, once per layout they ask for, by the first session that
// needs it and shared by the engine's other sessions (onednn_steps.cpp).
class WeightedStep : public StepDef {
public:
    bool onednn = false; // run on oneDNN (onednn_steps.cpp) instead of XNNPACK
    GeluForm gelu = GeluForm::None; // oneDNN only: GELU of the result, before `range`
    std::vector<float> kernel; // in the step's layout (its own comment)
    std::vector<float> bias; // per output channel; FullyConnectedStep's may be empty: none
    // A QDQ model's weight scales per output channel (its int8 weights are kernel / scale
    // exactly): the int8 pass keeps them instead of choosing its own. Empty: none given.
    std::vector<float> weightScales;
    std::vector<uint16_t> halfKernel, halfBias; // `half`: the same as IEEE fp16 (kernel emptied)
    OutputRange range;
    mutable std::mutex packedMutex;
    mutable std::vector<std::shared_ptr<void>> packed;
    const char* library() const override { return onednn ? "onednn" : "xnnpack"; }
    void toHalf() override;
    int64_t lowerableWeights() const override;
};

// 2-D convolution over NHWC (1-D and 3-D convolutions are lowered onto it by the compiler), on
// XNNPACK or, for dense convolutions on x86-64 where the compiler's rule says so, oneDNN. Its
// kernel is [groups][group out][kernelH][kernelW][group in], its bias [groups * group out].
class ConvStep final : public WeightedStep, public ConvGeometry {
public:
    bool residual = false; // oneDNN only: add inputs[1] (the output's own memory) before `range`
    // XNNPACK only: the output is channels [outputOffset, outputOffset + groups * group out) of
    // pixels outputStride channels apart (a concatenation written in place); 0: dense. The same
    // for the input (a split or slice read in place).
    size_t outputStride = 0, outputOffset = 0;
    size_t inputStride = 0, inputOffset = 0;
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
    LowRole lowRole(DType type, bool anyLow, bool allLow) const override;
    bool int8ScalesFit(const std::vector<Value>& in, const Value& out) const override;
    std::unique_ptr<StepDef> toInt8(const Plan& plan) const override;
};

// Rows of `inputChannels` times a constant [outputChannels][inputChannels] matrix (the kernel),
// plus bias, on XNNPACK or, on x86-64 where the compiler's rule says so, oneDNN.
class FullyConnectedStep final : public WeightedStep {
public:
    size_t rows = 0, inputChannels = 0, outputChannels = 0;
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
    LowRole lowRole(DType type, bool anyLow, bool allLow) const override;
    bool int8ScalesFit(const std::vector<Value>& in, const Value& out) const override;
    std::unique_ptr<StepDef> toInt8(const Plan& plan) const override;
};

// oneDNN's part (onednn_steps.cpp, in x86-64 builds with oneDNN; elsewhere oneDnnAvailable() is
// false and no step asks for it).
bool oneDnnAvailable();
// oneDNN's int8 kernels on this CPU use VNNI (AVX-512 VNNI or AVX-VNNI). Without it they multiply
// 7-bit weights (the weights halved, to keep AVX2's 16-bit sums from saturating): faster than
// XNNPACK's int8 still, but no longer the exact 8-bit products a model's own scales were chosen
// for.
bool oneDnnHasVnni();
// oneDNN's fp32 kernels on this CPU are its AVX-512 ones, which beat XNNPACK's on every kind of
// convolution (chooseConvLibrary); on AVX2 they beat it only on dense ones of many input channels.
bool oneDnnHasAvx512();
Expected<std::unique_ptr<StepExec>> instantiateOneDnnConv(
    const ConvStep& step, float* arena, const Plan& plan, pthreadpool_t pool);
Expected<std::unique_ptr<StepExec>> instantiateOneDnnFullyConnected(
    const FullyConnectedStep& step, float* arena, const Plan& plan, pthreadpool_t pool);

// Max or average pooling over NHWC (average excludes padding, as ONNX's count_include_pad=0).
class PoolStep final : public XnnpackStep, public Window2d {
public:
    bool max = true;
    size_t channels = 0;
    OutputRange range;
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
    LowRole lowRole(DType type, bool anyLow, bool allLow) const override;
    std::unique_ptr<StepDef> toInt8(const Plan& plan) const override;
};

// The mean over `width` pixels of each of `batch` images (channels-last).
class GlobalAveragePoolStep final : public XnnpackStep {
public:
    size_t batch = 0, width = 0, channels = 0;
    OutputRange range;
    // fp32 runs our kernel (globalMeanExec), fp16 XNNPACK's.
    const char* library() const override { return half ? "xnnpack" : "reference"; }
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
    LowRole lowRole(DType type, bool anyLow, bool allLow) const override;
    bool int8ScalesFit(const std::vector<Value>& in, const Value& out) const override;
    std::unique_ptr<StepDef> toInt8(const Plan& plan) const override;
};

enum class BinaryKind { Add, Subtract, Multiply, Divide, Minimum, Maximum };

// Element-wise with NumPy broadcasting, on physical shapes of equal rank. An operand that is a
// constant of the model is held here (re-laid to the other operand's layout) instead of a value.
class BinaryStep final : public XnnpackStep {
public:
    BinaryKind kind = BinaryKind::Add;
    std::vector<size_t> shapeA, shapeB; // physical
    std::vector<float> constantA, constantB; // non-empty: that operand is this constant
    OutputRange range;
    // A multiplication by one value per channel of each image: our kernel (channelScaleExec).
    bool scalesChannels() const;
    const char* library() const override { return scalesChannels() ? "reference" : "xnnpack"; }
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
    LowRole lowRole(DType type, bool anyLow, bool allLow) const override;
    bool int8ScalesFit(const std::vector<Value>& in, const Value& out) const override;
    std::unique_ptr<StepDef> toInt8(const Plan& plan) const override;
};

enum class UnaryKind {
    Clamp,
    Sigmoid,
    HardSwish,
    LeakyRelu,
    Elu,
    Negate,
    Abs,
    Floor,
    Ceil,
    Sqrt,
    Square
};

// Element-wise through XNNPACK.
class UnaryStep final : public XnnpackStep {
public:
    UnaryKind kind = UnaryKind::Clamp;
    size_t count = 0;
    float alpha = 0; // LeakyRelu's slope, Elu's alpha
    OutputRange range; // Clamp's bounds
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
    LowRole lowRole(DType type, bool anyLow, bool allLow) const override;
    std::unique_ptr<StepDef> toInt8(const Plan& plan) const override;
};

// Softmax over the physically innermost axis.
class SoftmaxStep final : public XnnpackStep {
public:
    size_t rows = 0, channels = 0;
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
};

// Concat, Split and Slice along one physical axis, as strided row copies: each piece copies `rows`
// rows of `length` floats from its input (at inOffset, rows inStride apart) to the output
// value named in outputs (at outOffset, rows outStride apart). An input is a value id, or a
// constant the step holds (Concat's constant inputs, in the output's layout): constantInput(i).
class CopyRowsStep final : public XnnpackStep {
public:
    static int constantInput(size_t index) { return -1 - static_cast<int>(index); }
    struct Piece {
        int input = -1;
        int output = -1;
        size_t rows = 0, length = 0, inStride = 0, outStride = 0;
        size_t inOffset = 0, outOffset = 0;
    };
    std::vector<Piece> pieces; // Split's outputs are `output` and `extraOutputs`
    std::vector<std::vector<float>> constants;
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
    LowRole lowRole(DType type, bool anyLow, bool allLow) const override;
    std::unique_ptr<StepDef> toInt8(const Plan& plan) const override;
    void replaceInput(int from, int to) override;
};

// Constant padding of a tensor (physical shapes).
class PadStep final : public XnnpackStep {
public:
    std::vector<size_t> inputShape, before, after;
    float value = 0;
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
    LowRole lowRole(DType type, bool anyLow, bool allLow) const override;
    std::unique_ptr<StepDef> toInt8(const Plan& plan) const override;
};

// ShuffleNet's channel shuffle on channels-last pixels.
class ChannelShuffleStep final : public XnnpackStep {
public:
    size_t pixels = 0, groups = 0, groupChannels = 0;
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
    LowRole lowRole(DType type, bool anyLow, bool allLow) const override;
    std::unique_ptr<StepDef> toInt8(const Plan& plan) const override;
};

// The clamp an int8 step applies to its output (a fused Relu or Clip, quantized).
struct Int8Clamp {
    int8_t outputMin = -128, outputMax = 127;
};

// int8 steps (quantize.h makes them from a calibrated fp32 plan). The values they read and write
// are int8, with the scale and zero point their Value holds (quantized_steps.cpp).

// A convolution (or a fully connected layer, as a 1x1 one over `batch` rows) with int8 weights of
// one scale per output channel and int32 biases, on XNNPACK's qc8 kernels or, where
// moveInt8ToOneDnn chose it (onednn_int8.h), oneDNN's int8 kernels over the same int8 values.
class QConvStep final : public StepDef, public ConvGeometry, public Int8Clamp {
public:
    std::vector<int8_t> kernel; // ConvStep's layout
    std::vector<float> kernelScale; // per output channel
    std::vector<int32_t> bias; // per output channel, in units of input scale * kernel scale
    bool onednn = false; // run on oneDNN (onednn_steps.cpp) instead of XNNPACK
    // oneDNN only: adds inputs[1] (an int8 value of the output's shape, with its own scale and
    // zero point) before the clamp: a residual Add folded in.
    bool residual = false;
    // oneDNN's re-laid kernel, as WeightedStep's.
    mutable std::mutex packedMutex;
    mutable std::vector<std::shared_ptr<void>> packed;
    const char* library() const override { return onednn ? "onednn" : "xnnpack"; }
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
    int64_t lowerableWeights() const override;
};
Expected<std::unique_ptr<StepExec>> instantiateOneDnnQConv(
    const QConvStep& step, float* arena, const Plan& plan, pthreadpool_t pool);

struct OneDnnInt8Summary {
    size_t convolutions = 0; // int8 convolutions (and fully connected layers) moved to oneDNN
    size_t residuals = 0; // int8 additions folded into one of them
};
// Moves the dense (one group) int8 convolutions of `plan`, a quantized plan (quantize.h), onto
// oneDNN's int8 kernels, over the same int8 values (no conversion is added), and folds into such a
// convolution the int8 Add (with its clamp) that is the only reader of its output; plans memory
// again (onednn_int8.cpp, in x86-64 builds with oneDNN, whose caller checks oneDnnAvailable()).
OneDnnInt8Summary moveInt8ToOneDnn(Plan* plan);

// Element-wise sum of two int8 values, with broadcasting (physical shapes).
class QAddStep final : public XnnpackStep, public Int8Clamp {
public:
    std::vector<size_t> shapeA, shapeB;
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
};

// Max pooling of int8 pixels; the output has the input's scale and zero point.
class QMaxPoolStep final : public XnnpackStep, public Window2d, public Int8Clamp {
public:
    size_t channels = 0;
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
};

class QGlobalAveragePoolStep final : public XnnpackStep, public Int8Clamp {
public:
    size_t batch = 0, width = 0, channels = 0;
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
};

// A clamp of int8 values (scale and zero point kept).
class QClampStep final : public XnnpackStep, public Int8Clamp {
public:
    size_t count = 0;
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
};

// CopyRowsStep, ChannelShuffleStep and PadStep over bytes: the values involved share one scale
// and zero point, so moving them is all there is to do.
class QCopyRowsStep final : public XnnpackStep {
public:
    std::vector<CopyRowsStep::Piece> pieces; // in elements, as CopyRowsStep's
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
};

class QChannelShuffleStep final : public XnnpackStep {
public:
    size_t pixels = 0, groups = 0, groupChannels = 0;
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
};

class QPadStep final : public XnnpackStep {
public:
    std::vector<size_t> inputShape, before, after;
    int8_t value = 0;
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
};

// `x` as IEEE 754 half-precision bits, rounded to nearest even (quantize.cpp).
uint16_t halfBits(float x);

// Between the lowered (int8, fp16) and float parts of a plan: converts inputs[0] of type `from`
// into output of type `to` (one of them F32).
class ConvertStep final : public XnnpackStep {
public:
    DType from = DType::F32, to = DType::QS8;
    size_t count = 0;
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
};

// QuantizeLinear and DequantizeLinear as ONNX defines them, in fp32 (qdq.cpp): an integer tensor
// is held as floats of its integers, exact for 8 bits. Per tensor (channels 1) or per channel of
// an axis with `outer` indices before it and `inner` elements after it (physical order).
class QdqStep final : public ReferenceStep {
public:
    bool quantize = true; // QuantizeLinear: y = clamp(round_half_even(x / s) + z, lo, hi)
    // A QuantizeLinear and the DequantizeLinear after it as one step (qdq_plan.cpp): the real
    // value of the quantized one, (q - z) * s. In int8 plans it becomes a requantization.
    bool fake = false;
    size_t outer = 1, channels = 1, inner = 0;
    std::vector<float> scale, zeroPoint; // per channel
    float lo = 0, hi = 255; // the integer type's range (uint8; int8: -128, 127)
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
    LowRole lowRole(DType type, bool anyLow, bool allLow) const override;
    std::unique_ptr<StepDef> toInt8(const Plan& plan) const override;
};

// int8 values from one scale and zero point to another (the plan's values say which), rounding
// half to even and saturating (qdq.cpp); a copy when both are the same.
class QRequantizeStep final : public ReferenceStep {
public:
    size_t count = 0;
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
};

// Reference kernels (reference_kernels.cpp).

// Moves the axes of a tensor: output physical axis i is input physical axis perm[i]. Also what
// converts between layouts at the model's edges and around layout-sensitive operators.
class PermuteStep final : public ReferenceStep {
public:
    std::vector<int64_t> inputDims; // physical
    std::vector<int> perm;
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
};

// A concatenation of channels-last inputs along their channels with the BatchNormalization that
// alone reads it (and its Relu): out[p][offset + c] = clamp(in[p][c] scale[offset + c] +
// shift[offset + c]) for each input, in one pass instead of a copy and an affine step (DenseNet's
// layers each concatenate every earlier layer's output, then normalise it).
class ConcatAffineStep final : public ReferenceStep {
public:
    size_t pixels = 0;
    std::vector<size_t> channels; // per input; their sum is scale.size()
    std::vector<float> scale, shift;
    OutputRange range;
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
};

// y = x * scale[c] + shift[c] with c the axis of length scale.size() and `inner` elements after it
// (an unfolded BatchNormalization, or a per-channel affine the compiler made), then the range.
class ChannelAffineStep final : public ReferenceStep {
public:
    size_t outer = 0, inner = 0;
    std::vector<float> scale, shift;
    OutputRange range;
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
};

enum class RefUnaryKind { Tanh, HardSigmoid, Exp, Log, Erf, Relu, Pow };

class RefUnaryStep final : public ReferenceStep {
public:
    RefUnaryKind kind = RefUnaryKind::Tanh;
    size_t count = 0;
    float alpha = 0, beta = 0; // HardSigmoid; Pow: alpha is the exponent
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
};

// The time taps of a 3-D convolution side by side: output [n][od][h][w][group][tap][c] from input
// [n][d][h][w][group][c], input frame od * stride - pad + tap * dilation, zeros outside the clip.
// A 2-D convolution over the result, the taps folded into each group's input channels, is the
// 3-D one.
class GatherTapsStep final : public ReferenceStep {
public:
    size_t batch = 0, inputDepth = 0, outputDepth = 0, pixels = 0;
    size_t groups = 1, channels = 0; // channels per group
    size_t taps = 1, stride = 1, dilation = 1;
    int64_t pad = 0;
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
};

// ONNX MatMul whose second operand is computed, or constant of rank other than 2: per batch
// element of the output (batch dimensions broadcast), [m x k] times [k x n] on our kernel
// (gemm_kernels.h). `aOffsets`/`bOffsets`: where each output batch element's operands start.
class BatchMatMulStep final : public ReferenceStep {
public:
    size_t m = 0, k = 0, n = 0;
    std::vector<size_t> aOffsets, bOffsets;
    std::vector<float> constantB; // B when it is a constant of the model (inputs then holds A only)
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
};

// y = (x - mean) / sqrt(variance + epsilon) * scale + bias over rows of `channels` contiguous
// values (a LayerNorm over the last axis); no scale or bias when empty.
class LayerNormStep final : public ReferenceStep {
public:
    size_t rows = 0, channels = 0;
    float epsilon = 0;
    std::vector<float> scale, bias;
    // Which of extraOutputs receives each row's mean and 1 / sqrt(variance + epsilon) (ONNX's
    // Mean and InvStdDev); -1: not asked for.
    int meanOutput = -1, invStdDevOutput = -1;
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
};

// x times one value per channel of its image: out[n][p][c] = x[n][p][c] scale[n][c], clamped to
// `range` (the scale of a squeeze-and-excitation block). One pass split over the pool by blocks of
// pixels (reference_kernels.cpp); XNNPACK's broadcasting multiply ran it as one call per pixel,
// twice the time.
std::unique_ptr<StepExec> channelScaleExec(const float* x, const float* scale, float* out,
    size_t images, size_t pixels, size_t channels, OutputRange range, bool last);

// The mean of each channel of each image over its pixels: out[n][c] = mean_p x[n][p][c], clamped
// to `range` (global average pooling, NHWC). Split over the pool by images and channel slices
// (reference_kernels.cpp): XNNPACK's global average pooling splits by images only, so one image ran
// on one thread (efficientnet_v2_s's 31 poolings: 1.32 ms on two threads, ONNX Runtime's 0.62).
std::unique_ptr<StepExec> globalMeanExec(const float* x, float* out, size_t images, size_t pixels,
    size_t channels, OutputRange range, bool last);

// GELU, y = x (1 + erf(x / sqrt 2)) / 2 with a rational erf (reference_kernels.cpp), or its tanh
// approximation x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2.
class GeluStep final : public ReferenceStep {
public:
    size_t count = 0;
    GeluForm form = GeluForm::Erf;
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
};

// Every step-th block of `inner` values along an axis of `extent`, from `begin`, `count` of them,
// for each of `outer` leading indices (Slice with a step above 1).
class StridedSliceStep final : public ReferenceStep {
public:
    size_t outer = 0, inner = 0, extent = 0, count = 0, begin = 0, step = 1;
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
};

// Mean (or max) over the physical axes flagged in `reduce`.
class ReduceStep final : public ReferenceStep {
public:
    bool max = false;
    std::vector<int64_t> inputDims; // physical
    std::vector<bool> reduce;
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
};

// 3-D max or average pooling over NDHWC (average excludes padding).
class Pool3dStep final : public ReferenceStep {
public:
    bool max = true;
    int64_t batch = 0, channels = 0;
    int64_t inDims[3] = {0, 0, 0}, outDims[3] = {0, 0, 0}, kernel[3] = {1, 1, 1},
            stride[3] = {1, 1, 1}, padBegin[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};
    Expected<std::unique_ptr<StepExec>> instantiate(
        float* arena, const Plan& plan, pthreadpool_t pool, bool last) const override;
};

} // namespace xnnplan
} // namespace jetagent
