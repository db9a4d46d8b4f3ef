// What this process uses, read from the kernel: CPU time, resident memory (now and at its peak)
// and the system's available memory. For the run summary, `compare` and `sweep`.
#pragma once

#include <cstdint>
#include <ctime>
#include <fstream>
#include <limits>
#include <malloc.h>
#include <sstream>
#include <string>

namespace jetagent {

// CPU time of every thread of the process (CLOCK_PROCESS_CPUTIME_ID), in nanoseconds.
inline int64_t processCpuNs()
{
    timespec ts {};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The value of "Key:   123 kB" in a /proc file, in MiB; NaN when absent or unreadable.
inline double procKbFieldMb(const char* path, const std::string& key)
{
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        if (line.compare(0, key.size(), key) != 0 || line.size() <= key.size() ||
            line[key.size()] != ':')
            continue;
        std::istringstream fields(line.substr(key.size() + 1));
        double kb = 0;
        if (fields >> kb)
            return kb / 1024.0;
    }
    return std::numeric_limits<double>::quiet_NaN();
}

struct ProcessMemory {
    double rssMb = std::numeric_limits<double>::quiet_NaN(); // VmRSS
    double peakMb = std::numeric_limits<double>::quiet_NaN(); // VmHWM: the peak since start, or
                                                              // since resetPeakRss()
};

inline ProcessMemory processMemory()
{
    return {
        procKbFieldMb("/proc/self/status", "VmRSS"), procKbFieldMb("/proc/self/status", "VmHWM")};
}

// Resets the peak RSS to the current RSS (/proc/self/clear_refs, Linux 4.0 on); false where the
// kernel refuses (the peak is then the process's since start).
inline bool resetPeakRss()
{
    std::ofstream out("/proc/self/clear_refs");
    out << "5";
    out.flush();
    return static_cast<bool>(out);
}

// Bytes the C heap holds in use now (malloc's arenas and its mmapped blocks), in MiB: unlike RSS,
// it falls when memory is freed and rises when freed memory is reused, so its difference over a
// build is what the engine holds. NaN where glibc has no mallinfo2 (before 2.33: JetPack 5).
inline double heapInUseMb()
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    const struct mallinfo2 m = mallinfo2();
    return static_cast<double>(m.uordblks + m.hblkhd) / (1024.0 * 1024.0);
#else
    return std::numeric_limits<double>::quiet_NaN();
#endif
}

// MemAvailable of /proc/meminfo in MiB (on a Jetson the GPU's memory too: it is unified); NaN when
// unreadable.
inline double memAvailableMb()
{
    return procKbFieldMb("/proc/meminfo", "MemAvailable");
}

} // namespace jetagent
