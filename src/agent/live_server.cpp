// The live web view of a run: the HTTP server (cpp-httplib's parser and routes, behind
// connection handling of its own that bounds how long a request may take to arrive, how many may
// be arriving, and how long stopping takes), the JPEG encoder and the 1 Hz status builder.
#include "live_server.h"

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

#include "jetagent/base/clock.h"
#include "jetagent/base/json_text.h"
#include "jetagent/base/log.h"
#include "jetagent/power/power_monitor.h"
#include "live_page.h"

namespace jetagent {

using json = nlohmann::json;

namespace {

constexpr int kJpegQuality = 75;
// How long a streaming client waits for the next frame or status before it checks whether the
// server is stopping or the peer has gone.
constexpr auto kStreamPoll = std::chrono::milliseconds(500);
// A video or events client that cannot take a write for this long (it stopped reading) is
// dropped; until then it only skips frames.
constexpr int kWriteTimeoutMs = 5000;
// Connections the kernel keeps for the accept thread to take (listen(2)'s backlog).
constexpr int kListenBacklog = 64;
// The server's own descriptors: the listening socket, two eventfds and the reading thread's epoll.
constexpr size_t kOwnDescriptors = 4;
// What respond() keeps of an answer: more than any answer but a stream's.
constexpr size_t kMaxRespondBytes = 4 * 1024 * 1024;
constexpr size_t kMaxFramesPerAnswer = 1000;
constexpr const char* kBoundary = "jetagentframe";

double round3(double v)
{
    return std::round(v * 1000.0) / 1000.0;
}

json msOrNull(int64_t ns, bool valid = true)
{
    return valid ? json(round3(nsToMs(ns))) : json(nullptr);
}

json finiteOrNull(double v)
{
    return std::isfinite(v) ? json(round3(v)) : json(nullptr);
}

int64_t threadCpuNs()
{
    timespec ts {};
    if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Constant-time comparison: the token is a secret, and how long a wrong guess takes to refuse
// must not tell how much of it was right.
bool sameSecret(const std::string& a, const std::string& b)
{
    unsigned char diff = a.size() == b.size() ? 0 : 1;
    for (size_t i = 0; i < a.size(); ++i)
        diff |= static_cast<unsigned char>(a[i] ^ b[i % std::max<size_t>(b.size(), 1)]);
    return diff == 0 && !b.empty();
}

// Nearest rank, as the summaries use it: the smallest value with at least p% of them at or below.
double nearestRankMs(const std::vector<int64_t>& sorted, double p)
{
    if (sorted.empty())
        return 0.0;
    size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
    rank = std::min(std::max<size_t>(rank, 1), sorted.size());
    return nsToMs(sorted[rank - 1]);
}

int64_t msUntil(int64_t deadlineNs)
{
    const int64_t left = deadlineNs - monotonicNs();
    return left <= 0 ? 0 : (left + 999'999) / 1'000'000;
}

// Waits up to `ms` for `events` on `fd`; false on a timeout, and for POLLOUT when the peer is
// gone.
bool waitFor(int fd, short events, int64_t ms)
{
    pollfd p {fd, events, 0};
    int rc = 0;
    do {
        rc = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(ms, 60'000)));
    } while (rc < 0 && errno == EINTR);
    if (rc <= 0)
        return false;
    if (events == POLLOUT)
        return (p.revents & POLLOUT) != 0 && (p.revents & (POLLERR | POLLHUP)) == 0;
    return true;
}

// A short answer written by the reading thread to a connection it is about to close: never
// waits (what the socket does not take at once is lost).
std::string cannedAnswer(int status, const char* reason, const std::string& text)
{
    return "HTTP/1.1 " + std::to_string(status) + " " + reason +
        "\r\nContent-Type: text/plain\r\nContent-Length: " + std::to_string(text.size()) +
        "\r\nConnection: close\r\n\r\n" + text;
}

void sendAndClose(int fd, const std::string& answer)
{
    if (!answer.empty()) {
        [[maybe_unused]] const ssize_t sent =
            ::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
}

const std::string& requestTimeoutAnswer()
{
    static const std::string answer = cannedAnswer(408, "Request Timeout",
        "the request did not arrive whole within " +
            std::to_string(LiveServer::kRequestTimeoutMs / 1000) + " s\n");
    return answer;
}

const std::string& headTooLargeAnswer()
{
    static const std::string answer = cannedAnswer(431, "Request Header Fields Too Large",
        "the request's head is longer than " + std::to_string(LiveServer::kMaxHeadBytes) +
            " bytes\n");
    return answer;
}

const std::string& busyAnswer()
{
    static const std::string answer = cannedAnswer(
        503, "Service Unavailable", "too many connections at once; try again in a few seconds\n");
    return answer;
}

bool equalsIgnoringCase(const std::string& a, size_t from, size_t length, const char* b)
{
    const size_t n = std::strlen(b);
    if (length != n)
        return false;
    for (size_t i = 0; i < n; ++i)
        if (std::tolower(static_cast<unsigned char>(a[from + i])) != b[i])
            return false;
    return true;
}

// Where a request's head ends in its bytes as they arrive, the way cpp-httplib reads it: lines
// end at '\n', the first is the request line, and the head ends with the first later line that
// is exactly "\r\n". Each byte is looked at once, however the bytes trickle in.
class HeadScanner {
public:
    // The offset just past the head in `bytes` (which only grow), or npos while incomplete.
    size_t scan(const std::string& bytes)
    {
        while (end_ == std::string::npos) {
            const size_t newline = bytes.find('\n', next_);
            if (newline == std::string::npos) {
                next_ = bytes.size();
                break;
            }
            if (lines_ > 0 && newline == lineStart_ + 1 && bytes[lineStart_] == '\r')
                end_ = newline + 1;
            ++lines_;
            lineStart_ = next_ = newline + 1;
        }
        return end_;
    }

private:
    size_t next_ = 0;
    size_t lineStart_ = 0;
    size_t lines_ = 0;
    size_t end_ = std::string::npos;
};

// `bytes` without the head's Range lines: every answer is generated, whole (a server may ignore
// Range, RFC 9110), so none is cut into ranges; cpp-httplib would otherwise serve any number of
// ranges of it, each a copy (2,000 ranges of the page were a 421 MB answer).
std::string withoutRangeLines(const std::string& bytes, size_t headEnd)
{
    std::string out;
    out.reserve(bytes.size());
    size_t at = 0;
    bool first = true;
    while (at < headEnd) {
        const size_t next = bytes.find('\n', at) + 1; // within the head: it ends with one
        const size_t colon = bytes.find(':', at);
        const bool range =
            !first && colon < next && equalsIgnoringCase(bytes, at, colon - at, "range");
        if (!range)
            out.append(bytes, at, next - at);
        first = false;
        at = next;
    }
    out.append(bytes, headEnd, std::string::npos);
    return out;
}

// A connection's request as cpp-httplib reads it: the bytes the reading thread has (the head and
// what came with it), then the socket until the request's deadline; answers go out with a
// timeout per write, as the streams want. stop() shuts the socket down to end any wait at once.
class ConnectionStream final : public httplib::Stream {
public:
    ConnectionStream(int fd, std::string bytes, int64_t deadlineNs)
        : fd_(fd), bytes_(std::move(bytes)), deadlineNs_(deadlineNs)
    {
    }
    bool is_readable() const override
    {
        return offset_ < bytes_.size() || waitFor(fd_, POLLIN, msUntil(deadlineNs_));
    }
    bool is_writable() const override { return waitFor(fd_, POLLOUT, kWriteTimeoutMs); }
    ssize_t read(char* ptr, size_t size) override
    {
        if (offset_ < bytes_.size()) {
            const size_t n = std::min(size, bytes_.size() - offset_);
            std::memcpy(ptr, bytes_.data() + offset_, n);
            offset_ += n;
            return static_cast<ssize_t>(n);
        }
        while (waitFor(fd_, POLLIN, msUntil(deadlineNs_))) {
            const ssize_t n = ::recv(fd_, ptr, size, MSG_DONTWAIT);
            if (n >= 0 || (errno != EAGAIN && errno != EINTR))
                return n;
        }
        return -1;
    }
    ssize_t write(const char* ptr, size_t size) override
    {
        const int64_t until = monotonicNs() + int64_t(kWriteTimeoutMs) * 1'000'000;
        while (true) {
            const ssize_t n = ::send(fd_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n >= 0 || (errno != EAGAIN && errno != EINTR))
                return n;
            if (!waitFor(fd_, POLLOUT, msUntil(until)))
                return -1;
        }
    }
    void get_remote_ip_and_port(std::string& ip, int& port) const override
    {
        address(::getpeername, ip, port);
    }
    void get_local_ip_and_port(std::string& ip, int& port) const override
    {
        address(::getsockname, ip, port);
    }
    socket_t socket() const override { return fd_; }

private:
    void address(int (*get)(int, sockaddr*, socklen_t*), std::string& ip, int& port) const
    {
        sockaddr_storage a {};
        socklen_t length = sizeof a;
        char host[NI_MAXHOST] = "";
        char service[NI_MAXSERV] = "";
        if (get(fd_, reinterpret_cast<sockaddr*>(&a), &length) == 0 &&
            ::getnameinfo(reinterpret_cast<sockaddr*>(&a), length, host, sizeof host, service,
                sizeof service, NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
            ip = host;
            port = std::atoi(service);
        }
    }

    int fd_;
    std::string bytes_;
    size_t offset_ = 0;
    int64_t deadlineNs_;
};

// respond()'s connection: the request's bytes, then the end of the stream; the answer is kept up
// to kMaxRespondBytes.
class MemoryStream final : public httplib::Stream {
public:
    explicit MemoryStream(std::string bytes) : bytes_(std::move(bytes)) { }
    bool is_readable() const override { return true; }
    bool is_writable() const override { return out_.size() < kMaxRespondBytes; }
    ssize_t read(char* ptr, size_t size) override
    {
        const size_t n = std::min(size, bytes_.size() - offset_);
        std::memcpy(ptr, bytes_.data() + offset_, n);
        offset_ += n;
        return static_cast<ssize_t>(n);
    }
    ssize_t write(const char* ptr, size_t size) override
    {
        if (!is_writable())
            return -1;
        out_.append(ptr, size);
        return static_cast<ssize_t>(size);
    }
    void get_remote_ip_and_port(std::string& ip, int& port) const override
    {
        ip = "127.0.0.1";
        port = 0;
    }
    void get_local_ip_and_port(std::string& ip, int& port) const override
    {
        ip = "127.0.0.1";
        port = 0;
    }
    socket_t socket() const override { return INVALID_SOCKET; }
    std::string& answer() { return out_; }

private:
    std::string bytes_;
    size_t offset_ = 0;
    std::string out_;
};

// The descriptors open now (/proc/self/fd; without it, those below `limit` that are valid).
size_t openDescriptors(uint64_t limit)
{
    std::error_code ec;
    std::filesystem::directory_iterator entries("/proc/self/fd", ec);
    if (!ec) {
        size_t n = 0;
        for (const auto& entry : entries) {
            (void)entry;
            ++n;
        }
        return n > 0 ? n - 1 : 0; // not the directory's own
    }
    size_t n = 0;
    const int last = static_cast<int>(std::min<uint64_t>(limit, 65536));
    for (int fd = 0; fd < last; ++fd)
        n += ::fcntl(fd, F_GETFD) != -1 ? 1 : 0;
    return n;
}

// A listening socket on host:port (0: any free port), its port in `bound`; -1 when none could
// be made or bound. SO_REUSEADDR alone: with SO_REUSEPORT, a second jetagent on the same port
// would bind too and share the clients instead of being told the port is in use.
int listenOn(const std::string& host, int port, int& bound)
{
    addrinfo hints {};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo* found = nullptr;
    if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0)
        return -1;
    int fd = -1;
    for (const addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
        fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (fd < 0)
            continue;
        int yes = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
        if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, kListenBacklog) != 0) {
            ::close(fd);
            fd = -1;
        }
    }
    ::freeaddrinfo(found);
    sockaddr_storage address {};
    socklen_t length = sizeof address;
    if (fd >= 0 && ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
        bound = ntohs(address.ss_family == AF_INET6
                ? reinterpret_cast<const sockaddr_in6*>(&address)->sin6_port
                : reinterpret_cast<const sockaddr_in*>(&address)->sin_port);
    return fd;
}

// "Bearer TOKEN", the scheme in any case (RFC 7235), then one or more spaces.
bool bearerMatches(const std::string& header, const std::string& token)
{
    constexpr size_t kScheme = 6;
    if (header.size() <= kScheme || header[kScheme] != ' ' ||
        !equalsIgnoringCase(header, 0, kScheme, "bearer"))
        return false;
    const size_t at = header.find_first_not_of(' ', kScheme);
    return at != std::string::npos && sameSecret(header.substr(at), token);
}

} // namespace

// cpp-httplib's parser and routes, without its listening and threads: LiveServer accepts the
// connections and reads each request's head, as a whole within a deadline, before a worker
// hands it to serveOne.
class LiveServer::HttpServer final : public httplib::Server {
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

struct LiveServer::Arriving {
    std::string bytes;
    HeadScanner scanner;
    int64_t acceptedNs = 0;
};

Expected<ListenAddress> parseListenAddress(const std::string& listen)
{
    ListenAddress out;
    std::string portText = listen;
    if (!listen.empty() && listen.front() == '[') {
        const size_t close = listen.find(']');
        if (close == std::string::npos || close + 1 >= listen.size() || listen[close + 1] != ':')
            return Status::invalid("'" + listen + "': expected [IPv6]:PORT, such as [::1]:8080");
        out.host = listen.substr(1, close - 1);
        portText = listen.substr(close + 2);
    } else if (const size_t colon = listen.rfind(':'); colon != std::string::npos) {
        if (listen.find(':') != colon)
            return Status::invalid(
                "'" + listen + "': an IPv6 address goes in brackets, such as [::1]:8080");
        out.host = listen.substr(0, colon);
        portText = listen.substr(colon + 1);
    }
    if (out.host.empty())
        return Status::invalid("'" + listen + "': no address before the port");
    const bool digits = !portText.empty() && portText.size() <= 5 &&
        std::all_of(
            portText.begin(), portText.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
    if (!digits || std::stoi(portText) > 65535)
        return Status::invalid(
            "'" + listen + "': expected PORT or ADDR:PORT with a port from 0 to 65535");
    out.port = std::stoi(portText);
    return out;
}

bool isLoopbackHost(const std::string& host)
{
    return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

std::string httpConfigProblem(const HttpConfig& config, std::string& key)
{
    if (config.listen.empty())
        return "";
    auto address = parseListenAddress(config.listen);
    if (!address) {
        key = "http.listen";
        return address.status().message();
    }
    if (!isLoopbackHost(address.value().host) && config.token.empty()) {
        key = "http.token";
        return "required to serve on " + address.value().host +
            ", which other machines can reach: set http.token (clients send it as \"Authorization: "
            "Bearer TOKEN\" or ?token=TOKEN), or listen on 127.0.0.1";
    }
    return "";
}

struct LiveServer::Compact {
    uint64_t frame = 0;
    uint32_t task = 0;
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

struct LiveServer::TaskState {
    uint64_t frames = 0;
    uint64_t results = 0;
    uint64_t failed = 0;
    uint64_t deadlineMisses = 0;
    bool haveLast = false;
    FrameRecord last;
    std::deque<int64_t> rolling; // end to end of the newest results
    std::vector<int64_t> thisSecond; // end to end of the results since the last chart point
    uint64_t resultsAtPoint = 0;
};

class LiveServer::TaskSink final : public RecordSink {
public:
    TaskSink(LiveServer& server, size_t task) : server_(server), task_(task) { }
    void consume(const FrameRecord& record) override { server_.consume(task_, record); }

private:
    LiveServer& server_;
    size_t task_;
};

LiveServer::LiveServer() = default;

LiveServer::~LiveServer()
{
    stop();
}

Expected<std::unique_ptr<LiveServer>> LiveServer::start(
    const HttpConfig& config, std::string chartJs, const PowerMonitor* power, size_t tasks)
{
    std::string key;
    if (std::string problem = httpConfigProblem(config, key); !problem.empty())
        return Status::invalid(key + ": " + problem);
    std::unique_ptr<LiveServer> s(new LiveServer());
    s->config_ = config;
    s->address_ = parseListenAddress(config.listen).value();
    s->chartJs_ = std::move(chartJs);
    s->power_ = power;
    s->startNs_ = monotonicNs();
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
    LiveServer* raw = s.get();
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
    log->info("live view on {}{}", s->url(),
        config.token.empty()
            ? ""
            : " (a token is required: Authorization: Bearer TOKEN or ?token=TOKEN)");
    if (s->maxConnections_ == 0)
        log->warn("the live view turns every connection away: ulimit -n is {} and {} descriptors "
                  "are open, which leaves none beyond the {} kept for the run; raise ulimit -n",
            s->descriptorLimit_, openAtStart, kReservedDescriptors);
    else if (s->maxConnections_ < kMaxConnections)
        log->warn("the live view holds at most {} connections at once (ulimit -n is {}, {} "
                  "descriptors open); raise ulimit -n for more",
            s->maxConnections_, s->descriptorLimit_, openAtStart);
    return s;
}

size_t LiveServer::connectionBudget(uint64_t limit, size_t openAtStart)
{
    const uint64_t reserve = uint64_t(kReservedDescriptors) + kOwnDescriptors + openAtStart;
    if (limit <= reserve)
        return 0;
    return static_cast<size_t>(std::min<uint64_t>(kMaxConnections, (limit - reserve) / 2));
}

std::string LiveServer::url() const
{
    const bool v6 = address_.host.find(':') != std::string::npos;
    return "http://" + (v6 ? "[" + address_.host + "]" : address_.host) + ":" +
        std::to_string(port_) + "/";
}

void LiveServer::stop()
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
void LiveServer::acceptLoop()
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

void LiveServer::closeConnection(int fd, const std::string& answer)
{
    sendAndClose(fd, answer);
    connections_.fetch_sub(1);
}

void LiveServer::handOver(int fd)
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
void LiveServer::readLoop()
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

void LiveServer::workerLoop()
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

void LiveServer::serveConnection(Waiting waiting)
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

std::string LiveServer::respond(const std::string& request)
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

RecordSink* LiveServer::sink(size_t task)
{
    return task < sinks_.size() ? sinks_[task].get() : nullptr;
}

void LiveServer::attach(LiveRun run)
{
    std::lock_guard<std::mutex> lock(dataMutex_);
    run_ = std::move(run);
    attached_ = true;
    for (auto& t : tasks_)
        *t = TaskState();
    ring_.clear();
    ringNext_ = 0;
    history_.clear(); // another run (a reload): its own series
}

void LiveServer::detach()
{
    std::lock_guard<std::mutex> lock(dataMutex_);
    attached_ = false;
    run_.dropped = nullptr;
    run_.lost = nullptr;
}

void LiveServer::consume(size_t task, const FrameRecord& record)
{
    std::lock_guard<std::mutex> lock(dataMutex_);
    if (task >= tasks_.size())
        return;
    TaskState& t = *tasks_[task];
    ++t.frames;
    if (!record.ok)
        ++t.failed;
    if (record.times.deadlineMissed)
        ++t.deadlineMisses;
    if (record.ok && record.hasResult) {
        ++t.results;
        t.haveLast = true;
        t.last = record;
        t.rolling.push_back(record.times.endToEndNs);
        if (t.rolling.size() > kRollingResults)
            t.rolling.pop_front();
        if (t.thisSecond.size() < 100'000) // bounded even when the ticker stalls
            t.thisSecond.push_back(record.times.endToEndNs);
    }
    Compact c;
    c.frame = record.frameId;
    c.task = static_cast<uint32_t>(task);
    c.ok = record.ok;
    c.hasResult = record.hasResult;
    c.deadlineMissed = record.times.deadlineMissed;
    c.top1 = record.topK > 0 ? record.labels[0] : -1;
    c.score = record.topK > 0 ? record.scores[0] : 0.0f;
    c.capturedNs = record.capturedNs;
    c.doneNs = record.doneNs;
    c.times = record.times;
    c.energyMj = record.frameEnergyMj;
    if (ring_.size() < kFrameRing) {
        ring_.push_back(c);
    } else {
        ring_[ringNext_] = c;
        ringNext_ = (ringNext_ + 1) % kFrameRing;
    }
}

void LiveServer::onCanvas(cv::Mat& canvas, uint64_t /*frame*/)
{
    canvases_.fetch_add(1, std::memory_order_relaxed);
    if (!watched())
        return;
    // Swapped, not copied: a copy of a 640x480 frame cost 0.2 ms of the view's thread here, a
    // fifth of its encoding. Three buffers go round (the view's, this slot, the encoder's), so
    // after the first frames nothing is allocated. The hand-off counts in the video's CPU time.
    const int64_t cpuStart = threadCpuNs();
    {
        std::lock_guard<std::mutex> lock(canvasMutex_);
        cv::swap(pending_, canvas);
        havePending_ = true;
    }
    canvasReady_.notify_one();
    encoderCpuNs_.fetch_add(threadCpuNs() - cpuStart, std::memory_order_relaxed);
}

namespace {

// TurboJPEG's compressor and its output buffer, freed together.
struct JpegCompressor {
    tjhandle handle = tjInitCompress();
    // Sized once for the worst case of the frame size (tjBufSize) and never reallocated: left to
    // TurboJPEG, a frame larger than the last one's JPEG was a new buffer and its page faults.
    unsigned char* out = nullptr;
    unsigned long capacity = 0;
    unsigned long size = 0;
    bool reserve(int width, int height)
    {
        const unsigned long needed = tjBufSize(width, height, TJSAMP_420);
        if (needed == static_cast<unsigned long>(-1))
            return false;
        if (needed > capacity) {
            tjFree(out);
            out = tjAlloc(static_cast<int>(needed));
            capacity = out ? needed : 0;
        }
        return out != nullptr;
    }
    JpegCompressor() = default;
    JpegCompressor(const JpegCompressor&) = delete;
    JpegCompressor& operator=(const JpegCompressor&) = delete;
    ~JpegCompressor()
    {
        tjFree(out);
        if (handle)
            tjDestroy(handle);
    }
};

} // namespace

// One thread encodes, whatever the number of clients: each JPEG is made once and shared. It
// takes the newest canvas (latest wins: a frame that arrives during an encoding replaces the one
// waiting), so the encoder is never behind by more than one frame. TurboJPEG straight from the
// BGR canvas: 1.0 ms a 640x480 frame on the development machine, against 1.5 ms through OpenCV's
// imencode (the same frame, quality 75, 4:2:0).
void LiveServer::encoderLoop()
{
    cv::Mat working;
    JpegCompressor jpeg;
    if (!jpeg.handle)
        logger("http")->warn(
            "TurboJPEG cannot start ({}): the live view has no video", tjGetErrorStr());
    int64_t watchedSince = 0;
    while (true) {
        {
            std::unique_lock<std::mutex> lock(canvasMutex_);
            canvasReady_.wait_for(lock, kStreamPoll, [this] { return havePending_ || stopping_; });
            if (stopping_)
                return;
            const int64_t now = monotonicNs();
            if (watched() && watchedSince == 0)
                watchedSince = now;
            if (watchedSince != 0) {
                encoderBusyNs_.fetch_add(now - watchedSince, std::memory_order_relaxed);
                watchedSince = watched() ? now : 0;
            }
            if (!havePending_)
                continue;
            cv::swap(working, pending_);
            havePending_ = false;
        }
        if (!jpeg.handle || working.type() != CV_8UC3 || !jpeg.reserve(working.cols, working.rows))
            continue;
        const int64_t cpuStart = threadCpuNs();
        jpeg.size = jpeg.capacity;
        const int rc = tjCompress2(jpeg.handle, working.data, working.cols,
            static_cast<int>(working.step), working.rows, TJPF_BGR, &jpeg.out, &jpeg.size,
            TJSAMP_420, kJpegQuality, TJFLAG_FASTDCT | TJFLAG_NOREALLOC);
        encoderCpuNs_.fetch_add(threadCpuNs() - cpuStart, std::memory_order_relaxed);
        if (rc != 0) {
            logger("http")->warn("could not encode a frame as JPEG: {}", tjGetErrorStr());
            continue;
        }
        auto shared = std::make_shared<const std::string>(
            reinterpret_cast<const char*>(jpeg.out), static_cast<size_t>(jpeg.size));
        {
            std::lock_guard<std::mutex> lock(jpegMutex_);
            jpeg_ = std::move(shared);
            ++jpegSeq_;
            jpegWidth_ = working.cols;
            jpegHeight_ = working.rows;
        }
        encoded_.fetch_add(1, std::memory_order_relaxed);
        jpegReady_.notify_all();
    }
}

void LiveServer::tickerLoop()
{
    auto next = std::chrono::steady_clock::now();
    while (!stopping_) {
        json point;
        json status = buildStatus(point);
        auto text = std::make_shared<const std::string>(jsonText(status));
        {
            // The charts' points come from a run: none before it is attached (no series names).
            std::lock_guard<std::mutex> lock(dataMutex_);
            if (attached_) {
                history_.push_back(std::move(point));
                if (history_.size() > kHistorySeconds)
                    history_.pop_front();
            }
        }
        {
            std::lock_guard<std::mutex> lock(statusMutex_);
            status_ = std::move(text);
            ++statusSeq_;
        }
        statusChanged_.notify_all();
        next += std::chrono::seconds(1);
        std::unique_lock<std::mutex> lock(statusMutex_);
        statusChanged_.wait_until(lock, next, [this] { return stopping_.load(); });
    }
}

json LiveServer::buildStatus(json& point)
{
    const int64_t now = monotonicNs();
    json status;
    json names = {{"tasks", json::array()}, {"rails", json::array()}, {"zones", json::array()}};
    point = {{"t_s", round3(nsToS(now - startNs_))}, {"latency_ms", json::array()},
        {"latency_max_ms", json::array()}, {"fps", json::array()}, {"rails_w", json::array()},
        {"zones_c", json::array()}};
    {
        std::lock_guard<std::mutex> lock(dataMutex_);
        status["run"] = run_.context;
        status["running"] = attached_;
        json tasks = json::array();
        for (size_t i = 0; i < tasks_.size(); ++i) {
            TaskState& t = *tasks_[i];
            const LiveRun::TaskInfo* info = i < run_.tasks.size() ? &run_.tasks[i] : nullptr;
            const std::string name = info ? info->name : "task " + std::to_string(i);
            names["tasks"].push_back(name);
            json task = {{"name", name}, {"frames", t.frames}, {"results", t.results},
                {"failed", t.failed}, {"deadline_misses", t.deadlineMisses},
                {"deadline_ms",
                    info && info->deadlineNs > 0 ? json(nsToMs(info->deadlineNs)) : json(nullptr)},
                {"dropped", attached_ && run_.dropped ? json(run_.dropped(i)) : json(nullptr)},
                {"lost", attached_ && run_.lost ? json(run_.lost(i)) : json(nullptr)}};
            if (t.haveLast) {
                const FrameRecord& r = t.last;
                json top = json::array();
                for (int k = 0; k < std::min(r.topK, 5); ++k) {
                    const int32_t label = r.labels[static_cast<size_t>(k)];
                    const bool named =
                        info && label >= 0 && static_cast<size_t>(label) < info->labels.size();
                    top.push_back({{"label",
                                       named ? info->labels[static_cast<size_t>(label)]
                                             : std::to_string(label)},
                        {"index", label}, {"score", round3(r.scores[static_cast<size_t>(k)])}});
                }
                task["latest"] = {{"frame", r.frameId}, {"top", top},
                    {"end_to_end_ms", msOrNull(r.times.endToEndNs)},
                    {"stages_ms",
                        {{"wait", msOrNull(r.times.waitNs)},
                            {"preprocess", msOrNull(r.times.preprocessNs)},
                            {"inference", msOrNull(r.times.inferenceNs)},
                            {"postprocess", msOrNull(r.times.postprocessNs)}}},
                    {"deadline_missed", r.times.deadlineMissed},
                    {"frame_energy_mJ", finiteOrNull(r.frameEnergyMj)}};
            } else {
                task["latest"] = nullptr;
            }
            std::vector<int64_t> sorted(t.rolling.begin(), t.rolling.end());
            std::sort(sorted.begin(), sorted.end());
            task["rolling"] = {{"results", sorted.size()},
                {"p50_ms",
                    sorted.empty() ? json(nullptr) : json(round3(nearestRankMs(sorted, 50)))},
                {"p90_ms",
                    sorted.empty() ? json(nullptr) : json(round3(nearestRankMs(sorted, 90)))},
                {"p99_ms",
                    sorted.empty() ? json(nullptr) : json(round3(nearestRankMs(sorted, 99)))},
                {"max_ms", sorted.empty() ? json(nullptr) : json(round3(nsToMs(sorted.back())))}};
            std::vector<int64_t>& second = t.thisSecond;
            std::sort(second.begin(), second.end());
            point["latency_ms"].push_back(
                second.empty() ? json(nullptr) : json(round3(nearestRankMs(second, 50))));
            point["latency_max_ms"].push_back(
                second.empty() ? json(nullptr) : json(round3(nsToMs(second.back()))));
            point["fps"].push_back(t.results - t.resultsAtPoint);
            task["fps"] = t.results - t.resultsAtPoint;
            t.resultsAtPoint = t.results;
            second.clear();
            tasks.push_back(std::move(task));
        }
        status["tasks"] = std::move(tasks);
    }
    status["percentiles"] =
        "nearest rank over the task's last " + std::to_string(kRollingResults) + " results";
    json power = nullptr;
    json zones = json::array();
    if (power_) {
        const PowerSampler& sampler = power_->sampler();
        PowerSample sample;
        if (sampler.haveRails() && sampler.latest(sample)) {
            json rails = json::array();
            for (size_t r = 0; r < sampler.rails().size() && r < sample.railW.size(); ++r) {
                const bool online = (sample.onlineMask & (1u << r)) != 0;
                rails.push_back({{"name", sampler.rails()[r].name},
                    {"w", online ? json(round3(sample.railW[r])) : json(nullptr)},
                    {"online", online}});
                names["rails"].push_back(sampler.rails()[r].name);
                point["rails_w"].push_back(online ? json(round3(sample.railW[r])) : json(nullptr));
            }
            const bool totalOnline = (sample.onlineMask & kTotalOnlineBit) != 0;
            power = {{"total_name", sampler.totalName()},
                {"total_w", totalOnline ? json(round3(sample.totalW)) : json(nullptr)},
                {"total_is_estimate", sampler.totalIsEstimate()}, {"rails", rails}};
        }
        BoardStateSample state;
        if (sampler.stateReader() && sampler.latestState(state)) {
            const auto& infos = sampler.stateReader()->zones();
            for (size_t z = 0; z < infos.size() && z < state.zones.size(); ++z) {
                if (!infos[z].shown)
                    continue;
                const bool online = state.zones[z].online;
                zones.push_back({{"zone", infos[z].type},
                    {"celsius", online ? json(round3(state.zones[z].celsius)) : json(nullptr)},
                    {"online", online}});
                names["zones"].push_back(infos[z].type);
                point["zones_c"].push_back(
                    online ? json(round3(state.zones[z].celsius)) : json(nullptr));
            }
        }
    }
    status["power"] = power;
    status["temperatures"] = zones;
    const LiveCounters c = counters();
    {
        std::lock_guard<std::mutex> lock(jpegMutex_);
        status["video"] = {{"width", jpegWidth_}, {"height", jpegHeight_},
            {"frames_from_view", c.canvases}, {"frames_encoded", c.encoded},
            {"frames_sent", c.sent}, {"frames_skipped_for_slow_clients", c.skipped},
            {"clients", c.streams}, {"max_clients", kMaxStreams}, {"clients_refused", c.refused},
            {"encoder_cpu_s", round3(c.encoderCpuS)}, {"encoder_watched_s", round3(c.encoderBusyS)},
            {"encoder_core_percent",
                c.encoderBusyS > 0 ? json(round3(100.0 * c.encoderCpuS / c.encoderBusyS))
                                   : json(nullptr)}};
    }
    status["http"] = {{"events_clients", c.events}, {"max_events_clients", kMaxEvents},
        {"events_clients_refused", c.eventsRefused}, {"unauthorized", c.unauthorized},
        {"requests_too_slow", c.slowRequests}, {"connections", c.connections},
        {"max_connections", maxConnections_},
        {"descriptor_limit", descriptorLimit_ > 0 ? json(descriptorLimit_) : json(nullptr)},
        {"connections_refused_busy", c.busy},
        {"accept_descriptor_shortages", c.descriptorShortages}};
    status["uptime_s"] = round3(nsToS(now - startNs_));
    point["names"] = names;
    {
        std::lock_guard<std::mutex> lock(dataMutex_);
        seriesNames_ = names;
    }
    status["point"] = point;
    return status;
}

json LiveServer::historyJson() const
{
    std::lock_guard<std::mutex> lock(dataMutex_);
    json points = json::array();
    for (const json& p : history_)
        points.push_back(p);
    return {{"seconds", kHistorySeconds}, {"names", seriesNames_}, {"points", points}};
}

LiveCounters LiveServer::counters() const
{
    LiveCounters c;
    c.canvases = canvases_.load();
    c.encoded = encoded_.load();
    c.sent = sent_.load();
    c.skipped = skipped_.load();
    c.refused = refused_.load();
    c.eventsRefused = eventsRefused_.load();
    c.descriptorShortages = descriptorShortages_.load();
    c.connections = connections_.load();
    c.unauthorized = unauthorized_.load();
    c.slowRequests = slowRequests_.load();
    c.busy = busy_.load();
    c.streams = streams_.load();
    c.events = events_.load();
    c.encoderCpuS = nsToS(encoderCpuNs_.load());
    c.encoderBusyS = nsToS(encoderBusyNs_.load());
    return c;
}

json LiveServer::framesJson(std::optional<uint64_t> since, size_t limit) const
{
    std::lock_guard<std::mutex> lock(dataMutex_);
    json frames = json::array();
    uint64_t oldest = 0;
    uint64_t newest = 0;
    bool any = false;
    size_t returned = 0;
    bool more = false;
    // Oldest first: from ringNext_ round the circle once it has wrapped.
    const size_t n = ring_.size();
    const size_t first = n < kFrameRing ? 0 : ringNext_;
    for (size_t k = 0; k < n; ++k) {
        const Compact& c = ring_[(first + k) % n];
        if (!any || c.frame < oldest)
            oldest = c.frame;
        newest = std::max(newest, c.frame);
        any = true;
        if (since && c.frame <= *since)
            continue;
        if (returned == limit) {
            more = true;
            continue;
        }
        const LiveRun::TaskInfo* info = c.task < run_.tasks.size() ? &run_.tasks[c.task] : nullptr;
        const bool named = info && c.top1 >= 0 && static_cast<size_t>(c.top1) < info->labels.size();
        json label = c.top1 < 0
            ? json(nullptr)
            : json(named ? info->labels[static_cast<size_t>(c.top1)] : std::to_string(c.top1));
        frames.push_back({{"frame", c.frame}, {"task", info ? json(info->name) : json(c.task)},
            {"ok", c.ok}, {"has_result", c.hasResult}, {"top1", label}, {"score", round3(c.score)},
            {"captured_ns", c.capturedNs}, {"done_ns", c.doneNs},
            {"end_to_end_ms", msOrNull(c.times.endToEndNs)}, {"wait_ms", msOrNull(c.times.waitNs)},
            {"preprocess_ms", msOrNull(c.times.preprocessNs)},
            {"inference_ms", msOrNull(c.times.inferenceNs)},
            {"postprocess_ms", msOrNull(c.times.postprocessNs)},
            {"deadline_missed", c.deadlineMissed}, {"frame_energy_mJ", finiteOrNull(c.energyMj)}});
        ++returned;
    }
    // Records after `since` that the ring no longer holds: the caller polled too seldom.
    const bool gap = since && any && *since < oldest && oldest - *since > 1;
    return {{"since", since ? json(*since) : json(nullptr)},
        {"oldest_frame", any ? json(oldest) : json(nullptr)},
        {"newest_frame", any ? json(newest) : json(nullptr)}, {"ring", kFrameRing},
        {"missed_older", gap}, {"more", more}, {"frames", frames}};
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

void LiveServer::setUpRoutes()
{
    httplib::Server& server = *server_;
    // Read-only and, off loopback, for token holders only: checked before any route.
    server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
        return admit(req, res) ? httplib::Server::HandlerResponse::Unhandled
                               : httplib::Server::HandlerResponse::Handled;
    });
    server.Get("/", [this](const httplib::Request&, httplib::Response& res) {
        res.set_header("Cache-Control", "no-store");
        res.set_content(livePageHtml(chartJs_), "text/html; charset=utf-8");
    });
    server.Get("/api/status",
        [this](const httplib::Request&, httplib::Response& res) { serveStatus(res); });
    server.Get("/api/history", [this](const httplib::Request&, httplib::Response& res) {
        res.set_header("Cache-Control", "no-store");
        res.set_content(jsonText(historyJson()), "application/json");
    });
    server.Get("/api/frames",
        [this](const httplib::Request& req, httplib::Response& res) { serveFrames(req, res); });
    server.Get("/snapshot.jpg",
        [this](const httplib::Request&, httplib::Response& res) { serveSnapshot(res); });
    server.Get("/video.mjpg",
        [this](const httplib::Request&, httplib::Response& res) { serveVideo(res); });
    server.Get("/api/events",
        [this](const httplib::Request&, httplib::Response& res) { serveEvents(res); });
}

bool LiveServer::admit(const httplib::Request& req, httplib::Response& res)
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

void LiveServer::serveStatus(httplib::Response& res)
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

void LiveServer::serveFrames(const httplib::Request& req, httplib::Response& res)
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

void LiveServer::serveSnapshot(httplib::Response& res)
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

void LiveServer::serveVideo(httplib::Response& res)
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

void LiveServer::serveEvents(httplib::Response& res)
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
