// A fake GPIO chip for tests: outputs record every value they are driven to, with the time;
// inputs deliver the edges a test injects.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "jetagent/base/clock.h"
#include "jetagent/hal/gpio.h"

namespace jetagent::test {

// What the fake chips share: kept by the test, outliving the chips the code under test opens.
class FakeGpio {
public:
    struct Change {
        std::string chip;
        unsigned offset = 0;
        bool active = false;
        int64_t ns = 0;
    };

    struct Chip {
        GpioChipInfo info;
        std::map<std::string, unsigned> names;
    };

    void addChip(
        const std::string& name, unsigned lines, std::map<std::string, unsigned> names = {})
    {
        std::lock_guard<std::mutex> lock(mutex_);
        chips_[name] = Chip {GpioChipInfo {name, "fake-" + name, lines}, std::move(names)};
    }

    // An opener for GpioSignals::open.
    GpioChipOpener opener();

    // The level an input reads before any edge is injected.
    void setLevel(const std::string& chip, unsigned offset, bool active)
    {
        std::lock_guard<std::mutex> lock(mutex_);
        levels_[key(chip, offset)] = active;
    }

    // Queues an edge on an input line; `ns` defaults to now.
    void injectEdge(const std::string& chip, unsigned offset, GpioEdge edge, int64_t ns = 0)
    {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            events_[key(chip, offset)].push_back(GpioEvent {edge, ns ? ns : monotonicNs()});
            levels_[key(chip, offset)] = edge == GpioEdge::Rising;
        }
        changed_.notify_all();
    }

    std::vector<Change> changes(const std::string& chip, unsigned offset) const
    {
        std::lock_guard<std::mutex> lock(mutex_);
        std::vector<Change> out;
        for (const Change& c : changes_)
            if (c.chip == chip && c.offset == offset)
                out.push_back(c);
        return out;
    }
    // The value last driven, false when never driven.
    bool value(const std::string& chip, unsigned offset) const
    {
        auto all = changes(chip, offset);
        return !all.empty() && all.back().active;
    }
    bool requested(const std::string& chip, unsigned offset) const
    {
        std::lock_guard<std::mutex> lock(mutex_);
        return held_.count(key(chip, offset)) > 0;
    }
    // Waits up to `timeoutMs` for `done()` to hold, re-checking whenever the fake changes.
    template <typename Pred>
    bool waitFor(Pred done, int timeoutMs = 5000) const
    {
        std::unique_lock<std::mutex> lock(mutex_);
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
        while (true) {
            lock.unlock();
            if (done())
                return true;
            lock.lock();
            if (std::chrono::steady_clock::now() >= until)
                return false;
            changed_.wait_for(lock, std::chrono::milliseconds(5));
        }
    }
    // Edges injected but not yet read.
    size_t pendingEvents(const std::string& chip, unsigned offset) const
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = events_.find(key(chip, offset));
        return it == events_.end() ? 0 : it->second.size();
    }

private:
    friend class FakeGpioChip;
    friend class FakeGpioLine;
    static std::string key(const std::string& chip, unsigned offset)
    {
        return chip + "/" + std::to_string(offset);
    }

    mutable std::mutex mutex_;
    mutable std::condition_variable changed_;
    std::map<std::string, Chip> chips_;
    std::vector<Change> changes_;
    std::map<std::string, std::deque<GpioEvent>> events_;
    struct Holder {
        std::string consumer;
        bool output = false;
    };
    std::map<std::string, Holder> held_;
    std::map<std::string, bool> levels_;
};

class FakeGpioLine final : public GpioLine {
public:
    FakeGpioLine(FakeGpio& gpio, std::string chip, unsigned offset)
        : gpio_(gpio), chip_(std::move(chip)), offset_(offset)
    {
    }
    ~FakeGpioLine() override
    {
        std::lock_guard<std::mutex> lock(gpio_.mutex_);
        gpio_.held_.erase(FakeGpio::key(chip_, offset_));
    }
    Status setValue(bool active) override
    {
        {
            std::lock_guard<std::mutex> lock(gpio_.mutex_);
            gpio_.changes_.push_back(FakeGpio::Change {chip_, offset_, active, monotonicNs()});
        }
        gpio_.changed_.notify_all();
        return Status();
    }
    Expected<bool> value() override
    {
        std::lock_guard<std::mutex> lock(gpio_.mutex_);
        return gpio_.levels_[FakeGpio::key(chip_, offset_)];
    }
    Expected<bool> waitEvent(int64_t timeoutNs) override
    {
        std::unique_lock<std::mutex> lock(gpio_.mutex_);
        auto& queue = gpio_.events_[FakeGpio::key(chip_, offset_)];
        return gpio_.changed_.wait_for(
            lock, std::chrono::nanoseconds(timeoutNs), [&] { return !queue.empty(); });
    }
    Expected<GpioEvent> readEvent() override
    {
        std::unique_lock<std::mutex> lock(gpio_.mutex_);
        auto& queue = gpio_.events_[FakeGpio::key(chip_, offset_)];
        gpio_.changed_.wait(lock, [&] { return !queue.empty(); });
        GpioEvent e = queue.front();
        queue.pop_front();
        lock.unlock();
        gpio_.changed_.notify_all();
        return e;
    }

private:
    FakeGpio& gpio_;
    std::string chip_;
    unsigned offset_;
};

class FakeGpioChip final : public GpioChip {
public:
    FakeGpioChip(FakeGpio& gpio, FakeGpio::Chip chip) : gpio_(gpio), chip_(std::move(chip)) { }
    const GpioChipInfo& info() const override { return chip_.info; }
    Expected<unsigned> findLine(const std::string& name) override
    {
        auto it = chip_.names.find(name);
        if (it == chip_.names.end())
            return Status::notFound("no line named '" + name + "'");
        return it->second;
    }
    Expected<GpioLineInfo> lineInfo(unsigned offset) override
    {
        if (offset >= chip_.info.lines)
            return Status::notFound("line " + std::to_string(offset) + " out of range");
        GpioLineInfo info;
        info.offset = offset;
        for (const auto& [name, o] : chip_.names)
            if (o == offset)
                info.name = name;
        std::lock_guard<std::mutex> lock(gpio_.mutex_);
        auto held = gpio_.held_.find(FakeGpio::key(chip_.info.name, offset));
        if (held != gpio_.held_.end()) {
            info.used = true;
            info.consumer = held->second.consumer;
            info.output = held->second.output;
        }
        return info;
    }
    Expected<std::unique_ptr<GpioLine>> requestOutput(
        unsigned offset, const std::string& consumer, bool initialActive, bool) override
    {
        auto line = request(offset, consumer, true);
        if (line.ok())
            (void)(*line)->setValue(initialActive);
        return line;
    }
    Expected<std::unique_ptr<GpioLine>> requestEvents(
        unsigned offset, const std::string& consumer, GpioEdge, bool) override
    {
        return request(offset, consumer, false);
    }

private:
    Expected<std::unique_ptr<GpioLine>> request(
        unsigned offset, const std::string& consumer, bool output)
    {
        if (offset >= chip_.info.lines)
            return Status::notFound("line " + std::to_string(offset) + " out of range");
        std::lock_guard<std::mutex> lock(gpio_.mutex_);
        if (!gpio_.held_
                 .emplace(
                     FakeGpio::key(chip_.info.name, offset), FakeGpio::Holder {consumer, output})
                 .second)
            return Status::invalid(chip_.info.name + " line " + std::to_string(offset) +
                " is busy: used by another consumer");
        return std::unique_ptr<GpioLine>(
            std::make_unique<FakeGpioLine>(gpio_, chip_.info.name, offset));
    }

    FakeGpio& gpio_;
    FakeGpio::Chip chip_;
};

inline GpioChipOpener FakeGpio::opener()
{
    return [this](const std::string& name) -> Expected<std::unique_ptr<GpioChip>> {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = chips_.find(name);
        if (it == chips_.end())
            return Status::notFound("GPIO chip '" + name + "' not found");
        return std::unique_ptr<GpioChip>(std::make_unique<FakeGpioChip>(*this, it->second));
    };
}

} // namespace jetagent::test
