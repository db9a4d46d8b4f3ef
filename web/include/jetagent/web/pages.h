// The web pages as files (web/live, web/report), compiled into the program by
// cmake/embed_files.cmake, and the one way their {{placeholders}} are filled. The pages are built
// from these at run time, so what is served or written is exactly these files' bytes around what
// the run fills in.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace jetagent::web {

// The live view (`run --serve`, src/agent/live/live_page.cpp): page.html with {{style}}
// (style.css),
// {{chart_js}} (Chart.js) and {{script}} (script.js).
std::string_view livePageHtml();
std::string_view liveStyleCss();
std::string_view liveScriptJs();

// The report pages (src/app/html_report.cpp): page.html with {{title}}, {{style}} (style.css),
// {{charts_expected}}, {{error_capture}} (errors.js, which runs first), {{chart_js}}, {{body}},
// {{charts}} and {{data}} (JSON) and {{draw_charts}} (charts.js, which runs last).
std::string_view reportPageHtml();
std::string_view reportStyleCss();
std::string_view reportErrorsJs();
std::string_view reportChartsJs();

// `page` with each "{{name}}" that `values` names replaced by its text. The page alone is
// scanned, never the text put in, so a value may hold anything ("{{" in Chart.js included); a
// placeholder with no value stays as it is, for the tests to find.
std::string fillTemplate(std::string_view page,
    std::initializer_list<std::pair<std::string_view, std::string_view>> values);

} // namespace jetagent::web
