// Stream URIs (rtp://, rtsp://) parsed here; StreamOut::open forwards to the GStreamer plugin
// (rtp://) or the rtsp-server plugin (rtsp://; gstreamer_api.h), where
// plugins/gstreamer/stream_out.cpp encodes and sends. Nothing here
// links GStreamer.
#include "jetagent/hal/stream_out.h"

#include <algorithm>
#include <cctype>

#include "gstreamer_api.h"
#include "jetagent/base/plugin.h"

namespace jetagent {
namespace {

constexpr const char* kDefaultMount = "/jetagent";

bool parsePort(const std::string& text, int& port)
{
    if (text.empty() || text.size() > 5 || !std::all_of(text.begin(), text.end(), ::isdigit))
        return false;
    port = std::stoi(text);
    return port >= 1 && port <= 65535;
}

} // namespace

bool isStreamUri(const std::string& uri)
{
    return uri.rfind("rtp://", 0) == 0 || uri.rfind("rtsp://", 0) == 0;
}

Expected<StreamTarget> parseStreamUri(const std::string& uri)
{
    StreamTarget t;
    t.uri = uri;
    std::string rest;
    if (uri.rfind("rtp://", 0) == 0) {
        t.kind = StreamTarget::Kind::Rtp;
        rest = uri.substr(6);
    } else if (uri.rfind("rtsp://", 0) == 0) {
        t.kind = StreamTarget::Kind::Rtsp;
        rest = uri.substr(7);
    } else {
        return Status::invalid(
            "'" + uri + "' is not a stream: rtp://HOST:PORT or rtsp://@:PORT/PATH");
    }
    const size_t slash = rest.find('/');
    std::string authority = rest.substr(0, slash);
    if (slash != std::string::npos)
        t.path = rest.substr(slash);
    // [v6 address]:port, host:port, :port, @:port
    std::string host;
    std::string port;
    if (!authority.empty() && authority.front() == '[') {
        const size_t close = authority.find(']');
        if (close == std::string::npos || close + 1 >= authority.size() ||
            authority[close + 1] != ':')
            return Status::invalid("'" + uri + "': an IPv6 address is written [ADDR]:PORT");
        host = authority.substr(1, close - 1);
        port = authority.substr(close + 2);
    } else {
        const size_t colon = authority.rfind(':');
        if (colon == std::string::npos)
            return Status::invalid("'" + uri + "' names no port (" +
                (t.kind == StreamTarget::Kind::Rtp
                        ? "rtp://HOST:PORT, e.g. rtp://192.168.1.20:5000"
                        : "rtsp://@:PORT/PATH, e.g. rtsp://@:8554/jetagent") +
                ")");
        host = authority.substr(0, colon);
        port = authority.substr(colon + 1);
    }
    if (!parsePort(port, t.port))
        return Status::invalid("'" + uri + "': port '" + port + "' is not a number in 1..65535");
    if (t.kind == StreamTarget::Kind::Rtp) {
        if (host.empty() || host == "@")
            return Status::invalid("'" + uri +
                "': RTP is sent to one receiver (or a multicast group): name its address, "
                "rtp://HOST:PORT");
        if (!t.path.empty() && t.path != "/")
            return Status::invalid("'" + uri + "': an RTP stream has no path");
        t.path.clear();
    } else {
        if (t.path.empty() || t.path == "/")
            t.path = kDefaultMount;
        if (t.path.find_first_of("?# ") != std::string::npos)
            return Status::invalid(
                "'" + uri + "': the mount path '" + t.path + "' may not hold '?', '#' or spaces");
        if (host.empty() || host == "@")
            host = "0.0.0.0";
    }
    t.host = host;
    return t;
}

StreamOut::~StreamOut() = default;

Expected<std::unique_ptr<StreamOut>> StreamOut::open(
    const StreamTarget& target, const Options& options)
{
    if (target.kind == StreamTarget::Kind::Rtsp) {
        auto plugin = loadPlugin("rtsp-server");
        if (!plugin)
            return plugin.status().withContext("stream " + target.uri);
        return static_cast<const RtspServerApi*>(plugin.value()->api)
            ->openStreamOut(target, options);
    }
    auto api = gstreamerApi();
    if (!api)
        return api.status().withContext("stream " + target.uri);
    return api.value()->openStreamOut(target, options);
}

} // namespace jetagent
