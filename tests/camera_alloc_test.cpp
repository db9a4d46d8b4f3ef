// Heap allocations per frame of pixel conversion and of V4L2 capture, counted in this binary.
//
// Uncompressed formats allocate nothing per frame, in the converter and through the V4L2 source;
// MJPEG costs only what the library decoder allocates. Counted: global operator new, and malloc,
// calloc, realloc and the aligned family (cv::Mat buffers come from posix_memalign), replaced by
// tests/alloc_counting.cpp and forwarded to glibc's own functions.
//
// Blind spot: OpenCV's TBB backend (Debian's build) takes its task objects from tbbmalloc, which
// maps its memory itself; those allocations are invisible here. The converter does not use
// OpenCV's thread pool for uncompressed formats, so nothing of it hides there.
#include <linux/videodev2.h>
#include <malloc.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include <gtest/gtest.h>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <turbojpeg.h>

#include "alloc_counting.h"
#include "fake_v4l2.h"
#include "jetagent/hal/frame_source.h"
#include "jetagent/hal/image_codec.h"
#include "jetagent/hal/pixel_convert.h"
#include "jetagent/hal/v4l2_source.h"
#include "test_image.h"

namespace jetagent {
namespace {

using test::countedAllocations;
using test::countedMallocs;
using test::countedNews;
using test::KernelSideIo;

constexpr uint64_t kSeed = 7;
constexpr int kWidth = 1280;
constexpr int kHeight = 720;
constexpr int kWarmUpFrames = 3;
constexpr int kFrames = 50;
constexpr int kCaptureFrames = 400; // enough that an allocation every few hundred frames shows
constexpr int kJpegQuality = 90;

uint64_t allocations()
{
    return countedAllocations();
}

// Keeps the compiler from pairing and removing the deliberate allocations below.
void* volatile g_sink = nullptr;

TEST(CameraAllocCounting, SeesNewMallocAndMatBuffers)
{
    uint64_t before = countedNews();
    g_sink = new int(1);
    delete static_cast<int*>(g_sink);
    EXPECT_EQ(countedNews() - before, 1u);

    before = countedMallocs();
    g_sink = std::malloc(64);
    g_sink = std::realloc(g_sink, 4096);
    std::free(g_sink);
    g_sink = std::calloc(4, 16);
    std::free(g_sink);
    EXPECT_EQ(countedMallocs() - before, 3u);

    before = allocations();
    {
        cv::Mat image(kHeight, kWidth, CV_8UC3);
        g_sink = image.data;
    }
    EXPECT_GE(allocations() - before, 1u) << "a cv::Mat buffer was not counted";
}

struct UncompressedCase {
    const char* fourcc;
    size_t lineBytes; // per pixel (of the first plane)
    size_t padding; // bytes after each line, as some drivers pad bytesperline
    size_t planeLines; // lines of bytesperline, in halves (NV12: 3 = 1.5 x height)
};

TEST(CameraAllocations, UncompressedConversionAllocatesNothingPerFrame)
{
    const UncompressedCase cases[] = {{"YUYV", 2, 0, 2}, {"YUYV", 2, 64, 2}, {"NV12", 1, 0, 3},
        {"NV12", 1, 32, 3}, {"RGB3", 3, 0, 2}, {"BGR3", 3, 0, 2}, {"GREY", 1, 0, 2}};
    cv::RNG rng(kSeed);
    for (const UncompressedCase& c : cases) {
        const size_t stride = c.lineBytes * kWidth + c.padding;
        std::vector<uint8_t> frame(stride * kHeight * c.planeLines / 2);
        rng.fill(cv::Mat(1, static_cast<int>(frame.size()), CV_8UC1, frame.data()),
            cv::RNG::UNIFORM, 0, 256);
        PixelConverter converter;
        const Status configured = converter.configure(
            fourccFromName(c.fourcc), kWidth, kHeight, static_cast<uint32_t>(stride), 0);
        ASSERT_TRUE(configured.ok()) << configured.message();
        Image bgr;
        for (int i = 0; i < kWarmUpFrames; ++i)
            ASSERT_TRUE(converter.convert(frame.data(), frame.size(), bgr).ok());
        const uint64_t before = allocations();
        for (int i = 0; i < kFrames; ++i)
            ASSERT_TRUE(converter.convert(frame.data(), frame.size(), bgr).ok());
        EXPECT_EQ(allocations() - before, 0u)
            << c.fourcc << " padding " << c.padding << ": allocations in " << kFrames << " frames";
    }
}

// The converter adds nothing to what the decoder itself allocates per frame, and its destination
// and scratch buffers settle after the first frame.
TEST(CameraAllocations, MJPEGCostsOnlyTheDecodersOwnAllocations)
{
    cv::Mat picture(kHeight, kWidth, CV_8UC3);
    cv::RNG rng(kSeed);
    rng.fill(picture, cv::RNG::UNIFORM, 0, 256);
    cv::GaussianBlur(picture, picture, cv::Size(0, 0), 3.0);
    std::vector<uint8_t> jpeg;
    ASSERT_TRUE(encodeJpeg(test::asImage(picture), kJpegQuality, jpeg).ok());

    PixelConverter converter;
    ASSERT_TRUE(converter.configure(V4L2_PIX_FMT_MJPEG, kWidth, kHeight, 0, 0).ok());
    Image bgr;
    for (int i = 0; i < kWarmUpFrames; ++i)
        ASSERT_TRUE(converter.convert(jpeg.data(), jpeg.size(), bgr).ok());
    const uint8_t* buffer = bgr.data;
    uint64_t before = allocations();
    for (int i = 0; i < kFrames; ++i)
        ASSERT_TRUE(converter.convert(jpeg.data(), jpeg.size(), bgr).ok());
    const uint64_t converted = allocations() - before;
    EXPECT_EQ(bgr.data, buffer);

    // TurboJPEG alone, on a handle kept across frames, into a buffer allocated once: the header
    // read (which the converter needs to hold the size to its limit before decoding), then the
    // picture.
    tjhandle handle = tjInitDecompress();
    ASSERT_NE(handle, nullptr);
    cv::Mat decoded(kHeight, kWidth, CV_8UC3);
    auto decode = [&] {
        int width = 0;
        int height = 0;
        int subsampling = 0;
        int colourspace = 0;
        if (tjDecompressHeader3(
                handle, jpeg.data(), jpeg.size(), &width, &height, &subsampling, &colourspace) != 0)
            return -1;
        return tjDecompress2(handle, jpeg.data(), jpeg.size(), decoded.data, kWidth,
            static_cast<int>(decoded.step[0]), kHeight, TJPF_BGR, 0);
    };
    ASSERT_EQ(decode(), 0) << tjGetErrorStr2(handle);
    before = allocations();
    for (int i = 0; i < kFrames; ++i)
        decode();
    const uint64_t library = allocations() - before;
    tjDestroy(handle);

    EXPECT_EQ(converted, library) << "allocations in " << kFrames << " MJPEG frames: " << converted
                                  << ", of which TurboJPEG's own " << library;
    RecordProperty("mjpeg_allocations_per_frame", static_cast<int>(converted / kFrames));
    std::printf("MJPEG %dx%d: %.1f allocations per frame, all in TurboJPEG\n", kWidth, kHeight,
        static_cast<double>(converted) / kFrames);
}

// The whole capture path on a fake camera: poll, DQBUF, conversion into the caller's frame, QBUF.
TEST(CameraAllocations, CaptureThroughTheV4L2SourceAllocatesNothingPerFrame)
{
    for (const char* name : {"YUYV", "NV12"}) {
        const size_t bytes =
            std::strcmp(name, "YUYV") == 0 ? kWidth * kHeight * 2 : kWidth * kHeight * 3 / 2;
        std::vector<uint8_t> data(bytes);
        cv::RNG rng(kSeed);
        rng.fill(cv::Mat(1, static_cast<int>(data.size()), CV_8UC1, data.data()), cv::RNG::UNIFORM,
            0, 256);
        test::FakeV4L2 fake({test::fakeWebcam()});
        fake.setFrameData("/dev/video0", std::move(data));
        fake.setFreeRunning("/dev/video0", true);
        SourceOptions options;
        options.uri = "v4l2:///dev/video0";
        options.width = kWidth;
        options.height = kHeight;
        options.camera.format = name;
        KernelSideIo io(fake);
        auto source = openV4L2Source(options, io);
        ASSERT_TRUE(source.ok()) << source.status().message();

        Frame frame;
        auto readFrame = [&] {
            const Expected<ReadResult> r = (*source)->read(frame);
            return r.ok() && r.value() == ReadResult::Frame;
        };
        for (int i = 0; i < kWarmUpFrames; ++i)
            ASSERT_TRUE(readFrame()) << name << ": warm-up frame " << i;
        const uint8_t* buffer = frame.image.data;
        const uint64_t before = allocations();
        int delivered = 0;
        for (int i = 0; i < kCaptureFrames; ++i)
            delivered += readFrame() ? 1 : 0;
        const uint64_t allocated = allocations() - before;
        EXPECT_EQ(delivered, kCaptureFrames) << name;
        EXPECT_EQ(allocated, 0u) << name << ": allocations in " << kCaptureFrames
                                 << " captured frames";
        EXPECT_EQ(frame.image.data, buffer) << name;
        EXPECT_EQ(frame.image.cols, kWidth) << name;
        EXPECT_EQ(frame.image.rows, kHeight) << name;
    }
}

} // namespace
} // namespace jetagent
