#include "fulfillsync/testing/http.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
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

  std::string request = std::string(method) + " " + std::string(target) + " HTTP/1.1\r\nHost: " + host_text + ":" +
                        std::to_string(port) + "\r\nConnection: close\r\n";
  for (const auto& [name, value] : headers) request += name + ": " + value + "\r\n";
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
    request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  }
  request += "\r\n";
  request += body;
  for (std::size_t sent = 0; sent < request.size();) {
    const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  std::string raw;
  char buffer[65536];
  for (ssize_t n; (n = recv(fd, buffer, sizeof buffer, 0)) > 0;) raw.append(buffer, static_cast<std::size_t>(n));
  close(fd);

  const std::size_t head_end = raw.find("\r\n\r\n");
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
  response.body = raw.substr(head_end + 4);
  if (lower(response.headers["transfer-encoding"]) == "chunked") response.body = decode_chunked(response.body);
  return response;
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
