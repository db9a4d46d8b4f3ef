// sysfs and procfs access under a configurable root directory, so that every reader of board state
// runs unchanged against a fixture tree in tests (the root is "/" on a board).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "jetagent/base/status.h"

namespace jetagent {

// An attribute file kept open and re-read with pread() at offset 0: the kernel regenerates a sysfs
// attribute on every read from offset 0, so a sample costs one system call, not three.
class SysfsAttribute {
public:
    SysfsAttribute() = default;
    ~SysfsAttribute();
    SysfsAttribute(SysfsAttribute&& other) noexcept;
    SysfsAttribute& operator=(SysfsAttribute&& other) noexcept;
    SysfsAttribute(const SysfsAttribute&) = delete;
    SysfsAttribute& operator=(const SysfsAttribute&) = delete;

    // Opens `path` read-only. Returns 0 or a positive errno.
    int open(const std::string& path);
    // Closes and opens path() again (after a driver reload or a core coming online); 0 or errno.
    int reopen();
    bool isOpen() const { return fd_ >= 0; }
    const std::string& path() const { return path_; }

    // Reads the attribute as a decimal integer (leading/trailing blanks ignored, trailing text such
    // as " mA" ignored). Returns 0, or a positive errno: the read's own (EAGAIN, ENODATA, EIO...),
    // ENODATA for an empty read, EINVAL for text that is not a number, EBADF when not open.
    int readInt(int64_t& value) const;
    // Reads the whole attribute (at most `capacity` - 1 bytes) into `buffer`, NUL-terminated.
    // Returns 0 or a positive errno as readInt.
    int readText(char* buffer, size_t capacity, size_t& length) const;

private:
    int fd_ = -1;
    std::string path_;
};

// A root directory that absolute sysfs/procfs/etc paths are resolved under.
class SysfsRoot {
public:
    explicit SysfsRoot(std::string root = "/");

    const std::string& root() const { return root_; }
    // `absolute` ("/sys/class/hwmon") under the root.
    std::string path(const std::string& absolute) const;

    bool exists(const std::string& absolute) const;
    bool isDirectory(const std::string& absolute) const;
    // Entry names of a directory (not "." or ".."), sorted; empty when it cannot be read.
    std::vector<std::string> list(const std::string& absolute) const;
    // A small file's text with trailing whitespace and NULs removed; an error names the path and
    // errno.
    Expected<std::string> readText(const std::string& absolute) const;
    // The file's text as an integer (as SysfsAttribute::readInt); nullopt when unreadable.
    std::optional<int64_t> readInt(const std::string& absolute) const;
    // The raw bytes of a small file (device-tree strings keep their NULs); error as readText.
    Expected<std::string> readBytes(const std::string& absolute) const;
    // Follows symlinks and returns the result as an absolute path inside the root ("/sys/devices/
    // ..."), or "" when it does not resolve or leaves the root.
    std::string canonical(const std::string& absolute) const;

private:
    std::string root_; // without a trailing slash; "" for "/"
};

// Parses a decimal integer the way sysfs writes one: blanks around it, optional trailing unit text.
// Returns 0, ENODATA for blank text, EINVAL for text that is not a number, ERANGE beyond int64.
int parseSysfsInt(const char* text, size_t length, int64_t& value);

// TEST SEAM, not for production code. Regular files cannot make read() fail the way sysfs
// attributes do (ENODATA from an unconnected INA3221 channel, EAGAIN from a gated JetPack 6 cv
// zone), so fixture trees register the failures here. Keys are host paths with symlinks resolved
// (the fixture's device files, whichever class or bus link they are read through); values are
// errnos. SysfsAttribute and SysfsRoot reads of a listed file fail with its errno; EACCES, EPERM
// and ENOENT fail the open instead, as a permission or a missing file would. nullptr clears the
// table. Replaced tables are kept until the process exits, because a reader on another thread may
// still be consulting one; with no table set a read pays one atomic load.
using SysfsReadFaults = std::map<std::string, int>;
void setSysfsReadFaults(std::shared_ptr<const SysfsReadFaults> faults);

} // namespace jetagent
