// `jetagent probe cameras`: identity, formats with sizes and rates, and controls of each video
// node.
#include "jetagent/hal/camera_probe.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "jetagent/base/status.h"
#include "jetagent/hal/pixel_convert.h"
#include "jetagent/hal/v4l2_device.h"

namespace jetagent {

namespace {

std::string fractionText(const v4l2_fract& f)
{
    return std::to_string(f.numerator) + "/" + std::to_string(f.denominator) + " s";
}

std::string versionText(uint32_t version)
{
    return std::to_string((version >> 16) & 0xff) + "." + std::to_string((version >> 8) & 0xff) +
        "." + std::to_string(version & 0xff);
}

// Fills a size's intervals; a failure is returned as text for CameraDescription::error.
std::string probeIntervals(V4L2Device& device, uint32_t fourcc, CameraFrameSize& size)
{
    V4L2FrameIntervals intervals;
    if (const int r = device.enumFrameIntervals(fourcc, size.width, size.height, intervals); r < 0)
        return "listing frame intervals of " + fourccName(fourcc) + " failed: " + errnoText(-r);
    if (intervals.type == V4L2_FRMIVAL_TYPE_DISCRETE) {
        for (const v4l2_fract& f : intervals.discrete)
            size.intervals.push_back(CameraInterval {f.numerator, f.denominator});
    } else if (intervals.type != 0) {
        const auto& s = intervals.stepwise;
        size.intervalRange =
            v4l2RateText(CameraInterval {s.max.numerator, s.max.denominator}.fps()) + " to " +
            v4l2RateText(CameraInterval {s.min.numerator, s.min.denominator}.fps()) +
            " fps (intervals " + fractionText(s.min) + " to " + fractionText(s.max) +
            (intervals.type == V4L2_FRMIVAL_TYPE_STEPWISE ? ", step " + fractionText(s.step)
                                                          : std::string(", continuous")) +
            ")";
    }
    return "";
}

std::string probeFormats(V4L2Device& device, std::vector<CameraFormat>& formats)
{
    std::vector<v4l2_fmtdesc> descs;
    if (const int r = device.enumFormats(descs); r < 0)
        return "listing formats failed: " + errnoText(-r);
    std::string error;
    for (const v4l2_fmtdesc& desc : descs) {
        CameraFormat format;
        format.fourcc = desc.pixelformat;
        format.description = std::string(reinterpret_cast<const char*>(desc.description),
            strnlen(reinterpret_cast<const char*>(desc.description), sizeof desc.description));
        format.compressed = (desc.flags & V4L2_FMT_FLAG_COMPRESSED) != 0;
        format.convertible = PixelConverter::supports(desc.pixelformat);

        V4L2FrameSizes sizes;
        if (const int r = device.enumFrameSizes(desc.pixelformat, sizes); r < 0) {
            error = "listing frame sizes of " + fourccName(desc.pixelformat) +
                " failed: " + errnoText(-r);
        } else if (sizes.type == V4L2_FRMSIZE_TYPE_DISCRETE) {
            for (const auto& d : sizes.discrete)
                format.sizes.push_back(CameraFrameSize {d.width, d.height, {}, ""});
        } else if (sizes.type != 0) {
            const auto& s = sizes.stepwise;
            format.sizeRange = std::to_string(s.min_width) + "x" + std::to_string(s.min_height) +
                " to " + std::to_string(s.max_width) + "x" + std::to_string(s.max_height) +
                (sizes.type == V4L2_FRMSIZE_TYPE_STEPWISE ? ", step " +
                            std::to_string(s.step_width) + "x" + std::to_string(s.step_height)
                                                          : std::string(", continuous"));
            format.sizes.push_back(CameraFrameSize {s.min_width, s.min_height, {}, ""});
            format.sizes.push_back(CameraFrameSize {s.max_width, s.max_height, {}, ""});
        }
        for (CameraFrameSize& size : format.sizes)
            if (std::string e = probeIntervals(device, desc.pixelformat, size); !e.empty())
                error = e;
        formats.push_back(std::move(format));
    }
    return error;
}

// Controls whose value cannot be read as an integer.
bool hasIntegerValue(const V4L2ControlInfo& control)
{
    switch (control.type) {
    case V4L2_CTRL_TYPE_INTEGER:
    case V4L2_CTRL_TYPE_BOOLEAN:
    case V4L2_CTRL_TYPE_MENU:
    case V4L2_CTRL_TYPE_INTEGER_MENU:
    case V4L2_CTRL_TYPE_INTEGER64:
    case V4L2_CTRL_TYPE_BITMASK:
        return control.elements <= 1 && (control.flags & V4L2_CTRL_FLAG_WRITE_ONLY) == 0;
    default: return false;
    }
}

std::string probeControls(V4L2Device& device, std::vector<CameraControlInfo>& controls)
{
    std::vector<V4L2ControlInfo> infos;
    if (const int r = device.queryControls(infos); r < 0)
        return "listing controls failed: " + errnoText(-r);
    for (const V4L2ControlInfo& info : infos) {
        CameraControlInfo control;
        control.name = v4l2ControlName(info.label);
        control.label = info.label;
        control.type = v4l2ControlTypeName(info.type);
        control.minimum = info.minimum;
        control.maximum = info.maximum;
        control.step = static_cast<int64_t>(info.step);
        control.defaultValue = info.defaultValue;
        if (hasIntegerValue(info)) {
            int64_t value = 0;
            if (device.getControl(info, value) == 0)
                control.value = value;
        }
        control.flags = v4l2ControlFlagNames(info.flags);
        control.menu = info.menu;
        controls.push_back(std::move(control));
    }
    return "";
}

CameraDescription probeOne(V4L2Io& io, const std::string& path)
{
    CameraDescription camera;
    camera.path = path;
    V4L2Device device(io);
    if (const int r = device.open(path); r < 0) {
        camera.error = r == -ENOTTY ? std::string("not a V4L2 device (not a character device)")
                                    : "cannot open: " + errnoText(-r);
        return camera;
    }
    V4L2Capability cap;
    if (const int r = device.queryCapability(cap); r < 0) {
        camera.error = r == -ENOTTY ? std::string("not a V4L2 device")
                                    : "VIDIOC_QUERYCAP failed: " + errnoText(-r);
        return camera;
    }
    camera.driver = cap.driver;
    camera.card = cap.card;
    camera.busInfo = cap.busInfo;
    camera.version = versionText(cap.version);
    camera.capture = cap.has(V4L2_CAP_VIDEO_CAPTURE);
    camera.capabilities = v4l2CapabilityNames(cap.caps);
    if (!camera.capture)
        return camera;
    // Keep what was learnt when one step fails; the first failure explains the gap.
    const std::string formatError = probeFormats(device, camera.formats);
    const std::string controlError = probeControls(device, camera.controls);
    camera.error = !formatError.empty() ? formatError : controlError;
    return camera;
}

} // namespace

double CameraInterval::fps() const
{
    return numerator == 0 || denominator == 0
        ? 0.0
        : static_cast<double>(denominator) / static_cast<double>(numerator);
}

std::vector<CameraDescription> probeCameras(V4L2Io& io, const std::vector<std::string>& paths)
{
    const std::vector<std::string> targets = paths.empty() ? io.listDevices() : paths;
    std::vector<CameraDescription> cameras;
    cameras.reserve(targets.size());
    for (const std::string& path : targets)
        cameras.push_back(probeOne(io, path));
    return cameras;
}

} // namespace jetagent
