// The action task: config checks against its models, the clip order a model reads, frame steps,
// strides, clip windows and truths, the clip read in place from the ring, and streams kept apart.
#include <functional>
#include <map>
#include <random>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "config/config.h"
#include "jetagent/base/clock.h"
#include "onnx_builder.h"
#include "tasks/action_task.h"
#include "test_image.h"
#include "test_support.h"

namespace jetagent {
namespace {

constexpr int kSide = 2; // model input: 2 x 2 pixels
constexpr int kFrameSide = 8; // frames: 8 x 8, solid grey, so any resize keeps the value exactly
constexpr int kPlane = kSide * kSide;

// A model that flattens its input and multiplies it by `weights` (rows x columns): output column j
// is sum_i input[i] * weights[i][j]. Dimension 0 of input and output is an open batch.
void writeLinearModel(const std::string& path, const std::string& inputName,
    const std::vector<int64_t>& inputDims, const std::vector<std::vector<float>>& weights,
    const std::string& outputName)
{
    onnx::ModelProto model;
    model.set_ir_version(7);
    model.set_producer_name("jetagent-test");
    model.add_opset_import()->set_version(13);
    auto* graph = model.mutable_graph();
    graph->set_name("linear");
    auto* flatten = graph->add_node();
    flatten->set_op_type("Flatten");
    flatten->add_input(inputName);
    flatten->add_output("flat");
    auto* axis = flatten->add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(1);
    auto* matmul = graph->add_node();
    matmul->set_op_type("MatMul");
    matmul->add_input("flat");
    matmul->add_input("weights");
    matmul->add_output(outputName);
    auto* w = graph->add_initializer();
    w->set_name("weights");
    w->set_data_type(onnx::TensorProto_DataType_FLOAT);
    w->add_dims(static_cast<int64_t>(weights.size()));
    w->add_dims(static_cast<int64_t>(weights[0].size()));
    for (const auto& row : weights)
        for (float v : row)
            w->add_float_data(v);
    test::declareFloatTensor(graph->add_input(), inputName, inputDims, "batch");
    test::declareFloatTensor(
        graph->add_output(), outputName, {-1, static_cast<int64_t>(weights[0].size())}, "batch");
    test::writeFile(path, model.SerializeAsString());
}

// One-hot weights: output j reads input element picks[j].
std::vector<std::vector<float>> picking(size_t rows, const std::vector<size_t>& picks)
{
    std::vector<std::vector<float>> w(rows, std::vector<float>(picks.size(), 0.0f));
    for (size_t j = 0; j < picks.size(); ++j)
        w[picks[j]][j] = 1.0f;
    return w;
}

// Test models in a scratch directory: clip models that output, for t = 0..T-1, channel 0's first
// pixel of clip frame t (in either layout), and a backbone + head whose output is the same.
class ActionModels {
public:
    static constexpr int kT = 4;

    ActionModels()
    {
        const size_t clipRows = 3u * kT * kPlane;
        std::vector<size_t> ncthw, ntchw, head;
        for (size_t t = 0; t < kT; ++t) {
            ncthw.push_back(t * kPlane); // [c=0][t][0][0]
            ntchw.push_back(t * 3 * kPlane); // [t][c=0][0][0]
            head.push_back(t * 2); // [t][d=0]
        }
        writeLinearModel(dir_ / "clip_ncthw.onnx", "clip", {-1, 3, kT, kSide, kSide},
            picking(clipRows, ncthw), "logits");
        writeLinearModel(dir_ / "clip_ntchw.onnx", "clip", {-1, kT, 3, kSide, kSide},
            picking(clipRows, ntchw), "logits");
        // The backbone's embedding: channel 0's and channel 1's first pixel.
        writeLinearModel(dir_ / "backbone.onnx", "frame", {-1, 3, kSide, kSide},
            picking(3 * kPlane, {0, kPlane}), "embedding");
        writeLinearModel(
            dir_ / "head.onnx", "embeddings", {-1, kT, 2}, picking(kT * 2, head), "logits");
        // A head for embeddings of 3 values, which the backbone's 2 do not fit.
        writeLinearModel(dir_ / "head_d3.onnx", "embeddings", {-1, kT, 3},
            picking(kT * 3, {0, 3, 6, 9}), "logits");
        test::writeFile(dir_ / "labels.txt", "still\nleft\nright\nup\n");
    }

    const std::string& dir() const { return dir_.path(); }

private:
    test::TempDir dir_;
};

// A config with one action task; `taskExtra` completes the task section (indented 4).
Expected<AgentConfig> actionConfig(const ActionModels& models, const std::string& taskExtra,
    const std::string& postprocess = "{output: probabilities, top_k: 4}")
{
    const std::string text = "tasks:\n"
                             "  - name: act\n"
                             "    type: action\n"
                             "    labels: labels.txt\n"
                             "    preprocess: {resize: stretch, interpolation: area}\n"
                             "    postprocess: " +
        postprocess + "\n" + taskExtra;
    return parseConfig(text, "action.yaml", models.dir());
}

SourceInfo motionInfo()
{
    SourceInfo info;
    info.classNames = {"still", "left", "right", "up"};
    return info;
}

// The grey level of frame n, and what preprocessing (ImageNet defaults) makes of its red channel.
int greyOf(uint64_t n)
{
    return static_cast<int>((37 * n + 11) % 256);
}
float preprocessedRed(uint64_t n)
{
    return (static_cast<float>(greyOf(n)) / 255.0f - 0.485f) / 0.229f;
}

// Feeds frames 0..count-1 (sequence numbers seq(i)) and returns their records.
std::vector<FrameRecord> feed(
    ActionTask& task, size_t count,
    const std::function<uint64_t(size_t)>& seq = [](size_t i) { return i; },
    const std::function<int(uint64_t)>& truth = [](uint64_t) { return -1; })
{
    std::vector<FrameRecord> records;
    Frame frame;
    for (size_t i = 0; i < count; ++i) {
        frame.sequence = seq(i);
        frame.captureNs = monotonicNs();
        frame.truthClass = truth(frame.sequence);
        const auto grey = static_cast<uint8_t>(greyOf(frame.sequence));
        frame.image = test::solidImage(kFrameSide, kFrameSide, grey, grey, grey);
        const Frame* frames[] = {&frame};
        FrameRecord r;
        Status s = task.process(frames, 1, monotonicNs(), &r);
        EXPECT_TRUE(s.ok()) << s.message();
        records.push_back(r);
    }
    return records;
}

// The model's output as the record gives it back (probabilities, no smoothing, top-k of all).
std::map<int, float> outputOf(const FrameRecord& r)
{
    std::map<int, float> out;
    for (int j = 0; j < r.topK; ++j)
        out[r.labels[static_cast<size_t>(j)]] = r.scores[static_cast<size_t>(j)];
    return out;
}

std::unique_ptr<ActionTask> createTask(const ActionModels& models, const std::string& extra,
    const std::string& postprocess = "{output: probabilities, top_k: 4}")
{
    auto c = actionConfig(models, extra, postprocess);
    EXPECT_TRUE(c.ok()) << c.status().message();
    if (!c.ok())
        return nullptr;
    auto t = ActionTask::create(c.value(), 0, motionInfo());
    EXPECT_TRUE(t.ok()) << t.status().message();
    return t.ok() ? std::move(t).value() : nullptr;
}

std::string createError(const ActionModels& models, const std::string& extra)
{
    auto c = actionConfig(models, extra);
    if (!c.ok())
        return c.status().message();
    auto t = ActionTask::create(c.value(), 0, motionInfo());
    EXPECT_FALSE(t.ok());
    return t.ok() ? "" : t.status().message();
}

// Checks that every result read its clip in temporal order: output t is clip frame t's value.
void expectClipsInOrder(const std::vector<FrameRecord>& records, int frameStep, int stride)
{
    const int T = ActionModels::kT;
    int results = 0;
    uint64_t sampled = 0;
    for (size_t i = 0; i < records.size(); ++i) {
        const FrameRecord& r = records[i];
        const bool inClip = i % static_cast<size_t>(frameStep) == 0;
        if (inClip)
            ++sampled;
        const bool due = inClip && sampled >= static_cast<uint64_t>(T) &&
            (sampled - T) % static_cast<uint64_t>(stride) == 0;
        ASSERT_EQ(r.hasResult, due) << "frame " << i;
        ASSERT_EQ(r.hasClip(), due) << "frame " << i;
        if (!due) {
            EXPECT_EQ(r.topK, 0);
            EXPECT_EQ(r.truth, -1);
            continue;
        }
        ++results;
        EXPECT_EQ(r.clipFrames, T);
        EXPECT_EQ(r.clipLastId, r.frameId);
        EXPECT_EQ(r.clipFirstId, r.frameId - static_cast<uint64_t>((T - 1) * frameStep));
        EXPECT_EQ(r.clipLastNs, r.capturedNs);
        EXPECT_EQ(r.clipGaps, 0);
        EXPECT_GT(r.clipInferenceNs, 0);
        EXPECT_LE(r.clipInferenceNs, r.inferredNs - r.preprocessedNs);
        const auto out = outputOf(r);
        ASSERT_EQ(out.size(), static_cast<size_t>(T));
        for (int t = 0; t < T; ++t)
            EXPECT_NEAR(out.at(t),
                preprocessedRed(r.clipFirstId + static_cast<uint64_t>(t * frameStep)), 1e-5)
                << "frame " << i << ", clip frame " << t;
    }
    EXPECT_GT(results, 3);
}

TEST(ActionTask, ClipModelReadsFramesInTemporalOrderInBothLayouts)
{
    ActionModels models;
    for (const char* layout : {"ncthw", "ntchw"}) {
        SCOPED_TRACE(layout);
        auto task = createTask(models,
            std::string("    model: clip_") + layout + ".onnx\n    action: {layout: " + layout +
                ", stride: 1}\n");
        ASSERT_TRUE(task);
        EXPECT_EQ(task->clipLength(), ActionModels::kT);
        // Several trips round the ring, so clips that wrap around its end are read too.
        const size_t frames = task->ring().planes() * 2 + 5;
        expectClipsInOrder(feed(*task, frames), 1, 1);
    }
}

TEST(ActionTask, StreamingHeadReadsEmbeddingsInTemporalOrder)
{
    ActionModels models;
    auto task = createTask(models,
        "    model: backbone.onnx\n    action: {mode: streaming, head: head.onnx, stride: 1}\n");
    ASSERT_TRUE(task);
    EXPECT_EQ(task->engines().size(), 2u);
    const auto records = feed(*task, task->ring().planes() * 2 + 5);
    expectClipsInOrder(records, 1, 1);
    // Every frame costs one backbone pass: engine compute on every record.
    for (const FrameRecord& r : records)
        EXPECT_GT(r.computeNs, 0) << "frame " << r.frameId;
}

TEST(ActionTask, FrameStepAndStrideChooseWhichFramesAndWhenToInfer)
{
    ActionModels models;
    auto task =
        createTask(models, "    model: clip_ncthw.onnx\n    action: {stride: 3, frame_step: 2}\n");
    ASSERT_TRUE(task);
    const auto records = feed(*task, 60);
    expectClipsInOrder(records, 2, 3);
    // Frames left out of the clip cost nothing but their record.
    EXPECT_EQ(records[1].preprocessedNs, records[1].dequeuedNs);
    EXPECT_EQ(task->describe()["action"]["clip_span_frames"], 7);
}

TEST(ActionTask, TheModelReadsTheClipInPlaceFromTheRing)
{
    ActionModels models;
    for (const char* extra : {"    model: clip_ncthw.onnx\n    action: {stride: 1}\n",
             "    model: backbone.onnx\n    action: {mode: streaming, head: head.onnx, stride: "
             "1}\n"}) {
        SCOPED_TRACE(extra);
        auto task = createTask(models, extra);
        ASSERT_TRUE(task);
        const ClipRing& ring = task->ring();
        const size_t bytes = ring.clipElements() * sizeof(float);
        Frame frame;
        frame.image = test::solidImage(kFrameSide, kFrameSide, 90, 90, 90);
        const float* previous = nullptr;
        for (uint64_t i = 0; i < 3 * ring.planes(); ++i) {
            frame.sequence = i;
            const Frame* frames[] = {&frame};
            FrameRecord r;
            ASSERT_TRUE(task->process(frames, 1, monotonicNs(), &r).ok());
            if (!r.hasResult)
                continue;
            // The input handed to the engine is the ring's own clip, inside its mapping: no
            // buffer the clip was copied into.
            ASSERT_EQ(task->lastClipInput(), ring.clip());
            ASSERT_TRUE(ring.contains(task->lastClipInput(), bytes));
            // One frame later, the window has moved by one frame's planes in the ring (or
            // wrapped back to its start), not been rebuilt elsewhere.
            if (previous) {
                const ptrdiff_t step = task->lastClipInput() - previous;
                const ptrdiff_t frameStep =
                    static_cast<ptrdiff_t>(ring.layout() == ClipRing::Layout::ChannelsFirst
                            ? ring.planeElements()
                            : ring.planeElements() * static_cast<size_t>(ring.channels()));
                EXPECT_TRUE(step == frameStep || task->lastClipInput() < previous)
                    << "step " << step << " elements";
            }
            previous = task->lastClipInput();
        }
        EXPECT_EQ(task->clipInferences(), 3 * ring.planes() - ActionModels::kT + 1);
        EXPECT_EQ(ring.pushed(), 3 * ring.planes());
    }
}

TEST(ActionTask, ClipTruthIsKnownOnlyWhenEveryFrameAgrees)
{
    ActionModels models;
    auto task = createTask(models, "    model: clip_ncthw.onnx\n    action: {stride: 1}\n");
    ASSERT_TRUE(task);
    // Segments of 6 frames: class 0, 1, 2, 3, 0, ...; the labels list them in the source's order.
    constexpr uint64_t kSegment = 6;
    auto truth = [](uint64_t n) { return static_cast<int>((n / kSegment) % 4); };
    const auto records = feed(
        *task, 40, [](size_t i) { return static_cast<uint64_t>(i); }, truth);
    int scored = 0, mixed = 0;
    for (const FrameRecord& r : records) {
        if (!r.hasResult)
            continue;
        if (truth(r.clipFirstId) == truth(r.clipLastId)) {
            EXPECT_EQ(r.truth, truth(r.clipLastId)) << "frame " << r.frameId;
            ++scored;
        } else {
            EXPECT_EQ(r.truth, -1) << "frame " << r.frameId;
            ++mixed;
        }
    }
    EXPECT_GT(scored, 5);
    EXPECT_GT(mixed, 5);
}

TEST(ActionTask, FramesMissingFromAWindowAreCountedAsGaps)
{
    ActionModels models;
    auto task = createTask(models, "    model: clip_ncthw.onnx\n    action: {stride: 1}\n");
    ASSERT_TRUE(task);
    // Sequence numbers skip 10 and 11, as if a live queue had dropped them.
    const auto records = feed(*task, 20, [](size_t i) { return i < 10 ? i : i + 2; });
    for (const FrameRecord& r : records) {
        if (!r.hasResult)
            continue;
        const bool spansDrop = r.clipFirstId < 10 && r.clipLastId > 11;
        EXPECT_EQ(r.clipGaps, spansDrop ? 2 : 0) << "frame " << r.frameId;
    }
}

// Two cameras of different content and truth: the grey level and class of stream s's frame n.
int streamGrey(uint16_t stream, uint64_t n)
{
    return stream == 0 ? greyOf(n) : greyOf(5 * n + 101);
}
int streamTruth(uint16_t stream, uint64_t n)
{
    return stream == 0 ? static_cast<int>((n / 6) % 4) : static_cast<int>((n / 5 + 2) % 4);
}

Frame streamFrame(uint16_t stream, uint64_t n)
{
    Frame frame;
    frame.stream = stream;
    frame.sequence = n;
    frame.captureNs = 1000000 + static_cast<int64_t>(n) * 33000000 + stream;
    frame.truthClass = streamTruth(stream, n);
    const auto grey = static_cast<uint8_t>(streamGrey(stream, n));
    frame.image = test::solidImage(kFrameSide, kFrameSide, grey, grey, grey);
    return frame;
}

FrameRecord processOne(ActionTask& task, const Frame& frame)
{
    const Frame* frames[] = {&frame};
    FrameRecord r;
    const Status s = task.process(frames, 1, monotonicNs(), &r);
    EXPECT_TRUE(s.ok()) << s.message();
    return r;
}

TEST(ActionTask, EachStreamHasItsOwnClips)
{
    ActionModels models;
    // Both modes, frame steps and strides past 1, and smoothing, which carries a stream's scores
    // from clip to clip.
    for (const char* extra : {"    model: clip_ncthw.onnx\n    action: {stride: 1}\n",
             "    model: clip_ntchw.onnx\n    action: {layout: ntchw, stride: 3, frame_step: 2}\n",
             "    model: backbone.onnx\n    action: {mode: streaming, head: head.onnx, stride: "
             "2}\n"}) {
        SCOPED_TRACE(extra);
        const std::string post = "{output: probabilities, top_k: 4, smoothing: 0.5}";
        auto task = createTask(models, extra, post);
        ASSERT_TRUE(task);
        task->prepareStreams(2);
        EXPECT_EQ(task->streamCount(), 2u);
        EXPECT_EQ(task->describe()["action"]["clip_rings"], 2);
        EXPECT_NE(&task->ring(0), &task->ring(1));

        // Each stream's frames in order, the two streams interleaved irregularly, runs of one
        // stream included. Enough frames to go round the rings more than once.
        const uint64_t perStream = task->ring().planes() * 2 + 7;
        std::vector<uint16_t> order;
        std::mt19937 rng(7);
        uint64_t left[2] = {perStream, perStream};
        while (left[0] + left[1] > 0) {
            uint16_t s = static_cast<uint16_t>(rng() % 3 == 0 ? 0 : 1);
            if (left[s] == 0)
                s = static_cast<uint16_t>(1 - s);
            --left[s];
            order.push_back(s);
        }
        std::vector<FrameRecord> mixed[2];
        uint64_t next[2] = {0, 0};
        for (uint16_t s : order)
            mixed[s].push_back(processOne(*task, streamFrame(s, next[s]++)));

        for (uint16_t s = 0; s < 2; ++s) {
            SCOPED_TRACE("stream " + std::to_string(s));
            // The same frames alone, as stream 0 of a task of their own.
            auto alone = createTask(models, extra, post);
            ASSERT_TRUE(alone);
            std::vector<FrameRecord> expected;
            for (uint64_t n = 0; n < perStream; ++n) {
                Frame frame = streamFrame(s, n);
                frame.stream = 0;
                expected.push_back(processOne(*alone, frame));
            }
            ASSERT_EQ(mixed[s].size(), expected.size());
            int results = 0;
            for (size_t i = 0; i < expected.size(); ++i) {
                const FrameRecord& got = mixed[s][i];
                const FrameRecord& want = expected[i];
                SCOPED_TRACE("frame " + std::to_string(i));
                ASSERT_TRUE(got.ok);
                EXPECT_EQ(got.frameId, want.frameId);
                ASSERT_EQ(got.hasResult, want.hasResult);
                if (!want.hasResult)
                    continue;
                ++results;
                EXPECT_EQ(got.clipFrames, want.clipFrames);
                EXPECT_EQ(got.clipFirstId, want.clipFirstId);
                EXPECT_EQ(got.clipLastId, want.clipLastId);
                EXPECT_EQ(got.clipFirstNs, want.clipFirstNs);
                EXPECT_EQ(got.clipLastNs, want.clipLastNs);
                EXPECT_EQ(got.clipGaps, 0);
                EXPECT_EQ(got.truth, want.truth);
                ASSERT_EQ(got.topK, want.topK);
                for (size_t j = 0; j < static_cast<size_t>(want.topK); ++j) {
                    EXPECT_EQ(got.labels[j], want.labels[j]) << "rank " << j;
                    EXPECT_NEAR(got.scores[j], want.scores[j], 1e-6) << "rank " << j;
                }
            }
            EXPECT_GT(results, 3);
            EXPECT_EQ(task->clipInferences(s), alone->clipInferences());
            EXPECT_EQ(task->ring(s).pushed(), alone->ring().pushed());
        }
    }
}

TEST(ActionTask, AFrameOfAStreamNotPreparedIsAnError)
{
    ActionModels models;
    auto task = createTask(models, "    model: clip_ncthw.onnx\n    action: {stride: 1}\n");
    ASSERT_TRUE(task);
    auto expectRefused = [&](uint16_t stream) {
        const Frame frame = streamFrame(stream, 3);
        const Frame* frames[] = {&frame};
        FrameRecord r;
        const Status s = task->process(frames, 1, monotonicNs(), &r);
        ASSERT_FALSE(s.ok()) << "stream " << stream;
        EXPECT_NE(s.message().find("stream " + std::to_string(stream)), std::string::npos)
            << s.message();
        EXPECT_FALSE(r.ok);
        EXPECT_NE(r.failure, FrameFailure::None);
        EXPECT_TRUE(r.hasResult);
        EXPECT_GT(r.doneNs, 0);
    };
    // Without prepareStreams() the task has stream 0 only.
    EXPECT_EQ(task->streamCount(), 1u);
    expectRefused(1);
    task->prepareStreams(2);
    expectRefused(2);
    expectRefused(65535);
    // The refused frames left the prepared streams' clips alone.
    for (uint16_t s = 0; s < 2; ++s) {
        for (uint64_t n = 0; n < static_cast<uint64_t>(ActionModels::kT); ++n)
            processOne(*task, streamFrame(s, n));
        EXPECT_EQ(task->ring(s).pushed(), static_cast<uint64_t>(ActionModels::kT));
        EXPECT_EQ(task->clipInferences(s), 1u);
    }
}

TEST(ActionTask, ConfigErrorsNameTheKey)
{
    ActionModels models;
    // Found while reading the file.
    EXPECT_NE(createError(models, "    model: clip_ncthw.onnx\n    action: {stride: 0}\n")
                  .find("action.yaml:8"),
        std::string::npos);
    EXPECT_NE(createError(models, "    model: clip_ncthw.onnx\n    action: {stride: 0}\n")
                  .find("tasks[0].action.stride: must be between 1"),
        std::string::npos);
    EXPECT_NE(createError(models, "    model: backbone.onnx\n    action: {mode: streaming}\n")
                  .find("tasks[0].action.head: missing: streaming mode needs the temporal head"),
        std::string::npos);
    EXPECT_NE(createError(models, "    model: clip_ncthw.onnx\n    action: {head: head.onnx}\n")
                  .find("tasks[0].action.head: is for streaming mode only"),
        std::string::npos);
    EXPECT_NE(createError(models, "    model: clip_ncthw.onnx\n    action: {mode: sliding}\n")
                  .find("tasks[0].action.mode: must be one of clip, streaming"),
        std::string::npos);
    {
        auto c = parseConfig("tasks:\n  - model: m.onnx\n    action: {stride: 2}\n", "c.yaml", "");
        ASSERT_FALSE(c.ok());
        EXPECT_NE(c.status().message().find("tasks[0].action: is for tasks of type action only"),
            std::string::npos)
            << c.status().message();
    }

    // Found against the models.
    std::string e =
        createError(models, "    model: clip_ncthw.onnx\n    action: {clip_length: 8}\n");
    EXPECT_NE(e.find("tasks[0].action.clip_length: clip_length 8 does not match the model"),
        std::string::npos)
        << e;
    EXPECT_NE(e.find("takes 4 frames per clip"), std::string::npos) << e;
    e = createError(models, "    model: clip_ntchw.onnx\n    action: {layout: ncthw}\n");
    EXPECT_NE(e.find("tasks[0].action.layout"), std::string::npos) << e;
    EXPECT_NE(e.find("set layout: ntchw"), std::string::npos) << e;
    e = createError(models,
        "    model: backbone.onnx\n    action: {mode: streaming, head: head.onnx, clip_length: "
        "5}\n");
    EXPECT_NE(e.find("tasks[0].action.clip_length"), std::string::npos) << e;
    EXPECT_NE(e.find("head.onnx"), std::string::npos) << e;
    e = createError(
        models, "    model: backbone.onnx\n    action: {mode: streaming, head: head_d3.onnx}\n");
    EXPECT_NE(e.find("tasks[0].action.head"), std::string::npos) << e;
    EXPECT_NE(e.find("embeddings of 3 values, but the backbone"), std::string::npos) << e;
    e = createError(
        models, "    model: backbone.onnx\n    action: {mode: streaming, head: nothere.onnx}\n");
    EXPECT_NE(e.find("tasks[0].action.head"), std::string::npos) << e;
    EXPECT_NE(e.find("nothere.onnx"), std::string::npos) << e;
    e = createError(models, "    model: backbone.onnx\n");
    EXPECT_NE(e.find("tasks[0].model"), std::string::npos) << e;
    EXPECT_NE(e.find("a clip model takes N x C x T x H x W"), std::string::npos) << e;
    e = createError(models, "    model: clip_ncthw.onnx\n    engine: {batch: 2}\n");
    EXPECT_NE(e.find("tasks[0].engine.batch: an action task infers one clip at a time"),
        std::string::npos)
        << e;
}

} // namespace
} // namespace jetagent
