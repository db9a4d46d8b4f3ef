// The network video outputs' URIs (hal/stream_out.h): rtp://HOST:PORT and rtsp://@:PORT/PATH, and
// a message naming what is wrong with each bad one.
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "jetagent/hal/stream_out.h"

namespace jetagent {
namespace {

TEST(StreamUri, ParsesRtpAndRtspAndNamesWhatIsWrong)
{
    auto rtp = parseStreamUri("rtp://192.168.1.20:5000");
    ASSERT_TRUE(rtp) << rtp.status().message();
    EXPECT_EQ(rtp->kind, StreamTarget::Kind::Rtp);
    EXPECT_EQ(rtp->host, "192.168.1.20");
    EXPECT_EQ(rtp->port, 5000);
    EXPECT_EQ(rtp->path, "");

    auto rtsp = parseStreamUri("rtsp://@:8554/jetagent");
    ASSERT_TRUE(rtsp) << rtsp.status().message();
    EXPECT_EQ(rtsp->kind, StreamTarget::Kind::Rtsp);
    EXPECT_EQ(rtsp->host, "0.0.0.0"); // every interface, as jetson-inference spells it
    EXPECT_EQ(rtsp->port, 8554);
    EXPECT_EQ(rtsp->path, "/jetagent");

    auto local = parseStreamUri("rtsp://127.0.0.1:9554");
    ASSERT_TRUE(local);
    EXPECT_EQ(local->host, "127.0.0.1");
    EXPECT_EQ(local->path, "/jetagent"); // the default mount

    auto v6 = parseStreamUri("rtp://[::1]:5004");
    ASSERT_TRUE(v6);
    EXPECT_EQ(v6->host, "::1");

    EXPECT_TRUE(isStreamUri("rtp://x:1"));
    EXPECT_TRUE(isStreamUri("rtsp://@:1/a"));
    EXPECT_FALSE(isStreamUri("out.mp4"));
    EXPECT_FALSE(isStreamUri("file://out.mp4"));

    const std::vector<std::pair<std::string, std::string>> bad = {
        {"rtp://192.168.1.20", "names no port"},
        {"rtp://@:5000", "name its address"},
        {"rtp://host:0", "port '0'"},
        {"rtp://host:70000", "port '70000'"},
        {"rtp://host:50x0", "port '50x0'"},
        {"rtp://host:5000/path", "no path"},
        {"rtsp://@:8554/a?b", "may not hold"},
        {"rtsp://[::1:8554/a", "[ADDR]:PORT"},
        {"udp://host:5000", "is not a stream"},
    };
    for (const auto& [uri, why] : bad) {
        auto r = parseStreamUri(uri);
        ASSERT_FALSE(r) << uri;
        EXPECT_NE(r.status().message().find(why), std::string::npos)
            << uri << ": " << r.status().message();
        EXPECT_NE(r.status().message().find(uri), std::string::npos) << r.status().message();
    }
}

} // namespace
} // namespace jetagent
