// Self-contained offline HTML report pages with Chart.js charts (the sweep's and the run reports').
#include "html_report.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <utility>

#include "jetagent/base/json_text.h"
#include "jetagent/base/regular_file.h"

namespace jetagent {

namespace {

// Chart.js 3.9.1's minified build is 200 KB and its full build 550 KB.
constexpr uint64_t kMaxChartJsBytes = 16u << 20;

// The page allows nothing to be fetched (no script, style, image or connection from anywhere), so
// it behaves the same offline and cannot leak that it was opened; inline script and style only.
constexpr const char* kContentPolicy = "default-src 'none'; script-src 'unsafe-inline'; "
                                       "style-src 'unsafe-inline'; img-src data:";

constexpr const char* kStyle = R"css(
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; max-width: 1200px; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.unit { font-weight: normal; color: #666; }
.table-wrap { overflow-x: auto; }
.omitted { color: #666; font-style: italic; }
.warning { color: #8a4b00; font-weight: bold; }
.page-errors { border: 2px solid #b00; background: #fee; padding: 0.5em 1em; }
canvas { display: block; border: 1px solid #eee; }
pre { background: #f6f6f6; padding: 0.5em; overflow-x: auto; }
)css";

// Runs before Chart.js: every script error, rejected promise, blocked fetch and console.error is
// counted on <body data-errors> and listed in the visible box, so that neither a reader nor the
// browser test misses one.
constexpr const char* kErrorCapture = R"js(
(function () {
  'use strict';
  var body = document.body;
  var count = 0;
  body.dataset.errors = '0';
  function report(message) {
    count += 1;
    body.dataset.errors = String(count);
    var box = document.getElementById('page-errors');
    box.hidden = false;
    var item = document.createElement('li');
    item.textContent = String(message);
    box.querySelector('ul').appendChild(item);
  }
  window.jetagentPageError = report;
  window.addEventListener('error', function (event) {
    var file = event.filename ? event.filename.split('/').pop() : '';
    report('script error: ' + event.message + (file ? ' (' + file + ':' + event.lineno + ')' : ''));
  });
  window.addEventListener('unhandledrejection', function (event) {
    report('unhandled promise rejection: ' + event.reason);
  });
  document.addEventListener('securitypolicyviolation', function (event) {
    report('blocked fetch of ' + event.blockedURI + ' (the page must be self-contained)');
  });
  var consoleError = console.error;
  console.error = function () {
    report('console.error: ' + Array.prototype.map.call(arguments, String).join(' '));
    return consoleError.apply(console, arguments);
  };
})();
)js";

// Runs last: draws each chart, counts the ones whose canvas was painted, reports the others.
constexpr const char* kDrawCharts = R"js(
(function () {
  'use strict';
  var body = document.body;
  var drawn = 0;
  function afterLabel(context) {
    var notes = context.dataset.notes;
    return notes ? notes[context.dataIndex] : '';
  }
  function painted(canvas) {
    var pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    for (var i = 3; i < pixels.length; i += 4) {
      if (pixels[i] !== 0) return true;
    }
    return false;
  }
  try {
    if (typeof Chart !== 'function') throw new Error('Chart.js did not load');
    Chart.defaults.animation = false;
    Chart.defaults.responsive = false;
    var specs = JSON.parse(document.getElementById('report-charts').textContent);
    specs.forEach(function (spec) {
      try {
        var canvas = document.getElementById(spec.id);
        if (!canvas) throw new Error('its canvas is missing');
        var options = spec.config.options = spec.config.options || {};
        options.animation = false;
        options.responsive = false;
        options.plugins = options.plugins || {};
        options.plugins.tooltip = options.plugins.tooltip || {};
        options.plugins.tooltip.callbacks = { afterLabel: afterLabel };
        var chart = new Chart(canvas, spec.config);
        if (!chart || !painted(canvas)) throw new Error('nothing was drawn');
        canvas.dataset.drawn = 'true';
        drawn += 1;
      } catch (error) {
        window.jetagentPageError('chart ' + spec.id + ': ' + error.message);
      }
    });
  } catch (error) {
    window.jetagentPageError('charts: ' + error.message);
  }
  body.dataset.chartsDrawn = String(drawn);
  body.dataset.done = 'true';
})();
)js";

std::string lowerCase(std::string text)
{
    std::transform(text.begin(), text.end(), text.begin(),
        [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

} // namespace

Expected<std::string> chartJsSource(const std::string& path)
{
    const std::string file = path.empty() ? kDebianChartJsPath : path;
    const std::string what = "Chart.js file '" + file + "'";
    std::string text;
    if (Status s = readRegularFile(file, what, kMaxChartJsBytes, text); !s) {
        if (s.kind() == ErrorKind::NotFound)
            return Status::notFound(s.message() +
                ": install Debian's Chart.js (apt install libjs-chart.js), which puts it at " +
                kDebianChartJsPath + ", or name another Chart.js 3 UMD build");
        return s;
    }
    const std::string lower = lowerCase(text);
    for (const char* ending : {"</script", "<!--"})
        if (lower.find(ending) != std::string::npos)
            return Status::invalid(what + " contains '" + ending +
                "', which would end the page's inline <script> early: use the minified UMD build "
                "(" +
                kDebianChartJsPath + ")");
    return text;
}

std::string chartColour(size_t index)
{
    static constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
        "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
    return kPalette[index % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

std::string htmlEscape(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

std::string scriptJsonText(const nlohmann::json& value)
{
    const std::string text = jsonText(value);
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        // '<' occurs only inside JSON strings, where \u003c means the same character.
        if (c == '<')
            out += "\\u003c";
        else
            out += c;
    }
    return out;
}

HtmlPage::HtmlPage(std::string title) : title_(std::move(title)) { }

void HtmlPage::append(const std::string& html)
{
    body_ += html;
}

void HtmlPage::heading(int level, const std::string& text)
{
    const std::string tag = "h" + std::to_string(std::clamp(level, 1, 4));
    body_ += "<" + tag + ">" + htmlEscape(text) + "</" + tag + ">\n";
}

void HtmlPage::paragraph(const std::string& text, const std::string& cssClass)
{
    body_ += cssClass.empty() ? "<p>" : "<p class=\"" + htmlEscape(cssClass) + "\">";
    body_ += htmlEscape(text) + "</p>\n";
}

void HtmlPage::chart(
    const std::string& id, const std::string& title, nlohmann::json config, int width, int height)
{
    body_ += "<section class=\"chart\">\n<h3>" + htmlEscape(title) + "</h3>\n<canvas id=\"" +
        htmlEscape(id) + "\" width=\"" + std::to_string(width) + "\" height=\"" +
        std::to_string(height) + "\" role=\"img\" aria-label=\"" + htmlEscape(title) +
        "\"></canvas>\n</section>\n";
    charts_.push_back({{"id", id}, {"config", std::move(config)}});
}

void HtmlPage::omittedChart(
    const std::string& id, const std::string& title, const std::string& reason)
{
    body_ += "<section class=\"chart\">\n<h3>" + htmlEscape(title) +
        "</h3>\n<p class=\"omitted\" id=\"" + htmlEscape(id) +
        "-omitted\">Not drawn: " + htmlEscape(reason) + "</p>\n</section>\n";
}

void HtmlPage::table(const std::string& id, const std::vector<HtmlColumn>& columns,
    const std::vector<std::vector<std::string>>& rows)
{
    std::string html =
        "<div class=\"table-wrap\"><table id=\"" + htmlEscape(id) + "\">\n<thead><tr>";
    for (const HtmlColumn& column : columns) {
        html += column.description.empty()
            ? "<th>"
            : "<th title=\"" + htmlEscape(column.description) + "\">";
        html += htmlEscape(column.name);
        if (!column.unit.empty())
            html += "<br><span class=\"unit\">" + htmlEscape(column.unit) + "</span>";
        html += "</th>";
    }
    html += "</tr></thead>\n<tbody>\n";
    for (const std::vector<std::string>& row : rows) {
        html += "<tr>";
        for (size_t i = 0; i < row.size(); ++i) {
            const bool numeric = i < columns.size() && columns[i].numeric;
            html += numeric ? "<td class=\"num\">" : "<td>";
            html += htmlEscape(row[i]) + "</td>";
        }
        html += "</tr>\n";
    }
    body_ += html + "</tbody>\n</table></div>\n";
}

std::string HtmlPage::render(const std::string& chartJs, const nlohmann::json& data) const
{
    std::string page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    page += "<meta http-equiv=\"Content-Security-Policy\" content=\"" +
        std::string(kContentPolicy) +
        "\">\n<meta name=\"generator\" content=\"jetagent\">\n<title>" + htmlEscape(title_) +
        "</title>\n<style>" + kStyle + "</style>\n</head>\n";
    page += "<body data-charts-expected=\"" + std::to_string(chartCount()) + "\">\n";
    page += "<div id=\"page-errors\" class=\"page-errors\" hidden><p>This page's script reported "
            "errors:</p><ul></ul></div>\n";
    page += "<script>" + std::string(kErrorCapture) + "</script>\n";
    page += "<script>\n" + chartJs + "\n</script>\n";
    page += body_;
    page += "<script type=\"application/json\" id=\"report-charts\">" + scriptJsonText(charts_) +
        "</script>\n";
    page += "<script type=\"application/json\" id=\"report-data\">" + scriptJsonText(data) +
        "</script>\n";
    page += "<script>" + std::string(kDrawCharts) + "</script>\n</body>\n</html>\n";
    return page;
}

} // namespace jetagent
