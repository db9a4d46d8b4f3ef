// The TensorRT plan cache without TensorRT: keys, store/load round trips, damaged entries,
// unusable directories and atomic files.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "jetagent/engines/plan_cache.h"
#include "jetagent/engines/sha256.h"
#include "test_support.h"

namespace jetagent {
namespace {

// True when `s` has the shape of `pattern`: '#' is a decimal digit, 'h' a lower-case hex digit, any
// other character itself. (std::regex trips GCC 12's maybe-uninitialized warning under ASan.)
bool hasShape(const std::string& s, const std::string& pattern)
{
    if (s.size() != pattern.size())
        return false;
    for (size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        const bool digit = c >= '0' && c <= '9';
        const bool ok = pattern[i] == '#' ? digit
            : pattern[i] == 'h'           ? digit || (c >= 'a' && c <= 'f')
                                          : c == pattern[i];
        if (!ok)
            return false;
    }
    return true;
}

namespace fs = std::filesystem;

PlanKeyInputs sampleInputs()
{
    PlanKeyInputs in;
    in.modelSha256 = std::string(64, 'a');
    in.preparedKey = std::string(64, 'b');
    in.precision = "fp16";
    in.device = "dla0";
    in.gpuFallback = true;
    in.batchMin = 1;
    in.batchOpt = 4;
    in.batchMax = 8;
    in.workspaceMb = 0;
    in.calibrationKey = "";
    in.tensorrtVersion = "10.3.0";
    in.gpuName = "Orin (nvgpu), sm_87";
    return in;
}

PlanMetadata sampleMetadata(const PlanKeyInputs& in)
{
    PlanMetadata m;
    m.inputs = in;
    m.modelPath = "/models/resnet50.onnx";
    m.buildMs = 91234;
    m.jetagentVersion = "0.9.0-test";
    return m;
}

// Bytes that look nothing like text, NULs included.
std::string samplePlan(size_t size, unsigned seed)
{
    std::string bytes(size, '\0');
    for (size_t i = 0; i < size; ++i)
        bytes[i] = static_cast<char>((i * 131 + seed * 17 + (i >> 7)) & 0xff);
    return bytes;
}

std::vector<std::string> filesIn(const std::string& dir)
{
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir))
        names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

struct FieldChange {
    const char* field;
    std::function<void(PlanKeyInputs&)> change;
};

// One change per field of PlanKeyInputs: each must give another plan key.
std::vector<FieldChange> fieldChanges()
{
    return {
        {"modelSha256", [](PlanKeyInputs& in) { in.modelSha256 = std::string(64, 'c'); }},
        {"preparedKey", [](PlanKeyInputs& in) { in.preparedKey = std::string(64, 'd'); }},
        {"precision", [](PlanKeyInputs& in) { in.precision = "int8"; }},
        {"device", [](PlanKeyInputs& in) { in.device = "dla1"; }},
        {"gpuFallback", [](PlanKeyInputs& in) { in.gpuFallback = false; }},
        {"batchMin", [](PlanKeyInputs& in) { in.batchMin = 2; }},
        {"batchOpt", [](PlanKeyInputs& in) { in.batchOpt = 5; }},
        {"batchMax", [](PlanKeyInputs& in) { in.batchMax = 16; }},
        {"workspaceMb", [](PlanKeyInputs& in) { in.workspaceMb = 512; }},
        {"calibrationKey", [](PlanKeyInputs& in) { in.calibrationKey = "e3b0c442"; }},
        {"tensorrtVersion", [](PlanKeyInputs& in) { in.tensorrtVersion = "10.3.1"; }},
        {"gpuName", [](PlanKeyInputs& in) { in.gpuName = "Xavier, sm_72"; }},
    };
}

TEST(PlanKey, EqualInputsGiveTheSameKey)
{
    const std::string key = planKey(sampleInputs());
    EXPECT_EQ(planKey(sampleInputs()), key);
    EXPECT_TRUE(hasShape(key, std::string(64, 'h'))) << key;
    const std::string text = describePlanKey(sampleInputs());
    EXPECT_EQ(Sha256::hex(text.data(), text.size()), key);
}

TEST(PlanKey, TextHasARevisionLineThenOneLinePerField)
{
    const std::string text = describePlanKey(sampleInputs());
    std::vector<std::string> lines;
    size_t start = 0;
    for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
        lines.push_back(text.substr(start, end - start));
    EXPECT_EQ(start, text.size()) << "the text ends with a newline";
    ASSERT_EQ(lines.size(), fieldChanges().size() + 1) << text;
    EXPECT_EQ(lines[0].find('='), std::string::npos) << "revision line: " << lines[0];
    for (size_t i = 1; i < lines.size(); ++i)
        EXPECT_NE(lines[i].find('='), std::string::npos) << lines[i];
    EXPECT_NE(text.find("\nprecision=fp16\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\ngpu_name=Orin (nvgpu), sm_87\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\nbatch_opt=4\n"), std::string::npos) << text;
}

TEST(PlanKey, EachFieldChangesTheKey)
{
    const std::string base = planKey(sampleInputs());
    std::set<std::string> keys {base};
    for (const auto& fc : fieldChanges()) {
        PlanKeyInputs in = sampleInputs();
        fc.change(in);
        const std::string key = planKey(in);
        EXPECT_NE(key, base) << fc.field;
        EXPECT_TRUE(keys.insert(key).second) << fc.field << " gives the key of another change";
    }
}

TEST(PlanKey, ValuesCannotImitateAnotherField)
{
    // Unescaped, both would read "tensorrt_version=1\ngpu_name=x\ngpu_name=y".
    PlanKeyInputs a = sampleInputs();
    a.tensorrtVersion = "1\ngpu_name=x";
    a.gpuName = "y";
    PlanKeyInputs b = sampleInputs();
    b.tensorrtVersion = "1";
    b.gpuName = "x\ngpu_name=y";
    EXPECT_NE(describePlanKey(a), describePlanKey(b));
    EXPECT_NE(planKey(a), planKey(b));
    // A backslash is escaped too, so that "\\n" written out cannot pass for an escaped newline.
    PlanKeyInputs c = sampleInputs();
    c.gpuName = "x\\ngpu_name=y";
    EXPECT_NE(planKey(c), planKey(b));
}

TEST(CalibrationTableKey, FollowsTheModelAndDataNotTheBuildSettings)
{
    PlanKeyInputs base = sampleInputs();
    base.precision = "int8";
    base.calibrationKey = "calibration-set-1";
    const std::string key = calibrationTableKey(base);
    EXPECT_TRUE(hasShape(key, std::string(64, 'h'))) << key;
    EXPECT_NE(key, planKey(base));

    const std::set<std::string> followed {
        "modelSha256", "preparedKey", "calibrationKey", "tensorrtVersion"};
    for (const auto& fc : fieldChanges()) {
        PlanKeyInputs in = base;
        fc.change(in);
        if (followed.count(fc.field))
            EXPECT_NE(calibrationTableKey(in), key) << fc.field;
        else
            EXPECT_EQ(calibrationTableKey(in), key) << fc.field;
    }
}

TEST(PlanCache, OpenCreatesTheDirectoryAndLeavesNothingInIt)
{
    test::TempDir tmp;
    const PlanCache cache = PlanCache::open(tmp / "a/b");
    ASSERT_TRUE(cache.usable()) << cache.warning();
    EXPECT_EQ(cache.warning(), "");
    EXPECT_EQ(cache.directory(), tmp / "a/b/tensorrt");
    EXPECT_TRUE(fs::is_directory(cache.directory()));
    EXPECT_TRUE(filesIn(cache.directory()).empty()) << "the writability probe was left behind";
}

TEST(PlanCache, RoundTrip)
{
    test::TempDir tmp;
    const PlanCache cache = PlanCache::open(tmp.path());
    ASSERT_TRUE(cache.usable()) << cache.warning();
    const PlanKeyInputs in = sampleInputs();
    const std::string key = planKey(in);
    const std::string plan = samplePlan(300001, 1);

    ASSERT_TRUE(cache.storePlan(key, plan, sampleMetadata(in)).ok());
    EXPECT_EQ(cache.planPath(key), cache.directory() + "/" + key + ".plan");
    EXPECT_TRUE(test::readFile(cache.planPath(key)) == plan);
    EXPECT_EQ(filesIn(cache.directory()),
        (std::vector<std::string> {key + ".json", key + ".json.sha256", key + ".plan"}))
        << "no temporary file may stay behind";

    const PlanLookup found = cache.loadPlan(key);
    ASSERT_TRUE(found.plan.has_value()) << found.damaged;
    EXPECT_EQ(found.damaged, "");
    EXPECT_TRUE(found.plan->bytes == plan);
    const PlanMetadata& m = found.plan->metadata;
    EXPECT_EQ(planKey(m.inputs), key);
    EXPECT_EQ(describePlanKey(m.inputs), describePlanKey(in));
    EXPECT_EQ(m.keyText, describePlanKey(in));
    EXPECT_EQ(m.modelPath, "/models/resnet50.onnx");
    EXPECT_EQ(m.buildMs, 91234);
    EXPECT_EQ(m.jetagentVersion, "0.9.0-test");
    EXPECT_EQ(m.planBytes, plan.size());
    EXPECT_EQ(m.planSha256, Sha256::hex(plan.data(), plan.size()));
    EXPECT_TRUE(hasShape(m.created, "####-##-##T##:##:##Z")) << m.created;

    // The metadata is for people too: the key text and the figures are plain JSON fields.
    const std::string json = test::readFile(cache.directory() + "/" + key + ".json");
    EXPECT_NE(json.find("\"gpu_name\": \"Orin (nvgpu), sm_87\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"plan_bytes\": 300001"), std::string::npos) << json;
    EXPECT_NE(json.find("\"key_text\": \"jetagent-tensorrt-plan"), std::string::npos) << json;
}

TEST(PlanCache, AMissingEntryIsAPlainMiss)
{
    test::TempDir tmp;
    const PlanCache cache = PlanCache::open(tmp.path());
    ASSERT_TRUE(cache.usable()) << cache.warning();
    const PlanLookup found = cache.loadPlan(planKey(sampleInputs()));
    EXPECT_FALSE(found.plan.has_value());
    EXPECT_EQ(found.damaged, "");
}

TEST(PlanCache, ARebuiltPlanReplacesTheOldOne)
{
    test::TempDir tmp;
    const PlanCache cache = PlanCache::open(tmp.path());
    const PlanKeyInputs in = sampleInputs();
    const std::string key = planKey(in);
    ASSERT_TRUE(cache.storePlan(key, samplePlan(5000, 1), sampleMetadata(in)).ok());
    const std::string second = samplePlan(4000, 2);
    ASSERT_TRUE(cache.storePlan(key, second, sampleMetadata(in)).ok());
    const PlanLookup found = cache.loadPlan(key);
    ASSERT_TRUE(found.plan.has_value()) << found.damaged;
    EXPECT_TRUE(found.plan->bytes == second);
    EXPECT_EQ(filesIn(cache.directory()).size(), 3u);
}

TEST(PlanCache, AKeyThatIsNotTheInputsKeyIsRefused)
{
    test::TempDir tmp;
    const PlanCache cache = PlanCache::open(tmp.path());
    PlanKeyInputs other = sampleInputs();
    other.precision = "fp32";
    const Status s =
        cache.storePlan(planKey(other), samplePlan(100, 1), sampleMetadata(sampleInputs()));
    EXPECT_EQ(s.kind(), ErrorKind::InvalidInput) << s.message();
    EXPECT_TRUE(filesIn(cache.directory()).empty());
}

// A stored entry, damaged by `damage` (given the plan and metadata paths), must be a miss whose
// reason contains `reasonPart`, and a new store must repair it.
void expectDamagedMiss(const std::function<void(const std::string&, const std::string&)>& damage,
    const std::string& reasonPart)
{
    test::TempDir tmp;
    const PlanCache cache = PlanCache::open(tmp.path());
    ASSERT_TRUE(cache.usable()) << cache.warning();
    const PlanKeyInputs in = sampleInputs();
    const std::string key = planKey(in);
    const std::string plan = samplePlan(70000, 3);
    ASSERT_TRUE(cache.storePlan(key, plan, sampleMetadata(in)).ok());
    ASSERT_TRUE(cache.loadPlan(key).plan.has_value());

    damage(cache.directory() + "/" + key + ".plan", cache.directory() + "/" + key + ".json");
    const PlanLookup found = cache.loadPlan(key);
    EXPECT_FALSE(found.plan.has_value());
    EXPECT_NE(found.damaged.find(reasonPart), std::string::npos)
        << "reason: '" << found.damaged << "', expected it to contain '" << reasonPart << "'";

    ASSERT_TRUE(cache.storePlan(key, plan, sampleMetadata(in)).ok());
    const PlanLookup repaired = cache.loadPlan(key);
    ASSERT_TRUE(repaired.plan.has_value()) << repaired.damaged;
    EXPECT_TRUE(repaired.plan->bytes == plan);
}

TEST(PlanCache, ATruncatedPlanIsADamagedMiss)
{
    expectDamagedMiss([](const std::string& planPath,
                          const std::string&) { fs::resize_file(planPath, 70000 - 4096); },
        "the plan has 65904 bytes, its metadata says 70000");
}

TEST(PlanCache, AFlippedByteIsADamagedMiss)
{
    expectDamagedMiss(
        [](const std::string& planPath, const std::string&) {
            std::string bytes = test::readFile(planPath);
            bytes[12345] = static_cast<char>(bytes[12345] ^ 0x10);
            test::writeFile(planPath, bytes);
        },
        "SHA-256");
}

TEST(PlanCache, MissingMetadataIsADamagedMiss)
{
    expectDamagedMiss([](const std::string&, const std::string& metaPath) { fs::remove(metaPath); },
        "no metadata");
}

TEST(PlanCache, AMissingPlanIsADamagedMiss)
{
    expectDamagedMiss([](const std::string& planPath, const std::string&) { fs::remove(planPath); },
        "plan is missing");
}

// Metadata edited by hand, its digest not: refused before it is parsed.
TEST(PlanCache, MetadataThatDiffersFromItsDigestIsADamagedMiss)
{
    expectDamagedMiss(
        [](const std::string&, const std::string& metaPath) {
            std::string json = test::readFile(metaPath);
            json[json.size() / 2] = static_cast<char>(json[json.size() / 2] ^ 0x01);
            test::writeFile(metaPath, json);
        },
        "its metadata: its content (");
    expectDamagedMiss([](const std::string&,
                          const std::string& metaPath) { fs::remove(cacheDigestPath(metaPath)); },
        "its metadata: it has no SHA-256 digest");
}

// The checks below the digest, on metadata stored with a digest that matches it (as a faulty
// jetagent, or a person who also rewrote the digest, would leave it).
TEST(PlanCache, MetadataThatIsNotJsonIsADamagedMiss)
{
    expectDamagedMiss(
        [](const std::string&, const std::string& metaPath) {
            ASSERT_TRUE(writeCacheEntry(metaPath, "{\"key\": ").ok());
        },
        "not JSON");
}

TEST(PlanCache, IncompleteMetadataIsADamagedMiss)
{
    expectDamagedMiss(
        [](const std::string&, const std::string& metaPath) {
            std::string json = test::readFile(metaPath);
            const size_t at = json.find("\"plan_sha256\"");
            ASSERT_NE(at, std::string::npos);
            json.replace(at, 13, "\"plan_sha_256\"");
            ASSERT_TRUE(writeCacheEntry(metaPath, json).ok());
        },
        "incomplete");
}

TEST(PlanCache, MetadataOfAnotherKeyIsADamagedMiss)
{
    expectDamagedMiss(
        [](const std::string& planPath, const std::string& metaPath) {
            // A plan of the same size stored under another key: only the key text tells them apart.
            PlanKeyInputs other = sampleInputs();
            other.batchMax = 32;
            const std::string dir = fs::path(metaPath).parent_path().string();
            const PlanCache cache = PlanCache::open(fs::path(dir).parent_path().string());
            const std::string plan = test::readFile(planPath);
            ASSERT_TRUE(cache.storePlan(planKey(other), plan, sampleMetadata(other)).ok());
            ASSERT_TRUE(
                writeCacheEntry(metaPath, test::readFile(dir + "/" + planKey(other) + ".json"))
                    .ok());
        },
        "another plan");
}

TEST(PlanCache, EditedKeyTextIsADamagedMiss)
{
    expectDamagedMiss(
        [](const std::string&, const std::string& metaPath) {
            std::string json = test::readFile(metaPath);
            const size_t at = json.find("batch_opt=4");
            ASSERT_NE(at, std::string::npos);
            json.replace(at, 11, "batch_opt=5");
            ASSERT_TRUE(writeCacheEntry(metaPath, json).ok());
        },
        "another plan");
}

TEST(PlanCache, NoCacheDirectoryIsNotUsable)
{
    const PlanCache cache = PlanCache::open("");
    EXPECT_FALSE(cache.usable());
    EXPECT_NE(cache.warning().find("no engine cache directory is configured"), std::string::npos)
        << cache.warning();
    EXPECT_NE(cache.warning().find("engine.cache_dir"), std::string::npos) << cache.warning();
    const std::string key = planKey(sampleInputs());
    const PlanLookup found = cache.loadPlan(key);
    EXPECT_FALSE(found.plan.has_value());
    EXPECT_EQ(found.damaged, "");
    EXPECT_EQ(cache.storePlan(key, "plan", sampleMetadata(sampleInputs())).kind(),
        ErrorKind::Unsupported);
    EXPECT_EQ(cache.calibrationTablePath(calibrationTableKey(sampleInputs())), "");
    EXPECT_EQ(cache.timingCachePath("10.3.0", "Orin"), "");
    EXPECT_EQ(cache.planPath(key), "");
}

TEST(PlanCache, ADirectoryUnderARegularFileIsNotUsable)
{
    // Tests run as root, whom permissions do not stop: a regular file in the path does.
    test::TempDir tmp;
    test::writeFile(tmp / "file", "not a directory");
    const PlanCache cache = PlanCache::open(tmp / "file/cache");
    EXPECT_FALSE(cache.usable());
    EXPECT_NE(cache.warning().find("'" + (tmp / "file/cache/tensorrt") + "'"), std::string::npos)
        << cache.warning();
    EXPECT_NE(cache.warning().find("Not a directory"), std::string::npos) << cache.warning();
    EXPECT_NE(cache.warning().find("rebuilt at every start"), std::string::npos) << cache.warning();
    const std::string key = planKey(sampleInputs());
    EXPECT_FALSE(cache.storePlan(key, "plan", sampleMetadata(sampleInputs())).ok());
    EXPECT_FALSE(cache.loadPlan(key).plan.has_value());
}

TEST(PlanCache, ATensorrtFileInPlaceOfTheDirectoryIsNotUsable)
{
    test::TempDir tmp;
    test::writeFile(tmp / "tensorrt", "");
    const PlanCache cache = PlanCache::open(tmp.path());
    EXPECT_FALSE(cache.usable());
    EXPECT_NE(cache.warning().find("'" + (tmp / "tensorrt") + "'"), std::string::npos)
        << cache.warning();
}

TEST(PlanCache, TimingCachePathsFollowTheVersionAndTheGpu)
{
    test::TempDir tmp;
    const PlanCache cache = PlanCache::open(tmp.path());
    ASSERT_TRUE(cache.usable()) << cache.warning();
    const std::string base = cache.timingCachePath("10.3.0", "Orin (nvgpu), sm_87");
    EXPECT_EQ(fs::path(base).parent_path().string(), cache.directory());
    EXPECT_EQ(cache.timingCachePath("10.3.0", "Orin (nvgpu), sm_87"), base);
    const std::set<std::string> paths {base, cache.timingCachePath("10.3.1", "Orin (nvgpu), sm_87"),
        cache.timingCachePath("10.3.0", "Xavier, sm_72"),
        cache.timingCachePath("8.6.2", "Orin (nvgpu), sm_87")};
    EXPECT_EQ(paths.size(), 4u);
}

TEST(PlanCache, CalibrationTablePathsFollowTheKey)
{
    test::TempDir tmp;
    const PlanCache cache = PlanCache::open(tmp.path());
    ASSERT_TRUE(cache.usable()) << cache.warning();
    PlanKeyInputs a = sampleInputs();
    a.calibrationKey = "set-1";
    PlanKeyInputs b = a;
    b.calibrationKey = "set-2";
    const std::string pathA = cache.calibrationTablePath(calibrationTableKey(a));
    EXPECT_EQ(fs::path(pathA).parent_path().string(), cache.directory());
    EXPECT_EQ(cache.calibrationTablePath(calibrationTableKey(a)), pathA);
    EXPECT_NE(cache.calibrationTablePath(calibrationTableKey(b)), pathA);
    EXPECT_NE(pathA, cache.timingCachePath(a.tensorrtVersion, a.gpuName));
}

TEST(PlanCache, ListsThePlansOldestFirst)
{
    test::TempDir tmp;
    EXPECT_TRUE(PlanCache::listPlans(tmp.path())->empty()) << "no tensorrt/ directory yet";
    EXPECT_FALSE(fs::exists(tmp / "tensorrt")) << "listing creates nothing";

    const PlanCache cache = PlanCache::open(tmp.path());
    PlanKeyInputs newer = sampleInputs();
    PlanKeyInputs older = sampleInputs();
    older.precision = "fp32";
    PlanMetadata newerMeta = sampleMetadata(newer);
    newerMeta.created = "2026-11-22T10:00:00Z";
    PlanMetadata olderMeta = sampleMetadata(older);
    olderMeta.created = "2026-11-21T10:00:00Z";
    ASSERT_TRUE(cache.storePlan(planKey(newer), samplePlan(10, 1), newerMeta).ok());
    ASSERT_TRUE(cache.storePlan(planKey(older), samplePlan(20, 2), olderMeta).ok());
    test::writeFile(cache.directory() + "/" + std::string(64, 'f') + ".json", "garbage");
    test::writeFile(cache.directory() + "/notes.json", "{}");

    const auto plans = PlanCache::listPlans(tmp.path());
    ASSERT_TRUE(plans.ok()) << plans.status().message();
    ASSERT_EQ(plans->size(), 2u);
    EXPECT_EQ((*plans)[0].inputs.precision, "fp32");
    EXPECT_EQ((*plans)[0].planBytes, 20u);
    EXPECT_EQ((*plans)[1].inputs.precision, "fp16");
    EXPECT_EQ((*plans)[1].created, "2026-11-22T10:00:00Z");
}

TEST(AtomicFile, WritesAndReplacesLeavingNoTemporaryFile)
{
    test::TempDir tmp;
    const std::string path = tmp / "table";
    const std::string first = samplePlan(100000, 4);
    ASSERT_TRUE(writeFileAtomically(path, first).ok());
    EXPECT_TRUE(test::readFile(path) == first);
    ASSERT_TRUE(writeFileAtomically(path, "short").ok());
    EXPECT_EQ(test::readFile(path), "short");
    EXPECT_EQ(filesIn(tmp.path()), std::vector<std::string> {"table"});
    struct stat st { };
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644u) << "readable by other users, as files normally are";
}

TEST(AtomicFile, AFailedWriteNamesThePathAndLeavesNothing)
{
    test::TempDir tmp;
    test::writeFile(tmp / "file", "x");
    const std::string path = tmp / "file/table";
    const Status s = writeFileAtomically(path, "bytes");
    EXPECT_EQ(s.kind(), ErrorKind::Io);
    EXPECT_NE(s.message().find("'" + path + "'"), std::string::npos) << s.message();
    EXPECT_EQ(filesIn(tmp.path()), std::vector<std::string> {"file"});

    // Renaming over a directory fails after the temporary file was written: it goes too.
    fs::create_directory(tmp / "dir");
    const Status over = writeFileAtomically(tmp / "dir", "bytes");
    EXPECT_EQ(over.kind(), ErrorKind::Io);
    EXPECT_NE(over.message().find("'" + (tmp / "dir") + "'"), std::string::npos) << over.message();
    EXPECT_EQ(filesIn(tmp.path()), (std::vector<std::string> {"dir", "file"}));
}

TEST(AtomicFile, ReadFileTellsAbsentFromUnreadable)
{
    test::TempDir tmp;
    const auto absent = readFileIfPresent(tmp / "none");
    ASSERT_TRUE(absent.ok()) << absent.status().message();
    EXPECT_FALSE(absent->has_value());

    const std::string bytes = samplePlan(200000, 5);
    test::writeFile(tmp / "plan", bytes);
    const auto read = readFileIfPresent(tmp / "plan");
    ASSERT_TRUE(read.ok()) << read.status().message();
    ASSERT_TRUE(read->has_value());
    EXPECT_TRUE(**read == bytes);

    const auto directory = readFileIfPresent(tmp.path());
    EXPECT_EQ(directory.status().kind(), ErrorKind::Io);
    EXPECT_NE(directory.status().message().find(tmp.path()), std::string::npos)
        << directory.status().message();
}

} // namespace
} // namespace jetagent
