// The bounded telemetry queue (telemetry_queue.h).
#include "telemetry/telemetry_queue.h"

#include <algorithm>

namespace jetagent {

bool TelemetryQueue::makeRoom()
{
    if (items_.size() < capacity_)
        return false;
    auto victim = std::find_if(
        items_.begin(), items_.end(), [](const TelemetryMessage& m) { return m.qos == 0; });
    items_.erase(victim != items_.end() ? victim : items_.begin());
    ++dropped_;
    return true;
}

bool TelemetryQueue::push(TelemetryMessage message)
{
    const bool dropped = makeRoom();
    items_.push_back(std::move(message));
    return dropped;
}

bool TelemetryQueue::pushFront(TelemetryMessage message)
{
    const bool dropped = makeRoom();
    items_.push_front(std::move(message));
    return dropped;
}

std::optional<TelemetryMessage> TelemetryQueue::pop()
{
    if (items_.empty())
        return std::nullopt;
    TelemetryMessage m = std::move(items_.front());
    items_.pop_front();
    return m;
}

} // namespace jetagent
