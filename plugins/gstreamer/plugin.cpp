// The GStreamer plugin's entry point: its table of functions (hal/gstreamer_api.h).
#include "jetagent/base/plugin.h"
#include "gst_init.h"
#include "gstreamer_api.h"
#include "gstreamer_plugin.h"

JETAGENT_PLUGIN_ENTRY
{
    static const jetagent::GStreamerApi api = {
        [](std::string* why) { return jetagent::detail::initGStreamer(why); },
        jetagent::gst::hasElement,
        jetagent::gst::openPipeline,
        jetagent::gst::openVideoFile,
        jetagent::gst::openStreamOut,
    };
    static const jetagent::PluginDescriptor descriptor = {
        jetagent::kPluginAbi, JETAGENT_PLUGIN_VERSION, "gstreamer", &api};
    return &descriptor;
}
