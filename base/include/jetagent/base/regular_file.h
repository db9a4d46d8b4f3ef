// Reading files that must be regular files: a FIFO, socket or device named where a file belongs
// would block its reader forever or never end.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <utility>

#include "jetagent/base/status.h"

namespace jetagent {

// What a file that is not a regular one is, for errors: "a FIFO (named pipe)", "a directory".
inline std::string fileTypeText(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO (named pipe)";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISLNK(mode))
        return "a symbolic link";
    return "not a regular file";
}

// An open descriptor, closed when the object goes.
class FileDescriptor {
public:
    explicit FileDescriptor(int fd = -1) : fd_(fd) { }
    ~FileDescriptor()
    {
        if (fd_ >= 0)
            ::close(fd_);
    }
    FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
    FileDescriptor& operator=(FileDescriptor&&) = delete;
    FileDescriptor(const FileDescriptor&) = delete;
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    int get() const { return fd_; }

private:
    int fd_;
};

// Whether opening a file may go through a symbolic link at its last component.
enum class FileLinks {
    Follow, // the link's target is opened (a config or a model named by the user)
    // A link is refused without being followed: files found in a directory that someone else may
    // write (a run's logs), which a link could make point anywhere (/etc/shadow).
    Refuse,
};

// Opens `path` for reading when it is a regular file and gives its size in `size`. The open never
// blocks: O_NONBLOCK makes a FIFO open at once (instead of waiting for a writer) so that fstat can
// refuse it; on a regular file the flag changes nothing. With FileLinks::Refuse a symbolic link,
// and anything that lstat says is not a regular file, is refused before any open (a device is
// never opened), and O_NOFOLLOW with fstat on the descriptor close the race of a file swapped in
// between. Errors name the file as `what` ("labels file 'x.txt'"): NotFound when it is missing,
// InvalidInput when it cannot be opened (permissions), is a link (Refuse) or is not a regular
// file, Io when fstat fails.
inline Expected<FileDescriptor> openRegularFile(const std::string& path, const std::string& what,
    uint64_t& size, FileLinks links = FileLinks::Follow)
{
    const char* const kLinkRefused = " is a symbolic link, which is not followed here (a link "
                                     "could lead out of its directory): put the file itself there";
    if (links == FileLinks::Refuse) {
        struct stat st { };
        if (::lstat(path.c_str(), &st) != 0) {
            const int error = errno;
            if (error == ENOENT || error == ENOTDIR)
                return Status::notFound(what + " does not exist");
            return Status::invalid(what + " cannot be examined: " + errnoText(error));
        }
        if (S_ISLNK(st.st_mode))
            return Status::invalid(what + kLinkRefused);
        if (!S_ISREG(st.st_mode))
            return Status::invalid(
                what + " is " + fileTypeText(st.st_mode) + ", not a regular file");
    }
    const int noFollow = links == FileLinks::Refuse ? O_NOFOLLOW : 0;
    FileDescriptor fd(
        ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | noFollow));
    if (fd.get() < 0) {
        const int error = errno;
        if (error == ENOENT || error == ENOTDIR)
            return Status::notFound(what + " does not exist");
        if (error == ELOOP && links == FileLinks::Refuse)
            return Status::invalid(what + kLinkRefused);
        return Status::invalid(what + " cannot be opened: " + errnoText(error));
    }
    struct stat st { };
    if (::fstat(fd.get(), &st) != 0)
        return Status::io(what + " cannot be examined: " + errnoText(errno));
    if (!S_ISREG(st.st_mode))
        return Status::invalid(what + " is " + fileTypeText(st.st_mode) + ", not a regular file");
    size = static_cast<uint64_t>(st.st_size);
    return Expected<FileDescriptor>(std::move(fd));
}

// Reads up to `maxBytes` from the start of the open file into `out` (resized to what was read).
template <class Bytes>
Status readFileHead(
    const FileDescriptor& fd, const std::string& what, uint64_t maxBytes, Bytes& out)
{
    out.resize(static_cast<size_t>(maxBytes));
    size_t done = 0;
    while (done < out.size()) {
        const ssize_t n =
            ::pread(fd.get(), &out[done], out.size() - done, static_cast<off_t>(done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return Status::io(what + " cannot be read: " + errnoText(errno));
        if (n == 0)
            break;
        done += static_cast<size_t>(n);
    }
    out.resize(done);
    return Status();
}

// Reads all of `path` into `out` (a std::string or a byte vector, reused) when it is a regular file
// of at most `maxBytes`; a larger one is refused (InvalidInput) before anything is read. Errors and
// `links` as for openRegularFile.
template <class Bytes>
Status readRegularFile(const std::string& path, const std::string& what, uint64_t maxBytes,
    Bytes& out, FileLinks links = FileLinks::Follow)
{
    uint64_t size = 0;
    auto fd = openRegularFile(path, what, size, links);
    if (!fd)
        return fd.status();
    if (size > maxBytes)
        return Status::invalid(what + " is " + std::to_string(size) + " bytes, more than the " +
            std::to_string(maxBytes) + " it may have");
    // One byte more than fstat said, to notice a file that grew meanwhile.
    if (Status s = readFileHead(fd.value(), what, size + 1, out); !s)
        return s;
    if (out.size() != size)
        return Status::io(what + " changed size while it was read");
    return Status();
}

} // namespace jetagent
