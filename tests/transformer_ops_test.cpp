// The operators vision transformers and modern backbones add to the xnnpack backend (Pow, and the
// patterns built on it), each on a small graph against a double-precision formula here.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "jetagent/engines/engine.h"
#include "jetagent/engines/model_file.h"
#include "onnx_builder.h"

namespace jetagent {
namespace {

using test::GraphBuilder;

bool xnnpackBuilt()
{
    const auto backends = listBackends();
    return std::any_of(backends.begin(), backends.end(),
        [](const BackendInfo& b) { return b.name == "xnnpack" && b.available; });
}

// Runs `g` on the xnnpack backend with `input` for its only input of shape `dims`; its outputs.
testing::AssertionResult runXnnpack(const GraphBuilder& g, std::vector<float> input,
    const std::vector<int64_t>& dims, std::vector<std::vector<float>>* outputs)
{
    auto parsed = parseModelBytes(g.bytes(), "ops.onnx");
    if (!parsed)
        return testing::AssertionFailure() << parsed.status().message();
    EngineOptions options;
    options.backend = "xnnpack";
    options.batch = static_cast<int>(dims[0]);
    auto engine = buildEngine(parsed.value(), options);
    if (!engine)
        return testing::AssertionFailure() << engine.status().message();
    auto session = engine.value()->createSession();
    if (!session)
        return testing::AssertionFailure() << session.status().message();
    TensorView view;
    view.data = input.data();
    view.shape.rank = static_cast<int>(dims.size());
    std::copy(dims.begin(), dims.end(), view.shape.dims.begin());
    if (Status s = session.value()->run(&view, 1, nullptr); !s)
        return testing::AssertionFailure() << s.message();
    outputs->clear();
    for (size_t k = 0; k < session.value()->outputCount(); ++k) {
        const ConstTensorView out = session.value()->output(k);
        outputs->emplace_back(out.data, out.data + out.shape.elementCount());
    }
    return testing::AssertionSuccess();
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
    auto parsed = parseModelBytes(g.bytes(), "pow.onnx");
    ASSERT_TRUE(parsed.ok());
    EngineOptions options;
    options.backend = "xnnpack";
    auto engine = buildEngine(parsed.value(), options);
    ASSERT_FALSE(engine.ok());
    EXPECT_NE(engine.status().message().find("per_element"), std::string::npos)
        << engine.status().message();
    EXPECT_NE(engine.status().message().find("scalar exponent"), std::string::npos)
        << engine.status().message();
}

} // namespace
} // namespace jetagent
