// The linear family: Gemm and MatMul (fully connected layers on constant weights, batched
// matrix products otherwise), and Einsum where preparation left it.
#include <algorithm>

#include "operators.h"

namespace jetagent {
namespace xnnplan {
namespace ops {

namespace {

// Which library runs a fully connected layer: oneDNN for one of at least 16 rows (two bands of 8,
// onednn_steps.cpp) where this build has it (x86-64); XNNPACK otherwise, and for fewer rows, where
// the product is a matrix-vector one bound by reading the weights. Measured on the transformer
// set's linear layers (docs/cpu-engine.md, "Convolutions and linear layers on oneDNN"): oneDNN ran
// them at 110-135 GFLOP/s on two cores against XNNPACK's 50.
void chooseFullyConnectedLibrary(FullyConnectedStep& step, bool oneDnn)
{
    step.onednn = oneDnn && step.rows >= 16 && oneDnnAvailable();
}

// MatMul with numpy's semantics where the fully connected path cannot take it: B computed at run
// time (attention's Q.K^T and P.V) or constant of rank other than 2. Batch dimensions broadcast;
// a 1-D A is a row and a 1-D B a column, their unit dimension dropped from the output.
Status batchMatMul(CompileContext& cx, const onnx::NodeProto& node)
{
    const std::string where = cx.label(node);
    if (cx.constant(node.input(0)))
        return cx.fail(node, "a constant A with a computed B is not supported");
    auto a = cx.shapeOf(node.input(0), node);
    if (!a)
        return a.status();
    const onnx::TensorProto* bt = cx.constant(node.input(1));
    auto b = bt
        ? Expected<std::vector<int64_t>>(std::vector<int64_t>(bt->dims().begin(), bt->dims().end()))
        : cx.shapeOf(node.input(1), node);
    if (!b)
        return b.status();
    auto y = cx.shapeOf(node.output(0), node);
    if (!y)
        return y.status();
    std::vector<int64_t> da = *a;
    std::vector<int64_t> db = *b;
    if (da.empty() || db.empty())
        return Status::invalid(where + ": MatMul of a scalar");
    if (da.size() == 1)
        da.insert(da.begin(), 1);
    if (db.size() == 1)
        db.push_back(1);
    const int64_t m = da[da.size() - 2];
    const int64_t k = da.back();
    const int64_t n = db.back();
    if (db[db.size() - 2] != k)
        return Status::invalid(
            where + ": A " + dimsText(*a) + " and B " + dimsText(*b) + " do not multiply");
    const std::vector<int64_t> ba(da.begin(), da.end() - 2);
    const std::vector<int64_t> bb(db.begin(), db.end() - 2);
    const size_t rank = std::max(ba.size(), bb.size());
    std::vector<int64_t> batch(rank, 1);
    std::vector<int64_t> strideA(rank, 0), strideB(rank, 0);
    int64_t sa = m * k;
    int64_t sb = k * n;
    for (size_t i = 0; i < rank; ++i) {
        const size_t d = rank - 1 - i; // right-aligned
        const int64_t ea = i < ba.size() ? ba[ba.size() - 1 - i] : 1;
        const int64_t eb = i < bb.size() ? bb[bb.size() - 1 - i] : 1;
        if (ea != eb && ea != 1 && eb != 1)
            return Status::invalid(where + ": the batch dimensions of A " + dimsText(*a) +
                " and B " + dimsText(*b) + " do not broadcast");
        batch[d] = std::max(ea, eb);
        strideA[d] = ea == 1 ? 0 : sa;
        strideB[d] = eb == 1 ? 0 : sb;
        sa *= ea;
        sb *= eb;
    }
    const int64_t batches = product(batch, 0, batch.size());
    if (product(*y, 0, y->size()) != batches * m * n)
        return Status::invalid(where + ": output " + dimsText(*y) + " is not A " + dimsText(*a) +
            " times B " + dimsText(*b));
    auto step = std::make_unique<BatchMatMulStep>();
    step->m = static_cast<size_t>(m);
    step->k = static_cast<size_t>(k);
    step->n = static_cast<size_t>(n);
    std::vector<int64_t> index(rank, 0);
    for (int64_t e = 0; e < batches; ++e) {
        int64_t oa = 0;
        int64_t ob = 0;
        for (size_t d = 0; d < rank; ++d) {
            oa += index[d] * strideA[d];
            ob += index[d] * strideB[d];
        }
        step->aOffsets.push_back(static_cast<size_t>(oa));
        step->bOffsets.push_back(static_cast<size_t>(ob));
        for (size_t d = rank; d-- > 0;) {
            if (++index[d] < batch[d])
                break;
            index[d] = 0;
        }
    }
    auto in = cx.need(node.input(0), Layout::Plain, node);
    if (!in)
        return in.status();
    step->inputs = {in.value()};
    if (bt) {
        auto weights = cx.constantFloats(node.input(1), node);
        if (!weights)
            return weights.status();
        step->constantB = std::move(weights.value());
    } else {
        auto other = cx.need(node.input(1), Layout::Plain, node);
        if (!other)
            return other.status();
        step->inputs.push_back(other.value());
    }
    step->node = where;
    step->output = cx.addValue(node.output(0), y.value(), Layout::Plain);
    cx.plan().macs += batches * m * k * n;
    cx.addStep(node, std::move(step));
    return Status();
}

} // namespace

namespace {

// Gemm's C as the step's bias, times beta: C broadcasts to [rows, outC], so only a C the same for
// every row is a bias ([], [1], [outC], [1, 1] or [1, outC]); one that varies along the rows
// ([rows, 1] or a matrix) is not, even where its element count happens to equal outC.
Status gemmBias(CompileContext& cx, const onnx::NodeProto& node, int64_t outC, float beta,
    FullyConnectedStep* step)
{
    const onnx::TensorProto* ct = cx.constant(node.input(2));
    if (!ct)
        return cx.fail(node, "a C that is not a constant of the model is not supported");
    const std::vector<int64_t> cd(ct->dims().begin(), ct->dims().end());
    const bool perColumn = !cd.empty() && cd.back() == outC;
    const bool bias = cd.size() <= 2 && (cd.empty() || cd.back() == 1 || perColumn) &&
        (cd.size() < 2 || cd[0] == 1);
    if (!bias)
        return cx.fail(node,
            "a C of shape " + dimsText(cd) + " (only a bias the same for every row, of 1 or " +
                std::to_string(outC) + " values, is supported)");
    auto c = cx.constantFloats(node.input(2), node);
    if (!c)
        return c.status();
    if (c->size() == 1 && outC != 1)
        c->assign(static_cast<size_t>(outC), (*c)[0]);
    if (static_cast<int64_t>(c->size()) != outC)
        return Status::invalid(cx.label(node) + ": C " + dimsText(cd) + " does not broadcast to " +
            std::to_string(outC) + " columns");
    step->bias = std::move(c.value());
    for (float& v : step->bias)
        v *= beta;
    return Status();
}

// A MatMul's only reader, an Add of a constant of outC values, joins the step as its bias: the
// Add's node (consumed, its label added to `fused`), or nullptr.
const onnx::NodeProto* fuseBiasAdd(
    CompileContext& cx, const onnx::NodeProto& node, FullyConnectedStep* step, std::string* fused)
{
    const int add = cx.onlyReader(node.output(0), "Add");
    if (add < 0)
        return nullptr;
    const onnx::NodeProto& plus = cx.graph().node(add);
    const std::string& other = plus.input(0) == node.output(0) ? plus.input(1) : plus.input(0);
    const onnx::TensorProto* t = cx.constant(other);
    std::vector<float> values;
    if (!t || t->dims_size() != 1 || t->dims(0) != static_cast<int64_t>(step->outputChannels) ||
        !onnxutil::readFloat(*t, &values))
        return nullptr;
    step->bias = std::move(values);
    cx.consume(add);
    *fused = " + " + onnxutil::nodeLabel(plus, add);
    return &plus;
}

} // namespace

Status gemm(CompileContext& cx, const onnx::NodeProto& node)
{
    const std::string where = cx.label(node);
    const bool isGemm = node.op_type() == "Gemm";
    if (node.input_size() < 2)
        return Status::invalid(where + ": needs two inputs");
    auto a = cx.shapeOf(node.input(0), node);
    if (!a)
        return a.status();
    const onnx::TensorProto* bt = cx.constant(node.input(1));
    if (!isGemm && (!bt || bt->dims_size() != 2))
        return batchMatMul(cx, node);
    if (!bt)
        return cx.fail(node, "a B that is not a constant of the model is not supported");
    const std::vector<int64_t> b(bt->dims().begin(), bt->dims().end());
    if (b.size() != 2)
        return cx.fail(
            node, "a constant operand of shape " + dimsText(b) + " (only 2-D is supported)");
    const bool transA = isGemm && intAttribute(node, "transA", 0) != 0;
    const bool transB = isGemm && intAttribute(node, "transB", 0) != 0;
    if (transA)
        return cx.fail(node, "transA=1 is not supported");
    if (isGemm && a->size() != 2)
        return Status::invalid(where + ": Gemm's A must be 2-D, not " + dimsText(*a));
    const int64_t k = a->back();
    const int64_t outC = transB ? b[0] : b[1];
    if ((transB ? b[1] : b[0]) != k)
        return Status::invalid(where + ": A " + dimsText(*a) + " and B " + dimsText(b) +
            (transB ? " (transposed)" : "") + " do not multiply");
    auto weights = cx.constantFloats(node.input(1), node);
    if (!weights)
        return weights.status();
    const float alpha = isGemm ? floatAttribute(node, "alpha", 1.0f) : 1.0f;
    const float beta = isGemm ? floatAttribute(node, "beta", 1.0f) : 1.0f;
    auto step = std::make_unique<FullyConnectedStep>();
    step->inputChannels = static_cast<size_t>(k);
    step->outputChannels = static_cast<size_t>(outC);
    step->rows = static_cast<size_t>(product(*a, 0, a->size() - 1));
    step->kernel.resize(weights->size());
    for (int64_t o = 0; o < outC; ++o)
        for (int64_t i = 0; i < k; ++i)
            step->kernel[static_cast<size_t>(o * k + i)] =
                alpha * (*weights)[static_cast<size_t>(transB ? o * k + i : i * outC + o)];
    if (alpha == 1.0f)
        takeWeightScales(cx, node.input(1), weights.value(), transB ? 0 : 1, step.get());
    if (isGemm && node.input_size() > 2 && !node.input(2).empty())
        if (Status s = gemmBias(cx, node, outC, beta, step.get()); !s.ok())
            return s;
    auto in = cx.need(node.input(0), Layout::Plain, node);
    if (!in)
        return in.status();
    auto y = cx.shapeOf(node.output(0), node);
    if (!y)
        return y.status();
    if (product(*y, 0, y->size()) != static_cast<int64_t>(step->rows) * outC)
        return Status::invalid(where + ": output " + dimsText(*y) + " does not match " +
            std::to_string(step->rows) + " rows of " + std::to_string(outC));
    std::string fused;
    // nn.Linear exports as MatMul then Add of its bias: the bias joins the product.
    const onnx::NodeProto* biasAdd = !isGemm && cx.options().fuseActivations
        ? fuseBiasAdd(cx, node, step.get(), &fused)
        : nullptr;
    const onnx::NodeProto* last = biasAdd ? biasAdd : &node;
    chooseFullyConnectedLibrary(*step, cx.options().oneDnn);
    if (step->onednn)
        last = &fuseGeluAfter(cx, *last, &step->gelu, &fused);
    std::string activation;
    const std::string outName = cx.fuseActivation(*last, &step->range, &activation);
    step->node = where + fused + activation;
    step->inputs = {in.value()};
    step->output = cx.addValue(outName, y.value(), Layout::Plain);
    cx.plan().macs += static_cast<int64_t>(step->rows) * k * outC;
    cx.addStep(node, std::move(step));
    return Status();
}

// Einsum reaches the compiler only where preparation's einsum-matmul pass left it: an equation
// that is no batched matrix product of two operands.
Status einsum(CompileContext& cx, const onnx::NodeProto& node)
{
    return cx.fail(node,
        "equation '" + stringAttribute(node, "equation", "") +
            "' (only batched matrix products of two operands are supported)");
}

} // namespace ops
} // namespace xnnplan
} // namespace jetagent
