// printf-style formatting into a std::string that grows to fit: the one way jetagent's libraries
// build text from numbers and strings of any length. No fixed buffer is filled from a string whose
// length a config, a labels file, a model or a device chose (a 1,000-character label once wrote
// past a 320-byte status line); a test keeps snprintf out of the libraries' sources.
#pragma once

#include <string>

#if defined(__GNUC__) || defined(__clang__)
#define JETAGENT_PRINTF(format_index, first_arg)                                                   \
    __attribute__((format(printf, format_index, first_arg)))
#else
#define JETAGENT_PRINTF(format_index, first_arg)
#endif

namespace jetagent {

// The text printf would write for `format` and its arguments, whole, however long.
std::string formatText(const char* format, ...) JETAGENT_PRINTF(1, 2);

// Appends what formatText would return to `out`.
void appendText(std::string& out, const char* format, ...) JETAGENT_PRINTF(2, 3);

} // namespace jetagent
