// Prometheus' text format 0.0.4 and OpenMetrics 1.0, written from metric families.
#include "metrics/exposition.h"

#include <cmath>
#include <cstdlib>

#include "jetagent/base/format.h"

namespace jetagent {

const char* expositionContentType(ExpositionFormat format)
{
    return format == ExpositionFormat::OpenMetrics100
        ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
        : "text/plain; version=0.0.4; charset=utf-8";
}

ExpositionFormat negotiateExposition(const std::string& accept)
{
    return accept.find("application/openmetrics-text") != std::string::npos
        ? ExpositionFormat::OpenMetrics100
        : ExpositionFormat::Text004;
}

MetricFamily& MetricSet::family(
    const std::string& name, MetricType type, const std::string& unit, const std::string& help)
{
    for (MetricFamily& f : families_)
        if (f.name == name)
            return f;
    families_.push_back({name, type, unit, help, {}});
    return families_.back();
}

void MetricSet::add(const std::string& name, MetricType type, const std::string& unit,
    const std::string& help, MetricLabels labels, double value)
{
    MetricSample sample;
    sample.labels = std::move(labels);
    sample.value = value;
    family(name, type, unit, help).samples.push_back(std::move(sample));
}

std::string formatMetricNumber(double value)
{
    if (std::isnan(value))
        return "NaN";
    if (std::isinf(value))
        return value > 0 ? "+Inf" : "-Inf";
    // Whole numbers (counts, clocks, timestamps) as integers, not 1.7e+09.
    if (std::fabs(value) < 1e15 && value == std::floor(value))
        return formatText("%.0f", value);
    std::string text;
    for (int precision = 1; precision <= 17; ++precision) {
        text = formatText("%.*g", precision, value);
        if (std::strtod(text.c_str(), nullptr) == value)
            break;
    }
    return text;
}

namespace {

const char* typeName(MetricType type)
{
    switch (type) {
    case MetricType::Counter: return "counter";
    case MetricType::Histogram: return "histogram";
    case MetricType::Info: return "info";
    case MetricType::Gauge: break;
    }
    return "gauge";
}

// Backslash and line feed always; the double quote in label values (and OpenMetrics' help).
void appendEscaped(std::string& out, const std::string& text, bool quote)
{
    for (char c : text) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '\n')
            out += "\\n";
        else if (c == '"' && quote)
            out += "\\\"";
        else
            out += c;
    }
}

// name{a="x",b="y"} value: `extra` is a last label (a bucket's le), "" for none.
void appendSample(std::string& out, const std::string& name, const MetricLabels& labels,
    const std::string& extraName, const std::string& extraValue, const std::string& value)
{
    out += name;
    if (!labels.empty() || !extraName.empty()) {
        out += '{';
        bool first = true;
        auto label = [&](const std::string& key, const std::string& text) {
            if (!first)
                out += ',';
            first = false;
            out += key;
            out += "=\"";
            appendEscaped(out, text, true);
            out += '"';
        };
        for (const auto& [key, text] : labels)
            label(key, text);
        if (!extraName.empty())
            label(extraName, extraValue);
        out += '}';
    }
    out += ' ';
    out += value;
    out += '\n';
}

void appendHistogram(std::string& out, const MetricFamily& f, const MetricSample& s)
{
    for (size_t i = 0; i < s.bounds.size() && i < s.cumulative.size(); ++i)
        appendSample(out, f.name + "_bucket", s.labels, "le", formatMetricNumber(s.bounds[i]),
            std::to_string(s.cumulative[i]));
    const uint64_t count = s.cumulative.empty() ? 0 : s.cumulative.back();
    appendSample(out, f.name + "_bucket", s.labels, "le", "+Inf", std::to_string(count));
    appendSample(out, f.name + "_sum", s.labels, "", "", formatMetricNumber(s.sum));
    appendSample(out, f.name + "_count", s.labels, "", "", std::to_string(count));
}

} // namespace

std::string writeExposition(const std::vector<MetricFamily>& families, ExpositionFormat format)
{
    const bool open = format == ExpositionFormat::OpenMetrics100;
    std::string out;
    for (const MetricFamily& f : families) {
        if (f.samples.empty())
            continue;
        const std::string suffix = f.type == MetricType::Counter ? "_total"
            : f.type == MetricType::Info                         ? "_info"
                                                                 : "";
        // Text 0.0.4 names a family by its samples' name and knows no info type (a gauge);
        // OpenMetrics names it without the suffix.
        const std::string familyName = open ? f.name : f.name + suffix;
        const char* type = !open && f.type == MetricType::Info ? "gauge" : typeName(f.type);
        out += "# HELP " + familyName + ' ';
        appendEscaped(out, f.help, open);
        out += "\n# TYPE " + familyName + ' ' + type + '\n';
        if (open && !f.unit.empty())
            out += "# UNIT " + familyName + ' ' + f.unit + '\n';
        for (const MetricSample& s : f.samples) {
            if (f.type == MetricType::Histogram)
                appendHistogram(out, f, s);
            else
                appendSample(out, f.name + suffix, s.labels, "", "", formatMetricNumber(s.value));
        }
    }
    if (open)
        out += "# EOF\n";
    return out;
}

} // namespace jetagent
