#include "notify_socket.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <stdexcept>

namespace fulfillsync::testing {

NotifySocket::NotifySocket(const std::filesystem::path& directory, bool abstract) {
  fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error("socket failed");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string raw;
  if (abstract) {
    address_ = "@fulfillsync-test-" + std::to_string(std::random_device{}());
    raw = address_;
    raw.front() = '\0';
  } else {
    address_ = (directory / "notify.sock").string();
    raw = address_;
  }
  std::memcpy(addr.sun_path, raw.data(), raw.size());
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + raw.size());
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), length) != 0) {
    throw std::runtime_error("bind failed: " + std::string(std::strerror(errno)));
  }
}

NotifySocket::~NotifySocket() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<std::string> NotifySocket::receive(std::chrono::milliseconds timeout) {
  pollfd ready{fd_, POLLIN, 0};
  if (::poll(&ready, 1, static_cast<int>(timeout.count())) != 1) return std::nullopt;
  char buffer[4096];
  const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
  if (n < 0) return std::nullopt;
  std::string message(buffer, static_cast<std::size_t>(n));
  seen.push_back(message);
  return message;
}

std::optional<std::string> NotifySocket::wait_for(const std::string& needle, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    auto message = receive(left);
    if (!message) return std::nullopt;
    if (message->find(needle) != std::string::npos) return message;
  }
}

}  // namespace fulfillsync::testing
