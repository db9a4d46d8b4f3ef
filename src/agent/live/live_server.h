// The live web view of a run (`run --serve`): one page with the annotated video (a mosaic of the
// streams when there are several), each task's latest result and latency, a row per stream for
// the tasks over several, power and temperature charts, and JSON, MJPEG and Server-Sent Events
// endpoints for scripts. Read-only, loopback by default, and never in the inference path: the
// records come from the recorder's thread, the frames from the view's, and a slow client loses
// frames (counted), never delays them.
#pragma once

#include "live/http_options.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "jetagent/base/status.h"
#include "jetagent/hal/image.h"
#include "metrics/run_metrics.h"
#include "run/recorder.h"
#include <nlohmann/json.hpp>

namespace jetagent {

class PowerMonitor;

// What the server knows of the run going on: its context and tasks, and the counters the pipeline
// keeps. Replaced at each run (a reload), read under the server's lock.
struct LiveRun {
    struct TaskInfo {
        std::string name;
        std::vector<std::string> labels;
        int64_t deadlineNs = 0; // 0: none judged
        int64_t batchTimeoutNs = 0; // its gather's wait for the other streams; 0: unknown
        std::vector<size_t> streams = {}; // the run streams it serves
    };
    nlohmann::json context; // the run's context: board, source, engine, versions
    std::vector<TaskInfo> tasks;
    std::vector<std::string> streams; // the run's stream names, in the config's order
    std::function<uint64_t(size_t)> dropped; // frames the task's live queue dropped
    std::function<uint64_t(size_t)> lost; // records the recorder had no room for
    // Frames task `task`'s queue of run stream `stream` dropped.
    std::function<uint64_t(size_t task, size_t stream)> streamDropped;
    // Calls `read` with task `task`'s statistics (the recorder's, in place under their lock:
    // `read` must be quick), for the rows of a task over several streams (live_streams.h).
    using StatsReader = std::function<void(const TaskStats&)>;
    std::function<void(size_t task, const StatsReader& read)> readStats;
    // Frames waiting in task `task`'s queue of run stream `stream` now.
    std::function<double(size_t task, size_t stream)> queueDepth;
    // Times run stream `stream`'s source reconnected.
    std::function<uint64_t(size_t stream)> reconnects;
    // Identity, for /metrics' _info metrics.
    BuildIdentity build;
    BoardMetricsIdentity board;
    std::vector<ModelIdentity> models;
};

// The counters /api/status shows under "video" and "http", for tests and the summary.
struct LiveCounters {
    uint64_t canvases = 0; // annotated frames the view handed over
    uint64_t encoded = 0; // JPEGs encoded (only while someone watches)
    uint64_t sent = 0; // JPEGs written to video clients
    uint64_t skipped = 0; // JPEGs a client never got because it was still sending an older one
    uint64_t refused = 0; // video clients turned away (503): kMaxStreams were watching
    uint64_t eventsRefused = 0; // /api/events clients turned away (503): kMaxEvents were reading
    uint64_t unauthorized = 0; // requests without the token (401)
    uint64_t slowRequests = 0; // connections closed because their request was not whole in time
    // Connections turned away (503): too many were arriving or waiting, or the connections
    // held at once had reached maxConnections.
    uint64_t busy = 0;
    // Times accept() found no descriptor free (EMFILE, ENFILE): the server waited
    // kAcceptBackoffMs before taking connections again, which waited in the backlog meanwhile.
    uint64_t descriptorShortages = 0;
    int connections = 0; // connections held now (arriving, waiting or answered)
    int streams = 0; // video clients now
    int events = 0; // Server-Sent Events clients now
    double encoderCpuS = 0.0; // CPU time of the video: the view's hand-off and the encodings
    double encoderBusyS = 0.0; // wall time since the encoder first had a viewer, while it had one
    uint64_t metricsScrapes = 0; // /metrics answers
    double metricsCpuS = 0.0; // CPU time of building and writing them (the answering thread's)
};

class LiveServer {
public:
    static constexpr int kMaxStreams = 16; // concurrent /video.mjpg clients; more get 503
    static constexpr int kMaxEvents = 16; // concurrent /api/events clients; more get 503
    static constexpr size_t kFrameRing = 2048; // frame records kept for /api/frames
    static constexpr size_t kRollingResults = 300; // results the rolling percentiles cover
    static constexpr size_t kHistorySeconds = 600; // points the charts keep (one a second)
    // A request (its head and any body) must arrive whole within this of its connection being
    // accepted; later, the connection is closed (408). Total, not per byte: a client that sends a
    // byte now and then cannot hold a connection open.
    static constexpr int kRequestTimeoutMs = 4000;
    static constexpr size_t kMaxHeadBytes = 32 * 1024; // a longer request head gets 431
    // Connections whose request is still arriving (unauthenticated: the token is in it). They are
    // read by one thread, none holds a worker; past this many, the oldest is closed (503).
    static constexpr size_t kMaxArriving = 128;
    // Whole requests waiting for a worker; past this many, more get 503 at once.
    static constexpr size_t kMaxWaiting = 64;
    // Workers answering whole requests: every stream and events client holds one, and a few more
    // answer the short requests (the page, status, frames, snapshot, refusals) beside them.
    static constexpr size_t kWorkers = kMaxStreams + kMaxEvents + 8;
    // Connections held at once when descriptors are plentiful: arriving, waiting and answered.
    static constexpr size_t kMaxConnections = kMaxArriving + kMaxWaiting + kWorkers;
    // Descriptors the server leaves to the run whatever clients do, beyond those open when it
    // starts and its own four (listening socket, two eventfds, epoll): the logs, the summary,
    // the report, a reload's sources and engines.
    static constexpr size_t kReservedDescriptors = 32;
    // The server's own descriptors: the listening socket, two eventfds and the reading thread's
    // epoll.
    static constexpr size_t kOwnDescriptors = 4;
    // How long accept() rests when it finds no descriptor free (EMFILE, ENFILE).
    static constexpr int kAcceptBackoffMs = 100;

    // The connections the server may hold at once under a descriptor limit of `limit` (the soft
    // RLIMIT_NOFILE) with `openAtStart` descriptors open: half of what the limit leaves after
    // the reserve (kReservedDescriptors, the server's own four and those open), at most
    // kMaxConnections; 0 when nothing is left. The caps on arriving and waiting connections
    // shrink in proportion. A connection accepted past it is closed at once (503, busy).
    static size_t connectionBudget(uint64_t limit, size_t openAtStart);

    // Binds `config.listen` and starts serving, in the live view's plugin (jetagent-live.so, of
    // the core package, loaded on first use: cpp-httplib and the TLS and compression libraries it
    // links stay out of runs that serve nothing); `chartJs` is Chart.js, inlined into the page;
    // `power` (may be null) is read for rails and temperatures and must outlive the server.
    // Errors: InvalidInput for a bad address or a missing token (naming http.listen/http.token),
    // Io when the address cannot be bound (the port is in use), naming it; Unsupported when the
    // plugin is not installed (naming the package).
    static Expected<std::unique_ptr<LiveServer>> start(
        const HttpConfig& config, std::string chartJs, const PowerMonitor* power, size_t tasks);
    virtual ~LiveServer();
    LiveServer(const LiveServer&) = delete;
    LiveServer& operator=(const LiveServer&) = delete;

    // Stops listening, closes every connection and ends every stream, within about half a
    // second whatever the clients do; the destructor calls it. Idempotent.
    virtual void stop() = 0;

    // The bytes the server answers to `request` arriving whole on a connection of its own,
    // through the same framing, limits and routes as a socket's, without one: the fuzz target's
    // way in. Call it after stop(): streams and waits for a frame then end at once.
    virtual std::string respond(const std::string& request) = 0;

    // The page's address ("http://127.0.0.1:8080/"), with the port actually bound.
    virtual std::string url() const = 0;
    virtual int port() const = 0;
    // The connections this server holds at most (connectionBudget at start).
    virtual size_t maxConnections() const = 0;

    // The sink that receives task `task`'s records (the recorder's thread; never blocks beyond a
    // short lock). Valid for the server's life.
    virtual RecordSink* sink(size_t task) = 0;
    // The run going on, and its end (before the pipeline it refers to goes away).
    virtual void attach(LiveRun run) = 0;
    virtual void detach() = 0;

    // The view's thread: an annotated frame (8-bit BGR). Taken only while someone watches, by a
    // swap with the slot the encoder takes the newest from (no copy): `canvas` is left holding a
    // buffer of the video's own (one the encoder has done with, an unencoded older frame, or
    // none), which the view draws the next frame into. Never waits for an encoding.
    virtual void onCanvas(Image& canvas, uint64_t frame) = 0;
    // True while a client watches the video (the view may skip work otherwise).
    virtual bool watched() const = 0;

    virtual LiveCounters counters() const = 0;

protected:
    LiveServer() = default;
};

// The live view plugin's table (plugins/live): LiveServer::start forwards to it.
struct LiveServerApi {
    Expected<std::unique_ptr<LiveServer>> (*start)(
        const HttpConfig& config, std::string chartJs, const PowerMonitor* power, size_t tasks);
};

} // namespace jetagent
