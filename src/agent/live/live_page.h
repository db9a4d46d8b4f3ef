// The live view's one page (`run --serve`): web/live's HTML, style and script, Chart.js inlined.
#pragma once

#include <string>

namespace jetagent {

// The page with `chartJs` (Chart.js 3, the UMD build) inlined, so it works with no network: the
// annotated video (/video.mjpg), each task's latest result, stage times and rolling percentiles,
// charts of latency, power per rail and temperature over the last minutes (/api/history, then
// one point a second from /api/events), and the run's context. A `?token=` in the page's address
// is passed on to what it fetches. Like the report pages, its script records on <body> what it
// did, for tools/check_live_page.py: data-charts-expected and data-charts-drawn, data-updates
// (status events taken), data-video-frames (changes seen in the video), data-errors (script
// errors and console.error calls, also listed in a visible box) and data-done.
std::string livePageHtml(const std::string& chartJs);

} // namespace jetagent
