// The operators vision transformers and modern backbones add to the xnnpack backend (Pow, and the
// patterns built on it), each on a small graph against a double-precision formula here.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "jetagent/engines/engine.h"
#include "jetagent/engines/model_file.h"
#include "onnx_builder.h"
#include "xnnpack_runs.h"

namespace jetagent {
namespace {

using test::expectNear;
using test::GraphBuilder;
using test::noise;
using test::runXnnpack;
using test::runXnnpackWith;
using test::xnnpackBuilt;

// Why the xnnpack backend refuses to build `g` (empty when it builds).
std::string refusal(const GraphBuilder& g)
{
    auto parsed = parseModelBytes(g.bytes(), "refused.onnx");
    if (!parsed)
        return "does not parse: " + parsed.status().message();
    EngineOptions options;
    options.backend = "xnnpack";
    auto engine = buildEngine(parsed.value(), options);
    return engine ? std::string() : engine.status().message();
}

std::vector<float> ramp(size_t n, float from, float step)
{
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = from + step * static_cast<float>(i);
    return v;
}

// Pow by a constant scalar: squares (decomposed LayerNorm), square roots, the identity, and any
// other exponent, float or integer.
TEST(TransformerOps, PowByAConstantScalarExponent)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    const std::vector<int64_t> dims = {1, 4, 6};
    GraphBuilder g;
    g.input("x", dims);
    g.floats("two", {}, {2.0f}).floats("half", {}, {0.5f}).floats("one", {1}, {1.0f});
    g.floats("cube", {}, {3.0f}).ints("minus_one", {}, {-1});
    const char* const names[] = {"squared", "root", "same", "cubed", "inverse"};
    g.node("Pow", {"x", "two"}, {"squared"});
    g.node("Pow", {"x", "half"}, {"root"});
    g.node("Pow", {"x", "one"}, {"same"});
    g.node("Pow", {"x", "cube"}, {"cubed"});
    g.node("Pow", {"x", "minus_one"}, {"inverse"});
    for (const char* name : names)
        g.output(name, dims);
    const std::vector<float> x = ramp(24, 0.25f, 0.5f);
    std::vector<std::vector<float>> out;
    ASSERT_TRUE(runXnnpack(g, x, dims, &out));
    ASSERT_EQ(out.size(), 5u);
    const double exponents[] = {2, 0.5, 1, 3, -1};
    for (size_t k = 0; k < 5; ++k)
        for (size_t i = 0; i < x.size(); ++i) {
            const double want = std::pow(static_cast<double>(x[i]), exponents[k]);
            EXPECT_NEAR(out[k][i], want, 1e-6 * std::fabs(want)) << names[k] << " of " << x[i];
        }
}

TEST(TransformerOps, PowByAComputedOrPerElementExponentIsRefusedNamingTheNode)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    GraphBuilder g;
    g.input("x", {1, 3}).output("y", {1, 3});
    g.floats("e", {3}, {1, 2, 3});
    g.node("Pow", {"x", "e"}, {"y"}, "per_element");
    const std::string message = refusal(g);
    ASSERT_FALSE(message.empty());
    EXPECT_NE(message.find("per_element"), std::string::npos) << message;
    EXPECT_NE(message.find("scalar exponent"), std::string::npos) << message;
}

// numpy's matmul in double: A [..., m, k] times B [..., k, n], batch dimensions broadcast
// (both given here at the output's batch rank, 1 where they broadcast).
std::vector<double> matmul(const std::vector<float>& a, const std::vector<int64_t>& da,
    const std::vector<float>& b, const std::vector<int64_t>& db, std::vector<int64_t>* dy)
{
    const size_t rank = da.size();
    const int64_t m = da[rank - 2], k = da[rank - 1], n = db[rank - 1];
    *dy = da;
    (*dy)[rank - 1] = n;
    int64_t batches = 1;
    for (size_t d = 0; d + 2 < rank; ++d) {
        (*dy)[d] = std::max(da[d], db[d]);
        batches *= (*dy)[d];
    }
    std::vector<double> y(static_cast<size_t>(batches * m * n), 0.0);
    for (int64_t e = 0; e < batches; ++e) {
        int64_t ia = 0, ib = 0, rest = e;
        int64_t sa = 1, sb = 1;
        for (size_t d = rank - 2; d-- > 0;) {
            const int64_t i = rest % (*dy)[d];
            rest /= (*dy)[d];
            ia += (da[d] == 1 ? 0 : i) * sa;
            ib += (db[d] == 1 ? 0 : i) * sb;
            sa *= da[d];
            sb *= db[d];
        }
        for (int64_t r = 0; r < m; ++r)
            for (int64_t c = 0; c < n; ++c) {
                double sum = 0;
                for (int64_t p = 0; p < k; ++p)
                    sum += static_cast<double>(a[static_cast<size_t>((ia * m + r) * k + p)]) *
                        b[static_cast<size_t>((ib * k + p) * n + c)];
                y[static_cast<size_t>((e * m + r) * n + c)] = sum;
            }
    }
    return y;
}

// Attention's two products with both operands computed: scores = Q K^T over [heads, tokens,
// depth] (K^T by a Transpose, as ViT's export has it); and a constant B of rank 4 that an A with
// one head broadcasts against (Swin's windows share masks so), with sizes off the kernel's tiles
// (17 rows, 21 columns).
TEST(TransformerOps, MatMulOfComputedOperandsWithBroadcastBatches)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    const std::vector<int64_t> dx = {1, 3, 17, 8};
    GraphBuilder g;
    g.input("x", dx);
    g.output("scores", {1, 3, 17, 17}).output("mixed", {1, 3, 17, 21});
    g.randomFloats("wk", {8, 8}, -1, 1, 3).randomFloats("wv", {1, 3, 8, 21}, -1, 1, 4);
    g.node("MatMul", {"x", "wk"}, {"k"});
    test::setInts(g.node("Transpose", {"k"}, {"kt"}), "perm", {0, 1, 3, 2});
    g.node("MatMul", {"x", "kt"}, {"scores"});
    auto& mean = g.node("ReduceMean", {"x"}, {"one_head"}); // [1, 1, 17, 8]
    test::setInts(mean, "axes", {1});
    g.node("MatMul", {"one_head", "wv"}, {"mixed"});
    const std::vector<float> x = noise(static_cast<size_t>(3 * 17 * 8), 11);
    std::vector<std::vector<float>> out;
    ASSERT_TRUE(runXnnpack(g, x, dx, &out));
    ASSERT_EQ(out.size(), 2u);

    const auto& init = g.model().graph().initializer();
    std::vector<float> wk(64);
    std::memcpy(wk.data(), init.Get(0).raw_data().data(), wk.size() * sizeof(float));
    std::vector<float> wv(3 * 8 * 21);
    std::memcpy(wv.data(), init.Get(1).raw_data().data(), wv.size() * sizeof(float));
    std::vector<int64_t> dy;
    const auto k64 = matmul(x, dx, wk, {1, 1, 8, 8}, &dy);
    std::vector<float> kt(k64.size());
    for (size_t h = 0; h < 3; ++h)
        for (size_t t = 0; t < 17; ++t)
            for (size_t d = 0; d < 8; ++d)
                kt[(h * 8 + d) * 17 + t] = static_cast<float>(k64[(h * 17 + t) * 8 + d]);
    expectNear(out[0], matmul(x, dx, kt, {1, 3, 8, 17}, &dy), "scores");
    std::vector<float> head(17 * 8, 0.0f);
    for (size_t h = 0; h < 3; ++h)
        for (size_t i = 0; i < head.size(); ++i)
            head[i] += x[h * head.size() + i] / 3.0f;
    expectNear(out[1], matmul(head, {1, 1, 17, 8}, wv, {1, 3, 8, 21}, &dy), "mixed");
    EXPECT_EQ(dy, (std::vector<int64_t> {1, 3, 17, 21}));
}

// numpy's 1-D cases: batches of matrices times a constant vector and times a computed one.
TEST(TransformerOps, MatMulPromotesOneDimensionalOperands)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    const std::vector<int64_t> dx = {2, 5, 6};
    GraphBuilder g;
    g.input("x", dx).output("xv", {2, 5}).output("vx", {2, 6});
    g.floats("v6", {6}, {1, -2, 3, 0.5f, 0, 2}).floats("v5", {5}, {2, 1, 0, -1, 0.25f});
    g.node("MatMul", {"x", "v6"}, {"xv"}); // a constant 1-D B
    test::setInts(g.node("Transpose", {"x"}, {"xt"}), "perm", {0, 2, 1}); // [2, 6, 5]
    g.node("MatMul", {"xt", "v5"}, {"vx"});
    const std::vector<float> x = noise(60, 5);
    std::vector<std::vector<float>> out;
    ASSERT_TRUE(runXnnpack(g, x, dx, &out));
    ASSERT_EQ(out.size(), 2u);
    const float v6[] = {1, -2, 3, 0.5f, 0, 2};
    const float v5[] = {2, 1, 0, -1, 0.25f};
    for (int b = 0; b < 2; ++b) {
        for (int r = 0; r < 5; ++r) {
            double sum = 0;
            for (int c = 0; c < 6; ++c)
                sum += static_cast<double>(x[static_cast<size_t>((b * 5 + r) * 6 + c)]) * v6[c];
            EXPECT_NEAR(out[0][static_cast<size_t>(b * 5 + r)], sum, 1e-5);
        }
        for (int c = 0; c < 6; ++c) {
            double sum = 0;
            for (int r = 0; r < 5; ++r)
                sum += static_cast<double>(x[static_cast<size_t>((b * 5 + r) * 6 + c)]) * v5[r];
            EXPECT_NEAR(out[1][static_cast<size_t>(b * 6 + c)], sum, 1e-5);
        }
    }
}

// ViT's class token (x[:, 0]: a scalar index drops the axis), Swin's qkv[2] (axis 0 of a computed
// tensor), a list with a negative index; and strided slices (Swin's patch merging takes every
// second row and column).
TEST(TransformerOps, GatherByConstantIndicesAndStridedSlices)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    const std::vector<int64_t> dx = {2, 5, 4};
    GraphBuilder g;
    g.input("x", dx);
    g.output("token", {2, 4}).output("third", {2, 4}).output("picked", {2, 3, 4});
    g.output("odd_rows", {2, 2, 4}).output("every_third_column", {2, 5, 2});
    g.ints("zero", {}, {0}).ints("two", {}, {2}).ints("list", {3}, {4, -5, 1});
    g.ints("one", {1}, {1}).ints("five", {1}, {5}).ints("axis1", {1}, {1}).ints("step2", {1}, {2});
    g.ints("start0", {1}, {0})
        .ints("end4", {1}, {4})
        .ints("axis2", {1}, {2})
        .ints("step3", {1}, {3});
    test::setInt(g.node("Gather", {"x", "zero"}, {"token"}), "axis", 1);
    test::setInts(g.node("Transpose", {"x"}, {"xt"}), "perm", {1, 0, 2}); // [5, 2, 4]
    g.node("Gather", {"xt", "two"}, {"third"});
    test::setInt(g.node("Gather", {"x", "list"}, {"picked"}), "axis", 1);
    g.node("Slice", {"x", "one", "five", "axis1", "step2"}, {"odd_rows"});
    g.node("Slice", {"x", "start0", "end4", "axis2", "step3"}, {"every_third_column"});
    const std::vector<float> x = ramp(40, 0.0f, 1.0f);
    std::vector<std::vector<float>> out;
    ASSERT_TRUE(runXnnpack(g, x, dx, &out));
    ASSERT_EQ(out.size(), 5u);
    const auto at = [&](size_t b, size_t r, size_t c) { return x[(b * 5 + r) * 4 + c]; };
    std::vector<float> token, third, picked, oddRows, thirdColumns;
    for (size_t b = 0; b < 2; ++b) {
        for (size_t c = 0; c < 4; ++c) {
            token.push_back(at(b, 0, c));
            third.push_back(at(b, 2, c));
        }
        for (size_t r : {4, 0, 1})
            for (size_t c = 0; c < 4; ++c)
                picked.push_back(at(b, r, c));
        for (size_t r : {1, 3})
            for (size_t c = 0; c < 4; ++c)
                oddRows.push_back(at(b, r, c));
        for (size_t r = 0; r < 5; ++r)
            for (size_t c : {0, 3})
                thirdColumns.push_back(at(b, r, c));
    }
    EXPECT_EQ(out[0], token);
    EXPECT_EQ(out[1], third);
    EXPECT_EQ(out[2], picked);
    EXPECT_EQ(out[3], oddRows);
    EXPECT_EQ(out[4], thirdColumns);
}

// MaxViT's attention as torchvision writes it: scores = Einsum(Q, K) with K's last two axes
// transposed, then Einsum(scores, V) as a plain batched product.
TEST(TransformerOps, EinsumAsBatchedMatrixProducts)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    const std::vector<int64_t> dx = {1, 2, 3, 5, 4};
    GraphBuilder g;
    g.input("x", dx).output("scores", {1, 2, 3, 5, 5}).output("mixed", {1, 2, 3, 5, 4});
    g.floats("half", {}, {0.5f});
    g.node("Mul", {"x", "half"}, {"k"});
    test::setString(
        g.node("Einsum", {"x", "k"}, {"scores"}), "equation", "B G H I D, B G H J D -> B G H I J");
    test::setString(g.node("Einsum", {"scores", "x"}, {"mixed"}), "equation",
        "B G H I J, B G H J D -> B G H I D");
    const std::vector<float> x = noise(120, 9);
    std::vector<std::vector<float>> out;
    ASSERT_TRUE(runXnnpack(g, x, dx, &out));
    ASSERT_EQ(out.size(), 2u);
    std::vector<float> kt(x.size());
    for (size_t m = 0; m < 6; ++m)
        for (size_t t = 0; t < 5; ++t)
            for (size_t d = 0; d < 4; ++d)
                kt[m * 20 + d * 5 + t] = 0.5f * x[m * 20 + t * 4 + d];
    std::vector<int64_t> dy;
    const auto scores = matmul(x, dx, kt, {1, 2, 3, 4, 5}, &dy);
    expectNear(out[0], scores, "scores");
    const std::vector<float> s32(out[0].begin(), out[0].end());
    expectNear(out[1], matmul(s32, {1, 2, 3, 5, 5}, x, dx, &dy), "mixed");
}

TEST(TransformerOps, EinsumOtherThanAMatrixProductIsRefusedNamingTheEquation)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    GraphBuilder g;
    g.input("x", {1, 4, 4}).output("y", {1, 4});
    test::setString(g.node("Einsum", {"x"}, {"y"}, "diagonal"), "equation", "bii->bi");
    const std::string message = refusal(g);
    ASSERT_FALSE(message.empty());
    EXPECT_NE(message.find("diagonal"), std::string::npos) << message;
    EXPECT_NE(message.find("'bii->bi'"), std::string::npos) << message;
}

// PyTorch's LayerNorm export before opset 17 (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div,
// Mul, Add) in a GraphBuilder; `extraRead` makes the deviation d read a third time (a near miss the
// fusion must leave alone).
GraphBuilder decomposedLayerNorm(const std::vector<int64_t>& dims, bool affine, bool extraRead)
{
    const int64_t c = dims.back();
    GraphBuilder g;
    g.input("x", dims).output("y", dims);
    g.floats("two", {}, {2.0f}).floats("eps", {}, {1e-5f});
    g.randomFloats("gamma", {c}, 0.5f, 1.5f, 7).randomFloats("beta", {c}, -1, 1, 8);
    test::setInts(g.node("ReduceMean", {"x"}, {"m"}), "axes", {-1});
    g.node("Sub", {"x", "m"}, {"d"});
    g.node("Pow", {"d", "two"}, {"p"});
    test::setInts(g.node("ReduceMean", {"p"}, {"v"}), "axes", {-1});
    g.node("Add", {"v", "eps"}, {"e"});
    g.node("Sqrt", {"e"}, {"s"});
    g.node("Div", {"d", "s"}, {affine || extraRead ? "n" : "y"});
    if (affine) {
        g.node("Mul", {"n", "gamma"}, {"scaled"});
        g.node("Add", {"scaled", "beta"}, {extraRead ? "shifted" : "y"});
    }
    if (extraRead)
        g.node("Add", {affine ? "shifted" : "n", "d"}, {"y"});
    return g;
}

// Row by row in double: (x - mean) / sqrt(var + eps) [* gamma + beta] [+ (x - mean)].
std::vector<double> layerNorm(
    const std::vector<float>& x, size_t c, const GraphBuilder& g, bool affine, bool extraRead)
{
    const auto& init = g.model().graph().initializer();
    std::vector<float> gamma(c), beta(c);
    std::memcpy(gamma.data(), init.Get(2).raw_data().data(), c * sizeof(float));
    std::memcpy(beta.data(), init.Get(3).raw_data().data(), c * sizeof(float));
    std::vector<double> y(x.size());
    for (size_t r = 0; r < x.size() / c; ++r) {
        double mean = 0, var = 0;
        for (size_t i = 0; i < c; ++i)
            mean += x[r * c + i];
        mean /= static_cast<double>(c);
        for (size_t i = 0; i < c; ++i)
            var += (x[r * c + i] - mean) * (x[r * c + i] - mean);
        var /= static_cast<double>(c);
        for (size_t i = 0; i < c; ++i) {
            const double d = x[r * c + i] - mean;
            double v = d / std::sqrt(var + 1e-5);
            if (affine)
                v = v * gamma[i] + beta[i];
            y[r * c + i] = extraRead ? v + d : v;
        }
    }
    return y;
}

TEST(TransformerOps, DecomposedLayerNormBecomesOneStep)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    const std::vector<int64_t> dims = {2, 7, 37}; // rows of 37: off the kernel's 8-wide sums
    std::vector<float> x = noise(2 * 7 * 37, 21);
    for (size_t i = 0; i < x.size(); ++i)
        x[i] = 3.0f + 2.0f * x[i]; // a mean far from 0, as activations have
    for (bool affine : {true, false}) {
        const GraphBuilder g = decomposedLayerNorm(dims, affine, false);
        std::vector<std::vector<float>> out;
        std::vector<std::string> ops;
        ASSERT_TRUE(runXnnpack(g, x, dims, &out, &ops));
        EXPECT_EQ(ops, std::vector<std::string> {"LayerNormalization"}) << "affine " << affine;
        expectNear(out[0], layerNorm(x, 37, g, affine, false), affine ? "affine" : "plain");
    }
}

TEST(TransformerOps, ANearMissOfLayerNormRunsNodeByNode)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    const std::vector<int64_t> dims = {1, 5, 16};
    const std::vector<float> x = noise(80, 4);
    const GraphBuilder g = decomposedLayerNorm(dims, true, true);
    std::vector<std::vector<float>> out;
    std::vector<std::string> ops;
    ASSERT_TRUE(runXnnpack(g, x, dims, &out, &ops));
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "LayerNormalization"), 0);
    EXPECT_GE(ops.size(), 9u);
    expectNear(out[0], layerNorm(x, 16, g, true, true), "near miss");
}

// The erf-form GELU's nodes as PyTorch exports them, from x to y (their constants added too).
void addExportedGelu(GraphBuilder& g, const std::string& x, const std::string& y)
{
    g.floats("divisor", {}, {std::sqrt(2.0f)}).floats("one", {}, {1.0f});
    g.floats("half", {}, {0.5f});
    g.node("Div", {x, "divisor"}, {"d"});
    g.node("Erf", {"d"}, {"e"});
    g.node("Add", {"e", "one"}, {"a"});
    g.node("Mul", {x, "a"}, {"m"});
    g.node("Mul", {"m", "half"}, {y});
}

// GELU as PyTorch exports it (x / sqrt 2, Erf, + 1, times x, times 0.5), and the same with the
// division as a multiplication and the operands of each Add and Mul swapped.
GraphBuilder exportedGelu(bool swapped, float divisor)
{
    GraphBuilder g;
    g.input("x", {1, 6, 50}).output("y", {1, 6, 50});
    g.floats("one", {}, {1.0f}).floats("half", {}, {0.5f});
    if (swapped) {
        g.floats("scale", {}, {1.0f / divisor});
        g.node("Mul", {"scale", "x"}, {"d"});
    } else {
        g.floats("divisor", {}, {divisor});
        g.node("Div", {"x", "divisor"}, {"d"});
    }
    g.node("Erf", {"d"}, {"e"});
    g.node("Add",
        swapped ? std::vector<std::string> {"one", "e"} : std::vector<std::string> {"e", "one"},
        {"a"});
    g.node("Mul",
        swapped ? std::vector<std::string> {"a", "x"} : std::vector<std::string> {"x", "a"}, {"m"});
    g.node("Mul",
        swapped ? std::vector<std::string> {"half", "m"} : std::vector<std::string> {"m", "half"},
        {"y"});
    return g;
}

TEST(TransformerOps, ExportedGeluBecomesOneStep)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    std::vector<float> x = noise(300, 17);
    for (float& v : x)
        v *= 12.0f; // -6 to 6: both tails and the middle
    x[0] = 0.0f;
    for (bool swapped : {false, true}) {
        std::vector<std::vector<float>> out;
        std::vector<std::string> ops;
        ASSERT_TRUE(runXnnpack(exportedGelu(swapped, std::sqrt(2.0f)), x, {1, 6, 50}, &out, &ops));
        EXPECT_EQ(ops, std::vector<std::string> {"Gelu"}) << "swapped " << swapped;
        for (size_t i = 0; i < x.size(); ++i) {
            const double v = x[i];
            const double want = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
            ASSERT_NEAR(out[0][i], want, 1e-6 * std::max(1.0, std::fabs(want))) << "x " << v;
        }
    }
    // Another divisor is no GELU: node by node, with std::erf.
    std::vector<std::vector<float>> out;
    std::vector<std::string> ops;
    ASSERT_TRUE(runXnnpack(exportedGelu(false, 1.5f), x, {1, 6, 50}, &out, &ops));
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "Gelu"), 0);
    for (size_t i = 0; i < x.size(); ++i) {
        const double v = x[i];
        ASSERT_NEAR(out[0][i], 0.5 * v * (1.0 + std::erf(v / 1.5)), 1e-5) << "x " << v;
    }
}

// nn.Hardswish as torch.onnx exports it below opset 14: y = x * HardSigmoid(x) with alpha
// `alpha` and beta 1/2, the Mul's operands in either order; with `alsoRead`, the HardSigmoid's
// output is a second graph output too (read outside the pattern).
GraphBuilder exportedHardSwish(bool swapped, float alpha, bool alsoRead)
{
    GraphBuilder g;
    g.input("x", {1, 7, 43}).output("y", {1, 7, 43});
    if (alsoRead)
        g.output("h", {1, 7, 43});
    onnx::NodeProto& hardSigmoid = g.node("HardSigmoid", {"x"}, {"h"});
    test::setFloat(hardSigmoid, "alpha", alpha);
    test::setFloat(hardSigmoid, "beta", 0.5f);
    std::vector<std::string> product = {"x", "h"};
    if (swapped)
        std::swap(product[0], product[1]);
    g.node("Mul", product, {"y"});
    return g;
}

// x * HardSigmoid(x) (MobileNetV3's activation) runs as one HardSwish step on XNNPACK; another
// alpha, or a HardSigmoid output read elsewhere too, runs node by node. Each against the formula.
TEST(TransformerOps, ExportedHardSwishBecomesOneStep)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    // -5 to 5 in steps of 1/30: both flat parts, the curve between -3 and 3, and its ends.
    const std::vector<float> x = ramp(301, -5.0f, 1.0f / 30.0f);
    struct Case {
        bool swapped;
        float alpha;
        bool alsoRead;
        bool fused;
    };
    for (const Case& c :
        {Case {false, 1.0f / 6.0f, false, true}, Case {true, 1.0f / 6.0f, false, true},
            Case {false, 0.2f, false, false}, Case {false, 1.0f / 6.0f, true, false}}) {
        std::vector<std::vector<float>> out;
        std::vector<std::string> ops;
        ASSERT_TRUE(runXnnpack(
            exportedHardSwish(c.swapped, c.alpha, c.alsoRead), x, {1, 7, 43}, &out, &ops));
        const auto fused = std::vector<std::string> {"HardSwish"};
        const auto apart = std::vector<std::string> {"HardSigmoid", "Mul"};
        EXPECT_EQ(ops, c.fused ? fused : apart)
            << "swapped " << c.swapped << ", alpha " << c.alpha << ", also read " << c.alsoRead;
        for (size_t i = 0; i < x.size(); ++i) {
            const double v = x[i];
            const double want = v * std::clamp(c.alpha * v + 0.5, 0.0, 1.0);
            ASSERT_NEAR(out[0][i], want, 1e-6 * std::max(1.0, std::fabs(want))) << "x " << v;
        }
    }
}

// A 1x1 convolution of 16 channels (oneDNN's where the build has it) followed by SiLU
// (x * Sigmoid(x), EfficientNet's) or HardSwish (x * HardSigmoid(x), MobileNetV3's): on oneDNN
// the activation is the convolution's post-op, one step; on XNNPACK alone separate steps. The
// same numbers either way, against a double reference.
TEST(TransformerOps, ConvolutionThenSiluOrHardSwishIsOneOneDnnStep)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    constexpr int64_t cin = 16, cout = 8, pixels = 5 * 7;
    const std::vector<float> w = noise(static_cast<size_t>(cout * cin), 31);
    const std::vector<float> bias = noise(static_cast<size_t>(cout), 32);
    std::vector<float> x = noise(static_cast<size_t>(cin * pixels), 33);
    for (float& v : x)
        v *= 16.0f; // sums of about -6 to 6: HardSwish's flat parts and its curve
    for (bool hard : {false, true}) {
        GraphBuilder g;
        g.input("x", {1, cin, 5, 7}).output("y", {1, cout, 5, 7});
        g.floats("w", {cout, cin, 1, 1}, w).floats("b", {cout}, bias);
        g.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
        if (hard)
            test::setFloat(g.node("HardSigmoid", {"c"}, {"gate"}), "alpha", 1.0f / 6.0f);
        else
            g.node("Sigmoid", {"c"}, {"gate"});
        g.node("Mul", {"gate", "c"}, {"y"});
        // Per pixel: its column of input channels against each output channel's weights.
        std::vector<double> want(static_cast<size_t>(cout * pixels));
        std::vector<double> column(static_cast<size_t>(cin));
        for (int64_t p = 0; p < pixels; ++p) {
            for (int64_t i = 0; i < cin; ++i)
                column[static_cast<size_t>(i)] = x[static_cast<size_t>(i * pixels + p)];
            for (int64_t o = 0; o < cout; ++o) {
                const double sum = std::inner_product(column.begin(), column.end(),
                    w.begin() + o * cin, static_cast<double>(bias[static_cast<size_t>(o)]));
                want[static_cast<size_t>(o * pixels + p)] = hard
                    ? sum * std::clamp(sum / 6.0 + 0.5, 0.0, 1.0)
                    : sum / (1.0 + std::exp(-sum));
            }
        }
        for (bool oneDnn : {true, false}) {
            SCOPED_TRACE(
                std::string(hard ? "HardSwish" : "SiLU") + ", oneDNN " + (oneDnn ? "on" : "off"));
            EngineOptions options;
            options.onednn = oneDnn;
            std::vector<std::vector<float>> out;
            std::vector<EngineStep> steps;
            ASSERT_TRUE(runXnnpackWith(options, g, x, {1, cin, 5, 7}, &out, &steps));
            expectNear(out[0], want, "convolution + activation");
            const auto conv = std::find_if(steps.begin(), steps.end(),
                [](const EngineStep& step) { return step.op == "Conv"; });
            ASSERT_NE(conv, steps.end());
            if (oneDnn && conv->library != "onednn")
                GTEST_SKIP() << "no oneDNN in this build";
            const std::string fused = hard ? "+ HardSwish" : "+ SiLU";
            EXPECT_EQ(conv->node.find(fused) != std::string::npos, oneDnn) << conv->node;
            // Besides the layout conversions, the convolution alone on oneDNN.
            const auto computing = std::count_if(steps.begin(), steps.end(),
                [](const EngineStep& step) { return step.op != "Transpose"; });
            EXPECT_EQ(computing, oneDnn ? 1 : hard ? 2 : 3);
        }
    }
}

// GELU's tanh approximation as torch.onnx exports nn.GELU(approximate="tanh"), alone (one
// reference step) and after a linear layer of 40 rows (one oneDNN step where the build has it).
GraphBuilder exportedGeluTanh(bool afterLinear)
{
    GraphBuilder g;
    g.input("in", {1, 40, 24}).output("y", {1, 40, 24});
    g.floats("kappa", {}, {0.044715f}).floats("beta", {}, {0.7978845608f});
    g.floats("one", {}, {1.0f}).floats("half", {}, {0.5f});
    if (afterLinear) {
        std::vector<float> w(24 * 24, 0.0f);
        for (size_t i = 0; i < 24; ++i)
            w[i * 24 + i] = 1.0f; // the identity: the GELU's input is the graph's
        g.floats("w", {24, 24}, w);
        g.node("MatMul", {"in", "w"}, {"x"});
    } else {
        g.node("Identity", {"in"}, {"x"});
    }
    g.node("Mul", {"x", "x"}, {"square"});
    g.node("Mul", {"square", "x"}, {"cube"});
    g.node("Mul", {"cube", "kappa"}, {"k"});
    g.node("Add", {"x", "k"}, {"s"});
    g.node("Mul", {"s", "beta"}, {"inner"});
    g.node("Tanh", {"inner"}, {"t"});
    g.node("Add", {"t", "one"}, {"a"});
    g.node("Mul", {"x", "half"}, {"hx"});
    g.node("Mul", {"hx", "a"}, {"y"});
    return g;
}

TEST(TransformerOps, ExportedTanhGeluBecomesOneStep)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    std::vector<float> x = noise(40 * 24, 19);
    for (float& v : x)
        v *= 14.0f; // -7 to 7
    x[0] = 0.0f;
    for (bool afterLinear : {false, true}) {
        SCOPED_TRACE(afterLinear ? "after a linear layer" : "alone");
        EngineOptions options;
        options.threads = 2;
        std::vector<std::vector<float>> out;
        std::vector<EngineStep> steps;
        ASSERT_TRUE(
            runXnnpackWith(options, exportedGeluTanh(afterLinear), x, {1, 40, 24}, &out, &steps));
        for (size_t i = 0; i < x.size(); ++i) {
            const double v = x[i];
            const double want =
                0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
            ASSERT_NEAR(out[0][i], want, 2e-6 * std::max(1.0, std::fabs(want))) << "x " << v;
        }
        if (afterLinear && !steps.empty() && steps[0].library != "onednn")
            continue; // no oneDNN in this build: the product, then the GELU step
        ASSERT_EQ(steps.size(), 1u) << steps.back().node;
        EXPECT_EQ(steps[0].op, afterLinear ? "MatMul" : "Gelu");
        EXPECT_NE(steps[0].node.find("tanh"), std::string::npos) << steps[0].node;
    }
}

// nn.Linear then GELU (MatMul, bias Add, the exported erf pattern) over tokens: on oneDNN, where
// the build has it, one step with the bias and GELU as post-ops, split in bands of rows over two
// threads; with fewer than 16 rows, or oneDNN turned off, XNNPACK's product and our GELU. Every
// way against a double reference.
TEST(TransformerOps, LinearThenGeluIsOneOneDnnStepOverEnoughRows)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    constexpr int64_t k = 24, n = 36;
    const std::vector<float> w = noise(static_cast<size_t>(k * n), 5);
    std::vector<float> bias = noise(static_cast<size_t>(n), 6);
    for (int64_t rows : {40, 8}) {
        GraphBuilder g;
        g.input("x", {1, rows, k}).output("y", {1, rows, n});
        g.floats("w", {k, n}, w).floats("b", {n}, bias);
        g.node("MatMul", {"x", "w"}, {"p"}, "fc");
        g.node("Add", {"p", "b"}, {"s"});
        addExportedGelu(g, "s", "y");
        std::vector<float> x = noise(static_cast<size_t>(rows * k), 7);
        for (float& v : x)
            v *= 8.0f;
        std::vector<double> want(static_cast<size_t>(rows * n));
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < n; ++c) {
                double sum = bias[static_cast<size_t>(c)];
                for (int64_t i = 0; i < k; ++i)
                    sum += static_cast<double>(x[static_cast<size_t>(r * k + i)]) *
                        w[static_cast<size_t>(i * n + c)];
                want[static_cast<size_t>(r * n + c)] =
                    0.5 * sum * (1.0 + std::erf(sum / std::sqrt(2.0)));
            }
        for (bool oneDnn : {true, false}) {
            SCOPED_TRACE(std::to_string(rows) + " rows, oneDNN " + (oneDnn ? "on" : "off"));
            EngineOptions options;
            options.onednn = oneDnn;
            options.threads = 2;
            std::vector<std::vector<float>> out;
            std::vector<EngineStep> steps;
            ASSERT_TRUE(runXnnpackWith(options, g, x, {1, rows, k}, &out, &steps));
            expectNear(out[0], want, "linear + GELU");
            const bool onOneDnn = steps.size() == 1 && steps[0].library == "onednn";
            if (oneDnn && rows >= 16 && !onOneDnn && steps.size() == 2 &&
                steps[0].library == "xnnpack")
                GTEST_SKIP() << "no oneDNN in this build";
            if (oneDnn && rows >= 16) {
                ASSERT_TRUE(onOneDnn) << steps.size() << " steps";
                EXPECT_NE(steps[0].node.find("+ GELU"), std::string::npos) << steps[0].node;
            } else {
                ASSERT_EQ(steps.size(), 2u);
                EXPECT_EQ(steps[0].library, "xnnpack");
                EXPECT_EQ(steps[1].op, "Gelu");
            }
        }
    }
}

// ConvNeXt's 7x7 depthwise convolution: more taps than XNNPACK's depthwise kernels take, so on
// oneDNN where the build has it (one image in bands of rows over two threads, and a batch of
// two by images, with a GELU after it that joins the step as on MaxViT's convolutions); the same
// numbers as XNNPACK's and as a double reference.
TEST(TransformerOps, WideDepthwiseConvolutionMatchesEveryWay)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    constexpr int64_t c = 12, h = 11, wd = 9, kk = 7;
    const std::vector<float> w = noise(static_cast<size_t>(c * kk * kk), 8);
    const std::vector<float> bias = noise(static_cast<size_t>(c), 9);
    for (int64_t batch : {1, 2}) {
        GraphBuilder g;
        g.input("x", {batch, c, h, wd}).output("y", {batch, c, h, wd});
        g.floats("w", {c, 1, kk, kk}, w).floats("b", {c}, bias);
        const bool gelu = batch == 2;
        auto& conv = g.node("Conv", {"x", "w", "b"}, {gelu ? "s" : "y"}, "depthwise");
        if (gelu)
            addExportedGelu(g, "s", "y");
        auto* group = conv.add_attribute();
        group->set_name("group");
        group->set_type(onnx::AttributeProto::INT);
        group->set_i(c);
        auto* pads = conv.add_attribute();
        pads->set_name("pads");
        pads->set_type(onnx::AttributeProto::INTS);
        for (int i = 0; i < 4; ++i)
            pads->add_ints(kk / 2);
        const std::vector<float> x = noise(static_cast<size_t>(batch * c * h * wd), 10);
        std::vector<double> want(x.size());
        for (int64_t b = 0; b < batch; ++b)
            for (int64_t ch = 0; ch < c; ++ch)
                for (int64_t r = 0; r < h; ++r)
                    for (int64_t col = 0; col < wd; ++col) {
                        double sum = bias[static_cast<size_t>(ch)];
                        for (int64_t i = 0; i < kk; ++i)
                            for (int64_t j = 0; j < kk; ++j) {
                                const int64_t rr = r + i - kk / 2, cc = col + j - kk / 2;
                                if (rr < 0 || rr >= h || cc < 0 || cc >= wd)
                                    continue;
                                sum +=
                                    static_cast<double>(
                                        x[static_cast<size_t>(((b * c + ch) * h + rr) * wd + cc)]) *
                                    w[static_cast<size_t>((ch * kk + i) * kk + j)];
                            }
                        want[static_cast<size_t>(((b * c + ch) * h + r) * wd + col)] =
                            gelu ? 0.5 * sum * (1.0 + std::erf(sum / std::sqrt(2.0))) : sum;
                    }
        bool sawOneDnn = false;
        for (bool oneDnn : {true, false}) {
            SCOPED_TRACE("batch " + std::to_string(batch) + ", oneDNN " + (oneDnn ? "on" : "off"));
            EngineOptions options;
            options.onednn = oneDnn;
            options.threads = 2;
            std::vector<std::vector<float>> out;
            std::vector<EngineStep> steps;
            ASSERT_TRUE(runXnnpackWith(options, g, x, {batch, c, h, wd}, &out, &steps));
            expectNear(out[0], want, "depthwise 7x7");
            bool onOneDnn = false;
            for (const EngineStep& step : steps)
                onOneDnn |= step.op == "Conv" && step.library == "onednn";
            if (oneDnn) {
                sawOneDnn = onOneDnn;
                if (onOneDnn && gelu) { // one step with the convolution (and the layout copies)
                    for (const EngineStep& step : steps) {
                        EXPECT_NE(step.op, "Gelu");
                        if (step.op == "Conv") {
                            EXPECT_NE(step.node.find("+ GELU"), std::string::npos) << step.node;
                        }
                    }
                }
            } else {
                EXPECT_FALSE(onOneDnn);
            }
        }
        if (!sawOneDnn)
            GTEST_SKIP() << "no oneDNN in this build";
    }
}

// ConvNeXt's permutes around its LayerNorm and linear layers: NCHW -> NHWC of a convolution's
// output (channels-last in memory already) and back are relabellings, no copy; a permutation that
// does move memory still runs, with its axes merged where they stay together.
TEST(TransformerOps, PermutesThatKeepTheMemoryOrderAreNotCopies)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    constexpr int64_t c = 4, h = 5, w = 6;
    const std::vector<float> weights = noise(static_cast<size_t>(c * c), 12);
    const std::vector<float> shift = noise(static_cast<size_t>(c), 13);
    GraphBuilder g;
    g.input("x", {1, c, h, w}).output("y", {1, c, h, w}).output("z", {1, w, c, h});
    g.floats("w", {c, c, 1, 1}, weights).floats("shift", {c}, shift);
    g.node("Conv", {"x", "w"}, {"conv"});
    const auto permute = [&](const std::string& from, const std::string& to,
                             const std::vector<int64_t>& perm, const std::string& name) {
        auto* a = g.node("Transpose", {from}, {to}, name).add_attribute();
        a->set_name("perm");
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t p : perm)
            a->add_ints(p);
    };
    permute("conv", "nhwc", {0, 2, 3, 1}, "to_nhwc");
    g.node("Add", {"nhwc", "shift"}, {"shifted"});
    permute("shifted", "y", {0, 3, 1, 2}, "to_nchw");
    permute("shifted", "z", {0, 2, 3, 1}, "moves"); // [1, h, w, c] -> [1, w, c, h]
    const std::vector<float> x = noise(static_cast<size_t>(c * h * w), 14);
    std::vector<double> y(x.size()), z(x.size());
    for (int64_t o = 0; o < c; ++o)
        for (int64_t r = 0; r < h; ++r)
            for (int64_t col = 0; col < w; ++col) {
                double sum = shift[static_cast<size_t>(o)];
                for (int64_t i = 0; i < c; ++i)
                    sum += static_cast<double>(weights[static_cast<size_t>(o * c + i)]) *
                        x[static_cast<size_t>((i * h + r) * w + col)];
                y[static_cast<size_t>((o * h + r) * w + col)] = sum;
                z[static_cast<size_t>((col * c + o) * h + r)] = sum;
            }
    std::vector<std::vector<float>> out;
    std::vector<EngineStep> steps;
    ASSERT_TRUE(runXnnpackWith(EngineOptions(), g, x, {1, c, h, w}, &out, &steps));
    ASSERT_EQ(out.size(), 2u);
    expectNear(out[0], y, "back to NCHW");
    expectNear(out[1], z, "moved");
    for (const EngineStep& step : steps) {
        EXPECT_EQ(step.node.find("to_nhwc"), std::string::npos) << step.node;
        EXPECT_EQ(step.node.find("to_nchw"), std::string::npos) << step.node;
    }
    EXPECT_TRUE(std::any_of(steps.begin(), steps.end(),
        [](const EngineStep& s) { return s.node.find("moves") != std::string::npos; }));
}

} // namespace
} // namespace jetagent
