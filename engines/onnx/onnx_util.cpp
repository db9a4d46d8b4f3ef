// Small helpers over the ONNX protobuf types.
#include "onnx_util.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

#include "jetagent/base/format.h"

namespace jetagent {
namespace onnxutil {

namespace {

// Raw tensor data is little-endian; so are x86-64 and aarch64, the only targets jetagent builds
// for.
template <typename T, typename Out>
bool readRaw(const std::string& raw, int64_t count, std::vector<Out>* out)
{
    if (static_cast<int64_t>(raw.size()) != count * static_cast<int64_t>(sizeof(T)))
        return false;
    out->resize(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
        T value;
        std::memcpy(&value, raw.data() + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
        // INT8 values are signed: widening them keeps the sign, as intended.
        (*out)[static_cast<size_t>(i)] =
            static_cast<Out>(value); // NOLINT(bugprone-signed-char-misuse)
    }
    return true;
}

// The values of `tensor`, stored as T in its raw bytes or else in `field` (the typed list its data
// type uses); false when their count is not the one its dimensions give, or when they lie in
// another file.
template <typename T, typename Field, typename Out>
bool readValues(const onnx::TensorProto& tensor, const Field& field, std::vector<Out>* out)
{
    const int64_t count = elementCount(tensor);
    if (tensor.data_location() == onnx::TensorProto_DataLocation_EXTERNAL || count < 0)
        return false;
    if (tensor.has_raw_data())
        return readRaw<T>(tensor.raw_data(), count, out);
    if (field.size() != count)
        return false;
    out->assign(field.begin(), field.end());
    return true;
}

// A tensor with its values in raw bytes (little-endian, as on every target: see readRaw).
template <typename T>
onnx::TensorProto rawTensor(const std::string& name, onnx::TensorProto_DataType type,
    const std::vector<int64_t>& dims, const std::vector<T>& values)
{
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(type);
    for (int64_t d : dims)
        t.add_dims(d);
    t.set_raw_data(values.data(), values.size() * sizeof(T));
    return t;
}

onnx::AttributeProto* mutableAttribute(
    onnx::NodeProto* node, const std::string& name, onnx::AttributeProto::AttributeType type)
{
    for (auto& attr : *node->mutable_attribute())
        if (attr.name() == name) {
            attr.Clear();
            attr.set_name(name);
            attr.set_type(type);
            return &attr;
        }
    auto* attr = node->add_attribute();
    attr->set_name(name);
    attr->set_type(type);
    return attr;
}

} // namespace

std::string nodeLabel(const onnx::NodeProto& node, int index)
{
    if (!node.name().empty())
        return node.op_type() + " '" + node.name() + "'";
    return node.op_type() + " (node " + std::to_string(index) + ")";
}

int64_t elementCount(const onnx::TensorProto& tensor)
{
    int64_t n = 1;
    for (int64_t d : tensor.dims())
        n *= d;
    return n;
}

bool readInt64(const onnx::TensorProto& tensor, std::vector<int64_t>* out)
{
    switch (tensor.data_type()) {
    case onnx::TensorProto_DataType_INT64:
        return readValues<int64_t>(tensor, tensor.int64_data(), out);
    case onnx::TensorProto_DataType_INT32:
        return readValues<int32_t>(tensor, tensor.int32_data(), out);
    case onnx::TensorProto_DataType_INT16:
        return readValues<int16_t>(tensor, tensor.int32_data(), out);
    case onnx::TensorProto_DataType_INT8:
        return readValues<int8_t>(tensor, tensor.int32_data(), out);
    case onnx::TensorProto_DataType_UINT8:
    case onnx::TensorProto_DataType_BOOL:
        return readValues<uint8_t>(tensor, tensor.int32_data(), out);
    default: return false;
    }
}

bool readFloat(const onnx::TensorProto& tensor, std::vector<float>* out)
{
    switch (tensor.data_type()) {
    case onnx::TensorProto_DataType_FLOAT:
        return readValues<float>(tensor, tensor.float_data(), out);
    case onnx::TensorProto_DataType_DOUBLE:
        return readValues<double>(tensor, tensor.double_data(), out);
    default: return false;
    }
}

onnx::TensorProto makeInt64Tensor(
    const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& values)
{
    return rawTensor(name, onnx::TensorProto_DataType_INT64, dims, values);
}

onnx::TensorProto makeFloatTensor(
    const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values)
{
    return rawTensor(name, onnx::TensorProto_DataType_FLOAT, dims, values);
}

const onnx::AttributeProto* findAttribute(const onnx::NodeProto& node, const std::string& name)
{
    for (const auto& attr : node.attribute())
        if (attr.name() == name)
            return &attr;
    return nullptr;
}

int64_t intAttribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback)
{
    const auto* attr = findAttribute(node, name);
    return attr && attr->type() == onnx::AttributeProto::INT ? attr->i() : fallback;
}

float floatAttribute(const onnx::NodeProto& node, const std::string& name, float fallback)
{
    const auto* attr = findAttribute(node, name);
    return attr && attr->type() == onnx::AttributeProto::FLOAT ? attr->f() : fallback;
}

std::optional<EinsumProduct> einsumAsMatMul(const std::string& equation)
{
    std::string e;
    for (char c : equation)
        if (c != ' ')
            e += c;
    const size_t arrow = e.find("->");
    const size_t comma = e.find(',');
    if (arrow == std::string::npos || comma == std::string::npos || comma > arrow ||
        e.find(',', comma + 1) < arrow)
        return std::nullopt;
    const std::string a = e.substr(0, comma);
    const std::string b = e.substr(comma + 1, arrow - comma - 1);
    const std::string o = e.substr(arrow + 2);
    const size_t r = a.size();
    if (r < 2 || b.size() != r || o.size() != r || a.compare(0, r - 2, b, 0, r - 2) != 0 ||
        a.compare(0, r - 2, o, 0, r - 2) != 0)
        return std::nullopt;
    const char i = a[r - 2];
    const char d = a[r - 1];
    const char j = o[r - 1];
    const bool plain = b[r - 2] == d && b[r - 1] == j;
    const bool transposed = b[r - 2] == j && b[r - 1] == d;
    const std::string letters = a.substr(0, r - 2) + i + d + j;
    for (char c : letters)
        if (std::isalpha(static_cast<unsigned char>(c)) == 0 ||
            std::count(letters.begin(), letters.end(), c) != 1)
            return std::nullopt;
    if (o[r - 2] != i || (!plain && !transposed))
        return std::nullopt;
    return EinsumProduct {r, transposed};
}

std::string stringAttribute(
    const onnx::NodeProto& node, const std::string& name, const std::string& fallback)
{
    const auto* attr = findAttribute(node, name);
    return attr && attr->type() == onnx::AttributeProto::STRING ? attr->s() : fallback;
}

std::vector<int64_t> intsAttribute(const onnx::NodeProto& node, const std::string& name)
{
    const auto* attr = findAttribute(node, name);
    if (!attr || attr->type() != onnx::AttributeProto::INTS)
        return {};
    return {attr->ints().begin(), attr->ints().end()};
}

void setIntAttribute(onnx::NodeProto* node, const std::string& name, int64_t value)
{
    mutableAttribute(node, name, onnx::AttributeProto::INT)->set_i(value);
}

void setFloatAttribute(onnx::NodeProto* node, const std::string& name, float value)
{
    mutableAttribute(node, name, onnx::AttributeProto::FLOAT)->set_f(value);
}

void setIntsAttribute(
    onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values)
{
    auto* attr = mutableAttribute(node, name, onnx::AttributeProto::INTS);
    for (int64_t v : values)
        attr->add_ints(v);
}

void removeAttribute(onnx::NodeProto* node, const std::string& name)
{
    auto* attrs = node->mutable_attribute();
    for (int i = 0; i < attrs->size(); ++i)
        if (attrs->Get(i).name() == name) {
            attrs->DeleteSubrange(i, 1);
            return;
        }
}

int64_t defaultOpset(const onnx::ModelProto& model)
{
    for (const auto& opset : model.opset_import())
        if (opset.domain().empty() || opset.domain() == "ai.onnx")
            return opset.version();
    return 0;
}

namespace {

bool shapeOf(const onnx::ValueInfoProto& value, std::vector<int64_t>* dims)
{
    if (!value.type().has_tensor_type() || !value.type().tensor_type().has_shape())
        return false;
    dims->clear();
    for (const auto& dim : value.type().tensor_type().shape().dim()) {
        if (!dim.has_dim_value() || dim.dim_value() < 0)
            return false;
        dims->push_back(dim.dim_value());
    }
    return true;
}

} // namespace

ShapeIndex::ShapeIndex(const onnx::GraphProto& graph)
{
    initializers_.reserve(static_cast<size_t>(graph.initializer_size()));
    values_.reserve(static_cast<size_t>(graph.input_size()) +
        static_cast<size_t>(graph.value_info_size()) + static_cast<size_t>(graph.output_size()));
    for (const auto& init : graph.initializer())
        initializers_.emplace(init.name(), &init);
    for (const auto* list : {&graph.input(), &graph.value_info(), &graph.output()})
        for (const auto& value : *list)
            if (initializers_.count(value.name()) == 0)
                values_.emplace(value.name(), &value);
}

bool ShapeIndex::staticShape(const std::string& name, std::vector<int64_t>* dims) const
{
    if (const auto it = initializers_.find(name); it != initializers_.end()) {
        dims->assign(it->second->dims().begin(), it->second->dims().end());
        return true;
    }
    const auto it = values_.find(name);
    return it != values_.end() && shapeOf(*it->second, dims);
}

int ShapeIndex::rank(const std::string& name) const
{
    if (const auto it = initializers_.find(name); it != initializers_.end())
        return it->second->dims_size();
    const auto it = values_.find(name);
    if (it == values_.end() || !it->second->type().tensor_type().has_shape())
        return -1;
    return it->second->type().tensor_type().shape().dim_size();
}

const onnx::ValueInfoProto* ShapeIndex::valueInfo(const std::string& name) const
{
    const auto it = values_.find(name);
    return it == values_.end() ? nullptr : it->second;
}

GraphIndex::GraphIndex(const onnx::GraphProto& graph) : graph_(graph)
{
    initializers_.reserve(static_cast<size_t>(graph.initializer_size()));
    for (int i = 0; i < graph.initializer_size(); ++i)
        initializers_.emplace(graph.initializer(i).name(), i);
    for (int i = 0; i < graph.output_size(); ++i)
        outputs_.emplace(graph.output(i).name(), i);
    for (int i = 0; i < graph.input_size(); ++i)
        if (initializers_.count(graph.input(i).name()) == 0)
            inputs_.emplace(graph.input(i).name(), i);
}

void GraphIndex::indexNodes() const
{
    if (nodesIndexed_)
        return;
    nodesIndexed_ = true;
    // Sized once: rehashing as 100,000s of values arrive costs more than the inserts.
    producers_.reserve(static_cast<size_t>(graph_.node_size()));
    consumers_.reserve(static_cast<size_t>(graph_.node_size()));
    for (int i = 0; i < graph_.node_size(); ++i) {
        const auto& node = graph_.node(i);
        for (const auto& out : node.output())
            if (!out.empty())
                producers_.emplace(out, i);
        for (const auto& in : node.input())
            if (!in.empty()) {
                auto& list = consumers_[in];
                if (list.empty() || list.back() != i)
                    list.push_back(i);
            }
    }
}

const onnx::TensorProto* GraphIndex::initializer(const std::string& name) const
{
    const auto it = initializers_.find(name);
    return it == initializers_.end() ? nullptr : &graph_.initializer(it->second);
}

int GraphIndex::producer(const std::string& value) const
{
    indexNodes();
    const auto it = producers_.find(value);
    return it == producers_.end() ? -1 : it->second;
}

const std::vector<int>& GraphIndex::consumers(const std::string& value) const
{
    indexNodes();
    const auto it = consumers_.find(value);
    return it == consumers_.end() ? none_ : it->second;
}

bool GraphIndex::isGraphOutput(const std::string& value) const
{
    return outputs_.count(value) != 0;
}

bool GraphIndex::isGraphInput(const std::string& value) const
{
    return inputs_.count(value) != 0;
}

void removeNodes(onnx::GraphProto* graph, const std::vector<bool>& drop)
{
    size_t index = 0;
    keepOnly(graph->mutable_node(), [&](const onnx::NodeProto& /*node*/) {
        const size_t i = index++;
        return i >= drop.size() || !drop[i];
    });
}

onnx::TensorProto* mutableInitializer(onnx::GraphProto* graph, const std::string& name)
{
    for (auto& init : *graph->mutable_initializer())
        if (init.name() == name)
            return &init;
    return nullptr;
}

void forEachInputName(onnx::GraphProto* graph, const std::function<void(std::string*)>& fn)
{
    for (auto& node : *graph->mutable_node()) {
        for (auto& in : *node.mutable_input())
            fn(&in);
        for (auto& attr : *node.mutable_attribute()) {
            if (attr.has_g())
                forEachInputName(attr.mutable_g(), fn);
            for (auto& g : *attr.mutable_graphs())
                forEachInputName(&g, fn);
        }
    }
}

void forEachInputName(
    const onnx::GraphProto& graph, const std::function<void(const std::string&)>& fn)
{
    for (const auto& node : graph.node()) {
        for (const auto& in : node.input())
            fn(in);
        for (const auto& attr : node.attribute()) {
            if (attr.has_g())
                forEachInputName(attr.g(), fn);
            for (const auto& g : attr.graphs())
                forEachInputName(g, fn);
        }
    }
}

UniqueNames::UniqueNames(const onnx::GraphProto& graph)
{
    for (const auto& init : graph.initializer())
        used_.emplace(init.name(), 1);
    for (const auto& node : graph.node()) {
        used_.emplace(node.name(), 1);
        for (const auto& out : node.output())
            used_.emplace(out, 1);
    }
    for (const auto& in : graph.input())
        used_.emplace(in.name(), 1);
}

std::string UniqueNames::make(const std::string& base)
{
    const auto it = used_.find(base);
    if (it == used_.end()) {
        used_.emplace(base, 1);
        return base;
    }
    // Suffixes are tried from where the last search for this base stopped: each call is constant
    // time on average, however many names were made from the same base.
    for (int& next = it->second;; ++next) {
        std::string candidate = base + "_" + std::to_string(next);
        if (used_.emplace(candidate, 1).second) {
            ++next;
            return candidate;
        }
    }
}

namespace {
constexpr const char* kDequantizedPrefix = "jetagent: dequantized int8, axis ";
}

std::string dequantizedNote(const DequantizedScales& note)
{
    std::string text = kDequantizedPrefix + std::to_string(note.axis) + ", scales";
    for (float s : note.scales)
        text += formatText(" %a", static_cast<double>(s)); // hex: reads back exactly
    return text;
}

std::optional<DequantizedScales> parseDequantizedNote(const std::string& doc)
{
    const std::string prefix = kDequantizedPrefix;
    if (doc.compare(0, prefix.size(), prefix) != 0)
        return std::nullopt;
    DequantizedScales note;
    const char* p = doc.c_str() + prefix.size();
    char* end = nullptr;
    note.axis = std::strtoll(p, &end, 10);
    if (end == p || std::strncmp(end, ", scales", 8) != 0)
        return std::nullopt;
    p = end + 8;
    while (*p == ' ') {
        const float s = std::strtof(p + 1, &end);
        if (end == p + 1)
            return std::nullopt;
        note.scales.push_back(s);
        p = end;
    }
    if (*p || note.scales.empty())
        return std::nullopt;
    return note;
}

} // namespace onnxutil
} // namespace jetagent
