// Self-contained offline HTML report pages with Chart.js charts (the sweep's and the run reports').
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "jetagent/base/status.h"

namespace jetagent {

// Where Debian's libjs-chart.js installs Chart.js (3.9.1, the UMD build that defines `Chart`).
inline constexpr const char* kDebianChartJsPath = "/usr/share/javascript/chart.js/chart.min.js";

// Chart.js read from `path`, or from kDebianChartJsPath when `path` is empty, to be inlined into a
// page. NotFound (naming the file and `apt install libjs-chart.js`) when it is missing;
// InvalidInput when it is not a regular file, over 16 MiB, or holds text that would end the
// inline <script> early ("</script" or "<!--").
Expected<std::string> chartJsSource(const std::string& path);

// The charts' colours in order (Tableau's ten: distinct for the colour-blind and in grey print);
// `index` wraps around.
std::string chartColour(size_t index);

// `text` with & < > " ' as character references: safe in element content and quoted attributes.
std::string htmlEscape(std::string_view text);

// `value` as JSON text that is safe inside a <script> element: every '<' is written as \u003c, so
// no string in it ("</script>", "<!--") can end the element. Invalid UTF-8 is replaced (jsonText).
std::string scriptJsonText(const nlohmann::json& value);

// The size the sweep and devices pages draw their charts at (pixels; they scale with the page).
constexpr int kChartWidth = 1100;
constexpr int kChartHeight = 440;

// `object[key]`, or null when `object` is no object or lacks the key: a page is drawn from
// whatever its document holds.
const nlohmann::json& jsonMember(const nlohmann::json& object, const char* key);
// The elements of `object[key]` when it is an array, else none.
std::vector<const nlohmann::json*> jsonItems(const nlohmann::json& object, const char* key);
// `object[key]` when it is a string, else "".
std::string jsonString(const nlohmann::json& object, const char* key);
// `object[key]` when it is a finite number, else none.
std::optional<double> jsonNumber(const nlohmann::json& object, const char* key);
// Text as one Markdown table cell: pipes escaped, line breaks flattened.
std::string markdownCell(const std::string& text);

// A number as table text: whole numbers in full with thousands separators ("11,689,512"), others
// to four significant digits ("12.35", "0.8123"); "—" when it is not finite.
std::string formatNumber(double value);

// A JSON value as table text: "—" for null, numbers by formatNumber() (times `scale`: 100 shows a
// fraction as a percentage), strings as they are, lists of plain values joined by ", ".
std::string formatValue(const nlohmann::json& value, double scale = 1.0);

// A Chart.js axis with a title, of `type` ("logarithmic") when given; and a linear one from zero
// (throughputs and ratios read as proportions).
nlohmann::json chartAxis(const std::string& title, const char* type = nullptr);
nlohmann::json axisFromZero(const std::string& title);

// A Chart.js dataset in the `index`th chart colour; `notes` holds one tooltip line per point
// (HtmlPage::chart).
nlohmann::json chartDataset(
    const std::string& label, nlohmann::json data, nlohmann::json notes, size_t index);

// One column of an HTML table: its heading, the unit shown under it (may be empty), the
// description shown when the pointer rests on it (may be empty), and right alignment for numbers.
struct HtmlColumn {
    std::string name;
    std::string unit;
    std::string description;
    bool numeric = false;
};

// A report page under construction: sections, charts and tables in order, then render() gives one
// HTML document that needs nothing but the browser: Chart.js and the data are inlined, no file or
// network is fetched. The page's script records its own outcome on <body> for
// tools/check_html_page.py: data-charts-expected (set here), data-charts-drawn, data-errors (script
// errors, console.error calls and charts that drew nothing, also listed in a visible box) and
// data-done once the drawing script has finished.
class HtmlPage {
public:
    explicit HtmlPage(std::string title);

    // Raw HTML that the caller built; anything it shows must already be escaped.
    void append(const std::string& html);
    // Escaped text as <hN> (level 1 to 4) or as a paragraph with an optional CSS class.
    void heading(int level, const std::string& text);
    void paragraph(const std::string& text, const std::string& cssClass = "");
    // A chart: a heading, a fixed-size canvas with id `id`, and `config` (a Chart.js 3 chart
    // configuration: type, data, options) drawn into it. Datasets may carry `notes`, one string per
    // point, shown as an extra tooltip line. Animation is off and sizes are fixed, so a
    // screenshot shows the final chart.
    void chart(const std::string& id, const std::string& title, nlohmann::json config, int width,
        int height);
    // A chart left out: its heading and a line saying why (element id `id`-omitted).
    void omittedChart(const std::string& id, const std::string& title, const std::string& reason);
    // A table with id `id`; each row holds one plain-text cell per column (escaped here).
    void table(const std::string& id, const std::vector<HtmlColumn>& columns,
        const std::vector<std::vector<std::string>>& rows);

    int chartCount() const { return static_cast<int>(charts_.size()); }

    // The whole document with `chartJs` inlined and `data` inlined as JSON (element id
    // report-data) for readers who want the figures behind the page.
    std::string render(const std::string& chartJs, const nlohmann::json& data) const;

private:
    std::string title_;
    std::string body_;
    nlohmann::json charts_ = nlohmann::json::array();
};

} // namespace jetagent
