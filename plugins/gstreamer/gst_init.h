// GStreamer's start-up, shared by the GStreamer sources and the network stream outputs (each plugin
// that drives GStreamer compiles gst_init.cpp; gst_init_check itself may run more than once).
#pragma once

#include <string>

namespace jetagent::detail {

// gst_init once per plugin; false (and why, into `why` when given) when GStreamer cannot start.
bool initGStreamer(std::string* why = nullptr);

} // namespace jetagent::detail
