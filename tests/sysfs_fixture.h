// Fixture sysfs trees on disk for the tests: SysfsFixture writes a board's tree (from
// jetagent/fixtures/fixture_boards.h) under a fresh temporary directory and registers its read
// faults with the sysfs fault seam (setSysfsReadFaults) for as long as it lives. Tests may edit a
// spec before building it.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "jetagent/base/status.h"
#include "jetagent/fixtures/fixture_boards.h"
#include "jetagent/hal/sysfs.h"

namespace jetagent::test {

// The board descriptions and trees, under the names the tests have always used.
using namespace jetagent::fixtures;

// ---- A tree on disk ---------------------------------------------------------------------------

// Rewrites use this width (value left-aligned, blank-padded, then "\n"), so every rewrite of a
// file has the same length and a concurrent reader never sees it empty or truncated.
constexpr int kRewriteWidth = 20;

class SysfsFixture {
public:
    // Builds `board` under a fresh directory in the system temp dir (removed with the fixture)
    // and registers its read faults. Error: what could not be created.
    static Expected<std::unique_ptr<SysfsFixture>> create(
        const BoardSpec& board, uint32_t seed = kDefaultHwmonSeed);
    // The same for a hand-made tree.
    static Expected<std::unique_ptr<SysfsFixture>> create(SysfsTree tree, BoardSpec board = {});
    ~SysfsFixture();
    SysfsFixture(const SysfsFixture&) = delete;
    SysfsFixture& operator=(const SysfsFixture&) = delete;

    const std::string& hostRoot() const { return root_; }
    SysfsRoot root() const { return SysfsRoot(root_); }
    std::string hostPath(const std::string& absolute) const { return root_ + absolute; }
    const BoardSpec& board() const { return board_; }
    const SysfsTree& tree() const { return tree_; }

    // The hwmon directory ("/sys/class/hwmon/hwmon3") of a chip ("1-0040"), or of a device named
    // by its hwmon name ("pwmfan", "soctherm_oc", "coretemp"); "" when there is none.
    std::string hwmonDirectory(const std::string& key) const;

    // Rewrites a rail's voltage and current in place (and the driver's power file, as V×I), each
    // with one pwrite of kRewriteWidth + 1 bytes and no truncation. Voltage is written before
    // current, as two separate conversions would land. Error: unknown rail or a failed write.
    Status setRailMilli(const std::string& rail, int64_t milliVolts, int64_t milliAmps);
    // Keeps the rail's last voltage and sets the current so that V×I = `watts` (to the mA).
    Status setRailWatts(const std::string& rail, double watts);
    // A RAPL zone's energy_uj, by zone id ("intel-rapl:0").
    Status setRaplEnergy(const std::string& zoneId, uint64_t microJoules);
    // Any attribute, as above.
    Status writeValue(const std::string& absolute, int64_t value);

    // Reads of `absolute` (resolved through links) fail with `error` from now on / again succeed.
    void setFault(const std::string& absolute, int error);
    void clearFault(const std::string& absolute);

private:
    SysfsFixture() = default;
    void publishFaults();

    std::string root_; // canonical host path
    BoardSpec board_;
    SysfsTree tree_;
    std::map<std::string, int> faults_; // canonical host path -> errno
    std::map<std::string, std::pair<int64_t, int64_t>> railMilli_; // last mV, mA per rail
};

} // namespace jetagent::test
