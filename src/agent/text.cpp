// Small text-building helpers shared by the frame logs and the summaries.
#include "text.h"

#include <cmath>
#include <string_view>

namespace jetagent {

void appendJsonNumber(std::string& out, double value, int decimals)
{
    if (std::isfinite(value))
        appendFormat(out, "{:.{}f}", value, decimals);
    else
        out += "null";
}

std::string csvEscape(const std::string& s)
{
    const bool formula = !s.empty() && std::string_view("=+-@\t\r").find(s[0]) != std::string::npos;
    if (!formula && s.find_first_of(",\"\r\n") == std::string::npos)
        return s;
    std::string out = formula ? "\"'" : "\"";
    for (char c : s) {
        if (c == '"')
            out += '"';
        out += c;
    }
    return out + "\"";
}

} // namespace jetagent
