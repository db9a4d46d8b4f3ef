// GPIO signals for external instruments.
#include "service/gpio_signals.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "config/config.h"
#include "jetagent/base/clock.h"
#include "jetagent/base/format.h"
#include "jetagent/base/log.h"
#include "jetagent/base/thread_guard.h"

namespace jetagent {

namespace {

using nlohmann::json;

// The longest the thread waits before looking at stop (and, with an alert, at its deadline).
constexpr int64_t kPollNs = 50'000'000;

double roundTo4(double v)
{
    return std::round(v * 1e4) / 1e4;
}

// "gpio.<section>.<key>" as the config file has it, for errors found here.
std::string where(const AgentConfig& config, const char* section, const char* key)
{
    return config.where(std::string("gpio.") + section + "." + key);
}

Expected<size_t> findTask(const AgentConfig& config, const std::vector<const Task*>& tasks,
    const char* section, const std::string& name)
{
    if (tasks.empty())
        return Status::invalid(where(config, section, "task") + ": there are no tasks");
    if (name.empty())
        return size_t {0};
    std::string known;
    for (size_t i = 0; i < tasks.size(); ++i) {
        if (tasks[i]->name() == name)
            return i;
        known += (known.empty() ? "" : ", ") + tasks[i]->name();
    }
    return Status::invalid(
        where(config, section, "task") + ": no task named '" + name + "' (tasks: " + known + ")");
}

// Opens the chip of `spec` once (outputs and the trigger may share one) and returns it.
Expected<GpioChip*> chipFor(std::vector<std::unique_ptr<GpioChip>>& chips,
    std::vector<std::string>& names, const GpioLineSpec& spec, const GpioChipOpener& opener,
    const std::string& key)
{
    for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == spec.chip)
            return chips[i].get();
    auto chip = opener(spec.chip);
    if (!chip)
        return chip.status().withContext(key);
    chips.push_back(std::move(chip.value()));
    names.push_back(spec.chip);
    return chips.back().get();
}

json lineJson(const GpioLineSpec& spec, const std::string& where, bool activeLow)
{
    json j = {{"chip", spec.chip}, {"line", where}, {"active_low", activeLow}};
    if (spec.offset >= 0)
        j["offset"] = spec.offset;
    else
        j["name"] = spec.name;
    return j;
}

} // namespace

GpioSignals::GpioSignals(const GpioConfig& config, std::vector<std::string> taskNames)
    : config_(config), taskNames_(std::move(taskNames))
{
}

GpioSignals::~GpioSignals()
{
    stop();
}

Expected<std::unique_ptr<GpioSignals>> GpioSignals::open(
    const AgentConfig& config, const std::vector<const Task*>& tasks, const GpioChipOpener& opener)
{
    const GpioConfig& g = config.gpio;
    if (!g.any())
        return std::unique_ptr<GpioSignals>();
    std::vector<std::string> taskNames;
    taskNames.reserve(tasks.size());
    for (const Task* t : tasks)
        taskNames.push_back(t->name());
    std::unique_ptr<GpioSignals> s(new GpioSignals(g, std::move(taskNames)));
    std::vector<std::string> chipNames;

    // Resolves a section's line and requests it; errors name the section's chip or line key.
    auto request = [&](const char* section, const GpioLineSpec& spec, Output& out,
                       auto&& requestLine) -> Status {
        auto chip = chipFor(s->chips_, chipNames, spec, opener, where(config, section, "chip"));
        if (!chip)
            return chip.status();
        auto offset = resolveGpioLine(**chip, spec);
        if (!offset)
            return offset.status().withContext(where(config, section, "line"));
        auto line = requestLine(**chip, *offset);
        if (!line)
            return line.status().withContext(where(config, section, "line"));
        out.line = std::move(line.value());
        out.where = (*chip)->info().name + " line " + std::to_string(*offset);
        if (spec.offset < 0)
            out.where += " ('" + spec.name + "')";
        return Status();
    };

    if (g.marker.enabled) {
        auto task = findTask(config, tasks, "marker", g.marker.task);
        if (!task)
            return task.status();
        s->marker_.task = *task;
        Status st = request("marker", g.marker.line, s->marker_, [&](GpioChip& chip, unsigned o) {
            return chip.requestOutput(o, "jetagent-marker", false, g.marker.activeLow);
        });
        if (!st)
            return st;
    }
    if (g.alert.enabled) {
        auto task = findTask(config, tasks, "alert", g.alert.task);
        if (!task)
            return task.status();
        s->alert_.task = *task;
        const std::vector<std::string>& labels = tasks[*task]->labels();
        auto it = std::find(labels.begin(), labels.end(), g.alert.label);
        if (it == labels.end())
            return Status::invalid(where(config, "alert", "label") + ": task '" +
                tasks[*task]->name() + "' has no label '" + g.alert.label + "' (it has " +
                std::to_string(labels.size()) + " labels; see its labels file)");
        s->alertLabel_ = static_cast<int32_t>(it - labels.begin());
        Status st = request("alert", g.alert.line, s->alert_, [&](GpioChip& chip, unsigned o) {
            return chip.requestOutput(o, "jetagent-alert", false, g.alert.activeLow);
        });
        if (!st)
            return st;
    }
    if (g.trigger.enabled) {
        Status st =
            request("trigger", g.trigger.line, s->trigger_, [&](GpioChip& chip, unsigned o) {
                return chip.requestEvents(
                    o, "jetagent-trigger", GpioEdge::Both, g.trigger.activeLow);
            });
        if (!st)
            return st;
    }
    return s;
}

void GpioSignals::start(int64_t runStartNs)
{
    runStartNs_ = runStartNs > 0 ? runStartNs : monotonicNs();
    if (trigger_.line && config_.trigger.mode == TriggerMode::Level) {
        auto active = trigger_.line->value();
        if (active.ok() && *active) {
            std::lock_guard<std::mutex> lock(windowMutex_);
            openWindow(runStartNs_);
        } else if (!active.ok()) {
            logger("gpio")->warn("trigger: {}", active.status().message());
        }
    }
    if (trigger_.line || alert_.line)
        thread_ = std::thread([this] {
            guardThread(
                "the GPIO signals", [this] { loop(); },
                [](const std::string& why) {
                    logger("gpio")->error(
                        "{}; the trigger and alert lines are no longer served", why);
                });
        });
}

void GpioSignals::stop()
{
    {
        std::lock_guard<std::mutex> lock(stopMutex_);
        if (stopped_)
            return;
        stopped_ = true;
        stopping_ = true;
    }
    stopChanged_.notify_all();
    if (thread_.joinable())
        thread_.join();
    const int64_t now = monotonicNs();
    {
        std::lock_guard<std::mutex> lock(windowMutex_);
        if (!windows_.empty() && windows_.back().endNs == 0)
            closeWindow(now, true);
    }
    {
        std::lock_guard<std::mutex> lock(alertMutex_);
        if (alertActive_)
            alertActiveNs_ += now - alertRaisedNs_;
        alertActive_ = false;
        if (alert_.line)
            drive(alert_, false);
        alert_.line.reset();
    }
    // The workers have stopped (the contract): the marker is no longer touched from the hot path.
    if (marker_.line && markerActive_)
        drive(marker_, false);
    markerActive_ = false;
    marker_.line.reset();
    trigger_.line.reset();
    chips_.clear();
}

void GpioSignals::drive(Output& out, bool active)
{
    Status s = out.line->setValue(active);
    if (!s) {
        // The first failure is worth a line; a failing pin would otherwise flood the hot path.
        if (writeErrors_.fetch_add(1, std::memory_order_relaxed) == 0)
            logger("gpio")->error("{}", s.message());
        return;
    }
    ++out.changes;
}

void GpioSignals::beforeInference(size_t task, uint64_t /*frameId*/)
{
    if (marker_.line && task == marker_.task && config_.marker.mode == MarkerMode::Busy &&
        !markerActive_) {
        drive(marker_, true);
        markerActive_ = true;
    }
}

void GpioSignals::afterInference(size_t task, FrameRecord& record)
{
    if (marker_.line && task == marker_.task) {
        if (config_.marker.mode == MarkerMode::Toggle) {
            markerActive_ = !markerActive_;
            drive(marker_, markerActive_);
        } else if (markerActive_) {
            drive(marker_, false);
            markerActive_ = false;
        }
    }

    if (alert_.line && task == alert_.task && record.ok && record.hasResult) {
        bool above = false;
        for (int i = 0; i < record.topK; ++i)
            if (record.labels[static_cast<size_t>(i)] == alertLabel_ &&
                static_cast<double>(record.scores[static_cast<size_t>(i)]) >=
                    config_.alert.threshold)
                above = true;
        if (above) {
            const int64_t now = monotonicNs();
            std::lock_guard<std::mutex> lock(alertMutex_);
            lastAboveNs_ = now;
            if (!alertActive_ && alert_.line) {
                drive(alert_, true);
                alertActive_ = true;
                alertRaisedNs_ = now;
                ++alertRaises_;
            }
        }
    }

    if (config_.trigger.enabled) {
        // The window the frame was captured in: a window opened after the capture does not count
        // it, and one closed since still does.
        const int64_t at = record.capturedNs > 0 ? record.capturedNs : monotonicNs();
        std::lock_guard<std::mutex> lock(windowMutex_);
        record.window = 0;
        for (auto w = windows_.rbegin(); w != windows_.rend(); ++w) {
            if (w->startNs > at)
                continue;
            if (w->endNs == 0 || at < w->endNs) {
                record.window = w->id;
                if (task < w->frames.size()) {
                    ++w->frames[task];
                    if (record.ok)
                        w->endToEndNs[task] += record.endToEndNs();
                }
            }
            break;
        }
    }
}

uint32_t GpioSignals::currentWindow() const
{
    std::lock_guard<std::mutex> lock(windowMutex_);
    return !windows_.empty() && windows_.back().endNs == 0 ? windows_.back().id : 0;
}

uint64_t GpioSignals::edgesRead() const
{
    std::lock_guard<std::mutex> lock(windowMutex_);
    return edges_ + bounces_;
}

bool GpioSignals::alertActive() const
{
    std::lock_guard<std::mutex> lock(alertMutex_);
    return alertActive_;
}

void GpioSignals::checkAlert(int64_t now, int64_t& waitNs)
{
    std::lock_guard<std::mutex> lock(alertMutex_);
    if (!alertActive_)
        return;
    const int64_t holdNs = static_cast<int64_t>(config_.alert.holdS * 1e9);
    const int64_t due = lastAboveNs_ + holdNs;
    if (now >= due) {
        drive(alert_, false);
        alertActive_ = false;
        alertActiveNs_ += now - alertRaisedNs_;
    } else {
        waitNs = std::min(waitNs, due - now);
    }
}

void GpioSignals::loop()
{
    auto log = logger("gpio");
    // With an alert, a raise between two looks is noticed within its hold time.
    const int64_t poll = alert_.line
        ? std::clamp(static_cast<int64_t>(config_.alert.holdS * 1e9), int64_t {10'000'000}, kPollNs)
        : kPollNs;
    bool triggerFailed = false;
    while (true) {
        {
            std::lock_guard<std::mutex> lock(stopMutex_);
            if (stopping_)
                break;
        }
        int64_t waitNs = poll;
        if (alert_.line)
            checkAlert(monotonicNs(), waitNs);
        if (trigger_.line && !triggerFailed) {
            auto ready = trigger_.line->waitEvent(waitNs);
            if (ready.ok() && *ready) {
                auto event = trigger_.line->readEvent();
                if (event.ok())
                    handleEdge(*event);
                else
                    ready = event.status();
            }
            if (!ready.ok()) {
                // The run goes on without windows rather than spinning on a broken line.
                log->error(
                    "trigger: {}; no more measurement windows this run", ready.status().message());
                triggerFailed = true;
            }
        } else {
            std::unique_lock<std::mutex> lock(stopMutex_);
            stopChanged_.wait_for(
                lock, std::chrono::nanoseconds(waitNs), [&] { return stopping_; });
        }
    }
}

void GpioSignals::handleEdge(const GpioEvent& event)
{
    const int64_t debounceNs = static_cast<int64_t>(config_.trigger.debounceMs * 1e6);
    std::lock_guard<std::mutex> lock(windowMutex_);
    if (lastEdgeNs_ >= 0 && event.timestampNs - lastEdgeNs_ < debounceNs) {
        ++bounces_;
        return;
    }
    lastEdgeNs_ = event.timestampNs;
    ++edges_;
    const bool open = !windows_.empty() && windows_.back().endNs == 0;
    const bool rising = event.edge == GpioEdge::Rising;
    if (config_.trigger.mode == TriggerMode::Level) {
        if (rising && !open)
            openWindow(event.timestampNs);
        else if (!rising && open)
            closeWindow(event.timestampNs, false);
    } else if (rising) {
        if (open)
            closeWindow(event.timestampNs, false);
        else
            openWindow(event.timestampNs);
    }
}

void GpioSignals::openWindow(int64_t ns)
{
    Window w;
    w.id = static_cast<uint32_t>(windows_.size() + 1);
    w.startNs = ns;
    w.frames.assign(taskNames_.size(), 0);
    w.endToEndNs.assign(taskNames_.size(), 0);
    windows_.push_back(std::move(w));
    logger("gpio")->info("trigger: measurement window {} opened", windows_.back().id);
}

void GpioSignals::closeWindow(int64_t ns, bool atStop)
{
    Window& w = windows_.back();
    w.endNs = std::max(ns, w.startNs);
    w.closedAtStop = atStop;
    logger("gpio")->info("trigger: measurement window {} closed after {:.3f} s{}", w.id,
        nsToS(w.endNs - w.startNs), atStop ? " (end of run)" : "");
}

json GpioSignals::summaryJson() const
{
    json j = json::object();
    if (config_.marker.enabled) {
        json m = lineJson(config_.marker.line, marker_.where, config_.marker.activeLow);
        m["mode"] = nameOf(kMarkerModeNames, config_.marker.mode);
        m["task"] = taskNames_.at(marker_.task);
        m["changes"] = marker_.changes;
        j["marker"] = m;
    }
    if (config_.alert.enabled) {
        std::lock_guard<std::mutex> lock(alertMutex_);
        json a = lineJson(config_.alert.line, alert_.where, config_.alert.activeLow);
        a["task"] = taskNames_.at(alert_.task);
        a["label"] = config_.alert.label;
        a["threshold"] = config_.alert.threshold;
        a["hold_s"] = config_.alert.holdS;
        a["raised"] = alertRaises_;
        a["active_s"] = roundTo4(nsToS(alertActiveNs_));
        j["alert"] = a;
    }
    if (config_.trigger.enabled) {
        std::lock_guard<std::mutex> lock(windowMutex_);
        json t = lineJson(config_.trigger.line, trigger_.where, config_.trigger.activeLow);
        t["mode"] = nameOf(kTriggerModeNames, config_.trigger.mode);
        t["debounce_ms"] = config_.trigger.debounceMs;
        t["edges"] = edges_;
        t["bounces_ignored"] = bounces_;
        json windows = json::array();
        for (const Window& w : windows_) {
            json tasks = json::object();
            for (size_t i = 0; i < taskNames_.size(); ++i) {
                const uint64_t n = w.frames[i];
                tasks[taskNames_[i]] = {{"frames", n},
                    {"mean_e2e_ms",
                        n ? json(roundTo4(static_cast<double>(w.endToEndNs[i]) / 1e6 /
                                static_cast<double>(n)))
                          : json(nullptr)}};
            }
            const int64_t end = w.endNs ? w.endNs : w.startNs;
            windows.push_back(json {{"id", w.id}, {"start_ns", w.startNs}, {"end_ns", end},
                {"start_s", roundTo4(nsToS(w.startNs - runStartNs_))},
                {"end_s", roundTo4(nsToS(end - runStartNs_))},
                {"duration_s", roundTo4(nsToS(end - w.startNs))},
                {"closed_by", w.closedAtStop ? "end of run" : "edge"}, {"tasks", tasks}});
        }
        t["windows"] = windows;
        j["trigger"] = t;
    }
    j["write_errors"] = writeErrors_.load(std::memory_order_relaxed);
    return j;
}

std::string GpioSignals::summaryText(const json& g)
{
    std::string out;
    std::string line;
    if (g.contains("marker")) {
        const json& m = g["marker"];
        line = formatText("gpio      marker %s: %s, task %s, %" PRIu64 " changes\n",
            m["line"].get<std::string>().c_str(), m["mode"].get<std::string>().c_str(),
            m["task"].get<std::string>().c_str(), m["changes"].get<uint64_t>());
        out += line;
    }
    if (g.contains("alert")) {
        const json& a = g["alert"];
        line = formatText("gpio      alert %s: %s >= %.3g in task %s, raised %" PRIu64
                          " times, %.2f s in all\n",
            a["line"].get<std::string>().c_str(), a["label"].get<std::string>().c_str(),
            a["threshold"].get<double>(), a["task"].get<std::string>().c_str(),
            a["raised"].get<uint64_t>(), a["active_s"].get<double>());
        out += line;
    }
    if (g.contains("trigger")) {
        const json& t = g["trigger"];
        line = formatText("gpio      trigger %s (%s): %zu windows, %" PRIu64 " edges, %" PRIu64
                          " bounces ignored\n",
            t["line"].get<std::string>().c_str(), t["mode"].get<std::string>().c_str(),
            t["windows"].size(), t["edges"].get<uint64_t>(), t["bounces_ignored"].get<uint64_t>());
        out += line;
        for (const json& w : t["windows"]) {
            line = formatText("          window %u: %.3f s to %.3f s (%.3f s)",
                w["id"].get<unsigned>(), w["start_s"].get<double>(), w["end_s"].get<double>(),
                w["duration_s"].get<double>());
            out += line;
            for (const auto& [name, f] : w["tasks"].items()) {
                line = formatText(
                    "; %s %" PRIu64 " frames", name.c_str(), f["frames"].get<uint64_t>());
                out += line;
                if (!f["mean_e2e_ms"].is_null()) {
                    line = formatText(", mean e2e %.3f ms", f["mean_e2e_ms"].get<double>());
                    out += line;
                }
            }
            out += "\n";
        }
    }
    if (g.value("write_errors", uint64_t {0}) > 0) {
        line = formatText(
            "gpio      %" PRIu64 " output writes failed\n", g["write_errors"].get<uint64_t>());
        out += line;
    }
    return out;
}

} // namespace jetagent
