// The live web view of a run: the HTTP server (cpp-httplib's parser and routes, behind
// connection handling of its own that bounds how long a request may take to arrive, how many may
// be arriving, and how long stopping takes), the JPEG encoder and the 1 Hz status builder.
#include "http_live_server.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ctime>

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <limits>
#include <map>

#include <httplib.h>
#include <turbojpeg.h>

#include "http_wire.h"
#include "jetagent/base/clock.h"
#include "jetagent/base/json_text.h"
#include "jetagent/base/log.h"
#include "jetagent/power/power_monitor.h"
#include "live/live_page.h"
#include "live_server_parts.h"

namespace jetagent {

using json = nlohmann::json;

namespace {

constexpr size_t kMaxFramesPerAnswer = 1000;
constexpr const char* kBoundary = "jetagentframe";

} // namespace

HttpLiveServer::HttpLiveServer() = default;

HttpLiveServer::~HttpLiveServer()
{
    stop();
}

Expected<std::unique_ptr<LiveServer>> HttpLiveServer::start(
    const HttpConfig& config, std::string chartJs, const PowerMonitor* power, size_t tasks)
{
    std::string key;
    if (std::string problem = httpConfigProblem(config, key); !problem.empty())
        return Status::invalid(key + ": " + problem);
    std::unique_ptr<HttpLiveServer> s(new HttpLiveServer());
    s->config_ = config;
    s->address_ = parseListenAddress(config.listen).value();
    s->chartJs_ = std::move(chartJs);
    s->power_ = power;
    s->startNs_ = monotonicNs();
    s->processStartUnixS_ = processStartUnixS();
    for (size_t i = 0; i < tasks; ++i) {
        s->tasks_.push_back(std::make_unique<TaskState>());
        s->sinks_.push_back(std::make_unique<TaskSink>(*s, i));
    }
    // Connections take descriptors the run needs (its logs, its summary): they get at most
    // what the limit leaves beyond a reserve, counted before the server opens its own.
    rlimit files {};
    const bool limited = ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY;
    s->descriptorLimit_ = limited ? static_cast<uint64_t>(files.rlim_cur) : 0;
    const size_t openAtStart = openDescriptors(limited ? s->descriptorLimit_ : 65536);
    s->maxConnections_ =
        limited ? connectionBudget(s->descriptorLimit_, openAtStart) : kMaxConnections;
    s->maxArriving_ = std::max<size_t>(1, s->maxConnections_ * kMaxArriving / kMaxConnections);
    s->maxWaiting_ = std::max<size_t>(1, s->maxConnections_ * kMaxWaiting / kMaxConnections);
    s->server_ = std::make_unique<HttpServer>();
    // Any body a GET carries is read (and dropped): a small one only.
    s->server_->set_payload_max_length(kMaxHeadBytes);
    s->setUpRoutes();
    const std::string& host = s->address_.host;
    s->listenFd_ = listenOn(host, s->address_.port, s->port_);
    if (s->listenFd_ < 0 && s->address_.port == 0)
        return Status::io("http.listen " + config.listen + ": cannot listen on " + host +
            " (is it an address of this machine?)");
    if (s->listenFd_ < 0)
        return Status::io("http.listen " + config.listen + ": cannot listen on port " +
            std::to_string(s->address_.port) + " of " + host +
            ": the port is in use (another jetagent or server?) or the address is not "
            "this machine's; choose another with --serve [ADDR:]PORT");
    s->server_->listeningOn(s->listenFd_);
    HttpLiveServer* raw = s.get();
    s->wakeFd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    s->stopFd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (s->wakeFd_ < 0 || s->stopFd_ < 0)
        return Status::io(std::string("http: cannot make an eventfd: ") + errnoText(errno));
    s->reader_ = std::thread([raw] { raw->readLoop(); });
    for (size_t i = 0; i < kWorkers; ++i)
        s->workers_.emplace_back([raw] { raw->workerLoop(); });
    s->listener_ = std::thread([raw] { raw->acceptLoop(); });
    s->encoder_ = std::thread([raw] { raw->encoderLoop(); });
    s->ticker_ = std::thread([raw] { raw->tickerLoop(); });
    auto log = logger("http");
    const char* tokenNote = config.token.empty()
        ? ""
        : " (a token is required: Authorization: Bearer TOKEN or ?token=TOKEN)";
    if (config.metricsOnly) // a headless unit serves no page: name what it does serve
        log->info("metrics on {}metrics and the JSON API under {}api/, no page{}", s->url(),
            s->url(), tokenNote);
    else
        log->info("live view on {}{}", s->url(), tokenNote);
    if (s->maxConnections_ == 0)
        log->warn("the live view turns every connection away: ulimit -n is {} and {} descriptors "
                  "are open, which leaves none beyond the {} kept for the run; raise ulimit -n",
            s->descriptorLimit_, openAtStart, kReservedDescriptors);
    else if (s->maxConnections_ < kMaxConnections)
        log->warn("the live view holds at most {} connections at once (ulimit -n is {}, {} "
                  "descriptors open); raise ulimit -n for more",
            s->maxConnections_, s->descriptorLimit_, openAtStart);
    return std::unique_ptr<LiveServer>(std::move(s));
}

std::string HttpLiveServer::url() const
{
    const bool v6 = address_.host.find(':') != std::string::npos;
    return "http://" + (v6 ? "[" + address_.host + "]" : address_.host) + ":" +
        std::to_string(port_) + "/";
}

void HttpLiveServer::stop()
{
    if (stopping_.exchange(true))
        return;
    {
        std::lock_guard<std::mutex> a(canvasMutex_);
    }
    canvasReady_.notify_all();
    {
        std::lock_guard<std::mutex> b(jpegMutex_);
    }
    jpegReady_.notify_all();
    {
        std::lock_guard<std::mutex> c(statusMutex_);
    }
    statusChanged_.notify_all();
    // No new connection, then none still arriving, then none being answered: a shut-down socket
    // ends any wait on it at once, whatever the client does.
    if (stopFd_ >= 0) {
        const uint64_t one = 1;
        [[maybe_unused]] const ssize_t written = ::write(stopFd_, &one, sizeof one);
    }
    if (listener_.joinable())
        listener_.join();
    if (server_)
        server_->listeningOn(-1);
    if (listenFd_ >= 0)
        ::close(listenFd_);
    listenFd_ = -1;
    if (wakeFd_ >= 0) {
        const uint64_t one = 1;
        [[maybe_unused]] const ssize_t written = ::write(wakeFd_, &one, sizeof one);
    }
    if (reader_.joinable())
        reader_.join();
    {
        std::lock_guard<std::mutex> lock(connMutex_);
        closing_ = true;
        for (int fd : serving_)
            ::shutdown(fd, SHUT_RDWR);
        for (Waiting& w : waiting_)
            closeConnection(w.fd, "");
        waiting_.clear();
        for (int fd : handed_)
            closeConnection(fd, "");
        handed_.clear();
    }
    waitingReady_.notify_all();
    for (std::thread& t : workers_)
        t.join();
    workers_.clear();
    if (encoder_.joinable())
        encoder_.join();
    if (ticker_.joinable())
        ticker_.join();
    if (wakeFd_ >= 0)
        ::close(wakeFd_);
    wakeFd_ = -1;
    if (stopFd_ >= 0)
        ::close(stopFd_);
    stopFd_ = -1;
}

// Takes each new connection while the connections held stay within maxConnections_ (past it,
// closes it at once); when no descriptor is free, rests kAcceptBackoffMs rather than spinning on
// the connection left in the backlog.
void HttpLiveServer::acceptLoop()
{
    pollfd fds[2] = {{listenFd_, POLLIN, 0}, {stopFd_, POLLIN, 0}};
    bool warned = false;
    while (!stopping_) {
        const int ready = ::poll(fds, 2, -1);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready < 0 || fds[1].revents != 0)
            break;
        if ((fds[0].revents & (POLLERR | POLLNVAL)) != 0) {
            logger("http")->error("the live view stopped taking connections: its socket failed");
            break;
        }
        const int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                descriptorShortages_.fetch_add(1, std::memory_order_relaxed);
                if (!warned)
                    logger("http")->warn("the live view cannot take a connection: {}; it tries "
                                         "again every {} ms meanwhile (raise ulimit -n)",
                        errnoText(errno), kAcceptBackoffMs);
                warned = true;
                ::poll(&fds[1], 1, kAcceptBackoffMs);
            }
            continue; // EAGAIN, EINTR, ECONNABORTED: the next one
        }
        if (connections_.fetch_add(1) >= static_cast<int>(maxConnections_)) {
            connections_.fetch_sub(1);
            busy_.fetch_add(1, std::memory_order_relaxed);
            sendAndClose(fd, busyAnswer());
            continue;
        }
        handOver(fd);
    }
}

void HttpLiveServer::closeConnection(int fd, const std::string& answer)
{
    sendAndClose(fd, answer);
    connections_.fetch_sub(1);
}

void HttpLiveServer::handOver(int fd)
{
    {
        std::lock_guard<std::mutex> lock(connMutex_);
        if (closing_ || stopping_) {
            closeConnection(fd, "");
            return;
        }
        handed_.push_back(fd);
    }
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t written = ::write(wakeFd_, &one, sizeof one);
}

// One thread reads every request still arriving (epoll): a slow or silent client holds no
// worker, only one of maxArriving_ places (kMaxArriving with descriptors enough), and only until
// kRequestTimeoutMs after it connected. A whole request goes to the workers' queue.
void HttpLiveServer::readLoop()
{
    const int epoll = ::epoll_create1(EPOLL_CLOEXEC);
    if (epoll < 0) {
        logger("http")->error(
            "the live view cannot read requests: epoll_create1: {}", errnoText(errno));
        return;
    }
    epoll_event wake {};
    wake.events = EPOLLIN;
    wake.data.fd = wakeFd_;
    ::epoll_ctl(epoll, EPOLL_CTL_ADD, wakeFd_, &wake);
    std::map<int, Arriving> arriving;
    auto drop = [&](int fd, const std::string& answer) {
        ::epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nullptr);
        arriving.erase(fd);
        closeConnection(fd, answer);
    };
    const int64_t timeoutNs = int64_t(kRequestTimeoutMs) * 1'000'000;
    while (!stopping_) {
        int64_t waitMs = -1;
        for (const auto& entry : arriving)
            waitMs = std::min<int64_t>(
                waitMs < 0 ? INT32_MAX : waitMs, msUntil(entry.second.acceptedNs + timeoutNs));
        epoll_event events[64];
        const int n = ::epoll_wait(epoll, events, 64, static_cast<int>(waitMs));
        if (stopping_)
            break;
        for (int i = 0; i < n; ++i) {
            const int fd = events[i].data.fd;
            if (fd == wakeFd_) {
                uint64_t count = 0;
                [[maybe_unused]] const ssize_t got = ::read(wakeFd_, &count, sizeof count);
                std::vector<int> handed;
                {
                    std::lock_guard<std::mutex> lock(connMutex_);
                    handed.swap(handed_);
                }
                for (int newFd : handed) {
                    if (arriving.size() >= maxArriving_) {
                        // The oldest is the likeliest to be slow on purpose: a browser's request
                        // arrives in one piece just after it connects.
                        auto oldest = std::min_element(
                            arriving.begin(), arriving.end(), [](const auto& a, const auto& b) {
                                return a.second.acceptedNs < b.second.acceptedNs;
                            });
                        busy_.fetch_add(1, std::memory_order_relaxed);
                        drop(oldest->first, busyAnswer());
                    }
                    epoll_event in {};
                    in.events = EPOLLIN;
                    in.data.fd = newFd;
                    if (::epoll_ctl(epoll, EPOLL_CTL_ADD, newFd, &in) != 0) {
                        closeConnection(newFd, busyAnswer());
                        continue;
                    }
                    arriving[newFd].acceptedNs = monotonicNs();
                }
                continue;
            }
            auto it = arriving.find(fd);
            if (it == arriving.end())
                continue;
            Arriving& a = it->second;
            char buffer[4096];
            const ssize_t got = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
            if (got < 0 && (errno == EAGAIN || errno == EINTR))
                continue;
            if (got <= 0) {
                drop(fd, ""); // the client went away before its request was whole
                continue;
            }
            a.bytes.append(buffer, static_cast<size_t>(got));
            const size_t end = a.scanner.scan(a.bytes);
            if ((end == std::string::npos && a.bytes.size() > kMaxHeadBytes) ||
                (end != std::string::npos && end > kMaxHeadBytes)) {
                drop(fd, headTooLargeAnswer());
                continue;
            }
            if (end == std::string::npos)
                continue;
            Waiting whole {fd, withoutRangeLines(a.bytes, end), a.acceptedNs + timeoutNs};
            ::epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nullptr);
            arriving.erase(it);
            std::unique_lock<std::mutex> lock(connMutex_);
            if (waiting_.size() >= maxWaiting_) {
                lock.unlock();
                busy_.fetch_add(1, std::memory_order_relaxed);
                closeConnection(fd, busyAnswer());
                continue;
            }
            waiting_.push_back(std::move(whole));
            lock.unlock();
            waitingReady_.notify_one();
        }
        const int64_t now = monotonicNs();
        std::vector<int> late;
        for (const auto& entry : arriving)
            if (now >= entry.second.acceptedNs + timeoutNs)
                late.push_back(entry.first);
        for (int fd : late) {
            slowRequests_.fetch_add(1, std::memory_order_relaxed);
            drop(fd, requestTimeoutAnswer());
        }
    }
    for (const auto& entry : arriving)
        closeConnection(entry.first, "");
    ::close(epoll);
}

void HttpLiveServer::workerLoop()
{
    while (true) {
        Waiting next;
        {
            std::unique_lock<std::mutex> lock(connMutex_);
            waitingReady_.wait(lock, [this] { return closing_ || !waiting_.empty(); });
            if (closing_)
                return; // stop() closes those still waiting
            next = std::move(waiting_.front());
            waiting_.pop_front();
            serving_.push_back(next.fd);
        }
        serveConnection(std::move(next));
    }
}

void HttpLiveServer::serveConnection(Waiting waiting)
{
    const int fd = waiting.fd;
    {
        ConnectionStream stream(fd, std::move(waiting.bytes), waiting.deadlineNs);
        server_->serveOne(stream);
    }
    {
        // Out of serving_ before the descriptor is closed: stop() never shuts down a number
        // that another connection has taken since.
        std::lock_guard<std::mutex> lock(connMutex_);
        serving_.erase(std::find(serving_.begin(), serving_.end(), fd));
    }
    closeConnection(fd, "");
}

std::string HttpLiveServer::respond(const std::string& request)
{
    HeadScanner scanner;
    const size_t end = scanner.scan(request);
    if (end == std::string::npos && request.size() > kMaxHeadBytes)
        return headTooLargeAnswer();
    if (end == std::string::npos)
        return requestTimeoutAnswer(); // what a client that sends no more would get
    if (end > kMaxHeadBytes)
        return headTooLargeAnswer();
    MemoryStream stream(withoutRangeLines(request, end));
    server_->serveOne(stream);
    return std::move(stream.answer());
}

namespace {

// A client over the limit of its kind: refused, with what to do instead.
void refuseOverLimit(
    httplib::Response& res, const std::string& what, size_t limit, const std::string& instead)
{
    res.status = 503;
    res.set_header("Retry-After", "5");
    res.set_content("too many " + what + " clients (the limit is " + std::to_string(limit) + "); " +
            instead + "\n",
        "text/plain");
}

} // namespace

void HttpLiveServer::setUpRoutes()
{
    httplib::Server& server = *server_;
    // Read-only and, off loopback, for token holders only: checked before any route.
    server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
        return admit(req, res) ? httplib::Server::HandlerResponse::Unhandled
                               : httplib::Server::HandlerResponse::Handled;
    });
    server.Get("/metrics",
        [this](const httplib::Request& req, httplib::Response& res) { serveMetrics(req, res); });
    server.Get("/api/status",
        [this](const httplib::Request&, httplib::Response& res) { serveStatus(res); });
    server.Get("/api/history", [this](const httplib::Request&, httplib::Response& res) {
        res.set_header("Cache-Control", "no-store");
        res.set_content(jsonText(historyJson()), "application/json");
    });
    server.Get("/api/frames",
        [this](const httplib::Request& req, httplib::Response& res) { serveFrames(req, res); });
    server.Get("/api/events",
        [this](const httplib::Request&, httplib::Response& res) { serveEvents(res); });
    // A headless unit (http.metrics_only): no page and no video, which then answer 404.
    if (config_.metricsOnly)
        return;
    server.Get("/", [this](const httplib::Request&, httplib::Response& res) {
        res.set_header("Cache-Control", "no-store");
        res.set_content(livePageHtml(chartJs_), "text/html; charset=utf-8");
    });
    server.Get("/snapshot.jpg",
        [this](const httplib::Request&, httplib::Response& res) { serveSnapshot(res); });
    server.Get("/video.mjpg",
        [this](const httplib::Request&, httplib::Response& res) { serveVideo(res); });
}

bool HttpLiveServer::admit(const httplib::Request& req, httplib::Response& res)
{
    if (req.method != "GET" && req.method != "HEAD") {
        res.status = 405;
        res.set_header("Allow", "GET, HEAD");
        res.set_content("jetagent's live view is read-only: GET or HEAD only\n", "text/plain");
        return false;
    }
    // Every answer is whole: Range lines never reach here (withoutRangeLines).
    res.set_header("Accept-Ranges", "none");
    if (config_.token.empty())
        return true;
    const bool viaHeader = bearerMatches(req.get_header_value("Authorization"), config_.token);
    const bool viaQuery =
        req.has_param("token") && sameSecret(req.get_param_value("token"), config_.token);
    if (viaHeader || viaQuery)
        return true;
    unauthorized_.fetch_add(1, std::memory_order_relaxed);
    res.status = 401;
    res.set_header("WWW-Authenticate", "Bearer realm=\"jetagent\"");
    res.set_content(
        "a token is required: Authorization: Bearer TOKEN or ?token=TOKEN\n", "text/plain");
    return false;
}

void HttpLiveServer::serveStatus(httplib::Response& res)
{
    std::shared_ptr<const std::string> text;
    {
        std::lock_guard<std::mutex> lock(statusMutex_);
        text = status_;
    }
    if (!text) {
        json point;
        text = std::make_shared<const std::string>(jsonText(buildStatus(point)));
    }
    res.set_header("Cache-Control", "no-store");
    res.set_content(*text, "application/json");
}

void HttpLiveServer::serveFrames(const httplib::Request& req, httplib::Response& res)
{
    // Without `since`, the whole ring from its oldest record (frame 0 while the run is young).
    std::optional<uint64_t> since;
    if (req.has_param("since")) {
        const std::string text = req.get_param_value("since");
        const bool digits = !text.empty() &&
            std::all_of(
                text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
        if (!digits) {
            res.status = 400;
            res.set_content("since: expected a frame number (0 or more; leave it out for every "
                            "frame the ring holds)\n",
                "text/plain");
            return;
        }
        // Any 64-bit frame number; past the largest, a clear refusal rather than a wrap.
        uint64_t value = 0;
        constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
        for (const char c : text) {
            const uint64_t digit = static_cast<uint64_t>(c - '0');
            if (value > (kMax - digit) / 10) {
                res.status = 400;
                res.set_content("since: " + text.substr(0, 40) + (text.size() > 40 ? "..." : "") +
                        " is past the largest frame number, " + std::to_string(kMax) + "\n",
                    "text/plain");
                return;
            }
            value = value * 10 + digit;
        }
        since = value;
    }
    json answer = framesJson(since, kMaxFramesPerAnswer);
    res.set_header("Cache-Control", "no-store");
    res.set_content(jsonText(answer), "application/json");
}

void HttpLiveServer::serveSnapshot(httplib::Response& res)
{
    // Someone watches for the time it takes the view to hand over a frame and the encoder to
    // encode it.
    viewers_.fetch_add(1);
    std::shared_ptr<const std::string> jpeg;
    {
        std::unique_lock<std::mutex> lock(jpegMutex_);
        const uint64_t seen = jpegSeq_;
        jpegReady_.wait_for(
            lock, std::chrono::seconds(2), [&] { return jpegSeq_ != seen || stopping_; });
        jpeg = jpeg_;
    }
    viewers_.fetch_sub(1);
    if (!jpeg) {
        res.status = 503;
        res.set_content("no frame yet: the run has not drawn one\n", "text/plain");
        return;
    }
    res.set_header("Cache-Control", "no-store");
    res.set_content(*jpeg, "image/jpeg");
}

void HttpLiveServer::serveVideo(httplib::Response& res)
{
    if (streams_.fetch_add(1) >= kMaxStreams) {
        streams_.fetch_sub(1);
        refused_.fetch_add(1, std::memory_order_relaxed);
        refuseOverLimit(res, "video", kMaxStreams, "try again later or poll /snapshot.jpg");
        return;
    }
    viewers_.fetch_add(1);
    auto lastSent = std::make_shared<uint64_t>(0);
    res.set_header("Cache-Control", "no-store");
    res.set_content_provider(
        std::string("multipart/x-mixed-replace; boundary=") + kBoundary,
        [this, lastSent](size_t, httplib::DataSink& sink) {
            std::shared_ptr<const std::string> jpeg;
            uint64_t seq = 0;
            {
                std::unique_lock<std::mutex> lock(jpegMutex_);
                jpegReady_.wait_for(
                    lock, kStreamPoll, [&] { return jpegSeq_ != *lastSent || stopping_; });
                if (stopping_)
                    return false;
                jpeg = jpeg_;
                seq = jpegSeq_;
            }
            if (seq == *lastSent || !jpeg)
                return sink.is_writable();
            // Each client gets the newest JPEG: those encoded while it was still taking the last
            // one are skipped for it alone.
            if (*lastSent != 0 && seq > *lastSent + 1)
                skipped_.fetch_add(seq - *lastSent - 1, std::memory_order_relaxed);
            *lastSent = seq;
            const std::string head = std::string("--") + kBoundary +
                "\r\nContent-Type: image/jpeg\r\nContent-Length: " + std::to_string(jpeg->size()) +
                "\r\n\r\n";
            if (!sink.write(head.data(), head.size()) || !sink.write(jpeg->data(), jpeg->size())) {
                // The client stopped taking frames (gone, or stalled past the write timeout):
                // what was encoded while the write waited never reached it.
                std::lock_guard<std::mutex> lock(jpegMutex_);
                skipped_.fetch_add(jpegSeq_ - seq, std::memory_order_relaxed);
                return false;
            }
            // The whole JPEG went out: it counts as sent even when the client, having read it,
            // hangs up before the part's closing line break.
            sent_.fetch_add(1, std::memory_order_relaxed);
            return sink.write("\r\n", 2);
        },
        [this](bool) {
            viewers_.fetch_sub(1);
            streams_.fetch_sub(1);
        });
}

void HttpLiveServer::serveEvents(httplib::Response& res)
{
    if (events_.fetch_add(1) >= kMaxEvents) {
        events_.fetch_sub(1);
        eventsRefused_.fetch_add(1, std::memory_order_relaxed);
        refuseOverLimit(res, "event", kMaxEvents, "poll /api/status instead");
        return;
    }
    auto lastSent = std::make_shared<uint64_t>(0);
    res.set_header("Cache-Control", "no-store");
    res.set_content_provider(
        "text/event-stream",
        [this, lastSent](size_t, httplib::DataSink& sink) {
            std::shared_ptr<const std::string> text;
            {
                std::unique_lock<std::mutex> lock(statusMutex_);
                statusChanged_.wait_for(
                    lock, kStreamPoll, [&] { return statusSeq_ != *lastSent || stopping_; });
                if (stopping_)
                    return false;
                if (statusSeq_ == *lastSent || !status_)
                    return sink.is_writable();
                text = status_;
                *lastSent = statusSeq_;
            }
            const std::string event = "event: status\ndata: " + *text + "\n\n";
            return sink.write(event.data(), event.size());
        },
        [this](bool) { events_.fetch_sub(1); });
}

} // namespace jetagent
