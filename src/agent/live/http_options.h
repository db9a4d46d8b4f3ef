// The `http` section: where the live view listens and who may read it, and its checks
// (live/live_server.h serves it). A leaf: the configuration reader includes it alone, and its
// checks (http_options.cpp) are built into the config library.
#pragma once

#include <string>

#include "jetagent/base/status.h"

namespace jetagent {

// The `http` section: where the live view listens and who may read it.
struct HttpConfig {
    // "" = no server; "PORT" (on 127.0.0.1) or "ADDR:PORT" ("0.0.0.0:8080", "[::1]:8080"); port
    // 0 takes any free port (the start-up line names it). `run --serve` overrides it.
    std::string listen;
    // Required for any address but loopback: clients send "Authorization: Bearer TOKEN" or
    // "?token=TOKEN". "" = none (loopback only).
    std::string token;
    // A headless unit's server: /metrics and the JSON API only; the page, the snapshot and the
    // video answer 404 (nothing is ever encoded). Default false.
    bool metricsOnly = false;
};

// The address and port of `listen` ("8080", "127.0.0.1:8080", "[::1]:0"). InvalidInput naming
// what is wrong with it.
struct ListenAddress {
    std::string host = "127.0.0.1";
    int port = 0;
};
Expected<ListenAddress> parseListenAddress(const std::string& listen);
// 127.0.0.0/8, ::1 and "localhost".
bool isLoopbackHost(const std::string& host);
// "" when `config` may be served; otherwise what is wrong, and in `key` the key to blame
// ("http.listen" or "http.token").
std::string httpConfigProblem(const HttpConfig& config, std::string& key);

} // namespace jetagent
