// Fuzz target: ONNX model files, as `jetagent inspect --prepared` reads them (parsing, the
// checks, shape inference, parameter and MAC counts, the text and JSON reports) and as each
// backend's preparation rewrites them (every pass, with a fixed and a free batch).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "fuzz_support.h"
#include "inspect.h"
#include "jetagent/engines/model_file.h"
#include "jetagent/engines/model_prepare.h"

namespace {

using namespace jetagent;

// Small models only: the fuzzer's mutations of a big one cost time without new paths, and
// preparation is only required to be near-linear, which long chains would test, not find.
constexpr size_t kMaxModelBytes = 64 * 1024;
constexpr int kMaxNodes = 64;

using jetagent::fuzz::fail;

int countNodes(const onnx::GraphProto& graph)
{
    int nodes = graph.node_size();
    for (const auto& node : graph.node())
        for (const auto& attribute : node.attribute()) {
            if (attribute.has_g())
                nodes += countNodes(attribute.g());
            for (const auto& g : attribute.graphs())
                nodes += countNodes(g);
        }
    return nodes;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size > kMaxModelBytes)
        return -1;
    {
        onnx::ModelProto peek;
        if (peek.ParseFromArray(data, static_cast<int>(size)) && peek.has_graph() &&
            countNodes(peek.graph()) > kMaxNodes)
            return -1;
    }
    const std::string path = fuzz::scratchDirectory() + "/model.onnx";
    fuzz::writeFileOrDie(path, std::string(reinterpret_cast<const char*>(data), size));

    for (const bool json : {false, true}) {
        InspectOptions options;
        options.model = path;
        options.json = json;
        options.prepared = true;
        options.backend = "opencv"; // its passes without building an engine; see below for others
        std::string report;
        const Status inspected = inspectModel(options, &report);
        if (!inspected) {
            if (inspected.message().empty())
                fail("a refused model must say why");
            return 0;
        }
        if (report.empty())
            fail("inspect accepted a model and reported nothing");
    }

    const std::vector<char> bytes(data, data + size);
    auto model = parseModelBytes(bytes, path);
    if (!model)
        fail("inspect accepted a model that parseModelBytes refuses: " + model.status().message());
    for (const char* backend : {"xnnpack", "tensorrt"})
        for (const int64_t batch : {int64_t {1}, int64_t {0}}) {
            PrepareOptions options;
            options.backend = backend;
            options.batch = batch;
            auto prepared = prepareModel(*model.value(), options);
            if (!prepared && prepared.status().message().empty())
                fail("a refused preparation must say why");
            if (!prepared)
                continue;
            // What a backend is given must pass the same checks.
            const std::vector<char> rewritten(prepared->bytes->begin(), prepared->bytes->end());
            auto again = parseModelBytes(rewritten, path);
            if (!again)
                fail(std::string("the ") + backend + " preparation (batch " +
                    std::to_string(batch) +
                    ") made a model the checks refuse: " + again.status().message());
        }
    return 0;
}
