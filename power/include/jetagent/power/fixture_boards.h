// Fixture sysfs trees for six Jetson boards and an x86 host, built from declarative descriptions.
//
// The trees follow docs/jetson-sysfs.md file for file, with the kernel's relative links and quirks.
// A BoardSpec says what the board has (INA3221 chips and their channels, thermal zones, GPU, CPUs,
// fan, power mode, identity) and what discovery should find on it. lowerBoard() turns it into a
// SysfsTree, a plain list of files, links and injected read faults, which write() puts on disk.
// The test suite runs discovery against them (tests/sysfs_fixture.h adds the read faults and live
// rewrites); `jetagent power --fixture NAME` lets anyone try the power view without the board.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "jetagent/base/status.h"

namespace jetagent::fixtures {

// ---- The declarative description ------------------------------------------------------------

struct InaChannelSpec {
    std::string label; // "VDD_IN"; "NC" for an unconnected channel
    int64_t milliVolts = 0;
    int64_t milliAmps = 0;
    int64_t milliWatts = -1; // legacy iio only: the driver's own power figure; -1 = V×I
    int readErrno = 0; // the channel's inputs fail with this errno (NC: ENODATA); 0 = readable
};

struct Ina3221Spec {
    bool legacyIio = false; // JetPack 4 `ina3221x` under iio; else mainline `ina3221` under hwmon
    std::string controller; // the I2C controller's device: "/sys/devices/platform/c240000.i2c"
    int bus = 1;
    int address = 0x40;
    std::array<InaChannelSpec, 3> channels;
    int updateIntervalMs = 7; // mainline `update_interval`
    int samples = 4; // mainline `samples`
};

// A single-channel INA2xx under hwmon (Thor's carrier INA238).
struct Ina2xxSpec {
    std::string chip = "ina238"; // hwmon `name`
    std::string controller;
    int bus = 0;
    int address = 0x44;
    int64_t milliVolts = 0;
    int64_t milliAmps = 0;
    int64_t microWatts = -1; // power1_input; -1 = V×I; -2 = no power1_input file
};

struct PowerSupplySpec {
    std::string name; // "BAT0", "ucsi-source-psy-1-00081", "usb-charger"
    std::string device; // the device the class entry links to
    std::string type; // "Battery", "Mains", "USB"
    int64_t powerNowUw = -1; // -1 = no file
    int64_t voltageNowUv = -1;
    int64_t currentNowUa = -1;
};

struct RaplZoneSpec {
    std::string id; // "intel-rapl:0", "intel-rapl:0:1", "intel-rapl-mmio:0"
    std::string name; // "package-0", "core", "uncore", "dram", "psys"
    uint64_t energyUj = 0;
    uint64_t maxRangeUj = 262143328850; // a typical client package's range
    bool permissionDenied = false; // energy_uj mode 0400 (and EACCES through the seam: tests run
                                   // as root, which ignores the mode)
};

struct TripSpec {
    std::string type; // "passive", "active", "hot", "critical"
    int64_t milliCelsius = 0;
};

struct ThermalZoneSpec {
    std::string type;
    int64_t milliCelsius = 0;
    int readErrno = 0; // `temp` fails with this errno (JetPack 6 cv zones: EAGAIN)
    bool empty = false; // `temp` reads empty (also seen on JetPack 6 cv zones)
    std::vector<TripSpec> trips;
};

struct DevfreqSpec {
    std::string device; // "/sys/devices/gpu.0"
    std::string name; // devfreq entry: "57000000.gpu"
    std::string ofNode; // device-tree node name: "gpu", "gv11b", "ga10b", "vic"
    int64_t curFreqHz = 0;
    int64_t minFreqHz = 0;
    int64_t maxFreqHz = 0;
    int load = -1; // `<device>/load` 0..1000; -1 = no load file
};

struct CpuSpec {
    int64_t curKHz = 0;
    int online = -1; // `online` file content; -1 = no file (cpu0)
    // Its /proc/stat counters in ticks (an offline core has no line): busy splits 3:1 into user
    // and system, idle is idle. A load shows once a test advances them and rewrites the file.
    uint64_t busyTicks = 0;
    uint64_t idleTicks = 0;
};

// /proc/meminfo and /proc/buddyinfo.
struct MemorySpec {
    int64_t totalKB = -1; // MemTotal; -1 = no /proc/meminfo
    int64_t availableKB = 0;
    int64_t swapTotalKB = 0; // 0 = no swap
    int64_t swapFreeKB = 0;
    // /proc/buddyinfo's zones: name ("DMA", "Normal") and free blocks per order from 0; no zones
    // = no file.
    std::vector<std::pair<std::string, std::vector<int64_t>>> buddyZones;
};

// An engine's clock in debugfs (clk_enable_count and clk_rate; the rate in the BPMP's debugfs
// instead where `bpmpRate`).
struct EngineSpec {
    std::string name; // "nvdec", "nvenc", "nvjpg", "vic", "dla0"
    int enableCount = 0;
    int64_t rateHz = 0;
    bool bpmpRate = false;
};

enum class FanLayout {
    None,
    JetPack4, // /sys/devices/pwm-fan/{target_pwm,rpm_measured}
    Hwmon, // hwmon `pwmfan` (pwm1) and hwmon `pwm_tach` (rpm)
};

struct FanSpec {
    FanLayout layout = FanLayout::None;
    int pwm = 0;
    int rpm = 0;
};

// Any other hwmon device (coretemp, nvme...): discovery must pass it by.
struct HwmonSpec {
    std::string device;
    std::string name;
    std::vector<std::pair<std::string, std::string>> files; // file name -> content
};

struct ExpectedRail {
    std::string name;
    std::string driver;
    std::string device;
    int channel = 0;
    double watts = 0.0; // the first reading; 0 for averaged (RAPL) rails
    std::string parent;
};

struct BoardSpec {
    std::string id; // "orin-nano-jp6"
    std::string description;

    // Identity. An empty model means no device tree (x86 hosts).
    std::string model;
    std::vector<std::string> compatible; // most specific first; the last is the chip
    std::string nvTegraRelease; // first line of /etc/nv_tegra_release; "" = no file
    int tegraChipId = 0; // 0 = no tegra_fuse parameter
    std::string cpuModelName; // /proc/cpuinfo "model name"; "" = no /proc/cpuinfo

    std::vector<Ina3221Spec> ina3221;
    std::vector<Ina2xxSpec> ina2xx;
    std::vector<PowerSupplySpec> powerSupplies;
    std::vector<RaplZoneSpec> rapl;
    std::vector<ThermalZoneSpec> zones; // thermal_zone0, 1, ... in this order
    std::vector<DevfreqSpec> devfreq; // the GPU and other devfreq devices
    std::vector<CpuSpec> cpus;
    int64_t emcHz = -1; // bpmp debugfs emc rate; -1 = none
    std::string actmonPath; // actmon's mc_all file; "" = none (not confirmed for the board)
    int64_t mcAllKHz = 0; // its content
    std::vector<EngineSpec> engines; // only where the board's clock names are confirmed
    MemorySpec memory;
    std::array<int64_t, 3> socthermOc {-1, -1, -1}; // oc1..3_event_cnt; -1 = no soctherm_oc
    FanSpec fan;
    std::vector<HwmonSpec> otherHwmon;
    std::string nvpmodelStatus; // /var/lib/nvpmodel/status content; "" = no file
    std::string nvpmodelConf; // /etc/nvpmodel.conf content; "" = no file

    // What discovery should find, in discovery order, and the one-line reasons it should give for
    // the channels it leaves out (each entry a prefix of exactly one `skipped` line).
    std::vector<ExpectedRail> expectedRails;
    std::string totalRail; // the module-input rail as discovery names it; "" = sum (estimate)
    std::vector<std::string> expectedSkipped;
};

// The six boards of record, plus Thor, whose layout is only partly confirmed.
BoardSpec nanoJp4(); // iio 6-0040; PMIC-Die 100000; JetPack 4 fan; mode 0 MAXN
BoardSpec tx2Jp4(); // iio 0-0040 + 0-0041; Denver cores offline (mode 1 MAXQ); JetPack 4 fan
BoardSpec xavierNxJp5(); // hwmon 7-0040; gv11b GPU; hwmon fan; usb-charger entry
BoardSpec orinNanoJp6(); // hwmon 1-0040; JetPack 6 zone names, cv0 EAGAIN, cv1 empty, cv2 EAGAIN
BoardSpec agxOrinJp5(); // hwmon 1-0040 + 1-0041 (NC channels fail ENODATA), no total rail,
                        // -256000 gated GPU/CV zones, soctherm_oc, UCSI supplies
BoardSpec x86Host(); // RAPL package-0 (near wrap) with core/uncore, psys, an MMIO duplicate;
                     // BAT0 (V×I), AC, a UCSI supply; coretemp/acpitz/nvme hwmons; no GPU
BoardSpec thorJp7(); // module INA3221 + carrier INA238 (power1_input µW); numbering unconfirmed

// The six boards of record (not Thor), for tests that run on each.
std::vector<BoardSpec> allBoards();

// The board's /proc/stat from its cores' counters (the aggregate line first, offline cores left
// out as the kernel does).
std::string procStatText(const BoardSpec& board);

// ---- The file-level tree ----------------------------------------------------------------------

// Where a rail's values live, so tests can play waveforms into them.
struct RailFiles {
    std::string voltage; // absolute inside the tree; "" = none
    std::string current;
    std::string power; // the driver's power file; "" = none
    int64_t voltageScale = 1; // file units per millivolt (1: mV, 1000: µV)
    int64_t currentScale = 1; // file units per milliamp
    int64_t powerScale = 1; // file units per milliwatt (1: mW, 1000: µW)
};

class SysfsTree {
public:
    // Paths are absolute inside the tree ("/sys/devices/..."); parents are created as needed.
    void file(const std::string& path, const std::string& content, unsigned mode = 0644);
    // A symlink at `path` to `target` (absolute inside the tree), written relative like the
    // kernel's ("../../devices/platform/...").
    void link(const std::string& path, const std::string& target);
    void directory(const std::string& path);
    // Reads of `path` (a real file, not a link) fail with `error` through the fault seam.
    void fault(const std::string& path, int error);
    // Records where a rail's values live, under the name discovery gives it (an INA2xx under both
    // "ina238" and "ina238-1-0044", since which one discovery uses depends on the other chips).
    void rail(const std::string& name, const RailFiles& files);
    // Records a hwmon class directory under its chip ("1-0040") and its hwmon name ("pwmfan").
    void hwmon(const std::string& key, const std::string& directory);

    struct Entry {
        enum class Kind { File, Link, Directory } kind = Kind::File;
        std::string content; // file content or link target
        unsigned mode = 0644;
    };
    const std::map<std::string, Entry>& entries() const { return entries_; }
    const std::map<std::string, int>& faults() const { return faults_; }
    const std::map<std::string, RailFiles>& rails() const { return rails_; }
    const std::map<std::string, std::string>& hwmons() const { return hwmons_; }

    // Writes the tree under `hostRoot` (which must exist). Error: the first path that failed.
    Status write(const std::string& hostRoot) const;

private:
    std::map<std::string, Entry> entries_;
    std::map<std::string, int> faults_;
    std::map<std::string, RailFiles> rails_;
    std::map<std::string, std::string> hwmons_;
};

// The seed tests use unless they vary it on purpose.
constexpr uint32_t kDefaultHwmonSeed = 20240611;

// Lowers a board description to files. hwmon numbers are a permutation chosen by `seed`.
SysfsTree lowerBoard(const BoardSpec& board, uint32_t seed = kDefaultHwmonSeed);

// The directory of a RAPL zone ("intel-rapl:0:1") under /sys/devices/virtual/powercap.
std::string raplZoneDirectory(const std::string& id);

// Every fixture board: the six of record, then Thor.
const std::vector<BoardSpec>& fixtureBoards();
// The fixture board with this id ("orin-nano-jp6"), or nullptr.
const BoardSpec* findFixtureBoard(const std::string& id);

} // namespace jetagent::fixtures
