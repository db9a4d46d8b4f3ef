// The sweep's HTML report: sweep.json (what `jetagent sweep` writes) as one offline page.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "html_report.h" // chartJsSource(), kDebianChartJsPath

namespace jetagent {

// One self-contained HTML page for `sweep` (the sweep.json document, format jetagent-sweep 1) with
// `chartJs` (chartJsSource()) inlined: the study and its context, then the charts (p50 latency per
// model and engine on a log axis, throughput against batch size, ASE and BSR against batch size,
// P99/P50 per cell, energy per inference against latency) and the tables (speed-up, scaling, best
// under the latency budget, accuracy, failed cells, every cell). A chart without data is left out
// with a line saying why. Every text shown is HTML-escaped and the data is inlined as script-safe
// JSON, so no model name or error message can change the page. Missing or mistyped members are
// shown as absent figures; it never throws.
std::string sweepHtml(const nlohmann::json& sweep, const std::string& chartJs);

} // namespace jetagent
