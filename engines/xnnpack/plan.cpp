// Layouts and the memory plan of a compiled model.
#include <algorithm>
#include <numeric>

#include "plan.h"

namespace jetagent {
namespace xnnplan {

std::vector<int> physicalOrder(int rank, Layout layout)
{
    std::vector<int> order(static_cast<size_t>(rank));
    std::iota(order.begin(), order.end(), 0);
    if (layout == Layout::ChannelsLast && rank >= 3) {
        // N, C, spatial... -> N, spatial..., C
        order.erase(order.begin() + 1);
        order.push_back(1);
    }
    return order;
}

std::vector<int64_t> physicalDims(const std::vector<int64_t>& dims, Layout layout)
{
    std::vector<int64_t> out;
    for (int axis : physicalOrder(static_cast<int>(dims.size()), layout))
        out.push_back(dims[static_cast<size_t>(axis)]);
    return out;
}

int64_t product(const std::vector<int64_t>& dims, size_t begin, size_t end)
{
    int64_t p = 1;
    for (size_t i = begin; i < end && i < dims.size(); ++i)
        p *= dims[i];
    return p;
}

void planMemory(Plan* plan)
{
    const size_t n = plan->values.size();
    const int steps = static_cast<int>(plan->steps.size());
    auto rootIndex = [&](int v) {
        while (plan->values[static_cast<size_t>(v)].root >= 0)
            v = plan->values[static_cast<size_t>(v)].root;
        return static_cast<size_t>(v);
    };
    // Lifetime of each root value in steps: [first, last].
    std::vector<int> first(n, steps), last(n, -1);
    auto touch = [&](int v, int step) {
        const size_t r = rootIndex(v);
        first[r] = std::min(first[r], step);
        last[r] = std::max(last[r], step);
    };
    for (int v : plan->inputs)
        touch(v, -1);
    for (int s = 0; s < steps; ++s) {
        const StepDef& step = *plan->steps[static_cast<size_t>(s)];
        for (int v : step.inputs)
            touch(v, s);
        if (step.output >= 0)
            touch(step.output, s);
        for (int v : step.extraOutputs)
            touch(v, s);
    }
    for (int v : plan->outputs)
        touch(v, steps);

    // Largest first, each at the lowest offset free over its lifetime.
    std::vector<size_t> order;
    for (size_t v = 0; v < n; ++v)
        if (plan->values[v].root < 0 && last[v] >= first[v])
            order.push_back(v);
    std::stable_sort(order.begin(), order.end(),
        [&](size_t a, size_t b) { return plan->values[a].floats() > plan->values[b].floats(); });
    constexpr int64_t kAlign = 16; // floats: 64-byte lines
    std::vector<size_t> placed;
    int64_t total = 0;
    for (size_t v : order) {
        const int64_t size = (plan->values[v].floats() + kAlign - 1) / kAlign * kAlign;
        std::vector<std::pair<int64_t, int64_t>> busy; // [begin, end) of live overlapping values
        for (size_t p : placed)
            if (first[p] <= last[v] && first[v] <= last[p])
                busy.emplace_back(plan->values[p].offset,
                    plan->values[p].offset +
                        (plan->values[p].floats() + kAlign - 1) / kAlign * kAlign);
        std::sort(busy.begin(), busy.end());
        int64_t offset = 0;
        for (const auto& b : busy) {
            if (offset + size <= b.first)
                break;
            offset = std::max(offset, b.second);
        }
        plan->values[v].offset = offset;
        total = std::max(total, offset + size);
        placed.push_back(v);
    }
    for (size_t v = 0; v < n; ++v)
        if (plan->values[v].root >= 0)
            plan->values[v].offset = plan->values[rootIndex(static_cast<int>(v))].offset;
    // XNNPACK's kernels may read up to XNN_EXTRA_BYTES past a tensor's end.
    plan->arenaFloats = total + kAlign;
}

} // namespace xnnplan
} // namespace jetagent
