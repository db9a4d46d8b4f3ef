// A small pool of threads that run the stripes of one image operation at a time, the calling
// thread among them: what large preprocessing kernels split their rows over.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace jetagent {

class StripePool {
public:
    // `threads` counts the calling thread: 1 runs everything on it and starts no thread.
    explicit StripePool(int threads);
    ~StripePool();
    StripePool(const StripePool&) = delete;
    StripePool& operator=(const StripePool&) = delete;

    // The process's pool, one thread per online CPU (at most kMaxThreads), started on first use.
    static StripePool& shared();
    static constexpr int kMaxThreads = 16;

    int threads() const { return static_cast<int>(workers_.size()) + 1; }

    // Calls body(context, s) for every s in [0, stripes), spread over the pool's threads and the
    // caller's, and returns when all have returned. Allocates nothing. A caller that finds the
    // pool busy with another's stripes runs its own on its thread alone (the result is the same;
    // stripes write disjoint rows).
    using Body = void (*)(void* context, int stripe);
    void run(int stripes, Body body, void* context);

    template <typename F>
    void run(int stripes, F& f)
    {
        run(
            stripes, [](void* c, int s) { (*static_cast<F*>(c))(s); }, &f);
    }

private:
    void workerLoop();
    // Runs stripes of job `job` while it is the current one and has stripes left; lock held on
    // entry and on return, released around each stripe.
    void takeStripes(std::unique_lock<std::mutex>& lock, uint64_t job);

    std::vector<std::thread> workers_;
    std::mutex busy_; // held by the caller whose stripes the pool runs
    std::mutex mutex_; // guards everything below
    std::condition_variable wake_;
    std::condition_variable done_;
    uint64_t generation_ = 0; // a new job: workers wake when it changes
    bool stopping_ = false;
    Body body_ = nullptr;
    void* context_ = nullptr;
    int stripes_ = 0;
    int next_ = 0; // the next stripe to take
    int finished_ = 0; // stripes done
};

} // namespace jetagent
