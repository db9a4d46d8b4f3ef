// Pieces shared by the GStreamer frame readers (gst_support.h).
#include "gst_support.h"

#include <gst/video/video.h>

#include "jetagent/base/text.h"
#include "jetagent/hal/gstreamer_source.h"

namespace jetagent::detail {

namespace {

// The kind of a failure to start: the source cannot be opened, as a missing file or device is.
ErrorKind startErrorKind(const GError* error)
{
    if (error->domain == GST_RESOURCE_ERROR)
        return error->code == GST_RESOURCE_ERROR_NOT_AUTHORIZED ? ErrorKind::InvalidInput
                                                                : ErrorKind::NotFound;
    if ((error->domain == GST_CORE_ERROR && error->code == GST_CORE_ERROR_MISSING_PLUGIN) ||
        (error->domain == GST_STREAM_ERROR && error->code == GST_STREAM_ERROR_CODEC_NOT_FOUND))
        return ErrorKind::Unsupported;
    return ErrorKind::InvalidInput;
}

} // namespace

Status errorStatus(GstMessage* message)
{
    GError* raw = nullptr;
    gchar* debug = nullptr;
    gst_message_parse_error(message, &raw, &debug);
    const ErrorPtr error(raw);
    std::string detail = debug != nullptr ? debug : "";
    g_free(debug);
    detail =
        trimSpace(detail.substr(detail.rfind('\n') == std::string::npos ? 0 : detail.rfind('\n')));
    const char* element = GST_MESSAGE_SRC_NAME(message);
    std::string text = std::string(element != nullptr ? element : "pipeline") + ": " +
        (error ? error->message : "error");
    if (!detail.empty())
        text += " (" + withoutPasswords(detail) + ")";
    return Status::error(error ? startErrorKind(error.get()) : ErrorKind::InvalidInput, text);
}

Status copyBGR(GstSample* sample, Image& image, const std::string& label)
{
    GstVideoInfo info;
    GstCaps* caps = gst_sample_get_caps(sample);
    if (caps == nullptr || gst_video_info_from_caps(&info, caps) == FALSE)
        return Status::invalid(label +
            " delivers samples without video caps: end the pipeline "
            "with videoconvert ! video/x-raw,format=BGR ! appsink");
    if (GST_VIDEO_INFO_FORMAT(&info) != GST_VIDEO_FORMAT_BGR)
        return Status::invalid(label + " delivers " + GST_VIDEO_INFO_NAME(&info) +
            " frames, not BGR: end the pipeline with videoconvert ! video/x-raw,format=BGR ! "
            "appsink");
    GstVideoFrame frame;
    if (gst_video_frame_map(&frame, &info, gst_sample_get_buffer(sample), GST_MAP_READ) == FALSE)
        return Status::io(label + ": a frame's buffer could not be mapped");
    const Image view(GST_VIDEO_FRAME_HEIGHT(&frame), GST_VIDEO_FRAME_WIDTH(&frame), 3,
        static_cast<uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, 0)),
        static_cast<size_t>(GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0)));
    view.copyTo(image);
    gst_video_frame_unmap(&frame);
    return Status();
}

} // namespace jetagent::detail
