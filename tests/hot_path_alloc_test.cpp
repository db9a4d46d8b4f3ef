// The agent's per-frame code allocates nothing in the steady state: preprocessing, scoring, frame
// hand-off, statistics and log submission. Global operator new is replaced here to count.
//
// Every preprocessing kernel is the project's own and allocates nothing: the bilinear crop (the
// default), striped over the stripe pool included, and the resizes (image_resize.h), whose tables
// and buffers are kept from frame to frame. Outside: the inference backend (OpenCV DNN allocates
// inside forward()).
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <new>
#include <thread>

#include <gtest/gtest.h>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "jetagent/engines/engine.h"
#include "output/frame_log.h"
#include "run/frame_queue.h"
#include "run/recorder.h"
#include "run/task_stats.h"
#include "tasks/clip_ring.h"
#include "tasks/preprocess.h"
#include "tasks/scores.h"
#include "test_image.h"
#include "test_paths.h"

namespace {
std::atomic<uint64_t> g_allocations {0};
}

// The replacements below pair malloc with free themselves; GCC 12 cannot see that once it inlines
// them into the tests and warns of a mismatch that is not there.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t size)
{
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(size ? size : 1))
        return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept
{
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept
{
    std::free(p);
}

namespace jetagent {
namespace {

// The frames counted after the 20 that bring buffers to size: 500, or 100 where the tests run
// under an emulator (the aarch64 build's, JETAGENT_TEST_EMULATED), where 500 took minutes. Any
// per-frame allocation shows in either; the native run also catches slower growth.
#ifdef JETAGENT_TEST_EMULATED
constexpr uint64_t kCounted = 100;
#else
constexpr uint64_t kCounted = 500;
#endif
constexpr uint64_t kWarmUp = 20;

// Allocations made by kCounted frames of `oneFrame`, after kWarmUp frames brought buffers to size.
uint64_t steadyStateAllocations(const std::function<void(uint64_t)>& oneFrame)
{
    for (uint64_t i = 0; i < kWarmUp; ++i)
        oneFrame(i);
    const uint64_t before = g_allocations.load();
    for (uint64_t i = kWarmUp; i < kWarmUp + kCounted; ++i)
        oneFrame(i);
    return g_allocations.load() - before;
}

class HotPath : public ::testing::TestWithParam<Interpolation> { };

TEST_P(HotPath, SteadyStateFramesAllocateNothing)
{
    PreprocessConfig pre;
    pre.resizeSize = 256;
    pre.cropWidth = pre.cropHeight = 224;
    pre.interpolation = GetParam();
    Preprocessor preprocessor(pre);
    std::vector<float> input(preprocessor.outputElements());
    std::vector<float> logits(1000), probabilities(1000), smoothed(1000);
    FramePool pool(6);
    FrameQueue queue(4, FrameQueue::Policy::DropOldest);
    // The worker hands each record to the recorder, whose thread derives it, adds it to the
    // statistics and passes it to the log: nothing on either thread may allocate per frame.
    TaskLog log("t", {"a"}, 4096);
    Recorder recorder({{"t", 33'000'000, {&log}}}, 100000, 4096, nullptr);
    recorder.start();
    cv::RNG rng(1);
    std::vector<cv::Mat> images(3);
    for (auto& m : images) {
        m.create(480, 640, CV_8UC3);
        rng.fill(m, cv::RNG::UNIFORM, 0, 256);
    }
    for (auto& l : logits)
        l = static_cast<float>(rng.uniform(-5.0, 5.0));

    auto oneFrame = [&](uint64_t i) {
        std::shared_ptr<Frame> frame = pool.acquire();
        test::asImage(images[i % images.size()]).copyTo(frame->image); // reuses the buffer
        frame->sequence = i;
        queue.push(frame);
        frame.reset();
        FramePtr taken[1];
        queue.pop(taken, 1);
        EXPECT_TRUE(preprocessor.run(taken[0]->image, input.data()).ok());
        softmax(logits.data(), probabilities.data(), logits.size());
        smoothScores(probabilities.data(), smoothed.data(), smoothed.size(), 0.5, i == 0);
        FrameRecord r;
        r.frameId = i;
        r.capturedNs = static_cast<int64_t>(i) * 1000;
        r.dequeuedNs = r.preprocessedNs = r.inferredNs = r.capturedNs + 10;
        r.doneNs = r.capturedNs + 20 + static_cast<int64_t>(i % 7);
        r.coldStart = i == 0;
        r.topK = 5;
        topK(smoothed.data(), smoothed.size(), 5, r.labels.data());
        recorder.submit(0, r);
        if (i == 19) // the warm-up's records recorded before the counted frames start
            while (recorder.live(0).frames < 20)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
    };

    uint64_t agent = steadyStateAllocations(oneFrame);
    // The counted frames' records that the recorder had not taken yet are taken by stop().
    const uint64_t beforeStop = g_allocations.load();
    recorder.stop();
    agent += g_allocations.load() - beforeStop;
    EXPECT_EQ(agent, 0u) << "allocations in " << kCounted << " steady-state frames";
    EXPECT_EQ(recorder.stats(0).frames, kWarmUp + kCounted);
}

// An action task's per-frame path: preprocessing straight into the clip ring, pushing, and taking
// the clip the model reads. No clip is assembled, so nothing is allocated for it either.
TEST_P(HotPath, ClipRingFramesAndClipsAllocateNothing)
{
    PreprocessConfig pre;
    pre.resize = ResizeMode::Stretch;
    pre.cropWidth = pre.cropHeight = 112;
    pre.interpolation = GetParam();
    Preprocessor preprocessor(pre);
    cv::RNG rng(2);
    std::vector<cv::Mat> images(3);
    for (auto& m : images) {
        m.create(240, 320, CV_8UC3);
        rng.fill(m, cv::RNG::UNIFORM, 0, 256);
    }
    for (ClipRing::Layout layout : {ClipRing::Layout::ChannelsFirst, ClipRing::Layout::TimeFirst}) {
        auto ring = ClipRing::create(16, 3, preprocessor.planeElements(), layout);
        ASSERT_TRUE(ring.ok()) << ring.status().message();
        ClipRing& r = *ring.value();
        float checksum = 0.0f;
        auto oneFrame = [&](uint64_t i) {
            EXPECT_TRUE(
                preprocessor
                    .run(test::asImage(images[i % images.size()]), r.next(), r.channelStride())
                    .ok());
            r.push({i, static_cast<int64_t>(i) * 1000, 0});
            if (r.full())
                checksum += r.clip()[i % r.clipElements()] + static_cast<float>(r.info(0).frameId);
        };
        const uint64_t task = steadyStateAllocations(oneFrame);
        EXPECT_EQ(task, 0u) << "allocations in " << kCounted << " frames into the ring";
        EXPECT_TRUE(std::isfinite(checksum));
    }
}

INSTANTIATE_TEST_SUITE_P(Kernels, HotPath,
    ::testing::Values(Interpolation::Linear, Interpolation::Area, Interpolation::Cubic));

// The xnnpack backend plans its memory when a session is made: a run copies the input into the
// session's arena and calls the steps, and allocates nothing (all on XNNPACK and our kernels); a
// step on oneDNN allocates only inside oneDNN, a fixed few per call (its argument map).
TEST(XnnpackHotPath, SessionRunsAllocateNothing)
{
    bool available = false;
    for (const BackendInfo& b : listBackends())
        available = available || (b.name == "xnnpack" && b.available);
    if (!available)
        GTEST_SKIP() << "this build has no xnnpack backend";
    auto model = loadModelFile(JETAGENT_SOURCE_DIR "/models/shapes_cnn.onnx");
    ASSERT_TRUE(model.ok()) << model.status().message();
    for (bool oneDnn : {false, true}) {
        EngineOptions options;
        options.backend = "xnnpack";
        options.onednn = oneDnn;
        auto engine = buildEngine(model.value(), options);
        ASSERT_TRUE(engine.ok()) << engine.status().message();
        size_t oneDnnSteps = 0;
        for (const EngineStep& step : engine.value()->steps())
            oneDnnSteps += step.library == "onednn";
        if (oneDnn && oneDnnSteps == 0)
            continue; // no oneDNN in this build (ARM, or x86 without libdnnl-dev)
        auto session = engine.value()->createSession();
        ASSERT_TRUE(session.ok()) << session.status().message();
        std::vector<float> input(3 * 64 * 64, 0.25f);
        TensorView view {input.data(), {1, 3, 64, 64}};
        RunTiming timing;
        const uint64_t allocations = steadyStateAllocations([&](uint64_t i) {
            input[i % input.size()] = static_cast<float>(i % 7) * 0.1f;
            const Status s = session.value()->run(&view, 1, &timing);
            ASSERT_TRUE(s.ok()) << s.message();
        });
        if (!oneDnn) {
            EXPECT_EQ(allocations, 0u) << "operator new/malloc calls in " << kCounted
                                       << " runs of the demo model on xnnpack";
        } else {
            // dnnl_primitive_execute builds a small map of its arguments at every call (8 blocks
            // in oneDNN 2.6); the demo model runs on one thread, one part per oneDNN step, and a
            // part makes one call, or up to four as a Winograd convolution (its input, a
            // residual, the convolution, its output: 3 on the demo model, whose 3x3 convolutions
            // on AVX-512 run so).
            constexpr uint64_t kPerCall = 8, kCallsPerStep = 4;
            EXPECT_LE(allocations, kCounted * kPerCall * kCallsPerStep * oneDnnSteps)
                << "allocations in " << kCounted << " runs with " << oneDnnSteps
                << " steps on oneDNN";
        }
    }
}

} // namespace
} // namespace jetagent
