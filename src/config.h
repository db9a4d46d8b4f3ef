// The agent's configuration: one YAML file mapped to typed structs with defaults.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "jetagent/base/enum_names.h"
#include "jetagent/base/status.h"
#include "jetagent/engines/engine.h"
#include "jetagent/hal/frame_source.h"
#include "jetagent/hal/gpio.h"

namespace jetagent {

enum class Pacing {
    Realtime, // non-live sources deliver frames at their rate; the worker takes the newest, drops
              // are counted
    None, // as fast as possible, for offline evaluation: a bounded FIFO, no frame is dropped
};
inline constexpr EnumName<Pacing> kPacingNames[] = {
    {Pacing::Realtime, "realtime"}, {Pacing::None, "none"}};

struct RunConfig {
    uint64_t frames = 0; // stop after this many source frames; 0 = no limit
    double durationS = 0.0; // stop after this many seconds; 0 = no limit
    Pacing pacing = Pacing::Realtime;
    int queueDepth =
        4; // frames buffered per task when pacing is none; more smooths jitter, costs memory
    // The most memory the frames in flight and the statistics may take, checked at start-up
    // against the source's frame size; 0 = three quarters of the machine's memory.
    int64_t memoryBudgetMb = 0;
    // Under systemd: the longest start-up (or reload) for which systemd's timeout is extended
    // while engines build; past it a start-up fails (exit 1) and says why. 0 = no limit.
    double startupTimeoutS = 1800.0;
};

enum class ResizeMode {
    ShorterSide, // scale so the shorter side is resize_size, keep the aspect ratio, then
                 // centre-crop (torchvision's eval)
    Stretch, // scale straight to the crop size, ignoring the aspect ratio
};
enum class ColorOrder { Rgb, Bgr };
enum class Interpolation { Nearest, Linear, Area, Cubic };
inline constexpr EnumName<ResizeMode> kResizeModeNames[] = {
    {ResizeMode::ShorterSide, "shorter_side"}, {ResizeMode::Stretch, "stretch"}};
inline constexpr EnumName<ColorOrder> kColorOrderNames[] = {
    {ColorOrder::Rgb, "rgb"}, {ColorOrder::Bgr, "bgr"}};
inline constexpr EnumName<Interpolation> kInterpolationNames[] = {
    {Interpolation::Nearest, "nearest"}, {Interpolation::Linear, "linear"},
    {Interpolation::Area, "area"}, {Interpolation::Cubic, "cubic"}};

struct PreprocessConfig {
    ResizeMode resize = ResizeMode::ShorterSide;
    int resizeSize =
        0; // shorter side after resizing; 0 = crop height x 256/224, torchvision's ratio
    int cropWidth = 0; // model input width; 0 = taken from the model
    int cropHeight = 0; // model input height; 0 = taken from the model
    Interpolation interpolation = Interpolation::Linear;
    ColorOrder color = ColorOrder::Rgb; // channel order the model expects
    float divisor = 255.0f; // pixel values are divided by this first (255: 0..1 as torchvision)
    std::array<float, 3> mean {
        0.485f, 0.456f, 0.406f}; // subtracted per channel (model's order), after dividing
    std::array<float, 3> std {0.229f, 0.224f, 0.225f}; // then divided by, per channel
};

enum class OutputKind { Logits, Probabilities };
inline constexpr EnumName<OutputKind> kOutputKindNames[] = {
    {OutputKind::Logits, "logits"}, {OutputKind::Probabilities, "probabilities"}};

struct PostprocessConfig {
    OutputKind output =
        OutputKind::Logits; // logits get a softmax; probabilities are used as they are
    int topK = 5; // labels reported per frame (1..10)
    double smoothing = 0.0; // weight of the previous frames' scores, 0 = off, 0.9 = strong
};

enum class ActionMode {
    Clip, // one model over a clip of T frames (a 3-D CNN such as r3d_18)
    Streaming, // a 2-D backbone once per frame, a temporal head over the last T embeddings
};
inline constexpr EnumName<ActionMode> kActionModeNames[] = {
    {ActionMode::Clip, "clip"}, {ActionMode::Streaming, "streaming"}};
enum class ClipLayout {
    Ncthw, // N x C x T x H x W: torchvision's video models
    Ntchw, // N x T x C x H x W
};
inline constexpr EnumName<ClipLayout> kClipLayoutNames[] = {
    {ClipLayout::Ncthw, "ncthw"}, {ClipLayout::Ntchw, "ntchw"}};

// int8 calibration (engine.calibration): samples the engine is calibrated on, preprocessed exactly
// as the task preprocesses frames.
struct CalibrationConfig {
    std::string source; // a directory of images or a video file, resolved relative to the config
                        // file; empty = no calibration data
    int frames = 500; // samples taken (evenly spread over the source when it has more)
    int batch = 8; // samples per calibration batch
};

// Action recognition (type: action): how frames become clips and clips become results.
struct ActionConfig {
    ActionMode mode = ActionMode::Clip; // clip: `model` takes the clip; streaming: `model` is the
                                        // backbone and `head` the temporal head
    int clipLength = 0; // T, frames per clip; 0 = the model's (its T dimension, or the head's)
    int stride = 4; // an inference every `stride` clip frames; 1 is freshest and costliest
    int frameStep = 1; // every k-th source frame goes into the clip; a clip then spans
                       // (T-1)*k+1 source frames and the others cost nothing
    ClipLayout layout = ClipLayout::Ncthw; // clip mode: the clip model's input layout
    std::string head; // streaming mode: the temporal head's ONNX file, taking N x T x D
                      // embeddings (oldest first); resolved relative to the config file
};

struct TaskConfig {
    std::string name; // names the task's log files; defaults to the model's file name
    std::string type = "classification"; // classification, or action (video clips)
    std::string model; // ONNX file, resolved relative to the config file; for action tasks the
                       // clip model (clip mode) or the per-frame backbone (streaming mode)
    std::string labels; // one label per line, in output order; resolved relative to the config file
    double deadlineMs =
        0.0; // a frame later than this end to end is a deadline miss; 0 = the source's frame period
    EngineOptions engine;
    CalibrationConfig calibration; // engine.calibration in the file
    PreprocessConfig preprocess;
    PostprocessConfig postprocess; // action tasks: smoothing is over consecutive clips
    ActionConfig action; // type: action only
};

struct LoggingConfig {
    std::string dir = "jetagent-logs"; // each run writes into a new subdirectory here
    bool csv = true; // per-frame CSV
    bool jsonl = true; // per-frame JSON Lines
    int queueCapacity =
        4096; // records buffered for the writer; when full, log lines are dropped and counted
    std::string level = "info"; // trace, debug, info, warn, error
    double statusIntervalS = 1.0; // seconds between console status lines; 0 = none
    uint64_t maxSummarySamples = 10'000; // values per series whose percentiles stay exact (8 bytes
                                         // each, up front); beyond, a 0.1% histogram
    int maxFileMb =
        64; // a per-frame file is closed and a new segment begun at this size; 0 = never
    int maxTotalMb = 1024; // all per-frame files under dir, every run: oldest removed; 0 = no cap
};

enum class PowerSampling {
    Auto, // sample when the board has rails or thermal zones; runs without them go on
    On, // a run on a board without rails fails at start-up
    Off, // no sampler thread, no energy columns
};
inline constexpr EnumName<PowerSampling> kPowerSamplingNames[] = {
    {PowerSampling::Auto, "auto"}, {PowerSampling::On, "on"}, {PowerSampling::Off, "off"}};

struct PowerConfig {
    PowerSampling sampling = PowerSampling::Auto; // see PowerSampling
    std::string board =
        "auto"; // auto, a built-in profile id (agx-orin, ...) or a profile YAML file
    std::string sysfsRoot = "/"; // where /sys, /proc and /etc are read; a copy of a board's tree
    double railHz = 100.0; // rail reads per second; the sampler costs ~0.1% of a core at 100 Hz
    double stateHz = 2.0; // thermal, clock, fan and throttle reads per second
    int ringCapacity = 16384; // rail samples kept for per-frame energy (164 s at 100 Hz)
};

// The live camera demo: a window and/or a recording of the frames with the results drawn on them.
struct DisplayConfig {
    bool window = false; // show a window (needs a display: DISPLAY or WAYLAND_DISPLAY); headless
                         // by default
    std::string output; // record the annotated stream to this video file (.mp4, .avi, .mkv);
                        // "" = none
    double fps = 0.0; // frame rate written into the recording; 0 = the source's rate (30 if
                      // unknown)
};

// GPIO signals for external instruments (a power analyzer, an oscilloscope). Every section is
// optional; `enabled` is false when the section is absent.
enum class MarkerMode {
    Busy, // active while the task's inference runs
    Toggle, // flips at the end of each inference
};
inline constexpr EnumName<MarkerMode> kMarkerModeNames[] = {
    {MarkerMode::Busy, "busy"}, {MarkerMode::Toggle, "toggle"}};
enum class TriggerMode {
    Level, // a measurement window is open while the line is active
    Toggle, // each activating edge opens or closes a window
};
inline constexpr EnumName<TriggerMode> kTriggerModeNames[] = {
    {TriggerMode::Level, "level"}, {TriggerMode::Toggle, "toggle"}};

struct GpioMarkerConfig {
    bool enabled = false;
    GpioLineSpec line; // chip (name, path, label or number) and offset or line name
    MarkerMode mode = MarkerMode::Busy;
    std::string task; // the task whose inference is marked; "" = the first task
    bool activeLow = false; // active drives the pin low
};

struct GpioAlertConfig {
    bool enabled = false;
    GpioLineSpec line;
    std::string task; // the task whose results are watched; "" = the first task
    std::string label; // the label watched (checked against the task's labels at start-up)
    double threshold = 0.5; // the alert is raised by a result scoring at least this for the label
    double holdS = 1.0; // and lowered this long after the last such result (frames stopping too)
    bool activeLow = false;
};

struct GpioTriggerConfig {
    bool enabled = false;
    GpioLineSpec line;
    TriggerMode mode = TriggerMode::Level;
    double debounceMs = 5.0; // edges this soon after an accepted edge are contact bounce: ignored
    bool activeLow = false; // the line is active when low (a switch to ground)
};

struct GpioConfig {
    GpioMarkerConfig marker;
    GpioAlertConfig alert;
    GpioTriggerConfig trigger;

    bool any() const { return marker.enabled || alert.enabled || trigger.enabled; }
};

struct AgentConfig {
    std::string path; // the file it came from ("" when built in code)
    SourceOptions source;
    RunConfig run;
    std::vector<TaskConfig> tasks;
    LoggingConfig logging;
    PowerConfig power;
    DisplayConfig display;
    GpioConfig gpio;
    std::map<std::string, int>
        lines; // 1-based line of each key present in the file, by dotted path
    std::map<std::string, std::string>
        overriddenBy; // key -> the command-line option that replaced it
    std::map<std::string, std::string>
        sections; // top-level section (and "tasks[N]") -> its text as parsed, "" when absent;
                  // a reload compares them to restart only what changed
    // The text of `section` as loaded ("" when the file did not have it).
    std::string sectionText(const std::string& section) const
    {
        auto it = sections.find(section);
        return it == sections.end() ? std::string() : it->second;
    }

    // "demo.yaml:23: tasks[0].preprocess.crop" (or without the line when the key was not in the
    // file, or
    // "--source (source.uri)" when the command line set it), for errors found after loading, such
    // as a crop size the model does not accept.
    std::string where(const std::string& key) const;
};

// Reads and validates a config file. Unknown keys, wrong types and out-of-range values are errors
// naming the file, line and key; all of them are reported at once, one per line.
Expected<AgentConfig> loadConfig(const std::string& path);

// The same from text; `name` stands for the file in messages and `baseDir` resolves relative paths.
Expected<AgentConfig> parseConfig(
    const std::string& text, const std::string& name, const std::string& baseDir);

} // namespace jetagent
