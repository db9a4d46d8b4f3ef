// The reconnect state machine of a live stream (RTSP, CSI, live GStreamer pipelines): when to
// open, when a stream counts as lost, how long to back off. Pure: it is fed events and the time,
// and tells its caller what state the stream is in; the GStreamer glue does the opening and the
// tearing down, so the policy is tested without a pipeline.
#pragma once

#include <cstdint>

namespace jetagent {

struct ReconnectPolicy {
    bool reconnect = true; // reopen a lost stream; false: a loss ends the stream
    double firstDelayS = 0.1; // wait before the first retry after a loss; it doubles per failure
    double maxDelayS = 5.0; // longest wait between retries (source.camera.reconnect_max_s)
    double attemptS = 10.0; // an attempt that gives no frame for this long has failed
    double watchdogS = 4.0; // a stream without a frame for this long is lost (when it reconnects);
                            // 0: no watchdog
};

enum class LinkState {
    Connecting, // an attempt is under way: the pipeline runs, no frame yet
    Streaming, // frames arrive
    Backoff, // the pipeline is torn down; the next attempt starts at retryAtNs()
    Stopped, // no more attempts: see stopReason()
};

// Why a stream was lost, or an attempt failed.
enum class LossReason {
    OpenFailed, // the pipeline could not be built or started
    Error, // the pipeline reported an error
    EndOfStream, // the pipeline ended
    Timeout, // an attempt gave no frame within ReconnectPolicy::attemptS
    Stalled, // no frame for ReconnectPolicy::watchdogS while streaming
};

enum class StopReason {
    None, // not stopped
    Requested, // stop() was called
    FirstAttemptFailed, // the stream never delivered a frame: an open failure for the caller
    Ended, // a loss without reconnecting, by the end of the stream
    Failed, // a loss without reconnecting, by an error or a stall
};

const char* lossReasonName(LossReason reason);

class ReconnectMachine {
public:
    // Starts in Connecting: the first attempt begins at `nowNs`.
    ReconnectMachine(const ReconnectPolicy& policy, int64_t nowNs);

    // Whether a loss is followed by another attempt (known for a GStreamer pipeline only once it
    // runs: a live one reconnects, a file does not).
    void setReconnect(bool reconnect) { policy_.reconnect = reconnect; }

    // A frame arrived.
    void frame(int64_t nowNs);
    // The attempt failed or the stream was lost. Ignored in Backoff and Stopped.
    void lost(LossReason reason, int64_t nowNs);
    // Time passed: ends a backoff that is due, and applies the attempt bound and the watchdog.
    void tick(int64_t nowNs);
    void stop();

    LinkState state() const { return state_; }
    StopReason stopReason() const { return stopReason_; }
    LossReason lastLoss() const { return lastLoss_; }
    bool everStreamed() const { return everStreamed_; }
    uint64_t disconnects() const { return disconnects_; } // Streaming left for a loss
    uint64_t reconnects() const { return reconnects_; } // frames again after a disconnect
    uint64_t attempts() const { return attempts_; } // attempts started, the first included
    int64_t retryAtNs() const { return retryAtNs_; } // in Backoff: when the next attempt starts
    int64_t lostAtNs() const { return lostAtNs_; } // when the last disconnect happened
    double nextDelayS() const { return delayS_; } // the backoff the next failure waits

private:
    void enterBackoff(int64_t nowNs);

    ReconnectPolicy policy_;
    LinkState state_ = LinkState::Connecting;
    StopReason stopReason_ = StopReason::None;
    LossReason lastLoss_ = LossReason::OpenFailed;
    bool everStreamed_ = false;
    bool disconnected_ = false; // lost since the last frame
    uint64_t disconnects_ = 0;
    uint64_t reconnects_ = 0;
    uint64_t attempts_ = 1;
    int64_t attemptStartNs_ = 0;
    int64_t lastFrameNs_ = 0;
    int64_t retryAtNs_ = 0;
    int64_t lostAtNs_ = 0;
    double delayS_ = 0.0;
};

} // namespace jetagent
