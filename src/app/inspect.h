// `jetagent inspect`: what a model is (inputs, operators, parameters, MACs) and what preparation
// changes in it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compare.h" // CalibrationFactory
#include "jetagent/base/status.h"

namespace jetagent {

struct InspectOptions {
    std::string model; // ONNX file
    bool json = false; // one JSON document on stdout instead of text
    std::vector<std::string> inputShapes; // "name:1x3x224x224", or "1x3x224x224" for a
                                          // single-input model; MACs are counted for these
    bool prepared = false; // also prepare the model and show what each pass changed
    std::string backend = "auto"; // whose preparation to show (auto: resolveBackend for the CPU)
    int batch = 1; // batch the model is prepared for
    std::string cacheDir; // empty: prepare in memory, timing every pass
    int profileRuns = 0; // > 0: also run the compiled engine this many times (after warmupRuns)
                         // and report each step's share of the time (backends with steps only)
    int warmupRuns = 3;
    int threads = 0; // the profiled engine's threads (engine.threads: 0 = the backend's default)
    bool onednn = true; // xnnpack: convolutions and linear layers on oneDNN (engine.onednn); false
                        // shows the steps as on ARM, XNNPACK alone
    bool int8 = false; // xnnpack: compile a QDQ model in int8 with its own scales (precision: int8)
    // xnnpack: the compiled (and profiled) engine is int8, calibrated on these images (a directory
    // or a video) preprocessed to the model's input size; empty: fp32.
    std::string calibration;
    int calibrationFrames = 100; // samples taken from `calibration`
    CalibrationFactory makeCalibration; // empty: --calibration is refused
};

// Parses "name:AxBxC" / "AxBxC" into `shapes`; errors name the bad text.
Status parseInputShapes(
    const std::vector<std::string>& texts, std::map<std::string, std::vector<int64_t>>* shapes);

// Writes the report to `out`. Errors: the model cannot be read or checked (InvalidInput/NotFound),
// preparation fails (InvalidInput), a bad input shape (InvalidInput).
Status inspectModel(const InspectOptions& requested, std::string* out);

} // namespace jetagent
