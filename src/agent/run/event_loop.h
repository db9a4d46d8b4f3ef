// The daemon's event loop: one epoll set over file descriptors (the signal pipe, the pipeline's
// end-of-run eventfd) and timerfds (status lines, systemd's status, the stop deadline, a window's
// redraws), with no polling tick. Handlers run on the loop's thread, one at a time; one of them
// ends the loop with quit(code), which run() returns.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "jetagent/base/status.h"

namespace jetagent {

class EventLoop {
public:
    EventLoop();
    ~EventLoop();
    EventLoop(const EventLoop&) = delete;
    EventLoop& operator=(const EventLoop&) = delete;

    // Calls `onReadable` whenever `fd` has input (the handler reads it; level-triggered, so input
    // left unread calls it again). The descriptor stays the caller's.
    Status watch(int fd, std::function<void()> onReadable);

    // A timer on CLOCK_MONOTONIC, disarmed until set(); `onExpiry` gets the expirations since the
    // last call (more than one when the loop was busy). Returns the timer's id.
    Expected<int> addTimer(std::function<void(uint64_t expirations)> onExpiry);
    // First expiry after `firstNs` (> 0), then every `periodNs` (0: once). firstNs 0 disarms.
    void setTimer(int id, int64_t firstNs, int64_t periodNs = 0);

    // Waits for events and runs their handlers until one calls quit(); returns its code.
    Expected<int> run();
    void quit(int code);

private:
    struct Source {
        int fd = -1;
        bool timer = false; // the loop owns the descriptor
        std::function<void()> onReadable;
        std::function<void(uint64_t)> onExpiry;
    };
    Status add(std::unique_ptr<Source> source);

    int epoll_ = -1;
    std::vector<std::unique_ptr<Source>> sources_;
    bool quit_ = false;
    int code_ = 0;
};

} // namespace jetagent
