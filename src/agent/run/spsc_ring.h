// A bounded single-producer single-consumer ring: a worker pushes records, the recorder pops them
// (and the recorder pushes, the log writer pops). Lock-free, allocated once; a push into a full
// ring fails at once instead of waiting.
#pragma once

#include <atomic>
#include <cstddef>
#include <vector>

namespace jetagent {

template <typename T>
class SpscRing {
public:
    explicit SpscRing(size_t capacity) : slots_(capacity + 1) { }

    // Producer thread only. False when full: the caller counts the loss.
    bool push(const T& value)
    {
        const size_t tail = tail_.load(std::memory_order_relaxed);
        const size_t next = (tail + 1) % slots_.size();
        if (next == head_.load(std::memory_order_acquire))
            return false;
        slots_[tail] = value;
        tail_.store(next, std::memory_order_release);
        return true;
    }

    // Consumer thread only. False when empty.
    bool pop(T& value)
    {
        const size_t head = head_.load(std::memory_order_relaxed);
        if (head == tail_.load(std::memory_order_acquire))
            return false;
        value = slots_[head];
        head_.store((head + 1) % slots_.size(), std::memory_order_release);
        return true;
    }

    // Consumer thread only: the oldest value without taking it; null when empty.
    const T* front() const
    {
        const size_t head = head_.load(std::memory_order_relaxed);
        if (head == tail_.load(std::memory_order_acquire))
            return nullptr;
        return &slots_[head];
    }

    size_t capacity() const { return slots_.size() - 1; }
    // The values waiting: exact on either side's own thread between its calls, a moment's view
    // from the other.
    size_t size() const
    {
        const size_t head = head_.load(std::memory_order_acquire);
        const size_t tail = tail_.load(std::memory_order_acquire);
        return (tail + slots_.size() - head) % slots_.size();
    }

private:
    std::vector<T> slots_;
    alignas(64) std::atomic<size_t> head_ {0};
    alignas(64) std::atomic<size_t> tail_ {0};
};

} // namespace jetagent
