// The view's overlay from the tasks' results.
#include "display/overlay_builder.h"

#include <algorithm>
#include <string>

#include "jetagent/base/clock.h"

namespace jetagent {

void OverlayBuilder::operator()(const std::vector<TaskAtFrame>& atFrame, Overlay& overlay) const
{
    constexpr int32_t kShownResults = 3;
    for (size_t i = 0; i < tasks_->size() && i < atFrame.size(); ++i) {
        const Task& task = *(*tasks_)[i];
        const TaskAtFrame& a = atFrame[i];
        if (!a.serves)
            continue; // another stream's task: not on this frame
        OverlayTask t;
        t.name = task.name();
        t.haveResult = a.haveResult;
        t.fps = a.fps;
        if (a.haveResult) {
            const FrameRecord& r = a.result;
            t.failed = !r.ok || r.topK == 0;
            for (int32_t k = 0; k < std::min(r.topK, kShownResults); ++k) {
                const int32_t label = r.labels[static_cast<size_t>(k)];
                const auto& labels = task.labels();
                t.top.emplace_back(label >= 0 && static_cast<size_t>(label) < labels.size()
                        ? labels[static_cast<size_t>(label)]
                        : "#" + std::to_string(label),
                    r.scores[static_cast<size_t>(k)]);
            }
            t.endToEndMs = nsToMs(r.hasClip() ? r.resultLatencyNs() : r.endToEndNs());
            t.resultFrame = r.frameId;
            t.origin = !a.inferred ? OverlayTask::Origin::EarlierFrame
                : r.hasClip()      ? OverlayTask::Origin::Clip
                                   : OverlayTask::Origin::ThisFrame;
        }
        overlay.tasks.push_back(std::move(t));
    }
    // The board's power is the run's, not a stream's: a mosaic shows it once, on the first tile.
    if (monitor_ && overlay.stream == 0)
        overlay.board = powerStatusText(*monitor_);
}

} // namespace jetagent
