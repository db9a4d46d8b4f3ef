// Small text-building helpers shared by the frame logs and the summaries.
#include "text.h"

#include <cmath>

namespace jetagent {

void appendJsonNumber(std::string& out, double value, int decimals)
{
    if (std::isfinite(value))
        appendFormat(out, "{:.{}f}", value, decimals);
    else
        out += "null";
}

} // namespace jetagent
