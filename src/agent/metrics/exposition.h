// Metric families written as Prometheus' text format 0.0.4 or OpenMetrics 1.0: the one writer
// that /metrics (the live plugin) and the textfiles of finished work (--prom-textfile) share.
// Pure: no I/O, no clock; names, labels and values come from the caller (run_metrics.h).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace jetagent {

enum class ExpositionFormat {
    Text004, // text/plain; version=0.0.4: what every Prometheus and node_exporter reads
    OpenMetrics100, // application/openmetrics-text; version=1.0.0: ends with "# EOF"
};

// The Content-Type of `format`, charset included.
const char* expositionContentType(ExpositionFormat format);
// The format a client asks for in its Accept header: OpenMetrics when it accepts
// application/openmetrics-text, otherwise text 0.0.4.
ExpositionFormat negotiateExposition(const std::string& accept);

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

// Info: an identity valued 1, whose family is named without "_info" and whose samples with it
// (OpenMetrics' info type; a gauge "<name>_info" in text 0.0.4).
enum class MetricType { Counter, Gauge, Histogram, Info };

// One labelled sample of a family: a value, or for histograms the buckets.
struct MetricSample {
    MetricLabels labels;
    double value = 0.0; // counters and gauges
    // Histograms: upper bounds in the family's unit (ascending, +Inf implied) and per bound the
    // number of observations at or below it, then the total count (cumulative, bounds.size() + 1
    // entries); the sum of the observations.
    std::vector<double> bounds;
    std::vector<uint64_t> cumulative;
    double sum = 0.0;
};

struct MetricFamily {
    std::string name; // a counter's without "_total", an info's without "_info" (added to samples)
    MetricType type = MetricType::Gauge;
    std::string unit; // "" or the unit the name ends with ("seconds"), for OpenMetrics' # UNIT
    std::string help; // one line
    std::vector<MetricSample> samples;
};

// Families in the order first asked for, each once.
class MetricSet {
public:
    // The family `name`, added with `type`, `unit` and `help` the first time it is asked for.
    MetricFamily& family(
        const std::string& name, MetricType type, const std::string& unit, const std::string& help);
    void add(const std::string& name, MetricType type, const std::string& unit,
        const std::string& help, MetricLabels labels, double value);

    const std::vector<MetricFamily>& families() const { return families_; }

private:
    std::vector<MetricFamily> families_;
};

// The exposition of `families` in `format`. Families without samples are left out. Label values
// and help are escaped as the formats require (backslash, double quote, line feed).
std::string writeExposition(const std::vector<MetricFamily>& families, ExpositionFormat format);

// A number as Prometheus' parsers read it: the shortest text that reads back as the same double,
// "+Inf", "-Inf" or "NaN".
std::string formatMetricNumber(double value);

} // namespace jetagent
