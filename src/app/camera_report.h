// `jetagent probe cameras`' output: hal's camera descriptions as a report for people and as JSON.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "jetagent/hal/camera_probe.h"

namespace jetagent {

// Human-readable report, one block per device.
std::string formatCameraReport(const std::vector<CameraDescription>& cameras);
nlohmann::json cameraReportJson(const std::vector<CameraDescription>& cameras);

} // namespace jetagent
