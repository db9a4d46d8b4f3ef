// Power-rail discovery under a sysfs root, and one reader per driver (the layouts are described in
// docs/jetson-sysfs.md).
#include "jetagent/power/rails.h"

#include <algorithm>
#include <cerrno>
#include <map>
#include <utility>

#include "jetagent/base/log.h"
#include "jetagent/base/text.h"

namespace jetagent {

namespace {

constexpr int kIna3221Channels = 3;
constexpr int kIna3221ShuntSumChannel =
    7; // mainline: in7 = sum of shunt voltages, curr4 its current
constexpr int64_t kNsPerMs = 1000000;

// Discovery order of the drivers; rails sort by it first, then by device and channel.
enum class DriverRank { Ina3221, Ina3221Legacy, Ina2xx, PowerSupply, Rapl };

bool startsWith(const std::string& text, const std::string& prefix)
{
    return text.compare(0, prefix.size(), prefix) == 0;
}

std::string baseName(const std::string& path)
{
    const size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string parentOf(const std::string& path)
{
    const size_t slash = path.find_last_of('/');
    return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

// The text of a small attribute, or "" when it cannot be read.
std::string readName(const SysfsRoot& root, const std::string& absolute)
{
    auto text = root.readText(absolute);
    return text ? text.value() : std::string();
}

// The device a hwmon or iio directory belongs to ("1-0040"): its `device` link when there is one,
// else the directory that holds "hwmon/hwmonN" or "iio:deviceN".
std::string owningDevice(const SysfsRoot& root, const std::string& classDirectory)
{
    std::string device = root.canonical(classDirectory + "/device");
    if (!device.empty())
        return baseName(device);
    std::string resolved = root.canonical(classDirectory);
    if (resolved.empty())
        return "";
    resolved = parentOf(resolved);
    if (baseName(resolved) == "hwmon")
        resolved = parentOf(resolved);
    return baseName(resolved);
}

// A rail's voltage and current attributes, read together: each in `scale` volts or amperes a unit
// (1e-3 for mV and mA, 1e-6 for µV and µA).
class VoltageCurrent {
public:
    void open(const std::string& voltagePath, const std::string& currentPath)
    {
        voltage_.open(voltagePath);
        current_.open(currentPath);
    }

    // Sets out's voltage and current; on an error (the first) leaves `out` as it was.
    int read(double scale, RailReading& out)
    {
        int64_t voltage = 0;
        int64_t current = 0;
        if (const int error = voltage_.readInt(voltage))
            return error;
        if (const int error = current_.readInt(current))
            return error;
        out.voltageV = static_cast<double>(voltage) * scale;
        out.currentA = static_cast<double>(current) * scale;
        return 0;
    }

    // Reopens both; the first error.
    int reopen()
    {
        const int voltageError = voltage_.reopen();
        const int currentError = current_.reopen();
        return voltageError != 0 ? voltageError : currentError;
    }

private:
    SysfsAttribute voltage_;
    SysfsAttribute current_;
};

// mainline ina3221 under hwmon: inN_input (mV) and currN_input (mA); power is their product.
class Ina3221Rail final : public PowerRail {
public:
    Ina3221Rail(RailInfo info, const std::string& voltagePath, const std::string& currentPath)
    {
        info_ = std::move(info);
        info_.hasVoltageCurrent = true;
        voltageCurrent_.open(voltagePath, currentPath);
    }

    int read(int64_t /*nowNs*/, RailReading& out) override
    {
        if (const int error = voltageCurrent_.read(1e-3, out))
            return error;
        out.powerW = out.voltageV * out.currentA;
        return 0;
    }

    int reopen() override { return voltageCurrent_.reopen(); }

private:
    VoltageCurrent voltageCurrent_;
};

// JetPack 4's ina3221x under iio: the driver's own power figure (mW) beside voltage and current.
// The three are separate conversions in triggered mode, so power is taken from the driver rather
// than recomputed from a voltage and a current of different instants.
class Ina3221LegacyRail final : public PowerRail {
public:
    Ina3221LegacyRail(RailInfo info, const std::string& powerPath, const std::string& voltagePath,
        const std::string& currentPath)
    {
        info_ = std::move(info);
        info_.hasVoltageCurrent = true;
        power_.open(powerPath);
        voltageCurrent_.open(voltagePath, currentPath);
    }

    int read(int64_t /*nowNs*/, RailReading& out) override
    {
        int64_t milliWatts = 0;
        if (const int error = power_.readInt(milliWatts))
            return error;
        if (const int error = voltageCurrent_.read(1e-3, out))
            return error;
        out.powerW = static_cast<double>(milliWatts) * 1e-3;
        return 0;
    }

    int reopen() override
    {
        const int powerError = power_.reopen();
        const int voltageCurrentError = voltageCurrent_.reopen();
        return powerError != 0 ? powerError : voltageCurrentError;
    }

private:
    SysfsAttribute power_;
    VoltageCurrent voltageCurrent_;
};

// Single-channel INA2xx under hwmon (ina219/226/238...): power1_input (µW) when the driver has
// it, else in1_input (bus mV) × curr1_input (mA).
class Ina2xxRail final : public PowerRail {
public:
    Ina2xxRail(RailInfo info, const std::string& powerPath, const std::string& voltagePath,
        const std::string& currentPath)
    {
        info_ = std::move(info);
        if (!powerPath.empty())
            power_.open(powerPath);
        info_.hasVoltageCurrent = !voltagePath.empty() && !currentPath.empty();
        if (info_.hasVoltageCurrent)
            voltageCurrent_.open(voltagePath, currentPath);
    }

    int read(int64_t /*nowNs*/, RailReading& out) override
    {
        RailReading reading;
        if (info_.hasVoltageCurrent)
            if (const int error = voltageCurrent_.read(1e-3, reading))
                return error;
        reading.powerW = reading.voltageV * reading.currentA;
        if (!power_.path().empty()) {
            int64_t microWatts = 0;
            if (const int error = power_.readInt(microWatts))
                return error;
            reading.powerW = static_cast<double>(microWatts) * 1e-6;
        }
        out = reading;
        return 0;
    }

    int reopen() override
    {
        int first = power_.path().empty() ? 0 : power_.reopen();
        if (info_.hasVoltageCurrent) {
            const int voltageCurrentError = voltageCurrent_.reopen();
            if (first == 0)
                first = voltageCurrentError;
        }
        return first;
    }

private:
    SysfsAttribute power_;
    VoltageCurrent voltageCurrent_;
};

// power_supply class: power_now (µW), or voltage_now (µV) × current_now (µA).
class PowerSupplyRail final : public PowerRail {
public:
    PowerSupplyRail(RailInfo info, const std::string& powerPath, const std::string& voltagePath,
        const std::string& currentPath)
    {
        info_ = std::move(info);
        info_.hasVoltageCurrent = powerPath.empty();
        if (info_.hasVoltageCurrent)
            voltageCurrent_.open(voltagePath, currentPath);
        else
            power_.open(powerPath);
    }

    int read(int64_t /*nowNs*/, RailReading& out) override
    {
        if (info_.hasVoltageCurrent) {
            if (const int error = voltageCurrent_.read(1e-6, out))
                return error;
            out.powerW = out.voltageV * out.currentA;
            return 0;
        }
        int64_t microWatts = 0;
        if (const int error = power_.readInt(microWatts))
            return error;
        out.powerW = static_cast<double>(microWatts) * 1e-6;
        return 0;
    }

    int reopen() override
    {
        return info_.hasVoltageCurrent ? voltageCurrent_.reopen() : power_.reopen();
    }

private:
    SysfsAttribute power_;
    VoltageCurrent voltageCurrent_;
};

// Intel RAPL powercap zone: a cumulative energy counter, so each reading is the mean power since
// the previous one (RailInfo::averaged).
class RaplRail final : public PowerRail {
public:
    RaplRail(RailInfo info, SysfsAttribute energy, uint64_t maxRangeUj, uint64_t primedUj,
        int64_t primedNs)
        : energy_(std::move(energy)),
          maxRangeUj_(maxRangeUj),
          previousUj_(primedUj),
          previousNs_(primedNs)
    {
        info_ = std::move(info);
        info_.averaged = true;
    }

    int read(int64_t nowNs, RailReading& out) override
    {
        int64_t value = 0;
        if (const int error = energy_.readInt(value))
            return error;
        if (value < 0)
            return EINVAL;
        const auto currentUj = static_cast<uint64_t>(value);
        const int64_t elapsedNs = nowNs - previousNs_;
        if (elapsedNs <= 0) {
            // No time has passed since the last read: repeat its figure rather than divide by 0.
            out.powerW = lastW_;
            return 0;
        }
        const uint64_t deltaUj = raplEnergyDeltaUj(previousUj_, currentUj, maxRangeUj_);
        // µJ / ns = 1e-6 J / 1e-9 s.
        lastW_ = static_cast<double>(deltaUj) * 1e3 / static_cast<double>(elapsedNs);
        previousUj_ = currentUj;
        previousNs_ = nowNs;
        out.powerW = lastW_;
        return 0;
    }

    int reopen() override { return energy_.reopen(); }

private:
    SysfsAttribute energy_;
    uint64_t maxRangeUj_ = 0;
    uint64_t previousUj_ = 0;
    int64_t previousNs_ = 0;
    double lastW_ = 0.0;
};

struct Found {
    DriverRank rank;
    std::unique_ptr<PowerRail> rail;
};

class Discoverer {
public:
    Discoverer(const SysfsRoot& root, int64_t nowNs) : root_(root), nowNs_(nowNs) { }

    RailDiscovery run()
    {
        hwmon();
        iio();
        powerSupplies();
        rapl();
        std::stable_sort(found_.begin(), found_.end(), [](const Found& a, const Found& b) {
            const RailInfo& x = a.rail->info();
            const RailInfo& y = b.rail->info();
            if (a.rank != b.rank)
                return a.rank < b.rank;
            if (x.device != y.device)
                return naturalLess(x.device, y.device);
            return x.channel < y.channel;
        });
        RailDiscovery result;
        for (Found& f : found_)
            result.rails.push_back(std::move(f.rail));
        // Found in hwmon-number order, which changes from boot to boot: sort for a stable list.
        std::stable_sort(skipped_.begin(), skipped_.end(), naturalLess);
        result.skipped = std::move(skipped_);
        return result;
    }

private:
    void skip(const std::string& line)
    {
        skipped_.push_back(line);
        logger("power")->debug("rail discovery: skipped {}", line);
    }

    void add(DriverRank rank, std::unique_ptr<PowerRail> rail)
    {
        logger("power")->debug("rail discovery: {} ({} {} channel {}) in {}", rail->info().name,
            rail->info().driver, rail->info().device, rail->info().channel, rail->info().directory);
        found_.push_back(Found {rank, std::move(rail)});
    }

    void hwmon()
    {
        const std::string classDir = "/sys/class/hwmon";
        std::vector<std::pair<std::string, std::string>> ina2xx; // directory, hwmon name
        for (const std::string& entry : root_.list(classDir)) {
            const std::string dir = classDir + "/" + entry;
            const std::string name = readName(root_, dir + "/name");
            if (name == "ina3221")
                ina3221(dir);
            else if (startsWith(name, "ina") && name != "ina3221x" &&
                (root_.exists(dir + "/power1_input") ||
                    (root_.exists(dir + "/in1_input") && root_.exists(dir + "/curr1_input"))))
                ina2xx.emplace_back(dir, name);
        }
        std::map<std::string, int> nameCount;
        for (const auto& chip : ina2xx)
            ++nameCount[chip.second];
        for (const auto& [dir, name] : ina2xx)
            ina2xxChip(dir, name, nameCount[name] == 1);
    }

    void ina3221(const std::string& dir)
    {
        const std::string device = owningDevice(root_, dir);
        int64_t periodNs = 0;
        if (const auto intervalMs = root_.readInt(dir + "/update_interval"); intervalMs)
            periodNs = *intervalMs * kNsPerMs;
        for (int channel = 1; channel <= kIna3221Channels; ++channel) {
            const std::string n = std::to_string(channel);
            const std::string where = device + " in" + n;
            const auto label = root_.readText(dir + "/in" + n + "_label");
            if (!label) {
                // mainline shows a label only for channels the device tree names; a channel
                // without one is not wired to anything we could report.
                if (root_.exists(dir + "/in" + n + "_input"))
                    skip(where + ": no label");
                continue;
            }
            if (label.value() == "NC") {
                skip(where + ": NC (not connected)");
                continue;
            }
            const std::string voltage = dir + "/in" + n + "_input";
            const std::string current = dir + "/curr" + n + "_input";
            if (!root_.exists(voltage) || !root_.exists(current)) {
                skip(where + " (" + label.value() + "): no in" + n + "_input/curr" + n + "_input");
                continue;
            }
            RailInfo info;
            info.name = label.value();
            info.driver = "ina3221";
            info.device = device;
            info.directory = dir;
            info.channel = channel;
            info.updatePeriodNs = periodNs;
            add(DriverRank::Ina3221,
                std::make_unique<Ina3221Rail>(
                    std::move(info), root_.path(voltage), root_.path(current)));
        }
        const std::string sum = std::to_string(kIna3221ShuntSumChannel);
        if (const auto label = root_.readText(dir + "/in" + sum + "_label"); label)
            skip(device + " in" + sum + ": " + label.value() + " (not a rail)");
    }

    void ina2xxChip(const std::string& dir, const std::string& name, bool unique)
    {
        const std::string device = owningDevice(root_, dir);
        RailInfo info;
        info.name = unique || device.empty() ? name : name + "-" + device;
        info.driver = name;
        info.device = device;
        info.directory = dir;
        if (const auto intervalMs = root_.readInt(dir + "/update_interval"); intervalMs)
            info.updatePeriodNs = *intervalMs * kNsPerMs;
        const std::string power = dir + "/power1_input";
        const std::string voltage = dir + "/in1_input";
        const std::string current = dir + "/curr1_input";
        const bool haveVI = root_.exists(voltage) && root_.exists(current);
        add(DriverRank::Ina2xx,
            std::make_unique<Ina2xxRail>(std::move(info),
                root_.exists(power) ? root_.path(power) : std::string(),
                haveVI ? root_.path(voltage) : std::string(),
                haveVI ? root_.path(current) : std::string()));
    }

    void iio()
    {
        const std::string classDir = "/sys/bus/iio/devices";
        for (const std::string& entry : root_.list(classDir)) {
            const std::string dir = classDir + "/" + entry;
            if (readName(root_, dir + "/name") != "ina3221x")
                continue;
            const std::string device = owningDevice(root_, dir);
            for (int index = 0; index < kIna3221Channels; ++index) {
                const std::string n = std::to_string(index);
                const std::string where = device + " rail_name_" + n;
                const auto label = root_.readText(dir + "/rail_name_" + n);
                if (!label)
                    continue;
                if (label.value() == "NC" || label.value().empty()) {
                    skip(where + ": NC (not connected)");
                    continue;
                }
                const std::string power = dir + "/in_power" + n + "_input";
                const std::string voltage = dir + "/in_voltage" + n + "_input";
                const std::string current = dir + "/in_current" + n + "_input";
                if (!root_.exists(power) || !root_.exists(voltage) || !root_.exists(current)) {
                    skip(where + " (" + label.value() + "): no in_power/voltage/current" + n +
                        "_input");
                    continue;
                }
                RailInfo info;
                info.name = label.value();
                info.driver = "ina3221x";
                info.device = device;
                info.directory = dir;
                info.channel = index + 1;
                // The legacy driver's refresh period depends on its running mode and device
                // tree averaging, none of which it exposes: unknown.
                info.updatePeriodNs = 0;
                add(DriverRank::Ina3221Legacy,
                    std::make_unique<Ina3221LegacyRail>(std::move(info), root_.path(power),
                        root_.path(voltage), root_.path(current)));
            }
        }
    }

    void powerSupplies()
    {
        const std::string classDir = "/sys/class/power_supply";
        for (const std::string& entry : root_.list(classDir)) {
            const std::string dir = classDir + "/" + entry;
            const std::string type = readName(root_, dir + "/type");
            // These describe USB power-delivery negotiation (what a port could supply), not
            // power the board draws.
            if (startsWith(entry, "ucsi-source-psy-") || entry == "usb-charger" ||
                startsWith(type, "USB")) {
                skip(entry + ": USB-PD negotiation, not board power");
                continue;
            }
            const std::string power = dir + "/power_now";
            const std::string voltage = dir + "/voltage_now";
            const std::string current = dir + "/current_now";
            const bool havePower = root_.exists(power);
            if (!havePower && !(root_.exists(voltage) && root_.exists(current))) {
                skip(entry + ": no power_now or voltage_now/current_now");
                continue;
            }
            RailInfo info;
            info.name = entry;
            info.driver = "power_supply";
            info.device = entry;
            info.directory = dir;
            add(DriverRank::PowerSupply,
                std::make_unique<PowerSupplyRail>(std::move(info),
                    havePower ? root_.path(power) : std::string(), root_.path(voltage),
                    root_.path(current)));
        }
    }

    void rapl()
    {
        const std::string classDir = "/sys/class/powercap";
        const std::vector<std::string> entries = root_.list(classDir);
        std::map<std::string, std::string> zoneNames; // "intel-rapl:0" -> "package-0"
        for (const std::string& entry : entries)
            if (startsWith(entry, "intel-rapl:"))
                zoneNames[entry] = readName(root_, classDir + "/" + entry + "/name");
        for (const std::string& entry : entries) {
            const std::string dir = classDir + "/" + entry;
            if (startsWith(entry, "intel-rapl-mmio:")) {
                // The same package counter through the MMIO interface: counting it would count
                // the package twice.
                skip(entry + " (" + readName(root_, dir + "/name") +
                    "): MMIO duplicate of an intel-rapl zone");
                continue;
            }
            if (!startsWith(entry, "intel-rapl:"))
                continue;
            raplZone(entry, dir, zoneNames);
        }
        // Sub-zones of different packages share names ("core"): make every name unique.
        std::map<std::string, int> count;
        for (const Found& f : found_)
            if (f.rank == DriverRank::Rapl)
                ++count[f.rail->info().name];
        for (Found& f : found_)
            if (f.rank == DriverRank::Rapl && count[f.rail->info().name] > 1)
                f.rail->rename(f.rail->info().name + "-" + f.rail->info().device);
    }

    void raplZone(const std::string& entry, const std::string& dir,
        const std::map<std::string, std::string>& zoneNames)
    {
        const std::string& name = zoneNames.at(entry);
        const std::string label = entry + " (" + (name.empty() ? "unnamed" : name) + ")";
        const auto maxRange = root_.readInt(dir + "/max_energy_range_uj");
        if (!maxRange || *maxRange <= 0) {
            skip(label + ": no max_energy_range_uj");
            return;
        }
        SysfsAttribute energy;
        int error = energy.open(root_.path(dir + "/energy_uj"));
        int64_t primed = 0;
        if (error == 0)
            error = energy.readInt(primed);
        if (error == EACCES || error == EPERM) {
            skip(label +
                ": energy_uj permission denied (root-only since the 2020 RAPL "
                "side-channel fix, CVE-2020-8694)");
            return;
        }
        if (error != 0) {
            skip(label + ": energy_uj unreadable: " + errnoText(error));
            return;
        }
        RailInfo info;
        info.name = name.empty() ? entry : name;
        info.driver = "intel-rapl";
        info.device = entry;
        info.directory = dir;
        // "intel-rapl:0:1" is part of "intel-rapl:0".
        const size_t lastColon = entry.find_last_of(':');
        if (lastColon != std::string::npos && entry.find(':') != lastColon) {
            const auto parent = zoneNames.find(entry.substr(0, lastColon));
            if (parent != zoneNames.end())
                info.parent = parent->second.empty() ? parent->first : parent->second;
        }
        add(DriverRank::Rapl,
            std::make_unique<RaplRail>(std::move(info), std::move(energy),
                static_cast<uint64_t>(*maxRange),
                static_cast<uint64_t>(std::max<int64_t>(primed, 0)), nowNs_));
    }

    const SysfsRoot& root_;
    int64_t nowNs_;
    std::vector<Found> found_;
    std::vector<std::string> skipped_;
};

} // namespace

RailDiscovery discoverRails(const SysfsRoot& root, int64_t nowNs)
{
    return Discoverer(root, nowNs).run();
}

uint64_t raplEnergyDeltaUj(uint64_t previousUj, uint64_t currentUj, uint64_t maxRangeUj)
{
    if (currentUj >= previousUj)
        return currentUj - previousUj;
    // The counter wrapped once: it ran from previous up to the range, then from 0 to current.
    if (maxRangeUj == 0 || previousUj > maxRangeUj)
        return currentUj;
    return (maxRangeUj - previousUj) + currentUj;
}

} // namespace jetagent
