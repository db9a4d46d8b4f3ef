// `jetagent bench`: what the agent adds to the bare engine, both measured in one process,
// interleaved.
#pragma once

#include <string>

#include "jetagent/base/status.h"

namespace jetagent {

struct AgentConfig;

struct BenchOptions {
    // Many short rounds: this machine's speed drifts on a scale of seconds (other tenants of the
    // host), and the closer in time an agent run is to its engine loop, the better drift cancels in
    // their ratio.
    int iterations = 10; // timed inferences per round, for the engine loop and for the agent alike
    int warmup = 5; // untimed inferences before each
    int rounds = 100; // engine and agent alternate this many times
    // Where the agent's rounds write their run directories: "" = a temporary directory removed at
    // the end (nothing is left behind); else this directory, which keeps the last round's only.
    std::string logDir;
    std::string json; // "" = none; else a new file for the figures and the configuration, as JSON
    // "" = none; else node_exporter's textfile directory: the agent rounds' pooled histograms and
    // counters go to DIR/jetagent_bench_<task>.prom (prom_results.h)
    std::string promTextfile;
};

// Runs the first task of `config` (a) as a bare engine loop and (b) through the whole agent on its
// source as fast as possible, and prints both medians, their ratio and the configuration (and
// writes them to options.json). An action task: its cost per frame instead.
Status runBench(const AgentConfig& config, const BenchOptions& options);

} // namespace jetagent
