// How long the MQTT client waits before its next attempt to reach the broker: doubling from a
// first wait up to a cap, back to the first after a success. Its own clock-free object so that
// the sequence is tested without a broker or a wait.
#pragma once

namespace jetagent {

class ReconnectBackoff {
public:
    // `firstS` >= 1, `maxS` >= firstS (seconds).
    ReconnectBackoff(int firstS, int maxS)
        : first_(firstS < 1 ? 1 : firstS), max_(maxS < first_ ? first_ : maxS), next_(first_)
    {
    }
    // The wait after one more failure: first, 2x first, 4x first ... up to the cap.
    int failed()
    {
        const int wait = next_;
        next_ = next_ > max_ / 2 ? max_ : next_ * 2;
        return wait;
    }
    // A connection was made: the next failure waits the first delay again.
    void succeeded() { next_ = first_; }

private:
    int first_;
    int max_;
    int next_;
};

} // namespace jetagent
