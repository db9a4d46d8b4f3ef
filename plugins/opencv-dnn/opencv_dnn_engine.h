// OpenCVDnnEngine: inference through OpenCV's DNN module (internal to the opencv-dnn plugin).
#pragma once

#include <memory>
#include <string>

#include "jetagent/engines/engine.h"
#include "jetagent/engines/model_prepare.h"

namespace jetagent {

Expected<std::shared_ptr<const Engine>> buildOpenCVDnnEngine(std::shared_ptr<const ModelFile> model,
    const PreparedModel& prepared, const EngineOptions& options);
bool openCVDnnHasCuda();
std::string openCVDnnDetails();

} // namespace jetagent
