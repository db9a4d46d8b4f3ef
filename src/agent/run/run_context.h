// The context every result carries: what ran, where, with which versions.
#pragma once

#include <string>

#include "jetagent/hal/board_identity.h"

namespace jetagent {

struct RunContext {
    std::string jetagentVersion;
    std::string buildType;
    std::string compiler;
    std::string opencvVersion;
    std::string host; // hostname
    std::string os; // PRETTY_NAME from /etc/os-release
    std::string kernel; // uname -sr
    std::string machine; // uname -m
    std::string cpu; // model name (x86) or the device-tree model / CPU part (Arm)
    int cores = 0; // online CPUs
    std::string startedUtc; // ISO 8601
};

// The context of a run on `board` (hal's detectBoard, read under the config's power.sysfs_root:
// the board, its OS release and CPU come from there, the kernel and host from this process).
RunContext collectRunContext(const BoardIdentity& board);

// The current UTC time as "20261121T203000Z", for run directory names.
std::string utcStamp();

} // namespace jetagent
