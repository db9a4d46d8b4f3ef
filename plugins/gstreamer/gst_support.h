// Pieces shared by the code that reads frames out of GStreamer pipelines (the csi://, rtsp:// and
// gst:// sources, and video files): owners of GStreamer's reference-counted objects, an ERROR
// message as a Status, and an appsink sample's BGR frame copied out.
#pragma once

#include <memory>
#include <string>

#include <gst/gst.h>

#include "jetagent/base/status.h"
#include "jetagent/hal/image.h"

namespace jetagent::detail {

struct ObjectUnref {
    void operator()(gpointer object) const { gst_object_unref(object); }
};
struct SampleUnref {
    void operator()(GstSample* sample) const { gst_sample_unref(sample); }
};
struct MessageUnref {
    void operator()(GstMessage* message) const { gst_message_unref(message); }
};
struct ErrorFree {
    void operator()(GError* error) const { g_error_free(error); }
};
using ElementPtr = std::unique_ptr<GstElement, ObjectUnref>;
using BusPtr = std::unique_ptr<GstBus, ObjectUnref>;
using SamplePtr = std::unique_ptr<GstSample, SampleUnref>;
using MessagePtr = std::unique_ptr<GstMessage, MessageUnref>;
using ErrorPtr = std::unique_ptr<GError, ErrorFree>;

// An ERROR message as text: the element, GStreamer's message, and the last line of its debug
// detail (which names the cause: "Failed to connect", "Missing decoder: H.265"). Its kind is the
// one a source that cannot be opened gets, as a missing file or device does: NotFound for a
// resource, Unsupported for a missing plugin or decoder, InvalidInput for the rest.
Status errorStatus(GstMessage* message);

// A sample's frame as BGR pixels, copied into `image` (whose buffer is reused when the size is
// unchanged). InvalidInput, naming `label`, when the sample is not 8-bit BGR.
Status copyBGR(GstSample* sample, Image& image, const std::string& label);

} // namespace jetagent::detail
