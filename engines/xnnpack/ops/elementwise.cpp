// The element-wise family: binary operators with broadcasting, unary operators and
// activations, and GELU recognised as exported (one step, or a post-op of the step before it).
#include <algorithm>
#include <cmath>

#include "operators.h"

namespace jetagent {
namespace xnnplan {
namespace ops {

namespace {

// GELU as exported, from its first node: x, which form, the pattern's other nodes and the one
// whose output is GELU's.
struct GeluMatch {
    std::string x;
    GeluForm form = GeluForm::Erf;
    std::vector<int> rest;
    int last = -1;
};

// The erf form (nn.GELU()): Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5), the division also as a
// multiplication by 1/sqrt 2 and every Add and Mul in either operand order; first: the Div.
std::optional<GeluMatch> matchGeluErf(const CompileContext& cx, const onnx::NodeProto& first)
{
    if (first.input_size() != 2 || (first.op_type() != "Div" && first.op_type() != "Mul"))
        return std::nullopt;
    // x / c, x * c or c * x.
    const bool constantFirst = first.op_type() == "Mul" && cx.constant(first.input(0));
    GeluMatch m;
    m.x = first.input(constantFirst ? 1 : 0);
    const auto divisor = cx.scalarConstant(first.input(constantFirst ? 0 : 1));
    constexpr float kSqrt2 = 1.41421356f;
    const bool scaled = divisor &&
        (first.op_type() == "Div" ? std::fabs(*divisor - kSqrt2) < 1e-6f
                                  : std::fabs(*divisor - 1.0f / kSqrt2) < 1e-6f);
    if (!scaled)
        return std::nullopt;
    const auto out = [&](int n) -> const std::string& { return cx.graph().node(n).output(0); };
    const int erf = cx.onlyReader(first.output(0), "Erf");
    const int plusOne = erf < 0 ? -1 : cx.onlyReader(out(erf), "Add");
    if (plusOne < 0 || cx.scalarConstant(cx.otherOperand(plusOne, out(erf))) != 1.0f)
        return std::nullopt;
    const int times = cx.onlyReader(out(plusOne), "Mul");
    if (times < 0 || cx.otherOperand(times, out(plusOne)) != m.x)
        return std::nullopt;
    const int half = cx.onlyReader(out(times), "Mul");
    if (half < 0 || cx.scalarConstant(cx.otherOperand(half, out(times))) != 0.5f)
        return std::nullopt;
    m.rest = {erf, plusOne, times, half};
    m.last = half;
    return m;
}

// The tanh form (nn.GELU(approximate="tanh")), as torch.onnx exports it:
// Mul(Mul(x, 0.5), Add(Tanh(Mul(Add(x, Mul(Mul(Mul(x, x), x), 0.044715)), sqrt(2/pi))), 1)),
// every Add and Mul in either operand order; first: the Mul of x by itself.
std::optional<GeluMatch> matchGeluTanh(const CompileContext& cx, const onnx::NodeProto& first)
{
    if (first.op_type() != "Mul" || first.input_size() != 2 || first.input(0) != first.input(1))
        return std::nullopt;
    GeluMatch m;
    m.form = GeluForm::Tanh;
    m.x = first.input(0);
    const auto out = [&](int n) -> const std::string& { return cx.graph().node(n).output(0); };
    const auto near = [](std::optional<float> v, float want) {
        return v && std::fabs(*v - want) < 1e-6f;
    };
    const int cube = cx.onlyReader(first.output(0), "Mul");
    if (cube < 0 || cx.otherOperand(cube, first.output(0)) != m.x)
        return std::nullopt;
    const int kappa = cx.onlyReader(out(cube), "Mul");
    if (kappa < 0 || !near(cx.scalarConstant(cx.otherOperand(kappa, out(cube))), 0.044715f))
        return std::nullopt;
    const int sum = cx.onlyReader(out(kappa), "Add");
    if (sum < 0 || cx.otherOperand(sum, out(kappa)) != m.x)
        return std::nullopt;
    const int beta = cx.onlyReader(out(sum), "Mul");
    if (beta < 0 || !near(cx.scalarConstant(cx.otherOperand(beta, out(sum))), 0.7978845608f))
        return std::nullopt;
    const int tanh = cx.onlyReader(out(beta), "Tanh");
    const int plusOne = tanh < 0 ? -1 : cx.onlyReader(out(tanh), "Add");
    if (plusOne < 0 || cx.scalarConstant(cx.otherOperand(plusOne, out(tanh))) != 1.0f)
        return std::nullopt;
    const int product = cx.onlyReader(out(plusOne), "Mul");
    if (product < 0)
        return std::nullopt;
    // The product's other operand is x * 0.5, read by the product alone and not compiled yet.
    const std::string halfX = cx.otherOperand(product, out(plusOne));
    const int half = cx.index().producer(halfX);
    if (half < 0 || cx.onlyReader(halfX, "Mul") != product || cx.valueOf(halfX) >= 0 ||
        cx.scalarConstant(cx.otherOperand(half, m.x)) != 0.5f)
        return std::nullopt;
    m.rest = {cube, kappa, sum, beta, tanh, plusOne, half, product};
    m.last = product;
    return m;
}

// HardSwish as torch.onnx exports nn.Hardswish below opset 14: Mul(x, HardSigmoid(x)) with
// HardSigmoid's alpha 1/6 and beta 1/2, the Mul's operands in either order, the HardSigmoid's
// output read by that Mul alone. The Mul's node index, or -1.
int hardSwishMul(const CompileContext& cx, const onnx::NodeProto& hardSigmoid)
{
    if (!cx.options().fuseActivations)
        return -1;
    const float alpha = floatAttribute(hardSigmoid, "alpha", 0.2f);
    const float beta = floatAttribute(hardSigmoid, "beta", 0.5f);
    if (std::fabs(alpha - 1.0f / 6.0f) > 1e-6f || beta != 0.5f)
        return -1;
    const int mul = cx.onlyReader(hardSigmoid.output(0), "Mul");
    return mul >= 0 && cx.otherOperand(mul, hardSigmoid.output(0)) == hardSigmoid.input(0) ? mul
                                                                                           : -1;
}

// SiLU (Mul(x, Sigmoid(x)), EfficientNet's and RegNetY's activation) or HardSwish (hardSwishMul),
// from its first node, the Sigmoid or HardSigmoid: oneDNN's swish or hardswish post-op.
std::optional<GeluMatch> matchGatedActivation(
    const CompileContext& cx, const onnx::NodeProto& first)
{
    GeluMatch m;
    int mul = -1;
    if (first.op_type() == "Sigmoid") {
        m.form = GeluForm::Swish;
        mul = cx.onlyReader(first.output(0), "Mul");
        if (mul >= 0 && cx.otherOperand(mul, first.output(0)) != first.input(0))
            mul = -1;
    } else if (first.op_type() == "HardSigmoid") {
        m.form = GeluForm::HardSwish;
        mul = hardSwishMul(cx, first);
    }
    if (mul < 0 || !cx.options().fuseActivations)
        return std::nullopt;
    m.x = first.input(0);
    m.rest = {mul};
    m.last = mul;
    return m;
}

// GELU in either form (matchGeluErf, matchGeluTanh), from its first node.
std::optional<GeluMatch> matchGelu(const CompileContext& cx, const onnx::NodeProto& first)
{
    if (!cx.options().fuseActivations)
        return std::nullopt;
    auto m = matchGeluErf(cx, first);
    return m ? m : matchGeluTanh(cx, first);
}

} // namespace

// A GELU, SiLU, HardSwish or Sigmoid right after `producer` joins the step as one of oneDNN's
// post-ops: when every reader of the producer's output is a node of the pattern, those nodes are
// consumed, *gelu set to its form and the pattern's last node returned (else `producer`).
const onnx::NodeProto& fuseGeluAfter(
    CompileContext& cx, const onnx::NodeProto& producer, GeluForm* gelu, std::string* text)
{
    const std::string& out = producer.output(0);
    const auto& readers = cx.index().consumers(out);
    if (readers.empty() || cx.index().isGraphOutput(out) || !cx.options().fuseActivations)
        return producer;
    // A lone Sigmoid: the gate of a squeeze-and-excitation block, after its second convolution.
    if (readers.size() == 1 && cx.graph().node(readers[0]).op_type() == "Sigmoid" &&
        cx.graph().node(readers[0]).input(0) == out) {
        *gelu = GeluForm::Sigmoid;
        cx.consume(readers[0]);
        *text += " + " + onnxutil::nodeLabel(cx.graph().node(readers[0]), readers[0]);
        return cx.graph().node(readers[0]);
    }
    if (readers.size() < 2)
        return producer;
    for (int r : readers) {
        auto m = matchGelu(cx, cx.graph().node(r));
        if (!m)
            m = matchGatedActivation(cx, cx.graph().node(r));
        if (!m || m->x != out)
            continue;
        const bool inside = std::all_of(readers.begin(), readers.end(), [&](int n) {
            return n == r || std::find(m->rest.begin(), m->rest.end(), n) != m->rest.end();
        });
        if (!inside)
            continue;
        *gelu = m->form;
        cx.consume(r);
        cx.consume(m->rest.begin(), m->rest.end());
        static const char* const kText[] = {
            "", " + GELU", " + GELU (tanh)", " + SiLU", " + HardSwish", ""};
        *text += kText[static_cast<int>(m->form)];
        return cx.graph().node(m->last);
    }
    return producer;
}

namespace {

// GELU as PyTorch exports it, either form (matchGeluErf, matchGeluTanh), from its first node; one
// step when the intermediates are read only inside the pattern.
Status fuseGelu(CompileContext& cx, const onnx::NodeProto& first, bool* fused)
{
    *fused = false;
    const auto m = matchGelu(cx, first);
    const int in = m ? cx.valueOf(m->x) : -1;
    if (in < 0)
        return Status();
    // Element-wise: in whatever layout x has (MaxViT's GELUs sit between convolutions).
    const Value v = cx.plan().values[static_cast<size_t>(in)];
    auto step = std::make_unique<GeluStep>();
    step->count = static_cast<size_t>(v.count());
    step->form = m->form;
    step->node = cx.label(first) + " to " + onnxutil::nodeLabel(cx.graph().node(m->last), m->last) +
        (m->form == GeluForm::Tanh ? " (GELU, tanh)" : " (GELU)");
    step->inputs = {in};
    step->output = cx.addValue(cx.graph().node(m->last).output(0), v.dims, v.layout);
    cx.consume(m->rest.begin(), m->rest.end());
    cx.addStep(first, std::move(step))->op = "Gelu";
    *fused = true;
    return Status();
}

} // namespace

namespace {

// Min or Max of one tensor: that tensor.
Status variadicOfOne(CompileContext& cx, const onnx::NodeProto& node)
{
    // The minimum or maximum of one tensor is that tensor.
    auto computed = cx.computedInput(node);
    if (!computed)
        return computed.status();
    const int source = computed.value();
    const Layout layout = cx.plan().values[static_cast<size_t>(source)].layout;
    const std::vector<int64_t> dims = cx.plan().values[static_cast<size_t>(source)].dims;
    const int id = cx.alias(node.output(0), source, dims);
    cx.plan().values[static_cast<size_t>(id)].layout = layout;
    return Status();
}

// Min or Max of more than two tensors: pairwise from the left, ((a, b), c), ..., each
// intermediate of the broadcast shape.
Status variadicPairs(CompileContext& cx, const onnx::NodeProto& node)
{
    std::string acc = node.input(0);
    for (int i = 1; i < node.input_size(); ++i) {
        const bool lastPair = i + 1 == node.input_size();
        const std::string out =
            lastPair ? node.output(0) : node.output(0) + "@" + std::to_string(i);
        if (!lastPair) {
            std::vector<int64_t> a, b;
            for (int k = 0; k < 2; ++k) {
                const std::string& name = k == 0 ? acc : node.input(i);
                std::vector<int64_t>& dims = k == 0 ? a : b;
                if (const onnx::TensorProto* t = cx.constant(name))
                    dims.assign(t->dims().begin(), t->dims().end());
                else if (cx.shapes().count(name))
                    dims = cx.shapes().at(name);
                else
                    return cx.fail(node, "the shape of '" + name + "' is unknown");
            }
            const size_t r = std::max(a.size(), b.size());
            a = aligned(a, r);
            b = aligned(b, r);
            std::vector<int64_t> dims(r);
            for (size_t d = 0; d < r; ++d)
                dims[d] = a[d] == 1 ? b[d] : a[d];
            cx.setShape(out, dims);
        }
        onnx::NodeProto pair;
        pair.set_op_type(node.op_type());
        pair.set_name(node.name());
        pair.add_input(acc);
        pair.add_input(node.input(i));
        pair.add_output(out);
        Status s = binary(cx, pair);
        if (!s.ok())
            return s;
        acc = out;
    }
    return Status();
}

// Operand i of a binary step whose output `y` has `layout`: a constant the step holds (re-laid to
// the layout) or a computed value it reads, with its shape aligned to y's rank.
Status binaryOperand(CompileContext& cx, const onnx::NodeProto& node, int i,
    const std::vector<int64_t>& y, Layout layout, BinaryStep* step)
{
    const std::string where = cx.label(node);
    const size_t rank = y.size();
    std::vector<size_t>& shape = i == 0 ? step->shapeA : step->shapeB;
    std::vector<float>& data = i == 0 ? step->constantA : step->constantB;
    const onnx::TensorProto* t = cx.constant(node.input(i));
    std::vector<int64_t> dims;
    if (t) {
        dims.assign(t->dims().begin(), t->dims().end());
        if (dims.size() > rank)
            return Status::invalid(where + ": constant " + dimsText(dims) +
                " has more dimensions than the output " + dimsText(y));
        auto v = cx.constantFloats(node.input(i), node);
        if (!v)
            return v.status();
        dims = aligned(dims, rank);
        data = toLayout(v.value(), dims, layout);
        if (data.empty())
            data.push_back(0); // never read: an empty tensor broadcasts to nothing
    } else {
        auto in = cx.need(node.input(i), layout, node);
        if (!in)
            return in.status();
        const Value& v = cx.plan().values[static_cast<size_t>(in.value())];
        dims = aligned(v.dims, rank);
        // A lower-rank operand is read as it lies: fine only where the re-ordered axes are 1.
        if (v.dims.size() < rank && !sameMemoryOrder(dims, Layout::Plain, layout))
            return cx.fail(node,
                "broadcasting " + dimsText(v.dims) + " against " + dimsText(y) +
                    " across the channel axis is not supported");
        step->inputs.push_back(in.value());
    }
    for (size_t d = 0; d < rank; ++d)
        if (dims[d] != 1 && dims[d] != y[d])
            return Status::invalid(
                where + ": operand " + dimsText(dims) + " does not broadcast to " + dimsText(y));
    for (int64_t d : physicalDims(dims, layout))
        shape.push_back(static_cast<size_t>(d));
    return Status();
}

} // namespace

Status binary(CompileContext& cx, const onnx::NodeProto& node)
{
    if (node.op_type() == "Div" || node.op_type() == "Mul") {
        bool fused = false;
        if (Status s = fuseGelu(cx, node, &fused); !s || fused)
            return s;
    }
    static const std::unordered_map<std::string, BinaryKind> kinds = {{"Add", BinaryKind::Add},
        {"Sub", BinaryKind::Subtract}, {"Mul", BinaryKind::Multiply}, {"Div", BinaryKind::Divide},
        {"Min", BinaryKind::Minimum}, {"Max", BinaryKind::Maximum}};
    const std::string where = cx.label(node);
    const bool variadic = node.op_type() == "Min" || node.op_type() == "Max";
    if (variadic && node.input_size() == 1)
        return variadicOfOne(cx, node);
    if (variadic && node.input_size() > 2)
        return variadicPairs(cx, node);
    if (node.input_size() != 2)
        return cx.fail(
            node, std::to_string(node.input_size()) + " inputs (the xnnpack backend takes two)");
    auto y = cx.shapeOf(node.output(0), node);
    if (!y)
        return y.status();
    const size_t rank = y->size();
    // Before opset 7, broadcast=1 with an axis aligns B's first dimension with A's axis `axis`;
    // only the trailing alignment, which NumPy's rules give, is supported.
    if (cx.opset() < 7 && intAttribute(node, "broadcast", 0) != 0 && findAttribute(node, "axis")) {
        std::vector<int64_t> b;
        const onnx::TensorProto* bt = cx.constant(node.input(1));
        if (bt)
            b.assign(bt->dims().begin(), bt->dims().end());
        else if (const int id = cx.valueOf(node.input(1)); id >= 0)
            b = cx.plan().values[static_cast<size_t>(id)].dims;
        if (normalizedAxis(intAttribute(node, "axis", 0), rank) !=
            static_cast<int64_t>(rank) - static_cast<int64_t>(b.size()))
            return cx.fail(node,
                "broadcast=1 with axis " + std::to_string(intAttribute(node, "axis", 0)) +
                    " (B aligned other than with A's trailing axes) is not supported");
    }
    // The output is channels-last when a computed operand of full rank is.
    Layout layout = Layout::Plain;
    for (int i = 0; i < 2; ++i) {
        const int id = cx.valueOf(node.input(i));
        if (id >= 0 && cx.plan().values[static_cast<size_t>(id)].dims.size() == rank &&
            cx.plan().values[static_cast<size_t>(id)].layout == Layout::ChannelsLast)
            layout = Layout::ChannelsLast;
    }
    auto step = std::make_unique<BinaryStep>();
    step->kind = kinds.at(node.op_type());
    for (int i = 0; i < 2; ++i)
        if (Status s = binaryOperand(cx, node, i, *y, layout, step.get()); !s.ok())
            return s;
    std::string fused;
    std::string outName = node.output(0);
    if (step->kind == BinaryKind::Add || step->kind == BinaryKind::Subtract ||
        step->kind == BinaryKind::Multiply || step->kind == BinaryKind::Divide)
        outName = cx.fuseActivation(node, &step->range, &fused);
    step->node = where + fused;
    step->output = cx.addValue(outName, y.value(), layout);
    cx.addStep(node, std::move(step));
    return Status();
}

namespace {

// Pow's exponent: a constant scalar, float or integer.
Expected<float> powExponent(CompileContext& cx, const onnx::NodeProto& node)
{
    if (node.input_size() != 2 || !cx.constant(node.input(1)))
        return cx.fail(node, "only a constant exponent is supported");
    const auto* e = cx.constant(node.input(1));
    if (onnxutil::elementCount(*e) != 1)
        return cx.fail(node, "only a scalar exponent is supported");
    if (e->data_type() == onnx::TensorProto_DataType_FLOAT) {
        auto value = cx.constantFloats(node.input(1), node);
        if (!value)
            return value.status();
        return (*value)[0];
    }
    auto value = cx.constantInts(node.input(1), node);
    if (!value)
        return value.status();
    return static_cast<float>((*value)[0]);
}

// Clip's bounds (attributes before opset 11, constant inputs since), checked.
Status clipRange(CompileContext& cx, const onnx::NodeProto& node, OutputRange* range)
{
    float lo = -INFINITY;
    float hi = INFINITY;
    if (cx.opset() < 11) {
        lo = floatAttribute(node, "min", lo);
        hi = floatAttribute(node, "max", hi);
    } else {
        for (int i = 1; i < node.input_size() && i < 3; ++i) {
            if (node.input(i).empty())
                continue;
            auto b = cx.constantFloats(node.input(i), node);
            if (!b)
                return b.status();
            if (b->size() != 1)
                return Status::invalid(cx.label(node) + ": Clip bounds must be scalars");
            (i == 1 ? lo : hi) = (*b)[0];
        }
    }
    if (std::isnan(lo) || std::isnan(hi) || lo > hi)
        return Status::invalid(cx.label(node) + ": Clip min " + std::to_string(lo) +
            " is above max " + std::to_string(hi) + " or not a number");
    if (lo == hi)
        return cx.fail(node, "Clip with min equal to max is not supported");
    *range = {lo, hi};
    return Status();
}

} // namespace

Status unary(CompileContext& cx, const onnx::NodeProto& node)
{
    const std::string& op = node.op_type();
    // Element-wise: the output keeps the input's layout.
    auto input = cx.computedInputCopy(node);
    if (!input)
        return input.status();
    const auto& [source, v] = *input;
    const std::vector<int64_t> dims = v.dims;
    const Layout layout = v.layout;
    const size_t count = static_cast<size_t>(v.count());
    // Pow by a constant scalar exponent: x*x and the square root on XNNPACK, the identity an
    // alias (decomposed LayerNorms square the deviation: Pow(d, 2)); any other exponent by the
    // reference kernel. A computed or per-element exponent is refused.
    float exponent = 1.0f;
    if (op == "Pow") {
        auto e = powExponent(cx, node);
        if (!e)
            return e.status();
        exponent = e.value();
        if (exponent == 1.0f) {
            const int id = cx.alias(node.output(0), source, dims);
            cx.plan().values[static_cast<size_t>(id)].layout = layout;
            return Status();
        }
    }
    static const std::unordered_map<std::string, UnaryKind> xnn = {{"Relu", UnaryKind::Clamp},
        {"Clip", UnaryKind::Clamp}, {"Sigmoid", UnaryKind::Sigmoid},
        {"HardSwish", UnaryKind::HardSwish}, {"LeakyRelu", UnaryKind::LeakyRelu},
        {"Elu", UnaryKind::Elu}, {"Neg", UnaryKind::Negate}, {"Abs", UnaryKind::Abs},
        {"Floor", UnaryKind::Floor}, {"Ceil", UnaryKind::Ceil}, {"Sqrt", UnaryKind::Sqrt}};
    auto it = xnn.find(op);
    const bool square = op == "Pow" && exponent == 2.0f;
    const bool root = op == "Pow" && exponent == 0.5f;
    // x * HardSigmoid(x): one HardSwish on XNNPACK instead of a reference step and a Mul (21 of
    // mobilenet_v3_large's 29 HardSigmoids; the other 8 scale its squeeze-and-excitations).
    const int swishMul = op == "HardSigmoid" ? hardSwishMul(cx, node) : -1;
    if (swishMul >= 0) {
        auto step = std::make_unique<UnaryStep>();
        step->kind = UnaryKind::HardSwish;
        step->count = count;
        step->inputs = {source};
        const onnx::NodeProto& mul = cx.graph().node(swishMul);
        step->output = cx.addValue(mul.output(0), dims, layout);
        step->node = cx.label(node) + " + " + onnxutil::nodeLabel(mul, swishMul) + " (HardSwish)";
        cx.consume(swishMul);
        cx.addStep(node, std::move(step))->op = "HardSwish";
        return Status();
    }
    if (it != xnn.end() || square || root) {
        auto step = std::make_unique<UnaryStep>();
        step->kind = square ? UnaryKind::Square : root ? UnaryKind::Sqrt : it->second;
        step->count = count;
        if (op == "Relu") {
            step->range.min = 0;
        } else if (op == "Clip") {
            if (Status s = clipRange(cx, node, &step->range); !s.ok())
                return s;
        } else if (op == "LeakyRelu") {
            step->alpha = floatAttribute(node, "alpha", 0.01f);
        } else if (op == "Elu") {
            step->alpha = floatAttribute(node, "alpha", 1.0f);
        }
        if (!std::isfinite(step->alpha))
            return Status::invalid(cx.label(node) + ": alpha is not a finite number");
        step->inputs = {source};
        step->output = cx.addValue(node.output(0), dims, layout);
        cx.addStep(node, std::move(step));
        return Status();
    }
    auto step = std::make_unique<RefUnaryStep>();
    static const std::unordered_map<std::string, RefUnaryKind> ref = {{"Tanh", RefUnaryKind::Tanh},
        {"HardSigmoid", RefUnaryKind::HardSigmoid}, {"Exp", RefUnaryKind::Exp},
        {"Log", RefUnaryKind::Log}, {"Erf", RefUnaryKind::Erf}, {"Pow", RefUnaryKind::Pow}};
    step->kind = ref.at(op);
    step->count = count;
    step->alpha = op == "Pow" ? exponent : floatAttribute(node, "alpha", 0.2f);
    step->beta = floatAttribute(node, "beta", 0.5f);
    step->inputs = {source};
    step->output = cx.addValue(node.output(0), dims, layout);
    cx.addStep(node, std::move(step));
    return Status();
}

} // namespace ops
} // namespace xnnplan
} // namespace jetagent
