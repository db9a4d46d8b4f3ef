// Files of the engine cache (prepared models, TensorRT plans, calibration tables, timing caches):
// written atomically, read whole.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "jetagent/base/status.h"

namespace jetagent {

// Writes `bytes` to `path` through a temporary file in the same directory, synced and renamed over
// it, so that readers (another jetagent, the next start after a power cut) see the old file or the
// whole new one, never part. Io error naming the path on failure; no temporary file is left behind.
Status writeFileAtomically(const std::string& path, const std::string& bytes);

// The whole content of `path`; nullopt when it does not exist; Io error naming it when it exists
// but cannot be read.
Expected<std::optional<std::string>> readFileIfPresent(const std::string& path);

// Creates and opens (read-write, mode 0600) a new file named `pathPrefix`.tmp.XXXXXX with the Xs
// made unique: its descriptor and path, or -1 with errno set.
std::pair<int, std::string> makeTemporaryFile(const std::string& pathPrefix);

} // namespace jetagent
