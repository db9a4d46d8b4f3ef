// Small text-building helpers shared by the frame logs and the summaries.
#pragma once

#include <iterator>
#include <string>
#include <utility>

#include <spdlog/fmt/fmt.h>

namespace jetagent {

// Appends fmt-formatted text ("{:.3f}", as std::format) to `out`. A string that keeps its capacity
// between calls makes steady-state formatting allocation-free.
template <typename Format, typename... Args>
void appendFormat(std::string& out, const Format& format, Args&&... args)
{
    fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
}

// Appends `value` as a JSON number with `decimals` digits after the point, or null when it is NaN
// or infinite (printf's "nan" and "inf" are not JSON: one such line and the log no longer parses).
void appendJsonNumber(std::string& out, double value, int decimals);

// `s` as one text CSV cell (RFC 4180): quoted, with quotes doubled, when it holds a comma, a quote
// or a line break; as it is otherwise. Text that a spreadsheet would take for a formula (it starts
// with '=', '+', '-', '@', a tab or a carriage return: a label "=cmd|' /C calc'!A0") is prefixed
// with an apostrophe and quoted, as OWASP advises for CSV files bound for spreadsheets. For text
// cells only: numbers are written as they are.
std::string csvEscape(const std::string& s);

} // namespace jetagent
