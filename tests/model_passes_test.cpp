// Model loading checks, the preparation passes, parameter and MAC counts, and the prepared-model
// cache, on small graphs built here with the ONNX protobuf API.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <opencv2/dnn.hpp>

#include "jetagent/engines/model_file.h"
#include "jetagent/engines/model_info.h"
#include "jetagent/engines/model_passes.h"
#include "jetagent/engines/model_prepare.h"
#include "onnx_builder.h"
#include "test_support.h"

namespace jetagent {
namespace {

using test::setInt;
using test::setInts;
using test::setString;

constexpr uint32_t kSeed = 20261121;

using test::GraphBuilder;

int countOps(const onnx::ModelProto& m, const std::string& op)
{
    int n = 0;
    for (const auto& node : m.graph().node())
        n += node.op_type() == op;
    return n;
}

const onnx::NodeProto* findOp(const onnx::ModelProto& m, const std::string& op)
{
    for (const auto& node : m.graph().node())
        if (node.op_type() == op)
            return &node;
    return nullptr;
}

const onnx::TensorProto* findInit(const onnx::ModelProto& m, const std::string& name)
{
    for (const auto& t : m.graph().initializer())
        if (t.name() == name)
            return &t;
    return nullptr;
}

std::vector<float> floatsOf(const onnx::TensorProto& t)
{
    std::vector<float> v(t.raw_data().size() / sizeof(float));
    std::memcpy(v.data(), t.raw_data().data(), v.size() * sizeof(float));
    return v;
}

// Runs a model through OpenCV DNN on `input`: the reference for "the rewrite computes the same".
cv::Mat runOpenCV(const onnx::ModelProto& model, const cv::Mat& input)
{
    const std::string bytes = model.SerializeAsString();
    cv::dnn::Net net = cv::dnn::readNetFromONNX(bytes.data(), bytes.size());
    net.setInput(input);
    return net.forward().clone();
}

cv::Mat randomBlob(const std::vector<int>& dims, uint32_t seed)
{
    cv::Mat m(static_cast<int>(dims.size()), dims.data(), CV_32F);
    cv::RNG rng(seed);
    rng.fill(m, cv::RNG::UNIFORM, -1.0, 1.0);
    return m;
}

double maxAbsDiff(const cv::Mat& a, const cv::Mat& b)
{
    EXPECT_EQ(a.total(), b.total());
    double worst = 0;
    for (size_t i = 0; i < std::min(a.total(), b.total()); ++i)
        worst =
            std::max(worst, std::abs(static_cast<double>(a.ptr<float>()[i]) - b.ptr<float>()[i]));
    return worst;
}

Expected<std::shared_ptr<const ModelFile>> parse(const GraphBuilder& g, const std::string& path)
{
    return parseModelBytes(g.bytes(), path);
}

// --- loading and checking --------------------------------------------------------------------

TEST(ModelCheck, MissingInitializerIsNamed)
{
    GraphBuilder g;
    g.input("x", {1, 3, 4, 4}).output("y", {1, 2, 4, 4});
    g.node("Conv", {"x", "w"}, {"y"}, "conv1");
    auto m = parse(g, "missing.onnx");
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().kind(), ErrorKind::InvalidInput);
    EXPECT_NE(m.status().message().find("'missing.onnx'"), std::string::npos);
    EXPECT_NE(m.status().message().find("Conv 'conv1' reads 'w'"), std::string::npos)
        << m.status().message();
}

TEST(ModelCheck, CycleIsReported)
{
    GraphBuilder g;
    g.input("x", {1, 4}).output("y", {1, 4});
    g.node("Add", {"x", "b"}, {"a"}, "first");
    g.node("Relu", {"a"}, {"b"}, "second");
    g.node("Relu", {"a"}, {"y"}, "third");
    auto m = parse(g, "cycle.onnx");
    ASSERT_FALSE(m.ok());
    EXPECT_NE(m.status().message().find("cycle"), std::string::npos) << m.status().message();
    EXPECT_NE(m.status().message().find("Add 'first'"), std::string::npos) << m.status().message();
}

TEST(ModelCheck, UnknownAndCustomOperatorsAreNamed)
{
    GraphBuilder g;
    g.input("x", {1, 4}).output("y", {1, 4});
    g.node("Frobnicate", {"x"}, {"y"}, "mystery");
    auto m = parse(g, "unknown.onnx");
    ASSERT_FALSE(m.ok());
    EXPECT_NE(m.status().message().find("unknown operator 'Frobnicate'"), std::string::npos)
        << m.status().message();

    GraphBuilder c;
    c.input("x", {1, 4}).output("y", {1, 4});
    c.node("FusedGemm", {"x"}, {"y"}, "fused").set_domain("com.microsoft");
    auto custom = parse(c, "custom.onnx");
    ASSERT_FALSE(custom.ok());
    EXPECT_NE(custom.status().message().find("custom operator of domain 'com.microsoft'"),
        std::string::npos)
        << custom.status().message();
}

TEST(ModelCheck, TooNewOpsetOrIrVersionSaysWhatThisBuildReads)
{
    GraphBuilder g(99);
    g.input("x", {1, 4}).output("y", {1, 4});
    g.node("Relu", {"x"}, {"y"});
    auto m = parse(g, "new.onnx");
    ASSERT_FALSE(m.ok());
    EXPECT_NE(m.status().message().find("uses opset 99"), std::string::npos)
        << m.status().message();
    EXPECT_NE(m.status().message().find("newer than this build's ONNX library"), std::string::npos);

    GraphBuilder ir;
    ir.input("x", {1, 4}).output("y", {1, 4});
    ir.node("Relu", {"x"}, {"y"});
    ir.model().set_ir_version(42);
    auto m2 = parse(ir, "ir.onnx");
    ASSERT_FALSE(m2.ok());
    EXPECT_NE(m2.status().message().find("IR version 42"), std::string::npos)
        << m2.status().message();
}

TEST(ModelCheck, ShapeContradictionsFailShapeInference)
{
    GraphBuilder g;
    g.input("x", {1, 4}).output("y", {1, 3});
    // A [1,4] x [5,3] product.
    g.randomFloats("w", {5, 3}, -1, 1, kSeed);
    g.node("MatMul", {"x", "w"}, {"y"}, "product");
    auto m = parse(g, "contradiction.onnx");
    ASSERT_FALSE(m.ok());
    EXPECT_NE(m.status().message().find("'contradiction.onnx'"), std::string::npos);
    EXPECT_NE(m.status().message().find("shape inference failed"), std::string::npos)
        << m.status().message();

    GraphBuilder d;
    d.input("x", {1, 4}).output("y", {1, 7}); // Relu keeps the shape: 7 cannot be
    d.node("Relu", {"x"}, {"y"});
    auto declared = parse(d, "declared.onnx");
    ASSERT_FALSE(declared.ok());
    EXPECT_NE(declared.status().message().find("'declared.onnx'"), std::string::npos);
}

// A shape that only the shape arithmetic's data knows (Shape -> Gather -> Unsqueeze -> Concat ->
// Reshape) contradicted by a later node: a Div of the 1 x 30 reshape by 42 values. Without data
// propagation the check passed it and the prepared model (the Reshape's target folded to a
// constant) failed shape inference (a fuzz finding, tests/fuzz/regressions/onnx_model).
TEST(ModelCheck, ShapesFromShapeArithmeticAreCheckedToo)
{
    for (const int64_t divisorSize : {30, 42}) {
        GraphBuilder g(14); // Reshape-14's shape inference reads the propagated shape
        g.input("x", {1, 1, 5, 6}).output("y", {1, 30});
        g.node("Shape", {"x"}, {"shape"}, "shape");
        g.ints("zero", {}, {0});
        g.node("Gather", {"shape", "zero"}, {"batch"}, "gather");
        g.ints("axes", {1}, {0});
        g.node("Unsqueeze", {"batch", "axes"}, {"batch1"}, "unsqueeze");
        g.ints("rest", {1}, {-1});
        setInt(g.node("Concat", {"batch1", "rest"}, {"target"}, "concat"), "axis", 0);
        g.node("Reshape", {"x", "target"}, {"flat"}, "reshape");
        g.randomFloats("d", {divisorSize}, 1, 2, kSeed);
        g.node("Div", {"flat", "d"}, {"y"}, "divide");
        auto m = parse(g, "reshaped.onnx");
        if (divisorSize == 30) {
            EXPECT_TRUE(m.ok()) << m.status().message();
            continue;
        }
        ASSERT_FALSE(m.ok());
        EXPECT_NE(m.status().message().find("shape inference failed"), std::string::npos)
            << m.status().message();
        EXPECT_NE(m.status().message().find("node name: divide"), std::string::npos)
            << m.status().message();
    }
}

TEST(ModelCheck, NodesOutOfOrderAreSorted)
{
    GraphBuilder g;
    g.input("x", {1, 4}).output("y", {1, 4});
    g.node("Relu", {"a"}, {"y"}, "late");
    g.node("Neg", {"x"}, {"a"}, "early");
    auto m = parse(g, "unsorted.onnx");
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_EQ(m.value()->proto->graph().node(0).name(), "early");
    EXPECT_EQ(m.value()->proto->graph().node(1).name(), "late");
}

TEST(ModelCheck, RandomBytesAndTruncationNeverCrash)
{
    GraphBuilder g;
    g.input("x", {1, 3, 8, 8}).output("y", {1, 2, 8, 8});
    g.randomFloats("w", {2, 3, 3, 3}, -1, 1, kSeed);
    setInts(g.node("Conv", {"x", "w"}, {"y"}), "pads", {1, 1, 1, 1});
    const std::vector<char> whole = g.bytes();
    ASSERT_TRUE(parseModelBytes(whole, "whole.onnx").ok());
    // Every prefix: each must parse or fail cleanly.
    int failures = 0;
    for (size_t n = 1; n < whole.size(); n += 7) {
        auto m = parseModelBytes(
            std::vector<char>(whole.begin(), whole.begin() + static_cast<long>(n)), "cut.onnx");
        if (!m.ok()) {
            ++failures;
            EXPECT_NE(m.status().message().find("'cut.onnx'"), std::string::npos)
                << m.status().message();
        }
    }
    EXPECT_GT(failures, 0);
    std::mt19937 rng(kSeed);
    for (int i = 0; i < 50; ++i) {
        std::vector<char> noise(static_cast<size_t>(1 + rng() % 4096));
        for (auto& c : noise)
            c = static_cast<char>(rng());
        EXPECT_FALSE(parseModelBytes(noise, "noise.onnx").ok());
    }
}

class ExternalData : public ::testing::Test {
protected:
    // A Conv whose weights live in weights.bin next to the model.
    std::string write(const std::string& location, int64_t length = -1)
    {
        GraphBuilder g;
        g.input("x", {1, 2, 4, 4}).output("y", {1, 3, 4, 4});
        g.node("Conv", {"x", "w"}, {"y"});
        std::vector<float> w(6);
        for (size_t i = 0; i < w.size(); ++i)
            w[i] = static_cast<float>(i) * 0.5f;
        auto* t = g.model().mutable_graph()->add_initializer();
        t->set_name("w");
        t->set_data_type(onnx::TensorProto_DataType_FLOAT);
        for (int64_t d : {3, 2, 1, 1})
            t->add_dims(d);
        t->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
        auto* loc = t->add_external_data();
        loc->set_key("location");
        loc->set_value(location);
        auto* off = t->add_external_data();
        off->set_key("offset");
        off->set_value("16");
        if (length >= 0) {
            auto* len = t->add_external_data();
            len->set_key("length");
            len->set_value(std::to_string(length));
        }
        std::string blob(16, 'x');
        blob.append(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(float));
        test::writeFile(dir_ / "weights.bin", blob);
        std::string path = dir_ / "model.onnx";
        test::writeFile(path, g.model().SerializeAsString());
        return path;
    }
    test::TempDir dir_;
};

TEST_F(ExternalData, IsReadFromBesideTheModelAndHashed)
{
    auto m = loadModelFile(write("weights.bin", 24));
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_EQ(m.value()->externalBytes, 24u);
    const auto* w = findInit(*m.value()->proto, "w");
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(w->data_location(), onnx::TensorProto_DataLocation_DEFAULT);
    EXPECT_EQ(floatsOf(*w), (std::vector<float> {0, 0.5f, 1, 1.5f, 2, 2.5f}));
    // The hash covers the external data: the same .onnx with other weights is another model.
    const std::string first = m.value()->sha256;
    std::string blob = test::readFile(dir_ / "weights.bin");
    blob[20] = 'y';
    test::writeFile(dir_ / "weights.bin", blob);
    auto again = loadModelFile(dir_ / "model.onnx");
    ASSERT_TRUE(again.ok()) << again.status().message();
    EXPECT_NE(again.value()->sha256, first);
}

TEST_F(ExternalData, MissingTruncatedOrEscapingDataIsAnError)
{
    auto escaping = loadModelFile(write("../weights.bin"));
    ASSERT_FALSE(escaping.ok());
    EXPECT_NE(escaping.status().message().find("inside the model's directory"), std::string::npos)
        << escaping.status().message();

    auto tooLong = loadModelFile(write("weights.bin", 4000));
    ASSERT_FALSE(tooLong.ok());
    EXPECT_NE(tooLong.status().message().find("run past the end"), std::string::npos)
        << tooLong.status().message();

    const std::string path = write("weights.bin");
    std::filesystem::remove(dir_ / "weights.bin");
    auto missing = loadModelFile(path);
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.status().kind(), ErrorKind::NotFound);
    EXPECT_NE(missing.status().message().find("weights.bin' is missing"), std::string::npos)
        << missing.status().message();
}

// --- passes ----------------------------------------------------------------------------------

TEST(SetBatch, FixesOrFreesTheFirstDimension)
{
    GraphBuilder g;
    g.input("x", {1, 4}, "N").output("y", {1, 4}, "N");
    g.node("Relu", {"x"}, {"y"});
    PassReport r;
    ASSERT_TRUE(setBatch(g.model(), 8, &r).ok());
    EXPECT_EQ(g.model().graph().input(0).type().tensor_type().shape().dim(0).dim_value(), 8);
    EXPECT_EQ(g.model().graph().output(0).type().tensor_type().shape().dim(0).dim_value(), 8);
    EXPECT_EQ(r.rewritten, 2);
    PassReport f;
    ASSERT_TRUE(setBatch(g.model(), 0, &f).ok());
    EXPECT_EQ(g.model().graph().input(0).type().tensor_type().shape().dim(0).dim_param(), "batch");
    EXPECT_FALSE(setBatch(g.model(), -1, nullptr).ok());
}

TEST(EliminateIdentity, SharedInitializersAreExpandedIntoCopies)
{
    // The exporter's pattern: one zero bias shared by two Conv layers through Identity.
    GraphBuilder g;
    g.input("x", {1, 2, 4, 4}).output("y", {1, 2, 4, 4});
    g.randomFloats("w1", {2, 2, 1, 1}, -1, 1, kSeed)
        .randomFloats("w2", {2, 2, 1, 1}, -1, 1, kSeed + 1);
    g.floats("zero", {2}, {0, 0});
    g.node("Identity", {"zero"}, {"b1"});
    g.node("Identity", {"zero"}, {"b2"});
    setInts(g.node("Conv", {"x", "w1", "b1"}, {"h"}), "kernel_shape", {1, 1});
    g.node("Identity", {"h"}, {"h2"});
    setInts(g.node("Conv", {"h2", "w2", "b2"}, {"y"}), "kernel_shape", {1, 1});
    const cv::Mat input = randomBlob({1, 2, 4, 4}, kSeed);

    PassReport r;
    ASSERT_TRUE(eliminateIdentity(g.model(), &r).ok());
    EXPECT_EQ(countOps(g.model(), "Identity"), 0);
    EXPECT_EQ(r.removed, 3);
    ASSERT_NE(findInit(g.model(), "b1"), nullptr);
    ASSERT_NE(findInit(g.model(), "b2"), nullptr);
    EXPECT_EQ(floatsOf(*findInit(g.model(), "b2")), (std::vector<float> {0, 0}));
    EXPECT_EQ(g.model().graph().node(1).input(0), "h") << "the second Conv reads past the Identity";
    // OpenCV 4.6 refuses the original (Identity of a constant); the result runs.
    const cv::Mat out = runOpenCV(g.model(), input);
    EXPECT_EQ(out.total(), 32u);
}

TEST(EliminateIdentity, KeepsGraphOutputsAndDropoutMasksInUse)
{
    GraphBuilder g;
    g.input("x", {1, 4}).output("y", {1, 4}).output("mask", {1, 4});
    g.node("Dropout", {"x"}, {"d", "mask"});
    g.node("Relu", {"d"}, {"r"});
    g.node("Identity", {"r"}, {"y"});
    ASSERT_TRUE(eliminateIdentity(g.model(), nullptr).ok());
    EXPECT_EQ(countOps(g.model(), "Dropout"), 1) << "its mask is a graph output";
    EXPECT_EQ(countOps(g.model(), "Identity"), 1) << "its output is the model's output";

    GraphBuilder d;
    d.input("x", {1, 4}).output("y", {1, 4});
    d.node("Dropout", {"x"}, {"d"});
    d.node("Relu", {"d"}, {"y"});
    PassReport r;
    ASSERT_TRUE(eliminateIdentity(d.model(), &r).ok());
    EXPECT_EQ(countOps(d.model(), "Dropout"), 0);
    EXPECT_EQ(d.model().graph().node(0).input(0), "x");
}

// Swin's functional dropouts: F.dropout(x, p=0.0) exports with training_mode true (its default)
// and an unused mask; a ratio of 0 drops nothing, so they go like inference dropouts. A ratio above
// 0 in training mode is random and stays (the backends refuse it).
TEST(EliminateIdentity, DropoutOfRatioZeroGoesEvenInTrainingMode)
{
    for (float ratio : {0.0f, 0.1f}) {
        GraphBuilder g;
        g.input("x", {1, 4}).output("y", {1, 4});
        auto& constantRatio = g.node("Constant", {}, {"ratio"});
        auto* attr = constantRatio.add_attribute();
        attr->set_name("value");
        attr->set_type(onnx::AttributeProto::TENSOR);
        attr->mutable_t()->set_data_type(onnx::TensorProto_DataType_FLOAT);
        attr->mutable_t()->add_float_data(ratio);
        auto* mode = g.model().mutable_graph()->add_initializer();
        mode->set_name("training");
        mode->set_data_type(onnx::TensorProto_DataType_BOOL);
        mode->add_int32_data(1);
        g.node("Dropout", {"x", "ratio", "training"}, {"d", "unused_mask"});
        g.node("Relu", {"d"}, {"y"});
        ASSERT_TRUE(eliminateIdentity(g.model(), nullptr).ok());
        EXPECT_EQ(countOps(g.model(), "Dropout"), ratio == 0.0f ? 0 : 1) << "ratio " << ratio;
    }
}

// Conv then BatchNormalization, with the BN parameters drawn at random.
GraphBuilder convBatchNorm(const std::vector<int64_t>& kernel, bool convBias)
{
    const int64_t channels = 3;
    std::vector<int64_t> wdims {channels, 2};
    std::vector<int64_t> xdims {1, 2};
    for (int64_t k : kernel) {
        wdims.push_back(k);
        xdims.push_back(5);
    }
    std::vector<int64_t> ydims = xdims;
    ydims[1] = channels;
    GraphBuilder g;
    g.input("x", xdims).output("y", ydims);
    g.randomFloats("w", wdims, -1, 1, kSeed);
    g.randomFloats("s", {channels}, 0.5f, 1.5f, kSeed + 1);
    g.randomFloats("b", {channels}, -0.5f, 0.5f, kSeed + 2);
    g.randomFloats("m", {channels}, -0.5f, 0.5f, kSeed + 3);
    g.randomFloats("v", {channels}, 0.5f, 1.5f, kSeed + 4);
    std::vector<std::string> convInputs {"x", "w"};
    if (convBias) {
        g.randomFloats("cb", {channels}, -0.5f, 0.5f, kSeed + 5);
        convInputs.emplace_back("cb");
    }
    auto& conv = g.node("Conv", convInputs, {"c"});
    setInts(conv, "kernel_shape", kernel);
    std::vector<int64_t> pads;
    pads.reserve(2 * kernel.size());
    for (int64_t k : kernel)
        pads.push_back(k / 2);
    for (int64_t k : kernel)
        pads.push_back(k / 2);
    setInts(conv, "pads", pads);
    g.node("BatchNormalization", {"c", "s", "b", "m", "v"}, {"y"});
    return g;
}

TEST(FoldBatchNorm, WeightsFollowTheFormulaAndOutputsAgree)
{
    GraphBuilder g = convBatchNorm({3, 3}, false);
    const onnx::ModelProto original = g.model();
    const cv::Mat input = randomBlob({1, 2, 5, 5}, kSeed);
    const cv::Mat before = runOpenCV(original, input);

    PassReport r;
    ASSERT_TRUE(foldBatchNorm(g.model(), &r).ok());
    EXPECT_EQ(r.folded, 1);
    EXPECT_EQ(countOps(g.model(), "BatchNormalization"), 0);
    const auto* conv = findOp(g.model(), "Conv");
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(conv->output(0), "y");
    ASSERT_EQ(conv->input_size(), 3);

    const auto w0 = floatsOf(*findInit(original, "w"));
    const auto s = floatsOf(*findInit(original, "s"));
    const auto b = floatsOf(*findInit(original, "b"));
    const auto m = floatsOf(*findInit(original, "m"));
    const auto v = floatsOf(*findInit(original, "v"));
    const auto w1 = floatsOf(*findInit(g.model(), conv->input(1)));
    const auto b1 = floatsOf(*findInit(g.model(), conv->input(2)));
    for (size_t c = 0; c < 3; ++c) {
        const double k = s[c] / std::sqrt(v[c] + 1e-5);
        EXPECT_NEAR(b1[c], -m[c] * k + b[c], 1e-6);
        for (size_t j = 0; j < 18; ++j)
            EXPECT_NEAR(w1[c * 18 + j], w0[c * 18 + j] * k, 1e-6);
    }
    EXPECT_LT(maxAbsDiff(runOpenCV(g.model(), input), before), 1e-5);
}

TEST(FoldBatchNorm, ThreeDimensionalConvWithBias)
{
    GraphBuilder g = convBatchNorm({3, 3, 3}, true);
    const cv::Mat input = randomBlob({1, 2, 5, 5, 5}, kSeed);
    const cv::Mat before = runOpenCV(g.model(), input);
    PassReport r;
    ASSERT_TRUE(foldBatchNorm(g.model(), &r).ok());
    EXPECT_EQ(r.folded, 1);
    EXPECT_LT(maxAbsDiff(runOpenCV(g.model(), input), before), 1e-5);
}

TEST(FoldBatchNorm, SharedWeightsAreCopiedAndOtherReadersKeepThem)
{
    GraphBuilder g = convBatchNorm({1, 1}, false);
    // A second Conv reads the same weights, without BatchNormalization.
    auto* graph = g.model().mutable_graph();
    graph->mutable_output(0)->set_name("y");
    auto& other = g.node("Conv", {"x", "w"}, {"z"});
    setInts(other, "kernel_shape", {1, 1});
    g.output("z", {1, 3, 5, 5});
    const auto original = floatsOf(*findInit(g.model(), "w"));
    ASSERT_TRUE(foldBatchNorm(g.model(), nullptr).ok());
    EXPECT_EQ(floatsOf(*findInit(g.model(), "w")), original);
    const auto* conv = &g.model().graph().node(0);
    EXPECT_NE(conv->input(1), "w");
    EXPECT_NE(findInit(g.model(), conv->input(1)), nullptr);
}

TEST(FoldBatchNorm, LeavesBatchNormWithoutAConvBeforeIt)
{
    GraphBuilder g;
    g.input("x", {1, 3, 4, 4}).output("y", {1, 3, 4, 4});
    for (const char* n : {"s", "b", "m", "v"})
        g.floats(n, {3}, {1, 1, 1});
    g.node("Relu", {"x"}, {"r"});
    g.node("BatchNormalization", {"r", "s", "b", "m", "v"}, {"y"});
    PassReport r;
    ASSERT_TRUE(foldBatchNorm(g.model(), &r).ok());
    EXPECT_EQ(r.folded, 0);
    EXPECT_EQ(countOps(g.model(), "BatchNormalization"), 1);
}

TEST(CanonicalizeForOpenCV, ClipBoundsBecomeAttributesAndRun)
{
    GraphBuilder g;
    g.input("x", {1, 4, 3, 3}).output("y", {1, 4, 3, 3});
    g.floats("lo", {}, {0.0f}).floats("hi", {}, {0.25f});
    g.node("Clip", {"x", "lo", "hi"}, {"y"});
    PassReport r;
    ASSERT_TRUE(canonicalizeForOpenCV(g.model(), &r).ok());
    EXPECT_EQ(r.rewritten, 1);
    const auto* clip = findOp(g.model(), "Clip");
    ASSERT_EQ(clip->input_size(), 1);
    const cv::Mat input = randomBlob({1, 4, 3, 3}, kSeed);
    const cv::Mat out = runOpenCV(g.model(), input);
    for (size_t i = 0; i < out.total(); ++i)
        EXPECT_FLOAT_EQ(
            out.ptr<float>()[i], std::min(0.25f, std::max(0.0f, input.ptr<float>()[i])));
}

TEST(CanonicalizeForOpenCV, FiveDimensionalGlobalPoolBecomesReduceMean)
{
    GraphBuilder g;
    g.input("x", {1, 4, 2, 3, 3}).output("y", {1, 4, 1, 1, 1});
    g.node("GlobalAveragePool", {"x"}, {"y"});
    ASSERT_TRUE(inferShapes(g.model(), nullptr).ok());
    ASSERT_TRUE(canonicalizeForOpenCV(g.model(), nullptr).ok());
    ASSERT_NE(findOp(g.model(), "ReduceMean"), nullptr);
    const cv::Mat input = randomBlob({1, 4, 2, 3, 3}, kSeed);
    const cv::Mat out = runOpenCV(g.model(), input);
    ASSERT_EQ(out.total(), 4u);
    for (int c = 0; c < 4; ++c) {
        double sum = 0;
        for (int i = 0; i < 18; ++i)
            sum += input.ptr<float>()[c * 18 + i];
        EXPECT_NEAR(out.ptr<float>()[c], sum / 18, 1e-5);
    }
}

TEST(CanonicalizeForOpenCV, SplitSizesAxesAndKernelShape)
{
    GraphBuilder g;
    g.input("x", {1, 4, 3, 3}).output("a", {1, 1, 4, 3, 3}).output("y", {1, 2, 3, 3});
    g.ints("sizes", {2}, {2, 2}).ints("axes", {1}, {1});
    g.randomFloats("w", {2, 2, 3, 3}, -1, 1, kSeed);
    setInt(g.node("Split", {"x", "sizes"}, {"s0", "s1"}), "axis", 1);
    g.node("Unsqueeze", {"x", "axes"}, {"a"});
    setInts(g.node("Conv", {"s1", "w"}, {"y"}), "pads", {1, 1, 1, 1});
    PassReport r;
    ASSERT_TRUE(canonicalizeForOpenCV(g.model(), &r).ok());
    EXPECT_EQ(r.rewritten, 3);
    const auto* split = findOp(g.model(), "Split");
    EXPECT_EQ(split->input_size(), 1);
    ASSERT_EQ(split->attribute_size(), 2);
    const auto* unsqueeze = findOp(g.model(), "Unsqueeze");
    EXPECT_EQ(unsqueeze->input_size(), 1);
    const auto* conv = findOp(g.model(), "Conv");
    bool kernel = false;
    for (const auto& a : conv->attribute())
        kernel |= a.name() == "kernel_shape" && a.ints_size() == 2 && a.ints(0) == 3;
    EXPECT_TRUE(kernel);
}

TEST(PruneUnused, RemovesDeadNodesAndInitializersKeepsInputs)
{
    GraphBuilder g;
    g.input("x", {1, 4}).input("unused", {1, 4}).output("y", {1, 4});
    g.floats("dead_w", {4}, {1, 2, 3, 4}).floats("never", {1}, {0});
    g.node("Relu", {"x"}, {"y"});
    g.node("Mul", {"x", "dead_w"}, {"dead"});
    PassReport r;
    ASSERT_TRUE(pruneUnused(g.model(), &r).ok());
    EXPECT_EQ(g.model().graph().node_size(), 1);
    EXPECT_EQ(g.model().graph().initializer_size(), 0);
    EXPECT_EQ(g.model().graph().input_size(), 2) << "real inputs are the model's interface";
    EXPECT_EQ(r.removed, 1);
}

// --- parameters and MACs ---------------------------------------------------------------------

TEST(ModelStats, ParametersCountLayersNotBuffersOrBounds)
{
    GraphBuilder g;
    g.input("x", {1, 2, 8, 8}, "batch").output("y", {1, 10}, "batch");
    g.randomFloats("w", {4, 2, 3, 3}, -1, 1, kSeed); // 72
    g.floats("zero", {4}, {0, 0, 0, 0});
    g.floats("one", {4}, {1, 1, 1, 1});
    g.floats("lo", {}, {0}).floats("hi", {}, {6});
    g.randomFloats("fc", {10, 4}, -1, 1, kSeed); // 40
    g.randomFloats("fcb", {10}, -1, 1, kSeed); // 10
    g.ints("shape", {2}, {1, 4});
    g.node("Identity", {"zero"}, {"bias"}); // the exporter's sharing: counts as its own tensor
    g.node("Identity", {"zero"}, {"bn_b"});
    g.node("Identity", {"one"}, {"bn_s"});
    setInts(g.node("Conv", {"x", "w", "bias"}, {"c"}), "pads", {1, 1, 1, 1}); // 72 + 4
    g.node("BatchNormalization", {"c", "bn_s", "bn_b", "zero", "one"}, {"n"}); // 4 + 4; stats not
    g.node("Clip", {"n", "lo", "hi"}, {"r"});
    g.node("GlobalAveragePool", {"r"}, {"p"});
    setInt(g.node("Flatten", {"p"}, {"f"}), "axis", 1);
    setInt(g.node("Gemm", {"f", "fc", "fcb"}, {"y"}), "transB", 1); // 40 + 10
    auto m = parse(g, "counted.onnx");
    ASSERT_TRUE(m.ok()) << m.status().message();
    auto s = modelStats(*m.value(), {});
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(s->parameters, 72 + 4 + 4 + 4 + 40 + 10);
    EXPECT_EQ(s->parameterTensors, 6);
    EXPECT_EQ(s->buffers, 8);
    EXPECT_EQ(s->constants, 2 + 2) << "the clip bounds and the unused shape";
    // Conv: 64 positions x 4 channels x (2 x 3 x 3); Gemm: 10 outputs x 4.
    EXPECT_EQ(s->macs, 64 * 4 * 18 + 40);
    EXPECT_EQ(s->shapes.at("x"), (std::vector<int64_t> {1, 2, 8, 8}));

    auto eight = modelStats(*m.value(), {{"x", {8, 2, 8, 8}}});
    ASSERT_TRUE(eight.ok()) << eight.status().message();
    EXPECT_EQ(eight->macs, 8 * (64 * 4 * 18 + 40));
    EXPECT_FALSE(modelStats(*m.value(), {{"x", {8, 3, 8, 8}}}).ok()) << "channels are fixed";
    EXPECT_FALSE(modelStats(*m.value(), {{"nope", {1, 2, 8, 8}}}).ok());
}

TEST(ModelStats, GroupedDepthwiseThreeDimensionalAndMatMul)
{
    GraphBuilder g;
    g.input("x", {1, 8, 4, 6, 6}).output("y", {1, 8, 4, 6, 5});
    g.randomFloats("grouped", {8, 2, 3, 3, 3}, -1, 1, kSeed); // groups 4
    g.randomFloats("depthwise", {8, 1, 1, 3, 3}, -1, 1, kSeed);
    g.randomFloats("mm", {6, 5}, -1, 1, kSeed);
    auto& a = g.node("Conv", {"x", "grouped"}, {"a"});
    setInt(a, "group", 4);
    setInts(a, "pads", {1, 1, 1, 1, 1, 1});
    auto& b = g.node("Conv", {"a", "depthwise"}, {"b"});
    setInt(b, "group", 8);
    setInts(b, "pads", {0, 1, 1, 0, 1, 1});
    g.node("MatMul", {"b", "mm"}, {"y"});
    auto m = parse(g, "grouped.onnx");
    ASSERT_TRUE(m.ok()) << m.status().message();
    auto s = modelStats(*m.value(), {});
    ASSERT_TRUE(s.ok()) << s.status().message();
    const int64_t positions = 8 * 4 * 6 * 6;
    const int64_t conv = positions * 2 * 27 + positions * 9;
    const int64_t matmul = 8 * 4 * 6 * 5 * 6;
    EXPECT_EQ(s->macs, conv + matmul);
    for (const auto& op : s->operators) {
        if (op.op == "Conv") {
            EXPECT_EQ(op.macs, conv);
        } else if (op.op == "MatMul") {
            EXPECT_EQ(op.macs, matmul);
        }
    }
}

// MaxViT's attention as torchvision writes it (upper case, blanks), an ellipsis that broadcasts and
// a one-operand permutation (no multiplications).
TEST(ModelStats, EinsumCountsEveryIndexCombination)
{
    GraphBuilder g;
    g.input("q", {1, 2, 3, 4, 5}).input("k", {1, 2, 3, 6, 5}).input("a", {2, 3, 4});
    g.output("scores", {1, 2, 3, 4, 6}).output("ab", {2, 3, 7}).output("t", {7, 3, 2});
    g.randomFloats("b", {4, 7}, -1, 1, kSeed);
    setString(
        g.node("Einsum", {"q", "k"}, {"scores"}), "equation", "B G H I D, B G H J D -> B G H I J");
    setString(g.node("Einsum", {"a", "b"}, {"ab"}), "equation", "...ij,jk->...ik");
    setString(g.node("Einsum", {"ab"}, {"t"}), "equation", "abc->cba");
    auto m = parse(g, "einsum.onnx");
    ASSERT_TRUE(m.ok()) << m.status().message();
    auto s = modelStats(*m.value(), {});
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_TRUE(s->uncounted.empty());
    const int64_t attention = 1 * 2 * 3 * 4 * 6 * 5;
    const int64_t projection = 2 * 3 * 4 * 7;
    EXPECT_EQ(s->macs, attention + projection);
    bool listed = false;
    for (const auto& op : s->operators)
        if (op.op == "Einsum") {
            listed = true;
            EXPECT_EQ(op.nodes, 3);
            EXPECT_EQ(op.macs, attention + projection);
        }
    EXPECT_TRUE(listed);
}

// --- the pipeline and its cache --------------------------------------------------------------

GraphBuilder exportLike()
{
    GraphBuilder g;
    g.input("x", {1, 3, 8, 8}, "batch").output("y", {1, 4, 8, 8}, "batch");
    g.randomFloats("w", {4, 3, 3, 3}, -1, 1, kSeed);
    g.floats("zero", {4}, {0, 0, 0, 0});
    g.floats("lo", {}, {0}).floats("hi", {}, {6});
    g.node("Identity", {"zero"}, {"b"});
    auto& conv = g.node("Conv", {"x", "w", "b"}, {"c"});
    setInts(conv, "kernel_shape", {3, 3});
    setInts(conv, "pads", {1, 1, 1, 1});
    g.node("Clip", {"c", "lo", "hi"}, {"y"});
    return g;
}

TEST(PrepareModel, RunsOnceThenComesFromTheCache)
{
    test::TempDir cache;
    GraphBuilder g = exportLike();
    auto m = parse(g, "export.onnx");
    ASSERT_TRUE(m.ok()) << m.status().message();
    PrepareOptions o;
    o.batch = 2;
    o.cacheDir = cache.path();
    auto first = prepareModel(*m.value(), o);
    ASSERT_TRUE(first.ok()) << first.status().message();
    EXPECT_FALSE(first->fromCache);
    EXPECT_TRUE(std::filesystem::exists(first->cachePath));
    EXPECT_EQ(first->passList,
        "set-batch=2,infer-shapes,eliminate-identity,fold-constants,fold-batchnorm,infer-shapes,"
        "canonicalize-opencv,prune");
    auto second = prepareModel(*m.value(), o);
    ASSERT_TRUE(second.ok()) << second.status().message();
    EXPECT_TRUE(second->fromCache);
    EXPECT_EQ(*second->bytes, *first->bytes);
    EXPECT_EQ(second->passes.size(), first->passes.size());
    EXPECT_EQ(second->key, first->key);

    o.batch = 4;
    auto other = prepareModel(*m.value(), o);
    ASSERT_TRUE(other.ok());
    EXPECT_FALSE(other->fromCache) << "another batch is another prepared model";
    EXPECT_NE(other->key, first->key);

    // The prepared model runs in OpenCV at the batch it was prepared for.
    onnx::ModelProto prepared;
    ASSERT_TRUE(prepared.ParseFromString(*first->bytes));
    EXPECT_EQ(countOps(prepared, "Identity"), 0);
    const cv::Mat out = runOpenCV(prepared, randomBlob({2, 3, 8, 8}, kSeed));
    EXPECT_EQ(out.total(), 2u * 4 * 8 * 8);
}

TEST(PrepareModel, DamagedCacheEntryIsPreparedAgain)
{
    test::TempDir cache;
    GraphBuilder g = exportLike();
    auto m = parse(g, "export.onnx");
    ASSERT_TRUE(m.ok());
    PrepareOptions o;
    o.cacheDir = cache.path();
    auto first = prepareModel(*m.value(), o);
    ASSERT_TRUE(first.ok());
    test::writeFile(first->cachePath, "torn");
    auto again = prepareModel(*m.value(), o);
    ASSERT_TRUE(again.ok()) << again.status().message();
    EXPECT_FALSE(again->fromCache);
    EXPECT_EQ(*again->bytes, *first->bytes);
    EXPECT_EQ(test::readFile(first->cachePath), *first->bytes) << "the entry is rewritten";
}

TEST(PrepareModel, UnusableCacheDirectoryIsNamed)
{
    test::TempDir dir;
    test::writeFile(dir / "file", "not a directory");
    GraphBuilder g = exportLike();
    auto m = parse(g, "export.onnx");
    ASSERT_TRUE(m.ok());
    PrepareOptions o;
    o.cacheDir = dir / "file";
    auto p = prepareModel(*m.value(), o);
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.status().kind(), ErrorKind::Io);
    EXPECT_NE(p.status().message().find(dir / "file"), std::string::npos) << p.status().message();
    EXPECT_NE(p.status().message().find("engine.cache_dir"), std::string::npos);
}

TEST(PrepareModel, UnknownBackendHasNoRecipe)
{
    EXPECT_FALSE(preparationPasses("coreml", 1).ok());
    EXPECT_TRUE(preparationPasses("tensorrt", 0).ok());
}

} // namespace
} // namespace jetagent
