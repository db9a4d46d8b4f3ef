// Frame sources: synthetic determinism, video files, image directories, and their errors.
#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/videoio.hpp>

#include "jetagent/hal/file_sources.h"
#include "jetagent/hal/frame_source.h"
#include "jetagent/hal/gstreamer_source.h"
#include "jetagent/hal/synthetic_shapes.h"
#include "test_image.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace jetagent {
namespace {

using test::TempDir;

std::unique_ptr<FrameSource> open(const SourceOptions& options)
{
    auto r = openFrameSource(options);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? std::move(r).value() : nullptr;
}

SourceOptions uri(const std::string& u)
{
    SourceOptions o;
    o.uri = u;
    return o;
}

bool identical(const cv::Mat& a, const cv::Mat& b)
{
    return a.size() == b.size() && a.type() == b.type() && cv::norm(a, b, cv::NORM_INF) == 0;
}

TEST(SyntheticShapes, FramesAreDeterministicPerSeedAndIndex)
{
    ShapesRenderer a(320, 240, 7), b(320, 240, 7), other(320, 240, 8);
    Image x, y, z;
    for (uint64_t i : {0u, 1u, 57u, 1000u}) {
        const int ca = a.render(i, x);
        b.render(i + 1, y); // render something else first: frames must not depend on history
        const int cb = b.render(i, y);
        EXPECT_EQ(ca, cb);
        EXPECT_TRUE(identical(test::asMat(x), test::asMat(y))) << "frame " << i;
        other.render(i, z);
        EXPECT_FALSE(identical(test::asMat(x), test::asMat(z)))
            << "frame " << i << " is the same under another seed";
    }
}

TEST(SyntheticShapes, SourceDeliversSequencedTimestampedFramesOfEveryClass)
{
    SourceOptions o = uri("synthetic://shapes");
    o.width = 160;
    o.height = 120;
    auto source = open(o);
    ASSERT_TRUE(source);
    EXPECT_EQ(source->info().kind, "synthetic");
    EXPECT_EQ(source->info().classNames.size(), 6u);
    EXPECT_FALSE(source->info().live);
    Frame f;
    std::vector<int> perClass(6, 0);
    int64_t last = 0;
    for (uint64_t i = 0; i < 300; ++i) {
        auto r = source->read(f);
        ASSERT_TRUE(r.ok());
        ASSERT_EQ(r.value(), ReadResult::Frame);
        EXPECT_EQ(f.sequence, i);
        EXPECT_GE(f.captureNs, last);
        last = f.captureNs;
        EXPECT_EQ(f.image.cols, 160);
        EXPECT_EQ(f.image.rows, 120);
        EXPECT_EQ(f.image.channels(), 3);
        ASSERT_GE(f.truthClass, 0);
        ASSERT_LT(f.truthClass, 6);
        ++perClass[static_cast<size_t>(f.truthClass)];
    }
    for (int n : perClass)
        EXPECT_GT(n, 20); // roughly balanced: about 50 each
}

TEST(SyntheticShapes, ReusesTheFrameBuffer)
{
    auto source = open(uri("synthetic://shapes"));
    Frame f;
    ASSERT_TRUE(source->read(f).ok());
    const uchar* data = f.image.data;
    ASSERT_TRUE(source->read(f).ok());
    EXPECT_EQ(f.image.data, data);
}

TEST(SyntheticShapes, UnknownPatternAndBadSizeAreErrors)
{
    auto r = openFrameSource(uri("synthetic://noise"));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("synthetic://shapes"), std::string::npos);
    SourceOptions o = uri("synthetic://shapes");
    o.width = 8;
    EXPECT_FALSE(openFrameSource(o).ok());
}

// Writes `count` frames of a known pattern with OpenCV's built-in MJPEG writer (always available).
std::string writeVideo(const TempDir& dir, int count)
{
    std::string path = dir / "clip.avi";
    cv::VideoWriter writer(
        path, cv::VideoWriter::fourcc('M', 'J', 'P', 'G'), 25.0, cv::Size(160, 120));
    EXPECT_TRUE(writer.isOpened());
    for (int i = 0; i < count; ++i) {
        cv::Mat m(120, 160, CV_8UC3, cv::Scalar(i * 10 % 256, 128, 255 - i * 10 % 256));
        writer.write(m);
    }
    return path;
}

TEST(VideoFile, ReadsEveryFrameThenEnds)
{
    TempDir dir;
    const std::string path = writeVideo(dir, 12);
    for (const std::string& u : {"file://" + path, path}) {
        auto source = open(uri(u));
        ASSERT_TRUE(source);
        EXPECT_EQ(source->info().kind, "video-file");
        EXPECT_EQ(source->info().width, 160);
        EXPECT_EQ(source->info().height, 120);
        EXPECT_NEAR(source->info().fps, 25.0, 0.01);
        Frame f;
        int frames = 0;
        int64_t last = 0;
        while (true) {
            auto r = source->read(f);
            ASSERT_TRUE(r.ok()) << r.status().message();
            if (r.value() == ReadResult::EndOfStream)
                break;
            EXPECT_EQ(f.sequence, static_cast<uint64_t>(frames));
            EXPECT_GE(f.captureNs, last);
            last = f.captureNs;
            EXPECT_EQ(f.truthClass, -1);
            // MJPEG is lossy; the frame's blue level follows the pattern written.
            EXPECT_NEAR(cv::mean(test::asMat(f.image))[0], frames * 10 % 256, 6.0)
                << "frame " << frames;
            ++frames;
        }
        EXPECT_EQ(frames, 12);
    }
}

TEST(VideoFile, LoopsWhenAsked)
{
    TempDir dir;
    SourceOptions o = uri(writeVideo(dir, 5));
    o.loop = true;
    auto source = open(o);
    Frame f;
    for (int i = 0; i < 12; ++i) {
        auto r = source->read(f);
        ASSERT_TRUE(r.ok());
        ASSERT_EQ(r.value(), ReadResult::Frame) << "frame " << i;
        EXPECT_EQ(f.sequence, static_cast<uint64_t>(i));
    }
}

// MP4 files as cameras, phones and encoders write them: MPEG-4 part 2 and H.264, written here by
// OpenCV's FFmpeg writer and decoded by GStreamer (avdec_mpeg4, avdec_h264 from
// gstreamer1.0-libav; openh264dec from gstreamer1.0-plugins-bad also decodes H.264).
TEST(VideoFile, ReadsMp4FilesOfMpeg4AndH264)
{
    TempDir dir;
    const struct {
        const char* name;
        int fourcc;
        std::vector<std::string> decoders; // any one of them decodes it
    } cases[] = {
        {"mpeg4.mp4", cv::VideoWriter::fourcc('m', 'p', '4', 'v'), {"avdec_mpeg4"}},
        {"h264.mp4", cv::VideoWriter::fourcc('a', 'v', 'c', '1'), {"avdec_h264", "openh264dec"}},
    };
    std::string missing;
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        if (std::none_of(c.decoders.begin(), c.decoders.end(), gstreamerHasElement)) {
            missing += std::string(missing.empty() ? "" : ", ") + c.decoders.front();
            continue;
        }
        const std::string path = dir / c.name;
        {
            cv::VideoWriter writer(path, cv::CAP_FFMPEG, c.fourcc, 25.0, cv::Size(160, 120));
            ASSERT_TRUE(writer.isOpened());
            for (int i = 0; i < 20; ++i)
                writer.write(cv::Mat(120, 160, CV_8UC3, cv::Scalar(200, 100, i * 10)));
        }
        auto source = open(uri(path));
        ASSERT_TRUE(source);
        EXPECT_EQ(source->info().width, 160);
        EXPECT_EQ(source->info().height, 120);
        EXPECT_NEAR(source->info().fps, 25.0, 0.01);
        EXPECT_EQ(source->info().frameCount, 20);
        Frame f;
        int frames = 0;
        while (true) {
            auto r = source->read(f);
            ASSERT_TRUE(r.ok()) << r.status().message();
            if (r.value() == ReadResult::EndOfStream)
                break;
            // Lossy; the blue and green levels are the ones written, the red one climbs.
            EXPECT_NEAR(cv::mean(test::asMat(f.image))[0], 200, 8.0) << "frame " << frames;
            EXPECT_NEAR(cv::mean(test::asMat(f.image))[1], 100, 8.0) << "frame " << frames;
            ++frames;
        }
        EXPECT_EQ(frames, 20);
        EXPECT_EQ(source->endDetail(), "");
    }
    if (missing.size() > 0)
        GTEST_SKIP() << "no GStreamer decoder " << missing << " (gstreamer1.0-libav)";
}

TEST(VideoFile, MissingAndUndecodableFilesAreClearErrors)
{
    TempDir dir;
    auto missing = openFrameSource(uri(dir / "nope.mp4"));
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.status().kind(), ErrorKind::NotFound);
    EXPECT_NE(missing.status().message().find("nope.mp4' does not exist"), std::string::npos);

    test::writeFile(dir / "junk.mp4", std::string(4096, 'x'));
    auto junk = openFrameSource(uri(dir / "junk.mp4"));
    ASSERT_FALSE(junk.ok());
    EXPECT_EQ(junk.status().kind(), ErrorKind::InvalidInput);
    EXPECT_NE(junk.status().message().find("junk.mp4"), std::string::npos)
        << junk.status().message();
}

TEST(ImageDirectory, ClassSubdirectoriesInNaturalOrderAndCorruptFilesSkipped)
{
    TempDir dir;
    fs::create_directories(dir / "cat");
    fs::create_directories(dir / "dog");
    fs::create_directories(dir / "empty");
    auto image = [](int level) {
        return cv::Mat(40, 60, CV_8UC3, cv::Scalar(level, level, level));
    };
    ASSERT_TRUE(cv::imwrite(dir / "top.png", image(1)));
    ASSERT_TRUE(cv::imwrite(dir / "cat/img10.png", image(30)));
    ASSERT_TRUE(cv::imwrite(dir / "cat/img2.png", image(20)));
    ASSERT_TRUE(cv::imwrite(dir / "dog/a.png", image(40)));
    test::writeFile(dir / "dog/b.png", "not a png");
    test::writeFile(dir / "notes.txt", "ignored");

    auto source = open(uri(dir.path()));
    ASSERT_TRUE(source);
    EXPECT_EQ(source->info().kind, "image-directory");
    EXPECT_EQ(source->info().classNames, (std::vector<std::string> {"cat", "dog"}));
    EXPECT_EQ(source->info().frameCount, 5);

    // top.png (no class), cat/img2, cat/img10 (natural order), dog/a, dog/b skipped.
    const int levels[] = {1, 20, 30, 40};
    const int classes[] = {-1, 0, 0, 1};
    Frame f;
    for (int i = 0; i < 4; ++i) {
        auto r = source->read(f);
        ASSERT_TRUE(r.ok());
        ASSERT_EQ(r.value(), ReadResult::Frame);
        EXPECT_EQ(f.sequence, static_cast<uint64_t>(i));
        EXPECT_EQ(f.truthClass, classes[i]);
        EXPECT_EQ(test::asMat(f.image).at<cv::Vec3b>(0, 0)[0], levels[i]);
    }
    auto end = source->read(f);
    ASSERT_TRUE(end.ok());
    EXPECT_EQ(end.value(), ReadResult::EndOfStream);
    EXPECT_EQ(static_cast<ImageDirectorySource*>(source.get())->skippedFiles(), 1u);
}

TEST(ImageDirectory, EmptyOrAllCorruptDirectories)
{
    TempDir dir;
    auto empty = openFrameSource(uri(dir.path()));
    ASSERT_FALSE(empty.ok());
    EXPECT_NE(empty.status().message().find("holds no images"), std::string::npos);

    test::writeFile(dir / "a.jpg", "garbage");
    test::writeFile(dir / "b.jpg", "garbage");
    auto source = open(uri(dir.path()));
    Frame f;
    auto r = source->read(f);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("could be decoded"), std::string::npos);
}

TEST(FrameSourceUri, UnknownSchemesListWhatIsSupported)
{
    auto r = openFrameSource(uri("ftp://host/clip.mp4"));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().kind(), ErrorKind::InvalidInput);
    EXPECT_NE(r.status().message().find("unknown source scheme 'ftp'"), std::string::npos);
    EXPECT_NE(r.status().message().find("synthetic://shapes"), std::string::npos);
    EXPECT_FALSE(openFrameSource(uri("")).ok());
}

TEST(NaturalOrder, NumbersCompareByValue)
{
    EXPECT_TRUE(naturalLess("frame2.png", "frame10.png"));
    EXPECT_FALSE(naturalLess("frame10.png", "frame2.png"));
    EXPECT_TRUE(naturalLess("a.png", "b.png"));
    EXPECT_TRUE(naturalLess("x2", "x02"));
    EXPECT_FALSE(naturalLess("same", "same"));
    EXPECT_TRUE(hasImageExtension("A.JPG"));
    EXPECT_FALSE(hasImageExtension("a.txt"));
}

} // namespace
} // namespace jetagent
