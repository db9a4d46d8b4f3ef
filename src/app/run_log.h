// A run directory's logs read back for `jetagent report`: the per-frame CSVs (every segment), the
// power CSV, summary.json, and the figures the report derives from them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "jetagent/base/status.h"

namespace jetagent {

// Lines of a CSV that could not be read: how many, and the first few with where and why.
struct DamagedLines {
    static constexpr size_t kExamplesKept = 5;
    size_t count = 0;
    std::vector<std::string> examples; // "FILE:LINE: why"

    void add(const std::string& file, size_t line, const std::string& why);
};

// Numeric columns of a CSV read by header name, across segments whose headers may differ. An
// empty cell reads as NaN; a cell of a text column as 1 (it holds text: a frame had a true label)
// whatever the text, which only a group column keeps (CsvOrder::groupColumn).
struct CsvColumns {
    std::vector<std::string> names;
    std::vector<std::vector<double>> values; // values[column][row]
    std::vector<std::string> files;
    DamagedLines damaged;
    // With a CsvOrder::groupColumn: its distinct values in the order they first appear ("" for the
    // rows of a segment without the column, or with the cell empty), and each row's index into
    // them. Empty without one.
    std::vector<std::string> groupNames;
    std::vector<uint32_t> groups;

    size_t rows() const { return values.empty() ? 0 : values.front().size(); }
    // The column called `name`, or nullptr when no segment had it.
    const std::vector<double>* column(const std::string& name) const;
    // Whether the rows fall into several groups: the frames of several streams.
    bool grouped() const { return groupNames.size() > 1; }
};

// The longest CSV line read (a frame line is a few hundred bytes; labels of thousands of
// characters still fit): a longer one is damaged and skipped without being held.
inline constexpr size_t kMaxCsvLineBytes = 64 * 1024;
// The most columns a table takes, all segments' headers together (a frame CSV has about 30).
inline constexpr size_t kMaxCsvColumns = 1024;

// The most distinct values a group column may take in one table (a run has at most 64 streams).
inline constexpr size_t kMaxCsvGroups = 256;
// The longest group value: a stream's name is at most 64 bytes.
inline constexpr size_t kMaxCsvGroupBytes = 200;

// Columns that order a table's lines, across all its segments. A writer appends in this order, so
// a line out of it is a repeated or misplaced one (a damaged copy), never a frame of its own.
struct CsvOrder {
    // Each line's value is a non-negative integer that fits uint64 (digits only) and is greater
    // than the last line taken of its group: frame_id. Empty: no such column.
    std::string idColumn;
    // Each line's value, when it has one, is not less than the last line taken's: time_ns.
    std::string timeColumn;
    // A text column that splits the lines into groups which keep the id order apart: `stream`,
    // since every stream of a run numbers its own frames and a task's lines interleave them. Its
    // values are names (letters, digits, '_', '-', '.'; at most kMaxCsvGroupBytes; at most
    // kMaxCsvGroups distinct ones), kept in CsvColumns::groups. Empty: one group.
    std::string groupColumn;
};

// Reads `files` in order as one table, streaming: each file line by line through a fixed buffer.
// A line is damaged, skipped and counted (never fatal) when its field count differs from its
// segment's header, when a cell of a column outside `textColumns` (and the group column) is neither
// empty nor a finite number, when it breaks `order` (an id that is no integer, out of range,
// repeated or out of order within its group; a time that goes back; a group value that is no name
// or one too many), when it is longer than kMaxCsvLineBytes, or when it is the file's
// last line and has no line end (a crash cut it). A segment whose header is empty, cut, longer
// than kMaxCsvLineBytes, holds control bytes (a binary file), names a column twice or would make
// more than kMaxCsvColumns columns is counted as one damaged line and skipped whole. A damaged
// line's text is quoted at most as a short escaped excerpt (escapedExcerpt()). Each file is opened
// as a regular file without following a symbolic link: InvalidInput naming the file and why when it
// is a link, a directory, a FIFO, a device or a socket; NotFound when it is gone; Io when it cannot
// be read.
Expected<CsvColumns> readCsvSegments(const std::vector<std::string>& files,
    const std::set<std::string>& textColumns = {}, const CsvOrder& order = {});

// At most `maxBytes` of `text` for a message: printable ASCII kept, a backslash and every other
// byte written as \xNN, "..." appended when cut. What a damaged line may show of itself.
std::string escapedExcerpt(const std::string& text, size_t maxBytes = 40);

// One CSV line's fields, with the writer's quoting ("a,b" and "" inside quotes) undone.
std::vector<std::string> splitCsvLine(const std::string& line);

// The files of a run directory: each task's frame CSV segments in order, power.csv's segments and
// summary.json, found by name whatever their type (a link or a FIFO by such a name is refused
// when it is read, saying so, never left out unsaid). NotFound naming `dir` when it holds neither
// a summary.json nor a frame CSV; InvalidInput quoting (escaped) a frame CSV's name whose task
// part holds other bytes than a task's name may (letters, digits, '_', '-', '.').
struct RunFiles {
    struct Task {
        std::string name;
        std::vector<std::string> csv; // <task>.frames.csv, then <task>.frames_000001.csv, ...
    };
    std::string dir;
    std::vector<Task> tasks;
    std::vector<std::string> power; // power.csv, power_000001.csv, ... (empty: none)
    std::string summary; // the path, or empty when the run wrote none
};
Expected<RunFiles> findRunFiles(const std::string& dir);

// min, percentiles (nearest rank, as the run summary defines them), max and mean of the finite
// values; count 0 and NaNs when there are none.
struct Percentiles {
    size_t count = 0;
    double min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
};
Percentiles percentiles(const std::vector<double>& values);

// `column`'s values of the frames the run summary's latency figures count: ok (ok != 0) and not
// the cold start (cold_start != 1); every row where those columns are missing. Empty when the
// table has no `column`.
std::vector<double> steadyValues(const CsvColumns& frames, const std::string& column);

// Indices of at most about `maxPoints` of `y`'s finite values, in order: `y` is cut into
// maxPoints/2 equal buckets and each keeps its minimum and its maximum, so that a spike survives.
// Every index when there are no more than maxPoints.
std::vector<size_t> decimateMinMax(const std::vector<double>& y, size_t maxPoints);

// A span of time in seconds since the run's first capture.
struct TimeSpan {
    double startS = 0;
    double endS = 0;
};

// Each frame's inference, from capture_ns + queue + wait + preprocess for inference_ms, in seconds
// since `originNs`; overlapping spans are merged, then spans closer than `minGapS` too, so that at
// most about `maxSpans` remain (a long run's shading stays drawable). Empty without the columns.
std::vector<TimeSpan> inferenceSpans(
    const CsvColumns& frames, int64_t originNs, size_t maxSpans = 1000);

// The share (0..100%) of each slot that `spans` cover, overlapping spans (several tasks) counted
// once. Slot i ends at slotEndS[i] and starts at the previous slot's end (the first is as long as
// the second); NaN for a slot whose end is not finite. What the power chart draws beside the
// rails: thousands of 0.3 ms windows drawn one by one would cover the chart.
std::vector<double> busyPercent(std::vector<TimeSpan> spans, const std::vector<double>& slotEndS);

// A GPIO measurement window: the frames with window = `window`, from the first capture to the last
// frame's end, their count and energy (the frames' frame_energy_mJ; NaN when none has one).
struct WindowSpan {
    int window = 0;
    TimeSpan time;
    size_t frames = 0;
    double energyMj = 0;
};
std::vector<WindowSpan> gpioWindows(const CsvColumns& frames, int64_t originNs);

// Frames missing from the frame_id sequence: each gap's next frame (its row) and how many ids it
// skipped. Rows are taken in frame_id order, each group's (stream's) apart.
struct FrameGap {
    size_t row = 0;
    uint64_t missing = 0;
};
std::vector<FrameGap> frameGaps(const CsvColumns& frames);

// One stream's share of a task's frames (a group of CsvColumns::groups), as the run summary's
// tasks[].streams figures are defined.
struct StreamFigures {
    std::string name;
    size_t frames = 0; // rows logged, failed ones included
    size_t failed = 0; // ok = 0
    uint64_t missing = 0; // frame ids missing: frames replaced by newer ones before inference
    // Frames after the first over the span of their results (capture_ns + queue_ms + e2e_ms);
    // NaN with fewer than two or no such columns.
    double fps = 0;
    Percentiles endToEnd; // e2e_ms of the ok frames but the cold start
    size_t deadlineJudged = 0; // ok frames with a deadline_miss of 0 or 1
    size_t deadlineMisses = 0;
    size_t scored = 0; // ok frames with a truth_label
    size_t correct = 0; // of them, correct = 1
};
// Every group's figures, in CsvColumns::groupNames' order; one for a table without groups.
std::vector<StreamFigures> streamFigures(const CsvColumns& frames);

// Puts `table`'s groups in the order `names` gives (a run's streams as configured), those it
// does not name after them in the order they first appear. A log's first line may be any
// stream's: the order of first appearance is the threads', not the user's.
void orderGroups(CsvColumns& table, const std::vector<std::string>& names);

} // namespace jetagent
