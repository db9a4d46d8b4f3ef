// Frames from a V4L2 capture device: target resolution, format and control negotiation, mmap
// streaming, stall reports and recovery from a device that disappears and comes back.
#include "jetagent/hal/v4l2_source.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "jetagent/base/clock.h"
#include "jetagent/base/log.h"
#include "jetagent/hal/pixel_convert.h"
#include "jetagent/hal/v4l2_device.h"

namespace jetagent {

namespace {

constexpr int kMaxWaitSliceMs = 100; // read() returns within about this long
constexpr int64_t kFirstBackoffNs = 100'000'000; // first reconnect attempt 0.1 s after a loss
constexpr double kRateTolerance = 0.01; // 29.97 fps answers a request for 30
constexpr double kLongestWaitS = 1e6; // longer timeouts mean "never" and would overflow in ns
constexpr int kMinBuffers = 2;
constexpr int kMaxBuffers = 32;
constexpr const char* kScheme = "v4l2://";

std::string lowerCase(std::string text)
{
    std::transform(text.begin(), text.end(), text.begin(),
        [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

std::string upperCase(std::string text)
{
    std::transform(text.begin(), text.end(), text.begin(),
        [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return text;
}

double fpsOf(const v4l2_fract& interval)
{
    return interval.numerator == 0 || interval.denominator == 0
        ? 0.0
        : static_cast<double>(interval.denominator) / static_cast<double>(interval.numerator);
}

std::string sizeText(uint32_t width, uint32_t height)
{
    return std::to_string(width) + "x" + std::to_string(height);
}

bool rateMatches(double offered, double asked)
{
    return std::abs(offered - asked) <= kRateTolerance * asked;
}

// The interval that asks a driver for `fps`: whole rates exactly, others to a millisecond.
v4l2_fract intervalForFps(double fps)
{
    if (std::abs(fps - std::round(fps)) < 1e-6)
        return {1, static_cast<uint32_t>(std::lround(fps))};
    return {1000, static_cast<uint32_t>(std::lround(fps * 1000.0))};
}

// Errors that mean the device itself went away (unplugged, driver unbound, USB reset).
bool isDisappearance(int error)
{
    return error == ENODEV || error == ENXIO || error == EIO;
}

std::string ratesText(const V4L2FrameIntervals& intervals)
{
    if (intervals.type == V4L2_FRMIVAL_TYPE_DISCRETE) {
        std::string text;
        for (const v4l2_fract& interval : intervals.discrete)
            text += (text.empty() ? "" : ", ") + v4l2RateText(fpsOf(interval));
        return text + " fps";
    }
    if (intervals.type == V4L2_FRMIVAL_TYPE_STEPWISE ||
        intervals.type == V4L2_FRMIVAL_TYPE_CONTINUOUS)
        return v4l2RateText(fpsOf(intervals.stepwise.max)) + " to " +
            v4l2RateText(fpsOf(intervals.stepwise.min)) + " fps";
    return "rates not listed";
}

// Why a node that is not a single-planar streaming capture device cannot be used.
std::string notCaptureReason(const V4L2Capability& cap)
{
    if (cap.has(V4L2_CAP_VIDEO_CAPTURE_MPLANE))
        return "it is a multi-planar capture device, which jetagent does not support yet";
    if (cap.has(V4L2_CAP_VIDEO_CAPTURE))
        return "it offers no streaming I/O (read() only), which jetagent does not support";
    if (cap.has(V4L2_CAP_META_CAPTURE))
        return "it is a metadata node (a camera's video node is usually the one numbered just "
               "before it)";
    if (cap.has(V4L2_CAP_VIDEO_M2M) || cap.has(V4L2_CAP_VIDEO_M2M_MPLANE))
        return "it is a memory-to-memory device (a codec or converter), not a camera";
    if (cap.has(V4L2_CAP_VIDEO_OUTPUT) || cap.has(V4L2_CAP_VIDEO_OUTPUT_MPLANE))
        return "it is a video output device";
    std::string names;
    for (const std::string& name : v4l2CapabilityNames(cap.caps))
        names += (names.empty() ? "" : ", ") + name;
    return "it is not a video capture device (capabilities: " + names + ")";
}

struct NodeInfo {
    std::string path;
    V4L2Capability cap;
    bool ok = false;
};

// Every node's identity, for finding a device by name and for error messages.
std::vector<NodeInfo> identifyNodes(V4L2Io& io)
{
    std::vector<NodeInfo> nodes;
    for (const std::string& path : io.listDevices()) {
        NodeInfo node;
        node.path = path;
        V4L2Device device(io);
        node.ok = device.open(path) == 0 && device.queryCapability(node.cap) == 0;
        nodes.push_back(std::move(node));
    }
    return nodes;
}

std::string captureDeviceList(const std::vector<NodeInfo>& nodes)
{
    std::string text;
    for (const NodeInfo& node : nodes)
        if (node.ok && node.cap.canStream())
            text += "\n  " + node.path + " (card '" + node.cap.card + "', bus-info '" +
                node.cap.busInfo + "')";
    return text.empty() ? std::string(": none (is the camera plugged in and its driver loaded?)")
                        : ":" + text;
}

// What the user asked for; a reconnect asks for exactly what was negotiated.
struct FormatRequest {
    uint32_t fourcc = 0; // 0: auto
    uint32_t width = 0; // 0 with height 0: the device's current size
    uint32_t height = 0;
    double fps = 0.0; // 0: the device's current rate
};

// What negotiate() works from: the device's formats and current settings, and the size and rate
// asked for (the device's current size where the request leaves it at 0).
struct FormatOffer {
    V4L2Device* device = nullptr;
    std::string name; // the device's label, for messages
    std::vector<v4l2_fmtdesc> formats;
    v4l2_format current {};
    bool timePerFrame = false; // the driver takes a frame interval (V4L2_CAP_TIMEPERFRAME)
    v4l2_fract currentInterval {0, 0};
    bool currentSize = false; // the request left the size to the device
    uint32_t width = 0;
    uint32_t height = 0;
    double fps = 0.0;
    std::string asked; // the size and rate asked for, for messages

    bool offers(uint32_t fourcc) const
    {
        return std::any_of(formats.begin(), formats.end(),
            [&](const v4l2_fmtdesc& f) { return f.pixelformat == fourcc; });
    }
    bool sizeOk(uint32_t fourcc) const
    {
        V4L2FrameSizes sizes;
        return device->enumFrameSizes(fourcc, sizes) == 0 && sizes.contains(width, height);
    }
    // Whether the rate is offered at the size; `interval` becomes the one to ask for.
    bool rateOk(uint32_t fourcc, double rate, v4l2_fract& interval) const
    {
        V4L2FrameIntervals intervals;
        if (device->enumFrameIntervals(fourcc, width, height, intervals) < 0)
            return false;
        if (intervals.type == V4L2_FRMIVAL_TYPE_DISCRETE) {
            for (const v4l2_fract& offered : intervals.discrete)
                if (rateMatches(fpsOf(offered), rate)) {
                    interval = offered;
                    return true;
                }
            return false;
        }
        interval = intervalForFps(rate);
        if (intervals.type == 0)
            return true;
        const double lowest = fpsOf(intervals.stepwise.max);
        const double highest = fpsOf(intervals.stepwise.min);
        return rate >= lowest * (1.0 - kRateTolerance) && rate <= highest * (1.0 + kRateTolerance);
    }
};

// A control resolved against the device, kept to set it again after a reconnect.
struct AppliedControl {
    std::string name;
    V4L2ControlInfo info;
    int64_t value = 0;
};

class V4L2Source final : public FrameSource {
public:
    V4L2Source(const SourceOptions& options, V4L2Io& io)
        : io_(io), options_(options), log_(logger("v4l2"))
    {
    }
    ~V4L2Source() override
    {
        if (device_)
            log_->debug("{}: closing", path_);
    }

    Status open(const std::string& path, const FormatRequest& request);

    const SourceInfo& info() const override { return info_; }
    Expected<ReadResult> read(Frame& frame) override;
    SourceStats stats() const override
    {
        std::lock_guard<std::mutex> lock(statsMutex_);
        return stats_;
    }

private:
    std::string label() const { return path_ + " (" + card_ + ")"; }
    Status connect(const std::string& path, const FormatRequest& request, bool initial);
    // negotiate() in steps: what the device offers, the format (chosen or checked), then the
    // format and the rate set on the device.
    Status negotiate(V4L2Device& device, const FormatRequest& request, bool initial);
    Status readOffer(V4L2Device& device, const FormatRequest& request, FormatOffer& offer);
    Status chooseFormat(const FormatOffer& offer, uint32_t& fourcc, v4l2_fract& interval);
    Status checkFormat(const FormatOffer& offer, uint32_t fourcc, v4l2_fract& interval);
    Status setFormat(const FormatOffer& offer, uint32_t fourcc, v4l2_pix_format& pix);
    Status setRate(
        const FormatOffer& offer, const v4l2_fract& interval, bool initial, double& actualFps);
    std::string offerText(V4L2Device& device, const std::vector<v4l2_fmtdesc>& formats);
    Status setControls(V4L2Device& device);
    Status restoreControls(V4L2Device& device);
    Expected<int64_t> parseControlValue(
        const V4L2ControlInfo& control, const std::string& name, const std::string& text) const;
    Status startStreaming(V4L2Device& device, bool streamOn);

    int waitSliceMs(int64_t now) const;
    void checkStall(int64_t now);
    void frameArrived(int64_t now);
    int64_t captureTimeOf(const v4l2_buffer& buffer, int64_t dequeuedNs);
    uint64_t sequenceOf(uint32_t deviceSequence);
    void lose(int error);
    Expected<ReadResult> retryConnect();
    std::string findAgain();

    V4L2Io& io_;
    SourceOptions options_;
    std::shared_ptr<spdlog::logger> log_;
    SourceInfo info_;

    std::unique_ptr<V4L2Device> device_; // null while the device is lost
    std::string path_;
    std::string driver_;
    std::string card_;
    std::string busInfo_;
    FormatRequest negotiated_; // what a reconnect asks for again
    int bufferCount_ = 0;
    // The first STREAMON waits for the first read(): the agent builds its tasks and threads after
    // opening the source, and a camera streaming meanwhile fills every buffer and drops frames.
    bool streamPending_ = false;
    std::vector<AppliedControl> controls_;
    PixelConverter converter_;

    // Sequence numbers: frame.sequence = base_ + device sequence - first device sequence of the
    // streaming session; a session starts at STREAMON and after the device restarts its count.
    bool sessionStarted_ = false;
    uint32_t firstDeviceSequence_ = 0;
    uint32_t lastDeviceSequence_ = 0;
    uint64_t base_ = 0;
    uint64_t nextSequence_ = 0;

    int64_t stallNs_ = 0;
    int64_t lastProgressNs_ = 0; // last frame, or the start of streaming
    bool stalled_ = false;
    bool warnedTimestamps_ = false;
    bool warnedFutureTimestamps_ = false;
    bool warnedConversion_ = false;

    int64_t backoffNs_ = kFirstBackoffNs;
    int64_t nextRetryNs_ = 0;

    mutable std::mutex statsMutex_;
    SourceStats stats_;
};

Status V4L2Source::open(const std::string& path, const FormatRequest& request)
{
    stallNs_ = static_cast<int64_t>(std::min(options_.camera.stallTimeoutS, kLongestWaitS) * 1e9);
    if (Status s = connect(path, request, true); !s)
        return s;
    info_.uri = options_.uri;
    info_.kind = "v4l2";
    info_.width = static_cast<int>(negotiated_.width);
    info_.height = static_cast<int>(negotiated_.height);
    info_.fps = negotiated_.fps;
    info_.live = true;
    info_.frameCount = -1;
    info_.detail = path_ + " (" + driver_ + ", " + card_ + ") " + fourccName(negotiated_.fourcc) +
        " " + sizeText(negotiated_.width, negotiated_.height) + " @ " +
        (negotiated_.fps > 0.0 ? v4l2RateText(negotiated_.fps) + " fps" : "unknown rate") + ", " +
        std::to_string(bufferCount_) + " buffers";
    log_->info("capturing from {}", info_.detail);
    return Status();
}

Status V4L2Source::connect(const std::string& path, const FormatRequest& request, bool initial)
{
    auto device = std::make_unique<V4L2Device>(io_);
    if (const int r = device->open(path); r < 0) {
        if (r == -ENOENT)
            return Status::notFound(path + " does not exist; V4L2 capture devices found" +
                captureDeviceList(identifyNodes(io_)));
        if (r == -EACCES || r == -EPERM)
            return Status::io("cannot open " + path + ": " + errnoText(-r) +
                " (is the user in the 'video' group?)");
        if (r == -ENOTTY)
            return Status::invalid(path +
                " is not a V4L2 device: a camera is a character device such as /dev/video0 "
                "(`jetagent probe cameras` lists them); a video file is read with file://" +
                path);
        return Status::io("cannot open " + path + ": " + errnoText(-r));
    }
    V4L2Capability cap;
    if (const int r = device->queryCapability(cap); r < 0) {
        if (r == -ENOTTY)
            return Status::invalid(path + " is not a V4L2 device");
        return Status::io(path + ": VIDIOC_QUERYCAP failed: " + errnoText(-r));
    }
    if (!cap.canStream())
        return Status::invalid(path + " (" + cap.card + ", driver " + cap.driver +
            ") cannot be captured from: " + notCaptureReason(cap));
    path_ = path;
    driver_ = cap.driver;
    card_ = cap.card;
    busInfo_ = cap.busInfo;

    if (Status s = negotiate(*device, request, initial); !s)
        return s;
    if (Status s = initial ? setControls(*device) : restoreControls(*device); !s)
        return s;
    if (Status s = startStreaming(*device, !initial); !s)
        return s;
    device_ = std::move(device);
    sessionStarted_ = false;
    stalled_ = false;
    lastProgressNs_ = monotonicNs();
    return Status();
}

std::string V4L2Source::offerText(V4L2Device& device, const std::vector<v4l2_fmtdesc>& formats)
{
    std::string text;
    for (const v4l2_fmtdesc& format : formats) {
        text += "\n  " + fourccName(format.pixelformat);
        if (!PixelConverter::supports(format.pixelformat))
            text += " (jetagent cannot convert it)";
        text += ": ";
        V4L2FrameSizes sizes;
        if (device.enumFrameSizes(format.pixelformat, sizes) < 0 || sizes.type == 0) {
            text += "sizes not listed";
            continue;
        }
        V4L2FrameIntervals intervals;
        if (sizes.type == V4L2_FRMSIZE_TYPE_DISCRETE) {
            std::string line;
            for (const auto& size : sizes.discrete) {
                device.enumFrameIntervals(format.pixelformat, size.width, size.height, intervals);
                line += (line.empty() ? "" : "; ") + sizeText(size.width, size.height) + " @ " +
                    ratesText(intervals);
            }
            text += line;
        } else {
            const auto& s = sizes.stepwise;
            device.enumFrameIntervals(format.pixelformat, s.max_width, s.max_height, intervals);
            text += sizeText(s.min_width, s.min_height) + " to " +
                sizeText(s.max_width, s.max_height) + " in steps of " +
                sizeText(s.step_width, s.step_height) + " @ " + ratesText(intervals) +
                " (at the largest size)";
        }
    }
    return text;
}

Status V4L2Source::readOffer(V4L2Device& device, const FormatRequest& request, FormatOffer& offer)
{
    offer.device = &device;
    offer.name = label();
    const std::string& name = offer.name;
    if (const int r = device.enumFormats(offer.formats); r < 0)
        return Status::io(name + ": VIDIOC_ENUM_FMT failed: " + errnoText(-r));
    v4l2_format& current = offer.current;
    if (const int r = device.getFormat(current); r < 0)
        return Status::io(name + ": VIDIOC_G_FMT failed: " + errnoText(-r));
    v4l2_streamparm parm {};
    const bool haveParm = device.getParm(parm) == 0;
    offer.timePerFrame = haveParm && (parm.parm.capture.capability & V4L2_CAP_TIMEPERFRAME) != 0;
    offer.currentInterval = haveParm ? parm.parm.capture.timeperframe : v4l2_fract {0, 0};

    offer.currentSize = request.width == 0 && request.height == 0;
    offer.width = offer.currentSize ? current.fmt.pix.width : request.width;
    offer.height = offer.currentSize ? current.fmt.pix.height : request.height;
    offer.fps = request.fps;
    offer.asked = sizeText(offer.width, offer.height) +
        (offer.fps > 0.0 ? " @ " + v4l2RateText(offer.fps) + " fps" : "");
    return Status();
}

Status V4L2Source::chooseFormat(const FormatOffer& offer, uint32_t& fourcc, v4l2_fract& interval)
{
    const v4l2_format& current = offer.current;
    const double fps = offer.fps;
    if (offer.currentSize && PixelConverter::supports(current.fmt.pix.pixelformat) &&
        (fps == 0.0 || offer.rateOk(current.fmt.pix.pixelformat, fps, interval)))
        fourcc = current.fmt.pix.pixelformat;
    for (size_t i = 0; fourcc == 0 && i < PixelConverter::supportedFourccs().size(); ++i) {
        const uint32_t candidate = PixelConverter::supportedFourccs()[i];
        if (offer.offers(candidate) && offer.sizeOk(candidate) &&
            (fps == 0.0 || offer.rateOk(candidate, fps, interval)))
            fourcc = candidate;
    }
    if (fourcc != 0)
        return Status();
    const std::vector<v4l2_fmtdesc>& formats = offer.formats;
    if (std::none_of(formats.begin(), formats.end(),
            [](const v4l2_fmtdesc& f) { return PixelConverter::supports(f.pixelformat); })) {
        std::string convertible;
        for (const uint32_t f : PixelConverter::supportedFourccs())
            convertible += (convertible.empty() ? "" : ", ") + fourccName(f);
        return Status::invalid(offer.name + " offers no pixel format jetagent can convert (it " +
            "converts " + convertible +
            "); the device offers:" + offerText(*offer.device, formats));
    }
    return Status::invalid(offer.name + " cannot capture " + offer.asked +
        " in any format jetagent converts; it offers:" + offerText(*offer.device, formats));
}

Status V4L2Source::checkFormat(const FormatOffer& offer, uint32_t fourcc, v4l2_fract& interval)
{
    const std::string& name = offer.name;
    const std::string format = fourccName(fourcc);
    if (!offer.offers(fourcc))
        return Status::invalid(name + " has no pixel format " + format +
            "; it offers:" + offerText(*offer.device, offer.formats));
    if (!PixelConverter::supports(fourcc)) {
        std::string usable;
        for (const v4l2_fmtdesc& f : offer.formats)
            if (PixelConverter::supports(f.pixelformat))
                usable += (usable.empty() ? "" : ", ") + fourccName(f.pixelformat);
        return Status::invalid("jetagent cannot convert " + format + " frames; formats of " + name +
            " it converts: " + (usable.empty() ? std::string("none") : usable) +
            " (or use format: auto)");
    }
    if (!offer.sizeOk(fourcc))
        return Status::invalid(name + " cannot capture " + format + " at " +
            sizeText(offer.width, offer.height) +
            "; it offers:" + offerText(*offer.device, offer.formats));
    if (offer.fps > 0.0 && !offer.rateOk(fourcc, offer.fps, interval))
        return Status::invalid(name + " cannot capture " + format + " " + offer.asked +
            "; it offers:" + offerText(*offer.device, offer.formats));
    return Status();
}

Status V4L2Source::setFormat(const FormatOffer& offer, uint32_t fourcc, v4l2_pix_format& pix)
{
    const std::string& name = offer.name;
    const uint32_t width = offer.width;
    const uint32_t height = offer.height;
    v4l2_format format {};
    format.fmt.pix.width = width;
    format.fmt.pix.height = height;
    format.fmt.pix.pixelformat = fourcc;
    format.fmt.pix.field = V4L2_FIELD_NONE;
    if (const int r = offer.device->setFormat(format); r < 0) {
        if (r == -EBUSY)
            return Status::io(name + " is busy: another program is capturing from it");
        if (isDisappearance(-r))
            return Status::io(name + ": VIDIOC_S_FMT failed: " + errnoText(-r));
        return Status::invalid(name + ": VIDIOC_S_FMT " + fourccName(fourcc) + " " +
            sizeText(width, height) + " failed: " + errnoText(-r));
    }
    pix = format.fmt.pix;
    if (pix.pixelformat != fourcc || pix.width != width || pix.height != height)
        return Status::invalid(name + ": asked for " + fourccName(fourcc) + " " +
            sizeText(width, height) + ", the driver set " + fourccName(pix.pixelformat) + " " +
            sizeText(pix.width, pix.height) +
            " instead; it offers:" + offerText(*offer.device, offer.formats));
    return Status();
}

Status V4L2Source::setRate(
    const FormatOffer& offer, const v4l2_fract& interval, bool initial, double& actualFps)
{
    const std::string& name = offer.name;
    const double fps = offer.fps;
    actualFps = 0.0;
    if (offer.timePerFrame && interval.numerator != 0 && interval.denominator != 0) {
        v4l2_streamparm set {};
        set.parm.capture.timeperframe = interval;
        if (const int r = offer.device->setParm(set); r < 0)
            return Status::io(name + ": VIDIOC_S_PARM " + v4l2RateText(fpsOf(interval)) +
                " fps failed: " + errnoText(-r));
        actualFps = fpsOf(set.parm.capture.timeperframe);
        if (fps > 0.0 && !rateMatches(actualFps, fps))
            return Status::invalid(name + ": asked for " + v4l2RateText(fps) +
                " fps, the driver set " + v4l2RateText(actualFps) +
                " fps; it offers:" + offerText(*offer.device, offer.formats));
        return Status();
    }
    v4l2_streamparm now {};
    if (offer.device->getParm(now) == 0)
        actualFps = fpsOf(now.parm.capture.timeperframe);
    if (fps > 0.0 && !offer.timePerFrame) {
        if (initial)
            log_->info("{} cannot set its frame rate; keeping its {}", name,
                actualFps > 0.0 ? v4l2RateText(actualFps) + " fps" : "own rate");
        else
            log_->debug("{} cannot set its frame rate", name);
    }
    return Status();
}

Status V4L2Source::negotiate(V4L2Device& device, const FormatRequest& request, bool initial)
{
    FormatOffer offer;
    if (Status s = readOffer(device, request, offer); !s)
        return s;
    uint32_t fourcc = request.fourcc;
    v4l2_fract interval {0, 0};
    if (Status s = fourcc == 0 ? chooseFormat(offer, fourcc, interval)
                               : checkFormat(offer, fourcc, interval);
        !s)
        return s;
    // fps 0 keeps the device's current interval where the chosen size offers it; otherwise the
    // driver's own choice stands.
    if (offer.fps == 0.0 && fpsOf(offer.currentInterval) > 0.0) {
        v4l2_fract same {};
        if (offer.rateOk(fourcc, fpsOf(offer.currentInterval), same))
            interval = same;
    }
    v4l2_pix_format pix {};
    if (Status s = setFormat(offer, fourcc, pix); !s)
        return s;
    double actualFps = 0.0;
    if (Status s = setRate(offer, interval, initial, actualFps); !s)
        return s;

    const std::string& name = offer.name;
    if (Status s = converter_.configure(fourcc, static_cast<int>(pix.width),
            static_cast<int>(pix.height), pix.bytesperline, pix.sizeimage);
        !s)
        return Status::invalid(name + ": " + s.message());
    if (!initial &&
        (fourcc != negotiated_.fourcc || pix.width != negotiated_.width ||
            pix.height != negotiated_.height))
        return Status::invalid(name + " came back with another format");
    negotiated_.fourcc = fourcc;
    negotiated_.width = pix.width;
    negotiated_.height = pix.height;
    // A reconnect asks for the rate the device actually ran at, or keeps its own when unknown.
    negotiated_.fps = actualFps;
    return Status();
}

Expected<int64_t> V4L2Source::parseControlValue(
    const V4L2ControlInfo& control, const std::string& name, const std::string& text) const
{
    const std::string where = "camera control '" + name + "' of " + label();
    auto parseInteger = [](const std::string& s, int64_t& value) {
        if (s.empty())
            return false;
        char* end = nullptr;
        errno = 0;
        const long long parsed = std::strtoll(s.c_str(), &end, 0);
        if (errno != 0 || end == nullptr || *end != '\0')
            return false;
        value = parsed;
        return true;
    };
    const std::string lowered = lowerCase(text);
    int64_t value = 0;
    switch (control.type) {
    case V4L2_CTRL_TYPE_INTEGER:
    case V4L2_CTRL_TYPE_INTEGER64:
    case V4L2_CTRL_TYPE_BITMASK: {
        const std::string range = std::to_string(control.minimum) + ".." +
            std::to_string(control.maximum) +
            (control.step > 1 ? " in steps of " + std::to_string(control.step) : "");
        if (!parseInteger(text, value))
            return Status::invalid(
                where + " takes an integer in " + range + ", not '" + text + "'");
        if (control.type != V4L2_CTRL_TYPE_BITMASK &&
            (value < control.minimum || value > control.maximum ||
                (control.step > 1 &&
                    static_cast<uint64_t>(value - control.minimum) % control.step != 0)))
            return Status::invalid(where + ": " + text + " is out of range; it takes " + range);
        return value;
    }
    case V4L2_CTRL_TYPE_BOOLEAN:
        if (lowered == "true" || lowered == "on" || lowered == "1" || lowered == "yes")
            return int64_t {1};
        if (lowered == "false" || lowered == "off" || lowered == "0" || lowered == "no")
            return int64_t {0};
        return Status::invalid(
            where + " is a boolean: true or false (on/off, 1/0), not '" + text + "'");
    case V4L2_CTRL_TYPE_MENU:
    case V4L2_CTRL_TYPE_INTEGER_MENU: {
        const std::string wanted = v4l2ControlName(text);
        const std::pair<int64_t, std::string>* prefixMatch = nullptr;
        int prefixMatches = 0;
        for (const auto& entry : control.menu) {
            if (lowerCase(entry.second) == lowered || v4l2ControlName(entry.second) == wanted)
                return entry.first;
            if (!wanted.empty() &&
                v4l2ControlName(entry.second).compare(0, wanted.size(), wanted) == 0) {
                prefixMatch = &entry;
                ++prefixMatches;
            }
        }
        if (prefixMatches == 1) // "manual" for "Manual Mode"
            return prefixMatch->first;
        if (parseInteger(text, value))
            for (const auto& entry : control.menu)
                if (entry.first == value)
                    return value;
        std::string entries;
        for (const auto& entry : control.menu)
            entries += (entries.empty() ? "" : ", ") + std::to_string(entry.first) + " (" +
                entry.second + ")";
        return Status::invalid(where + " has no entry '" + text + "'; its entries: " + entries);
    }
    case V4L2_CTRL_TYPE_BUTTON: return int64_t {1};
    default:
        return Status::invalid(where + " is of type " + v4l2ControlTypeName(control.type) +
            ", which jetagent cannot set");
    }
}

Status V4L2Source::setControls(V4L2Device& device)
{
    controls_.clear();
    if (options_.camera.controls.empty())
        return Status();
    const std::string name = label();
    std::vector<V4L2ControlInfo> all;
    if (const int r = device.queryControls(all); r < 0)
        return Status::io(name + ": listing controls failed: " + errnoText(-r));

    for (const CameraControl& wanted : options_.camera.controls) {
        const std::string key = v4l2ControlName(wanted.name);
        const auto found = std::find_if(all.begin(), all.end(),
            [&](const V4L2ControlInfo& c) { return v4l2ControlName(c.label) == key; });
        if (found == all.end()) {
            std::string names;
            for (const V4L2ControlInfo& c : all)
                names += (names.empty() ? "" : ", ") + v4l2ControlName(c.label);
            return Status::invalid(name + " has no control '" + wanted.name +
                "'; its controls: " + (names.empty() ? std::string("none") : names));
        }
        // Flags change as other controls are set (auto_exposure makes exposure inactive).
        V4L2ControlInfo control;
        if (const int r = device.queryControl(found->id, control); r < 0)
            return Status::io(name + ": querying control '" + key + "' failed: " + errnoText(-r));
        const std::string where = "camera control '" + key + "' of " + name;
        if ((control.flags & V4L2_CTRL_FLAG_READ_ONLY) != 0)
            return Status::invalid(where + " is read-only");
        if ((control.flags & V4L2_CTRL_FLAG_INACTIVE) != 0)
            return Status::invalid(where +
                " is inactive: another control's setting overrides it "
                "(as auto_exposure does exposure_time_absolute). Controls apply in the order "
                "given, so set that one first (auto_exposure: manual)");
        auto value = parseControlValue(control, key, wanted.value);
        if (!value)
            return value.status();
        int64_t kept = *value;
        if (const int r = device.setControl(control, kept); r < 0) {
            if (r == -EACCES || r == -ERANGE || r == -EINVAL)
                return Status::invalid(where + " refused " + wanted.value + ": " + errnoText(-r));
            return Status::io(name + ": setting control '" + key + "' failed: " + errnoText(-r));
        }
        if (kept != *value)
            log_->warn("{}: the driver set {} to {} instead of {}", name, key, kept, *value);
        log_->debug("{}: {} = {}", name, key, kept);
        controls_.push_back(AppliedControl {key, control, kept});
    }
    return Status();
}

Status V4L2Source::restoreControls(V4L2Device& device)
{
    for (const AppliedControl& control : controls_) {
        int64_t value = control.value;
        if (const int r = device.setControl(control.info, value); r < 0)
            return Status::io(label() + ": setting control '" + control.name +
                "' again failed: " + errnoText(-r));
    }
    return Status();
}

Status V4L2Source::startStreaming(V4L2Device& device, bool streamOn)
{
    const std::string name = label();
    const int granted = device.allocateBuffers(static_cast<unsigned>(options_.camera.buffers));
    if (granted < 0)
        return Status::io(name + ": allocating " + std::to_string(options_.camera.buffers) +
            " buffers failed: " + errnoText(-granted));
    if (granted < kMinBuffers)
        return Status::io(name + ": the driver granted " + std::to_string(granted) +
            " buffer; capture needs at least " + std::to_string(kMinBuffers));
    if (granted != options_.camera.buffers)
        log_->debug("{}: asked for {} buffers, the driver granted {}", name,
            options_.camera.buffers, granted);
    for (int i = 0; i < granted; ++i)
        if (const int r = device.queueBuffer(static_cast<uint32_t>(i)); r < 0)
            return Status::io(name + ": VIDIOC_QBUF failed: " + errnoText(-r));
    if (streamOn) {
        if (const int r = device.streamOn(); r < 0)
            return Status::io(name + ": VIDIOC_STREAMON failed: " + errnoText(-r));
    }
    streamPending_ = !streamOn;
    bufferCount_ = granted;
    return Status();
}

int V4L2Source::waitSliceMs(int64_t now) const
{
    int64_t slice = kMaxWaitSliceMs;
    if (!stalled_) // wake up in time to report a stall when it begins
        slice = std::min(slice, (lastProgressNs_ + stallNs_ - now + 999'999) / 1'000'000);
    return static_cast<int>(std::max<int64_t>(slice, 1));
}

void V4L2Source::checkStall(int64_t now)
{
    if (stalled_ || now - lastProgressNs_ < stallNs_)
        return;
    stalled_ = true;
    log_->warn(
        "{}: no frame for {:.1f} s; waiting for the device", label(), nsToS(now - lastProgressNs_));
    std::lock_guard<std::mutex> lock(statsMutex_);
    ++stats_.stalls;
}

void V4L2Source::frameArrived(int64_t now)
{
    if (stalled_) {
        log_->info(
            "{}: frames again after a {:.1f} s stall", label(), nsToS(now - lastProgressNs_));
        stalled_ = false;
    }
    lastProgressNs_ = now;
}

int64_t V4L2Source::captureTimeOf(const v4l2_buffer& buffer, int64_t dequeuedNs)
{
    if ((buffer.flags & V4L2_BUF_FLAG_TIMESTAMP_MASK) != V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC) {
        if (!warnedTimestamps_)
            log_->warn("{}: buffers carry no monotonic timestamp; using the dequeue time, which "
                       "includes the driver's latency",
                label());
        warnedTimestamps_ = true;
        return dequeuedNs;
    }
    const int64_t stampedNs = static_cast<int64_t>(buffer.timestamp.tv_sec) * 1'000'000'000 +
        static_cast<int64_t>(buffer.timestamp.tv_usec) * 1000;
    if (stampedNs <= dequeuedNs)
        return stampedNs;
    // Both are CLOCK_MONOTONIC, and a buffer is dequeued only after its frame was captured, so a
    // stamp after the dequeue is not a capture time. vivid makes them: with its default timestamp
    // source ("End of Frame") it stamps a buffer 0.9 frame periods after it began to fill it, and
    // hands it out as soon as it is filled. The dequeue time is the latest the frame can have been
    // captured; it keeps capture times increasing and a frame's wait (worker start - capture time)
    // from going negative.
    if (!warnedFutureTimestamps_)
        log_->warn("{}: the driver stamps buffers after they are dequeued ({:.1f} ms after, "
                   "timestamp source {}); such frames get the dequeue time as their capture time",
            label(), nsToMs(stampedNs - dequeuedNs),
            (buffer.flags & V4L2_BUF_FLAG_TSTAMP_SRC_MASK) == V4L2_BUF_FLAG_TSTAMP_SRC_SOE
                ? "start of exposure"
                : "end of frame");
    warnedFutureTimestamps_ = true;
    return dequeuedNs;
}

uint64_t V4L2Source::sequenceOf(uint32_t deviceSequence)
{
    uint64_t dropped = 0;
    // A device counts from 0 again after a restart; a count that goes back starts a new session.
    if (!sessionStarted_ || deviceSequence <= lastDeviceSequence_) {
        sessionStarted_ = true;
        firstDeviceSequence_ = deviceSequence;
        base_ = nextSequence_;
    } else {
        dropped = deviceSequence - lastDeviceSequence_ - 1;
    }
    lastDeviceSequence_ = deviceSequence;
    const uint64_t sequence = base_ + (deviceSequence - firstDeviceSequence_);
    nextSequence_ = sequence + 1;
    if (dropped > 0) {
        std::lock_guard<std::mutex> lock(statsMutex_);
        stats_.droppedByDevice += dropped;
    }
    return sequence;
}

void V4L2Source::lose(int error)
{
    log_->warn("{} disappeared ({}); retrying every {} s, backing off to {} s", label(),
        errnoText(error), v4l2RateText(nsToS(kFirstBackoffNs)),
        v4l2RateText(options_.camera.reconnectMaxS));
    device_.reset();
    stalled_ = false;
    backoffNs_ = kFirstBackoffNs;
    nextRetryNs_ = monotonicNs() + backoffNs_;
    std::lock_guard<std::mutex> lock(statsMutex_);
    ++stats_.disconnects;
}

std::string V4L2Source::findAgain()
{
    const std::vector<NodeInfo> nodes = identifyNodes(io_);
    auto usable = [](const NodeInfo& node) { return node.ok && node.cap.canStream(); };
    for (const NodeInfo& node : nodes)
        if (node.path == path_ && usable(node) && node.cap.card == card_ &&
            node.cap.busInfo == busInfo_)
            return node.path;
    if (!busInfo_.empty())
        for (const NodeInfo& node : nodes)
            if (usable(node) && node.cap.busInfo == busInfo_)
                return node.path;
    // Plugged into another port: the bus-info changed, the card name did not.
    for (const NodeInfo& node : nodes)
        if (usable(node) && node.cap.card == card_)
            return node.path;
    return "";
}

Expected<ReadResult> V4L2Source::retryConnect()
{
    int64_t now = monotonicNs();
    if (now < nextRetryNs_) {
        const int64_t waitNs =
            std::min<int64_t>(nextRetryNs_ - now, int64_t {kMaxWaitSliceMs} * 1'000'000);
        std::this_thread::sleep_for(std::chrono::nanoseconds(waitNs));
        now = monotonicNs();
        if (now < nextRetryNs_)
            return ReadResult::NoFrame;
    }
    // connect() takes on the identity of the node it tries; a failed try gives it back.
    const std::string lostPath = path_;
    const std::string lostDriver = driver_;
    const std::string lostCard = card_;
    const std::string lostBusInfo = busInfo_;
    const std::string path = findAgain();
    Status s = path.empty() ? Status::notFound("no capture device with card '" + card_ +
                                  "' or bus-info '" + busInfo_ + "'")
                            : connect(path, negotiated_, false);
    if (!s) {
        path_ = lostPath;
        driver_ = lostDriver;
        card_ = lostCard;
        busInfo_ = lostBusInfo;
        log_->debug("{} ({}): reconnect failed: {}", lostPath, lostCard, s.message());
        const auto maxNs =
            static_cast<int64_t>(std::min(options_.camera.reconnectMaxS, kLongestWaitS) * 1e9);
        backoffNs_ = std::min(backoffNs_ * 2, std::max(maxNs, kFirstBackoffNs));
        nextRetryNs_ = monotonicNs() + backoffNs_;
        return ReadResult::NoFrame;
    }
    log_->info("{} reconnected{}", label(), path == lostPath ? "" : " (was " + lostPath + ")");
    std::lock_guard<std::mutex> lock(statsMutex_);
    ++stats_.reconnects;
    return ReadResult::NoFrame;
}

Expected<ReadResult> V4L2Source::read(Frame& frame)
{
    if (!device_)
        return retryConnect();
    if (streamPending_) {
        if (const int r = device_->streamOn(); r < 0) {
            if (isDisappearance(-r)) {
                lose(-r);
                return ReadResult::NoFrame;
            }
            return Status::io(label() + ": VIDIOC_STREAMON failed: " + errnoText(-r));
        }
        streamPending_ = false;
        lastProgressNs_ = monotonicNs();
    }

    const int ready = device_->waitReadable(waitSliceMs(monotonicNs()));
    if (ready < 0) {
        if (isDisappearance(-ready)) {
            lose(-ready);
            return ReadResult::NoFrame;
        }
        return Status::io(label() + ": waiting for a frame failed: " + errnoText(-ready));
    }
    v4l2_buffer buffer {};
    const int r = ready > 0 ? device_->dequeueBuffer(buffer) : -EAGAIN;
    if (r == -EAGAIN) {
        checkStall(monotonicNs());
        return ReadResult::NoFrame;
    }
    if (r < 0) {
        if (isDisappearance(-r)) {
            lose(-r);
            return ReadResult::NoFrame;
        }
        return Status::io(label() + ": VIDIOC_DQBUF failed: " + errnoText(-r));
    }
    const int64_t dequeuedNs = monotonicNs();
    if (buffer.index >= device_->bufferCount())
        return Status::io(label() + ": the driver returned buffer " + std::to_string(buffer.index) +
            " of " + std::to_string(device_->bufferCount()));
    frameArrived(dequeuedNs);
    const uint64_t sequence = sequenceOf(buffer.sequence);

    Status converted;
    const bool corrupt = (buffer.flags & V4L2_BUF_FLAG_ERROR) != 0;
    if (!corrupt) {
        const V4L2Device::Buffer& mapped = device_->buffer(buffer.index);
        const size_t bytes = buffer.bytesused == 0
            ? mapped.length
            : std::min<size_t>(buffer.bytesused, mapped.length);
        converted =
            converter_.convert(static_cast<const uint8_t*>(mapped.data), bytes, frame.image);
    }
    // Straight back to the driver: the pixels are in frame.image now.
    if (const int q = device_->queueBuffer(buffer.index); q < 0) {
        if (!isDisappearance(-q))
            return Status::io(label() + ": VIDIOC_QBUF failed: " + errnoText(-q));
        lose(-q);
    }
    if (corrupt) {
        // Counted as dropped by the device: its data is lost all the same.
        std::lock_guard<std::mutex> lock(statsMutex_);
        ++stats_.droppedByDevice;
        return ReadResult::NoFrame;
    }
    if (!converted) {
        if (!warnedConversion_)
            log_->warn("{}: a frame could not be converted: {} (later ones are logged at debug)",
                label(), converted.message());
        else
            log_->debug("{}: a frame could not be converted: {}", label(), converted.message());
        warnedConversion_ = true;
        return ReadResult::NoFrame;
    }

    const int64_t captureNs = captureTimeOf(buffer, dequeuedNs);
    frame.sequence = sequence;
    frame.captureNs = captureNs;
    frame.truthClass = -1;

    std::lock_guard<std::mutex> lock(statsMutex_);
    if (stats_.delivered == 0)
        stats_.firstCaptureNs = captureNs;
    stats_.lastCaptureNs = captureNs;
    ++stats_.delivered;
    return ReadResult::Frame;
}

// The node the URI's target names: a path as it is, else the first capture device whose bus-info
// or card name (case-insensitive) matches, else /dev/TARGET.
Expected<std::string> resolveTarget(V4L2Io& io, const std::string& target)
{
    if (!target.empty() && target.front() == '/')
        return target;
    const std::vector<NodeInfo> nodes = identifyNodes(io);
    auto usable = [](const NodeInfo& node) { return node.ok && node.cap.canStream(); };
    for (const NodeInfo& node : nodes)
        if (usable(node) && node.cap.busInfo == target)
            return node.path;
    for (const NodeInfo& node : nodes)
        if (usable(node) && lowerCase(node.cap.card) == lowerCase(target))
            return node.path;
    for (const NodeInfo& node : nodes)
        if (node.path == "/dev/" + target)
            return node.path;
    return Status::notFound("no V4L2 capture device has the card name or bus-info '" + target +
        "'; capture devices found" + captureDeviceList(nodes));
}

Expected<FormatRequest> parseRequest(const SourceOptions& options)
{
    FormatRequest request;
    const std::string format = upperCase(options.camera.format);
    if (format != "AUTO") {
        request.fourcc = fourccFromName(format == "MJPEG" ? std::string("MJPG") : format);
        if (request.fourcc == 0)
            return Status::invalid("camera format '" + options.camera.format +
                "' is not a V4L2 pixel format name (YUYV, MJPG, NV12, RGB3, BGR3, GREY) or auto");
    }
    if (options.width < 0 || options.height < 0 || (options.width == 0) != (options.height == 0))
        return Status::invalid("camera size " + std::to_string(options.width) + "x" +
            std::to_string(options.height) +
            ": give both width and height, or leave both 0 for the device's current size");
    request.width = static_cast<uint32_t>(options.width);
    request.height = static_cast<uint32_t>(options.height);
    if (!(options.fps >= 0.0) || !std::isfinite(options.fps))
        return Status::invalid("camera rate " + v4l2RateText(options.fps) + " fps is not valid");
    request.fps = options.fps;
    if (options.camera.buffers < kMinBuffers || options.camera.buffers > kMaxBuffers)
        return Status::invalid("camera buffers " + std::to_string(options.camera.buffers) +
            " is out of range (2..32)");
    if (!(options.camera.stallTimeoutS > 0.0))
        return Status::invalid("camera stall timeout must be more than 0 s");
    if (!(options.camera.reconnectMaxS > 0.0))
        return Status::invalid("camera reconnect backoff limit must be more than 0 s");
    return request;
}

} // namespace

Expected<std::unique_ptr<FrameSource>> openV4L2Source(const SourceOptions& options, V4L2Io& io)
{
    const std::string& uri = options.uri;
    if (uri.compare(0, std::char_traits<char>::length(kScheme), kScheme) != 0)
        return Status::invalid("'" + uri + "' is not a v4l2:// URI");
    const std::string target = uri.substr(std::char_traits<char>::length(kScheme));
    if (target.empty())
        return Status::invalid("'" + uri + "' names no device (v4l2:///dev/video0, or a card " +
            "name or bus-info as `jetagent probe cameras` lists them)");
    auto request = parseRequest(options);
    if (!request)
        return request.status().withContext(uri);
    auto path = resolveTarget(io, target);
    if (!path)
        return path.status();

    auto source = std::make_unique<V4L2Source>(options, io);
    if (Status s = source->open(*path, *request); !s)
        return s;
    return std::unique_ptr<FrameSource>(std::move(source));
}

} // namespace jetagent
