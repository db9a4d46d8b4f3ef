// GPIO signals for external instruments: the inference marker, label alerts, the trigger input.
//
//   marker   an output active while a task's inference runs (busy) or flipping once per frame
//            (toggle), so a power analyzer's or oscilloscope's trace lines up with the frame log
//   alert    an output raised when a label's score reaches a threshold, lowered hold_s after the
//            last such result (also when frames stop coming)
//   trigger  an input whose edges open and close measurement windows; each frame record carries
//            the window it was captured in, and the summary each window's span and figures
#pragma once

#include "service/gpio_options.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "jetagent/base/enum_names.h"
#include "jetagent/hal/gpio.h"
#include "run/pipeline.h"
#include "run/task.h"

namespace jetagent {

struct AgentConfig;

class GpioSignals final : public FrameHooks {
public:
    // Requests the configured lines through `opener`. `tasks` are in the pipeline's slot order
    // (the hook's task index). Returns null when the config has no gpio section. Errors (an
    // unknown task or label, a missing chip or line, a busy line) name the config key.
    static Expected<std::unique_ptr<GpioSignals>> open(const AgentConfig& config,
        const std::vector<const Task*>& tasks, const GpioChipOpener& opener = openGpiodChip);

    ~GpioSignals() override;
    GpioSignals(const GpioSignals&) = delete;
    GpioSignals& operator=(const GpioSignals&) = delete;

    // Starts the thread that reads the trigger and lowers the alert. `runStartNs` (monotonic; 0 =
    // now) is what window times in seconds count from. A level trigger already active opens the
    // first window here.
    void start(int64_t runStartNs = 0);
    // After the pipeline has joined: stops the thread, closes an open window, drives the outputs
    // inactive and releases the lines. Safe to call twice; the summary stays available.
    void stop();

    // The pipeline hook (Pipeline::setHooks).
    FrameHooks* hooks() { return this; }
    void beforeInference(size_t task, uint64_t frameId) override;
    void afterInference(size_t task, FrameRecord& record) override;

    bool hasTrigger() const { return config_.trigger.enabled; }
    // The open measurement window's id, 0 when none.
    uint32_t currentWindow() const;
    bool alertActive() const;
    // Trigger edges read so far, bounces included.
    uint64_t edgesRead() const;

    // The "gpio" object of the run summary: the lines, and the trigger's windows. After stop().
    nlohmann::json summaryJson() const;
    // The summary's lines for it.
    static std::string summaryText(const nlohmann::json& gpio);

private:
    struct Output {
        std::unique_ptr<GpioLine> line;
        std::string where; // "gpiochip0 line 12"
        size_t task = 0;
        uint64_t changes = 0;
    };
    struct Window {
        uint32_t id = 0;
        int64_t startNs = 0;
        int64_t endNs = 0; // 0 while open
        bool closedAtStop = false;
        std::vector<uint64_t> frames; // per task
        std::vector<int64_t> endToEndNs; // per task, summed over frames that were ok
    };

    GpioSignals(const GpioConfig& config, std::vector<std::string> taskNames);
    void loop();
    void checkAlert(int64_t now, int64_t& waitNs);
    void handleEdge(const GpioEvent& event);
    void openWindow(int64_t ns);
    void closeWindow(int64_t ns, bool atStop);
    void drive(Output& out, bool active);

    GpioConfig config_;
    std::vector<std::string> taskNames_;
    std::vector<std::unique_ptr<GpioChip>> chips_; // outlive the lines below
    Output marker_;
    bool markerActive_ = false; // the marker task's worker only
    Output alert_;
    int32_t alertLabel_ = -1;
    Output trigger_;
    std::atomic<uint64_t> writeErrors_ {0};

    mutable std::mutex alertMutex_; // guards the alert's state and its line
    bool alertActive_ = false;
    int64_t lastAboveNs_ = 0;
    int64_t alertRaisedNs_ = 0;
    uint64_t alertRaises_ = 0;
    int64_t alertActiveNs_ = 0; // total time raised

    mutable std::mutex windowMutex_; // guards the windows
    std::vector<Window> windows_;
    int64_t lastEdgeNs_ = -1; // the last accepted edge (debounce)
    uint64_t edges_ = 0;
    uint64_t bounces_ = 0;

    int64_t runStartNs_ = 0;
    std::thread thread_;
    std::mutex stopMutex_;
    std::condition_variable stopChanged_;
    bool stopping_ = false;
    bool stopped_ = false;
};

} // namespace jetagent
