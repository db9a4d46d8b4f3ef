// The narrowest seam under the V4L2 code: the system calls it makes on a video device. The real
// implementation passes straight through to the kernel; tests substitute a fake camera.
#pragma once

#include <poll.h>
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace jetagent {

// Each call behaves exactly like the system call of the same name: -1 (or MAP_FAILED) with errno
// set on failure. Implementations must be safe to call from the thread that owns the device.
class V4L2Io {
public:
    virtual ~V4L2Io() = default;
    V4L2Io() = default;
    V4L2Io(const V4L2Io&) = delete;
    V4L2Io& operator=(const V4L2Io&) = delete;

    virtual int open(const char* path, int flags) = 0;
    virtual int close(int fd) = 0;
    virtual int ioctl(int fd, unsigned long request, void* arg) = 0;
    virtual void* mmap(size_t length, int prot, int flags, int fd, off_t offset) = 0;
    virtual int munmap(void* address, size_t length) = 0;
    virtual int poll(struct pollfd* fds, nfds_t count, int timeoutMs) = 0;
    // The video device nodes present now (/dev/video*), in natural name order.
    virtual std::vector<std::string> listDevices() = 0;
};

// The kernel's V4L2 interface (open, ioctl with EINTR retried, mmap, poll; devices under /dev).
V4L2Io& systemV4L2Io();

} // namespace jetagent
