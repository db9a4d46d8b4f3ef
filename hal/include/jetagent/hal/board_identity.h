// What board this is: model, chip, L4T release and JetPack generation, read from the device tree,
// /etc/nv_tegra_release and the tegra_fuse module (see docs/jetson-sysfs.md for the layouts).
#pragma once

#include <string>
#include <vector>

#include "jetagent/hal/sysfs.h"

namespace jetagent {

struct BoardIdentity {
    std::string
        model; // /proc/device-tree/model ("NVIDIA Jetson Orin Nano Developer Kit"); "" if none
    std::vector<std::string> compatible; // /proc/device-tree/compatible, most specific first
    std::string chip; // the last compatible entry ("nvidia,tegra234"); "" without a device tree
    int tegraChipId =
        0; // tegra_fuse's tegra_chip_id: 33 T210, 24 T186, 25 T194, 35 T234; 0 unknown
    std::string soc; // "T210", "T186", "T194", "T234", "T264" from the chip or the fuse; "" unknown
    std::string l4tRelease; // "R36.4.3" from /etc/nv_tegra_release; "" when absent
    int l4tMajor = 0; // 32, 35, 36, 38...; 0 unknown
    int jetpack = 0; // JetPack generation from the L4T major: R32 4, R35 5, R36 6, R38 7; 0 unknown
    std::string cpuModel; // /proc/cpuinfo "model name" (hosts without a device tree); "" if none
    std::string os; // PRETTY_NAME from /etc/os-release ("Ubuntu 22.04.5 LTS"); "" if none
    int onlineCpus = 0; // CPUs in /sys/devices/system/cpu/online ("0-3,5" is 5); 0 unknown

    // True for an NVIDIA Tegra/Jetson board (by compatible string, fuse or L4T release).
    bool isJetson() const;
    // One line for logs and summaries: "NVIDIA Jetson Orin Nano Developer Kit (T234, L4T R36.4.3,
    // JetPack 6)" or "Linux host (Intel(R) Core(TM) ...)".
    std::string describe() const;
};

// Reads the identity under `root`. Missing files leave their fields empty; never fails.
BoardIdentity detectBoard(const SysfsRoot& root);

} // namespace jetagent
