// GPIO lines through libgpiod v1 (the API JetPack ships).
#include "jetagent/hal/gpio.h"

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <filesystem>

#include <gpiod.h>

#include "jetagent/base/text.h"

namespace fs = std::filesystem;

namespace jetagent {

namespace {

constexpr int64_t kNsPerS = 1'000'000'000;

int64_t clockNs(clockid_t clock)
{
    timespec ts {};
    clock_gettime(clock, &ts);
    return static_cast<int64_t>(ts.tv_sec) * kNsPerS + ts.tv_nsec;
}

// Kernels before 5.7 stamp v1 line events with CLOCK_REALTIME, later ones with CLOCK_MONOTONIC;
// JetPack 4 runs 4.9. A stamp nearer to the realtime clock than to the monotonic one is moved onto
// the monotonic clock so that events line up with frame timestamps either way.
int64_t toMonotonicNs(int64_t stampNs)
{
    const int64_t monotonic = clockNs(CLOCK_MONOTONIC);
    const int64_t realtime = clockNs(CLOCK_REALTIME);
    if (std::llabs(stampNs - realtime) < std::llabs(stampNs - monotonic))
        return stampNs - (realtime - monotonic);
    return stampNs;
}

std::string chipList()
{
    const std::vector<std::string> chips = listGpioChips();
    if (chips.empty())
        return "no GPIO chips are present (/dev/gpiochip* does not exist)";
    std::string list;
    for (const auto& c : chips)
        list += (list.empty() ? "" : ", ") + c;
    return "chips present: " + list + " (see `gpiodetect`)";
}

class GpiodLine final : public GpioLine {
public:
    GpiodLine(gpiod_line* line, std::string where) : line_(line), where_(std::move(where)) { }
    ~GpiodLine() override { gpiod_line_release(line_); }

    Status setValue(bool active) override
    {
        if (gpiod_line_set_value(line_, active ? 1 : 0) != 0)
            return Status::io("setting " + where_ + ": " + errnoText(errno));
        return Status();
    }

    Expected<bool> value() override
    {
        const int v = gpiod_line_get_value(line_);
        if (v < 0)
            return Status::io("reading " + where_ + ": " + errnoText(errno));
        return v == 1;
    }

    Expected<bool> waitEvent(int64_t timeoutNs) override
    {
        const timespec timeout {
            static_cast<time_t>(timeoutNs / kNsPerS), static_cast<long>(timeoutNs % kNsPerS)};
        const int r = gpiod_line_event_wait(line_, &timeout);
        if (r < 0)
            return Status::io("waiting for an edge on " + where_ + ": " + errnoText(errno));
        return r > 0;
    }

    Expected<GpioEvent> readEvent() override
    {
        gpiod_line_event event {};
        if (gpiod_line_event_read(line_, &event) != 0)
            return Status::io("reading an edge on " + where_ + ": " + errnoText(errno));
        GpioEvent e;
        e.edge =
            event.event_type == GPIOD_LINE_EVENT_RISING_EDGE ? GpioEdge::Rising : GpioEdge::Falling;
        e.timestampNs =
            toMonotonicNs(static_cast<int64_t>(event.ts.tv_sec) * kNsPerS + event.ts.tv_nsec);
        return e;
    }

private:
    gpiod_line* line_;
    std::string where_;
};

class GpiodChip final : public GpioChip {
public:
    explicit GpiodChip(gpiod_chip* chip) : chip_(chip)
    {
        info_.name = gpiod_chip_name(chip_);
        info_.label = gpiod_chip_label(chip_);
        info_.lines = gpiod_chip_num_lines(chip_);
    }
    ~GpiodChip() override { gpiod_chip_close(chip_); }

    const GpioChipInfo& info() const override { return info_; }

    Expected<unsigned> findLine(const std::string& name) override
    {
        gpiod_line* line = gpiod_chip_find_line(chip_, name.c_str());
        if (!line)
            return Status::notFound("no line named '" + name + "' on " + info_.name);
        return gpiod_line_offset(line);
    }

    Expected<GpioLineInfo> lineInfo(unsigned offset) override
    {
        auto line = getLine(offset);
        if (!line)
            return line.status();
        GpioLineInfo info;
        info.offset = offset;
        const char* name = gpiod_line_name(*line);
        const char* consumer = gpiod_line_consumer(*line);
        info.name = name ? name : "";
        info.consumer = consumer ? consumer : "";
        info.used = gpiod_line_is_used(*line);
        info.output = gpiod_line_direction(*line) == GPIOD_LINE_DIRECTION_OUTPUT;
        info.activeLow = gpiod_line_active_state(*line) == GPIOD_LINE_ACTIVE_STATE_LOW;
        return info;
    }

    Expected<std::unique_ptr<GpioLine>> requestOutput(
        unsigned offset, const std::string& consumer, bool initialActive, bool activeLow) override
    {
        auto line = getLine(offset);
        if (!line)
            return line.status();
        const int r = gpiod_line_request_output_flags(*line, consumer.c_str(),
            activeLow ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0, initialActive ? 1 : 0);
        if (r != 0)
            return requestError(*line, offset, errno);
        return std::unique_ptr<GpioLine>(std::make_unique<GpiodLine>(*line, where(offset)));
    }

    Expected<std::unique_ptr<GpioLine>> requestEvents(
        unsigned offset, const std::string& consumer, GpioEdge edge, bool activeLow) override
    {
        auto line = getLine(offset);
        if (!line)
            return line.status();
        const int flags = activeLow ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0;
        const int r = edge == GpioEdge::Rising
            ? gpiod_line_request_rising_edge_events_flags(*line, consumer.c_str(), flags)
            : edge == GpioEdge::Falling
            ? gpiod_line_request_falling_edge_events_flags(*line, consumer.c_str(), flags)
            : gpiod_line_request_both_edges_events_flags(*line, consumer.c_str(), flags);
        if (r != 0)
            return requestError(*line, offset, errno);
        return std::unique_ptr<GpioLine>(std::make_unique<GpiodLine>(*line, where(offset)));
    }

private:
    std::string describeChip() const
    {
        return info_.name + " ('" + info_.label + "', " + std::to_string(info_.lines) + " lines)";
    }
    std::string where(unsigned offset) const
    {
        return info_.name + " line " + std::to_string(offset);
    }

    Expected<gpiod_line*> getLine(unsigned offset)
    {
        if (offset >= info_.lines)
            return Status::notFound("line " + std::to_string(offset) + " does not exist on " +
                describeChip() + ": offsets run from 0 to " + std::to_string(info_.lines - 1));
        gpiod_line* line = gpiod_chip_get_line(chip_, offset);
        if (!line)
            return Status::io("cannot get " + where(offset) + ": " + errnoText(errno));
        return line;
    }

    Status requestError(gpiod_line* line, unsigned offset, int error) const
    {
        if (error == EBUSY) {
            const char* consumer = gpiod_line_consumer(line);
            return Status::invalid(where(offset) + " is busy: used by another consumer" +
                (consumer && *consumer ? std::string(" ('") + consumer + "')" : std::string()) +
                "; see `gpioinfo " + info_.name + "`");
        }
        if (error == EACCES || error == EPERM)
            return Status::io("cannot request " + where(offset) + ": " + errnoText(error) +
                " (the user needs access to /dev/" + info_.name + ", e.g. the gpio group)");
        return Status::io("cannot request " + where(offset) + ": " + errnoText(error));
    }

    gpiod_chip* chip_;
    GpioChipInfo info_;
};

} // namespace

std::vector<std::string> listGpioChips()
{
    std::vector<std::string> chips;
    std::error_code ec;
    for (fs::directory_iterator it("/dev", ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.rfind("gpiochip", 0) == 0)
            chips.push_back(name);
    }
    std::sort(chips.begin(), chips.end(), naturalLess);
    return chips;
}

Expected<std::unique_ptr<GpioChip>> openGpiodChip(const std::string& chip)
{
    gpiod_chip* handle = gpiod_chip_open_lookup(chip.c_str());
    if (!handle) {
        const int error = errno;
        if (error == EACCES || error == EPERM)
            return Status::io("cannot open GPIO chip '" + chip + "': " + errnoText(error) +
                " (the user needs access to /dev/gpiochip*, e.g. the gpio group)");
        return Status::notFound("GPIO chip '" + chip + "' not found; " + chipList());
    }
    return std::unique_ptr<GpioChip>(std::make_unique<GpiodChip>(handle));
}

std::vector<GpioChipReport> probeGpio(
    const std::vector<std::string>& chips, const GpioChipOpener& opener)
{
    std::vector<GpioChipReport> reports;
    for (const std::string& name : chips.empty() ? listGpioChips() : chips) {
        GpioChipReport report;
        report.chip = name;
        auto chip = opener(name);
        if (!chip) {
            report.error = chip.status().message();
            reports.push_back(std::move(report));
            continue;
        }
        report.info = (*chip)->info();
        for (unsigned offset = 0; offset < report.info.lines; ++offset) {
            auto line = (*chip)->lineInfo(offset);
            if (!line) {
                report.error = line.status().message();
                break;
            }
            report.lines.push_back(*line);
        }
        reports.push_back(std::move(report));
    }
    return reports;
}

std::string formatGpioReport(const std::vector<GpioChipReport>& reports)
{
    if (reports.empty())
        return "No GPIO chips: /dev/gpiochip* does not exist.\n";
    std::string out;
    for (const GpioChipReport& r : reports) {
        if (!r.error.empty() && r.info.name.empty()) {
            out += r.chip + ": " + r.error + "\n";
            continue;
        }
        out += r.info.name + " [" + r.info.label + "] " + std::to_string(r.info.lines) + " lines\n";
        for (const GpioLineInfo& l : r.lines) {
            std::string line = "  " + std::to_string(l.offset);
            line.resize(std::max<size_t>(line.size() + 1, 8), ' ');
            line += l.name.empty() ? "-" : l.name;
            line.resize(std::max<size_t>(line.size() + 1, 28), ' ');
            line += l.used ? "used by " + (l.consumer.empty() ? "the kernel" : l.consumer) : "free";
            line += l.output ? ", output" : ", input";
            if (l.activeLow)
                line += ", active-low";
            out += line + "\n";
        }
        if (!r.error.empty())
            out += "  " + r.error + "\n";
    }
    out += "Configure a line as gpio.<signal>.chip and gpio.<signal>.line (its offset or name).\n";
    return out;
}

std::string GpioLineSpec::describe() const
{
    return offset >= 0 ? chip + " line " + std::to_string(offset) : chip + " line '" + name + "'";
}

Expected<unsigned> resolveGpioLine(GpioChip& chip, const GpioLineSpec& spec)
{
    const GpioChipInfo& info = chip.info();
    if (spec.offset >= 0) {
        if (static_cast<uint64_t>(spec.offset) >= info.lines)
            return Status::notFound("line " + std::to_string(spec.offset) + " does not exist on " +
                info.name + ", which has " + std::to_string(info.lines) + " lines (0 to " +
                std::to_string(info.lines == 0 ? 0 : info.lines - 1) + ")");
        return static_cast<unsigned>(spec.offset);
    }
    auto offset = chip.findLine(spec.name);
    if (!offset && offset.status().kind() == ErrorKind::NotFound)
        return Status::notFound("no line named '" + spec.name + "' on " + info.name + " ('" +
            info.label + "', " + std::to_string(info.lines) + " lines; see `gpioinfo " + info.name +
            "`)");
    if (!offset)
        return offset.status();
    return *offset;
}

} // namespace jetagent
