// Allocations counted in the binaries that link tests/alloc_counting.cpp: global operator new and
// the malloc family, each call once, from every thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jetagent/hal/v4l2_io.h"

namespace jetagent::test {

uint64_t countedNews(); // operator new and new[] calls so far
uint64_t countedMallocs(); // malloc, calloc, realloc, memalign, aligned_alloc, posix_memalign
uint64_t countedAllocations(); // both

// While one lives, this thread's allocations are not counted (code standing for the kernel).
class UncountedScope {
public:
    UncountedScope();
    ~UncountedScope();
    UncountedScope(const UncountedScope&) = delete;
    UncountedScope& operator=(const UncountedScope&) = delete;
};

// The fake camera with its own allocations left out of the count: it stands for the kernel, whose
// work costs the process no heap (the fake's buffer queue is a std::deque, which allocates a
// block every 128 QBUFs).
class KernelSideIo final : public V4L2Io {
public:
    explicit KernelSideIo(V4L2Io& fake) : fake_(fake) { }

    int open(const char* path, int flags) override
    {
        const Uncounted u;
        return fake_.open(path, flags);
    }
    int close(int fd) override
    {
        const Uncounted u;
        return fake_.close(fd);
    }
    int ioctl(int fd, unsigned long request, void* arg) override
    {
        const Uncounted u;
        return fake_.ioctl(fd, request, arg);
    }
    void* mmap(size_t length, int prot, int flags, int fd, off_t offset) override
    {
        const Uncounted u;
        return fake_.mmap(length, prot, flags, fd, offset);
    }
    int munmap(void* address, size_t length) override
    {
        const Uncounted u;
        return fake_.munmap(address, length);
    }
    int poll(struct pollfd* fds, nfds_t count, int timeoutMs) override
    {
        const Uncounted u;
        return fake_.poll(fds, count, timeoutMs);
    }
    std::vector<std::string> listDevices() override
    {
        const Uncounted u;
        return fake_.listDevices();
    }

private:
    using Uncounted = UncountedScope;
    V4L2Io& fake_;
};

} // namespace jetagent::test
