// Writing a report page safely (report_file.h).
#include "report_file.h"

#include <cerrno>
#include <cstdio>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jetagent/base/regular_file.h"
#include "jetagent/engines/cache_file.h"

namespace jetagent {

// Why the page may not be written at `path`, or OK: an existing file only when `replace`, and
// then only a regular one. The path itself is examined (lstat): a link is refused, not followed.
Status outputFault(const std::string& path, bool replace)
{
    struct stat st { };
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT)
            return Status();
        return Status::io("cannot write '" + path + "': " + errnoText(errno));
    }
    if (!S_ISREG(st.st_mode))
        return Status::invalid(path + " is " + fileTypeText(st.st_mode) +
            ": the report replaces only a regular file; name a new file with -o");
    if (!replace)
        return Status::invalid(path +
            " exists: the report overwrites nothing unless asked; name a new file with -o, or "
            "pass --force to replace it");
    return Status();
}

// Creates `path` from a temporary file: whole or not at all, and never over a file that appeared
// since it was checked (a rename that does not replace; a hard link where the file system has no
// such rename).
static Status renameWithoutReplacing(const std::string& tmpPath, const std::string& path)
{
    if (::renameat2(AT_FDCWD, tmpPath.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) == 0)
        return Status();
    int error = errno;
    if (error == EINVAL || error == ENOSYS) {
        if (::link(tmpPath.c_str(), path.c_str()) == 0) {
            ::unlink(tmpPath.c_str());
            return Status();
        }
        error = errno;
    }
    if (error == EEXIST)
        return outputFault(path, false);
    return Status::io("cannot rename into '" + path + "': " + errnoText(error));
}

// The page written to `path` through a synced temporary file in its directory, renamed over it;
// outputFault()'s refusals, checked again just before the rename.
Status writeReportFile(const std::string& path, const std::string& bytes, bool replace)
{
    const std::pair<int, std::string> tmp = makeTemporaryFile(path);
    if (tmp.first < 0)
        return Status::io("cannot write '" + path + "': " + errnoText(errno));
    const FileDescriptor fd(tmp.first);
    const std::string& tmpPath = tmp.second;
    auto fail = [&](const std::string& what, int error) {
        ::unlink(tmpPath.c_str());
        return Status::io("cannot write '" + path + "': " + what + ": " + errnoText(error));
    };
    // mkstemp creates 0600; a report is meant to be read (served, copied) by others too.
    if (::fchmod(fd.get(), 0644) != 0)
        return fail("chmod", errno);
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return fail("write", errno);
        done += static_cast<size_t>(n);
    }
    if (::fsync(fd.get()) != 0)
        return fail("fsync", errno);
    Status s = outputFault(path, replace);
    if (s && !replace)
        s = renameWithoutReplacing(tmpPath, path);
    else if (s && ::rename(tmpPath.c_str(), path.c_str()) != 0)
        s = Status::io("cannot rename into '" + path + "': " + errnoText(errno));
    if (!s)
        ::unlink(tmpPath.c_str());
    return s;
}

} // namespace jetagent
