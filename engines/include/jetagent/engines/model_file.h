// An ONNX model file read into memory, checked, and described (inputs, outputs, opset, hash).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jetagent/base/status.h"
#include "jetagent/engines/tensor.h"

namespace jetagent {

struct ModelFile {
    std::string path;
    std::vector<char>
        bytes; // the file as read; backends parse from here, never from the path again
    std::string sha256; // of bytes, lower-case hex: identifies the model in logs and caches
    int64_t irVersion = 0;
    int64_t opset = 0; // of the default ("ai.onnx") domain
    std::string producer; // "pytorch 1.13.1"
    std::vector<TensorInfo> inputs; // graph inputs that are not initializers
    std::vector<TensorInfo> outputs;
};

// Reads and parses `path` with the ONNX protobuf library. Errors name the file and say what failed:
// missing (NotFound), empty, truncated or not ONNX, no graph inputs or outputs (InvalidInput).
Expected<std::shared_ptr<const ModelFile>> loadModelFile(const std::string& path);

// The same from bytes already in memory; `path` only names them in messages.
Expected<std::shared_ptr<const ModelFile>> parseModelBytes(
    std::vector<char> bytes, const std::string& path);

} // namespace jetagent
