#include "fulfillsync/daemon/service/sd_notify.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include <gtest/gtest.h>

#include "fulfillsync/testing/process.hpp"

namespace fulfillsync::daemon {
namespace {

using namespace std::chrono_literals;

// A bound datagram socket standing in for systemd's end.
struct Receiver {
  explicit Receiver(const std::string& address) {
    fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::string raw = address;
    if (raw.front() == '@') raw.front() = '\0';
    std::memcpy(addr.sun_path, raw.data(), raw.size());
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr),
                     static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + raw.size())),
              0);
  }
  ~Receiver() { ::close(fd); }
  std::string receive() {
    pollfd ready{fd, POLLIN, 0};
    if (::poll(&ready, 1, 5000) != 1) return "<nothing>";
    char buffer[512];
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    return std::string(buffer, static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
  }
  int fd;
};

TEST(NotifierTest, SendsToAPathSocket) {
  testing::TempDir dir;
  const std::string address = (dir / "notify").string();
  Receiver systemd(address);
  const Notifier notifier(address);
  ASSERT_TRUE(notifier.enabled());
  EXPECT_TRUE(notifier.notify("READY=1\nSTATUS=Running"));
  EXPECT_EQ(systemd.receive(), "READY=1\nSTATUS=Running");
}

TEST(NotifierTest, SendsToAnAbstractSocket) {
  const std::string address = "@fulfillsync-notify-test-" + std::to_string(::getpid());
  Receiver systemd(address);
  const Notifier notifier(address);
  EXPECT_TRUE(notifier.notify("STOPPING=1"));
  EXPECT_EQ(systemd.receive(), "STOPPING=1");
}

TEST(NotifierTest, WithoutASocketEverythingIsANoOp) {
  unsetenv("NOTIFY_SOCKET");
  const Notifier notifier = Notifier::from_environment();
  EXPECT_FALSE(notifier.enabled());
  EXPECT_FALSE(notifier.notify("READY=1"));
  EXPECT_EQ(notifier.watchdog_interval(), std::nullopt);
  EXPECT_FALSE(Notifier("relative/path").enabled());
}

TEST(NotifierTest, WatchdogIntervalIsHalfTheTimeoutForThisProcessOnly) {
  setenv("NOTIFY_SOCKET", "@fulfillsync-watchdog-test", 1);
  setenv("WATCHDOG_USEC", "30000000", 1);
  unsetenv("WATCHDOG_PID");
  EXPECT_EQ(Notifier::from_environment().watchdog_interval(), 15s);
  setenv("WATCHDOG_PID", std::to_string(::getpid()).c_str(), 1);
  EXPECT_EQ(Notifier::from_environment().watchdog_interval(), 15s);
  setenv("WATCHDOG_PID", "1", 1);
  EXPECT_EQ(Notifier::from_environment().watchdog_interval(), std::nullopt);
  setenv("WATCHDOG_USEC", "nonsense", 1);
  unsetenv("WATCHDOG_PID");
  EXPECT_EQ(Notifier::from_environment().watchdog_interval(), std::nullopt);
  unsetenv("NOTIFY_SOCKET");
  unsetenv("WATCHDOG_USEC");
}

}  // namespace
}  // namespace fulfillsync::daemon
