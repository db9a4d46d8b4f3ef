// One run of the agent: open the source, build the tasks, run the pipeline, log and summarise.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config.h"
#include "task_stats.h"

namespace jetagent {

struct RunOptions {
    std::vector<std::string>
        overrides; // command-line overrides as "key=value", recorded in the summary
    bool printStatus = true; // status lines every logging.status_interval_s
    bool printSummary = true; // the summary text on stdout at the end
    bool handleSignals = true; // SIGINT/SIGTERM stop the run cleanly; a second one exits at once
    std::string runPrefix; // run directory name prefix ("" for runs, "bench-" for benchmarks)
};

struct AgentRun {
    nlohmann::json summary;
    std::vector<TaskStats> stats; // per task, in config order
    std::string runDirectory;
    Status failure; // what ended the run early, if anything; the summary is complete either way
};

// Runs `config` to its end (frame limit, duration, end of stream, a signal or a failure). Problems
// found before any frame is captured (a bad source, model, labels or log directory) are returned as
// errors naming the config key; problems while running end the run with AgentRun::failure set,
// after every completed frame has been logged and summarised.
Expected<AgentRun> runAgent(const AgentConfig& config, const RunOptions& options);

// Sets the level of every logger ("trace" .. "error").
void setLogLevel(const std::string& level);

// Creates a new directory for a run under `base` (named prefix + UTC time, with -2, -3 ... on a
// clash).
Expected<std::string> createRunDirectory(const std::string& base, const std::string& prefix);

} // namespace jetagent
