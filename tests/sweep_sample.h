// A sweep.json document built in code (models x engines x batch sizes, one failed cell with a
// hostile error, energy and accuracy on some cells) for the HTML report's tests.
#pragma once

#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

namespace jetagent::test {

// Markup in a failed cell's error: the page must show it as text, never as markup.
inline constexpr const char* kHostileMarkup = "</script><b>";
inline constexpr const char* kHostileError =
    "building the engine failed: </script><b>out of memory</b><!-- (TensorRT)";
inline constexpr const char* kSampleBaseline = "xnnpack:cpu:fp32,fusion=false";

struct SweepSampleOptions {
    std::vector<int> batches = {1, 2, 4};
    bool energy = true; // resnet18's cells carry power and energy figures
    bool accuracy = true; // mobilenet_v2's cells carry top-1/top-5; xnnpack's carry agreement
    bool failedCell = true; // squeezenet1_1 on the baseline at the largest batch fails
    std::optional<double> latencyBudgetMs = 33.3;
};

// Three models (resnet18, mobilenet_v2, squeezenet1_1) on "xnnpack" and kSampleBaseline, with the
// speed-up, scaling and best tables computed from the cells as the sweep computes them.
nlohmann::json sampleSweep(const SweepSampleOptions& options = {});

} // namespace jetagent::test
