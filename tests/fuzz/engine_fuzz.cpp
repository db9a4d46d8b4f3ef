// Fuzz target: the CPU engine's graph compiler (the xnnpack backend). A small valid model is made
// from the input (model_generator.h), checked, prepared and compiled in fp32 or fp16, with fusion
// and oneDNN on or off, and run once; in fp32 the fused engine must agree with the unfused one.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "jetagent/engines/engine.h"
#include "jetagent/engines/model_file.h"
#include "model_generator.h"

namespace {

using namespace jetagent;

constexpr size_t kMaxInputBytes = 1024;
constexpr int kMaxLayers = 8;
// Fused and unfused fp32 engines round differently (a fused bias or residual, another
// convolution library); beyond this share of the output's range they compute something else.
constexpr double kAgreement = 1e-3;

using jetagent::fuzz::fail;

bool xnnpackAvailable()
{
    for (const BackendInfo& backend : listBackends())
        if (backend.name == "xnnpack")
            return backend.available;
    return false;
}

// Builds and runs the engine on `input`; the first output's values, or nothing when the engine
// refuses the model (with its reason).
std::vector<float> runOnce(const std::shared_ptr<const ModelFile>& model,
    const EngineOptions& options, std::vector<float>& input, const std::vector<int64_t>& dims)
{
    auto engine = buildEngine(model, options);
    if (!engine) {
        if (engine.status().message().empty())
            fail("a refused model must say why");
        return {};
    }
    auto session = engine.value()->createSession();
    if (!session)
        fail("a built engine gave no session: " + session.status().message());
    TensorView view;
    view.data = input.data();
    for (int64_t d : dims)
        view.shape.dims[static_cast<size_t>(view.shape.rank++)] = d;
    if (Status run = session.value()->run(&view, 1, nullptr); !run)
        fail("a built engine failed to run: " + run.message());
    if (session.value()->outputCount() == 0)
        fail("a built engine has no output");
    const ConstTensorView output = session.value()->output(0);
    return std::vector<float>(output.data, output.data + output.shape.elementCount());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    static const bool available = xnnpackAvailable();
    if (!available || size > kMaxInputBytes)
        return -1;
    fuzz::ByteReader in(data, size);
    const fuzz::GeneratedModel generated = fuzz::generateModel(in, kMaxLayers);
    EngineOptions options;
    options.backend = "xnnpack";
    options.threads = 1;
    options.precision = in.flag() ? Precision::Fp16 : Precision::Fp32;
    options.onednn = in.flag();
    options.fusion = in.flag();

    const std::vector<char> bytes(generated.bytes.begin(), generated.bytes.end());
    auto model = parseModelBytes(bytes, fuzz::scratchDirectory() + "/generated.onnx");
    if (!model)
        return -1; // the generator made something the checks refuse: nothing to compile

    std::vector<float> input(static_cast<size_t>(
        generated.inputDims[1] * generated.inputDims[2] * generated.inputDims[3]));
    for (size_t i = 0; i < input.size(); ++i)
        input[i] = static_cast<float>(static_cast<int>(i % 17) - 8) / 4.0f;
    const std::vector<float> first = runOnce(model.value(), options, input, generated.inputDims);
    if (first.empty() || options.precision != Precision::Fp32 || !options.fusion)
        return 0;

    options.fusion = false;
    const std::vector<float> unfused = runOnce(model.value(), options, input, generated.inputDims);
    if (unfused.size() != first.size())
        fail("fused and unfused engines give outputs of different sizes");
    double range = 1.0;
    for (float v : unfused)
        if (std::isfinite(v))
            range = std::max(range, std::fabs(static_cast<double>(v)));
    for (size_t i = 0; i < first.size(); ++i) {
        if (!std::isfinite(first[i]) || !std::isfinite(unfused[i]))
            continue;
        if (std::fabs(static_cast<double>(first[i]) - unfused[i]) > kAgreement * range)
            fail("output " + std::to_string(i) + ": fused " + std::to_string(first[i]) +
                ", unfused " + std::to_string(unfused[i]));
    }
    return 0;
}
