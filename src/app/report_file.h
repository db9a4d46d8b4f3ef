// Writing a report page: refused over anything but a regular file, over an existing one unless
// asked, through a synced temporary file renamed into place, whole or not at all.
#pragma once

#include <string>

#include "jetagent/base/status.h"

namespace jetagent {

// Why the page may not be written at `path`, or OK: an existing file only when `replace`, and
// then only a regular one. The path itself is examined (lstat): a link is refused, not followed.
Status outputFault(const std::string& path, bool replace);

// The page written to `path` through a synced temporary file in its directory, renamed over it;
// outputFault()'s refusals, checked again just before the rename.
Status writeReportFile(const std::string& path, const std::string& bytes, bool replace);

} // namespace jetagent
