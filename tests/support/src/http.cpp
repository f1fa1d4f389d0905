#include "fulfillsync/testing/http.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace fulfillsync::testing {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::string decode_chunked(std::string_view body) {
  std::string out;
  std::size_t pos = 0;
  while (pos < body.size()) {
    const std::size_t line_end = body.find("\r\n", pos);
    if (line_end == std::string_view::npos) break;
    const std::size_t size = std::stoul(std::string(body.substr(pos, line_end - pos)), nullptr, 16);
    if (size == 0) break;
    out.append(body.substr(line_end + 2, size));
    pos = line_end + 2 + size + 2;
  }
  return out;
}

// The request's bytes. `close_after`: ask the server to close the connection once it has answered.
std::string request_text(std::string_view host, std::uint16_t port, std::string_view method, std::string_view target,
                         const std::map<std::string, std::string>& headers, std::string_view body, bool close_after) {
  std::string request = std::string(method) + " " + std::string(target) + " HTTP/1.1\r\nHost: " + std::string(host) +
                        ":" + std::to_string(port) + "\r\n";
  if (close_after) request += "Connection: close\r\n";
  for (const auto& [name, value] : headers) request += name + ": " + value + "\r\n";
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
    request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  }
  request += "\r\n";
  request += body;
  return request;
}

// The status line and headers of an answer whose head ends (before its blank line) at `head_end`.
HttpResponse read_head(const std::string& raw, std::size_t head_end) {
  if (raw.rfind("HTTP/1.", 0) != 0 || head_end == std::string::npos) {
    throw std::runtime_error("not an HTTP response: " + raw.substr(0, 200));
  }
  HttpResponse response;
  response.status = std::stoi(raw.substr(9, 3));
  std::size_t pos = raw.find("\r\n") + 2;
  while (pos < head_end) {
    const std::size_t line_end = raw.find("\r\n", pos);
    const std::string line = raw.substr(pos, line_end - pos);
    const std::size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::size_t value_start = colon + 1;
      while (value_start < line.size() && line[value_start] == ' ') ++value_start;
      response.headers[lower(line.substr(0, colon))] = line.substr(value_start);
    }
    pos = line_end + 2;
  }
  return response;
}

}  // namespace

HttpResponse http_request(std::string_view host, std::uint16_t port, std::string_view method, std::string_view target,
                          const std::map<std::string, std::string>& headers, std::string_view body) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string host_text(host);
  if (getaddrinfo(host_text.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || found == nullptr) {
    throw std::runtime_error("cannot resolve " + host_text);
  }
  const int fd = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const bool connected = fd >= 0 && connect(fd, found->ai_addr, found->ai_addrlen) == 0;
  freeaddrinfo(found);
  if (!connected) {
    if (fd >= 0) close(fd);
    throw std::runtime_error("cannot connect to " + host_text + ":" + std::to_string(port));
  }
  timeval timeout{30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);

  // A server may answer and close before taking the whole request: its answer is still read.
  send_all(fd, request_text(host, port, method, target, headers, body, true));
  std::string raw;
  char buffer[65536];
  for (ssize_t n; (n = recv(fd, buffer, sizeof buffer, 0)) > 0;) raw.append(buffer, static_cast<std::size_t>(n));
  close(fd);

  const std::size_t head_end = raw.find("\r\n\r\n");
  HttpResponse response = read_head(raw, head_end);
  response.body = raw.substr(head_end + 4);
  if (lower(response.headers["transfer-encoding"]) == "chunked") response.body = decode_chunked(response.body);
  return response;
}

HttpConnection::HttpConnection(std::uint16_t port) : fd_(connect_loopback(port)), port_(port) {
  if (fd_ < 0) {
    throw std::runtime_error("cannot connect to 127.0.0.1:" + std::to_string(port) + ": " + std::strerror(errno));
  }
  // Each request leaves in one write; it need not wait for the previous answer's acknowledgement.
  const int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

HttpConnection::~HttpConnection() { close(fd_); }

HttpResponse HttpConnection::request(std::string_view method, std::string_view target,
                                     const std::map<std::string, std::string>& headers, std::string_view body) {
  if (!send_all(fd_, request_text("127.0.0.1", port_, method, target, headers, body, false))) {
    throw std::runtime_error("send failed: " + std::string(std::strerror(errno)));
  }
  std::size_t head_end = std::string::npos;
  std::size_t length = 0;
  HttpResponse response;
  char buffer[65536];
  for (;;) {
    if (head_end == std::string::npos && (head_end = received_.find("\r\n\r\n")) != std::string::npos) {
      response = read_head(received_, head_end);
      const auto announced = response.headers.find("content-length");
      length = announced == response.headers.end() ? 0 : std::stoul(announced->second);
    }
    if (head_end != std::string::npos && received_.size() >= head_end + 4 + length) break;
    const ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
    if (n <= 0) throw std::runtime_error("the server closed the connection answering " + std::string(target));
    received_.append(buffer, static_cast<std::size_t>(n));
  }
  response.body = received_.substr(head_end + 4, length);
  received_.erase(0, head_end + 4 + length);
  return response;
}

int connect_loopback(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    const int error = errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

bool send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::uint16_t unused_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("no socket for a loopback port");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
                     ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  ::close(fd);
  if (!bound) throw std::runtime_error("no free loopback port");
  return ntohs(address.sin_port);
}

}  // namespace fulfillsync::testing
