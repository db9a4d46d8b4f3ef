// The agent's configuration: one YAML file mapped to typed structs with defaults.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "display/display_options.h"
#include "jetagent/base/enum_names.h"
#include "jetagent/base/status.h"
#include "jetagent/hal/frame_source.h"
#include "live/http_options.h"
#include "run/run_options.h"
#include "service/gpio_options.h"
#include "tasks/task_config.h"
#include "telemetry/mqtt_options.h"

namespace jetagent {

struct LoggingConfig {
    std::string dir = "jetagent-logs"; // each run writes into a new subdirectory here
    bool csv = true; // per-frame CSV
    bool jsonl = true; // per-frame JSON Lines
    // Records buffered for the writer; when full, log lines are dropped and counted. 0: ten
    // seconds of the source's frames, from 256 to 4096 (4096 for unpaced runs and sources of
    // unknown rate; see recordQueueCapacity).
    int queueCapacity = 0;
    std::string level = "info"; // trace, debug, info, warn, error
    double statusIntervalS = 1.0; // seconds between console status lines; 0 = none
    uint64_t maxSummarySamples = 10'000; // values per series whose percentiles stay exact (8 bytes
                                         // each, up front); beyond, a 0.1% histogram
    int maxFileMb =
        64; // a per-frame file is closed and a new segment begun at this size; 0 = never
    int maxTotalMb = 1024; // all per-frame files under dir, every run: oldest removed; 0 = no cap
};

enum class PowerSampling {
    Auto, // sample when the board has rails or thermal zones; runs without them go on
    On, // a run on a board without rails fails at start-up
    Off, // no sampler thread, no energy columns
};
inline constexpr EnumName<PowerSampling> kPowerSamplingNames[] = {
    {PowerSampling::Auto, "auto"}, {PowerSampling::On, "on"}, {PowerSampling::Off, "off"}};

struct PowerConfig {
    PowerSampling sampling = PowerSampling::Auto; // see PowerSampling
    std::string board =
        "auto"; // auto, a built-in profile id (agx-orin, ...) or a profile YAML file
    std::string sysfsRoot = "/"; // where /sys, /proc and /etc are read; a copy of a board's tree
    double railHz = 100.0; // rail reads per second; the sampler costs ~0.1% of a core at 100 Hz
    double stateHz = 2.0; // thermal, clock, fan and throttle reads per second
    int ringCapacity = 16384; // rail samples kept for per-frame energy (164 s at 100 Hz)
    // power.csv's slot: one row of average rail power, temperatures and clocks per this many ms
    // (about 100 bytes a row: 86 MB a day at 100 ms, rotated and capped with the frame logs);
    // 0 = no power.csv.
    int logIntervalMs = 100;
};

// One stream of the run: a source and the name that tells its frames apart in every record, log
// line and figure.
struct StreamConfig {
    std::string name = "main";
    SourceOptions source;
    std::string key = "source"; // where the config set it: "source" or "sources[N]"
};

// The most streams a run reads.
constexpr size_t kMaxStreams = 64;
constexpr size_t kMaxStreamName = 64;
// Letters, digits, '_', '-', '.'; not starting with '.' or '-'; 1..kMaxStreamName of them.
bool validStreamName(const std::string& name);
// The name a source gets when the config gives none: "main" for a single `source:`, "streamN"
// for the Nth item of `sources:` (and each repeated --source).
std::string defaultStreamName(size_t index, bool single = false);

struct AgentConfig {
    std::string path; // the file it came from ("" when built in code)
    // One or more streams (`source:` or `sources:`); never empty.
    std::vector<StreamConfig> sources = {StreamConfig()};
    // The first stream's source: the run's only one in most configs.
    SourceOptions& source() { return sources.front().source; }
    const SourceOptions& source() const { return sources.front().source; }
    int streamIndex(const std::string& name) const; // -1 when no source has the name
    // The streams task `task` serves (its `streams`, or every one), as indices into `sources`.
    std::vector<size_t> taskStreams(size_t task) const;
    RunConfig run;
    std::vector<TaskConfig> tasks;
    LoggingConfig logging;
    PowerConfig power;
    DisplayConfig display;
    HttpConfig http; // the live web view (run --serve)
    MqttConfig mqtt; // telemetry to an MQTT broker (docs/mqtt.md); absent: none
    GpioConfig gpio;
    std::map<std::string, int>
        lines; // 1-based line of each key present in the file, by dotted path
    std::map<std::string, std::string>
        overriddenBy; // key -> the command-line option that replaced it
    std::map<std::string, std::string>
        sections; // top-level section (and "tasks[N]") -> its text as parsed, "" when absent;
                  // a reload compares them to restart only what changed
    // The text of `section` as loaded ("" when the file did not have it).
    std::string sectionText(const std::string& section) const
    {
        auto it = sections.find(section);
        return it == sections.end() ? std::string() : it->second;
    }

    // "demo.yaml:23: tasks[0].preprocess.crop" (or without the line when the key was not in the
    // file, or
    // "--source (source.uri)" when the command line set it), for errors found after loading, such
    // as a crop size the model does not accept.
    std::string where(const std::string& key) const;
};

// Reads and validates a config file. Unknown keys, wrong types and out-of-range values are errors
// naming the file, line and key; all of them are reported at once, one per line.
Expected<AgentConfig> loadConfig(const std::string& path);

// The same from text; `name` stands for the file in messages and `baseDir` resolves relative paths.
Expected<AgentConfig> parseConfig(
    const std::string& text, const std::string& name, const std::string& baseDir);

} // namespace jetagent
