// Self-contained offline HTML report pages with Chart.js charts (the sweep's and the run reports'),
// built from web/report's page, style and scripts.
#include "html_report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <utility>

#include <spdlog/fmt/fmt.h>

#include "jetagent/base/json_text.h"
#include "jetagent/base/regular_file.h"
#include "jetagent/web/pages.h"

namespace jetagent {

namespace {

// Chart.js 3.9.1's minified build is 200 KB and its full build 550 KB.
constexpr uint64_t kMaxChartJsBytes = 16u << 20;

std::string lowerCase(std::string text)
{
    std::transform(text.begin(), text.end(), text.begin(),
        [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

// "11,689,512": parameter and MAC counts are read at a glance.
std::string groupedInteger(double value)
{
    std::string digits = fmt::format("{:.0f}", std::fabs(value));
    for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3)
        digits.insert(static_cast<size_t>(i), ",");
    return (value < 0 && digits != "0" ? "-" : "") + digits;
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

// web/report/page.html's Content-Security-Policy allows nothing to be fetched (no script, style,
// image or connection from anywhere), so the page behaves the same offline and cannot leak that it
// was opened: inline script and style only. errors.js runs before Chart.js and counts every script
// error, rejected promise, blocked fetch and console.error on <body data-errors>, listing them in
// the visible box; charts.js runs last, draws each chart and reports the ones that drew nothing.
std::string HtmlPage::render(const std::string& chartJs, const nlohmann::json& data) const
{
    const std::string title = htmlEscape(title_);
    const std::string chartsExpected = std::to_string(chartCount());
    const std::string charts = scriptJsonText(charts_);
    const std::string json = scriptJsonText(data);
    return web::fillTemplate(web::reportPageHtml(),
        {{"title", title}, {"style", web::reportStyleCss()}, {"charts_expected", chartsExpected},
            {"error_capture", web::reportErrorsJs()}, {"chart_js", chartJs}, {"body", body_},
            {"charts", charts}, {"data", json}, {"draw_charts", web::reportChartsJs()}});
}

const nlohmann::json& jsonMember(const nlohmann::json& object, const char* key)
{
    static const nlohmann::json null;
    if (!object.is_object())
        return null;
    const auto it = object.find(key);
    return it == object.end() ? null : *it;
}

std::vector<const nlohmann::json*> jsonItems(const nlohmann::json& object, const char* key)
{
    std::vector<const nlohmann::json*> items;
    const nlohmann::json& value = jsonMember(object, key);
    if (value.is_array())
        for (const nlohmann::json& item : value)
            items.push_back(&item);
    return items;
}

std::string jsonString(const nlohmann::json& object, const char* key)
{
    const nlohmann::json& value = jsonMember(object, key);
    return value.is_string() ? value.get<std::string>() : std::string();
}

std::optional<double> jsonNumber(const nlohmann::json& object, const char* key)
{
    const nlohmann::json& value = jsonMember(object, key);
    if (!value.is_number())
        return std::nullopt;
    const double number = value.get<double>();
    return std::isfinite(number) ? std::optional<double>(number) : std::nullopt;
}

std::string markdownCell(const std::string& text)
{
    std::string out;
    for (char c : text)
        out += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
    return out;
}

std::string formatNumber(double value)
{
    if (!std::isfinite(value))
        return "—";
    if (std::fabs(value) >= 1e4 || (value == std::floor(value) && std::fabs(value) < 1e15))
        return groupedInteger(value);
    return fmt::format("{:.4g}", value);
}

std::string formatValue(const nlohmann::json& value, double scale)
{
    if (value.is_null())
        return "—";
    if (value.is_number())
        return formatNumber(value.get<double>() * scale);
    if (value.is_string())
        return value.get<std::string>();
    if (value.is_boolean())
        return value.get<bool>() ? "yes" : "no";
    if (value.is_array() && std::all_of(value.begin(), value.end(), [](const nlohmann::json& item) {
            return item.is_primitive();
        })) {
        std::string text;
        for (const nlohmann::json& item : value)
            text += (text.empty() ? "" : ", ") + formatValue(item);
        return text;
    }
    return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json chartAxis(const std::string& title, const char* type)
{
    nlohmann::json scale = {{"title", {{"display", true}, {"text", title}}}};
    if (type)
        scale["type"] = type;
    return scale;
}

nlohmann::json axisFromZero(const std::string& title)
{
    nlohmann::json scale = chartAxis(title);
    scale["beginAtZero"] = true;
    return scale;
}

nlohmann::json chartDataset(
    const std::string& label, nlohmann::json data, nlohmann::json notes, size_t index)
{
    return {{"label", label}, {"data", std::move(data)}, {"notes", std::move(notes)},
        {"backgroundColor", chartColour(index)}, {"borderColor", chartColour(index)}};
}

} // namespace jetagent
