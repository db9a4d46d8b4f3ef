// TensorRTEngine: plans built by TensorRT from the prepared ONNX model, run on the GPU or a DLA
// core (internal to the tensorrt plugin; built only where TensorRT and CUDA were found).
#pragma once

#include <memory>
#include <string>

#include "jetagent/engines/engine.h"
#include "jetagent/engines/model_prepare.h"

namespace jetagent {

Expected<std::shared_ptr<const Engine>> buildTensorRTEngine(std::shared_ptr<const ModelFile> model,
    const PreparedModel& prepared, const EngineOptions& options);
bool tensorRTAvailable(); // the library loads and a CUDA device is present
std::string tensorRTDetails(); // versions and the GPU, or why it is not available

} // namespace jetagent
