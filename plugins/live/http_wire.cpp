// The live server's connection plumbing (http_wire.h).
#include "http_wire.h"
#include "http_live_server.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "jetagent/base/clock.h"

namespace jetagent {

// Constant-time comparison: the token is a secret, and how long a wrong guess takes to refuse
// must not tell how much of it was right.
bool sameSecret(const std::string& a, const std::string& b)
{
    unsigned char diff = a.size() == b.size() ? 0 : 1;
    for (size_t i = 0; i < a.size(); ++i)
        diff |= static_cast<unsigned char>(a[i] ^ b[i % std::max<size_t>(b.size(), 1)]);
    return diff == 0 && !b.empty();
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
            std::to_string(HttpLiveServer::kRequestTimeoutMs / 1000) + " s\n");
    return answer;
}

const std::string& headTooLargeAnswer()
{
    static const std::string answer = cannedAnswer(431, "Request Header Fields Too Large",
        "the request's head is longer than " + std::to_string(HttpLiveServer::kMaxHeadBytes) +
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

} // namespace jetagent
