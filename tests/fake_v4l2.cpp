// The fake V4L2 driver: format negotiation, controls, mmap buffers and frames as the kernel's
// videobuf2 drivers answer them, with unplug, stall and fault injection for tests.
#include "fake_v4l2.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <utility>

#include "jetagent/base/clock.h"
#include "jetagent/base/text.h"

namespace jetagent::test {

namespace {

constexpr uint32_t kMaxBuffers = 32;
constexpr unsigned kOffsetShift = 20; // mmap offset of buffer i: i << 20, page aligned as drivers'

bool isCaptureType(uint32_t type)
{
    return type == V4L2_BUF_TYPE_VIDEO_CAPTURE;
}

// bytesperline and sizeimage as drivers report them for the formats jetagent knows.
void fillLayout(v4l2_pix_format& pix, bool compressed, uint32_t padding)
{
    uint32_t lineBytes = pix.width * 2;
    uint32_t planeFactorNum = 1; // sizeimage = bytesperline * height * num / den
    uint32_t planeFactorDen = 1;
    switch (pix.pixelformat) {
    case V4L2_PIX_FMT_GREY: lineBytes = pix.width; break;
    case V4L2_PIX_FMT_RGB24:
    case V4L2_PIX_FMT_BGR24: lineBytes = pix.width * 3; break;
    case V4L2_PIX_FMT_NV12:
        lineBytes = pix.width;
        planeFactorNum = 3;
        planeFactorDen = 2;
        break;
    default: break;
    }
    if (compressed) {
        pix.bytesperline = 0;
        pix.sizeimage = pix.width * pix.height * 2; // room for any frame of that size
        return;
    }
    pix.bytesperline = lineBytes + padding;
    pix.sizeimage = pix.bytesperline * pix.height * planeFactorNum / planeFactorDen;
}

double fpsOf(const FakeInterval& interval)
{
    return interval.numerator == 0
        ? 0.0
        : static_cast<double>(interval.denominator) / static_cast<double>(interval.numerator);
}

timeval toTimeval(int64_t ns)
{
    timeval tv {};
    tv.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
    tv.tv_usec = static_cast<suseconds_t>((ns % 1'000'000'000) / 1000);
    return tv;
}

} // namespace

struct FakeV4L2::Device {
    struct Buffer {
        std::shared_ptr<std::vector<uint8_t>> memory;
        bool queued = false;
        bool mapped = false;
        uint64_t dataVersion = 0; // which setFrameData() bytes the memory holds (0: none)
    };

    FakeDevice config; // as plugged in; replug() returns to it
    std::string path;
    bool present = true;
    uint64_t generation = 0;

    // Driver state, reset by plug().
    uint32_t fourcc = 0;
    uint32_t width = 0;
    uint32_t height = 0;
    FakeInterval interval;
    std::vector<FakeControl> controls;
    std::vector<Buffer> buffers;
    std::deque<uint32_t> queue; // buffer indices in the order they were queued
    int owner = -1; // the descriptor that allocated the buffers
    bool streaming = false;
    uint32_t nextSequence = 0;
    std::deque<FakeFrame> pending;
    uint32_t dropNext = 0; // dropFrames() for the next frame queued

    // Test settings, kept across plug cycles.
    bool freeRunning = false;
    bool stalled = false;
    FrameFiller filler;
    std::vector<uint8_t> data;
    uint64_t dataVersion = 0;
    std::map<unsigned long, int> failures;
    int openError = 0;
    FakeCounters counters;

    void plug()
    {
        present = true;
        ++generation;
        controls = config.controls;
        std::sort(controls.begin(), controls.end(),
            [](const FakeControl& a, const FakeControl& b) { return a.id < b.id; });
        buffers.clear();
        queue.clear();
        owner = -1;
        streaming = false;
        nextSequence = 0;
        pending.clear();
        dropNext = 0;
        counters.buffersAllocated = 0;
        counters.buffersQueued = 0;

        const FakeFormat* format = findFormat(config.fourcc);
        if (format == nullptr && !config.formats.empty())
            format = &config.formats.front();
        fourcc = format != nullptr ? format->fourcc : 0;
        width = config.width;
        height = config.height;
        if (format != nullptr && (width == 0 || height == 0)) {
            if (format->stepwise) {
                width = format->stepwise->maxWidth;
                height = format->stepwise->maxHeight;
            } else if (!format->sizes.empty()) {
                width = format->sizes.front().width;
                height = format->sizes.front().height;
            }
        }
        interval = config.interval;
        const auto* offered = intervalsAt(fourcc, width, height);
        if ((interval.numerator == 0 || interval.denominator == 0) && offered != nullptr &&
            !offered->empty())
            interval = offered->front();
    }

    const FakeFormat* findFormat(uint32_t pixelFormat) const
    {
        for (const FakeFormat& format : config.formats)
            if (format.fourcc == pixelFormat)
                return &format;
        return nullptr;
    }

    // The intervals offered at a size; nullptr when the size is not offered.
    const std::vector<FakeInterval>* intervalsAt(uint32_t pixelFormat, uint32_t w, uint32_t h) const
    {
        const FakeFormat* format = findFormat(pixelFormat);
        if (format == nullptr)
            return nullptr;
        if (format->stepwise) {
            const FakeStepwise& s = *format->stepwise;
            const uint32_t stepW = std::max<uint32_t>(s.stepWidth, 1);
            const uint32_t stepH = std::max<uint32_t>(s.stepHeight, 1);
            if (w < s.minWidth || w > s.maxWidth || h < s.minHeight || h > s.maxHeight ||
                (w - s.minWidth) % stepW != 0 || (h - s.minHeight) % stepH != 0)
                return nullptr;
            return &s.intervals;
        }
        for (const FakeSize& size : format->sizes)
            if (size.width == w && size.height == h)
                return &size.intervals;
        return nullptr;
    }

    FakeControl* findControl(uint32_t id)
    {
        for (FakeControl& control : controls)
            if (control.id == id)
                return &control;
        return nullptr;
    }

    uint32_t controlFlags(const FakeControl& control)
    {
        uint32_t flags = control.flags;
        if (control.type == V4L2_CTRL_TYPE_CTRL_CLASS)
            flags |= V4L2_CTRL_FLAG_READ_ONLY | V4L2_CTRL_FLAG_WRITE_ONLY;
        if (control.activeIfId != 0) {
            const FakeControl* other = findControl(control.activeIfId);
            if (other == nullptr || other->value != control.activeIfValue)
                flags |= V4L2_CTRL_FLAG_INACTIVE;
        }
        return flags;
    }

    // What S_FMT / TRY_FMT make of a request: the nearest thing the driver can do.
    void adjust(v4l2_pix_format& pix) const
    {
        const FakeFormat* format = findFormat(pix.pixelformat);
        if (format == nullptr && !config.formats.empty())
            format = &config.formats.front();
        if (format == nullptr)
            return;
        pix.pixelformat = format->fourcc;
        if (format->stepwise) {
            const FakeStepwise& s = *format->stepwise;
            // Onto the range, then the nearest step that stays inside it.
            auto snap = [](uint32_t value, uint32_t lo, uint32_t hi, uint32_t step) {
                value = std::clamp(value, lo, hi);
                step = std::max<uint32_t>(step, 1);
                const uint32_t rounded = lo + (value - lo + step / 2) / step * step;
                return rounded > hi ? rounded - step : rounded;
            };
            pix.width = snap(pix.width, s.minWidth, s.maxWidth, s.stepWidth);
            pix.height = snap(pix.height, s.minHeight, s.maxHeight, s.stepHeight);
        } else if (!format->sizes.empty()) {
            const FakeSize* best = &format->sizes.front();
            int64_t bestDistance = INT64_MAX;
            for (const FakeSize& size : format->sizes) {
                const int64_t distance = std::llabs(static_cast<int64_t>(size.width) - pix.width) +
                    std::llabs(static_cast<int64_t>(size.height) - pix.height);
                if (distance < bestDistance) {
                    bestDistance = distance;
                    best = &size;
                }
            }
            pix.width = best->width;
            pix.height = best->height;
        }
        pix.field = V4L2_FIELD_NONE;
        pix.colorspace = V4L2_COLORSPACE_SRGB;
        fillLayout(pix, format->compressed, config.linePadding);
    }

    v4l2_pix_format currentFormat() const
    {
        v4l2_pix_format pix {};
        pix.width = width;
        pix.height = height;
        pix.pixelformat = fourcc;
        pix.field = V4L2_FIELD_NONE;
        pix.colorspace = V4L2_COLORSPACE_SRGB;
        const FakeFormat* format = findFormat(fourcc);
        fillLayout(pix, format != nullptr && format->compressed, config.linePadding);
        return pix;
    }

    bool frameReady() const
    {
        return present && streaming && !stalled && !queue.empty() &&
            (freeRunning || !pending.empty());
    }

    // The content step: writes the frame's bytes into buffer `index`, returns bytesused.
    uint32_t fill(Buffer& buffer, uint32_t sequence)
    {
        std::vector<uint8_t>& memory = *buffer.memory;
        if (filler)
            return filler(memory.data(), memory.size(), sequence);
        if (!data.empty()) {
            const size_t bytes = std::min(data.size(), memory.size());
            if (buffer.dataVersion != dataVersion) {
                std::memcpy(memory.data(), data.data(), bytes);
                buffer.dataVersion = dataVersion;
            }
            return static_cast<uint32_t>(bytes);
        }
        buffer.dataVersion = 0;
        const uint32_t bytes = currentFormat().sizeimage;
        std::memset(memory.data(), static_cast<int>(sequence & 0xff),
            std::min<size_t>(bytes, memory.size()));
        return bytes;
    }
};

FakeV4L2::FakeV4L2() = default;

FakeV4L2::FakeV4L2(const std::vector<FakeDevice>& devices)
{
    for (const FakeDevice& device : devices)
        addDevice(device);
}

FakeV4L2::~FakeV4L2() = default;

void FakeV4L2::addDevice(const FakeDevice& device)
{
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& existing : devices_)
        if (existing->path == device.path && existing->present) {
            std::fprintf(stderr, "FakeV4L2: %s is already plugged in\n", device.path.c_str());
            std::abort();
        }
    auto added = std::make_unique<Device>();
    added->config = device;
    added->path = device.path;
    added->plug();
    devices_.push_back(std::move(added));
    changed_.notify_all();
}

FakeV4L2::Device& FakeV4L2::find(const std::string& path) const
{
    // A present device wins over an unplugged one that had the same path.
    Device* match = nullptr;
    for (const auto& device : devices_)
        if (device->path == path && (match == nullptr || device->present))
            match = device.get();
    if (match == nullptr) {
        std::fprintf(stderr, "FakeV4L2: no device %s\n", path.c_str());
        std::abort();
    }
    return *match;
}

void FakeV4L2::queueFrames(const std::string& path, int count)
{
    std::lock_guard<std::mutex> lock(mutex_);
    Device& device = find(path);
    for (int i = 0; i < count; ++i) {
        device.pending.emplace_back();
        device.pending.back().dropBefore = std::exchange(device.dropNext, 0);
    }
    changed_.notify_all();
}

void FakeV4L2::queueFrame(const std::string& path, const FakeFrame& frame)
{
    std::lock_guard<std::mutex> lock(mutex_);
    Device& device = find(path);
    device.pending.push_back(frame);
    device.pending.back().dropBefore += std::exchange(device.dropNext, 0);
    changed_.notify_all();
}

void FakeV4L2::dropFrames(const std::string& path, uint32_t count)
{
    std::lock_guard<std::mutex> lock(mutex_);
    find(path).dropNext += count;
}

void FakeV4L2::setFreeRunning(const std::string& path, bool freeRunning)
{
    std::lock_guard<std::mutex> lock(mutex_);
    find(path).freeRunning = freeRunning;
    changed_.notify_all();
}

size_t FakeV4L2::pendingFrames(const std::string& path) const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return find(path).pending.size();
}

void FakeV4L2::setFrameFiller(const std::string& path, FrameFiller filler)
{
    std::lock_guard<std::mutex> lock(mutex_);
    find(path).filler = std::move(filler);
}

void FakeV4L2::setFrameData(const std::string& path, std::vector<uint8_t> data)
{
    std::lock_guard<std::mutex> lock(mutex_);
    Device& device = find(path);
    device.data = std::move(data);
    ++device.dataVersion;
}

void FakeV4L2::setTimestampFlags(const std::string& path, uint32_t flags)
{
    std::lock_guard<std::mutex> lock(mutex_);
    find(path).config.timestampFlags = flags;
}

void FakeV4L2::setStalled(const std::string& path, bool stalled)
{
    std::lock_guard<std::mutex> lock(mutex_);
    find(path).stalled = stalled;
    changed_.notify_all();
}

void FakeV4L2::unplug(const std::string& path)
{
    std::lock_guard<std::mutex> lock(mutex_);
    Device& device = find(path);
    device.present = false;
    device.pending.clear();
    changed_.notify_all();
}

void FakeV4L2::replug(const std::string& path, const std::string& newPath)
{
    std::lock_guard<std::mutex> lock(mutex_);
    Device& device = find(path);
    if (!newPath.empty())
        device.path = newPath;
    device.plug();
    changed_.notify_all();
}

void FakeV4L2::failIoctl(const std::string& path, unsigned long request, int error)
{
    std::lock_guard<std::mutex> lock(mutex_);
    find(path).failures[request] = error;
}

void FakeV4L2::setOpenError(const std::string& path, int error)
{
    std::lock_guard<std::mutex> lock(mutex_);
    find(path).openError = error;
}

void FakeV4L2::clearFailures(const std::string& path)
{
    std::lock_guard<std::mutex> lock(mutex_);
    Device& device = find(path);
    device.failures.clear();
    device.openError = 0;
}

void FakeV4L2::setPollWaitLimitMs(int limitMs)
{
    std::lock_guard<std::mutex> lock(mutex_);
    pollWaitLimitMs_ = limitMs;
}

FakeCounters FakeV4L2::counters(const std::string& path) const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return find(path).counters;
}

v4l2_pix_format FakeV4L2::format(const std::string& path) const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return find(path).currentFormat();
}

FakeInterval FakeV4L2::interval(const std::string& path) const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return find(path).interval;
}

int64_t FakeV4L2::controlValue(const std::string& path, uint32_t id) const
{
    std::lock_guard<std::mutex> lock(mutex_);
    const FakeControl* control = find(path).findControl(id);
    return control != nullptr ? control->value : 0;
}

bool FakeV4L2::streaming(const std::string& path) const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return find(path).streaming;
}

// --- V4L2Io
// ---------------------------------------------------------------------------------------

int FakeV4L2::open(const char* path, int /*flags*/)
{
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& device : devices_) {
        if (!device->present || device->path != path)
            continue;
        if (device->openError != 0) {
            errno = device->openError;
            return -1;
        }
        const int fd = nextFd_++;
        files_[fd] = OpenFile {device.get(), device->generation};
        ++device->counters.opens;
        ++device->counters.openFiles;
        return fd;
    }
    errno = ENOENT;
    return -1;
}

int FakeV4L2::close(int fd)
{
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = files_.find(fd);
    if (it == files_.end()) {
        errno = EBADF;
        return -1;
    }
    Device& device = *it->second.device;
    --device.counters.openFiles;
    // Closing the owner frees its queue, as vb2_fop_release does; a descriptor from an earlier
    // plug cycle owns nothing now.
    if (it->second.generation == device.generation && device.owner == fd) {
        device.streaming = false;
        device.queue.clear();
        for (auto& buffer : device.buffers)
            buffer.queued = false;
        device.buffers.clear();
        device.owner = -1;
        device.counters.buffersAllocated = 0;
        device.counters.buffersQueued = 0;
    }
    files_.erase(it);
    changed_.notify_all();
    return 0;
}

FakeV4L2::Device* FakeV4L2::liveDevice(int fd, int& error)
{
    const auto it = files_.find(fd);
    if (it == files_.end()) {
        error = EBADF;
        return nullptr;
    }
    Device* device = it->second.device;
    if (!device->present || it->second.generation != device->generation) {
        error = ENODEV;
        return nullptr;
    }
    return device;
}

int FakeV4L2::ioctl(int fd, unsigned long request, void* arg)
{
    std::lock_guard<std::mutex> lock(mutex_);
    int error = 0;
    Device* device = liveDevice(fd, error);
    if (device == nullptr) {
        errno = error;
        return -1;
    }
    if (const auto it = device->failures.find(request); it != device->failures.end()) {
        errno = it->second;
        return -1;
    }
    error = dispatch(*device, fd, request, arg);
    changed_.notify_all();
    if (error != 0) {
        errno = error;
        return -1;
    }
    return 0;
}

// Answers one ioctl: 0 or a positive errno.
int FakeV4L2::dispatch(Device& device, int fd, unsigned long request, void* arg)
{
    const FakeDevice& config = device.config;
    switch (request) {
    case VIDIOC_QUERYCAP: {
        auto& cap = *static_cast<v4l2_capability*>(arg);
        cap = v4l2_capability();
        std::snprintf(
            reinterpret_cast<char*>(cap.driver), sizeof cap.driver, "%s", config.driver.c_str());
        std::snprintf(
            reinterpret_cast<char*>(cap.card), sizeof cap.card, "%s", config.card.c_str());
        std::snprintf(reinterpret_cast<char*>(cap.bus_info), sizeof cap.bus_info, "%s",
            config.busInfo.c_str());
        cap.version = config.version;
        cap.device_caps = config.caps;
        cap.capabilities = config.caps | V4L2_CAP_DEVICE_CAPS;
        return 0;
    }
    case VIDIOC_ENUM_FMT: {
        auto& desc = *static_cast<v4l2_fmtdesc*>(arg);
        if (!isCaptureType(desc.type) || desc.index >= config.formats.size())
            return EINVAL;
        const FakeFormat& format = config.formats[desc.index];
        const uint32_t index = desc.index;
        desc = v4l2_fmtdesc();
        desc.index = index;
        desc.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        desc.pixelformat = format.fourcc;
        desc.flags = format.compressed ? V4L2_FMT_FLAG_COMPRESSED : 0;
        std::snprintf(reinterpret_cast<char*>(desc.description), sizeof desc.description, "%s",
            format.description.c_str());
        return 0;
    }
    case VIDIOC_ENUM_FRAMESIZES: {
        auto& size = *static_cast<v4l2_frmsizeenum*>(arg);
        const FakeFormat* format = device.findFormat(size.pixel_format);
        if (format == nullptr)
            return EINVAL;
        if (format->stepwise) {
            if (size.index != 0)
                return EINVAL;
            const FakeStepwise& s = *format->stepwise;
            size.type = s.stepWidth <= 1 && s.stepHeight <= 1 ? V4L2_FRMSIZE_TYPE_CONTINUOUS
                                                              : V4L2_FRMSIZE_TYPE_STEPWISE;
            size.stepwise = {s.minWidth, s.maxWidth, std::max<uint32_t>(s.stepWidth, 1),
                s.minHeight, s.maxHeight, std::max<uint32_t>(s.stepHeight, 1)};
            return 0;
        }
        if (size.index >= format->sizes.size())
            return EINVAL;
        size.type = V4L2_FRMSIZE_TYPE_DISCRETE;
        size.discrete = {format->sizes[size.index].width, format->sizes[size.index].height};
        return 0;
    }
    case VIDIOC_ENUM_FRAMEINTERVALS: {
        auto& interval = *static_cast<v4l2_frmivalenum*>(arg);
        const auto* intervals =
            device.intervalsAt(interval.pixel_format, interval.width, interval.height);
        if (intervals == nullptr || interval.index >= intervals->size())
            return EINVAL;
        interval.type = V4L2_FRMIVAL_TYPE_DISCRETE;
        interval.discrete = {
            (*intervals)[interval.index].numerator, (*intervals)[interval.index].denominator};
        return 0;
    }
    case VIDIOC_G_FMT: {
        auto& format = *static_cast<v4l2_format*>(arg);
        if (!isCaptureType(format.type))
            return EINVAL;
        format.fmt.pix = device.currentFormat();
        return 0;
    }
    case VIDIOC_TRY_FMT:
    case VIDIOC_S_FMT: {
        auto& format = *static_cast<v4l2_format*>(arg);
        if (!isCaptureType(format.type))
            return EINVAL;
        if (request == VIDIOC_S_FMT && !device.buffers.empty())
            return EBUSY;
        device.adjust(format.fmt.pix);
        if (request == VIDIOC_TRY_FMT)
            return 0;
        ++device.counters.setFormat;
        device.fourcc = format.fmt.pix.pixelformat;
        device.width = format.fmt.pix.width;
        device.height = format.fmt.pix.height;
        const auto* intervals = device.intervalsAt(device.fourcc, device.width, device.height);
        if (intervals != nullptr && !intervals->empty() &&
            std::none_of(intervals->begin(), intervals->end(), [&](const FakeInterval& i) {
                return i.numerator == device.interval.numerator &&
                    i.denominator == device.interval.denominator;
            }))
            device.interval = intervals->front();
        return 0;
    }
    case VIDIOC_G_PARM:
    case VIDIOC_S_PARM: {
        auto& parm = *static_cast<v4l2_streamparm*>(arg);
        if (!isCaptureType(parm.type))
            return EINVAL;
        if (request == VIDIOC_S_PARM) {
            ++device.counters.setParm;
            const auto* intervals = device.intervalsAt(device.fourcc, device.width, device.height);
            const FakeInterval asked {parm.parm.capture.timeperframe.numerator,
                parm.parm.capture.timeperframe.denominator};
            if (config.timePerFrame && intervals != nullptr && !intervals->empty()) {
                // The offered interval nearest in rate; 0/0 asks for the default (the first).
                const FakeInterval* best = &intervals->front();
                if (asked.numerator != 0 && asked.denominator != 0)
                    for (const FakeInterval& i : *intervals)
                        if (std::abs(fpsOf(i) - fpsOf(asked)) <
                            std::abs(fpsOf(*best) - fpsOf(asked)))
                            best = &i;
                device.interval = *best;
            }
        }
        parm.parm.capture = v4l2_captureparm();
        parm.parm.capture.capability = config.timePerFrame ? V4L2_CAP_TIMEPERFRAME : 0;
        parm.parm.capture.timeperframe = {device.interval.numerator, device.interval.denominator};
        return 0;
    }
    case VIDIOC_QUERYCTRL:
    case VIDIOC_QUERY_EXT_CTRL: {
        const bool ext = request == VIDIOC_QUERY_EXT_CTRL;
        const uint32_t asked = ext ? static_cast<v4l2_query_ext_ctrl*>(arg)->id
                                   : static_cast<v4l2_queryctrl*>(arg)->id;
        const uint32_t nextFlags = V4L2_CTRL_FLAG_NEXT_CTRL | V4L2_CTRL_FLAG_NEXT_COMPOUND;
        const uint32_t id = asked & ~nextFlags;
        const FakeControl* control = nullptr;
        if ((asked & nextFlags) != 0) {
            for (const FakeControl& c : device.controls)
                if (c.id > id) {
                    control = &c;
                    break;
                }
        } else {
            control = device.findControl(id);
        }
        if (control == nullptr)
            return EINVAL;
        const uint32_t flags = device.controlFlags(*control);
        if (ext) {
            auto& query = *static_cast<v4l2_query_ext_ctrl*>(arg);
            query = v4l2_query_ext_ctrl();
            query.id = control->id;
            query.type = control->type;
            std::snprintf(query.name, sizeof query.name, "%s", control->label.c_str());
            query.minimum = control->minimum;
            query.maximum = control->maximum;
            query.step = static_cast<uint64_t>(control->step);
            query.default_value = control->defaultValue;
            query.flags = flags;
            query.elem_size = control->type == V4L2_CTRL_TYPE_INTEGER64 ? 8 : 4;
            query.elems = 1;
        } else {
            auto& query = *static_cast<v4l2_queryctrl*>(arg);
            query = v4l2_queryctrl();
            query.id = control->id;
            query.type = control->type;
            std::snprintf(reinterpret_cast<char*>(query.name), sizeof query.name, "%s",
                control->label.c_str());
            query.minimum = static_cast<int32_t>(control->minimum);
            query.maximum = static_cast<int32_t>(control->maximum);
            query.step = static_cast<int32_t>(control->step);
            query.default_value = static_cast<int32_t>(control->defaultValue);
            query.flags = flags;
        }
        return 0;
    }
    case VIDIOC_QUERYMENU: {
        auto& entry = *static_cast<v4l2_querymenu*>(arg);
        const FakeControl* control = device.findControl(entry.id);
        if (control == nullptr || control->type != V4L2_CTRL_TYPE_MENU ||
            entry.index < control->minimum || entry.index > control->maximum ||
            entry.index >= control->menu.size() || control->menu[entry.index].empty())
            return EINVAL;
        std::snprintf(reinterpret_cast<char*>(entry.name), sizeof entry.name, "%s",
            control->menu[entry.index].c_str());
        return 0;
    }
    case VIDIOC_G_CTRL:
    case VIDIOC_S_CTRL:
    case VIDIOC_G_EXT_CTRLS:
    case VIDIOC_S_EXT_CTRLS: {
        const bool ext = request == VIDIOC_G_EXT_CTRLS || request == VIDIOC_S_EXT_CTRLS;
        const bool set = request == VIDIOC_S_CTRL || request == VIDIOC_S_EXT_CTRLS;
        if (ext && !config.extendedControls)
            return ENOTTY;
        v4l2_ext_control* list = nullptr;
        uint32_t count = 1;
        if (ext) {
            auto& ctrls = *static_cast<v4l2_ext_controls*>(arg);
            list = ctrls.controls;
            count = ctrls.count;
        }
        for (uint32_t i = 0; i < count; ++i) {
            const uint32_t id = ext ? list[i].id : static_cast<v4l2_control*>(arg)->id;
            FakeControl* control = device.findControl(id);
            if (control == nullptr || control->type == V4L2_CTRL_TYPE_CTRL_CLASS)
                return EINVAL;
            const bool wide = control->type == V4L2_CTRL_TYPE_INTEGER64;
            if (!set) {
                if ((control->flags & V4L2_CTRL_FLAG_WRITE_ONLY) != 0)
                    return EACCES;
                if (ext && wide)
                    list[i].value64 = control->value;
                else if (ext)
                    list[i].value = static_cast<int32_t>(control->value);
                else
                    static_cast<v4l2_control*>(arg)->value = static_cast<int32_t>(control->value);
                continue;
            }
            if ((control->flags & V4L2_CTRL_FLAG_READ_ONLY) != 0)
                return EACCES;
            int64_t value = ext ? (wide ? list[i].value64 : list[i].value)
                                : static_cast<v4l2_control*>(arg)->value;
            // The kernel's control framework: integers are clamped onto the range and its steps,
            // booleans normalised, menus checked.
            switch (control->type) {
            case V4L2_CTRL_TYPE_INTEGER:
            case V4L2_CTRL_TYPE_INTEGER64: {
                const int64_t step = std::max<int64_t>(control->step, 1);
                value = std::clamp(value, control->minimum, control->maximum);
                value = control->minimum + (value - control->minimum + step / 2) / step * step;
                if (value > control->maximum)
                    value -= step;
                break;
            }
            case V4L2_CTRL_TYPE_BOOLEAN: value = value != 0 ? 1 : 0; break;
            case V4L2_CTRL_TYPE_MENU:
                if (value < control->minimum || value > control->maximum)
                    return ERANGE;
                if (static_cast<size_t>(value) >= control->menu.size() ||
                    control->menu[static_cast<size_t>(value)].empty())
                    return EINVAL;
                break;
            default: return EINVAL;
            }
            control->value = value;
            ++device.counters.setControl;
            if (ext && wide)
                list[i].value64 = value;
            else if (ext)
                list[i].value = static_cast<int32_t>(value);
            else
                static_cast<v4l2_control*>(arg)->value = static_cast<int32_t>(value);
        }
        return 0;
    }
    case VIDIOC_REQBUFS: {
        auto& req = *static_cast<v4l2_requestbuffers*>(arg);
        if (!isCaptureType(req.type) || req.memory != V4L2_MEMORY_MMAP)
            return EINVAL;
        if (device.owner >= 0 && device.owner != fd)
            return EBUSY;
        if (device.streaming)
            return EBUSY;
        device.buffers.clear();
        device.queue.clear();
        device.owner = -1;
        if (req.count > 0) {
            const uint32_t granted = config.grantBuffers > 0
                ? config.grantBuffers
                : std::min<uint32_t>(req.count, kMaxBuffers);
            const size_t bytes = device.currentFormat().sizeimage;
            for (uint32_t i = 0; i < granted; ++i) {
                Device::Buffer buffer;
                buffer.memory = std::make_shared<std::vector<uint8_t>>(bytes);
                device.buffers.push_back(std::move(buffer));
            }
            req.count = granted;
            device.owner = fd;
        }
        req.capabilities = V4L2_BUF_CAP_SUPPORTS_MMAP;
        ++device.counters.requestBuffers;
        device.counters.buffersAllocated = static_cast<int>(device.buffers.size());
        device.counters.buffersQueued = 0;
        return 0;
    }
    case VIDIOC_QUERYBUF:
    case VIDIOC_QBUF:
    case VIDIOC_DQBUF: {
        auto& buf = *static_cast<v4l2_buffer*>(arg);
        if (!isCaptureType(buf.type) || buf.memory != V4L2_MEMORY_MMAP)
            return EINVAL;
        if (request != VIDIOC_QUERYBUF && device.owner != fd)
            return EBUSY;
        if (request == VIDIOC_DQBUF) {
            if (!device.streaming)
                return EINVAL;
            if (!device.frameReady())
                return EAGAIN;
            FakeFrame frame;
            if (!device.pending.empty()) {
                frame = device.pending.front();
                device.pending.pop_front();
            } else {
                frame.dropBefore = std::exchange(device.dropNext, 0);
            }
            const uint32_t index = device.queue.front();
            device.queue.pop_front();
            Device::Buffer& buffer = device.buffers[index];
            buffer.queued = false;
            const uint32_t sequence =
                frame.sequence.value_or(device.nextSequence + frame.dropBefore);
            device.nextSequence = sequence + 1;
            const uint32_t written = device.fill(buffer, sequence);
            buf = v4l2_buffer();
            buf.index = index;
            buf.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
            buf.memory = V4L2_MEMORY_MMAP;
            buf.bytesused = frame.bytesUsed.value_or(written);
            buf.length = static_cast<uint32_t>(buffer.memory->size());
            buf.m.offset = index << kOffsetShift;
            buf.field = V4L2_FIELD_NONE;
            buf.sequence = sequence;
            buf.timestamp = toTimeval(frame.timestampNs.value_or(monotonicNs()));
            buf.flags = config.timestampFlags | V4L2_BUF_FLAG_TSTAMP_SRC_SOE |
                (buffer.mapped ? V4L2_BUF_FLAG_MAPPED : 0) |
                (frame.error ? V4L2_BUF_FLAG_ERROR : 0);
            ++device.counters.dequeueBuffer;
            device.counters.buffersQueued = static_cast<int>(device.queue.size());
            return 0;
        }
        if (buf.index >= device.buffers.size())
            return EINVAL;
        Device::Buffer& buffer = device.buffers[buf.index];
        if (request == VIDIOC_QBUF) {
            if (buffer.queued)
                return EINVAL;
            buffer.queued = true;
            device.queue.push_back(buf.index);
            buf.flags = V4L2_BUF_FLAG_QUEUED | (buffer.mapped ? V4L2_BUF_FLAG_MAPPED : 0);
            ++device.counters.queueBuffer;
            device.counters.buffersQueued = static_cast<int>(device.queue.size());
            return 0;
        }
        buf.length = static_cast<uint32_t>(buffer.memory->size());
        buf.m.offset = buf.index << kOffsetShift;
        buf.bytesused = 0;
        buf.flags = (buffer.queued ? V4L2_BUF_FLAG_QUEUED : 0) |
            (buffer.mapped ? V4L2_BUF_FLAG_MAPPED : 0) | config.timestampFlags;
        return 0;
    }
    case VIDIOC_STREAMON:
    case VIDIOC_STREAMOFF: {
        if (!isCaptureType(static_cast<uint32_t>(*static_cast<int*>(arg))))
            return EINVAL;
        if (device.owner != fd)
            return device.owner < 0 ? EINVAL : EBUSY;
        if (request == VIDIOC_STREAMON) {
            if (device.streaming)
                return 0;
            device.streaming = true;
            device.nextSequence = 0;
            ++device.counters.streamOn;
            return 0;
        }
        device.streaming = false;
        for (uint32_t index : device.queue)
            device.buffers[index].queued = false;
        device.queue.clear();
        device.counters.buffersQueued = 0;
        ++device.counters.streamOff;
        return 0;
    }
    default: return ENOTTY;
    }
}

void* FakeV4L2::mmap(size_t length, int /*prot*/, int flags, int fd, off_t offset)
{
    std::lock_guard<std::mutex> lock(mutex_);
    int error = 0;
    Device* device = liveDevice(fd, error);
    if (device == nullptr) {
        errno = error;
        return MAP_FAILED;
    }
    const auto index = static_cast<size_t>(offset >> kOffsetShift);
    if ((flags & MAP_SHARED) == 0 || offset < 0 ||
        (static_cast<uint64_t>(offset) & ((1u << kOffsetShift) - 1)) != 0 ||
        index >= device->buffers.size() || length > device->buffers[index].memory->size()) {
        errno = EINVAL;
        return MAP_FAILED;
    }
    Device::Buffer& buffer = device->buffers[index];
    buffer.mapped = true;
    Mapping& mapping = mappings_[buffer.memory->data()];
    mapping.memory = buffer.memory;
    mapping.device = device;
    ++mapping.count;
    ++device->counters.mappings;
    return buffer.memory->data();
}

int FakeV4L2::munmap(void* address, size_t /*length*/)
{
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = mappings_.find(address);
    if (it == mappings_.end()) {
        errno = EINVAL;
        return -1;
    }
    --it->second.device->counters.mappings;
    if (--it->second.count == 0)
        mappings_.erase(it);
    return 0;
}

short FakeV4L2::pollEvents(int fd) const
{
    const auto it = files_.find(fd);
    if (it == files_.end())
        return POLLNVAL;
    const Device& device = *it->second.device;
    if (!device.present || it->second.generation != device.generation)
        return POLLERR | POLLHUP | POLLPRI; // what v4l2_poll answers for an unregistered node
    if (!device.streaming || device.owner != fd)
        return POLLERR; // vb2: nothing to wait for
    return device.frameReady() ? POLLIN | POLLRDNORM : 0;
}

int FakeV4L2::poll(struct pollfd* fds, nfds_t count, int timeoutMs)
{
    std::unique_lock<std::mutex> lock(mutex_);
    auto ready = [&] {
        int n = 0;
        for (nfds_t i = 0; i < count; ++i) {
            fds[i].revents = static_cast<short>(
                pollEvents(fds[i].fd) & (fds[i].events | POLLERR | POLLHUP | POLLNVAL));
            if (fds[i].revents != 0)
                ++n;
        }
        return n;
    };
    int n = ready();
    if (n > 0 || timeoutMs == 0)
        return n;
    const int waitMs = timeoutMs < 0 ? pollWaitLimitMs_ : std::min(timeoutMs, pollWaitLimitMs_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(waitMs);
    changed_.wait_until(lock, deadline, [&] { return (n = ready()) > 0; });
    return n;
}

std::vector<std::string> FakeV4L2::listDevices()
{
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> paths;
    for (const auto& device : devices_)
        if (device->present)
            paths.push_back(device->path);
    std::sort(paths.begin(), paths.end(), naturalLess);
    return paths;
}

FakeDevice fakeWebcam(const std::string& path, const std::string& card, const std::string& busInfo)
{
    FakeDevice device;
    device.path = path;
    device.driver = "uvcvideo";
    device.card = card;
    device.busInfo = busInfo;
    device.formats = {
        {V4L2_PIX_FMT_YUYV, "YUYV 4:2:2", false,
            {{640, 480, {{1, 30}, {1, 15}}}, {1280, 720, {{1, 10}, {1, 5}}}}, std::nullopt},
        {V4L2_PIX_FMT_MJPEG, "Motion-JPEG", true,
            {{640, 480, {{1, 30}}}, {1280, 720, {{1, 30}}}, {1920, 1080, {{1, 30}}}}, std::nullopt},
        {V4L2_PIX_FMT_NV12, "Y/UV 4:2:0", false, {{640, 480, {{1, 30}}}, {1280, 720, {{1, 30}}}},
            std::nullopt},
        {V4L2_PIX_FMT_H264, "H.264", true, {{1920, 1080, {{1, 30}}}}, std::nullopt},
    };
    FakeControl userClass;
    userClass.id = V4L2_CID_USER_CLASS;
    userClass.label = "User Controls";
    userClass.type = V4L2_CTRL_TYPE_CTRL_CLASS;

    FakeControl brightness;
    brightness.id = V4L2_CID_BRIGHTNESS;
    brightness.label = "Brightness";
    brightness.maximum = 255;
    brightness.defaultValue = brightness.value = 128;

    FakeControl contrast;
    contrast.id = V4L2_CID_CONTRAST;
    contrast.label = "Contrast";
    contrast.maximum = 100;
    contrast.step = 5;
    contrast.defaultValue = contrast.value = 50;

    FakeControl whiteBalance;
    whiteBalance.id = V4L2_CID_AUTO_WHITE_BALANCE;
    whiteBalance.label = "White Balance, Automatic";
    whiteBalance.type = V4L2_CTRL_TYPE_BOOLEAN;
    whiteBalance.maximum = 1;
    whiteBalance.defaultValue = whiteBalance.value = 1;

    FakeControl powerLine;
    powerLine.id = V4L2_CID_POWER_LINE_FREQUENCY;
    powerLine.label = "Power Line Frequency";
    powerLine.type = V4L2_CTRL_TYPE_MENU;
    powerLine.maximum = 2;
    powerLine.defaultValue = powerLine.value = 1;
    powerLine.menu = {"Disabled", "50 Hz", "60 Hz"};

    FakeControl cameraClass;
    cameraClass.id = V4L2_CID_CAMERA_CLASS;
    cameraClass.label = "Camera Controls";
    cameraClass.type = V4L2_CTRL_TYPE_CTRL_CLASS;

    FakeControl autoExposure;
    autoExposure.id = V4L2_CID_EXPOSURE_AUTO;
    autoExposure.label = "Auto Exposure";
    autoExposure.type = V4L2_CTRL_TYPE_MENU;
    autoExposure.maximum = 3;
    autoExposure.defaultValue = autoExposure.value = 3;
    autoExposure.menu = {"", "Manual Mode", "", "Aperture Priority Mode"};

    FakeControl exposure;
    exposure.id = V4L2_CID_EXPOSURE_ABSOLUTE;
    exposure.label = "Exposure Time, Absolute";
    exposure.minimum = 3;
    exposure.maximum = 2047;
    exposure.defaultValue = exposure.value = 250;
    exposure.activeIfId = V4L2_CID_EXPOSURE_AUTO;
    exposure.activeIfValue = 1;

    device.controls = {userClass, brightness, contrast, whiteBalance, powerLine, cameraClass,
        autoExposure, exposure};
    return device;
}

} // namespace jetagent::test
