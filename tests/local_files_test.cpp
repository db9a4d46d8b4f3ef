// Files read as sources and labels are local regular files: FIFOs are refused at once instead of
// hanging the reader, playlists that name URLs are refused (and, past that check, by the decoding
// pipeline itself: local_files_e2e_test.cpp), and the pixel limit holds for image directories and
// video files.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <random>
#include <string>

#include <gtest/gtest.h>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/videoio.hpp>

#include "config/config.h"
#include "jetagent/hal/file_sources.h"
#include "jetagent/hal/frame_source.h"
#include "tasks/classification_task.h"
#include "tasks/labels.h"
#include "test_image.h"
#include "test_support.h"

namespace jetagent {
namespace {

using test::TempDir;

// How soon a refusal must come: a FIFO that is opened for reading blocks until a writer comes.
constexpr auto kPromptly = std::chrono::seconds(1);

std::string makeFifo(const std::string& path)
{
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0) << path << ": " << errnoText(errno);
    return path;
}

// Runs `call` on its own thread and fails the test when it has not returned within kPromptly. A
// call stuck opening or reading `fifo` is then released: a writer opens the FIFO and closes it, so
// the reader sees its end.
template <class Call>
auto returnsPromptly(const std::string& fifo, Call call) -> decltype(call())
{
    auto result = std::async(std::launch::async, call);
    if (result.wait_for(kPromptly) != std::future_status::ready) {
        ADD_FAILURE() << "still blocked on " << fifo << " after 1 s";
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (result.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready &&
            std::chrono::steady_clock::now() < deadline) {
            const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
            if (fd >= 0)
                ::close(fd);
        }
    }
    return result.get();
}

SourceOptions uri(const std::string& u)
{
    SourceOptions o;
    o.uri = u;
    return o;
}

void expectContains(const std::string& message, const std::string& part)
{
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
}

TEST(LocalFiles, AFifoGivenAsAVideoFileIsRefusedAtOnce)
{
    TempDir dir;
    const std::string fifo = makeFifo(dir / "camera.mp4");
    for (const std::string& source : {fifo, "file://" + fifo}) {
        auto opened = returnsPromptly(fifo, [&] { return openFrameSource(uri(source)); });
        ASSERT_FALSE(opened.ok());
        EXPECT_EQ(opened.status().kind(), ErrorKind::InvalidInput);
        expectContains(opened.status().message(),
            "video file '" + fifo + "' is a FIFO (named pipe), not a regular file");
    }
}

TEST(LocalFiles, AFifoInAnImageDirectoryIsSkippedAndAloneFailsTheRead)
{
    TempDir dir;
    const std::string fifo = makeFifo(dir / "a.png");
    ASSERT_TRUE(cv::imwrite(dir / "b.png", cv::Mat(40, 60, CV_8UC3, cv::Scalar(7, 7, 7))));
    auto opened = openFrameSource(uri(dir.path()));
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    FrameSource& source = *opened.value();
    Frame frame;
    auto read = returnsPromptly(fifo, [&] { return source.read(frame); });
    ASSERT_TRUE(read.ok()) << read.status().message();
    ASSERT_EQ(read.value(), ReadResult::Frame);
    EXPECT_EQ(test::asMat(frame.image).at<cv::Vec3b>(0, 0)[0], 7); // b.png, after a.png was skipped
    EXPECT_EQ(static_cast<ImageDirectorySource&>(source).skippedFiles(), 1u);

    std::remove((dir / "b.png").c_str());
    auto alone = openFrameSource(uri(dir.path()));
    ASSERT_TRUE(alone.ok()) << alone.status().message();
    FrameSource& fifoOnly = *alone.value();
    auto failed = returnsPromptly(fifo, [&] { return fifoOnly.read(frame); });
    ASSERT_FALSE(failed.ok());
    expectContains(failed.status().message(), "could be decoded");
    expectContains(failed.status().message(),
        "image '" + fifo + "' is a FIFO (named pipe), not a regular file");
}

TEST(LocalFiles, AFifoOrADirectoryGivenAsLabelsIsRefusedAtOnce)
{
    TempDir dir;
    const std::string fifo = makeFifo(dir / "labels.txt");
    auto labels = returnsPromptly(fifo, [&] { return loadLabels(fifo); });
    ASSERT_FALSE(labels.ok());
    EXPECT_TRUE(labels.status().isUsageError());
    expectContains(labels.status().message(),
        "labels file '" + fifo + "' is a FIFO (named pipe), not a regular file");

    auto directory = loadLabels(dir.path());
    ASSERT_FALSE(directory.ok());
    expectContains(directory.status().message(), "is a directory, not a regular file");
    auto missing = loadLabels(dir / "none.txt");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.status().kind(), ErrorKind::NotFound);
}

// Texts that send a demuxer to other files or URLs, under any name.
TEST(LocalFiles, PlaylistsAndManifestsAreRefusedBeforeAnyDecoderSeesThem)
{
    TempDir dir;
    const struct {
        const char* name;
        std::string content;
        const char* kind;
    } cases[] = {
        {"hls.mp4",
            "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nhttp://127.0.0.1:9/a.ts\n"
            "#EXT-X-ENDLIST\n",
            "an HLS playlist"},
        {"hls.m3u8", "\xEF\xBB\xBF  #EXTM3U\nhttp://127.0.0.1:9/a.ts\n", "an HLS playlist"},
        {"hls", "#EXTM3U\nhttp://127.0.0.1:9/a.ts\n", "an HLS playlist"},
        {"dash.mp4",
            "<?xml version=\"1.0\"?>\n<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\">"
            "<BaseURL>http://127.0.0.1:9/</BaseURL></MPD>\n",
            "a DASH manifest"},
        {"concat.avi", "ffconcat version 1.0\nfile http://127.0.0.1:9/a.mp4\n",
            "an FFmpeg concat script"},
        {"stream.mkv", "v=0\no=- 0 0 IN IP4 127.0.0.1\ns=x\nc=IN IP4 127.0.0.1\nt=0 0\n",
            "an SDP session description"},
    };
    for (const auto& c : cases) {
        const std::string path = dir / c.name;
        test::writeFile(path, c.content);
        auto opened = openFrameSource(uri(path));
        ASSERT_FALSE(opened.ok()) << c.name;
        EXPECT_EQ(opened.status().kind(), ErrorKind::InvalidInput);
        expectContains(opened.status().message(), "video file '" + path + "' is " + c.kind);
        expectContains(opened.status().message(), "never open the network");
    }
}

TEST(LocalFiles, VideoFramesOverThePixelLimitAreRefusedAtOpen)
{
    TempDir dir;
    const std::string path = dir / "clip.avi";
    {
        cv::VideoWriter writer(
            path, cv::VideoWriter::fourcc('M', 'J', 'P', 'G'), 25.0, cv::Size(160, 120));
        ASSERT_TRUE(writer.isOpened());
        for (int i = 0; i < 3; ++i)
            writer.write(cv::Mat(120, 160, CV_8UC3, cv::Scalar(i, i, i)));
    }
    SourceOptions options = uri(path);
    options.maxImagePixels = 160 * 120;
    auto atLimit = openFrameSource(options);
    EXPECT_TRUE(atLimit.ok()) << atLimit.status().message();

    options.maxImagePixels = 160 * 120 - 1;
    auto over = openFrameSource(options);
    ASSERT_FALSE(over.ok());
    EXPECT_EQ(over.status().kind(), ErrorKind::InvalidInput);
    expectContains(over.status().message(), "video file '" + path + "' has frames of 160x120");
    expectContains(over.status().message(), "limit of 19199 pixels (source.max_image_pixels)");

    options.maxImagePixels = 0;
    auto zero = openFrameSource(options);
    ASSERT_FALSE(zero.ok());
    expectContains(zero.status().message(), "out of range");
}

TEST(LocalFiles, ImagesOverThePixelLimitAreSkippedInADirectory)
{
    TempDir dir;
    ASSERT_TRUE(cv::imwrite(dir / "1.png", cv::Mat(40, 60, CV_8UC3, cv::Scalar(1, 1, 1))));
    ASSERT_TRUE(cv::imwrite(dir / "2.png", cv::Mat(50, 60, CV_8UC3, cv::Scalar(2, 2, 2))));
    ASSERT_TRUE(cv::imwrite(dir / "3.png", cv::Mat(40, 60, CV_8UC3, cv::Scalar(3, 3, 3))));
    SourceOptions options = uri(dir.path());
    options.maxImagePixels = 60 * 40;
    auto opened = openFrameSource(options);
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    Frame frame;
    for (int level : {1, 3}) {
        auto read = opened.value()->read(frame);
        ASSERT_TRUE(read.ok()) << read.status().message();
        ASSERT_EQ(read.value(), ReadResult::Frame);
        EXPECT_EQ(test::asMat(frame.image).at<cv::Vec3b>(0, 0)[0], level);
    }
    EXPECT_EQ(static_cast<ImageDirectorySource&>(*opened.value()).skippedFiles(), 1u);
}

TEST(LocalFiles, ThePixelLimitIsAConfigKey)
{
    auto defaults = parseConfig("tasks:\n  - model: m.onnx\n", "test.yaml", "/base");
    ASSERT_TRUE(defaults.ok()) << defaults.status().message();
    EXPECT_EQ(defaults->source().maxImagePixels, uint64_t {8192} * 8192);
    auto set = parseConfig(
        "source: {max_image_pixels: 1000000}\ntasks:\n  - model: m.onnx\n", "test.yaml", "/base");
    ASSERT_TRUE(set.ok()) << set.status().message();
    EXPECT_EQ(set->source().maxImagePixels, 1000000u);
    for (const char* value : {"0", "268435457", "-1", "many"}) {
        auto bad = parseConfig(
            std::string("source: {max_image_pixels: ") + value + "}\ntasks:\n  - model: m.onnx\n",
            "test.yaml", "/base");
        ASSERT_FALSE(bad.ok()) << value;
        expectContains(bad.status().message(), "test.yaml:1:");
        expectContains(bad.status().message(), "source.max_image_pixels");
    }
}

// A 60-frame MJPEG AVI of noise (frames of a few kilobytes each, like a camera's), written with
// OpenCV's built-in writer; then damaged as a hostile-input trial did: 2000 random bytes written
// over its middle, or the file cut at half its size.
std::string writeNoiseVideo(const std::string& path)
{
    cv::VideoWriter writer(
        path, cv::VideoWriter::fourcc('M', 'J', 'P', 'G'), 25.0, cv::Size(160, 120));
    EXPECT_TRUE(writer.isOpened());
    cv::RNG rng(7);
    cv::Mat m(120, 160, CV_8UC3);
    for (int i = 0; i < 60; ++i) {
        rng.fill(m, cv::RNG::UNIFORM, 0, 256);
        writer.write(m);
    }
    return path;
}

void overwriteMiddle(const std::string& path)
{
    const auto size = std::filesystem::file_size(path);
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(file.is_open()) << path;
    file.seekp(static_cast<std::streamoff>(size / 2));
    std::mt19937 random(1);
    for (int i = 0; i < 2000; ++i)
        file.put(static_cast<char>(random() & 0xff));
    ASSERT_TRUE(file.good()) << path;
}

void cutInHalf(const std::string& path)
{
    std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
}

// Reads `source` to its end; the frames read.
int64_t readToEnd(FrameSource& source)
{
    Frame frame;
    int64_t frames = 0;
    while (true) {
        auto read = source.read(frame);
        EXPECT_TRUE(read.ok()) << read.status().message();
        if (!read.ok() || read.value() == ReadResult::EndOfStream)
            return frames;
        ++frames;
    }
}

TEST(LocalFiles, AnIntactVideoEndsWithNoDetail)
{
    TempDir dir;
    auto opened = openFrameSource(uri(writeNoiseVideo(dir / "clip.avi")));
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    EXPECT_EQ(opened.value()->info().frameCount, 60);
    EXPECT_EQ(readToEnd(*opened.value()), 60);
    EXPECT_EQ(opened.value()->endDetail(), "");
}

TEST(LocalFiles, ADamagedOrTruncatedVideoSaysWhereItEnded)
{
    TempDir dir;
    const std::string damaged = writeNoiseVideo(dir / "damaged.avi");
    overwriteMiddle(damaged);
    const std::string truncated = writeNoiseVideo(dir / "truncated.avi");
    cutInHalf(truncated);
    for (const std::string& path : {damaged, truncated}) {
        SCOPED_TRACE(path);
        auto opened = openFrameSource(uri(path));
        ASSERT_TRUE(opened.ok()) << opened.status().message();
        ASSERT_EQ(opened.value()->info().frameCount, 60);
        const int64_t frames = readToEnd(*opened.value());
        EXPECT_GT(frames, 0);
        EXPECT_LT(frames, 60);
        EXPECT_EQ(opened.value()->endDetail(), "after " + std::to_string(frames) + " of 60 frames");
        // The end stays the end, said once.
        Frame frame;
        auto again = opened.value()->read(frame);
        ASSERT_TRUE(again.ok()) << again.status().message();
        EXPECT_EQ(again.value(), ReadResult::EndOfStream);
    }

    // Looping, the frames that decode go round and round; the stream does not end.
    SourceOptions options = uri(truncated);
    options.loop = true;
    auto looping = openFrameSource(options);
    ASSERT_TRUE(looping.ok()) << looping.status().message();
    Frame frame;
    for (int i = 0; i < 90; ++i) {
        auto read = looping.value()->read(frame);
        ASSERT_TRUE(read.ok()) << read.status().message();
        ASSERT_EQ(read.value(), ReadResult::Frame) << i;
    }
    EXPECT_EQ(looping.value()->endDetail(), "");
}

} // namespace
} // namespace jetagent
