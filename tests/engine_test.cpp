// Model files and the OpenCV DNN engine: loading, errors, inference, fusion and batching.
#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include "jetagent/engines/cache_file.h"
#include "jetagent/engines/engine.h"
#include "jetagent/engines/model_file.h"
#include "jetagent/engines/sha256.h"
#include "jetagent/hal/synthetic_shapes.h"
#include "tasks/preprocess.h"
#include "test_support.h"

namespace jetagent {
namespace {

const std::string kDemoModel = test::sourcePath("models/shapes_cnn.onnx");

std::shared_ptr<const ModelFile> demoModel()
{
    auto m = loadModelFile(kDemoModel);
    EXPECT_TRUE(m.ok()) << m.status().message();
    return m.ok() ? m.value() : nullptr;
}

// The OpenCV DNN tests name their backend: the default (auto) is xnnpack where it is built in.
EngineOptions openCV()
{
    EngineOptions o;
    o.backend = "opencv";
    return o;
}

// The demo model's preprocessing (see firmware-config/demo.yaml).
PreprocessConfig demoPreprocessing()
{
    PreprocessConfig c;
    c.resize = ResizeMode::Stretch;
    c.cropWidth = c.cropHeight = 64;
    c.interpolation = Interpolation::Area;
    return c;
}

// A one-node model built with the ONNX protobuf API.
std::vector<char> tinyModel(const std::string& opType)
{
    onnx::ModelProto model;
    model.set_ir_version(7);
    model.set_producer_name("jetagent-test");
    model.add_opset_import()->set_version(13);
    auto* graph = model.mutable_graph();
    graph->set_name("tiny");
    auto* node = graph->add_node();
    node->set_op_type(opType);
    node->add_input("x");
    node->add_output("y");
    for (auto* value : {graph->add_input(), graph->add_output()}) {
        value->set_name(value == &graph->input(0) ? "x" : "y");
        auto* tensor = value->mutable_type()->mutable_tensor_type();
        tensor->set_elem_type(onnx::TensorProto_DataType_FLOAT);
        for (int d : {1, 3, 4, 4})
            tensor->mutable_shape()->add_dim()->set_dim_value(d);
    }
    std::string bytes = model.SerializeAsString();
    return std::vector<char>(bytes.begin(), bytes.end());
}

TEST(ModelFile, DescribesTheDemoModel)
{
    auto m = demoModel();
    ASSERT_TRUE(m);
    ASSERT_EQ(m->inputs.size(), 1u);
    EXPECT_EQ(m->inputs[0].name, "input");
    EXPECT_EQ(m->inputs[0].type, DataType::Float32);
    EXPECT_EQ(m->inputs[0].dims, (std::vector<int64_t> {-1, 3, 64, 64}));
    EXPECT_EQ(m->inputs[0].dimNames[0], "batch");
    EXPECT_EQ(m->inputs[0].shapeString(), "batch x 3 x 64 x 64");
    ASSERT_EQ(m->outputs.size(), 1u);
    EXPECT_EQ(m->outputs[0].dims, (std::vector<int64_t> {-1, 6}));
    EXPECT_EQ(m->opset, 13);
    EXPECT_EQ(m->producer.rfind("pytorch", 0), 0u) << m->producer;
    EXPECT_EQ(m->fileBytes, test::readFile(kDemoModel).size());
    EXPECT_EQ(m->sha256,
        Sha256::hex(test::readFile(kDemoModel).data(), test::readFile(kDemoModel).size()));
}

TEST(ModelFile, BadFilesGiveClearErrorsNamingTheFile)
{
    test::TempDir dir;
    auto missing = loadModelFile(dir / "absent.onnx");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.status().kind(), ErrorKind::NotFound);
    EXPECT_NE(missing.status().message().find("absent.onnx' does not exist"), std::string::npos);

    auto directory = loadModelFile(dir.path());
    ASSERT_FALSE(directory.ok());
    EXPECT_NE(directory.status().message().find("is a directory"), std::string::npos);

    test::writeFile(dir / "empty.onnx", "");
    auto empty = loadModelFile(dir / "empty.onnx");
    ASSERT_FALSE(empty.ok());
    EXPECT_NE(empty.status().message().find("is empty"), std::string::npos);

    const std::string whole = test::readFile(kDemoModel);
    test::writeFile(dir / "truncated.onnx", whole.substr(0, whole.size() / 2));
    auto truncated = loadModelFile(dir / "truncated.onnx");
    ASSERT_FALSE(truncated.ok());
    EXPECT_EQ(truncated.status().kind(), ErrorKind::InvalidInput);
    EXPECT_NE(truncated.status().message().find("truncated.onnx' is not a valid ONNX model"),
        std::string::npos)
        << truncated.status().message();

    test::writeFile(dir / "text.onnx", "tasks:\n  - model: x\n");
    auto text = loadModelFile(dir / "text.onnx");
    ASSERT_FALSE(text.ok());
    EXPECT_EQ(text.status().kind(), ErrorKind::InvalidInput);
}

TEST(OpenCVDnnEngine, ClassifiesSyntheticShapes)
{
    auto engine = buildEngine(demoModel(), openCV());
    ASSERT_TRUE(engine.ok()) << engine.status().message();
    const EngineDescription& d = engine.value()->description();
    EXPECT_EQ(d.backend, "opencv");
    EXPECT_EQ(d.target, "cpu");
    EXPECT_EQ(d.modelPath, kDemoModel);
    EXPECT_GT(d.buildNs, 0);
    auto session = engine.value()->createSession();
    ASSERT_TRUE(session.ok());

    ShapesRenderer renderer(320, 240, 1);
    Preprocessor pre(demoPreprocessing());
    std::vector<float> input(pre.outputElements());
    Image image;
    int correct = 0;
    for (uint64_t i = 0; i < 30; ++i) {
        const int truth = renderer.render(i, image);
        ASSERT_TRUE(pre.run(image, input.data()).ok());
        TensorView view {input.data(), TensorShape {1, 3, 64, 64}};
        RunTiming timing;
        ASSERT_TRUE(session.value()->run(&view, 1, &timing).ok());
        EXPECT_GT(timing.computeNs, 0);
        EXPECT_EQ(timing.hostToDeviceNs, -1);
        ASSERT_EQ(session.value()->outputCount(), 1u);
        const ConstTensorView out = session.value()->output(0);
        ASSERT_EQ(out.shape, (TensorShape {1, 6}));
        correct += static_cast<int>(std::max_element(out.data, out.data + 6) - out.data) == truth;
    }
    EXPECT_GE(correct, 29);
}

// Output rows for `count` frames, run as one batch or one by one.
std::vector<float> logits(const Engine& engine, int count, bool batched)
{
    ShapesRenderer renderer(320, 240, 3);
    Preprocessor pre(demoPreprocessing());
    std::vector<float> input(pre.outputElements() * static_cast<size_t>(count));
    Image image;
    for (int i = 0; i < count; ++i) {
        renderer.render(static_cast<uint64_t>(i), image);
        EXPECT_TRUE(
            pre.run(image, input.data() + pre.outputElements() * static_cast<size_t>(i)).ok());
    }
    auto session = engine.createSession();
    EXPECT_TRUE(session.ok());
    std::vector<float> out;
    const int runs = batched ? 1 : count;
    const int rows = batched ? count : 1;
    for (int r = 0; r < runs; ++r) {
        TensorView view {input.data() + pre.outputElements() * static_cast<size_t>(r),
            TensorShape {rows, 3, 64, 64}};
        EXPECT_TRUE(session.value()->run(&view, 1, nullptr).ok());
        const ConstTensorView o = session.value()->output(0);
        EXPECT_EQ(o.shape, (TensorShape {rows, 6}));
        out.insert(out.end(), o.data, o.data + o.shape.elementCount());
    }
    return out;
}

void expectClose(const std::vector<float>& a, const std::vector<float>& b, double tolerance)
{
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
        EXPECT_NEAR(a[i], b[i], tolerance * std::max(1.0, std::fabs(static_cast<double>(b[i]))))
            << "element " << i;
}

TEST(OpenCVDnnEngine, FusionOffComputesTheSameFunction)
{
    EngineOptions unfused = openCV();
    unfused.fusion = false;
    auto fused = buildEngine(demoModel(), openCV());
    auto plain = buildEngine(demoModel(), unfused);
    ASSERT_TRUE(fused.ok() && plain.ok());
    EXPECT_FALSE(plain.value()->description().options.fusion);
    expectClose(logits(*plain.value(), 4, false), logits(*fused.value(), 4, false), 1e-4);
}

TEST(OpenCVDnnEngine, BatchOfFourEqualsFourSingleRuns)
{
    EngineOptions options = openCV();
    options.batch = 4;
    auto engine = buildEngine(demoModel(), options);
    ASSERT_TRUE(engine.ok());
    expectClose(logits(*engine.value(), 4, true), logits(*engine.value(), 4, false), 1e-4);
}

TEST(OpenCVDnnEngine, SessionsAreIndependent)
{
    auto engine = buildEngine(demoModel(), openCV());
    ASSERT_TRUE(engine.ok());
    const auto a = logits(*engine.value(), 2, false);
    const auto b = logits(*engine.value(), 2, false);
    EXPECT_EQ(a, b);
}

TEST(OpenCVDnnEngine, OptionsItCannotHonourAreClearErrors)
{
    EngineOptions gpu = openCV();
    gpu.device = Device::Gpu;
    auto g = buildEngine(demoModel(), gpu);
    if (g.ok())
        GTEST_SKIP() << "this OpenCV has CUDA in its DNN module";
    EXPECT_EQ(g.status().kind(), ErrorKind::Unsupported);
    EXPECT_NE(g.status().message().find("built without CUDA"), std::string::npos)
        << g.status().message();

    EngineOptions fp16 = openCV();
    fp16.precision = Precision::Fp16;
    auto h = buildEngine(demoModel(), fp16);
    ASSERT_FALSE(h.ok());
    EXPECT_EQ(h.status().kind(), ErrorKind::Unsupported);
    EXPECT_NE(h.status().message().find("fp16"), std::string::npos);

    EngineOptions dla = openCV();
    dla.device = Device::Dla0;
    auto d = buildEngine(demoModel(), dla);
    ASSERT_FALSE(d.ok());
    EXPECT_NE(d.status().message().find("tensorrt"), std::string::npos);
}

TEST(EngineRegistry, UnknownAndMissingBackends)
{
    EngineOptions unknown;
    unknown.backend = "onnxruntime";
    auto u = buildEngine(demoModel(), unknown);
    ASSERT_FALSE(u.ok());
    EXPECT_EQ(u.status().kind(), ErrorKind::InvalidInput);
    EXPECT_NE(
        u.status().message().find("known: auto, xnnpack, opencv, tensorrt"), std::string::npos);

    EngineOptions trt;
    trt.backend = "tensorrt";
    auto t = buildEngine(demoModel(), trt);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().kind(), ErrorKind::Unsupported);
    // The TensorRT backend is a plugin this machine lacks: the error names the package.
    EXPECT_NE(t.status().message().find("is not installed"), std::string::npos)
        << t.status().message();
    EXPECT_NE(t.status().message().find("jetagent-tensorrt"), std::string::npos);

    bool sawOpenCV = false;
    for (const auto& b : listBackends())
        sawOpenCV |= b.name == "opencv" && b.available;
    EXPECT_TRUE(sawOpenCV);
}

TEST(OpenCVDnnEngine, ModelOpenCVCannotRunFailsAtBuildNamingTheModel)
{
    // Hardmax is standard ONNX (opset 13) that OpenCV DNN 4.6 has no layer for.
    auto parsed = parseModelBytes(tinyModel("Hardmax"), "tiny.onnx");
    ASSERT_TRUE(parsed.ok()) << parsed.status().message(); // a well-formed ONNX file...
    auto engine = buildEngine(parsed.value(), openCV());
    ASSERT_FALSE(engine.ok()); // ...that the backend cannot run
    EXPECT_EQ(engine.status().kind(), ErrorKind::InvalidInput);
    EXPECT_NE(engine.status().message().find("cannot load model 'tiny.onnx'"), std::string::npos)
        << engine.status().message();
}

TEST(OpenCVDnnEngine, WrongInputCountIsAnError)
{
    auto parsed = parseModelBytes(tinyModel("Relu"), "relu.onnx");
    ASSERT_TRUE(parsed.ok());
    auto engine = buildEngine(parsed.value(), openCV());
    ASSERT_TRUE(engine.ok()) << engine.status().message();
    auto session = engine.value()->createSession();
    ASSERT_TRUE(session.ok());
    EXPECT_FALSE(session.value()->run(nullptr, 0, nullptr).ok());
    std::vector<float> x(48, -1.0f);
    x[5] = 2.0f;
    TensorView view {x.data(), TensorShape {1, 3, 4, 4}};
    ASSERT_TRUE(session.value()->run(&view, 1, nullptr).ok());
    const ConstTensorView y = session.value()->output(0);
    EXPECT_EQ(y.data[0], 0.0f);
    EXPECT_EQ(y.data[5], 2.0f);
}

} // namespace
} // namespace jetagent

namespace jetagent {
namespace {

bool xnnpackBuilt()
{
    for (const BackendInfo& b : listBackends())
        if (b.name == "xnnpack")
            return b.available;
    return false;
}

// The demo model on xnnpack gives OpenCV DNN's scores on the same input: with its dense
// convolutions on oneDNN (where the build has it) and without, on one thread and on two (oneDNN's
// share split by images of the batch, or by bands of output rows for one image).
TEST(XnnpackEngine, ScoresTheDemoModelAsOpenCVDoes)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    struct Case {
        int batch, threads;
        bool oneDnn;
    };
    for (const Case c : {Case {2, 1, false}, Case {2, 1, true}, Case {2, 2, true},
             Case {1, 2, true}, Case {3, 2, true}}) {
        SCOPED_TRACE("batch " + std::to_string(c.batch) + ", threads " + std::to_string(c.threads) +
            ", onednn " + (c.oneDnn ? "on" : "off"));
        EngineOptions x;
        x.backend = "xnnpack";
        x.batch = c.batch;
        x.threads = c.threads;
        x.onednn = c.oneDnn;
        EngineOptions o;
        o.backend = "opencv";
        o.batch = c.batch;
        auto xe = buildEngine(demoModel(), x);
        auto oe = buildEngine(demoModel(), o);
        ASSERT_TRUE(xe.ok()) << xe.status().message();
        ASSERT_TRUE(oe.ok()) << oe.status().message();
        EXPECT_EQ(xe.value()->description().backend, "xnnpack");
        EXPECT_NE(xe.value()->description().backendVersion.find("XNNPACK"), std::string::npos);
        size_t oneDnnSteps = 0;
        for (const EngineStep& step : xe.value()->steps())
            oneDnnSteps += step.library == "onednn";
        if (!c.oneDnn) {
            EXPECT_EQ(oneDnnSteps, 0u);
        }
        EXPECT_EQ(xe.value()->description().backendVersion.find("oneDNN") != std::string::npos,
            oneDnnSteps > 0);
        auto xs = xe.value()->createSession();
        auto os = oe.value()->createSession();
        ASSERT_TRUE(xs.ok() && os.ok());
        const size_t n = static_cast<size_t>(c.batch) * 3 * 64 * 64;
        std::vector<float> input(n);
        uint32_t seed = 12345;
        for (float& v : input) {
            seed = seed * 1664525u + 1013904223u;
            v = static_cast<float>(seed >> 8) / static_cast<float>(1u << 24) * 4.0f - 2.0f;
        }
        TensorView view {input.data(), {c.batch, 3, 64, 64}};
        ASSERT_TRUE(xs.value()->run(&view, 1, nullptr).ok());
        ASSERT_TRUE(os.value()->run(&view, 1, nullptr).ok());
        const ConstTensorView a = xs.value()->output(0);
        const ConstTensorView b = os.value()->output(0);
        ASSERT_EQ(a.shape.elementCount(), 6 * c.batch);
        ASSERT_EQ(b.shape.elementCount(), 6 * c.batch);
        double scale = 0;
        double diff = 0;
        for (int i = 0; i < 6 * c.batch; ++i) {
            scale = std::max(scale, std::fabs(static_cast<double>(b.data[i])));
            diff = std::max(diff, std::fabs(static_cast<double>(a.data[i]) - b.data[i]));
        }
        EXPECT_LT(diff, 1e-4 * scale) << "max |xnnpack - opencv| " << diff << " of " << scale;

        // A wrong input shape is an error, not a read past the buffer.
        TensorView wrong {input.data(), {c.batch + 1, 3, 64, 64}};
        const Status s = xs.value()->run(&wrong, 1, nullptr);
        ASSERT_FALSE(s.ok());
        EXPECT_NE(s.message().find("built for " + std::to_string(c.batch) + "x3x64x64"),
            std::string::npos)
            << s.message();
    }
}

TEST(XnnpackEngine, AnOperatorItCannotRunFailsTheBuildNamingTheNode)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    auto parsed = parseModelBytes(tinyModel("Hardmax"), "tiny.onnx");
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    EngineOptions x;
    x.backend = "xnnpack";
    auto engine = buildEngine(parsed.value(), x);
    ASSERT_FALSE(engine.ok());
    EXPECT_EQ(engine.status().kind(), ErrorKind::Unsupported);
    EXPECT_NE(engine.status().message().find("model 'tiny.onnx'"), std::string::npos)
        << engine.status().message();
    EXPECT_NE(
        engine.status().message().find("operator Hardmax is not supported"), std::string::npos)
        << engine.status().message();
}

TEST(XnnpackEngine, RefusesWhatItCannotDoWithAReason)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    // fp16: XnnpackEngine.Fp16RunsWhereTheCpuHasNativeFp16AndIsRefusedElsewhere.
    // int8 without samples to calibrate on says where they come from.
    EngineOptions int8;
    int8.backend = "xnnpack";
    int8.precision = Precision::Int8;
    auto i = buildEngine(demoModel(), int8);
    ASSERT_FALSE(i.ok());
    EXPECT_EQ(i.status().kind(), ErrorKind::InvalidInput);
    EXPECT_NE(i.status().message().find("engine.calibration.source"), std::string::npos)
        << i.status().message();
    EngineOptions gpu;
    gpu.backend = "xnnpack";
    gpu.device = Device::Gpu;
    auto g = buildEngine(demoModel(), gpu);
    ASSERT_FALSE(g.ok());
    EXPECT_NE(g.status().message().find("runs on the CPU"), std::string::npos);

    // onednn is the xnnpack backend's setting: the others refuse it rather than ignore it.
    EngineOptions opencv;
    opencv.backend = "opencv";
    opencv.onednn = false;
    auto o = buildEngine(demoModel(), opencv);
    ASSERT_FALSE(o.ok());
    EXPECT_NE(o.status().message().find("it is an xnnpack backend setting"), std::string::npos)
        << o.status().message();
}

// A Relu with no step before it to fuse into runs as XNNPACK's clamp: max(x, 0) exactly.
// Calibration samples in memory: the demo's preprocessing of synthetic frames (seed 9, not the
// frames the tests score), `count` of them in batches of `batch`.
class ShapeSamples final : public CalibrationData {
public:
    ShapeSamples(int count, int batch) : count_(count), batch_(batch), pre_(demoPreprocessing()) { }
    std::string key() const override { return "shapes-" + std::to_string(count_); }
    std::string description() const override { return std::to_string(count_) + " shapes"; }
    int batchSize() const override { return batch_; }
    const TensorShape& sampleShape() const override { return shape_; }
    Expected<bool> nextBatch(float* out) override
    {
        if (next_ + batch_ > count_)
            return false;
        for (int i = 0; i < batch_; ++i, ++next_) {
            renderer_.render(static_cast<uint64_t>(next_), image_);
            if (Status s = pre_.run(image_, out + static_cast<size_t>(i) * pre_.outputElements());
                !s)
                return s;
        }
        ++batches;
        return true;
    }
    void rewind() override { next_ = 0; }
    int batches = 0; // given so far

private:
    int count_, batch_, next_ = 0;
    TensorShape shape_ {3, 64, 64};
    ShapesRenderer renderer_ {320, 240, 9};
    Preprocessor pre_;
    Image image_;
};

// int8 on the xnnpack backend: built from calibration samples, it agrees with fp32 on the demo's
// frames; its convolutions run on int8 kernels between one quantization and one dequantization;
// the ranges are cached and a damaged cache entry is calibrated again; too few samples for a
// batch is an error naming both counts.
TEST(XnnpackEngine, Int8IsCalibratedCachedAndAgreesWithFp32)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    test::TempDir dir;
    EngineOptions fp32;
    fp32.backend = "xnnpack";
    fp32.batch = 2;
    EngineOptions int8 = fp32;
    int8.precision = Precision::Int8;
    int8.cacheDir = dir / "cache";
    auto samples = std::make_shared<ShapeSamples>(30, 4);
    int8.calibration = samples;
    auto q = buildEngine(demoModel(), int8);
    ASSERT_TRUE(q.ok()) << q.status().message();
    EXPECT_EQ(samples->batches, 7); // 28 samples, 14 runs of the engine's batch of 2
    const std::string& note = q.value()->description().lowered;
    EXPECT_NE(note.find("calibrated on 28 samples of 30 shapes"), std::string::npos) << note;
    size_t quantize = 0, dequantize = 0, conv = 0;
    for (const EngineStep& step : q.value()->steps()) {
        quantize += step.op == "QuantizeLinear";
        dequantize += step.op == "DequantizeLinear";
        conv += step.op == "Conv";
    }
    EXPECT_EQ(quantize, 1u) << note;
    EXPECT_GE(dequantize, 1u) << note;
    EXPECT_GE(conv, 3u);

    auto f = buildEngine(demoModel(), fp32);
    ASSERT_TRUE(f.ok()) << f.status().message();
    auto agreement = [&](const Engine& a, const Engine& b, double* relative) {
        auto sa = a.createSession();
        auto sb = b.createSession();
        EXPECT_TRUE(sa.ok() && sb.ok());
        ShapesRenderer renderer(320, 240, 1);
        Preprocessor pre(demoPreprocessing());
        std::vector<float> input(2 * pre.outputElements());
        Image image;
        int same = 0;
        double diff = 0, scale = 0;
        for (uint64_t i = 0; i < 100; i += 2) {
            for (uint64_t k = 0; k < 2; ++k) {
                renderer.render(i + k, image);
                EXPECT_TRUE(pre.run(image, input.data() + k * pre.outputElements()).ok());
            }
            TensorView view {input.data(), TensorShape {2, 3, 64, 64}};
            EXPECT_TRUE(sa.value()->run(&view, 1, nullptr).ok());
            EXPECT_TRUE(sb.value()->run(&view, 1, nullptr).ok());
            const float* x = sa.value()->output(0).data;
            const float* y = sb.value()->output(0).data;
            for (int k = 0; k < 2; ++k, x += 6, y += 6) {
                same += std::max_element(x, x + 6) - x == std::max_element(y, y + 6) - y;
                for (int c = 0; c < 6; ++c) {
                    diff = std::max(diff, std::fabs(double(x[c]) - y[c]));
                    scale = std::max(scale, std::fabs(double(y[c])));
                }
            }
        }
        *relative = diff / scale;
        return same;
    };
    double relative = 0;
    EXPECT_GE(agreement(*q.value(), *f.value(), &relative), 99); // of 100 frames
    EXPECT_GT(relative, 0.0); // int8 is not fp32
    EXPECT_LT(relative, 0.05);

    // The second build reads the ranges from the cache and gives the very same engine.
    auto again = std::make_shared<ShapeSamples>(30, 4);
    int8.calibration = again;
    auto cached = buildEngine(demoModel(), int8);
    ASSERT_TRUE(cached.ok()) << cached.status().message();
    EXPECT_EQ(again->batches, 0);
    EXPECT_NE(cached.value()->description().lowered.find("from the cache"), std::string::npos);
    double same = 1;
    EXPECT_EQ(agreement(*cached.value(), *q.value(), &same), 100);
    EXPECT_EQ(same, 0.0);

    // A damaged entry is calibrated again (and replaced), giving the very same engine: a byte of
    // a valid table flipped (which still parses: a digit of a range), cut off or added, which the
    // digest beside it catches; and (below) entries with matching digests whose ranges do not
    // parse or do not fit the model.
    std::vector<std::string> rangeFiles;
    for (const auto& e : std::filesystem::directory_iterator(dir / "cache/xnnpack"))
        if (e.path().extension() == ".ranges")
            rangeFiles.push_back(e.path().string());
    ASSERT_EQ(rangeFiles.size(), 1u);
    const std::string table = test::readFile(rangeFiles[0]);
    const size_t digit = table.find_first_of("123456789abcdef", table.size() / 2);
    ASSERT_NE(digit, std::string::npos);
    std::string flipped = table;
    flipped[digit] = flipped[digit] == '1' ? '2' : '1';
    for (const std::string& damaged :
        {flipped, table.substr(0, table.size() - table.size() / 3), table + "\n"}) {
        test::writeFile(rangeFiles[0], damaged);
        auto samplesAgain = std::make_shared<ShapeSamples>(30, 4);
        int8.calibration = samplesAgain;
        auto rebuilt = buildEngine(demoModel(), int8);
        ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().message();
        EXPECT_EQ(samplesAgain->batches, 7) << "a damaged table was used";
        EXPECT_EQ(agreement(*rebuilt.value(), *q.value(), &same), 100);
        EXPECT_EQ(same, 0.0);
        EXPECT_EQ(test::readFile(rangeFiles[0]), table) << "the entry is replaced";
    }
    std::ofstream(rangeFiles[0]) << "jetagent xnnpack ranges 1\nconv_1 0x1p+0\n";
    auto third = std::make_shared<ShapeSamples>(30, 4);
    int8.calibration = third;
    auto recalibrated = buildEngine(demoModel(), int8);
    ASSERT_TRUE(recalibrated.ok()) << recalibrated.status().message();
    EXPECT_EQ(third->batches, 7);
    ASSERT_TRUE(writeCacheEntry(rangeFiles[0], "jetagent xnnpack ranges 1\nconv_1 0x1p+0\n").ok());
    auto unparsed = std::make_shared<ShapeSamples>(30, 4);
    int8.calibration = unparsed;
    ASSERT_TRUE(buildEngine(demoModel(), int8).ok());
    EXPECT_EQ(unparsed->batches, 7);

    // So is one that parses but names values this model does not have.
    ASSERT_TRUE(
        writeCacheEntry(rangeFiles[0], "jetagent xnnpack ranges 1\nsomething_else -0x1p+0 0x1p+0\n")
            .ok());
    auto fourth = std::make_shared<ShapeSamples>(30, 4);
    int8.calibration = fourth;
    auto refitted = buildEngine(demoModel(), int8);
    ASSERT_TRUE(refitted.ok()) << refitted.status().message();
    EXPECT_EQ(fourth->batches, 7);
    EXPECT_EQ(agreement(*refitted.value(), *q.value(), &same), 100);

    // Fewer samples than one engine batch.
    EngineOptions big = int8;
    big.batch = 8;
    big.cacheDir.clear();
    big.calibration = std::make_shared<ShapeSamples>(6, 2);
    auto few = buildEngine(demoModel(), big);
    ASSERT_FALSE(few.ok());
    EXPECT_NE(few.status().message().find("gave 6 samples, fewer than the engine's batch of 8"),
        std::string::npos)
        << few.status().message();
}

// fp16 on the xnnpack backend: where the CPU computes in fp16 natively (ARMv8.2; the aarch64 tests
// under qemu have it) the demo model's fp16 engine agrees with fp32 on top-1 for 60 frames and is
// close in value, its convolutions running between conversions; elsewhere (x86) it is refused,
// naming what is missing.
TEST(XnnpackEngine, Fp16RunsWhereTheCpuHasNativeFp16AndIsRefusedElsewhere)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    bool native = false;
#if defined(__aarch64__)
    native = (getauxval(AT_HWCAP) & HWCAP_FPHP) && (getauxval(AT_HWCAP) & HWCAP_ASIMDHP);
#endif
    EngineOptions half;
    half.backend = "xnnpack";
    half.precision = Precision::Fp16;
    auto h = buildEngine(demoModel(), half);
    if (!native) {
        ASSERT_FALSE(h.ok());
        EXPECT_EQ(h.status().kind(), ErrorKind::Unsupported);
        EXPECT_NE(h.status().message().find("native fp16 arithmetic (ARMv8.2"), std::string::npos)
            << h.status().message();
        return;
    }
    ASSERT_TRUE(h.ok()) << h.status().message();
    const std::string& note = h.value()->description().lowered;
    EXPECT_NE(note.find("steps fp16"), std::string::npos) << note;
    size_t casts = 0;
    for (const EngineStep& step : h.value()->steps())
        casts += step.op == "Cast";
    EXPECT_GE(casts, 2u) << note; // into fp16 after the input's layout change, out before Gemm
    EngineOptions full = half;
    full.precision = Precision::Fp32;
    auto f = buildEngine(demoModel(), full);
    ASSERT_TRUE(f.ok()) << f.status().message();
    auto hs = h.value()->createSession();
    auto fs = f.value()->createSession();
    ASSERT_TRUE(hs.ok() && fs.ok());
    ShapesRenderer renderer(320, 240, 1);
    Preprocessor pre(demoPreprocessing());
    std::vector<float> input(pre.outputElements());
    Image image;
    int same = 0;
    double diff = 0, scale = 0;
    for (uint64_t i = 0; i < 60; ++i) {
        renderer.render(i, image);
        ASSERT_TRUE(pre.run(image, input.data()).ok());
        TensorView view {input.data(), TensorShape {1, 3, 64, 64}};
        ASSERT_TRUE(hs.value()->run(&view, 1, nullptr).ok());
        ASSERT_TRUE(fs.value()->run(&view, 1, nullptr).ok());
        const float* x = hs.value()->output(0).data;
        const float* y = fs.value()->output(0).data;
        same += std::max_element(x, x + 6) - x == std::max_element(y, y + 6) - y;
        for (int c = 0; c < 6; ++c) {
            diff = std::max(diff, std::fabs(double(x[c]) - y[c]));
            scale = std::max(scale, std::fabs(double(y[c])));
        }
    }
    EXPECT_EQ(same, 60);
    EXPECT_GT(diff, 0.0); // fp16 is not fp32
    EXPECT_LT(diff, 1e-2 * scale);
}

TEST(XnnpackEngine, RunsAOneNodeModel)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    auto parsed = parseModelBytes(tinyModel("Relu"), "relu.onnx");
    ASSERT_TRUE(parsed.ok());
    EngineOptions x;
    x.backend = "xnnpack";
    auto engine = buildEngine(parsed.value(), x);
    ASSERT_TRUE(engine.ok()) << engine.status().message();
    auto session = engine.value()->createSession();
    ASSERT_TRUE(session.ok());
    std::vector<float> input(48);
    for (size_t i = 0; i < input.size(); ++i)
        input[i] = static_cast<float>(i) - 24.0f;
    TensorView view {input.data(), {1, 3, 4, 4}};
    ASSERT_TRUE(session.value()->run(&view, 1, nullptr).ok());
    const ConstTensorView out = session.value()->output(0);
    ASSERT_EQ(out.shape.toString(), "1x3x4x4");
    for (size_t i = 0; i < input.size(); ++i)
        EXPECT_EQ(out.data[i], std::max(input[i], 0.0f)) << i;
}

// ResNet's basic block on 16 channels: r = relu(conv0(input)); output = relu(conv2(relu(conv1(r)))
// + r). The variants: r read once more after the block (output = that + r), and the convolution
// adding its own input (relu(conv(r) + r)). In neither may the convolution write over r.
enum class Residual { Block, ReadAgain, OwnInput };

std::vector<char> residualModel(Residual variant)
{
    const bool readAgain = variant == Residual::ReadAgain;
    constexpr int kC = 16;
    onnx::ModelProto model;
    model.set_ir_version(7);
    model.set_producer_name("jetagent-test");
    model.add_opset_import()->set_version(13);
    auto* graph = model.mutable_graph();
    graph->set_name("residual");
    auto node = [&](const std::string& op, const std::vector<std::string>& in,
                    const std::string& out) {
        auto* n = graph->add_node();
        n->set_op_type(op);
        n->set_name(out);
        for (const auto& i : in)
            n->add_input(i);
        n->add_output(out);
        return n;
    };
    uint32_t seed = 7;
    auto weights = [&](const std::string& name, const std::vector<int>& dims) {
        auto* w = graph->add_initializer();
        w->set_name(name);
        w->set_data_type(onnx::TensorProto_DataType_FLOAT);
        int count = 1;
        for (int d : dims) {
            w->add_dims(d);
            count *= d;
        }
        for (int i = 0; i < count; ++i) {
            seed = seed * 1664525u + 1013904223u;
            w->add_float_data((static_cast<float>(seed >> 8) / 16777216.0f - 0.5f) * 0.4f);
        }
    };
    weights("w0", {kC, 3, 1, 1});
    weights("w1", {kC, kC, 3, 3});
    weights("w2", {kC, kC, 3, 3});
    auto conv3x3 = [&](const std::string& in, const std::string& w, const std::string& out) {
        auto* pads = node("Conv", {in, w}, out)->add_attribute();
        pads->set_name("pads");
        pads->set_type(onnx::AttributeProto_AttributeType_INTS);
        for (int k = 0; k < 4; ++k)
            pads->add_ints(1);
    };
    node("Conv", {"input", "w0"}, "c0");
    node("Relu", {"c0"}, "r");
    if (variant == Residual::OwnInput) {
        conv3x3("r", "w2", "c");
    } else {
        conv3x3("r", "w1", "c1");
        node("Relu", {"c1"}, "h");
        conv3x3("h", "w2", "c");
    }
    node("Add", {"c", "r"}, "s");
    node("Relu", {"s"}, readAgain ? "o1" : "output");
    if (readAgain)
        node("Add", {"o1", "r"}, "output");
    for (auto* value : {graph->add_input(), graph->add_output()}) {
        const bool in = value == &graph->input(0);
        value->set_name(in ? "input" : "output");
        auto* tensor = value->mutable_type()->mutable_tensor_type();
        tensor->set_elem_type(onnx::TensorProto_DataType_FLOAT);
        for (int d : {1, in ? 3 : kC, 9, 7})
            tensor->mutable_shape()->add_dim()->set_dim_value(d);
    }
    std::string bytes = model.SerializeAsString();
    return std::vector<char>(bytes.begin(), bytes.end());
}

// On oneDNN a residual Add (and the Relu after it) folds into the convolution before it, writing
// over the identity's memory; never where the identity is still read afterwards. Either way the
// result is XNNPACK's unfused one, on one thread and on two (bands of output rows).
TEST(XnnpackEngine, ResidualAddFoldsIntoAOneDnnConvolutionOnlyWhereSafe)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    for (Residual variant : {Residual::Block, Residual::ReadAgain, Residual::OwnInput}) {
        SCOPED_TRACE(variant == Residual::Block  ? "a block"
                : variant == Residual::ReadAgain ? "identity read again"
                                                 : "the convolution's own input added");
        auto parsed = parseModelBytes(residualModel(variant), "residual.onnx");
        ASSERT_TRUE(parsed.ok()) << parsed.status().message();
        EngineOptions plain;
        plain.backend = "xnnpack";
        plain.onednn = false;
        auto reference = buildEngine(parsed.value(), plain);
        ASSERT_TRUE(reference.ok()) << reference.status().message();
        std::vector<float> input(3 * 9 * 7);
        uint32_t seed = 99;
        for (float& v : input) {
            seed = seed * 1664525u + 1013904223u;
            v = static_cast<float>(seed >> 8) / 16777216.0f * 2.0f - 1.0f;
        }
        TensorView view {input.data(), {1, 3, 9, 7}};
        auto rs = reference.value()->createSession();
        ASSERT_TRUE(rs.ok());
        ASSERT_TRUE(rs.value()->run(&view, 1, nullptr).ok());
        const ConstTensorView want = rs.value()->output(0);
        for (int threads : {1, 2}) {
            SCOPED_TRACE("threads " + std::to_string(threads));
            EngineOptions fused = plain;
            fused.onednn = true;
            fused.threads = threads;
            auto engine = buildEngine(parsed.value(), fused);
            ASSERT_TRUE(engine.ok()) << engine.status().message();
            bool folded = false;
            bool onOneDnn = false;
            for (const EngineStep& step : engine.value()->steps()) {
                onOneDnn |= step.library == "onednn";
                folded |= step.library == "onednn" &&
                    step.node.find("+ Add 's' + Relu") != std::string::npos;
            }
            if (!onOneDnn)
                GTEST_SKIP() << "no oneDNN in this build";
            EXPECT_EQ(folded, variant == Residual::Block);
            auto session = engine.value()->createSession();
            ASSERT_TRUE(session.ok());
            for (int run = 0; run < 2; ++run) { // the second run starts from the first's memory
                SCOPED_TRACE("run " + std::to_string(run));
                ASSERT_TRUE(session.value()->run(&view, 1, nullptr).ok());
                const ConstTensorView got = session.value()->output(0);
                ASSERT_EQ(got.shape.elementCount(), want.shape.elementCount());
                for (int64_t i = 0; i < want.shape.elementCount(); ++i)
                    ASSERT_NEAR(got.data[i], want.data[i], 1e-5) << "element " << i;
            }
        }
    }
}

// A small convolutional network for int8: r = relu(conv 1x1 (input) + bias); a ResNet block
// o = relu(conv(relu(conv(r))) + r); u = relu(conv(o)) of stride 2; then a global mean and two
// fully connected layers, the first with a Relu (the second computes the output, which stays
// float). Random weights, seed 11.
std::vector<char> int8BlockModel()
{
    constexpr int kC = 16, kHidden = 24, kClasses = 5;
    onnx::ModelProto model;
    model.set_ir_version(7);
    model.set_producer_name("jetagent-test");
    model.add_opset_import()->set_version(13);
    auto* graph = model.mutable_graph();
    graph->set_name("int8block");
    auto node = [&](const std::string& op, const std::vector<std::string>& in,
                    const std::string& out) {
        auto* n = graph->add_node();
        n->set_op_type(op);
        n->set_name(out);
        for (const auto& i : in)
            n->add_input(i);
        n->add_output(out);
        return n;
    };
    auto ints = [](onnx::NodeProto* n, const std::string& name, const std::vector<int>& values) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto_AttributeType_INTS);
        for (int v : values)
            a->add_ints(v);
    };
    uint32_t seed = 11;
    auto weights = [&](const std::string& name, const std::vector<int>& dims, float spread) {
        auto* w = graph->add_initializer();
        w->set_name(name);
        w->set_data_type(onnx::TensorProto_DataType_FLOAT);
        int count = 1;
        for (int d : dims) {
            w->add_dims(d);
            count *= d;
        }
        for (int i = 0; i < count; ++i) {
            seed = seed * 1664525u + 1013904223u;
            w->add_float_data((static_cast<float>(seed >> 8) / 16777216.0f - 0.5f) * spread);
        }
    };
    weights("w0", {kC, 3, 1, 1}, 1.0f);
    weights("b0", {kC}, 0.5f);
    weights("w1", {kC, kC, 3, 3}, 0.4f);
    weights("w2", {kC, kC, 3, 3}, 0.4f);
    weights("w3", {kC, kC, 3, 3}, 0.4f);
    weights("f1", {kHidden, kC}, 0.8f);
    weights("g1", {kHidden}, 0.2f);
    weights("f2", {kClasses, kHidden}, 0.8f);
    node("Conv", {"input", "w0", "b0"}, "c0");
    node("Relu", {"c0"}, "r");
    ints(node("Conv", {"r", "w1"}, "c1"), "pads", {1, 1, 1, 1});
    node("Relu", {"c1"}, "h");
    ints(node("Conv", {"h", "w2"}, "c2"), "pads", {1, 1, 1, 1});
    node("Add", {"c2", "r"}, "s");
    node("Relu", {"s"}, "o");
    auto* strided = node("Conv", {"o", "w3"}, "c3");
    ints(strided, "pads", {1, 1, 1, 1});
    ints(strided, "strides", {2, 2});
    node("Relu", {"c3"}, "u");
    node("GlobalAveragePool", {"u"}, "g");
    node("Flatten", {"g"}, "f");
    auto* hidden = node("Gemm", {"f", "f1", "g1"}, "l1");
    auto* transB = hidden->add_attribute();
    transB->set_name("transB");
    transB->set_type(onnx::AttributeProto_AttributeType_INT);
    transB->set_i(1);
    node("Relu", {"l1"}, "l1r");
    *node("Gemm", {"l1r", "f2"}, "output")->add_attribute() = *transB;
    auto* in = graph->add_input();
    in->set_name("input");
    auto* inType = in->mutable_type()->mutable_tensor_type();
    inType->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    for (int d : {2, 3, 12, 10})
        inType->mutable_shape()->add_dim()->set_dim_value(d);
    auto* out = graph->add_output();
    out->set_name("output");
    auto* outType = out->mutable_type()->mutable_tensor_type();
    outType->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    for (int d : {2, kClasses})
        outType->mutable_shape()->add_dim()->set_dim_value(d);
    std::string bytes = model.SerializeAsString();
    return std::vector<char>(bytes.begin(), bytes.end());
}

// Uniform random samples in [-1, 1) of one shape (a fixed seed per sample index).
class RandomSamples final : public CalibrationData {
public:
    RandomSamples(TensorShape shape, int count, uint32_t seed)
        : shape_(shape), count_(count), seed_(seed)
    {
    }
    std::string key() const override
    {
        return "random-" + shape_.toString() + "-" + std::to_string(count_) + "-" +
            std::to_string(seed_);
    }
    std::string description() const override { return std::to_string(count_) + " random samples"; }
    int batchSize() const override { return 1; }
    const TensorShape& sampleShape() const override { return shape_; }
    Expected<bool> nextBatch(float* out) override
    {
        if (next_ >= count_)
            return false;
        fill(static_cast<uint32_t>(next_++) * 7919u + seed_, out);
        return true;
    }
    void rewind() override { next_ = 0; }
    // Sample `index`'s values (also what the tests feed, with seeds the calibration never used).
    void fill(uint32_t index, float* out) const
    {
        uint32_t state = index * 2654435761u + 12345u;
        for (int64_t i = 0; i < shape_.elementCount(); ++i) {
            state = state * 1664525u + 1013904223u;
            out[i] = static_cast<float>(state >> 8) / 16777216.0f * 2.0f - 1.0f;
        }
    }

private:
    TensorShape shape_;
    int count_;
    uint32_t seed_;
    int next_ = 0;
};

// int8 on oneDNN: the dense convolutions and fully connected layers run on oneDNN's int8 kernels
// (whether or not the CPU has VNNI: the measured rule), the residual Add folded into the
// convolution before it with its Relu, the values staying int8 from the input's quantization to
// the last layer's dequantization; the outputs agree with fp32 within the int8 bound the demo's
// test uses, and with XNNPACK's own int8 kernels, on one thread and on two (bands of rows, a
// batch of two split by images).
TEST(XnnpackEngine, Int8ConvolutionsRunOnOneDnnNearFp32)
{
    if (!xnnpackBuilt())
        GTEST_SKIP() << "this build has no xnnpack backend";
    auto parsed = parseModelBytes(int8BlockModel(), "int8block.onnx");
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    const TensorShape sample {3, 12, 10};
    EngineOptions fp32;
    fp32.backend = "xnnpack";
    fp32.batch = 2;
    fp32.onednn = false;
    auto reference = buildEngine(parsed.value(), fp32);
    ASSERT_TRUE(reference.ok()) << reference.status().message();
    auto samples = std::make_shared<RandomSamples>(sample, 40, 3);
    auto runAll = [&](const Engine& engine, std::vector<float>* outputs) {
        auto session = engine.createSession();
        ASSERT_TRUE(session.ok()) << session.status().message();
        std::vector<float> input(2 * static_cast<size_t>(sample.elementCount()));
        outputs->clear();
        for (uint32_t i = 0; i < 20; ++i) {
            samples->fill(1000 + 2 * i, input.data());
            samples->fill(1001 + 2 * i, input.data() + sample.elementCount());
            TensorView view {input.data(), {2, 3, 12, 10}};
            ASSERT_TRUE(session.value()->run(&view, 1, nullptr).ok());
            const ConstTensorView out = session.value()->output(0);
            outputs->insert(outputs->end(), out.data, out.data + out.shape.elementCount());
        }
    };
    // max |a - b| over max |b|.
    auto relative = [](const std::vector<float>& a, const std::vector<float>& b) {
        double diff = 0, scale = 0;
        for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
            diff = std::max(diff, std::fabs(double(a[i]) - b[i]));
            scale = std::max(scale, std::fabs(double(b[i])));
        }
        return diff / scale;
    };
    std::vector<float> want, onXnnpack;
    runAll(*reference.value(), &want);
    EngineOptions xnnInt8 = fp32;
    xnnInt8.precision = Precision::Int8;
    xnnInt8.calibration = samples;
    auto xnn = buildEngine(parsed.value(), xnnInt8);
    ASSERT_TRUE(xnn.ok()) << xnn.status().message();
    runAll(*xnn.value(), &onXnnpack);
    const double xnnError = relative(onXnnpack, want);
    for (int threads : {1, 2}) {
        SCOPED_TRACE("threads " + std::to_string(threads));
        EngineOptions int8 = xnnInt8;
        int8.onednn = true;
        int8.threads = threads;
        auto engine = buildEngine(parsed.value(), int8);
        ASSERT_TRUE(engine.ok()) << engine.status().message();
        size_t onOneDnn = 0, quantize = 0, dequantize = 0, int8Steps = 0, floatSteps = 0,
               conversions = 0;
        bool folded = false, fullyConnected = false;
        std::string addStep; // an Add left as a step of its own
        for (const EngineStep& step : engine.value()->steps()) {
            int8Steps += step.precision == "int8";
            floatSteps += step.precision == "fp32";
            conversions += step.precision.find('>') != std::string::npos;
            const bool oneDnnInt8 = step.library == "onednn" && step.precision == "int8";
            onOneDnn += oneDnnInt8;
            folded |= oneDnnInt8 && step.node.find("+ Add 's' + Relu 'o'") != std::string::npos;
            fullyConnected |= oneDnnInt8 && step.op == "Gemm";
            quantize += step.precision == "fp32>int8";
            dequantize += step.precision == "int8>fp32";
            if (step.op == "Add")
                addStep = step.node;
        }
        if (onOneDnn == 0)
            GTEST_SKIP() << "no oneDNN in this build (int8 runs on XNNPACK alone)";
        EXPECT_EQ(addStep, "") << "the residual Add is folded, not a step of its own";
        const std::string& note = engine.value()->description().lowered;
        EXPECT_EQ(onOneDnn, 5u) << note; // four convolutions and the hidden layer
        EXPECT_TRUE(folded) << note;
        EXPECT_TRUE(fullyConnected) << note;
        EXPECT_EQ(quantize, 1u) << note; // the input
        EXPECT_EQ(dequantize, 1u) << note; // before the last layer, which stays fp32
        EXPECT_NE(note.find("5 convolutions on oneDNN int8 (1 residual addition folded in)"),
            std::string::npos)
            << note;
        // The summary counts the steps that run, the folded addition no more among them.
        EXPECT_EQ(
            note.rfind(std::to_string(int8Steps) + " steps int8, " + std::to_string(floatSteps) +
                    " float, " + std::to_string(conversions) + " conversions",
                0),
            0u)
            << note;
        std::vector<float> got;
        runAll(*engine.value(), &got);
        const double error = relative(got, want);
        EXPECT_GT(error, 0.0); // int8 is not fp32
        EXPECT_LT(error, 0.05);
        EXPECT_LT(relative(got, onXnnpack), 0.05) << "XNNPACK's int8 error " << xnnError;
    }
}

TEST(EngineRegistry, AutoPicksXnnpackOnTheCpuAndTensorrtForAGpu)
{
    EngineOptions defaults;
    EXPECT_EQ(defaults.backend, "auto");
    EXPECT_EQ(resolveBackend(defaults), xnnpackBuilt() ? "xnnpack" : "opencv");
    auto cpu = buildEngine(demoModel(), defaults);
    ASSERT_TRUE(cpu.ok()) << cpu.status().message();
    EXPECT_EQ(cpu.value()->description().backend, resolveBackend(defaults));
    EXPECT_EQ(cpu.value()->description().options.backend, resolveBackend(defaults));

    EngineOptions gpu;
    gpu.device = Device::Gpu;
    EXPECT_EQ(resolveBackend(gpu), "tensorrt");
    EngineOptions dla;
    dla.device = Device::Dla1;
    EXPECT_EQ(resolveBackend(dla), "tensorrt");
    EngineOptions named;
    named.backend = "opencv";
    named.device = Device::Gpu;
    EXPECT_EQ(resolveBackend(named), "opencv");
    // The choice is named in the error, so that "tensorrt is not available" is not a mystery to
    // someone who never wrote tensorrt.
    bool tensorRT = false;
    for (const BackendInfo& b : listBackends())
        tensorRT |= b.name == "tensorrt" && b.available;
    if (!tensorRT) {
        auto g = buildEngine(demoModel(), gpu);
        ASSERT_FALSE(g.ok());
        EXPECT_EQ(g.status().kind(), ErrorKind::Unsupported);
        EXPECT_NE(
            g.status().message().find("backend: auto chose it for device gpu"), std::string::npos)
            << g.status().message();
    }
    if (xnnpackBuilt()) {
        // What the chosen backend refuses names the choice too.
        EngineOptions int8;
        int8.precision = Precision::Int8;
        auto i = buildEngine(demoModel(), int8);
        ASSERT_FALSE(i.ok());
        EXPECT_NE(i.status().message().find("xnnpack (backend: auto chose it for device cpu)"),
            std::string::npos)
            << i.status().message();
    }
}

} // namespace
} // namespace jetagent
