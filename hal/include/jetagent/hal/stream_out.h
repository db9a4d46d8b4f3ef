// Video out over the network: BGR frames encoded to H.264 by GStreamer and sent as RTP over UDP
// (rtp://HOST:PORT) or served by an RTSP server of our own (rtsp://ADDR:PORT/PATH,
// gst-rtsp-server), the outputs jetson-inference users know. The caller pushes frames and never
// waits: encoding and sending run on GStreamer's threads, and a frame that finds the encoder still
// busy with earlier ones is dropped (counted), so a slow network or encoder never holds up the
// caller.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "jetagent/base/status.h"
#include "jetagent/hal/image.h"

namespace jetagent {

// Where a stream goes, from its URI.
struct StreamTarget {
    enum class Kind { Rtp, Rtsp };
    Kind kind = Kind::Rtp;
    // RTP: the receiver's address (unicast or multicast). RTSP: the address the server listens
    // on; "0.0.0.0" for rtsp://@:PORT/PATH (every interface, jetson-inference's spelling).
    std::string host;
    int port = 0;
    std::string path; // RTSP: the mount point, "/jetagent"; RTP: ""
    std::string uri; // as given
};

// True for rtp:// and rtsp:// URIs (the ones parseStreamUri takes); false for files.
bool isStreamUri(const std::string& uri);

// Parses rtp://HOST:PORT and rtsp://[ADDR|@]:PORT/PATH (ADDR defaults to every interface when it
// is "@" or empty, PATH to /jetagent when absent). Errors: InvalidInput naming what is wrong.
Expected<StreamTarget> parseStreamUri(const std::string& uri);

class StreamOut {
public:
    struct Options {
        int width = 0; // every frame pushed has this size
        int height = 0;
        double fps =
            30.0; // the nominal rate, for the encoder's key-frame interval and rate control
        // 0: 0.2 bit per pixel and frame, at least 500 (4.6 Mb/s at 640x480x30): the overlay's
        // small text stays legible.
        int bitrateKbps = 0;
        // The H.264 encoder: "auto" takes the first present of nvv4l2h264enc (Jetson's hardware
        // encoder), x264enc (gstreamer1.0-plugins-ugly) and openh264enc (gstreamer1.0-plugins-bad);
        // a name forces that one.
        std::string encoder = "auto";
    };

    // Builds the pipeline (RTP) or starts the server (RTSP: it listens from here on and encodes
    // only while a client plays the stream), in the GStreamer plugin (loaded on first use).
    // Errors: InvalidInput for bad options, Unsupported when GStreamer, the plugin or an element
    // is missing (naming the package), Io when the RTSP port cannot be bound.
    static Expected<std::unique_ptr<StreamOut>> open(
        const StreamTarget& target, const Options& options);
    virtual ~StreamOut();

    // Hands one 8-bit BGR frame of the opened size to the encoder (a copy; the caller keeps its
    // image). Never blocks: drops it (counted) when the encoder is still behind by more than a
    // few frames, or when no RTSP client is playing. False after the pipeline failed (error()
    // says why); the caller's run goes on.
    virtual bool push(const Image& bgr) = 0;

    // For the log: the SDP a receiver needs (RTP) or the URL to open (RTSP).
    virtual std::string describe() const = 0;
    // rtp://HOST:PORT, or the RTSP URL to open (the path included, defaulted or not).
    virtual std::string address() const = 0;
    // The SDP file's text a receiver opens (ffplay, VLC, GStreamer's sdpdemux); "" for RTSP.
    virtual std::string sdp() const = 0;
    virtual const std::string& encoder() const = 0;
    virtual uint64_t framesSent() const = 0; // handed to the encoder
    virtual uint64_t framesDropped() const = 0; // encoder behind
    virtual uint64_t framesUnwatched() const = 0; // RTSP with no client playing
    virtual int clients() const = 0; // RTSP clients playing now (RTP: 0)
    virtual std::string error() const = 0; // "" while healthy

protected:
    StreamOut() = default;
    StreamOut(const StreamOut&) = delete;
    StreamOut& operator=(const StreamOut&) = delete;
};

} // namespace jetagent
