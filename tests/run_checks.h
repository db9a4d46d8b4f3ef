// Checks on a finished run's directory that several end-to-end tests share.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace jetagent::test {

struct RunFiles {
    nlohmann::json summary;
    size_t csvRecords = 0;
    size_t jsonRecords = 0;
};

// Reads <runDir>/summary.json and the frame logs of `task`, and checks every frame record: frame
// ids strictly increasing, stage times non-negative and adding up to the end-to-end latency, the
// CSV and JSON Lines logs agreeing line for line, and the correct flag matching top-1 against
// truth.
RunFiles checkRun(const std::string& runDir, const std::string& task);

} // namespace jetagent::test
