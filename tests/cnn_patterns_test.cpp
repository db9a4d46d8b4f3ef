// The CNN patterns the xnnpack backend runs as fewer or faster steps than node by node
// (squeeze-and-excitation, residual blocks, concatenations, global pooling, Winograd bands and
// slices), each on a small graph on two threads against a double-precision formula here, and
// with the steps it must become where oneDNN's AVX-512 kernels run it.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "jetagent/engines/engine.h"
#include "onnx_builder.h"
#include "xnnpack_runs.h"

namespace jetagent {
namespace {

using test::convolve;
using test::expectNear;
using test::expectOnTwoThreads;
using test::GraphBuilder;
using test::noise;
using test::runXnnpack;
using test::xnnpackBuilt;

// A squeeze-and-excitation block as torchvision's EfficientNet and RegNetY export it: a
// convolution, then its output times Sigmoid(Conv(Relu(Conv(GlobalAveragePool(.))))), one value
// per channel of each image. The product runs as one step of the backend's own kernel (not
// XNNPACK's broadcast), and where oneDNN runs the gate's convolution the Sigmoid joins it.
TEST(CnnPatterns, ASqueezeAndExcitationScalesEachImagesChannels)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    constexpr size_t kN = 2, kC = 24, kH = 5, kW = 7, kHidden = 16;
    const std::vector<float> w0 = noise(kC * kC, 3), w1 = noise(kHidden * kC, 5),
                             w2 = noise(kC * kHidden, 7);
    GraphBuilder g;
    const std::vector<int64_t> dims = {kN, kC, kH, kW};
    g.input("x", dims).output("y", dims);
    g.floats("w0", {kC, kC, 1, 1}, w0).floats("w1", {kHidden, kC, 1, 1}, w1);
    g.floats("w2", {kC, kHidden, 1, 1}, w2);
    g.node("Conv", {"x", "w0"}, {"c"});
    g.node("GlobalAveragePool", {"c"}, {"pooled"});
    g.node("Conv", {"pooled", "w1"}, {"squeezed"});
    g.node("Relu", {"squeezed"}, {"hidden"});
    g.node("Conv", {"hidden", "w2"}, {"excited"});
    g.node("Sigmoid", {"excited"}, {"gate"});
    g.node("Mul", {"c", "gate"}, {"y"});
    const std::vector<float> x = noise(kN * kC * kH * kW, 11);

    const std::vector<double> c =
        convolve(std::vector<double>(x.begin(), x.end()), kN, kC, kH, kW, w0, kC, 1, 0);
    std::vector<double> want(c.size());
    for (size_t b = 0; b < kN; ++b) {
        std::vector<double> pooled(kC, 0.0), hidden(kHidden, 0.0), gate(kC, 0.0);
        for (size_t i = 0; i < kC; ++i)
            for (size_t p = 0; p < kH * kW; ++p)
                pooled[i] += c[(b * kC + i) * kH * kW + p] / double(kH * kW);
        for (size_t j = 0; j < kHidden; ++j) {
            for (size_t i = 0; i < kC; ++i)
                hidden[j] += w1[j * kC + i] * pooled[i];
            hidden[j] = std::max(0.0, hidden[j]);
        }
        for (size_t i = 0; i < kC; ++i) {
            for (size_t j = 0; j < kHidden; ++j)
                gate[i] += w2[i * kHidden + j] * hidden[j];
            gate[i] = 1.0 / (1.0 + std::exp(-gate[i]));
        }
        for (size_t i = 0; i < kC; ++i)
            for (size_t p = 0; p < kH * kW; ++p)
                want[(b * kC + i) * kH * kW + p] = c[(b * kC + i) * kH * kW + p] * gate[i];
    }

    std::vector<EngineStep> steps;
    expectOnTwoThreads(g, x, dims, want, &steps);
    const auto mul =
        std::find_if(steps.begin(), steps.end(), [](const EngineStep& s) { return s.op == "Mul"; });
    ASSERT_NE(mul, steps.end());
    EXPECT_EQ(mul->library, "reference") << mul->node;
    const auto gate = std::find_if(steps.begin(), steps.end(),
        [](const EngineStep& s) { return s.node.find("Sigmoid") != std::string::npos; });
    ASSERT_NE(gate, steps.end());
    EXPECT_EQ(gate->op, gate->library == "onednn" ? "Conv" : "Sigmoid") << gate->node;
}

// Global average pooling of images large enough that the backend's kernel splits each one into
// channel slices across the threads (150 channels: slices of 64, 64 and 22), batch 2, with the
// Relu after it; every channel's mean against the formula.
TEST(CnnPatterns, AGlobalAveragePoolSplitsEachImageByChannels)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    constexpr size_t kN = 2, kC = 150, kH = 33, kW = 32;
    GraphBuilder g;
    const std::vector<int64_t> dims = {kN, kC, kH, kW};
    g.input("x", dims).output("y", {kN, kC, 1, 1});
    g.node("GlobalAveragePool", {"x"}, {"pooled"});
    g.node("Relu", {"pooled"}, {"y"});
    std::vector<float> x = noise(kN * kC * kH * kW, 19);
    // Each channel gets its own offset, so that the means are well apart from each other and
    // from zero, about half of them negative (the Relu's clamp).
    for (size_t i = 0; i < x.size(); ++i)
        x[i] += 0.01f * static_cast<float>(i / (kH * kW) % kC) - 0.7f;
    std::vector<double> want(kN * kC, 0.0);
    for (size_t i = 0; i < x.size(); ++i)
        want[i / (kH * kW)] += x[i] / double(kH * kW);
    for (double& v : want)
        v = std::max(0.0, v);

    std::vector<EngineStep> steps;
    expectOnTwoThreads(g, x, dims, want, &steps);
    const auto pool = std::find_if(steps.begin(), steps.end(),
        [](const EngineStep& s) { return s.op == "GlobalAveragePool"; });
    ASSERT_NE(pool, steps.end());
    EXPECT_EQ(pool->library, "reference") << pool->node;
}

// SqueezeNet's fire module followed by the next one's squeeze: a 1x1 and a 3x3 expansion of the
// same input (24 and 16 channels), each with its Relu, concatenated along channels, optionally
// max-pooled (3x3, stride 2, as SqueezeNet pools), and a 1x1 convolution with a bias and a Relu
// reading the result into kM channels; batch 2 on two threads against the formula. Where every
// convolution runs on oneDNN's AVX-512 kernels and kM is at most the concatenation's 40 channels,
// the pooling runs on each part and the last convolution as its two parts summed
// (splitConcatBeforeConv), so no concatenation is made; elsewhere it is not split.
void expectFireModule(bool pooled, size_t kM = 20)
{
    constexpr size_t kN = 2, kC = 16, kE1 = 24, kE3 = 16, kE = kE1 + kE3, kH = 9, kW = 11;
    const size_t ph = pooled ? (kH - 3) / 2 + 1 : kH, pw = pooled ? (kW - 3) / 2 + 1 : kW;
    const std::vector<float> w1 = noise(kE1 * kC, 23), w3 = noise(kE3 * kC * 9, 29),
                             wq = noise(kM * kE, 31), bias = noise(kM, 37);
    GraphBuilder g;
    const std::vector<int64_t> dims = {kN, kC, kH, kW};
    g.input("x", dims).output("y", {kN, int64_t(kM), int64_t(ph), int64_t(pw)});
    g.floats("w1", {kE1, kC, 1, 1}, w1).floats("w3", {kE3, kC, 3, 3}, w3);
    g.floats("wq", {int64_t(kM), kE, 1, 1}, wq).floats("bq", {int64_t(kM)}, bias);
    g.node("Conv", {"x", "w1"}, {"e1"});
    g.node("Relu", {"e1"}, {"r1"});
    test::setInts(g.node("Conv", {"x", "w3"}, {"e3"}), "pads", {1, 1, 1, 1});
    g.node("Relu", {"e3"}, {"r3"});
    test::setInt(g.node("Concat", {"r1", "r3"}, {"cat"}), "axis", 1);
    if (pooled) {
        auto& pool = g.node("MaxPool", {"cat"}, {"pool"});
        test::setInts(pool, "kernel_shape", {3, 3});
        test::setInts(pool, "strides", {2, 2});
    }
    g.node("Conv", {pooled ? "pool" : "cat", "wq", "bq"}, {"q"});
    g.node("Relu", {"q"}, {"y"});
    const std::vector<float> x = noise(kN * kC * kH * kW, 41);

    const std::vector<double> xd(x.begin(), x.end());
    std::vector<double> e1 = convolve(xd, kN, kC, kH, kW, w1, kE1, 1, 0);
    std::vector<double> e3 = convolve(xd, kN, kC, kH, kW, w3, kE3, 3, 1);
    std::vector<double> cat(kN * kE * ph * pw, -INFINITY);
    for (size_t b = 0; b < kN; ++b)
        for (size_t c = 0; c < kE; ++c)
            for (size_t r = 0; r < kH; ++r)
                for (size_t col = 0; col < kW; ++col) {
                    const double e = c < kE1 ? e1[((b * kE1 + c) * kH + r) * kW + col]
                                             : e3[((b * kE3 + c - kE1) * kH + r) * kW + col];
                    const double v = std::max(0.0, e);
                    // Every pooling window that holds (r, col); without pooling, itself.
                    for (size_t orow = 0; orow < ph; ++orow)
                        for (size_t ocol = 0; ocol < pw; ++ocol) {
                            const bool in = pooled ? r >= 2 * orow && r < 2 * orow + 3 &&
                                    col >= 2 * ocol && col < 2 * ocol + 3
                                                   : r == orow && col == ocol;
                            double& out = cat[((b * kE + c) * ph + orow) * pw + ocol];
                            if (in)
                                out = std::max(out, v);
                        }
                }
    std::vector<double> want = convolve(cat, kN, kE, ph, pw, wq, kM, 1, 0);
    for (size_t i = 0; i < want.size(); ++i)
        want[i] = std::max(0.0, want[i] + bias[i / (ph * pw) % kM]);

    std::vector<EngineStep> steps;
    expectOnTwoThreads(g, x, dims, want, &steps);
    const bool concat = std::any_of(
        steps.begin(), steps.end(), [](const EngineStep& s) { return s.op == "Concat"; });
    const bool onOneDnn = std::all_of(steps.begin(), steps.end(),
        [](const EngineStep& s) { return s.op != "Conv" || s.library == "onednn"; });
#if defined(__x86_64__)
    const bool avx512 = __builtin_cpu_supports("avx512f") && !std::getenv("DNNL_MAX_CPU_ISA");
#else
    const bool avx512 = false;
#endif
    if (onOneDnn && avx512 && kM <= kE) {
        EXPECT_FALSE(concat);
        EXPECT_EQ(std::count_if(steps.begin(), steps.end(),
                      [](const EngineStep& s) { return s.op == "MaxPool"; }),
            pooled ? 2 : 0);
        const auto sum = std::find_if(steps.begin(), steps.end(),
            [](const EngineStep& s) { return s.node.find("Add") != std::string::npos; });
        ASSERT_NE(sum, steps.end());
        EXPECT_EQ(sum->op, "Conv") << sum->node;
        EXPECT_NE(sum->node.find("Relu"), std::string::npos) << sum->node;
    } else {
        // Not split: no step holds an Add (the Concat is a step of its own, or, on XNNPACK, the
        // expansions write their channels of it in place).
        EXPECT_TRUE(std::none_of(steps.begin(), steps.end(),
            [](const EngineStep& s) { return s.node.find("Add") != std::string::npos; }));
    }
}

TEST(CnnPatterns, AConcatenationThatOnlyAPointwiseConvolutionReadsIsSplit)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    expectFireModule(false);
}

TEST(CnnPatterns, AConcatenationThatOnlyAMaxPoolReadsIsPooledInParts)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    expectFireModule(true);
}

TEST(CnnPatterns, AConcatenationThatAWiderPointwiseConvolutionReadsIsKept)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    expectFireModule(false, 48); // split, it would write and read back 48 channels, not copy 40
}

// A residual block of ResNet's basic form, after a 1x1 convolution (as a block's input is
// computed): relu(conv(relu(conv(r))) + r) with r = relu(conv1x1(x)), kC channels of kS x kS, on
// two threads against the formula; the residual's Add is inside the second convolution's step
// where oneDNN runs it.
void expectResidualBlock(size_t kC, size_t kS)
{
    const std::vector<float> w0 = noise(kC * kC, 11), wa = noise(kC * kC * 9, 13),
                             wb = noise(kC * kC * 9, 17);
    std::vector<float> wa10(wa), wb10(wb);
    for (float& v : wa10)
        v *= 0.1f;
    for (float& v : wb10)
        v *= 0.1f;
    GraphBuilder g;
    const std::vector<int64_t> dims = {1, int64_t(kC), int64_t(kS), int64_t(kS)};
    g.input("x", dims).output("y", dims);
    g.floats("w0", {dims[1], dims[1], 1, 1}, w0);
    g.floats("wa", {dims[1], dims[1], 3, 3}, wa10).floats("wb", {dims[1], dims[1], 3, 3}, wb10);
    g.node("Conv", {"x", "w0"}, {"c"});
    g.node("Relu", {"c"}, {"r"});
    test::setInts(g.node("Conv", {"r", "wa"}, {"a"}), "pads", {1, 1, 1, 1});
    g.node("Relu", {"a"}, {"h"});
    test::setInts(g.node("Conv", {"h", "wb"}, {"b"}), "pads", {1, 1, 1, 1});
    g.node("Add", {"b", "r"}, {"s"});
    g.node("Relu", {"s"}, {"y"});
    const std::vector<float> x = noise(kC * kS * kS, 19);

    std::vector<double> r = convolve({x.begin(), x.end()}, 1, kC, kS, kS, w0, kC, 1, 0);
    for (double& v : r)
        v = std::max(0.0, v);
    std::vector<double> h = convolve(r, 1, kC, kS, kS, wa10, kC, 3, 1);
    for (double& v : h)
        v = std::max(0.0, v);
    std::vector<double> want = convolve(h, 1, kC, kS, kS, wb10, kC, 3, 1);
    for (size_t i = 0; i < want.size(); ++i)
        want[i] = std::max(0.0, want[i] + r[i]);

    std::vector<EngineStep> steps;
    expectOnTwoThreads(g, x, dims, want, &steps);
    const bool oneDnn = std::any_of(
        steps.begin(), steps.end(), [](const EngineStep& s) { return s.library == "onednn"; });
    const auto adds = std::count_if(
        steps.begin(), steps.end(), [](const EngineStep& s) { return s.op == "Add"; });
    EXPECT_EQ(adds, oneDnn ? 0 : 1);
}

// ResNet's last stage in small: a 7x7 output, whose rows split unevenly over two threads, so that
// oneDNN runs it as slices of output channels.
TEST(CnnPatterns, ASevenBySevenResidualBlockOnTwoThreads)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    expectResidualBlock(64, 7);
}

// Its third stage in small: 14x14, whose bands of rows are too small for Winograd, so that each
// thread runs the whole image's Winograd convolution for half of the output channels.
TEST(CnnPatterns, AFourteenByFourteenResidualBlockOnTwoThreads)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    expectResidualBlock(64, 14);
}

// Its first stage in small: bands of 20x40 output pixels, which oneDNN's AVX-512 kernels run as
// Winograd convolutions (in nChw16c, the band, the residual and the output re-laid around them).
TEST(CnnPatterns, AResidualBlockOfWideBandsOnTwoThreads)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    expectResidualBlock(16, 40);
}

// EfficientNetV2's fused block in small: SiLU(conv3x3(x) + b) of 16 channels to 32 at 40x40, then
// a 1x1 convolution back to 16 with x added; two threads against the formula. On AVX-512 the 3x3
// runs as Winograd on bands of 20x40 pixels, whose kernel takes no SiLU post-op: the SiLU runs
// on its blocked output before the re-layout, still inside the one step.
TEST(CnnPatterns, AFusedBlockWithSiluOnTwoThreads)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    constexpr size_t kC = 16, kE = 32, kS = 40;
    const std::vector<float> wa = noise(kE * kC * 9, 53), ba = noise(kE, 59),
                             wb = noise(kC * kE, 61);
    GraphBuilder g;
    const std::vector<int64_t> dims = {1, int64_t(kC), int64_t(kS), int64_t(kS)};
    g.input("x", dims).output("y", dims);
    g.floats("wa", {int64_t(kE), int64_t(kC), 3, 3}, wa).floats("ba", {int64_t(kE)}, ba);
    g.floats("wb", {int64_t(kC), int64_t(kE), 1, 1}, wb);
    test::setInts(g.node("Conv", {"x", "wa", "ba"}, {"a"}), "pads", {1, 1, 1, 1});
    g.node("Sigmoid", {"a"}, {"gate"});
    g.node("Mul", {"a", "gate"}, {"h"});
    g.node("Conv", {"h", "wb"}, {"b"});
    g.node("Add", {"b", "x"}, {"y"});
    const std::vector<float> x = noise(kC * kS * kS, 67);

    const std::vector<double> xd(x.begin(), x.end());
    std::vector<double> h = convolve(xd, 1, kC, kS, kS, wa, kE, 3, 1);
    for (size_t i = 0; i < h.size(); ++i) {
        const double v = h[i] + ba[i / (kS * kS)];
        h[i] = v / (1.0 + std::exp(-v));
    }
    std::vector<double> want = convolve(h, 1, kE, kS, kS, wb, kC, 1, 0);
    for (size_t i = 0; i < want.size(); ++i)
        want[i] += xd[i];

    std::vector<EngineStep> steps;
    expectOnTwoThreads(g, x, dims, want, &steps);
    const auto conv = std::find_if(
        steps.begin(), steps.end(), [](const EngineStep& s) { return s.op == "Conv"; });
    ASSERT_NE(conv, steps.end());
    if (conv->library == "onednn") {
        EXPECT_NE(conv->node.find("+ SiLU"), std::string::npos) << conv->node;
    }
}

// SiLU after a 1x1 convolution over the whole range of its argument: the convolution copies 8 of
// its 16 input channels (identity weights), whose values run from -100 to 100 and include 0, the
// smallest and largest normal floats, +-87 and +-88 (around where the AVX-512 pass clamps its
// exponent), on two threads (bands of 3 and 2 rows of 7 pixels: 168 and 112 values, neither a
// multiple of 16). Against x / (1 + exp(-x)) in double precision.
TEST(CnnPatterns, ASiluAfterAConvolutionOverTheWholeRange)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    constexpr size_t kIn = 16, kOut = 8, kH = 5, kW = 7;
    std::vector<float> w(kOut * kIn, 0.0f);
    for (size_t o = 0; o < kOut; ++o)
        w[o * kIn + o] = 1.0f;
    std::vector<float> x(kIn * kH * kW);
    for (size_t i = 0; i < x.size(); ++i)
        x[i] = -100.0f + 200.0f * float(i) / float(x.size() - 1);
    const float special[] = {0.0f, 1e-38f, -1e-38f, 3e38f, -3e38f, 87.0f, -87.0f, 88.0f, -88.0f,
        87.5f, -87.5f, 1e-3f, -1e-3f};
    for (size_t k = 0; k < std::size(special); ++k)
        x[k * 3] = special[k]; // channel 0 of pixel k (NCHW: the first plane)
    GraphBuilder g;
    const std::vector<int64_t> dims = {1, int64_t(kIn), int64_t(kH), int64_t(kW)};
    g.input("x", dims).output("y", {1, int64_t(kOut), int64_t(kH), int64_t(kW)});
    g.floats("w", {int64_t(kOut), int64_t(kIn), 1, 1}, w);
    g.node("Conv", {"x", "w"}, {"c"});
    g.node("Sigmoid", {"c"}, {"gate"});
    g.node("Mul", {"c", "gate"}, {"y"});
    std::vector<double> want(kOut * kH * kW);
    for (size_t i = 0; i < want.size(); ++i) {
        const double v = x[i]; // output channel o is input channel o: the same NCHW offsets
        want[i] = v / (1.0 + std::exp(-v));
    }
    std::vector<EngineStep> steps;
    expectOnTwoThreads(g, x, dims, want, &steps);
}

// DenseNet's layer input: two convolutions' outputs concatenated along channels, normalised by a
// BatchNormalization and a Relu that alone read the concatenation, as one step; where something
// else reads the concatenation too, the steps stay apart. Both against the formula.
TEST(CnnPatterns, AConcatenationThatOnlyANormalisationReadsJoinsIt)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    constexpr size_t kN = 2, kC = 16, kA = 24, kB = 8, kH = 5, kW = 6;
    const std::vector<float> wa = noise(kA * kC, 23), wb = noise(kB * kC, 29);
    std::vector<float> gamma = noise(kA + kB, 31), beta = noise(kA + kB, 37),
                       mean = noise(kA + kB, 41), var = noise(kA + kB, 43);
    for (float& v : var)
        v += 1.0f; // 0.5 to 1.5
    const std::vector<float> x = noise(kN * kC * kH * kW, 47);
    const std::vector<double> xd(x.begin(), x.end());
    const std::vector<double> a = convolve(xd, kN, kC, kH, kW, wa, kA, 1, 0);
    const std::vector<double> b = convolve(xd, kN, kC, kH, kW, wb, kB, 1, 0);
    constexpr size_t kPixels = kH * kW, kOut = kA + kB;
    std::vector<double> cat(kN * kOut * kPixels), want(cat.size());
    for (size_t n = 0; n < kN; ++n)
        for (size_t c = 0; c < kOut; ++c)
            for (size_t p = 0; p < kPixels; ++p) {
                const double v =
                    c < kA ? a[(n * kA + c) * kPixels + p] : b[(n * kB + c - kA) * kPixels + p];
                const size_t i = (n * kOut + c) * kPixels + p;
                cat[i] = v;
                const double normed =
                    (v - mean[c]) / std::sqrt(double(var[c]) + 1e-5) * gamma[c] + beta[c];
                want[i] = std::max(0.0, normed);
            }

    for (bool alsoRead : {false, true}) {
        GraphBuilder g;
        const std::vector<int64_t> dims = {kN, kOut, kH, kW};
        g.input("x", {kN, kC, kH, kW}).output("y", dims);
        if (alsoRead)
            g.output("cat", dims);
        g.floats("wa", {kA, kC, 1, 1}, wa).floats("wb", {kB, kC, 1, 1}, wb);
        g.floats("gamma", {kOut}, gamma).floats("beta", {kOut}, beta);
        g.floats("mean", {kOut}, mean).floats("var", {kOut}, var);
        g.node("Conv", {"x", "wa"}, {"a"});
        g.node("Conv", {"x", "wb"}, {"b"});
        test::setInt(g.node("Concat", {"a", "b"}, {"cat"}), "axis", 1);
        g.node("BatchNormalization", {"cat", "gamma", "beta", "mean", "var"}, {"normed"});
        g.node("Relu", {"normed"}, {"y"});
        std::vector<std::vector<float>> out;
        std::vector<std::string> ops;
        ASSERT_TRUE(runXnnpack(g, x, {kN, kC, kH, kW}, &out, &ops));
        expectNear(out[0], want, alsoRead ? "normalised, also read" : "normalised");
        EXPECT_EQ(std::count(ops.begin(), ops.end(), "BatchNormalization"), alsoRead ? 1 : 0);
        EXPECT_EQ(std::count(ops.begin(), ops.end(), "Relu"), 0); // in the normalisation's step
        if (alsoRead)
            expectNear(out[1], cat, "concatenation");
    }
}

} // namespace
} // namespace jetagent
