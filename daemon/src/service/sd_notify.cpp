#include "fulfillsync/daemon/service/sd_notify.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace fulfillsync::daemon {
namespace {

std::optional<std::chrono::microseconds> watchdog_from_environment() {
  const char* usec = std::getenv("WATCHDOG_USEC");
  if (usec == nullptr) return std::nullopt;
  // WATCHDOG_PID, when set, names the process the watchdog is meant for (not a child of ours).
  if (const char* pid = std::getenv("WATCHDOG_PID")) {
    long value = 0;
    const std::string_view text(pid);
    if (std::from_chars(text.data(), text.data() + text.size(), value).ec != std::errc{} || value != ::getpid()) {
      return std::nullopt;
    }
  }
  long long value = 0;
  const std::string_view text(usec);
  if (std::from_chars(text.data(), text.data() + text.size(), value).ec != std::errc{} || value <= 0) {
    return std::nullopt;
  }
  return std::chrono::microseconds(value);
}

}  // namespace

Notifier Notifier::from_environment() {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  if (socket == nullptr || *socket == '\0') return Notifier();
  return Notifier(socket, watchdog_from_environment());
}

Notifier::Notifier(std::string socket_address, std::optional<std::chrono::microseconds> watchdog)
    : address_(std::move(socket_address)), watchdog_(watchdog) {
  if (address_.empty() || address_.size() >= sizeof(sockaddr_un::sun_path)) return;
  if (address_.front() != '/' && address_.front() != '@') return;
  if (address_.front() == '@') address_.front() = '\0';
  fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
}

Notifier::~Notifier() {
  if (fd_ >= 0) ::close(fd_);
}

Notifier::Notifier(Notifier&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), address_(std::move(other.address_)), watchdog_(other.watchdog_) {}

Notifier& Notifier::operator=(Notifier&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    address_ = std::move(other.address_);
    watchdog_ = other.watchdog_;
  }
  return *this;
}

bool Notifier::notify(std::string_view state) const {
  if (fd_ < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, address_.data(), address_.size());
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + address_.size());
  const ssize_t sent = ::sendto(fd_, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(&addr),
                                length);
  return sent == static_cast<ssize_t>(state.size());
}

std::optional<std::chrono::microseconds> Notifier::watchdog_interval() const {
  if (!enabled() || !watchdog_) return std::nullopt;
  return *watchdog_ / 2;
}

}  // namespace fulfillsync::daemon
