// A small RTSP server for the reconnect tests: serves a live test pattern, JPEG over RTP (cheap to
// encode and decode), at rtsp://127.0.0.1:PORT/test until SIGTERM or SIGINT. The tests make an
// outage by killing the process and end it by starting it again on the same port.
//
//   jetagent_rtsp_test_server PORT [WIDTHxHEIGHT@FPS]
//
// Prints "ready rtsp://127.0.0.1:PORT/test" once it listens; exits 1 when the port cannot be
// bound within a few seconds.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <glib-unix.h>
#include <gst/gst.h>
#include <gst/rtsp-server/rtsp-server.h>

namespace {

constexpr int kBindTries = 50; // 50 x 100 ms: rides out a port the kernel has not released yet
constexpr auto kBindRetry = std::chrono::milliseconds(100);

gboolean quit(gpointer loop)
{
    g_main_loop_quit(static_cast<GMainLoop*>(loop));
    return G_SOURCE_REMOVE;
}

} // namespace

int main(int argc, char** argv)
{
    gst_init(&argc, &argv);
    if (argc < 2 || std::atoi(argv[1]) <= 0) {
        std::fprintf(stderr, "usage: %s PORT [WIDTHxHEIGHT@FPS]\n", argv[0]);
        return 2;
    }
    int width = 320, height = 240, fps = 15;
    if (argc > 2 && std::sscanf(argv[2], "%dx%d@%d", &width, &height, &fps) != 3) {
        std::fprintf(stderr, "bad format '%s' (WIDTHxHEIGHT@FPS)\n", argv[2]);
        return 2;
    }
    const std::string launch =
        "( videotestsrc is-live=true pattern=ball ! video/x-raw,format=I420,width=" +
        std::to_string(width) + ",height=" + std::to_string(height) +
        ",framerate=" + std::to_string(fps) +
        "/1 ! jpegenc quality=60 ! rtpjpegpay name=pay0 pt=26 )";

    GMainLoop* loop = g_main_loop_new(nullptr, FALSE);
    GstRTSPServer* server = gst_rtsp_server_new();
    gst_rtsp_server_set_address(server, "127.0.0.1");
    gst_rtsp_server_set_service(server, argv[1]);
    GstRTSPMountPoints* mounts = gst_rtsp_server_get_mount_points(server);
    GstRTSPMediaFactory* factory = gst_rtsp_media_factory_new();
    gst_rtsp_media_factory_set_launch(factory, launch.c_str());
    gst_rtsp_media_factory_set_shared(factory, TRUE);
    gst_rtsp_mount_points_add_factory(mounts, "/test", factory);
    g_object_unref(mounts);

    guint attached = 0;
    for (int i = 0; i < kBindTries && attached == 0; ++i) {
        attached = gst_rtsp_server_attach(server, nullptr);
        if (attached == 0)
            std::this_thread::sleep_for(kBindRetry);
    }
    if (attached == 0) {
        std::fprintf(stderr, "cannot listen on 127.0.0.1:%s\n", argv[1]);
        return 1;
    }
    g_unix_signal_add(SIGTERM, quit, loop);
    g_unix_signal_add(SIGINT, quit, loop);
    std::printf("ready rtsp://127.0.0.1:%s/test\n", argv[1]);
    std::fflush(stdout);
    g_main_loop_run(loop);
    g_source_remove(attached);
    g_object_unref(server);
    g_main_loop_unref(loop);
    return 0;
}
