// The network video outputs (hal/stream_out.h): the streams received for real by GStreamer client
// pipelines (udpsrc for RTP, rtspsrc for RTSP) decoding H.264 back into frames; their URIs are
// tested in stream_uri_test.cpp.
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gtest/gtest.h>
#include <opencv2/core.hpp>

#include "gst_receiver.h"
#include "jetagent/hal/stream_out.h"
#include "test_image.h"
#include "test_support.h"

namespace jetagent {
namespace {

TEST(StreamOut, BadSizesAndEncodersAreClearErrors)
{
    auto target = parseStreamUri("rtp://127.0.0.1:5000");
    ASSERT_TRUE(target);
    StreamOut::Options odd;
    odd.width = 321;
    odd.height = 240;
    auto r = StreamOut::open(*target, odd);
    ASSERT_FALSE(r);
    EXPECT_NE(r.status().message().find("321x240"), std::string::npos) << r.status().message();

    StreamOut::Options missing;
    missing.width = 320;
    missing.height = 240;
    missing.encoder = "nosuchenc";
    r = StreamOut::open(*target, missing);
    ASSERT_FALSE(r);
    EXPECT_NE(r.status().message().find("'nosuchenc' is not installed"), std::string::npos)
        << r.status().message();

    // A receiver whose name does not resolve (.invalid never does): refused, not sent into the
    // void.
    auto nowhere = parseStreamUri("rtp://receiver.invalid:5004");
    ASSERT_TRUE(nowhere);
    StreamOut::Options o;
    o.width = 320;
    o.height = 240;
    r = StreamOut::open(*nowhere, o);
    ASSERT_FALSE(r);
    EXPECT_NE(r.status().message().find("cannot resolve the receiver 'receiver.invalid'"),
        std::string::npos)
        << r.status().message();
}

using test::haveDecoder;
using test::kDecode;
using test::Receiver;

// Pushes frames of one colour (BGR 40, 160, 220) at `fps` for `seconds`, while `until` is false.
void pushFrames(StreamOut& out, double fps, double seconds, const std::function<bool()>& until)
{
    const Image frame = test::solidImage(240, 320, 40, 160, 220);
    const auto period = std::chrono::microseconds(static_cast<int64_t>(1e6 / fps));
    const auto end = std::chrono::steady_clock::now() +
        std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
    auto next = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() < end && !until()) {
        EXPECT_TRUE(out.push(frame)) << out.error();
        next += period;
        std::this_thread::sleep_until(next);
    }
}

// The frames pushFrames sends, 320x240 at 30 fps.
StreamOut::Options qvga30()
{
    StreamOut::Options o;
    o.width = 320;
    o.height = 240;
    o.fps = 30;
    return o;
}

void expectColour(const cv::Mat& frame)
{
    ASSERT_EQ(frame.size(), cv::Size(320, 240));
    const cv::Scalar mean = cv::mean(frame);
    // The codec's noise on a flat frame: a few levels.
    EXPECT_NEAR(mean[0], 40, 8);
    EXPECT_NEAR(mean[1], 160, 8);
    EXPECT_NEAR(mean[2], 220, 8);
}

TEST(StreamOut, RtpIsReceivedAndDecodedByAGStreamerClient)
{
    if (!haveDecoder())
        GTEST_SKIP() << "no openh264dec/h264parse (gstreamer1.0-plugins-bad) to decode with";
    const int port = test::unusedLoopbackPort(); // a TCP port free; UDP's of that number likely is
    ASSERT_GT(port, 0);
    Receiver receiver("udpsrc address=127.0.0.1 port=" + std::to_string(port) +
        " caps=\"application/x-rtp,media=video,clock-rate=90000,encoding-name=H264,payload=96\""
        " ! " +
        kDecode);
    ASSERT_TRUE(receiver.ok()) << receiver.problem();

    auto target = parseStreamUri("rtp://127.0.0.1:" + std::to_string(port));
    ASSERT_TRUE(target);
    const StreamOut::Options o = qvga30();
    auto out = StreamOut::open(*target, o);
    ASSERT_TRUE(out) << out.status().message();
    const std::string sdp = out.value()->describe();
    EXPECT_NE(sdp.find("m=video " + std::to_string(port) + " RTP/AVP 96"), std::string::npos)
        << sdp;
    EXPECT_NE(sdp.find("a=rtpmap:96 H264/90000"), std::string::npos) << sdp;
    EXPECT_NE(sdp.find("c=IN IP4 127.0.0.1"), std::string::npos) << sdp;

    pushFrames(*out.value(), 30, 3.0, [] { return false; });
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    // 90 frames sent; the receiver decodes from the first key frame on, all of them on loopback.
    EXPECT_GT(out.value()->framesSent(), 80u);
    EXPECT_GE(receiver.frames(), 60)
        << "sent " << out.value()->framesSent() << ", dropped " << out.value()->framesDropped();
    expectColour(receiver.last());
    EXPECT_EQ(out.value()->error(), "");
}

TEST(StreamOut, RtspServesAClientAndCountsFramesNobodyWatched)
{
    if (!haveDecoder())
        GTEST_SKIP() << "no openh264dec/h264parse (gstreamer1.0-plugins-bad) to decode with";
    const int port = test::unusedLoopbackPort();
    ASSERT_GT(port, 0);
    auto target = parseStreamUri("rtsp://127.0.0.1:" + std::to_string(port) + "/live");
    ASSERT_TRUE(target);
    const StreamOut::Options o = qvga30();
    auto out = StreamOut::open(*target, o);
    ASSERT_TRUE(out) << out.status().message();
    EXPECT_NE(out.value()->describe().find("rtsp://127.0.0.1:" + std::to_string(port) + "/live"),
        std::string::npos)
        << out.value()->describe();

    // Nobody plays it yet: frames are counted, not encoded.
    pushFrames(*out.value(), 30, 0.3, [] { return false; });
    EXPECT_GT(out.value()->framesUnwatched(), 0u);
    EXPECT_EQ(out.value()->framesSent(), 0u);

    // The same port again: a clear error, not a second server.
    auto again = StreamOut::open(*target, o);
    ASSERT_FALSE(again);
    EXPECT_NE(again.status().message().find("cannot listen on 127.0.0.1:" + std::to_string(port)),
        std::string::npos)
        << again.status().message();

    {
        Receiver client("rtspsrc location=rtsp://127.0.0.1:" + std::to_string(port) +
            "/live latency=0 protocols=tcp ! " + kDecode);
        ASSERT_TRUE(client.ok()) << client.problem();
        pushFrames(*out.value(), 30, 10.0, [&] { return client.frames() >= 45; });
        EXPECT_GE(client.frames(), 45) << "sent " << out.value()->framesSent();
        EXPECT_EQ(out.value()->clients(), 1);
        expectColour(client.last());
    }
    // The client left: the server tears the media down, and frames go unwatched again.
    const uint64_t unwatched = out.value()->framesUnwatched();
    pushFrames(*out.value(), 30, 5.0, [&] {
        return out.value()->clients() == 0 && out.value()->framesUnwatched() > unwatched + 5;
    });
    EXPECT_EQ(out.value()->clients(), 0);
    EXPECT_GT(out.value()->framesUnwatched(), unwatched + 5);
    EXPECT_EQ(out.value()->error(), "");
}

} // namespace
} // namespace jetagent
