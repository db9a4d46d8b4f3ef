// `jetagent probe cameras` against the fake camera: the report text, the JSON, failing devices.
#include <algorithm>
#include <cerrno>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "camera_report.h"
#include "fake_v4l2.h"
#include "jetagent/hal/camera_probe.h"

namespace jetagent {
namespace {

using test::FakeDevice;
using test::FakeStepwise;
using test::FakeV4L2;
using test::fakeWebcam;

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

const nlohmann::json* findByKey(const nlohmann::json& array, const char* key, const char* value)
{
    for (const auto& item : array)
        if (item.at(key) == value)
            return &item;
    return nullptr;
}

// A sensor-like device with a stepwise size range in GREY, beside the webcam.
FakeDevice stepwiseSensor()
{
    FakeDevice device;
    device.path = "/dev/video2";
    device.driver = "vivid";
    device.card = "vivid";
    device.busInfo = "platform:vivid-000";
    device.version = KERNEL_VERSION(5, 15, 148);
    FakeStepwise range;
    range.minWidth = 64;
    range.maxWidth = 1920;
    range.stepWidth = 2;
    range.minHeight = 48;
    range.maxHeight = 1080;
    range.stepHeight = 2;
    range.intervals = {{1, 60}, {1001, 30000}};
    device.formats = {{V4L2_PIX_FMT_GREY, "8-bit Greyscale", false, {}, range}};
    return device;
}

TEST(CameraProbe, ReportShowsFormatsSizesRatesAndControls)
{
    FakeV4L2 fake({fakeWebcam(), stepwiseSensor()});
    const auto cameras = probeCameras(fake, {});
    ASSERT_EQ(cameras.size(), 2u);
    EXPECT_TRUE(cameras[0].error.empty()) << cameras[0].error;
    EXPECT_EQ(cameras[0].version, "6.1.0");
    EXPECT_EQ(cameras[1].version, "5.15.148");

    const std::string report = formatCameraReport(cameras);
    for (const char* part : {"/dev/video0: Fake Webcam (uvcvideo 6.1.0), bus usb-0000:00:14.0-1",
             "capabilities: video-capture, ext-pix-format, streaming", "YUYV  YUYV 4:2:2\n",
             "640x480: 30, 15 fps", "1280x720: 10, 5 fps", "MJPG  Motion-JPEG (compressed)",
             "H264  H.264 (compressed, jetagent cannot convert it)", "brightness (int)",
             "min=0 max=255 step=1 default=128 value=128", "power_line_frequency (menu)",
             "value=1 (50 Hz)", "        2: 60 Hz", "        3: Aperture Priority Mode",
             "exposure_time_absolute (int)", "flags=inactive", "white_balance_automatic (bool)",
             "/dev/video2: vivid (vivid 5.15.148), bus platform:vivid-000",
             "sizes 64x48 to 1920x1080, step 2x2", "1920x1080: 60, 29.97 fps"})
        EXPECT_TRUE(contains(report, part)) << "missing '" << part << "' in\n" << report;
    EXPECT_FALSE(contains(report, "user_controls")) << report;
    EXPECT_FALSE(contains(report, "0: \n")) << "skipped menu indices are not listed";

    const nlohmann::json json = cameraReportJson(cameras);
    ASSERT_TRUE(json.is_array());
    ASSERT_EQ(json.size(), 2u);
    const nlohmann::json& webcam = json[0];
    EXPECT_EQ(webcam.at("path"), "/dev/video0");
    EXPECT_EQ(webcam.at("bus_info"), "usb-0000:00:14.0-1");
    EXPECT_EQ(webcam.at("capture"), true);
    const nlohmann::json* yuyv = findByKey(webcam.at("formats"), "fourcc", "YUYV");
    ASSERT_NE(yuyv, nullptr);
    EXPECT_EQ(yuyv->at("convertible"), true);
    EXPECT_EQ(yuyv->at("sizes")[0].at("width"), 640);
    EXPECT_EQ(yuyv->at("sizes")[0].at("fps"), nlohmann::json::array({30.0, 15.0}));
    const nlohmann::json* h264 = findByKey(webcam.at("formats"), "fourcc", "H264");
    ASSERT_NE(h264, nullptr);
    EXPECT_EQ(h264->at("convertible"), false);
    EXPECT_EQ(h264->at("compressed"), true);

    const nlohmann::json* exposure = findByKey(webcam.at("controls"), "name", "auto_exposure");
    ASSERT_NE(exposure, nullptr);
    EXPECT_EQ(exposure->at("type"), "menu");
    EXPECT_EQ(exposure->at("value"), 3);
    EXPECT_EQ(exposure->at("menu"),
        nlohmann::json::parse(
            R"([{"index": 1, "name": "Manual Mode"}, {"index": 3, "name": "Aperture Priority Mode"}])"));
    const nlohmann::json* time = findByKey(webcam.at("controls"), "name", "exposure_time_absolute");
    ASSERT_NE(time, nullptr);
    EXPECT_EQ(time->at("label"), "Exposure Time, Absolute");
    EXPECT_EQ(time->at("flags"), nlohmann::json::array({"inactive"}));
    EXPECT_EQ(time->at("minimum"), 3);
    EXPECT_EQ(time->at("maximum"), 2047);

    const nlohmann::json& sensor = json[1];
    EXPECT_EQ(sensor.at("formats")[0].at("size_range"), "64x48 to 1920x1080, step 2x2");
    EXPECT_EQ(sensor.at("formats")[0].at("sizes").size(), 2u);
}

TEST(CameraProbe, AFailingDeviceIsReportedAndTheRestProbed)
{
    FakeDevice broken = fakeWebcam("/dev/video1", "Broken Cam", "usb-3");
    FakeV4L2 fake({fakeWebcam(), broken, stepwiseSensor()});
    fake.setOpenError("/dev/video0", EACCES);
    fake.failIoctl("/dev/video1", VIDIOC_ENUM_FMT, EIO);

    const auto cameras = probeCameras(fake, {});
    ASSERT_EQ(cameras.size(), 3u);
    EXPECT_TRUE(contains(cameras[0].error, "Permission denied")) << cameras[0].error;
    EXPECT_TRUE(contains(cameras[1].error, "listing formats failed")) << cameras[1].error;
    EXPECT_EQ(cameras[1].card, "Broken Cam") << "what was learnt before the failure stays";
    EXPECT_FALSE(cameras[1].controls.empty()) << "later steps still run";
    EXPECT_TRUE(cameras[2].error.empty());
    EXPECT_FALSE(cameras[2].formats.empty());

    const std::string report = formatCameraReport(cameras);
    EXPECT_TRUE(contains(report, "/dev/video0:\n  error: cannot open: Permission denied"))
        << report;
    const nlohmann::json json = cameraReportJson(cameras);
    EXPECT_TRUE(contains(json[0].at("error").get<std::string>(), "Permission denied"));
    EXPECT_EQ(json[2].at("error"), "");
}

TEST(CameraProbe, GivenPathsOnlyAndNonCaptureNodes)
{
    FakeDevice metadata = fakeWebcam("/dev/video1");
    metadata.caps = V4L2_CAP_META_CAPTURE | V4L2_CAP_STREAMING;
    FakeV4L2 fake({fakeWebcam(), metadata});

    const auto cameras = probeCameras(fake, {"/dev/video1", "/dev/video9"});
    ASSERT_EQ(cameras.size(), 2u);
    EXPECT_FALSE(cameras[0].capture);
    EXPECT_TRUE(cameras[0].formats.empty());
    EXPECT_EQ(cameras[0].capabilities, (std::vector<std::string> {"meta-capture", "streaming"}));
    EXPECT_TRUE(contains(cameras[1].error, "No such file")) << cameras[1].error;
    const std::string report = formatCameraReport(cameras);
    EXPECT_TRUE(contains(report, "not a video capture node")) << report;

    FakeV4L2 empty;
    EXPECT_TRUE(contains(formatCameraReport(probeCameras(empty, {})), "no video devices"));
}

} // namespace
} // namespace jetagent
