// The steps that run on XNNPACK operators: each creates its operators once per session over the
// session's arena and sets them up there, so that a run is xnn_run_operator alone.
#include <string>
#include <utility>

#include <xnnpack.h>

#include "steps.h"

namespace jetagent {
namespace xnnplan {

namespace {

const char* statusName(xnn_status s)
{
    switch (s) {
    case xnn_status_success: return "success";
    case xnn_status_uninitialized: return "XNNPACK is not initialised";
    case xnn_status_invalid_parameter: return "invalid parameter";
    case xnn_status_invalid_state: return "invalid state";
    case xnn_status_unsupported_parameter: return "unsupported parameter";
    case xnn_status_unsupported_hardware: return "unsupported on this CPU";
    case xnn_status_out_of_memory: return "out of memory";
    }
    return "unknown XNNPACK status";
}

// Owns a step's operators and runs them in order.
class XnnExec final : public StepExec {
public:
    XnnExec() = default;
    XnnExec(const XnnExec&) = delete;
    XnnExec& operator=(const XnnExec&) = delete;
    ~XnnExec() override
    {
        for (xnn_operator_t o : ops_)
            xnn_delete_operator(o);
    }

    // Takes the operator `created` made (read through the pointer: the call that filled it is
    // an argument evaluated before this body runs); an error names the step and what XNNPACK said.
    Status add(xnn_status created, xnn_operator_t* xop, const StepDef& step, const char* what)
    {
        if (*xop)
            ops_.push_back(*xop);
        if (created != xnn_status_success)
            return Status::unsupported(
                step.node + ": XNNPACK cannot " + what + " (" + statusName(created) + ")");
        return Status();
    }
    Status setup(xnn_status s, const StepDef& step)
    {
        if (s != xnn_status_success)
            return Status::unsupported(
                step.node + ": XNNPACK refused the operator's shapes (" + statusName(s) + ")");
        return Status();
    }

    Status run(pthreadpool_t pool) override
    {
        for (xnn_operator_t o : ops_) {
            const xnn_status s = xnn_run_operator(o, pool);
            if (s != xnn_status_success)
                return Status::runtime(std::string("XNNPACK operator failed: ") + statusName(s));
        }
        return Status();
    }

private:
    std::vector<xnn_operator_t> ops_;
};

uint32_t flagsFor(bool last)
{
    return last ? XNN_FLAG_YIELD_WORKERS : 0;
}

// Builds one XnnExec: `create` adds the operators, then `setup` binds them to the arena.
template <typename Body>
Expected<std::unique_ptr<StepExec>> makeExec(Body body)
{
    auto exec = std::make_unique<XnnExec>();
    Status s = body(*exec);
    if (!s.ok())
        return s;
    return std::unique_ptr<StepExec>(std::move(exec));
}

// A step of one operator: `create` makes it (given where to put it), `setup` binds it to the
// arena (given the operator); `what` names it in errors ("create this int8 clamp").
template <typename Create, typename Setup>
Expected<std::unique_ptr<StepExec>> singleOperator(
    const StepDef& step, const char* what, Create create, Setup setup)
{
    return makeExec([&](XnnExec& exec) {
        xnn_operator_t xop = nullptr;
        Status s = exec.add(create(&xop), &xop, step, what);
        if (!s.ok())
            return s;
        return exec.setup(setup(xop), step);
    });
}

// The copies of a CopyRowsStep's (or its int8 form's) pieces, of elements of `bytes` bytes (1,
// 2 or 4); a piece's input is a value, or one of `constants` (float steps only).
Status addCopies(XnnExec& exec, const StepDef& step, const std::vector<CopyRowsStep::Piece>& pieces,
    size_t bytes, float* arena, const Plan& plan, const std::vector<std::vector<float>>* constants,
    pthreadpool_t pool, bool last)
{
    for (size_t i = 0; i < pieces.size(); ++i) {
        const CopyRowsStep::Piece& p = pieces[i];
        const uint32_t flags = flagsFor(last && i + 1 == pieces.size());
        xnn_operator_t xop = nullptr;
        const xnn_status created = bytes == 1
            ? xnn_create_copy_nc_x8(p.length, p.inStride, p.outStride, flags, &xop)
            : bytes == 2 ? xnn_create_copy_nc_x16(p.length, p.inStride, p.outStride, flags, &xop)
                         : xnn_create_copy_nc_x32(p.length, p.inStride, p.outStride, flags, &xop);
        Status s = exec.add(created, &xop, step, "create this copy");
        if (!s.ok())
            return s;
        const void* base = p.input >= 0 || !constants
            ? static_cast<const void*>(plan.address(arena, p.input))
            : (*constants)[static_cast<size_t>(-1 - p.input)].data();
        const auto* from = static_cast<const char*>(base) + p.inOffset * bytes;
        auto* to = reinterpret_cast<char*>(plan.address(arena, p.output)) + p.outOffset * bytes;
        const xnn_status set = bytes == 1 ? xnn_setup_copy_nc_x8(xop, p.rows, from, to, pool)
            : bytes == 2                  ? xnn_setup_copy_nc_x16(xop, p.rows, from, to, pool)
                                          : xnn_setup_copy_nc_x32(xop, p.rows, from, to, pool);
        s = exec.setup(set, step);
        if (!s.ok())
            return s;
    }
    return Status();
}

// The setup of XNNPACK's f32 operator of each kind (all of one signature, as their creators are
// not).
decltype(&xnn_setup_add_nd_f32) binarySetupF32(BinaryKind kind)
{
    switch (kind) {
    case BinaryKind::Add: return xnn_setup_add_nd_f32;
    case BinaryKind::Subtract: return xnn_setup_subtract_nd_f32;
    case BinaryKind::Multiply: return xnn_setup_multiply_nd_f32;
    case BinaryKind::Divide: return xnn_setup_divide_nd_f32;
    case BinaryKind::Minimum: return xnn_setup_minimum_nd_f32;
    case BinaryKind::Maximum: return xnn_setup_maximum_nd_f32;
    }
    return xnn_setup_add_nd_f32;
}

decltype(&xnn_setup_clamp_nc_f32) unarySetupF32(UnaryKind kind)
{
    switch (kind) {
    case UnaryKind::Clamp: return xnn_setup_clamp_nc_f32;
    case UnaryKind::Sigmoid: return xnn_setup_sigmoid_nc_f32;
    case UnaryKind::HardSwish: return xnn_setup_hardswish_nc_f32;
    case UnaryKind::LeakyRelu: return xnn_setup_leaky_relu_nc_f32;
    case UnaryKind::Elu: return xnn_setup_elu_nc_f32;
    case UnaryKind::Negate: return xnn_setup_negate_nc_f32;
    case UnaryKind::Abs: return xnn_setup_abs_nc_f32;
    case UnaryKind::Floor: return xnn_setup_floor_nc_f32;
    case UnaryKind::Ceil: return xnn_setup_ceiling_nc_f32;
    case UnaryKind::Sqrt: return xnn_setup_square_root_nc_f32;
    case UnaryKind::Square: return xnn_setup_square_nc_f32;
    }
    return xnn_setup_clamp_nc_f32;
}

} // namespace

#ifndef JETAGENT_HAVE_ONEDNN
bool oneDnnAvailable()
{
    return false;
}

bool oneDnnHasVnni()
{
    return false;
}

bool oneDnnHasAvx512()
{
    return false;
}

Expected<std::unique_ptr<StepExec>> instantiateOneDnnConv(
    const ConvStep& step, float*, const Plan&, pthreadpool_t)
{
    return Status::unsupported(step.node + ": this build has no oneDNN");
}

Expected<std::unique_ptr<StepExec>> instantiateOneDnnFullyConnected(
    const FullyConnectedStep& step, float*, const Plan&, pthreadpool_t)
{
    return Status::unsupported(step.node + ": this build has no oneDNN");
}

Expected<std::unique_ptr<StepExec>> instantiateOneDnnQConv(
    const QConvStep& step, float*, const Plan&, pthreadpool_t)
{
    return Status::unsupported(step.node + ": this build has no oneDNN");
}
#endif

Expected<std::unique_ptr<StepExec>> ConvStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t pool, bool last) const
{
    if (onednn)
        return instantiateOneDnnConv(*this, arena, plan, pool);
    if (residual)
        return Status::unsupported(node + ": a residual add is fused on oneDNN only");
    return makeExec([&](XnnExec& exec) {
        xnn_operator_t xop = nullptr;
        const size_t inStride = inputStride ? inputStride : groups * groupInputChannels;
        const size_t outStride = outputStride ? outputStride : groups * groupOutputChannels;
        const float* in = plan.address(arena, inputs[0]) + inputOffset;
        float* out = plan.address(arena, output) + outputOffset;
        if (half) {
            Status s =
                exec.add(xnn_create_convolution2d_nhwc_f16(padTop, padRight, padBottom, padLeft,
                             kernelH, kernelW, strideH, strideW, dilationH, dilationW, groups,
                             groupInputChannels, groupOutputChannels, inStride, outStride,
                             halfKernel.data(), halfBias.empty() ? nullptr : halfBias.data(),
                             range.min, range.max, flagsFor(last), &xop),
                    &xop, *this, "create this fp16 convolution");
            if (!s.ok())
                return s;
            return exec.setup(
                xnn_setup_convolution2d_nhwc_f16(xop, batch, inputH, inputW,
                    reinterpret_cast<const uint16_t*>(plan.address(arena, inputs[0])) + inputOffset,
                    reinterpret_cast<uint16_t*>(plan.address(arena, output)) + outputOffset, pool),
                *this);
        }
        Status s = exec.add(
            xnn_create_convolution2d_nhwc_f32(padTop, padRight, padBottom, padLeft, kernelH,
                kernelW, strideH, strideW, dilationH, dilationW, groups, groupInputChannels,
                groupOutputChannels, inStride, outStride, kernel.data(),
                bias.empty() ? nullptr : bias.data(), range.min, range.max, flagsFor(last), &xop),
            &xop, *this, "create this convolution");
        if (!s.ok())
            return s;
        return exec.setup(
            xnn_setup_convolution2d_nhwc_f32(xop, batch, inputH, inputW, in, out, pool), *this);
    });
}

Expected<std::unique_ptr<StepExec>> FullyConnectedStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t pool, bool last) const
{
    if (onednn)
        return instantiateOneDnnFullyConnected(*this, arena, plan, pool);
    return makeExec([&](XnnExec& exec) {
        xnn_operator_t xop = nullptr;
        if (half) {
            Status s = exec.add(
                xnn_create_fully_connected_nc_f16(inputChannels, outputChannels, inputChannels,
                    outputChannels, halfKernel.data(), halfBias.empty() ? nullptr : halfBias.data(),
                    range.min, range.max, flagsFor(last), &xop),
                &xop, *this, "create this fp16 fully connected layer");
            if (!s.ok())
                return s;
            return exec.setup(
                xnn_setup_fully_connected_nc_f16(
                    xop, rows, plan.address(arena, inputs[0]), plan.address(arena, output), pool),
                *this);
        }
        Status s =
            exec.add(xnn_create_fully_connected_nc_f32(inputChannels, outputChannels, inputChannels,
                         outputChannels, kernel.data(), bias.empty() ? nullptr : bias.data(),
                         range.min, range.max, flagsFor(last), &xop),
                &xop, *this, "create this fully connected layer");
        if (!s.ok())
            return s;
        return exec.setup(xnn_setup_fully_connected_nc_f32(xop, rows,
                              plan.address(arena, inputs[0]), plan.address(arena, output), pool),
            *this);
    });
}

Expected<std::unique_ptr<StepExec>> PoolStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t pool, bool last) const
{
    return makeExec([&](XnnExec& exec) {
        xnn_operator_t xop = nullptr;
        const float* in = plan.address(arena, inputs[0]);
        float* out = plan.address(arena, output);
        if (max && half) {
            Status s =
                exec.add(xnn_create_max_pooling2d_nhwc_f16(padTop, padRight, padBottom, padLeft,
                             kernelH, kernelW, strideH, strideW, dilationH, dilationW, channels,
                             channels, channels, range.min, range.max, flagsFor(last), &xop),
                    &xop, *this, "create this fp16 max pooling");
            if (!s.ok())
                return s;
            return exec.setup(
                xnn_setup_max_pooling2d_nhwc_f16(xop, batch, inputH, inputW, in, out, pool), *this);
        }
        if (max) {
            Status s =
                exec.add(xnn_create_max_pooling2d_nhwc_f32(padTop, padRight, padBottom, padLeft,
                             kernelH, kernelW, strideH, strideW, dilationH, dilationW, channels,
                             channels, channels, range.min, range.max, flagsFor(last), &xop),
                    &xop, *this, "create this max pooling");
            if (!s.ok())
                return s;
            return exec.setup(
                xnn_setup_max_pooling2d_nhwc_f32(xop, batch, inputH, inputW, in, out, pool), *this);
        }
        Status s = exec.add(xnn_create_average_pooling2d_nhwc_f32(padTop, padRight, padBottom,
                                padLeft, kernelH, kernelW, strideH, strideW, channels, channels,
                                channels, range.min, range.max, flagsFor(last), &xop),
            &xop, *this, "create this average pooling");
        if (!s.ok())
            return s;
        return exec.setup(
            xnn_setup_average_pooling2d_nhwc_f32(xop, batch, inputH, inputW, in, out, pool), *this);
    });
}

Expected<std::unique_ptr<StepExec>> GlobalAveragePoolStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t pool, bool last) const
{
    if (!half)
        return globalMeanExec(plan.address(arena, inputs[0]), plan.address(arena, output), batch,
            width, channels, range, last);
    return makeExec([&](XnnExec& exec) {
        xnn_operator_t xop = nullptr;
        if (half) {
            Status s = exec.add(xnn_create_global_average_pooling_nwc_f16(channels, channels,
                                    channels, range.min, range.max, flagsFor(last), &xop),
                &xop, *this, "create this fp16 global average pooling");
            if (!s.ok())
                return s;
            return exec.setup(
                xnn_setup_global_average_pooling_nwc_f16(xop, batch, width,
                    plan.address(arena, inputs[0]), plan.address(arena, output), pool),
                *this);
        }
        Status s = exec.add(xnn_create_global_average_pooling_nwc_f32(channels, channels, channels,
                                range.min, range.max, flagsFor(last), &xop),
            &xop, *this, "create this global average pooling");
        if (!s.ok())
            return s;
        return exec.setup(xnn_setup_global_average_pooling_nwc_f32(xop, batch, width,
                              plan.address(arena, inputs[0]), plan.address(arena, output), pool),
            *this);
    });
}

namespace {

// Whether `scale` is one value per channel of each image of `full`, channels last: [N, 1.., C]
// against [N, P.., C] with more than one pixel.
bool perImageChannels(const std::vector<size_t>& full, const std::vector<size_t>& scale)
{
    if (full.size() < 3 || scale.size() != full.size() || scale[0] != full[0] ||
        scale.back() != full.back())
        return false;
    size_t pixels = 1;
    for (size_t d = 1; d + 1 < full.size(); ++d) {
        if (scale[d] != 1)
            return false;
        pixels *= full[d];
    }
    return pixels > 1;
}

} // namespace

bool BinaryStep::scalesChannels() const
{
    return !half && kind == BinaryKind::Multiply && inputs.size() == 2 &&
        (perImageChannels(shapeA, shapeB) || perImageChannels(shapeB, shapeA));
}

Expected<std::unique_ptr<StepExec>> BinaryStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t pool, bool last) const
{
    if (scalesChannels()) {
        const bool aFull = perImageChannels(shapeA, shapeB);
        const std::vector<size_t>& full = aFull ? shapeA : shapeB;
        size_t pixels = 1;
        for (size_t d = 1; d + 1 < full.size(); ++d)
            pixels *= full[d];
        return channelScaleExec(plan.address(arena, inputs[aFull ? 0 : 1]),
            plan.address(arena, inputs[aFull ? 1 : 0]), plan.address(arena, output), full[0],
            pixels, full.back(), range, last);
    }
    return makeExec([&](XnnExec& exec) {
        xnn_operator_t xop = nullptr;
        xnn_status created = xnn_status_invalid_parameter;
        const uint32_t flags = flagsFor(last);
        if (half) {
            // Add and Multiply of two computed values (halvePlan keeps the rest in fp32).
            const bool add = kind == BinaryKind::Add;
            created = add ? xnn_create_add_nd_f16(range.min, range.max, flags, &xop)
                          : xnn_create_multiply_nd_f16(range.min, range.max, flags, &xop);
            Status s = exec.add(created, &xop, *this, "create this fp16 element-wise operator");
            if (!s.ok())
                return s;
            const void* a = plan.address(arena, inputs[0]);
            const void* b = plan.address(arena, inputs[1]);
            void* out = plan.address(arena, output);
            return exec.setup(add ? xnn_setup_add_nd_f16(xop, shapeA.size(), shapeA.data(),
                                        shapeB.size(), shapeB.data(), a, b, out, pool)
                                  : xnn_setup_multiply_nd_f16(xop, shapeA.size(), shapeA.data(),
                                        shapeB.size(), shapeB.data(), a, b, out, pool),
                *this);
        }
        switch (kind) {
        case BinaryKind::Add:
            created = xnn_create_add_nd_f32(range.min, range.max, flags, &xop);
            break;
        case BinaryKind::Subtract:
            created = xnn_create_subtract_nd_f32(range.min, range.max, flags, &xop);
            break;
        case BinaryKind::Multiply:
            created = xnn_create_multiply_nd_f32(range.min, range.max, flags, &xop);
            break;
        case BinaryKind::Divide:
            created = xnn_create_divide_nd_f32(range.min, range.max, flags, &xop);
            break;
        case BinaryKind::Minimum: created = xnn_create_minimum_nd_f32(flags, &xop); break;
        case BinaryKind::Maximum: created = xnn_create_maximum_nd_f32(flags, &xop); break;
        }
        Status s = exec.add(created, &xop, *this, "create this element-wise operator");
        if (!s.ok())
            return s;
        size_t next = 0;
        const float* a = constantA.empty() ? plan.address(arena, inputs[next++]) : constantA.data();
        const float* b = constantB.empty() ? plan.address(arena, inputs[next]) : constantB.data();
        float* out = plan.address(arena, output);
        const xnn_status set = binarySetupF32(kind)(
            xop, shapeA.size(), shapeA.data(), shapeB.size(), shapeB.data(), a, b, out, pool);
        return exec.setup(set, *this);
    });
}

Expected<std::unique_ptr<StepExec>> UnaryStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t pool, bool last) const
{
    return makeExec([&](XnnExec& exec) {
        xnn_operator_t xop = nullptr;
        xnn_status created = xnn_status_invalid_parameter;
        const uint32_t f = flagsFor(last);
        // Each element is a row of one channel, so that any count is one operator.
        const size_t c = 1;
        if (half) {
            if (kind == UnaryKind::Clamp)
                created = xnn_create_clamp_nc_f16(c, c, c, range.min, range.max, f, &xop);
            else if (kind == UnaryKind::HardSwish)
                created = xnn_create_hardswish_nc_f16(c, c, c, f, &xop);
            else if (kind == UnaryKind::LeakyRelu)
                created = xnn_create_leaky_relu_nc_f16(c, c, c, alpha, f, &xop);
            Status s = exec.add(created, &xop, *this, "create this fp16 element-wise operator");
            if (!s.ok())
                return s;
            const void* in = plan.address(arena, inputs[0]);
            void* out = plan.address(arena, output);
            xnn_status set = xnn_status_invalid_parameter;
            if (kind == UnaryKind::Clamp)
                set = xnn_setup_clamp_nc_f16(xop, count, in, out, pool);
            else if (kind == UnaryKind::HardSwish)
                set = xnn_setup_hardswish_nc_f16(xop, count, in, out, pool);
            else if (kind == UnaryKind::LeakyRelu)
                set = xnn_setup_leaky_relu_nc_f16(xop, count, in, out, pool);
            return exec.setup(set, *this);
        }
        switch (kind) {
        case UnaryKind::Clamp:
            created = xnn_create_clamp_nc_f32(c, c, c, range.min, range.max, f, &xop);
            break;
        case UnaryKind::Sigmoid: created = xnn_create_sigmoid_nc_f32(c, c, c, f, &xop); break;
        case UnaryKind::HardSwish: created = xnn_create_hardswish_nc_f32(c, c, c, f, &xop); break;
        case UnaryKind::LeakyRelu:
            created = xnn_create_leaky_relu_nc_f32(c, c, c, alpha, f, &xop);
            break;
        case UnaryKind::Elu: created = xnn_create_elu_nc_f32(c, c, c, alpha, f, &xop); break;
        case UnaryKind::Negate: created = xnn_create_negate_nc_f32(c, c, c, f, &xop); break;
        case UnaryKind::Abs: created = xnn_create_abs_nc_f32(c, c, c, f, &xop); break;
        case UnaryKind::Floor: created = xnn_create_floor_nc_f32(c, c, c, f, &xop); break;
        case UnaryKind::Ceil: created = xnn_create_ceiling_nc_f32(c, c, c, f, &xop); break;
        case UnaryKind::Sqrt: created = xnn_create_square_root_nc_f32(c, c, c, f, &xop); break;
        case UnaryKind::Square: created = xnn_create_square_nc_f32(c, c, c, f, &xop); break;
        }
        Status s = exec.add(created, &xop, *this, "create this element-wise operator");
        if (!s.ok())
            return s;
        const float* in = plan.address(arena, inputs[0]);
        float* out = plan.address(arena, output);
        const xnn_status set = unarySetupF32(kind)(xop, count, in, out, pool);
        return exec.setup(set, *this);
    });
}

Expected<std::unique_ptr<StepExec>> SoftmaxStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t pool, bool last) const
{
    return singleOperator(
        *this, "create this softmax",
        [&](xnn_operator_t* xop) {
            return xnn_create_softmax_nc_f32(channels, channels, channels, flagsFor(last), xop);
        },
        [&](xnn_operator_t xop) {
            return xnn_setup_softmax_nc_f32(
                xop, rows, plan.address(arena, inputs[0]), plan.address(arena, output), pool);
        });
}

Expected<std::unique_ptr<StepExec>> CopyRowsStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t pool, bool last) const
{
    return makeExec([&](XnnExec& exec) {
        return addCopies(exec, *this, pieces, half ? 2 : 4, arena, plan, &constants, pool, last);
    });
}

Expected<std::unique_ptr<StepExec>> ChannelShuffleStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t pool, bool last) const
{
    const size_t channels = groups * groupChannels;
    return singleOperator(
        *this, "create this channel shuffle",
        [&](xnn_operator_t* xop) {
            return xnn_create_channel_shuffle_nc_x32(
                groups, groupChannels, channels, channels, flagsFor(last), xop);
        },
        [&](xnn_operator_t xop) {
            return xnn_setup_channel_shuffle_nc_x32(
                xop, pixels, plan.address(arena, inputs[0]), plan.address(arena, output), pool);
        });
}

Expected<std::unique_ptr<StepExec>> PadStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t pool, bool last) const
{
    return makeExec([&](XnnExec& exec) {
        xnn_operator_t xop = nullptr;
        if (half) {
            const uint16_t bits = halfBits(value);
            Status s = exec.add(xnn_create_constant_pad_nd_x16(&bits, flagsFor(last), &xop), &xop,
                *this, "create this padding");
            if (!s.ok())
                return s;
            return exec.setup(
                xnn_setup_constant_pad_nd_x16(xop, inputShape.size(), inputShape.data(),
                    before.data(), after.data(), plan.address(arena, inputs[0]),
                    plan.address(arena, output), pool),
                *this);
        }
        Status s = exec.add(xnn_create_constant_pad_nd_x32(&value, flagsFor(last), &xop), &xop,
            *this, "create this padding");
        if (!s.ok())
            return s;
        return exec.setup(
            xnn_setup_constant_pad_nd_x32(xop, inputShape.size(), inputShape.data(), before.data(),
                after.data(), plan.address(arena, inputs[0]), plan.address(arena, output), pool),
            *this);
    });
}

// int8 steps. Scales and zero points are the values' own (Plan::rootOf).

namespace {

int8_t* bytesOf(float* arena, const Plan& plan, int value)
{
    return reinterpret_cast<int8_t*>(plan.address(arena, value));
}

const Value& paramsOf(const Plan& plan, int value)
{
    return plan.rootOf(value);
}

int8_t zeroOf(const Value& v)
{
    return static_cast<int8_t>(v.zeroPoint);
}

} // namespace

Expected<std::unique_ptr<StepExec>> QConvStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t pool, bool last) const
{
    if (onednn)
        return instantiateOneDnnQConv(*this, arena, plan, pool);
    if (residual)
        return Status::unsupported(node + ": a residual add is fused on oneDNN only");
    const Value& in = paramsOf(plan, inputs[0]);
    const Value& out = paramsOf(plan, output);
    const size_t inStride = groups * groupInputChannels;
    const size_t outStride = groups * groupOutputChannels;
    return singleOperator(
        *this, "create this int8 convolution",
        [&](xnn_operator_t* xop) {
            return xnn_create_convolution2d_nhwc_qc8(padTop, padRight, padBottom, padLeft, kernelH,
                kernelW, strideH, strideW, dilationH, dilationW, groups, groupInputChannels,
                groupOutputChannels, inStride, outStride, zeroOf(in), in.scale, kernelScale.data(),
                kernel.data(), bias.data(), zeroOf(out), out.scale, outputMin, outputMax,
                flagsFor(last), xop);
        },
        [&](xnn_operator_t xop) {
            return xnn_setup_convolution2d_nhwc_qc8(xop, batch, inputH, inputW,
                bytesOf(arena, plan, inputs[0]), bytesOf(arena, plan, output), pool);
        });
}

Expected<std::unique_ptr<StepExec>> QAddStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t pool, bool last) const
{
    const Value& a = paramsOf(plan, inputs[0]);
    const Value& b = paramsOf(plan, inputs[1]);
    const Value& out = paramsOf(plan, output);
    return singleOperator(
        *this, "create this int8 addition",
        [&](xnn_operator_t* xop) {
            return xnn_create_add_nd_qs8(zeroOf(a), a.scale, zeroOf(b), b.scale, zeroOf(out),
                out.scale, outputMin, outputMax, flagsFor(last), xop);
        },
        [&](xnn_operator_t xop) {
            return xnn_setup_add_nd_qs8(xop, shapeA.size(), shapeA.data(), shapeB.size(),
                shapeB.data(), bytesOf(arena, plan, inputs[0]), bytesOf(arena, plan, inputs[1]),
                bytesOf(arena, plan, output), pool);
        });
}

Expected<std::unique_ptr<StepExec>> QMaxPoolStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t pool, bool last) const
{
    return singleOperator(
        *this, "create this int8 max pooling",
        [&](xnn_operator_t* xop) {
            return xnn_create_max_pooling2d_nhwc_s8(padTop, padRight, padBottom, padLeft, kernelH,
                kernelW, strideH, strideW, dilationH, dilationW, channels, channels, channels,
                outputMin, outputMax, flagsFor(last), xop);
        },
        [&](xnn_operator_t xop) {
            return xnn_setup_max_pooling2d_nhwc_s8(xop, batch, inputH, inputW,
                bytesOf(arena, plan, inputs[0]), bytesOf(arena, plan, output), pool);
        });
}

Expected<std::unique_ptr<StepExec>> QGlobalAveragePoolStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t pool, bool last) const
{
    const Value& in = paramsOf(plan, inputs[0]);
    const Value& out = paramsOf(plan, output);
    return singleOperator(
        *this, "create this int8 global average pooling",
        [&](xnn_operator_t* xop) {
            return xnn_create_global_average_pooling_nwc_qs8(channels, channels, channels,
                zeroOf(in), in.scale, zeroOf(out), out.scale, outputMin, outputMax, flagsFor(last),
                xop);
        },
        [&](xnn_operator_t xop) {
            return xnn_setup_global_average_pooling_nwc_qs8(xop, batch, width,
                bytesOf(arena, plan, inputs[0]), bytesOf(arena, plan, output), pool);
        });
}

Expected<std::unique_ptr<StepExec>> QClampStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t pool, bool last) const
{
    return singleOperator(
        *this, "create this int8 clamp",
        [&](xnn_operator_t* xop) {
            return xnn_create_clamp_nc_s8(1, 1, 1, outputMin, outputMax, flagsFor(last), xop);
        },
        [&](xnn_operator_t xop) {
            return xnn_setup_clamp_nc_s8(
                xop, count, bytesOf(arena, plan, inputs[0]), bytesOf(arena, plan, output), pool);
        });
}

Expected<std::unique_ptr<StepExec>> QCopyRowsStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t pool, bool last) const
{
    return makeExec([&](XnnExec& exec) {
        return addCopies(exec, *this, pieces, 1, arena, plan, nullptr, pool, last);
    });
}

Expected<std::unique_ptr<StepExec>> QChannelShuffleStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t pool, bool last) const
{
    const size_t channels = groups * groupChannels;
    return singleOperator(
        *this, "create this channel shuffle",
        [&](xnn_operator_t* xop) {
            return xnn_create_channel_shuffle_nc_x8(
                groups, groupChannels, channels, channels, flagsFor(last), xop);
        },
        [&](xnn_operator_t xop) {
            return xnn_setup_channel_shuffle_nc_x8(
                xop, pixels, bytesOf(arena, plan, inputs[0]), bytesOf(arena, plan, output), pool);
        });
}

Expected<std::unique_ptr<StepExec>> QPadStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t pool, bool last) const
{
    return singleOperator(
        *this, "create this padding",
        [&](xnn_operator_t* xop) {
            return xnn_create_constant_pad_nd_x8(&value, flagsFor(last), xop);
        },
        [&](xnn_operator_t xop) {
            return xnn_setup_constant_pad_nd_x8(xop, inputShape.size(), inputShape.data(),
                before.data(), after.data(), bytesOf(arena, plan, inputs[0]),
                bytesOf(arena, plan, output), pool);
        });
}

Expected<std::unique_ptr<StepExec>> ConvertStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t pool, bool last) const
{
    return makeExec([&](XnnExec& exec) {
        xnn_operator_t xop = nullptr;
        void* in = plan.address(arena, inputs[0]);
        void* out = plan.address(arena, output);
        if (from == DType::F32 && to == DType::F16) {
            Status s = exec.add(xnn_create_convert_nc_f32_f16(1, 1, 1, flagsFor(last), &xop), &xop,
                *this, "create this conversion to fp16");
            if (!s.ok())
                return s;
            return exec.setup(
                xnn_setup_convert_nc_f32_f16(xop, count, static_cast<const float*>(in), out, pool),
                *this);
        }
        if (from == DType::F16 && to == DType::F32) {
            Status s = exec.add(xnn_create_convert_nc_f16_f32(1, 1, 1, flagsFor(last), &xop), &xop,
                *this, "create this conversion from fp16");
            if (!s.ok())
                return s;
            return exec.setup(
                xnn_setup_convert_nc_f16_f32(xop, count, in, static_cast<float*>(out), pool),
                *this);
        }
        if (from == DType::F32 && to == DType::QS8) {
            const Value& o = paramsOf(plan, output);
            Status s = exec.add(xnn_create_convert_nc_f32_qs8(
                                    1, 1, 1, o.scale, zeroOf(o), -128, 127, flagsFor(last), &xop),
                &xop, *this, "create this quantization");
            if (!s.ok())
                return s;
            return exec.setup(xnn_setup_convert_nc_f32_qs8(xop, count,
                                  static_cast<const float*>(in), static_cast<int8_t*>(out), pool),
                *this);
        }
        if (from != DType::QS8 || to != DType::F32)
            return Status::unsupported(node + ": no such conversion");
        const Value& q = paramsOf(plan, inputs[0]);
        Status s = exec.add(
            xnn_create_convert_nc_qs8_f32(1, 1, 1, q.scale, zeroOf(q), flagsFor(last), &xop), &xop,
            *this, "create this dequantization");
        if (!s.ok())
            return s;
        return exec.setup(xnn_setup_convert_nc_qs8_f32(xop, count, bytesOf(arena, plan, inputs[0]),
                              plan.address(arena, output), pool),
            *this);
    });
}

} // namespace xnnplan
} // namespace jetagent
