// Video out over the network through GStreamer: compiled into the GStreamer plugin for RTP, and
// with JETAGENT_HAVE_RTSP_SERVER into the rtsp-server plugin (plugins/rtsp-server), which serves
// RTSP through gst-rtsp-server, whose Debian package pulls in gstreamer1.0-plugins-bad (GTK and,
// through libchromaprint, libavcodec): a package of its own keeps those out of the core's.
//
// rtp://HOST:PORT runs
//   appsrc ! <encoder> ! rtph264pay config-interval=1 pt=96 ! udpsink host=HOST port=PORT
// rtsp://ADDR:PORT/PATH serves, through gst-rtsp-server, one shared media built from
//   appsrc ! <encoder> ! rtph264pay name=pay0 config-interval=1 pt=96
// while at least one client plays it (the server makes the pipeline on the first PLAY and tears
// it down after the last client leaves; frames pushed meanwhile are counted as unwatched).
// <encoder> is, by what the machine has:
//   Jetson: videoconvert ! video/x-raw,format=BGRx ! nvvidconv
//             ! video/x-raw(memory:NVMM),format=NV12 ! nvv4l2h264enc (the NVENC block)
//   else:   videoconvert ! video/x-raw,format=I420 ! x264enc tune=zerolatency (or openh264enc)
// config-interval=1 repeats SPS and PPS before every key frame, and the encoders make one key
// frame a second, so a receiver that joins late decodes within a second.
//
// appsrc runs its own streaming thread: push() only copies the frame into a buffer and queues it.
// It never blocks (block=false), and it looks at appsrc's queue first: more than kQueuedFrames
// waiting means the encoder is behind, and the frame is dropped rather than queued.
#include "jetagent/hal/stream_out.h"

#include "gstreamer_plugin.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include <netdb.h>
#include <sys/socket.h>

#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#ifdef JETAGENT_HAVE_RTSP_SERVER
#include <gst/rtsp-server/rtsp-server.h>
#endif

#include "gst_init.h"

namespace jetagent {
namespace {

constexpr guint64 kQueuedFrames = 3; // frames appsrc may hold before new ones are dropped
constexpr int kPayloadType = 96; // the first dynamic RTP payload type

struct OutObjectUnref {
    void operator()(gpointer object) const { gst_object_unref(object); }
};
using OutElementPtr = std::unique_ptr<GstElement, OutObjectUnref>;

struct OutErrorFree {
    void operator()(GError* error) const { g_error_free(error); }
};
using OutErrorPtr = std::unique_ptr<GError, OutErrorFree>;

bool elementExists(const char* name)
{
    GstElementFactory* factory = gst_element_factory_find(name);
    if (factory == nullptr)
        return false;
    gst_object_unref(factory);
    return true;
}

// Which package holds an encoder, for the error when it is missing.
std::string encoderPackage(const std::string& name)
{
    if (name == "x264enc")
        return "gstreamer1.0-plugins-ugly";
    if (name == "openh264enc")
        return "gstreamer1.0-plugins-bad";
    if (name == "nvv4l2h264enc")
        return "nvidia-l4t-gstreamer (JetPack)";
    return "the GStreamer plugin that provides it";
}

// The encoder's part of the pipeline, from raw BGR to H.264 byte-stream.
std::string encoderChain(const std::string& name, int keyInterval, int kbps)
{
    const std::string k = std::to_string(keyInterval);
    if (name == "nvv4l2h264enc")
        return "videoconvert ! video/x-raw,format=BGRx ! nvvidconv ! "
               "video/x-raw(memory:NVMM),format=NV12 ! nvv4l2h264enc insert-sps-pps=true "
               "maxperf-enable=true idrinterval=" +
            k + " iframeinterval=" + k + " bitrate=" + std::to_string(kbps * 1000);
    if (name == "x264enc")
        return "videoconvert ! video/x-raw,format=I420 ! x264enc tune=zerolatency "
               "speed-preset=ultrafast key-int-max=" +
            k + " bitrate=" + std::to_string(kbps);
    if (name == "openh264enc")
        return "videoconvert ! video/x-raw,format=I420 ! openh264enc complexity=low gop-size=" + k +
            " bitrate=" + std::to_string(kbps * 1000);
    // Any other encoder by name, with its own defaults.
    return "videoconvert ! " + name;
}

Expected<std::string> pickEncoder(const std::string& wanted)
{
    if (wanted != "auto") {
        if (!elementExists(wanted.c_str()))
            return Status::unsupported("stream encoder '" + wanted +
                "' is not installed (it comes with " + encoderPackage(wanted) + ")");
        return wanted;
    }
    for (const char* name : {"nvv4l2h264enc", "x264enc", "openh264enc"})
        if (elementExists(name))
            return std::string(name);
    return Status::unsupported(
        "no H.264 encoder for the stream: install gstreamer1.0-plugins-ugly (x264enc) or "
        "gstreamer1.0-plugins-bad with libopenh264 (openh264enc); on a Jetson, JetPack's "
        "nvidia-l4t-gstreamer (nvv4l2h264enc)");
}

// "appsrc ... caps" for frames of `options`.
std::string appsrcChain(const StreamOut::Options& o)
{
    const int fpsMilli = static_cast<int>(std::lround(o.fps * 1000.0));
    return "appsrc name=src is-live=true do-timestamp=true format=time block=false "
           "caps=video/x-raw,format=BGR,width=" +
        std::to_string(o.width) + ",height=" + std::to_string(o.height) +
        ",framerate=" + std::to_string(fpsMilli) + "/1000";
}

} // namespace

// One output's GStreamer objects and counters (their C callbacks get a pointer to it).
struct StreamOutImpl {
    StreamTarget target;
    StreamOut::Options options;
    std::string encoder;
    std::string chain; // from appsrc to the payloader

    // RTP: the pipeline and its appsrc. RTSP: the appsrc of the media being played, if any.
    OutElementPtr pipeline;
    GstBus* bus = nullptr;
    std::mutex srcMutex;
    GstElement* appsrc = nullptr; // a reference of our own
    std::atomic<int> clients {0};

    std::atomic<uint64_t> sent {0};
    std::atomic<uint64_t> dropped {0};
    std::atomic<uint64_t> unwatched {0};
    mutable std::mutex errorMutex;
    std::string error;

#ifdef JETAGENT_HAVE_RTSP_SERVER
    GstRTSPServer* server = nullptr;
    GMainContext* context = nullptr;
    GMainLoop* loop = nullptr;
    GSource* serverSource = nullptr;
    std::thread loopThread;
#endif

    ~StreamOutImpl()
    {
#ifdef JETAGENT_HAVE_RTSP_SERVER
        if (server != nullptr) {
            // Closes the clients' connections, then stops the loop that served them.
            gst_rtsp_server_client_filter(
                server,
                [](GstRTSPServer*, GstRTSPClient*, gpointer) { return GST_RTSP_FILTER_REMOVE; },
                nullptr);
        }
        if (loop != nullptr) {
            g_main_loop_quit(loop);
            if (loopThread.joinable())
                loopThread.join();
        }
        if (serverSource != nullptr) {
            g_source_destroy(serverSource);
            g_source_unref(serverSource);
        }
        if (server != nullptr)
            g_object_unref(server);
        if (loop != nullptr)
            g_main_loop_unref(loop);
        if (context != nullptr)
            g_main_context_unref(context);
#endif
        {
            std::lock_guard<std::mutex> lock(srcMutex);
            if (appsrc != nullptr) {
                gst_object_unref(appsrc);
                appsrc = nullptr;
            }
        }
        if (pipeline) {
            // EOS first, so that a receiver sees the stream end; then down without waiting long.
            gst_element_send_event(pipeline.get(), gst_event_new_eos());
            if (bus != nullptr) {
                GstMessage* m = gst_bus_timed_pop_filtered(bus, 500 * GST_MSECOND,
                    static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
                if (m != nullptr)
                    gst_message_unref(m);
            }
            gst_element_set_state(pipeline.get(), GST_STATE_NULL);
        }
        if (bus != nullptr)
            gst_object_unref(bus);
    }

    void setError(const std::string& why)
    {
        std::lock_guard<std::mutex> lock(errorMutex);
        if (error.empty())
            error = why;
    }

    // RTP: an error posted on the pipeline's bus since the last look.
    void pollBus()
    {
        if (bus == nullptr)
            return;
        while (GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) {
            GError* raw = nullptr;
            gst_message_parse_error(m, &raw, nullptr);
            const OutErrorPtr e(raw);
            setError(
                std::string(GST_OBJECT_NAME(m->src)) + ": " + (e ? e->message : "unknown error"));
            gst_message_unref(m);
        }
    }
};

// StreamOut on GStreamer: the pipeline or server in StreamOutImpl.
class GstStreamOut final : public StreamOut {
public:
    explicit GstStreamOut(std::unique_ptr<StreamOutImpl> impl) : impl_(std::move(impl)) { }
    bool push(const Image& bgr) override;
    std::string describe() const override;
    std::string address() const override;
    std::string sdp() const override;
    const std::string& encoder() const override;
    uint64_t framesSent() const override;
    uint64_t framesDropped() const override;
    uint64_t framesUnwatched() const override;
    int clients() const override;
    std::string error() const override;

private:
    std::unique_ptr<StreamOutImpl> impl_;
};

#ifdef JETAGENT_HAVE_RTSP_SERVER
namespace {

void onUnprepared(GstRTSPMedia*, gpointer data)
{
    auto* impl = static_cast<StreamOutImpl*>(data);
    std::lock_guard<std::mutex> lock(impl->srcMutex);
    if (impl->appsrc != nullptr) {
        gst_object_unref(impl->appsrc);
        impl->appsrc = nullptr;
    }
}

void onMediaConfigure(GstRTSPMediaFactory*, GstRTSPMedia* media, gpointer data)
{
    auto* impl = static_cast<StreamOutImpl*>(data);
    GstElement* bin = gst_rtsp_media_get_element(media);
    GstElement* src = gst_bin_get_by_name_recurse_up(GST_BIN(bin), "src");
    gst_object_unref(bin);
    if (src == nullptr)
        return;
    {
        std::lock_guard<std::mutex> lock(impl->srcMutex);
        if (impl->appsrc != nullptr)
            gst_object_unref(impl->appsrc);
        impl->appsrc = src;
    }
    g_signal_connect(media, "unprepared", G_CALLBACK(onUnprepared), impl);
}

void onClientClosed(GstRTSPClient*, gpointer data)
{
    static_cast<StreamOutImpl*>(data)->clients.fetch_sub(1);
}

void onClientConnected(GstRTSPServer*, GstRTSPClient* client, gpointer data)
{
    static_cast<StreamOutImpl*>(data)->clients.fetch_add(1);
    g_signal_connect(client, "closed", G_CALLBACK(onClientClosed), data);
}

Status startRtspServer(StreamOutImpl& impl)
{
    impl.server = gst_rtsp_server_new();
    gst_rtsp_server_set_address(impl.server, impl.target.host.c_str());
    gst_rtsp_server_set_service(impl.server, std::to_string(impl.target.port).c_str());
    GstRTSPMountPoints* mounts = gst_rtsp_server_get_mount_points(impl.server);
    GstRTSPMediaFactory* factory = gst_rtsp_media_factory_new();
    const std::string launch = "( " + impl.chain +
        " ! rtph264pay name=pay0 config-interval=1 pt=" + std::to_string(kPayloadType) + " )";
    gst_rtsp_media_factory_set_launch(factory, launch.c_str());
    gst_rtsp_media_factory_set_shared(factory, TRUE);
    g_signal_connect(factory, "media-configure", G_CALLBACK(onMediaConfigure), &impl);
    gst_rtsp_mount_points_add_factory(mounts, impl.target.path.c_str(), factory); // takes it
    g_object_unref(mounts);
    g_signal_connect(impl.server, "client-connected", G_CALLBACK(onClientConnected), &impl);

    impl.context = g_main_context_new();
    GError* raw = nullptr;
    impl.serverSource = gst_rtsp_server_create_source(impl.server, nullptr, &raw);
    const OutErrorPtr error(raw);
    if (impl.serverSource == nullptr)
        return Status::io("rtsp output: cannot listen on " + impl.target.host + ":" +
            std::to_string(impl.target.port) + " (" + (error ? error->message : "unknown error") +
            "; is the port in use? pick another with rtsp://@:PORT/PATH)");
    g_source_attach(impl.serverSource, impl.context);
    impl.loop = g_main_loop_new(impl.context, FALSE);
    impl.loopThread = std::thread([&impl] {
        g_main_context_push_thread_default(impl.context);
        g_main_loop_run(impl.loop);
        g_main_context_pop_thread_default(impl.context);
    });
    return {};
}

} // namespace
#endif

Expected<std::unique_ptr<StreamOut>> gst::openStreamOut(
    const StreamTarget& target, const StreamOut::Options& options)
{
    if (options.width <= 0 || options.height <= 0 || options.width % 2 != 0 ||
        options.height % 2 != 0)
        return Status::invalid("stream " + target.uri + ": the frame size " +
            std::to_string(options.width) + "x" + std::to_string(options.height) +
            " must be positive and even (H.264's 4:2:0 chroma)");
    if (!(options.fps > 0.0 && options.fps <= 1000.0))
        return Status::invalid("stream " + target.uri + ": a frame rate in (0, 1000] is needed");
    std::string why;
    if (!detail::initGStreamer(&why))
        return Status::unsupported("stream " + target.uri + ": GStreamer cannot start: " + why);
#ifndef JETAGENT_HAVE_RTSP_SERVER
    if (target.kind == StreamTarget::Kind::Rtsp)
        return Status::unsupported("stream " + target.uri +
            ": RTSP is served by the rtsp-server plugin (jetagent-rtsp-server.so), not this one");
#endif
    auto encoder = pickEncoder(options.encoder);
    if (!encoder)
        return encoder.status().withContext("stream " + target.uri);
    for (const char* needed : {"appsrc", "videoconvert", "rtph264pay"})
        if (!elementExists(needed))
            return Status::unsupported("stream " + target.uri + ": GStreamer element '" + needed +
                "' is missing (gstreamer1.0-plugins-base and -good)");
    if (target.kind == StreamTarget::Kind::Rtp && !elementExists("udpsink"))
        return Status::unsupported(
            "stream " + target.uri + ": udpsink is missing (gstreamer1.0-plugins-good)");
    // udpsink takes a name it cannot resolve and then sends nothing, silently: looked up here
    // first, so that a typo is an error at start-up.
    if (target.kind == StreamTarget::Kind::Rtp) {
        addrinfo hints {};
        hints.ai_socktype = SOCK_DGRAM;
        addrinfo* found = nullptr;
        const int rc = getaddrinfo(target.host.c_str(), nullptr, &hints, &found);
        if (rc != 0)
            return Status::invalid("stream " + target.uri + ": cannot resolve the receiver '" +
                target.host + "': " + gai_strerror(rc));
        freeaddrinfo(found);
    }

    auto impl = std::make_unique<StreamOutImpl>();
    impl->target = target;
    impl->options = options;
    impl->encoder = encoder.value();
    const int keyInterval = std::max(1, static_cast<int>(std::lround(options.fps)));
    const int kbps = options.bitrateKbps > 0
        ? options.bitrateKbps
        : std::max(
              500, static_cast<int>(0.2 * options.width * options.height * options.fps / 1000.0));
    impl->options.bitrateKbps = kbps;
    impl->chain = appsrcChain(options) + " ! " + encoderChain(impl->encoder, keyInterval, kbps);

    if (target.kind == StreamTarget::Kind::Rtsp) {
#ifdef JETAGENT_HAVE_RTSP_SERVER
        if (Status s = startRtspServer(*impl); !s)
            return s;
#endif
        return std::unique_ptr<StreamOut>(new GstStreamOut(std::move(impl)));
    }

    const std::string launch = impl->chain +
        " ! rtph264pay config-interval=1 pt=" + std::to_string(kPayloadType) +
        " ! udpsink host=" + target.host + " port=" + std::to_string(target.port) +
        " sync=false async=false";
    GError* raw = nullptr;
    GstElement* pipeline = gst_parse_launch(launch.c_str(), &raw);
    const OutErrorPtr error(raw);
    if (pipeline == nullptr || error)
        return Status::invalid("stream " + target.uri + ": the pipeline '" + launch +
            "' does not build: " + (error ? error->message : "unknown error"));
    impl->pipeline.reset(pipeline);
    impl->bus = gst_element_get_bus(pipeline);
    impl->appsrc = gst_bin_get_by_name(GST_BIN(pipeline), "src");
    if (gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
        impl->pollBus();
        return Status::invalid("stream " + target.uri + ": the pipeline does not start" +
            (impl->error.empty() ? std::string() : ": " + impl->error));
    }
    return std::unique_ptr<StreamOut>(new GstStreamOut(std::move(impl)));
}

bool GstStreamOut::push(const Image& bgr)
{
    StreamOutImpl& impl = *impl_;
    impl.pollBus();
    {
        std::lock_guard<std::mutex> lock(impl.errorMutex);
        if (!impl.error.empty())
            return false;
    }
    if (bgr.channels() != 3 || bgr.cols != impl.options.width || bgr.rows != impl.options.height) {
        impl.setError("a frame of " + std::to_string(bgr.cols) + "x" + std::to_string(bgr.rows) +
            " (" + std::to_string(bgr.channels()) + " channels) on a stream opened for " +
            std::to_string(impl.options.width) + "x" + std::to_string(impl.options.height) +
            " BGR");
        return false;
    }
    std::lock_guard<std::mutex> lock(impl.srcMutex);
    if (impl.appsrc == nullptr) {
        impl.unwatched.fetch_add(1, std::memory_order_relaxed);
        return true;
    }
    GstAppSrc* src = GST_APP_SRC(impl.appsrc);
    const size_t rowBytes = static_cast<size_t>(bgr.cols) * 3;
    const size_t bytes = rowBytes * static_cast<size_t>(bgr.rows);
    if (gst_app_src_get_current_level_bytes(src) >= kQueuedFrames * bytes) {
        impl.dropped.fetch_add(1, std::memory_order_relaxed);
        return true;
    }
    GstBuffer* buffer = gst_buffer_new_allocate(nullptr, bytes, nullptr);
    GstMapInfo map;
    if (buffer == nullptr || !gst_buffer_map(buffer, &map, GST_MAP_WRITE)) {
        if (buffer != nullptr)
            gst_buffer_unref(buffer);
        impl.dropped.fetch_add(1, std::memory_order_relaxed);
        return true;
    }
    for (int y = 0; y < bgr.rows; ++y)
        std::memcpy(map.data + static_cast<size_t>(y) * rowBytes, bgr.ptr(y), rowBytes);
    gst_buffer_unmap(buffer, &map);
    const GstFlowReturn flow = gst_app_src_push_buffer(src, buffer); // takes the buffer
    if (flow == GST_FLOW_OK)
        impl.sent.fetch_add(1, std::memory_order_relaxed);
    else
        impl.dropped.fetch_add(1, std::memory_order_relaxed); // flushing: a media going down
    return true;
}

std::string GstStreamOut::address() const
{
    const StreamTarget& t = impl_->target;
    if (t.kind == StreamTarget::Kind::Rtsp) {
        const std::string host = t.host == "0.0.0.0" ? "<this board's address>" : t.host;
        return "rtsp://" + host + ":" + std::to_string(t.port) + t.path;
    }
    const bool v6 = t.host.find(':') != std::string::npos;
    return "rtp://" + (v6 ? "[" + t.host + "]" : t.host) + ":" + std::to_string(t.port);
}

std::string GstStreamOut::sdp() const
{
    const StreamTarget& t = impl_->target;
    if (t.kind == StreamTarget::Kind::Rtsp)
        return "";
    const std::string ip = t.host.find(':') != std::string::npos ? "IP6" : "IP4";
    const std::string pt = std::to_string(kPayloadType);
    return "v=0\n"
           "o=- 0 0 IN " +
        ip + " " + t.host + "\ns=jetagent\nc=IN " + ip + " " + t.host + "\nt=0 0\nm=video " +
        std::to_string(t.port) + " RTP/AVP " + pt + "\na=rtpmap:" + pt +
        " H264/90000\na=fmtp:" + pt + " packetization-mode=1\n";
}

std::string GstStreamOut::describe() const
{
    if (impl_->target.kind == StreamTarget::Kind::Rtsp)
        return "RTSP server: " + address() + " (H.264 by " + impl_->encoder + ")";
    return "RTP to " + address() + " (H.264 by " + impl_->encoder +
        "); a receiver opens this SDP:\n" + sdp();
}

const std::string& GstStreamOut::encoder() const
{
    return impl_->encoder;
}
uint64_t GstStreamOut::framesSent() const
{
    return impl_->sent.load();
}
uint64_t GstStreamOut::framesDropped() const
{
    return impl_->dropped.load();
}
uint64_t GstStreamOut::framesUnwatched() const
{
    return impl_->unwatched.load();
}
int GstStreamOut::clients() const
{
    return impl_->clients.load();
}
std::string GstStreamOut::error() const
{
    std::lock_guard<std::mutex> lock(impl_->errorMutex);
    return impl_->error;
}

} // namespace jetagent
