// `jetagent report RUN_DIR`: one run's logs (a `run`'s or the service's) as one offline HTML page.
#pragma once

#include <string>

#include "html_report.h" // chartJsSource(), kDebianChartJsPath
#include "jetagent/base/status.h"
#include "run_log.h"

namespace jetagent {

// Every plotted series is cut to about this many points (each bucket's min and max kept).
inline constexpr size_t kReportMaxPoints = 4000;

struct RunReportOptions {
    std::string runDir;
    // The page's path; empty: RUN_DIR/report.html, which replaces an earlier report there (a
    // regular file only). A path given is never overwritten unless `force`.
    std::string output;
    bool force = false; // `output` may replace an existing regular file (never a link, a device)
    std::string chartJs; // Chart.js to inline; empty: Debian's (kDebianChartJsPath)
};

// What writing the report did, for the command to print.
struct RunReportResult {
    std::string path; // where the page was written
    size_t bytes = 0; // its size
    size_t charts = 0; // charts drawn on it
    DamagedLines damaged; // the CSV lines skipped, every file's together
    bool noSummary = false; // the run left no summary.json (it crashed): figures from the CSVs
};

// The page for the run in `run` (findRunFiles()) with `chartJs` inlined: the run's header from
// summary.json, then per task latency over time with deadline misses, failures and drops marked,
// a histogram and a percentile table per stage, energy per frame and GPIO windows, then power per
// rail with the inference windows, temperatures and clocks from power.csv. A chart without data is
// left out with a line saying why. Damaged CSV lines are skipped and counted into `damaged`.
Expected<std::string> runReportHtml(
    const RunFiles& run, const std::string& chartJs, DamagedLines& damaged, size_t& charts);

// Finds the run's files, builds the page and writes it (whole or not at all) through a temporary
// file in the page's directory, renamed into place. NotFound when RUN_DIR is not a run or Chart.js
// is missing; InvalidInput naming the page's path when it exists and may not be replaced (see
// RunReportOptions::output) or is not a regular file (a device, a FIFO, a directory, a link); Io
// when a file cannot be read or written.
Expected<RunReportResult> writeRunReport(const RunReportOptions& options);

} // namespace jetagent
