// Quantized (QDQ) models on the xnnpack backend: QuantizeLinear and DequantizeLinear run as ONNX
// defines them in fp32, 8-bit integer inputs and outputs are carried as their exact values, a
// DequantizeLinear of int8 weights is folded, and in int8 the Q/DQ patterns run on XNNPACK's int8
// kernels with the model's own scales, without calibration.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "jetagent/engines/engine.h"
#include "jetagent/engines/model_file.h"
#include "onnx_builder.h"
#include "xnnpack_runs.h"

namespace jetagent {
namespace {

using test::xnnpackBuilt;

// An 8-bit initializer (int8 or uint8 per `type`).
void bytes(test::GraphBuilder& g, const std::string& name, const std::vector<int64_t>& dims,
    const std::vector<int>& values, int32_t type)
{
    auto* t = g.model().mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (int64_t d : dims)
        t->add_dims(d);
    std::string raw;
    for (int v : values)
        raw.push_back(static_cast<char>(static_cast<uint8_t>(v)));
    t->set_raw_data(raw);
}

void setType(onnx::ValueInfoProto* v, int32_t type)
{
    v->mutable_type()->mutable_tensor_type()->set_elem_type(type);
}

constexpr int32_t kUint8 = onnx::TensorProto_DataType_UINT8;
constexpr int32_t kInt8 = onnx::TensorProto_DataType_INT8;
constexpr int32_t kInt32 = onnx::TensorProto_DataType_INT32;

Expected<std::shared_ptr<const Engine>> build(const test::GraphBuilder& g, Precision precision)
{
    auto model = parseModelBytes(g.bytes(), "qdq-test.onnx");
    if (!model)
        return model.status();
    EngineOptions o;
    o.backend = "xnnpack";
    o.precision = precision;
    return buildEngine(model.value(), o);
}

// ONNX's QuantizeLinear, written out independently of the backend.
float quantizeRef(float x, float scale, float zero, float lo, float hi)
{
    const float q = std::nearbyint(x / scale) + zero;
    return std::min(hi, std::max(lo, q));
}

std::vector<float> run(const Engine& engine, std::vector<float> input,
    const std::vector<int64_t>& dims, size_t output = 0)
{
    auto session = engine.createSession();
    EXPECT_TRUE(session.ok()) << session.status().message();
    if (!session.ok())
        return {};
    TensorView view;
    view.data = input.data();
    view.shape.rank = static_cast<int>(dims.size());
    std::copy(dims.begin(), dims.end(), view.shape.dims.begin());
    const Status s = session.value()->run(&view, 1, nullptr);
    EXPECT_TRUE(s.ok()) << s.message();
    const ConstTensorView out = session.value()->output(output);
    return {out.data, out.data + out.shape.elementCount()};
}

// Per tensor into uint8 and per channel into int8, with ties (x / scale = k + 0.5) rounded to
// even and values beyond the type saturated: exactly ONNX's integers, as floats.
TEST(QdqEngine, QuantizeLinearRoundsHalfToEvenAndSaturatesExactly)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    const std::vector<int64_t> dims = {1, 3, 2, 4};
    test::GraphBuilder g;
    g.input("x", dims);
    g.floats("s", {}, {0.5f});
    bytes(g, "z", {}, {128}, kUint8);
    g.floats("sc", {3}, {0.5f, 0.25f, 2.0f});
    bytes(g, "zc", {3}, {0, -3, 5}, kInt8);
    g.node("QuantizeLinear", {"x", "s", "z"}, {"u"}, "q_tensor");
    g.node("QuantizeLinear", {"x", "sc", "zc"}, {"c"}, "q_channel");
    g.output("u", dims);
    g.output("c", dims);
    setType(g.model().mutable_graph()->mutable_output(0), kUint8);
    setType(g.model().mutable_graph()->mutable_output(1), kInt8);
    auto engine = build(g, Precision::Fp32);
    ASSERT_TRUE(engine.ok()) << engine.status().message();

    std::vector<float> x;
    for (int i = 0; i < 24; ++i)
        x.push_back(0.25f * static_cast<float>(i - 12) * (i % 5 == 0 ? 300.0f : 1.0f));
    const auto u = run(*engine.value(), x, dims, 0);
    const auto c = run(*engine.value(), x, dims, 1);
    ASSERT_EQ(u.size(), x.size());
    ASSERT_EQ(c.size(), x.size());
    const float scales[] = {0.5f, 0.25f, 2.0f}, zeros[] = {0, -3, 5};
    int ties = 0, saturated = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        EXPECT_EQ(u[i], quantizeRef(x[i], 0.5f, 128, 0, 255)) << "x " << x[i];
        const size_t ch = i / 8;
        EXPECT_EQ(c[i], quantizeRef(x[i], scales[ch], zeros[ch], -128, 127)) << "x " << x[i];
        const float r = x[i] / 0.5f;
        ties += std::fabs(r - std::trunc(r)) == 0.5f;
        saturated += u[i] == 0 || u[i] == 255;
    }
    EXPECT_GT(ties, 3); // the inputs do test rounding half to even
    EXPECT_GT(saturated, 1);
    EXPECT_EQ(u[12 - 1], 128.0f); // -0.25 / 0.5 = -0.5 rounds to 0 (even), not -1
}

// A uint8 model input read by DequantizeLinear: fed as floats of its integers.
TEST(QdqEngine, Uint8InputIsDequantizedFromItsExactValues)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    const std::vector<int64_t> dims = {1, 8};
    test::GraphBuilder g;
    g.input("q", dims);
    setType(g.model().mutable_graph()->mutable_input(0), kUint8);
    g.floats("s", {}, {0.125f});
    bytes(g, "z", {}, {100}, kUint8);
    g.node("DequantizeLinear", {"q", "s", "z"}, {"y"});
    g.output("y", dims);
    auto engine = build(g, Precision::Fp32);
    ASSERT_TRUE(engine.ok()) << engine.status().message();
    EXPECT_EQ(engine.value()->inputs()[0].type, DataType::UInt8);
    const std::vector<float> q = {0, 1, 99, 100, 101, 200, 254, 255};
    const auto y = run(*engine.value(), q, dims);
    ASSERT_EQ(y.size(), q.size());
    for (size_t i = 0; i < q.size(); ++i)
        EXPECT_EQ(y[i], (q[i] - 100.0f) * 0.125f);
}

// What the backend cannot take is refused naming the node: an int32 tensor to dequantize, a
// computed scale, an 8-bit input read by another operator, an 8-bit output QuantizeLinear did not
// write.
TEST(QdqEngine, RefusesWhatItCannotTakeNamingTheNode)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    {
        // A computed int32 tensor (an int32 bias is a constant, which the preparation folds).
        test::GraphBuilder g;
        g.input("x", {1, 4});
        setType(g.model().mutable_graph()->mutable_input(0), kInt32);
        g.floats("s", {}, {0.5f});
        g.node("DequantizeLinear", {"x", "s"}, {"y"}, "dq32");
        g.output("y", {1, 4});
        auto e = build(g, Precision::Fp32);
        ASSERT_FALSE(e.ok());
        EXPECT_NE(e.status().message().find("dq32"), std::string::npos) << e.status().message();
    }
    {
        test::GraphBuilder g;
        g.input("x", {1, 4});
        g.input("s", {1});
        g.node("QuantizeLinear", {"x", "s"}, {"y"}, "computed_scale");
        g.node("DequantizeLinear", {"y", "s"}, {"r"}, "dq");
        g.output("r", {1, 4});
        auto e = build(g, Precision::Fp32);
        ASSERT_FALSE(e.ok());
        EXPECT_NE(e.status().message().find("computed_scale"), std::string::npos)
            << e.status().message();
    }
    {
        test::GraphBuilder g;
        g.input("q", {1, 4});
        setType(g.model().mutable_graph()->mutable_input(0), kUint8);
        g.node("Relu", {"q"}, {"y"}, "relu_of_bytes");
        g.output("y", {1, 4});
        auto e = build(g, Precision::Fp32);
        ASSERT_FALSE(e.ok());
        EXPECT_NE(e.status().message().find("relu_of_bytes"), std::string::npos)
            << e.status().message();
    }
}

// The QDQ pattern of a quantized convolution as exporters write it: activations through
// QuantizeLinear/DequantizeLinear pairs (uint8), weights as DequantizeLinear of int8 initializers
// with a scale per output channel, an int32 bias dequantized with input scale x weight scale.
struct QdqConvModel {
    static constexpr float kInScale = 0.02f, kOutScale = 0.05f;
    static constexpr int kInZero = 128, kOutZero = 3;
    std::vector<int64_t> dims = {1, 3, 8, 8};
    test::GraphBuilder g;

    QdqConvModel()
    {
        g.input("x", dims);
        g.floats("s_in", {}, {kInScale});
        bytes(g, "z_in", {}, {kInZero}, kUint8);
        g.floats("s_out", {}, {kOutScale});
        bytes(g, "z_out", {}, {kOutZero}, kUint8);
        std::mt19937 rng(7);
        std::uniform_int_distribution<int> weight(-127, 127);
        std::vector<int> w(4 * 3 * 3 * 3);
        for (int& v : w)
            v = weight(rng);
        bytes(g, "w_q", {4, 3, 3, 3}, w, kInt8);
        const std::vector<float> wScale = {0.004f, 0.006f, 0.003f, 0.005f};
        g.floats("w_s", {4}, wScale);
        auto* b = g.model().mutable_graph()->add_initializer();
        b->set_name("b_q");
        b->set_data_type(kInt32);
        b->add_dims(4);
        std::vector<float> bScale;
        for (int c = 0; c < 4; ++c) {
            b->add_int32_data(150 * (c - 1));
            bScale.push_back(kInScale * wScale[static_cast<size_t>(c)]);
        }
        g.floats("b_s", {4}, bScale);
        g.node("QuantizeLinear", {"x", "s_in", "z_in"}, {"x_q"}, "q_in");
        g.node("DequantizeLinear", {"x_q", "s_in", "z_in"}, {"x_r"}, "dq_in");
        test::setInt(g.node("DequantizeLinear", {"w_q", "w_s"}, {"w"}, "dq_w"), "axis", 0);
        test::setInt(g.node("DequantizeLinear", {"b_q", "b_s"}, {"b"}, "dq_b"), "axis", 0);
        auto& conv = g.node("Conv", {"x_r", "w", "b"}, {"c"}, "conv");
        test::setInts(conv, "pads", {1, 1, 1, 1});
        g.node("Relu", {"c"}, {"r"}, "relu");
        g.node("QuantizeLinear", {"r", "s_out", "z_out"}, {"r_q"}, "q_out");
        g.node("DequantizeLinear", {"r_q", "s_out", "z_out"}, {"y"}, "dq_out");
        g.output("y", {1, 4, 8, 8});
    }
    std::vector<float> input() const
    {
        std::mt19937 rng(11);
        std::uniform_real_distribution<float> value(-2.0f, 2.0f);
        std::vector<float> x(3 * 8 * 8);
        for (float& v : x)
            v = value(rng);
        return x;
    }
};

// int8 without calibration: the convolution runs on XNNPACK's int8 kernel with the model's scales
// and agrees with the fp32 run of the same model (which applies every QuantizeLinear exactly)
// within one output quantization step; most values are equal.
TEST(QdqEngine, Int8RunsTheModelsOwnScalesWithoutCalibration)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    QdqConvModel m;
    auto fp32 = build(m.g, Precision::Fp32);
    ASSERT_TRUE(fp32.ok()) << fp32.status().message();
    for (const EngineStep& step : fp32.value()->steps())
        EXPECT_EQ(step.node.find("dq_w"), std::string::npos) << "the weights' DQ is folded";
    auto int8 = build(m.g, Precision::Int8);
    ASSERT_TRUE(int8.ok()) << int8.status().message();
    const std::string& note = int8.value()->description().lowered;
    EXPECT_NE(note.find("the model's own quantization"), std::string::npos) << note;
    int int8Convs = 0;
    std::string steps;
    for (const EngineStep& step : int8.value()->steps()) {
        int8Convs += step.op == "Conv" && step.precision == "int8";
        steps += "\n  " + step.precision + " " + step.op + " " + step.node;
    }
    EXPECT_EQ(int8Convs, 1) << note << steps;

    const auto want = run(*fp32.value(), m.input(), m.dims);
    const auto got = run(*int8.value(), m.input(), m.dims);
    ASSERT_EQ(got.size(), want.size());
    size_t equal = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        // Both are on the output's grid: (q - 3) * 0.05 with q an integer.
        const float q = want[i] / QdqConvModel::kOutScale;
        ASSERT_NEAR(q, std::nearbyint(q), 1e-3f) << i;
        EXPECT_LE(std::fabs(got[i] - want[i]), QdqConvModel::kOutScale * 1.001f) << i;
        equal += got[i] == want[i];
    }
    EXPECT_GT(equal, want.size() * 9 / 10);
}

} // namespace
} // namespace jetagent
