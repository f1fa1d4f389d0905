// The metrics endpoint under clients that hold connections: `fulfillsyncd run` against the sandbox
// with 2,000 orders synced (so that /metrics carries every family), scraped one connection at a time
// as Prometheus does (Accept-Encoding: gzip), first alone, then with --held connections that sent
// half a request header and stay silent (metrics.header_read_timeout is 5 minutes here, so that they
// are held for the whole measurement). Prints the scrape latency (p50, p99, max) and the daemon's
// resident memory for both.
//
//   endpoint_bench [--held N] [--scrapes N] [--quick]
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "bench_support.hpp"
#include "fulfillsync/testing/http.hpp"

namespace {

using namespace fulfillsync::bench;
using namespace std::chrono_literals;
namespace testing = fulfillsync::testing;

struct Options {
  long held = 1000;
  long scrapes = 500;
  std::string only;
  fs::path bin_dir;
};

// One scrape on a fresh connection; returns the seconds to the whole answer and the size of its body.
std::pair<double, std::size_t> scrape(std::uint16_t port) {
  const auto start = Clock::now();
  const testing::HttpResponse answer =
      testing::http_request("127.0.0.1", port, "GET", "/metrics", {{"Accept-Encoding", "gzip"}});
  const double seconds = seconds_since(start);
  if (answer.status != 200) throw std::runtime_error(fmt::format("scrape: {} {}", answer.status, answer.body));
  return {seconds, answer.body.size()};
}

// A connection that sent half a request header and stays silent.
int hold_half_sent(std::uint16_t port) {
  const int fd = testing::connect_loopback(port);
  if (fd < 0 || !testing::send_all(fd, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Ag")) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("holding a connection: " + why);
  }
  return fd;
}

struct Latency {
  double p50 = 0, p99 = 0, max = 0;
  std::size_t bytes = 0;
};

Latency scrapes(std::uint16_t port, long count) {
  std::vector<double> seconds;
  std::size_t bytes = 0;
  for (long i = 0; i < count; ++i) {
    const auto [taken, size] = scrape(port);
    seconds.push_back(taken);
    bytes = size;
    std::this_thread::sleep_for(2ms);
  }
  std::sort(seconds.begin(), seconds.end());
  const auto at = [&](double q) { return seconds[static_cast<std::size_t>(q * static_cast<double>(seconds.size() - 1))]; };
  return {at(0.5), at(0.99), seconds.back(), bytes};
}

std::string milliseconds(const Latency& latency) {
  return fmt::format("p50 {:.2f} ms, p99 {:.2f} ms, max {:.2f} ms ({} bytes gzipped)", latency.p50 * 1e3,
                     latency.p99 * 1e3, latency.max * 1e3, latency.bytes);
}

void run_held(const Options& options, Report& report) {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur < static_cast<rlim_t>(options.held + 100)) {
    throw std::runtime_error(fmt::format("the descriptor limit ({}) is below --held", limit.rlim_cur));
  }
  WorldOptions world_options;
  const std::uint16_t port = testing::unused_loopback_port();
  world_options.metrics = fmt::format("  listen: 127.0.0.1:{}\n  header_read_timeout: 5m\n", port);
  World world(options.bin_dir, world_options);
  world.start_sandbox();
  seed_orders(world.merchant(), "EP", 2000);
  const auto daemon = world.start_daemon("run");
  for (const auto deadline = Clock::now() + 60s;; std::this_thread::sleep_for(200ms)) {
    if (read_progress(world.merchant()).created >= 2000) break;
    if (Clock::now() > deadline) throw world.failure("the 2,000 orders were not created within 60 s");
  }
  std::this_thread::sleep_for(2s);  // a pull or two, so that every family has its series

  scrapes(port, 20);  // warm-up
  const Latency alone = scrapes(port, options.scrapes);
  const double rss_alone = static_cast<double>(status_kib(daemon->pid(), "VmRSS")) / kKiBPerMiB;
  std::printf("alone: %s, RSS %.1f MiB\n", milliseconds(alone).c_str(), rss_alone);

  std::vector<int> held;
  for (long i = 0; i < options.held; ++i) held.push_back(hold_half_sent(port));
  std::this_thread::sleep_for(1s);
  const double rss_held = static_cast<double>(status_kib(daemon->pid(), "VmRSS")) / kKiBPerMiB;
  const Latency with_held = scrapes(port, options.scrapes);
  const double rss_after = static_cast<double>(status_kib(daemon->pid(), "VmRSS")) / kKiBPerMiB;
  std::printf("%ld held: %s, RSS %.1f MiB (%.1f MiB after the scrapes)\n", options.held,
              milliseconds(with_held).c_str(), rss_held, rss_after);
  for (const int fd : held) ::close(fd);

  report.add("endpoint: scrape latency, no connection held", milliseconds(alone), "-", std::nullopt);
  report.add(fmt::format("endpoint: scrape latency, {} connections held half-sent", options.held),
             milliseconds(with_held), "answered at once", with_held.p99 < 0.1);
  report.add(fmt::format("endpoint: daemon RSS, {} connections held", options.held),
             fmt::format("{:.1f} MiB ({:.1f} MiB with none: {:.1f} KiB per connection)", std::max(rss_held, rss_after),
                         rss_alone, (std::max(rss_held, rss_after) - rss_alone) * kKiBPerMiB /
                                        static_cast<double>(options.held)),
             "small, bounded", std::nullopt);
  daemon->send_signal(SIGTERM);
  daemon->wait_for_exit(30s);
}

constexpr const char* kUsage =
    "Usage: endpoint_bench [--held N] [--scrapes N] [--quick]\n"
    "--quick: --scrapes 100 (explicit options win)\n";

std::optional<Options> parse_options(int argc, char** argv) {
  Options options;
  options.bin_dir = fs::read_symlink("/proc/self/exe").parent_path();
  std::optional<long> scrape_count;
  const auto parsed = parse_command_line(argc, argv, kUsage, [&](const std::string& name, const std::string& value) {
    if (name == "--held") {
      options.held = positive(name, value);
    } else if (name == "--scrapes") {
      scrape_count = positive(name, value);
    } else {
      return false;
    }
    return true;
  });
  if (!parsed) return std::nullopt;
  options.scrapes = scrape_count.value_or(*parsed ? 100 : options.scrapes);
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  return bench_main<Options>("endpoint_bench", kUsage, argc, argv, parse_options, {{"held", run_held}});
}
