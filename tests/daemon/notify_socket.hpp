#pragma once
// The receiving end of $NOTIFY_SOCKET, as systemd holds it: a datagram socket that collects messages.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fulfillsync::testing {

class NotifySocket {
 public:
  // Binds a path socket, or an abstract one ('@' address) when `abstract`.
  NotifySocket(const std::filesystem::path& directory, bool abstract);
  ~NotifySocket();
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;

  // The value for $NOTIFY_SOCKET.
  const std::string& address() const { return address_; }

  // The next message, or nothing when none arrives within `timeout`.
  std::optional<std::string> receive(std::chrono::milliseconds timeout);

  // Receives messages until one contains `needle`; returns it (every message seen goes to `seen`).
  std::optional<std::string> wait_for(const std::string& needle, std::chrono::milliseconds timeout);

  std::vector<std::string> seen;

 private:
  int fd_ = -1;
  std::string address_;
};

}  // namespace fulfillsync::testing
