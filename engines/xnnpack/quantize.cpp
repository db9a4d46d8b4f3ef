// Calibration ranges and the int8 pass over a compiled plan.
#include "quantize.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <sstream>
#include <utility>

#include "jetagent/base/format.h"
#include "jetagent/base/text.h"
#include "steps.h"

namespace jetagent {
namespace xnnplan {

namespace {

constexpr const char* kRangesHeader = "jetagent xnnpack ranges 1";

void widen(const float* data, int64_t count, ValueRange* range)
{
    float lo = range->min, hi = range->max;
    for (int64_t i = 0; i < count; ++i) {
        const float x = data[i];
        if (!std::isfinite(x))
            continue;
        lo = std::min(lo, x);
        hi = std::max(hi, x);
    }
    range->min = lo;
    range->max = hi;
}

// The affine int8 mapping of a range, widened to hold 0 exactly (padding and ReLU's floor).
void setParams(Value* v, const ValueRange& r)
{
    const double lo = std::min<double>(r.min, 0), hi = std::max<double>(r.max, 0);
    const double span = hi - lo > 1e-12 ? hi - lo : 1e-6;
    const double scale = span / 255.0;
    const long zero = std::lround(-128.0 - lo / scale);
    v->scale = static_cast<float>(scale);
    v->zeroPoint = static_cast<int32_t>(std::clamp<long>(zero, -128, 127));
}

class UnionFind {
public:
    explicit UnionFind(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
    size_t find(size_t x)
    {
        while (parent_[x] != x)
            x = parent_[x] = parent_[parent_[x]];
        return x;
    }
    void join(size_t a, size_t b) { parent_[find(a)] = find(b); }

private:
    std::vector<size_t> parent_;
};

// What the int8 and fp16 passes share: the step list made again, each step's inputs converted to
// the type it runs in, and the model's outputs converted back to float.
struct Lowering {
    DType type = DType::QS8;
    std::vector<char> lowStep; // per step: runs in `type`
    std::vector<char> lowRoot; // per value (roots): held in `type`
    // Sets the parameters (scale, zero point) of a `type` copy of float root value `r`.
    std::function<Status(size_t r, Value* copy)> lowCopy;
    // The `type` form of a step (the same object with `half` set, or a new one).
    std::function<std::unique_ptr<StepDef>(std::unique_ptr<StepDef>)> lower;
};

Status rebuildSteps(Plan* plan, const Lowering& lowering, size_t* converts)
{
    auto& values = plan->values;
    auto& steps = plan->steps;
    const size_t valueCount = values.size();
    auto root = [&](int id) {
        while (values[static_cast<size_t>(id)].root >= 0)
            id = values[static_cast<size_t>(id)].root;
        return static_cast<size_t>(id);
    };
    for (size_t v = 0; v < valueCount; ++v)
        values[v].type = lowering.lowRoot[root(static_cast<int>(v))] ? lowering.type : DType::F32;
    const bool int8 = lowering.type == DType::QS8;
    std::vector<std::unique_ptr<StepDef>> out;
    std::vector<int> floatCopy(valueCount, -1), lowCopy(valueCount, -1);
    auto addConvert = [&](size_t from, DType to) -> int {
        Value v;
        v.name = values[from].name + (to == DType::F32 ? "@float" : int8 ? "@int8" : "@fp16");
        v.dims = values[from].dims;
        v.layout = values[from].layout;
        v.type = to;
        values.push_back(v);
        const int id = static_cast<int>(values.size() - 1);
        auto step = std::make_unique<ConvertStep>();
        step->from = values[from].type;
        step->to = to;
        step->count = static_cast<size_t>(values[from].count());
        const bool toLow = to != DType::F32;
        step->node = std::string(int8 ? (toLow ? "quantize '" : "dequantize '")
                                      : (toLow ? "to fp16 '" : "to fp32 '")) +
            values[from].name + "'";
        step->op = int8 ? (toLow ? "QuantizeLinear" : "DequantizeLinear") : "Cast";
        step->inputs = {static_cast<int>(from)};
        step->output = id;
        out.push_back(std::move(step));
        ++*converts;
        return id;
    };
    for (const auto& s : steps)
        plan->weightFloats -= s->lowerableWeights();
    for (size_t i = 0; i < steps.size(); ++i) {
        std::unique_ptr<StepDef> s = std::move(steps[i]);
        const std::vector<int> inputs = s->inputs;
        for (int id : inputs) {
            const size_t r = root(id);
            if (!lowering.lowStep[i] && lowering.lowRoot[r]) {
                if (floatCopy[r] < 0)
                    floatCopy[r] = addConvert(r, DType::F32);
                s->replaceInput(id, floatCopy[r]);
            } else if (lowering.lowStep[i] && !lowering.lowRoot[r]) {
                if (lowCopy[r] < 0) {
                    const int copy = addConvert(r, lowering.type);
                    if (Status st = lowering.lowCopy(r, &values[static_cast<size_t>(copy)]);
                        !st.ok())
                        return st;
                    lowCopy[r] = copy;
                }
                s->replaceInput(id, lowCopy[r]);
            }
        }
        if (!lowering.lowStep[i]) {
            out.push_back(std::move(s));
            continue;
        }
        StepDef* before = s.get();
        const std::string node = s->node, op = s->op;
        const std::vector<int> in = s->inputs, extra = s->extraOutputs;
        const int output = s->output;
        std::unique_ptr<StepDef> low = lowering.lower(std::move(s));
        if (low.get() != before) {
            low->node = node;
            low->op = op;
            low->inputs = in;
            low->output = output;
            low->extraOutputs = extra;
        }
        out.push_back(std::move(low));
    }
    // The model's outputs stay float, shaped as before.
    for (int& id : plan->outputs) {
        const size_t r = root(id);
        if (!lowering.lowRoot[r])
            continue;
        const int converted = addConvert(r, DType::F32);
        Value& v = values[static_cast<size_t>(converted)];
        v.name = values[static_cast<size_t>(id)].name;
        v.dims = values[static_cast<size_t>(id)].dims;
        v.layout = values[static_cast<size_t>(id)].layout;
        id = converted;
    }
    // Weights: the lowered steps' replace the float ones they were made from.
    for (const auto& s : out)
        plan->weightFloats += s->lowerableWeights();
    steps = std::move(out);
    planMemory(plan);
    return Status();
}

// The step list of an int8 plan whose roles and int8 values are decided, with conversions where
// int8 and float parts meet; `lowCopy` sets the scale and zero point of an int8 copy of a float
// value. Shared by the calibrated and the explicit (QDQ) quantization.
Expected<QuantizeSummary> lowerToInt8(Plan* plan, const std::vector<LowRole>& roles,
    const std::vector<char>& isInt8, std::function<Status(size_t r, Value* copy)> lowCopy)
{
    QuantizeSummary summary;
    Lowering lowering;
    lowering.type = DType::QS8;
    for (LowRole role : roles)
        lowering.lowStep.push_back(role != LowRole::Float);
    lowering.lowRoot = isInt8;
    lowering.lowCopy = std::move(lowCopy);
    lowering.lower = [&](std::unique_ptr<StepDef> s) { return s->toInt8(*plan); };
    if (Status rebuilt = rebuildSteps(plan, lowering, &summary.converts); !rebuilt.ok())
        return rebuilt;
    for (LowRole role : roles)
        ++(role == LowRole::Float ? summary.floatSteps : summary.int8Steps);
    return summary;
}

// Each step's role in a pass to `type`, in order: a step lowers (unless forced to stay fp32) as
// its lowRole says given its inputs, and then its outputs are held lowered (`lowRoot`, per root
// value).
std::vector<LowRole> assignRoles(
    const Plan& plan, DType type, const std::vector<char>& forcedFloat, std::vector<char>* lowRoot)
{
    lowRoot->assign(plan.values.size(), 0);
    auto root = [&](int id) { return static_cast<size_t>(&plan.rootOf(id) - plan.values.data()); };
    std::vector<LowRole> roles(plan.steps.size(), LowRole::Float);
    for (size_t i = 0; i < plan.steps.size(); ++i) {
        const StepDef& s = *plan.steps[i];
        bool any = false, all = !s.inputs.empty();
        for (int id : s.inputs) {
            any = any || (*lowRoot)[root(id)];
            all = all && (*lowRoot)[root(id)];
        }
        roles[i] = forcedFloat[i] ? LowRole::Float : s.lowRole(type, any, all);
        if (roles[i] == LowRole::Float)
            continue;
        if (s.output >= 0)
            (*lowRoot)[root(s.output)] = 1;
        for (int id : s.extraOutputs)
            (*lowRoot)[root(id)] = 1;
    }
    return roles;
}

} // namespace

uint16_t halfBits(float x)
{
    uint32_t f;
    std::memcpy(&f, &x, sizeof f);
    const uint32_t sign = (f >> 16) & 0x8000u;
    const uint32_t exponent = (f >> 23) & 0xffu;
    uint32_t mantissa = f & 0x7fffffu;
    if (exponent == 0xff) // infinity or NaN (kept quiet)
        return static_cast<uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
    const int e = static_cast<int>(exponent) - 127 + 15;
    if (e >= 0x1f)
        return static_cast<uint16_t>(sign | 0x7c00u); // overflow: infinity
    if (e <= 0) { // a subnormal half, or zero
        if (e < -10)
            return static_cast<uint16_t>(sign);
        mantissa |= 0x800000u;
        const int shift = 14 - e;
        uint32_t half = mantissa >> shift;
        const uint32_t rest = mantissa & ((1u << shift) - 1);
        const uint32_t halfway = 1u << (shift - 1);
        if (rest > halfway || (rest == halfway && (half & 1u)))
            ++half;
        return static_cast<uint16_t>(sign | half);
    }
    uint32_t half = (static_cast<uint32_t>(e) << 10) | (mantissa >> 13);
    const uint32_t rest = mantissa & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
        ++half; // may carry into the exponent, up to infinity: still right
    return static_cast<uint16_t>(sign | half);
}

QuantizeSummary halvePlan(Plan* plan)
{
    Lowering lowering;
    lowering.type = DType::F16;
    const std::vector<LowRole> roles =
        assignRoles(*plan, DType::F16, std::vector<char>(plan->steps.size(), 0), &lowering.lowRoot);
    QuantizeSummary summary;
    for (LowRole role : roles) {
        lowering.lowStep.push_back(role != LowRole::Float);
        ++(role != LowRole::Float ? summary.int8Steps : summary.floatSteps);
    }
    lowering.lowCopy = [](size_t, Value*) { return Status(); };
    lowering.lower = [](std::unique_ptr<StepDef> s) {
        s->toHalf();
        return s;
    };
    // Nothing in the fp16 pass can fail: the conversions need no parameters.
    (void)rebuildSteps(plan, lowering, &summary.converts);
    return summary;
}

void observeStep(const Plan& plan, size_t step, const float* arena, RangeTable* ranges)
{
    const StepDef& s = *plan.steps[step];
    auto observe = [&](int id) {
        const Value& v = plan.values[static_cast<size_t>(id)];
        widen(arena + v.offset, v.count(), &(*ranges)[v.name]);
    };
    if (s.output >= 0)
        observe(s.output);
    for (int id : s.extraOutputs)
        observe(id);
    if (step == 0)
        for (int id : plan.inputs)
            observe(id);
}

std::string formatRanges(const RangeTable& ranges)
{
    std::string text = std::string(kRangesHeader) + "\n";
    std::string buffer;
    for (const auto& entry : ranges) {
        buffer = formatText(" %a %a\n", static_cast<double>(entry.second.min),
            static_cast<double>(entry.second.max));
        text += entry.first + buffer;
    }
    return text;
}

Expected<RangeTable> parseRanges(const std::string& text)
{
    const std::vector<std::string> lines = splitLines(text);
    if (lines.empty() || lines[0] != kRangesHeader)
        return Status::invalid("not a jetagent xnnpack range table (its first line is not '" +
            std::string(kRangesHeader) + "')");
    RangeTable table;
    for (size_t i = 1; i < lines.size(); ++i) {
        const std::string& line = lines[i];
        const size_t number = i + 1;
        const size_t b = line.rfind(' ');
        const size_t a =
            b == std::string::npos || b == 0 ? std::string::npos : line.rfind(' ', b - 1);
        if (a == std::string::npos || a == 0)
            return Status::invalid("line " + std::to_string(number) + " is not 'name min max'");
        char* end = nullptr;
        const std::string lo = line.substr(a + 1, b - a - 1), hi = line.substr(b + 1);
        ValueRange r;
        r.min = std::strtof(lo.c_str(), &end);
        if (end == lo.c_str() || *end)
            return Status::invalid(
                "line " + std::to_string(number) + ": '" + lo + "' is no number");
        r.max = std::strtof(hi.c_str(), &end);
        if (end == hi.c_str() || *end)
            return Status::invalid(
                "line " + std::to_string(number) + ": '" + hi + "' is no number");
        table[line.substr(0, a)] = r;
    }
    return table;
}

namespace {

size_t rootIndex(const Plan& plan, int id)
{
    return static_cast<size_t>(&plan.rootOf(id) - plan.values.data());
}

Expected<ValueRange> rangeOf(const Plan& plan, const RangeTable& ranges, size_t r)
{
    const std::string& name = plan.values[r].name;
    auto found = ranges.find(name);
    if (found == ranges.end())
        return Status::invalid("the calibration ranges have no value '" + name +
            "' (they were made for another model or compilation)");
    return found->second;
}

// Every value a step writes, and every model input, must have a range: checked before anything
// changes, so that a table from elsewhere leaves the plan as it was.
Status checkCovered(const Plan& plan, const RangeTable& ranges)
{
    std::vector<int> written(plan.inputs);
    for (const auto& step : plan.steps) {
        written.push_back(step->output);
        written.insert(written.end(), step->extraOutputs.begin(), step->extraOutputs.end());
    }
    for (int id : written)
        if (id >= 0) {
            auto r = rangeOf(plan, ranges, rootIndex(plan, id));
            if (!r)
                return r.status();
        }
    return Status();
}

// One scale and zero point per class of int8 values that int8 data movement joins, from the
// class's widest range.
Status setClassParams(Plan* plan, const RangeTable& ranges, const std::vector<LowRole>& roles,
    const std::vector<char>& isInt8)
{
    auto& values = plan->values;
    const size_t valueCount = values.size();
    UnionFind classes(valueCount);
    for (size_t i = 0; i < plan->steps.size(); ++i) {
        if (roles[i] != LowRole::PassThrough)
            continue;
        const StepDef& s = *plan->steps[i];
        for (int id : s.inputs)
            classes.join(rootIndex(*plan, id), rootIndex(*plan, s.output));
        for (int id : s.extraOutputs)
            classes.join(rootIndex(*plan, id), rootIndex(*plan, s.output));
    }
    std::vector<ValueRange> classRange(valueCount);
    for (size_t v = 0; v < valueCount; ++v) {
        if (!isInt8[v] || values[v].root >= 0)
            continue;
        auto r = rangeOf(*plan, ranges, v);
        if (!r)
            return r.status();
        ValueRange& c = classRange[classes.find(v)];
        c.min = std::min(c.min, r.value().min);
        c.max = std::max(c.max, r.value().max);
    }
    for (size_t v = 0; v < valueCount; ++v)
        if (isInt8[v] && values[v].root < 0)
            setParams(&values[v], classRange[classes.find(v)]);
    return Status();
}

// Marks in `forcedFloat` the compute steps whose scales their int8 kernel cannot take (a float
// input of an int8 step is quantized with its own range); true when it marked any.
Expected<bool> forceMisfits(const Plan& plan, const RangeTable& ranges,
    const std::vector<LowRole>& roles, const std::vector<char>& isInt8,
    std::vector<char>* forcedFloat)
{
    auto paramsOfInput = [&](int id) -> Expected<Value> {
        const size_t r = rootIndex(plan, id);
        if (isInt8[r])
            return plan.values[r];
        auto range = rangeOf(plan, ranges, r);
        if (!range)
            return range.status();
        Value v;
        setParams(&v, range.value());
        return v;
    };
    bool changed = false;
    for (size_t i = 0; i < plan.steps.size(); ++i) {
        if (roles[i] != LowRole::Compute)
            continue;
        const StepDef& s = *plan.steps[i];
        std::vector<Value> in;
        for (int id : s.inputs) {
            auto p = paramsOfInput(id);
            if (!p)
                return p.status();
            in.push_back(p.value());
        }
        if (!s.int8ScalesFit(in, plan.rootOf(s.output))) {
            (*forcedFloat)[i] = 1;
            changed = true;
        }
    }
    return changed;
}

} // namespace

Expected<QuantizeSummary> quantizePlan(Plan* plan, const RangeTable& ranges)
{
    auto& values = plan->values;
    auto& steps = plan->steps;
    if (Status covered = checkCovered(*plan, ranges); !covered.ok())
        return covered;

    // Which steps run int8 (their lowRole): convolutions and fully connected layers always (their
    // inputs are quantized where they are float), additions and means where an input is int8
    // already, data movement where every input is. A step whose scales XNNPACK cannot take stays
    // float, and the choice is made again around it.
    std::vector<char> forcedFloat(steps.size(), 0);
    // The steps that compute a model output stay float, so that outputs (logits) keep their
    // resolution: 8 bits over a logit range of 30 would make near-ties into ties.
    for (size_t i = 0; i < steps.size(); ++i)
        for (int o : plan->outputs)
            if (steps[i]->output >= 0 && rootIndex(*plan, steps[i]->output) == rootIndex(*plan, o))
                forcedFloat[i] = 1;
    std::vector<char> isInt8;
    std::vector<LowRole> roles;
    for (;;) {
        roles = assignRoles(*plan, DType::QS8, forcedFloat, &isInt8);
        if (Status set = setClassParams(plan, ranges, roles, isInt8); !set.ok())
            return set;
        auto changed = forceMisfits(*plan, ranges, roles, isInt8, &forcedFloat);
        if (!changed)
            return changed.status();
        if (!changed.value())
            break;
    }
    for (size_t v = 0; v < values.size(); ++v) {
        if (values[v].root >= 0) {
            values[v].scale = plan->rootOf(static_cast<int>(v)).scale;
            values[v].zeroPoint = plan->rootOf(static_cast<int>(v)).zeroPoint;
        }
    }

    // The new step list, with conversions where int8 and float parts meet.
    return lowerToInt8(plan, roles, isInt8, [&](size_t r, Value* copy) -> Status {
        auto range = rangeOf(*plan, ranges, r);
        if (!range)
            return range.status();
        setParams(copy, range.value());
        return Status();
    });
}

// Explicit int8: the parameters a QDQ model gives, instead of calibrated ranges.

namespace {

// Which steps can run int8 with the parameters given: those whose lowRole allows it, whose every
// input and output has parameters (data movement's all alike) and whose kernel takes them; the
// others are forced to fp32 and the roles assigned again until nothing changes.
std::vector<LowRole> explicitRoles(
    const Plan& plan, const ParamTable& params, std::vector<char>* isInt8)
{
    auto paramsOf = [&](int id) -> const QuantParams* {
        const auto it = params.find(plan.rootOf(id).name);
        return it == params.end() ? nullptr : &it->second;
    };
    std::vector<char> forcedFloat(plan.steps.size(), 0);
    for (;;) {
        std::vector<LowRole> roles = assignRoles(plan, DType::QS8, forcedFloat, isInt8);
        bool changed = false;
        for (size_t i = 0; i < plan.steps.size(); ++i) {
            if (roles[i] == LowRole::Float)
                continue;
            const StepDef& s = *plan.steps[i];
            std::vector<int> ids = s.inputs;
            ids.insert(ids.end(), s.extraOutputs.begin(), s.extraOutputs.end());
            ids.push_back(s.output);
            bool fits = true;
            const QuantParams* first = nullptr;
            std::vector<Value> in;
            Value out;
            for (size_t k = 0; k < ids.size() && fits; ++k) {
                const QuantParams* p = paramsOf(ids[k]);
                fits = p &&
                    (roles[i] != LowRole::PassThrough || !first ||
                        (p->scale == first->scale && p->zeroPoint == first->zeroPoint));
                if (!fits)
                    break;
                first = first ? first : p;
                Value v;
                v.scale = p->scale;
                v.zeroPoint = p->zeroPoint;
                (k < s.inputs.size() ? in.emplace_back(v) : out) = v;
            }
            if (fits && roles[i] == LowRole::Compute)
                fits = s.int8ScalesFit(in, out);
            if (!fits) {
                forcedFloat[i] = 1;
                changed = true;
            }
        }
        if (!changed)
            return roles;
    }
}

} // namespace

Expected<QuantizeSummary> quantizePlanExplicit(Plan* plan, const ParamTable& params)
{
    std::vector<char> isInt8;
    const std::vector<LowRole> roles = explicitRoles(*plan, params, &isInt8);
    auto& values = plan->values;
    for (size_t v = 0; v < values.size(); ++v) {
        const auto it = params.find(plan->rootOf(static_cast<int>(v)).name);
        if (it == params.end())
            continue;
        values[v].scale = it->second.scale;
        values[v].zeroPoint = it->second.zeroPoint;
    }
    return lowerToInt8(plan, roles, isInt8, [&](size_t r, Value* copy) -> Status {
        const auto it = params.find(values[r].name);
        if (it == params.end())
            return Status::invalid("no int8 parameters for value '" + values[r].name + "'");
        copy->scale = it->second.scale;
        copy->zeroPoint = it->second.zeroPoint;
        return Status();
    });
}

} // namespace xnnplan
} // namespace jetagent
