// Models that passed jetagent's checks and then crashed ONNX's shape inference, OpenCV or the
// preprocessing (strides of 0, a group of 0, a 2^40-high input, initializers shorter than their
// dims, FIFOs as model files): each is built here with the ONNX protobuf API and must be refused
// with an error naming the node, the attribute, the value and the limit.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "jetagent/base/clock.h"
#include "jetagent/engines/engine.h"
#include "jetagent/engines/model_file.h"
#include "jetagent/engines/model_info.h"
#include "jetagent/engines/model_passes.h"
#include "jetagent/engines/model_prepare.h"
#include "jetagent/engines/model_validate.h"
#include "onnx_builder.h"
#include "test_support.h"

namespace jetagent {
namespace {

using test::setFloat;
using test::setInt;
using test::setInts;

namespace fs = std::filesystem;

constexpr int64_t kTwoTo40 = int64_t {1} << 40;

// A model of one graph, built node by node.
class Model {
public:
    explicit Model(int opset = 13)
    {
        proto_.set_ir_version(8);
        proto_.set_producer_name("jetagent-test");
        proto_.add_opset_import()->set_version(opset);
        proto_.mutable_graph()->set_name("test");
    }

    Model& input(const std::string& name, const std::vector<int64_t>& dims)
    {
        test::declareFloatTensor(proto_.mutable_graph()->add_input(), name, dims);
        return *this;
    }
    Model& output(const std::string& name, const std::vector<int64_t>& dims)
    {
        test::declareFloatTensor(proto_.mutable_graph()->add_output(), name, dims);
        return *this;
    }
    // An output without a shape: enough for models refused before the ONNX checker (which wants
    // a shape on every graph output).
    Model& output(const std::string& name)
    {
        auto* v = proto_.mutable_graph()->add_output();
        v->set_name(name);
        v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
        return *this;
    }
    onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
        const std::vector<std::string>& outputs, const std::string& name)
    {
        auto* n = proto_.mutable_graph()->add_node();
        n->set_op_type(op);
        n->set_name(name);
        for (const auto& i : inputs)
            n->add_input(i);
        for (const auto& o : outputs)
            n->add_output(o);
        return *n;
    }
    onnx::TensorProto& floats(const std::string& name, const std::vector<int64_t>& dims)
    {
        int64_t n = 1;
        for (int64_t d : dims)
            n *= d;
        const std::vector<float> values(static_cast<size_t>(n), 0.5f);
        auto* t = proto_.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        for (int64_t d : dims)
            t->add_dims(d);
        t->set_raw_data(values.data(), values.size() * sizeof(float));
        return *t;
    }
    onnx::TensorProto& ints(const std::string& name, const std::vector<int64_t>& values)
    {
        auto* t = proto_.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::INT64);
        t->add_dims(static_cast<int64_t>(values.size()));
        t->set_raw_data(values.data(), values.size() * sizeof(int64_t));
        return *t;
    }

    onnx::ModelProto& proto() { return proto_; }
    std::string bytes() const { return proto_.SerializeAsString(); }
    Expected<std::shared_ptr<const ModelFile>> parse() const
    {
        const std::string b = bytes();
        return parseModelBytes(std::vector<char>(b.begin(), b.end()), "bad.onnx");
    }

private:
    onnx::ModelProto proto_;
};

// The model must be refused as invalid input, with every part in the message.
void expectRefused(const Model& model, const std::vector<std::string>& parts)
{
    auto m = model.parse();
    ASSERT_FALSE(m.ok()) << "accepted; expected an error with '" << parts.front() << "'";
    EXPECT_EQ(m.status().kind(), ErrorKind::InvalidInput) << m.status().message();
    EXPECT_NE(m.status().message().find("'bad.onnx'"), std::string::npos) << m.status().message();
    for (const auto& part : parts)
        EXPECT_NE(m.status().message().find(part), std::string::npos)
            << "'" << part << "' missing from: " << m.status().message();
}

// x [1,4,8,8] -> Conv (weights [4,4,3,3]) -> y, with `edit` applied to the Conv.
Model convModel(const std::function<void(onnx::NodeProto&)>& edit, int64_t channels = 4)
{
    Model m;
    m.input("x", {1, channels, 8, 8}).output("y", {1, 4, 6, 6});
    m.floats("w", {4, 4, 3, 3});
    auto& conv = m.node("Conv", {"x", "w"}, {"y"}, "conv");
    setInts(conv, "kernel_shape", {3, 3});
    edit(conv);
    return m;
}

TEST(ModelValidate, AConvWithStridesOfZeroIsRefusedBeforeShapeInference)
{
    // ONNX's shape inference divides by the strides: SIGFPE without the check.
    expectRefused(convModel([](onnx::NodeProto& n) {
        setInts(n, "strides", {0, 0});
    }),
        {"Conv 'conv'", "strides [0, 0]", "1 to 16777216"});
    expectRefused(convModel([](onnx::NodeProto& n) {
        setInts(n, "dilations", {1, 0});
    }),
        {"Conv 'conv'", "dilations [1, 0]"});
    expectRefused(convModel([](onnx::NodeProto& n) {
        setInts(n, "pads", {1, 1, -1, 1});
    }),
        {"Conv 'conv'", "pads [1, 1, -1, 1]", "0 to"});
    expectRefused(convModel([](onnx::NodeProto& n) {
        setInts(n, "pads", {1, 1});
    }),
        {"Conv 'conv'", "pads [1, 1] has 2 values", "(4)"});
    expectRefused(convModel([](onnx::NodeProto& n) {
        setInts(n, "strides", {1, 1, 1});
    }),
        {"strides [1, 1, 1] has 3 values", "one per spatial dimension (2)"});
    Model kernel;
    kernel.input("x", {1, 4, 8, 8}).output("y");
    kernel.floats("w", {4, 4, 3, 3});
    setInts(kernel.node("Conv", {"x", "w"}, {"y"}, "conv"), "kernel_shape", {0, 3});
    expectRefused(kernel, {"Conv 'conv'", "kernel_shape [0, 3]", "1 to"});
}

TEST(ModelValidate, AConvGroupMustDivideTheChannels)
{
    // OpenCV's convolution divides by the group: SIGFPE without the check.
    expectRefused(convModel([](onnx::NodeProto& n) { setInt(n, "group", 0); }),
        {"Conv 'conv'", "group = 0", "1 to"});
    expectRefused(convModel([](onnx::NodeProto& n) { setInt(n, "group", 3); }),
        {"Conv 'conv'", "group = 3 does not divide the 4 output channels"});
    // Weights of [4, 4, 3, 3] and group 2 take 8 input channels, not 4.
    expectRefused(convModel([](onnx::NodeProto& n) { setInt(n, "group", 2); }),
        {"group = 2: the input has 4 channels", "expects 4 x 2"});
    ASSERT_TRUE(convModel([](onnx::NodeProto&) {}).parse().ok());
    auto grouped = convModel([](onnx::NodeProto& n) { setInt(n, "group", 2); }, 8).parse();
    EXPECT_TRUE(grouped.ok()) << grouped.status().message();
}

TEST(ModelValidate, HugeInputsAreRefusedWithTheLimit)
{
    // A 2^40-high input reached the bilinear crop's plan as a null pointer.
    Model tall;
    tall.input("image", {1, 3, kTwoTo40, 224}).output("y");
    tall.node("Relu", {"image"}, {"y"}, "relu");
    expectRefused(tall,
        {"graph input 'image'", "dimension 2 is 1099511627776",
            std::to_string(kMaxModelDimension)});

    Model many;
    many.input("image", {1, 3, 16384, 16384}).output("y");
    many.node("Relu", {"image"}, {"y"}, "relu");
    expectRefused(many, {"graph input 'image'", std::to_string(kMaxInputElements) + " elements"});

    Model negative;
    negative.input("image", {1, 3, -5, 4}).output("y");
    negative.node("Relu", {"image"}, {"y"}, "relu");
    expectRefused(negative, {"graph input 'image'", "dimension 2 as -5", "cannot be negative"});

    Model deep;
    deep.input("x", std::vector<int64_t>(kMaxModelRank + 1, 1)).output("y");
    deep.node("Relu", {"x"}, {"y"}, "relu");
    expectRefused(deep, {"graph input 'x' has rank 33"});
}

TEST(ModelValidate, ABatchTooLargeForTheInputLimitIsRefusedWhenSet)
{
    Model m;
    m.input("x", {1, 3, 1024, 1024}).output("y", {1, 3, 1024, 1024});
    m.node("Relu", {"x"}, {"y"}, "relu");
    auto model = m.parse();
    ASSERT_TRUE(model.ok()) << model.status().message();
    onnx::ModelProto copy = *model.value()->proto;
    PassReport report;
    const Status s = setBatch(copy, 100, &report);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("input 'x' at batch 100 is 100x3x1024x1024"), std::string::npos)
        << s.message();
    EXPECT_TRUE(setBatch(copy, 8, &report).ok());

    // inspect's --input-shape goes through the same limits.
    auto stats = modelStats(*model.value(), {{"x", {1, 3, 1024, kTwoTo40}}});
    ASSERT_FALSE(stats.ok());
    EXPECT_NE(stats.status().message().find("dimension 3 must be 1024"), std::string::npos)
        << stats.status().message();
}

// x [1,4] + c -> y, with `c` built by `make`.
Model addModel(const std::function<void(onnx::TensorProto&)>& make)
{
    Model m;
    m.input("x", {1, 4}).output("y", {1, 4});
    auto* c = m.proto().mutable_graph()->add_initializer();
    c->set_name("c");
    make(*c);
    m.node("Add", {"x", "c"}, {"y"}, "add");
    return m;
}

TEST(ModelValidate, InitializerSizesMustMatchTheirDims)
{
    // raw_data shorter than the dims: a heap-buffer-overflow in the backends, NaN scores in
    // release.
    const std::vector<float> three = {1, 2, 3};
    const std::vector<float> five = {1, 2, 3, 4, 5};
    auto raw = [](const std::vector<float>& v) {
        return [v](onnx::TensorProto& t) {
            t.set_data_type(onnx::TensorProto::FLOAT);
            t.add_dims(4);
            t.set_raw_data(v.data(), v.size() * sizeof(float));
        };
    };
    expectRefused(addModel(raw(three)),
        {"initializer 'c'", "declares 4 elements (16 bytes)", "raw_data holds 12 bytes"});
    expectRefused(addModel(raw(five)), {"initializer 'c'", "raw_data holds 20 bytes"});
    expectRefused(addModel([](onnx::TensorProto& t) {
        t.set_data_type(onnx::TensorProto::FLOAT);
        t.add_dims(4);
        for (float f : {1.0f, 2.0f})
            t.add_float_data(f);
    }),
        {"initializer 'c'", "declares 4 elements", "float_data holds 2 values"});
    expectRefused(addModel([](onnx::TensorProto& t) {
        t.set_data_type(onnx::TensorProto::INT64);
        t.add_dims(4);
        t.add_int64_data(7);
    }),
        {"initializer 'c'", "int64_data holds 1 values"});
    expectRefused(addModel([](onnx::TensorProto& t) {
        t.set_data_type(onnx::TensorProto::FLOAT);
        t.add_dims(4);
        for (int i = 0; i < 4; ++i)
            t.add_int32_data(i);
    }),
        {"initializer 'c'", "not in float_data or raw_data"});
    // Dims whose product overflows int64 (2^40 x 2^40), and negative dims.
    expectRefused(addModel([](onnx::TensorProto& t) {
        t.set_data_type(onnx::TensorProto::FLOAT);
        t.add_dims(kTwoTo40);
        t.add_dims(kTwoTo40);
    }),
        {"initializer 'c'", "dimension 0 is 1099511627776"});
    expectRefused(addModel([](onnx::TensorProto& t) {
        t.set_data_type(onnx::TensorProto::FLOAT);
        t.add_dims(-4);
    }),
        {"initializer 'c'", "dimension 0 is negative"});
    expectRefused(addModel([](onnx::TensorProto& t) {
        t.set_data_type(1000);
        t.add_dims(4);
    }),
        {"initializer 'c'", "data type 1000"});
}

TEST(ModelValidate, ConstantNodeTensorsAreCheckedLikeInitializers)
{
    Model m;
    m.input("x", {1, 4}).output("y", {1, 4});
    auto& constant = m.node("Constant", {}, {"c"}, "const");
    auto* a = constant.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    a->mutable_t()->add_dims(4);
    const float two[] = {1, 2};
    a->mutable_t()->set_raw_data(two, sizeof two);
    m.node("Add", {"x", "c"}, {"y"}, "add");
    expectRefused(m, {"Constant 'const'", "attribute value", "raw_data holds 8 bytes"});
}

// One bad attribute per operator the backends run, each refused naming the node and the value.
TEST(ModelValidate, OperatorAttributesOutsideTheirRangeAreRefused)
{
    struct Case {
        const char* what;
        std::function<void(Model&)> build;
        std::vector<std::string> parts;
    };
    const std::vector<Case> cases = {
        {"MaxPool strides",
            [](Model& m) {
                auto& n = m.node("MaxPool", {"x"}, {"y"}, "pool");
                setInts(n, "kernel_shape", {2, 2});
                setInts(n, "strides", {0, 2});
            },
            {"MaxPool 'pool'", "strides [0, 2]"}},
        {"AveragePool pads as large as the kernel",
            [](Model& m) {
                auto& n = m.node("AveragePool", {"x"}, {"y"}, "pool");
                setInts(n, "kernel_shape", {2, 2});
                setInts(n, "pads", {2, 0, 0, 0});
            },
            {"AveragePool 'pool'", "pad 2 is not smaller than the kernel's extent 2"}},
        {"LpPool without kernel", [](Model& m) { m.node("LpPool", {"x"}, {"y"}, "pool"); },
            {"LpPool 'pool'", "has no kernel_shape"}},
        {"Gemm transA",
            [](Model& m) {
                m.floats("w", {8, 2});
                m.node("Flatten", {"x"}, {"f"}, "flat");
                setInt(m.node("Gemm", {"f", "w"}, {"y"}, "gemm"), "transA", 2);
            },
            {"Gemm 'gemm'", "transA = 2", "0 to 1"}},
        {"Flatten axis",
            [](Model& m) { setInt(m.node("Flatten", {"x"}, {"y"}, "flat"), "axis", 5); },
            {"Flatten 'flat'", "axis = 5", "-4 to 4"}},
        {"Concat axis",
            [](Model& m) {
                setInt(m.node("Concat", {"x", "x"}, {"y"}, "cat"), "axis", 4);
            },
            {"Concat 'cat'", "axis = 4", "-4 to 3"}},
        {"Softmax axis",
            [](Model& m) { setInt(m.node("Softmax", {"x"}, {"y"}, "soft"), "axis", -9); },
            {"Softmax 'soft'", "axis = -9"}},
        {"Gather axis",
            [](Model& m) {
                m.ints("i", {0});
                setInt(m.node("Gather", {"x", "i"}, {"y"}, "gather"), "axis", 7);
            },
            {"Gather 'gather'", "axis = 7"}},
        {"Transpose perm",
            [](Model& m) {
                setInts(m.node("Transpose", {"x"}, {"y"}, "t"), "perm", {0, 1, 1, 3});
            },
            {"Transpose 't'", "perm [0, 1, 1, 3] is not a permutation"}},
        {"Transpose perm length",
            [](Model& m) {
                setInts(m.node("Transpose", {"x"}, {"y"}, "t"), "perm", {1, 0});
            },
            {"Transpose 't'", "perm [1, 0] has 2 values for an input of rank 4"}},
        {"Split sizes",
            [](Model& m) {
                m.ints("s", {1, 1});
                setInt(m.node("Split", {"x", "s"}, {"y", "z"}, "split"), "axis", 1);
            },
            {"Split 'split'", "split (input 1) [1, 1] adds up to 2, the axis has 4"}},
        {"Squeeze axes",
            [](Model& m) {
                m.ints("a", {6});
                m.node("Squeeze", {"x", "a"}, {"y"}, "sq");
            },
            {"Squeeze 'sq'", "axes (input 1) [6]", "-4 to 3"}},
        {"Unsqueeze axes twice",
            [](Model& m) {
                m.ints("a", {0, 0});
                m.node("Unsqueeze", {"x", "a"}, {"y"}, "unsq");
            },
            {"Unsqueeze 'unsq'", "axis 0 is given twice"}},
        {"ReduceMean axes",
            [](Model& m) { setInts(m.node("ReduceMean", {"x"}, {"y"}, "mean"), "axes", {4}); },
            {"ReduceMean 'mean'", "axes [4]"}},
        {"Resize scales of zero",
            [](Model& m) {
                m.floats("roi", {0});
                auto& scales = m.floats("scales", {4});
                const float values[] = {1, 1, 0, 2};
                scales.set_raw_data(values, sizeof values);
                m.node("Resize", {"x", "roi", "scales"}, {"y"}, "resize");
            },
            {"Resize 'resize'", "scales (input 2): scale 0", "above 0"}},
        {"Resize scales that are NaN",
            [](Model& m) {
                m.floats("roi", {0});
                auto& scales = m.floats("scales", {4});
                const float values[] = {1, 1, NAN, 2};
                scales.set_raw_data(values, sizeof values);
                m.node("Resize", {"x", "roi", "scales"}, {"y"}, "resize");
            },
            {"Resize 'resize'", "scale nan"}},
        {"Pad pads of the wrong length",
            [](Model& m) {
                m.ints("p", {1, 1});
                m.node("Pad", {"x", "p"}, {"y"}, "pad");
            },
            {"Pad 'pad'", "pads (input 1) [1, 1] has 2 values"}},
        {"Reshape with two -1",
            [](Model& m) {
                m.ints("s", {-1, -1});
                m.node("Reshape", {"x", "s"}, {"y"}, "reshape");
            },
            {"Reshape 'reshape'", "more than one -1"}},
        {"BatchNormalization epsilon",
            [](Model& m) {
                for (const char* p : {"scale", "bias", "mean", "var"})
                    m.floats(p, {4});
                setFloat(m.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"},
                             "bn"),
                    "epsilon", -1.0f);
            },
            {"BatchNormalization 'bn'", "epsilon = -1"}},
        {"LRN size", [](Model& m) { setInt(m.node("LRN", {"x"}, {"y"}, "lrn"), "size", 0); },
            {"LRN 'lrn'", "size = 0", "1 to"}},
        {"Slice step of zero",
            [](Model& m) {
                m.ints("starts", {0});
                m.ints("ends", {2});
                m.ints("axes", {1});
                m.ints("steps", {0});
                m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}, "slice");
            },
            {"Slice 'slice'", "steps (input 4) [0]", "cannot be 0"}},
        {"DepthToSpace blocksize",
            [](Model& m) { setInt(m.node("DepthToSpace", {"x"}, {"y"}, "d2s"), "blocksize", 0); },
            {"DepthToSpace 'd2s'", "blocksize = 0"}},
        {"ConstantOfShape absurd",
            [](Model& m) {
                m.ints("shape", {65536, 65536, 65536});
                m.node("ConstantOfShape", {"shape"}, {"c"}, "fill");
                m.node("Add", {"x", "c"}, {"y"}, "add");
            },
            {"ConstantOfShape 'fill'", "more than the 2147483648 elements"}},
        {"Range with a step of zero",
            [](Model& m) {
                for (const char* name : {"start", "limit", "delta"}) {
                    auto& t = m.floats(name, {});
                    const float v = std::string(name) == "limit" ? 4.0f : 0.0f;
                    t.set_raw_data(&v, sizeof v);
                }
                m.node("Range", {"start", "limit", "delta"}, {"r"}, "range");
                m.node("Add", {"x", "r"}, {"y"}, "add");
            },
            {"Range 'range'", "delta = 0"}},
        {"Cast to no type",
            [](Model& m) { setInt(m.node("Cast", {"x"}, {"y"}, "cast"), "to", 999); },
            {"Cast 'cast'", "to = 999 is not an ONNX data type"}},
        {"Celu alpha of zero",
            [](Model& m) { setFloat(m.node("Celu", {"x"}, {"y"}, "celu"), "alpha", 0.0f); },
            {"Celu 'celu'", "alpha = 0"}},
        {"LeakyRelu alpha infinite",
            [](Model& m) {
                setFloat(m.node("LeakyRelu", {"x"}, {"y"}, "leaky"), "alpha", INFINITY);
            },
            {"LeakyRelu 'leaky'", "alpha = inf"}},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.what);
        Model m;
        m.input("x", {1, 4, 8, 8}).output("y");
        c.build(m);
        expectRefused(m, c.parts);
    }
}

// The rank of a value the file declares no shape for is known to shape inference alone: the
// checks that ONNX 1.12's inference skips (and then crashes on) run inside it.
TEST(ModelValidate, RankChecksOnInferredShapesFailShapeInferenceInsteadOfCrashingIt)
{
    // ONNX 1.12's inference of LayerNormalization with its Mean output indexes by the axis
    // unchecked: a segmentation fault without the check inside inference.
    Model ln(17);
    ln.input("x", {2, 4}).output("y", {2, 4}).output("mean", {2, 1});
    ln.floats("scale", {4});
    ln.node("Relu", {"x"}, {"r"}, "relu"); // r's rank is inferred, not declared
    setInt(ln.node("LayerNormalization", {"r", "scale"}, {"y", "mean", "inv"}, "norm"), "axis", -3);
    expectRefused(ln, {"shape inference failed", "LayerNormalization", "axis = -3", "-2 to 1"});

    // STFT's inference reads a 3-D signal's dimensions without looking at its rank.
    Model stft(17);
    stft.input("x", {16}).output("y", {1, 1, 1, 2});
    auto& step = stft.ints("step", {4});
    step.clear_dims(); // a scalar
    stft.node("Relu", {"x"}, {"r"}, "relu");
    stft.node("STFT", {"r", "step"}, {"y"}, "stft");
    expectRefused(stft, {"shape inference failed", "STFT", "rank 1", "must have rank 3"});

    // With the rank declared, the same is refused before inference, naming the node.
    Model declared(17);
    declared.input("x", {2, 4}).output("y", {2, 4});
    declared.floats("scale", {4});
    setInt(declared.node("LayerNormalization", {"x", "scale"}, {"y"}, "norm"), "axis", 7);
    expectRefused(declared, {"LayerNormalization 'norm'", "axis = 7", "-2 to 1"});
    Model gather;
    gather.input("x", {2, 4}).output("y", {4});
    gather.ints("i", {0});
    gather.node("Relu", {"x"}, {"r"}, "relu");
    setInt(gather.node("GatherND", {"r", "i"}, {"y"}, "gather"), "batch_dims", -3);
    expectRefused(gather, {"GatherND 'gather'", "batch_dims = -3"});
}

TEST(ModelValidate, SubgraphsAreCheckedLikeTheMainGraph)
{
    Model m;
    m.input("x", {1, 4, 8, 8}).input("flag", {1}).output("y");
    m.floats("w", {4, 4, 3, 3});
    auto& branch = m.node("If", {"flag"}, {"y"}, "choose");
    for (const char* name : {"then_branch", "else_branch"}) {
        auto* a = branch.add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::GRAPH);
        auto* g = a->mutable_g();
        g->set_name(name);
        auto* conv = g->add_node();
        conv->set_op_type("Conv");
        conv->set_name(std::string(name) + "_conv");
        conv->add_input("x");
        conv->add_input("w");
        conv->add_output(std::string(name) + "_out");
        setInts(*conv, "strides", {0, 0});
        g->add_output()->set_name(std::string(name) + "_out");
    }
    m.proto()
        .mutable_graph()
        ->mutable_input(1)
        ->mutable_type()
        ->mutable_tensor_type()
        ->set_elem_type(onnx::TensorProto::BOOL);
    expectRefused(m, {"Conv 'then_branch_conv'", "strides [0, 0]"});
}

// A Slice whose steps only constant folding computes (0 here) is refused before a backend reads
// the prepared model.
TEST(ModelValidate, ConstantsComputedByPreparationAreCheckedToo)
{
    Model m;
    m.input("x", {1, 4, 8, 8}).output("y", {1, 2, 8, 8});
    m.ints("starts", {0});
    m.ints("ends", {2});
    m.ints("axes", {1});
    m.ints("one", {1});
    m.node("Sub", {"one", "one"}, {"steps"}, "zero");
    m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}, "slice");
    auto model = m.parse();
    ASSERT_TRUE(model.ok()) << model.status().message();
    PrepareOptions options;
    options.backend = "xnnpack";
    auto prepared = prepareModel(*model.value(), options);
    ASSERT_FALSE(prepared.ok());
    EXPECT_NE(prepared.status().message().find("Slice 'slice'"), std::string::npos)
        << prepared.status().message();
    EXPECT_NE(prepared.status().message().find("cannot be 0"), std::string::npos)
        << prepared.status().message();
}

// A FIFO given as a model (or its external data) used to block the process in open() forever.
TEST(ModelValidate, FifosAndDevicesAreRefusedAtOnce)
{
    test::TempDir dir;
    const std::string fifo = dir / "model.onnx";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const int64_t start = monotonicNs();
    auto m = loadModelFile(fifo);
    EXPECT_LT(monotonicNs() - start, 1'000'000'000);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().kind(), ErrorKind::InvalidInput);
    EXPECT_NE(
        m.status().message().find("is a FIFO (named pipe), not a regular file"), std::string::npos)
        << m.status().message();

    auto device = loadModelFile("/dev/zero");
    ASSERT_FALSE(device.ok());
    EXPECT_NE(device.status().message().find("'/dev/zero' is a device"), std::string::npos)
        << device.status().message();
}

class ExternalDataFiles : public ::testing::Test {
protected:
    // A model whose Add reads a [4] float tensor from `location`.
    std::string writeModel(const std::string& location)
    {
        Model m;
        m.input("x", {1, 4}).output("y", {1, 4});
        auto* t = m.proto().mutable_graph()->add_initializer();
        t->set_name("c");
        t->set_data_type(onnx::TensorProto::FLOAT);
        t->add_dims(4);
        t->set_data_location(onnx::TensorProto::EXTERNAL);
        auto* entry = t->add_external_data();
        entry->set_key("location");
        entry->set_value(location);
        m.node("Add", {"x", "c"}, {"y"}, "add");
        fs::create_directories(dir_ / "model");
        std::string path = dir_ / "model/model.onnx";
        test::writeFile(path, m.bytes());
        return path;
    }
    test::TempDir dir_;
};

TEST_F(ExternalDataFiles, AFifoIsRefusedWithoutWaitingForAWriter)
{
    const std::string path = writeModel("weights.bin");
    ASSERT_EQ(::mkfifo((dir_ / "model/weights.bin").c_str(), 0600), 0);
    const int64_t start = monotonicNs();
    auto m = loadModelFile(path);
    EXPECT_LT(monotonicNs() - start, 1'000'000'000);
    ASSERT_FALSE(m.ok());
    EXPECT_NE(m.status().message().find("tensor 'c'"), std::string::npos) << m.status().message();
    EXPECT_NE(m.status().message().find("is a FIFO"), std::string::npos) << m.status().message();
}

TEST_F(ExternalDataFiles, ALinkOutOfTheModelsFolderIsRefused)
{
    const std::string path = writeModel("weights.bin");
    const float values[] = {1, 2, 3, 4};
    test::writeFile(
        dir_ / "outside.bin", std::string(reinterpret_cast<const char*>(values), sizeof values));
    fs::create_symlink(dir_ / "outside.bin", dir_ / "model/weights.bin");
    auto m = loadModelFile(path);
    ASSERT_FALSE(m.ok());
    EXPECT_NE(m.status().message().find("outside the model's directory"), std::string::npos)
        << m.status().message();

    // A link that stays inside the folder is fine.
    fs::remove(dir_ / "model/weights.bin");
    fs::rename(dir_ / "outside.bin", dir_ / "model/real.bin");
    fs::create_symlink("real.bin", dir_ / "model/weights.bin");
    auto inside = loadModelFile(path);
    EXPECT_TRUE(inside.ok()) << inside.status().message();
}

TEST_F(ExternalDataFiles, ADirectoryIsRefused)
{
    const std::string path = writeModel("weights.bin");
    fs::create_directories(dir_ / "model/weights.bin");
    auto m = loadModelFile(path);
    ASSERT_FALSE(m.ok());
    EXPECT_NE(m.status().message().find("is a directory"), std::string::npos)
        << m.status().message();
}

} // namespace
} // namespace jetagent
