// Files of the engine cache (prepared models, plans, tables): atomic writes and whole reads.
#include "jetagent/engines/cache_file.h"

#include <cerrno>
#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jetagent/engines/sha256.h"

namespace jetagent {

namespace fs = std::filesystem;

namespace {

Status syncDirectory(const std::string& dir)
{
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return Status::io("cannot open directory '" + dir + "': " + errnoText(errno));
    const int rc = ::fsync(fd);
    const int error = errno;
    ::close(fd);
    if (rc != 0)
        return Status::io("cannot sync directory '" + dir + "': " + errnoText(error));
    return Status();
}

} // namespace

std::pair<int, std::string> makeTemporaryFile(const std::string& pathPrefix)
{
    std::string name = pathPrefix + ".tmp.XXXXXX"; // mkstemp replaces the Xs
    const int fd = ::mkstemp(name.data());
    return {fd, name};
}

Status writeFileAtomically(const std::string& path, const std::string& bytes)
{
    // Plain variables, not a structured binding: C++17 lambdas cannot capture those.
    const std::pair<int, std::string> tmp = makeTemporaryFile(path);
    const int fd = tmp.first;
    const std::string& tmpPath = tmp.second;
    if (fd < 0)
        return Status::io("cannot write '" + path + "': " + errnoText(errno));
    auto fail = [&](const std::string& what, int error) {
        ::close(fd);
        ::unlink(tmpPath.c_str());
        return Status::io("cannot write '" + path + "': " + what + ": " + errnoText(error));
    };
    // mkstemp creates 0600; cached files are meant to be read by other users too (jetagent
    // backends, a user's own runs against the service's cache).
    if (::fchmod(fd, 0644) != 0)
        return fail("chmod", errno);
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return fail("write", errno);
        done += static_cast<size_t>(n);
    }
    // The data reaches the disk before the rename does: after a power cut the file is the old
    // one or the whole new one.
    if (::fsync(fd) != 0)
        return fail("fsync", errno);
    if (::close(fd) != 0) {
        const int error = errno;
        ::unlink(tmpPath.c_str());
        return Status::io("cannot write '" + path + "': close: " + errnoText(error));
    }
    if (::rename(tmpPath.c_str(), path.c_str()) != 0) {
        const int error = errno;
        ::unlink(tmpPath.c_str());
        return Status::io("cannot rename into '" + path + "': " + errnoText(error));
    }
    // Makes the rename itself durable, and so keeps the order of two writes (plan, then metadata).
    const fs::path parent = fs::path(path).parent_path();
    return syncDirectory(parent.empty() ? "." : parent.string());
}

Expected<std::optional<std::string>> readFileIfPresent(const std::string& path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return std::optional<std::string>();
        return Status::io("cannot read '" + path + "': " + errnoText(errno));
    }
    struct stat st { };
    if (::fstat(fd, &st) != 0) {
        const int error = errno;
        ::close(fd);
        return Status::io("cannot read '" + path + "': " + errnoText(error));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return Status::io("cannot read '" + path + "': not a regular file");
    }
    std::string bytes;
    bytes.reserve(static_cast<size_t>(st.st_size));
    char buffer[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            const int error = errno;
            ::close(fd);
            return Status::io("cannot read '" + path + "': " + errnoText(error));
        }
        if (n == 0)
            break;
        bytes.append(buffer, static_cast<size_t>(n));
    }
    ::close(fd);
    return std::optional<std::string>(std::move(bytes));
}

namespace {

// sha256sum's line for `bytes` stored as `path`.
std::string digestLine(const std::string& path, const std::string& bytes)
{
    return Sha256::hex(bytes.data(), bytes.size()) + "  " + fs::path(path).filename().string() +
        "\n";
}

} // namespace

std::string cacheDigestPath(const std::string& path)
{
    return path + ".sha256";
}

Status writeCacheEntry(const std::string& path, const std::string& bytes)
{
    const std::string digestPath = cacheDigestPath(path);
    if (::unlink(digestPath.c_str()) != 0 && errno != ENOENT)
        return Status::io("cannot remove '" + digestPath + "': " + errnoText(errno));
    if (Status s = writeFileAtomically(path, bytes); !s)
        return s;
    return writeFileAtomically(digestPath, digestLine(path, bytes));
}

CacheEntryRead readCacheEntry(const std::string& path)
{
    CacheEntryRead entry;
    auto content = readFileIfPresent(path);
    if (!content) {
        entry.damaged = content.status().message();
        return entry;
    }
    if (!content->has_value())
        return entry;
    auto digest = readFileIfPresent(cacheDigestPath(path));
    if (!digest) {
        entry.damaged = digest.status().message();
        return entry;
    }
    if (!digest->has_value()) {
        entry.damaged = "it has no SHA-256 digest beside it (written by an older jetagent, or "
                        "its store was interrupted)";
        return entry;
    }
    // The whole digest file must be the line writeCacheEntry writes for this content: a damaged
    // digest is as much a damaged entry as damaged content.
    if (**digest != digestLine(path, **content)) {
        entry.damaged = "its content (" + std::to_string((*content)->size()) +
            " bytes) differs from its SHA-256 digest (damaged on disk, or changed by hand)";
        return entry;
    }
    entry.bytes = std::move(*content);
    return entry;
}

} // namespace jetagent
