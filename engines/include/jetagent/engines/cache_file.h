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

// Cache entries whose content is checked when read: `path` holds the content, `path`.sha256 its
// SHA-256 in sha256sum's format ("<64 hex digits>  <file name>\n"; `sha256sum -c` checks it).
// The size alone let a damaged file through: a flipped byte in a prepared model or a table of
// ranges gave wrong results without a word.
std::string cacheDigestPath(const std::string& path);

// Writes `bytes` to `path` and then its digest, each atomically. The old digest goes first, so
// that an interrupted store leaves at worst content without a digest: a damaged entry, rebuilt.
// Io error naming the path on failure.
Status writeCacheEntry(const std::string& path, const std::string& bytes);

// What readCacheEntry found.
struct CacheEntryRead {
    std::optional<std::string> bytes; // the content, when present and its digest matches
    // Why a present entry cannot be used ("its content differs from its SHA-256 digest"), for the
    // caller to log before it rebuilds the entry; empty when there was no entry at all.
    std::string damaged;
};

// Reads the entry at `path` and checks it against its digest. No content: a plain miss. Content
// without a digest (an older jetagent's entry, an interrupted store), content or digest file that
// differ in any byte from what writeCacheEntry wrote, or a file that cannot be read: a miss with
// the reason in `damaged`.
CacheEntryRead readCacheEntry(const std::string& path);

} // namespace jetagent
