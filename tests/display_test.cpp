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

// --- several streams: the mosaic --------------------------------------------------------------

TEST(Mosaic, AGridOfCeilSqrtColumnsScaledToFit1080p)
{
    struct Case {
        size_t streams;
        int width, height;
        int columns, rows, cellWidth, cellHeight;
    };
    for (const Case& c : std::vector<Case> {
             {2, 320, 240, 2, 1, 320, 240}, // side by side, at the frames' own size
             {3, 320, 240, 2, 2, 320, 240}, // the fourth cell stays empty
             {4, 320, 240, 2, 2, 320, 240},
             {5, 640, 480, 3, 2, 640, 480}, // 1920 x 960 fits as it is
             {4, 1280, 720, 2, 2, 960, 540}, // 2560 x 1440 scaled by 3/4 to 1920 x 1080
             {9, 1920, 1080, 3, 3, 640, 360},
             {64, 320, 240, 8, 8, 180, 134}, // 2560 x 1920 scaled by 1080/1920, sides even
             {2, 0, 0, 2, 1, 640, 480}, // an unknown size: 640 x 480 cells
         }) {
        SCOPED_TRACE(std::to_string(c.streams) + " streams of " + std::to_string(c.width) + "x" +
            std::to_string(c.height));
        const MosaicLayout m = mosaicLayout(c.streams, c.width, c.height);
        EXPECT_EQ(m.columns, c.columns);
        EXPECT_EQ(m.rows, c.rows);
        EXPECT_EQ(m.cellWidth, c.cellWidth);
        EXPECT_EQ(m.cellHeight, c.cellHeight);
        EXPECT_LE(m.width(), kMosaicMaxWidth);
        EXPECT_LE(m.height(), kMosaicMaxHeight);
    }
}

TEST(Mosaic, TilesFillTheGridRowByRowAndKeepTheFramesAspect)
{
    const MosaicLayout m = mosaicLayout(4, 320, 240); // 2 x 2 cells of 320 x 240
    const auto expectRect = [](const PixelRect& r, int x, int y, int width, int height) {
        EXPECT_EQ(r.x, x);
        EXPECT_EQ(r.y, y);
        EXPECT_EQ(r.width, width);
        EXPECT_EQ(r.height, height);
    };
    // Left to right, then top to bottom; a frame of the cell's aspect fills it at any size.
    expectRect(tileRect(m, 0, 320, 240), 0, 0, 320, 240);
    expectRect(tileRect(m, 1, 640, 480), 320, 0, 320, 240);
    expectRect(tileRect(m, 2, 160, 120), 0, 240, 320, 240);
    expectRect(tileRect(m, 3, 320, 240), 320, 240, 320, 240);
    // Wider frames are letterboxed (bars above and below), taller ones pillarboxed.
    expectRect(tileRect(m, 3, 1280, 720), 320, 240 + 30, 320, 180);
    expectRect(tileRect(m, 0, 240, 240), 40, 0, 240, 240);
    // No frame size: the whole cell.
    expectRect(tileRect(m, 1, 0, 0), 320, 0, 320, 240);
}

// A flat frame of stream `stream`, frame `i`: blue for stream 0, red for stream 1 (B, G, R).
FramePtr streamFrame(uint16_t stream, int i)
{
    auto frame = std::make_shared<Frame>();
    frame->image = stream == 0 ? test::solidImage(240, 320, 200, 40, 40)
                               : test::solidImage(240, 320, 40, 40, 200);
    frame->sequence = static_cast<uint64_t>(i);
    frame->captureNs = 1'000'000'000 + i * 33'333'333LL + stream * 1'000'000LL;
    frame->stream = stream;
    return frame;
}

// The record of stream `stream`'s frame `i`: top-1 label 3 * stream + i % 3, so that the
// overlay shows which stream's record it took.
FrameRecord streamRecord(uint16_t stream, uint64_t i)
{
    FrameRecord r = testRecord(i);
    r.stream = stream;
    r.labels[0] = static_cast<int32_t>(3 * stream + i % 3);
    return r;
}

// What the view passed to the overlay function for a frame of a run of several streams.
struct DrawnTile {
    size_t stream = 0;
    std::string name;
    uint64_t frame = 0;
    std::vector<TaskAtFrame> tasks;
};

// Polls `done` for up to 5 s.
template <typename Done>
bool eventually(Done done)
{
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < until) {
        if (done())
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return done();
}

// Each stream numbers its frames from 0: the view matches a record to its frame by stream and
// frame id, draws each stream into its tile with that stream's results and name, and records a
// mosaic once every stream has a new frame, or before a tile not yet recorded is drawn over.
TEST(DisplaySink, TilesEachStreamWithItsOwnRecordsByStreamAndFrame)
{
    SourceInfo info;
    info.width = 320;
    info.height = 240;
    info.fps = 30;
    auto sink = DisplaySink::open(DisplayConfig(), {{"front", info}, {"rear", info}},
        /*offline=*/false, {{}, {1}}); // task 0 serves both streams, task 1 only the rear
    ASSERT_TRUE(sink.ok()) << sink.status().message();
    EXPECT_EQ((*sink)->layout().width(), 640);
    EXPECT_EQ((*sink)->layout().height(), 240);
    std::mutex mutex;
    std::vector<DrawnTile> drawn;
    std::vector<cv::Mat> mosaics;
    (*sink)->setCanvasListener([&](Image& canvas, uint64_t) {
        std::lock_guard<std::mutex> lock(mutex);
        mosaics.push_back(test::asMat(canvas).clone());
    });
    (*sink)->start(
        [&](const std::vector<TaskAtFrame>& tasks, Overlay& o) {
            std::lock_guard<std::mutex> lock(mutex);
            drawn.push_back({o.stream, o.streamName, o.frame, tasks});
            o.tasks = sampleOverlay().tasks;
        },
        nullptr);
    // The records come first, the streams' interleaved as a batching worker hands them over;
    // the same frame ids in both streams.
    constexpr int kRounds = 3;
    for (int i = 0; i < kRounds; ++i)
        for (uint16_t stream : {1, 0}) {
            (*sink)->onRecord(0, streamRecord(stream, static_cast<uint64_t>(i)));
            if (stream == 1)
                (*sink)->onRecord(1, streamRecord(stream, static_cast<uint64_t>(i)));
        }
    // Rounds of one frame per stream, then two frames of the front alone (the rear stalled).
    std::vector<std::pair<uint16_t, int>> frames;
    for (int i = 0; i < kRounds; ++i)
        frames.insert(frames.end(), {{0, i}, {1, i}});
    (*sink)->onRecord(0, streamRecord(0, kRounds));
    (*sink)->onRecord(0, streamRecord(0, kRounds + 1));
    frames.insert(frames.end(), {{0, kRounds}, {0, kRounds + 1}});
    for (size_t k = 0; k < frames.size(); ++k) {
        ASSERT_TRUE((*sink)->frames().push(streamFrame(frames[k].first, frames[k].second)));
        // The live queue keeps only the newest frames: let the view draw each before the next.
        ASSERT_TRUE(eventually([&] {
            std::lock_guard<std::mutex> lock(mutex);
            return drawn.size() > k;
        }));
    }
    (*sink)->onTaskFinished(0);
    (*sink)->onTaskFinished(1);
    (*sink)->frames().close();
    (*sink)->stop();

    ASSERT_EQ(drawn.size(), frames.size());
    for (size_t k = 0; k < drawn.size(); ++k) {
        const DrawnTile& d = drawn[k];
        SCOPED_TRACE("stream " + std::to_string(d.stream) + " frame " + std::to_string(d.frame));
        EXPECT_EQ(d.stream, frames[k].first);
        EXPECT_EQ(d.frame, static_cast<uint64_t>(frames[k].second));
        EXPECT_EQ(d.name, d.stream == 0 ? "front" : "rear");
        ASSERT_EQ(d.tasks.size(), 2u);
        const TaskAtFrame& both = d.tasks[0];
        EXPECT_TRUE(both.serves);
        ASSERT_TRUE(both.haveResult);
        EXPECT_TRUE(both.inferred);
        EXPECT_EQ(both.result.stream, d.stream);
        EXPECT_EQ(both.result.frameId, d.frame);
        EXPECT_EQ(both.result.labels[0], static_cast<int32_t>(3 * d.stream + d.frame % 3));
        const TaskAtFrame& rearOnly = d.tasks[1];
        EXPECT_EQ(rearOnly.serves, d.stream == 1);
        if (d.stream == 1) {
            ASSERT_TRUE(rearOnly.haveResult);
            EXPECT_EQ(rearOnly.result.frameId, d.frame);
        } else {
            EXPECT_FALSE(rearOnly.haveResult);
        }
    }
    EXPECT_EQ((*sink)->framesSkipped(), 0u);
    EXPECT_EQ((*sink)->framesDrawn(), frames.size());
    EXPECT_EQ((*sink)->framesWithEarlierResult(), 0u);

    // One mosaic per round; then the stalled rear holds the front back by one frame only: the
    // front's second frame alone records the mosaic holding its first, and the end the last.
    ASSERT_EQ(mosaics.size(), static_cast<size_t>(kRounds + 2));
    for (const cv::Mat& m : mosaics) {
        ASSERT_EQ(m.size(), cv::Size(640, 240));
        // Each tile holds its stream's frame (away from the panel and the label)...
        EXPECT_EQ(m.at<cv::Vec3b>(150, 300), cv::Vec3b(200, 40, 40));
        EXPECT_EQ(m.at<cv::Vec3b>(150, 620), cv::Vec3b(40, 40, 200));
        // ...and its own overlay: a panel with white text at the top left of each tile, and the
        // stream's name at the bottom left.
        for (int x : {0, 320}) {
            cv::Mat grey;
            cv::cvtColor(m(cv::Rect(x, 0, 160, 30)), grey, cv::COLOR_BGR2GRAY);
            double panelMax = 0;
            cv::minMaxLoc(grey, nullptr, &panelMax);
            EXPECT_GT(panelMax, 150.0) << "tile at x " << x;
            cv::cvtColor(m(cv::Rect(x, 220, 40, 20)), grey, cv::COLOR_BGR2GRAY);
            double labelMax = 0;
            cv::minMaxLoc(grey, nullptr, &labelMax);
            EXPECT_GT(labelMax, 150.0) << "label of the tile at x " << x;
        }
    }
}

// One stream is drawn exactly as before the mosaic existed: the frame at its own size with the
// overlay drawn on it, no label, a canvas per frame.
TEST(DisplaySink, OneStreamIsDrawnAsItsFrameWithTheOverlay)
{
    SourceInfo info;
    info.width = 320;
    info.height = 240;
    auto sink = DisplaySink::open(DisplayConfig(), {{"main", info}}, /*offline=*/false, {{}});
    ASSERT_TRUE(sink.ok()) << sink.status().message();
    std::mutex mutex;
    std::vector<Image> canvases;
    std::vector<Overlay> overlays;
    (*sink)->setCanvasListener([&](Image& canvas, uint64_t) {
        std::lock_guard<std::mutex> lock(mutex);
        canvases.push_back(canvas.clone());
    });
    (*sink)->start(
        [&](const std::vector<TaskAtFrame>&, Overlay& o) {
            o.tasks = sampleOverlay().tasks;
            std::lock_guard<std::mutex> lock(mutex);
            overlays.push_back(o);
        },
        nullptr);
    constexpr int kFrames = 3;
    for (int i = 0; i < kFrames; ++i) {
        (*sink)->onRecord(0, testRecord(static_cast<uint64_t>(i)));
        ASSERT_TRUE((*sink)->frames().push(testFrame(i)));
        ASSERT_TRUE(eventually([&] {
            std::lock_guard<std::mutex> lock(mutex);
            return canvases.size() > static_cast<size_t>(i);
        }));
    }
    (*sink)->onTaskFinished(0);
    (*sink)->frames().close();
    (*sink)->stop();
    ASSERT_EQ(canvases.size(), static_cast<size_t>(kFrames));
    for (int i = 0; i < kFrames; ++i) {
        EXPECT_TRUE(overlays[i].streamName.empty());
        Image expected = testFrame(i)->image.clone();
        drawOverlay(expected, overlays[i]);
        ASSERT_EQ(canvases[i].cols, 320);
        ASSERT_EQ(canvases[i].rows, 240);
        EXPECT_EQ(cv::norm(test::asMat(canvases[i]), test::asMat(expected), cv::NORM_INF), 0.0)
            << "frame " << i;
    }
    EXPECT_EQ((*sink)->layout().columns, 1);
    EXPECT_EQ((*sink)->layout().cellWidth, 0);
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
