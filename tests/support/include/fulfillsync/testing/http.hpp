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

// Several requests in a row on one keep-alive HTTP/1.1 connection to a loopback port (a benchmark's
// client). Answers are read by their Content-Length. Throws std::runtime_error when the connection
// cannot be made, fails, or is closed by the server.
class HttpConnection {
 public:
  explicit HttpConnection(std::uint16_t port);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  HttpResponse request(std::string_view method, std::string_view target,
                       const std::map<std::string, std::string>& headers = {}, std::string_view body = {});

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::string received_;  // what has been read past the last answer
};

// A TCP connection to 127.0.0.1:`port`: its descriptor (close-on-exec) for the caller to close, or
// -1 with errno set.
int connect_loopback(std::uint16_t port);

// Writes all of `bytes` to `fd` without raising SIGPIPE; false, with errno set, when the connection
// fails first.
bool send_all(int fd, std::string_view bytes);

// A loopback TCP port nothing listens on at the moment of asking (bound, read and let go): for a
// server that cannot report a port it picked itself, or an address that refuses connections.
// Throws std::runtime_error when no port can be had.
std::uint16_t unused_loopback_port();

}  // namespace fulfillsync::testing
