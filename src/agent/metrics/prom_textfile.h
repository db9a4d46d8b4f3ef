// The results of finished work (`run`, `bench`, `sweep` with --prom-textfile DIR) as a textfile
// for node_exporter's textfile collector: DIR/jetagent_<command>[_<qualifier>].prom, written
// whole under a temporary name (which the collector ignores: it reads *.prom only) and renamed.
#pragma once

#include <string>

#include "jetagent/base/status.h"
#include "metrics/exposition.h"

namespace jetagent {

// OK when `dir` is an existing directory this process may write into; otherwise InvalidInput
// naming `option` and the directory, and what to do. Checked before the work starts.
Status checkPromTextfileDir(const std::string& dir, const std::string& option = "--prom-textfile");

// "jetagent_<command>.prom", or "jetagent_<command>_<qualifier>.prom" with the qualifier's
// characters other than [A-Za-z0-9_] replaced by '_' (a stable name per configuration, so that
// the next run replaces the file rather than adding one).
std::string promTextfileName(const std::string& command, const std::string& qualifier = "");

// Adds jetagent_last_run_timestamp_seconds (the unix time the work finished).
void addLastRunTimestamp(MetricSet& set, double unixSeconds);

// Writes `families` (text 0.0.4, the collector's format) to `dir`/`name` atomically, each sample
// labelled work="<name without jetagent_ and .prom>" ("run_mission", "bench_shapes"): the
// collector merges every file of the directory into one exposition, where two files' identical
// series (the build's _info, a task both a run and a bench measured) would be an error. Io error
// naming the path.
Status writePromTextfile(
    const std::string& dir, const std::string& name, std::vector<MetricFamily> families);

} // namespace jetagent
