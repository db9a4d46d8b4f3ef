// QuantizeLinear and DequantizeLinear in fp32: the kernel of QdqStep, which follows ONNX's
// definition (round half to even, saturation to the integer type) over integers held as floats.
#include <algorithm>
#include <cmath>

#include "steps.h"

namespace jetagent {
namespace xnnplan {

namespace {

// The elements a task takes: enough to be worth a dispatch.
constexpr size_t kBlock = 4096;

// One task per block of kBlock elements of one channel row (outer index and channel), so that a
// per-tensor step over a whole activation is shared out over the pool too.
class QdqExec final : public StepExec {
public:
    QdqExec(const QdqStep& step, const float* in, float* out, uint32_t flags)
        : step_(step),
          in_(in),
          out_(out),
          flags_(flags),
          blocks_((step.inner + kBlock - 1) / kBlock)
    {
    }
    Status run(pthreadpool_t pool) override
    {
        pthreadpool_parallelize_1d(
            pool, [](void* self, size_t i) { static_cast<QdqExec*>(self)->block(i); }, this,
            step_.outer * step_.channels * blocks_, flags_);
        return Status();
    }

private:
    void block(size_t task)
    {
        const size_t row = task / blocks_; // outer index x channels + channel
        const size_t c = row % step_.channels;
        const size_t begin = (task % blocks_) * kBlock;
        const size_t end = std::min(step_.inner, begin + kBlock);
        const float s = step_.scale[c], z = step_.zeroPoint[c];
        const float* x = in_ + row * step_.inner;
        float* y = out_ + row * step_.inner;
        const float lo = step_.lo, hi = step_.hi;
        if (!step_.quantize) {
            for (size_t i = begin; i < end; ++i)
                y[i] = (x[i] - z) * s;
            return;
        }
        for (size_t i = begin; i < end; ++i) {
            // nearbyint rounds half to even in the default rounding mode, as ONNX specifies;
            // NaN saturates to nothing in particular in ONNX: it becomes the zero point.
            const float q = std::nearbyint(x[i] / s) + z;
            const float saturated = std::isnan(q) ? z : std::min(hi, std::max(lo, q));
            y[i] = step_.fake ? (saturated - z) * s : saturated; // fake: DequantizeLinear too
        }
    }

    const QdqStep& step_;
    const float* in_;
    float* out_;
    uint32_t flags_;
    size_t blocks_;
};

} // namespace

Expected<std::unique_ptr<StepExec>> QdqStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t /*pool*/, bool last) const
{
    return std::unique_ptr<StepExec>(
        std::make_unique<QdqExec>(*this, plan.address(arena, inputs[0]),
            plan.address(arena, output), last ? PTHREADPOOL_FLAG_YIELD_WORKERS : 0));
}

// Explicit int8 (qdq_plan.cpp): a fake-quantization pair is the point where the model fixes a
// value's int8 parameters; in an int8 plan it maps its input's int8 values onto them (nothing to
// do when they are the same, which qdq_plan.cpp then removes).
LowRole QdqStep::lowRole(DType type, bool, bool) const
{
    return fake && channels == 1 && type == DType::QS8 ? LowRole::Compute : LowRole::Float;
}

std::unique_ptr<StepDef> QdqStep::toInt8(const Plan& plan) const
{
    auto step = std::make_unique<QRequantizeStep>();
    step->count = static_cast<size_t>(plan.rootOf(output).count());
    return step;
}

namespace {

class RequantizeExec final : public StepExec {
public:
    RequantizeExec(const int8_t* in, int8_t* out, size_t count, const Value& from, const Value& to)
        : in_(in), out_(out), count_(count), from_(from), to_(to)
    {
    }
    Status run(pthreadpool_t) override
    {
        // As the pair computes it: the real value (DequantizeLinear), then QuantizeLinear.
        const float sIn = from_.scale, sOut = to_.scale;
        const auto zIn = static_cast<float>(from_.zeroPoint);
        const auto zOut = static_cast<float>(to_.zeroPoint);
        for (size_t i = 0; i < count_; ++i) {
            const float real = (static_cast<float>(in_[i]) - zIn) * sIn;
            const float q = std::nearbyint(real / sOut) + zOut;
            out_[i] = static_cast<int8_t>(std::min(127.0f, std::max(-128.0f, q)));
        }
        return Status();
    }

private:
    const int8_t* in_;
    int8_t* out_;
    size_t count_;
    Value from_, to_;
};

} // namespace

Expected<std::unique_ptr<StepExec>> QRequantizeStep::instantiate(
    float* arena, const Plan& plan, pthreadpool_t /*pool*/, bool /*last*/) const
{
    return std::unique_ptr<StepExec>(std::make_unique<RequantizeExec>(
        reinterpret_cast<const int8_t*>(plan.address(arena, inputs[0])),
        reinterpret_cast<int8_t*>(plan.address(arena, output)), count, plan.rootOf(inputs[0]),
        plan.rootOf(output)));
}

} // namespace xnnplan
} // namespace jetagent
