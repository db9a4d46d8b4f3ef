// A fake V4L2 driver behind the V4L2Io seam: capture devices that tests and benchmarks configure,
// plug, unplug, stall and feed with frames, answering the ioctls the way the kernel does.
#pragma once

#include <linux/version.h>
#include <linux/videodev2.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "jetagent/hal/v4l2_io.h"

namespace jetagent::test {

// Seconds per frame, as V4L2 writes it: {1, 30} is 30 fps.
struct FakeInterval {
    uint32_t numerator = 1;
    uint32_t denominator = 30;
};

// One discrete frame size and the intervals offered at it, in the driver's order.
struct FakeSize {
    uint32_t width = 0;
    uint32_t height = 0;
    std::vector<FakeInterval> intervals {FakeInterval {}};
};

// A range of sizes (VIDIOC_ENUM_FRAMESIZES answers STEPWISE, or CONTINUOUS when both steps are 1);
// every size in it offers the same intervals.
struct FakeStepwise {
    uint32_t minWidth = 0;
    uint32_t maxWidth = 0;
    uint32_t stepWidth = 1;
    uint32_t minHeight = 0;
    uint32_t maxHeight = 0;
    uint32_t stepHeight = 1;
    std::vector<FakeInterval> intervals {FakeInterval {}};
};

struct FakeFormat {
    uint32_t fourcc = 0; // V4L2_PIX_FMT_*
    std::string description;
    bool compressed = false; // V4L2_FMT_FLAG_COMPRESSED
    std::vector<FakeSize> sizes; // discrete sizes, or:
    std::optional<FakeStepwise> stepwise; // a range (then `sizes` is ignored)
};

struct FakeControl {
    uint32_t id = 0; // V4L2_CID_*
    std::string label; // the driver's name, "Exposure Time, Absolute"
    uint32_t type = V4L2_CTRL_TYPE_INTEGER; // INTEGER, BOOLEAN, MENU, INTEGER64, CTRL_CLASS
    int64_t minimum = 0;
    int64_t maximum = 0;
    int64_t step = 1;
    int64_t defaultValue = 0;
    int64_t value = 0; // the value at plug-in
    uint32_t flags = 0; // V4L2_CTRL_FLAG_* (READ_ONLY, WRITE_ONLY, INACTIVE, ...)
    std::vector<std::string> menu; // MENU entry names by index; "" = an index the driver skips
    // When non-zero, the control is inactive (V4L2_CTRL_FLAG_INACTIVE) unless the control with
    // this id has the value activeIfValue, as exposure_time_absolute needs auto_exposure manual.
    uint32_t activeIfId = 0;
    int64_t activeIfValue = 0;
};

// One device node as it is when plugged in.
struct FakeDevice {
    std::string path = "/dev/video0";
    std::string driver = "fakecam";
    std::string card = "Fake Camera";
    std::string busInfo = "platform:fakecam-0";
    uint32_t version = KERNEL_VERSION(6, 1, 0);
    uint32_t caps = V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING | V4L2_CAP_EXT_PIX_FORMAT; // node's
    bool timePerFrame = true; // V4L2_CAP_TIMEPERFRAME: S_PARM changes the rate; else it is ignored
    bool extendedControls = true; // false: G/S_EXT_CTRLS answer ENOTTY (drivers before 2.6.x)
    std::vector<FakeFormat> formats;
    std::vector<FakeControl> controls;
    // Format at plug-in: 0 = the first format, its first size, that size's first interval.
    uint32_t fourcc = 0;
    uint32_t width = 0;
    uint32_t height = 0;
    FakeInterval interval {0, 0};
    uint32_t linePadding = 0; // added to bytesperline of uncompressed formats (row alignment)
    unsigned grantBuffers = 0; // REQBUFS grants this many, whatever was asked; 0 = as asked (<= 32)
    uint32_t timestampFlags = V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC; // on every dequeued buffer
};

// One frame to deliver; every field left empty takes the driver's natural value.
struct FakeFrame {
    std::optional<uint32_t> sequence; // default: one after the previous frame (0 after STREAMON)
    uint32_t dropBefore = 0; // sequence numbers skipped before this frame (frames the driver lost)
    std::optional<int64_t> timestampNs; // buffer timestamp; default: CLOCK_MONOTONIC at DQBUF
    bool error = false; // V4L2_BUF_FLAG_ERROR: the driver says the data is corrupt
    std::optional<uint32_t> bytesUsed; // default: what the content step wrote (see FrameFiller)
};

// Writes a frame's pixels into a buffer of `length` bytes and returns bytesused. Called under the
// fake's lock: it must not call back into the FakeV4L2.
using FrameFiller = std::function<uint32_t(uint8_t* data, size_t length, uint32_t sequence)>;

// What a device was asked to do. Cumulative over plug cycles, except the "now" counts.
struct FakeCounters {
    uint64_t opens = 0; // successful open()s
    int openFiles = 0; // descriptors open now
    uint64_t requestBuffers = 0; // successful VIDIOC_REQBUFS (including count 0)
    uint64_t queueBuffer = 0; // successful VIDIOC_QBUF
    uint64_t dequeueBuffer = 0; // successful VIDIOC_DQBUF
    int buffersAllocated = 0; // buffers allocated now
    int buffersQueued = 0; // buffers with the driver now (queued, not yet dequeued)
    int mappings = 0; // mmap()s not yet munmap()ed
    uint64_t streamOn = 0;
    uint64_t streamOff = 0;
    uint64_t setFormat = 0; // VIDIOC_S_FMT
    uint64_t setParm = 0; // VIDIOC_S_PARM
    uint64_t setControl = 0; // controls written (S_CTRL, or each of an S_EXT_CTRLS)
};

// The fake driver. Devices are addressed by their current path. All methods are thread-safe, so a
// test may feed frames from one thread while the code under test captures on another.
//
// Frames: a dequeued frame needs a queued buffer, streaming, no stall and a pending frame: one
// from queueFrames()/queueFrame(), or any number in free-running mode. Content, in order of
// precedence: the device's FrameFiller; the bytes of setFrameData() (copied into a buffer only
// when it does not hold them yet, so steady state costs no copy); else every byte set to
// `sequence & 0xff` over the whole sizeimage (uncompressed data that converts; not a valid JPEG).
//
// poll() waits for a frame at most min(timeout, pollWaitLimitMs) so stalled tests stay fast;
// DQBUF never blocks (descriptors behave as O_NONBLOCK).
class FakeV4L2 final : public V4L2Io {
public:
    FakeV4L2();
    explicit FakeV4L2(const std::vector<FakeDevice>& devices);
    ~FakeV4L2() override;

    // Plugs in a device (its path must be free).
    void addDevice(const FakeDevice& device);

    // --- frames
    void queueFrames(const std::string& path, int count); // `count` frames with natural fields
    void queueFrame(const std::string& path, const FakeFrame& frame);
    // The driver loses `count` frames: the next frame queued after this call (or, free-running,
    // the next frame made) comes `count` sequence numbers later than it would have.
    void dropFrames(const std::string& path, uint32_t count);
    // true: a frame is ready whenever a buffer is queued (a camera running at full speed).
    void setFreeRunning(const std::string& path, bool freeRunning);
    size_t pendingFrames(const std::string& path) const;
    void setFrameFiller(const std::string& path, FrameFiller filler); // empty: back to default
    void setFrameData(const std::string& path, std::vector<uint8_t> data);
    // Timestamp flags (V4L2_BUF_FLAG_TIMESTAMP_*) of buffers dequeued from now on.
    void setTimestampFlags(const std::string& path, uint32_t flags);

    // --- faults
    // While stalled no frame becomes ready (pending ones wait); poll() times out.
    void setStalled(const std::string& path, bool stalled);
    // The node vanishes: open() gives ENOENT, listDevices() leaves it out, and descriptors open on
    // it get ENODEV from every ioctl and mmap, POLLERR | POLLHUP from poll(); close() and munmap()
    // still work. Pending frames are lost.
    void unplug(const std::string& path);
    // Plugs the device back in, under `newPath` when given, in its plug-in state (format,
    // controls, no buffers, sequence 0), as a USB camera comes back.
    void replug(const std::string& path, const std::string& newPath = "");
    // Every `request` ioctl on the device fails with `error` until clearFailures().
    void failIoctl(const std::string& path, unsigned long request, int error);
    void setOpenError(const std::string& path, int error); // 0: open works again
    void clearFailures(const std::string& path);
    void setPollWaitLimitMs(int limitMs); // default 20

    // --- state
    FakeCounters counters(const std::string& path) const;
    v4l2_pix_format format(const std::string& path) const; // the current (S_FMT'd) format
    FakeInterval interval(const std::string& path) const;
    int64_t controlValue(const std::string& path, uint32_t id) const;
    bool streaming(const std::string& path) const;

    // --- V4L2Io
    int open(const char* path, int flags) override;
    int close(int fd) override;
    int ioctl(int fd, unsigned long request, void* arg) override;
    void* mmap(size_t length, int prot, int flags, int fd, off_t offset) override;
    int munmap(void* address, size_t length) override;
    int poll(struct pollfd* fds, nfds_t count, int timeoutMs) override;
    std::vector<std::string> listDevices() override;

private:
    struct Device;
    struct Mapping {
        std::shared_ptr<std::vector<uint8_t>> memory;
        Device* device = nullptr;
        int count = 0;
    };
    struct OpenFile {
        Device* device = nullptr;
        uint64_t generation = 0; // the device's plug cycle it was opened in
    };

    Device& find(const std::string& path) const; // aborts the test on an unknown path
    Device* liveDevice(int fd, int& error);
    int dispatch(Device& device, int fd, unsigned long request, void* arg);
    short pollEvents(int fd) const;

    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<std::unique_ptr<Device>> devices_;
    std::map<int, OpenFile> files_;
    std::map<void*, Mapping> mappings_;
    int nextFd_ = 1000;
    int pollWaitLimitMs_ = 20;
};

// A USB-webcam-like device for tests and benchmarks:
//   YUYV "YUYV 4:2:2":   640x480 @ 30, 15 fps; 1280x720 @ 10, 5 fps
//   MJPG "Motion-JPEG":  640x480, 1280x720, 1920x1080 @ 30 fps (compressed)
//   NV12 "Y/UV 4:2:0":   640x480, 1280x720 @ 30 fps
//   H264 "H.264":        1920x1080 @ 30 fps (compressed; jetagent cannot convert it)
// current format YUYV 640x480 @ 30 fps; controls (with their class headers): brightness int
// 0..255 default 128; contrast int 0..100 step 5 default 50; white_balance_automatic bool 1;
// power_line_frequency menu {Disabled, 50 Hz, 60 Hz} = 1; auto_exposure menu {1 Manual Mode,
// 3 Aperture Priority Mode} = 3; exposure_time_absolute int 3..2047 = 250, inactive unless
// auto_exposure is 1.
FakeDevice fakeWebcam(const std::string& path = "/dev/video0",
    const std::string& card = "Fake Webcam", const std::string& busInfo = "usb-0000:00:14.0-1");

} // namespace jetagent::test
