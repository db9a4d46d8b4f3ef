// jetagent_raster_bench: raster.h's fills against OpenCV's LINE_AA fills on the shapes
// synthetic://shapes draws, per kind and frame size: time per shape (the background fill not
// counted) and how far the drawings differ.
//
//   jetagent_raster_bench [SHAPES_PER_KIND] [WIDTHxHEIGHT...]   (default 200 320x240 640x480
//   1280x720)
//
// Times are the minimum and median over the shapes, OpenCV's and raster.h's taken alternately in
// one run, so their ratio holds on a busy machine; areas are relative to the analytic area.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "raster_shapes.h"

namespace jetagent {
namespace {

constexpr uint64_t kSeed = 1;
constexpr double kEdgeBand = 3.0; // px from the outline beyond which the drawings should agree

struct Size {
    int width, height;
};

double seconds(std::chrono::steady_clock::time_point from)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
}

double median(std::vector<double> v)
{
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
}

void runSize(Size size, int shapes)
{
    std::printf("%dx%d, %d shapes per kind, seed %llu\n", size.width, size.height, shapes,
        static_cast<unsigned long long>(kSeed));
    std::printf("  %-8s %9s %9s %9s %9s %7s %8s %6s %7s %9s %9s\n", "shape", "cv min", "cv med",
        "ours min", "ours med", "MAD", ">8 lv", "max", "far", "cv area", "our area");
    cv::Mat reference(size.height, size.width, CV_8UC3);
    Image drawn(size.height, size.width);
    for (const raster_shapes::Kind kind : raster_shapes::kKinds) {
        std::mt19937_64 random(kSeed);
        std::vector<double> cvTimes, ourTimes;
        raster_shapes::Difference d;
        double cvArea = 0, ourArea = 0, trueArea = 0;
        for (int k = 0; k < shapes; ++k) {
            raster_shapes::Shape s =
                raster_shapes::randomShape(random, kind, size.width, size.height);
            // Timed without the background: draw once to fill it, then again over it.
            raster_shapes::drawWithOpenCv(reference, s);
            const auto cvStart = std::chrono::steady_clock::now();
            raster_shapes::drawWithOpenCv(reference, s, false);
            cvTimes.push_back(seconds(cvStart));
            raster_shapes::drawWithRaster(drawn, s);
            const auto ourStart = std::chrono::steady_clock::now();
            raster_shapes::drawWithRaster(drawn, s, false);
            ourTimes.push_back(seconds(ourStart));
            // The comparison wants a single drawing over the background.
            raster_shapes::drawWithOpenCv(reference, s);
            raster_shapes::drawWithRaster(drawn, s);
            raster_shapes::compare(reference, drawn, s, kEdgeBand, d);
            cvArea += raster_shapes::drawnArea(
                reference.ptr<uint8_t>(), reference.rows, reference.cols, reference.step, s);
            ourArea += raster_shapes::drawnArea(drawn.data, drawn.rows, drawn.cols, drawn.step, s);
            trueArea += raster_shapes::analyticArea(s);
        }
        std::printf(
            "  %-8s %7.1fus %7.1fus %7.1fus %7.1fus %7.3f %7.3f%% %6d %7ld %+8.2f%% %+8.3f%%\n",
            raster_shapes::kindName(kind), 1e6 * *std::min_element(cvTimes.begin(), cvTimes.end()),
            1e6 * median(cvTimes), 1e6 * *std::min_element(ourTimes.begin(), ourTimes.end()),
            1e6 * median(ourTimes), d.meanAbsolute(), 100.0 * d.fractionOver8(), d.largest,
            d.farPixelsDiffering, 100.0 * (cvArea / trueArea - 1.0),
            100.0 * (ourArea / trueArea - 1.0));
    }
    std::printf(
        "  MAD: mean absolute difference per channel value; >8 lv: pixels differing by more "
        "than 8 levels; max: the largest difference; far: differing pixels further than "
        "%.0f px from the outline\n",
        kEdgeBand);
}

int run(int argc, char** argv)
{
    int shapes = 200;
    std::vector<Size> sizes;
    for (int i = 1; i < argc; ++i) {
        Size size {};
        if (std::sscanf(argv[i], "%dx%d", &size.width, &size.height) == 2 && size.width > 0 &&
            size.height > 0)
            sizes.push_back(size);
        else if ((shapes = std::atoi(argv[i])) <= 0) {
            std::fprintf(stderr, "usage: %s [SHAPES_PER_KIND] [WIDTHxHEIGHT...]\n", argv[0]);
            return 2;
        }
    }
    if (sizes.empty())
        sizes = {{320, 240}, {640, 480}, {1280, 720}};
    for (const Size size : sizes)
        runSize(size, shapes);
    return 0;
}

} // namespace
} // namespace jetagent

int main(int argc, char** argv)
{
    return jetagent::run(argc, argv);
}
