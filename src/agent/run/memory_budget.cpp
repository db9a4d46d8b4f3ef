// The memory budget check.
#include "run/memory_budget.h"

#include <algorithm>
#include <cstdint>

#include <unistd.h>

#include "jetagent/base/format.h"
#include "run/pipeline.h"
#include "run/task_stats.h"

namespace jetagent {

// Everything a config needs before its first frame, opened from nothing: the start-up.
// The most memory the run can take in frames in flight (each a BGR frame of the source's size) and
// statistics, against run.memory_budget_mb (0: three quarters of the machine's memory). Refused at
// start-up, naming the keys, rather than an allocation that fails in a worker an hour into the run.
Status checkMemoryBudget(const AgentConfig& config, const std::vector<SourceInfo>& sources,
    const std::vector<const Task*>& tasks, size_t viewFrames, bool hasView)
{
    constexpr uint64_t kMiB = uint64_t(1) << 20;
    // Every stream may hold as many frames as if every task served it and the view's queue held
    // its frames alone, each of its own size.
    size_t frames = 0;
    uint64_t framesBytes = 0;
    SourceInfo largest;
    for (size_t s = 0; s < sources.size(); ++s) {
        const SourceInfo& source = sources[s];
        const uint64_t frameBytes =
            uint64_t(std::max(source.width, 1)) * uint64_t(std::max(source.height, 1)) * 3;
        const size_t n = Pipeline::framesInFlight(config.run, tasks, viewFrames, hasView);
        frames += n;
        framesBytes += n * frameBytes;
        if (uint64_t(std::max(source.width, 1)) * uint64_t(std::max(source.height, 1)) >
            uint64_t(std::max(largest.width, 1)) * uint64_t(std::max(largest.height, 1)))
            largest = source;
    }
    uint64_t statsBytes = 0;
    for (size_t t = 0; t < tasks.size(); ++t)
        statsBytes += TaskStats::memoryBytesFor(
                          config.logging.maxSummarySamples, config.taskStreams(t).size()) +
            uint64_t(std::max(config.logging.queueCapacity, 1)) * sizeof(FrameRecord);
    const uint64_t total = framesBytes + statsBytes;
    const uint64_t machine = uint64_t(std::max(::sysconf(_SC_PHYS_PAGES), 0L)) *
        uint64_t(std::max(::sysconf(_SC_PAGE_SIZE), 0L));
    // A configured budget may be below the machine's memory, never above it: a plan that cannot
    // fit in the machine is refused whatever the budget says.
    const bool configured = config.run.memoryBudgetMb > 0;
    uint64_t budget = configured ? uint64_t(config.run.memoryBudgetMb) * kMiB : machine / 4 * 3;
    const char* limit =
        configured ? "run.memory_budget_mb" : "three quarters of this machine's memory";
    if (machine > 0 && budget > machine) {
        budget = machine;
        limit = "this machine's memory";
    }
    if (budget == 0 || total <= budget)
        return Status();
    const std::string text = formatText(
        "this run may hold %zu frames of %s%dx%d at once (%llu MiB; the tasks' queues, "
        "run.queue_depth "
        "%d when pacing is none, and their batches) and %llu MiB of statistics: %llu MiB, more "
        "than %s (%llu MiB). Lower run.queue_depth, the source's size or "
        "logging.max_summary_samples, or raise run.memory_budget_mb",
        frames, sources.size() > 1 ? "up to " : "", largest.width, largest.height,
        static_cast<unsigned long long>(framesBytes / kMiB), config.run.queueDepth,
        static_cast<unsigned long long>(statsBytes / kMiB),
        static_cast<unsigned long long>(total / kMiB), limit,
        static_cast<unsigned long long>(budget / kMiB));
    return Status::invalid(config.where("run.queue_depth") + ": " + text);
}

} // namespace jetagent
