// The metrics endpoint under clients that misbehave: connections that send half a request header and
// then nothing must neither delay scrapes nor the sync, and must be closed by the header time limit.
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <regex>

#include "sync_fixture.hpp"

namespace fulfillsync::testing {
namespace {

using ::testing::HasSubstr;

constexpr int kHeld = 1000;

// The default soft limit (1024) is below kHeld connections and this process' other files.
void raise_descriptor_limit() {
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &limit), 0);
  }
  if (limit.rlim_cur < 2 * kHeld + 100) GTEST_SKIP() << "the descriptor limit is " << limit.rlim_cur;
}

// A connection to the endpoint that sends the beginning of a request header and stops.
int hold_half_sent(std::uint16_t port) {
  const int fd = connect_loopback(port);
  if (fd < 0) return -1;
  if (!send_all(fd, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Ag")) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Whether the peer has closed `fd` (end of stream or reset), without waiting.
bool closed_by_peer(int fd) {
  pollfd entry{fd, POLLIN, 0};
  if (::poll(&entry, 1, 0) <= 0) return false;
  char byte = 0;
  return ::recv(fd, &byte, 1, MSG_DONTWAIT) <= 0;
}

class EndpointTest : public SyncFixture {};

TEST_F(EndpointTest, HalfSentConnectionsDoNotDelayScrapesAndCloseAtTheHeaderTimeLimit) {
  ASSERT_NO_FATAL_FAILURE(raise_descriptor_limit());
  ASSERT_NO_FATAL_FAILURE(start_sandbox_with_revocable_token_and_metrics());
  write_file(config_path, read_file(config_path) + "  header_read_timeout: 8s\n");
  std::uint16_t port = 0;
  const auto running = start_daemon(port);
  ASSERT_NE(port, 0) << running->stderr_text();

  std::vector<int> held;
  const auto opened = std::chrono::steady_clock::now();
  for (int i = 0; i < kHeld; ++i) {
    const int fd = hold_half_sent(port);
    ASSERT_GE(fd, 0) << "connection " << i << ": " << std::strerror(errno);
    held.push_back(fd);
  }
  insert_orders("HELD", 20);

  // Every scrape is answered while all of them are held (the gauge counts them): none waits for the
  // header time limit to free the endpoint.
  for (int scrape = 0; scrape < 10; ++scrape) {
    const HttpResponse response = http_get("127.0.0.1", port, "/metrics");
    EXPECT_EQ(std::count_if(held.begin(), held.end(), closed_by_peer), 0)
        << "scrape " << scrape << " was answered only once the held connections were closed";
    EXPECT_EQ(response.status, 200);
    EXPECT_THAT(response.body, HasSubstr("fulfillsync_build_info"));
    if (scrape == 0) {
      const std::regex open_gauge("\nfulfillsync_http_connections ([0-9.e+]+)\n");
      std::smatch match;
      ASSERT_TRUE(std::regex_search(response.body, match, open_gauge));
      EXPECT_GE(std::stod(match[1]), kHeld);
    }
    std::this_thread::sleep_for(100ms);
  }
  // The sync went on meanwhile.
  EXPECT_TRUE(wait_for_result("HELD-0020", "created", 30s)) << running->stderr_text();

  // The header time limit (8 s) closes every held connection; none was answered before it.
  std::size_t closed = 0;
  for (const auto deadline = opened + 20s; closed < held.size() && std::chrono::steady_clock::now() < deadline;
       std::this_thread::sleep_for(100ms)) {
    closed = static_cast<std::size_t>(std::count_if(held.begin(), held.end(), closed_by_peer));
  }
  EXPECT_EQ(closed, held.size());
  EXPECT_GE(std::chrono::steady_clock::now() - opened, 8s);
  for (const int fd : held) ::close(fd);
  EXPECT_THAT(http_get("127.0.0.1", port, "/metrics").body,
              HasSubstr(fmt::format("fulfillsync_http_connections_dropped_total{{reason=\"header_timeout\"}} {}",
                                    kHeld)));

  running->send_signal(SIGTERM);
  EXPECT_EQ(running->wait_for_exit(30s), 0) << running->stderr_text();
}

}  // namespace
}  // namespace fulfillsync::testing
