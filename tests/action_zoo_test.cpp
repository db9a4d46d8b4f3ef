// torchvision's r3d_18 (exported by tools/export_torchvision.py, BatchNorm folded) in clip mode:
// the task's result on a clip read in place from its ring must be the engine's result on the same
// 16 frames preprocessed one by one into a clip assembled naively.
#include <filesystem>

#include <gtest/gtest.h>

#include "config/config.h"
#include "jetagent/base/clock.h"
#include "jetagent/hal/synthetic_motion.h"
#include "tasks/action_task.h"
#include "tasks/scores.h"
#include "test_support.h"

namespace jetagent {
namespace {

constexpr int kT = 16;
constexpr int kCrop = 112;

TEST(ActionZoo, R3d18RunsInClipMode)
{
    const std::string model = test::sourcePath("models/reference/r3d_18.folded.onnx");
    if (!std::filesystem::exists(test::sourcePath("models/reference/r3d_18.folded.json")))
        GTEST_SKIP() << model << " is missing: run `/usr/bin/python3 tools/export_torchvision.py "
                     << "--fold-batchnorm r3d_18` (needs python3-torch and python3-torchvision)";
    // As firmware-config/bench-action-r3d_18.yaml, with a result every 4 frames.
    auto config = parseConfig("tasks:\n"
                              "  - name: r3d_18\n"
                              "    type: action\n"
                              "    model: " +
            model +
            "\n"
            "    action: {mode: clip, stride: 4}\n"
            "    preprocess: {resize: shorter_side, resize_size: 128, crop: 112, mean: [0.43216, "
            "0.394666, 0.37645], std: [0.22803, 0.22145, 0.216989]}\n"
            "    postprocess: {top_k: 5}\n",
        "r3d.yaml", "");
    ASSERT_TRUE(config.ok()) << config.status().message();
    SourceInfo info;
    auto task = ActionTask::create(config.value(), 0, info);
    ASSERT_TRUE(task.ok()) << task.status().message();
    EXPECT_EQ(task.value()->clipLength(), kT); // from the model
    EXPECT_EQ(task.value()->labels().size(), 400u); // Kinetics-400, unnamed

    // The naive clip: each frame preprocessed on its own, planes copied into N x C x T x H x W.
    Preprocessor preprocessor(task.value()->preprocessing());
    const size_t plane = static_cast<size_t>(kCrop) * kCrop;
    std::vector<float> frameBuffer(3 * plane), naive(3 * kT * plane);

    MotionRenderer renderer(320, 240, 5);
    Frame frame;
    FrameRecord result;
    // 20 frames: the ring has wrapped by the time the clip of frames 4..19 is inferred.
    constexpr uint64_t kFrames = kT + 4;
    for (uint64_t i = 0; i < kFrames; ++i) {
        frame.sequence = i;
        frame.captureNs = monotonicNs();
        frame.truthClass = renderer.render(i, frame.image);
        if (i >= kFrames - kT) {
            ASSERT_TRUE(preprocessor.run(frame.image, frameBuffer.data()).ok());
            const size_t t = i - (kFrames - kT);
            for (size_t c = 0; c < 3; ++c)
                std::copy(frameBuffer.begin() + static_cast<std::ptrdiff_t>(c * plane),
                    frameBuffer.begin() + static_cast<std::ptrdiff_t>((c + 1) * plane),
                    naive.begin() + static_cast<std::ptrdiff_t>((c * kT + t) * plane));
        }
        const Frame* frames[] = {&frame};
        FrameRecord r;
        Status s = task.value()->process(frames, 1, monotonicNs(), &r);
        ASSERT_TRUE(s.ok()) << s.message();
        if (r.hasResult)
            result = r;
    }
    // Clips end at frames 15 and 19; the second has wrapped round the ring.
    ASSERT_TRUE(result.hasClip());
    ASSERT_EQ(result.clipFirstId, kFrames - kT);
    ASSERT_EQ(result.clipLastId, kFrames - 1);
    ASSERT_EQ(task.value()->clipInferences(), 2u);

    // The reference: a separate engine on the naive clip.
    auto file = loadModelFile(model);
    ASSERT_TRUE(file.ok()) << file.status().message();
    auto engine = buildEngine(file.value(), EngineOptions());
    ASSERT_TRUE(engine.ok()) << engine.status().message();
    auto session = engine.value()->createSession();
    ASSERT_TRUE(session.ok()) << session.status().message();
    TensorView view {naive.data(), TensorShape {1, 3, kT, kCrop, kCrop}};
    ASSERT_TRUE(session.value()->run(&view, 1, nullptr).ok());
    const ConstTensorView out = session.value()->output(0);
    ASSERT_EQ(out.shape.elementCount(), 400);
    std::vector<float> probabilities(400);
    softmax(out.data, probabilities.data(), 400);
    int top[5];
    topK(probabilities.data(), 400, 5, top);
    ASSERT_EQ(result.topK, 5);
    for (size_t k = 0; k < 5; ++k) {
        EXPECT_EQ(result.labels[k], top[k]) << "rank " << k;
        EXPECT_NEAR(result.scores[k], probabilities[static_cast<size_t>(top[k])], 1e-6)
            << "rank " << k;
    }
}

} // namespace
} // namespace jetagent
