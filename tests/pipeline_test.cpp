// The pipeline with a live source that sometimes has no frame, and the live view beside the tasks.
#include <atomic>
#include <mutex>
#include <vector>

#include <gtest/gtest.h>

#include "fake_tasks.h"
#include "jetagent/base/clock.h"
#include "run/pipeline.h"

namespace jetagent {
namespace {

constexpr int kWidth = 64;
constexpr int kHeight = 48;

// A view that only takes the frames (and counts the records).
class FrameOnlyView final : public FrameView {
public:
    FrameQueue& frames() override { return queue_; }
    void onRecord(size_t, const FrameRecord&) override { ++records; }
    void onTaskFinished(size_t) override { ++finished; }
    std::atomic<uint64_t> records {0};
    std::atomic<int> finished {0};

private:
    FrameQueue queue_ {4, FrameQueue::Policy::Block};
};

TEST(Pipeline, NoFrameFromALiveSourceIsWaitedThroughNotCounted)
{
    constexpr uint64_t kFrames = 50;
    test::CountingSource source(kFrames, kWidth, kHeight, true); // live, stuttering
    test::FakeTask task("recording", {"a"});
    RunConfig run;
    run.pacing = Pacing::None; // FIFO: every frame reaches the task
    FrameOnlyView view;
    FrameQueue& viewer = view.frames();
    std::vector<uint64_t> viewed;
    std::thread viewThread([&] {
        FramePtr f;
        while (viewer.pop(&f, 1) == 1)
            viewed.push_back(f->sequence);
    });
    {
        Recorder recorder({{"t", 0, {}}}, 1000, 1024, nullptr);
        recorder.start();
        Pipeline pipeline(source, run, {&task}, recorder, &view);
        pipeline.start();
        ASSERT_TRUE(pipeline.waitFinished(10'000));
        pipeline.join();
        EXPECT_EQ(pipeline.framesCaptured(), kFrames);
        EXPECT_EQ(pipeline.stopReason(), "end of stream");
        EXPECT_TRUE(pipeline.failure().ok());
    }
    viewThread.join();
    EXPECT_GE(source.noFrames(), kFrames);
    ASSERT_EQ(task.sequences.size(), kFrames);
    for (uint64_t i = 0; i < kFrames; ++i)
        EXPECT_EQ(task.sequences[i], i);
    EXPECT_EQ(viewed, task.sequences); // the view saw the same frames, in order
    EXPECT_EQ(view.records.load(), kFrames); // and every record
    EXPECT_EQ(view.finished.load(), 1);
}

// A source that never has a frame (a camera that stalled at once) still stops on request.
class SilentSource final : public FrameSource {
public:
    SilentSource() { info_.live = true; }
    const SourceInfo& info() const override { return info_; }
    Expected<ReadResult> read(Frame&) override
    {
        constexpr int64_t kSliceNs = 5'000'000;
        const int64_t until = monotonicNs() + kSliceNs;
        while (monotonicNs() < until) { }
        return ReadResult::NoFrame;
    }

private:
    SourceInfo info_;
};

TEST(Pipeline, ASilentLiveSourceStopsOnRequest)
{
    SilentSource source;
    test::FakeTask task("recording", {"a"});
    RunConfig run;
    Recorder recorder({{"t", 0, {}}}, 1000, 16, nullptr);
    Pipeline pipeline(source, run, {&task}, recorder);
    pipeline.start();
    EXPECT_FALSE(pipeline.waitFinished(50));
    pipeline.requestStop("test");
    EXPECT_TRUE(pipeline.waitFinished(5'000));
    pipeline.join();
    EXPECT_EQ(pipeline.framesCaptured(), 0u);
    EXPECT_EQ(pipeline.stopReason(), "test");
}

} // namespace
} // namespace jetagent
