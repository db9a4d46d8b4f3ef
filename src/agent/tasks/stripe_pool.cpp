// The stripe pool (see stripe_pool.h).
#include "tasks/stripe_pool.h"

#include <algorithm>

namespace jetagent {

StripePool::StripePool(int threads)
{
    for (int i = 1; i < std::clamp(threads, 1, kMaxThreads); ++i)
        workers_.emplace_back([this] { workerLoop(); });
}

StripePool::~StripePool()
{
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_)
        t.join();
}

StripePool& StripePool::shared()
{
    // Never destroyed: a worker of a static pool joined at exit could still be inside a stripe of
    // a thread that outlives main's return.
    static StripePool* pool =
        new StripePool(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    return *pool;
}

void StripePool::takeStripes(std::unique_lock<std::mutex>& lock, uint64_t job)
{
    while (generation_ == job && next_ < stripes_) {
        const int stripe = next_++;
        const Body body = body_;
        void* context = context_;
        lock.unlock();
        body(context, stripe);
        lock.lock();
        if (++finished_ == stripes_)
            done_.notify_all();
    }
}

void StripePool::workerLoop()
{
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_)
            return;
        seen = generation_;
        takeStripes(lock, seen);
    }
}

void StripePool::run(int stripes, Body body, void* context)
{
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (workers_.empty() || stripes <= 1 || !busy.owns_lock()) {
        for (int s = 0; s < stripes; ++s)
            body(context, s);
        return;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    body_ = body;
    context_ = context;
    stripes_ = stripes;
    next_ = 0;
    finished_ = 0;
    const uint64_t job = ++generation_;
    wake_.notify_all();
    takeStripes(lock, job);
    done_.wait(lock, [&] { return finished_ == stripes_; });
}

} // namespace jetagent
