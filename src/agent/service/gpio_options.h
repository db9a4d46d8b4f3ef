// The `gpio` section: the marker, alert and trigger lines for external instruments
// (service/gpio_signals.h drives them). A leaf: the configuration reader includes it alone.
#pragma once

#include <string>

#include "jetagent/base/enum_names.h"
#include "jetagent/hal/gpio.h"

namespace jetagent {

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

} // namespace jetagent
