// The `http` section's checks.
#include "live/http_options.h"

#include <algorithm>
#include <cctype>

namespace jetagent {

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

} // namespace jetagent
