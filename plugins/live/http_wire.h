// The live server's connection plumbing (internal to src/agent/live): reading a request's head as
// it trickles in, the streams cpp-httplib parses and answers through, canned refusals, the
// listening socket and the bearer token check. It knows nothing of routes or of the run.
#pragma once

#include <cstdint>
#include <string>

#include <poll.h>

#include <httplib.h>

#include "jetagent/base/clock.h"

namespace jetagent {

// What respond() keeps of an answer: more than any answer but a stream's.
constexpr size_t kMaxRespondBytes = 4 * 1024 * 1024;
// A video or events client that cannot take a write for this long (it stopped reading) is
// dropped; until then it only skips frames.
constexpr int kWriteTimeoutMs = 5000;
// Connections the kernel keeps for the accept thread to take (listen(2)'s backlog).
constexpr int kListenBacklog = 64;

// Constant-time comparison: the token is a secret, and how long a wrong guess takes to refuse
// must not tell how much of it was right.
bool sameSecret(const std::string& a, const std::string& b);

int64_t msUntil(int64_t deadlineNs);

// Waits up to `ms` for `events` on `fd`; false on a timeout, and for POLLOUT when the peer is
// gone.
bool waitFor(int fd, short events, int64_t ms);

// A short answer written by the reading thread to a connection it is about to close: never
// waits (what the socket does not take at once is lost).
std::string cannedAnswer(int status, const char* reason, const std::string& text);

void sendAndClose(int fd, const std::string& answer);

const std::string& requestTimeoutAnswer();

const std::string& headTooLargeAnswer();

const std::string& busyAnswer();

bool equalsIgnoringCase(const std::string& a, size_t from, size_t length, const char* b);

// `bytes` without the head's Range lines: every answer is generated, whole (a server may ignore
// Range, RFC 9110), so none is cut into ranges; cpp-httplib would otherwise serve any number of
// ranges of it, each a copy (2,000 ranges of the page were a 421 MB answer).
std::string withoutRangeLines(const std::string& bytes, size_t headEnd);

// The descriptors open now (/proc/self/fd; without it, those below `limit` that are valid).
size_t openDescriptors(uint64_t limit);

// A listening socket on host:port (0: any free port), its port in `bound`; -1 when none could
// be made or bound. SO_REUSEADDR alone: with SO_REUSEPORT, a second jetagent on the same port
// would bind too and share the clients instead of being told the port is in use.
int listenOn(const std::string& host, int port, int& bound);

// "Bearer TOKEN", the scheme in any case (RFC 7235), then one or more spaces.
bool bearerMatches(const std::string& header, const std::string& token);

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

} // namespace jetagent
