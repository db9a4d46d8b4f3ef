// The kernel's V4L2 interface behind the V4L2Io seam.
#include "jetagent/hal/v4l2_io.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <filesystem>

#include "jetagent/base/text.h"

namespace jetagent {

namespace {

class SystemV4L2Io final : public V4L2Io {
public:
    // Character devices only: a regular file, FIFO or socket named as a camera is refused with
    // ENOTTY (what VIDIOC_QUERYCAP would say of it) before it is opened, since opening a FIFO can
    // block, and checked again on the descriptor in case the path changed in between.
    int open(const char* path, int flags) override
    {
        struct stat st { };
        if (::stat(path, &st) == 0 && !S_ISCHR(st.st_mode)) {
            errno = ENOTTY;
            return -1;
        }
        const int fd = ::open(path, flags);
        if (fd < 0)
            return fd;
        if (::fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode)) {
            ::close(fd);
            errno = ENOTTY;
            return -1;
        }
        return fd;
    }
    int close(int fd) override { return ::close(fd); }

    int ioctl(int fd, unsigned long request, void* arg) override
    {
        // A signal that lands during a blocking ioctl (DQBUF on a blocking descriptor, a slow
        // USB control transfer) interrupts it; the request itself is still valid.
        int result = 0;
        do
            result = ::ioctl(fd, request, arg);
        while (result == -1 && errno == EINTR);
        return result;
    }

    void* mmap(size_t length, int prot, int flags, int fd, off_t offset) override
    {
        return ::mmap(nullptr, length, prot, flags, fd, offset);
    }
    int munmap(void* address, size_t length) override { return ::munmap(address, length); }
    int poll(struct pollfd* fds, nfds_t count, int timeoutMs) override
    {
        return ::poll(fds, count, timeoutMs);
    }

    std::vector<std::string> listDevices() override
    {
        std::vector<std::string> names;
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator("/dev", ec)) {
            const std::string name = entry.path().filename().string();
            // videoN only: /dev/video-foo style udev aliases would list a device twice.
            if (name.size() > 5 && name.compare(0, 5, "video") == 0 &&
                std::all_of(name.begin() + 5, name.end(),
                    [](unsigned char c) { return std::isdigit(c) != 0; }))
                names.push_back(name);
        }
        std::sort(names.begin(), names.end(), naturalLess);
        for (std::string& name : names)
            name = "/dev/" + name;
        return names;
    }
};

} // namespace

V4L2Io& systemV4L2Io()
{
    static SystemV4L2Io io;
    return io;
}

} // namespace jetagent
