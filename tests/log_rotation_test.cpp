// Per-frame logs on disk: rotation by size under a total cap, full and read-only disks.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "output/frame_log.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace jetagent {
namespace {

constexpr uint64_t kSegmentBytes = 4096;

FrameRecord recordNumber(uint64_t id)
{
    FrameRecord r;
    r.frameId = id;
    r.capturedNs = 1'000'000'000 + static_cast<int64_t>(id) * 33'000'000;
    r.dequeuedNs = r.capturedNs + 500'000;
    r.preprocessedNs = r.dequeuedNs + 1'000'000;
    r.inferredNs = r.preprocessedNs + 3'000'000;
    r.doneNs = r.inferredNs + 250'000;
    r.batch = 1;
    r.topK = 2;
    r.labels = {static_cast<int>(id % 2), static_cast<int>((id + 1) % 2)};
    r.scores = {0.75f, 0.25f};
    r.truth = 0;
    return r;
}

void submitRange(TaskLog& log, uint64_t first, uint64_t count)
{
    for (uint64_t id = first; id < first + count; ++id)
        log.submit(recordNumber(id));
}

// The segments of one format in a directory, in name order (which is also their order in time).
std::vector<std::string> segments(const std::string& dir, const std::string& ext)
{
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        if (name.rfind("t.frames", 0) == 0 && e.path().extension() == ext)
            out.push_back(e.path().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

uint64_t csvFrame(const std::string& line)
{
    return std::stoull(line.substr(0, line.find(',')));
}

// Every per-frame file under `root`, and their total size.
uint64_t perFrameBytes(const std::string& root)
{
    uint64_t total = 0;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
        const std::string name = e.path().filename().string();
        if (e.is_regular_file() && name.find(".frames") != std::string::npos)
            total += e.file_size();
    }
    return total;
}

// Waits (without asserting on time) until the writer has taken `records` records off the queue.
bool drained(const TaskLog& log, uint64_t records)
{
    for (int i = 0; i < 3000 && log.written() + log.linesDroppedDisk() < records; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return log.written() + log.linesDroppedDisk() == records;
}

TEST(LogRotation, SegmentsRotateAtTheSizeAndHoldEveryLineOnce)
{
    test::TempDir dir;
    constexpr uint64_t kRecords = 400;
    TaskLog log("t", {"cat", "dog"}, 1024);
    submitRange(log, 0, kRecords);
    FrameLogWriter writer;
    FrameLogOptions options;
    options.maxFileBytes = kSegmentBytes;
    ASSERT_TRUE(writer.open(dir.path(), {&log}, true, true, options).ok());
    writer.start();
    writer.stop();
    EXPECT_EQ(log.written(), kRecords);
    EXPECT_EQ(log.linesDroppedDisk(), 0u);

    const auto csv = segments(dir.path(), ".csv");
    const auto jsonl = segments(dir.path(), ".jsonl");
    ASSERT_GE(csv.size(), 4u); // 400 lines of about 80 bytes: several rotations
    ASSERT_GE(jsonl.size(), 4u);
    EXPECT_EQ(csv[0], dir / "t.frames.csv");
    EXPECT_EQ(csv[1], dir / "t.frames_000001.csv");
    EXPECT_EQ(jsonl[0], dir / "t.frames.jsonl");
    EXPECT_EQ(log.csvPath(), csv[0]);
    EXPECT_EQ(log.segmentsWritten(), csv.size() + jsonl.size());

    uint64_t bytes = 0;
    uint64_t next = 0;
    for (size_t i = 0; i < csv.size(); ++i) {
        const auto lines = test::readLines(csv[i]);
        ASSERT_GE(lines.size(), 2u) << csv[i];
        EXPECT_EQ(lines[0], kFrameCsvHeader) << csv[i]; // each segment stands on its own
        for (size_t l = 1; l < lines.size(); ++l)
            EXPECT_EQ(csvFrame(lines[l]), next++) << csv[i] << " line " << l + 1;
        const uint64_t size = fs::file_size(csv[i]);
        bytes += size;
        EXPECT_LE(size, kSegmentBytes) << csv[i];
        // Rotated because the next line would not have fitted, not earlier.
        if (i + 1 < csv.size()) {
            EXPECT_GT(size + test::readLines(csv[i + 1])[1].size() + 1, kSegmentBytes) << csv[i];
        }
    }
    EXPECT_EQ(next, kRecords);

    next = 0;
    for (const auto& path : jsonl) {
        bytes += fs::file_size(path);
        EXPECT_LE(fs::file_size(path), kSegmentBytes) << path;
        for (const auto& line : test::readLines(path))
            EXPECT_EQ(nlohmann::json::parse(line)["frame"].get<uint64_t>(), next++) << path;
    }
    EXPECT_EQ(next, kRecords);
    EXPECT_EQ(log.bytesWritten(), bytes);
}

TEST(LogRotation, WithoutALimitThereIsOneFile)
{
    test::TempDir dir;
    TaskLog log("t", {"cat", "dog"}, 1024);
    submitRange(log, 0, 400);
    FrameLogWriter writer;
    ASSERT_TRUE(writer.open(dir.path(), {&log}, true, false).ok());
    writer.start();
    writer.stop();
    ASSERT_EQ(segments(dir.path(), ".csv").size(), 1u);
    EXPECT_EQ(test::readLines(dir / "t.frames.csv").size(), 401u);
    EXPECT_EQ(log.segmentsWritten(), 1u);
}

// Files of earlier runs under the log root, oldest first, each `bytes` long with the given age.
struct OldFile {
    std::string path;
    int ageS;
};

void makeOld(const OldFile& f, size_t bytes)
{
    fs::create_directories(fs::path(f.path).parent_path());
    test::writeFile(f.path, std::string(bytes - 1, 'x') + "\n");
    fs::last_write_time(f.path, fs::file_time_type::clock::now() - std::chrono::seconds(f.ageS));
}

// The segment numbers of one format left in a run directory, lowest first.
std::vector<int> segmentNumbers(const std::string& dir, const std::string& ext)
{
    std::vector<int> out;
    for (const auto& path : segments(dir, ext)) {
        const std::string name = fs::path(path).stem().string(); // t.frames or t.frames_000012
        const size_t underscore = name.rfind('_');
        out.push_back(underscore == std::string::npos ? 0 : std::stoi(name.substr(underscore + 1)));
    }
    std::sort(out.begin(), out.end());
    return out;
}

TEST(LogRotation, TheCapHoldsAcrossRunsAndRemovesTheOldestFirst)
{
    test::TempDir root;
    constexpr uint64_t kCap = 8 * kSegmentBytes;
    // Two earlier runs, a day apart, whose closed segments together exceed what the cap leaves
    // beside the two files this run writes.
    const std::vector<OldFile> old = {{root / "run-a/t.frames.csv", 3 * 86400},
        {root / "run-a/t.frames.jsonl", 3 * 86400 - 1},
        {root / "run-a/t.frames_000001.csv", 3 * 86400 - 2},
        {root / "run-b/t.frames.csv", 2 * 86400}, {root / "run-b/t.frames.jsonl", 2 * 86400 - 1},
        {root / "run-b/t.frames_000001.csv", 2 * 86400 - 2}};
    for (const auto& f : old)
        makeOld(f, 5000);
    for (const char* run : {"run-a", "run-b"}) {
        test::writeFile(root / (std::string(run) + "/summary.json"), "{}\n");
        test::writeFile(root / (std::string(run) + "/summary.txt"), "summary\n");
        test::writeFile(root / (std::string(run) + "/config.yaml"), "tasks: []\n");
    }
    FrameLogOptions options;
    options.root = root.path();
    options.maxFileBytes = kSegmentBytes;
    options.maxTotalBytes = kCap;

    // At open: 30000 bytes closed + 2 open files of up to 4096 exceed 32768; the two oldest go.
    const std::string runC = root / "run-c";
    fs::create_directory(runC);
    {
        TaskLog log("t", {"cat", "dog"}, 4096);
        FrameLogWriter writer;
        ASSERT_TRUE(writer.open(runC, {&log}, true, true, options).ok());
        EXPECT_FALSE(fs::exists(old[0].path));
        EXPECT_FALSE(fs::exists(old[1].path));
        for (size_t i = 2; i < old.size(); ++i)
            EXPECT_TRUE(fs::exists(old[i].path)) << old[i].path;
        writer.stop();
        EXPECT_EQ(log.segmentsRemoved(), 0u);
    }
    fs::remove_all(runC);

    // Two runs in turn, as a reload makes them, each writing enough for many rotations.
    std::string previous;
    for (const char* run : {"run-d", "run-e"}) {
        const std::string dir = root / run;
        fs::create_directory(dir);
        TaskLog log("t", {"cat", "dog"}, 4096);
        submitRange(log, 0, 2000);
        FrameLogWriter writer;
        ASSERT_TRUE(writer.open(dir, {&log}, true, true, options).ok());
        writer.start();
        writer.stop();
        EXPECT_EQ(log.written(), 2000u);
        test::writeFile(dir + "/summary.json", "{}\n");
        EXPECT_LE(perFrameBytes(root.path()), kCap) << "after " << run;

        // Within the run, each format lost its oldest segments and kept the rest, the last one
        // (being written when the run ended) included.
        uint64_t removed = 0;
        for (const char* ext : {".csv", ".jsonl"}) {
            const auto numbers = segmentNumbers(dir, ext);
            ASSERT_FALSE(numbers.empty()) << run << ext;
            for (size_t i = 1; i < numbers.size(); ++i)
                EXPECT_EQ(numbers[i], numbers[i - 1] + 1) << run << ext << ": a newer one went";
            removed += static_cast<uint64_t>(numbers.front());
        }
        EXPECT_GT(removed, 0u) << run;
        EXPECT_EQ(log.segmentsRemoved(), removed) << run;
        EXPECT_EQ(log.segmentsWritten(),
            removed + segments(dir, ".csv").size() + segments(dir, ".jsonl").size());
        // A run's segments went only once every earlier run's had gone.
        for (const auto& f : old)
            EXPECT_FALSE(fs::exists(f.path)) << f.path;
        if (!previous.empty()) {
            EXPECT_EQ(segments(previous, ".csv").size() + segments(previous, ".jsonl").size(), 0u);
        }
        previous = dir;
    }
    for (const auto& f : old)
        EXPECT_FALSE(fs::exists(f.path)) << f.path;
    for (const char* run : {"run-a", "run-b"}) {
        EXPECT_TRUE(fs::exists(root / (std::string(run) + "/summary.json")));
        EXPECT_TRUE(fs::exists(root / (std::string(run) + "/summary.txt")));
        EXPECT_TRUE(fs::exists(root / (std::string(run) + "/config.yaml")));
    }
    EXPECT_TRUE(fs::exists(root / "run-d/summary.json"));
    EXPECT_TRUE(fs::exists(root / "run-e/summary.json"));
}

TEST(LogRotation, AFileBeingWrittenIsNeverRemovedHoweverOld)
{
    test::TempDir dir;
    // Two files open: an idle task's, older than anything the busy task closes, and the busy one's.
    TaskLog idle("idle", {"cat", "dog"}, 16);
    TaskLog busy("t", {"cat", "dog"}, 1024);
    idle.submit(recordNumber(0));
    submitRange(busy, 0, 400);
    FrameLogOptions options;
    options.root = dir.path();
    options.maxFileBytes = kSegmentBytes;
    options.maxTotalBytes = 4 * kSegmentBytes;
    FrameLogWriter writer;
    ASSERT_TRUE(writer.open(dir.path(), {&idle, &busy}, true, false, options).ok());
    EXPECT_EQ(writer.segmentBytes(), kSegmentBytes); // two files fill half of the cap at most
    writer.start();
    writer.stop();
    EXPECT_EQ(test::readLines(dir / "idle.frames.csv").size(), 2u);
    EXPECT_EQ(idle.segmentsRemoved(), 0u);
    EXPECT_GT(busy.segmentsRemoved(), 0u);
    EXPECT_TRUE(fs::exists(segments(dir.path(), ".csv").back()));
    EXPECT_LE(perFrameBytes(dir.path()), options.maxTotalBytes);
}

TEST(LogRotation, ManyOpenFilesGetSmallerSegmentsSoThatTheCapHolds)
{
    test::TempDir dir;
    std::vector<std::unique_ptr<TaskLog>> logs;
    std::vector<TaskLog*> raw;
    for (int i = 0; i < 4; ++i) {
        logs.push_back(std::make_unique<TaskLog>(
            "t" + std::to_string(i), std::vector<std::string> {"a"}, 1024));
        submitRange(*logs.back(), 0, 300);
        raw.push_back(logs.back().get());
    }
    FrameLogOptions options;
    options.root = dir.path();
    options.maxFileBytes = kSegmentBytes;
    options.maxTotalBytes = 2 * kSegmentBytes; // allowed by the config for one file, not eight
    FrameLogWriter writer;
    ASSERT_TRUE(writer.open(dir.path(), raw, true, true, options).ok());
    EXPECT_EQ(writer.segmentBytes(), 2 * kSegmentBytes / 16);
    writer.start();
    writer.stop();
    EXPECT_LE(perFrameBytes(dir.path()), options.maxTotalBytes);
    for (const auto& log : logs)
        EXPECT_EQ(log->written(), 300u);
}

// While `full`, every file the writer creates is /dev/full, where the kernel fails each write with
// ENOSPC, as a full disk does.
class FullDisk : public FrameLogFiles {
public:
    std::atomic<bool> full {true};
    std::atomic<int> creates {0};

    int create(const std::string& path) override
    {
        ++creates;
        if (!full)
            return FrameLogFiles::create(path);
        const int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
        return fd >= 0 ? fd : -errno;
    }
};

TEST(LogDiskErrors, AFullDiskDropsLinesAndTheLogResumesWhenThereIsSpace)
{
    if (::access("/dev/full", W_OK) != 0)
        GTEST_SKIP() << "no writable /dev/full here";
    test::TempDir dir;
    constexpr uint64_t kRecords = 50;
    FullDisk disk;
    FrameLogOptions options;
    options.files = &disk;
    options.retryNs = 0; // retry at the next line: the test needs no clock
    TaskLog log("t", {"cat", "dog"}, 1024);
    submitRange(log, 0, kRecords); // all in the writer's first drain, while the disk is full
    FrameLogWriter writer;
    ASSERT_TRUE(writer.open(dir.path(), {&log}, true, true, options).ok());
    writer.start();
    ASSERT_TRUE(drained(log, kRecords));
    EXPECT_EQ(log.linesDroppedDisk(), kRecords);
    EXPECT_EQ(log.written(), 0u);
    EXPECT_EQ(log.lastWriteErrno(), ENOSPC);
    EXPECT_GT(disk.creates.load(), 2); // it kept trying

    disk.full = false;
    submitRange(log, kRecords, kRecords);
    ASSERT_TRUE(drained(log, 2 * kRecords));
    writer.stop();
    EXPECT_EQ(log.lost(), 0u); // the queue never filled: these are disk drops only
    EXPECT_EQ(log.linesDroppedDisk(), kRecords);
    EXPECT_EQ(log.written(), kRecords);
    EXPECT_GT(log.writeErrors(), 0u);

    // The healthy files hold the later lines, each once; nothing of the full disk's is left.
    const auto csv = test::readLines(dir / "t.frames.csv");
    ASSERT_EQ(csv.size(), kRecords + 1);
    EXPECT_EQ(csv[0], kFrameCsvHeader);
    for (uint64_t i = 0; i < kRecords; ++i)
        EXPECT_EQ(csvFrame(csv[i + 1]), kRecords + i);
    const auto jsonl = test::readLines(dir / "t.frames.jsonl");
    ASSERT_EQ(jsonl.size(), kRecords);
    EXPECT_EQ(nlohmann::json::parse(jsonl[0])["frame"].get<uint64_t>(), kRecords);
    EXPECT_EQ(segments(dir.path(), ".csv").size(), 1u);
}

// A file system that turns read-only after `budget` bytes, in the middle of a line: the write that
// crosses the limit is cut short, and every later write and create fails with EROFS.
class ReadOnlyAfter : public FrameLogFiles {
public:
    explicit ReadOnlyAfter(size_t budget) : budget_(budget) { }
    std::atomic<bool> readOnly {false};

    int create(const std::string& path) override
    {
        return readOnly ? -EROFS : FrameLogFiles::create(path);
    }
    ssize_t write(int fd, const char* data, size_t size) override
    {
        if (readOnly) {
            errno = EROFS;
            return -1;
        }
        if (!tripped_ && size >= budget_) {
            size = budget_;
            readOnly = true;
            tripped_ = true; // once writable again, it stays so
        }
        if (!tripped_)
            budget_ -= size;
        return FrameLogFiles::write(fd, data, size);
    }

private:
    size_t budget_;
    bool tripped_ = false;
};

TEST(LogDiskErrors, AReadOnlyDiskKeepsOnlyWholeLinesAndTheLogResumesInANewSegment)
{
    test::TempDir dir;
    constexpr uint64_t kRecords = 40;
    // The CSV header and ten lines and a half go in; the JSON Lines file gets nothing.
    std::string line;
    TaskLog log("t", {"cat", "dog"}, 1024);
    log.formatCsv(recordNumber(0), line);
    ReadOnlyAfter disk(
        std::string(kFrameCsvHeader).size() + 1 + 10 * line.size() + line.size() / 2);
    FrameLogOptions options;
    options.files = &disk;
    options.retryNs = 0;
    submitRange(log, 0, kRecords);
    FrameLogWriter writer;
    ASSERT_TRUE(writer.open(dir.path(), {&log}, true, true, options).ok());
    writer.start();
    ASSERT_TRUE(drained(log, kRecords));
    EXPECT_EQ(log.lastWriteErrno(), EROFS);
    EXPECT_EQ(log.linesDroppedDisk(), kRecords); // all of them from the JSON Lines file
    EXPECT_EQ(log.written(), 0u);

    disk.readOnly = false;
    submitRange(log, kRecords, kRecords);
    ASSERT_TRUE(drained(log, 2 * kRecords));
    writer.stop();
    EXPECT_EQ(log.written(), kRecords);
    EXPECT_EQ(log.linesDroppedDisk(), kRecords);

    // The first segment ends with its last whole line: the torn one was cut off.
    const std::string first = test::readFile(dir / "t.frames.csv");
    ASSERT_FALSE(first.empty());
    EXPECT_EQ(first.back(), '\n');
    const auto lines = test::readLines(dir / "t.frames.csv");
    ASSERT_EQ(lines.size(), 11u);
    for (uint64_t i = 0; i < 10; ++i)
        EXPECT_EQ(csvFrame(lines[i + 1]), i);
    // Then a new segment with its own header and the lines written after the disk came back.
    const auto second = test::readLines(dir / "t.frames_000001.csv");
    ASSERT_EQ(second.size(), kRecords + 1);
    EXPECT_EQ(second[0], kFrameCsvHeader);
    EXPECT_EQ(csvFrame(second[1]), kRecords);
    EXPECT_EQ(csvFrame(second.back()), 2 * kRecords - 1);
    // The JSON Lines file had nothing when the disk went: it starts over under its first name.
    const auto jsonl = test::readLines(dir / "t.frames.jsonl");
    ASSERT_EQ(jsonl.size(), kRecords);
    EXPECT_EQ(nlohmann::json::parse(jsonl[0])["frame"].get<uint64_t>(), kRecords);
}

} // namespace
} // namespace jetagent
