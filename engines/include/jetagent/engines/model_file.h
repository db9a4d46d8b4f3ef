// An ONNX model file read, checked and described: inputs, outputs, opset, identity (SHA-256).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jetagent/base/status.h"
#include "jetagent/engines/tensor.h"

namespace onnx {
class ModelProto;
}

namespace jetagent {

struct ModelFile {
    std::string path;
    // The parsed model with any external data read in, checked and with shapes inferred. Backends
    // never see it directly: they get a prepared copy (model_prepare.h).
    std::shared_ptr<const onnx::ModelProto> proto;
    std::string sha256; // of the file's bytes, then each external data file's: identifies the
                        // model in logs and caches (lower-case hex)
    uint64_t fileBytes = 0; // the .onnx file's size
    uint64_t externalBytes = 0; // tensor data read from external files
    int64_t irVersion = 0;
    int64_t opset = 0; // of the default ("ai.onnx") domain
    std::string producer; // "pytorch 1.13.1"
    std::vector<TensorInfo> inputs; // graph inputs that are not initializers
    std::vector<TensorInfo> outputs;
    std::vector<std::string> warnings; // things worth telling the user that do not stop loading
};

// Reads `path` with the ONNX protobuf library, reads external tensor data from files next to it,
// checks the graph (structure, operators, the ONNX checker, shape inference) and describes it.
// Errors name the file and say what failed: missing (NotFound); empty, truncated, not ONNX, too
// new for this build's ONNX library, a node input nothing produces, a cycle, an unknown operator,
// a checker or shape-inference failure (InvalidInput).
Expected<std::shared_ptr<const ModelFile>> loadModelFile(const std::string& path);

// The same from bytes already in memory; `path` names them in messages and locates external data.
Expected<std::shared_ptr<const ModelFile>> parseModelBytes(
    const std::vector<char>& bytes, const std::string& path);

// Whether the model brings its own int8 quantization: QuantizeLinear or DequantizeLinear nodes (a
// QDQ model, as PyTorch's and ONNX Runtime's quantization tools export). Backends then take the
// scales from it (explicit quantization) instead of calibrating.
bool isQdqModel(const ModelFile& model);

// Checks an in-memory model as loadModelFile does (without the ONNX checker when `runChecker` is
// false) and sorts its nodes topologically if the file had them out of order. `path` names it.
Status checkModel(onnx::ModelProto& model, const std::string& path, bool runChecker);

} // namespace jetagent
