// A run directory's logs read back for `jetagent report`: the per-frame CSVs (every segment), the
// power CSV, summary.json, and the figures the report derives from them.
#include "run_log.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

#include <spdlog/fmt/fmt.h>

#include "jetagent/base/regular_file.h"

namespace jetagent {

namespace {

namespace fs = std::filesystem;

constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();
constexpr double kLogNsPerS = 1e9;
constexpr double kMsPerS = 1e3;

// A finite number filling the whole of `text` (a NUL inside it too); false otherwise.
bool parseNumber(const std::string& text, double& value)
{
    if (text.empty())
        return false;
    char* end = nullptr;
    errno = 0;
    value = std::strtod(text.c_str(), &end);
    return end == text.c_str() + text.size() && errno == 0 && std::isfinite(value);
}

// Lines of an open file through a fixed buffer: memory stays bounded whatever the file holds.
class LineReader {
public:
    enum class Read {
        Line, // a whole line, its '\n' (and a '\r' before it) taken off
        LastLine, // the file's last bytes, with no '\n' after them
        TooLong, // more than kMaxCsvLineBytes before the '\n': skipLine() passes the rest
        End,
    };

    LineReader(const FileDescriptor& fd, std::string path) : fd_(fd.get()), path_(std::move(path))
    {
    }

    Expected<Read> next(std::string& line)
    {
        line.clear();
        lineBytes_ = 0;
        for (;;) {
            if (pos_ == end_) {
                if (Status s = fill(); !s)
                    return s;
                if (end_ == 0)
                    return lineBytes_ == 0 ? Read::End : Read::LastLine;
            }
            const char* from = buffer_.data() + pos_;
            const auto* newline = static_cast<const char*>(std::memchr(from, '\n', end_ - pos_));
            const size_t take = newline ? static_cast<size_t>(newline - from) : end_ - pos_;
            lineBytes_ += take;
            pos_ += take;
            if (line.size() + take > kMaxCsvLineBytes)
                return Read::TooLong;
            line.append(from, take);
            if (newline) {
                ++pos_;
                if (!line.empty() && line.back() == '\r')
                    line.pop_back();
                return Read::Line;
            }
        }
    }

    // After TooLong: reads on past the line's '\n' (or to the end), holding nothing of it. The
    // whole line's length in bytes.
    Expected<uint64_t> skipLine()
    {
        for (;;) {
            if (pos_ == end_) {
                if (Status s = fill(); !s)
                    return s;
                if (end_ == 0)
                    return lineBytes_;
            }
            const char* from = buffer_.data() + pos_;
            const auto* newline = static_cast<const char*>(std::memchr(from, '\n', end_ - pos_));
            const size_t take = newline ? static_cast<size_t>(newline - from) : end_ - pos_;
            lineBytes_ += take;
            pos_ += take;
            if (newline) {
                ++pos_;
                return lineBytes_;
            }
        }
    }

private:
    static constexpr size_t kChunkBytes = 64 * 1024;

    Status fill()
    {
        pos_ = end_ = 0;
        for (;;) {
            const ssize_t n = ::read(fd_, buffer_.data(), buffer_.size());
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                return Status::io(path_ + ": cannot be read (" + errnoText(errno) + ")");
            end_ = static_cast<size_t>(n);
            return Status();
        }
    }

    int fd_;
    std::string path_;
    std::vector<char> buffer_ = std::vector<char>(kChunkBytes);
    size_t pos_ = 0;
    size_t end_ = 0;
    uint64_t lineBytes_ = 0; // of the line being read, all of it so far
};

// Why `line` cannot be a header, or empty when it can: control bytes mean a binary file.
std::string headerFault(const std::string& line)
{
    if (line.empty())
        return "no header (an empty first line)";
    for (size_t i = 0; i < line.size(); ++i) {
        const auto byte = static_cast<unsigned char>(line[i]);
        if ((byte < 0x20 && byte != '\t') || byte == 0x7f)
            return fmt::format(
                "no header (byte 0x{:02x} at column {}: binary data, not a CSV)", byte, i + 1);
    }
    return "";
}

// Why `header` cannot be a table's header, or empty when it can: a name twice would put two
// columns' values in one.
std::string duplicateColumnFault(const std::vector<std::string>& header)
{
    std::set<std::string> seen;
    for (const std::string& name : header)
        if (!seen.insert(name).second)
            return "a header that names column '" + escapedExcerpt(name) +
                "' twice (a damaged segment, skipped whole)";
    return "";
}

// The order a table's lines keep across its segments (CsvOrder) and the last line taken, per
// group for the id.
struct OrderState {
    const CsvOrder& order;
    std::vector<std::optional<uint64_t>> lastIds; // by group index (CsvColumns::groups)
    std::map<std::string, uint32_t> groupIndex; // a group value to its index
    double lastTime = -std::numeric_limits<double>::infinity();
};

// What a group value may hold: a stream's name as the config allows it, or nothing.
bool validGroupValue(const std::string& value)
{
    return value.size() <= kMaxCsvGroupBytes && std::all_of(value.begin(), value.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '_' || c == '-' || c == '.';
    });
}

// An id cell (CsvOrder::idColumn) as a uint64; why it is none, or empty when it is one.
std::string parseId(const std::string& name, const std::string& text, uint64_t& id)
{
    const bool digits = !text.empty() &&
        std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits)
        return escapedExcerpt(name) + " is not a non-negative integer: '" + escapedExcerpt(text) +
            "'";
    errno = 0;
    const unsigned long long value = std::strtoull(text.c_str(), nullptr, 10);
    if (errno == ERANGE || value > std::numeric_limits<uint64_t>::max())
        return escapedExcerpt(name) + " is out of range (more than 2^64-1): '" +
            escapedExcerpt(text) + "'";
    id = static_cast<uint64_t>(value);
    return "";
}

// Maps a segment's header onto the table's columns, adding the new ones; false (and the table
// untouched) when the table would get more than kMaxCsvColumns.
bool mapHeader(
    const std::vector<std::string>& header, CsvColumns& table, std::vector<size_t>& slots)
{
    size_t added = 0;
    for (const std::string& name : header)
        added += std::find(table.names.begin(), table.names.end(), name) == table.names.end();
    if (table.names.size() + added > kMaxCsvColumns)
        return false;
    for (const std::string& name : header) {
        auto it = std::find(table.names.begin(), table.names.end(), name);
        if (it == table.names.end()) {
            table.names.push_back(name);
            table.values.emplace_back(table.rows(), kMissing);
            it = table.names.end() - 1;
        }
        slots.push_back(static_cast<size_t>(it - table.names.begin()));
    }
    return true;
}

// One data line into `table` through `slots`; why it is damaged, or empty when it was taken.
std::string addRow(const std::string& line, const std::vector<size_t>& slots,
    const std::set<std::string>& textColumns, OrderState& order, CsvColumns& table)
{
    const std::vector<std::string> fields = splitCsvLine(line);
    if (fields.size() != slots.size())
        return std::to_string(fields.size()) + " fields, the header has " +
            std::to_string(slots.size());
    std::vector<double> row(table.names.size(), kMissing);
    std::optional<uint64_t> id;
    double time = kMissing;
    std::string group; // "" where the segment has no group column
    for (size_t i = 0; i < fields.size(); ++i) {
        const std::string& name = table.names[slots[i]];
        if (name == order.order.idColumn) {
            uint64_t value = 0;
            if (std::string why = parseId(name, fields[i], value); !why.empty())
                return why;
            id = value;
        }
        if (name == order.order.groupColumn)
            group = fields[i];
        if (fields[i].empty())
            continue;
        if (textColumns.count(name) || name == order.order.groupColumn) {
            row[slots[i]] = 1.0;
            continue;
        }
        if (!parseNumber(fields[i], row[slots[i]]))
            return escapedExcerpt(name) + " is not a number: '" + escapedExcerpt(fields[i]) + "'";
        if (name == order.order.timeColumn)
            time = row[slots[i]];
    }
    // Each stream numbers its own frames: the id order holds within a group.
    const bool grouped = !order.order.groupColumn.empty();
    const auto known = order.groupIndex.find(group);
    const bool newGroup = grouped && known == order.groupIndex.end();
    if (newGroup && !validGroupValue(group))
        return escapedExcerpt(order.order.groupColumn) + " is not a name: '" +
            escapedExcerpt(group) + "'";
    if (newGroup && table.groupNames.size() >= kMaxCsvGroups)
        return fmt::format("{} '{}' is one more than the {} distinct values a table may have",
            escapedExcerpt(order.order.groupColumn), group, kMaxCsvGroups);
    uint32_t index = 0;
    if (grouped)
        index = newGroup ? static_cast<uint32_t>(table.groupNames.size()) : known->second;
    if (order.lastIds.size() <= index)
        order.lastIds.resize(index + 1);
    std::optional<uint64_t>& lastId = order.lastIds[index];
    // A repeated or misplaced line (rows appended twice, a segment copied) would be counted as
    // frames of their own: the stage tables would hold more frames than the run had.
    if (id && lastId && *id <= *lastId)
        return fmt::format("{} {} is not greater than the previous line's {}{} (a repeated or "
                           "out-of-order line)",
            escapedExcerpt(order.order.idColumn), *id, *lastId,
            group.empty()
                ? std::string()
                : fmt::format(" of {} '{}'", escapedExcerpt(order.order.groupColumn), group));
    if (std::isfinite(time) && time < order.lastTime)
        return fmt::format("{} goes back ({} after {}: a repeated or out-of-order line)",
            escapedExcerpt(order.order.timeColumn), time, order.lastTime);
    if (id)
        lastId = id;
    if (std::isfinite(time))
        order.lastTime = time;
    if (grouped) {
        if (newGroup) {
            order.groupIndex.emplace(group, index);
            table.groupNames.push_back(group);
        }
        table.groups.push_back(index);
    }
    for (size_t c = 0; c < row.size(); ++c)
        table.values[c].push_back(row[c]);
    return "";
}

// Reads one segment into `table`, mapping its header's names onto the table's columns.
Status readSegment(const std::string& path, const std::set<std::string>& textColumns,
    OrderState& order, CsvColumns& table)
{
    uint64_t size = 0;
    auto fd = openRegularFile(path, path, size, FileLinks::Refuse);
    if (!fd)
        return fd.status();
    table.files.push_back(path);

    // Line by line: a day's log is hundreds of megabytes, never held whole.
    LineReader reader(*fd, path);
    size_t lineNumber = 0;
    std::vector<size_t> slots; // the table column of each field of this segment's header
    std::string line;
    for (;;) {
        auto read = reader.next(line);
        if (!read)
            return read.status();
        if (*read == LineReader::Read::End)
            break;
        ++lineNumber;
        if (lineNumber == 1) {
            // A segment without a header is skipped whole: nothing in it can be read by name.
            std::string fault;
            if (*read == LineReader::Read::TooLong)
                fault = fmt::format(
                    "no header (the first line is longer than {} bytes)", kMaxCsvLineBytes);
            else if (*read == LineReader::Read::LastLine)
                fault = "no header (the first line has no end)";
            else
                fault = headerFault(line);
            const std::vector<std::string> header =
                fault.empty() ? splitCsvLine(line) : std::vector<std::string>();
            if (fault.empty())
                fault = duplicateColumnFault(header);
            if (fault.empty() && header.size() > kMaxCsvColumns)
                fault = fmt::format(
                    "no header ({} columns, more than {})", header.size(), kMaxCsvColumns);
            if (fault.empty() && !mapHeader(header, table, slots))
                fault = fmt::format(
                    "a header that makes the segments' columns more than {}", kMaxCsvColumns);
            if (!fault.empty()) {
                table.damaged.add(path, lineNumber, fault);
                return Status();
            }
            continue;
        }
        if (*read == LineReader::Read::TooLong) {
            auto bytes = reader.skipLine();
            if (!bytes)
                return bytes.status();
            table.damaged.add(path, lineNumber,
                fmt::format("a line of {} bytes, longer than the {} a line may have", *bytes,
                    kMaxCsvLineBytes));
            continue;
        }
        if (*read == LineReader::Read::LastLine) {
            table.damaged.add(path, lineNumber, "the last line has no end (cut short)");
            break;
        }
        if (line.empty())
            continue;
        if (std::string why = addRow(line, slots, textColumns, order, table); !why.empty())
            table.damaged.add(path, lineNumber, why);
    }
    return Status();
}

// What a task's name may hold, as the config requires: it names the run's files.
bool validTaskName(const std::string& name)
{
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '_' || c == '-' || c == '.';
    });
}

// A file name quoted in a message: a task's name is at most 200 bytes.
constexpr size_t kMaxNameExcerpt = 300;

// `dir`/`stem`.csv then `dir`/`stem`_NNNNNN.csv in number order (the first may have been removed
// by the disk cap, so segments are found by listing).
std::vector<std::string> segmentsOf(
    const std::string& dir, const std::string& stem, const std::vector<std::string>& names)
{
    std::vector<std::string> files;
    if (std::find(names.begin(), names.end(), stem + ".csv") != names.end())
        files.push_back(dir + "/" + stem + ".csv");
    const std::string prefix = stem + "_";
    std::vector<std::string> numbered;
    for (const std::string& name : names) {
        if (name.size() != prefix.size() + 6 + 4 || name.rfind(prefix, 0) != 0 ||
            name.compare(name.size() - 4, 4, ".csv") != 0)
            continue;
        const std::string digits = name.substr(prefix.size(), 6);
        if (std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
            numbered.push_back(name);
    }
    std::sort(numbered.begin(), numbered.end());
    for (const std::string& name : numbered)
        files.push_back(dir + "/" + name);
    return files;
}

const std::vector<double>& columnOrEmpty(const CsvColumns& table, const char* name)
{
    static const std::vector<double> none;
    const std::vector<double>* column = table.column(name);
    return column ? *column : none;
}

double at(const std::vector<double>& column, size_t row)
{
    return row < column.size() ? column[row] : kMissing;
}

double finiteOrZero(double value)
{
    return std::isfinite(value) ? value : 0.0;
}

} // namespace

void DamagedLines::add(const std::string& file, size_t line, const std::string& why)
{
    ++count;
    if (examples.size() < kExamplesKept)
        examples.push_back(file + ":" + std::to_string(line) + ": " + why);
}

const std::vector<double>* CsvColumns::column(const std::string& name) const
{
    const auto it = std::find(names.begin(), names.end(), name);
    return it == names.end() ? nullptr : &values[static_cast<size_t>(it - names.begin())];
}

std::vector<std::string> splitCsvLine(const std::string& line)
{
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                fields.back() += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                fields.back() += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            fields.emplace_back();
        } else {
            fields.back() += c;
        }
    }
    return fields;
}

std::string escapedExcerpt(const std::string& text, size_t maxBytes)
{
    std::string out;
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        const bool plain = byte >= 0x20 && byte < 0x7f && c != '\\';
        const size_t width = plain ? 1 : 4;
        if (out.size() + width > maxBytes)
            return out + "...";
        if (plain)
            out += c;
        else
            out += fmt::format("\\x{:02x}", byte);
    }
    return out;
}

Expected<CsvColumns> readCsvSegments(const std::vector<std::string>& files,
    const std::set<std::string>& textColumns, const CsvOrder& order)
{
    CsvColumns table;
    OrderState state {order, {}, {}};
    for (const std::string& file : files) {
        Status s = readSegment(file, textColumns, state, table);
        if (!s)
            return s;
    }
    return table;
}

Expected<RunFiles> findRunFiles(const std::string& dir)
{
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return Status::notFound(dir +
            (fs::exists(dir, ec) ? ": not a directory" : ": no such directory") +
            " (give the directory of one run, e.g. jetagent-logs/20260101T120000Z)");
    std::vector<std::string> names;
    // Every entry, whatever its type: one that is not a regular file is refused when read.
    for (const auto& entry : fs::directory_iterator(dir, ec))
        names.push_back(entry.path().filename().string());
    if (ec)
        return Status::io(dir + ": cannot be listed (" + ec.message() + ")");
    std::sort(names.begin(), names.end());

    RunFiles run;
    run.dir = dir;
    std::set<std::string> stems;
    const std::string marker = ".frames";
    for (const std::string& name : names) {
        const size_t at = name.rfind(marker);
        if (at == std::string::npos || at == 0)
            continue;
        const std::string rest = name.substr(at + marker.size());
        if (rest != ".csv" && !(rest.size() == 11 && rest[0] == '_' && rest.substr(7) == ".csv"))
            continue;
        // Names are printed in messages: one that jetagent could not have written (a control
        // byte, a newline) is refused rather than echoed to a terminal.
        if (!validTaskName(name.substr(0, at)))
            return Status::invalid(dir + ": '" + escapedExcerpt(name, kMaxNameExcerpt) +
                "' is no frame CSV jetagent writes (a task's name holds only letters, digits, "
                "'_', '-' and '.'): move it out of the run directory");
        stems.insert(name.substr(0, at));
    }
    for (const std::string& stem : stems) {
        RunFiles::Task task {stem, segmentsOf(dir, stem + marker, names)};
        if (!task.csv.empty())
            run.tasks.push_back(std::move(task));
    }
    run.power = segmentsOf(dir, "power", names);
    if (std::find(names.begin(), names.end(), "summary.json") != names.end())
        run.summary = dir + "/summary.json";
    if (run.summary.empty() && run.tasks.empty())
        return Status::notFound(dir +
            ": not a run directory (no summary.json and no <task>.frames.csv); give the "
            "directory that `jetagent run` wrote, under logging.dir (default jetagent-logs/)");
    return run;
}

Percentiles percentiles(const std::vector<double>& values)
{
    std::vector<double> sorted;
    sorted.reserve(values.size());
    for (const double v : values)
        if (std::isfinite(v))
            sorted.push_back(v);
    Percentiles p;
    p.count = sorted.size();
    if (sorted.empty()) {
        p.min = p.p50 = p.p90 = p.p99 = p.max = p.mean = kMissing;
        return p;
    }
    std::sort(sorted.begin(), sorted.end());
    // Nearest rank: the smallest value with at least P% of the values at or below it.
    auto rank = [&](double percent) {
        const double position = std::ceil(percent / 100.0 * static_cast<double>(sorted.size()));
        const size_t index = position < 1 ? 0 : static_cast<size_t>(position) - 1;
        return sorted[std::min(index, sorted.size() - 1)];
    };
    p.min = sorted.front();
    p.max = sorted.back();
    p.p50 = rank(50);
    p.p90 = rank(90);
    p.p99 = rank(99);
    p.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(p.count);
    return p;
}

std::vector<double> steadyValues(const CsvColumns& frames, const std::string& column)
{
    const std::vector<double>* values = frames.column(column);
    if (!values)
        return {};
    const auto& ok = columnOrEmpty(frames, "ok");
    const auto& cold = columnOrEmpty(frames, "cold_start");
    std::vector<double> kept;
    kept.reserve(values->size());
    for (size_t r = 0; r < values->size(); ++r)
        if (at(ok, r) != 0.0 && at(cold, r) != 1.0)
            kept.push_back((*values)[r]);
    return kept;
}

std::vector<size_t> decimateMinMax(const std::vector<double>& y, size_t maxPoints)
{
    std::vector<size_t> finite;
    for (size_t i = 0; i < y.size(); ++i)
        if (std::isfinite(y[i]))
            finite.push_back(i);
    const size_t buckets = std::max<size_t>(1, maxPoints / 2);
    if (finite.size() <= maxPoints)
        return finite;
    std::vector<size_t> kept;
    kept.reserve(buckets * 2);
    for (size_t b = 0; b < buckets; ++b) {
        const size_t first = b * finite.size() / buckets;
        const size_t last = (b + 1) * finite.size() / buckets;
        if (first >= last)
            continue;
        size_t low = finite[first];
        size_t high = finite[first];
        for (size_t k = first; k < last; ++k) {
            const size_t i = finite[k];
            if (y[i] < y[low])
                low = i;
            if (y[i] > y[high])
                high = i;
        }
        kept.push_back(std::min(low, high));
        if (low != high)
            kept.push_back(std::max(low, high));
    }
    return kept;
}

std::vector<TimeSpan> inferenceSpans(const CsvColumns& frames, int64_t originNs, size_t maxSpans)
{
    const auto& capture = columnOrEmpty(frames, "capture_ns");
    const auto& inference = columnOrEmpty(frames, "inference_ms");
    if (capture.empty() || inference.empty())
        return {};
    const auto& queue = columnOrEmpty(frames, "queue_ms");
    const auto& wait = columnOrEmpty(frames, "wait_ms");
    const auto& preprocess = columnOrEmpty(frames, "preprocess_ms");
    std::vector<TimeSpan> spans;
    for (size_t r = 0; r < frames.rows(); ++r) {
        if (!std::isfinite(capture[r]) || !std::isfinite(inference[r]))
            continue;
        const double beforeMs = finiteOrZero(at(queue, r)) + finiteOrZero(at(wait, r)) +
            finiteOrZero(at(preprocess, r));
        const double start =
            (capture[r] - static_cast<double>(originNs)) / kLogNsPerS + beforeMs / kMsPerS;
        spans.push_back({start, start + inference[r] / kMsPerS});
    }
    std::sort(spans.begin(), spans.end(),
        [](const TimeSpan& a, const TimeSpan& b) { return a.startS < b.startS; });
    // Merge overlaps first, then widen the gap that counts as none until few enough remain.
    double minGap = 0.0;
    if (!spans.empty() && maxSpans > 0 && spans.size() > maxSpans)
        minGap = (spans.back().endS - spans.front().startS) / static_cast<double>(maxSpans);
    std::vector<TimeSpan> merged;
    for (const TimeSpan& span : spans) {
        if (!merged.empty() && span.startS <= merged.back().endS + minGap)
            merged.back().endS = std::max(merged.back().endS, span.endS);
        else
            merged.push_back(span);
    }
    return merged;
}

std::vector<double> busyPercent(std::vector<TimeSpan> spans, const std::vector<double>& slotEndS)
{
    std::sort(spans.begin(), spans.end(),
        [](const TimeSpan& a, const TimeSpan& b) { return a.startS < b.startS; });
    std::vector<TimeSpan> merged;
    for (const TimeSpan& span : spans) {
        if (!merged.empty() && span.startS <= merged.back().endS)
            merged.back().endS = std::max(merged.back().endS, span.endS);
        else
            merged.push_back(span);
    }
    std::vector<double> busy(slotEndS.size(), kMissing);
    size_t first = 0; // the first merged span that may still reach into a slot
    for (size_t i = 0; i < slotEndS.size(); ++i) {
        const double end = slotEndS[i];
        double start = kMissing;
        if (i > 0)
            start = slotEndS[i - 1];
        else if (slotEndS.size() > 1)
            start = end - (slotEndS[1] - end);
        if (!std::isfinite(end) || !std::isfinite(start) || !(end > start))
            continue;
        while (first < merged.size() && merged[first].endS <= start)
            ++first;
        double covered = 0;
        for (size_t k = first; k < merged.size() && merged[k].startS < end; ++k)
            covered += std::min(end, merged[k].endS) - std::max(start, merged[k].startS);
        busy[i] = 100.0 * covered / (end - start);
    }
    return busy;
}

std::vector<WindowSpan> gpioWindows(const CsvColumns& frames, int64_t originNs)
{
    const auto& window = columnOrEmpty(frames, "window");
    const auto& capture = columnOrEmpty(frames, "capture_ns");
    if (window.empty() || capture.empty())
        return {};
    const auto& e2e = columnOrEmpty(frames, "e2e_ms");
    const auto& queue = columnOrEmpty(frames, "queue_ms");
    const auto& energy = columnOrEmpty(frames, "frame_energy_mJ");
    std::map<int, WindowSpan> byWindow;
    std::map<int, bool> hasEnergy;
    for (size_t r = 0; r < frames.rows(); ++r) {
        if (!std::isfinite(window[r]) || window[r] < 1 || !std::isfinite(capture[r]))
            continue;
        const int k = static_cast<int>(window[r]);
        const double startS = (capture[r] - static_cast<double>(originNs)) / kLogNsPerS;
        const double endS =
            startS + (finiteOrZero(at(queue, r)) + finiteOrZero(at(e2e, r))) / kMsPerS;
        auto [it, fresh] = byWindow.try_emplace(k, WindowSpan {k, {startS, endS}, 0, 0.0});
        WindowSpan& w = it->second;
        if (!fresh) {
            w.time.startS = std::min(w.time.startS, startS);
            w.time.endS = std::max(w.time.endS, endS);
        }
        ++w.frames;
        if (std::isfinite(at(energy, r))) {
            w.energyMj += energy[r];
            hasEnergy[k] = true;
        }
    }
    std::vector<WindowSpan> spans;
    for (auto& [k, w] : byWindow) {
        if (!hasEnergy[k])
            w.energyMj = kMissing;
        spans.push_back(w);
    }
    return spans;
}

std::vector<FrameGap> frameGaps(const CsvColumns& frames)
{
    const auto& id = columnOrEmpty(frames, "frame_id");
    auto groupOf = [&](size_t r) { return r < frames.groups.size() ? frames.groups[r] : 0u; };
    std::vector<size_t> order;
    for (size_t r = 0; r < id.size(); ++r)
        if (std::isfinite(id[r]))
            order.push_back(r);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return groupOf(a) != groupOf(b) ? groupOf(a) < groupOf(b) : id[a] < id[b];
    });
    std::vector<FrameGap> gaps;
    for (size_t k = 1; k < order.size(); ++k) {
        const double step = id[order[k]] - id[order[k - 1]];
        if (groupOf(order[k]) == groupOf(order[k - 1]) && step > 1)
            gaps.push_back({order[k], static_cast<uint64_t>(step - 1)});
    }
    return gaps;
}

void orderGroups(CsvColumns& table, const std::vector<std::string>& names)
{
    const size_t n = table.groupNames.size();
    auto rank = [&](size_t g) {
        const auto at = std::find(names.begin(), names.end(), table.groupNames[g]);
        return at == names.end() ? names.size() : static_cast<size_t>(at - names.begin());
    };
    std::vector<uint32_t> order(n); // new position -> old group
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(
        order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return rank(a) < rank(b); });
    std::vector<uint32_t> newIndex(n);
    std::vector<std::string> ordered(n);
    for (uint32_t k = 0; k < n; ++k) {
        newIndex[order[k]] = k;
        ordered[k] = std::move(table.groupNames[order[k]]);
    }
    table.groupNames = std::move(ordered);
    for (uint32_t& g : table.groups)
        g = newIndex[g];
}

std::vector<StreamFigures> streamFigures(const CsvColumns& frames)
{
    std::vector<StreamFigures> streams(std::max<size_t>(1, frames.groupNames.size()));
    for (size_t g = 0; g < frames.groupNames.size(); ++g)
        streams[g].name = frames.groupNames[g];
    auto groupOf = [&](size_t r) -> size_t {
        return r < frames.groups.size() ? frames.groups[r] : 0;
    };
    const auto& ok = columnOrEmpty(frames, "ok");
    const auto& cold = columnOrEmpty(frames, "cold_start");
    const auto& e2e = columnOrEmpty(frames, "e2e_ms");
    const auto& capture = columnOrEmpty(frames, "capture_ns");
    const auto& queue = columnOrEmpty(frames, "queue_ms");
    const auto& deadline = columnOrEmpty(frames, "deadline_miss");
    const auto& truth = columnOrEmpty(frames, "truth_label");
    const auto& correct = columnOrEmpty(frames, "correct");
    std::vector<std::vector<double>> latencies(streams.size());
    std::vector<double> firstDone(streams.size(), std::numeric_limits<double>::infinity());
    std::vector<double> lastDone(streams.size(), -std::numeric_limits<double>::infinity());
    for (size_t r = 0; r < frames.rows(); ++r) {
        const size_t g = groupOf(r);
        StreamFigures& s = streams[g];
        ++s.frames;
        // The summary's throughput spans results, failed frames' included.
        const double done =
            at(capture, r) + (finiteOrZero(at(queue, r)) + at(e2e, r)) * (kLogNsPerS / kMsPerS);
        if (std::isfinite(done)) {
            firstDone[g] = std::min(firstDone[g], done);
            lastDone[g] = std::max(lastDone[g], done);
        }
        if (at(ok, r) == 0.0) {
            ++s.failed;
            continue;
        }
        if (at(deadline, r) == 0.0 || at(deadline, r) == 1.0) {
            ++s.deadlineJudged;
            s.deadlineMisses += at(deadline, r) == 1.0;
        }
        if (std::isfinite(at(truth, r))) {
            ++s.scored;
            s.correct += at(correct, r) == 1.0;
        }
        if (at(cold, r) != 1.0)
            latencies[g].push_back(at(e2e, r));
    }
    for (const FrameGap& gap : frameGaps(frames))
        streams[groupOf(gap.row)].missing += gap.missing;
    for (size_t g = 0; g < streams.size(); ++g) {
        StreamFigures& s = streams[g];
        s.endToEnd = percentiles(latencies[g]);
        s.fps = s.frames > 1 && lastDone[g] > firstDone[g]
            ? static_cast<double>(s.frames - 1) / ((lastDone[g] - firstDone[g]) / kLogNsPerS)
            : kMissing;
    }
    return streams;
}

} // namespace jetagent
