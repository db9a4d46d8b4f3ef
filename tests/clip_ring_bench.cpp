// jetagent_clip_ring_bench: what the clip ring costs per frame beyond preprocessing, against
// preprocessing into a plain buffer in the same run.
//
//   jetagent_clip_ring_bench [--rounds N] [--frames N] [--length T] [--size S]
//                            [--width W] [--height H]
//
// Each round times a batch of frames for each of (a) Preprocessor::run into a plain 3 x S x S
// buffer and (b) Preprocessor::run into ring->next() at the ring's channel stride, push(), and a
// look at clip() (its address only: the clip is never copied), for a channels-first (NCTHW) and
// a time-first (NTCHW) ring; the order of the three rotates from round to round. A round's
// figure is its batch time over the frames; the report gives the median over rounds, min and
// max, and the overhead (b) - (a) of the medians. The goal, from the issue: under 0.1 ms per
// frame at 112x112, T = 16.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <opencv2/core.hpp>

#include "config/config.h"
#include "run/run_context.h"
#include "tasks/clip_ring.h"
#include "tasks/preprocess.h"
#include "test_image.h"

namespace jetagent {
namespace {

constexpr uint64_t kSeed = 1;
constexpr double kGoalMs = 0.1; // the ring's cost per frame beyond preprocessing
constexpr int kChannels = 3; // RGB
constexpr int kMinWarmupFrames = 50; // and at least twice round the ring, so its pages exist
constexpr int kExitSetupError = 1;
constexpr int kExitBadArguments = 2;

struct Options {
    int rounds = 20;
    int frames = 500; // per round and variant
    int length = 16; // T
    int size = 112; // crop width and height
    int width = 320; // source frame
    int height = 240;
};

void printUsage(std::FILE* to, const char* program)
{
    std::fprintf(to,
        "usage: %s [--rounds N] [--frames N] [--length T] [--size S] [--width W] "
        "[--height H]\n"
        "  --rounds N   timed rounds (default 20)\n"
        "  --frames N   frames per round and variant (default 500)\n"
        "  --length T   frames per clip (default 16)\n"
        "  --size S     crop width and height the frame is stretched to (default 112)\n"
        "  --width W    source frame width (default 320)\n"
        "  --height H   source frame height (default 240)\n"
        "Prints the per-frame time of preprocessing into a plain buffer and into a clip "
        "ring (NCTHW and NTCHW), medians over rounds, and the ring's overhead against the "
        "goal of < %.1f ms per frame.\n",
        program, kGoalMs);
}

// Parses "--name value" pairs; false (after a message) on anything else.
bool parseOptions(int argc, char** argv, Options& options, bool& help)
{
    struct Named {
        const char* name;
        int* value;
    };
    const Named named[] = {{"--rounds", &options.rounds}, {"--frames", &options.frames},
        {"--length", &options.length}, {"--size", &options.size}, {"--width", &options.width},
        {"--height", &options.height}};
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            help = true;
            return true;
        }
        const auto* option = std::find_if(
            std::begin(named), std::end(named), [&](const Named& n) { return arg == n.name; });
        if (option == std::end(named)) {
            std::fprintf(stderr, "unknown argument '%s' (--help lists the options)\n", arg.c_str());
            return false;
        }
        if (i + 1 >= argc) {
            std::fprintf(stderr, "%s needs a number\n", arg.c_str());
            return false;
        }
        char* end = nullptr;
        const long value = std::strtol(argv[++i], &end, 10);
        if (end == argv[i] || *end != '\0' || value < 1 || value > 1'000'000) {
            std::fprintf(stderr, "%s needs a whole number from 1 to 1000000, not '%s'\n",
                arg.c_str(), argv[i]);
            return false;
        }
        *option->value = static_cast<int>(value);
    }
    return true;
}

struct Summary {
    double median = 0;
    double min = 0;
    double max = 0;
};

Summary summarize(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    const double median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    return {median, values.front(), values.back()};
}

// Microseconds per frame for `frames` calls of `oneFrame`.
template <typename F>
double timePerFrameUs(int frames, F&& oneFrame)
{
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < frames; ++i)
        oneFrame();
    const auto end = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::micro>(end - start).count() / frames;
}

int run(const Options& o)
{
    PreprocessConfig config;
    config.resize = ResizeMode::Stretch;
    config.cropWidth = o.size;
    config.cropHeight = o.size;
    config.interpolation = Interpolation::Linear;
    config.color = ColorOrder::Rgb;
    config.divisor = 255.0f;
    config.mean = {0.485f, 0.456f, 0.406f}; // ImageNet
    config.std = {0.229f, 0.224f, 0.225f};
    Preprocessor preprocessor(config);

    cv::Mat frame(o.height, o.width, CV_8UC3);
    cv::RNG rng(kSeed);
    rng.fill(frame, cv::RNG::UNIFORM, 0, 256);

    const size_t plane = preprocessor.planeElements();
    std::vector<float> plainBuffer(preprocessor.outputElements());

    struct Variant {
        const char* name;
        std::unique_ptr<ClipRing> ring;
    };
    Variant rings[2] = {{"NCTHW", nullptr}, {"NTCHW", nullptr}};
    const ClipRing::Layout layouts[2] = {
        ClipRing::Layout::ChannelsFirst, ClipRing::Layout::TimeFirst};
    for (int i = 0; i < 2; ++i) {
        auto ring = ClipRing::create(o.length, kChannels, plane, layouts[i]);
        if (!ring) {
            std::fprintf(stderr, "%s ring: %s\n", rings[i].name, ring.status().message().c_str());
            return kExitSetupError;
        }
        rings[i].ring = std::move(ring).value();
    }
    const ClipRing& shape = *rings[0].ring;
    const int warmup =
        std::max(kMinWarmupFrames, static_cast<int>(std::min<size_t>(2 * shape.planes(), 100000)));

    std::printf("jetagent clip ring benchmark\n");
    std::printf("frame %dx%d BGR (random, seed %llu), stretched to %dx%d, linear, RGB, ImageNet "
                "mean/std\n",
        o.width, o.height, static_cast<unsigned long long>(kSeed), o.size, o.size);
    std::printf("clip T = %d frames x C = %d channels x %zu floats per plane; R = %zu planes, "
                "%zu bytes mapped (twice), page %ld bytes\n",
        o.length, kChannels, plane, shape.planes(), shape.mappedBytes(), ::sysconf(_SC_PAGESIZE));
    std::printf("%d rounds x %d frames per variant after %d warm-up frames each; times in us per "
                "frame\n",
        o.rounds, o.frames, warmup);
#if defined(__VERSION__)
    std::printf("compiler %s, ", __VERSION__);
#endif
    std::printf("OpenCV %s on %d threads, CPU %s\n\n", cv::getVersionString().c_str(),
        cv::getNumThreads(), collectRunContext(detectBoard(SysfsRoot())).cpu.c_str());

    uint64_t frameId = 0;
    const float* volatile clipSeen = nullptr; // the clip's address, read so the call is kept
    // The frame and crop are fixed and valid: a refusal here is a bug, not a measurement.
    auto check = [](const Status& s) {
        if (!s) {
            std::fprintf(stderr, "preprocessing failed: %s\n", s.message().c_str());
            std::exit(1);
        }
    };
    auto plainFrame = [&] { check(preprocessor.run(test::asImage(frame), plainBuffer.data())); };
    auto ringFrame = [&](ClipRing& ring) {
        check(preprocessor.run(test::asImage(frame), ring.next(), ring.channelStride()));
        ClipRing::FrameInfo info;
        info.frameId = frameId++;
        ring.push(info);
        clipSeen = ring.clip();
    };

    for (int i = 0; i < warmup; ++i) {
        plainFrame();
        for (Variant& v : rings)
            ringFrame(*v.ring);
    }

    // Variant 0 is the plain buffer, 1 and 2 the rings.
    std::vector<double> perFrameUs[3];
    for (int round = 0; round < o.rounds; ++round) {
        for (int k = 0; k < 3; ++k) {
            const int variant = (round + k) % 3;
            const double us = variant == 0
                ? timePerFrameUs(o.frames, plainFrame)
                : timePerFrameUs(o.frames, [&] { ringFrame(*rings[variant - 1].ring); });
            perFrameUs[variant].push_back(us);
        }
    }

    if (clipSeen == nullptr) {
        std::fprintf(stderr, "the rings never held a full clip\n");
        return kExitSetupError;
    }
    // The work was real: each ring's newest frame is the plain buffer's frame, bit for bit.
    for (const Variant& v : rings) {
        const ClipRing& ring = *v.ring;
        const float* clip = ring.clip();
        for (int c = 0; c < kChannels; ++c) {
            const size_t at = ring.layout() == ClipRing::Layout::ChannelsFirst
                ? static_cast<size_t>(c * o.length + o.length - 1) * plane
                : static_cast<size_t>((o.length - 1) * kChannels + c) * plane;
            if (std::memcmp(clip + at, plainBuffer.data() + static_cast<size_t>(c) * plane,
                    plane * sizeof(float)) != 0) {
                std::fprintf(stderr,
                    "%s ring: channel %d of the newest frame differs from the "
                    "plain buffer\n",
                    v.name, c);
                return kExitSetupError;
            }
        }
    }

    const Summary plain = summarize(perFrameUs[0]);
    std::printf("%-38s %9s %9s %9s %14s\n", "", "median", "min", "max", "median (b)-(a)");
    std::printf("%-38s %9.3f %9.3f %9.3f\n", "(a) preprocess into a plain buffer", plain.median,
        plain.min, plain.max);
    double overheadMs[2] = {0, 0};
    for (int i = 0; i < 2; ++i) {
        const Summary ring = summarize(perFrameUs[i + 1]);
        const std::string label =
            std::string("(b) preprocess into ") + rings[i].name + " ring, push";
        overheadMs[i] = (ring.median - plain.median) / 1000.0;
        std::printf("%-38s %9.3f %9.3f %9.3f %+14.3f\n", label.c_str(), ring.median, ring.min,
            ring.max, ring.median - plain.median);
    }
    // The same difference taken round by round, where both halves ran seconds apart at most.
    std::printf("\nper-round (b)-(a), us per frame:");
    for (int i = 0; i < 2; ++i) {
        std::vector<double> differences;
        for (size_t r = 0; r < perFrameUs[0].size(); ++r)
            differences.push_back(perFrameUs[i + 1][r] - perFrameUs[0][r]);
        const Summary d = summarize(differences);
        std::printf("%s %s median %+.3f (min %+.3f, max %+.3f)", i == 0 ? "" : ";", rings[i].name,
            d.median, d.min, d.max);
    }
    const bool met = overheadMs[0] < kGoalMs && overheadMs[1] < kGoalMs;
    std::printf("\n\nring overhead per frame: NCTHW %+.3f ms, NTCHW %+.3f ms (goal < %.1f ms): "
                "goal %s\n",
        overheadMs[0], overheadMs[1], kGoalMs, met ? "met" : "NOT met");
    return 0;
}

} // namespace
} // namespace jetagent

int main(int argc, char** argv)
{
    jetagent::Options options;
    bool help = false;
    if (!jetagent::parseOptions(argc, argv, options, help)) {
        jetagent::printUsage(stderr, argv[0]);
        return jetagent::kExitBadArguments;
    }
    if (help) {
        jetagent::printUsage(stdout, argv[0]);
        return 0;
    }
    return jetagent::run(options);
}
