// GStreamer sources: the pipelines csi://, rtsp:// and gst:// URIs turn into, and real pipelines
// of GStreamer's test source (videotestsrc): frames, open failures, losses and reconnects.
#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "jetagent/base/clock.h"
#include "jetagent/hal/gstreamer_source.h"
#include "test_image.h"
#include "test_support.h"

namespace jetagent {

// Defined in hal/gstreamer_source.cpp: a pipeline opened with the behaviour of a source kind.
Expected<std::unique_ptr<FrameSource>> openGStreamerPipeline(
    const SourceOptions& options, const std::string& pipeline, const std::string& kind);

namespace {

constexpr int kWidth = 160;
constexpr int kHeight = 120;
constexpr const char* kBGR = "videoconvert ! video/x-raw,format=BGR";
constexpr const char* kCSITail = " ! nvvidconv flip-method=0 ! video/x-raw,format=BGRx ! "
                                 "videoconvert ! video/x-raw,format=BGR ! appsink drop=true "
                                 "max-buffers=1 sync=false";

SourceOptions withUri(const std::string& uri)
{
    SourceOptions options;
    options.uri = uri;
    return options;
}

std::string pipelineOf(const SourceOptions& options)
{
    Expected<std::string> pipeline = gstreamerPipelineFor(options);
    EXPECT_TRUE(pipeline.ok()) << pipeline.status().message();
    return pipeline.ok() ? pipeline.value() : std::string();
}

void expectInvalid(const SourceOptions& options, const std::string& mentioned)
{
    Expected<std::string> pipeline = gstreamerPipelineFor(options);
    ASSERT_FALSE(pipeline.ok()) << options.uri << " gave " << pipeline.value();
    EXPECT_EQ(pipeline.status().kind(), ErrorKind::InvalidInput) << options.uri;
    EXPECT_NE(pipeline.status().message().find(mentioned), std::string::npos)
        << pipeline.status().message();
}

// videotestsrc, at `caps`, converted to BGR, into an appsink with `sink` properties.
std::string testPipeline(
    const std::string& source, const std::string& caps, const std::string& sink = "")
{
    return "videotestsrc " + source + " ! video/x-raw,width=" + std::to_string(kWidth) +
        ",height=" + std::to_string(kHeight) + "," + caps + " ! " + kBGR + " ! appsink" +
        (sink.empty() ? "" : " " + sink);
}

// --- pipeline text --------------------------------------------------------------------------

TEST(GStreamerPipeline, CSIDefaultsTo720pAt30)
{
    EXPECT_EQ(pipelineOf(withUri("csi://0")),
        std::string("nvarguscamerasrc sensor-id=0 ! video/x-raw(memory:NVMM),width=1280,"
                    "height=720,framerate=30/1,format=NV12") +
            kCSITail);
}

TEST(GStreamerPipeline, CSISizeRateAndFlip)
{
    SourceOptions options = withUri("csi://3");
    options.width = 1920;
    options.height = 1080;
    options.fps = 60;
    options.camera.flip = 2;
    EXPECT_EQ(pipelineOf(options),
        "nvarguscamerasrc sensor-id=3 ! video/x-raw(memory:NVMM),width=1920,height=1080,"
        "framerate=60/1,format=NV12 ! nvvidconv flip-method=2 ! video/x-raw,format=BGRx ! "
        "videoconvert ! video/x-raw,format=BGR ! appsink drop=true max-buffers=1 sync=false");
}

TEST(GStreamerPipeline, CSIFractionalRatesAsFractions)
{
    const std::pair<double, const char*> cases[] = {{29.97, "framerate=30000/1001,"},
        {59.94, "framerate=60000/1001,"}, {23.976, "framerate=24000/1001,"},
        {12.5, "framerate=25/2,"}, {7.25, "framerate=29/4,"}, {120.0, "framerate=120/1,"}};
    for (const auto& [fps, expected] : cases) {
        SourceOptions options = withUri("csi://0");
        options.fps = fps;
        EXPECT_NE(pipelineOf(options).find(expected), std::string::npos) << fps;
    }
}

TEST(GStreamerPipeline, CSIRejectsBadSensorIdsFlipsAndSizes)
{
    expectInvalid(withUri("csi://8"), "sensor id 8");
    expectInvalid(withUri("csi://"), "csi://N");
    expectInvalid(withUri("csi://-1"), "csi://N");
    expectInvalid(withUri("csi://one"), "csi://N");
    expectInvalid(withUri("csi://0/1"), "csi://N");
    for (const int flip : {-1, 8}) {
        SourceOptions options = withUri("csi://0");
        options.camera.flip = flip;
        expectInvalid(options, "flip method " + std::to_string(flip));
    }
    SourceOptions oneSide = withUri("csi://0");
    oneSide.width = 640;
    expectInvalid(oneSide, "both width and height");
    SourceOptions odd = withUri("csi://0");
    odd.width = 641;
    odd.height = 480;
    expectInvalid(odd, "641x480");
    SourceOptions negativeRate = withUri("csi://0");
    negativeRate.fps = -1;
    expectInvalid(negativeRate, "frame rate");
}

// csi:// reaches the camera only: its pipeline is fixed text around a sensor id, so no element of
// the user's choosing (souphttpsrc, rtspsrc, udpsrc) can get into it.
TEST(GStreamerPipeline, CSIPipelinesHoldNoElementButTheCamerasOwn)
{
    const std::set<std::string> local = {
        "nvarguscamerasrc", "nvvidconv", "videoconvert", "appsink"};
    for (int sensor = 0; sensor <= 7; ++sensor) {
        const std::string pipeline = pipelineOf(withUri("csi://" + std::to_string(sensor)));
        size_t start = 0;
        while (start < pipeline.size()) {
            const size_t end = std::min(pipeline.find(" ! ", start), pipeline.size());
            const std::string stage = pipeline.substr(start, end - start);
            const std::string element = stage.substr(0, stage.find(' '));
            if (element.find('/') == std::string::npos) { // not caps
                EXPECT_EQ(local.count(element), 1u) << element << " in " << pipeline;
            }
            start = end + 3;
        }
    }
    for (const char* uri : {"csi://0 ! souphttpsrc location=http://127.0.0.1:9/", "csi://0!udpsrc",
             "csi://0 sensor-mode=0 ! rtspsrc location=rtsp://x/"})
        expectInvalid(withUri(uri), "csi://N");
}

TEST(GStreamerPipeline, RTSPQuotesTheURIAndSetsTheLatency)
{
    const std::string uri = "rtsp://admin:secret@cam.local:8554/live/0?x=1;y='2'!&z=%20#a";
    SourceOptions options = withUri(uri);
    options.camera.latencyMs = 50;
    EXPECT_EQ(pipelineOf(options),
        "rtspsrc location=\"" + uri +
            "\" latency=50 ! application/x-rtp,media=video ! decodebin ! videoconvert ! "
            "video/x-raw,format=BGR ! appsink drop=true max-buffers=1 sync=false");
    EXPECT_NE(pipelineOf(withUri("rtsp://cam/live")).find("latency=200 "), std::string::npos);
}

TEST(GStreamerPipeline, RTSPRejectsCharactersThatBreakThePipeline)
{
    for (const char* uri : {"rtsp://cam/a\"b", "rtsp://cam/a\\b", "rtsp://cam/a b",
             "rtsp://cam/a\nb", "rtsp://cam/a\tb"})
        expectInvalid(withUri(uri), "percent-encode");
    expectInvalid(withUri("rtsp://"), "no host");
    expectInvalid(withUri("rtsp:///path"), "no host");
    SourceOptions negative = withUri("rtsp://cam/live");
    negative.camera.latencyMs = -1;
    expectInvalid(negative, "latency");
}

TEST(GStreamerPipeline, RTSPErrorsHideThePassword)
{
    Expected<std::string> pipeline = gstreamerPipelineFor(withUri("rtsp://user:hunter2@cam/a b"));
    ASSERT_FALSE(pipeline.ok());
    EXPECT_EQ(pipeline.status().message().find("hunter2"), std::string::npos)
        << pipeline.status().message();
    EXPECT_NE(pipeline.status().message().find("rtsp://user:***@cam/a b"), std::string::npos)
        << pipeline.status().message();
}

TEST(GStreamerPipeline, GstPipelineIsTheUsersOwn)
{
    const std::string pipeline = "videotestsrc ! videoconvert ! appsink max-buffers=2";
    EXPECT_EQ(pipelineOf(withUri("gst://" + pipeline)), pipeline);
    EXPECT_EQ(pipelineOf(withUri("gst://  " + pipeline + " \n")), pipeline);
    // A '!' inside a quoted value is no link.
    const std::string quoted = "filesrc location=\"a!b.mp4\" ! decodebin ! appsink";
    EXPECT_EQ(pipelineOf(withUri("gst://" + quoted)), quoted);
    EXPECT_EQ(pipelineOf(withUri("gst://videotestsrc ! appsink name=myappsink")),
        "videotestsrc ! appsink name=myappsink");
}

TEST(GStreamerPipeline, GstMustEndInAnAppsink)
{
    expectInvalid(withUri("gst://videotestsrc ! fakesink"), "ends in 'fakesink'");
    expectInvalid(withUri("gst://videotestsrc ! fakesink"), "for example gst://");
    expectInvalid(withUri("gst://videotestsrc ! appsink !"), "must end in an appsink");
    expectInvalid(withUri("gst://appsinkx"), "must end in an appsink");
    expectInvalid(withUri("gst://filesrc location=\"x ! appsink\" ! fakesink"), "fakesink");
    // Any name: the appsink is found by its type.
    EXPECT_EQ(pipelineOf(withUri("gst://videotestsrc ! appsink name=frames")),
        "videotestsrc ! appsink name=frames");
}

TEST(GStreamerPipeline, GstRejectsAnEmptyPipeline)
{
    expectInvalid(withUri("gst://"), "needs a pipeline");
    expectInvalid(withUri("gst://   "), "needs a pipeline");
}

TEST(GStreamerPipeline, OtherSchemesAreNotGStreamers)
{
    expectInvalid(withUri("v4l2:///dev/video0"), "not a GStreamer source");
}

// --- real pipelines ----------------------------------------------------------------------------

// Real pipelines need GStreamer's base plugins.
class GStreamerSource : public ::testing::Test {
protected:
    void SetUp() override
    {
        ASSERT_TRUE(gstreamerAvailable());
        for (const char* element : {"videotestsrc", "videoconvert", "appsink", "identity"})
            if (!gstreamerHasElement(element))
                GTEST_SKIP() << "GStreamer's base plugins (" << element
                             << ") are missing: apt-get install gstreamer1.0-plugins-base";
    }
};

std::unique_ptr<FrameSource> openOrFail(const SourceOptions& options)
{
    Expected<std::unique_ptr<FrameSource>> source = openGStreamerSource(options);
    EXPECT_TRUE(source.ok()) << source.status().message();
    return source.ok() ? std::move(source.value()) : nullptr;
}

TEST_F(GStreamerSource, FinitePipelineDeliversEveryFrameThenEnds)
{
    constexpr int kFrames = 12;
    // sync=false: the pipeline runs as fast as it can, faster than this reader, which must not
    // lose frames of a gst:// pipeline.
    const std::string pipeline = testPipeline(
        "num-buffers=" + std::to_string(kFrames) + " pattern=red", "framerate=30/1", "sync=false");
    const int64_t openedNs = monotonicNs();
    auto source = openOrFail(withUri("gst://" + pipeline));
    ASSERT_TRUE(source);
    EXPECT_EQ(source->info().kind, "gstreamer");
    EXPECT_TRUE(source->info().live);
    EXPECT_EQ(source->info().width, kWidth);
    EXPECT_EQ(source->info().height, kHeight);
    EXPECT_DOUBLE_EQ(source->info().fps, 30.0);
    EXPECT_EQ(source->info().detail, pipeline);

    Frame frame;
    int frames = 0;
    int64_t previousNs = openedNs;
    const uchar* pixels = nullptr;
    const int64_t deadlineNs = monotonicNs() + 5'000'000'000;
    for (;;) {
        Expected<ReadResult> result = source->read(frame);
        ASSERT_TRUE(result.ok()) << result.status().message();
        if (*result == ReadResult::EndOfStream)
            break;
        ASSERT_LT(monotonicNs(), deadlineNs) << "no end after " << frames << " frames";
        if (*result == ReadResult::NoFrame)
            continue;
        ASSERT_EQ(frame.image.channels(), 3);
        EXPECT_EQ(frame.image.cols, kWidth);
        EXPECT_EQ(frame.image.rows, kHeight);
        EXPECT_EQ(frame.sequence, static_cast<uint64_t>(frames));
        EXPECT_GT(frame.captureNs, previousNs);
        EXPECT_LE(frame.captureNs, monotonicNs());
        // videotestsrc's red, in BGR order.
        const cv::Vec3b centre = test::asMat(frame.image).at<cv::Vec3b>(kHeight / 2, kWidth / 2);
        EXPECT_LT(centre[0], 16);
        EXPECT_LT(centre[1], 16);
        EXPECT_GT(centre[2], 239);
        if (pixels == nullptr)
            pixels = frame.image.data;
        EXPECT_EQ(frame.image.data, pixels) << "the caller's buffer is reused";
        previousNs = frame.captureNs;
        ++frames;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    EXPECT_EQ(frames, kFrames);
    const SourceStats stats = source->stats();
    EXPECT_EQ(stats.delivered, static_cast<uint64_t>(kFrames));
    EXPECT_EQ(stats.droppedByDevice, 0u);
    EXPECT_EQ(stats.disconnects, 0u);
}

TEST_F(GStreamerSource, PipelineNotEndingInAppsinkIsRejected)
{
    Expected<std::unique_ptr<FrameSource>> source =
        openGStreamerSource(withUri("gst://videotestsrc num-buffers=1 ! fakesink"));
    ASSERT_FALSE(source.ok());
    EXPECT_EQ(source.status().kind(), ErrorKind::InvalidInput);
    EXPECT_NE(source.status().message().find("appsink"), std::string::npos);
}

// Open failures have the kinds of a missing file or device (the CLI exits 2 for them), and name
// what is wrong.
void expectOpenFailure(const std::string& uri, ErrorKind kind,
    const std::vector<std::string>& mentioned, double withinS = 5.0)
{
    const int64_t startNs = monotonicNs();
    Expected<std::unique_ptr<FrameSource>> source = openGStreamerSource(withUri(uri));
    ASSERT_FALSE(source.ok()) << uri;
    EXPECT_LT(nsToS(monotonicNs() - startNs), withinS) << uri;
    EXPECT_EQ(source.status().kind(), kind) << source.status().message();
    EXPECT_TRUE(source.status().isUsageError()) << source.status().message();
    for (const std::string& text : mentioned)
        EXPECT_NE(source.status().message().find(text), std::string::npos)
            << "'" << text << "' not in: " << source.status().message();
}

TEST_F(GStreamerSource, MissingElementIsNamedAtOpen)
{
    const std::string pipeline = "videotestsrc ! jetagent_no_such_element ! appsink";
    expectOpenFailure("gst://" + pipeline, ErrorKind::Unsupported,
        {"no GStreamer element \"jetagent_no_such_element\"", pipeline, "gst-launch-1.0"});
}

TEST_F(GStreamerSource, CSIWithoutArgusNamesTheMissingElement)
{
    if (gstreamerHasElement("nvarguscamerasrc"))
        GTEST_SKIP() << "this machine has nvarguscamerasrc (a Jetson)";
    expectOpenFailure("csi://0", ErrorKind::Unsupported,
        {"no GStreamer element \"nvarguscamerasrc\" (not a Jetson, or nvidia-l4t-gstreamer "
         "missing)",
            "csi://0", "nvargus-daemon"});
}

TEST_F(GStreamerSource, BadPipelineSyntaxFailsAtOpen)
{
    expectOpenFailure("gst://videotestsrc ! ! appsink", ErrorKind::InvalidInput,
        {"GStreamer cannot build the pipeline", "videotestsrc ! ! appsink"});
    expectOpenFailure("gst://videotestsrc ! video/x-raw,width=abc ! appsink",
        ErrorKind::InvalidInput, {"GStreamer cannot build the pipeline"});
}

TEST_F(GStreamerSource, RefusingRTSPServerFailsAtOpen)
{
    if (!gstreamerHasElement("rtspsrc"))
        GTEST_SKIP() << "rtspsrc is missing: apt-get install gstreamer1.0-plugins-good";
    const std::string uri =
        "rtsp://user:secret@127.0.0.1:" + std::to_string(test::unusedLoopbackPort()) + "/x";
    expectOpenFailure(uri, ErrorKind::NotFound, {"rtsp://user:***@127.0.0.1", "rtspsrc"});
    Expected<std::unique_ptr<FrameSource>> source = openGStreamerSource(withUri(uri));
    ASSERT_FALSE(source.ok());
    EXPECT_EQ(source.status().message().find("secret"), std::string::npos)
        << source.status().message();
}

TEST_F(GStreamerSource, PipelineWithoutFramesFailsAtOpen)
{
    expectOpenFailure("gst://videotestsrc num-buffers=0 ! " + std::string(kBGR) + " ! appsink",
        ErrorKind::InvalidInput, {"ended before its first frame"});
}

TEST_F(GStreamerSource, NonBGRFramesFailAtOpen)
{
    const std::string pipeline = "videotestsrc num-buffers=2 ! videoconvert ! "
                                 "video/x-raw,format=GRAY8 ! appsink";
    Expected<std::unique_ptr<FrameSource>> source =
        openGStreamerSource(withUri("gst://" + pipeline));
    ASSERT_FALSE(source.ok());
    EXPECT_EQ(source.status().kind(), ErrorKind::InvalidInput);
    EXPECT_NE(source.status().message().find("format=BGR"), std::string::npos)
        << source.status().message();
}

// A live pipeline slower than read()'s wait: read() returns NoFrame in between, so a stopper
// can end the loop, and a gap longer than the stall timeout is one stall, however many slices.
TEST_F(GStreamerSource, LivePipelineCanBeStoppedAndCountsStalls)
{
    constexpr int kFps = 4; // 250 ms between frames
    constexpr double kStallTimeoutS = 0.05;
    constexpr auto kRunFor = std::chrono::milliseconds(700);
    constexpr int64_t kMaxReadNs = 400'000'000; // read() waits 100 ms; slack for a busy machine
    SourceOptions options = withUri("gst://" +
        testPipeline("is-live=true", "framerate=" + std::to_string(kFps) + "/1",
            "drop=true max-buffers=1 sync=false"));
    options.camera.stallTimeoutS = kStallTimeoutS;
    auto source = openOrFail(options);
    ASSERT_TRUE(source);
    EXPECT_DOUBLE_EQ(source->info().fps, kFps);

    std::atomic<bool> stop {false};
    std::thread stopper([&] {
        std::this_thread::sleep_for(kRunFor);
        stop = true;
    });
    Frame frame;
    int frames = 0;
    int noFrames = 0;
    int64_t longestNs = 0;
    while (!stop) {
        const int64_t startNs = monotonicNs();
        Expected<ReadResult> result = source->read(frame);
        longestNs = std::max(longestNs, monotonicNs() - startNs);
        ASSERT_TRUE(result.ok()) << result.status().message();
        ASSERT_NE(*result, ReadResult::EndOfStream);
        (*result == ReadResult::Frame ? frames : noFrames) += 1;
    }
    stopper.join();
    EXPECT_LT(longestNs, kMaxReadNs);
    EXPECT_GE(frames, 2);
    EXPECT_GE(noFrames, 1);
    const SourceStats stats = source->stats();
    EXPECT_GE(stats.stalls, 1u);
    EXPECT_LE(stats.stalls, static_cast<uint64_t>(frames)) << "one stall per gap, not per slice";

    // The source thread waits for the next frame in slices; the source goes at once.
    const int64_t closingNs = monotonicNs();
    source.reset();
    EXPECT_LT(monotonicNs() - closingNs, 1'000'000'000);
}

// csi and rtsp keep the newest frame: a reader that falls behind gets a fresh frame, and the
// ones it missed are a gap in the sequence and counted.
TEST_F(GStreamerSource, LiveCameraKindKeepsTheNewestFrame)
{
    constexpr auto kLate = std::chrono::milliseconds(300); // about nine frames at 30 fps
    const std::string pipeline =
        testPipeline("is-live=true", "framerate=30/1", "drop=true max-buffers=1 sync=false");
    Expected<std::unique_ptr<FrameSource>> opened =
        openGStreamerPipeline(withUri("csi://0"), pipeline, "csi");
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    FrameSource& source = **opened;
    EXPECT_EQ(source.info().kind, "csi");

    Frame frame;
    ASSERT_EQ(*source.read(frame), ReadResult::Frame);
    EXPECT_EQ(frame.sequence, 0u);
    std::this_thread::sleep_for(kLate);
    Expected<ReadResult> result = source.read(frame);
    ASSERT_TRUE(result.ok()) << result.status().message();
    ASSERT_EQ(*result, ReadResult::Frame);
    EXPECT_GE(frame.sequence, 3u);
    EXPECT_LT(monotonicNs() - frame.captureNs, 150'000'000) << "a fresh frame, not a stale one";
    EXPECT_EQ(source.stats().droppedByDevice, frame.sequence - 1);
}

// A stream that ends is reopened with backoff, counted as a disconnect and a reconnect, and its
// frames go on in sequence.
TEST_F(GStreamerSource, LostStreamIsReopened)
{
    constexpr int kFramesPerConnection = 3;
    constexpr int kWanted = 3 * kFramesPerConnection;
    SourceOptions options = withUri("rtsp://stand-in/stream");
    options.camera.reconnectMaxS = 0.2;
    const std::string pipeline =
        testPipeline("is-live=true num-buffers=" + std::to_string(kFramesPerConnection),
            "framerate=30/1", "drop=true max-buffers=1 sync=false");
    Expected<std::unique_ptr<FrameSource>> opened =
        openGStreamerPipeline(options, pipeline, "rtsp");
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    FrameSource& source = **opened;

    Frame frame;
    int frames = 0;
    int64_t previous = -1;
    const int64_t deadlineNs = monotonicNs() + 5'000'000'000;
    while (frames < kWanted && monotonicNs() < deadlineNs) {
        Expected<ReadResult> result = source.read(frame);
        ASSERT_TRUE(result.ok()) << result.status().message();
        ASSERT_NE(*result, ReadResult::EndOfStream);
        if (*result != ReadResult::Frame)
            continue;
        EXPECT_GT(static_cast<int64_t>(frame.sequence), previous);
        previous = static_cast<int64_t>(frame.sequence);
        ++frames;
    }
    ASSERT_EQ(frames, kWanted);
    const SourceStats stats = source.stats();
    EXPECT_GE(stats.disconnects, 2u);
    EXPECT_GE(stats.reconnects, 2u);
    EXPECT_LE(stats.reconnects, stats.disconnects);
}

// Reads until `wanted` frames came (or `limitS` passed), checking that ids and capture times
// increase across every reconnect; returns the frames read.
int readIncreasing(FrameSource& source, int wanted, double limitS)
{
    Frame frame;
    int frames = 0;
    int64_t previousId = -1;
    int64_t previousNs = 0;
    const int64_t deadlineNs = monotonicNs() + static_cast<int64_t>(limitS * 1e9);
    while (frames < wanted && monotonicNs() < deadlineNs) {
        Expected<ReadResult> result = source.read(frame);
        EXPECT_TRUE(result.ok()) << result.status().message();
        if (!result.ok() || *result == ReadResult::EndOfStream)
            break;
        if (*result != ReadResult::Frame)
            continue;
        EXPECT_GT(static_cast<int64_t>(frame.sequence), previousId);
        EXPECT_GT(frame.captureNs, previousNs);
        EXPECT_EQ(frame.image.channels(), 3);
        previousId = static_cast<int64_t>(frame.sequence);
        previousNs = frame.captureNs;
        ++frames;
    }
    return frames;
}

// A live gst:// pipeline that fails mid-stream (identity error-after) is reopened, as cameras are.
TEST_F(GStreamerSource, LiveGstPipelineEndingInAnErrorIsReopened)
{
    constexpr int kFramesPerConnection = 5;
    SourceOptions options = withUri("gst://" +
        testPipeline("is-live=true",
            "framerate=30/1 ! identity error-after=" + std::to_string(kFramesPerConnection)));
    options.camera.reconnectMaxS = 0.2;
    auto source = openOrFail(options);
    ASSERT_TRUE(source);
    EXPECT_EQ(readIncreasing(*source, 3 * kFramesPerConnection, 10.0), 3 * kFramesPerConnection);
    const SourceStats stats = source->stats();
    EXPECT_GE(stats.disconnects, 2u);
    EXPECT_GE(stats.reconnects, 2u);
    EXPECT_LE(stats.reconnects, stats.disconnects);
}

// A gst:// pipeline that is not live (a file) is not replayed after an error: read() fails, with
// GStreamer's reason, once the frames before it were delivered.
TEST_F(GStreamerSource, NonLiveGstPipelineErrorEndsTheSource)
{
    constexpr int kFrames = 4;
    auto source = openOrFail(withUri("gst://" +
        testPipeline("", "framerate=30/1 ! identity error-after=" + std::to_string(kFrames))));
    ASSERT_TRUE(source);
    Frame frame;
    int frames = 0;
    Status failure;
    const int64_t deadlineNs = monotonicNs() + 5'000'000'000;
    while (monotonicNs() < deadlineNs) {
        Expected<ReadResult> result = source->read(frame);
        if (!result.ok()) {
            failure = result.status();
            break;
        }
        ASSERT_NE(*result, ReadResult::EndOfStream);
        frames += *result == ReadResult::Frame ? 1 : 0;
    }
    EXPECT_LE(frames, kFrames);
    ASSERT_FALSE(failure.ok()) << "no error after " << frames << " frames";
    EXPECT_EQ(failure.kind(), ErrorKind::Io);
    EXPECT_NE(failure.message().find("identity"), std::string::npos) << failure.message();
    EXPECT_EQ(source->stats().disconnects, 0u);
}

// The csi:// code path with videotestsrc in place of nvarguscamerasrc: a camera pipeline that
// fails is reopened and its frames go on in sequence.
TEST_F(GStreamerSource, CSIPipelineEndingInAnErrorIsReopened)
{
    constexpr int kFramesPerConnection = 4;
    SourceOptions options = withUri("csi://0");
    options.camera.reconnectMaxS = 0.2;
    Expected<std::unique_ptr<FrameSource>> opened = openGStreamerPipeline(options,
        testPipeline("is-live=true",
            "framerate=30/1 ! identity error-after=" + std::to_string(kFramesPerConnection),
            "drop=true max-buffers=1 sync=false"),
        "csi");
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    EXPECT_GE(readIncreasing(**opened, 3 * kFramesPerConnection, 10.0), 2 * kFramesPerConnection);
    const SourceStats stats = (*opened)->stats();
    EXPECT_GE(stats.disconnects, 2u);
    EXPECT_GE(stats.reconnects, 2u);
}

// A live stream that goes silent without an error (a network stream whose packets stop) is torn
// down by the watchdog after two stall timeouts and reopened.
TEST_F(GStreamerSource, SilentStreamIsReopenedByTheWatchdog)
{
    SourceOptions options = withUri("rtsp://stand-in/stream");
    options.camera.stallTimeoutS = 0.1; // the watchdog fires after 0.2 s of silence
    options.camera.reconnectMaxS = 0.2;
    // One frame every 2 s: each connection delivers its first frame at once, then falls silent.
    Expected<std::unique_ptr<FrameSource>> opened = openGStreamerPipeline(
        options, testPipeline("is-live=true", "framerate=1/2", "sync=false"), "rtsp");
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    EXPECT_EQ(readIncreasing(**opened, 3, 5.0), 3);
    const SourceStats stats = (*opened)->stats();
    EXPECT_GE(stats.disconnects, 2u);
    EXPECT_GE(stats.reconnects, 2u);
}

} // namespace
} // namespace jetagent
