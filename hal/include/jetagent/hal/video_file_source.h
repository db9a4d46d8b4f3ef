// Video files read as a frame source, decoded by GStreamer. A video file source reads one local
// file and never opens the network: see VideoFileSource.
#pragma once

#include <memory>
#include <string>

#include "jetagent/hal/frame_source.h"

namespace jetagent {

// A video file, decoded by GStreamer as
//   filesrc location=PATH ! decodebin ! videoconvert ! video/x-raw,format=BGR ! appsink
// Local files only, whatever they contain:
//  - the file must be a regular file (a FIFO or device would block the decoder or never end);
//  - a playlist or manifest that names other files or URLs (an HLS .m3u8, a DASH .mpd, a Smooth
//    Streaming manifest, an FFmpeg concat script, an SDP description), under any name, is refused
//    before a decoder sees it;
//  - the file is read by filesrc alone: the pipeline is built element by element (never
//    uridecodebin or playbin, which pick a source from a URI), and decodebin may not plug an
//    element that reads other files or the network (a source, an adaptive demuxer such as
//    hlsdemux, a network demuxer such as sdpdemux): the file is refused instead, naming it, and
//    a source element that appears anywhere in the pipeline is locked out of starting;
//  - only the first video stream is decoded; audio and subtitles are left undecoded.
// Which GStreamer plugins decode what: docs/cameras.md. A Jetson's hardware decoders are reached
// with a gst:// pipeline instead (filesrc ! qtdemux ! h264parse ! nvv4l2decoder ! ...).
//
// Decoding happens in the GStreamer plugin (jetagent-gstreamer.so, loaded on first use): a build
// without it installed refuses video files with an error naming the package.
//
// Opens `path` and decodes its first frame, so an unreadable file fails here rather than mid-run.
// A video whose frames have more than options.maxImagePixels pixels is refused from its stream's
// caps, before a decoder is plugged for it where the container gives the size, and always before
// its first frame is delivered. A pass that stops before the frame count the container declares
// (its duration times its frame rate, or an AVI header's count where that is more) is not a
// failure, since the frames read were measured, whether the decoder reached an end early or
// stopped with an error (a damaged or truncated file); it is logged as a warning naming the file,
// and without loop the end says so ("after 2 of 60 frames"; FrameSource::endDetail). With loop,
// each pass reopens the file. `sniff` false skips the manifest check: what the tests use to show
// that the pipeline refuses a playlist by itself.
Expected<std::unique_ptr<FrameSource>> openVideoFile(
    const SourceOptions& options, const std::string& path, bool sniff = true);

} // namespace jetagent
