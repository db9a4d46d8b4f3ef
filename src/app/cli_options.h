// The command line's declaration (internal to src/app): the options of every command as CLI11
// parses them into the structs below, with their validators, help texts and documentation pages.
// cli.cpp runs what they hold.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench.h"
#include "capture.h"
#include "compare.h"
#include "config/config.h"
#include "inspect.h"
#include "power_command.h"
#include "run_report.h"
#include "sweep.h"

namespace jetagent {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

inline constexpr const char* kExitCodes =
    "Exit codes: 0 success; 2 usage, configuration or input error (a bad config key,\n"
    "a missing or corrupt model, a source that cannot be opened); 1 failure while running\n"
    "(also: every frame failed, the summary could not be written, a stop that outlasted\n"
    "--stop-timeout); 128+N a second stop signal N while frames drain (130 for Ctrl-C).";

struct GlobalOptions {
    bool showVersion = false;
    bool verbose = false;
    bool quiet = false;
    std::string logLevel;
    // monotonicNs() when main() began (runCli's caller): `run`'s summary reports the start-up.
    int64_t mainStartNs = -1;

    // The level from the command line, if any, else `fallback`.
    std::string level(const std::string& fallback) const
    {
        if (!logLevel.empty())
            return logLevel;
        if (verbose)
            return "debug";
        if (quiet)
            return "warn";
        return fallback;
    }
};

struct RunArgs {
    std::string config;
    std::vector<std::string> sources; // --source, repeated: one stream each
    uint64_t frames = 0;
    double duration = -1;
    std::string logDir;
    bool asFastAsPossible = false;
    bool display = false;
    std::string output;
    std::string serve;
    double stopTimeout = 15.0;
    std::string promTextfile; // --prom-textfile DIR: "" = none
};

// Each command's option targets and its CLI11 subcommand, filled by its declare* function and read
// by its command* function once the line is parsed.
template <typename Options>
struct OptionsCommand {
    CLI::App* cmd = nullptr;
    Options options;
};

using RunCommand = OptionsCommand<RunArgs>;
using CompareCommand = OptionsCommand<CompareOptions>;
using PowerCommand = OptionsCommand<PowerCommandOptions>;

struct BenchCommand : OptionsCommand<BenchOptions> {
    std::string config;
};

struct SweepCommand : OptionsCommand<SweepOptions> {
    std::string batches, threads, engines;
};

// report: one run directory (RunReportOptions), or two or more sweep directories compared.
struct ReportCommand : OptionsCommand<RunReportOptions> {
    std::vector<std::string> dirs;
};

struct CaptureCommand : OptionsCommand<SourceOptions> {
    uint64_t count = 0;
    std::string out, format = "png", config;
};

struct InspectCommand : OptionsCommand<InspectOptions> {
    bool noCache = false;
};

struct ProbeCommand {
    CLI::App* cmd = nullptr;
    CLI::App* cameras = nullptr;
    CLI::App* gpio = nullptr;
    std::vector<std::string> devices;
    bool json = false;
    std::vector<std::string> chips;
};

// Every command, in the order `jetagent --help` lists them.
struct Commands {
    RunCommand run;
    BenchCommand bench;
    CompareCommand compare;
    SweepCommand sweep;
    ReportCommand report;
    CaptureCommand capture;
    InspectCommand inspect;
    PowerCommand power;
    ProbeCommand probe;
    CLI::App* backends = nullptr;
    CLI::App* version = nullptr;
};

// The program description, the options before the command, and the examples of `jetagent --help`.
void declareGlobalOptions(CLI::App& app, GlobalOptions& global);

// Every command, declared in the order `jetagent --help` lists them, each help ending with its
// page of docs/.
void declareCommands(CLI::App& app, Commands& c);

} // namespace jetagent
