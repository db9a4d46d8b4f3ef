// The clip ring: R planes in one memfd mapped twice back to back, so every clip is contiguous.
#include "tasks/clip_ring.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>

// Why the newest T frames never share a plane, and why writing frame F+T (at next(), while the
// clip is F..F+T-1) touches no plane of frames F+1..F+T-1, which stay in the clip it completes.
// Write p(f, c) for the plane of frame f's channel c before reducing mod R.
//
// Channels first, p(f, c) = f + c*T. For the clip F..F+T-1 the values f + c*T, with f - F in
// [0, T) and c in [0, C), are exactly the C*T consecutive integers F .. F + C*T - 1 (f - F and c
// are the digits of a number written in base T), and C*T <= R consecutive integers are distinct
// mod R. Frame F+T writes p(F+T, c) = F + (c+1)*T = p(F, c+1) for c < C-1, a plane of the oldest
// frame F, and for c = C-1 writes F + C*T, which is congruent mod R to one of F .. F + C*T - 1
// only when R = C*T, and then to F = p(F, 0), again frame F.
//
// Time first, p(f, c) = f*C + c. The clip's planes are the C*T consecutive integers F*C ..
// F*C + C*T - 1, distinct mod R as above. Frame F+T writes F*C + C*T + c for c in [0, C): with
// the clip's, C*T + C consecutive integers, so when R < C*T + C they can meet the clip's planes
// mod R only at the first C*T + C - R <= C of them, F*C .. F*C + C - 1, which are frame F's.
//
// Every clip starts at plane s < R (s = F mod R, or F*C mod R) of the double mapping and spans
// C*T <= R planes, so it ends before 2R: inside the mapping, where plane s + k of the second copy
// is plane (s + k) mod R of the ring. The same holds for next() + c*channelStride().

namespace jetagent {

namespace {

std::string describe(int length, int channels, size_t planeElements)
{
    return "clip ring of " + std::to_string(length) + " frames x " + std::to_string(channels) +
        " channels x " + std::to_string(planeElements) + " floats";
}

} // namespace

Expected<std::unique_ptr<ClipRing>> ClipRing::create(
    int length, int channels, size_t planeElements, Layout layout)
{
    const std::string what = describe(length, channels, planeElements);
    if (length < 1)
        return Status::invalid(what + ": the length (T, frames per clip) must be at least 1");
    if (channels < 1)
        return Status::invalid(what + ": the channels (C) must be at least 1");
    if (planeElements == 0)
        return Status::invalid(what + ": the plane size (floats per channel) is 0");

    const long pageSize = ::sysconf(_SC_PAGESIZE);
    if (pageSize <= 0)
        return Status::io(what + ": sysconf(_SC_PAGESIZE) failed: " + errnoText(errno));
    const size_t page = static_cast<size_t>(pageSize);

    // R*planeBytes is whole pages exactly when R is a multiple of page / gcd(planeBytes, page);
    // the smallest such R >= C*T is C*T rounded up to that multiple. Both mappings together must
    // fit in off_t and ptrdiff_t, and (f mod R) * C must fit in 64 bits.
    constexpr size_t kMaxMapped = static_cast<size_t>(std::numeric_limits<ptrdiff_t>::max());
    const size_t minPlanes = static_cast<size_t>(length) * static_cast<size_t>(channels);
    if (planeElements > kMaxMapped / sizeof(float))
        return Status::invalid(what + ": a plane of that size does not fit in memory");
    const size_t planeBytes = planeElements * sizeof(float);
    const size_t multiple = page / std::gcd(planeBytes, page);
    if (minPlanes > kMaxMapped - multiple)
        return Status::invalid(what + ": too many planes to map");
    const size_t planes = (minPlanes + multiple - 1) / multiple * multiple;
    if (planes > kMaxMapped / 2 / planeBytes ||
        planes > std::numeric_limits<uint64_t>::max() / static_cast<size_t>(channels))
        return Status::invalid(what + ": " + std::to_string(planes) + " planes of " +
            std::to_string(planeBytes) + " bytes are too large to map twice");
    const size_t size = planes * planeBytes;
    const std::string sizes =
        what + " (" + std::to_string(planes) + " planes, " + std::to_string(size) + " bytes)";

    const int fd = ::memfd_create("jetagent-clip-ring", MFD_CLOEXEC);
    if (fd < 0)
        return Status::io(sizes + ": memfd_create failed: " + errnoText(errno));
    if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
        const int error = errno;
        ::close(fd);
        return Status::io(sizes + ": ftruncate of the memfd failed: " + errnoText(error));
    }
    // Reserve both halves at once so that nothing else can be mapped between them, then map the
    // memfd over each half.
    void* reserved = ::mmap(nullptr, 2 * size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (reserved == MAP_FAILED) {
        const int error = errno;
        ::close(fd);
        return Status::io(sizes + ": reserving " + std::to_string(2 * size) +
            " bytes of address space failed: " + errnoText(error));
    }
    auto* bytes = static_cast<unsigned char*>(reserved);
    for (int half = 0; half < 2; ++half) {
        void* at = bytes + static_cast<size_t>(half) * size;
        if (::mmap(at, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
            const int error = errno;
            ::munmap(reserved, 2 * size);
            ::close(fd);
            return Status::io(sizes + ": mapping the memfd " + (half == 0 ? "once" : "twice") +
                " failed: " + errnoText(error));
        }
    }
    // The mappings keep the memory; the descriptor is no longer needed.
    if (::close(fd) != 0) {
        const int error = errno;
        ::munmap(reserved, 2 * size);
        return Status::io(sizes + ": closing the memfd failed: " + errnoText(error));
    }

    std::unique_ptr<ClipRing> ring(new ClipRing());
    ring->length_ = length;
    ring->channels_ = channels;
    ring->planeElements_ = planeElements;
    ring->layout_ = layout;
    ring->planes_ = planes;
    ring->channelStride_ = layout == Layout::ChannelsFirst
        ? static_cast<size_t>(length) * planeElements
        : planeElements;
    ring->base_ = static_cast<float*>(reserved);
    ring->infos_.resize(static_cast<size_t>(length));
    return ring;
}

ClipRing::~ClipRing()
{
    if (base_ != nullptr)
        ::munmap(base_, 2 * mappedBytes());
}

size_t ClipRing::firstPlane(uint64_t frame) const
{
    // Reduced mod R before multiplying: slot * C < R * C, which create() checked fits.
    const uint64_t slot = frame % planes_;
    if (layout_ == Layout::ChannelsFirst)
        return static_cast<size_t>(slot);
    return static_cast<size_t>(slot * static_cast<uint64_t>(channels_) % planes_);
}

float* ClipRing::next()
{
    return base_ + firstPlane(pushed_) * planeElements_;
}

void ClipRing::push(const FrameInfo& info)
{
    infos_[static_cast<size_t>(pushed_ % static_cast<uint64_t>(length_))] = info;
    ++pushed_;
}

const float* ClipRing::clip() const
{
    assert(full());
    if (!full())
        return nullptr;
    return base_ + firstPlane(pushed_ - static_cast<uint64_t>(length_)) * planeElements_;
}

const ClipRing::FrameInfo& ClipRing::info(int t) const
{
    assert(full() && t >= 0 && t < length_);
    // Frame F + t with F = pushed - T sits at (F + t) mod T = (pushed + t) mod T, which needs no
    // subtraction (and stays in range even when the contract is broken).
    const uint64_t slot = (pushed_ + static_cast<uint64_t>(static_cast<unsigned>(t))) %
        static_cast<uint64_t>(length_);
    return infos_[static_cast<size_t>(slot)];
}

bool ClipRing::contains(const void* p, size_t bytes) const
{
    const auto begin = reinterpret_cast<uintptr_t>(base_);
    const size_t mapped = 2 * mappedBytes();
    const auto at = reinterpret_cast<uintptr_t>(p);
    return base_ != nullptr && at >= begin && bytes <= mapped && at - begin <= mapped - bytes;
}

} // namespace jetagent
