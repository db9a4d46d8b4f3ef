// An array of counters that starts at zero and becomes resident only where it is written: its
// pages are the kernel's, mapped anonymously, so a page nothing has counted in costs no memory.
// A log-linear histogram covers 40 powers of two and a run's values fall in a few of them.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <utility>

namespace jetagent {

class ZeroPages {
public:
    explicit ZeroPages(size_t count) : count_(count), data_(map(count)) { }
    // A copy writes only the pages that hold a non-zero counter, so it stays as small as this.
    ZeroPages(const ZeroPages& other) : count_(other.count_), data_(map(other.count_))
    {
        constexpr size_t kPerPage = 4096 / sizeof(uint64_t);
        for (size_t begin = 0; begin < count_; begin += kPerPage) {
            const size_t end = std::min(begin + kPerPage, count_);
            for (size_t i = begin; i < end; ++i)
                if (other.data_[i] != 0) {
                    std::memcpy(
                        data_ + begin, other.data_ + begin, (end - begin) * sizeof(uint64_t));
                    break;
                }
        }
    }
    ZeroPages(ZeroPages&& other) noexcept
        : count_(std::exchange(other.count_, 0)), data_(std::exchange(other.data_, nullptr))
    {
    }
    ZeroPages& operator=(ZeroPages other) noexcept
    {
        std::swap(count_, other.count_);
        std::swap(data_, other.data_);
        return *this;
    }
    ~ZeroPages()
    {
        if (data_)
            ::munmap(data_, bytes());
    }

    size_t size() const { return count_; }
    const uint64_t* data() const { return data_; }
    uint64_t& operator[](size_t i) { return data_[i]; }
    uint64_t operator[](size_t i) const { return data_[i]; }

private:
    size_t bytes() const { return count_ * sizeof(uint64_t); }
    static uint64_t* map(size_t count)
    {
        if (count == 0)
            return nullptr;
        void* p = ::mmap(nullptr, count * sizeof(uint64_t), PROT_READ | PROT_WRITE,
            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            throw std::bad_alloc();
        return static_cast<uint64_t*>(p);
    }

    size_t count_;
    uint64_t* data_;
};

} // namespace jetagent
