// A plugin that claims to be opencv-dnn but was built for another ABI and version: the loader must
// refuse it with a message saying so (cli_test.cpp, Cli.PluginsMissingForeignOrOfAnotherBuild...).
#include "jetagent/base/plugin.h"

JETAGENT_PLUGIN_ENTRY
{
    static const jetagent::PluginDescriptor descriptor = {
        jetagent::kPluginAbi + 998, "0.0.0-test", "opencv-dnn", nullptr};
    return &descriptor;
}
