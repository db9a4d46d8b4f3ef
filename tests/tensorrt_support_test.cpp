// The TensorRT backend's GPU-free logic: version paths, library version numbers, GPU capabilities,
// option checks; and the engine settings in config and in the backends without TensorRT.
#include <filesystem>

#include <gtest/gtest.h>

#include "config/config.h"
#include "jetagent/engines/model_prepare.h"
#include "jetagent/engines/tensorrt_support.h"
#include "test_support.h"

namespace jetagent {
namespace {

namespace fs = std::filesystem;

TEST(TensorRTVersions, ApiPathsPerVersion)
{
    // Before 8.5 there is no named-tensor API (enqueueV3); TensorRT 11 dropped weak typing.
    EXPECT_FALSE(tensorRTFeatures(8, 4).supported);
    EXPECT_FALSE(tensorRTFeatures(7, 1).supported);
    EXPECT_FALSE(tensorRTFeatures(11, 0).supported);
    for (auto [major, minor] : {std::pair {8, 5}, {8, 6}, {10, 0}, {10, 3}, {10, 16}})
        EXPECT_TRUE(tensorRTFeatures(major, minor).supported) << major << "." << minor;

    // JetPack 5 (8.5/8.6): explicit-batch flag and builder platform queries, no progress monitor.
    const TensorRTFeatures jp5 = tensorRTFeatures(8, 6);
    EXPECT_TRUE(jp5.explicitBatchFlag);
    EXPECT_TRUE(jp5.platformQueries);
    EXPECT_FALSE(jp5.progressMonitor);
    EXPECT_FALSE(jp5.calibratorDeprecated);

    // JetPack 6 (10.3): explicit batch is implicit, compute capability decides fp16/int8.
    const TensorRTFeatures jp6 = tensorRTFeatures(10, 3);
    EXPECT_FALSE(jp6.explicitBatchFlag);
    EXPECT_FALSE(jp6.platformQueries);
    EXPECT_TRUE(jp6.progressMonitor);
    EXPECT_TRUE(jp6.calibratorDeprecated);
    EXPECT_FALSE(jp6.weakTypingDeprecated);

    EXPECT_FALSE(tensorRTFeatures(10, 0).calibratorDeprecated);
    EXPECT_FALSE(tensorRTFeatures(10, 11).weakTypingDeprecated);
    EXPECT_TRUE(tensorRTFeatures(10, 12).weakTypingDeprecated);
}

TEST(TensorRTVersions, LibraryVersionNumbersOfBothEncodings)
{
    auto text = [](int32_t n) { return decodeTensorRTLibraryVersion(n).toString(); };
    EXPECT_EQ(text(8502), "8.5.2"); // JetPack 5.1
    EXPECT_EQ(text(8601), "8.6.1");
    EXPECT_EQ(text(8602), "8.6.2"); // JetPack 6.0
    EXPECT_EQ(text(100000), "10.0.0");
    EXPECT_EQ(text(100300), "10.3.0"); // JetPack 6.1/6.2
    EXPECT_EQ(text(101301), "10.13.1");
    EXPECT_EQ(text(101600), "10.16.0");
}

TEST(TensorRTPlatform, FastArithmeticByComputeCapability)
{
    struct Gpu {
        const char* name;
        int major, minor;
        bool fp16, int8;
    };
    const Gpu gpus[] = {
        {"Jetson Nano / TX1", 5, 3, true, false},
        {"Jetson TX2", 6, 2, true, false},
        {"GTX 1080 (fp16 at 1/64 rate)", 6, 1, false, true},
        {"Xavier", 7, 2, true, true},
        {"Orin", 8, 7, true, true},
        {"Maxwell desktop", 5, 2, false, false},
    };
    for (const Gpu& g : gpus) {
        EXPECT_EQ(computeHasFastFp16(g.major, g.minor), g.fp16) << g.name;
        EXPECT_EQ(computeHasFastInt8(g.major, g.minor), g.int8) << g.name;
    }
}

// A calibration set that only has a shape: the checks never read it.
class ShapeOnlyCalibration final : public CalibrationData {
public:
    explicit ShapeOnlyCalibration(int batch) : batch_(batch) { }
    std::string key() const override { return "k"; }
    std::string description() const override { return "test"; }
    int batchSize() const override { return batch_; }
    const TensorShape& sampleShape() const override { return shape_; }
    Expected<bool> nextBatch(float*) override { return false; }
    void rewind() override { }

private:
    int batch_;
    TensorShape shape_ {3, 224, 224};
};

GpuPlatform orin()
{
    GpuPlatform p;
    p.name = "Orin";
    p.computeMajor = 8;
    p.computeMinor = 7;
    p.integrated = true;
    p.canMapHostMemory = true;
    p.dlaCores = 2;
    p.fastFp16 = p.fastInt8 = true;
    return p;
}

GpuPlatform nano()
{
    GpuPlatform p;
    p.name = "NVIDIA Tegra X1";
    p.computeMajor = 5;
    p.computeMinor = 3;
    p.integrated = true;
    p.canMapHostMemory = true;
    p.fastFp16 = true;
    return p;
}

EngineOptions gpuOptions(Precision precision)
{
    EngineOptions o;
    o.backend = "tensorrt";
    o.device = Device::Gpu;
    o.precision = precision;
    return o;
}

// The message of checkTensorRTOptions, "" when the options pass.
std::string check(const EngineOptions& o, const GpuPlatform& p)
{
    Status s = checkTensorRTOptions(o, p);
    return s.ok() ? std::string() : s.message();
}

TEST(TensorRTOptions, WhatEachBoardCanDo)
{
    EXPECT_EQ(check(gpuOptions(Precision::Fp32), orin()), "");
    EXPECT_EQ(check(gpuOptions(Precision::Fp16), orin()), "");
    EXPECT_EQ(check(gpuOptions(Precision::Fp16), nano()), "");

    // The Nano has no fast int8: a clear refusal naming the GPU, not a slow engine.
    EngineOptions int8 = gpuOptions(Precision::Int8);
    int8.calibration = std::make_shared<ShapeOnlyCalibration>(8);
    EXPECT_EQ(check(int8, orin()), "");
    const std::string e = check(int8, nano());
    EXPECT_NE(e.find("precision: int8"), std::string::npos) << e;
    EXPECT_NE(e.find("Tegra X1 (sm_53"), std::string::npos) << e;

    EngineOptions cpu = gpuOptions(Precision::Fp32);
    cpu.device = Device::Cpu;
    EXPECT_NE(check(cpu, orin()).find("device: gpu, dla0 or dla1"), std::string::npos);
}

TEST(TensorRTOptions, Int8NeedsCalibrationData)
{
    const std::string e = check(gpuOptions(Precision::Int8), orin());
    EXPECT_NE(e.find("needs calibration data"), std::string::npos) << e;
    EXPECT_NE(e.find("calibration: {source:"), std::string::npos) << e;
}

TEST(TensorRTOptions, DlaCoresAndTheirLimits)
{
    EngineOptions dla = gpuOptions(Precision::Fp16);
    dla.device = Device::Dla1;
    EXPECT_EQ(check(dla, orin()), "");
    const std::string none = check(dla, nano());
    EXPECT_NE(none.find("device: dla1"), std::string::npos) << none;
    EXPECT_NE(none.find("no DLA cores"), std::string::npos) << none;
    GpuPlatform oneCore = orin();
    oneCore.dlaCores = 1;
    EXPECT_NE(check(dla, oneCore).find("has 1 DLA core "), std::string::npos)
        << check(dla, oneCore);

    EngineOptions fp32 = dla;
    fp32.precision = Precision::Fp32;
    EXPECT_NE(check(fp32, orin()).find("fp16 or int8 only"), std::string::npos);

    EngineOptions dynamic = dla;
    dynamic.batchMax = 4;
    EXPECT_NE(check(dynamic, orin()).find("fixed shapes only"), std::string::npos);

    EngineOptions graph = dla;
    graph.cudaGraph = true;
    EXPECT_NE(check(graph, orin()).find("cuda_graph"), std::string::npos);

    // int8 on a DLA does not need the GPU's int8 units.
    GpuPlatform noGpuInt8 = orin();
    noGpuInt8.fastInt8 = false;
    EngineOptions dlaInt8 = dla;
    dlaInt8.precision = Precision::Int8;
    dlaInt8.calibration = std::make_shared<ShapeOnlyCalibration>(4);
    EXPECT_EQ(check(dlaInt8, noGpuInt8), "");

    EngineOptions noFallback = gpuOptions(Precision::Fp16);
    noFallback.gpuFallback = false;
    EXPECT_NE(check(noFallback, orin()).find("dla_gpu_fallback"), std::string::npos);
}

TEST(TensorRTOptions, GraphsNeedFixedShapesAndMappedMemoryNeedsMapping)
{
    EngineOptions graph = gpuOptions(Precision::Fp16);
    graph.cudaGraph = true;
    EXPECT_EQ(check(graph, orin()), "");
    graph.batch = 4;
    graph.batchMin = 1;
    EXPECT_NE(check(graph, orin()).find("dynamic batch"), std::string::npos);

    EngineOptions mapped = gpuOptions(Precision::Fp32);
    mapped.ioMemory = IoMemory::Mapped;
    GpuPlatform discrete = orin();
    discrete.integrated = false;
    discrete.canMapHostMemory = false;
    EXPECT_NE(check(mapped, discrete).find("io_memory: mapped"), std::string::npos);
}

TEST(TensorRTOptions, IoMemoryFollowsTheBoard)
{
    GpuPlatform discrete = orin();
    discrete.integrated = false;
    EXPECT_EQ(resolveIoMemory(IoMemory::Auto, orin()), IoMemory::Mapped);
    EXPECT_EQ(resolveIoMemory(IoMemory::Auto, discrete), IoMemory::Device);
    EXPECT_EQ(resolveIoMemory(IoMemory::Device, orin()), IoMemory::Device);
    EXPECT_EQ(resolveIoMemory(IoMemory::Mapped, discrete), IoMemory::Mapped);
}

TEST(TensorRTOptions, PreparedBatchIsFreeForProfilesAndCalibration)
{
    EngineOptions fixed = gpuOptions(Precision::Fp16);
    fixed.batch = 4;
    EXPECT_EQ(tensorRTPreparedBatch(fixed), 4);
    EngineOptions dynamic = fixed;
    dynamic.batchMin = 1;
    dynamic.batchMax = 8;
    EXPECT_TRUE(dynamic.dynamicBatch());
    EXPECT_EQ(tensorRTPreparedBatch(dynamic), 0);
    EngineOptions calibrated = gpuOptions(Precision::Int8);
    calibrated.calibration = std::make_shared<ShapeOnlyCalibration>(8);
    EXPECT_EQ(tensorRTPreparedBatch(calibrated), 0);

    // What the free batch means for preparation: the same passes as opencv's start.
    auto passes = preparationPasses("tensorrt", 0);
    ASSERT_TRUE(passes.ok());
    EXPECT_EQ(passes.value().front(), "free-batch");
}

TEST(TensorRTOptions, GpuDescriptionNamesComputeCapabilityAndDla)
{
    EXPECT_EQ(orin().describe(), "Orin (sm_87, integrated, 2 DLA cores)");
    EXPECT_EQ(nano().describe(), "NVIDIA Tegra X1 (sm_53, integrated)");
}

// Which engine settings rebuild a plan and which reuse it: the key the backend computes from them.
TEST(TensorRTPlanKey, SettingsThatChangeThePlanRebuildOthersReuseIt)
{
    const TensorRTVersion v {10, 3, 0};
    auto keyOf = [&](const EngineOptions& o, const GpuPlatform& p = orin(),
                     const TensorRTVersion& version = {10, 3, 0}) {
        return planKey(tensorRTPlanKeyInputs("modelsha", "prepkey", o, version, p));
    };
    EngineOptions base = gpuOptions(Precision::Fp16);
    const std::string k = keyOf(base);
    EXPECT_EQ(keyOf(base), k);

    // Reused: how the plan runs, not what it is.
    EngineOptions runOnly = base;
    runOnly.threads = 3;
    runOnly.cudaGraph = true;
    runOnly.ioMemory = IoMemory::Device;
    runOnly.timingCache = false;
    runOnly.cacheDir = "/elsewhere";
    EXPECT_EQ(keyOf(runOnly), k);

    // Rebuilt: each of these changes the plan.
    std::vector<std::pair<const char*, EngineOptions>> changed;
    auto add = [&](const char* what, auto edit) {
        EngineOptions o = base;
        edit(o);
        changed.emplace_back(what, o);
    };
    add("precision", [](EngineOptions& o) { o.precision = Precision::Fp32; });
    add("device", [](EngineOptions& o) { o.device = Device::Dla0; });
    add("dla fallback", [](EngineOptions& o) { o.gpuFallback = false; });
    add("batch", [](EngineOptions& o) { o.batch = 2; });
    add("batch_min", [](EngineOptions& o) {
        o.batch = 2;
        o.batchMin = 1;
    });
    add("batch_max", [](EngineOptions& o) { o.batchMax = 8; });
    add("workspace", [](EngineOptions& o) { o.workspaceMb = 256; });
    for (const auto& [what, o] : changed)
        EXPECT_NE(keyOf(o), k) << what;
    EXPECT_NE(keyOf(base, nano()), k) << "GPU";
    EXPECT_NE(keyOf(base, orin(), {10, 3, 1}), k) << "TensorRT version";
    EXPECT_NE(planKey(tensorRTPlanKeyInputs("othersha", "prepkey", base, v, orin())), k);
    EXPECT_NE(planKey(tensorRTPlanKeyInputs("modelsha", "other", base, v, orin())), k);

    // int8: the calibration data is part of the key; for other precisions it is not there.
    EngineOptions int8 = gpuOptions(Precision::Int8);
    int8.calibration = std::make_shared<ShapeOnlyCalibration>(8);
    const PlanKeyInputs in = tensorRTPlanKeyInputs("modelsha", "prepkey", int8, v, orin());
    EXPECT_EQ(in.calibrationKey, "k");
    EngineOptions fp16WithData = base;
    fp16WithData.calibration = int8.calibration;
    EXPECT_EQ(keyOf(fp16WithData), k);
}

Expected<AgentConfig> parse(const std::string& engine)
{
    return parseConfig("tasks:\n  - model: m.onnx\n    engine:\n" + engine, "t.yaml", "/base");
}

TEST(EngineConfig, TensorRTKeysAreRead)
{
    auto c = parse("      backend: tensorrt\n"
                   "      device: dla0\n"
                   "      precision: int8\n"
                   "      batch: 4\n"
                   "      batch_min: 1\n"
                   "      batch_max: 8\n"
                   "      workspace_mb: 512\n"
                   "      dla_gpu_fallback: false\n"
                   "      timing_cache: false\n"
                   "      cuda_graph: true\n"
                   "      io_memory: device\n"
                   "      calibration:\n"
                   "        source: calib\n"
                   "        frames: 300\n"
                   "        batch: 16\n");
    ASSERT_TRUE(c.ok()) << c.status().message();
    const TaskConfig& t = c.value().tasks.at(0);
    EXPECT_EQ(t.engine.profileMin(), 1);
    EXPECT_EQ(t.engine.batch, 4);
    EXPECT_EQ(t.engine.profileMax(), 8);
    EXPECT_EQ(t.engine.workspaceMb, 512);
    EXPECT_FALSE(t.engine.gpuFallback);
    EXPECT_FALSE(t.engine.timingCache);
    EXPECT_TRUE(t.engine.cudaGraph);
    EXPECT_EQ(t.engine.ioMemory, IoMemory::Device);
    EXPECT_EQ(t.calibration.source, "/base/calib");
    EXPECT_EQ(t.calibration.frames, 300);
    EXPECT_EQ(t.calibration.batch, 16);

    auto d = parse("      backend: tensorrt\n");
    ASSERT_TRUE(d.ok());
    const EngineOptions& defaults = d.value().tasks.at(0).engine;
    EXPECT_FALSE(defaults.dynamicBatch());
    EXPECT_TRUE(defaults.gpuFallback);
    EXPECT_TRUE(defaults.timingCache);
    EXPECT_FALSE(defaults.cudaGraph);
    EXPECT_EQ(defaults.ioMemory, IoMemory::Auto);
    EXPECT_TRUE(d.value().tasks.at(0).calibration.source.empty());
}

TEST(EngineConfig, BadTensorRTSettingsNameKeyAndLine)
{
    auto errorOf = [](const std::string& engine) {
        auto c = parse(engine);
        EXPECT_FALSE(c.ok()) << engine;
        return c.ok() ? std::string() : c.status().message();
    };
    std::string e = errorOf("      batch: 4\n      batch_min: 8\n");
    EXPECT_NE(e.find("t.yaml:5:"), std::string::npos) << e;
    EXPECT_NE(e.find("batch_min"), std::string::npos) << e;
    EXPECT_NE(e.find("above batch (4)"), std::string::npos) << e;

    e = errorOf("      batch: 4\n      batch_max: 2\n");
    EXPECT_NE(e.find("below batch (4)"), std::string::npos) << e;

    e = errorOf("      io_memory: zero-copy\n");
    EXPECT_NE(e.find("io_memory"), std::string::npos) << e;
    EXPECT_NE(e.find("auto, mapped, device"), std::string::npos) << e;

    e = errorOf("      calibration:\n        frames: 10\n");
    EXPECT_NE(e.find("t.yaml:5:"), std::string::npos) << e;
    EXPECT_NE(e.find("calibration.source: missing"), std::string::npos) << e;

    e = errorOf("      calibration:\n        source: c\n        batch: 0\n");
    EXPECT_NE(e.find("calibration.batch"), std::string::npos) << e;
}

TEST(EngineConfig, OpenCVRefusesTensorRTSettings)
{
    auto model = loadModelFile(test::sourcePath("models/shapes_cnn.onnx"));
    ASSERT_TRUE(model.ok()) << model.status().message();
    EngineOptions o;
    o.cacheDir.clear();
    o.batchMax = 4;
    auto e = buildEngine(model.value(), o);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.status().kind(), ErrorKind::Unsupported);
    EXPECT_NE(e.status().message().find("batch_min/batch_max"), std::string::npos)
        << e.status().message();

    EngineOptions graph;
    graph.cudaGraph = true;
    auto g = buildEngine(model.value(), graph);
    ASSERT_FALSE(g.ok());
    EXPECT_NE(g.status().message().find("cuda_graph"), std::string::npos);
}

TEST(EngineConfig, AnUnwritableCacheIsAWarningNotAFailure)
{
    auto model = loadModelFile(test::sourcePath("models/shapes_cnn.onnx"));
    ASSERT_TRUE(model.ok()) << model.status().message();
    test::TempDir dir;
    test::writeFile(dir / "file", "not a directory");
    EngineOptions o;
    o.cacheDir = dir / "file"; // its prepared/ subdirectory cannot be created
    auto e = buildEngine(model.value(), o);
    ASSERT_TRUE(e.ok()) << e.status().message();
    EXPECT_FALSE(e.value()->description().preparedFromCache);
    EXPECT_FALSE(fs::exists(dir / "file/prepared"));
}

} // namespace
} // namespace jetagent
