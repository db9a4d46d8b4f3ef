// The plugin registry and loader (see plugin.h).
#include "jetagent/base/plugin.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <system_error>

#include <filesystem>

#include "jetagent/base/log.h"

namespace fs = std::filesystem;

namespace jetagent {

const std::vector<KnownPlugin>& knownPlugins()
{
    static const std::vector<KnownPlugin> plugins = {
        {"xnnpack", "jetagent-xnnpack.so",
            "engine backend 'xnnpack' (the CPU engine), on XNNPACK and, on x86-64, oneDNN",
            "jetagent", " (the core package ships it: reinstall it)"},
        {"gstreamer", "jetagent-gstreamer.so",
            "csi://, rtsp:// and gst:// sources, video files, rtp:// and rtsp:// outputs, on "
            "GStreamer",
            "jetagent", " (the core package ships it: reinstall it)"},
        {"rtsp-server", "jetagent-rtsp-server.so",
            "rtsp:// outputs (an RTSP server of jetagent's own), on gst-rtsp-server",
            "jetagent-rtsp", ""},
        {"live", "jetagent-live.so", "the live web view (--serve, http.listen), on cpp-httplib",
            "jetagent", " (the core package ships it: reinstall it)"},
        {"mqtt", "jetagent-mqtt.so",
            "MQTT telemetry (the mqtt section: status, summaries, online state), on libmosquitto",
            "jetagent", " (the core package ships it: reinstall it)"},
        {"opencv-dnn", "jetagent-opencv-dnn.so", "engine backend 'opencv', on OpenCV's DNN module",
            "jetagent-opencv", ""},
        {"viewer", "jetagent-viewer.so",
            "the window (--display) and video file recordings (display.output FILE), on "
            "OpenCV's highgui and videoio",
            "jetagent-opencv", ""},
        {"tensorrt", "jetagent-tensorrt.so", "engine backend 'tensorrt', on TensorRT and CUDA",
            "jetagent-tensorrt",
            " (it is built on a Jetson with JetPack's TensorRT: see docs/tensorrt-and-jetson.md)"},
    };
    return plugins;
}

namespace {

const KnownPlugin* findKnownPlugin(const std::string& name)
{
    for (const KnownPlugin& p : knownPlugins())
        if (name == p.name)
            return &p;
    return nullptr;
}

std::string executableDirectory()
{
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : self.parent_path().string();
}

struct PluginTable {
    std::mutex mutex;
    std::map<std::string, const PluginDescriptor*> loaded;
};

PluginTable& pluginTable()
{
    static PluginTable table;
    return table;
}

Expected<const PluginDescriptor*> openPlugin(const KnownPlugin& known, const std::string& path)
{
    const std::string what = std::string("plugin '") + known.name + "' (" + known.provides + ")";
    std::error_code ec;
    if (!fs::exists(path, ec))
        return Status::unsupported(what + " is not installed: " + path +
            " does not exist. Install the " + known.package + " package" + known.note +
            ", or point JETAGENT_PLUGIN_DIR at the directory that holds " + known.file);
    // RTLD_LOCAL: a plugin's libraries (OpenCV's modules, libnvinfer) stay its own.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        // loadPlugin holds the table's lock around dlopen and this read, and nothing else in
        // jetagent calls dlopen.
        const char* why = dlerror(); // NOLINT(concurrency-mt-unsafe)
        return Status::unsupported(what + " cannot be loaded from " + path + ": " +
            (why != nullptr ? why : "unknown error") + " (reinstall the " + known.package +
            " package and the libraries it depends on)");
    }
    // A refused library is left loaded, never dlclose()d: unloading one that is not ours (or not
    // this build's) would run its libraries' teardown (Qt's, OpenCV's) mid-process, and the
    // command ends with the error anyway.
    using Entry = const PluginDescriptor* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(handle, kPluginEntryPoint));
    const PluginDescriptor* d = entry != nullptr ? entry() : nullptr;
    if (d == nullptr || d->name == nullptr || known.name != std::string(d->name)) {
        return Status::unsupported(path + " is not the jetagent plugin '" + known.name + "' (no " +
            kPluginEntryPoint + " naming it)");
    }
    if (d->abi != kPluginAbi || d->version == nullptr ||
        std::string(d->version) != JETAGENT_PLUGIN_VERSION) {
        const std::string built = "ABI " + std::to_string(d->abi) + ", jetagent " +
            (d->version != nullptr ? d->version : "?");
        return Status::unsupported(what + " at " + path + " was built for " + built +
            ", not this jetagent (ABI " + std::to_string(kPluginAbi) + ", jetagent " +
            JETAGENT_PLUGIN_VERSION + "): install the " + known.package +
            " package of the same version as jetagent");
    }
    return d;
}

} // namespace

std::string pluginDirectory()
{
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read-only; the environment is not changed here
    if (const char* dir = std::getenv("JETAGENT_PLUGIN_DIR"); dir != nullptr && *dir != '\0')
        return dir;
    const std::string exe = executableDirectory();
    return (fs::path(exe.empty() ? "." : exe) / JETAGENT_PLUGIN_RELATIVE_DIR)
        .lexically_normal()
        .string();
}

std::vector<PluginPresence> pluginPresence()
{
    const std::string dir = pluginDirectory();
    PluginTable& table = pluginTable();
    std::vector<PluginPresence> list;
    for (const KnownPlugin& p : knownPlugins()) {
        PluginPresence presence;
        presence.plugin = p;
        presence.path = (fs::path(dir) / p.file).string();
        std::error_code ec;
        presence.present = fs::exists(presence.path, ec);
        {
            std::lock_guard<std::mutex> lock(table.mutex);
            presence.loaded = table.loaded.count(p.name) > 0;
        }
        list.push_back(std::move(presence));
    }
    return list;
}

Expected<const PluginDescriptor*> loadPlugin(const std::string& name)
{
    const KnownPlugin* known = findKnownPlugin(name);
    if (known == nullptr)
        return Status::invalid("unknown plugin '" + name + "'");
    PluginTable& table = pluginTable();
    std::lock_guard<std::mutex> lock(table.mutex);
    if (auto it = table.loaded.find(name); it != table.loaded.end())
        return it->second;
    const std::string path = (fs::path(pluginDirectory()) / known->file).string();
    auto opened = openPlugin(*known, path);
    if (!opened)
        return opened.status();
    table.loaded[name] = opened.value();
    logger("plugin")->debug("loaded plugin '{}' from {}", name, path);
    return opened.value();
}

} // namespace jetagent
