// The video file source's class, in the GStreamer plugin (jetagent/hal/video_file_source.h says
// what it reads and refuses).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "jetagent/hal/frame_source.h"

namespace jetagent {

namespace gst {
Expected<std::unique_ptr<FrameSource>> openVideoFile(
    const SourceOptions& options, const std::string& path, bool sniff);
} // namespace gst

class VideoFilePipeline; // one pass's GStreamer pipeline (video_file_source.cpp)

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
class VideoFileSource final : public FrameSource {
public:
    ~VideoFileSource() override;
    VideoFileSource(const VideoFileSource&) = delete;
    VideoFileSource& operator=(const VideoFileSource&) = delete;

    const SourceInfo& info() const override { return info_; }
    // A pass that stops before the frame count the container declares (its duration times its
    // frame rate, or an AVI header's count where that is more) is not a failure, since the frames
    // read were measured, whether the decoder reached an end early or stopped with an error (a
    // damaged or truncated file); it is logged as a warning naming the file, and without loop the
    // end says so ("after 2 of 60 frames"; see endDetail). With loop, each pass reopens the file.
    Expected<ReadResult> read(Frame& frame) override;
    std::string endDetail() const override { return endDetail_; }

private:
    VideoFileSource();
    // Checks the file and starts a pass's pipeline; `sniff` false skips the manifest check (for
    // the test that proves the pipeline's own guard).
    Status reopen(bool sniff);
    // Called when a pass over the file ends: warns when it ended short of declaredFrames_.
    void notePassEnd(const std::string& why);

    friend Expected<std::unique_ptr<FrameSource>> gst::openVideoFile(
        const SourceOptions& options, const std::string& path, bool sniff);

    SourceInfo info_;
    std::string path_;
    std::string openPath_; // path_ made absolute
    bool loop_ = false;
    bool sniff_ = true;
    uint64_t maxPixels_ = kDefaultMaxImagePixels;
    std::unique_ptr<VideoFilePipeline> pipeline_;
    Image first_; // the frame decoded by open(), delivered by the first read()
    bool haveFirst_ = false;
    uint64_t next_ = 0;
    int64_t declaredFrames_ = -1; // duration times frame rate at open; -1 when unknown
    int64_t headerFrames_ = -1; // the frame count an AVI header declares; -1 for other files
    int64_t passFrames_ = 0; // frames delivered in this pass over the file
    bool ended_ = false; // EndOfStream returned (without loop)
    bool warnedShortPass_ = false; // with loop, a short pass is logged once
    std::string endDetail_;
};

} // namespace jetagent
