// The GStreamer plugin's functions behind its table (hal/gstreamer_api.h), one per entry.
#pragma once

#include <memory>
#include <string>

#include "jetagent/hal/frame_source.h"
#include "jetagent/hal/stream_out.h"

namespace jetagent::gst {

bool hasElement(const std::string& factory);
Expected<std::unique_ptr<FrameSource>> openPipeline(
    const SourceOptions& options, const std::string& pipeline, const std::string& kind);
Expected<std::unique_ptr<FrameSource>> openVideoFile(
    const SourceOptions& options, const std::string& path, bool sniff);
Expected<std::unique_ptr<StreamOut>> openStreamOut(
    const StreamTarget& target, const StreamOut::Options& options);

} // namespace jetagent::gst
