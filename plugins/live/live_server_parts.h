// The live server's private parts that its sources share (internal to src/agent/live):
// live_server.cpp (connections and routes) and live_status.cpp (the run's records, the status
// document and the video encoder).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "http_live_server.h"
#include "http_wire.h"
#include "live/live_streams.h"

namespace jetagent {

// How long a streaming client (or the encoder) waits for the next frame or status before it checks
// whether the server is stopping or the peer has gone.
constexpr auto kStreamPoll = std::chrono::milliseconds(500);

// The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID), in ns; 0 when unreadable.
int64_t threadCpuNs();

// cpp-httplib's parser and routes, without its listening and threads: LiveServer accepts the
// connections and reads each request's head, as a whole within a deadline, before a worker
// hands it to serveOne.
class HttpLiveServer::HttpServer final : public httplib::Server {
public:
    // The socket LiveServer listens on, or -1 once it stops: cpp-httplib ends the streams (the
    // video, the events) when its own listening socket is invalid, as it is shutting down.
    void listeningOn(int fd) { svr_sock_ = fd < 0 ? INVALID_SOCKET : fd; }
    // Answers the one request `stream` holds (the connection closes after it).
    void serveOne(httplib::Stream& stream)
    {
        bool closed = true;
        process_request(stream, true, closed, nullptr);
    }
};

struct HttpLiveServer::Arriving {
    std::string bytes;
    HeadScanner scanner;
    int64_t acceptedNs = 0;
};

struct HttpLiveServer::Compact {
    uint64_t frame = 0;
    uint32_t task = 0;
    uint16_t stream = 0;
    bool ok = true;
    bool hasResult = true;
    bool deadlineMissed = false;
    int32_t top1 = -1;
    float score = 0.0f;
    int64_t capturedNs = 0;
    int64_t doneNs = 0;
    FrameTimes times;
    double energyMj = 0.0;
};

struct HttpLiveServer::TaskState {
    uint64_t frames = 0;
    uint64_t results = 0;
    uint64_t failed = 0;
    uint64_t deadlineMisses = 0;
    bool haveLast = false;
    FrameRecord last;
    std::deque<int64_t> rolling; // end to end of the newest results
    std::vector<int64_t> thisSecond; // end to end of the results since the last chart point
    uint64_t resultsAtPoint = 0;
    StreamRates streamRates; // a task over several streams: each one's results at the last status
    std::vector<double> fpsByStream; // results per second at the last status, by run stream
};

class HttpLiveServer::TaskSink final : public RecordSink {
public:
    TaskSink(HttpLiveServer& server, size_t task) : server_(server), task_(task) { }
    void consume(const FrameRecord& record) override { server_.consume(task_, record); }

private:
    HttpLiveServer& server_;
    size_t task_;
};

} // namespace jetagent
