#include "jetagent/base/format.h"

#include <cstdarg>
#include <cstdio>

namespace jetagent {

namespace {

// Appends the formatted text to `out`: one pass into the string's spare room (most texts fit a
// small one), a second at the exact size when they did not.
void appendV(std::string& out, const char* format, va_list args) JETAGENT_PRINTF(2, 0);

void appendV(std::string& out, const char* format, va_list args)
{
    const size_t start = out.size();
    out.resize(start + 128);
    va_list again;
    va_copy(again, args);
    const int n = std::vsnprintf(&out[start], out.size() - start + 1, format, args);
    if (n < 0) { // an encoding error: keep what came before
        out.resize(start);
        va_end(again);
        return;
    }
    const size_t written = static_cast<size_t>(n);
    if (written > out.size() - start) {
        out.resize(start + written);
        std::vsnprintf(&out[start], written + 1, format, again);
    } else {
        out.resize(start + written);
    }
    va_end(again);
}

} // namespace

std::string formatText(const char* format, ...)
{
    std::string out;
    va_list args;
    va_start(args, format);
    appendV(out, format, args);
    va_end(args);
    return out;
}

void appendText(std::string& out, const char* format, ...)
{
    va_list args;
    va_start(args, format);
    appendV(out, format, args);
    va_end(args);
}

} // namespace jetagent
