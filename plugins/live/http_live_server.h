// The live view's server in its plugin: cpp-httplib's parser and routes behind connection
// handling of our own (live_server.cpp), the status, history and frames documents and the video
// (live_status.cpp). jetagent sees it as a LiveServer (src/agent/live/live_server.h).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "live/live_server.h"

namespace httplib {
class Server;
struct Request;
struct Response;
} // namespace httplib

namespace jetagent {

// The unix time this process started (/proc/self/stat), for jetagent_start_time_seconds.
double processStartUnixS();

class HttpLiveServer final : public LiveServer {
public:
    // LiveServer::start, in the plugin.
    static Expected<std::unique_ptr<LiveServer>> start(
        const HttpConfig& config, std::string chartJs, const PowerMonitor* power, size_t tasks);
    ~HttpLiveServer() override;

    void stop() override;
    std::string respond(const std::string& request) override;
    std::string url() const override;
    int port() const override { return port_; }
    size_t maxConnections() const override { return maxConnections_; }
    RecordSink* sink(size_t task) override;
    void attach(LiveRun run) override;
    void detach() override;
    void onCanvas(Image& canvas, uint64_t frame) override;
    bool watched() const override { return viewers_.load(std::memory_order_relaxed) > 0; }
    LiveCounters counters() const override;

private:
    class HttpServer; // cpp-httplib's server, with connections handed to the threads below
    struct Arriving; // a connection whose request is still arriving
    // A connection whose request is whole (`bytes`, its head without Range lines, then what
    // came after it), waiting for a worker; its reads must end by `deadlineNs`.
    struct Waiting {
        int fd = -1;
        std::string bytes;
        int64_t deadlineNs = 0;
    };
    class TaskSink;
    struct Compact; // one frame record as /api/frames shows it
    struct TaskState;

    HttpLiveServer();
    void setUpRoutes();
    // The routes: admit (before any, false when answered already), then one per endpoint.
    bool admit(const httplib::Request& req, httplib::Response& res);
    void serveStatus(httplib::Response& res);
    void serveFrames(const httplib::Request& req, httplib::Response& res);
    void serveSnapshot(httplib::Response& res);
    void serveVideo(httplib::Response& res);
    void serveEvents(httplib::Response& res);
    // /metrics (live_metrics.cpp): Prometheus text 0.0.4 or OpenMetrics, as Accept asks.
    void serveMetrics(const httplib::Request& req, httplib::Response& res);
    std::vector<MetricFamily> buildMetrics();
    void encoderLoop();
    void tickerLoop();
    void consume(size_t task, const FrameRecord& record);
    // Builds the status document and the newest chart point; under no lock of the caller's.
    nlohmann::json buildStatus(nlohmann::json& point);
    nlohmann::json historyJson() const;
    nlohmann::json framesJson(std::optional<uint64_t> since, size_t limit) const;
    std::string page() const;
    // Connections: the accept thread hands each to the reading thread, which hands the whole
    // requests to the workers; every connection handed over is closed by closeConnection.
    void acceptLoop();
    void handOver(int fd);
    void closeConnection(int fd, const std::string& answer);
    void readLoop();
    void workerLoop();
    void serveConnection(Waiting waiting);

    HttpConfig config_;
    ListenAddress address_;
    int port_ = 0;
    std::string chartJs_;
    const PowerMonitor* power_ = nullptr;
    std::unique_ptr<HttpServer> server_;
    std::thread listener_;
    std::thread reader_;
    std::vector<std::thread> workers_;
    int listenFd_ = -1;
    int stopFd_ = -1; // an eventfd: stop, for the accept thread
    int wakeFd_ = -1; // an eventfd: new connections for the reading thread, or stop
    uint64_t descriptorLimit_ = 0; // the soft RLIMIT_NOFILE at start (0: none)
    size_t maxConnections_ = kMaxConnections;
    size_t maxArriving_ = kMaxArriving;
    size_t maxWaiting_ = kMaxWaiting;
    std::atomic<int> connections_ {0}; // accepted and not yet closed

    // Connections, guarded by connMutex_.
    std::mutex connMutex_;
    std::condition_variable waitingReady_;
    std::vector<int> handed_; // accepted, not yet taken by the reading thread
    std::deque<Waiting> waiting_;
    std::vector<int> serving_; // the workers' connections (shut down by stop())
    bool closing_ = false;

    std::thread encoder_;
    std::thread ticker_;
    std::atomic<bool> stopping_ {false};

    // Records, run and history, guarded by dataMutex_.
    mutable std::mutex dataMutex_;
    LiveRun run_;
    bool attached_ = false;
    std::vector<std::unique_ptr<TaskState>> tasks_;
    std::vector<std::unique_ptr<TaskSink>> sinks_;
    std::vector<Compact> ring_; // the newest frame records, a circle of kFrameRing
    size_t ringNext_ = 0;
    std::deque<nlohmann::json> history_;
    nlohmann::json seriesNames_; // names of the chart series (tasks, rails, zones)
    int64_t startNs_ = 0;
    double processStartUnixS_ = 0.0; // jetagent_start_time_seconds

    // The newest status document and its number, for /api/status and the SSE clients.
    mutable std::mutex statusMutex_;
    std::condition_variable statusChanged_;
    std::shared_ptr<const std::string> status_;
    uint64_t statusSeq_ = 0;

    // The video: the view's newest canvas, and the newest JPEG.
    std::atomic<int> viewers_ {0};
    std::mutex canvasMutex_;
    std::condition_variable canvasReady_;
    Image pending_;
    bool havePending_ = false;
    mutable std::mutex jpegMutex_;
    std::condition_variable jpegReady_;
    std::shared_ptr<const std::string> jpeg_;
    uint64_t jpegSeq_ = 0;
    int jpegWidth_ = 0;
    int jpegHeight_ = 0;

    std::atomic<uint64_t> canvases_ {0};
    std::atomic<uint64_t> encoded_ {0};
    std::atomic<uint64_t> sent_ {0};
    std::atomic<uint64_t> skipped_ {0};
    std::atomic<uint64_t> refused_ {0};
    std::atomic<uint64_t> eventsRefused_ {0};
    std::atomic<uint64_t> descriptorShortages_ {0};
    std::atomic<uint64_t> unauthorized_ {0};
    std::atomic<uint64_t> slowRequests_ {0};
    std::atomic<uint64_t> busy_ {0};
    std::atomic<int> streams_ {0};
    std::atomic<int> events_ {0};
    std::atomic<int64_t> encoderCpuNs_ {0};
    std::atomic<int64_t> encoderBusyNs_ {0};
    std::atomic<uint64_t> metricsScrapes_ {0};
    std::atomic<int64_t> metricsCpuNs_ {0};
};

} // namespace jetagent
