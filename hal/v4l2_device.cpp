// One V4L2 capture node: the ioctls, buffer mapping and poll, returning negative errnos.
#include "jetagent/hal/v4l2_device.h"

#include <fcntl.h>
#include <sys/mman.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "jetagent/base/format.h"

namespace jetagent {

namespace {

constexpr uint32_t kCaptureType = V4L2_BUF_TYPE_VIDEO_CAPTURE;

// Kernel strings are fixed-size arrays that need not end in NUL.
template <size_t N>
std::string fixedString(const uint8_t (&text)[N])
{
    const auto* begin = reinterpret_cast<const char*>(text);
    return std::string(begin, strnlen(begin, N));
}
template <size_t N>
std::string fixedString(const char (&text)[N])
{
    return std::string(text, strnlen(text, N));
}

struct BitName {
    uint32_t bit;
    const char* name;
};

std::vector<std::string> bitNames(uint32_t bits, const BitName* table, size_t count)
{
    std::vector<std::string> names;
    uint32_t known = 0;
    for (size_t i = 0; i < count; ++i) {
        known |= table[i].bit;
        if ((bits & table[i].bit) != 0)
            names.emplace_back(table[i].name);
    }
    if ((bits & ~known) != 0) {
        std::string text = formatText("0x%08x", bits & ~known);
        names.emplace_back(text);
    }
    return names;
}

bool isMenuType(uint32_t type)
{
    return type == V4L2_CTRL_TYPE_MENU || type == V4L2_CTRL_TYPE_INTEGER_MENU;
}

// What VIDIOC_QUERYCTRL and VIDIOC_QUERY_EXT_CTRL both say of a control (all but the number of
// elements, which only the extended one knows).
template <typename Query>
V4L2ControlInfo controlInfo(const Query& query)
{
    V4L2ControlInfo control;
    control.id = query.id;
    control.type = query.type;
    control.label = fixedString(query.name);
    control.minimum = query.minimum;
    control.maximum = query.maximum;
    control.step = static_cast<uint64_t>(query.step);
    control.defaultValue = query.default_value;
    control.flags = query.flags;
    return control;
}

// Reads a VIDIOC_ENUM_FRAMESIZES or VIDIOC_ENUM_FRAMEINTERVALS list into `list`: the discrete
// entries, or the one stepwise range a driver gives instead. `query` holds what the request asks
// about (format, size); `ask` runs the ioctl on a copy of it with the index set.
template <typename Query, typename List, typename Ask>
int readFrameList(const Query& query, uint32_t discreteType, List& list, Ask ask)
{
    list = List();
    for (uint32_t index = 0;; ++index) {
        Query entry = query;
        entry.index = index;
        const int r = ask(entry);
        // EINVAL ends the list; ENOTTY at the start means the driver does not enumerate them.
        if (r == -EINVAL || (r == -ENOTTY && index == 0))
            return 0;
        if (r < 0)
            return r;
        list.type = entry.type;
        if (entry.type != discreteType) {
            list.stepwise = entry.stepwise;
            return 0;
        }
        list.discrete.push_back(entry.discrete);
    }
}

} // namespace

std::string v4l2RateText(double fps)
{
    std::string text = formatText("%.2f", fps);
    std::string s(text);
    while (!s.empty() && s.back() == '0')
        s.pop_back();
    if (!s.empty() && s.back() == '.')
        s.pop_back();
    return s;
}

std::string v4l2ControlName(const std::string& label)
{
    std::string name;
    bool separator = false;
    for (const char c : label) {
        const auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u) != 0) {
            if (separator && !name.empty())
                name += '_';
            separator = false;
            name += static_cast<char>(std::tolower(u));
        } else {
            separator = true;
        }
    }
    return name;
}

std::vector<std::string> v4l2CapabilityNames(uint32_t caps)
{
    // Literal values for the bits that kernel headers older than 5.8 (Ubuntu 20.04's, JetPack 5's
    // sysroot) lack; they are kernel ABI and never change.
    static const BitName kNames[] = {
        {V4L2_CAP_VIDEO_CAPTURE, "video-capture"},
        {V4L2_CAP_VIDEO_OUTPUT, "video-output"},
        {V4L2_CAP_VIDEO_OVERLAY, "video-overlay"},
        {V4L2_CAP_VBI_CAPTURE, "vbi-capture"},
        {V4L2_CAP_VBI_OUTPUT, "vbi-output"},
        {V4L2_CAP_SLICED_VBI_CAPTURE, "sliced-vbi-capture"},
        {V4L2_CAP_SLICED_VBI_OUTPUT, "sliced-vbi-output"},
        {V4L2_CAP_RDS_CAPTURE, "rds-capture"},
        {V4L2_CAP_VIDEO_OUTPUT_OVERLAY, "video-output-overlay"},
        {V4L2_CAP_HW_FREQ_SEEK, "hw-freq-seek"},
        {V4L2_CAP_RDS_OUTPUT, "rds-output"},
        {V4L2_CAP_VIDEO_CAPTURE_MPLANE, "video-capture-mplane"},
        {V4L2_CAP_VIDEO_OUTPUT_MPLANE, "video-output-mplane"},
        {V4L2_CAP_VIDEO_M2M_MPLANE, "video-m2m-mplane"},
        {V4L2_CAP_VIDEO_M2M, "video-m2m"},
        {V4L2_CAP_TUNER, "tuner"},
        {V4L2_CAP_AUDIO, "audio"},
        {V4L2_CAP_RADIO, "radio"},
        {V4L2_CAP_MODULATOR, "modulator"},
        {V4L2_CAP_SDR_CAPTURE, "sdr-capture"},
        {V4L2_CAP_EXT_PIX_FORMAT, "ext-pix-format"},
        {V4L2_CAP_SDR_OUTPUT, "sdr-output"},
        {V4L2_CAP_META_CAPTURE, "meta-capture"},
        {V4L2_CAP_READWRITE, "readwrite"},
        {V4L2_CAP_STREAMING, "streaming"},
        {0x08000000, "meta-output"},
        {0x10000000, "touch"},
        {0x20000000, "io-mc"},
        {V4L2_CAP_DEVICE_CAPS, "device-caps"},
    };
    return bitNames(caps, kNames, sizeof kNames / sizeof kNames[0]);
}

std::string v4l2ControlTypeName(uint32_t type)
{
    switch (type) {
    case V4L2_CTRL_TYPE_INTEGER: return "int";
    case V4L2_CTRL_TYPE_BOOLEAN: return "bool";
    case V4L2_CTRL_TYPE_MENU: return "menu";
    case V4L2_CTRL_TYPE_BUTTON: return "button";
    case V4L2_CTRL_TYPE_INTEGER64: return "int64";
    case V4L2_CTRL_TYPE_CTRL_CLASS: return "ctrl-class";
    case V4L2_CTRL_TYPE_STRING: return "string";
    case V4L2_CTRL_TYPE_BITMASK: return "bitmask";
    case V4L2_CTRL_TYPE_INTEGER_MENU: return "intmenu";
    case V4L2_CTRL_TYPE_U8: return "u8";
    case V4L2_CTRL_TYPE_U16: return "u16";
    case V4L2_CTRL_TYPE_U32: return "u32";
    default: return "compound";
    }
}

std::vector<std::string> v4l2ControlFlagNames(uint32_t flags)
{
    static const BitName kNames[] = {
        {V4L2_CTRL_FLAG_DISABLED, "disabled"},
        {V4L2_CTRL_FLAG_GRABBED, "grabbed"},
        {V4L2_CTRL_FLAG_READ_ONLY, "read-only"},
        {V4L2_CTRL_FLAG_UPDATE, "update"},
        {V4L2_CTRL_FLAG_INACTIVE, "inactive"},
        {V4L2_CTRL_FLAG_SLIDER, "slider"},
        {V4L2_CTRL_FLAG_WRITE_ONLY, "write-only"},
        {V4L2_CTRL_FLAG_VOLATILE, "volatile"},
        {V4L2_CTRL_FLAG_HAS_PAYLOAD, "has-payload"},
        {V4L2_CTRL_FLAG_EXECUTE_ON_WRITE, "execute-on-write"},
        {0x0400, "modify-layout"},
        {0x0800, "dynamic-array"},
    };
    return bitNames(flags, kNames, sizeof kNames / sizeof kNames[0]);
}

bool V4L2FrameSizes::contains(uint32_t width, uint32_t height) const
{
    if (type == V4L2_FRMSIZE_TYPE_DISCRETE) {
        for (const auto& size : discrete)
            if (size.width == width && size.height == height)
                return true;
        return false;
    }
    if (type == V4L2_FRMSIZE_TYPE_STEPWISE || type == V4L2_FRMSIZE_TYPE_CONTINUOUS) {
        const auto& s = stepwise;
        const uint32_t stepW = s.step_width == 0 ? 1 : s.step_width;
        const uint32_t stepH = s.step_height == 0 ? 1 : s.step_height;
        return width >= s.min_width && width <= s.max_width && height >= s.min_height &&
            height <= s.max_height && (width - s.min_width) % stepW == 0 &&
            (height - s.min_height) % stepH == 0;
    }
    return true;
}

V4L2Device::~V4L2Device()
{
    close();
}

int V4L2Device::open(const std::string& path)
{
    if (fd_ >= 0)
        return -EBUSY;
    const int fd = io_.open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    fd_ = fd;
    path_ = path;
    extControls_ = true;
    return 0;
}

void V4L2Device::close()
{
    if (fd_ < 0)
        return;
    if (streaming_)
        streamOff();
    if (!buffers_.empty())
        releaseBuffers();
    io_.close(fd_);
    fd_ = -1;
}

int V4L2Device::xioctl(unsigned long request, void* arg)
{
    if (fd_ < 0)
        return -EBADF;
    const int result = io_.ioctl(fd_, request, arg);
    return result < 0 ? -errno : result;
}

int V4L2Device::queryCapability(V4L2Capability& capability)
{
    v4l2_capability cap {};
    if (const int r = xioctl(VIDIOC_QUERYCAP, &cap); r < 0)
        return r;
    capability.driver = fixedString(cap.driver);
    capability.card = fixedString(cap.card);
    capability.busInfo = fixedString(cap.bus_info);
    capability.version = cap.version;
    // capabilities describes the whole physical device; device_caps this node, which is what
    // decides whether it can capture (a UVC camera's metadata node shares the first).
    capability.caps =
        (cap.capabilities & V4L2_CAP_DEVICE_CAPS) != 0 ? cap.device_caps : cap.capabilities;
    return 0;
}

int V4L2Device::enumFormats(std::vector<v4l2_fmtdesc>& formats)
{
    formats.clear();
    for (uint32_t index = 0;; ++index) {
        v4l2_fmtdesc desc {};
        desc.index = index;
        desc.type = kCaptureType;
        const int r = xioctl(VIDIOC_ENUM_FMT, &desc);
        if (r == -EINVAL)
            return 0;
        if (r < 0)
            return r;
        formats.push_back(desc);
    }
}

int V4L2Device::enumFrameSizes(uint32_t fourcc, V4L2FrameSizes& sizes)
{
    v4l2_frmsizeenum query {};
    query.pixel_format = fourcc;
    return readFrameList(query, V4L2_FRMSIZE_TYPE_DISCRETE, sizes,
        [this](v4l2_frmsizeenum& q) { return xioctl(VIDIOC_ENUM_FRAMESIZES, &q); });
}

int V4L2Device::enumFrameIntervals(
    uint32_t fourcc, uint32_t width, uint32_t height, V4L2FrameIntervals& intervals)
{
    v4l2_frmivalenum query {};
    query.pixel_format = fourcc;
    query.width = width;
    query.height = height;
    return readFrameList(query, V4L2_FRMIVAL_TYPE_DISCRETE, intervals,
        [this](v4l2_frmivalenum& q) { return xioctl(VIDIOC_ENUM_FRAMEINTERVALS, &q); });
}

int V4L2Device::queryMenu(V4L2ControlInfo& control)
{
    control.menu.clear();
    if (!isMenuType(control.type) || control.minimum < 0 || control.maximum < control.minimum)
        return 0;
    for (int64_t index = control.minimum; index <= control.maximum; ++index) {
        v4l2_querymenu entry {};
        entry.id = control.id;
        entry.index = static_cast<uint32_t>(index);
        const int r = xioctl(VIDIOC_QUERYMENU, &entry);
        if (r == -EINVAL) // a gap the driver leaves in its menu
            continue;
        if (r < 0)
            return r;
        if (control.type == V4L2_CTRL_TYPE_MENU)
            control.menu.emplace_back(index, fixedString(entry.name));
        else
            control.menu.emplace_back(index, std::to_string(entry.value));
    }
    return 0;
}

int V4L2Device::queryControlLegacy(uint32_t id, V4L2ControlInfo& control)
{
    v4l2_queryctrl query {};
    query.id = id;
    if (const int r = xioctl(VIDIOC_QUERYCTRL, &query); r < 0)
        return r;
    control = controlInfo(query);
    return 0;
}

int V4L2Device::queryControl(uint32_t id, V4L2ControlInfo& control)
{
    v4l2_query_ext_ctrl query {};
    query.id = id;
    int r = xioctl(VIDIOC_QUERY_EXT_CTRL, &query);
    if (r == -ENOTTY) // before Linux 3.17; the old ioctl knows nothing of compound controls
        r = queryControlLegacy(id & ~V4L2_CTRL_FLAG_NEXT_COMPOUND, control);
    else if (r == 0) {
        control = controlInfo(query);
        control.elements = query.elems;
    }
    if (r < 0)
        return r;
    return queryMenu(control);
}

int V4L2Device::queryControls(std::vector<V4L2ControlInfo>& controls)
{
    controls.clear();
    uint32_t id = 0;
    for (;;) {
        V4L2ControlInfo control;
        const int r =
            queryControl(id | V4L2_CTRL_FLAG_NEXT_CTRL | V4L2_CTRL_FLAG_NEXT_COMPOUND, control);
        if (r == -EINVAL) // past the last control
            return 0;
        if (r < 0)
            return r;
        if (control.id <= id) // a driver that does not advance would loop forever
            return 0;
        id = control.id;
        if (control.type == V4L2_CTRL_TYPE_CTRL_CLASS ||
            (control.flags & V4L2_CTRL_FLAG_DISABLED) != 0)
            continue;
        controls.push_back(std::move(control));
    }
}

int V4L2Device::getControl(const V4L2ControlInfo& control, int64_t& value)
{
    return accessControl(control, value, false);
}

int V4L2Device::setControl(const V4L2ControlInfo& control, int64_t& value)
{
    return accessControl(control, value, true);
}

int V4L2Device::accessControl(const V4L2ControlInfo& control, int64_t& value, bool set)
{
    const bool wide = control.type == V4L2_CTRL_TYPE_INTEGER64;
    if (extControls_) {
        v4l2_ext_control ctrl {};
        ctrl.id = control.id;
        if (set && wide)
            ctrl.value64 = value;
        else if (set)
            ctrl.value = static_cast<int32_t>(value);
        v4l2_ext_controls ctrls {};
        ctrls.which = V4L2_CTRL_WHICH_CUR_VAL;
        ctrls.count = 1;
        ctrls.controls = &ctrl;
        const int r = xioctl(set ? VIDIOC_S_EXT_CTRLS : VIDIOC_G_EXT_CTRLS, &ctrls);
        if (r == 0) {
            value = wide ? ctrl.value64 : ctrl.value;
            return 0;
        }
        if (r != -ENOTTY)
            return r;
        extControls_ = false;
    }
    if (wide)
        return -ENOTTY;
    v4l2_control ctrl {};
    ctrl.id = control.id;
    if (set)
        ctrl.value = static_cast<int32_t>(value);
    if (const int r = xioctl(set ? VIDIOC_S_CTRL : VIDIOC_G_CTRL, &ctrl); r < 0)
        return r;
    value = ctrl.value;
    return 0;
}

int V4L2Device::getFormat(v4l2_format& format)
{
    format = v4l2_format();
    return captureIoctl(VIDIOC_G_FMT, format);
}

int V4L2Device::setFormat(v4l2_format& format)
{
    return captureIoctl(VIDIOC_S_FMT, format);
}

int V4L2Device::tryFormat(v4l2_format& format)
{
    return captureIoctl(VIDIOC_TRY_FMT, format);
}

int V4L2Device::getParm(v4l2_streamparm& parm)
{
    parm = v4l2_streamparm();
    return captureIoctl(VIDIOC_G_PARM, parm);
}

int V4L2Device::setParm(v4l2_streamparm& parm)
{
    return captureIoctl(VIDIOC_S_PARM, parm);
}

int V4L2Device::allocateBuffers(unsigned count)
{
    if (!buffers_.empty())
        return -EBUSY;
    v4l2_requestbuffers request {};
    request.count = count;
    request.type = kCaptureType;
    request.memory = V4L2_MEMORY_MMAP;
    if (const int r = xioctl(VIDIOC_REQBUFS, &request); r < 0)
        return r;
    if (request.count == 0)
        return -ENOMEM;

    for (uint32_t index = 0; index < request.count; ++index) {
        v4l2_buffer buffer {};
        buffer.index = index;
        buffer.type = kCaptureType;
        buffer.memory = V4L2_MEMORY_MMAP;
        int r = xioctl(VIDIOC_QUERYBUF, &buffer);
        void* data = MAP_FAILED;
        if (r == 0) {
            data = io_.mmap(buffer.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                static_cast<off_t>(buffer.m.offset));
            if (data == MAP_FAILED)
                r = -errno;
        }
        if (r < 0) {
            releaseBuffers();
            return r;
        }
        buffers_.push_back(Buffer {data, buffer.length});
    }
    return static_cast<int>(request.count);
}

void V4L2Device::unmapBuffers()
{
    for (const Buffer& buffer : buffers_)
        io_.munmap(buffer.data, buffer.length);
    buffers_.clear();
}

int V4L2Device::releaseBuffers()
{
    unmapBuffers();
    v4l2_requestbuffers request {};
    request.count = 0;
    request.type = kCaptureType;
    request.memory = V4L2_MEMORY_MMAP;
    return xioctl(VIDIOC_REQBUFS, &request);
}

int V4L2Device::queueBuffer(uint32_t index)
{
    if (index >= buffers_.size())
        return -EINVAL;
    v4l2_buffer buffer {};
    buffer.index = index;
    buffer.type = kCaptureType;
    buffer.memory = V4L2_MEMORY_MMAP;
    return xioctl(VIDIOC_QBUF, &buffer);
}

int V4L2Device::dequeueBuffer(v4l2_buffer& buffer)
{
    buffer = v4l2_buffer();
    buffer.type = kCaptureType;
    buffer.memory = V4L2_MEMORY_MMAP;
    return xioctl(VIDIOC_DQBUF, &buffer);
}

int V4L2Device::streamOn()
{
    int type = kCaptureType;
    const int r = xioctl(VIDIOC_STREAMON, &type);
    if (r == 0)
        streaming_ = true;
    return r;
}

int V4L2Device::streamOff()
{
    int type = kCaptureType;
    // Streaming is over for this process whether or not the driver still answers.
    streaming_ = false;
    return xioctl(VIDIOC_STREAMOFF, &type);
}

int V4L2Device::waitReadable(int timeoutMs)
{
    if (fd_ < 0)
        return -EBADF;
    pollfd entry {};
    entry.fd = fd_;
    entry.events = POLLIN;
    const int r = io_.poll(&entry, 1, timeoutMs);
    if (r < 0)
        return errno == EINTR ? 0 : -errno;
    if (r == 0)
        return 0;
    if ((entry.revents & POLLHUP) != 0)
        return -ENODEV;
    if ((entry.revents & POLLNVAL) != 0)
        return -EBADF;
    if ((entry.revents & POLLERR) != 0)
        return -EIO;
    return (entry.revents & POLLIN) != 0 ? 1 : 0;
}

} // namespace jetagent
