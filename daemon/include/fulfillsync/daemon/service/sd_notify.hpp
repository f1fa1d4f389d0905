#pragma once
// The systemd notification protocol, spoken directly (no libsystemd): datagrams of NAME=value lines
// sent to the socket named by $NOTIFY_SOCKET, a path or, with a leading '@', an abstract address.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace fulfillsync::daemon {

class Notifier {
 public:
  // Reads $NOTIFY_SOCKET, $WATCHDOG_USEC and $WATCHDOG_PID. Without a socket every call is a no-op.
  static Notifier from_environment();
  Notifier() = default;
  explicit Notifier(std::string socket_address, std::optional<std::chrono::microseconds> watchdog = std::nullopt);
  ~Notifier();
  Notifier(Notifier&& other) noexcept;
  Notifier& operator=(Notifier&& other) noexcept;
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

  bool enabled() const { return fd_ >= 0; }

  // Sends one message, e.g. "READY=1\nSTATUS=...". Failures are returned, not thrown: systemd going
  // away must not take the daemon down.
  bool notify(std::string_view state) const;

  // How often to send WATCHDOG=1: half the watchdog timeout, when systemd asked for pings.
  std::optional<std::chrono::microseconds> watchdog_interval() const;

 private:
  int fd_ = -1;
  std::string address_;  // sun_path bytes; abstract addresses start with '\0'
  std::optional<std::chrono::microseconds> watchdog_;
};

}  // namespace fulfillsync::daemon
