// Every kind of entry in the engine cache is checked against a digest when it is read: a flipped
// byte, a truncation or an appended byte in a prepared model, its report, a TensorRT plan, its
// metadata, a calibration table or a timing cache is a miss that rebuilds the entry (and says so),
// never an entry used as it is. With the size alone checked, 3 of 40 damaged entries gave wrong
// results without a word.
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "jetagent/base/log.h"
#include "jetagent/engines/cache_file.h"
#include "jetagent/engines/engine.h"
#include "jetagent/engines/model_file.h"
#include "jetagent/engines/model_prepare.h"
#include "jetagent/engines/plan_cache.h"
#include "jetagent/engines/sha256.h"
#include "test_support.h"

namespace jetagent {
namespace {

namespace fs = std::filesystem;

// The ways a file is damaged on disk.
struct Damage {
    const char* name;
    std::function<void(std::string&)> apply;
};

const std::vector<Damage>& damages()
{
    static const std::vector<Damage> all = {
        {"a byte flipped in the middle",
            [](std::string& b) { b[b.size() / 2] = static_cast<char>(b[b.size() / 2] ^ 0x20); }},
        {"truncated", [](std::string& b) { b.resize(b.size() - b.size() / 3); }},
        {"a byte appended", [](std::string& b) { b.push_back('\n'); }},
    };
    return all;
}

void damageFile(const std::string& path, const Damage& damage)
{
    std::string bytes = test::readFile(path);
    ASSERT_GT(bytes.size(), 2u) << path;
    damage.apply(bytes);
    test::writeFile(path, bytes);
}

bool xnnpackAvailable()
{
    for (const BackendInfo& b : listBackends())
        if (b.name == "xnnpack")
            return b.available;
    return false;
}

TEST(CacheEntry, IsStoredWithADigestInSha256sumFormat)
{
    test::TempDir dir;
    const std::string path = dir / "entry.bin";
    const std::string content = "prepared model bytes";
    ASSERT_TRUE(writeCacheEntry(path, content).ok());
    EXPECT_EQ(test::readFile(path), content);
    EXPECT_EQ(test::readFile(cacheDigestPath(path)),
        Sha256::hex(content.data(), content.size()) + "  entry.bin\n");
    const CacheEntryRead read = readCacheEntry(path);
    ASSERT_TRUE(read.bytes.has_value()) << read.damaged;
    EXPECT_EQ(*read.bytes, content);
    EXPECT_EQ(read.damaged, "");

    const CacheEntryRead absent = readCacheEntry(dir / "absent.bin");
    EXPECT_FALSE(absent.bytes.has_value());
    EXPECT_EQ(absent.damaged, "") << "no entry is a plain miss";
}

TEST(CacheEntry, DamageOrAMissingDigestIsAMissWithAReason)
{
    test::TempDir dir;
    const std::string path = dir / "entry.bin";
    const std::string content(1000, 'x');
    for (const Damage& damage : damages()) {
        SCOPED_TRACE(damage.name);
        ASSERT_TRUE(writeCacheEntry(path, content).ok());
        damageFile(path, damage);
        const CacheEntryRead read = readCacheEntry(path);
        EXPECT_FALSE(read.bytes.has_value());
        EXPECT_NE(read.damaged.find("differs from its SHA-256 digest"), std::string::npos)
            << read.damaged;
        // The digest damaged instead of the content.
        ASSERT_TRUE(writeCacheEntry(path, content).ok());
        damageFile(cacheDigestPath(path), damage);
        EXPECT_FALSE(readCacheEntry(path).bytes.has_value());
    }
    ASSERT_TRUE(writeCacheEntry(path, content).ok());
    fs::remove(cacheDigestPath(path));
    const CacheEntryRead old = readCacheEntry(path);
    EXPECT_FALSE(old.bytes.has_value());
    EXPECT_NE(old.damaged.find("no SHA-256 digest"), std::string::npos) << old.damaged;
}

// The demo model prepared for xnnpack through a cache, then run on a fixed input.
std::vector<float> runDemo(const std::string& cacheDir, bool* fromCache)
{
    auto model = loadModelFile(test::sourcePath("models/shapes_cnn.onnx"));
    EXPECT_TRUE(model.ok()) << model.status().message();
    if (!model)
        return {};
    PrepareOptions prepare;
    prepare.backend = "xnnpack";
    prepare.cacheDir = cacheDir;
    auto prepared = prepareModel(*model.value(), prepare);
    EXPECT_TRUE(prepared.ok()) << prepared.status().message();
    if (!prepared)
        return {};
    *fromCache = prepared->fromCache;
    EngineOptions options;
    options.backend = "xnnpack";
    options.cacheDir = cacheDir;
    auto engine = buildEngine(model.value(), options);
    EXPECT_TRUE(engine.ok()) << engine.status().message();
    if (!engine)
        return {};
    auto session = engine.value()->createSession();
    EXPECT_TRUE(session.ok());
    std::vector<float> input(3 * 64 * 64);
    for (size_t i = 0; i < input.size(); ++i)
        input[i] = static_cast<float>(i % 97) / 97.0f - 0.5f;
    TensorView view {input.data(), TensorShape {1, 3, 64, 64}};
    EXPECT_TRUE(session.value()->run(&view, 1, nullptr).ok());
    const ConstTensorView out = session.value()->output(0);
    return {out.data, out.data + out.shape.elementCount()};
}

TEST(PreparedModelCache, ADamagedEntryIsPreparedAgainGivesTheSameResultsAndIsReplaced)
{
    if (!xnnpackAvailable())
        GTEST_SKIP() << "this build has no xnnpack backend";
    test::TempDir dir;
    bool fromCache = true;
    const std::vector<float> expected = runDemo(dir / "reference", &fromCache);
    ASSERT_FALSE(expected.empty());
    EXPECT_FALSE(fromCache);

    for (const char* extension : {".onnx", ".json"})
        for (const Damage& damage : damages()) {
            SCOPED_TRACE(std::string(extension) + ", " + damage.name);
            const std::string cache = dir / (std::string("cache") + extension + damage.name);
            ASSERT_EQ(runDemo(cache, &fromCache), expected);
            std::vector<std::string> entries;
            for (const auto& e : fs::directory_iterator(cache + "/prepared"))
                if (e.path().extension() == extension)
                    entries.push_back(e.path().string());
            ASSERT_EQ(entries.size(), 1u);
            damageFile(entries[0], damage);

            test::LogCapture log("engine");
            EXPECT_EQ(runDemo(cache, &fromCache), expected) << "results from a damaged entry";
            EXPECT_FALSE(fromCache) << "the damaged entry was used";
            EXPECT_EQ(log.count({"in the cache is damaged", "preparing it again", entries[0]}), 1);
            EXPECT_EQ(runDemo(cache, &fromCache), expected);
            EXPECT_TRUE(fromCache) << "the entry was not replaced";
        }
}

TEST(PreparedModelCache, AnEntryWithoutADigestIsPreparedAgain)
{
    if (!xnnpackAvailable())
        GTEST_SKIP() << "this build has no xnnpack backend";
    test::TempDir dir;
    bool fromCache = true;
    const std::vector<float> expected = runDemo(dir.path(), &fromCache);
    for (const auto& e : fs::directory_iterator(dir / "prepared"))
        if (e.path().extension() == ".sha256")
            fs::remove(e.path());
    test::LogCapture log("engine");
    EXPECT_EQ(runDemo(dir.path(), &fromCache), expected);
    EXPECT_FALSE(fromCache);
    EXPECT_EQ(log.count({"no SHA-256 digest", "preparing it again"}), 1);
}

PlanKeyInputs planInputs()
{
    PlanKeyInputs in;
    in.modelSha256 = std::string(64, 'a');
    in.preparedKey = std::string(64, 'b');
    in.precision = "int8";
    in.device = "gpu";
    in.tensorrtVersion = "10.3.0";
    in.gpuName = "Orin (nvgpu), sm_87";
    return in;
}

// TensorRT's entries, without TensorRT: the plan and its metadata through PlanCache, the int8
// calibration table and the timing cache as the TensorRT backend stores and reads them.
TEST(TensorRTCache, EveryKindOfEntryIsAMissWhenDamaged)
{
    test::TempDir dir;
    const PlanCache cache = PlanCache::open(dir.path());
    ASSERT_TRUE(cache.usable()) << cache.warning();
    const PlanKeyInputs in = planInputs();
    const std::string key = planKey(in);
    std::string plan(50000, '\0');
    for (size_t i = 0; i < plan.size(); ++i)
        plan[i] = static_cast<char>(i * 31 + 7);
    PlanMetadata metadata;
    metadata.inputs = in;
    metadata.modelPath = "/models/model.onnx";

    for (const std::string& file : {key + ".plan", key + ".json"})
        for (const Damage& damage : damages()) {
            SCOPED_TRACE(file + ", " + damage.name);
            ASSERT_TRUE(cache.storePlan(key, plan, metadata).ok());
            damageFile(cache.directory() + "/" + file, damage);
            const PlanLookup found = cache.loadPlan(key);
            EXPECT_FALSE(found.plan.has_value());
            EXPECT_NE(found.damaged, "");
            ASSERT_TRUE(cache.storePlan(key, plan, metadata).ok());
            const PlanLookup rebuilt = cache.loadPlan(key);
            ASSERT_TRUE(rebuilt.plan.has_value()) << rebuilt.damaged;
            EXPECT_TRUE(rebuilt.plan->bytes == plan);
        }

    const std::string table = cache.calibrationTablePath(calibrationTableKey(in));
    const std::string timing = cache.timingCachePath(in.tensorrtVersion, in.gpuName);
    for (const std::string& path : {table, timing})
        for (const Damage& damage : damages()) {
            SCOPED_TRACE(path + ", " + damage.name);
            ASSERT_TRUE(writeCacheEntry(path, plan.substr(0, 4000)).ok());
            damageFile(path, damage);
            EXPECT_FALSE(readCacheEntry(path).bytes.has_value());
            ASSERT_TRUE(writeCacheEntry(path, plan.substr(0, 4000)).ok());
            const CacheEntryRead read = readCacheEntry(path);
            ASSERT_TRUE(read.bytes.has_value()) << read.damaged;
            EXPECT_EQ(*read.bytes, plan.substr(0, 4000));
        }
}

} // namespace
} // namespace jetagent
