// Frames from a V4L2 capture device (USB cameras, the kernel's vivid test driver) by mmap
// streaming: format negotiation, controls, monotonic buffer timestamps, drop counting and recovery
// from a device that disappears.
#pragma once

#include <memory>
#include <string>

#include "jetagent/hal/frame_source.h"
#include "jetagent/hal/v4l2_io.h"

namespace jetagent {

// Opens `options.uri` = v4l2://TARGET, where TARGET is a device node (/dev/video0), a card name
// ("HD Webcam", as `jetagent probe cameras` shows it) or a bus-info string
// ("usb-0000:00:14.0-1"); names and bus-info survive node renumbering, and a reconnect finds the
// device again by the same name. Negotiates width x height at fps in `options.camera.format`
// (0 and auto: the device's current size and rate, a supported format), sets the configured
// controls, maps the buffers and starts streaming. Errors: NotFound for no such device,
// InvalidInput for a device that cannot capture or cannot do what was asked (the message lists
// what it can), Io for a failing ioctl, each naming the device.
Expected<std::unique_ptr<FrameSource>> openV4L2Source(
    const SourceOptions& options, V4L2Io& io = systemV4L2Io());

} // namespace jetagent
