// Fuzz target: HTTP requests to the live view (`run --serve`), each answered by the real server's
// connection path (head framing and limits, cpp-httplib's parser, the token check, the routes and
// their parameters) through LiveServer::respond, by a server without a token and one with.
// Properties: every answer is an HTTP answer, none is larger than the largest document the
// server makes (no Range amplification: no 206, no multipart ranges), and the token server
// answers 200 only to a request that carries its token.
#include <cstdint>
#include <memory>
#include <string>

#include "fuzz_support.h"
#include "live/live_page.h"
#include "live/live_server.h"

namespace {

constexpr size_t kMaxRequestBytes = 64 * 1024;
constexpr const char* kToken = "fuzz-token";
// Chart.js stands in as a few kilobytes: the page's size is what the bound is taken from.
const std::string kChartJs(4096, 'c');

// Both servers are started once (they bind a loopback port) and stopped at once: respond() then
// answers without waiting for frames or statuses, so each input takes microseconds.
std::unique_ptr<jetagent::LiveServer> startStopped(const std::string& token)
{
    if (!jetagent::fuzz::pluginDirectorySet()) // the server is the live view's plugin
        jetagent::fuzz::fail("JETAGENT_PLUGIN_DIR could not be set");
    jetagent::HttpConfig config;
    config.listen = "127.0.0.1:0";
    config.token = token;
    auto server = jetagent::LiveServer::start(config, kChartJs, nullptr, 1);
    if (!server)
        jetagent::fuzz::fail("the live view does not start: " + server.status().message());
    server.value()->stop();
    return std::move(server.value());
}

int statusOf(const std::string& answer)
{
    const std::string prefix = "HTTP/1.1 ";
    if (answer.rfind(prefix, 0) != 0 || answer.size() < prefix.size() + 3)
        return -1;
    int status = 0;
    for (size_t i = prefix.size(); i < prefix.size() + 3; ++i) {
        if (answer[i] < '0' || answer[i] > '9')
            return -1;
        status = status * 10 + (answer[i] - '0');
    }
    return status;
}

// The request with its %XX escapes decoded: where a query's token may be written escaped.
std::string percentDecoded(const std::string& text)
{
    auto hex = [](char c) {
        return c >= '0' && c <= '9' ? c - '0'
            : c >= 'a' && c <= 'f'  ? c - 'a' + 10
            : c >= 'A' && c <= 'F'  ? c - 'A' + 10
                                    : -1;
    };
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 &&
            hex(text[i + 2]) >= 0) {
            out += static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2]));
            i += 2;
        } else {
            out += text[i];
        }
    }
    return out;
}

void check(const std::string& request, const std::string& answer, bool tokenServer)
{
    using jetagent::fuzz::fail;
    // The largest document: the page, beside a status or frames document of an idle server.
    static const size_t kMaxAnswer = jetagent::livePageHtml(kChartJs).size() + 64 * 1024;
    const int status = statusOf(answer);
    if (status < 100)
        fail("not an HTTP answer: " + answer.substr(0, 80));
    if (answer.size() > kMaxAnswer)
        fail("an answer of " + std::to_string(answer.size()) + " bytes to a request of " +
            std::to_string(request.size()));
    if (status == 206 || answer.find("multipart/byteranges") != std::string::npos)
        fail("a range was served: every answer must be whole");
    if (tokenServer && status == 200 && request.find(kToken) == std::string::npos &&
        percentDecoded(request).find(kToken) == std::string::npos)
        fail("200 without the token: " + request.substr(0, 200));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size > kMaxRequestBytes)
        return -1;
    static const auto open = startStopped("");
    static const auto guarded = startStopped(kToken);
    const std::string request(reinterpret_cast<const char*>(data), size);
    check(request, open->respond(request), false);
    check(request, guarded->respond(request), true);
    return 0;
}
