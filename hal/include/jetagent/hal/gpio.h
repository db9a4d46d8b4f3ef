// GPIO lines through a chip interface: libgpiod v1 on boards, a fake in tests.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "jetagent/base/status.h"

namespace jetagent {

// Edges are logical: with active-low the kernel reports the line going active as rising.
enum class GpioEdge { Rising, Falling, Both };

struct GpioEvent {
    GpioEdge edge = GpioEdge::Rising; // Rising or Falling
    int64_t timestampNs = 0; // CLOCK_MONOTONIC
};

struct GpioChipInfo {
    std::string name; // "gpiochip0"
    std::string label; // the driver's label ("tegra234-gpio")
    unsigned lines = 0;
};

// What the kernel says about a line (gpioinfo's columns).
struct GpioLineInfo {
    unsigned offset = 0;
    std::string name; // "" when unnamed
    std::string consumer; // who holds it, "" when free or unnamed
    bool used = false;
    bool output = false;
    bool activeLow = false;
};

// A requested line, released (and an output left as it is) when destroyed. The chip must outlive
// it. Methods return a Status naming the chip and line on failure.
class GpioLine {
public:
    virtual ~GpioLine() = default;
    GpioLine() = default;
    GpioLine(const GpioLine&) = delete;
    GpioLine& operator=(const GpioLine&) = delete;

    // Outputs: drives the line active (true) or inactive, as seen through active-low.
    virtual Status setValue(bool active) = 0;
    // Inputs: the current level, active or not.
    virtual Expected<bool> value() = 0;
    // Inputs requested for events: waits up to `timeoutNs` for an event; false on timeout.
    virtual Expected<bool> waitEvent(int64_t timeoutNs) = 0;
    // Inputs: reads one pending event (blocks when none is pending: call waitEvent first).
    virtual Expected<GpioEvent> readEvent() = 0;
};

// One GPIO chip. Offsets are checked against info().lines; a line held by another consumer is an
// error saying so.
class GpioChip {
public:
    virtual ~GpioChip() = default;
    GpioChip() = default;
    GpioChip(const GpioChip&) = delete;
    GpioChip& operator=(const GpioChip&) = delete;

    virtual const GpioChipInfo& info() const = 0;
    // The offset of the line called `name` on this chip; NotFound naming the line and the chip.
    virtual Expected<unsigned> findLine(const std::string& name) = 0;
    virtual Expected<GpioLineInfo> lineInfo(unsigned offset) = 0;
    virtual Expected<std::unique_ptr<GpioLine>> requestOutput(
        unsigned offset, const std::string& consumer, bool initialActive, bool activeLow) = 0;
    virtual Expected<std::unique_ptr<GpioLine>> requestEvents(
        unsigned offset, const std::string& consumer, GpioEdge edge, bool activeLow) = 0;
};

// Opens a chip by name ("gpiochip0"), path, label or number.
using GpioChipOpener = std::function<Expected<std::unique_ptr<GpioChip>>(const std::string& chip)>;

// The libgpiod implementation. A missing chip is NotFound naming it and the chips present.
Expected<std::unique_ptr<GpioChip>> openGpiodChip(const std::string& chip);

// The chips under /dev ("gpiochip0", ...), in natural order.
std::vector<std::string> listGpioChips();

// `jetagent probe gpio`: every chip (or those named) with its lines; a chip that cannot be opened
// carries the error instead.
struct GpioChipReport {
    std::string chip; // as asked for
    GpioChipInfo info;
    std::vector<GpioLineInfo> lines;
    std::string error;
};
std::vector<GpioChipReport> probeGpio(
    const std::vector<std::string>& chips, const GpioChipOpener& opener = openGpiodChip);
std::string formatGpioReport(const std::vector<GpioChipReport>& reports);

// Where a line is: a chip and either an offset or a line name.
struct GpioLineSpec {
    std::string chip = "gpiochip0";
    int64_t offset = -1; // -1 when the line is named
    std::string name;

    std::string describe() const; // "gpiochip0 line 12" or "gpiochip0 line 'PQ.06'"
};

// The offset of `spec` on `chip`: an offset beyond the chip's lines or an unknown name is NotFound
// naming the line and the chip's line count.
Expected<unsigned> resolveGpioLine(GpioChip& chip, const GpioLineSpec& spec);

} // namespace jetagent
