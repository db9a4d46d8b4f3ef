// A thin RAII wrapper over one V4L2 video capture node: the ioctls jetagent uses, nothing more.
// In libcamera's style every method returns 0 (or a count) or a negative errno and logs nothing:
// the caller knows the context and decides what is worth a log line.
#pragma once

#include <linux/videodev2.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "jetagent/hal/v4l2_io.h"

namespace jetagent {

// What VIDIOC_QUERYCAP says about a node.
struct V4L2Capability {
    std::string driver;
    std::string card;
    std::string busInfo;
    uint32_t version = 0; // KERNEL_VERSION(major, minor, patch) of the driver
    uint32_t caps = 0; // the node's own caps (device_caps when the driver reports them)

    bool has(uint32_t flag) const { return (caps & flag) != 0; }
    // Single-planar video capture with streaming I/O: what jetagent can capture from.
    bool canStream() const { return has(V4L2_CAP_VIDEO_CAPTURE) && has(V4L2_CAP_STREAMING); }
};

// Frame sizes of one format (VIDIOC_ENUM_FRAMESIZES). type 0: the driver does not enumerate them.
struct V4L2FrameSizes {
    uint32_t type = 0; // V4L2_FRMSIZE_TYPE_DISCRETE, _STEPWISE, _CONTINUOUS or 0
    std::vector<v4l2_frmsize_discrete> discrete;
    v4l2_frmsize_stepwise stepwise {}; // for _STEPWISE and _CONTINUOUS

    // True when width x height is one of the sizes (or inside the range, on its steps); true when
    // the driver does not enumerate sizes, since nothing then says otherwise.
    bool contains(uint32_t width, uint32_t height) const;
};

// Frame intervals of one format and size (VIDIOC_ENUM_FRAMEINTERVALS), seconds per frame.
struct V4L2FrameIntervals {
    uint32_t type = 0; // V4L2_FRMIVAL_TYPE_DISCRETE, _STEPWISE, _CONTINUOUS or 0
    std::vector<v4l2_fract> discrete;
    v4l2_frmival_stepwise stepwise {};
};

// One control (VIDIOC_QUERY_EXT_CTRL) with its menu entries.
struct V4L2ControlInfo {
    uint32_t id = 0;
    uint32_t type = 0; // V4L2_CTRL_TYPE_*
    std::string label; // the driver's name: "Exposure Time, Absolute"
    int64_t minimum = 0;
    int64_t maximum = 0;
    uint64_t step = 0;
    int64_t defaultValue = 0;
    uint32_t flags = 0; // V4L2_CTRL_FLAG_*
    uint32_t elements = 1; // > 1 for arrays, which jetagent only lists
    // Menu entries (VIDIOC_QUERYMENU) by index: the name for menus, the value as text for integer
    // menus. Indices the driver skips are absent.
    std::vector<std::pair<int64_t, std::string>> menu;
};

// A frame rate as people write it: "30", "29.97", "7.5".
std::string v4l2RateText(double fps);

// A control's name in v4l2-ctl's spelling: lower case, every run of other characters one '_',
// none at either end ("Exposure Time, Absolute" -> "exposure_time_absolute").
std::string v4l2ControlName(const std::string& label);
// Names of the capability bits set in `caps` ("video-capture", "streaming", ...), in bit order.
std::vector<std::string> v4l2CapabilityNames(uint32_t caps);
// "int", "bool", "menu", "intmenu", "button", "int64", "string", "bitmask", ...
std::string v4l2ControlTypeName(uint32_t type);
// Names of the control flag bits set ("inactive", "read-only", ...).
std::vector<std::string> v4l2ControlFlagNames(uint32_t flags);

// One open node. Single-planar V4L2_BUF_TYPE_VIDEO_CAPTURE, V4L2_MEMORY_MMAP buffers. Not
// thread-safe: one thread owns a device. The destructor stops streaming, unmaps and closes.
class V4L2Device {
public:
    // A mapped buffer: where the driver's memory for buffer `index` lies in this process.
    struct Buffer {
        void* data = nullptr;
        size_t length = 0;
    };

    explicit V4L2Device(V4L2Io& io) : io_(io) { }
    ~V4L2Device();
    V4L2Device(const V4L2Device&) = delete;
    V4L2Device& operator=(const V4L2Device&) = delete;

    // Opens `path` (O_RDWR | O_NONBLOCK | O_CLOEXEC: DQBUF and poll never block past their
    // timeout). -EBUSY when already open.
    int open(const std::string& path);
    // Stops streaming, releases the buffers, closes. Safe to call when closed or when the device is
    // gone (the kernel then refuses the ioctls; the mappings and the descriptor still go).
    void close();
    bool isOpen() const { return fd_ >= 0; }
    const std::string& path() const { return path_; }

    int queryCapability(V4L2Capability& capability);

    // Pixel formats of the capture queue, in the driver's order.
    int enumFormats(std::vector<v4l2_fmtdesc>& formats);
    int enumFrameSizes(uint32_t fourcc, V4L2FrameSizes& sizes);
    int enumFrameIntervals(
        uint32_t fourcc, uint32_t width, uint32_t height, V4L2FrameIntervals& intervals);

    // Every control except control classes (and disabled ones), menus filled in. Falls back to
    // VIDIOC_QUERYCTRL on drivers without VIDIOC_QUERY_EXT_CTRL.
    int queryControls(std::vector<V4L2ControlInfo>& controls);
    // One control's current description (flags change when other controls are set).
    int queryControl(uint32_t id, V4L2ControlInfo& control);
    // Current value by VIDIOC_G_EXT_CTRLS, or VIDIOC_G_CTRL where the driver lacks it. The
    // control's type says which member of the kernel's value union holds it.
    int getControl(const V4L2ControlInfo& control, int64_t& value);
    // Sets a value by VIDIOC_S_EXT_CTRLS (or VIDIOC_S_CTRL); `value` becomes what the driver kept.
    int setControl(const V4L2ControlInfo& control, int64_t& value);

    int getFormat(v4l2_format& format);
    // The driver adjusts `format` to what it can do; the caller compares.
    int setFormat(v4l2_format& format);
    int tryFormat(v4l2_format& format);
    int getParm(v4l2_streamparm& parm);
    int setParm(v4l2_streamparm& parm);

    // VIDIOC_REQBUFS, VIDIOC_QUERYBUF and mmap of each buffer. Returns the number of buffers the
    // driver granted (it may differ from `count`) or a negative errno, with nothing left allocated.
    int allocateBuffers(unsigned count);
    // Unmaps and frees the buffers (VIDIOC_REQBUFS 0); streaming must be off.
    int releaseBuffers();
    size_t bufferCount() const { return buffers_.size(); }
    const Buffer& buffer(uint32_t index) const { return buffers_[index]; }

    int queueBuffer(uint32_t index);
    // -EAGAIN when no buffer is done yet.
    int dequeueBuffer(v4l2_buffer& buffer);
    int streamOn();
    int streamOff();
    bool streaming() const { return streaming_; }

    // Waits up to `timeoutMs` for a filled buffer. 1: one is ready; 0: timeout (or a signal);
    // -ENODEV: the node hung up (unplugged); -EIO: the queue is in error (POLLERR, as a driver
    // reports a device it lost); another negative errno when poll itself failed.
    int waitReadable(int timeoutMs);

private:
    int xioctl(unsigned long request, void* arg);
    // A format or streaming-parameter request (`arg`: v4l2_format, v4l2_streamparm) on the
    // capture queue, the only one jetagent uses.
    template <typename Arg>
    int captureIoctl(unsigned long request, Arg& arg)
    {
        arg.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        return xioctl(request, &arg);
    }
    // VIDIOC_[GS]_EXT_CTRLS where the driver has them, else VIDIOC_[GS]_CTRL (32-bit values only);
    // `set` writes `value` first. Either way `value` becomes what the driver reports.
    int accessControl(const V4L2ControlInfo& control, int64_t& value, bool set);
    int queryControlLegacy(uint32_t id, V4L2ControlInfo& control);
    int queryMenu(V4L2ControlInfo& control);
    void unmapBuffers();

    V4L2Io& io_;
    int fd_ = -1;
    std::string path_;
    std::vector<Buffer> buffers_;
    bool streaming_ = false;
    bool extControls_ = true; // cleared when the driver answers ENOTTY to the extended ioctls
};

} // namespace jetagent
