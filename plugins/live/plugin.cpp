// The live view plugin's entry point: its table (LiveServerApi, src/agent/live/live_server.h).
#include "jetagent/base/plugin.h"
#include "http_live_server.h"

JETAGENT_PLUGIN_ENTRY
{
    static const jetagent::LiveServerApi api = {jetagent::HttpLiveServer::start};
    static const jetagent::PluginDescriptor descriptor = {
        jetagent::kPluginAbi, JETAGENT_PLUGIN_VERSION, "live", &api};
    return &descriptor;
}
