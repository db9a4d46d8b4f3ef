// Splitting text into lines and fields: the one splitter the parsers of small text files share.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace jetagent {

// `text` cut at every `separator`: n separators give n + 1 fields, empty ones included ("a,,b"
// gives "a", "", "b"; "" gives one empty field).
std::vector<std::string> splitFields(std::string_view text, char separator);

// The lines of `text` as std::getline reads them: cut at each '\n', with no last empty line after
// a final '\n' ("" gives none, "a\n" gives "a"). A '\r' before the '\n' stays in the line.
std::vector<std::string> splitLines(std::string_view text);

// `text` without the white space around it (std::isspace's: spaces, tabs, line ends).
std::string trimSpace(std::string_view text);

} // namespace jetagent
