// The live view: the overlay drawn on frames, and recordings of the annotated stream.
#include <cstdlib>

#include <gtest/gtest.h>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include "display.h"
#include "jetagent/base/clock.h"
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
    cv::Mat image = original.clone();
    drawOverlay(image, sampleOverlay());
    const cv::Rect panel(0, 0, 200, 40);
    EXPECT_GT(cv::norm(image(panel), original(panel), cv::NORM_L1), 0.0);
    // The bottom half has nothing drawn on it.
    const cv::Rect bottom(0, 240, 640, 240);
    EXPECT_EQ(cv::norm(image(bottom), original(bottom), cv::NORM_INF), 0.0);
}

TEST(Overlay, SurvivesTinyAndEmptyImagesAndTasksWithoutResults)
{
    Overlay o = sampleOverlay();
    o.tasks.push_back(OverlayTask {"waiting", false, {}, 0.0, 0.0});
    cv::Mat tiny(8, 8, CV_8UC3, cv::Scalar::all(255));
    drawOverlay(tiny, o); // the panel is clipped to the image
    EXPECT_EQ(tiny.size(), cv::Size(8, 8));
    cv::Mat empty;
    drawOverlay(empty, o);
    EXPECT_TRUE(empty.empty());
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
    (*sink)->start([] { return sampleOverlay(); }, nullptr);
    for (int i = 0; i < kFrames; ++i) {
        auto frame = std::make_shared<Frame>();
        frame->image = cv::Mat(240, 320, CV_8UC3, cv::Scalar::all(i * 10));
        frame->sequence = static_cast<uint64_t>(i);
        ASSERT_TRUE((*sink)->queue().push(frame));
    }
    (*sink)->queue().close();
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
