// The composition root's parts (agent.cpp): what a config opens (source, tasks, power monitor,
// live server, view, GPIO) and how a reload builds the next set beside the running one. Internal to
// src/agent/agent*.cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agent.h"
#include "config/config.h"
#include "display/display.h"
#include "jetagent/hal/frame_source.h"
#include "jetagent/power/power_monitor.h"
#include "live/live_server.h"
#include "run/task.h"
#include "service/gpio_signals.h"
#include "service/service.h"
#include "telemetry/mqtt_telemetry.h"

namespace jetagent {

// What a config opens. A reload keeps the sources and the tasks whose settings did not change.
struct Components {
    std::vector<std::unique_ptr<FrameSource>> sources; // one per stream, in the config's order
    std::string sourceShape;
    FrameSource& source() const { return *sources.front(); } // the first stream's
    bool sourcesOpen() const { return !sources.empty(); }
    std::vector<std::unique_ptr<Task>> tasks;
    std::vector<std::string> taskKeys;
    std::vector<int> keptFrom; // per task: the index of the running task it keeps, or -1
    std::unique_ptr<PowerMonitor> monitor;
    // Before the view: the view's thread hands its frames to the server until it is stopped.
    std::unique_ptr<LiveServer> live;
    std::unique_ptr<DisplaySink> display;
    std::unique_ptr<GpioSignals> gpio; // requested anew for each run: stop() releases the lines
    // MQTT telemetry (the mqtt section): kept across reloads; its end publishes `offline`.
    std::unique_ptr<MqttTelemetry> mqtt;
    std::string runDirectory;
    // Start-up (the summary's context.startup): how long opening the source and building the
    // tasks took in openComponents.
    int64_t sourceOpenNs = 0;
    int64_t engineBuildNs = 0;
};

// A reload's new components, prepared while the current config runs. The source is only kept or
// marked for reopening here: a camera cannot be opened twice, so a changed source is switched
// after the current run has drained (finishReload).
struct Reload {
    AgentConfig config;
    Components next;
    bool sourceChanged = false;
};

// Opens the power monitor the config asks for; null (and no error) when sampling is off or the
// board has nothing to sample.
Expected<std::unique_ptr<PowerMonitor>> openPower(const AgentConfig& config);

// Moves the tasks `next` keeps from `old` into `next`.
void adoptKeptTasks(Components& next, Components& old);

// Opens everything `config` asks for into `c`, the run directory included.
Status openComponents(
    const AgentConfig& config, const RunOptions& options, ServiceNotifier& notify, Components& c);

// A reload: reads the new config and opens what changed beside the running parts (`pending`).
Status prepareReloadOf(const AgentConfig& config, Components& c, const RunOptions& options,
    ServiceNotifier& notify, std::unique_ptr<Reload>& pending);

// Switches `running` to the reload's parts once the old run has ended; `switched` says whether it
// did.
Status finishReload(const AgentConfig& current, Components& running, ServiceNotifier& notify,
    Reload& reload, bool& switched);

} // namespace jetagent
