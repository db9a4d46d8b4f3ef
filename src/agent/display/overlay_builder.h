// What the demo's view draws on a frame: the tasks' results at that frame and the board's power,
// gathered on the view's thread once per frame.
#pragma once

#include <memory>
#include <vector>

#include "display/display.h"
#include "jetagent/power/power_monitor.h"
#include "run/task.h"

namespace jetagent {

// Builds the live view's overlay from the tasks' results at the frame being drawn (those of the
// tasks serving its stream) and the power monitor (on stream 0's frames only); called from the
// view's thread, once per frame.
class OverlayBuilder {
public:
    OverlayBuilder(const std::vector<std::unique_ptr<Task>>& tasks, const PowerMonitor* monitor)
        : tasks_(&tasks), monitor_(monitor)
    {
    }

    void operator()(const std::vector<TaskAtFrame>& atFrame, Overlay& overlay) const;

private:
    const std::vector<std::unique_ptr<Task>>* tasks_;
    const PowerMonitor* monitor_;
};

} // namespace jetagent
