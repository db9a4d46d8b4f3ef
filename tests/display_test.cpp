// The live view: the overlay drawn on frames, and recordings of the annotated stream.
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include "display/display.h"
#include "jetagent/base/clock.h"
#include "test_image.h"
#include "test_support.h"

namespace jetagent {
namespace {

Overlay sampleOverlay()
{
    Overlay o;
    OverlayTask t;
    t.name = "shapes";
    t.haveResult = true;
    t.top = {{"circle", 0.91f}, {"square", 0.05f}, {"ring", 0.02f}};
    t.endToEndMs = 4.2;
    t.fps = 29.9;
    o.tasks.push_back(t);
    o.sourceFps = 30.0;
    o.board = "5.231 W VDD_IN, 48.5 C (tj-thermal)";
    return o;
}

TEST(Overlay, DrawsAPanelAtTheTopLeftAndLeavesTheRestAlone)
{
    const cv::Mat original(480, 640, CV_8UC3, cv::Scalar(200, 180, 160));
    Image drawn = test::toImage(original);
    drawOverlay(drawn, sampleOverlay());
    const cv::Mat image = test::asMat(drawn);
    const cv::Rect panel(0, 0, 200, 40);
    EXPECT_GT(cv::norm(image(panel), original(panel), cv::NORM_L1), 0.0);
    // The bottom half has nothing drawn on it.
    const cv::Rect bottom(0, 240, 640, 240);
    EXPECT_EQ(cv::norm(image(bottom), original(bottom), cv::NORM_INF), 0.0);
}

TEST(Overlay, SurvivesTinyAndEmptyImagesAndTasksWithoutResults)
{
    Overlay o = sampleOverlay();
    OverlayTask waiting;
    waiting.name = "waiting";
    o.tasks.push_back(waiting);
    Image tiny = test::solidImage(8, 8, 255, 255, 255);
    drawOverlay(tiny, o); // the panel is clipped to the image
    EXPECT_EQ(tiny.cols, 8);
    EXPECT_EQ(tiny.rows, 8);
    Image empty;
    drawOverlay(empty, o);
    EXPECT_TRUE(empty.empty());
}

// A frame of the test sources: uniform grey `i * 10`, captured at 30 fps.
FramePtr testFrame(int i)
{
    auto frame = std::make_shared<Frame>();
    const auto grey = static_cast<uint8_t>(i * 10);
    frame->image = test::solidImage(240, 320, grey, grey, grey);
    frame->sequence = static_cast<uint64_t>(i);
    frame->captureNs = 1'000'000'000 + i * 33'333'333LL;
    return frame;
}

// The record a classification worker makes of frame `i`: top-1 label i % 3.
FrameRecord testRecord(uint64_t i)
{
    FrameRecord r;
    r.frameId = i;
    r.capturedNs = 1'000'000'000 + static_cast<int64_t>(i) * 33'333'333LL;
    r.dequeuedNs = r.preprocessedNs = r.inferredNs = r.capturedNs + 1'000'000;
    r.doneNs = r.capturedNs + 2'000'000;
    r.topK = 1;
    r.labels[0] = static_cast<int32_t>(i % 3);
    r.scores[0] = 0.9f;
    return r;
}

TEST(DisplaySink, RecordsEveryFrameOfAnOfflineRun)
{
    test::TempDir dir;
    DisplayConfig config;
    config.output = dir / "annotated.mp4";
    SourceInfo info;
    info.width = 320;
    info.height = 240;
    info.fps = 25;
    auto sink = DisplaySink::open(config, info, /*offline=*/true);
    ASSERT_TRUE(sink.ok()) << sink.status().message();
    constexpr int kFrames = 20;
    (*sink)->start(
        [](const std::vector<TaskAtFrame>&, Overlay& o) { o.tasks = sampleOverlay().tasks; },
        nullptr);
    for (int i = 0; i < kFrames; ++i) {
        ASSERT_TRUE((*sink)->frames().push(testFrame(i)));
        (*sink)->onRecord(0, testRecord(static_cast<uint64_t>(i)));
    }
    (*sink)->onTaskFinished(0);
    (*sink)->frames().close();
    (*sink)->stop();
    EXPECT_EQ((*sink)->framesRecorded(), static_cast<uint64_t>(kFrames));
    EXPECT_EQ((*sink)->framesSkipped(), 0u);

    cv::VideoCapture back(config.output, cv::CAP_FFMPEG);
    ASSERT_TRUE(back.isOpened());
    EXPECT_EQ(static_cast<int>(back.get(cv::CAP_PROP_FRAME_COUNT)), kFrames);
    EXPECT_NEAR(back.get(cv::CAP_PROP_FPS), 25.0, 0.01);
    cv::Mat first;
    ASSERT_TRUE(back.read(first));
    EXPECT_EQ(first.size(), cv::Size(320, 240));
    // The panel is there: the top-left corner of a black frame has white text in it.
    double maxValue = 0;
    cv::Mat grey;
    cv::cvtColor(first(cv::Rect(0, 0, 160, 30)), grey, cv::COLOR_BGR2GRAY);
    cv::minMaxLoc(grey, nullptr, &maxValue);
    EXPECT_GT(maxValue, 150.0);
}

// What the view passed to the overlay function for each frame it drew.
struct Drawn {
    uint64_t frame = 0;
    double sourceFps = 0.0;
    TaskAtFrame task;
};

TEST(DisplaySink, DrawsEachFrameWithItsOwnResultAndMarksTheFramesATaskNeverInferred)
{
    auto sink = DisplaySink::open(DisplayConfig(), SourceInfo(), /*offline=*/false);
    ASSERT_TRUE(sink.ok()) << sink.status().message();
    std::mutex mutex;
    std::vector<Drawn> drawn;
    (*sink)->start(
        [&](const std::vector<TaskAtFrame>& tasks, Overlay& o) {
            std::lock_guard<std::mutex> lock(mutex);
            drawn.push_back({o.frame, o.sourceFps, tasks.at(0)});
        },
        nullptr);
    // The worker is slower than the view: each frame's record comes 20 ms after the frame, so
    // the view must wait for it. Frame 3 is never inferred (a live queue dropped it): the view
    // learns so from frame 4's record.
    constexpr int kFrames = 7;
    std::thread worker([&] {
        for (int i = 0; i < kFrames; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            if (i != 3)
                (*sink)->onRecord(0, testRecord(static_cast<uint64_t>(i)));
        }
        (*sink)->onTaskFinished(0);
    });
    for (int i = 0; i < kFrames; ++i) {
        ASSERT_TRUE((*sink)->frames().push(testFrame(i)));
        // The live queue keeps only the newest frames: let the view draw each before the next.
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (std::chrono::steady_clock::now() < until) {
            {
                std::lock_guard<std::mutex> lock(mutex);
                if (drawn.size() > static_cast<size_t>(i))
                    break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    (*sink)->frames().close();
    worker.join();
    (*sink)->stop();

    ASSERT_EQ(drawn.size(), static_cast<size_t>(kFrames)) << "skipped " << (*sink)->framesSkipped();
    for (const Drawn& d : drawn) {
        SCOPED_TRACE("frame " + std::to_string(d.frame));
        ASSERT_TRUE(d.task.haveResult);
        if (d.frame == 3) {
            EXPECT_FALSE(d.task.inferred);
            EXPECT_EQ(d.task.result.frameId, 2u); // the newest result before it, marked
        } else {
            EXPECT_TRUE(d.task.inferred);
            EXPECT_EQ(d.task.result.frameId, d.frame);
            EXPECT_EQ(d.task.result.labels[0], static_cast<int32_t>(d.frame % 3));
        }
        // From the capture times: 30 fps from the second frame on.
        if (d.frame > 0) {
            EXPECT_NEAR(d.sourceFps, 30.0, 0.01);
        }
    }
    EXPECT_EQ((*sink)->framesWithEarlierResult(), 1u);
}

TEST(OverlayLines, WrapToTheImageAndSayWhoseResultIsShown)
{
    Overlay o = sampleOverlay();
    o.frame = 43;
    o.tasks[0].origin = OverlayTask::Origin::EarlierFrame;
    o.tasks[0].resultFrame = 42;
    OverlayTask clip;
    clip.name = "actions";
    clip.haveResult = true;
    clip.top = {{"waving", 0.8f}};
    clip.origin = OverlayTask::Origin::Clip;
    clip.resultFrame = 40;
    o.tasks.push_back(clip);
    const cv::Size size(320, 240);
    const OverlayStyle style = overlayStyle(size.height);
    const auto lines = overlayLines(o, style, size.width);
    std::string all;
    for (const auto& line : lines) {
        all += line + "\n";
        EXPECT_LE(overlayTextWidth(line, style), size.width - 2 * style.margin) << line;
    }
    EXPECT_EQ(lines[0].rfind("shapes: circle 0.91", 0), 0u) << all;
    for (const char* part : {"ring 0.02", "4.2 ms", "29.9 fps",
             "^ result of frame 42:", "this frame was not inferred", "actions: waving 0.80",
             "clip to frame 40", "frame 43", "source 30.0 fps", "5.231 W VDD_IN"})
        EXPECT_NE(all.find(part), std::string::npos) << part << " in\n" << all;
    // The note comes right under its task's line(s), before the next task.
    EXPECT_LT(all.find("result of frame 42"), all.find("actions:"));

    o.sourceFps = 0.0;
    o.tasks.resize(1);
    o.tasks[0].origin = OverlayTask::Origin::ThisFrame;
    std::string own;
    for (const auto& line : overlayLines(o, style, 1280))
        own += line + "\n";
    EXPECT_EQ(own.find("result of frame"), std::string::npos) << own;
    EXPECT_NE(own.find("source rate not yet known"), std::string::npos) << own;
}

// Labels and task names of 10,000 characters (a labels file may hold anything) are shown cut
// to a readable length with "...", at a UTF-8 character boundary, and the panel is drawn as
// usual; every line stays short.
TEST(OverlayLines, CutLabelsAndNamesOfAnyLength)
{
    Overlay o = sampleOverlay();
    o.tasks[0].name = std::string(10000, 'n');
    o.tasks[0].top = {{std::string(10000, 'l'), 0.9f},
        {std::string(44, 'm') + "\xc3\xa9" + std::string(9954, 'm'), 0.1f}};
    OverlayTask waiting;
    waiting.name = std::string(10000, 'w');
    o.tasks.push_back(waiting);
    const OverlayStyle style = overlayStyle(480);
    const auto lines = overlayLines(o, style, 640);
    std::string all;
    for (const auto& line : lines) {
        all += line + "\n";
        EXPECT_LT(line.size(), 200u) << line;
    }
    EXPECT_NE(all.find(std::string(45, 'n') + "...: " + std::string(45, 'l') + "... 0.90"),
        std::string::npos)
        << all;
    EXPECT_NE(all.find(std::string(45, 'w') + "...: waiting"), std::string::npos) << all;
    EXPECT_NE(all.find(std::string(44, 'm') + "... 0.10"), std::string::npos) << all;
    Image image = test::solidImage(480, 640, 0, 0, 0);
    drawOverlay(image, o);
    EXPECT_GT(cv::countNonZero(test::asMat(image).reshape(1)), 0);
}

TEST(DisplaySink, BadOutputsAreClearErrors)
{
    SourceInfo info;
    info.width = 320;
    info.height = 240;
    DisplayConfig config;
    config.output = "/nonexistent-dir/clip.mp4";
    auto missing = DisplaySink::open(config, info, false);
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.status().kind(), ErrorKind::NotFound);
    EXPECT_NE(missing.status().message().find("/nonexistent-dir"), std::string::npos);

    test::TempDir dir;
    config.output = dir / "clip.gif";
    auto unknown = DisplaySink::open(config, info, false);
    ASSERT_FALSE(unknown.ok());
    EXPECT_NE(unknown.status().message().find(".mp4"), std::string::npos)
        << unknown.status().message();
}

TEST(DisplaySink, AWindowWithoutADisplayIsUnsupported)
{
    if (displayAvailable())
        GTEST_SKIP() << "a display is available (DISPLAY or WAYLAND_DISPLAY is set)";
    DisplayConfig config;
    config.window = true;
    auto sink = DisplaySink::open(config, SourceInfo(), false);
    ASSERT_FALSE(sink.ok());
    EXPECT_EQ(sink.status().kind(), ErrorKind::Unsupported);
    EXPECT_NE(sink.status().message().find("--output"), std::string::npos);
}

} // namespace
} // namespace jetagent
