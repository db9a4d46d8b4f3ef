// Small text-building helpers shared by the frame logs and the summaries.
#include "text.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>

namespace jetagent {

__attribute__((format(printf, 2, 3))) void appendf(std::string& out, const char* format, ...)
{
    char buffer[512];
    va_list args;
    va_start(args, format);
    const int n = std::vsnprintf(buffer, sizeof buffer, format, args);
    va_end(args);
    if (n > 0)
        out.append(buffer, std::min(static_cast<size_t>(n), sizeof buffer - 1));
}

void appendJsonNumber(std::string& out, double value, int decimals)
{
    if (std::isfinite(value))
        appendFormat(out, "{:.{}f}", value, decimals);
    else
        out += "null";
}

} // namespace jetagent
