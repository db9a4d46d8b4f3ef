// The xnnpack backend's int8 convolutions on oneDNN (x86-64 builds with oneDNN): the pass over a
// quantized plan that moves its dense int8 convolutions onto oneDNN's int8 kernels and folds an
// int8 residual addition after one of them into it.
//
// Measured (docs/cpu-engine.md, "int8"): oneDNN 2.6's int8 kernels ran resnet50 1.65x faster
// than XNNPACK's 2022 qc8 kernels and 2x faster than fp32 on a CPU without VNNI (AVX2, where
// oneDNN halves the weights to 7 bits); with VNNI they only gain. So the pass does not ask which
// instructions the CPU has. Depthwise and other grouped convolutions stay on XNNPACK: on oneDNN's
// int8 depthwise kernel mobilenet_v2 ran slower (14.5 against 11 ms).
#include "steps.h"

namespace jetagent {
namespace xnnplan {

namespace {

size_t rootIndex(const Plan& plan, int id)
{
    return static_cast<size_t>(&plan.rootOf(id) - plan.values.data());
}

// Folds steps[add] into the oneDNN convolution that computes one of its operands, where that is
// safe: the convolution has no clamp of its own (a clamp between it and the sum would be lost),
// nothing else reads its output (the folded step no longer writes it), and the other operand is a
// different value of the same shape (no broadcasting). The folded step takes the addition's place,
// where both operands are computed.
bool foldResidual(Plan* plan, size_t add, const std::vector<int>& producer,
    const std::vector<int>& readers, const std::vector<char>& isOutput)
{
    auto& steps = plan->steps;
    const auto* sum = dynamic_cast<const QAddStep*>(steps[add].get());
    if (!sum || sum->inputs.size() != 2 || sum->shapeA != sum->shapeB)
        return false;
    for (size_t k = 0; k < 2; ++k) {
        const size_t conv = rootIndex(*plan, sum->inputs[k]);
        const size_t other = rootIndex(*plan, sum->inputs[1 - k]);
        const int at = producer[conv];
        if (conv == other || at < 0 || readers[conv] != 1 || isOutput[conv])
            continue;
        auto* q = dynamic_cast<QConvStep*>(steps[static_cast<size_t>(at)].get());
        if (!q || !q->onednn || q->residual || q->outputMin != -128 || q->outputMax != 127 ||
            plan->values[conv].count() != plan->rootOf(sum->output).count())
            continue;
        q->residual = true;
        q->inputs = {q->inputs[0], sum->inputs[1 - k]};
        q->output = sum->output;
        q->outputMin = sum->outputMin;
        q->outputMax = sum->outputMax;
        q->node += " + " + sum->node;
        steps[add] = std::move(steps[static_cast<size_t>(at)]);
        return true;
    }
    return false;
}

} // namespace

OneDnnInt8Summary moveInt8ToOneDnn(Plan* plan)
{
    OneDnnInt8Summary summary;
    auto& steps = plan->steps;
    const size_t valueCount = plan->values.size();
    std::vector<int> producer(valueCount, -1), readers(valueCount, 0);
    std::vector<char> isOutput(valueCount, 0);
    for (int id : plan->outputs)
        isOutput[rootIndex(*plan, id)] = 1;
    for (size_t i = 0; i < steps.size(); ++i) {
        StepDef& s = *steps[i];
        if (auto* q = dynamic_cast<QConvStep*>(&s); q && q->groups == 1) {
            q->onednn = true;
            ++summary.convolutions;
        }
        for (int id : s.inputs)
            ++readers[rootIndex(*plan, id)];
        if (s.output >= 0)
            producer[rootIndex(*plan, s.output)] = static_cast<int>(i);
    }
    for (size_t i = 0; i < steps.size(); ++i)
        if (steps[i] && foldResidual(plan, i, producer, readers, isOutput))
            ++summary.residuals;
    std::vector<std::unique_ptr<StepDef>> kept;
    for (auto& s : steps)
        if (s)
            kept.push_back(std::move(s));
    steps = std::move(kept);
    if (summary.residuals > 0)
        planMemory(plan);
    return summary;
}

} // namespace xnnplan
} // namespace jetagent
