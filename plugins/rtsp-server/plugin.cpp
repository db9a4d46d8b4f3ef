// The rtsp-server plugin's entry point: its table (RtspServerApi, hal/gstreamer_api.h).
#include "jetagent/base/plugin.h"
#include "gstreamer_api.h"
#include "gstreamer_plugin.h"

JETAGENT_PLUGIN_ENTRY
{
    static const jetagent::RtspServerApi api = {jetagent::gst::openStreamOut};
    static const jetagent::PluginDescriptor descriptor = {
        jetagent::kPluginAbi, JETAGENT_PLUGIN_VERSION, "rtsp-server", &api};
    return &descriptor;
}
