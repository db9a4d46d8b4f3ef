// jetagent_prepare_bench: how loading and preparing a model scales with its node count, on chains
// of N Identity (or Relu) nodes built here: load (parse and check) and each preparation pass timed.
//
//   jetagent_prepare_bench [--op Identity|Relu] [--backend xnnpack|opencv|tensorrt] N...
//
// Every pass should grow linearly: the time per node printed beside each figure stays flat as N
// grows where it does, and climbs with N where a pass is quadratic.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "jetagent/base/clock.h"
#include "jetagent/engines/model_file.h"
#include "jetagent/engines/model_prepare.h"

namespace jetagent {
namespace {

constexpr int64_t kWidth = 16; // elements of the value the chain passes along

void addValue(onnx::ValueInfoProto* v, const std::string& name)
{
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(1);
    t->mutable_shape()->add_dim()->set_dim_value(kWidth);
}

// x -> op -> v1 -> op -> ... -> y: `nodes` nodes in all.
std::vector<char> chainModel(const std::string& op, int nodes)
{
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.set_producer_name("jetagent_prepare_bench");
    model.add_opset_import()->set_version(13);
    auto* graph = model.mutable_graph();
    graph->set_name("chain");
    addValue(graph->add_input(), "x");
    addValue(graph->add_output(), "y");
    for (int i = 0; i < nodes; ++i) {
        auto* node = graph->add_node();
        node->set_op_type(op);
        node->add_input(i == 0 ? "x" : "v" + std::to_string(i));
        node->add_output(i + 1 == nodes ? "y" : "v" + std::to_string(i + 1));
    }
    const std::string bytes = model.SerializeAsString();
    return {bytes.begin(), bytes.end()};
}

int run(int argc, char** argv)
{
    std::string op = "Identity";
    std::string backend = "xnnpack";
    std::vector<int> sizes;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--op" && i + 1 < argc)
            op = argv[++i];
        else if (arg == "--backend" && i + 1 < argc)
            backend = argv[++i];
        else if (arg.rfind("--", 0) == 0 || std::atoi(arg.c_str()) <= 0) {
            std::fprintf(stderr,
                "usage: %s [--op Identity|Relu] [--backend xnnpack|opencv|tensorrt] N...\n",
                argv[0]);
            return 2;
        } else
            sizes.push_back(std::atoi(arg.c_str()));
    }
    if (sizes.empty())
        sizes = {5000, 20000};
    std::printf("chains of %s nodes, [1,%lld] float, prepared for %s (no cache)\n", op.c_str(),
        static_cast<long long>(kWidth), backend.c_str());
    for (int n : sizes) {
        const std::vector<char> bytes = chainModel(op, n);
        const int64_t start = monotonicNs();
        auto model = parseModelBytes(bytes, "chain.onnx");
        const int64_t loadNs = monotonicNs() - start;
        if (!model) {
            std::fprintf(stderr, "%d nodes: %s\n", n, model.status().message().c_str());
            return 1;
        }
        PrepareOptions options;
        options.backend = backend;
        auto prepared = prepareModel(*model.value(), options);
        if (!prepared) {
            std::fprintf(stderr, "%d nodes: %s\n", n, prepared.status().message().c_str());
            return 1;
        }
        auto line = [n](const std::string& what, int64_t ns) {
            std::printf("  %-22s %9.1f ms  %7.2f us/node\n", what.c_str(), nsToMs(ns),
                static_cast<double>(ns) / 1000.0 / n);
        };
        std::printf("%d nodes (%.1f MB): %d nodes after preparation\n", n, bytes.size() / 1e6,
            prepared->nodesAfter);
        line("load and check", loadNs);
        for (const auto& pass : prepared->passes)
            line(pass.pass, pass.ns);
        line("prepare (all passes)", prepared->ns);
        std::fflush(stdout);
    }
    return 0;
}

} // namespace
} // namespace jetagent

int main(int argc, char** argv)
{
    return jetagent::run(argc, argv);
}
