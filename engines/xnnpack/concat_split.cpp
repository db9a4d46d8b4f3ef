// Channel concatenations that a 1x1 convolution or a max pooling alone reads, rewritten so that
// they are never made (graph_compiler.h: splitConcatBeforeConv).
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "../onnx/onnx_util.h"
#include "graph_compiler.h"

namespace jetagent {
namespace xnnplan {

namespace {

// The dims of `name` if its value_info (or a graph input's) gives them all, else empty.
std::vector<int64_t> knownDims(const onnx::GraphProto& graph, const std::string& name)
{
    for (const auto* list : {&graph.value_info(), &graph.input()})
        for (const auto& v : *list) {
            if (v.name() != name)
                continue;
            std::vector<int64_t> dims;
            for (const auto& d : v.type().tensor_type().shape().dim()) {
                if (!d.has_dim_value())
                    return {};
                dims.push_back(d.dim_value());
            }
            return dims;
        }
    return {};
}

const onnx::ValueInfoProto* valueInfo(const onnx::GraphProto& graph, const std::string& name)
{
    for (const auto& v : graph.value_info())
        if (v.name() == name)
            return &v;
    return nullptr;
}

// A 1x1 convolution of one group, unit strides and dilations, no padding.
bool isPointwise(const onnx::NodeProto& conv)
{
    for (const auto& a : conv.attribute()) {
        if (a.name() == "group" && a.i() != 1)
            return false;
        if (a.name() == "auto_pad" && a.s() != "NOTSET")
            return false;
        if (a.name() == "kernel_shape" || a.name() == "strides" || a.name() == "dilations" ||
            a.name() == "pads")
            for (int64_t v : a.ints())
                if (v != (a.name() == "pads" ? 0 : 1))
                    return false;
    }
    return true;
}

// The rows [from, from + count) of each output channel's input channels of `w` ([M][C][1][1]).
onnx::TensorProto weightColumns(const std::string& name, const std::vector<float>& w, int64_t m,
    int64_t c, int64_t from, int64_t count)
{
    std::vector<float> part(static_cast<size_t>(m * count));
    for (int64_t o = 0; o < m; ++o)
        std::memcpy(&part[static_cast<size_t>(o * count)], &w[static_cast<size_t>(o * c + from)],
            static_cast<size_t>(count) * sizeof(float));
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {m, count, int64_t {1}, int64_t {1}})
        t.add_dims(d);
    t.set_raw_data(part.data(), part.size() * sizeof(float));
    return t;
}

// One pass over a graph: finds the nodes to replace, then rebuilds the node list once.
class Rewrite {
public:
    explicit Rewrite(onnx::GraphProto* graph) : graph_(graph)
    {
        for (int i = 0; i < graph->node_size(); ++i) {
            for (const auto& in : graph->node(i).input())
                ++readers_[in];
            for (const auto& out : graph->node(i).output())
                producer_[out] = i;
        }
        for (const auto& out : graph->output())
            ++readers_[out.name()];
        dropped_.assign(static_cast<size_t>(graph->node_size()), false);
    }

    // The channel concatenation of two values of rank 4 that `reader`'s first input is and that
    // `reader` alone reads, with their dims; nullptr when it is not one.
    const onnx::NodeProto* soleChannelConcat(
        const onnx::NodeProto& reader, std::vector<int64_t>* a, std::vector<int64_t>* b)
    {
        if (reader.input_size() < 1)
            return nullptr;
        const auto from = producer_.find(reader.input(0));
        if (from == producer_.end() || readers_[reader.input(0)] != 1)
            return nullptr;
        const onnx::NodeProto& concat = graph_->node(from->second);
        if (concat.op_type() != "Concat" || !concat.domain().empty() || concat.input_size() != 2 ||
            concat.input(0) == concat.input(1))
            return nullptr;
        int64_t axis = 0;
        for (const auto& attr : concat.attribute())
            if (attr.name() == "axis")
                axis = attr.i();
        *a = knownDims(*graph_, concat.input(0));
        *b = knownDims(*graph_, concat.input(1));
        if (a->size() != 4 || b->size() != 4 || (axis != 1 && axis != -3))
            return nullptr;
        return &concat;
    }

    // Node `index` becomes `nodes`, and the concatenation it read is dropped.
    void replace(int index, const onnx::NodeProto& concat, std::vector<onnx::NodeProto> nodes)
    {
        dropped_[static_cast<size_t>(producer_.at(concat.output(0)))] = true;
        replacing_[index] = std::move(nodes);
    }
    void addValueInfo(onnx::ValueInfoProto info) { infos_.push_back(std::move(info)); }
    void addInitializer(onnx::TensorProto t) { weights_.push_back(std::move(t)); }

    // Rebuilds the graph's nodes in their order with the replacements; returns how many.
    int apply()
    {
        if (replacing_.empty())
            return 0;
        std::vector<onnx::NodeProto> nodes;
        for (int i = 0; i < graph_->node_size(); ++i) {
            if (dropped_[static_cast<size_t>(i)])
                continue;
            const auto parts = replacing_.find(i);
            if (parts == replacing_.end())
                nodes.push_back(graph_->node(i));
            else
                nodes.insert(nodes.end(), parts->second.begin(), parts->second.end());
        }
        graph_->clear_node();
        for (auto& n : nodes)
            *graph_->add_node() = std::move(n);
        for (auto& t : weights_)
            *graph_->add_initializer() = std::move(t);
        for (auto& v : infos_)
            *graph_->add_value_info() = std::move(v);
        return static_cast<int>(replacing_.size());
    }

private:
    onnx::GraphProto* graph_;
    std::unordered_map<std::string, int> readers_, producer_;
    std::vector<bool> dropped_;
    std::unordered_map<int, std::vector<onnx::NodeProto>> replacing_;
    std::vector<onnx::ValueInfoProto> infos_;
    std::vector<onnx::TensorProto> weights_;
};

// Each channel concatenation of two values that a MaxPool alone reads becomes a MaxPool of each
// value and the concatenation of the two results (max pooling works channel by channel): the
// concatenation, 4 times smaller after a 2x2-stride pooling, may then be read by a 1x1
// convolution that splits it (SqueezeNet's fire modules before a pooling). Returns how many.
int poolBeforeConcat(onnx::GraphProto* graph)
{
    Rewrite rewrite(graph);
    for (int pi = 0; pi < graph->node_size(); ++pi) {
        const onnx::NodeProto& pool = graph->node(pi);
        if (pool.op_type() != "MaxPool" || !pool.domain().empty() || pool.output_size() != 1 ||
            pool.input_size() != 1)
            continue;
        std::vector<int64_t> a, b;
        const onnx::NodeProto* concat = rewrite.soleChannelConcat(pool, &a, &b);
        if (!concat)
            continue;
        const onnx::ValueInfoProto* y = valueInfo(*graph, pool.output(0));
        if (!y || y->type().tensor_type().shape().dim_size() != 4)
            continue;
        const std::string base = pool.output(0) + "#pooled-part";
        std::vector<onnx::NodeProto> nodes;
        onnx::NodeProto joined = *concat;
        for (int part = 0; part < 2; ++part) {
            onnx::NodeProto piece = pool;
            piece.set_name(pool.name() + "/part" + std::to_string(part));
            piece.set_input(0, concat->input(part));
            piece.set_output(0, base + std::to_string(part));
            nodes.push_back(std::move(piece));
            onnx::ValueInfoProto info = *y;
            info.set_name(base + std::to_string(part));
            info.mutable_type()
                ->mutable_tensor_type()
                ->mutable_shape()
                ->mutable_dim(1)
                ->set_dim_value(part == 0 ? a[1] : b[1]);
            rewrite.addValueInfo(std::move(info));
            joined.set_input(part, base + std::to_string(part));
        }
        joined.set_name(concat->name() + "/pooled");
        joined.set_output(0, pool.output(0));
        nodes.push_back(std::move(joined));
        rewrite.replace(pi, *concat, std::move(nodes));
    }
    return rewrite.apply();
}

} // namespace

int splitConcatBeforeConv(onnx::ModelProto* model)
{
    onnx::GraphProto* graph = model->mutable_graph();
    poolBeforeConcat(graph);
    std::unordered_map<std::string, const onnx::TensorProto*> initializers;
    for (const auto& t : graph->initializer())
        initializers[t.name()] = &t;
    for (const auto& in : graph->input())
        initializers.erase(in.name()); // a default a caller may replace is not a constant

    Rewrite rewrite(graph);
    for (int ci = 0; ci < graph->node_size(); ++ci) {
        const onnx::NodeProto& conv = graph->node(ci);
        if (conv.op_type() != "Conv" || !conv.domain().empty() || conv.input_size() < 2 ||
            conv.output_size() != 1 || !isPointwise(conv))
            continue;
        std::vector<int64_t> a, b;
        const onnx::NodeProto* concat = rewrite.soleChannelConcat(conv, &a, &b);
        if (!concat)
            continue; // the value_info lookups below scan the graph's list: only for candidates
        const onnx::ValueInfoProto* y = valueInfo(*graph, conv.output(0));
        const auto w = initializers.find(conv.input(1));
        if (!y || w == initializers.end())
            continue;
        std::vector<float> kernel;
        if (w->second->dims_size() != 4 || !onnxutil::readFloat(*w->second, &kernel))
            continue;
        const int64_t m = w->second->dims(0), c = w->second->dims(1);
        if (c != a[1] + b[1] || kernel.size() != static_cast<size_t>(m * c))
            continue;
        // The parts write the output twice and the second reads it back (the sum): more than
        // the concatenation's copy where the output is the wider. squeezenet1_1's classifier (512
        // channels to 1000 at 13x13) took 0.65 ms split, 0.49 ms whole.
        if (m > c)
            continue;

        const std::string base = conv.output(0) + "#concat-part";
        std::vector<onnx::NodeProto> nodes;
        onnx::NodeProto add;
        add.set_name(conv.name() + "/sum");
        add.set_op_type("Add");
        add.add_output(conv.output(0));
        for (int part = 0; part < 2; ++part) {
            const std::string name = base + std::to_string(part);
            onnx::NodeProto piece = conv;
            piece.set_name(conv.name() + "/part" + std::to_string(part));
            piece.set_input(0, concat->input(part));
            piece.set_input(1, name + "/w");
            piece.set_output(0, name);
            while (part == 1 && piece.input_size() > 2)
                piece.mutable_input()->RemoveLast(); // the bias once, in the first part
            nodes.push_back(std::move(piece));
            add.add_input(name);
            rewrite.addInitializer(weightColumns(
                name + "/w", kernel, m, c, part == 0 ? 0 : a[1], part == 0 ? a[1] : b[1]));
            onnx::ValueInfoProto info = *y;
            info.set_name(name);
            rewrite.addValueInfo(std::move(info));
        }
        nodes.push_back(std::move(add));
        rewrite.replace(ci, *concat, std::move(nodes));
    }
    return rewrite.apply();
}

} // namespace xnnplan
} // namespace jetagent
