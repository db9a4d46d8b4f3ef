// Preparation: the pass pipeline that turns a checked model into the form one backend accepts,
// and the cache that makes it run once per model.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jetagent/base/status.h"
#include "jetagent/engines/model_file.h"
#include "jetagent/engines/model_passes.h"

namespace jetagent {

struct PrepareOptions {
    std::string backend = "opencv"; // whose canonical forms to produce
    int64_t batch = 1; // fixed batch size; 0 leaves the batch dimension free (symbolic)
    std::string cacheDir; // where prepared models are kept; empty = prepare in memory every time
};

struct PreparedModel {
    std::shared_ptr<const std::string> bytes; // the prepared model, serialised ONNX
    std::string key; // identifies the prepared model: SHA-256 of the source model's SHA-256, the
                     // pass list and the preparation code's revision (its cache file name)
    std::string passList; // "set-batch=8,eliminate-identity,..."
    std::string cachePath; // the cached file; empty when no cache is used
    bool fromCache = false; // true: loaded from the cache, no pass ran
    int64_t ns = 0; // preparing, or reading from the cache
    int nodesBefore = 0;
    int nodesAfter = 0;
    std::vector<PassReport> passes; // what each pass changed (also kept in the cache)
};

// The pass list for a backend; an empty list for backends that take models as they are.
// Unknown backend: InvalidInput.
Expected<std::vector<std::string>> preparationPasses(const std::string& backend, int64_t batch);

// Runs the passes on a copy of `model` (or reads the result from the cache: keyed by the model's
// SHA-256, the pass list and the preparation code's revision). A cache directory that cannot be
// created or written is an error naming it (Io); a damaged cache entry is prepared afresh.
Expected<PreparedModel> prepareModel(const ModelFile& model, const PrepareOptions& options);

// The cache directory used when the configuration names none: $CACHE_DIRECTORY (systemd's
// CacheDirectory=), else $XDG_CACHE_HOME/jetagent, else $HOME/.cache/jetagent; empty when none of
// these is set.
std::string defaultCacheDir();

} // namespace jetagent
