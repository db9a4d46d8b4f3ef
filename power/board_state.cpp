// Board state discovery and reading: thermal zones, GPU, CPU/EMC clocks, throttling, fan, power
// mode.
#include "jetagent/power/board_state.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <functional>
#include <mutex>
#include <set>
#include <utility>

#include "jetagent/base/log.h"
#include "jetagent/base/text.h"

namespace jetagent {

namespace {

// devfreq devices whose device-tree node has one of these names are the integrated GPU.
constexpr const char* kGpuNodeNames[] = {"gv11b", "gp10b", "ga10b", "gb10b", "gpu"};
constexpr const char* kEmcRate = "/sys/kernel/debug/bpmp/debug/clk/emc/rate";
// Boards without a BPMP (Nano and TX1, T210) keep the EMC clock in the clock framework's debugfs,
// where tegrastats-era tools and jetson-stats read it.
constexpr const char* kEmcClkRate = "/sys/kernel/debug/clk/emc/clk_rate";
constexpr const char* kJetPack4Fan = "/sys/devices/pwm-fan";
constexpr const char* kNvpmodelStatus = "/var/lib/nvpmodel/status";
constexpr const char* kNvpmodelConf = "/etc/nvpmodel.conf";
constexpr double kDevfreqLoadPerPercent = 10.0; // devfreq load is 0..1000

const char* errnoName(int error)
{
    switch (error) {
    case EAGAIN: return "EAGAIN";
    case ENODATA: return "ENODATA";
    case EIO: return "EIO";
    case EINVAL: return "EINVAL (not a number)";
    case ERANGE: return "ERANGE (out of range)";
    case ENODEV: return "ENODEV";
    case ENXIO: return "ENXIO";
    case EBUSY: return "EBUSY";
    case ETIMEDOUT: return "ETIMEDOUT";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case EBADF: return "not open";
    default: return "read error";
    }
}

// Reasons built from a profile ("power-gated (-256000)") kept for the life of the process, so that
// ZoneReading can carry a plain pointer. Bounded by the profiles' distinct reasons.
const char* internReason(const std::string& text)
{
    static std::mutex mutex;
    static std::set<std::string, std::less<>> reasons;
    const std::lock_guard<std::mutex> lock(mutex);
    return reasons.insert(text).first->c_str();
}

std::string badReadingReason(const BadThermalReading& bad)
{
    return (bad.why.empty() ? std::string("bad reading") : bad.why) + " (" +
        std::to_string(bad.milliCelsius) + ")";
}

ZoneReading offline(const char* reason)
{
    ZoneReading reading;
    reading.online = false;
    reading.offlineReason = reason;
    return reading;
}

// "cpu12" -> 12, "thermal_zone3" -> 3; -1 when `name` is not `prefix` followed by digits only.
int numberAfter(const std::string& name, const std::string& prefix)
{
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0)
        return -1;
    int value = 0;
    for (size_t i = prefix.size(); i < name.size(); ++i) {
        if (!std::isdigit(static_cast<unsigned char>(name[i])) || value > 100000)
            return -1;
        value = value * 10 + (name[i] - '0');
    }
    return value;
}

std::vector<std::pair<int, std::string>> numberedEntries(
    const SysfsRoot& root, const std::string& directory, const std::string& prefix)
{
    std::vector<std::pair<int, std::string>> entries;
    for (const std::string& name : root.list(directory)) {
        const int number = numberAfter(name, prefix);
        if (number >= 0)
            entries.emplace_back(number, name);
    }
    std::sort(entries.begin(), entries.end());
    return entries;
}

// The hwmon class directory whose `name` is `name`; "" when none.
std::string findHwmon(const SysfsRoot& root, const std::string& name)
{
    for (const auto& [number, entry] : numberedEntries(root, "/sys/class/hwmon", "hwmon")) {
        std::string dir = "/sys/class/hwmon/" + entry;
        const auto text = root.readText(dir + "/name");
        if (text && text.value() == name)
            return dir;
    }
    return "";
}

// Reads an optional attribute: the value, or `fallback` when it is not open or the read fails.
int64_t readOr(const SysfsAttribute& attribute, int64_t fallback)
{
    int64_t value = 0;
    if (!attribute.isOpen() || attribute.readInt(value) != 0)
        return fallback;
    return value;
}

} // namespace

ZoneReading classifyThermalReading(
    int error, int64_t milli, const std::string& zoneType, const BoardProfile& profile)
{
    if (error == kThermalEmptyRead)
        return offline("empty read");
    if (error != 0)
        return offline(errnoName(error));
    for (const BadThermalReading& bad : profile.badReadings)
        if ((bad.zone.empty() || bad.zone == zoneType) && bad.milliCelsius == milli)
            return offline(internReason(badReadingReason(bad)));
    ZoneReading reading;
    reading.online = true;
    reading.celsius = static_cast<double>(milli) / 1000.0;
    return reading;
}

PowerModeInfo readPowerMode(const SysfsRoot& root)
{
    PowerModeInfo mode;
    const auto status = root.readText(kNvpmodelStatus);
    if (!status)
        return mode;
    // "pmode:0002" (newer releases append " fmode:quiet").
    const std::string& text = status.value();
    const size_t at = text.find("pmode:");
    if (at == std::string::npos)
        return mode;
    size_t i = at + 6;
    int id = 0;
    bool digits = false;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && id < 100000) {
        id = id * 10 + (text[i++] - '0');
        digits = true;
    }
    if (!digits)
        return mode;
    mode.id = id;
    mode.source = kNvpmodelStatus;

    // "< POWER_MODEL ID=2 NAME=15W >"
    const auto conf = root.readText(kNvpmodelConf);
    if (!conf)
        return mode;
    for (const std::string& line : splitLines(conf.value())) {
        if (line.find("POWER_MODEL") == std::string::npos)
            continue;
        const size_t idAt = line.find("ID=");
        const size_t nameAt = line.find("NAME=");
        if (idAt == std::string::npos || nameAt == std::string::npos)
            continue;
        int lineId = 0;
        size_t j = idAt + 3;
        if (j >= line.size() || !std::isdigit(static_cast<unsigned char>(line[j])))
            continue;
        while (
            j < line.size() && std::isdigit(static_cast<unsigned char>(line[j])) && lineId < 100000)
            lineId = lineId * 10 + (line[j++] - '0');
        if (lineId != id)
            continue;
        const size_t nameStart = nameAt + 5;
        const size_t nameEnd = line.find_first_of(" \t>", nameStart);
        mode.name = line.substr(
            nameStart, nameEnd == std::string::npos ? std::string::npos : nameEnd - nameStart);
        break;
    }
    return mode;
}

struct BoardStateReader::Impl {
    struct Zone {
        SysfsAttribute temp;
        // The profile's bad readings for this zone, with their reasons interned once here so a
        // read never builds a string.
        std::vector<std::pair<int64_t, const char*>> bad;
    };
    struct Cpu {
        std::string freqPath;
        SysfsAttribute freq;
        SysfsAttribute online; // not open for cpu0, which has no `online`
    };

    std::vector<ThermalZoneInfo> zoneInfo;
    std::vector<Zone> zones;
    std::string gpuDevice;
    SysfsAttribute gpuFreq;
    SysfsAttribute gpuLoad;
    std::vector<Cpu> cpus;
    SysfsAttribute emc;
    std::array<SysfsAttribute, 3> overCurrent;
    bool haveThrottle = false;
    SysfsAttribute fanPwm;
    SysfsAttribute fanRpm;
    std::unique_ptr<SystemLoadReader> load;

    void discoverZones(const SysfsRoot& root, const BoardProfile& profile)
    {
        for (const auto& [number, entry] :
            numberedEntries(root, "/sys/class/thermal", "thermal_zone")) {
            ThermalZoneInfo info;
            info.directory = "/sys/class/thermal/" + entry;
            const auto type = root.readText(info.directory + "/type");
            info.type = type ? type.value() : entry;
            for (int k = 0;; ++k) {
                const std::string trip = info.directory + "/trip_point_" + std::to_string(k);
                const auto milli = root.readInt(trip + "_temp");
                if (!milli)
                    break;
                const auto tripType = root.readText(trip + "_type");
                info.trips.push_back(TripPoint {
                    tripType ? tripType.value() : "", static_cast<double>(*milli) / 1000.0});
            }
            info.shown = profile.thermalZones.empty() ||
                std::find(profile.thermalZones.begin(), profile.thermalZones.end(), info.type) !=
                    profile.thermalZones.end();
            Zone zone;
            zone.temp.open(root.path(info.directory + "/temp"));
            for (const BadThermalReading& bad : profile.badReadings)
                if (bad.zone.empty() || bad.zone == info.type)
                    zone.bad.emplace_back(bad.milliCelsius, internReason(badReadingReason(bad)));
            zoneInfo.push_back(std::move(info));
            zones.push_back(std::move(zone));
        }
    }

    void discoverGpu(const SysfsRoot& root)
    {
        for (const std::string& entry : root.list("/sys/class/devfreq")) {
            const std::string dir = "/sys/class/devfreq/" + entry;
            const auto bytes = root.readBytes(dir + "/device/of_node/name");
            if (!bytes)
                continue;
            // Device-tree strings end in a NUL.
            std::string name = bytes.value().substr(0, bytes.value().find('\0'));
            while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back())))
                name.pop_back();
            if (std::find_if(std::begin(kGpuNodeNames), std::end(kGpuNodeNames),
                    [&](const char* gpu) { return name == gpu; }) == std::end(kGpuNodeNames))
                continue;
            if (gpuFreq.open(root.path(dir + "/cur_freq")) != 0)
                continue;
            gpuDevice = dir;
            // The load lives with the GPU device; some kernels put it beside the devfreq files.
            if (gpuLoad.open(root.path(dir + "/device/load")) != 0)
                gpuLoad.open(root.path(dir + "/load"));
            return;
        }
    }

    void discoverCpus(const SysfsRoot& root)
    {
        const std::string base = "/sys/devices/system/cpu";
        for (const auto& [number, entry] : numberedEntries(root, base, "cpu")) {
            if (cpus.size() >= static_cast<size_t>(kMaxCpus))
                break;
            Cpu cpu;
            cpu.freqPath = root.path(base + "/" + entry + "/cpufreq/scaling_cur_freq");
            cpu.freq.open(cpu.freqPath);
            if (root.exists(base + "/" + entry + "/online"))
                cpu.online.open(root.path(base + "/" + entry + "/online"));
            cpus.push_back(std::move(cpu));
        }
    }

    void discoverThrottleAndFan(const SysfsRoot& root)
    {
        const std::string soctherm = findHwmon(root, "soctherm_oc");
        if (!soctherm.empty()) {
            for (size_t k = 0; k < overCurrent.size(); ++k)
                if (overCurrent[k].open(
                        root.path(soctherm + "/oc" + std::to_string(k + 1) + "_event_cnt")) == 0)
                    haveThrottle = true;
        }
        if (root.exists(std::string(kJetPack4Fan) + "/target_pwm")) {
            fanPwm.open(root.path(std::string(kJetPack4Fan) + "/target_pwm"));
            fanRpm.open(root.path(std::string(kJetPack4Fan) + "/rpm_measured"));
            return;
        }
        const std::string pwm = findHwmon(root, "pwmfan");
        if (!pwm.empty())
            fanPwm.open(root.path(pwm + "/pwm1"));
        const std::string tach = findHwmon(root, "pwm_tach");
        if (!tach.empty())
            fanRpm.open(root.path(tach + "/rpm"));
    }

    ZoneReading readZone(size_t index) const
    {
        const Zone& zone = zones[index];
        char text[64];
        size_t length = 0;
        int error = zone.temp.readText(text, sizeof text, length);
        int64_t milli = 0;
        if (error == 0) {
            error = parseSysfsInt(text, length, milli);
            if (error == ENODATA)
                error = kThermalEmptyRead; // the read worked and said nothing
        }
        if (error == kThermalEmptyRead)
            return offline("empty read");
        if (error != 0)
            return offline(errnoName(error));
        for (const auto& [value, reason] : zone.bad)
            if (value == milli)
                return offline(reason);
        ZoneReading reading;
        reading.online = true;
        reading.celsius = static_cast<double>(milli) / 1000.0;
        return reading;
    }
};

BoardStateReader::BoardStateReader(const SysfsRoot& root, const BoardProfile& profile)
    : impl_(std::make_unique<Impl>())
{
    impl_->discoverZones(root, profile);
    impl_->discoverGpu(root);
    impl_->discoverCpus(root);
    if (impl_->emc.open(root.path(kEmcRate)) != 0)
        impl_->emc.open(root.path(kEmcClkRate));
    impl_->discoverThrottleAndFan(root);
    impl_->load = std::make_unique<SystemLoadReader>(root);
    logger("power")->debug("board state: {} thermal zones, GPU {}, {} CPUs, EMC {}, throttle "
                           "counters {}, fan {}",
        impl_->zoneInfo.size(), impl_->gpuDevice.empty() ? "none" : impl_->gpuDevice,
        impl_->cpus.size(), haveEmc() ? "yes" : "no", haveThrottleCounters() ? "yes" : "no",
        haveFan() ? "yes" : "no");
}

BoardStateReader::~BoardStateReader() = default;

const std::vector<ThermalZoneInfo>& BoardStateReader::zones() const
{
    return impl_->zoneInfo;
}

const std::string& BoardStateReader::gpuDevice() const
{
    return impl_->gpuDevice;
}

bool BoardStateReader::haveEmc() const
{
    return impl_->emc.isOpen();
}

bool BoardStateReader::haveThrottleCounters() const
{
    return impl_->haveThrottle;
}

bool BoardStateReader::haveFan() const
{
    return impl_->fanPwm.isOpen();
}

const SystemLoadReader& BoardStateReader::systemLoad() const
{
    return *impl_->load;
}

bool BoardStateReader::haveCpuFreq() const
{
    return std::any_of(impl_->cpus.begin(), impl_->cpus.end(),
        [](const Impl::Cpu& cpu) { return cpu.freq.isOpen(); });
}

void BoardStateReader::read(int64_t nowNs, BoardStateSample& sample)
{
    Impl& s = *impl_;
    sample.timeNs = nowNs;
    sample.zones.resize(s.zones.size());
    for (size_t i = 0; i < s.zones.size(); ++i)
        sample.zones[i] = s.readZone(i);

    sample.haveGpu = false;
    sample.gpuFreqHz = 0;
    sample.gpuLoadPercent = 0.0;
    if (s.gpuFreq.isOpen()) {
        int64_t hz = 0;
        if (s.gpuFreq.readInt(hz) == 0) {
            sample.haveGpu = true;
            sample.gpuFreqHz = hz;
            sample.gpuLoadPercent =
                static_cast<double>(readOr(s.gpuLoad, 0)) / kDevfreqLoadPerPercent;
        }
    }

    sample.cpuCount = static_cast<int>(s.cpus.size());
    for (size_t i = 0; i < s.cpus.size(); ++i) {
        Impl::Cpu& cpu = s.cpus[i];
        int64_t& out = sample.cpuFreqKHz[i];
        out = -1;
        if (readOr(cpu.online, 1) == 0)
            continue; // offline: its cpufreq files may remain with a stale value
        // A core that was offline at discovery may have had no cpufreq files then.
        if (!cpu.freq.isOpen() && cpu.freq.open(cpu.freqPath) != 0)
            continue;
        out = readOr(cpu.freq, -1);
    }

    sample.emcHz = readOr(s.emc, -1);
    for (size_t k = 0; k < s.overCurrent.size(); ++k)
        sample.throttleEvents[k] = readOr(s.overCurrent[k], -1);
    sample.fanPwm = static_cast<int>(readOr(s.fanPwm, -1));
    sample.fanRpm = static_cast<int>(readOr(s.fanRpm, -1));
    s.load->read(sample.emcHz, sample.load);
}

} // namespace jetagent
