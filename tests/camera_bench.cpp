// Benchmark: camera pixel conversion and V4L2 capture of 1280x720 frames, time and allocations.
//
//   jetagent_camera_bench [--frames N] [--warmup N]
//
// Conversion alone for each format, OpenCV's own conversion and decoding beside it, then capture
// plus conversion through the V4L2 source on a fake camera. Every heap allocation of this binary
// is counted (operator new; malloc, calloc, realloc and the aligned family, which cv::Mat uses)
// by tests/alloc_counting.cpp. Percentiles are nearest-rank.
#include <linux/videodev2.h>
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <spdlog/spdlog.h>

#include "alloc_counting.h"
#include "fake_v4l2.h"
#include "jetagent/hal/frame_source.h"
#include "jetagent/hal/image_codec.h"
#include "jetagent/hal/pixel_convert.h"
#include "jetagent/hal/v4l2_source.h"
#include "test_image.h"

namespace jetagent {
namespace {

using test::countedMallocs;
using test::countedNews;
using test::KernelSideIo;

constexpr int kWidth = 1280;
constexpr int kHeight = 720;
constexpr uint64_t kSeed = 1;
constexpr int kJpegQuality = 90; // what UVC cameras commonly encode at
constexpr double kGoalMs = 2.0; // capture plus conversion of 1280x720 YUYV
constexpr int kP99Samples = 662; // MLPerf LoadGen's minimum for a p99 at 99% confidence

using Bytes = std::vector<uint8_t>;

struct Timing {
    std::vector<double> ms; // per frame
    uint64_t news = 0; // over all timed frames
    uint64_t mallocs = 0;
    int failures = 0;
};

// Warms up, then times `frames` calls of `oneFrame` (which returns false on failure).
template <typename F>
Timing measure(int warmup, int frames, F&& oneFrame)
{
    Timing t;
    for (int i = 0; i < warmup; ++i)
        t.failures += oneFrame() ? 0 : 1;
    t.ms.reserve(static_cast<size_t>(frames));
    const uint64_t news = countedNews();
    const uint64_t mallocs = countedMallocs();
    for (int i = 0; i < frames; ++i) {
        const auto start = std::chrono::steady_clock::now();
        const bool ok = oneFrame();
        const auto end = std::chrono::steady_clock::now();
        t.ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
        t.failures += ok ? 0 : 1;
    }
    t.news = countedNews() - news;
    t.mallocs = countedMallocs() - mallocs;
    return t;
}

double percentile(const std::vector<double>& sorted, double p)
{
    const auto rank =
        static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
    return sorted[std::min(sorted.size(), std::max<size_t>(rank, 1)) - 1];
}

void printHeader()
{
    std::printf("%-34s %7s %7s %7s %7s %7s %9s %9s\n", "", "min", "mean", "p50", "p99", "max",
        "new/fr", "malloc/fr");
}

// Prints one row; returns the mean.
double printRow(const std::string& label, const Timing& t, const char* note = "")
{
    std::vector<double> sorted = t.ms;
    std::sort(sorted.begin(), sorted.end());
    double sum = 0;
    for (const double v : sorted)
        sum += v;
    const double frames = static_cast<double>(sorted.size());
    const double mean = sum / frames;
    std::printf("%-34s %7.3f %7.3f %7.3f %7.3f %7.3f %9.2f %9.2f%s%s\n", label.c_str(),
        sorted.front(), mean, percentile(sorted, 50), percentile(sorted, 99), sorted.back(),
        static_cast<double>(t.news) / frames, static_cast<double>(t.mallocs) / frames,
        *note != '\0' ? "  " : "", note);
    if (t.failures != 0)
        std::printf("%-34s %d frames FAILED\n", "", t.failures);
    return mean;
}

std::string cpuModel()
{
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    std::string fallback = "unknown";
    while (std::getline(cpuinfo, line)) {
        const auto colon = line.find(": ");
        if (colon == std::string::npos)
            continue;
        std::string value = line.substr(colon + 2);
        if (line.rfind("model name", 0) == 0)
            return value; // x86
        if (line.rfind("Model", 0) == 0 || line.rfind("Hardware", 0) == 0)
            fallback = value; // Arm boards name the board or the SoC instead
    }
    return fallback;
}

// A camera-like picture: smooth shading with detail, so MJPEG frames have a realistic size.
cv::Mat scene()
{
    cv::Mat picture(kHeight, kWidth, CV_8UC3);
    cv::RNG rng(kSeed);
    rng.fill(picture, cv::RNG::UNIFORM, 0, 256);
    cv::GaussianBlur(picture, picture, cv::Size(0, 0), 2.0);
    for (int i = 0; i < 40; ++i) {
        const cv::Point a(rng.uniform(0, kWidth), rng.uniform(0, kHeight));
        const cv::Point b(rng.uniform(0, kWidth), rng.uniform(0, kHeight));
        cv::rectangle(picture, a, b,
            cv::Scalar(rng.uniform(0, 256), rng.uniform(0, 256), rng.uniform(0, 256)), 3);
    }
    return picture;
}

uint8_t clampLevel(double v)
{
    return static_cast<uint8_t>(std::min(255.0, std::max(0.0, std::round(v))));
}

// BT.601 limited-range Y, Cb, Cr of one BGR pixel (the inverse of what the converter computes).
void ycbcr(const cv::Vec3b& p, double& y, double& cb, double& cr)
{
    const double b = p[0], g = p[1], r = p[2];
    y = 16.0 + (65.481 * r + 128.553 * g + 24.966 * b) / 255.0;
    cb = 128.0 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255.0;
    cr = 128.0 + (112.0 * r - 93.786 * g - 18.214 * b) / 255.0;
}

Bytes toYUYV(const cv::Mat& bgr)
{
    Bytes out(static_cast<size_t>(bgr.total()) * 2);
    for (int row = 0; row < bgr.rows; ++row) {
        for (int x = 0; x < bgr.cols; x += 2) {
            double y0, cb0, cr0, y1, cb1, cr1;
            ycbcr(bgr.at<cv::Vec3b>(row, x), y0, cb0, cr0);
            ycbcr(bgr.at<cv::Vec3b>(row, x + 1), y1, cb1, cr1);
            uint8_t* p = out.data() + (static_cast<size_t>(row) * bgr.cols + x) * 2;
            p[0] = clampLevel(y0);
            p[1] = clampLevel((cb0 + cb1) / 2);
            p[2] = clampLevel(y1);
            p[3] = clampLevel((cr0 + cr1) / 2);
        }
    }
    return out;
}

Bytes toNV12(const cv::Mat& bgr)
{
    const size_t luma = bgr.total();
    Bytes out(luma * 3 / 2);
    for (int row = 0; row < bgr.rows; row += 2) {
        for (int x = 0; x < bgr.cols; x += 2) {
            double cbSum = 0, crSum = 0;
            for (int dy = 0; dy < 2; ++dy) {
                for (int dx = 0; dx < 2; ++dx) {
                    double y, cb, cr;
                    ycbcr(bgr.at<cv::Vec3b>(row + dy, x + dx), y, cb, cr);
                    out[static_cast<size_t>(row + dy) * bgr.cols + x + dx] = clampLevel(y);
                    cbSum += cb;
                    crSum += cr;
                }
            }
            uint8_t* pair = out.data() + luma + static_cast<size_t>(row / 2) * bgr.cols + x;
            pair[0] = clampLevel(cbSum / 4);
            pair[1] = clampLevel(crSum / 4);
        }
    }
    return out;
}

Bytes matBytes(const cv::Mat& m)
{
    return Bytes(m.data, m.data + m.total() * m.elemSize());
}

struct Prepared {
    const char* name;
    Bytes data;
};

std::vector<Prepared> prepareFormats(const cv::Mat& picture)
{
    std::vector<Prepared> formats;
    formats.push_back({"YUYV", toYUYV(picture)});
    formats.push_back({"NV12", toNV12(picture)});
    Bytes jpeg;
    if (!encodeJpeg(test::asImage(picture), kJpegQuality, jpeg).ok())
        std::abort();
    formats.push_back({"MJPG", jpeg});
    cv::Mat rgb, grey;
    cv::cvtColor(picture, rgb, cv::COLOR_BGR2RGB);
    cv::cvtColor(picture, grey, cv::COLOR_BGR2GRAY);
    formats.push_back({"RGB3", matBytes(rgb)});
    formats.push_back({"BGR3", matBytes(picture)});
    formats.push_back({"GREY", matBytes(grey)});
    return formats;
}

int run(int frames, int warmup)
{
    std::printf("jetagent camera benchmark: %dx%d, %d frames after %d warm-up frames\n", kWidth,
        kHeight, frames, warmup);
    std::printf("CPU: %s\n", cpuModel().c_str());
    std::printf("OpenCV %s, cv::getNumThreads() = %d, CPU features %s\n",
        cv::getVersionString().c_str(), cv::getNumThreads(), cv::getCPUFeaturesLine().c_str());
    std::printf("times in ms per frame; percentiles nearest-rank%s\n\n",
        frames < kP99Samples ? " (p99 needs 662 frames to mean much)" : "");

    const cv::Mat picture = scene();
    const std::vector<Prepared> formats = prepareFormats(picture);

    std::printf("conversion alone\n");
    printHeader();
    for (const Prepared& f : formats) {
        PixelConverter converter;
        if (Status s = converter.configure(fourccFromName(f.name), kWidth, kHeight, 0, 0); !s) {
            std::printf("%s: %s\n", f.name, s.message().c_str());
            return 1;
        }
        Image bgr;
        const Timing t = measure(warmup, frames,
            [&] { return converter.convert(f.data.data(), f.data.size(), bgr).ok(); });
        std::string label = std::string(f.name);
        if (std::strcmp(f.name, "MJPG") == 0)
            label += " (q" + std::to_string(kJpegQuality) + ", " +
                std::to_string(f.data.size() / 1024) + " KiB)";
        // How close the frame came back to the picture it was made from (chroma subsampling
        // and JPEG lose detail; GREY loses the colour).
        char note[64] = "identical to the picture";
        if (std::strcmp(f.name, "GREY") == 0)
            note[0] = '\0';
        else if (cv::norm(test::asMat(bgr), picture, cv::NORM_INF) != 0.0)
            std::snprintf(note, sizeof note, "PSNR %.1f dB", cv::PSNR(test::asMat(bgr), picture));
        printRow(label, t, note);
    }

    // OpenCV's own conversion and decoding of the same frames, for comparison in the same run.
    // Debian's build runs cvtColor on TBB, whose task allocations (tbbmalloc) are not counted.
    std::printf("\nfor comparison: OpenCV alone (cvtColor on %d threads)\n", cv::getNumThreads());
    printHeader();
    cv::Mat bgr;
    const Bytes& yuyv = formats[0].data;
    printRow("YUYV cvtColor(COLOR_YUV2BGR_YUYV)", measure(warmup, frames, [&] {
        cv::cvtColor(cv::Mat(kHeight, kWidth, CV_8UC2, const_cast<uint8_t*>(yuyv.data())), bgr,
            cv::COLOR_YUV2BGR_YUYV);
        return true;
    }));
    const Bytes& nv12 = formats[1].data;
    printRow("NV12 cvtColor(COLOR_YUV2BGR_NV12)", measure(warmup, frames, [&] {
        cv::cvtColor(cv::Mat(kHeight * 3 / 2, kWidth, CV_8UC1, const_cast<uint8_t*>(nv12.data())),
            bgr, cv::COLOR_YUV2BGR_NV12);
        return true;
    }));
    // The converter decodes into its scratch frame and copies on success, so that a bad frame
    // leaves the caller's image alone; this row shows what the copy adds.
    const Bytes& jpeg = formats[2].data;
    JpegDecoder decoder;
    const uint64_t pixels = uint64_t {kWidth} * kHeight;
    Image decoded;
    printRow("MJPG JpegDecoder (TurboJPEG) alone", measure(warmup, frames, [&] {
        return decoder.decode(jpeg.data(), jpeg.size(), pixels, decoded, false, false).ok();
    }));

    // Capture plus conversion: the V4L2 source on a fake webcam that hands out the prepared frame
    // (its bytes sit in the mapped buffers already, as after a driver's DMA), so this is the
    // source's own cost: poll, DQBUF, conversion, QBUF, bookkeeping.
    std::printf("\ncapture plus conversion: openV4L2Source on a fake camera (free-running; the "
                "fake's own allocations, the kernel's part, are not counted)\n");
    printHeader();
    for (const char* name : {"YUYV", "NV12", "MJPG"}) {
        const Prepared& f = *std::find_if(formats.begin(), formats.end(),
            [&](const Prepared& p) { return std::strcmp(p.name, name) == 0; });
        test::FakeV4L2 fake({test::fakeWebcam()});
        fake.setFrameData("/dev/video0", f.data);
        fake.setFreeRunning("/dev/video0", true);
        SourceOptions options;
        options.uri = "v4l2:///dev/video0";
        options.width = kWidth;
        options.height = kHeight;
        options.camera.format = name;
        KernelSideIo io(fake);
        auto source = openV4L2Source(options, io);
        if (!source) {
            std::printf("%s: %s\n", name, source.status().message().c_str());
            return 1;
        }
        Frame frame;
        const Timing t = measure(warmup, frames, [&] {
            const Expected<ReadResult> r = (*source)->read(frame);
            return r.ok() && r.value() == ReadResult::Frame;
        });
        const bool goal = std::strcmp(name, "YUYV") == 0;
        char note[96] = "";
        if (goal)
            std::snprintf(note, sizeof note, "goal: < %.0f ms per frame, 0 allocations", kGoalMs);
        const double mean = printRow(std::string(name) + " read()", t, note);
        if (goal) {
            const uint64_t allocated = t.news + t.mallocs;
            const bool met = mean < kGoalMs && allocated == 0 && t.failures == 0;
            std::printf("%-34s goal %s (mean %.3f ms, %" PRIu64 " allocations in %d frames)\n", "",
                met ? "met" : "NOT MET", mean, allocated, frames);
        }
    }
    return 0;
}

} // namespace
} // namespace jetagent

int main(int argc, char** argv)
{
    int frames = 700;
    int warmup = 30;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if ((arg == "--frames" || arg == "--warmup") && i + 1 < argc) {
            const int value = std::atoi(argv[++i]);
            if (value < (arg == "--frames" ? 1 : 0)) {
                std::fprintf(stderr, "%s needs a number%s\n", arg.c_str(),
                    arg == "--frames" ? " above 0" : "");
                return 2;
            }
            (arg == "--frames" ? frames : warmup) = value;
        } else {
            std::fprintf(stderr, "usage: %s [--frames N] [--warmup N]\n", argv[0]);
            return 2;
        }
    }
    spdlog::set_level(
        spdlog::level::warn); // the source's "capturing from" lines would split the table
    return jetagent::run(frames, warmup);
}
