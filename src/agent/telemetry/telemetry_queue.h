// The bounded queue of telemetry messages waiting for the broker: a run never waits for the
// network, so what cannot be sent is held here up to a count, and past it the least valuable
// message goes (counted).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>

namespace jetagent {

// One message to publish.
struct TelemetryMessage {
    std::string topic;
    std::string payload;
    int qos = 0; // 0 (statuses) or 1 (summaries, the state)
    bool retain = false;
};

// First in, first out, at most `capacity` messages. Not thread-safe: its owner locks around it.
class TelemetryQueue {
public:
    explicit TelemetryQueue(size_t capacity) : capacity_(capacity > 0 ? capacity : 1) { }

    // Appends `message`. When the queue is full, one message is dropped first (counted in
    // dropped()): the oldest of QoS 0 (a status, superseded by every newer one), or, when all
    // are QoS 1, the oldest of them. Returns true when something was dropped.
    bool push(TelemetryMessage message);
    // Puts back, at the front, a message taken by pop() that could not be handed over; the same
    // rule as push() when the queue has filled meanwhile.
    bool pushFront(TelemetryMessage message);
    // The oldest message, or nothing when empty.
    std::optional<TelemetryMessage> pop();

    size_t size() const { return items_.size(); }
    bool empty() const { return items_.empty(); }
    size_t capacity() const { return capacity_; }
    uint64_t dropped() const { return dropped_; }

private:
    bool makeRoom();

    std::deque<TelemetryMessage> items_;
    size_t capacity_;
    uint64_t dropped_ = 0;
};

} // namespace jetagent
