// The context every result carries: what ran, where, with which versions.
#pragma once

#include <cstdint>
#include <string>

#include "jetagent/hal/board_identity.h"

namespace jetagent {

// Where a process's start-up went, from its start to the first frame its run captured: moments on
// the monotonic clock (nanoseconds, -1 where unknown) and the durations of the two steps measured
// inside it. Filled for the first run of the jetagent program only (RunOptions::mainStartNs); the
// summary derives its figures from these (summaryJson's context.startup).
struct StartupTimes {
    int64_t processStartNs = -1; // the kernel's start of the process (processStartNs())
    int64_t processStartResolutionNs = 0; // that start's precision: one clock tick of the kernel
    // main() began: before it, the dynamic loader mapped and relocated the shared libraries and
    // ran their constructors (the loading).
    int64_t mainStartNs = -1;
    int64_t sourceOpenNs = 0; // opening the source (openComponents)
    int64_t engineBuildNs = 0; // building the tasks: their models read, prepared, engines built
    int64_t pipelineStartNs = -1; // the pipeline started asking the source for frames
    int64_t firstFrameNs = -1; // the source handed over the first frame; -1 when none came

    bool known() const { return mainStartNs >= 0; }
};

// The fields of a /proc/PID/stat line: the start time (field 22, clock ticks since boot) or -1
// when the line is not one. The command name (field 2) may hold spaces and parentheses: the fields
// are counted after its last ')'.
int64_t startTicksFromStat(const std::string& statLine);

// This process's start on the monotonic clock, from /proc/self/stat (CLOCK_BOOTTIME ticks, moved
// onto CLOCK_MONOTONIC by the clocks' present difference); -1 when unreadable. `resolutionNs`
// receives one tick (10 ms at the usual 100 Hz): the start is known to that, rounded down.
int64_t processStartNs(int64_t& resolutionNs);

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
    StartupTimes startup; // the process's start-up; known() only for the program's first run
};

// The context of a run on `board` (hal's detectBoard, read under the config's power.sysfs_root:
// the board, its OS release and CPU come from there, the kernel and host from this process).
RunContext collectRunContext(const BoardIdentity& board);

// The current UTC time as "20261121T203000Z", for run directory names.
std::string utcStamp();

} // namespace jetagent
