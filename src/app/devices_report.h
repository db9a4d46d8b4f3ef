// `jetagent report SWEEP_DIR SWEEP_DIR ...`: sweeps taken on several boards (or in several power
// modes of one board) compared cell by cell, as one offline HTML page and one Markdown file.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "html_report.h" // chartJsSource(), kDebianChartJsPath
#include "jetagent/base/status.h"

namespace jetagent {

// The page's name when no -o is given (in the current directory); the Markdown file is beside it.
inline constexpr const char* kDevicesReportName = "devices-report.html";

// Whether `dir` holds a sweep (its sweep.json exists, whatever it holds), not a run.
bool isSweepDirectory(const std::string& dir);

// DIR/sweep.json as `jetagent sweep` writes it (format jetagent-sweep 1). Errors name the file:
// NotFound when absent, InvalidInput when it is not a regular file, not JSON (the parser's
// message and byte), not a sweep's document or holds no "cells" array.
Expected<nlohmann::json> readSweepDocument(const std::string& dir);

// One sweep to compare: the directory as given and its sweep.json.
struct SweepSource {
    std::string dir;
    nlohmann::json sweep;
};

// The comparison document (format jetagent-devices 1), the page's and the Markdown's only source:
// "devices" (label, directory, board, module, power mode, clocks, host and study of each sweep, in
// the order given; the first is the baseline) and "cells", one per model x engine x precision x
// batch x thread count found in any sweep, each with one entry per device: status ok, failed or
// missing, p50/p99/mean latency, throughput, energy per inference as its sweep recorded them, and
// the speed-up against the first device (its throughput / the first's; null where either is not
// measured). Labels are built from each sweep's context; identical ones get the directory added.
// InvalidInput, naming every directory and cells of each, when a sweep after the first shares no
// measured cell with the first.
Expected<nlohmann::json> compareDevices(const std::vector<SweepSource>& sweeps);

// The comparison as Markdown: the devices, the speed-up definition, then one table per cell.
std::string devicesMarkdown(const nlohmann::json& comparison);

// The comparison as one offline page (Chart.js `chartJs` inlined, the document as its data):
// the devices, grouped bars of speed-up, p50 latency and energy per inference per cell, and the
// table of every cell on every device. Never throws; missing members are shown as absent figures.
std::string devicesHtml(const nlohmann::json& comparison, const std::string& chartJs);

struct DevicesReportOptions {
    std::vector<std::string> sweepDirs; // two or more; the first is the baseline
    // The page's path; empty: ./devices-report.html, replacing an earlier one (a regular file).
    // The Markdown file has the same path ending in .md. A path given is never overwritten
    // unless `force`. Neither may be written into one of the sweep directories (its inputs).
    std::string output;
    bool force = false;
    std::string chartJs; // Chart.js to inline; empty: Debian's (kDebianChartJsPath)
};

struct DevicesReportResult {
    std::string htmlPath, markdownPath;
    size_t bytes = 0; // the page's size
    size_t charts = 0; // charts drawn on it
    size_t cells = 0; // rows of the comparison
    size_t sharedCells = 0; // cells measured on every device
};

// Reads the sweeps, compares them and writes the page and the Markdown file (each whole or not at
// all). Errors: a directory that holds no sweep, sweeps that share no cell (compareDevices), an
// output that may not be written (see `output`), Chart.js missing.
Expected<DevicesReportResult> writeDevicesReport(const DevicesReportOptions& options);

} // namespace jetagent
