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

int8_t quantize(float x, const Value& v)
{
    if (std::isnan(x))
        return static_cast<int8_t>(v.zeroPoint);
    const double q = std::nearbyint(static_cast<double>(x) / v.scale) + v.zeroPoint;
    return static_cast<int8_t>(std::clamp(q, -128.0, 127.0));
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

enum class Kind {
    Float, // stays fp32
    Compute, // int8 in, int8 out with its own scale (convolution, fully connected, add, mean)
    PassThrough, // moves int8 values; its inputs and outputs share one scale and zero point
};

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
    auto remap = [](StepDef* s, int from, int to) {
        for (int& id : s->inputs)
            if (id == from)
                id = to;
        if (auto* copy = dynamic_cast<CopyRowsStep*>(s))
            for (auto& p : copy->pieces)
                if (p.input == from)
                    p.input = to;
    };
    for (const auto& s : steps) {
        if (auto* c = dynamic_cast<const ConvStep*>(s.get()))
            plan->weightFloats -= static_cast<int64_t>(c->kernel.size() + c->bias.size());
        else if (auto* f = dynamic_cast<const FullyConnectedStep*>(s.get()))
            plan->weightFloats -= static_cast<int64_t>(f->kernel.size() + f->bias.size());
    }
    for (size_t i = 0; i < steps.size(); ++i) {
        std::unique_ptr<StepDef> s = std::move(steps[i]);
        const std::vector<int> inputs = s->inputs;
        for (int id : inputs) {
            const size_t r = root(id);
            if (!lowering.lowStep[i] && lowering.lowRoot[r]) {
                if (floatCopy[r] < 0)
                    floatCopy[r] = addConvert(r, DType::F32);
                remap(s.get(), id, floatCopy[r]);
            } else if (lowering.lowStep[i] && !lowering.lowRoot[r]) {
                if (lowCopy[r] < 0) {
                    const int copy = addConvert(r, lowering.type);
                    if (Status st = lowering.lowCopy(r, &values[static_cast<size_t>(copy)]);
                        !st.ok())
                        return st;
                    lowCopy[r] = copy;
                }
                remap(s.get(), id, lowCopy[r]);
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
    for (const auto& s : out) {
        if (auto* c = dynamic_cast<const ConvStep*>(s.get()))
            plan->weightFloats += static_cast<int64_t>(c->kernel.size() + c->bias.size() +
                (c->halfKernel.size() + c->halfBias.size() + 1) / 2);
        else if (auto* f = dynamic_cast<const FullyConnectedStep*>(s.get()))
            plan->weightFloats += static_cast<int64_t>(f->kernel.size() + f->bias.size() +
                (f->halfKernel.size() + f->halfBias.size() + 1) / 2);
        else if (auto* q = dynamic_cast<const QConvStep*>(s.get()))
            plan->weightFloats += static_cast<int64_t>(
                (q->kernel.size() + 3) / 4 + q->kernelScale.size() + q->bias.size());
    }
    steps = std::move(out);
    planMemory(plan);
    return Status();
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

namespace {

std::vector<uint16_t> toHalf(const std::vector<float>& values)
{
    std::vector<uint16_t> out(values.size());
    for (size_t i = 0; i < values.size(); ++i)
        out[i] = halfBits(values[i]);
    return out;
}

} // namespace

QuantizeSummary halvePlan(Plan* plan)
{
    auto& values = plan->values;
    auto& steps = plan->steps;
    auto root = [&](int id) {
        while (values[static_cast<size_t>(id)].root >= 0)
            id = values[static_cast<size_t>(id)].root;
        return static_cast<size_t>(id);
    };
    Lowering lowering;
    lowering.type = DType::F16;
    lowering.lowStep.assign(steps.size(), 0);
    lowering.lowRoot.assign(values.size(), 0);
    QuantizeSummary summary;
    for (size_t i = 0; i < steps.size(); ++i) {
        StepDef* s = steps[i].get();
        bool any = false, all = !s->inputs.empty();
        for (int id : s->inputs) {
            any = any || lowering.lowRoot[root(id)];
            all = all && lowering.lowRoot[root(id)];
        }
        bool low = false;
        if (auto* conv = dynamic_cast<ConvStep*>(s))
            low = !conv->onednn && !conv->residual;
        else if (dynamic_cast<FullyConnectedStep*>(s))
            low = true;
        else if (auto* bin = dynamic_cast<BinaryStep*>(s))
            low = (bin->kind == BinaryKind::Add || bin->kind == BinaryKind::Multiply) &&
                bin->constantA.empty() && bin->constantB.empty() && bin->inputs.size() == 2 && any;
        else if (dynamic_cast<GlobalAveragePoolStep*>(s))
            low = any;
        else if (auto* pool = dynamic_cast<PoolStep*>(s))
            low = pool->max && all;
        else if (auto* unary = dynamic_cast<UnaryStep*>(s))
            low = (unary->kind == UnaryKind::Clamp || unary->kind == UnaryKind::HardSwish ||
                      unary->kind == UnaryKind::LeakyRelu) &&
                all;
        else if (dynamic_cast<PadStep*>(s))
            low = all;
        else if (auto* copy = dynamic_cast<CopyRowsStep*>(s)) {
            bool computed = copy->constants.empty();
            for (const auto& p : copy->pieces)
                computed = computed && p.input >= 0;
            low = computed && all;
        }
        lowering.lowStep[i] = low;
        ++(low ? summary.int8Steps : summary.floatSteps);
        if (!low)
            continue;
        if (s->output >= 0)
            lowering.lowRoot[root(s->output)] = 1;
        for (int id : s->extraOutputs)
            lowering.lowRoot[root(id)] = 1;
    }
    lowering.lowCopy = [](size_t, Value*) { return Status(); };
    lowering.lower = [](std::unique_ptr<StepDef> s) {
        s->half = true;
        if (auto* conv = dynamic_cast<ConvStep*>(s.get())) {
            conv->halfKernel = toHalf(conv->kernel);
            conv->halfBias = toHalf(conv->bias);
            conv->kernel = {};
            conv->bias = {};
        } else if (auto* fc = dynamic_cast<FullyConnectedStep*>(s.get())) {
            fc->halfKernel = toHalf(fc->kernel);
            fc->halfBias = toHalf(fc->bias);
            fc->kernel = {};
            fc->bias = {};
        }
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

Expected<QuantizeSummary> quantizePlan(Plan* plan, const RangeTable& ranges)
{
    auto& values = plan->values;
    auto& steps = plan->steps;
    const size_t valueCount = values.size();
    auto root = [&](int id) {
        while (values[static_cast<size_t>(id)].root >= 0)
            id = values[static_cast<size_t>(id)].root;
        return static_cast<size_t>(id);
    };
    auto rangeOf = [&](size_t r) -> Expected<ValueRange> {
        auto found = ranges.find(values[r].name);
        if (found == ranges.end())
            return Status::invalid("the calibration ranges have no value '" + values[r].name +
                "' (they were made for another model or compilation)");
        return found->second;
    };

    // Every value a step writes, and every model input, must have a range: checked before
    // anything changes, so that a table from elsewhere leaves the plan as it was.
    {
        std::vector<int> written(plan->inputs);
        for (const auto& step : steps) {
            written.push_back(step->output);
            written.insert(written.end(), step->extraOutputs.begin(), step->extraOutputs.end());
        }
        for (int id : written)
            if (id >= 0) {
                auto r = rangeOf(root(id));
                if (!r)
                    return r.status();
            }
    }

    // Which steps run int8: convolutions and fully connected layers always (their inputs are
    // quantized where they are float), additions and means where an input is int8 already, data
    // movement where every input is. A step whose scales XNNPACK cannot take stays float, and the
    // choice is made again around it.
    std::vector<Kind> kinds(steps.size(), Kind::Float);
    std::vector<char> forcedFloat(steps.size(), 0);
    // The steps that compute a model output stay float, so that outputs (logits) keep their
    // resolution: 8 bits over a logit range of 30 would make near-ties into ties.
    for (size_t i = 0; i < steps.size(); ++i)
        for (int o : plan->outputs)
            if (steps[i]->output >= 0 && root(steps[i]->output) == root(o))
                forcedFloat[i] = 1;
    std::vector<char> isInt8;
    for (;;) {
        isInt8.assign(valueCount, 0);
        for (size_t i = 0; i < steps.size(); ++i) {
            StepDef* s = steps[i].get();
            bool any = false, all = !s->inputs.empty();
            for (int id : s->inputs) {
                any = any || isInt8[root(id)];
                all = all && isInt8[root(id)];
            }
            Kind k = Kind::Float;
            if (forcedFloat[i]) {
            } else if (auto* conv = dynamic_cast<ConvStep*>(s)) {
                if (!conv->onednn && !conv->residual)
                    k = Kind::Compute;
            } else if (dynamic_cast<FullyConnectedStep*>(s)) {
                k = Kind::Compute;
            } else if (auto* bin = dynamic_cast<BinaryStep*>(s)) {
                if (bin->kind == BinaryKind::Add && bin->constantA.empty() &&
                    bin->constantB.empty() && bin->inputs.size() == 2 && any)
                    k = Kind::Compute;
            } else if (dynamic_cast<GlobalAveragePoolStep*>(s)) {
                if (any)
                    k = Kind::Compute;
            } else if (auto* pool = dynamic_cast<PoolStep*>(s)) {
                if (pool->max && all)
                    k = Kind::PassThrough;
            } else if (auto* unary = dynamic_cast<UnaryStep*>(s)) {
                if (unary->kind == UnaryKind::Clamp && all)
                    k = Kind::PassThrough;
            } else if (dynamic_cast<ChannelShuffleStep*>(s) || dynamic_cast<PadStep*>(s)) {
                if (all)
                    k = Kind::PassThrough;
            } else if (auto* copy = dynamic_cast<CopyRowsStep*>(s)) {
                bool computed = copy->constants.empty();
                for (const auto& p : copy->pieces)
                    computed = computed && p.input >= 0;
                if (computed && all)
                    k = Kind::PassThrough;
            }
            kinds[i] = k;
            if (k == Kind::Float)
                continue;
            if (s->output >= 0)
                isInt8[root(s->output)] = 1;
            for (int id : s->extraOutputs)
                isInt8[root(id)] = 1;
        }

        // One scale and zero point per class of values that int8 data movement joins.
        UnionFind classes(valueCount);
        for (size_t i = 0; i < steps.size(); ++i) {
            if (kinds[i] != Kind::PassThrough)
                continue;
            const StepDef& s = *steps[i];
            for (int id : s.inputs)
                classes.join(root(id), root(s.output));
            for (int id : s.extraOutputs)
                classes.join(root(id), root(s.output));
        }
        std::vector<ValueRange> classRange(valueCount);
        for (size_t v = 0; v < valueCount; ++v) {
            if (!isInt8[v] || values[v].root >= 0)
                continue;
            auto r = rangeOf(v);
            if (!r)
                return r.status();
            ValueRange& c = classRange[classes.find(v)];
            c.min = std::min(c.min, r.value().min);
            c.max = std::max(c.max, r.value().max);
        }
        for (size_t v = 0; v < valueCount; ++v)
            if (isInt8[v] && values[v].root < 0)
                setParams(&values[v], classRange[classes.find(v)]);

        // Scales the kernels take. A float input of an int8 step is quantized with its own range.
        auto paramsOfInput = [&](int id) -> Expected<Value> {
            const size_t r = root(id);
            if (isInt8[r])
                return values[r];
            auto range = rangeOf(r);
            if (!range)
                return range.status();
            Value v;
            setParams(&v, range.value());
            return v;
        };
        bool changed = false;
        for (size_t i = 0; i < steps.size(); ++i) {
            if (kinds[i] != Kind::Compute)
                continue;
            StepDef* s = steps[i].get();
            const Value& out = values[root(s->output)];
            bool fits = true;
            std::vector<Value> in;
            for (int id : s->inputs) {
                auto p = paramsOfInput(id);
                if (!p)
                    return p.status();
                in.push_back(p.value());
            }
            if (auto* conv = dynamic_cast<ConvStep*>(s))
                fits = convScalesFit(
                    conv->kernel, conv->groups * conv->groupOutputChannels, in[0], out);
            else if (auto* fc = dynamic_cast<FullyConnectedStep*>(s))
                fits = convScalesFit(fc->kernel, fc->outputChannels, in[0], out);
            else if (dynamic_cast<BinaryStep*>(s))
                fits = ratioIn(double(in[0].scale) / out.scale, 0x1.0p-10, 0x1.0p+8) &&
                    ratioIn(double(in[1].scale) / out.scale, 0x1.0p-10, 0x1.0p+8);
            else if (dynamic_cast<GlobalAveragePoolStep*>(s))
                fits = ratioIn(double(in[0].scale) / out.scale, 0x1.0p-8, 0x1.0p+8);
            if (!fits) {
                forcedFloat[i] = 1;
                changed = true;
            }
        }
        if (!changed)
            break;
    }
    for (size_t v = 0; v < valueCount; ++v) {
        if (values[v].root >= 0) {
            values[v].scale = values[root(static_cast<int>(v))].scale;
            values[v].zeroPoint = values[root(static_cast<int>(v))].zeroPoint;
        }
    }

    // The new step list, with conversions where int8 and float parts meet.
    QuantizeSummary summary;
    Lowering lowering;
    lowering.type = DType::QS8;
    lowering.lowStep.resize(steps.size());
    for (size_t i = 0; i < steps.size(); ++i)
        lowering.lowStep[i] = kinds[i] != Kind::Float;
    lowering.lowRoot = isInt8;
    lowering.lowCopy = [&](size_t r, Value* copy) -> Status {
        auto range = rangeOf(r);
        if (!range)
            return range.status();
        setParams(copy, range.value());
        return Status();
    };
    lowering.lower = [&](std::unique_ptr<StepDef> s) -> std::unique_ptr<StepDef> {
        const Value& y = values[root(s->output)];
        auto quantized = [&](float x) { return quantize(x, y); };
        std::unique_ptr<StepDef> q;
        if (auto* conv = dynamic_cast<ConvStep*>(s.get())) {
            auto step = std::make_unique<QConvStep>();
            static_cast<ConvGeometry&>(*step) = static_cast<const ConvGeometry&>(*conv);
            const size_t channels = conv->groups * conv->groupOutputChannels;
            quantizeWeights(conv->kernel, channels, &step->kernel, &step->kernelScale);
            step->bias = quantizeBias(
                conv->bias, channels, values[root(s->inputs[0])].scale, step->kernelScale);
            step->outputMin = quantized(conv->range.min);
            step->outputMax = quantized(conv->range.max);
            q = std::move(step);
        } else if (auto* fc = dynamic_cast<FullyConnectedStep*>(s.get())) {
            auto step = std::make_unique<QConvStep>();
            step->groupInputChannels = fc->inputChannels;
            step->groupOutputChannels = fc->outputChannels;
            step->batch = fc->rows;
            step->inputH = step->inputW = 1;
            quantizeWeights(fc->kernel, fc->outputChannels, &step->kernel, &step->kernelScale);
            step->bias = quantizeBias(
                fc->bias, fc->outputChannels, values[root(s->inputs[0])].scale, step->kernelScale);
            step->outputMin = quantized(fc->range.min);
            step->outputMax = quantized(fc->range.max);
            q = std::move(step);
        } else if (auto* bin = dynamic_cast<BinaryStep*>(s.get())) {
            auto step = std::make_unique<QAddStep>();
            step->shapeA = bin->shapeA;
            step->shapeB = bin->shapeB;
            step->outputMin = quantized(bin->range.min);
            step->outputMax = quantized(bin->range.max);
            q = std::move(step);
        } else if (auto* gap = dynamic_cast<GlobalAveragePoolStep*>(s.get())) {
            auto step = std::make_unique<QGlobalAveragePoolStep>();
            step->batch = gap->batch;
            step->width = gap->width;
            step->channels = gap->channels;
            step->outputMin = quantized(gap->range.min);
            step->outputMax = quantized(gap->range.max);
            q = std::move(step);
        } else if (auto* pool = dynamic_cast<PoolStep*>(s.get())) {
            auto step = std::make_unique<QMaxPoolStep>();
            static_cast<Window2d&>(*step) = static_cast<const Window2d&>(*pool);
            step->channels = pool->channels;
            step->outputMin = quantized(pool->range.min);
            step->outputMax = quantized(pool->range.max);
            q = std::move(step);
        } else if (auto* unary = dynamic_cast<UnaryStep*>(s.get())) {
            auto step = std::make_unique<QClampStep>();
            step->count = unary->count;
            step->outputMin = quantized(unary->range.min);
            step->outputMax = quantized(unary->range.max);
            q = std::move(step);
        } else if (auto* shuffle = dynamic_cast<ChannelShuffleStep*>(s.get())) {
            auto step = std::make_unique<QChannelShuffleStep>();
            step->pixels = shuffle->pixels;
            step->groups = shuffle->groups;
            step->groupChannels = shuffle->groupChannels;
            q = std::move(step);
        } else if (auto* pad = dynamic_cast<PadStep*>(s.get())) {
            auto step = std::make_unique<QPadStep>();
            step->inputShape = pad->inputShape;
            step->before = pad->before;
            step->after = pad->after;
            step->value = quantized(pad->value);
            q = std::move(step);
        } else if (auto* copy = dynamic_cast<CopyRowsStep*>(s.get())) {
            auto step = std::make_unique<QCopyRowsStep>();
            step->pieces = copy->pieces;
            q = std::move(step);
        }
        return q;
    };
    Status rebuilt = rebuildSteps(plan, lowering, &summary.converts);
    if (!rebuilt.ok())
        return rebuilt;
    for (size_t i = 0; i < kinds.size(); ++i)
        ++(kinds[i] == Kind::Float ? summary.floatSteps : summary.int8Steps);
    return summary;
}

} // namespace xnnplan
} // namespace jetagent
