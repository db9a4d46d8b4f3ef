// The classification task: checks against model and config, and what process() records.
#include <gtest/gtest.h>

#include "config/config.h"
#include "jetagent/base/clock.h"
#include "jetagent/hal/synthetic_shapes.h"
#include "tasks/classification_task.h"
#include "tasks/labels.h"
#include "test_support.h"

namespace jetagent {
namespace {

// A demo-like config whose task section the test completes.
Expected<AgentConfig> config(
    const std::string& taskExtra, const std::string& labels = "shapes_labels.txt")
{
    const std::string text = "tasks:\n"
                             "  - model: shapes_cnn.onnx\n"
                             "    labels: " +
        labels +
        "\n"
        "    preprocess: {resize: stretch, interpolation: area}\n" +
        taskExtra;
    return parseConfig(text, "task.yaml", test::sourcePath("models"));
}

SourceInfo shapesInfo()
{
    SourceInfo info;
    info.classNames.assign(ShapesRenderer::kClassNames.begin(), ShapesRenderer::kClassNames.end());
    return info;
}

std::string createError(const AgentConfig& c)
{
    auto t = ClassificationTask::create(c, 0, shapesInfo());
    EXPECT_FALSE(t.ok());
    return t.ok() ? "" : t.status().message();
}

TEST(ClassificationTask, ResolvesCropFromTheModel)
{
    auto c = config("");
    ASSERT_TRUE(c.ok()) << c.status().message();
    auto t = ClassificationTask::create(c.value(), 0, shapesInfo());
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_EQ(t.value()->preprocessing().cropWidth, 64);
    EXPECT_EQ(t.value()->preprocessing().cropHeight, 64);
    EXPECT_EQ(t.value()->labels().size(), 6u);
    EXPECT_EQ(t.value()->describe()["preprocess"]["crop"][0], 64);
}

TEST(ClassificationTask, ConfigProblemsFoundAgainstTheModelNameKeyAndLine)
{
    // Line 4 is the preprocess line of config().
    auto crop = config("");
    ASSERT_TRUE(crop.ok());
    AgentConfig c = crop.value();
    c.tasks[0].preprocess.cropWidth = c.tasks[0].preprocess.cropHeight = 32;
    c.lines["tasks[0].preprocess.crop"] = 4;
    std::string e = createError(c);
    EXPECT_NE(e.find("task.yaml:4: tasks[0].preprocess.crop: crop 32x32 does not match the model's "
                     "input batch x 3 x 64 x 64"),
        std::string::npos)
        << e;

    test::TempDir dir;
    test::writeFile(dir / "five.txt", "a\nb\nc\nd\ne\n");
    auto labels = config("", dir / "five.txt");
    ASSERT_TRUE(labels.ok());
    e = createError(labels.value());
    EXPECT_NE(e.find("task.yaml:3: tasks[0].labels: '"), std::string::npos) << e;
    EXPECT_NE(e.find("has 5 labels, but the model has 6 outputs"), std::string::npos) << e;

    auto topk = config("    postprocess: {top_k: 8}\n");
    ASSERT_TRUE(topk.ok());
    e = createError(topk.value());
    EXPECT_NE(
        e.find("task.yaml:5: tasks[0].postprocess.top_k: top_k 8 exceeds the model's 6 classes"),
        std::string::npos)
        << e;

    auto device = config("    engine: {backend: opencv, device: gpu}\n");
    ASSERT_TRUE(device.ok());
    auto t = ClassificationTask::create(device.value(), 0, shapesInfo());
    if (!t.ok()) {
        EXPECT_EQ(t.status().kind(), ErrorKind::Unsupported);
        EXPECT_NE(
            t.status().message().find("task.yaml:5: tasks[0].engine: device: gpu is not available"),
            std::string::npos)
            << t.status().message();
    }
}

TEST(ClassificationTask, MissingOrCorruptFilesNameTheKey)
{
    test::TempDir dir;
    auto missing = parseConfig("tasks:\n  - model: nope.onnx\n", "m.yaml", dir.path());
    ASSERT_TRUE(missing.ok());
    auto t = ClassificationTask::create(missing.value(), 0, shapesInfo());
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().kind(), ErrorKind::NotFound);
    EXPECT_NE(
        t.status().message().find("m.yaml:2: tasks[0].model: model file '"), std::string::npos)
        << t.status().message();

    test::writeFile(dir / "bad.onnx",
        test::readFile(test::sourcePath("models/shapes_cnn.onnx")).substr(0, 5000));
    auto corrupt = parseConfig("tasks:\n  - model: bad.onnx\n", "m.yaml", dir.path());
    ASSERT_TRUE(corrupt.ok());
    t = ClassificationTask::create(corrupt.value(), 0, shapesInfo());
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().kind(), ErrorKind::InvalidInput);
    EXPECT_NE(t.status().message().find("not a valid ONNX model"), std::string::npos);

    auto labels = config("", dir / "absent.txt");
    ASSERT_TRUE(labels.ok());
    t = ClassificationTask::create(labels.value(), 0, shapesInfo());
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.status().message().find("tasks[0].labels: labels file"), std::string::npos);
}

TEST(ClassificationTask, RecordsHaveContiguousTimestampsAndCorrectResults)
{
    auto c = config("");
    ASSERT_TRUE(c.ok());
    auto t = ClassificationTask::create(c.value(), 0, shapesInfo());
    ASSERT_TRUE(t.ok());
    ShapesRenderer renderer(320, 240, 1);
    Frame frame;
    int correct = 0;
    for (uint64_t i = 0; i < 20; ++i) {
        frame.sequence = i;
        frame.captureNs = monotonicNs();
        frame.truthClass = renderer.render(i, frame.image);
        const Frame* frames[] = {&frame};
        FrameRecord r;
        const int64_t dequeued = monotonicNs();
        ASSERT_TRUE(t.value()->process(frames, 1, dequeued, &r).ok());
        EXPECT_EQ(r.frameId, i);
        EXPECT_EQ(r.capturedNs, frame.captureNs);
        EXPECT_EQ(r.dequeuedNs, dequeued);
        EXPECT_LE(r.capturedNs, r.dequeuedNs);
        EXPECT_LE(r.dequeuedNs, r.preprocessedNs);
        EXPECT_LE(r.preprocessedNs, r.inferredNs);
        EXPECT_LE(r.inferredNs, r.doneNs);
        EXPECT_GT(r.computeNs, 0);
        EXPECT_LE(r.computeNs, r.inferredNs - r.preprocessedNs);
        EXPECT_EQ(r.coldStart, i == 0);
        EXPECT_EQ(r.batch, 1);
        EXPECT_EQ(r.topK, 5);
        EXPECT_EQ(
            r.truth, frame.truthClass); // the labels file lists the classes in the source's order
        EXPECT_GE(r.scores[0], r.scores[1]);
        correct += r.correct();
    }
    EXPECT_GE(correct, 19);
}

TEST(ClassificationTask, BatchedFramesShareStageTimesAndGetTheirOwnResults)
{
    auto single = config("");
    auto batched = config("    engine: {batch: 3}\n");
    ASSERT_TRUE(single.ok() && batched.ok());
    auto one = ClassificationTask::create(single.value(), 0, shapesInfo());
    auto three = ClassificationTask::create(batched.value(), 0, shapesInfo());
    ASSERT_TRUE(one.ok() && three.ok());
    ShapesRenderer renderer(320, 240, 11);
    Frame frames[3];
    const Frame* pointers[3];
    for (int i = 0; i < 3; ++i) {
        frames[i].sequence = static_cast<uint64_t>(i);
        frames[i].truthClass = renderer.render(static_cast<uint64_t>(i), frames[i].image);
        pointers[i] = &frames[i];
    }
    FrameRecord together[3];
    ASSERT_TRUE(three.value()->process(pointers, 3, monotonicNs(), together).ok());
    for (int i = 0; i < 3; ++i) {
        FrameRecord alone;
        ASSERT_TRUE(one.value()->process(&pointers[i], 1, monotonicNs(), &alone).ok());
        EXPECT_EQ(together[i].batch, 3);
        EXPECT_EQ(together[i].frameId, static_cast<uint64_t>(i));
        EXPECT_EQ(together[i].inferredNs, together[0].inferredNs);
        EXPECT_EQ(together[i].labels[0], alone.labels[0]);
        EXPECT_NEAR(together[i].scores[0], alone.scores[0], 1e-4);
        EXPECT_TRUE(together[i].coldStart); // every frame of the first inference
    }
}

// A live run gathers fewer frames than the batch whenever fewer streams have one (a stream absent,
// a single camera) and an offline run's last batch may be short: the engine, compiled for the
// batch, still runs them, and each frame's result is its own.
TEST(ClassificationTask, PartialBatchesRunOnAnEngineCompiledForTheFullBatch)
{
    auto single = config("");
    for (const char* backend : {"xnnpack", "opencv"}) {
        auto batched = config("    engine: {batch: 4, backend: " + std::string(backend) + "}\n");
        ASSERT_TRUE(single.ok() && batched.ok());
        auto one = ClassificationTask::create(single.value(), 0, shapesInfo());
        auto four = ClassificationTask::create(batched.value(), 0, shapesInfo());
        ASSERT_TRUE(one.ok()) << one.status().message();
        ASSERT_TRUE(four.ok()) << backend << ": " << four.status().message();
        ShapesRenderer renderer(320, 240, 12);
        Frame frames[8];
        const Frame* pointers[8];
        for (int i = 0; i < 8; ++i) {
            frames[i].sequence = static_cast<uint64_t>(i);
            frames[i].truthClass = renderer.render(static_cast<uint64_t>(i), frames[i].image);
            pointers[i] = &frames[i];
        }
        // A full batch, then 3 and 1: the rows they leave unfilled still hold earlier frames.
        size_t at = 0;
        for (const size_t count : {4u, 3u, 1u}) {
            FrameRecord together[4];
            const Status s = four.value()->process(pointers + at, count, monotonicNs(), together);
            ASSERT_TRUE(s.ok()) << backend << ", " << count << " frames: " << s.message();
            for (size_t i = 0; i < count; ++i) {
                FrameRecord alone;
                ASSERT_TRUE(one.value()->process(&pointers[at + i], 1, monotonicNs(), &alone).ok());
                EXPECT_TRUE(together[i].ok) << backend;
                EXPECT_EQ(together[i].batch, static_cast<int32_t>(count));
                EXPECT_EQ(together[i].labels[0], alone.labels[0]) << backend;
                EXPECT_NEAR(together[i].scores[0], alone.scores[0], 1e-4) << backend;
            }
            at += count;
        }
    }
}

TEST(ClassificationTask, SourceClassesMissingFromTheLabelsAreNotScored)
{
    test::TempDir dir;
    test::writeFile(dir / "other.txt", "a\nb\nc\nd\ne\nf\n");
    auto c = config("", dir / "other.txt");
    ASSERT_TRUE(c.ok());
    auto t = ClassificationTask::create(c.value(), 0, shapesInfo());
    ASSERT_TRUE(t.ok());
    Frame frame;
    frame.truthClass = ShapesRenderer(320, 240, 1).render(0, frame.image);
    const Frame* frames[] = {&frame};
    FrameRecord r;
    ASSERT_TRUE(t.value()->process(frames, 1, monotonicNs(), &r).ok());
    EXPECT_EQ(r.truth, -1);
    EXPECT_FALSE(r.correct());
}

TEST(Labels, FileFormat)
{
    test::TempDir dir;
    test::writeFile(dir / "l.txt", "cat\r\ndog house\n\n\n");
    auto l = loadLabels(dir / "l.txt");
    ASSERT_TRUE(l.ok());
    EXPECT_EQ(l.value(), (std::vector<std::string> {"cat", "dog house"}));
    test::writeFile(dir / "empty.txt", "\n\n");
    EXPECT_FALSE(loadLabels(dir / "empty.txt").ok());
}

// A blank line inside a labels file would be a class with no name, and a NUL or an escape would
// reach the CSV and the console raw: both are refused at their line.
TEST(Labels, BlankLinesAndControlCharactersAreRefusedAtTheirLine)
{
    test::TempDir dir;
    test::writeFile(dir / "blank.txt", "cat\n \ndog\n");
    auto blank = loadLabels(dir / "blank.txt");
    ASSERT_FALSE(blank.ok());
    EXPECT_NE(blank.status().message().find("line 2 is blank"), std::string::npos)
        << blank.status().message();
    test::writeFile(dir / "nul.txt", std::string("cat\ndo\0g\n", 9));
    auto nul = loadLabels(dir / "nul.txt");
    ASSERT_FALSE(nul.ok());
    EXPECT_NE(nul.status().message().find("line 2 holds a control character"), std::string::npos)
        << nul.status().message();
    test::writeFile(dir / "esc.txt", "cat\n\x1b[31mred\n");
    EXPECT_FALSE(loadLabels(dir / "esc.txt").ok());
    test::writeFile(dir / "tab.txt", "cat\tfelis\ndog\n");
    EXPECT_TRUE(loadLabels(dir / "tab.txt").ok());
}

} // namespace
} // namespace jetagent
