// Plugins: the heavy optional parts of jetagent (the OpenCV DNN backend, the window and the video
// file recorder, the TensorRT backend) are shared objects that the core loads with dlopen only when
// a run asks for them, so that a headless run never maps OpenCV's GUI and codec modules, Qt, CUDA
// or libnvinfer. Each plugin lives in a directory of its own under plugins/, is installed into
// one plugin directory, and exports one C function returning a PluginDescriptor. The core keeps
// the registry (knownPlugins): which plugins exist, their files, what each provides and which
// package installs it, so that a missing plugin is an error naming what to install.
#pragma once

#include <string>
#include <vector>

#include "jetagent/base/status.h"

namespace jetagent {

// Raised whenever the interfaces a plugin sees change shape (a virtual function added, a struct
// of function pointers reordered). A plugin built with another value is refused.
inline constexpr int kPluginAbi = 1;

// What a plugin's entry point returns: static data owned by the plugin.
struct PluginDescriptor {
    int abi; // kPluginAbi when the plugin was built
    const char* version; // the jetagent version it was built with; must equal the core's
    const char* name; // the registry's name: "opencv-dnn"
    const void* api; // the kind's own table of functions (EngineBackendApi, ViewerApi)
};

// The entry point every plugin defines, the one symbol it exports (plugins build with hidden
// visibility):
//     JETAGENT_PLUGIN_ENTRY { static const PluginDescriptor d = {...}; return &d; }
inline constexpr const char* kPluginEntryPoint = "jetagent_plugin_descriptor";
#define JETAGENT_PLUGIN_ENTRY const jetagent::PluginDescriptor* jetagent_plugin_descriptor()

// One plugin jetagent knows of.
struct KnownPlugin {
    const char* name; // "opencv-dnn"
    const char* file; // "jetagent-opencv-dnn.so"
    const char* provides; // "engine backend 'opencv', on OpenCV's DNN module"
    const char* package; // the Debian package that installs it
    const char* note; // said after the package's name where it needs more ("" otherwise)
};
const std::vector<KnownPlugin>& knownPlugins();

// Where plugins are looked for: $JETAGENT_PLUGIN_DIR when set, else the directory this build
// installs them to, found relative to the running executable (bin/../lib/jetagent/plugins;
// in a build tree the same layout sits beside src/ and tests/).
std::string pluginDirectory();

// The state of one known plugin, without loading it.
struct PluginPresence {
    KnownPlugin plugin;
    std::string path; // where it is or would be
    bool present = false; // the file exists
    bool loaded = false; // this process has loaded it
};
std::vector<PluginPresence> pluginPresence();

// Loads plugin `name` (once per process; later calls return the same descriptor) and checks its
// ABI and version. Plugins are never unloaded: objects they made may live until exit. Errors
// (Unsupported, so a command exits 2): the plugin is not installed (naming the package and the
// path looked at), it does not load (dlerror: a library it needs is missing), it is not a
// jetagent plugin, or it was built for another ABI or version. Thread-safe.
Expected<const PluginDescriptor*> loadPlugin(const std::string& name);

} // namespace jetagent

// The entry point's declaration: defined by each plugin (JETAGENT_PLUGIN_ENTRY), never by the core,
// which looks it up with dlsym.
extern "C" __attribute__((visibility("default"))) const jetagent::PluginDescriptor*
jetagent_plugin_descriptor();
