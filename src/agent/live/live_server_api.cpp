// LiveServer's side in the core: the connection budget, and start(), which checks the options and
// hands over to the live view's plugin (plugins/live), where the server runs.
#include "live/live_server.h"

#include <algorithm>

#include "jetagent/base/plugin.h"

namespace jetagent {

LiveServer::~LiveServer() = default;

Expected<std::unique_ptr<LiveServer>> LiveServer::start(
    const HttpConfig& config, std::string chartJs, const PowerMonitor* power, size_t tasks)
{
    std::string key;
    if (std::string problem = httpConfigProblem(config, key); !problem.empty())
        return Status::invalid(key + ": " + problem);
    auto plugin = loadPlugin("live");
    if (!plugin)
        return plugin.status().withContext("the live view on " + config.listen);
    const auto* api = static_cast<const LiveServerApi*>(plugin.value()->api);
    return api->start(config, std::move(chartJs), power, tasks);
}

size_t LiveServer::connectionBudget(uint64_t limit, size_t openAtStart)
{
    const uint64_t reserve = uint64_t(kReservedDescriptors) + kOwnDescriptors + openAtStart;
    if (limit <= reserve)
        return 0;
    return static_cast<size_t>(std::min<uint64_t>(kMaxConnections, (limit - reserve) / 2));
}

} // namespace jetagent
