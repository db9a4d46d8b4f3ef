// One named spdlog logger per subsystem ("source", "engine", "pipeline", ...), sharing the default
// sinks.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include <spdlog/spdlog.h>

namespace jetagent {

// The logger of a subsystem, created on first use with the default logger's sinks and level, so the
// program's one set-up call (see src/logging) decides where everything goes.
inline std::shared_ptr<spdlog::logger> logger(const std::string& name)
{
    static std::mutex mutex;
    std::lock_guard<std::mutex> lock(mutex);
    if (auto existing = spdlog::get(name))
        return existing;
    auto base = spdlog::default_logger();
    auto created =
        std::make_shared<spdlog::logger>(name, base->sinks().begin(), base->sinks().end());
    created->set_level(base->level());
    spdlog::register_logger(created);
    return created;
}

} // namespace jetagent
