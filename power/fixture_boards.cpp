// Fixture sysfs trees: board descriptions, their lowering to files and links, and writing them.
#include "jetagent/power/fixture_boards.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jetagent/base/format.h"

namespace fs = std::filesystem;

namespace jetagent::fixtures {

namespace {

constexpr int64_t kShuntMicroOhms = 5000; // a typical INA3221 shunt on Jetson modules
constexpr int kCritMilliAmps = 6000;
constexpr int kWarnMilliAmps = 4000;

std::string line(int64_t value)
{
    return std::to_string(value) + "\n";
}

std::string line(const std::string& text)
{
    return text + "\n";
}

// "1-0040": the kernel's I2C client name for `bus` and `address`.
std::string i2cName(int bus, int address)
{
    std::string text = formatText("%d-%04x", bus, address);
    return text;
}

std::string i2cDevice(const std::string& controller, int bus, int address)
{
    return controller + "/i2c-" + std::to_string(bus) + "/" + i2cName(bus, address);
}

// A permutation of 0..n-1 from `seed`: std::mt19937 is specified exactly, std::shuffle is not, so
// the shuffle is written out to stay the same on every standard library.
std::vector<int> permutation(size_t n, uint32_t seed)
{
    std::vector<int> order(n);
    for (size_t i = 0; i < n; ++i)
        order[i] = static_cast<int>(i);
    std::mt19937 random(seed);
    for (size_t i = n; i > 1; --i) {
        const size_t j = random() % i;
        std::swap(order[i - 1], order[j]);
    }
    return order;
}

struct PendingHwmon {
    std::string key; // tree.hwmons() key: the device's name ("1-0040") or hwmon name
    std::string device;
    std::string name;
    std::vector<std::pair<std::string, std::string>> files;
    std::vector<std::pair<std::string, int>> faults; // file name -> errno
    std::vector<std::pair<std::string, RailFiles>> rails; // paths relative to the hwmon dir
};

class Lowering {
public:
    Lowering(const BoardSpec& board, uint32_t seed) : board_(board), seed_(seed) { }

    SysfsTree run()
    {
        identity();
        for (const Ina3221Spec& chip : board_.ina3221)
            if (chip.legacyIio)
                ina3221Legacy(chip);
            else
                ina3221(chip);
        for (const Ina2xxSpec& chip : board_.ina2xx)
            ina2xx(chip);
        for (const PowerSupplySpec& supply : board_.powerSupplies)
            powerSupply(supply);
        rapl();
        thermal();
        for (const DevfreqSpec& device : board_.devfreq)
            devfreq(device);
        cpus();
        clocksAndThrottling();
        systemLoad();
        fan();
        for (const HwmonSpec& other : board_.otherHwmon)
            hwmons_.push_back(
                PendingHwmon {other.name, other.device, other.name, other.files, {}, {}});
        nvpmodel();
        emitHwmons();
        return std::move(tree_);
    }

private:
    void identity()
    {
        if (!board_.model.empty()) {
            const std::string base = "/sys/firmware/devicetree/base";
            std::string compatible;
            for (const std::string& entry : board_.compatible)
                compatible += entry + std::string(1, '\0');
            tree_.file(base + "/model", board_.model + std::string(1, '\0'));
            tree_.file(base + "/compatible", compatible);
            tree_.file(base + "/name", std::string(1, '\0'));
            tree_.link("/proc/device-tree", base);
        }
        if (!board_.nvTegraRelease.empty())
            tree_.file("/etc/nv_tegra_release",
                board_.nvTegraRelease +
                    "\n# KERNEL_VARIANT: oot\nTARGET_USERSPACE_LIB_DIR=nvidia\n"
                    "TARGET_USERSPACE_LIB_DIR_PATH=usr/lib/aarch64-linux-gnu/nvidia\n");
        if (board_.tegraChipId != 0)
            tree_.file("/sys/module/tegra_fuse/parameters/tegra_chip_id", line(board_.tegraChipId));
        if (!board_.cpuModelName.empty()) {
            std::string cpuinfo;
            for (size_t cpu = 0; cpu < std::max<size_t>(board_.cpus.size(), 1); ++cpu)
                cpuinfo += "processor\t: " + std::to_string(cpu) +
                    "\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 140\nmodel name\t: " +
                    board_.cpuModelName + "\nstepping\t: 1\n\n";
            tree_.file("/proc/cpuinfo", cpuinfo);
        }
    }

    // The I2C client: its folder, `name`, and the /sys/bus/i2c/devices link.
    std::string i2cClient(
        const std::string& controller, int bus, int address, const std::string& name)
    {
        std::string device = i2cDevice(controller, bus, address);
        tree_.file(device + "/name", line(name));
        tree_.link("/sys/bus/i2c/devices/" + i2cName(bus, address), device);
        tree_.link("/sys/bus/i2c/devices/i2c-" + std::to_string(bus),
            controller + "/i2c-" + std::to_string(bus));
        return device;
    }

    void ina3221(const Ina3221Spec& chip)
    {
        const std::string device = i2cClient(chip.controller, chip.bus, chip.address, "ina3221");
        PendingHwmon hwmon {i2cName(chip.bus, chip.address), device, "ina3221", {}, {}, {}};
        int64_t shuntSumMicroVolts = 0;
        int64_t sumMilliAmps = 0;
        for (int c = 1; c <= 3; ++c) {
            const InaChannelSpec& channel = chip.channels[static_cast<size_t>(c - 1)];
            const std::string n = std::to_string(c);
            const std::string shunt = std::to_string(c + 3);
            const int64_t shuntMicroVolts = channel.milliAmps * kShuntMicroOhms / 1000;
            const bool connected = channel.readErrno == 0;
            hwmon.files.emplace_back("in" + n + "_label", line(channel.label));
            hwmon.files.emplace_back("in" + n + "_enable", line(connected ? 1 : 0));
            hwmon.files.emplace_back("in" + n + "_input", line(channel.milliVolts));
            hwmon.files.emplace_back("in" + shunt + "_input", line(shuntMicroVolts));
            hwmon.files.emplace_back("curr" + n + "_input", line(channel.milliAmps));
            hwmon.files.emplace_back("curr" + n + "_max", line(kWarnMilliAmps));
            hwmon.files.emplace_back("curr" + n + "_max_alarm", line(0));
            hwmon.files.emplace_back("curr" + n + "_crit", line(kCritMilliAmps));
            hwmon.files.emplace_back("curr" + n + "_crit_alarm", line(0));
            hwmon.files.emplace_back("shunt" + n + "_resistor", line(kShuntMicroOhms));
            if (!connected) {
                for (const std::string& input :
                    {"in" + n + "_input", "in" + shunt + "_input", "curr" + n + "_input"})
                    hwmon.faults.emplace_back(input, channel.readErrno);
                continue;
            }
            shuntSumMicroVolts += shuntMicroVolts;
            sumMilliAmps += channel.milliAmps;
            RailFiles files;
            files.voltage = "in" + n + "_input";
            files.current = "curr" + n + "_input";
            hwmon.rails.emplace_back(channel.label, files);
        }
        hwmon.files.emplace_back("in7_label", line("sum of shunt voltages"));
        hwmon.files.emplace_back("in7_input", line(shuntSumMicroVolts));
        hwmon.files.emplace_back("curr4_input", line(sumMilliAmps));
        hwmon.files.emplace_back("curr4_crit", line(3 * kCritMilliAmps));
        hwmon.files.emplace_back("curr4_crit_alarm", line(0));
        hwmon.files.emplace_back("samples", line(chip.samples));
        hwmon.files.emplace_back("update_interval", line(chip.updateIntervalMs));
        hwmons_.push_back(std::move(hwmon));
    }

    void ina3221Legacy(const Ina3221Spec& chip)
    {
        const std::string device = i2cClient(chip.controller, chip.bus, chip.address, "ina3221x");
        const std::string iio = device + "/iio:device" + std::to_string(iioCount_);
        tree_.link("/sys/bus/iio/devices/iio:device" + std::to_string(iioCount_), iio);
        ++iioCount_;
        tree_.file(iio + "/name", line("ina3221x"));
        tree_.file(iio + "/running_mode", line(0));
        tree_.file(iio + "/dev", line("250:" + std::to_string(iioCount_ - 1)));
        for (int index = 0; index < 3; ++index) {
            const InaChannelSpec& channel = chip.channels[static_cast<size_t>(index)];
            const std::string n = std::to_string(index);
            const int64_t milliWatts = channel.milliWatts >= 0
                ? channel.milliWatts
                : std::llround(
                      static_cast<double>(channel.milliVolts * channel.milliAmps) / 1000.0);
            RailFiles files;
            files.voltage = iio + "/in_voltage" + n + "_input";
            files.current = iio + "/in_current" + n + "_input";
            files.power = iio + "/in_power" + n + "_input";
            tree_.file(iio + "/rail_name_" + n, line(channel.label));
            tree_.file(files.voltage, line(channel.milliVolts));
            tree_.file(files.current, line(channel.milliAmps));
            tree_.file(files.power, line(milliWatts));
            // The legacy driver writes limits with a unit glued on by a blank.
            tree_.file(iio + "/warn_current_limit_" + n, std::to_string(kWarnMilliAmps) + " ma\n");
            tree_.file(iio + "/crit_current_limit_" + n, std::to_string(kCritMilliAmps) + " ma\n");
            if (channel.readErrno != 0) {
                for (const std::string* input : {&files.voltage, &files.current, &files.power})
                    tree_.fault(*input, channel.readErrno);
                continue;
            }
            tree_.rail(channel.label, files);
        }
    }

    void ina2xx(const Ina2xxSpec& chip)
    {
        const std::string device = i2cClient(chip.controller, chip.bus, chip.address, chip.chip);
        PendingHwmon hwmon {i2cName(chip.bus, chip.address), device, chip.chip, {}, {}, {}};
        RailFiles files;
        files.voltage = "in1_input";
        files.current = "curr1_input";
        hwmon.files.emplace_back("in0_input", line(0));
        hwmon.files.emplace_back("in1_input", line(chip.milliVolts));
        hwmon.files.emplace_back("curr1_input", line(chip.milliAmps));
        hwmon.files.emplace_back("temp1_input", line(41250));
        if (chip.microWatts != -2) {
            files.power = "power1_input";
            files.powerScale = 1000;
            hwmon.files.emplace_back("power1_input",
                line(chip.microWatts >= 0 ? chip.microWatts : chip.milliVolts * chip.milliAmps));
        }
        hwmon.rails.emplace_back(chip.chip, files);
        hwmon.rails.emplace_back(chip.chip + "-" + i2cName(chip.bus, chip.address), files);
        hwmons_.push_back(std::move(hwmon));
    }

    void powerSupply(const PowerSupplySpec& supply)
    {
        const std::string dir = supply.device + "/power_supply/" + supply.name;
        tree_.link("/sys/class/power_supply/" + supply.name, dir);
        tree_.link(dir + "/device", supply.device);
        tree_.file(dir + "/type", line(supply.type));
        if (supply.type == "Battery") {
            tree_.file(dir + "/present", line(1));
            tree_.file(dir + "/status", line("Discharging"));
            tree_.file(dir + "/technology", line("Li-ion"));
        } else {
            tree_.file(dir + "/online", line(1));
        }
        if (supply.type == "USB") {
            tree_.file(dir + "/usb_type", line("[C] PD PD_PPS"));
            tree_.file(dir + "/scope", line("Unknown"));
        }
        RailFiles files;
        if (supply.powerNowUw >= 0) {
            files.power = dir + "/power_now";
            files.powerScale = 1000;
            tree_.file(files.power, line(supply.powerNowUw));
        }
        if (supply.voltageNowUv >= 0) {
            files.voltage = dir + "/voltage_now";
            files.voltageScale = 1000;
            tree_.file(files.voltage, line(supply.voltageNowUv));
        }
        if (supply.currentNowUa >= 0) {
            files.current = dir + "/current_now";
            files.currentScale = 1000;
            tree_.file(files.current, line(supply.currentNowUa));
        }
        tree_.rail(supply.name, files);
    }

    void rapl()
    {
        bool haveRapl = false;
        bool haveMmio = false;
        for (const RaplZoneSpec& zone : board_.rapl) {
            const bool mmio = zone.id.rfind("intel-rapl-mmio:", 0) == 0;
            (mmio ? haveMmio : haveRapl) = true;
            const std::string dir = raplZoneDirectory(zone.id);
            tree_.link("/sys/class/powercap/" + zone.id, dir);
            tree_.file(dir + "/name", line(zone.name));
            tree_.file(dir + "/enabled", line(1));
            tree_.file(dir + "/max_energy_range_uj", line(static_cast<int64_t>(zone.maxRangeUj)));
            tree_.file(dir + "/constraint_0_name", line("long_term"));
            tree_.file(dir + "/constraint_0_power_limit_uw", line(28000000));
            tree_.file(dir + "/constraint_0_time_window_us", line(27983872));
            // Root-only since the 2020 fix for the RAPL power side channel.
            tree_.file(dir + "/energy_uj", line(static_cast<int64_t>(zone.energyUj)),
                zone.permissionDenied ? 0400 : 0644);
            if (zone.permissionDenied)
                tree_.fault(dir + "/energy_uj", EACCES);
        }
        for (const auto& [present, control] :
            {std::pair {haveRapl, "intel-rapl"}, std::pair {haveMmio, "intel-rapl-mmio"}}) {
            if (!present)
                continue;
            const std::string dir = std::string("/sys/devices/virtual/powercap/") + control;
            tree_.file(dir + "/enabled", line(1));
            tree_.link(std::string("/sys/class/powercap/") + control, dir);
        }
    }

    void thermal()
    {
        for (size_t index = 0; index < board_.zones.size(); ++index) {
            const ThermalZoneSpec& zone = board_.zones[index];
            const std::string name = "thermal_zone" + std::to_string(index);
            const std::string dir = "/sys/devices/virtual/thermal/" + name;
            tree_.link("/sys/class/thermal/" + name, dir);
            tree_.file(dir + "/type", line(zone.type));
            tree_.file(dir + "/temp", zone.empty ? std::string() : line(zone.milliCelsius));
            if (zone.readErrno != 0)
                tree_.fault(dir + "/temp", zone.readErrno);
            tree_.file(dir + "/mode", line("enabled"));
            tree_.file(dir + "/policy", line("step_wise"));
            for (size_t k = 0; k < zone.trips.size(); ++k) {
                const std::string trip = dir + "/trip_point_" + std::to_string(k);
                tree_.file(trip + "_temp", line(zone.trips[k].milliCelsius));
                tree_.file(trip + "_type", line(zone.trips[k].type));
                tree_.file(trip + "_hyst", line(1000));
            }
        }
        // A cooling device shares the class folder; zone discovery must pass it by.
        const std::string cooling = "/sys/devices/virtual/thermal/cooling_device0";
        tree_.link("/sys/class/thermal/cooling_device0", cooling);
        tree_.file(cooling + "/type",
            line(board_.fan.layout == FanLayout::None ? "Processor" : "pwm-fan"));
        tree_.file(cooling + "/cur_state", line(0));
        tree_.file(cooling + "/max_state", line(3));
    }

    void devfreq(const DevfreqSpec& spec)
    {
        const std::string address = spec.name.substr(0, spec.name.find('.'));
        const std::string node = "/sys/firmware/devicetree/base/" + spec.ofNode + "@" + address;
        tree_.file(node + "/name", spec.ofNode + std::string(1, '\0'));
        tree_.file(node + "/compatible", "nvidia," + spec.ofNode + std::string(1, '\0'));
        tree_.link(spec.device + "/of_node", node);
        if (spec.load >= 0)
            tree_.file(spec.device + "/load", line(spec.load));
        const std::string dir = spec.device + "/devfreq/" + spec.name;
        tree_.link("/sys/class/devfreq/" + spec.name, dir);
        tree_.link(dir + "/device", spec.device);
        tree_.file(dir + "/cur_freq", line(spec.curFreqHz));
        tree_.file(dir + "/min_freq", line(spec.minFreqHz));
        tree_.file(dir + "/max_freq", line(spec.maxFreqHz));
        tree_.file(dir + "/target_freq", line(spec.curFreqHz));
        tree_.file(dir + "/governor", line("nvhost_podgov"));
        tree_.file(dir + "/available_frequencies",
            line(std::to_string(spec.minFreqHz) + " " + std::to_string(spec.maxFreqHz)));
    }

    void cpus()
    {
        if (board_.cpus.empty())
            return;
        const std::string base = "/sys/devices/system/cpu";
        const std::string range = "0-" + std::to_string(board_.cpus.size() - 1);
        std::string online;
        for (size_t cpu = 0; cpu < board_.cpus.size(); ++cpu)
            if (board_.cpus[cpu].online != 0)
                online += (online.empty() ? "" : ",") + std::to_string(cpu);
        tree_.file(base + "/possible", line(range));
        tree_.file(base + "/present", line(range));
        tree_.file(base + "/online", line(online));
        tree_.file(base + "/kernel_max", line(511));
        tree_.directory(base + "/cpufreq");
        tree_.directory(base + "/cpuidle");
        for (size_t cpu = 0; cpu < board_.cpus.size(); ++cpu) {
            const CpuSpec& spec = board_.cpus[cpu];
            const std::string dir = base + "/cpu" + std::to_string(cpu);
            if (spec.online >= 0)
                tree_.file(dir + "/online", line(spec.online));
            tree_.file(dir + "/cpufreq/scaling_cur_freq", line(spec.curKHz));
            tree_.file(dir + "/cpufreq/scaling_min_freq", line(115200));
            tree_.file(dir + "/cpufreq/scaling_max_freq", line(spec.curKHz));
            tree_.file(dir + "/cpufreq/scaling_governor", line("schedutil"));
        }
    }

    void clocksAndThrottling()
    {
        if (board_.emcHz >= 0)
            tree_.file("/sys/kernel/debug/bpmp/debug/clk/emc/rate", line(board_.emcHz));
        if (board_.socthermOc[0] >= 0) {
            PendingHwmon hwmon {"soctherm_oc", "/sys/devices/platform/soctherm-oc-event",
                "soctherm_oc", {}, {}, {}};
            for (int k = 0; k < 3; ++k)
                hwmon.files.emplace_back("oc" + std::to_string(k + 1) + "_event_cnt",
                    line(board_.socthermOc[static_cast<size_t>(k)]));
            hwmons_.push_back(std::move(hwmon));
        }
    }

    void systemLoad()
    {
        const MemorySpec& memory = board_.memory;
        if (memory.totalKB >= 0) {
            // The keys readers look for, amid some of the others a real file has.
            std::string text;
            auto entry = [&](const char* key, int64_t kB) {
                std::string row = formatText("%-16s%8lld kB\n", key, static_cast<long long>(kB));
                text += row;
            };
            entry("MemTotal:", memory.totalKB);
            entry("MemFree:", memory.availableKB / 2);
            entry("MemAvailable:", memory.availableKB);
            entry("Buffers:", memory.totalKB / 100);
            entry("Cached:", memory.availableKB / 3);
            entry("SwapCached:", 0);
            entry("SwapTotal:", memory.swapTotalKB);
            entry("SwapFree:", memory.swapFreeKB);
            entry("Shmem:", memory.totalKB / 200);
            tree_.file("/proc/meminfo", text);
        }
        if (!memory.buddyZones.empty()) {
            std::string text;
            for (const auto& [zone, counts] : memory.buddyZones) {
                std::string head = formatText("Node 0, zone %8s ", zone.c_str());
                text += head;
                for (int64_t count : counts) {
                    std::string cell = formatText("%6lld ", static_cast<long long>(count));
                    text += cell;
                }
                text += "\n";
            }
            tree_.file("/proc/buddyinfo", text);
        }
        if (!board_.cpus.empty())
            tree_.file("/proc/stat", procStatText(board_));
        if (!board_.actmonPath.empty())
            tree_.file(board_.actmonPath, line(board_.mcAllKHz));
        for (const EngineSpec& engine : board_.engines) {
            const std::string clk = "/sys/kernel/debug/clk/" + engine.name;
            tree_.file(clk + "/clk_enable_count", line(engine.enableCount));
            if (engine.bpmpRate)
                tree_.file("/sys/kernel/debug/bpmp/debug/clk/" + engine.name + "/rate",
                    line(engine.rateHz));
            else
                tree_.file(clk + "/clk_rate", line(engine.rateHz));
        }
    }

    void fan()
    {
        const FanSpec& fan = board_.fan;
        if (fan.layout == FanLayout::JetPack4) {
            const std::string dir = "/sys/devices/pwm-fan";
            tree_.file(dir + "/target_pwm", line(fan.pwm));
            tree_.file(dir + "/cur_pwm", line(fan.pwm));
            tree_.file(dir + "/rpm_measured", line(fan.rpm));
            tree_.file(dir + "/temp_control", line(1));
            tree_.file(dir + "/pwm_cap", line(255));
        } else if (fan.layout == FanLayout::Hwmon) {
            hwmons_.push_back(PendingHwmon {"pwmfan", "/sys/devices/platform/pwm-fan", "pwmfan",
                {{"pwm1", line(fan.pwm)}, {"pwm1_enable", line(2)}}, {}, {}});
            hwmons_.push_back(PendingHwmon {"pwm_tach", "/sys/devices/platform/39c0000.tachometer",
                "pwm_tach", {{"rpm", line(fan.rpm)}}, {}, {}});
        }
    }

    void nvpmodel()
    {
        if (!board_.nvpmodelStatus.empty())
            tree_.file("/var/lib/nvpmodel/status", board_.nvpmodelStatus);
        if (!board_.nvpmodelConf.empty())
            tree_.file("/etc/nvpmodel.conf", board_.nvpmodelConf);
    }

    void emitHwmons()
    {
        const std::vector<int> numbers = permutation(hwmons_.size(), seed_);
        for (size_t i = 0; i < hwmons_.size(); ++i) {
            const PendingHwmon& hwmon = hwmons_[i];
            const std::string name = "hwmon" + std::to_string(numbers[i]);
            const std::string dir = hwmon.device + "/hwmon/" + name;
            const std::string classDir = "/sys/class/hwmon/" + name;
            tree_.link(classDir, dir);
            tree_.link(dir + "/device", hwmon.device);
            tree_.file(dir + "/name", line(hwmon.name));
            for (const auto& [file, content] : hwmon.files)
                tree_.file(dir + "/" + file, content);
            for (const auto& [file, error] : hwmon.faults)
                tree_.fault(dir + "/" + file, error);
            for (auto [railName, files] : hwmon.rails) {
                for (std::string* path : {&files.voltage, &files.current, &files.power})
                    if (!path->empty())
                        *path = dir + "/" + *path;
                tree_.rail(railName, files);
            }
            tree_.hwmon(hwmon.key, classDir);
            // By hwmon name too, where that name is the board's only one of its kind.
            const auto sameName = std::count_if(hwmons_.begin(), hwmons_.end(),
                [&](const PendingHwmon& other) { return other.name == hwmon.name; });
            if (hwmon.key != hwmon.name && sameName == 1)
                tree_.hwmon(hwmon.name, classDir);
        }
    }

    const BoardSpec& board_;
    uint32_t seed_;
    SysfsTree tree_;
    std::vector<PendingHwmon> hwmons_;
    int iioCount_ = 0;
};

// ---- Board helpers ----

std::string nvpmodelConf(const std::vector<std::pair<int, std::string>>& modes, int defaultMode)
{
    std::string conf = "# NVIDIA power model configuration (fixture)\n"
                       "< PARAM TYPE=FILE NAME=CPU_ONLINE >\n"
                       "CORE_0 /sys/devices/system/cpu/cpu0/online\n"
                       "CORE_1 /sys/devices/system/cpu/cpu1/online\n\n";
    for (const auto& [id, name] : modes)
        conf += "< POWER_MODEL ID=" + std::to_string(id) + " NAME=" + name +
            " >\nCPU_ONLINE CORE_0 1\nCPU_ONLINE CORE_1 1\n\n";
    conf += "< PM_CONFIG DEFAULT=" + std::to_string(defaultMode) + " >\n";
    return conf;
}

std::string pmode(int id)
{
    std::string text = formatText("pmode:%04d", id);
    return text;
}

std::vector<CpuSpec> onlineCpus(int count, int64_t kHz)
{
    // Counters as after a few minutes up, a tenth of the time busy.
    std::vector<CpuSpec> cpus(static_cast<size_t>(count), CpuSpec {kHz, 1, 2000, 18000});
    cpus[0].online = -1; // cpu0 cannot go offline and has no `online` file
    return cpus;
}

std::vector<TripSpec> socTrips()
{
    return {{"passive", 99000}, {"critical", 104500}};
}

std::vector<TripSpec> fanTrips()
{
    return {{"active", 51000}, {"active", 61000}, {"active", 71000}};
}

InaChannelSpec channel(const std::string& label, int64_t milliVolts, int64_t milliAmps)
{
    InaChannelSpec spec;
    spec.label = label;
    spec.milliVolts = milliVolts;
    spec.milliAmps = milliAmps;
    return spec;
}

InaChannelSpec unconnected()
{
    InaChannelSpec spec;
    spec.label = "NC";
    spec.readErrno = ENODATA;
    return spec;
}

} // namespace

std::string procStatText(const BoardSpec& board)
{
    uint64_t busy = 0, idle = 0;
    std::string cores;
    for (size_t cpu = 0; cpu < board.cpus.size(); ++cpu) {
        const CpuSpec& spec = board.cpus[cpu];
        if (spec.online == 0)
            continue;
        busy += spec.busyTicks;
        idle += spec.idleTicks;
        const uint64_t system = spec.busyTicks / 4;
        cores += "cpu" + std::to_string(cpu) + " " + std::to_string(spec.busyTicks - system) +
            " 0 " + std::to_string(system) + " " + std::to_string(spec.idleTicks) +
            " 0 0 0 0 0 0\n";
    }
    const uint64_t system = busy / 4;
    return "cpu  " + std::to_string(busy - system) + " 0 " + std::to_string(system) + " " +
        std::to_string(idle) + " 0 0 0 0 0 0\n" + cores +
        "intr 1234567 0 0 0\nctxt 7654321\nbtime 1764210000\nprocesses 4321\n"
        "procs_running 1\nprocs_blocked 0\nsoftirq 345678 0 1 2 3 4 5 6 7 8 9\n";
}

std::string raplZoneDirectory(const std::string& id)
{
    const bool mmio = id.rfind("intel-rapl-mmio:", 0) == 0;
    const std::string control = mmio ? "intel-rapl-mmio" : "intel-rapl";
    std::string dir = "/sys/devices/virtual/powercap/" + control;
    // "intel-rapl:0:1" lives inside "intel-rapl:0".
    const size_t first = id.find(':');
    const size_t second = id.find(':', first + 1);
    if (second != std::string::npos)
        dir += "/" + id.substr(0, second);
    return dir + "/" + id;
}

// ---- SysfsTree ----

void SysfsTree::file(const std::string& path, const std::string& content, unsigned mode)
{
    entries_[path] = Entry {Entry::Kind::File, content, mode};
}

void SysfsTree::link(const std::string& path, const std::string& target)
{
    entries_[path] = Entry {Entry::Kind::Link, target, 0777};
}

void SysfsTree::directory(const std::string& path)
{
    entries_[path] = Entry {Entry::Kind::Directory, "", 0755};
}

void SysfsTree::fault(const std::string& path, int error)
{
    faults_[path] = error;
}

void SysfsTree::rail(const std::string& name, const RailFiles& files)
{
    rails_[name] = files;
}

void SysfsTree::hwmon(const std::string& key, const std::string& directory)
{
    hwmons_[key] = directory;
}

Status SysfsTree::write(const std::string& hostRoot) const
{
    for (const auto& [path, entry] : entries_) {
        const fs::path host = hostRoot + path;
        std::error_code ec;
        fs::create_directories(host.parent_path(), ec);
        if (ec)
            return Status::io("cannot create " + host.parent_path().string() + ": " + ec.message());
        switch (entry.kind) {
        case Entry::Kind::Directory: fs::create_directories(host, ec); break;
        case Entry::Kind::Link: {
            // Relative, like the kernel's links, so the tree works wherever it lies.
            const fs::path target =
                fs::path(entry.content).lexically_relative(fs::path(path).parent_path());
            fs::create_symlink(target, host, ec);
            break;
        }
        case Entry::Kind::File: {
            const int fd = ::open(host.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (fd < 0)
                return Status::io("cannot create " + host.string() + ": " + errnoText(errno));
            const ssize_t written = ::write(fd, entry.content.data(), entry.content.size());
            const int error = written < 0 ? errno : 0;
            ::fchmod(fd, static_cast<mode_t>(entry.mode));
            ::close(fd);
            if (written != static_cast<ssize_t>(entry.content.size()))
                return Status::io(
                    "cannot write " + host.string() + ": " + errnoText(error ? error : EIO));
            break;
        }
        }
        if (ec)
            return Status::io("cannot create " + host.string() + ": " + ec.message());
    }
    return {};
}

SysfsTree lowerBoard(const BoardSpec& board, uint32_t seed)
{
    return Lowering(board, seed).run();
}

// ---- The boards ----

BoardSpec nanoJp4()
{
    BoardSpec b;
    b.id = "nano-jp4";
    b.description = "Jetson Nano Developer Kit, JetPack 4 (legacy ina3221x under iio)";
    b.model = "NVIDIA Jetson Nano Developer Kit";
    b.compatible = {"nvidia,p3450-0000", "nvidia,jetson-nano", "nvidia,tegra210"};
    b.nvTegraRelease = "# R32 (release), REVISION: 7.4, GCID: 33514132, BOARD: t210ref, EABI: "
                       "aarch64, DATE: Fri Jun  9 04:25:08 UTC 2023";
    b.tegraChipId = 33;

    Ina3221Spec ina;
    ina.legacyIio = true;
    ina.controller = "/sys/devices/platform/7000c400.i2c";
    ina.bus = 6;
    ina.address = 0x40;
    ina.channels = {channel("POM_5V_IN", 5000, 1000), channel("POM_5V_GPU", 5000, 120),
        channel("POM_5V_CPU", 5000, 300)};
    // The driver's power comes from its own conversion, not from the V and I files.
    ina.channels[0].milliWatts = 5048;
    b.ina3221 = {ina};

    b.zones = {{"AO-therm", 37500, 0, false, {{"critical", 101000}}},
        {"CPU-therm", 39000, 0, false, socTrips()}, {"GPU-therm", 38500, 0, false, socTrips()},
        {"PLL-therm", 36000, 0, false, {}}, {"PMIC-Die", 100000, 0, false, {{"critical", 120000}}},
        {"thermal-fan-est", 38100, 0, false, fanTrips()}};
    b.devfreq = {{"/sys/devices/gpu.0", "57000000.gpu", "gpu", 76800000, 76800000, 921600000, 123}};
    b.cpus = onlineCpus(4, 1479000);
    b.emcHz = 1600000000;
    // JetPack 4: actmon in sysfs (read by tegrastats-era tools on T210); nvjpg's clock in the
    // clock framework's debugfs (jetson-stats' first engine reader was written for it). The other
    // engines' clock names on T210 are not confirmed, so the tree has none.
    b.actmonPath = "/sys/kernel/actmon_avg_activity/mc_all";
    b.mcAllKHz = 160000; // 10 % of 1600 MHz
    b.engines = {{"nvjpg", 0, 627200000, false}};
    b.memory = {4059212, 2712040, 2029604, 2029604,
        {{"DMA", {412, 301, 188, 97, 61, 30, 18, 9, 4, 2, 36}},
            {"Normal", {1523, 812, 402, 210, 98, 51, 23, 12, 6, 3, 12}}}};
    b.fan = {FanLayout::JetPack4, 80, 1534};
    b.nvpmodelStatus = pmode(0) + "\n";
    b.nvpmodelConf = nvpmodelConf({{0, "MAXN"}, {1, "5W"}}, 0);

    b.expectedRails = {{"POM_5V_IN", "ina3221x", "6-0040", 1, 5.048, ""},
        {"POM_5V_GPU", "ina3221x", "6-0040", 2, 0.6, ""},
        {"POM_5V_CPU", "ina3221x", "6-0040", 3, 1.5, ""}};
    b.totalRail = "POM_5V_IN";
    return b;
}

BoardSpec tx2Jp4()
{
    BoardSpec b;
    b.id = "tx2-jp4";
    b.description = "Jetson TX2 Developer Kit, JetPack 4 (two ina3221x under iio)";
    b.model = "quill";
    b.compatible = {"nvidia,p2771-0000", "nvidia,quill", "nvidia,tegra186"};
    b.nvTegraRelease = "# R32 (release), REVISION: 7.4, GCID: 33514132, BOARD: t186ref, EABI: "
                       "aarch64, DATE: Fri Jun  9 04:26:49 UTC 2023";
    b.tegraChipId = 24;

    Ina3221Spec gpuSoc;
    gpuSoc.legacyIio = true;
    gpuSoc.controller = "/sys/devices/platform/3160000.i2c";
    gpuSoc.bus = 0;
    gpuSoc.address = 0x40;
    gpuSoc.channels = {channel("VDD_SYS_GPU", 19000, 50), channel("VDD_SYS_SOC", 19000, 40),
        channel("VDD_4V0_WIFI", 4000, 25)};
    Ina3221Spec input = gpuSoc;
    input.address = 0x41;
    input.channels = {channel("VDD_IN", 19000, 200), channel("VDD_SYS_CPU", 19000, 30),
        channel("VDD_SYS_DDR", 4800, 100)};
    b.ina3221 = {gpuSoc, input};

    b.zones = {{"BCPU-therm", 41000, 0, false, socTrips()},
        {"MCPU-therm", 41000, 0, false, socTrips()}, {"GPU-therm", 39500, 0, false, socTrips()},
        {"PLL-therm", 38000, 0, false, {}}, {"AO-therm", 40000, 0, false, {}},
        {"Tboard_tegra", 33000, 0, false, {}}, {"Tdiode_tegra", 35250, 0, false, {}},
        {"PMIC-Die", 100000, 0, false, {}}, {"thermal-fan-est", 39700, 0, false, fanTrips()}};
    b.devfreq = {
        {"/sys/devices/gpu.0", "17000000.gp10b", "gp10b", 114750000, 114750000, 1300500000, 0}};
    // Mode 1 (MAXQ) takes the two Denver cores offline; their cpufreq files keep a stale value.
    b.cpus = onlineCpus(6, 2035200);
    b.cpus[1].online = 0;
    b.cpus[2].online = 0;
    b.emcHz = 1866000000;
    b.actmonPath = "/sys/kernel/actmon_avg_activity/mc_all";
    b.mcAllKHz = 373200; // 20 % of 1866 MHz
    b.memory = {8048464, 6512300, 4024232, 4024232,
        {{"DMA", {301, 220, 140, 88, 41, 22, 10, 6, 3, 1, 210}},
            {"Normal", {988, 512, 260, 130, 70, 31, 14, 7, 2, 1, 402}}}};
    b.fan = {FanLayout::JetPack4, 0, 0};
    b.nvpmodelStatus = pmode(1) + "\n";
    b.nvpmodelConf = nvpmodelConf({{0, "MAXN"}, {1, "MAXQ"}, {2, "MAXP_CORE_ALL"},
                                      {3, "MAXP_CORE_ARM"}, {4, "MAXP_CORE_DENVER"}},
        3);

    b.expectedRails = {{"VDD_SYS_GPU", "ina3221x", "0-0040", 1, 0.95, ""},
        {"VDD_SYS_SOC", "ina3221x", "0-0040", 2, 0.76, ""},
        {"VDD_4V0_WIFI", "ina3221x", "0-0040", 3, 0.1, ""},
        {"VDD_IN", "ina3221x", "0-0041", 1, 3.8, ""},
        {"VDD_SYS_CPU", "ina3221x", "0-0041", 2, 0.57, ""},
        {"VDD_SYS_DDR", "ina3221x", "0-0041", 3, 0.48, ""}};
    b.totalRail = "VDD_IN";
    return b;
}

BoardSpec xavierNxJp5()
{
    BoardSpec b;
    b.id = "xavier-nx-jp5";
    b.description = "Jetson Xavier NX Developer Kit, JetPack 5 (ina3221 under hwmon)";
    b.model = "NVIDIA Jetson Xavier NX Developer Kit";
    b.compatible = {"nvidia,p3509-0000+p3668-0001", "nvidia,p3668-0001", "nvidia,tegra194"};
    b.nvTegraRelease = "# R35 (release), REVISION: 5.0, GCID: 35550185, BOARD: t186ref, EABI: "
                       "aarch64, DATE: Tue Feb 20 04:46:31 UTC 2024";
    b.tegraChipId = 25;

    Ina3221Spec ina;
    ina.controller = "/sys/devices/platform/c250000.i2c";
    ina.bus = 7;
    ina.address = 0x40;
    ina.channels = {channel("VDD_IN", 5000, 1200), channel("VDD_CPU_GPU_CV", 5000, 400),
        channel("VDD_SOC", 5000, 300)};
    b.ina3221 = {ina};
    b.powerSupplies = {
        {"usb-charger", "/sys/devices/platform/3550000.xudc", "USB", -1, 5000000, 500000}};

    // Zone names on Xavier under JetPack 5 are not confirmed; these follow JetPack 4's.
    b.zones = {{"CPU-therm", 42500, 0, false, socTrips()},
        {"GPU-therm", 41000, 0, false, socTrips()}, {"AUX-therm", 41500, 0, false, {}},
        {"AO-therm", 40500, 0, false, {}}, {"PMIC-Die", 100000, 0, false, {}},
        {"Tboard_tegra", 34000, 0, false, {}}, {"Tdiode_tegra", 36750, 0, false, {}},
        {"thermal-fan-est", 41300, 0, false, fanTrips()}};
    b.devfreq = {{"/sys/devices/17000000.gv11b", "17000000.gv11b", "gv11b", 114750000, 114750000,
                     1100000000, 250},
        {"/sys/devices/platform/15340000.vic", "15340000.vic", "vic", 115200000, 115200000,
            601600000, -1}};
    b.cpus = onlineCpus(6, 1420800);
    b.emcHz = 1600000000;
    // As tegrastats reads a Xavier (T194): actmon in sysfs, each engine's on/off from the clock
    // framework's enable count and its rate from the BPMP's debugfs.
    b.actmonPath = "/sys/kernel/actmon_avg_activity/mc_all";
    b.mcAllKHz = 320000; // 20 % of 1600 MHz
    b.engines = {{"nvdec", 1, 716800000, true}, {"nvenc", 0, 1036800000, true},
        {"nvjpg", 0, 499200000, true}};
    b.memory = {7765580, 5214720, 3882784, 3801344,
        {{"DMA", {220, 160, 95, 60, 30, 14, 8, 4, 2, 1, 180}},
            {"Normal", {2301, 1405, 700, 320, 150, 70, 33, 15, 7, 3, 520}}}};
    b.fan = {FanLayout::Hwmon, 108, 2100};
    b.nvpmodelStatus = pmode(2) + "\n";
    b.nvpmodelConf =
        nvpmodelConf({{0, "MODE_15W_2CORE"}, {1, "MODE_15W_4CORE"}, {2, "MODE_15W_6CORE"},
                         {3, "MODE_10W_2CORE"}, {4, "MODE_10W_4CORE"}, {8, "MODE_20W_6CORE"}},
            2);

    b.expectedRails = {{"VDD_IN", "ina3221", "7-0040", 1, 6.0, ""},
        {"VDD_CPU_GPU_CV", "ina3221", "7-0040", 2, 2.0, ""},
        {"VDD_SOC", "ina3221", "7-0040", 3, 1.5, ""}};
    b.totalRail = "VDD_IN";
    b.expectedSkipped = {"7-0040 in7", "usb-charger"};
    return b;
}

BoardSpec orinNanoJp6()
{
    BoardSpec b;
    b.id = "orin-nano-jp6";
    b.description = "Jetson Orin Nano Developer Kit, JetPack 6 (ina3221 under hwmon)";
    b.model = "NVIDIA Jetson Orin Nano Developer Kit";
    b.compatible = {"nvidia,p3768-0000+p3767-0005", "nvidia,p3767-0005", "nvidia,tegra234"};
    b.nvTegraRelease = "# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: "
                       "aarch64, DATE: Wed Jan  8 01:49:37 UTC 2025";
    b.tegraChipId = 35;

    Ina3221Spec ina;
    ina.controller = "/sys/devices/platform/bus@0/c240000.i2c";
    ina.bus = 1;
    ina.address = 0x40;
    ina.channels = {channel("VDD_IN", 5000, 1500), channel("VDD_CPU_GPU_CV", 5000, 500),
        channel("VDD_SOC", 5000, 260)};
    b.ina3221 = {ina};

    b.zones = {{"cpu-thermal", 47000, 0, false, socTrips()},
        {"gpu-thermal", 46500, 0, false, socTrips()}, {"cv0-thermal", 0, EAGAIN, false, {}},
        {"cv1-thermal", 0, 0, true, {}}, {"cv2-thermal", 0, EAGAIN, false, {}},
        {"soc0-thermal", 45000, 0, false, {}}, {"soc1-thermal", 46000, 0, false, {}},
        {"soc2-thermal", 44500, 0, false, {}}, {"tj-thermal", 47000, 0, false, socTrips()}};
    b.devfreq = {{"/sys/devices/platform/bus@0/17000000.gpu", "17000000.gpu", "gpu", 306000000,
                     306000000, 1020000000, 87},
        {"/sys/devices/platform/bus@0/15340000.vic", "15340000.vic", "vic", 115200000, 115200000,
            729600000, -1}};
    b.cpus = onlineCpus(6, 1510400);
    b.emcHz = 2133000000;
    // Neither actmon nor the engine clocks are confirmed on JetPack 6: the tree has none.
    b.memory = {7802040, 5603112, 3901008, 3901008,
        {{"DMA", {150, 98, 60, 33, 17, 9, 5, 2, 1, 1, 240}},
            {"Normal", {3120, 1702, 850, 401, 188, 90, 41, 19, 9, 4, 610}}}};
    b.socthermOc = {0, 2, 0};
    b.fan = {FanLayout::Hwmon, 70, 1800};
    // Mode names as an R36.4 Orin Nano lists them; the ids are illustrative.
    b.nvpmodelStatus = pmode(0) + "\n";
    b.nvpmodelConf = nvpmodelConf({{0, "15W"}, {1, "7W"}, {2, "MAXN_SUPER"}}, 2);

    b.expectedRails = {{"VDD_IN", "ina3221", "1-0040", 1, 7.5, ""},
        {"VDD_CPU_GPU_CV", "ina3221", "1-0040", 2, 2.5, ""},
        {"VDD_SOC", "ina3221", "1-0040", 3, 1.3, ""}};
    b.totalRail = "VDD_IN";
    b.expectedSkipped = {"1-0040 in7"};
    return b;
}

BoardSpec agxOrinJp5()
{
    BoardSpec b;
    b.id = "agx-orin-jp5";
    b.description = "Jetson AGX Orin Developer Kit, JetPack 5 (two ina3221 under hwmon, no total)";
    b.model = "Jetson AGX Orin Developer Kit";
    b.compatible = {"nvidia,p3737-0000+p3701-0005", "nvidia,p3701-0005", "nvidia,tegra234"};
    b.nvTegraRelease = "# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref, EABI: "
                       "aarch64, DATE: Tue Aug  1 19:57:35 UTC 2023";
    b.tegraChipId = 35;

    Ina3221Spec rails;
    rails.controller = "/sys/devices/platform/c240000.i2c";
    rails.bus = 1;
    rails.address = 0x40;
    rails.channels = {channel("VDD_GPU_SOC", 19000, 200), channel("VDD_CPU_CV", 19000, 100),
        channel("VIN_SYS_5V0", 5000, 400)};
    Ina3221Spec memory = rails;
    memory.address = 0x41;
    memory.channels = {unconnected(), channel("VDDQ_VDD2_1V8AO", 5000, 100), unconnected()};
    b.ina3221 = {rails, memory};
    const std::string ucsi = "/sys/devices/platform/c240000.i2c/i2c-1/1-0008";
    b.powerSupplies = {{"ucsi-source-psy-1-00081", ucsi, "USB", -1, 20000000, 0},
        {"ucsi-source-psy-1-00082", ucsi, "USB", -1, 5000000, 0}};

    constexpr int64_t kGated = -256000;
    b.zones = {{"CPU-therm", 45500, 0, false, socTrips()},
        {"GPU-therm", kGated, 0, false, socTrips()}, {"CV0-therm", kGated, 0, false, {}},
        {"CV1-therm", kGated, 0, false, {}}, {"CV2-therm", kGated, 0, false, {}},
        {"SOC0-therm", 43000, 0, false, {}}, {"SOC1-therm", 43500, 0, false, {}},
        {"SOC2-therm", 42500, 0, false, {}}, {"tj-therm", 45500, 0, false, socTrips()},
        {"Tboard_tegra", 32000, 0, false, {}}, {"Tdiode_tegra", 33250, 0, false, {}}};
    b.devfreq = {{"/sys/devices/platform/17000000.ga10b", "17000000.ga10b", "ga10b", 306000000,
                     306000000, 1300500000, 0},
        {"/sys/devices/platform/15340000.vic", "15340000.vic", "vic", 115200000, 115200000,
            1036800000, -1}};
    b.cpus = onlineCpus(12, 2201600);
    b.emcHz = 3199000000;
    // JetPack 5 on Orin: actmon in debugfs as cactmon (where jetson-stats' reader looks first);
    // the engine clock names are not confirmed, so the tree has none.
    b.actmonPath = "/sys/kernel/debug/cactmon/mc_all";
    b.mcAllKHz = 319900; // 10 % of 3199 MHz
    b.memory = {31946516, 28013400, 15973256, 15973256,
        {{"DMA", {120, 80, 52, 30, 14, 7, 4, 2, 1, 1, 220}},
            {"Normal", {5120, 3102, 1600, 800, 402, 200, 96, 44, 20, 9, 6410}}}};
    b.socthermOc = {0, 0, 0};
    b.fan = {FanLayout::Hwmon, 60, 1500};
    b.nvpmodelStatus = pmode(3) + " fmode:quiet\n";
    b.nvpmodelConf =
        nvpmodelConf({{0, "MAXN"}, {1, "MODE_15W"}, {2, "MODE_30W"}, {3, "MODE_50W"}}, 2);

    b.expectedRails = {{"VDD_GPU_SOC", "ina3221", "1-0040", 1, 3.8, ""},
        {"VDD_CPU_CV", "ina3221", "1-0040", 2, 1.9, ""},
        {"VIN_SYS_5V0", "ina3221", "1-0040", 3, 2.0, ""},
        {"VDDQ_VDD2_1V8AO", "ina3221", "1-0041", 2, 0.5, ""}};
    b.totalRail = "";
    b.expectedSkipped = {"1-0040 in7", "1-0041 in1", "1-0041 in3", "1-0041 in7",
        "ucsi-source-psy-1-00081", "ucsi-source-psy-1-00082"};
    return b;
}

BoardSpec x86Host()
{
    BoardSpec b;
    b.id = "x86-host";
    b.description = "x86 laptop: RAPL powercap, a battery, no Jetson sensors";
    b.cpuModelName = "11th Gen Intel(R) Core(TM) i7-1185G7 @ 3.00GHz";

    constexpr uint64_t kRange = 262143328850;
    b.rapl = {{"intel-rapl:0", "package-0", kRange - 1500000, kRange, false},
        {"intel-rapl:0:0", "core", 123456789, kRange, false},
        {"intel-rapl:0:1", "uncore", 2345678, kRange, false},
        {"intel-rapl:1", "psys", 987654321, kRange, false},
        {"intel-rapl-mmio:0", "package-0", 1000, kRange, false}};
    const std::string acpi = "/sys/devices/LNXSYSTM:00/LNXSYBUS:00";
    b.powerSupplies = {{"AC", acpi + "/ACPI0003:00", "Mains", -1, -1, -1},
        {"BAT0", acpi + "/PNP0C0A:00", "Battery", -1, 12000000, 500000},
        {"ucsi-source-psy-USBC000:001", "/sys/devices/platform/USBC000:00", "USB", -1, 5000000, 0}};

    b.zones = {{"acpitz", 45000, 0, false, {{"critical", 105000}}},
        {"x86_pkg_temp", 52000, 0, false, {{"passive", 0}}}};
    b.cpus = std::vector<CpuSpec>(8, CpuSpec {2800000, 1, 5000, 45000});
    b.cpus[0].online = -1;
    b.memory = {16088572, 9804120, 2097148, 1801212,
        {{"DMA", {1, 1, 0, 1, 2, 1, 1, 0, 1, 1, 3}},
            {"DMA32", {840, 512, 300, 180, 90, 41, 20, 9, 4, 2, 310}},
            {"Normal", {4410, 2650, 1320, 700, 350, 170, 80, 38, 17, 8, 1500}}}};
    b.otherHwmon = {{"/sys/devices/platform/coretemp.0", "coretemp",
                        {{"temp1_input", line(52000)}, {"temp1_label", line("Package id 0")}}},
        {"/sys/devices/LNXSYSTM:00/LNXSYBUS:00/LNXTHERM:00", "acpitz",
            {{"temp1_input", line(45000)}}},
        {"/sys/devices/pci0000:00/0000:00:06.0/0000:01:00.0/nvme/nvme0", "nvme",
            {{"temp1_input", line(38850)}, {"temp1_label", line("Composite")}}}};

    b.expectedRails = {{"BAT0", "power_supply", "BAT0", 0, 6.0, ""},
        {"package-0", "intel-rapl", "intel-rapl:0", 0, 0.0, ""},
        {"core", "intel-rapl", "intel-rapl:0:0", 0, 0.0, "package-0"},
        {"uncore", "intel-rapl", "intel-rapl:0:1", 0, 0.0, "package-0"},
        {"psys", "intel-rapl", "intel-rapl:1", 0, 0.0, ""}};
    b.totalRail = "";
    b.expectedSkipped = {"AC", "ucsi-source-psy-USBC000:001", "intel-rapl-mmio:0"};
    return b;
}

BoardSpec thorJp7()
{
    BoardSpec b;
    b.id = "thor-jp7";
    b.description = "Jetson AGX Thor, JetPack 7: module ina3221 + carrier ina238 (bus numbers "
                    "and paths unconfirmed)";
    b.model = "NVIDIA Jetson AGX Thor Developer Kit";
    b.compatible = {"nvidia,p3971-0000+p3834-0008", "nvidia,p3834-0008", "nvidia,tegra264"};
    b.nvTegraRelease = "# R38 (release), REVISION: 2.0, GCID: 41844464, BOARD: generic, EABI: "
                       "aarch64, DATE: Fri Aug 22 00:55:42 UTC 2025";

    Ina3221Spec module;
    module.controller = "/sys/devices/platform/bus@0/c240000.i2c";
    module.bus = 1;
    module.address = 0x40;
    module.channels = {channel("VDD_GPU", 19000, 100), channel("VDD_CPU_SOC_MSS", 19000, 200),
        channel("VIN_SYS_5V0", 5000, 300)};
    b.ina3221 = {module};
    Ina2xxSpec carrier;
    carrier.controller = module.controller;
    carrier.bus = 1;
    carrier.address = 0x44;
    carrier.milliVolts = 19000;
    carrier.milliAmps = 600;
    carrier.microWatts = 11412000; // the chip's own power register, not V×I of the files
    b.ina2xx = {carrier};

    b.zones = {{"cpu-thermal", 44000, 0, false, socTrips()},
        {"gpu-thermal", 43000, 0, false, socTrips()}, {"tj-thermal", 44500, 0, false, socTrips()}};
    b.cpus = onlineCpus(14, 2601000);
    // Thor reports EMC activity elsewhere (BPMP debugfs) in units not confirmed: no actmon here.
    b.memory = {128431104, 121002880, 0, 0,
        {{"DMA", {64, 40, 22, 12, 6, 3, 2, 1, 1, 1, 250}},
            {"Normal", {9120, 5400, 2700, 1350, 680, 330, 160, 80, 40, 20, 28900}}}};
    b.socthermOc = {0, 0, 0};

    b.expectedRails = {{"VDD_GPU", "ina3221", "1-0040", 1, 1.9, ""},
        {"VDD_CPU_SOC_MSS", "ina3221", "1-0040", 2, 3.8, ""},
        {"VIN_SYS_5V0", "ina3221", "1-0040", 3, 1.5, ""},
        {"ina238", "ina238", "1-0044", 0, 11.412, ""}};
    b.totalRail = "ina238"; // the board profile aliases it to VIN
    b.expectedSkipped = {"1-0040 in7"};
    return b;
}

std::vector<BoardSpec> allBoards()
{
    return {nanoJp4(), tx2Jp4(), xavierNxJp5(), orinNanoJp6(), agxOrinJp5(), x86Host()};
}

const std::vector<BoardSpec>& fixtureBoards()
{
    static const std::vector<BoardSpec> boards = [] {
        std::vector<BoardSpec> all = allBoards();
        all.push_back(thorJp7());
        return all;
    }();
    return boards;
}

const BoardSpec* findFixtureBoard(const std::string& id)
{
    for (const BoardSpec& b : fixtureBoards())
        if (b.id == id)
            return &b;
    return nullptr;
}

} // namespace jetagent::fixtures
