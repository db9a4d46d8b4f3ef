// Model zoo: plain opset-13 PyTorch exports of torchvision models (BatchNormalization folded, as
// torch.onnx.export's default makes them, and the exports that keep it), run on every CPU backend
// of this build at batch 1 and 8, must reproduce PyTorch's outputs (references from
// tools/export_torchvision.py).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "jetagent/base/clock.h"
#include "jetagent/engines/engine.h"
#include "jetagent/engines/model_file.h"
#include "test_support.h"

// The reference files are little-endian float32, read here as the host's float.
static_assert(
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the .f32 reference files are little-endian");

namespace jetagent {
namespace {

namespace fs = std::filesystem;

const char* const kExportCommand = "/usr/bin/python3 tools/export_torchvision.py";

// One export of tools/export_torchvision.py: its files are <model>.folded.* with BatchNormalization
// folded into the convolutions (--fold-batchnorm), <model>.* with it kept (the script's default).
struct Export {
    std::string model;
    bool folded = true;
    // tools/make_qdq_model.py's quantized export instead (<model>.qdq.*, BatchNorm folded into
    // the convolutions by PyTorch's quantization).
    bool qdq = false;

    std::string stem() const { return qdq ? model + ".qdq" : folded ? model + ".folded" : model; }
    std::string manifestPath() const
    {
        return test::sourcePath("models/reference/" + stem() + ".json");
    }
    // What the manifest's "batchnorm" records for this export.
    const char* batchNorm() const { return folded ? "folded" : "kept"; }
    // The command that writes this export.
    std::string command() const
    {
        if (qdq)
            return "/usr/bin/python3 tools/make_qdq_model.py " + model;
        return std::string(kExportCommand) + (folded ? " --fold-batchnorm " : " ") + model;
    }
};

// The bound on the relative error defined in compare() below.
constexpr double kMaxRelativeError = 1e-4;

struct ZooCase {
    std::string backend;
    Export model;
    int batch;
    bool onednn = true; // xnnpack: dense convolutions on oneDNN (where the build has it)
};

// How GoogleTest shows a case in failure messages ("GetParam() = resnet50.folded batch 8 on
// xnnpack").
void PrintTo(const ZooCase& zoo, std::ostream* os)
{
    *os << zoo.model.stem() << " batch " << zoo.batch << " on " << zoo.backend
        << (zoo.onednn ? "" : " without oneDNN");
}

// The names CI's history knows, from before the folded exports took the .folded suffix:
// "resnet50_b8" (folded) and "resnet50_bn_b8" (BatchNorm kept) for OpenCV DNN,
// "xnnpack_resnet50_b8" and so on otherwise.
std::string caseName(const testing::TestParamInfo<ZooCase>& info)
{
    std::string name = info.param.model.model + (info.param.model.folded ? "" : "_bn") + "_b" +
        std::to_string(info.param.batch);
    for (char& c : name)
        if (c == '.')
            c = '_';
    if (!info.param.onednn)
        name += "_onednn_off";
    return info.param.backend == "opencv" ? name : info.param.backend + "_" + name;
}

// "4.82e-07": std::to_string would print 0.000000.
std::string numberText(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", value);
    return text;
}

std::string shapeText(const std::vector<int64_t>& shape)
{
    std::string text;
    for (int64_t d : shape)
        text += (text.empty() ? "" : "x") + std::to_string(d);
    return text;
}

// Exactly `count` float32 values from a raw file; a missing, short or long file is an error.
Expected<std::vector<float>> readFloat32File(const std::string& path, int64_t count)
{
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec)
        return Status::notFound(path + ": " + ec.message());
    const auto expected = static_cast<uintmax_t>(count) * sizeof(float);
    if (size != expected)
        return Status::invalid(path + ": " + std::to_string(size) + " bytes, expected " +
            std::to_string(expected) + " (" + std::to_string(count) + " float32 values); re-run " +
            kExportCommand + " --force");
    std::vector<float> values(static_cast<size_t>(count));
    std::ifstream in(path, std::ios::binary);
    if (!in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(expected)))
        return Status::io(path + ": read failed");
    return values;
}

// One case of a manifest written by tools/export_torchvision.py.
struct ReferenceCase {
    std::string onnxPath;
    std::vector<int64_t> inputShape;
    std::vector<int64_t> outputShape;
    std::vector<float> input;
    std::vector<float> output;
};

int64_t elementCount(const std::vector<int64_t>& shape)
{
    int64_t count = 1;
    for (int64_t d : shape)
        count *= d;
    return count;
}

// The batch's case of `exported`'s manifest, whose files must be the export asked for: a manifest
// that records another BatchNorm mode, or none (an earlier version of the script, whose
// <model>.json was the folded export), is an error that says how to export it again.
Expected<ReferenceCase> readReference(const Export& exported, int batch)
{
    const std::string manifestPath = exported.manifestPath();
    const std::string dir = fs::path(manifestPath).parent_path().string();
    ReferenceCase ref;
    std::string inputFile;
    std::string outputFile;
    try {
        const auto manifest = nlohmann::json::parse(test::readFile(manifestPath));
        const auto mode = manifest.find("batchnorm");
        if (mode == manifest.end() || *mode != exported.batchNorm())
            return Status::invalid(manifestPath + ": BatchNormalization " +
                (mode == manifest.end() ? std::string("not recorded (an older export)")
                                        : mode->dump()) +
                ", expected \"" + exported.batchNorm() + "\"; re-run `" + exported.command() +
                " --force`");
        ref.onnxPath = dir + "/" + manifest.at("onnx").get<std::string>();
        bool found = false;
        for (const auto& c : manifest.at("cases")) {
            if (c.at("batch").get<int>() != batch)
                continue;
            found = true;
            inputFile = dir + "/" + c.at("input").get<std::string>();
            outputFile = dir + "/" + c.at("output").get<std::string>();
            ref.inputShape = c.at("input_shape").get<std::vector<int64_t>>();
            ref.outputShape = c.at("output_shape").get<std::vector<int64_t>>();
        }
        if (!found)
            return Status::invalid(manifestPath + ": no case for batch " + std::to_string(batch));
    } catch (const nlohmann::json::exception& e) {
        return Status::invalid(manifestPath + ": " + e.what());
    }
    for (const auto* shape : {&ref.inputShape, &ref.outputShape}) {
        bool good = !shape->empty() && shape->size() <= static_cast<size_t>(TensorShape::kMaxRank);
        for (int64_t d : *shape)
            good = good && d >= 1;
        if (!good)
            return Status::invalid(manifestPath + ": bad shape [" + shapeText(*shape) + "]");
    }
    auto input = readFloat32File(inputFile, elementCount(ref.inputShape));
    if (!input)
        return input.status();
    auto output = readFloat32File(outputFile, elementCount(ref.outputShape));
    if (!output)
        return output.status();
    ref.input = std::move(input.value());
    ref.output = std::move(output.value());
    return ref;
}

// How far our output is from PyTorch's. The relative error is the largest absolute difference over
// the largest magnitude of PyTorch's output, max|ours - torch| / max|torch|: one scale for the
// whole tensor, so that logits near zero do not blow the figure up. NaN counts as infinitely far.
struct Comparison {
    double maxAbsError = 0;
    double maxAbsReference = 0;
    double relativeError = 0;
    size_t worst = 0; // flat index of the element with the largest difference
};

Comparison compare(const float* ours, const std::vector<float>& torch)
{
    Comparison c;
    for (size_t i = 0; i < torch.size(); ++i) {
        double d = std::fabs(static_cast<double>(ours[i]) - static_cast<double>(torch[i]));
        if (std::isnan(d))
            d = std::numeric_limits<double>::infinity();
        if (d > c.maxAbsError || i == 0) {
            c.maxAbsError = d;
            c.worst = i;
        }
        c.maxAbsReference = std::max(c.maxAbsReference, std::fabs(static_cast<double>(torch[i])));
    }
    c.relativeError = c.maxAbsReference > 0 ? c.maxAbsError / c.maxAbsReference
                                            : std::numeric_limits<double>::infinity();
    return c;
}

// How much PyTorch's output changes from one sample to the next, relative to its magnitude: an
// untrained deep network maps every input to nearly the same logits, and where this is below
// kMaxRelativeError the comparison cannot tell the samples of a batch apart.
double sampleSpread(const std::vector<float>& torch, int batch, double maxAbsReference)
{
    const size_t row = torch.size() / static_cast<size_t>(batch);
    double spread = 0;
    for (size_t i = row; i < torch.size(); ++i)
        spread = std::max(spread, std::fabs(static_cast<double>(torch[i]) - torch[i % row]));
    return maxAbsReference > 0 ? spread / maxAbsReference : 0;
}

// "[3, 417]" for flat index 3417 of an 8x1000 tensor.
std::string indexText(size_t flat, const std::vector<int64_t>& shape)
{
    std::vector<int64_t> index(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
        index[d] = static_cast<int64_t>(flat % static_cast<size_t>(shape[d]));
        flat /= static_cast<size_t>(shape[d]);
    }
    std::string text;
    for (int64_t i : index)
        text += (text.empty() ? "[" : ", ") + std::to_string(i);
    return text + "]";
}

// Exported with BatchNorm folded (tools/dev.sh: --fold-batchnorm).
const char* const kModels[] = {"mobilenet_v2", "resnet18", "resnet50", "squeezenet1_1", "alexnet",
    "vgg16", "densenet121", "shufflenet_v2_x1_0", "resnext50_32x4d", "r3d_18"};
// The models of kModels that have BatchNormalization, exported with it kept too (the script's
// default): the xnnpack backend must run it where preparation cannot fold it away.
const char* const kBatchNormModels[] = {"mobilenet_v2", "resnet18", "resnet50", "densenet121",
    "shufflenet_v2_x1_0", "resnext50_32x4d", "r3d_18"};

// Modern backbones and transformers (tools/export_torchvision.py --set modern --set
// transformers, BatchNormalization kept): xnnpack only, since OpenCV DNN 4.6 loads neither Swin
// nor ConvNeXt.
const char* const kModernModels[] = {"efficientnet_b0", "efficientnet_v2_s", "regnet_y_800mf",
    "mobilenet_v3_large", "convnext_tiny", "vit_b_16", "swin_t", "maxvit_t"};

// The ten models, each at batch 1 and 8, on OpenCV DNN; on xnnpack (where this build has
// it) the same, and the BatchNormalization-keeping exports too.
std::vector<ZooCase> zooCases()
{
    std::vector<ZooCase> cases;
    for (const char* model : kModels)
        for (int batch : {1, 8})
            cases.push_back({"opencv", {model, true}, batch});
    for (const BackendInfo& b : listBackends()) {
        if (b.name != "xnnpack" || !b.available)
            continue;
        for (const char* model : kModels)
            for (int batch : {1, 8})
                cases.push_back({"xnnpack", {model, true}, batch});
        for (const char* model : kBatchNormModels)
            for (int batch : {1, 8})
                cases.push_back({"xnnpack", {model, false}, batch});
        for (const char* model : kModernModels)
            for (int batch : {1, 8})
                cases.push_back({"xnnpack", {model, false}, batch});
        // XNNPACK alone (the ARM path): its convolutions write concatenations in place.
        for (const char* model : {"squeezenet1_1", "densenet121", "shufflenet_v2_x1_0"})
            for (int batch : {1, 8})
                cases.push_back({"xnnpack", {model, true}, batch, false});
    }
    return cases;
}

class Reference : public testing::TestWithParam<ZooCase> { };

TEST_P(Reference, MatchesPyTorch)
{
    const ZooCase& zoo = GetParam();
    const std::string manifestPath = zoo.model.manifestPath();
    if (!fs::exists(manifestPath))
        GTEST_SKIP() << manifestPath << " is missing: run `" << zoo.model.command()
                     << "` (needs python3-torch and python3-torchvision)";
    auto ref = readReference(zoo.model, zoo.batch);
    ASSERT_TRUE(ref.ok()) << ref.status().message();
    ASSERT_EQ(ref->inputShape[0], zoo.batch) << manifestPath;

    const int64_t buildStart = monotonicNs();
    auto model = loadModelFile(ref->onnxPath);
    ASSERT_TRUE(model.ok()) << model.status().message();
    EngineOptions options;
    options.backend = zoo.backend;
    options.batch = zoo.batch;
    options.onednn = zoo.onednn;
    auto engine = buildEngine(model.value(), options);
    ASSERT_TRUE(engine.ok()) << "buildEngine: " << engine.status().message();
    auto session = engine.value()->createSession();
    ASSERT_TRUE(session.ok()) << "createSession: " << session.status().message();
    const int64_t buildNs = monotonicNs() - buildStart;

    TensorView input {ref->input.data(), {}};
    input.shape.rank = static_cast<int>(ref->inputShape.size());
    std::copy(ref->inputShape.begin(), ref->inputShape.end(), input.shape.dims.begin());
    const int64_t runStart = monotonicNs();
    const Status run = session.value()->run(&input, 1, nullptr);
    const int64_t runNs = monotonicNs() - runStart;
    ASSERT_TRUE(run.ok()) << "Session::run: " << run.message();
    ASSERT_GE(session.value()->outputCount(), 1u);

    const ConstTensorView out = session.value()->output(0);
    const std::vector<int64_t> outShape(
        out.shape.dims.begin(), out.shape.dims.begin() + out.shape.rank);
    ASSERT_EQ(shapeText(outShape), shapeText(ref->outputShape)) << "output shape";
    ASSERT_NE(out.data, nullptr);

    const Comparison c = compare(out.data, ref->output);
    const double spread = sampleSpread(ref->output, zoo.batch, c.maxAbsReference);
    char spreadText[64] = "";
    if (zoo.batch > 1)
        std::snprintf(spreadText, sizeof spreadText, "; samples differ by %.3g relative", spread);
    char figures[512];
    std::snprintf(figures, sizeof figures,
        "%s batch %d on %s: max |ours - torch| %.3g at %s (ours %.9g, torch %.9g), max |torch| "
        "%.3g, relative error %.3g (limit %.0e)%s; build %.2f s, run %.3f s",
        zoo.model.stem().c_str(), zoo.batch, zoo.backend.c_str(), c.maxAbsError,
        indexText(c.worst, ref->outputShape).c_str(), static_cast<double>(out.data[c.worst]),
        static_cast<double>(ref->output[c.worst]), c.maxAbsReference, c.relativeError,
        kMaxRelativeError, spreadText, nsToS(buildNs), nsToS(runNs));
    std::printf("[ figures  ] %s\n", figures);
    RecordProperty("max_abs_error", numberText(c.maxAbsError));
    RecordProperty("relative_error", numberText(c.relativeError));
    RecordProperty("worst_index", indexText(c.worst, ref->outputShape));
    RecordProperty("build_s", numberText(nsToS(buildNs)));
    RecordProperty("run_s", numberText(nsToS(runNs)));
    EXPECT_LT(c.relativeError, kMaxRelativeError) << figures;
}

INSTANTIATE_TEST_SUITE_P(ModelZoo, Reference, testing::ValuesIn(zooCases()), caseName);

// Samples for int8 calibration: the rows of a reference input file.
class TensorSamples final : public CalibrationData {
public:
    TensorSamples(std::vector<float> data, std::vector<int64_t> shape)
        : data_(std::move(data)), rows_(static_cast<int>(shape[0]))
    {
        shape_.rank = static_cast<int>(shape.size()) - 1;
        for (int d = 0; d < shape_.rank; ++d)
            shape_.dims[static_cast<size_t>(d)] = shape[static_cast<size_t>(d) + 1];
    }
    std::string key() const override { return "reference rows " + std::to_string(rows_); }
    std::string description() const override { return "the reference input"; }
    int batchSize() const override { return 1; }
    const TensorShape& sampleShape() const override { return shape_; }
    Expected<bool> nextBatch(float* out) override
    {
        if (next_ >= rows_)
            return false;
        const size_t n = static_cast<size_t>(shape_.elementCount());
        std::copy_n(data_.data() + static_cast<size_t>(next_++) * n, n, out);
        return true;
    }
    void rewind() override { next_ = 0; }

private:
    std::vector<float> data_;
    int rows_, next_ = 0;
    TensorShape shape_;
};

// int8 on xnnpack over the zoo's structures (ResNet's max pooling and residual additions,
// SqueezeNet's and DenseNet's concatenations, ShuffleNet's split, concatenation and channel
// shuffle, the BatchNormalization kept in float between int8 parts): calibrated on the batch-8
// reference input, each runs the batch-1 input within 10% (relative, one scale per output) of
// PyTorch's fp32 output. The models are untrained (random weights), so this is a check of the
// int8 plan's structure and scales, not of accuracy, which the demo model's compare test
// measures.
TEST(ModelZooInt8, RunsNearPyTorchOnXnnpack)
{
    bool xnnpack = false;
    for (const BackendInfo& b : listBackends())
        xnnpack = xnnpack || (b.name == "xnnpack" && b.available);
    if (!xnnpack)
        GTEST_SKIP() << "this build has no xnnpack backend";
    for (const Export& exported : {Export {"resnet18", true}, Export {"squeezenet1_1", true},
             Export {"shufflenet_v2_x1_0", true}, Export {"densenet121", false}}) {
        const std::string name = exported.stem();
        SCOPED_TRACE(name);
        if (!fs::exists(exported.manifestPath()))
            GTEST_SKIP() << exported.manifestPath() << " is missing: run `" << exported.command()
                         << "`";
        auto calibration = readReference(exported, 8);
        auto ref = readReference(exported, 1);
        ASSERT_TRUE(calibration.ok()) << calibration.status().message();
        ASSERT_TRUE(ref.ok()) << ref.status().message();
        auto model = loadModelFile(ref->onnxPath);
        ASSERT_TRUE(model.ok()) << model.status().message();
        EngineOptions options;
        options.backend = "xnnpack";
        options.precision = Precision::Int8;
        options.calibration =
            std::make_shared<TensorSamples>(calibration->input, calibration->inputShape);
        auto engine = buildEngine(model.value(), options);
        ASSERT_TRUE(engine.ok()) << engine.status().message();
        auto session = engine.value()->createSession();
        ASSERT_TRUE(session.ok());
        TensorView input {ref->input.data(), {1, 3, 224, 224}};
        ASSERT_TRUE(session.value()->run(&input, 1, nullptr).ok());
        const Comparison c = compare(session.value()->output(0).data, ref->output);
        std::printf(
            "[ figures  ] %s int8 on xnnpack: relative error %.3g against PyTorch fp32; %s\n",
            name.c_str(), c.relativeError, engine.value()->description().lowered.c_str());
        EXPECT_LT(c.relativeError, 0.1);
    }
}

// One QDQ export (ModelZooQdq below), in int8 and in fp32, against PyTorch's quantized model;
// `convolutions` is how many it has, all of which must run int8.
void checkQdqModel(const Export& exported, int convolutions)
{
    if (!fs::exists(exported.manifestPath())) {
        ADD_FAILURE() << exported.manifestPath() << " is missing: run `" << exported.command()
                      << "` (tools/dev.sh test makes it)";
        return;
    }
    auto ref = readReference(exported, 1);
    ASSERT_TRUE(ref.ok()) << ref.status().message();
    auto model = loadModelFile(ref->onnxPath);
    ASSERT_TRUE(model.ok()) << model.status().message();
    for (const Precision precision : {Precision::Int8, Precision::Fp32}) {
        SCOPED_TRACE(precisionName(precision));
        EngineOptions options;
        options.backend = "xnnpack";
        options.precision = precision;
        auto engine = buildEngine(model.value(), options);
        ASSERT_TRUE(engine.ok()) << engine.status().message();
        int int8Convs = 0;
        for (const EngineStep& step : engine.value()->steps())
            int8Convs += step.op == "Conv" && step.precision == "int8";
        if (precision == Precision::Int8) {
            EXPECT_EQ(int8Convs, convolutions) << engine.value()->description().lowered;
        }
        auto session = engine.value()->createSession();
        ASSERT_TRUE(session.ok());
        TensorView input {ref->input.data(), {1, 3, 224, 224}};
        ASSERT_TRUE(session.value()->run(&input, 1, nullptr).ok());
        const float* out = session.value()->output(0).data;
        const Comparison c = compare(out, ref->output);
        const size_t n = ref->output.size();
        const bool sameTop1 = std::max_element(out, out + n) - out ==
            std::max_element(ref->output.begin(), ref->output.end()) - ref->output.begin();
        std::printf("[ figures  ] %s QDQ %s on xnnpack: relative error %.3g against PyTorch's "
                    "quantized model, top-1 %s; %s\n",
            exported.model.c_str(), precisionName(precision), c.relativeError,
            sameTop1 ? "the same" : "differs", engine.value()->description().lowered.c_str());
        EXPECT_LT(c.relativeError, 0.03);
        EXPECT_TRUE(sameTop1);
    }
}

// A model quantized by PyTorch (FX post-training static quantization, exported as QDQ by
// tools/make_qdq_model.py) runs in int8 with its own scales, no calibration, near the output of
// PyTorch's quantized model, and in fp32 (every Q/DQ applied exactly) as near. The bound: the
// engines round each layer's output to the same int8 grid, but their int8 kernels requantize
// with different fixed-point arithmetic, so an element may land one step apart at any layer and
// the step carries on through the rest of the network. Measured here: 0.0074 of the largest
// logit in int8 and fp32 alike; 3% leaves margin for other CPUs' kernels and still catches a
// wrong scale, zero point or weight, which gives errors of the order of the logits themselves.
TEST(ModelZooQdq, RunsNearPyTorchsQuantizedModelOnXnnpack)
{
    bool xnnpack = false;
    for (const BackendInfo& b : listBackends())
        xnnpack = xnnpack || (b.name == "xnnpack" && b.available);
    if (!xnnpack)
        GTEST_SKIP() << "this build has no xnnpack backend";
    // resnet18 only: tools/make_qdq_model.py makes mobilenet_v2 too, but with torchvision's
    // random weights PyTorch's quantized mobilenet_v2 outputs zeros for every logit (its last
    // activations quantize to nothing), which no comparison can learn from.
    checkQdqModel(Export {"resnet18", true, true}, 20);
}

// Resident memory of the process, in bytes (/proc/self/statm).
int64_t residentBytes()
{
    std::ifstream statm("/proc/self/statm");
    int64_t pages = 0, resident = 0;
    statm >> pages >> resident;
    return resident * 4096;
}

// Sessions of one engine share its oneDNN convolutions' re-laid weights: a second resnet50
// session adds its arena and scratchpads, not another copy of the ~100 MB of weights, and computes
// what the first does.
TEST(ModelZooSessions, ShareOneDnnWeights)
{
    const Export resnet50 {"resnet50", true};
    if (!fs::exists(resnet50.manifestPath()))
        GTEST_SKIP() << resnet50.manifestPath() << " is missing: run `" << resnet50.command()
                     << "`";
    auto ref = readReference(resnet50, 1);
    ASSERT_TRUE(ref.ok()) << ref.status().message();
    auto model = loadModelFile(ref->onnxPath);
    ASSERT_TRUE(model.ok());
    EngineOptions options;
    options.backend = "xnnpack";
    auto engine = buildEngine(model.value(), options);
    if (!engine)
        GTEST_SKIP() << "no xnnpack backend: " << engine.status().message();
    size_t oneDnn = 0;
    for (const EngineStep& step : engine.value()->steps())
        oneDnn += step.library == "onednn";
    if (oneDnn == 0)
        GTEST_SKIP() << "no convolution runs on oneDNN in this build";
    auto first = engine.value()->createSession(); // the build's own session
    ASSERT_TRUE(first.ok());
    TensorView input {ref->input.data(), {1, 3, 224, 224}};
    ASSERT_TRUE(first.value()->run(&input, 1, nullptr).ok());
    const int64_t before = residentBytes();
    auto second = engine.value()->createSession();
    ASSERT_TRUE(second.ok());
    ASSERT_TRUE(second.value()->run(&input, 1, nullptr).ok());
    const int64_t grown = residentBytes() - before;
    const int64_t weightBytes = static_cast<int64_t>(model.value()->fileBytes);
    std::printf("[ figures  ] resnet50: a second session adds %.1f MiB (model %.1f MiB)\n",
        static_cast<double>(grown) / (1 << 20), static_cast<double>(weightBytes) / (1 << 20));
    EXPECT_LT(grown, weightBytes / 4);
    const float* a = first.value()->output(0).data;
    const float* b = second.value()->output(0).data;
    EXPECT_TRUE(std::equal(a, a + 1000, b));
}

} // namespace
} // namespace jetagent
