// One run of the agent: open the source, build the tasks, run the pipeline, log and summarise.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "output/run_directory.h"
#include "run/task_stats.h"

namespace jetagent {

struct RunOptions {
    std::vector<std::string>
        overrides; // command-line overrides as "key=value", recorded in the summary
    bool printStatus = true; // status lines every logging.status_interval_s
    bool printSummary = true; // the summary text on stdout at the end
    bool handleSignals = true; // SIGINT/SIGTERM stop the run cleanly; a second one exits at once
    std::string runPrefix; // run directory name prefix ("" for runs, "bench-" for benchmarks)
    // SIGHUP: re-reads the config (the file again, with the same command-line overrides). The new
    // config is validated and what it needs is built while the old one runs; a config that fails
    // is logged and the old one goes on. Empty: SIGHUP keeps its default action.
    std::function<Expected<AgentConfig>()> reload;
    bool notify = false; // speak systemd's notify protocol when NOTIFY_SOCKET is set
    // After a stop signal, the longest wait for the frames in flight; past it the logs are flushed
    // and the process exits with a failure (a hung camera or engine). 0 = wait as long as it takes.
    double stopTimeoutS = 0.0;
    // Chart.js, inlined into the live view's page (http.listen, run --serve); the command that
    // offers the view reads it (Debian's libjs-chart.js). Empty: no live view can be served.
    std::string liveChartJs;
    // monotonicNs() when the program's main() began: the first run's summary then reports the
    // start-up (context.startup), from the process's start to the first frame. -1 (benchmarks,
    // library callers): no start-up figures.
    int64_t mainStartNs = -1;
};

struct AgentRun {
    nlohmann::json summary;
    std::vector<TaskStats> stats; // per task, in config order
    std::string runDirectory; // the last one, when reloads started new ones
    std::vector<std::string> runDirectories; // one per config run, in order (reloads add one each)
    Status failure; // what ended the run early, if anything; the summary is complete either way
    // Non-zero: the run was abandoned with a thread that never returned (an inference hung in an
    // engine, past the stop timeout, or a second stop signal), and the process must end at once
    // with this status (std::_Exit): that thread still uses the run's objects, which were
    // therefore neither joined nor destroyed. The logs and the summary are written.
    int exitAtOnce = 0;
};

// Runs `initial` to its end (frame limit, duration, end of stream, a signal or a failure). A reload
// (SIGHUP, with RunOptions::reload) ends the current run directory with its summary and goes on in
// a new one under the new config, keeping the source and the engines whose settings did not change.
// Problems found before any frame is captured (a bad source, model, labels or log directory) are
// returned as errors naming the config key; problems while running end the run with
// AgentRun::failure set, after every completed frame has been logged and summarised.
Expected<AgentRun> runAgent(const AgentConfig& initial, const RunOptions& options);

// After runAgent: an abandoned run (AgentRun::exitAtOnce) ends the process here and now, its
// output flushed and no destructor run (a hung thread still uses the run's objects).
void exitIfAbandoned(const AgentRun& run);

// Sets the level of every logger ("trace" .. "error").
void setLogLevel(const std::string& level);

} // namespace jetagent
