// Fuzz target: text read from sysfs, procfs and /etc. The fixture boards' trees (written once per
// process) have some of their files replaced by fuzz text, removed, or made to fail as a driver
// would; then everything that reads them runs as a run does: board identity, profile selection,
// rail discovery, the power mode, and the sampler reading the rails, thermal zones, clocks and
// fans. The files are put back afterwards, so each input starts from the board as it was.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "jetagent/power/power_monitor.h"
#include "sysfs_fixture.h"

namespace {

using namespace jetagent;

constexpr size_t kMaxInputBytes = 4096;
constexpr int kMaxEdits = 8;
constexpr size_t kMaxFileText = 96;

// The errors a sysfs read gives in the field (see docs/jetson-sysfs.md), for the fault seam.
constexpr int kReadErrors[] = {ENODATA, EAGAIN, EIO, EINVAL, ENXIO, EACCES, ENOENT};

using jetagent::fuzz::fail;

struct BoardTree {
    std::unique_ptr<test::SysfsFixture> fixture;
    std::vector<std::string> files; // the tree's plain files, absolute inside it
};

// One fixture per board, built on first use and kept: their fault tables are merged by the seam.
BoardTree& boardTree(size_t index)
{
    static std::vector<std::unique_ptr<BoardTree>> trees(fixtures::fixtureBoards().size());
    auto& slot = trees[index];
    if (!slot) {
        auto created = test::SysfsFixture::create(fixtures::fixtureBoards()[index]);
        if (!created)
            fail("fixture board: " + created.status().message());
        slot = std::make_unique<BoardTree>();
        slot->fixture = std::move(created).value();
        for (const auto& [path, entry] : slot->fixture->tree().entries())
            if (entry.kind == fixtures::SysfsTree::Entry::Kind::File)
                slot->files.push_back(path);
    }
    return *slot;
}

void writeFile(const std::string& host, const std::string& content, unsigned mode)
{
    fuzz::writeFileOrDie(host, content);
    ::chmod(host.c_str(), mode);
}

// An edit to one file of a board's tree, undone by restore().
struct Edit {
    std::string path; // absolute inside the tree
    bool faulted = false;
};

void restore(BoardTree& tree, const Edit& edit)
{
    const auto& entry = tree.fixture->tree().entries().at(edit.path);
    writeFile(tree.fixture->hostPath(edit.path), entry.content, entry.mode);
    if (!edit.faulted)
        return;
    const auto& faults = tree.fixture->tree().faults();
    const auto original = faults.find(edit.path);
    if (original != faults.end())
        tree.fixture->setFault(edit.path, original->second);
    else
        tree.fixture->clearFault(edit.path);
}

// Sysfs integers as the readers parse them: the result is one of the documented codes.
void checkParse(const std::string& text)
{
    int64_t value = 0;
    const int rc = parseSysfsInt(text.data(), text.size(), value);
    if (rc != 0 && rc != ENODATA && rc != EINVAL && rc != ERANGE)
        fail("parseSysfsInt gave " + std::to_string(rc) + " for '" + text + "'");
}

// Everything that reads the board, as a run does: the power monitor (identity, profile, rail
// discovery, power mode, the board-state reader) and its sampler started and stopped, which
// reads every rail and the board state.
void readBoard(const std::string& root)
{
    PowerMonitorOptions options;
    options.sysfsRoot = root;
    // Fast and small, so that the sampler stops within a millisecond and sets up no large ring.
    options.sampler.railHz = 1000.0;
    options.sampler.stateHz = 1000.0;
    options.sampler.ringCapacity = 64;
    auto monitor = PowerMonitor::open(options);
    if (!monitor)
        fail("the power monitor did not open on a fixture tree: " + monitor.status().message());
    (void)monitor.value()->setup().describe();
    PowerSampler& sampler = monitor.value()->sampler();
    if (Status started = sampler.start(); !started)
        fail("the sampler did not start: " + started.message());
    sampler.stop();
    if (sampler.runStats().rails.size() != sampler.rails().size())
        fail("the run's statistics do not cover every rail");
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/)
{
    jetagent::fuzz::quietLogging();
    // The fixtures go where the harness writes its other files.
    // NOLINTNEXTLINE(concurrency-mt-unsafe): set-up, before any thread
    ::setenv("TMPDIR", jetagent::fuzz::scratchDirectory().c_str(), 1);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size > kMaxInputBytes)
        return -1;
    fuzz::ByteReader in(data, size);
    const size_t boards = fixtures::fixtureBoards().size();
    BoardTree& tree = boardTree(static_cast<size_t>(in.range(0, static_cast<int64_t>(boards) - 1)));

    std::vector<Edit> edits;
    for (int i = 0; i < kMaxEdits && !in.empty(); ++i) {
        Edit edit;
        edit.path = tree.files[static_cast<size_t>(
            in.range(0, static_cast<int64_t>(tree.files.size()) - 1))];
        const std::string host = tree.fixture->hostPath(edit.path);
        switch (in.range(0, 3)) {
        case 0: // the file is gone (a driver that does not create it)
            ::unlink(host.c_str());
            break;
        case 1: // reads fail
            edit.faulted = true;
            tree.fixture->setFault(edit.path, kReadErrors[in.range(0, std::size(kReadErrors) - 1)]);
            break;
        default: { // other text
            const std::string text = in.text(static_cast<size_t>(in.range(0, kMaxFileText)));
            checkParse(text);
            writeFile(host, text, tree.fixture->tree().entries().at(edit.path).mode);
            break;
        }
        }
        edits.push_back(edit);
    }
    readBoard(tree.fixture->hostRoot());
    // Undone newest first, so a file edited twice ends as the tree had it.
    for (auto it = edits.rbegin(); it != edits.rend(); ++it)
        restore(tree, *it);
    return 0;
}
