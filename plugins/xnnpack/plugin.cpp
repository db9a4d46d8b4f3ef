// The xnnpack plugin's entry point: the CPU engine's table (EngineBackendApi).
#include "jetagent/base/plugin.h"
#include "jetagent/engines/engine_plugin.h"
#include "xnnpack/xnnpack_engine.h"

JETAGENT_PLUGIN_ENTRY
{
    static const jetagent::EngineBackendApi api = {"xnnpack", jetagent::xnnpackAvailable,
        jetagent::xnnpackDetails, jetagent::xnnpackOperators, jetagent::buildXnnpackEngine};
    static const jetagent::PluginDescriptor descriptor = {
        jetagent::kPluginAbi, JETAGENT_PLUGIN_VERSION, "xnnpack", &api};
    return &descriptor;
}
