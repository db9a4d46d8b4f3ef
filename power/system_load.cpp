// RAM, swap, largest free block, per-core CPU load, EMC load and engine clocks, as tegrastats reads
// them, under a SysfsRoot.
#include "jetagent/power/system_load.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <string_view>

#include "jetagent/base/log.h"

namespace jetagent {

namespace {

constexpr const char* kMeminfo = "/proc/meminfo";
constexpr const char* kBuddyinfo = "/proc/buddyinfo";
constexpr const char* kProcStat = "/proc/stat";
// actmon's average memory-controller activity. JetPack 4 kernels (and JetPack 5 on Xavier, where
// tegrastats' own source list names it) expose it in sysfs; later kernels moved it into debugfs as
// cactmon (where jetson-stats' memory reader looks first). Both need root for debugfs or sysfs.
constexpr const char* kActmonSysfs = "/sys/kernel/actmon_avg_activity/mc_all";
constexpr const char* kActmonDebugfs = "/sys/kernel/debug/cactmon/mc_all";
// Engine clocks. The common clock framework's debugfs gives each clock a folder with
// clk_enable_count and clk_rate (drivers/clk/clk.c); on BPMP boards (Xavier, Orin) tegrastats takes
// the rate from the BPMP's own debugfs instead, so that one is preferred where it exists.
constexpr const char* kClkDebugfs = "/sys/kernel/debug/clk/";
constexpr const char* kBpmpClkDebugfs = "/sys/kernel/debug/bpmp/debug/clk/";
// The engines tegrastats reports, in the order shown. Names per the clock trees tegrastats reads
// (Xavier: nvdec, nvdec1, nvenc, nvenc1, nvjpg); vic and dla0/1 as the kernel's clock names.
constexpr const char* kEngineNames[] = {
    "nvdec", "nvdec1", "nvenc", "nvenc1", "nvjpg", "nvjpg1", "vic", "dla0", "dla1"};
// Jetson and x86 Linux kernels run 4 kB pages; buddyinfo counts blocks of 2^order pages.
constexpr int64_t kPageKB = 4;
// /proc/stat's per-core lines come first; the interrupt counts after them can run to many kB and
// are not needed, so the read stops at this size.
constexpr size_t kStatBuffer = 16384;
constexpr size_t kSmallBuffer = 8192;
constexpr int kMaxOrder = 20; // buddyinfo has MAX_ORDER (11 on arm64 4 kB pages) columns

// The lines of a buffer, without copying.
class Lines {
public:
    Lines(const char* text, size_t length) : rest_(text, length) { }
    bool next(std::string_view& line)
    {
        if (rest_.empty())
            return false;
        const size_t end = rest_.find('\n');
        line = rest_.substr(0, end);
        rest_ = end == std::string_view::npos ? std::string_view() : rest_.substr(end + 1);
        return true;
    }

private:
    std::string_view rest_;
};

void skipBlanks(std::string_view& text)
{
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
        text.remove_prefix(1);
}

// Reads an unsigned decimal at the start of `text` (after blanks); false when there is none or it
// overflows.
bool takeUnsigned(std::string_view& text, uint64_t& value)
{
    skipBlanks(text);
    if (text.empty() || !std::isdigit(static_cast<unsigned char>(text.front())))
        return false;
    value = 0;
    while (!text.empty() && std::isdigit(static_cast<unsigned char>(text.front()))) {
        const auto digit = static_cast<uint64_t>(text.front() - '0');
        if (value > (UINT64_MAX - digit) / 10)
            return false;
        value = value * 10 + digit;
        text.remove_prefix(1);
    }
    return true;
}

bool startsWith(std::string_view text, std::string_view prefix)
{
    return text.size() >= prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}

// "MemTotal:        4059212 kB" -> 4059212; false when the value is not a number.
bool meminfoValue(std::string_view line, std::string_view key, int64_t& value)
{
    if (!startsWith(line, key) || line.size() <= key.size() || line[key.size()] != ':')
        return false;
    std::string_view rest = line.substr(key.size() + 1);
    uint64_t number = 0;
    if (!takeUnsigned(rest, number) || number > static_cast<uint64_t>(INT64_MAX))
        return false;
    value = static_cast<int64_t>(number);
    return true;
}

} // namespace

int parseMeminfo(const char* text, size_t length, MemoryUse& memory)
{
    memory = MemoryUse {};
    int64_t total = -1, available = -1, swapTotal = -1, swapFree = -1;
    Lines lines(text, length);
    std::string_view line;
    while (lines.next(line)) {
        int64_t value = 0;
        if (meminfoValue(line, "MemTotal", value))
            total = value;
        else if (meminfoValue(line, "MemAvailable", value))
            available = value;
        else if (meminfoValue(line, "SwapTotal", value))
            swapTotal = value;
        else if (meminfoValue(line, "SwapFree", value))
            swapFree = value;
    }
    if (total <= 0 || available < 0 || available > total)
        return EINVAL;
    memory.online = true;
    memory.ramTotalKB = total;
    memory.ramUsedKB = total - available;
    if (swapTotal > 0 && swapFree >= 0 && swapFree <= swapTotal) {
        memory.swapTotalKB = swapTotal;
        memory.swapUsedKB = swapTotal - swapFree;
    }
    return 0;
}

int parseBuddyinfo(const char* text, size_t length, int64_t pageKB, LargestFreeBlock& block)
{
    block = LargestFreeBlock {};
    int highest = -1;
    int64_t count = 0;
    bool anyZone = false;
    Lines lines(text, length);
    std::string_view line;
    while (lines.next(line)) {
        // "Node 0, zone   Normal   12   5 ..." : the counts follow the zone's name.
        const size_t zone = line.find("zone");
        if (!startsWith(line, "Node") || zone == std::string_view::npos)
            continue;
        std::string_view rest = line.substr(zone + 4);
        skipBlanks(rest);
        while (!rest.empty() && rest.front() != ' ' && rest.front() != '\t')
            rest.remove_prefix(1); // the zone's name
        // The line's own highest order and its count, merged only once the line proved whole.
        uint64_t free = 0;
        int order = 0;
        int lineHighest = -1;
        int64_t lineCount = 0;
        bool any = false;
        while (order <= kMaxOrder && takeUnsigned(rest, free)) {
            any = true;
            if (free > 0) {
                lineHighest = order;
                lineCount = static_cast<int64_t>(free);
            }
            ++order;
        }
        skipBlanks(rest);
        if (!any || !rest.empty())
            continue; // a damaged line: its counts are not trusted
        anyZone = true;
        if (lineHighest > highest) {
            highest = lineHighest;
            count = lineCount;
        } else if (lineHighest == highest && lineHighest >= 0) {
            count += lineCount;
        }
    }
    if (!anyZone)
        return EINVAL;
    block.online = true;
    if (highest >= 0) {
        block.blockKB = pageKB << highest;
        block.count = count;
    }
    return 0;
}

int parseProcStat(
    const char* text, size_t length, std::array<CpuTimes, kMaxLoadCpus>& cores, int& count)
{
    cores.fill(CpuTimes {});
    count = 0;
    Lines lines(text, length);
    std::string_view line;
    while (lines.next(line)) {
        // "cpu3 user nice system idle iowait irq softirq steal guest guest_nice": guest time is
        // already counted in user, so it is left out here. The "cpu " line is all cores together.
        if (!startsWith(line, "cpu") || line.size() < 4 ||
            !std::isdigit(static_cast<unsigned char>(line[3])))
            continue;
        std::string_view rest = line.substr(3);
        uint64_t core = 0;
        if (!takeUnsigned(rest, core) || core >= static_cast<uint64_t>(kMaxLoadCpus))
            continue;
        std::array<uint64_t, 8> field {};
        size_t read = 0;
        while (read < field.size() && takeUnsigned(rest, field[read]))
            ++read;
        // Kernels before 2.6.11 had fewer columns; four (through idle) is the least that says
        // anything.
        if (read < 4)
            continue;
        CpuTimes& times = cores[core];
        const uint64_t idle = field[3] + field[4];
        times.busy = field[0] + field[1] + field[2] + field[5] + field[6] + field[7];
        times.total = times.busy + idle;
        times.valid = true;
        count = std::max(count, static_cast<int>(core) + 1);
    }
    return count > 0 ? 0 : EINVAL;
}

double cpuLoadPercent(const CpuTimes& before, const CpuTimes& after)
{
    if (!before.valid || !after.valid || after.total <= before.total || after.busy < before.busy)
        return -1.0;
    const uint64_t total = after.total - before.total;
    const uint64_t busy = after.busy - before.busy;
    if (busy > total)
        return -1.0;
    return 100.0 * static_cast<double>(busy) / static_cast<double>(total);
}

double emcLoadPercent(int64_t mcAllKHz, int64_t emcHz)
{
    if (mcAllKHz < 0 || emcHz <= 0)
        return -1.0;
    return 100.0 * static_cast<double>(mcAllKHz) / (static_cast<double>(emcHz) / 1000.0);
}

struct SystemLoadReader::Impl {
    struct Engine {
        SysfsAttribute enableCount;
        SysfsAttribute rate;
    };

    SysfsAttribute meminfo;
    SysfsAttribute buddyinfo;
    SysfsAttribute stat;
    SysfsAttribute actmon;
    std::vector<std::string> engineNames;
    std::vector<Engine> engines;
    std::vector<char> buffer = std::vector<char>(kStatBuffer);
    std::array<CpuTimes, kMaxLoadCpus> previous {};
    std::array<CpuTimes, kMaxLoadCpus> current {};

    void discoverEngines(const SysfsRoot& root)
    {
        for (const char* name : kEngineNames) {
            const std::string clk = std::string(kClkDebugfs) + name;
            Engine engine;
            // The on/off state needs the enable count: a rate alone says nothing of whether the
            // engine runs (a gated clock keeps its rate).
            if (engine.enableCount.open(root.path(clk + "/clk_enable_count")) != 0)
                continue;
            const std::string bpmpRate = std::string(kBpmpClkDebugfs) + name + "/rate";
            if (!root.exists(bpmpRate) || engine.rate.open(root.path(bpmpRate)) != 0)
                engine.rate.open(root.path(clk + "/clk_rate"));
            engineNames.emplace_back(name);
            engines.push_back(std::move(engine));
        }
    }

    // The attribute's text in `buffer` (up to `limit` bytes); 0 or the read's errno.
    int readInto(const SysfsAttribute& file, size_t limit, size_t& length)
    {
        return file.readText(buffer.data(), std::min(limit, buffer.size()), length);
    }

    void readEngines(SystemLoadSample& sample) const
    {
        sample.engines.resize(engines.size());
        for (size_t i = 0; i < engines.size(); ++i) {
            EngineState& out = sample.engines[i];
            out = EngineState {};
            int64_t count = 0;
            if (engines[i].enableCount.readInt(count) != 0)
                continue;
            out.online = true;
            out.on = count > 0;
            int64_t hz = 0;
            if (engines[i].rate.isOpen() && engines[i].rate.readInt(hz) == 0)
                out.hz = hz;
        }
    }
};

SystemLoadReader::SystemLoadReader(const SysfsRoot& root) : impl_(std::make_unique<Impl>())
{
    impl_->meminfo.open(root.path(kMeminfo));
    impl_->buddyinfo.open(root.path(kBuddyinfo));
    impl_->stat.open(root.path(kProcStat));
    if (impl_->actmon.open(root.path(kActmonSysfs)) != 0)
        impl_->actmon.open(root.path(kActmonDebugfs));
    impl_->discoverEngines(root);
    logger("power")->debug("system load: meminfo {}, buddyinfo {}, /proc/stat {}, actmon {}, {} "
                           "engine clocks",
        haveMemory() ? "yes" : "no", haveLargestFree() ? "yes" : "no", haveCpuLoad() ? "yes" : "no",
        haveEmcLoad() ? impl_->actmon.path() : "no", impl_->engines.size());
}

SystemLoadReader::~SystemLoadReader() = default;

bool SystemLoadReader::haveMemory() const
{
    return impl_->meminfo.isOpen();
}

bool SystemLoadReader::haveLargestFree() const
{
    return impl_->buddyinfo.isOpen();
}

bool SystemLoadReader::haveCpuLoad() const
{
    return impl_->stat.isOpen();
}

bool SystemLoadReader::haveEmcLoad() const
{
    return impl_->actmon.isOpen();
}

const std::vector<std::string>& SystemLoadReader::engines() const
{
    return impl_->engineNames;
}

void SystemLoadReader::read(int64_t emcHz, SystemLoadSample& sample)
{
    Impl& s = *impl_;
    size_t length = 0;

    sample.memory = MemoryUse {};
    if (s.meminfo.isOpen() && s.readInto(s.meminfo, kSmallBuffer, length) == 0)
        parseMeminfo(s.buffer.data(), length, sample.memory);

    sample.largestFree = LargestFreeBlock {};
    if (s.buddyinfo.isOpen() && s.readInto(s.buddyinfo, kSmallBuffer, length) == 0)
        parseBuddyinfo(s.buffer.data(), length, kPageKB, sample.largestFree);

    sample.cpuLoadPercent.fill(-1.0);
    int count = 0;
    if (s.stat.isOpen() && s.readInto(s.stat, kStatBuffer, length) == 0 &&
        parseProcStat(s.buffer.data(), length, s.current, count) == 0) {
        for (int c = 0; c < count; ++c)
            sample.cpuLoadPercent[static_cast<size_t>(c)] = cpuLoadPercent(
                s.previous[static_cast<size_t>(c)], s.current[static_cast<size_t>(c)]);
        s.previous = s.current;
    } else {
        // A failed read breaks the chain of deltas: the next good read starts it again.
        s.previous.fill(CpuTimes {});
    }
    sample.cpuCount = count;

    sample.emcLoadPercent = -1.0;
    int64_t mcAll = 0;
    if (s.actmon.isOpen() && s.actmon.readInt(mcAll) == 0)
        sample.emcLoadPercent = emcLoadPercent(mcAll, emcHz);

    s.readEngines(sample);
}

} // namespace jetagent
