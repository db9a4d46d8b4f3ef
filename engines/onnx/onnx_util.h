// Small helpers over the ONNX protobuf types, shared by the model loader, inspector and passes.
// Internal to engines/: public headers never expose the protobuf types' layout.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h>

namespace onnx {
class ISchemaRegistry;
}

namespace jetagent {
namespace onnxutil {

// ONNX's operator schemas for shape inference, with checks added to the inference of operators
// whose ONNX 1.12 implementation indexes by an attribute it never checks (model_validate.cpp).
// Every onnx::shape_inference::InferShapes call in jetagent passes this registry.
const onnx::ISchemaRegistry* checkedSchemaRegistry();

// A node named for messages: "Conv 'Conv_12'", or "Conv (node 12)" when it has no name.
std::string nodeLabel(const onnx::NodeProto& node, int index);

// Element count of a tensor's declared dims (1 for a scalar).
int64_t elementCount(const onnx::TensorProto& tensor);

// Reads a tensor's values whatever field holds them (raw_data or the typed repeated field).
// int64 reads INT64, INT32, INT16, INT8, UINT8 and BOOL tensors; float reads FLOAT and DOUBLE.
// False for other types, for external data, or for a byte size that does not match the dims.
bool readInt64(const onnx::TensorProto& tensor, std::vector<int64_t>* out);
bool readFloat(const onnx::TensorProto& tensor, std::vector<float>* out);

// Tensors with data in raw_data, as exporters write them.
onnx::TensorProto makeInt64Tensor(
    const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& values);
onnx::TensorProto makeFloatTensor(
    const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values);

// What the constant folder writes as the doc_string of a float initializer it made from
// DequantizeLinear of int8 values with zero point 0 (a QDQ model's weights): their scales and the
// axis they run along (-1: one scale for the whole tensor), so that an int8 backend can take the
// model's own integers back exactly (weight / scale) instead of choosing new ones.
struct DequantizedScales {
    int64_t axis = -1;
    std::vector<float> scales;
};
std::string dequantizedNote(const DequantizedScales& note);
// nullopt for any other doc_string.
std::optional<DequantizedScales> parseDequantizedNote(const std::string& doc);

// Attributes by name; nullptr / the fallback when absent.
const onnx::AttributeProto* findAttribute(const onnx::NodeProto& node, const std::string& name);
int64_t intAttribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback);
float floatAttribute(const onnx::NodeProto& node, const std::string& name, float fallback);
// An Einsum equation that spells a batched matrix product of two operands: the same batch
// letters in the same order on both operands and the output, then [i, d] x [d, j] -> [i, j]
// (transposeB false) or [i, d] x [j, d] -> [i, j] (transposeB true). Blanks are ignored; no
// ellipsis. `rank` is the operands' rank. nullopt for any other equation.
struct EinsumProduct {
    size_t rank = 0;
    bool transposeB = false;
};
std::optional<EinsumProduct> einsumAsMatMul(const std::string& equation);

std::string stringAttribute(
    const onnx::NodeProto& node, const std::string& name, const std::string& fallback);
std::vector<int64_t> intsAttribute(const onnx::NodeProto& node, const std::string& name);
void setIntAttribute(onnx::NodeProto* node, const std::string& name, int64_t value);
void setFloatAttribute(onnx::NodeProto* node, const std::string& name, float value);
void setIntsAttribute(
    onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values);
void removeAttribute(onnx::NodeProto* node, const std::string& name);

// The opset of the default ("" / "ai.onnx") domain; 0 when the model does not import it.
int64_t defaultOpset(const onnx::ModelProto& model);

// The declared and inferred shapes of a graph's values (initializers, then graph inputs,
// value_info and graph outputs: the first that names a value wins), indexed once so that each
// lookup is constant time. Pointers into the graph: rebuild after value_info or the lists change.
class ShapeIndex {
public:
    explicit ShapeIndex(const onnx::GraphProto& graph);

    // The static shape of a value. False when the value is unknown or has a symbolic or missing
    // dimension.
    bool staticShape(const std::string& name, std::vector<int64_t>* dims) const;
    // The rank of a value whose shape (static or not) is known; -1 otherwise.
    int rank(const std::string& name) const;
    // The declared type of a value from inputs, value_info or outputs; nullptr when none.
    const onnx::ValueInfoProto* valueInfo(const std::string& name) const;

private:
    std::unordered_map<std::string, const onnx::TensorProto*> initializers_;
    std::unordered_map<std::string, const onnx::ValueInfoProto*> values_;
};

// Name → index maps of a graph, built once and used for lookups. Indices go stale when the graph
// changes; rebuild after editing. The node maps (producer, consumers) are built on their first
// use: passes that never ask for them (most, on most graphs) do not pay for them.
struct GraphIndex {
    explicit GraphIndex(const onnx::GraphProto& graph);

    const onnx::TensorProto* initializer(const std::string& name) const;
    int producer(const std::string& value) const; // node index, -1 for none
    const std::vector<int>& consumers(const std::string& value) const; // node indices
    bool isGraphOutput(const std::string& value) const;
    bool isGraphInput(const std::string& value) const; // a real input, not an initializer

private:
    void indexNodes() const;

    const onnx::GraphProto& graph_;
    std::unordered_map<std::string, int> initializers_;
    mutable bool nodesIndexed_ = false;
    mutable std::unordered_map<std::string, int> producers_;
    mutable std::unordered_map<std::string, std::vector<int>> consumers_;
    std::unordered_map<std::string, int> outputs_;
    std::unordered_map<std::string, int> inputs_;
    std::vector<int> none_;
};

// Keeps the elements of `list` whose `keep` is true, in order, in one pass that asks `keep` about
// each element once, first to last (deleting them one at a time would move the rest each time:
// quadratic on large graphs).
template <typename T, typename Keep>
void keepOnly(google::protobuf::RepeatedPtrField<T>* list, Keep keep)
{
    const int total = list->size();
    int kept = 0;
    for (int i = 0; i < total; ++i) {
        if (!keep(list->Get(i)))
            continue;
        if (kept != i)
            list->SwapElements(kept, i);
        ++kept;
    }
    if (kept < total)
        list->DeleteSubrange(kept, total - kept);
}

// Removes the nodes marked in `drop` (indexed like graph.node()), keeping the others' order.
void removeNodes(onnx::GraphProto* graph, const std::vector<bool>& drop);

// Mutable initializer by name; nullptr when absent. Linear in the number of initializers.
onnx::TensorProto* mutableInitializer(onnx::GraphProto* graph, const std::string& name);

// Calls `fn(input name)` for every input of every node, including nodes of subgraphs (If/Loop
// bodies), which may read values of the enclosing graph.
void forEachInputName(onnx::GraphProto* graph, const std::function<void(std::string*)>& fn);
void forEachInputName(
    const onnx::GraphProto& graph, const std::function<void(const std::string&)>& fn);

// Names not yet used by any value or node of a graph, built from a base name. The graph's names
// are collected once; each name handed out is remembered, so later ones differ from it too.
class UniqueNames {
public:
    explicit UniqueNames(const onnx::GraphProto& graph);
    std::string make(const std::string& base);

private:
    std::unordered_map<std::string, int> used_; // name -> next suffix to try after it
};

} // namespace onnxutil
} // namespace jetagent
