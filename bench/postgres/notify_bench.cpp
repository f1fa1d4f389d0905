// Commit -> POST /order latency with a PostgreSQL merchant database: fulfillsyncd `run` at the default
// job settings, woken by the reference triggers' NOTIFY, while a merchant application commits one
// order (with its lines) per transaction at a steady rate. The latency of an order is from its COMMIT
// returning to the sandbox's created_date for it (one clock: the same machine). Target: p99 under 50 ms.
// The PostgreSQL 15 server (Debian's postgresql-15), the sandbox and the daemon run on loopback in a
// temporary directory.
// Usage: postgres_notify_bench [--seconds S] [--rate R] [--quick]
#include <signal.h>

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "bench_support.hpp"
#include "postgres_world.hpp"

namespace {

using namespace fulfillsync::bench;
using SystemClock = std::chrono::system_clock;
using namespace std::chrono_literals;

constexpr double kTargetP99Ms = 50;

struct Options {
  long seconds = 30;
  double rate = 20;
  std::string only;
  fs::path bin_dir;
};

std::string order_sql(const std::string& reference, long n) {
  std::string sql = fmt::format(
      "INSERT INTO fulfillsync_orders (reference_id, order_number, shipping_method, type, recipient_name, "
      "recipient_email, address1, city, state, zip_code, country) VALUES ('{}', '#{}', 'Standard', 'DTC', "
      "'Customer {}', 'customer{}@example.com', '{} Main Street', 'Austin', 'TX', '{:05}', 'US');",
      reference, n, n, n, n, 10000 + n % 90000);
  sql += fmt::format("INSERT INTO fulfillsync_order_lines (order_reference_id, line_number, product_reference_id, "
                     "product_name, quantity) VALUES ('{}', 1, 'TSHIRT-L', 'Organic Cotton T-Shirt L', 1);",
                     reference);
  return sql;
}

void run_latency(const Options& options, Report& report) {
  const long count = std::max(1L, std::lround(static_cast<double>(options.seconds) * options.rate));
  fmt::print("\n== commit -> POST /order latency, PostgreSQL with NOTIFY: {} orders, one per transaction at {}/s, "
             "default job settings ==\n",
             count, options.rate);
  PostgresWorld world(options.bin_dir);
  Sandbox& sandbox = world.sandbox();
  PgClient& shop = world.shop();
  const Stats before = read_stats(sandbox);
  auto daemon = world.start_daemon("run");
  const auto failure = [&](const std::string& what) { return world.failure(what); };
  if (!daemon->wait_for_stderr("listening for changes on channel", 30s)) {
    throw failure("fulfillsyncd did not listen for changes");
  }
  for (const auto deadline = Clock::now() + 30s; read_stats(sandbox).requests_total == before.requests_total;) {
    if (!daemon->running() || Clock::now() >= deadline) throw failure("fulfillsyncd did not reach the provider");
    std::this_thread::sleep_for(20ms);
  }
  std::this_thread::sleep_for(1s);  // the jobs' first runs are over: they rest for their interval

  shop.exec("SET search_path = shop");
  std::map<std::string, SystemClock::time_point> committed;
  const auto start = Clock::now();
  for (long n = 1; n <= count; ++n) {
    std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(static_cast<double>(n - 1) / options.rate)));
    const std::string reference = reference_of("PGN-", n);
    shop.exec(fmt::format("BEGIN; {} COMMIT;", order_sql(reference, n)));
    committed.emplace(reference, SystemClock::now());
  }
  const auto deadline = Clock::now() + 60s;
  while (read_stats(sandbox).orders_created - before.orders_created < static_cast<std::uint64_t>(count) &&
         Clock::now() < deadline && daemon->running()) {
    std::this_thread::sleep_for(100ms);
  }
  const auto created = read_created_dates(sandbox);
  daemon->send_signal(SIGTERM);
  daemon->wait_for_exit(60s);

  std::vector<double> latencies;
  for (const auto& [reference, commit] : committed) {
    if (const auto found = created.find(reference); found != created.end()) {
      latencies.push_back(std::chrono::duration<double, std::milli>(found->second - commit).count());
    }
  }
  const long missing = count - static_cast<long>(latencies.size());
  if (latencies.empty()) throw failure("no order was created");
  std::sort(latencies.begin(), latencies.end());
  double sum = 0;
  for (const double latency : latencies) sum += latency;
  const double p99 = percentile(latencies, 0.99);
  fmt::print("latency over {} orders (ms): min {:.1f}, mean {:.1f}, p50 {:.1f}, p90 {:.1f}, p99 {:.1f}, max {:.1f}{}\n",
             latencies.size(), latencies.front(), sum / static_cast<double>(latencies.size()),
             percentile(latencies, 0.5), percentile(latencies, 0.9), p99, latencies.back(),
             missing > 0 ? fmt::format("; {} never created", missing) : "");
  if (missing > 0) report.note(fmt::format("latency: {} of {} orders were not created within 60 s", missing, count));
  report.add(fmt::format("commit->POST latency p99, PostgreSQL + NOTIFY ({} orders)", count),
             fmt::format("{:.1f} ms (p50 {:.1f}, p90 {:.1f}, max {:.1f})", p99, percentile(latencies, 0.5),
                         percentile(latencies, 0.9), latencies.back()),
             fmt::format("< {:.0f} ms", kTargetP99Ms), missing == 0 && p99 < kTargetP99Ms);
}

constexpr std::string_view kUsage =
    "Usage: postgres_notify_bench [--seconds S] [--rate R] [--quick]\n"
    "--quick: --seconds 10 (explicit options win)\n";

std::optional<Options> parse(int argc, char** argv) {
  Options options;
  std::optional<long> seconds;
  const auto quick = parse_command_line(argc, argv, kUsage, [&](const std::string& name, const std::string& value) {
    if (name == "--seconds") {
      seconds = positive(name, value);
    } else if (name == "--rate") {
      options.rate = std::atof(value.c_str());
      if (!(options.rate > 0)) throw std::runtime_error("--rate needs a positive number");
    } else {
      return false;
    }
    return true;
  });
  if (!quick) return std::nullopt;
  options.seconds = seconds.value_or(*quick ? 10 : 30);
  options.bin_dir = fs::canonical("/proc/self/exe").parent_path();
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  return bench_main<Options>("postgres_notify_bench", kUsage, argc, argv, parse, {{"latency", run_latency}});
}
