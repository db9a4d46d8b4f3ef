// `jetagent probe cameras`: what each video device is and can do.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jetagent/hal/v4l2_io.h"

namespace jetagent {

struct CameraInterval {
    uint32_t numerator = 0; // seconds per frame, as V4L2 gives it (1/30)
    uint32_t denominator = 0;

    double fps() const; // 0 when either part is 0
};

struct CameraFrameSize {
    uint32_t width = 0;
    uint32_t height = 0;
    std::vector<CameraInterval> intervals; // discrete intervals; empty when stepwise
    std::string intervalRange; // stepwise or continuous intervals, as text; empty otherwise
};

struct CameraFormat {
    uint32_t fourcc = 0;
    std::string description; // the driver's
    bool compressed = false;
    bool convertible = false; // jetagent converts it to BGR
    std::vector<CameraFrameSize> sizes; // discrete sizes (for stepwise ones, the corners)
    std::string sizeRange; // stepwise or continuous sizes, as text; empty when discrete
};

struct CameraControlInfo {
    std::string name; // v4l2-ctl's spelling: "exposure_time_absolute"
    std::string label; // the driver's: "Exposure Time, Absolute"
    std::string type; // int, bool, menu, intmenu, button, int64, string, bitmask
    int64_t minimum = 0;
    int64_t maximum = 0;
    int64_t step = 0;
    int64_t defaultValue = 0;
    int64_t value = 0; // current; 0 when unreadable (write-only, inactive)
    std::vector<std::string> flags; // inactive, read-only, write-only, volatile, grabbed, ...
    std::vector<std::pair<int64_t, std::string>> menu; // menu entries: index, name
};

struct CameraDescription {
    std::string path; // /dev/videoN
    std::string error; // why the device could not be probed; the fields below are then partial
    std::string driver;
    std::string card;
    std::string busInfo;
    std::string version; // driver version, "6.1.0"
    bool capture = false; // a video capture device (metadata and output nodes are listed too)
    std::vector<std::string> capabilities; // device caps: video-capture, streaming, ...
    std::vector<CameraFormat> formats;
    std::vector<CameraControlInfo> controls;
};

// Probes each of `paths` (all of io.listDevices() when empty). A device that cannot be opened or
// queried is reported with `error` set; probing never fails as a whole.
std::vector<CameraDescription> probeCameras(V4L2Io& io, const std::vector<std::string>& paths);

// The report and its JSON are the probe command's (src/camera_report.h).

} // namespace jetagent
