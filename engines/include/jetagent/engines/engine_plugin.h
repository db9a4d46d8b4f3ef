// What an engine backend plugin gives the core (see jetagent/base/plugin.h): its descriptor's
// `api` points to one EngineBackendApi. The core's backend table (engine.cpp) loads the plugin
// when a run, `jetagent backends` or `jetagent version` asks about the backend.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "jetagent/engines/engine.h"
#include "jetagent/engines/model_prepare.h"

namespace jetagent {

struct EngineBackendApi {
    const char* backend; // the name users give as backend: "opencv", "tensorrt"
    bool (*available)(); // the backend can run here (its libraries load, its device exists)
    std::string (*details)(); // versions and devices, or why it is not available
    // What the backend claims to run; nullptr when it makes no claim.
    std::vector<std::string> (*operators)();
    Expected<std::shared_ptr<const Engine>> (*build)(
        std::shared_ptr<const ModelFile>, const PreparedModel&, const EngineOptions&);
};

} // namespace jetagent
