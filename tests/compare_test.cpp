// `jetagent compare`: the metrics against hand-computed values, engine specs, and the command on
// the demo model.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <sys/resource.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "compare.h"
#include "onnx_builder.h"
#include "test_support.h"

namespace jetagent {
namespace {

using test::readFile;
using test::runJetagent;
using test::sourcePath;
using test::TempDir;

bool has(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

TEST(CompareMetrics, TopKOrdersByValueThenIndex)
{
    const float row[] = {0.5f, 2.0f, -1.0f, 2.0f, 1.0f};
    EXPECT_EQ(topK(row, 5, 3), (std::vector<size_t> {1, 3, 4}));
    EXPECT_EQ(topK(row, 5, 1), (std::vector<size_t> {1}));
    EXPECT_EQ(topK(row, 2, 5), (std::vector<size_t> {1, 0})); // k beyond the size: all of them
}

TEST(CompareMetrics, ErrorsAgreementAndOverlapByHand)
{
    OutputAgreement a;
    a.classes = 6;
    // Input 1: |diff| = 0.5, 1, 0, 0.5, 0.1, 0; max|ref| = 4; argmax ref 1, cand 3 (disagree);
    // top-5 ref {1,3,4,5,0}, cand {3,1,4,5,0}: 5 in common.
    const float ref1[] = {1, 4, -2, 3, 0, 0.5f};
    const float cand1[] = {1.5f, 3, -2, 3.5f, 0.1f, 0.5f};
    accumulateAgreement(a, ref1, cand1);
    // Input 2: |diff| = 0.25 at most; max|ref| = 6; argmax 0 in both; top-5 ref {0,1,2,3,4},
    // cand {5,0,1,2,3}: 4 in common.
    const float ref2[] = {6, 5, 4, 3, 2, 1};
    const float cand2[] = {6.25f, 5, 4, 3, 2, 6.1f};
    accumulateAgreement(a, ref2, cand2);
    EXPECT_EQ(a.inputs, 2u);
    EXPECT_DOUBLE_EQ(a.maxAbsError, static_cast<double>(6.1f) - 1.0); // input 2, last value
    EXPECT_DOUBLE_EQ(a.maxAbsReference, 6.0);
    EXPECT_DOUBLE_EQ(a.relativeError(), (static_cast<double>(6.1f) - 1.0) / 6.0);
    EXPECT_EQ(a.top1Agreements, 1u);
    EXPECT_DOUBLE_EQ(a.top1Agreement(), 0.5);
    EXPECT_DOUBLE_EQ(a.top5Overlap(), (1.0 + 0.8) / 2.0);
    EXPECT_TRUE(a.hasTop1());
    EXPECT_TRUE(a.hasTop5());
}

TEST(CompareMetrics, RelativeErrorIsOneScaleNotPerElement)
{
    // A per-element ratio would be 1e-3 / 1e-6 = 1000 at the small value; one scale gives 1e-4.
    OutputAgreement a;
    a.classes = 2;
    const float ref[] = {10.0f, 1e-6f};
    const float cand[] = {10.0f, 1e-6f + 1e-3f};
    accumulateAgreement(a, ref, cand);
    EXPECT_NEAR(a.relativeError(), 1e-3 / 10.0, 1e-9);
    EXPECT_FALSE(a.hasTop5());
}

TEST(CompareMetrics, NonFiniteAndZeroReference)
{
    OutputAgreement nan;
    nan.classes = 3;
    const float ref[] = {1, 2, 3};
    const float cand[] = {1, std::numeric_limits<float>::quiet_NaN(), 3};
    accumulateAgreement(nan, ref, cand);
    EXPECT_EQ(nan.nonFinite, 1u);
    EXPECT_TRUE(std::isinf(nan.relativeError()));

    OutputAgreement zeros;
    zeros.classes = 1;
    const float zero[] = {0};
    accumulateAgreement(zeros, zero, zero);
    EXPECT_EQ(zeros.relativeError(), 0.0);
    EXPECT_FALSE(zeros.hasTop1());
    const float some[] = {0.5f};
    accumulateAgreement(zeros, zero, some);
    EXPECT_TRUE(std::isinf(zeros.relativeError()));
}

TEST(CompareMetrics, LatencyPercentilesAndTimingMeans)
{
    const std::vector<int64_t> wall {5'000'000, 1'000'000, 3'000'000, 2'000'000, 4'000'000};
    std::vector<RunTiming> timings(5);
    for (size_t i = 0; i < timings.size(); ++i) {
        timings[i].computeNs = static_cast<int64_t>(i + 1) * 1'000'000; // mean 3 ms
        timings[i].hostToDeviceNs = 500'000; // given by every run
        timings[i].deviceToHostNs = i == 2 ? -1 : 250'000; // missing in one run
    }
    const LatencyFigures f = latencyFigures(wall, timings);
    EXPECT_EQ(f.runs, 5u);
    EXPECT_DOUBLE_EQ(f.medianMs, 3.0); // nearest rank: 3rd of 5
    EXPECT_DOUBLE_EQ(f.p90Ms, 5.0); // ceil(4.5) = 5th
    EXPECT_DOUBLE_EQ(f.p99Ms, 5.0);
    EXPECT_DOUBLE_EQ(f.meanMs, 3.0);
    EXPECT_DOUBLE_EQ(f.computeMs, 3.0);
    EXPECT_DOUBLE_EQ(f.hostToDeviceMs, 0.5);
    EXPECT_LT(f.deviceToHostMs, 0); // not reported: '-'
}

TEST(CompareSpec, ReadsBackendDevicePrecisionAndKeys)
{
    auto o = parseEngineSpec("opencv:cpu:fp32,fusion=off,threads=2,batch=4", EngineOptions {});
    ASSERT_TRUE(o) << o.status().message();
    EXPECT_EQ(o->backend, "opencv");
    EXPECT_EQ(o->device, Device::Cpu);
    EXPECT_EQ(o->precision, Precision::Fp32);
    EXPECT_FALSE(o->fusion);
    EXPECT_EQ(o->threads, 2);
    EXPECT_EQ(o->batch, 4);
    EXPECT_TRUE(o->onednn);
    auto x = parseEngineSpec("xnnpack,onednn=off", EngineOptions {});
    ASSERT_TRUE(x) << x.status().message();
    EXPECT_EQ(x->backend, "xnnpack");
    EXPECT_FALSE(x->onednn);

    auto t = parseEngineSpec("tensorrt:dla0:int8,workspace_mb=512,io_memory=mapped,"
                             "dla_gpu_fallback=off,batch=4,batch_min=1,batch_max=8,cuda_graph=on,"
                             "timing_cache=off",
        EngineOptions {});
    ASSERT_TRUE(t) << t.status().message();
    EXPECT_EQ(t->device, Device::Dla0);
    EXPECT_EQ(t->precision, Precision::Int8);
    EXPECT_EQ(t->workspaceMb, 512);
    EXPECT_EQ(t->ioMemory, IoMemory::Mapped);
    EXPECT_FALSE(t->gpuFallback);
    EXPECT_FALSE(t->timingCache);
    EXPECT_TRUE(t->cudaGraph);
    EXPECT_EQ(t->profileMin(), 1);
    EXPECT_EQ(t->profileMax(), 8);

    // What the spec leaves out comes from the base; another backend's settings do not.
    EngineOptions base;
    base.backend = "tensorrt";
    base.device = Device::Gpu;
    base.precision = Precision::Fp16;
    base.workspaceMb = 256;
    base.threads = 3;
    base.cacheDir = "/cache";
    auto same = parseEngineSpec("tensorrt", base);
    ASSERT_TRUE(same);
    EXPECT_EQ(same->device, Device::Gpu);
    EXPECT_EQ(same->precision, Precision::Fp16);
    EXPECT_EQ(same->workspaceMb, 256);
    auto other = parseEngineSpec("opencv", base);
    ASSERT_TRUE(other);
    EXPECT_EQ(other->device, Device::Cpu);
    EXPECT_EQ(other->precision, Precision::Fp32);
    EXPECT_EQ(other->workspaceMb, 0);
    EXPECT_EQ(other->threads, 3);
    EXPECT_EQ(other->cacheDir, "/cache");
}

TEST(CompareSpec, BadSpecsNameTheBadPart)
{
    const std::pair<const char*, const char*> cases[] = {
        {"", "no backend"},
        {"opencv:tpu", "unknown device 'tpu'"},
        {"opencv:cpu:fp64", "unknown precision 'fp64'"},
        {"opencv:cpu:fp32:x", "more than three parts"},
        {"opencv:cpu:fp32,fusion=maybe", "fusion=maybe: expected on or off"},
        {"opencv:cpu:fp32,colour=red", "unknown key 'colour'"},
        {"opencv:cpu:fp32,fusion", "'fusion' is not key=value"},
        {"opencv,threads=-1", "threads=-1: expected"},
        {"opencv,batch=0", "batch=0: expected 1 to 256"},
        {"opencv,io_memory=shared", "io_memory=shared: expected auto, mapped or device"},
        {"tensorrt,batch=2,batch_min=4", "does not contain batch 2"},
    };
    for (const auto& [spec, message] : cases) {
        auto o = parseEngineSpec(spec, EngineOptions {});
        ASSERT_FALSE(o) << spec;
        EXPECT_EQ(o.status().kind(), ErrorKind::InvalidInput) << spec;
        EXPECT_TRUE(has(o.status().message(), message)) << spec << ": " << o.status().message();
        EXPECT_TRUE(has(o.status().message(), "'" + std::string(spec) + "'")) << spec;
    }
}

// The demo model with one initializer's values scaled by `factor`, written to `path`.
void writeScaledModel(const std::string& path, float factor)
{
    onnx::ModelProto model;
    {
        std::ifstream in(sourcePath("models/shapes_cnn.onnx"), std::ios::binary);
        ASSERT_TRUE(model.ParseFromIstream(&in));
    }
    // The largest float initializer: a convolution's or the classifier's weights.
    onnx::TensorProto* largest = nullptr;
    size_t largestCount = 0;
    for (auto& t : *model.mutable_graph()->mutable_initializer()) {
        if (t.data_type() != onnx::TensorProto_DataType_FLOAT)
            continue;
        const size_t count = t.has_raw_data() ? t.raw_data().size() / sizeof(float)
                                              : static_cast<size_t>(t.float_data_size());
        if (count > largestCount) {
            largest = &t;
            largestCount = count;
        }
    }
    ASSERT_NE(largest, nullptr);
    if (largest->has_raw_data()) {
        std::vector<float> values(largestCount);
        std::memcpy(values.data(), largest->raw_data().data(), largestCount * sizeof(float));
        for (float& v : values)
            v *= factor;
        largest->set_raw_data(values.data(), values.size() * sizeof(float));
    } else {
        for (int i = 0; i < largest->float_data_size(); ++i)
            largest->set_float_data(i, largest->float_data(i) * factor);
    }
    std::ofstream out(path, std::ios::binary);
    ASSERT_TRUE(model.SerializeToOstream(&out));
}

std::vector<std::string> demoArgs(const TempDir& dir, std::vector<std::string> extra)
{
    std::vector<std::string> args {"compare", sourcePath("models/shapes_cnn.onnx"), "--config",
        sourcePath("firmware-config/demo.yaml"), "--frames", "40", "--warmup", "2", "--cache-dir",
        dir / "cache"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
}

TEST(CompareCommand, FusionOffAgreesWithFusionOn)
{
    TempDir dir;
    auto r = runJetagent(demoArgs(dir,
                             {"--candidate", "opencv:cpu:fp32,fusion=off", "--max-rel-error",
                                 "1e-3", "--min-top1", "1", "--json", dir / "r.json"}),
        dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    for (const char* part : {"relative error = max|cand - ref| / max|ref|", "reference",
             "candidate", "median", "p99", "H2D", "PASS"})
        EXPECT_TRUE(has(r.out, part)) << part << " missing from:\n" << r.out;

    const auto doc = nlohmann::json::parse(readFile(dir / "r.json"));
    EXPECT_EQ(doc["inputs"]["frames"], 40);
    EXPECT_EQ(doc["inputs"]["preprocess"]["resize"], "stretch"); // the demo task's preprocessing
    ASSERT_EQ(doc["outputs"].size(), 1u);
    const auto& out = doc["outputs"][0];
    EXPECT_EQ(out["values_per_input"], 6); // six shape classes
    EXPECT_EQ(out["top1_agreement"], 1.0);
    EXPECT_TRUE(out["top5_overlap"].is_number());
    ASSERT_TRUE(out["relative_error"].is_number()); // reported, even when it is tiny
    EXPECT_LE(out["relative_error"].get<double>(), 1e-3);
    EXPECT_GT(out["max_abs_reference"].get<double>(), 0.0);
    for (const char* role : {"reference", "candidate"}) {
        const auto& e = doc[role];
        for (const char* key : {"backend", "backend_version", "target", "precision", "device",
                 "build_ms", "prepared_from_cache", "latency_ms", "timing_mean_ms"})
            EXPECT_TRUE(e.contains(key)) << role << "." << key;
        EXPECT_EQ(e["latency_ms"]["runs"], 40);
        EXPECT_GT(e["latency_ms"]["median"].get<double>(), 0.0);
        EXPECT_LE(e["latency_ms"]["median"].get<double>(), e["latency_ms"]["p99"].get<double>());
        EXPECT_TRUE(e["timing_mean_ms"]["h2d"].is_null()); // the CPU backend has no transfers
        // Images per second are the batch over the mean latency; p99/p50 at least 1; the CPU
        // time per run and the memory the engine added are measured.
        EXPECT_NEAR(e["images_per_s"].get<double>(),
            e["batch"].get<double>() * 1000.0 / e["latency_ms"]["mean"].get<double>(),
            1e-6 * e["images_per_s"].get<double>());
        EXPECT_GE(e["p99_over_p50"].get<double>(), 1.0);
        EXPECT_GT(e["cpu_ms_per_run"].get<double>(), 0.0);
        EXPECT_TRUE(e["rss_mb"].is_number()) << e.dump();
    }
    EXPECT_EQ(doc["reference"]["fusion"], true);
    EXPECT_EQ(doc["candidate"]["fusion"], false);
    EXPECT_EQ(doc["checks"].size(), 2u);
    EXPECT_EQ(doc["passed"], true);
}

TEST(CompareCommand, AThresholdThatDoesNotHoldExitsOneAndNamesIt)
{
    TempDir dir;
    writeScaledModel(dir / "scaled.onnx", 1.05f);
    // The candidate runs the perturbed weights, the reference the demo's own.
    auto args = demoArgs(dir,
        {"--candidate", "opencv:cpu:fp32", "--reference-model",
            sourcePath("models/shapes_cnn.onnx"), "--max-rel-error", "1e-4", "--json",
            dir / "p.json"});
    args[1] = dir / "scaled.onnx"; // demoArgs put the demo model first
    auto p = runJetagent(args, dir.path());
    EXPECT_EQ(p.exitCode, 1) << p.out << p.err;
    EXPECT_TRUE(has(p.err, "check failed: relative error")) << p.err;
    EXPECT_TRUE(has(p.err, "exceeds --max-rel-error")) << p.err;
    EXPECT_TRUE(has(p.out, "FAIL")) << p.out;
    const auto doc = nlohmann::json::parse(readFile(dir / "p.json")); // written on failure too
    EXPECT_EQ(doc["passed"], false);
    EXPECT_GT(doc["outputs"][0]["relative_error"].get<double>(), 1e-4);
    EXPECT_NE(doc["reference"]["model_sha256"], doc["candidate"]["model_sha256"]);

    // The same model on both sides meets the threshold: the failure came from the weights.
    args[1] = sourcePath("models/shapes_cnn.onnx");
    args.back() = dir / "same.json";
    auto same = runJetagent(args, dir.path());
    EXPECT_EQ(same.exitCode, 0) << same.out << same.err;
}

// A model OpenCV DNN 4.6 cannot load (LayerNormalization, opset 17), compared with neither
// --reference nor --config: the default reference's failure says what to give instead, and with
// --reference xnnpack the same comparison runs.
TEST(CompareCommand, ADefaultReferenceThatCannotLoadTheModelSaysWhatToGive)
{
    TempDir dir;
    test::GraphBuilder g(17);
    g.input("x", {1, 3, 8, 8}).output("y", {1, 192});
    g.randomFloats("scale", {8}, 0.5f, 1.5f, 3);
    g.ints("shape", {2}, {1, 192});
    g.node("LayerNormalization", {"x", "scale"}, {"n"});
    g.node("Reshape", {"n", "shape"}, {"y"});
    {
        const std::vector<char> bytes = g.bytes();
        std::ofstream out(dir / "ln.onnx", std::ios::binary);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    std::vector<std::string> args {"compare", dir / "ln.onnx", "--candidate", "xnnpack", "--frames",
        "4", "--warmup", "1", "--cache-dir", dir / "cache"};
    const auto r = runJetagent(args, dir.path());
    if (r.exitCode == 0)
        GTEST_SKIP() << "this build's OpenCV DNN loads LayerNormalization";
    if (has(r.err, "--candidate xnnpack"))
        GTEST_SKIP() << "this build has no xnnpack backend: " << r.err;
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_TRUE(has(r.err, "--reference opencv:cpu:fp32")) << r.err;
    EXPECT_TRUE(has(r.err, "give --reference xnnpack:cpu:fp32")) << r.err;
    args.insert(args.end(), {"--reference", "xnnpack", "--max-rel-error", "1e-6"});
    const auto ok = runJetagent(args, dir.path());
    EXPECT_EQ(ok.exitCode, 0) << ok.out << ok.err;
}

TEST(CompareCommand, WarmupZeroAndWindowsWithAPartialBatch)
{
    // --warmup 0: the outputs are sized from the session's first timed run, not before it. A
    // batch-4 candidate over 70 inputs: windows of 32, 32 and 6 frames, the last batch partial.
    TempDir dir;
    auto args = demoArgs(dir,
        {"--candidate", "opencv:cpu:fp32,batch=4", "--min-top1", "1", "--json", dir / "w.json"});
    args[5] = "70"; // --frames
    args[7] = "0"; // --warmup
    auto r = runJetagent(args, dir.path());
    ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
    const auto doc = nlohmann::json::parse(readFile(dir / "w.json"));
    EXPECT_EQ(doc["warmup"], 0);
    EXPECT_EQ(doc["window_frames"], 32);
    EXPECT_EQ(doc["inputs"]["frames"], 70);
    EXPECT_EQ(doc["outputs"][0]["inputs"], 70);
    EXPECT_EQ(doc["outputs"][0]["top1_agreement"], 1.0);
    EXPECT_EQ(doc["reference"]["latency_ms"]["runs"], 70);
    EXPECT_EQ(doc["candidate"]["latency_ms"]["runs"], 8 + 8 + 2);
}

// The largest resident set of any child waited for so far, in KiB.
long childrenPeakRssKib()
{
    struct rusage usage { };
    getrusage(RUSAGE_CHILDREN, &usage);
    return usage.ru_maxrss;
}

TEST(CompareCommand, MemoryDoesNotGrowWithFrames)
{
    if (test::kAddressSanitizer)
        GTEST_SKIP()
            << "AddressSanitizer keeps freed memory resident (its quarantine), so the peak "
               "RSS grows with every allocation made; the ordinary build runs this check";
    // The inputs used to be kept whole: 48 KiB per frame of the demo model, 14 MiB more for 400
    // frames than for 100. Streamed, the peak stays where 100 frames put it.
    TempDir dir;
    auto args = demoArgs(dir, {"--candidate", "opencv:cpu:fp32,fusion=off"});
    args[5] = "100";
    auto small = runJetagent(args, dir.path());
    ASSERT_EQ(small.exitCode, 0) << small.err;
    const long smallKib = childrenPeakRssKib();
    args[5] = "400";
    auto large = runJetagent(args, dir.path());
    ASSERT_EQ(large.exitCode, 0) << large.err;
    EXPECT_TRUE(has(large.out, "400 frames")) << large.out;
    // RUSAGE_CHILDREN keeps the maximum over every child: the second figure is the larger peak.
    const long largeKib = childrenPeakRssKib();
    std::printf("peak RSS: 100 frames %ld KiB, 400 frames %ld KiB\n", smallKib, largeKib);
    EXPECT_LT(largeKib - smallKib, 4 * 1024) << "peak RSS grew with the frame count";
}

TEST(CompareCommand, TensorrtIsNotInstalledHere)
{
    bool tensorrt = false;
    for (const BackendInfo& b : listBackends())
        tensorrt = tensorrt || (b.name == "tensorrt" && b.available);
    if (tensorrt)
        GTEST_SKIP() << "this build has TensorRT";
    TempDir dir;
    auto r = runJetagent(demoArgs(dir, {"--candidate", "tensorrt:gpu:fp16"}), dir.path());
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_TRUE(has(r.err, "--candidate: backend 'tensorrt' is not available")) << r.err;
    EXPECT_TRUE(has(r.err, "is not installed")) << r.err;
    EXPECT_TRUE(has(r.err, "jetagent-tensorrt")) << r.err;
    EXPECT_TRUE(has(r.err, "jetagent backends")) << r.err;
}

TEST(CompareUsage, ErrorsExitTwoNamingTheBadPart)
{
    TempDir dir;
    const std::pair<std::vector<std::string>, const char*> cases[] = {
        {{"--candidate", "opencv:cpu:fp33"}, "unknown precision 'fp33'"},
        {{"--candidate", "opencv,fusion=sometimes"}, "fusion=sometimes"},
        {{"--candidate", "opencv", "--reference", "opencv:gpu0"}, "--reference: engine spec"},
        {{"--candidate", "onnxruntime"}, "unknown backend 'onnxruntime'"},
        {{"--candidate", "opencv,threads=2", "--reference", "opencv"}, "same threads"},
        {{"--candidate", "opencv", "--calibration", "calib"}, "--calibration is for int8"},
        {{"--candidate", "opencv", "--task", "3"}, "--task 3"},
        {{"--candidate", "opencv", "--inputs", dir / "absent"}, "--inputs"},
        {{"--candidate", "opencv:cpu:fp16"}, "only fp32 on the CPU"},
    };
    for (const auto& [extra, message] : cases) {
        auto r = runJetagent(demoArgs(dir, extra), dir.path());
        EXPECT_EQ(r.exitCode, 2) << extra[1] << ": " << r.err;
        EXPECT_TRUE(has(r.err, message)) << message << " missing from: " << r.err;
    }
    auto help = runJetagent({"compare", "--help"}, dir.path());
    EXPECT_EQ(help.exitCode, 0);
    for (const char* part : {"BACKEND[:DEVICE[:PRECISION]]", "max |cand - ref| / max |ref|",
             "top-1 agreement", "Exit codes", "--max-rel-error", "--min-top1", "Examples:"})
        EXPECT_TRUE(has(help.out, part)) << part << " missing from compare --help";
    EXPECT_EQ(runJetagent({"compare", sourcePath("models/shapes_cnn.onnx")}, dir.path()).exitCode,
        2); // --candidate is required
}

TEST(CompareCommand, Int8EnginesGetCalibrationFromTheSeam)
{
    TempDir dir;
    CompareOptions o;
    o.model = sourcePath("models/shapes_cnn.onnx");
    o.config = sourcePath("firmware-config/demo.yaml");
    o.candidate = "opencv:cpu:int8"; // refused by the opencv backend, after calibration is made
    o.calibration = dir / "calib";
    o.frames = 2;
    o.cacheDir = dir / "cache";

    // Without the factory, int8 calibration is refused, naming the source.
    auto refused = runCompare(o);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.status().kind(), ErrorKind::Unsupported);
    EXPECT_TRUE(has(refused.status().message(), o.calibration)) << refused.status().message();

    CalibrationConfig seen;
    PreprocessConfig seenPre;
    std::string sourceKey, framesKey;
    o.makeCalibration = [&](const CalibrationConfig& c, const PreprocessConfig& p,
                            const std::function<std::string(const std::string&)>& where)
        -> Expected<std::shared_ptr<CalibrationData>> {
        seen = c;
        seenPre = p;
        sourceKey = where("source");
        framesKey = where("frames");
        return Status::notFound(where("source") + ": '" + c.source + "' does not exist");
    };
    auto failed = runCompare(o);
    ASSERT_FALSE(failed);
    EXPECT_EQ(failed.status().kind(), ErrorKind::NotFound); // the factory's error, as it was
    EXPECT_EQ(seen.source, o.calibration);
    EXPECT_EQ(seenPre.cropWidth, 64); // resolved from the model, as inference preprocesses
    EXPECT_EQ(seenPre.cropHeight, 64);
    EXPECT_EQ(seenPre.resize, ResizeMode::Stretch); // the demo task's preprocessing
    EXPECT_EQ(sourceKey, "--calibration");
    EXPECT_TRUE(has(framesKey, "tasks[0].engine.calibration.frames")) << framesKey;
}

} // namespace
} // namespace jetagent
