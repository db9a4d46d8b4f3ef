// foldConstants: each operator's evaluation, PyTorch's shape chains, and malformed graphs.
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "jetagent/engines/model_passes.h"
#include "onnx_builder.h"

namespace jetagent {
namespace {

using test::setInt;
using test::setInts;

constexpr int64_t kSymbolic = -1; // a dimension named "batch" instead of given a value
constexpr int32_t kFloat = onnx::TensorProto_DataType_FLOAT;
constexpr int32_t kInt64 = onnx::TensorProto_DataType_INT64;
constexpr int32_t kInt32 = onnx::TensorProto_DataType_INT32;
constexpr int32_t kBool = onnx::TensorProto_DataType_BOOL;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

using Ints = std::vector<int64_t>;
using Floats = std::vector<float>;

// A model built node by node, as an exporter writes one: graph inputs, initializers, nodes named
// after their output, graph outputs.
class TestModel {
public:
    explicit TestModel(int64_t opset = 13)
    {
        model.set_ir_version(8);
        model.set_producer_name("jetagent-test");
        model.add_opset_import()->set_version(opset);
        model.mutable_graph()->set_name("fold");
    }

    onnx::GraphProto& graph() { return *model.mutable_graph(); }

    void input(const std::string& name, const Ints& dims, int32_t type = kFloat)
    {
        auto* value = graph().add_input();
        value->set_name(name);
        auto* tensor = value->mutable_type()->mutable_tensor_type();
        tensor->set_elem_type(type);
        for (int64_t d : dims) {
            auto* dim = tensor->mutable_shape()->add_dim();
            if (d == kSymbolic)
                dim->set_dim_param("batch");
            else
                dim->set_dim_value(d);
        }
    }

    // Integer initializers in the typed field, float ones in raw_data: both forms exporters use.
    void ints(const std::string& name, const Ints& dims, const Ints& values)
    {
        auto* t = initializer(name, dims, kInt64);
        for (int64_t v : values)
            t->add_int64_data(v);
    }

    void floats(const std::string& name, const Ints& dims, const Floats& values)
    {
        initializer(name, dims, kFloat)->set_raw_data(values.data(), values.size() * sizeof(float));
    }

    // int8 or uint8 (`type`) in raw_data.
    void bytes(const std::string& name, const Ints& dims, const Ints& values, int32_t type)
    {
        std::string raw;
        for (int64_t v : values)
            raw.push_back(static_cast<char>(static_cast<uint8_t>(v)));
        initializer(name, dims, type)->set_raw_data(raw);
    }

    onnx::NodeProto& node(
        const std::string& op, const std::vector<std::string>& inputs, const std::string& output)
    {
        auto* node = graph().add_node();
        node->set_op_type(op);
        node->set_name(output);
        for (const auto& in : inputs)
            node->add_input(in);
        node->add_output(output);
        return *node;
    }

    void output(const std::string& name) { graph().add_output()->set_name(name); }

    onnx::ModelProto model;

private:
    onnx::TensorProto* initializer(const std::string& name, const Ints& dims, int32_t type)
    {
        auto* t = graph().add_initializer();
        t->set_name(name);
        t->set_data_type(type);
        for (int64_t d : dims)
            t->add_dims(d);
        return t;
    }
};

void setTensor(onnx::NodeProto& node, const std::string& name, const onnx::TensorProto& value)
{
    auto* attr = node.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::TENSOR);
    *attr->mutable_t() = value;
}

onnx::TensorProto int64Tensor(const Ints& dims, const Ints& values)
{
    onnx::TensorProto t;
    t.set_data_type(kInt64);
    for (int64_t d : dims)
        t.add_dims(d);
    for (int64_t v : values)
        t.add_int64_data(v);
    return t;
}

const onnx::TensorProto* findInitializer(const onnx::ModelProto& model, const std::string& name)
{
    for (const auto& t : model.graph().initializer())
        if (t.name() == name)
            return &t;
    return nullptr;
}

template <typename T>
std::vector<T> rawValues(const std::string& raw)
{
    std::vector<T> values(raw.size() / sizeof(T));
    if (!values.empty())
        std::memcpy(values.data(), raw.data(), values.size() * sizeof(T));
    return values;
}

// The values of initializer `name` as int64, whichever integer type and field hold them.
Ints intsOf(const onnx::ModelProto& model, const std::string& name)
{
    const auto* t = findInitializer(model, name);
    if (!t) {
        ADD_FAILURE() << "no initializer '" << name << "'";
        return {};
    }
    if (!t->has_raw_data())
        return t->data_type() == kInt64 ? Ints(t->int64_data().begin(), t->int64_data().end())
                                        : Ints(t->int32_data().begin(), t->int32_data().end());
    switch (t->data_type()) {
    case kInt64: return rawValues<int64_t>(t->raw_data());
    case kInt32: {
        const auto narrow = rawValues<int32_t>(t->raw_data());
        return Ints(narrow.begin(), narrow.end());
    }
    case kBool: {
        const auto bytes = rawValues<uint8_t>(t->raw_data());
        return Ints(bytes.begin(), bytes.end());
    }
    default: ADD_FAILURE() << "'" << name << "' is not an integer tensor"; return {};
    }
}

Floats floatsOf(const onnx::ModelProto& model, const std::string& name)
{
    const auto* t = findInitializer(model, name);
    if (!t || t->data_type() != kFloat) {
        ADD_FAILURE() << "no float initializer '" << name << "'";
        return {};
    }
    if (!t->has_raw_data())
        return Floats(t->float_data().begin(), t->float_data().end());
    return rawValues<float>(t->raw_data());
}

Ints dimsOf(const onnx::ModelProto& model, const std::string& name)
{
    const auto* t = findInitializer(model, name);
    if (!t) {
        ADD_FAILURE() << "no initializer '" << name << "'";
        return {};
    }
    return Ints(t->dims().begin(), t->dims().end());
}

int32_t typeOf(const onnx::ModelProto& model, const std::string& name)
{
    const auto* t = findInitializer(model, name);
    return t ? t->data_type() : 0;
}

std::vector<std::string> opTypes(const onnx::ModelProto& model)
{
    std::vector<std::string> ops;
    for (const auto& node : model.graph().node())
        ops.push_back(node.op_type());
    return ops;
}

testing::AssertionResult folds(onnx::ModelProto& model, PassReport* report = nullptr)
{
    const Status s = foldConstants(model, report);
    if (s.ok())
        return testing::AssertionSuccess();
    return testing::AssertionFailure() << s.message();
}

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

TEST(FoldConstants, TurnsConstantNodesIntoInitializersWithoutNotes)
{
    TestModel m;
    setTensor(m.node("Constant", {}, "pair"), "value", int64Tensor({2}, {3, 4}));
    setInt(m.node("Constant", {}, "seven"), "value_int", 7);
    auto& halves = m.node("Constant", {}, "halves");
    auto* attr = halves.add_attribute();
    attr->set_name("value_floats");
    attr->set_type(onnx::AttributeProto::FLOATS);
    attr->add_floats(1.5f);
    attr->add_floats(2.5f);
    for (const char* name : {"pair", "seven", "halves"})
        m.output(name);

    PassReport report;
    ASSERT_TRUE(folds(m.model, &report));
    EXPECT_EQ(report.pass, "fold-constants");
    EXPECT_EQ(report.folded, 3);
    EXPECT_TRUE(report.notes.empty());
    EXPECT_EQ(m.model.graph().node_size(), 0);
    EXPECT_EQ(intsOf(m.model, "pair"), (Ints {3, 4}));
    EXPECT_EQ(dimsOf(m.model, "pair"), (Ints {2}));
    EXPECT_EQ(intsOf(m.model, "seven"), (Ints {7}));
    EXPECT_EQ(dimsOf(m.model, "seven"), (Ints {}));
    EXPECT_EQ(floatsOf(m.model, "halves"), (Floats {1.5f, 2.5f}));
    EXPECT_EQ(m.model.graph().output_size(), 3); // folded graph outputs stay outputs
}

TEST(FoldConstants, ShapeOfAStaticInputHonoursStartAndEnd)
{
    TestModel m(15);
    m.input("x", {2, 4, 3, 3});
    m.node("Shape", {"x"}, "all");
    auto& middle = m.node("Shape", {"x"}, "middle");
    setInt(middle, "start", 1);
    setInt(middle, "end", -1);
    m.output("all");
    m.output("middle");

    ASSERT_TRUE(folds(m.model));
    EXPECT_EQ(m.model.graph().node_size(), 0);
    EXPECT_EQ(intsOf(m.model, "all"), (Ints {2, 4, 3, 3}));
    EXPECT_EQ(intsOf(m.model, "middle"), (Ints {4, 3}));
    EXPECT_EQ(dimsOf(m.model, "middle"), (Ints {2}));
    EXPECT_EQ(typeOf(m.model, "middle"), kInt64);
}

TEST(FoldConstants, GatherTakesNegativeIndicesOnAnyAxis)
{
    TestModel m;
    m.ints("data", {2, 3}, {0, 1, 2, 3, 4, 5});
    m.ints("columns", {2}, {-1, 0});
    m.ints("last", {}, {-1});
    setInt(m.node("Gather", {"data", "columns"}, "picked"), "axis", 1);
    m.node("Gather", {"data", "last"}, "row");
    m.output("picked");
    m.output("row");

    ASSERT_TRUE(folds(m.model));
    EXPECT_EQ(m.model.graph().node_size(), 0);
    EXPECT_EQ(intsOf(m.model, "picked"), (Ints {2, 0, 5, 3}));
    EXPECT_EQ(dimsOf(m.model, "picked"), (Ints {2, 2}));
    EXPECT_EQ(intsOf(m.model, "row"), (Ints {3, 4, 5}));
    EXPECT_EQ(dimsOf(m.model, "row"), (Ints {3})); // a scalar index drops the axis
}

TEST(FoldConstants, UnsqueezeAndSqueezeTakeAxesAsInputsFromOpset13)
{
    TestModel m(13);
    m.floats("v", {3}, {1, 2, 3});
    m.ints("outer", {2}, {0, -1});
    m.ints("last", {1}, {-1});
    m.node("Unsqueeze", {"v", "outer"}, "u");
    m.node("Squeeze", {"u", "last"}, "s");
    m.node("Squeeze", {"u"}, "all");
    for (const char* name : {"u", "s", "all"})
        m.output(name);

    ASSERT_TRUE(folds(m.model));
    EXPECT_EQ(dimsOf(m.model, "u"), (Ints {1, 3, 1}));
    EXPECT_EQ(dimsOf(m.model, "s"), (Ints {1, 3}));
    EXPECT_EQ(dimsOf(m.model, "all"), (Ints {3}));
    EXPECT_EQ(floatsOf(m.model, "all"), (Floats {1, 2, 3}));
}

TEST(FoldConstants, UnsqueezeAndSqueezeTakeAxesAsAttributesBeforeOpset13)
{
    TestModel m(11);
    m.ints("v", {2}, {5, 6});
    setInts(m.node("Unsqueeze", {"v"}, "u"), "axes", {1});
    setInts(m.node("Squeeze", {"u"}, "s"), "axes", {-1});
    m.output("u");
    m.output("s");

    ASSERT_TRUE(folds(m.model));
    EXPECT_EQ(dimsOf(m.model, "u"), (Ints {2, 1}));
    EXPECT_EQ(intsOf(m.model, "u"), (Ints {5, 6}));
    EXPECT_EQ(dimsOf(m.model, "s"), (Ints {2}));
}

TEST(FoldConstants, ConcatJoinsAlongANegativeAxis)
{
    TestModel m;
    m.ints("a", {2, 1}, {1, 2});
    m.ints("b", {2, 2}, {3, 4, 5, 6});
    setInt(m.node("Concat", {"a", "b"}, "joined"), "axis", -1);
    m.output("joined");

    ASSERT_TRUE(folds(m.model));
    EXPECT_EQ(dimsOf(m.model, "joined"), (Ints {2, 3}));
    EXPECT_EQ(intsOf(m.model, "joined"), (Ints {1, 3, 4, 2, 5, 6}));
}

TEST(FoldConstants, ArithmeticBroadcastsLikeNumpy)
{
    TestModel m;
    m.ints("column", {2, 1}, {10, 20});
    m.ints("row", {3}, {1, 2, 3});
    m.floats("pair", {2}, {1.5f, 2.0f});
    m.floats("two", {}, {2.0f});
    m.node("Add", {"column", "row"}, "sum");
    m.node("Sub", {"row", "column"}, "difference");
    m.node("Mul", {"pair", "two"}, "product");
    for (const char* name : {"sum", "difference", "product"})
        m.output(name);

    ASSERT_TRUE(folds(m.model));
    EXPECT_EQ(dimsOf(m.model, "sum"), (Ints {2, 3}));
    EXPECT_EQ(intsOf(m.model, "sum"), (Ints {11, 12, 13, 21, 22, 23}));
    EXPECT_EQ(intsOf(m.model, "difference"), (Ints {-9, -8, -7, -19, -18, -17}));
    EXPECT_EQ(dimsOf(m.model, "product"), (Ints {2}));
    EXPECT_EQ(floatsOf(m.model, "product"), (Floats {3.0f, 4.0f}));
}

TEST(FoldConstants, IntegerDivTruncatesTowardZero)
{
    TestModel m;
    m.ints("n", {4}, {7, -7, 7, -7});
    m.ints("d", {4}, {2, 2, -2, -2});
    m.floats("seven", {}, {7.0f});
    m.floats("two", {}, {2.0f});
    m.node("Div", {"n", "d"}, "q");
    m.node("Div", {"seven", "two"}, "half");
    m.output("q");
    m.output("half");

    ASSERT_TRUE(folds(m.model));
    EXPECT_EQ(intsOf(m.model, "q"), (Ints {3, -3, -3, 3}));
    EXPECT_EQ(floatsOf(m.model, "half"), (Floats {3.5f}));
}

TEST(FoldConstants, IntegerDivisionByZeroIsLeftToRunTime)
{
    TestModel m;
    m.ints("n", {1}, {7});
    m.ints("zero", {1}, {0});
    m.node("Div", {"n", "zero"}, "q");
    m.output("q");

    PassReport report;
    ASSERT_TRUE(folds(m.model, &report));
    EXPECT_EQ(report.folded, 0);
    EXPECT_EQ(opTypes(m.model), (std::vector<std::string> {"Div"}));
    EXPECT_EQ(findInitializer(m.model, "q"), nullptr);
}

TEST(FoldConstants, SliceClampsLikeNumpy)
{
    TestModel m;
    m.ints("data", {2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
    // Row 1 to the end, columns -100..100 clamped to the whole row.
    m.ints("starts", {2}, {1, -100});
    m.ints("ends", {2}, {kInt64Max, 100});
    m.ints("axes", {2}, {0, 1});
    m.node("Slice", {"data", "starts", "ends", "axes"}, "tail");
    // Backwards from the last column in steps of two, to before the first.
    m.ints("back_starts", {1}, {-1});
    m.ints("back_ends", {1}, {kInt64Min});
    m.ints("back_axes", {1}, {-1});
    m.ints("back_steps", {1}, {-2});
    m.node("Slice", {"data", "back_starts", "back_ends", "back_axes", "back_steps"}, "back");
    // A start past the end: empty along that axis.
    m.ints("empty_starts", {1}, {3});
    m.ints("empty_ends", {1}, {1});
    m.node("Slice", {"data", "empty_starts", "empty_ends", "", ""}, "none");
    for (const char* name : {"tail", "back", "none"})
        m.output(name);

    ASSERT_TRUE(folds(m.model));
    EXPECT_EQ(dimsOf(m.model, "tail"), (Ints {1, 5}));
    EXPECT_EQ(intsOf(m.model, "tail"), (Ints {5, 6, 7, 8, 9}));
    EXPECT_EQ(dimsOf(m.model, "back"), (Ints {2, 3}));
    EXPECT_EQ(intsOf(m.model, "back"), (Ints {4, 2, 0, 9, 7, 5}));
    EXPECT_EQ(dimsOf(m.model, "none"), (Ints {0, 5}));
    EXPECT_TRUE(intsOf(m.model, "none").empty());
}

TEST(FoldConstants, SliceTakesAttributesBeforeOpset10)
{
    TestModel m(9);
    m.ints("data", {2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
    auto& slice = m.node("Slice", {"data"}, "inner");
    setInts(slice, "starts", {1});
    setInts(slice, "ends", {-1});
    setInts(slice, "axes", {1});
    m.output("inner");

    ASSERT_TRUE(folds(m.model));
    EXPECT_EQ(dimsOf(m.model, "inner"), (Ints {2, 3}));
    EXPECT_EQ(intsOf(m.model, "inner"), (Ints {1, 2, 3, 6, 7, 8}));
}

TEST(FoldConstants, ReshapeCopiesZeroAndInfersMinusOne)
{
    TestModel m(14);
    m.ints("data", {2, 3, 4}, Ints(24, 1));
    m.ints("copy_and_infer", {2}, {0, -1});
    m.node("Reshape", {"data", "copy_and_infer"}, "flat");
    m.ints("nothing", {0, 3}, {});
    m.ints("literal_zero", {2}, {3, 0});
    setInt(m.node("Reshape", {"nothing", "literal_zero"}, "empty"), "allowzero", 1);
    m.output("flat");
    m.output("empty");

    ASSERT_TRUE(folds(m.model));
    EXPECT_EQ(dimsOf(m.model, "flat"), (Ints {2, 12}));
    EXPECT_EQ(intsOf(m.model, "flat"), Ints(24, 1));
    EXPECT_EQ(dimsOf(m.model, "empty"), (Ints {3, 0}));
}

TEST(FoldConstants, CastTruncatesFloatsAndWrapsIntegers)
{
    TestModel m;
    m.floats("f", {3}, {-2.7f, 2.7f, 0.0f});
    m.ints("big", {2}, {(int64_t {1} << 32) + 5, 3});
    setInt(m.node("Cast", {"f"}, "truncated"), "to", kInt64);
    setInt(m.node("Cast", {"f"}, "flags"), "to", kBool);
    setInt(m.node("Cast", {"big"}, "narrow"), "to", kInt32);
    setInt(m.node("Cast", {"big"}, "widened"), "to", kFloat);
    setInt(m.node("Cast", {"f"}, "doubled"), "to", onnx::TensorProto_DataType_DOUBLE);
    for (const char* name : {"truncated", "flags", "narrow", "widened", "doubled"})
        m.output(name);

    ASSERT_TRUE(folds(m.model));
    EXPECT_EQ(intsOf(m.model, "truncated"), (Ints {-2, 2, 0}));
    EXPECT_EQ(typeOf(m.model, "flags"), kBool);
    EXPECT_EQ(intsOf(m.model, "flags"), (Ints {1, 1, 0}));
    EXPECT_EQ(typeOf(m.model, "narrow"), kInt32);
    EXPECT_EQ(intsOf(m.model, "narrow"), (Ints {5, 3}));
    EXPECT_EQ(floatsOf(m.model, "widened"), (Floats {4294967296.0f, 3.0f}));
    // Doubles are not computed here: that Cast stays.
    EXPECT_EQ(opTypes(m.model), (std::vector<std::string> {"Cast"}));
    EXPECT_EQ(findInitializer(m.model, "doubled"), nullptr);
}

TEST(FoldConstants, ConstantOfShapeFillsWithItsValue)
{
    TestModel m;
    m.ints("shape", {2}, {2, 3});
    setTensor(m.node("ConstantOfShape", {"shape"}, "sevens"), "value", int64Tensor({1}, {7}));
    m.node("ConstantOfShape", {"shape"}, "zeros");
    m.output("sevens");
    m.output("zeros");

    ASSERT_TRUE(folds(m.model));
    EXPECT_EQ(dimsOf(m.model, "sevens"), (Ints {2, 3}));
    EXPECT_EQ(intsOf(m.model, "sevens"), Ints(6, 7));
    EXPECT_EQ(typeOf(m.model, "zeros"), kFloat);
    EXPECT_EQ(floatsOf(m.model, "zeros"), Floats(6, 0.0f));
}

TEST(FoldConstants, RangeCountsUpAndDown)
{
    TestModel m;
    m.ints("one", {}, {1});
    m.ints("ten", {}, {10});
    m.ints("three", {}, {3});
    m.ints("five", {}, {5});
    m.ints("minus_two", {}, {-2});
    m.floats("zero", {}, {0.0f});
    m.floats("unit", {}, {1.0f});
    m.floats("quarter", {}, {0.25f});
    m.node("Range", {"one", "ten", "three"}, "up");
    m.node("Range", {"five", "one", "minus_two"}, "down");
    m.node("Range", {"zero", "unit", "quarter"}, "quarters");
    for (const char* name : {"up", "down", "quarters"})
        m.output(name);

    ASSERT_TRUE(folds(m.model));
    EXPECT_EQ(intsOf(m.model, "up"), (Ints {1, 4, 7}));
    EXPECT_EQ(intsOf(m.model, "down"), (Ints {5, 3}));
    EXPECT_EQ(floatsOf(m.model, "quarters"), (Floats {0.0f, 0.25f, 0.5f, 0.75f}));
    EXPECT_EQ(dimsOf(m.model, "quarters"), (Ints {4}));
}

TEST(FoldConstants, EqualAndWhereSelectElementwise)
{
    TestModel m;
    m.ints("v", {3}, {1, 2, 3});
    m.ints("two", {}, {2});
    m.ints("fallback", {}, {-1});
    m.node("Equal", {"v", "two"}, "is_two");
    m.node("Where", {"is_two", "v", "fallback"}, "picked");
    m.output("picked");

    ASSERT_TRUE(folds(m.model));
    EXPECT_EQ(typeOf(m.model, "is_two"), kBool);
    EXPECT_EQ(intsOf(m.model, "is_two"), (Ints {0, 1, 0}));
    EXPECT_EQ(intsOf(m.model, "picked"), (Ints {-1, 2, -1}));
}

TEST(FoldConstants, ExpandBroadcastsToAShape)
{
    TestModel m;
    m.floats("column", {3, 1}, {1, 2, 3});
    m.ints("shape", {2}, {1, 2});
    m.node("Expand", {"column", "shape"}, "wide");
    m.output("wide");

    ASSERT_TRUE(folds(m.model));
    EXPECT_EQ(dimsOf(m.model, "wide"), (Ints {3, 2}));
    EXPECT_EQ(floatsOf(m.model, "wide"), (Floats {1, 1, 2, 2, 3, 3}));
}

TEST(FoldConstants, EvaluatesUnaryOperatorsAndTranspose)
{
    TestModel m;
    m.floats("f", {2}, {-1.5f, 1.5f});
    m.floats("squares", {2}, {4.0f, 9.0f});
    m.ints("i", {2}, {3, -4});
    m.ints("matrix", {2, 3}, {0, 1, 2, 3, 4, 5});
    m.node("Floor", {"f"}, "floor");
    m.node("Ceil", {"f"}, "ceil");
    m.node("Sqrt", {"squares"}, "roots");
    m.node("Neg", {"i"}, "negated");
    m.node("Transpose", {"matrix"}, "transposed");
    for (const char* name : {"floor", "ceil", "roots", "negated", "transposed"})
        m.output(name);

    ASSERT_TRUE(folds(m.model));
    EXPECT_EQ(floatsOf(m.model, "floor"), (Floats {-2.0f, 1.0f}));
    EXPECT_EQ(floatsOf(m.model, "ceil"), (Floats {-1.0f, 2.0f}));
    EXPECT_EQ(floatsOf(m.model, "roots"), (Floats {2.0f, 3.0f}));
    EXPECT_EQ(intsOf(m.model, "negated"), (Ints {-3, 4}));
    EXPECT_EQ(dimsOf(m.model, "transposed"), (Ints {3, 2}));
    EXPECT_EQ(intsOf(m.model, "transposed"), (Ints {0, 3, 1, 4, 2, 5}));
}

TEST(FoldConstants, ModTakesTheDivisorsSignUnlessFmod)
{
    TestModel m;
    m.ints("x", {4}, {-7, 7, -7, 7});
    m.ints("y", {4}, {3, -3, -3, 3});
    m.ints("zero", {}, {0});
    m.floats("fx", {2}, {-7.5f, 7.5f});
    m.floats("fy", {}, {2.0f});
    m.node("Mod", {"x", "y"}, "python");
    setInt(m.node("Mod", {"x", "y"}, "c"), "fmod", 1);
    setInt(m.node("Mod", {"fx", "fy"}, "floats"), "fmod", 1);
    m.node("Mod", {"x", "zero"}, "undefined");
    for (const char* name : {"python", "c", "floats", "undefined"})
        m.output(name);

    ASSERT_TRUE(folds(m.model));
    EXPECT_EQ(intsOf(m.model, "python"), (Ints {2, -2, -1, 1})); // numpy's %
    EXPECT_EQ(intsOf(m.model, "c"), (Ints {-1, 1, -1, 1})); // C's fmod
    EXPECT_EQ(floatsOf(m.model, "floats"), (Floats {-1.5f, 1.5f}));
    EXPECT_EQ(findInitializer(m.model, "undefined"), nullptr); // a zero divisor: the runtime's
}

TEST(FoldConstants, FloatModWithoutFmodIsInvalidInput)
{
    TestModel m;
    m.floats("fx", {1}, {1.0f});
    m.node("Mod", {"fx", "fx"}, "r");
    m.output("r");
    const Status s = foldConstants(m.model, nullptr);
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(contains(s.message(), "fmod=1")) << s.message();
}

TEST(FoldConstants, PowOfFloatsWithFloatOrIntegerExponents)
{
    TestModel m;
    m.floats("base", {2, 1}, {4.0f, 9.0f});
    m.floats("halves", {2}, {0.5f, -0.5f});
    m.ints("cube", {}, {3});
    m.ints("ibase", {}, {2});
    m.node("Pow", {"base", "halves"}, "roots"); // broadcast to 2 x 2
    m.node("Pow", {"base", "cube"}, "cubes");
    m.node("Pow", {"ibase", "cube"}, "integer");
    for (const char* name : {"roots", "cubes", "integer"})
        m.output(name);

    ASSERT_TRUE(folds(m.model));
    EXPECT_EQ(dimsOf(m.model, "roots"), (Ints {2, 2}));
    EXPECT_EQ(floatsOf(m.model, "roots"), (Floats {2.0f, 0.5f, 3.0f, 1.0f / 3.0f}));
    EXPECT_EQ(floatsOf(m.model, "cubes"), (Floats {64.0f, 729.0f}));
    EXPECT_EQ(findInitializer(m.model, "integer"), nullptr); // integer bases stay computed
}

TEST(FoldConstants, NotInvertsBooleans)
{
    TestModel m;
    m.ints("v", {3}, {0, 5, 0});
    m.ints("zero", {}, {0});
    m.node("Equal", {"v", "zero"}, "is_zero");
    m.node("Not", {"is_zero"}, "nonzero");
    m.output("nonzero");

    ASSERT_TRUE(folds(m.model));
    EXPECT_EQ(typeOf(m.model, "nonzero"), kBool);
    EXPECT_EQ(intsOf(m.model, "nonzero"), (Ints {0, 1, 0}));
}

// Swin's shifted-window mask is built by ScatterND writes into a zero image (attn_mask[h, w] = n).
TEST(FoldConstants, ScatterNDWritesRowsAndElements)
{
    TestModel m;
    m.ints("data", {3, 2}, {0, 0, 0, 0, 0, 0});
    m.ints("rows", {2, 1}, {2, 0});
    m.ints("row_updates", {2, 2}, {5, 6, 7, 8});
    m.ints("cells", {2, 2}, {1, -1, 0, 0});
    m.ints("cell_updates", {2}, {9, 4});
    m.node("ScatterND", {"data", "rows", "row_updates"}, "by_rows");
    m.node("ScatterND", {"by_rows", "cells", "cell_updates"}, "by_cells");
    m.output("by_cells");

    ASSERT_TRUE(folds(m.model));
    EXPECT_EQ(dimsOf(m.model, "by_cells"), (Ints {3, 2}));
    EXPECT_EQ(intsOf(m.model, "by_cells"), (Ints {4, 8, 0, 9, 5, 6}));
}

TEST(FoldConstants, ScatterNDWithMismatchedUpdatesIsInvalidInput)
{
    TestModel m;
    m.ints("data", {3, 2}, {0, 0, 0, 0, 0, 0});
    m.ints("rows", {2, 1}, {2, 0});
    m.ints("updates", {2, 3}, {1, 2, 3, 4, 5, 6});
    m.node("ScatterND", {"data", "rows", "updates"}, "r");
    m.output("r");
    const Status s = foldConstants(m.model, nullptr);
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(contains(s.message(), "updates are [2,3], not [2,2] (indices [2,1], data [3,2])"))
        << s.message();
}

// An export without the exporter's folding gives each nn.Linear weight as Transpose(W): folded
// whatever its size when the Transpose is the weight's only reader, left when W has other uses.
TEST(FoldConstants, TransposesALargeWeightThatHasOneReader)
{
    constexpr int64_t kRows = 1001;
    constexpr int64_t kCols = 1000; // over the folder's element bound
    Floats w(static_cast<size_t>(kRows * kCols));
    for (size_t i = 0; i < w.size(); ++i)
        w[i] = static_cast<float>(i);
    TestModel m;
    m.input("x", {1, kCols});
    m.floats("w", {kRows, kCols}, w);
    m.floats("shared", {kRows, kCols}, w);
    m.node("Transpose", {"w"}, "wt");
    m.node("MatMul", {"x", "wt"}, "y");
    m.node("Transpose", {"shared"}, "shared_t");
    m.node("MatMul", {"x", "shared_t"}, "y2");
    m.node("Identity", {"shared"}, "shared_copy");
    for (const char* name : {"y", "y2", "shared_copy"})
        m.output(name);

    PassReport report;
    ASSERT_TRUE(folds(m.model, &report));
    EXPECT_EQ(dimsOf(m.model, "wt"), (Ints {kCols, kRows}));
    const Floats wt = floatsOf(m.model, "wt");
    ASSERT_EQ(wt.size(), w.size());
    for (int64_t r : {int64_t {0}, int64_t {17}, kRows - 1})
        for (int64_t c : {int64_t {0}, int64_t {123}, kCols - 1})
            EXPECT_EQ(
                wt[static_cast<size_t>(c * kRows + r)], w[static_cast<size_t>(r * kCols + c)]);
    EXPECT_EQ(findInitializer(m.model, "shared_t"), nullptr);
    EXPECT_EQ(
        opTypes(m.model), (std::vector<std::string> {"MatMul", "Transpose", "MatMul", "Identity"}));
}

// ShuffleNetV2's channel shuffle as PyTorch exports it at opset 13: the Reshape target is computed
// from the input's shape at run time.
TEST(FoldConstants, FoldsTheShuffleNetChannelShuffleChain)
{
    TestModel m;
    m.input("x", {2, 4, 3, 3});
    m.ints("axes", {1}, {0});
    m.node("Shape", {"x"}, "shape");
    const Ints dimsKept = {0, 2, 3};
    for (int64_t dim : dimsKept) {
        const std::string n = std::to_string(dim);
        setTensor(m.node("Constant", {}, "index" + n), "value", int64Tensor({}, {dim}));
        m.node("Gather", {"shape", "index" + n}, "dim" + n);
        m.node("Unsqueeze", {"dim" + n, "axes"}, "unsqueezed" + n);
    }
    setTensor(m.node("Constant", {}, "groups"), "value", int64Tensor({2}, {2, 2}));
    setInt(m.node("Concat", {"unsqueezed0", "groups", "unsqueezed2", "unsqueezed3"}, "target"),
        "axis", 0);
    m.node("Reshape", {"x", "target"}, "y");
    m.output("y");

    PassReport report;
    ASSERT_TRUE(folds(m.model, &report));
    EXPECT_EQ(opTypes(m.model), (std::vector<std::string> {"Reshape"}));
    EXPECT_EQ(m.model.graph().node(0).input(1), "target");
    EXPECT_EQ(intsOf(m.model, "target"), (Ints {2, 2, 2, 3, 3}));
    EXPECT_EQ(dimsOf(m.model, "target"), (Ints {5}));
    EXPECT_EQ(report.folded, 12); // Shape, 4 Constant, 3 Gather, 3 Unsqueeze, Concat
    EXPECT_EQ(
        report.notes, (std::vector<std::string> {"Reshape 'y': shape [2,2,2,3,3] now constant"}));
    // Shape inference ran again: the Reshape's output shape is now known.
    const auto& y = m.model.graph().output(0).type().tensor_type().shape();
    ASSERT_EQ(y.dim_size(), 5);
    EXPECT_EQ(y.dim(1).dim_value(), 2);
    EXPECT_EQ(y.dim(4).dim_value(), 3);
}

// A shape inferred before the fold (here one that no longer holds) must not survive it: merged
// with the new inference it would either fail or hide the new shape.
TEST(FoldConstants, ReplacesStaleValueInfoWithFreshShapes)
{
    TestModel m;
    m.input("x", {2, 4, 3, 3});
    m.node("Shape", {"x"}, "shape");
    m.ints("first", {1}, {0});
    m.ints("one", {1}, {1});
    m.ints("rest", {1}, {-1});
    m.node("Slice", {"shape", "first", "one"}, "batch");
    setInt(m.node("Concat", {"batch", "rest"}, "target"), "axis", 0);
    m.node("Reshape", {"x", "target"}, "flat");
    m.node("Relu", {"flat"}, "y");
    m.output("y");
    auto* stale = m.graph().add_value_info();
    stale->set_name("flat");
    auto* type = stale->mutable_type()->mutable_tensor_type();
    type->set_elem_type(kFloat);
    for (int64_t d : {9, 8})
        type->mutable_shape()->add_dim()->set_dim_value(d);

    ASSERT_TRUE(folds(m.model));
    EXPECT_EQ(opTypes(m.model), (std::vector<std::string> {"Reshape", "Relu"}));
    const onnx::ValueInfoProto* flat = nullptr;
    for (const auto& value : m.model.graph().value_info()) {
        EXPECT_TRUE(value.name() != "flat" || flat == nullptr) << "two entries for 'flat'";
        if (value.name() == "flat")
            flat = &value;
    }
    ASSERT_NE(flat, nullptr);
    const auto& shape = flat->type().tensor_type().shape();
    ASSERT_EQ(shape.dim_size(), 2);
    EXPECT_EQ(shape.dim(0).dim_value(), 2);
    EXPECT_EQ(shape.dim(1).dim_value(), 36);
}

TEST(FoldConstants, LeavesTheShapeOfASymbolicBatchInPlace)
{
    TestModel m;
    m.input("x", {kSymbolic, 4, 3, 3});
    m.ints("zero", {}, {0});
    m.ints("axes", {1}, {0});
    m.ints("rest", {1}, {-1});
    m.node("Shape", {"x"}, "shape");
    m.node("Gather", {"shape", "zero"}, "batch");
    m.node("Unsqueeze", {"batch", "axes"}, "batch1");
    setInt(m.node("Concat", {"batch1", "rest"}, "target"), "axis", 0);
    m.node("Reshape", {"x", "target"}, "y");
    m.output("y");

    PassReport report;
    ASSERT_TRUE(folds(m.model, &report));
    EXPECT_EQ(report.folded, 0);
    EXPECT_TRUE(report.notes.empty());
    EXPECT_EQ(opTypes(m.model),
        (std::vector<std::string> {"Shape", "Gather", "Unsqueeze", "Concat", "Reshape"}));
    EXPECT_EQ(findInitializer(m.model, "shape"), nullptr);
}

// The second Shape reads a Reshape output whose shape is unknown until the first chain has
// folded and shape inference has run again.
TEST(FoldConstants, FoldsAChainThatNeedsTwoRounds)
{
    TestModel m;
    m.input("x", {2, 4, 3, 3});
    m.input("z", {72});
    m.ints("first", {1}, {0});
    m.ints("one", {1}, {1});
    m.ints("rest", {1}, {-1});
    m.node("Shape", {"x"}, "shape");
    m.node("Slice", {"shape", "first", "one"}, "batch");
    setInt(m.node("Concat", {"batch", "rest"}, "target"), "axis", 0);
    m.node("Reshape", {"x", "target"}, "flat");
    m.node("Shape", {"flat"}, "flat_shape");
    m.node("Reshape", {"z", "flat_shape"}, "y");
    m.output("flat");
    m.output("y");

    PassReport report;
    ASSERT_TRUE(folds(m.model, &report));
    EXPECT_EQ(opTypes(m.model), (std::vector<std::string> {"Reshape", "Reshape"}));
    EXPECT_EQ(intsOf(m.model, "target"), (Ints {2, -1}));
    EXPECT_EQ(intsOf(m.model, "flat_shape"), (Ints {2, 36}));
    EXPECT_EQ(report.folded, 4);
    EXPECT_EQ(report.notes,
        (std::vector<std::string> {"Reshape 'flat': shape [2,-1] now constant",
            "Reshape 'y': shape [2,36] now constant"}));
}

// ShuffleNetV2 needs two rounds per block: a round of the pass must not stop at 16.
TEST(FoldConstants, FoldsChainsThatNeedManyRounds)
{
    constexpr int kStages = 24;
    TestModel m;
    m.input("v0", {2, 3, 4});
    for (int k = 1; k <= kStages; ++k) {
        const std::string in = "v" + std::to_string(k - 1);
        m.node("Shape", {in}, "s" + std::to_string(k));
        m.node("Reshape", {in, "s" + std::to_string(k)}, "v" + std::to_string(k));
    }
    m.output("v" + std::to_string(kStages));

    PassReport report;
    ASSERT_TRUE(folds(m.model, &report));
    EXPECT_EQ(report.folded, kStages);
    EXPECT_EQ(opTypes(m.model), std::vector<std::string>(kStages, "Reshape"));
    EXPECT_EQ(intsOf(m.model, "s" + std::to_string(kStages)), (Ints {2, 3, 4}));
}

// Exporters share one weight between layers through Identity nodes: the copies fold, but a layer
// reading a copied weight is no news for the report.
TEST(FoldConstants, CopiesOfInitializersFoldWithoutNotes)
{
    TestModel m;
    m.floats("weight", {2}, {0.5f, -0.5f});
    m.node("Identity", {"weight"}, "weight_copy");
    m.node("Relu", {"weight_copy"}, "y");
    m.output("y");

    PassReport report;
    ASSERT_TRUE(folds(m.model, &report));
    EXPECT_EQ(report.folded, 1);
    EXPECT_TRUE(report.notes.empty());
    EXPECT_EQ(opTypes(m.model), (std::vector<std::string> {"Relu"}));
    EXPECT_EQ(floatsOf(m.model, "weight_copy"), (Floats {0.5f, -0.5f}));
}

// IR version 3 requires every initializer to be declared as a graph input too.
TEST(FoldConstants, DeclaresNewInitializersAsInputsBeforeIrVersion4)
{
    TestModel m;
    m.model.set_ir_version(3);
    m.input("x", {2, 4, 3, 3});
    m.node("Shape", {"x"}, "shape");
    m.output("shape");

    ASSERT_TRUE(folds(m.model));
    ASSERT_EQ(m.model.graph().input_size(), 2);
    const auto& declared = m.model.graph().input(1);
    EXPECT_EQ(declared.name(), "shape");
    EXPECT_EQ(declared.type().tensor_type().elem_type(), kInt64);
    ASSERT_EQ(declared.type().tensor_type().shape().dim_size(), 1);
    EXPECT_EQ(declared.type().tensor_type().shape().dim(0).dim_value(), 4);
    EXPECT_EQ(intsOf(m.model, "shape"), (Ints {2, 4, 3, 3}));
}

TEST(FoldConstants, GatherIndexOutOfRangeIsInvalidInput)
{
    TestModel m;
    m.ints("data", {3}, {1, 2, 3});
    m.ints("index", {}, {3});
    m.node("Gather", {"data", "index"}, "bad_gather");
    m.output("bad_gather");

    const Status s = foldConstants(m.model, nullptr);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.kind(), ErrorKind::InvalidInput);
    EXPECT_TRUE(contains(s.message(), "Gather 'bad_gather'")) << s.message();
    EXPECT_TRUE(contains(s.message(), "index 3 out of range")) << s.message();
}

TEST(FoldConstants, ReshapeOfAMismatchingElementCountIsInvalidInput)
{
    TestModel m;
    m.floats("data", {2, 3}, Floats(6, 1.0f));
    m.ints("shape", {1}, {4});
    m.node("Reshape", {"data", "shape"}, "bad_reshape");
    m.output("bad_reshape");

    const Status s = foldConstants(m.model, nullptr);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.kind(), ErrorKind::InvalidInput);
    EXPECT_TRUE(contains(s.message(), "Reshape 'bad_reshape'")) << s.message();
    EXPECT_TRUE(contains(s.message(), "cannot reshape 6 elements to [4]")) << s.message();
}

TEST(FoldConstants, ConcatOfMismatchedRanksIsInvalidInput)
{
    TestModel m;
    m.ints("vector", {2}, {1, 2});
    m.ints("matrix", {1, 2}, {3, 4});
    setInt(m.node("Concat", {"vector", "matrix"}, "bad_concat"), "axis", 0);
    m.output("bad_concat");

    const Status s = foldConstants(m.model, nullptr);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.kind(), ErrorKind::InvalidInput);
    EXPECT_TRUE(contains(s.message(), "Concat 'bad_concat'")) << s.message();
    EXPECT_TRUE(contains(s.message(), "ranks 1 and 2")) << s.message();
}

TEST(FoldConstants, LeavesUnknownOperatorsAlone)
{
    TestModel m;
    m.ints("a", {2}, {1, 2});
    m.ints("b", {2}, {3, 4});
    m.node("NoSuchOperator", {"a", "b"}, "y");
    m.output("y");

    PassReport report;
    ASSERT_TRUE(folds(m.model, &report));
    EXPECT_EQ(report.folded, 0);
    EXPECT_EQ(opTypes(m.model), (std::vector<std::string> {"NoSuchOperator"}));
    EXPECT_EQ(m.model.graph().initializer_size(), 2);
    EXPECT_EQ(intsOf(m.model, "a"), (Ints {1, 2}));
    EXPECT_EQ(findInitializer(m.model, "y"), nullptr);
}

TEST(FoldConstants, LeavesLargeResultsToRunTime)
{
    TestModel m;
    m.ints("shape", {2}, {2000, 1000});
    m.node("ConstantOfShape", {"shape"}, "big");
    m.output("big");

    PassReport report;
    ASSERT_TRUE(folds(m.model, &report));
    EXPECT_EQ(report.folded, 0);
    EXPECT_EQ(opTypes(m.model), (std::vector<std::string> {"ConstantOfShape"}));
    EXPECT_EQ(findInitializer(m.model, "big"), nullptr);
}

// A QDQ model's weights: DequantizeLinear of int8 per output channel folds whatever its size
// (here above the folder's bound for other results), as (q - zero point) x scale in float32, and
// the folded tensor keeps the scales in its doc_string for an int8 backend; QuantizeLinear of a
// float constant (a fake-quantized export's weights) folds to its uint8 integers, rounded half
// to even and saturated, which the DequantizeLinear after it then folds too.
TEST(FoldConstants, QuantizeAndDequantizeLinearOfConstantsFold)
{
    constexpr int32_t kInt8 = onnx::TensorProto_DataType_INT8;
    constexpr int64_t kPer = 600000; // two channels: 1.2 M elements
    TestModel m;
    Ints q(2 * kPer);
    for (size_t i = 0; i < q.size(); ++i)
        q[i] = static_cast<int64_t>(i % 255) - 127;
    m.bytes("w_q", {2, kPer}, q, kInt8);
    m.floats("w_s", {2}, {0.5f, 0.25f});
    m.bytes("w_z", {2}, {0, 0}, kInt8);
    setInt(m.node("DequantizeLinear", {"w_q", "w_s", "w_z"}, "w"), "axis", 0);
    m.output("w");
    m.floats("f", {3}, {-1.25f, 0.75f, 300.0f});
    m.floats("f_s", {}, {0.5f});
    m.node("QuantizeLinear", {"f", "f_s"}, "f_q");
    m.node("DequantizeLinear", {"f_q", "f_s"}, "f_r");
    m.output("f_r");
    ASSERT_TRUE(folds(m.model));
    EXPECT_TRUE(opTypes(m.model).empty());
    const Floats w = floatsOf(m.model, "w");
    ASSERT_EQ(w.size(), q.size());
    for (size_t i = 0; i < w.size(); i += 997)
        ASSERT_EQ(w[i], static_cast<float>(q[i]) * (i < kPer ? 0.5f : 0.25f)) << i;
    const auto* folded = findInitializer(m.model, "w");
    ASSERT_NE(folded, nullptr);
    EXPECT_TRUE(contains(folded->doc_string(), "dequantized int8, axis 0")) << folded->doc_string();
    // -2.5 rounds to -2 (even) and saturates at 0; 1.5 rounds to 2; 600 saturates at 255.
    EXPECT_EQ(floatsOf(m.model, "f_r"), (Floats {0.0f, 1.0f, 127.5f}));
}

} // namespace
} // namespace jetagent
