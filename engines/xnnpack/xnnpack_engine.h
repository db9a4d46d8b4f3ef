// XnnpackEngine: the CPU engine, a graph compiler from the prepared ONNX model onto XNNPACK's
// operators and our reference kernels (internal to engines/).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "jetagent/engines/engine.h"
#include "jetagent/engines/model_prepare.h"

namespace jetagent {

Expected<std::shared_ptr<const Engine>> buildXnnpackEngine(std::shared_ptr<const ModelFile> model,
    const PreparedModel& prepared, const EngineOptions& options);
bool xnnpackAvailable();
std::string xnnpackDetails();
std::vector<std::string> xnnpackOperators(); // the ONNX operators the backend claims

} // namespace jetagent
