// Small text-building helpers shared by the frame logs and the summaries.
#pragma once

#include <string>

namespace jetagent {

// Appends printf-formatted text (at most 511 characters a call) to `out`. A string that keeps its
// capacity between calls makes steady-state formatting allocation-free.
__attribute__((format(printf, 2, 3))) void appendf(std::string& out, const char* format, ...);

} // namespace jetagent
