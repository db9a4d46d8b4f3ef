// The V4L2 source against the fake camera: negotiation, controls, streaming, stalls, unplugging.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fake_v4l2.h"
#include "jetagent/base/clock.h"
#include "jetagent/hal/pixel_convert.h"
#include "jetagent/hal/v4l2_source.h"
#include "test_image.h"

namespace jetagent {
namespace {

using test::FakeCounters;
using test::FakeDevice;
using test::FakeFrame;
using test::FakeV4L2;
using test::fakeWebcam;

constexpr const char* kWebcam = "/dev/video0";
constexpr int kBuffers = 4;
constexpr int64_t kReadDeadlineMs = 3000; // generous: the VM is noisy
constexpr double kShortStallS = 0.05;
constexpr int64_t kFrameIntervalNs = 33'333'000; // 30 fps, whole microseconds

SourceOptions optionsFor(const std::string& uri)
{
    SourceOptions options;
    options.uri = uri;
    options.camera.buffers = kBuffers;
    return options;
}

std::unique_ptr<FrameSource> openOrFail(const SourceOptions& options, FakeV4L2& fake)
{
    auto source = openV4L2Source(options, fake);
    EXPECT_TRUE(source.ok()) << source.status().message();
    return source.ok() ? std::move(source.value()) : nullptr;
}

// The error text of an open that must fail with `kind`.
std::string openError(const SourceOptions& options, FakeV4L2& fake, ErrorKind kind)
{
    auto source = openV4L2Source(options, fake);
    EXPECT_FALSE(source.ok()) << options.uri << " opened but should not have";
    if (source.ok())
        return "";
    EXPECT_EQ(source.status().kind(), kind) << source.status().message();
    return source.status().message();
}

// Reads until a frame comes (or an error, or the deadline).
ReadResult readFrame(FrameSource& source, Frame& frame, int64_t deadlineMs = kReadDeadlineMs)
{
    const int64_t end = monotonicNs() + deadlineMs * 1'000'000;
    while (monotonicNs() < end) {
        auto result = source.read(frame);
        EXPECT_TRUE(result.ok()) << result.status().message();
        if (!result.ok() || *result != ReadResult::NoFrame)
            return result.ok() ? *result : ReadResult::EndOfStream;
    }
    return ReadResult::NoFrame;
}

// Reads (expecting NoFrame every time) until `done` or the deadline; returns `done`'s last answer.
template <typename Predicate>
bool readUntil(FrameSource& source, Predicate done, int64_t deadlineMs = kReadDeadlineMs)
{
    Frame frame;
    const int64_t end = monotonicNs() + deadlineMs * 1'000'000;
    while (!done() && monotonicNs() < end) {
        auto result = source.read(frame);
        EXPECT_TRUE(result.ok()) << result.status().message();
        if (result.ok()) {
            EXPECT_EQ(*result, ReadResult::NoFrame);
        }
    }
    return done();
}

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

// --- negotiation ---------------------------------------------------------------------------------

TEST(V4L2Negotiation, ExactRequestIsWhatTheDeviceDoes)
{
    FakeV4L2 fake({fakeWebcam()});
    auto options = optionsFor("v4l2:///dev/video0");
    options.camera.format = "yuyv";
    options.width = 1280;
    options.height = 720;
    options.fps = 10;
    auto source = openOrFail(options, fake);
    ASSERT_TRUE(source);

    const v4l2_pix_format format = fake.format(kWebcam);
    EXPECT_EQ(format.pixelformat, V4L2_PIX_FMT_YUYV);
    EXPECT_EQ(format.width, 1280u);
    EXPECT_EQ(format.height, 720u);
    EXPECT_EQ(fake.interval(kWebcam).denominator, 10u);
    // STREAMON waits for the first read(): a camera streaming while the agent sets up its tasks
    // would fill every buffer and drop frames.
    EXPECT_FALSE(fake.streaming(kWebcam));
    fake.queueFrames(kWebcam, 1);
    Frame frame;
    auto first = source->read(frame);
    ASSERT_TRUE(first.ok()) << first.status().message();
    EXPECT_TRUE(fake.streaming(kWebcam));
    EXPECT_EQ(first.value(), ReadResult::Frame);

    const SourceInfo& info = source->info();
    EXPECT_EQ(info.kind, "v4l2");
    EXPECT_EQ(info.width, 1280);
    EXPECT_EQ(info.height, 720);
    EXPECT_DOUBLE_EQ(info.fps, 10.0);
    EXPECT_TRUE(info.live);
    EXPECT_EQ(info.frameCount, -1);
    EXPECT_EQ(info.detail, "/dev/video0 (uvcvideo, Fake Webcam) YUYV 1280x720 @ 10 fps, 4 buffers");
}

TEST(V4L2Negotiation, MjpegIsAnAliasOfMjpg)
{
    FakeV4L2 fake({fakeWebcam()});
    auto options = optionsFor("v4l2:///dev/video0");
    options.camera.format = "mjpeg";
    options.width = 1920;
    options.height = 1080;
    auto source = openOrFail(options, fake);
    ASSERT_TRUE(source);
    EXPECT_EQ(fake.format(kWebcam).pixelformat, V4L2_PIX_FMT_MJPEG);
    EXPECT_EQ(fake.format(kWebcam).width, 1920u);
}

TEST(V4L2Negotiation, AutoTakesTheFirstConvertibleFormatThatFits)
{
    FakeV4L2 fake({fakeWebcam()});
    // 1280x720 at 30 fps: YUYV only goes to 10 fps there; NV12 and MJPG both can.
    auto options = optionsFor("v4l2:///dev/video0");
    options.width = 1280;
    options.height = 720;
    options.fps = 30;
    uint32_t expected = 0;
    for (const uint32_t fourcc : PixelConverter::supportedFourccs())
        if (expected == 0 && (fourcc == V4L2_PIX_FMT_NV12 || fourcc == V4L2_PIX_FMT_MJPEG))
            expected = fourcc;
    ASSERT_NE(expected, 0u) << "the converter supports neither NV12 nor MJPG";
    auto source = openOrFail(options, fake);
    ASSERT_TRUE(source);
    EXPECT_EQ(fourccName(fake.format(kWebcam).pixelformat), fourccName(expected));
    EXPECT_EQ(fake.interval(kWebcam).denominator, 30u);

    // 1920x1080: only MJPG (and H264, which does not convert) offer it.
    source.reset();
    options.width = 1920;
    options.height = 1080;
    options.fps = 0;
    source = openOrFail(options, fake);
    ASSERT_TRUE(source);
    EXPECT_EQ(fake.format(kWebcam).pixelformat, V4L2_PIX_FMT_MJPEG);
}

TEST(V4L2Negotiation, ZeroSizeAndRateKeepTheCurrentOnes)
{
    FakeDevice device = fakeWebcam();
    device.fourcc = V4L2_PIX_FMT_NV12;
    device.width = 1280;
    device.height = 720;
    FakeV4L2 fake({device});
    auto source = openOrFail(optionsFor("v4l2:///dev/video0"), fake);
    ASSERT_TRUE(source);
    EXPECT_EQ(fake.format(kWebcam).pixelformat, V4L2_PIX_FMT_NV12);
    EXPECT_EQ(source->info().width, 1280);
    EXPECT_EQ(source->info().height, 720);
    EXPECT_DOUBLE_EQ(source->info().fps, 30.0);
}

TEST(V4L2Negotiation, ZeroRateWithASizeKeepsTheCurrentInterval)
{
    FakeDevice device = fakeWebcam();
    device.interval = {1, 15};
    FakeV4L2 fake({device});
    auto options = optionsFor("v4l2:///dev/video0");
    options.camera.format = "YUYV";
    options.width = 640;
    options.height = 480;
    auto source = openOrFail(options, fake);
    ASSERT_TRUE(source);
    EXPECT_EQ(fake.interval(kWebcam).denominator, 15u);
    EXPECT_DOUBLE_EQ(source->info().fps, 15.0);
}

TEST(V4L2Negotiation, UnsupportedSizeListsWhatTheDeviceOffers)
{
    FakeV4L2 fake({fakeWebcam()});
    auto options = optionsFor("v4l2:///dev/video0");
    options.camera.format = "YUYV";
    options.width = 800;
    options.height = 600;
    const std::string message = openError(options, fake, ErrorKind::InvalidInput);
    EXPECT_TRUE(contains(message, "/dev/video0")) << message;
    EXPECT_TRUE(contains(message, "800x600")) << message;
    EXPECT_TRUE(contains(message, "YUYV: 640x480 @ 30, 15 fps; 1280x720 @ 10, 5 fps")) << message;
    EXPECT_TRUE(contains(message, "MJPG: 640x480 @ 30 fps")) << message;
    EXPECT_TRUE(contains(message, "H264 (jetagent cannot convert it)")) << message;

    options.camera.format = "auto";
    const std::string autoMessage = openError(options, fake, ErrorKind::InvalidInput);
    EXPECT_TRUE(contains(autoMessage, "800x600")) << autoMessage;
    EXPECT_TRUE(contains(autoMessage, "NV12: 640x480 @ 30 fps")) << autoMessage;
}

TEST(V4L2Negotiation, UnsupportedRateListsTheRates)
{
    FakeV4L2 fake({fakeWebcam()});
    auto options = optionsFor("v4l2:///dev/video0");
    options.camera.format = "YUYV";
    options.width = 640;
    options.height = 480;
    options.fps = 60;
    const std::string message = openError(options, fake, ErrorKind::InvalidInput);
    EXPECT_TRUE(contains(message, "640x480 @ 60 fps")) << message;
    EXPECT_TRUE(contains(message, "640x480 @ 30, 15 fps")) << message;
    EXPECT_FALSE(fake.streaming(kWebcam));
}

TEST(V4L2Negotiation, FormatsTheDeviceLacksOrJetagentCannotConvert)
{
    FakeV4L2 fake({fakeWebcam()});
    auto options = optionsFor("v4l2:///dev/video0");
    options.camera.format = "GREY";
    std::string message = openError(options, fake, ErrorKind::InvalidInput);
    EXPECT_TRUE(contains(message, "no pixel format GREY")) << message;
    EXPECT_TRUE(contains(message, "YUYV: 640x480")) << message;

    options.camera.format = "H264";
    message = openError(options, fake, ErrorKind::InvalidInput);
    EXPECT_TRUE(contains(message, "cannot convert H264")) << message;
    EXPECT_TRUE(contains(message, "YUYV, MJPG, NV12")) << message;

    options.camera.format = "YUV";
    message = openError(options, fake, ErrorKind::InvalidInput);
    EXPECT_TRUE(contains(message, "'YUV'")) << message;

    FakeDevice h264Only = fakeWebcam("/dev/video1", "Encoder Cam", "usb-2");
    h264Only.formats.erase(h264Only.formats.begin(), h264Only.formats.begin() + 3);
    fake.addDevice(h264Only);
    message = openError(optionsFor("v4l2:///dev/video1"), fake, ErrorKind::InvalidInput);
    EXPECT_TRUE(contains(message, "no pixel format jetagent can convert")) << message;
    EXPECT_TRUE(contains(message, "H264 (jetagent cannot convert it): 1920x1080 @ 30 fps"))
        << message;
}

TEST(V4L2Negotiation, DriverAdjustedFormatIsReported)
{
    // A driver that does not enumerate sizes: nothing forbids 800x600 until S_FMT picks 640x480.
    FakeV4L2 fake({fakeWebcam()});
    fake.failIoctl(kWebcam, VIDIOC_ENUM_FRAMESIZES, ENOTTY);
    auto options = optionsFor("v4l2:///dev/video0");
    options.camera.format = "YUYV";
    options.width = 800;
    options.height = 600;
    const std::string message = openError(options, fake, ErrorKind::InvalidInput);
    EXPECT_TRUE(contains(message, "asked for YUYV 800x600, the driver set YUYV 640x480"))
        << message;
}

TEST(V4L2Negotiation, DevicesThatCannotCaptureAreRefused)
{
    FakeDevice metadata = fakeWebcam("/dev/video1");
    metadata.caps = V4L2_CAP_META_CAPTURE | V4L2_CAP_STREAMING;
    FakeDevice multiPlanar = fakeWebcam("/dev/video2", "ISP", "platform:isp");
    multiPlanar.caps = V4L2_CAP_VIDEO_CAPTURE_MPLANE | V4L2_CAP_STREAMING;
    FakeV4L2 fake({metadata, multiPlanar});

    std::string message =
        openError(optionsFor("v4l2:///dev/video1"), fake, ErrorKind::InvalidInput);
    EXPECT_TRUE(contains(message, "/dev/video1")) << message;
    EXPECT_TRUE(contains(message, "metadata")) << message;
    message = openError(optionsFor("v4l2:///dev/video2"), fake, ErrorKind::InvalidInput);
    EXPECT_TRUE(contains(message, "multi-planar")) << message;
    EXPECT_TRUE(contains(message, "not support yet")) << message;
}

TEST(V4L2Negotiation, MissingDeviceListsTheCaptureDevices)
{
    FakeDevice metadata = fakeWebcam("/dev/video1");
    metadata.caps = V4L2_CAP_META_CAPTURE | V4L2_CAP_STREAMING;
    FakeV4L2 fake({fakeWebcam(), metadata});

    std::string message = openError(optionsFor("v4l2:///dev/video7"), fake, ErrorKind::NotFound);
    EXPECT_TRUE(contains(message, "/dev/video7")) << message;
    EXPECT_TRUE(
        contains(message, "/dev/video0 (card 'Fake Webcam', bus-info 'usb-0000:00:14.0-1')"))
        << message;
    EXPECT_FALSE(contains(message, "/dev/video1")) << "metadata nodes are no capture devices";

    message = openError(optionsFor("v4l2://No Such Camera"), fake, ErrorKind::NotFound);
    EXPECT_TRUE(contains(message, "'No Such Camera'")) << message;
    EXPECT_TRUE(contains(message, "/dev/video0 (card 'Fake Webcam'")) << message;

    FakeV4L2 empty;
    message = openError(optionsFor("v4l2://Fake Webcam"), empty, ErrorKind::NotFound);
    EXPECT_TRUE(contains(message, "none")) << message;
}

TEST(V4L2Negotiation, TargetsByCardNameAndBusInfo)
{
    // A UVC camera's metadata node shares the card name and bus-info; it must be skipped.
    FakeDevice metadata = fakeWebcam("/dev/video0");
    metadata.caps = V4L2_CAP_META_CAPTURE | V4L2_CAP_STREAMING;
    FakeV4L2 fake({metadata, fakeWebcam("/dev/video1"),
        fakeWebcam("/dev/video2", "Other Cam", "usb-0000:00:14.0-2")});

    auto source = openOrFail(optionsFor("v4l2://fake webcam"), fake);
    ASSERT_TRUE(source);
    EXPECT_EQ(source->info().detail.rfind("/dev/video1 ", 0), 0u) << source->info().detail;
    source.reset();

    source = openOrFail(optionsFor("v4l2://usb-0000:00:14.0-2"), fake);
    ASSERT_TRUE(source);
    EXPECT_EQ(source->info().detail.rfind("/dev/video2 (uvcvideo, Other Cam)", 0), 0u)
        << source->info().detail;
    Frame frame;
    ASSERT_TRUE(source->read(frame).ok());
    EXPECT_TRUE(fake.streaming("/dev/video2"));
    EXPECT_FALSE(fake.streaming("/dev/video1"));
}

TEST(V4L2Negotiation, BadOptionsAreRefusedBeforeTheDeviceIsTouched)
{
    FakeV4L2 fake({fakeWebcam()});
    auto options = optionsFor("v4l2:///dev/video0");
    options.camera.buffers = 1;
    EXPECT_TRUE(contains(openError(options, fake, ErrorKind::InvalidInput), "2..32"));
    options = optionsFor("v4l2:///dev/video0");
    options.width = 640;
    EXPECT_TRUE(contains(openError(options, fake, ErrorKind::InvalidInput), "both"));
    options = optionsFor("v4l2://");
    EXPECT_TRUE(contains(openError(options, fake, ErrorKind::InvalidInput), "names no device"));
    EXPECT_EQ(fake.counters(kWebcam).opens, 0u);
}

// --- controls ------------------------------------------------------------------------------------

TEST(V4L2Controls, IntBoolAndMenuControlsAreSetInOrder)
{
    FakeV4L2 fake({fakeWebcam()});
    auto options = optionsFor("v4l2:///dev/video0");
    options.camera.controls = {{"brightness", "200"}, {"White Balance, Automatic", "off"},
        {"power_line_frequency", "60 hz"}, {"auto_exposure", "manual"},
        {"exposure_time_absolute", "100"}};
    auto source = openOrFail(options, fake);
    ASSERT_TRUE(source);
    EXPECT_EQ(fake.controlValue(kWebcam, V4L2_CID_BRIGHTNESS), 200);
    EXPECT_EQ(fake.controlValue(kWebcam, V4L2_CID_AUTO_WHITE_BALANCE), 0);
    EXPECT_EQ(fake.controlValue(kWebcam, V4L2_CID_POWER_LINE_FREQUENCY), 2);
    EXPECT_EQ(fake.controlValue(kWebcam, V4L2_CID_EXPOSURE_AUTO), 1);
    EXPECT_EQ(fake.controlValue(kWebcam, V4L2_CID_EXPOSURE_ABSOLUTE), 100);

    // Menu entries by index too, and booleans as 1/true.
    source.reset();
    options.camera.controls = {{"power_line_frequency", "0"}, {"white_balance_automatic", "true"}};
    source = openOrFail(options, fake);
    ASSERT_TRUE(source);
    EXPECT_EQ(fake.controlValue(kWebcam, V4L2_CID_POWER_LINE_FREQUENCY), 0);
    EXPECT_EQ(fake.controlValue(kWebcam, V4L2_CID_AUTO_WHITE_BALANCE), 1);
}

TEST(V4L2Controls, DriversWithoutExtendedControlsUseTheOldIoctls)
{
    FakeDevice device = fakeWebcam();
    device.extendedControls = false;
    FakeV4L2 fake({device});
    auto options = optionsFor("v4l2:///dev/video0");
    options.camera.controls = {{"brightness", "17"}};
    auto source = openOrFail(options, fake);
    ASSERT_TRUE(source);
    EXPECT_EQ(fake.controlValue(kWebcam, V4L2_CID_BRIGHTNESS), 17);
}

TEST(V4L2Controls, UnknownNameListsTheControls)
{
    FakeV4L2 fake({fakeWebcam()});
    auto options = optionsFor("v4l2:///dev/video0");
    options.camera.controls = {{"zoom_absolute", "2"}};
    const std::string message = openError(options, fake, ErrorKind::InvalidInput);
    EXPECT_TRUE(contains(message, "'zoom_absolute'")) << message;
    EXPECT_TRUE(contains(message, "brightness, contrast, white_balance_automatic")) << message;
    EXPECT_TRUE(contains(message, "exposure_time_absolute")) << message;
    EXPECT_FALSE(contains(message, "user_controls")) << "control classes are not controls";
    EXPECT_FALSE(fake.streaming(kWebcam));
}

TEST(V4L2Controls, ValuesOutOfRangeOrOfTheWrongKind)
{
    FakeV4L2 fake({fakeWebcam()});
    auto options = optionsFor("v4l2:///dev/video0");
    options.camera.controls = {{"brightness", "300"}};
    std::string message = openError(options, fake, ErrorKind::InvalidInput);
    EXPECT_TRUE(contains(message, "brightness")) << message;
    EXPECT_TRUE(contains(message, "0..255")) << message;

    options.camera.controls = {{"contrast", "52"}};
    message = openError(options, fake, ErrorKind::InvalidInput);
    EXPECT_TRUE(contains(message, "0..100 in steps of 5")) << message;

    options.camera.controls = {{"brightness", "bright"}};
    message = openError(options, fake, ErrorKind::InvalidInput);
    EXPECT_TRUE(contains(message, "takes an integer")) << message;

    options.camera.controls = {{"white_balance_automatic", "maybe"}};
    message = openError(options, fake, ErrorKind::InvalidInput);
    EXPECT_TRUE(contains(message, "true or false")) << message;

    options.camera.controls = {{"power_line_frequency", "70 Hz"}};
    message = openError(options, fake, ErrorKind::InvalidInput);
    EXPECT_TRUE(contains(message, "0 (Disabled), 1 (50 Hz), 2 (60 Hz)")) << message;
    EXPECT_EQ(fake.controlValue(kWebcam, V4L2_CID_BRIGHTNESS), 128) << "nothing was set";
}

TEST(V4L2Controls, InactiveControlSaysWhyAndThatOrderMatters)
{
    FakeV4L2 fake({fakeWebcam()});
    auto options = optionsFor("v4l2:///dev/video0");
    options.camera.controls = {{"exposure_time_absolute", "100"}, {"auto_exposure", "manual"}};
    const std::string message = openError(options, fake, ErrorKind::InvalidInput);
    EXPECT_TRUE(contains(message, "exposure_time_absolute")) << message;
    EXPECT_TRUE(contains(message, "inactive")) << message;
    EXPECT_TRUE(contains(message, "order")) << message;
}

// --- streaming -----------------------------------------------------------------------------------

TEST(V4L2Streaming, EveryBufferGoesBackToTheDriver)
{
    constexpr int kFrames = 10;
    FakeV4L2 fake({fakeWebcam()});
    auto source = openOrFail(optionsFor("v4l2:///dev/video0"), fake);
    ASSERT_TRUE(source);
    FakeCounters counters = fake.counters(kWebcam);
    EXPECT_EQ(counters.buffersAllocated, kBuffers);
    EXPECT_EQ(counters.mappings, kBuffers);
    EXPECT_EQ(counters.buffersQueued, kBuffers);

    fake.queueFrames(kWebcam, kFrames);
    Frame frame;
    for (int i = 0; i < kFrames; ++i) {
        ASSERT_EQ(readFrame(*source, frame), ReadResult::Frame) << "frame " << i;
        EXPECT_EQ(frame.sequence, static_cast<uint64_t>(i));
        EXPECT_EQ(frame.image.cols, 640);
        EXPECT_EQ(frame.image.rows, 480);
        EXPECT_EQ(frame.image.channels(), 3);
        EXPECT_EQ(frame.truthClass, -1);
        EXPECT_EQ(fake.counters(kWebcam).buffersQueued, kBuffers) << "after frame " << i;
    }
    counters = fake.counters(kWebcam);
    EXPECT_EQ(counters.dequeueBuffer, static_cast<uint64_t>(kFrames));
    EXPECT_EQ(counters.queueBuffer, static_cast<uint64_t>(kBuffers + kFrames));
    EXPECT_EQ(source->stats().delivered, static_cast<uint64_t>(kFrames));

    source.reset();
    counters = fake.counters(kWebcam);
    EXPECT_FALSE(fake.streaming(kWebcam));
    EXPECT_EQ(counters.mappings, 0);
    EXPECT_EQ(counters.buffersAllocated, 0);
    EXPECT_EQ(counters.openFiles, 0);
}

TEST(V4L2Streaming, PixelsComeFromTheBufferWithTheDriversLineStride)
{
    constexpr uint32_t kWidth = 64;
    constexpr uint32_t kHeight = 48;
    constexpr uint32_t kPadding = 16;
    FakeDevice device;
    device.formats = {{V4L2_PIX_FMT_GREY, "8-bit Greyscale", false, {{kWidth, kHeight}}, {}}};
    device.linePadding = kPadding;
    FakeV4L2 fake({device});
    // Row r holds the value 3r + sequence; the padding holds 255, which must never show.
    fake.setFrameFiller(kWebcam, [](uint8_t* data, size_t length, uint32_t sequence) {
        const uint32_t stride = kWidth + kPadding;
        for (uint32_t row = 0; row < kHeight && (row + 1) * stride <= length; ++row) {
            std::memset(data + row * stride, static_cast<int>(3 * row + sequence), kWidth);
            std::memset(data + row * stride + kWidth, 255, kPadding);
        }
        return stride * kHeight;
    });
    auto options = optionsFor("v4l2:///dev/video0");
    options.camera.format = "GREY";
    auto source = openOrFail(options, fake);
    ASSERT_TRUE(source);
    fake.queueFrames(kWebcam, 2);
    Frame frame;
    for (uint32_t sequence = 0; sequence < 2; ++sequence) {
        ASSERT_EQ(readFrame(*source, frame), ReadResult::Frame);
        ASSERT_EQ(frame.image.cols, static_cast<int>(kWidth));
        for (uint32_t row = 0; row < kHeight; ++row)
            for (uint32_t col = 0; col < kWidth; col += 7) {
                const cv::Vec3b pixel =
                    test::asMat(frame.image)
                        .at<cv::Vec3b>(static_cast<int>(row), static_cast<int>(col));
                ASSERT_EQ(pixel[1], 3 * row + sequence) << "row " << row << " col " << col;
            }
    }
}

TEST(V4L2Streaming, TheDriverMayGrantAnotherBufferCount)
{
    FakeDevice device = fakeWebcam();
    device.grantBuffers = 3;
    FakeV4L2 fake({device});
    auto source = openOrFail(optionsFor("v4l2:///dev/video0"), fake);
    ASSERT_TRUE(source);
    EXPECT_TRUE(contains(source->info().detail, ", 3 buffers")) << source->info().detail;
    EXPECT_EQ(fake.counters(kWebcam).buffersQueued, 3);
    source.reset();

    device.grantBuffers = 1;
    FakeV4L2 stingy({device});
    const std::string message = openError(optionsFor("v4l2:///dev/video0"), stingy, ErrorKind::Io);
    EXPECT_TRUE(contains(message, "at least 2")) << message;
}

TEST(V4L2Streaming, CaptureTimesAreTheBufferTimestamps)
{
    constexpr int kFrames = 5;
    constexpr int64_t kStartNs = 7'000'000'000;
    FakeV4L2 fake({fakeWebcam()});
    auto source = openOrFail(optionsFor("v4l2:///dev/video0"), fake);
    ASSERT_TRUE(source);
    for (int i = 0; i < kFrames; ++i) {
        FakeFrame frame;
        frame.timestampNs = kStartNs + i * kFrameIntervalNs;
        fake.queueFrame(kWebcam, frame);
    }
    Frame frame;
    for (int i = 0; i < kFrames; ++i) {
        ASSERT_EQ(readFrame(*source, frame), ReadResult::Frame);
        EXPECT_EQ(frame.captureNs, kStartNs + i * kFrameIntervalNs);
    }
    const SourceStats stats = source->stats();
    EXPECT_EQ(stats.firstCaptureNs, kStartNs);
    EXPECT_EQ(stats.lastCaptureNs, kStartNs + (kFrames - 1) * kFrameIntervalNs);
    EXPECT_NEAR(stats.deliveredFps(), 1e9 / kFrameIntervalNs, 1e-6);
}

TEST(V4L2Streaming, WithoutMonotonicTimestampsTheDequeueTimeIsUsed)
{
    constexpr int64_t kBogusNs = 1'000'000'000; // long before this test ran
    FakeV4L2 fake({fakeWebcam()});
    fake.setTimestampFlags(kWebcam, V4L2_BUF_FLAG_TIMESTAMP_UNKNOWN);
    auto source = openOrFail(optionsFor("v4l2:///dev/video0"), fake);
    ASSERT_TRUE(source);
    FakeFrame fakeFrame;
    fakeFrame.timestampNs = kBogusNs;
    fake.queueFrame(kWebcam, fakeFrame);
    fake.queueFrame(kWebcam, fakeFrame);
    Frame frame;
    for (int i = 0; i < 2; ++i) {
        const int64_t before = monotonicNs();
        ASSERT_EQ(readFrame(*source, frame), ReadResult::Frame);
        const int64_t after = monotonicNs();
        EXPECT_GE(frame.captureNs, before);
        EXPECT_LE(frame.captureNs, after);
    }
}

// vivid stamps buffers with its nominal end of frame, 0.9 periods after it began to fill them,
// and hands them out at once: the stamp lies after the dequeue. Such frames take the dequeue time,
// the others keep their stamps, and capture times still increase.
TEST(V4L2Streaming, StampsAfterTheDequeueTakeTheDequeueTime)
{
    constexpr int64_t kAheadNs = 60'000'000; // vivid's lead at 15 fps
    FakeV4L2 fake({fakeWebcam()});
    auto source = openOrFail(optionsFor("v4l2:///dev/video0"), fake);
    ASSERT_TRUE(source);
    FakeFrame early;
    early.timestampNs = monotonicNs() + kAheadNs * 100; // after any dequeue in this test
    fake.queueFrame(kWebcam, early);
    Frame frame;
    const int64_t before = monotonicNs();
    ASSERT_EQ(readFrame(*source, frame), ReadResult::Frame);
    const int64_t after = monotonicNs();
    EXPECT_GE(frame.captureNs, before);
    EXPECT_LE(frame.captureNs, after);
    EXPECT_EQ(source->stats().firstCaptureNs, frame.captureNs);
    const int64_t firstNs = frame.captureNs;

    FakeFrame honest;
    honest.timestampNs = monotonicNs(); // after the first dequeue, before the next one
    fake.queueFrame(kWebcam, honest);
    ASSERT_EQ(readFrame(*source, frame), ReadResult::Frame);
    EXPECT_EQ(frame.captureNs, *honest.timestampNs / 1000 * 1000); // a timeval: microseconds
    EXPECT_GT(frame.captureNs, firstNs);
}

TEST(V4L2Streaming, SequenceGapsAreCountedAsDrops)
{
    constexpr uint32_t kFirstDeviceSequence = 100;
    FakeV4L2 fake({fakeWebcam()});
    auto source = openOrFail(optionsFor("v4l2:///dev/video0"), fake);
    ASSERT_TRUE(source);
    FakeFrame first;
    first.sequence = kFirstDeviceSequence; // a device that did not start at 0
    fake.queueFrame(kWebcam, first);
    fake.queueFrames(kWebcam, 2); // 101, 102
    fake.dropFrames(kWebcam, 3); // 103..105 never reach a buffer
    fake.queueFrames(kWebcam, 2); // 106, 107
    const std::vector<uint64_t> expected = {0, 1, 2, 6, 7};
    Frame frame;
    for (const uint64_t sequence : expected) {
        ASSERT_EQ(readFrame(*source, frame), ReadResult::Frame);
        EXPECT_EQ(frame.sequence, sequence);
    }
    EXPECT_EQ(source->stats().droppedByDevice, 3u);
    EXPECT_EQ(source->stats().delivered, expected.size());
}

TEST(V4L2Streaming, CorruptBuffersAreSkippedAndRequeued)
{
    FakeV4L2 fake({fakeWebcam()});
    auto source = openOrFail(optionsFor("v4l2:///dev/video0"), fake);
    ASSERT_TRUE(source);
    FakeFrame corrupt;
    corrupt.error = true;
    fake.queueFrames(kWebcam, 1);
    fake.queueFrame(kWebcam, corrupt);
    fake.queueFrames(kWebcam, 1);

    Frame frame;
    ASSERT_EQ(readFrame(*source, frame), ReadResult::Frame);
    EXPECT_EQ(frame.sequence, 0u);
    ASSERT_EQ(readFrame(*source, frame), ReadResult::Frame);
    EXPECT_EQ(frame.sequence, 2u) << "the corrupt frame 1 is a gap";
    const SourceStats stats = source->stats();
    EXPECT_EQ(stats.delivered, 2u);
    EXPECT_EQ(stats.droppedByDevice, 1u);
    const FakeCounters counters = fake.counters(kWebcam);
    EXPECT_EQ(counters.dequeueBuffer, 3u);
    EXPECT_EQ(counters.buffersQueued, kBuffers) << "the corrupt buffer went back too";
}

TEST(V4L2Streaming, StallsAreReportedOncePerStall)
{
    FakeV4L2 fake({fakeWebcam()});
    auto options = optionsFor("v4l2:///dev/video0");
    options.camera.stallTimeoutS = kShortStallS;
    const int64_t start = monotonicNs(); // the stall clock starts when streaming does
    auto source = openOrFail(options, fake);
    ASSERT_TRUE(source);

    // Nothing comes: each read returns NoFrame within its slice, and one stall is counted.
    Frame frame;
    const int64_t readStart = monotonicNs();
    auto result = source->read(frame);
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(*result, ReadResult::NoFrame);
    EXPECT_LT(monotonicNs() - readStart, 1'000'000'000) << "a read must return within its slice";
    ASSERT_TRUE(readUntil(*source, [&] { return source->stats().stalls == 1; }));
    const int64_t stallSeen = monotonicNs();
    EXPECT_GE(stallSeen - start, static_cast<int64_t>(kShortStallS * 1e9 * 0.9));
    readUntil(
        *source, [] { return false; }, 3 * static_cast<int64_t>(kShortStallS * 1000));
    EXPECT_EQ(source->stats().stalls, 1u) << "one stall, however long";

    fake.queueFrames(kWebcam, 1);
    ASSERT_EQ(readFrame(*source, frame), ReadResult::Frame);
    // The device stalls again: a second stall.
    fake.setStalled(kWebcam, true);
    fake.queueFrames(kWebcam, 1);
    ASSERT_TRUE(readUntil(*source, [&] { return source->stats().stalls == 2; }));
    fake.setStalled(kWebcam, false);
    ASSERT_EQ(readFrame(*source, frame), ReadResult::Frame);
    EXPECT_EQ(frame.sequence, 1u);
}

TEST(V4L2Streaming, UnplugAndReplugUnderAnotherNodeResumes)
{
    FakeV4L2 fake({fakeWebcam()});
    auto options = optionsFor("v4l2:///dev/video0");
    options.camera.format = "YUYV";
    options.width = 1280;
    options.height = 720;
    options.fps = 10;
    options.camera.controls = {{"brightness", "200"}};
    options.camera.reconnectMaxS = 0.2;
    auto source = openOrFail(options, fake);
    ASSERT_TRUE(source);

    fake.queueFrames(kWebcam, 3);
    Frame frame;
    for (int i = 0; i < 3; ++i)
        ASSERT_EQ(readFrame(*source, frame), ReadResult::Frame);
    EXPECT_EQ(frame.sequence, 2u);

    fake.unplug(kWebcam);
    auto result = source->read(frame);
    ASSERT_TRUE(result.ok()) << result.status().message();
    EXPECT_EQ(*result, ReadResult::NoFrame);
    EXPECT_EQ(source->stats().disconnects, 1u);
    EXPECT_EQ(fake.counters(kWebcam).openFiles, 0) << "the lost device is closed";
    EXPECT_EQ(fake.counters(kWebcam).mappings, 0) << "and its buffers unmapped";
    // Gone for a while: reads keep returning NoFrame, never an error.
    readUntil(
        *source, [] { return false; }, 300);
    EXPECT_EQ(source->stats().reconnects, 0u);

    constexpr const char* kNewNode = "/dev/video3";
    fake.replug(kWebcam, kNewNode);
    EXPECT_EQ(fake.controlValue(kNewNode, V4L2_CID_BRIGHTNESS), 128) << "a replug resets";
    fake.queueFrames(kNewNode, 2);
    ASSERT_EQ(readFrame(*source, frame), ReadResult::Frame);
    EXPECT_EQ(frame.sequence, 3u) << "sequence numbers keep increasing across a reconnect";
    ASSERT_EQ(readFrame(*source, frame), ReadResult::Frame);
    EXPECT_EQ(frame.sequence, 4u);
    EXPECT_EQ(frame.image.cols, 1280);

    const SourceStats stats = source->stats();
    EXPECT_EQ(stats.disconnects, 1u);
    EXPECT_EQ(stats.reconnects, 1u);
    EXPECT_EQ(stats.droppedByDevice, 0u) << "the restart of the device's count is no drop";
    EXPECT_EQ(stats.delivered, 5u);
    const v4l2_pix_format format = fake.format(kNewNode);
    EXPECT_EQ(format.pixelformat, V4L2_PIX_FMT_YUYV);
    EXPECT_EQ(format.width, 1280u);
    EXPECT_EQ(fake.interval(kNewNode).denominator, 10u);
    EXPECT_EQ(fake.controlValue(kNewNode, V4L2_CID_BRIGHTNESS), 200) << "controls set again";
}

TEST(V4L2Streaming, AnotherCameraOnTheLostNodeIsNotTakenForIt)
{
    FakeV4L2 fake({fakeWebcam()});
    auto options = optionsFor("v4l2:///dev/video0");
    options.camera.reconnectMaxS = 0.1;
    auto source = openOrFail(options, fake);
    ASSERT_TRUE(source);
    fake.unplug(kWebcam);
    fake.addDevice(fakeWebcam(kWebcam, "Stranger Cam", "usb-0000:00:14.0-9"));
    fake.queueFrames(kWebcam, 1);
    readUntil(
        *source, [] { return false; }, 400);
    const SourceStats stats = source->stats();
    EXPECT_EQ(stats.disconnects, 1u);
    EXPECT_EQ(stats.reconnects, 0u);
    EXPECT_FALSE(fake.streaming(kWebcam));
}

TEST(V4L2SystemIo, AMissingNodeIsNotFound)
{
    auto options = optionsFor("v4l2:///dev/video-jetagent-test-absent");
    auto source = openV4L2Source(options); // the kernel's interface, not the fake
    ASSERT_FALSE(source.ok());
    EXPECT_EQ(source.status().kind(), ErrorKind::NotFound) << source.status().message();
    for (const std::string& path : systemV4L2Io().listDevices())
        EXPECT_EQ(path.rfind("/dev/video", 0), 0u) << path;
}

// A camera is a character device: a FIFO or a regular file named as one (a video file given as
// v4l2://) is refused at once, before it is opened.
TEST(V4L2SystemIo, AFifoOrARegularFileIsNotACamera)
{
    char dir[] = "/tmp/jetagent-v4l2-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    const std::string fifo = std::string(dir) + "/video0";
    const std::string file = std::string(dir) + "/clip.mp4";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "not a camera", 12), 12);
    ::close(fd);
    for (const std::string& path : {fifo, file}) {
        const int64_t start = monotonicNs();
        auto source = openV4L2Source(optionsFor("v4l2://" + path));
        EXPECT_LT(monotonicNs() - start, int64_t {1'000'000'000}) << path;
        ASSERT_FALSE(source.ok()) << path;
        EXPECT_EQ(source.status().kind(), ErrorKind::InvalidInput) << source.status().message();
        EXPECT_TRUE(contains(source.status().message(),
            path + " is not a V4L2 device: a camera is a character device"))
            << source.status().message();
    }
    ::unlink(fifo.c_str());
    ::unlink(file.c_str());
    ::rmdir(dir);
}

// --- the fake itself -----------------------------------------------------------------------------

TEST(FakeV4L2, SetFormatAdjustsToTheNearestSizeAsDriversDo)
{
    FakeV4L2 fake({fakeWebcam()});
    const int fd = fake.open(kWebcam, O_RDWR);
    ASSERT_GE(fd, 0);
    v4l2_format format {};
    format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    format.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
    format.fmt.pix.width = 1200;
    format.fmt.pix.height = 700;
    ASSERT_EQ(fake.ioctl(fd, VIDIOC_S_FMT, &format), 0);
    EXPECT_EQ(format.fmt.pix.width, 1280u);
    EXPECT_EQ(format.fmt.pix.height, 720u);
    EXPECT_EQ(format.fmt.pix.bytesperline, 2560u);
    EXPECT_EQ(format.fmt.pix.sizeimage, 2560u * 720u);
    format.fmt.pix.pixelformat = V4L2_PIX_FMT_RGB565; // not offered: the first format instead
    ASSERT_EQ(fake.ioctl(fd, VIDIOC_TRY_FMT, &format), 0);
    EXPECT_EQ(format.fmt.pix.pixelformat, V4L2_PIX_FMT_YUYV);
    EXPECT_EQ(fake.close(fd), 0);
}

TEST(FakeV4L2, UnpluggedDescriptorsGetEnodevAndHangUp)
{
    FakeV4L2 fake({fakeWebcam()});
    const int fd = fake.open(kWebcam, O_RDWR);
    ASSERT_GE(fd, 0);
    fake.unplug(kWebcam);
    v4l2_capability cap {};
    EXPECT_EQ(fake.ioctl(fd, VIDIOC_QUERYCAP, &cap), -1);
    EXPECT_EQ(errno, ENODEV);
    pollfd entry {fd, POLLIN, 0};
    EXPECT_EQ(fake.poll(&entry, 1, 0), 1);
    EXPECT_NE(entry.revents & POLLHUP, 0);
    EXPECT_TRUE(fake.listDevices().empty());
    EXPECT_EQ(fake.open(kWebcam, O_RDWR), -1);
    EXPECT_EQ(errno, ENOENT);
    EXPECT_EQ(fake.close(fd), 0);
}

TEST(FakeV4L2, ListsDevicesInNaturalOrder)
{
    FakeV4L2 fake({fakeWebcam("/dev/video10", "A", "a"), fakeWebcam("/dev/video2", "B", "b")});
    EXPECT_EQ(fake.listDevices(), (std::vector<std::string> {"/dev/video2", "/dev/video10"}));
}

} // namespace
} // namespace jetagent
