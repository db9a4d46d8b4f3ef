// Small text helpers every layer shares: splitting the lines and fields of small text files,
// the order people expect of numbered names, and the pieces the logs and summaries are written
// with (fmt-formatted appends, JSON numbers, CSV cells).
#pragma once

#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <spdlog/fmt/fmt.h>

namespace jetagent {

// `text` cut at every `separator`: n separators give n + 1 fields, empty ones included ("a,,b"
// gives "a", "", "b"; "" gives one empty field).
std::vector<std::string> splitFields(std::string_view text, char separator);

// The lines of `text` as std::getline reads them: cut at each '\n', with no last empty line after
// a final '\n' ("" gives none, "a\n" gives "a"). A '\r' before the '\n' stays in the line.
std::vector<std::string> splitLines(std::string_view text);

// `text` without the white space around it (std::isspace's: spaces, tabs, line ends).
std::string trimSpace(std::string_view text);

// Name ordering that people expect from numbered names: "frame2.png" before "frame10.png",
// "hwmon9" before "hwmon10", "1-0040" before "1-0041".
// Compares names so that embedded digit runs sort by value; equal values with more leading zeros
// come later. Otherwise byte order.
bool naturalLess(const std::string& a, const std::string& b);

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
