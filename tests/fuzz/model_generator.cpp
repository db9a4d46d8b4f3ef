// Small valid ONNX models made from fuzz bytes (see model_generator.h).
#include "model_generator.h"

#include <algorithm>
#include <numeric>

#include <onnx/onnx_pb.h>

namespace jetagent::fuzz {

namespace {

constexpr int64_t kMaxChannels = 16;
constexpr int64_t kMaxSide = 16;
constexpr int64_t kMaxFeatures = kMaxChannels * kMaxSide * kMaxSide;
constexpr int64_t kMaxGemmOutputs = 16;
// A transpose may make any side the channels.
static_assert(kMaxSide <= kMaxChannels);

struct Value {
    std::string name;
    std::vector<int64_t> dims; // N first, N = 1
};

int64_t elements(const std::vector<int64_t>& dims)
{
    return std::accumulate(dims.begin(), dims.end(), int64_t {1}, std::multiplies<>());
}

// Builds the graph: names, initializers (or Constant nodes), nodes and their attributes.
class Builder {
public:
    Builder(ByteReader& in, int64_t opset) : in_(in), opset_(opset)
    {
        model_.set_ir_version(opset >= 15 ? 8 : 7);
        model_.set_producer_name("jetagent-fuzz");
        model_.add_opset_import()->set_version(opset);
        graph_ = model_.mutable_graph();
        graph_->set_name("generated");
    }

    int64_t opset() const { return opset_; }
    onnx::ModelProto& model() { return model_; }
    onnx::GraphProto& graph() { return *graph_; }

    std::string name(const char* prefix) { return prefix + std::to_string(counter_++); }

    // Float weights from a generator seeded by one input byte: the bytes describe the structure,
    // not thousands of values.
    std::vector<float> weights(int64_t count, float low, float high)
    {
        uint32_t state = 0x9E3779B9u ^ in_.byte();
        std::vector<float> out(static_cast<size_t>(count));
        for (float& w : out) {
            state = state * 1664525u + 1013904223u;
            w = low + (high - low) * static_cast<float>(state >> 8) / static_cast<float>(1u << 24);
        }
        return out;
    }

    // A float tensor: an initializer, or (when the bytes say so) a Constant node, which the
    // preparation folds.
    std::string floats(const std::vector<int64_t>& dims, const std::vector<float>& values)
    {
        std::string tensorName = name("w");
        onnx::TensorProto* tensor = nullptr;
        onnx::TensorProto constant;
        const bool asConstant = in_.range(0, 7) == 0;
        tensor = asConstant ? &constant : graph_->add_initializer();
        tensor->set_name(tensorName);
        tensor->set_data_type(onnx::TensorProto_DataType_FLOAT);
        for (int64_t d : dims)
            tensor->add_dims(d);
        if (in_.flag()) {
            for (float v : values)
                tensor->add_float_data(v);
        } else {
            tensor->set_raw_data(std::string(
                reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
        }
        if (asConstant) {
            auto* node = addNode("Constant", {}, tensorName);
            auto* attribute = node->add_attribute();
            attribute->set_name("value");
            attribute->set_type(onnx::AttributeProto_AttributeType_TENSOR);
            *attribute->mutable_t() = constant;
        }
        return tensorName;
    }

    std::string int64s(const std::vector<int64_t>& values)
    {
        auto* tensor = graph_->add_initializer();
        tensor->set_name(name("i"));
        tensor->set_data_type(onnx::TensorProto_DataType_INT64);
        tensor->add_dims(static_cast<int64_t>(values.size()));
        for (int64_t v : values)
            tensor->add_int64_data(v);
        return tensor->name();
    }

    std::string scalar(float value)
    {
        auto* tensor = graph_->add_initializer();
        tensor->set_name(name("s"));
        tensor->set_data_type(onnx::TensorProto_DataType_FLOAT);
        tensor->add_float_data(value);
        return tensor->name();
    }

    onnx::NodeProto* addNode(
        const std::string& op, const std::vector<std::string>& inputs, const std::string& output)
    {
        auto* node = graph_->add_node();
        node->set_op_type(op);
        node->set_name(name("n"));
        for (const auto& input : inputs)
            node->add_input(input);
        node->add_output(output);
        return node;
    }

    static void ints(onnx::NodeProto* node, const char* key, const std::vector<int64_t>& values)
    {
        auto* attribute = node->add_attribute();
        attribute->set_name(key);
        attribute->set_type(onnx::AttributeProto_AttributeType_INTS);
        for (int64_t v : values)
            attribute->add_ints(v);
    }
    static void integer(onnx::NodeProto* node, const char* key, int64_t value)
    {
        auto* attribute = node->add_attribute();
        attribute->set_name(key);
        attribute->set_type(onnx::AttributeProto_AttributeType_INT);
        attribute->set_i(value);
    }
    static void real(onnx::NodeProto* node, const char* key, float value)
    {
        auto* attribute = node->add_attribute();
        attribute->set_name(key);
        attribute->set_type(onnx::AttributeProto_AttributeType_FLOAT);
        attribute->set_f(value);
    }

private:
    ByteReader& in_;
    int64_t opset_;
    onnx::ModelProto model_;
    onnx::GraphProto* graph_ = nullptr;
    int counter_ = 0;
};

// One layer on an N x C x H x W or N x F value; returns the new current value.
class Layers {
public:
    Layers(Builder& b, ByteReader& in) : b_(b), in_(in) { }

    Value next(const Value& x, const std::vector<Value>& history)
    {
        if (x.dims.size() == 4) {
            switch (in_.range(0, 15)) {
            case 0:
            case 1: return conv(x);
            case 2: return pool(x);
            case 3: return globalPool(x);
            case 4: return binaryWithConstant(x);
            case 5: return binaryWithEarlier(x, history);
            case 6: return batchNorm(x);
            case 7: return concat(x, history);
            case 8: return split(x);
            case 9: return slice(x);
            case 10: return transpose(x);
            case 11: return pad(x);
            case 12: return flatten(x);
            case 13: return reduce(x);
            case 14: return softmax(x);
            default: return unary(x);
            }
        }
        switch (in_.range(0, 6)) {
        case 0:
        case 1: return gemm(x);
        case 2: return binaryWithConstant(x);
        case 3: return softmax(x);
        case 4: return toImage(x);
        case 5: return passThrough(x);
        default: return unary(x);
        }
    }

private:
    Value out(const std::string& name, std::vector<int64_t> dims)
    {
        return {name, std::move(dims)};
    }

    // A window along one spatial side: kernel, stride, dilation and pads that give at least one
    // output, and the output's length.
    struct Window {
        int64_t kernel = 1, stride = 1, dilation = 1, padBegin = 0, padEnd = 0, output = 1;
    };
    Window window(int64_t side, bool dilate)
    {
        Window w;
        w.kernel = in_.range(1, 3);
        w.stride = in_.range(1, 2);
        w.dilation = dilate ? in_.range(1, 2) : 1;
        w.padBegin = std::min<int64_t>(in_.range(0, 1), w.kernel - 1);
        w.padEnd = std::min<int64_t>(in_.range(0, 1), w.kernel - 1);
        const int64_t padded = side + w.padBegin + w.padEnd;
        if ((w.kernel - 1) * w.dilation + 1 > padded) {
            w.dilation = 1;
            w.kernel = std::min(w.kernel, padded);
        }
        w.output = (padded - ((w.kernel - 1) * w.dilation + 1)) / w.stride + 1;
        return w;
    }

    Value conv(const Value& x)
    {
        const int64_t c = x.dims[1];
        const bool depthwise = in_.range(0, 3) == 0;
        const int64_t group = depthwise ? c : 1;
        const int64_t outC = depthwise ? c * in_.range(1, std::max<int64_t>(1, kMaxChannels / c))
                                       : in_.range(1, kMaxChannels);
        const Window h = window(x.dims[2], true);
        const Window w = window(x.dims[3], true);
        const std::string weight = b_.floats({outC, c / group, h.kernel, w.kernel},
            b_.weights(outC * (c / group) * h.kernel * w.kernel, -1.0f, 1.0f));
        std::vector<std::string> inputs {x.name, weight};
        if (in_.flag())
            inputs.push_back(b_.floats({outC}, b_.weights(outC, -1.0f, 1.0f)));
        const std::string y = b_.name("conv");
        auto* node = b_.addNode("Conv", inputs, y);
        Builder::ints(node, "kernel_shape", {h.kernel, w.kernel});
        Builder::ints(node, "strides", {h.stride, w.stride});
        Builder::ints(node, "dilations", {h.dilation, w.dilation});
        Builder::ints(node, "pads", {h.padBegin, w.padBegin, h.padEnd, w.padEnd});
        Builder::integer(node, "group", group);
        return out(y, {1, outC, h.output, w.output});
    }

    Value pool(const Value& x)
    {
        const bool isMax = in_.flag();
        const Window h = window(x.dims[2], false);
        const Window w = window(x.dims[3], false);
        const std::string y = b_.name("pool");
        auto* node = b_.addNode(isMax ? "MaxPool" : "AveragePool", {x.name}, y);
        Builder::ints(node, "kernel_shape", {h.kernel, w.kernel});
        Builder::ints(node, "strides", {h.stride, w.stride});
        Builder::ints(node, "pads", {h.padBegin, w.padBegin, h.padEnd, w.padEnd});
        if (!isMax)
            Builder::integer(node, "count_include_pad", in_.range(0, 1));
        return out(y, {1, x.dims[1], h.output, w.output});
    }

    Value globalPool(const Value& x)
    {
        const std::string y = b_.name("gpool");
        b_.addNode(in_.flag() ? "GlobalMaxPool" : "GlobalAveragePool", {x.name}, y);
        return out(y, {1, x.dims[1], 1, 1});
    }

    Value unary(const Value& x)
    {
        static const char* const kOps[] = {"Relu", "Clip", "Sigmoid", "HardSwish", "HardSigmoid",
            "LeakyRelu", "Elu", "Tanh", "Neg", "Abs", "Floor", "Ceil", "Sqrt", "Exp", "Log", "Erf"};
        std::string op = kOps[in_.range(0, std::size(kOps) - 1)];
        if (op == "HardSwish" && b_.opset() < 14)
            op = "Relu";
        const std::string y = b_.name("act");
        std::vector<std::string> inputs {x.name};
        if (op == "Clip") {
            const float low = static_cast<float>(in_.range(-8, 0));
            inputs.push_back(in_.flag() ? b_.scalar(low) : "");
            inputs.push_back(b_.scalar(low + static_cast<float>(in_.range(1, 8))));
        }
        auto* node = b_.addNode(op, inputs, y);
        if (op == "LeakyRelu" || op == "Elu" || op == "HardSigmoid")
            Builder::real(node, "alpha", static_cast<float>(in_.range(1, 100)) / 100.0f);
        return out(y, x.dims);
    }

    // x (op) constant, the constant broadcast from a scalar, a per-channel vector or full size.
    Value binaryWithConstant(const Value& x)
    {
        static const char* const kOps[] = {"Add", "Sub", "Mul", "Div", "Min", "Max"};
        const std::string op = kOps[in_.range(0, std::size(kOps) - 1)];
        std::vector<int64_t> dims;
        switch (in_.range(0, 2)) {
        case 0: break; // a scalar
        case 1:
            dims = x.dims.size() == 4 ? std::vector<int64_t> {x.dims[1], 1, 1}
                                      : std::vector<int64_t> {x.dims[1]};
            break;
        default: dims = x.dims; break;
        }
        // Divisors stay away from zero.
        const std::vector<float> values = op == "Div" ? b_.weights(elements(dims), 0.5f, 2.0f)
                                                      : b_.weights(elements(dims), -1.0f, 1.0f);
        const std::string constant = b_.floats(dims, values);
        const std::string y = b_.name("bin");
        const bool constantFirst = op != "Div" && in_.flag();
        b_.addNode(op,
            constantFirst ? std::vector<std::string> {constant, x.name}
                          : std::vector<std::string> {x.name, constant},
            y);
        return out(y, x.dims);
    }

    // A residual: x (op) an earlier value of the same shape (x itself when there is none).
    Value binaryWithEarlier(const Value& x, const std::vector<Value>& history)
    {
        std::vector<const Value*> same;
        for (const Value& v : history)
            if (v.dims == x.dims)
                same.push_back(&v);
        const Value& other =
            same.empty() ? x : *same[static_cast<size_t>(in_.range(0, same.size() - 1))];
        static const char* const kOps[] = {"Add", "Mul", "Max", "Sub"};
        const std::string y = b_.name("res");
        b_.addNode(kOps[in_.range(0, std::size(kOps) - 1)], {x.name, other.name}, y);
        return out(y, x.dims);
    }

    Value batchNorm(const Value& x)
    {
        const int64_t c = x.dims[1];
        const std::string y = b_.name("bn");
        auto* node = b_.addNode("BatchNormalization",
            {x.name, b_.floats({c}, b_.weights(c, 0.5f, 1.5f)),
                b_.floats({c}, b_.weights(c, -1.0f, 1.0f)),
                b_.floats({c}, b_.weights(c, -1.0f, 1.0f)),
                b_.floats({c}, b_.weights(c, 0.25f, 2.0f))},
            y);
        Builder::real(node, "epsilon", 1e-5f);
        return out(y, x.dims);
    }

    // Along the channels, with an earlier value of the same size (or x itself).
    Value concat(const Value& x, const std::vector<Value>& history)
    {
        std::vector<const Value*> fits;
        for (const Value& v : history)
            if (v.dims.size() == 4 && v.dims[2] == x.dims[2] && v.dims[3] == x.dims[3] &&
                v.dims[1] + x.dims[1] <= kMaxChannels)
                fits.push_back(&v);
        if (fits.empty())
            return unary(x);
        const Value& other = *fits[static_cast<size_t>(in_.range(0, fits.size() - 1))];
        const std::string y = b_.name("cat");
        auto* node = b_.addNode("Concat", {x.name, other.name}, y);
        Builder::integer(node, "axis", 1);
        return out(y, {1, x.dims[1] + other.dims[1], x.dims[2], x.dims[3]});
    }

    // Channels into two parts; the model goes on with one of them.
    Value split(const Value& x)
    {
        const int64_t c = x.dims[1];
        if (c < 2)
            return unary(x);
        const int64_t first = in_.range(1, c - 1);
        const std::string a = b_.name("part");
        const std::string rest = b_.name("part");
        auto* node = b_.addNode("Split", {x.name, b_.int64s({first, c - first})}, a);
        node->add_output(rest);
        Builder::integer(node, "axis", 1);
        return in_.flag() ? out(a, {1, first, x.dims[2], x.dims[3]})
                          : out(rest, {1, c - first, x.dims[2], x.dims[3]});
    }

    Value slice(const Value& x)
    {
        const int64_t axis = in_.range(1, 3);
        const int64_t side = x.dims[static_cast<size_t>(axis)];
        const int64_t start = in_.range(0, side - 1);
        const int64_t end = in_.range(start + 1, side);
        const int64_t step = in_.range(1, 2);
        const std::string y = b_.name("slice");
        b_.addNode("Slice",
            {x.name, b_.int64s({start}), b_.int64s({end}), b_.int64s({axis}), b_.int64s({step})},
            y);
        std::vector<int64_t> dims = x.dims;
        dims[static_cast<size_t>(axis)] = (end - start + step - 1) / step;
        return out(y, dims);
    }

    Value transpose(const Value& x)
    {
        std::vector<int64_t> perm {0, 1, 2, 3};
        // The batch stays first, as the engines expect it.
        for (size_t i = 3; i > 1; --i)
            std::swap(perm[i], perm[1 + static_cast<size_t>(in_.range(0, i - 1))]);
        const std::string y = b_.name("tr");
        Builder::ints(b_.addNode("Transpose", {x.name}, y), "perm", perm);
        std::vector<int64_t> dims(4);
        for (size_t i = 0; i < 4; ++i)
            dims[i] = x.dims[static_cast<size_t>(perm[i])];
        return out(y, dims);
    }

    Value pad(const Value& x)
    {
        const int64_t top = in_.range(0, 1), left = in_.range(0, 1);
        const int64_t bottom = in_.range(0, 1), right = in_.range(0, 1);
        if (x.dims[2] + top + bottom > kMaxSide || x.dims[3] + left + right > kMaxSide)
            return unary(x);
        const std::string y = b_.name("pad");
        b_.addNode("Pad", {x.name, b_.int64s({0, 0, top, left, 0, 0, bottom, right})}, y);
        return out(y, {1, x.dims[1], x.dims[2] + top + bottom, x.dims[3] + left + right});
    }

    // To N x F: Flatten, a Reshape to a constant shape, or the shape arithmetic PyTorch exports
    // (Shape, Gather, Unsqueeze, Concat, Reshape), which the preparation folds.
    Value flatten(const Value& x)
    {
        const int64_t features = elements(x.dims);
        const std::string y = b_.name("flat");
        switch (in_.range(0, 2)) {
        case 0: Builder::integer(b_.addNode("Flatten", {x.name}, y), "axis", 1); break;
        case 1: b_.addNode("Reshape", {x.name, b_.int64s({1, features})}, y); break;
        default: {
            const std::string shape = b_.name("shape");
            b_.addNode("Shape", {x.name}, shape);
            const std::string batch = b_.name("batch");
            auto* gather = b_.addNode("Gather", {shape, scalarIndex()}, batch);
            Builder::integer(gather, "axis", 0);
            const std::string batch1 = b_.name("batch");
            b_.addNode("Unsqueeze", {batch, b_.int64s({0})}, batch1);
            const std::string target = b_.name("target");
            auto* cat = b_.addNode("Concat", {batch1, b_.int64s({-1})}, target);
            Builder::integer(cat, "axis", 0);
            b_.addNode("Reshape", {x.name, target}, y);
            break;
        }
        }
        return out(y, {1, features});
    }

    std::string scalarIndex()
    {
        auto* tensor = b_.graph().add_initializer();
        tensor->set_name(b_.name("k"));
        tensor->set_data_type(onnx::TensorProto_DataType_INT64);
        tensor->add_int64_data(0);
        return tensor->name();
    }

    Value reduce(const Value& x)
    {
        const bool spatial = in_.flag();
        const std::string y = b_.name("red");
        auto* node = b_.addNode(in_.flag() ? "ReduceMean" : "ReduceMax", {x.name}, y);
        Builder::ints(
            node, "axes", spatial ? std::vector<int64_t> {2, 3} : std::vector<int64_t> {1});
        Builder::integer(node, "keepdims", 1);
        return spatial ? out(y, {1, x.dims[1], 1, 1}) : out(y, {1, 1, x.dims[2], x.dims[3]});
    }

    Value softmax(const Value& x)
    {
        const std::string y = b_.name("soft");
        const auto rank = static_cast<int64_t>(x.dims.size());
        Builder::integer(b_.addNode("Softmax", {x.name}, y), "axis", in_.range(1, rank - 1));
        return out(y, x.dims);
    }

    Value gemm(const Value& x)
    {
        const int64_t features = x.dims[1];
        const int64_t outputs = in_.range(1, kMaxGemmOutputs);
        const std::string y = b_.name("fc");
        if (in_.flag()) {
            const std::string weight =
                b_.floats({features, outputs}, b_.weights(features * outputs, -1.0f, 1.0f));
            b_.addNode("MatMul", {x.name, weight}, y);
            return out(y, {1, outputs});
        }
        const bool transB = in_.flag();
        const std::string weight = b_.floats(transB ? std::vector<int64_t> {outputs, features}
                                                    : std::vector<int64_t> {features, outputs},
            b_.weights(features * outputs, -1.0f, 1.0f));
        std::vector<std::string> inputs {x.name, weight};
        if (in_.flag())
            inputs.push_back(b_.floats({outputs}, b_.weights(outputs, -1.0f, 1.0f)));
        auto* node = b_.addNode("Gemm", inputs, y);
        Builder::integer(node, "transB", transB ? 1 : 0);
        return out(y, {1, outputs});
    }

    // N x F back to N x C x H x W (a 1 x 1 image of F channels, or F split into channels).
    Value toImage(const Value& x)
    {
        const int64_t features = x.dims[1];
        if (features > kMaxChannels)
            return unary(x);
        const std::string y = b_.name("img");
        b_.addNode("Reshape", {x.name, b_.int64s({1, features, 1, 1})}, y);
        return out(y, {1, features, 1, 1});
    }

    // Identity and Dropout (inference): the preparation removes them.
    Value passThrough(const Value& x)
    {
        const std::string y = b_.name("id");
        b_.addNode(in_.flag() ? "Identity" : "Dropout", {x.name}, y);
        return out(y, x.dims);
    }

    Builder& b_;
    ByteReader& in_;
};

} // namespace

GeneratedModel generateModel(ByteReader& in, int maxLayers)
{
    static const int64_t kOpsets[] = {13, 14, 17};
    Builder b(in, kOpsets[in.range(0, std::size(kOpsets) - 1)]);
    GeneratedModel generated;
    generated.inputDims = {1, in.range(1, 4), in.range(1, kMaxSide), in.range(1, kMaxSide)};
    const bool symbolicBatch = in.flag();

    auto* input = b.graph().add_input();
    input->set_name("input");
    auto* inputType = input->mutable_type()->mutable_tensor_type();
    inputType->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    for (size_t i = 0; i < generated.inputDims.size(); ++i) {
        auto* dim = inputType->mutable_shape()->add_dim();
        if (i == 0 && symbolicBatch)
            dim->set_dim_param("batch");
        else
            dim->set_dim_value(generated.inputDims[i]);
    }

    Value current {"input", generated.inputDims};
    std::vector<Value> history {current};
    Layers layers(b, in);
    const auto count = static_cast<int>(in.range(1, maxLayers));
    for (int i = 0; i < count; ++i) {
        current = layers.next(current, history);
        if (elements(current.dims) > kMaxFeatures)
            break;
        history.push_back(current);
    }
    generated.layers = count;

    // The output's rank, its dimensions left to shape inference.
    auto* output = b.graph().add_output();
    output->set_name(current.name);
    auto* outputType = output->mutable_type()->mutable_tensor_type();
    outputType->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    for (size_t i = 0; i < current.dims.size(); ++i)
        outputType->mutable_shape()->add_dim();
    generated.bytes = b.model().SerializeAsString();
    return generated;
}

} // namespace jetagent::fuzz
