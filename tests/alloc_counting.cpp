// Counting replacements of the process's allocation functions, for the binaries that measure
// allocations per frame (jetagent_camera_alloc_tests, jetagent_camera_bench). Linked into those
// binaries only: it replaces global operator new, malloc, calloc, realloc and the aligned family
// (cv::Mat buffers come from posix_memalign) and forwards them to glibc's own functions.
//
// Blind spot: OpenCV's TBB backend (Debian's build) takes its task objects from tbbmalloc, which
// maps its memory itself; those allocations are invisible here.
#include "alloc_counting.h"

#include <malloc.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <new>

// glibc's own allocator, which the counting replacements below forward to. The names are
// reserved because they are the C library's.
// NOLINTBEGIN(bugprone-reserved-identifier)
extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* pointer, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void __libc_free(void* pointer);
}
// NOLINTEND(bugprone-reserved-identifier)

namespace {
std::atomic<uint64_t> g_news {0};
std::atomic<uint64_t> g_mallocs {0};
// Non-zero while this thread runs code that stands for the kernel (the fake V4L2 driver).
thread_local int t_uncounted = 0;

void countMalloc()
{
    if (t_uncounted == 0)
        g_mallocs.fetch_add(1, std::memory_order_relaxed);
}

void* countedNew(std::size_t size)
{
    if (t_uncounted == 0)
        g_news.fetch_add(1, std::memory_order_relaxed);
    if (void* p = __libc_malloc(size != 0 ? size : 1))
        return p;
    throw std::bad_alloc();
}
} // namespace

extern "C" {
void* malloc(size_t size) noexcept
{
    countMalloc();
    return __libc_malloc(size);
}
void* calloc(size_t nmemb, size_t size) noexcept
{
    countMalloc();
    return __libc_calloc(nmemb, size);
}
void* realloc(void* ptr, size_t size) noexcept
{
    countMalloc();
    return __libc_realloc(ptr, size);
}
void* memalign(size_t alignment, size_t size) noexcept
{
    countMalloc();
    return __libc_memalign(alignment, size);
}
void* aligned_alloc(size_t alignment, size_t size) noexcept
{
    countMalloc();
    return __libc_memalign(alignment, size);
}
int posix_memalign(void** memptr, size_t alignment, size_t size) noexcept
{
    countMalloc();
    if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0)
        return EINVAL;
    void* p = __libc_memalign(alignment, size);
    if (p == nullptr)
        return ENOMEM;
    *memptr = p;
    return 0;
}
void free(void* ptr) noexcept
{
    __libc_free(ptr);
}
}

void* operator new(std::size_t size)
{
    return countedNew(size);
}
void* operator new[](std::size_t size)
{
    return countedNew(size);
}
void operator delete(void* p) noexcept
{
    __libc_free(p);
}
void operator delete[](void* p) noexcept
{
    __libc_free(p);
}
void operator delete(void* p, std::size_t) noexcept
{
    __libc_free(p);
}
void operator delete[](void* p, std::size_t) noexcept
{
    __libc_free(p);
}

namespace jetagent::test {

uint64_t countedNews()
{
    return g_news.load();
}

uint64_t countedMallocs()
{
    return g_mallocs.load();
}

uint64_t countedAllocations()
{
    return g_news.load() + g_mallocs.load();
}

UncountedScope::UncountedScope()
{
    ++t_uncounted;
}

UncountedScope::~UncountedScope()
{
    --t_uncounted;
}

} // namespace jetagent::test
