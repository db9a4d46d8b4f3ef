// The end-of-run summary: a JSON document (summary.json) and the text printed from it
// (summary.txt).
#pragma once

#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "jetagent/power/power_monitor.h"
#include "output/frame_log.h"
#include "run/run_context.h"
#include "run/task.h"
#include "run/task_stats.h"
#include "tasks/task_config.h"

namespace jetagent {

struct AgentConfig;

struct TaskOutcome {
    const Task* task = nullptr;
    const TaskConfig* config = nullptr;
    const TaskStats* stats = nullptr;
    uint64_t dropped = 0; // frames replaced in the task's queue before the worker took them
    const TaskLog* log = nullptr; // null when no frame log was written
    uint64_t unrecorded = 0; // records the recorder's queue had no room for (not in the figures)
    bool energy = false; // power rails were sampled: the statistics hold each frame's energy
    std::vector<size_t> streams; // the run streams the task served
    std::vector<uint64_t> streamDropped; // ... the frames each one's queue dropped
    std::vector<uint64_t> streamTimeouts; // ... the batches that timed out waiting for each one
    int64_t batchTimeoutNs = 0; // the longest wait of a gather for the other streams
};

// One stream of the run: its source and what it delivered.
struct StreamOutcome {
    std::string name;
    SourceInfo source;
    SourceStats stats;
    uint64_t captured = 0;
    uint64_t captureGaps = 0;
    int64_t longestGapNs = 0;
};

// What the live view did (display.window / display.output).
struct DisplayOutcome {
    bool enabled = false;
    bool window = false;
    std::string output; // the recording or the stream's URI, "" when none
    uint64_t shown = 0; // frames (several streams: mosaics) drawn in the window
    uint64_t recorded = 0; // frames (mosaics) written into the recording or handed to the stream
    uint64_t drawn = 0; // frames the view drew (several streams: into their tiles)
    // Several streams: the mosaic's grid (columns x rows) and size in pixels; 0 with one stream.
    int mosaicColumns = 0;
    int mosaicRows = 0;
    int mosaicWidth = 0;
    int mosaicHeight = 0;
    // A network stream (rtp://, rtsp://): its encoder and what became of the frames handed to it.
    bool streamed = false;
    std::string encoder;
    std::string streamAddress; // rtp://HOST:PORT or the RTSP URL, path included
    uint64_t streamSent = 0; // encoded and sent
    uint64_t streamDropped = 0; // the encoder was behind
    uint64_t streamUnwatched = 0; // RTSP with no client playing
    uint64_t skipped = 0; // frames the view let go because it was busy (live sources)
    uint64_t earlierResult = 0; // frames drawn with an earlier frame's result: a task never
                                // inferred them (its live queue dropped them)
};

struct RunOutcome {
    RunContext context;
    const AgentConfig* config = nullptr;
    std::vector<std::string> overrides; // command-line overrides, as "key=value"
    SourceInfo source; // the first stream's
    SourceStats sourceStats;
    std::vector<StreamOutcome> streams; // every stream, in the config's order
    uint64_t framesCaptured = 0;
    // Gaps in capture longer than the threshold (Pipeline::captureGaps): count, total, longest, and
    // when the longest ended from the start.
    uint64_t captureGaps = 0;
    int64_t captureGapsNs = 0, longestGapNs = 0, longestGapAtNs = 0, captureGapThresholdNs = 0;
    int64_t startNs = 0;
    int64_t endNs = 0;
    int64_t processCpuNs = -1; // CPU time of the process from the pipeline's start to its end
    double peakRssMb = std::numeric_limits<double>::quiet_NaN(); // the process's peak RSS
    std::string stopReason;
    std::string failure; // empty when the run ended normally
    std::string runDirectory;
    std::vector<TaskOutcome> tasks;
    const PowerSetup* power = nullptr; // null when power sampling was off or found nothing
    PowerSamplerOptions powerOptions;
    PowerRunStats powerStats;
    // power.csv, the power time series: its first file ("" when none was written), the rows
    // written, and those a failed write dropped.
    std::string powerLogPath;
    uint64_t powerLogRows = 0, powerLogRowsDropped = 0;
    int powerLogIntervalMs = 0;
    DisplayOutcome display;
    nlohmann::json gpio; // GpioSignals::summaryJson(); null when no GPIO was configured
};

nlohmann::json summaryJson(const RunOutcome& outcome);

// A human-readable rendering of summaryJson's document.
std::string summaryText(const nlohmann::json& j);

} // namespace jetagent
