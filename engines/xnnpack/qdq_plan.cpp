// Explicit int8 from a QDQ model's own parameters: the pairs of QuantizeLinear and
// DequantizeLinear steps become fake-quantization steps, whose parameters quantizePlanExplicit
// then gives the values around them.
#include "qdq_plan.h"

#include <algorithm>

#include "steps.h"

namespace jetagent {
namespace xnnplan {

namespace {

const QdqStep* qdqOf(const StepDef& s)
{
    return dynamic_cast<const QdqStep*>(&s);
}

bool sameParameters(const QdqStep& a, const QdqStep& b)
{
    return a.outer == b.outer && a.channels == b.channels && a.inner == b.inner &&
        a.scale == b.scale && a.zeroPoint == b.zeroPoint && a.lo == b.lo && a.hi == b.hi;
}

// The int8 form of a per-tensor quantization's parameters.
QuantParams int8Params(const QdqStep& q)
{
    QuantParams p;
    p.scale = q.scale[0];
    p.zeroPoint = static_cast<int32_t>(q.zeroPoint[0]) - (q.lo == 0 ? 128 : 0);
    return p;
}

} // namespace

bool hasQdq(const Plan& plan)
{
    return std::any_of(
        plan.steps.begin(), plan.steps.end(), [](const auto& s) { return qdqOf(*s) != nullptr; });
}

ParamTable fuseQdqPairs(Plan* plan, bool oneReader)
{
    auto& steps = plan->steps;
    auto& values = plan->values;
    auto isOutput = [&](int id) {
        return std::find(plan->outputs.begin(), plan->outputs.end(), id) != plan->outputs.end();
    };
    auto nameOf = [&](int id) { return plan->rootOf(id).name; };
    ParamTable params;
    std::vector<char> removed(steps.size(), 0);
    for (size_t i = 0; i < steps.size(); ++i) {
        auto* q = dynamic_cast<QdqStep*>(steps[i].get());
        if (!q || !q->quantize || q->fake)
            continue;
        // The integers and their aliases of the same shape (a Cast to their own type).
        std::vector<int> forms;
        bool pair = true;
        for (size_t v = 0; v < values.size(); ++v) {
            const int id = static_cast<int>(v);
            if (&plan->rootOf(id) != &values[static_cast<size_t>(q->output)])
                continue;
            forms.push_back(id);
            pair = pair && !isOutput(id) &&
                values[v].dims == values[static_cast<size_t>(q->output)].dims &&
                values[v].layout == values[static_cast<size_t>(q->output)].layout;
        }
        std::vector<size_t> readers;
        for (size_t j = i + 1; j < steps.size() && pair; ++j) {
            const auto& in = steps[j]->inputs;
            if (std::none_of(in.begin(), in.end(), [&](int id) {
                    return std::find(forms.begin(), forms.end(), id) != forms.end();
                }))
                continue;
            const QdqStep* d = qdqOf(*steps[j]);
            pair = d && !d->quantize && !d->fake && sameParameters(*q, *d);
            readers.push_back(j);
        }
        const bool perTensor = q->channels == 1;
        if (oneReader && readers.size() > 1)
            continue;
        if (!pair || readers.empty()) {
            // A QuantizeLinear of its own (a model output): its input is quantized as it says.
            if (perTensor)
                params.emplace(nameOf(q->inputs[0]), int8Params(*q));
            continue;
        }
        const int first = steps[readers[0]]->output;
        for (size_t k = 1; k < readers.size(); ++k)
            values[static_cast<size_t>(steps[readers[k]]->output)].root = first;
        for (size_t j : readers)
            removed[j] = 1;
        q->fake = true;
        q->node += " + " + steps[readers[0]]->node;
        q->op = "QuantizeDequantize";
        q->output = first;
        if (perTensor) {
            params[nameOf(first)] = int8Params(*q);
            params.emplace(nameOf(q->inputs[0]), int8Params(*q));
        }
    }
    // A DequantizeLinear of a model input: what it computes is on the grid of its parameters.
    for (size_t i = 0; i < steps.size(); ++i) {
        const QdqStep* d = qdqOf(*steps[i]);
        if (!removed[i] && d && !d->quantize && !d->fake && d->channels == 1)
            params.emplace(nameOf(d->output), int8Params(*d));
    }
    // A layout conversion (the compiler's permutation between row-major and channels-last)
    // moves values without changing them: they keep their parameters.
    for (const auto& s : steps) {
        if (!dynamic_cast<const PermuteStep*>(s.get()))
            continue;
        const auto it = params.find(nameOf(s->inputs[0]));
        if (it != params.end())
            params.emplace(nameOf(s->output), it->second);
    }
    std::vector<std::unique_ptr<StepDef>> kept;
    for (size_t i = 0; i < steps.size(); ++i)
        if (!removed[i])
            kept.push_back(std::move(steps[i]));
    steps = std::move(kept);
    planMemory(plan);
    return params;
}

size_t dropIdentityRequantizations(Plan* plan)
{
    auto& steps = plan->steps;
    size_t dropped = 0;
    std::vector<std::unique_ptr<StepDef>> kept;
    for (auto& s : steps) {
        if (dynamic_cast<const QRequantizeStep*>(s.get())) {
            const Value& in = plan->rootOf(s->inputs[0]);
            Value& out = plan->values[static_cast<size_t>(s->output)];
            if (out.root < 0 && in.type == DType::QS8 && out.type == DType::QS8 &&
                in.scale == out.scale && in.zeroPoint == out.zeroPoint &&
                in.count() == out.count()) {
                // The step maps bytes to the same bytes in memory order, whatever the shapes.
                out.root = s->inputs[0];
                ++dropped;
                continue;
            }
        }
        kept.push_back(std::move(s));
    }
    steps = std::move(kept);
    planMemory(plan);
    return dropped;
}

} // namespace xnnplan
} // namespace jetagent
