// GStreamer's start-up, shared by the GStreamer sources and the network stream output.
#pragma once

#include <string>

namespace jetagent::detail {

// gst_init once per process; false (and why, into `why` when given) when GStreamer cannot start.
bool initGStreamer(std::string* why = nullptr);

} // namespace jetagent::detail
