// int8 calibration data: the samples are the task's preprocessing of the source's frames, batched,
// spread over the source, keyed by everything that changes them; the config keys and the hooks in
// the tasks.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/videoio.hpp>

#include "config/config.h"
#include "jetagent/hal/frame_source.h"
#include "tasks/action_task.h"
#include "tasks/calibration.h"
#include "tasks/classification_task.h"
#include "tasks/preprocess.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace jetagent {
namespace {

// A noisy image of its own size, so that resize and crop change what each sample becomes.
cv::Mat noiseImage(int width, int height, unsigned seed)
{
    cv::Mat m(height, width, CV_8UC3);
    std::mt19937 rng(seed);
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x)
            m.at<cv::Vec3b>(y, x) = cv::Vec3b(static_cast<uint8_t>(rng()),
                static_cast<uint8_t>(rng()), static_cast<uint8_t>(x * 3 + y));
    return m;
}

// `top` images img1.png.. at the top level and `sub` in the class subdirectory "sub", each of a
// different size.
void writeImages(const std::string& dir, int top, int sub)
{
    for (int i = 0; i < top; ++i)
        ASSERT_TRUE(cv::imwrite(dir + "/img" + std::to_string(i + 1) + ".png",
            noiseImage(90 + 7 * i, 80 + 5 * (i % 4), static_cast<unsigned>(i))));
    if (sub > 0)
        fs::create_directory(dir + "/sub");
    for (int i = 0; i < sub; ++i)
        ASSERT_TRUE(cv::imwrite(dir + "/sub/s" + std::to_string(i + 1) + ".png",
            noiseImage(120 - 3 * i, 70 + 11 * i, static_cast<unsigned>(100 + i))));
}

// The preprocessing a real classification task resolves for the shapes model (64 x 64 input):
// shorter side to 73, centre crop 64.
PreprocessConfig taskPreprocessing()
{
    auto c = parseConfig("tasks:\n  - model: shapes_cnn.onnx\n    labels: shapes_labels.txt\n",
        "task.yaml", test::sourcePath("models"));
    EXPECT_TRUE(c.ok()) << c.status().message();
    auto task = ClassificationTask::create(c.value(), 0, SourceInfo {});
    EXPECT_TRUE(task.ok()) << task.status().message();
    return task.value()->preprocessing();
}

std::string where(const std::string& key)
{
    return "cal.yaml:9: calib." + key;
}

Expected<std::shared_ptr<CalibrationData>> make(
    const std::string& source, int frames, int batch, const PreprocessConfig& pre)
{
    CalibrationConfig config;
    config.source = source;
    config.frames = frames;
    config.batch = batch;
    return makeCalibrationData(config, pre, where);
}

// Every frame the agent's source gives for `uri`, through the task's preprocessing.
std::vector<std::vector<float>> inferenceInputs(const std::string& uri, const PreprocessConfig& pre)
{
    SourceOptions options;
    options.uri = uri;
    auto source = openFrameSource(options);
    EXPECT_TRUE(source.ok()) << source.status().message();
    Preprocessor preprocessor(pre);
    std::vector<std::vector<float>> out;
    Frame frame;
    for (;;) {
        auto r = source.value()->read(frame);
        EXPECT_TRUE(r.ok());
        if (!r.ok() || r.value() != ReadResult::Frame)
            break;
        out.emplace_back(preprocessor.outputElements());
        EXPECT_TRUE(preprocessor.run(frame.image, out.back().data()).ok());
    }
    return out;
}

// All batches until nextBatch() says there are no more.
std::vector<std::vector<float>> allBatches(CalibrationData& data)
{
    const size_t size = static_cast<size_t>(data.batchSize() * data.sampleShape().elementCount());
    std::vector<std::vector<float>> batches;
    for (int guard = 0; guard < 1000; ++guard) {
        std::vector<float> batch(size, -1.0f);
        auto more = data.nextBatch(batch.data());
        EXPECT_TRUE(more.ok()) << more.status().message();
        if (!more.ok() || !more.value())
            break;
        batches.push_back(std::move(batch));
    }
    return batches;
}

// Checks that batch k's sample j is bit for bit the inference input of source frame
// indices[k * batch + j].
void expectSamples(const std::vector<std::vector<float>>& batches,
    const std::vector<std::vector<float>>& frames, const std::vector<int64_t>& indices, int batch)
{
    ASSERT_EQ(batches.size() * static_cast<size_t>(batch), indices.size());
    for (size_t i = 0; i < indices.size(); ++i) {
        const auto& expected = frames.at(static_cast<size_t>(indices[i]));
        const float* got =
            batches[i / static_cast<size_t>(batch)].data() + (i % batch) * expected.size();
        EXPECT_EQ(std::memcmp(got, expected.data(), expected.size() * sizeof(float)), 0)
            << "sample " << i << " (source frame " << indices[i] << ")";
    }
}

TEST(Calibration, SpreadIndices)
{
    EXPECT_EQ(spreadIndices(10, 4), (std::vector<int64_t> {0, 2, 5, 7}));
    EXPECT_EQ(spreadIndices(1000, 3), (std::vector<int64_t> {0, 333, 666}));
    EXPECT_EQ(spreadIndices(5, 8), (std::vector<int64_t> {0, 1, 2, 3, 4}));
    EXPECT_EQ(spreadIndices(4, 4), (std::vector<int64_t> {0, 1, 2, 3}));
    EXPECT_TRUE(spreadIndices(0, 4).empty());
}

TEST(Calibration, DirectorySamplesAreTheTaskPreprocessingOfEvenlySpreadImages)
{
    test::TempDir dir;
    writeImages(dir.path(), 16, 4); // source order: img1..img16, then sub/s1..s4
    const PreprocessConfig pre = taskPreprocessing();
    ASSERT_EQ(pre.cropWidth, 64);

    auto data = make(dir.path(), 8, 4, pre);
    ASSERT_TRUE(data.ok()) << data.status().message();
    EXPECT_EQ(data.value()->batchSize(), 4);
    EXPECT_EQ(data.value()->sampleShape(), (TensorShape {3, 64, 64}));
    EXPECT_NE(data.value()->description().find("8 images from " + dir.path()), std::string::npos)
        << data.value()->description();
    EXPECT_NE(data.value()->description().find("spread over 20"), std::string::npos);

    const auto frames = inferenceInputs("file://" + dir.path(), pre);
    ASSERT_EQ(frames.size(), 20u);
    // 20 images, 8 wanted: every 2.5th, the last from the class subdirectory.
    const std::vector<int64_t> indices {0, 2, 5, 7, 10, 12, 15, 17};
    const auto batches = allBatches(*data.value());
    expectSamples(batches, frames, indices, 4);

    // A second pass (TensorRT may read twice) gives the same batches.
    data.value()->rewind();
    EXPECT_EQ(allBatches(*data.value()), batches);
}

TEST(Calibration, LastPartialBatchIsDropped)
{
    test::TempDir dir;
    writeImages(dir.path(), 5, 0);
    const PreprocessConfig pre = taskPreprocessing();
    auto data = make(dir.path(), 500, 2, pre); // 5 images: two batches of 2, one left over
    ASSERT_TRUE(data.ok()) << data.status().message();
    EXPECT_NE(data.value()->description().find("4 images from"), std::string::npos)
        << data.value()->description();
    const auto batches = allBatches(*data.value());
    expectSamples(batches, inferenceInputs(dir.path(), pre), {0, 1, 2, 3}, 2);
    // Once done, it stays done until rewound.
    std::vector<float> out(static_cast<size_t>(2 * 3 * 64 * 64));
    auto more = data.value()->nextBatch(out.data());
    ASSERT_TRUE(more.ok());
    EXPECT_FALSE(more.value());
    data.value()->rewind();
    more = data.value()->nextBatch(out.data());
    ASSERT_TRUE(more.ok());
    EXPECT_TRUE(more.value());
}

TEST(Calibration, KeyFollowsFilesCountsAndEveryPreprocessingField)
{
    test::TempDir dir;
    writeImages(dir.path(), 6, 0);
    const PreprocessConfig pre = taskPreprocessing();
    auto keyOf = [&](int frames, int batch, const PreprocessConfig& p) {
        auto data = make(dir.path(), frames, batch, p);
        EXPECT_TRUE(data.ok()) << data.status().message();
        return data.ok() ? data.value()->key() : std::string();
    };
    const std::string base = keyOf(4, 2, pre);
    EXPECT_EQ(base.size(), 64u);
    EXPECT_EQ(keyOf(4, 2, pre), base); // stable

    EXPECT_NE(keyOf(3, 2, pre), base);
    EXPECT_NE(keyOf(4, 1, pre), base);

    std::vector<PreprocessConfig> changed(11, pre);
    changed[0].resize = ResizeMode::Stretch;
    changed[1].resizeSize += 1;
    changed[2].cropWidth = changed[2].cropHeight = 56;
    changed[3].interpolation = Interpolation::Area;
    changed[4].color = ColorOrder::Bgr;
    changed[5].divisor = 1.0f;
    changed[6].mean[0] = std::nextafter(pre.mean[0], 1.0f); // one ulp is a different input
    changed[7].mean[2] = 0.0f;
    changed[8].std[1] = 1.0f;
    changed[9].std[2] = std::nextafter(pre.std[2], 0.0f);
    changed[10].cropHeight = 48;
    for (size_t i = 0; i < changed.size(); ++i)
        EXPECT_NE(keyOf(4, 2, changed[i]), base) << "preprocessing change " << i;

    // A selected file with new content (another size), and one touched only (same bytes).
    ASSERT_TRUE(cv::imwrite(dir / "img1.png", noiseImage(50, 50, 77)));
    const std::string rewritten = keyOf(4, 2, pre);
    EXPECT_NE(rewritten, base);
    const auto mtime = fs::last_write_time(dir / "img1.png");
    fs::last_write_time(dir / "img1.png", mtime + std::chrono::seconds(5));
    EXPECT_NE(keyOf(4, 2, pre), rewritten);
    // An added image changes which ones are taken.
    fs::last_write_time(dir / "img1.png", mtime);
    EXPECT_EQ(keyOf(4, 2, pre), rewritten);
    ASSERT_TRUE(cv::imwrite(dir / "img7.png", noiseImage(60, 60, 78)));
    EXPECT_NE(keyOf(4, 2, pre), rewritten);
}

TEST(Calibration, ErrorsNameTheKeyAndWhatWasFound)
{
    const PreprocessConfig pre = taskPreprocessing();
    test::TempDir dir;

    auto missing = make(dir / "absent", 10, 2, pre);
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.status().kind(), ErrorKind::NotFound);
    EXPECT_NE(missing.status().message().find("cal.yaml:9: calib.source: calibration source '" +
                  (dir / "absent") + "' does not exist"),
        std::string::npos)
        << missing.status().message();

    fs::create_directory(dir / "empty");
    auto empty = make(dir / "empty", 10, 2, pre);
    ASSERT_FALSE(empty.ok());
    EXPECT_NE(empty.status().message().find("cal.yaml:9: calib.source: "), std::string::npos)
        << empty.status().message();
    EXPECT_NE(empty.status().message().find("holds no images"), std::string::npos)
        << empty.status().message();

    fs::create_directory(dir / "two");
    writeImages(dir / "two", 2, 0);
    auto few = make(dir / "two", 10, 4, pre);
    ASSERT_FALSE(few.ok());
    EXPECT_NE(few.status().message().find("cal.yaml:9: calib.source: '" + (dir / "two") +
                  "' holds 2 images, fewer than "
                  "one calibration batch (4)"),
        std::string::npos)
        << few.status().message();
    auto fewFrames = make(dir / "two", 1, 2, pre);
    ASSERT_FALSE(fewFrames.ok());
    EXPECT_NE(fewFrames.status().message().find(
                  "cal.yaml:9: calib.frames: 1 frames make no calibration batch of 2"),
        std::string::npos)
        << fewFrames.status().message();

    // A corrupt image among them: the batch that reaches it fails, naming the file.
    fs::create_directory(dir / "bad");
    writeImages(dir / "bad", 4, 0);
    test::writeFile(dir / "bad/img3.png", "not a png");
    auto bad = make(dir / "bad", 4, 2, pre);
    ASSERT_TRUE(bad.ok()) << bad.status().message();
    std::vector<float> out(static_cast<size_t>(2 * 3 * 64 * 64));
    auto first = bad.value()->nextBatch(out.data());
    ASSERT_TRUE(first.ok()) << first.status().message();
    EXPECT_TRUE(first.value());
    auto second = bad.value()->nextBatch(out.data());
    ASSERT_FALSE(second.ok());
    EXPECT_NE(second.status().message().find(
                  "calibration image '" + (dir / "bad/img3.png") + "' cannot be decoded"),
        std::string::npos)
        << second.status().message();

    // Only the selected images are read: a corrupt one the spread passes over does no harm.
    fs::create_directory(dir / "skipped");
    writeImages(dir / "skipped", 8, 0);
    test::writeFile(dir / "skipped/img2.png", "not a png"); // index 1; frames 4 take 0, 2, 4, 6
    auto skipped = make(dir / "skipped", 4, 2, pre);
    ASSERT_TRUE(skipped.ok()) << skipped.status().message();
    for (int b = 0; b < 2; ++b) {
        auto got = skipped.value()->nextBatch(out.data());
        ASSERT_TRUE(got.ok()) << got.status().message();
        EXPECT_TRUE(got.value());
    }

    // A file that is no video.
    test::writeFile(dir / "clip.avi", "no video here");
    auto notVideo = make(dir / "clip.avi", 4, 2, pre);
    ASSERT_FALSE(notVideo.ok());
    EXPECT_NE(notVideo.status().message().find("cal.yaml:9: calib.source: "), std::string::npos)
        << notVideo.status().message();
}

std::string writeVideo(const std::string& path, int count)
{
    cv::VideoWriter writer(
        path, cv::VideoWriter::fourcc('M', 'J', 'P', 'G'), 25.0, cv::Size(160, 120));
    EXPECT_TRUE(writer.isOpened());
    for (int i = 0; i < count; ++i)
        writer.write(noiseImage(160, 120, static_cast<unsigned>(i)));
    return path;
}

TEST(Calibration, VideoSamplesAreTheVideoSourceFramesPreprocessed)
{
    test::TempDir dir;
    const std::string video = writeVideo(dir / "clip.avi", 30);
    const PreprocessConfig pre = taskPreprocessing();
    const auto frames = inferenceInputs("file://" + video, pre);
    ASSERT_EQ(frames.size(), 30u);

    auto data = make(video, 10, 5, pre);
    ASSERT_TRUE(data.ok()) << data.status().message();
    EXPECT_NE(data.value()->description().find("10 frames of " + video), std::string::npos)
        << data.value()->description();
    const auto batches = allBatches(*data.value());
    expectSamples(batches, frames, {0, 3, 6, 9, 12, 15, 18, 21, 24, 27}, 5);
    data.value()->rewind();
    EXPECT_EQ(allBatches(*data.value()), batches);

    // Every frame when fewer than asked for; the key follows the video file and the selection.
    auto all = make(video, 100, 5, pre);
    ASSERT_TRUE(all.ok()) << all.status().message();
    expectSamples(allBatches(*all.value()), frames,
        {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
            25, 26, 27, 28, 29},
        5);
    EXPECT_NE(all.value()->key(), data.value()->key());
    const std::string key = data.value()->key();
    fs::last_write_time(video, fs::last_write_time(video) + std::chrono::seconds(3));
    auto touched = make(video, 10, 5, pre);
    ASSERT_TRUE(touched.ok());
    EXPECT_NE(touched.value()->key(), key);
}

TEST(Calibration, ConfigKeysParseAndErrorsNameKeyAndLine)
{
    auto c = parseConfig("tasks:\n"
                         "  - model: m.onnx\n"
                         "    engine:\n"
                         "      precision: int8\n"
                         "      calibration: {source: calib, frames: 200, batch: 16}\n",
        "c.yaml", "/base");
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_EQ(c.value().tasks[0].calibration.source, "/base/calib");
    EXPECT_EQ(c.value().tasks[0].calibration.frames, 200);
    EXPECT_EQ(c.value().tasks[0].calibration.batch, 16);

    auto d = parseConfig("tasks:\n"
                         "  - model: m.onnx\n"
                         "    engine:\n"
                         "      calibration: {source: calib}\n",
        "c.yaml", "/base");
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_EQ(d.value().tasks[0].calibration.frames, 500);
    EXPECT_EQ(d.value().tasks[0].calibration.batch, 8);

    auto errorOf = [](const std::string& calibration) {
        auto r = parseConfig("tasks:\n"
                             "  - model: m.onnx\n"
                             "    engine:\n"
                             "      calibration:\n" +
                calibration,
            "c.yaml", "/base");
        EXPECT_FALSE(r.ok()) << calibration;
        return r.ok() ? std::string() : r.status().message();
    };
    std::string e = errorOf("        source: calib\n        frames: 0\n");
    EXPECT_NE(e.find("c.yaml:6"), std::string::npos) << e;
    EXPECT_NE(e.find("tasks[0].engine.calibration.frames"), std::string::npos) << e;
    e = errorOf("        source: calib\n        batch: 1000\n");
    EXPECT_NE(e.find("c.yaml:6"), std::string::npos) << e;
    EXPECT_NE(e.find("tasks[0].engine.calibration.batch"), std::string::npos) << e;
    e = errorOf("        frames: 10\n");
    EXPECT_NE(e.find("tasks[0].engine.calibration.source: missing"), std::string::npos) << e;
    e = errorOf("        source: calib\n        frame: 10\n");
    EXPECT_NE(e.find("c.yaml:6"), std::string::npos) << e;
    EXPECT_NE(e.find("tasks[0].engine.calibration.frame: unknown key"), std::string::npos) << e;
}

// A shapes-model task with `engine` as its engine section (line 4 of the file).
Expected<AgentConfig> shapesTask(const std::string& engine, const std::string& baseDir)
{
    return parseConfig("tasks:\n"
                       "  - model: " +
            test::sourcePath("models/shapes_cnn.onnx") + "\n    labels: " +
            test::sourcePath("models/shapes_labels.txt") + "\n    engine: " + engine + "\n",
        "t.yaml", baseDir);
}

TEST(Calibration, ClassificationTaskMakesTheDataBeforeTheBuild)
{
    test::TempDir dir;
    // int8: the calibration data is made (and its errors reported) before the engine is built.
    auto missing = shapesTask("{precision: int8, calibration: {source: nothere}}", dir.path());
    ASSERT_TRUE(missing.ok()) << missing.status().message();
    auto t = ClassificationTask::create(missing.value(), 0, SourceInfo {});
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.status().message().find("t.yaml:4: tasks[0].engine.calibration.source: "
                                        "calibration source '" +
                  (dir / "nothere") + "' does not exist"),
        std::string::npos)
        << t.status().message();

    // With good data, the build goes on to the backend (OpenCV refuses int8 on the CPU).
    fs::create_directory(dir / "calib");
    writeImages(dir / "calib", 4, 0);
    auto good = shapesTask(
        "{backend: opencv, precision: int8, calibration: {source: calib, frames: 4, batch: 2}}",
        dir.path());
    ASSERT_TRUE(good.ok()) << good.status().message();
    t = ClassificationTask::create(good.value(), 0, SourceInfo {});
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().kind(), ErrorKind::Unsupported);
    EXPECT_NE(t.status().message().find("t.yaml:4: tasks[0].engine: the opencv backend"),
        std::string::npos)
        << t.status().message();

    // Another precision: the section is ignored (a warning), even when its source is missing.
    auto fp32 = shapesTask("{precision: fp32, calibration: {source: nothere}}", dir.path());
    ASSERT_TRUE(fp32.ok()) << fp32.status().message();
    t = ClassificationTask::create(fp32.value(), 0, SourceInfo {});
    EXPECT_TRUE(t.ok()) << t.status().message();
}

// Clip samples for an action model: windows of consecutive frames (every frame_step-th), spread
// over the source without overlapping, each frame the inference input of that source frame, laid
// out 3 x T x H x W or T x 3 x H x W as the model takes them.
TEST(Calibration, ClipSamplesAreConsecutiveFramesInTheModelsLayout)
{
    test::TempDir dir;
    writeImages(dir.path(), 30, 0);
    const PreprocessConfig pre = taskPreprocessing();
    const auto frames = inferenceInputs("file://" + dir.path(), pre);
    ASSERT_EQ(frames.size(), 30u);
    const size_t plane = frames[0].size() / 3;
    CalibrationConfig config;
    config.source = dir.path();
    config.frames = 16; // 16 / 4 = 4 clips wanted, 30 / 7 = 4 windows of span 7 available
    config.batch = 2;
    for (bool ncthw : {true, false}) {
        SCOPED_TRACE(ncthw ? "ncthw" : "ntchw");
        auto data = makeClipCalibrationData(config, pre, ClipSamples {4, 2, ncthw}, where);
        ASSERT_TRUE(data.ok()) << data.status().message();
        EXPECT_EQ(data.value()->sampleShape(),
            ncthw ? (TensorShape {3, 4, 64, 64}) : (TensorShape {4, 3, 64, 64}));
        EXPECT_NE(
            data.value()->description().find("4 clips of 4 images (every 2)"), std::string::npos)
            << data.value()->description();
        const auto batches = allBatches(*data.value());
        ASSERT_EQ(batches.size(), 2u);
        // Clip w starts at frame 7w; its frame k is source frame 7w + 2k.
        for (size_t w = 0; w < 4; ++w)
            for (size_t k = 0; k < 4; ++k)
                for (size_t c = 0; c < 3; ++c) {
                    const float* sample = batches[w / 2].data() + (w % 2) * 12 * plane;
                    const float* got = sample + (ncthw ? (c * 4 + k) : (k * 3 + c)) * plane;
                    const float* want = frames[7 * w + 2 * k].data() + c * plane;
                    EXPECT_EQ(std::memcmp(got, want, plane * sizeof(float)), 0)
                        << "clip " << w << " frame " << k << " channel " << c;
                }
    }
    // The clip's shape enters the key; too few frames for a batch of clips is an error.
    auto a = makeClipCalibrationData(config, pre, ClipSamples {4, 2, true}, where);
    auto b = makeClipCalibrationData(config, pre, ClipSamples {4, 1, true}, where);
    auto c = makeClipCalibrationData(config, pre, ClipSamples {4, 2, false}, where);
    ASSERT_TRUE(a.ok() && b.ok() && c.ok());
    EXPECT_NE(a.value()->key(), b.value()->key());
    EXPECT_NE(a.value()->key(), c.value()->key());
    config.frames = 5;
    auto few = makeClipCalibrationData(config, pre, ClipSamples {3, 1, true}, where);
    ASSERT_FALSE(few.ok());
    EXPECT_NE(few.status().message().find("cal.yaml:9: calib.frames: 5 frames make no calibration "
                                          "batch of 2 clips of 3 frames"),
        std::string::npos)
        << few.status().message();
}

// An action task with precision int8 calibrates its clip model on clips of the calibration
// source (clip mode), or its backbone on frames, the temporal head staying fp32 (streaming).
TEST(Calibration, ActionTasksCalibrateTheirClipModelOrBackbone)
{
    bool xnnpack = false;
    for (const BackendInfo& b : listBackends())
        xnnpack = xnnpack || (b.name == "xnnpack" && b.available);
    if (!xnnpack)
        GTEST_SKIP() << "this build has no xnnpack backend";
    test::TempDir dir;
    fs::create_directory(dir / "calib");
    writeImages(dir / "calib", 40, 0);
    auto c = parseConfig("tasks:\n"
                         "  - type: action\n"
                         "    model: " +
            test::sourcePath("models/motion_clip3d.onnx") +
            "\n"
            "    action: {clip_length: 16, stride: 4}\n"
            "    engine: {backend: xnnpack, precision: int8, calibration: {source: calib, "
            "frames: 32, batch: 1}}\n"
            "  - type: action\n"
            "    model: " +
            test::sourcePath("models/motion_backbone.onnx") + "\n" +
            "    action: {mode: streaming, head: " + test::sourcePath("models/motion_head.onnx") +
            ", clip_length: 16}\n"
            "    engine: {backend: xnnpack, precision: int8, calibration: {source: calib, "
            "frames: 32, batch: 4}}\n",
        "a.yaml", dir.path());
    ASSERT_TRUE(c.ok()) << c.status().message();
    auto clip = ActionTask::create(c.value(), 0, SourceInfo {});
    ASSERT_TRUE(clip.ok()) << clip.status().message();
    ASSERT_EQ(clip.value()->engines().size(), 1u);
    EXPECT_NE(clip.value()->engines()[0].lowered.find("calibrated on 2 samples of 2 clips of 16 "
                                                      "images"),
        std::string::npos)
        << clip.value()->engines()[0].lowered;
    auto streaming = ActionTask::create(c.value(), 1, SourceInfo {});
    ASSERT_TRUE(streaming.ok()) << streaming.status().message();
    const auto engines = streaming.value()->engines();
    ASSERT_EQ(engines.size(), 2u);
    size_t int8 = 0, fp32 = 0;
    for (const EngineDescription& e : engines) {
        int8 += e.options.precision == Precision::Int8;
        fp32 += e.options.precision == Precision::Fp32;
        if (e.options.precision == Precision::Int8) {
            EXPECT_NE(e.lowered.find("calibrated on 32 samples of 32 images"), std::string::npos)
                << e.lowered;
        }
    }
    EXPECT_EQ(int8, 1u); // the backbone
    EXPECT_EQ(fp32, 1u); // the head
}
} // namespace
} // namespace jetagent
