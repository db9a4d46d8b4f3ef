// The daemon's event loop: epoll over descriptors and timerfds.
#include "run/event_loop.h"

#include <cerrno>
#include <string>

#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

namespace jetagent {

namespace {

timespec toTimespec(int64_t ns)
{
    return {static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
}

Status systemError(const std::string& what)
{
    return Status::runtime(what + ": " + errnoText(errno));
}

} // namespace

EventLoop::EventLoop() : epoll_(::epoll_create1(EPOLL_CLOEXEC)) { }

EventLoop::~EventLoop()
{
    for (const auto& s : sources_)
        if (s->timer)
            ::close(s->fd);
    if (epoll_ >= 0)
        ::close(epoll_);
}

Status EventLoop::add(std::unique_ptr<Source> source)
{
    if (epoll_ < 0)
        return systemError("the event loop has no epoll descriptor");
    epoll_event event {};
    event.events = EPOLLIN;
    event.data.ptr = source.get();
    if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, source->fd, &event) != 0)
        return systemError("epoll_ctl(" + std::to_string(source->fd) + ")");
    sources_.push_back(std::move(source));
    return Status();
}

Status EventLoop::watch(int fd, std::function<void()> onReadable)
{
    auto source = std::make_unique<Source>();
    source->fd = fd;
    source->onReadable = std::move(onReadable);
    return add(std::move(source));
}

Expected<int> EventLoop::addTimer(std::function<void(uint64_t)> onExpiry)
{
    const int fd = ::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (fd < 0)
        return systemError("timerfd_create");
    auto source = std::make_unique<Source>();
    source->fd = fd;
    source->timer = true;
    source->onExpiry = std::move(onExpiry);
    if (Status s = add(std::move(source)); !s) {
        ::close(fd);
        return s;
    }
    return static_cast<int>(sources_.size() - 1);
}

void EventLoop::setTimer(int id, int64_t firstNs, int64_t periodNs)
{
    itimerspec spec {};
    spec.it_value = toTimespec(firstNs);
    spec.it_interval = toTimespec(periodNs);
    ::timerfd_settime(sources_[static_cast<size_t>(id)]->fd, 0, &spec, nullptr);
}

void EventLoop::quit(int code)
{
    if (!quit_)
        code_ = code;
    quit_ = true;
}

Expected<int> EventLoop::run()
{
    if (epoll_ < 0)
        return systemError("epoll_create1");
    quit_ = false;
    constexpr int kBatch = 8;
    epoll_event events[kBatch];
    while (!quit_) {
        const int n = ::epoll_wait(epoll_, events, kBatch, -1);
        if (n < 0) {
            if (errno == EINTR) // a signal's handler ran; its byte is in the pipe
                continue;
            return systemError("epoll_wait");
        }
        for (int i = 0; i < n && !quit_; ++i) {
            Source& s = *static_cast<Source*>(events[i].data.ptr);
            if (!s.timer) {
                s.onReadable();
                continue;
            }
            uint64_t expirations = 0;
            if (::read(s.fd, &expirations, sizeof expirations) == sizeof expirations &&
                expirations > 0)
                s.onExpiry(expirations);
        }
    }
    return code_;
}

} // namespace jetagent
