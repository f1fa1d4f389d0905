#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace fulfillsync::testing {

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

// One blocking HTTP/1.1 request over a fresh loopback connection (Connection: close). Throws
// std::runtime_error when the connection fails or the response is not HTTP.
HttpResponse http_request(std::string_view host, std::uint16_t port, std::string_view method, std::string_view target,
                          const std::map<std::string, std::string>& headers = {}, std::string_view body = {});

inline HttpResponse http_get(std::string_view host, std::uint16_t port, std::string_view target) {
  return http_request(host, port, "GET", target);
}

// A loopback TCP port nothing listens on at the moment of asking (bound, read and let go): for a
// server that cannot report a port it picked itself, or an address that refuses connections.
// Throws std::runtime_error when no port can be had.
std::uint16_t unused_loopback_port();

}  // namespace fulfillsync::testing
