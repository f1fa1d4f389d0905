// The push path with a PostgreSQL merchant database (a PostgreSQL 15 server the benchmark starts, as the
// tests do; the sandbox and fulfillsyncd on loopback in a temporary directory, rate limiting off):
//   1. throughput of `fulfillsyncd once` over 20,000 seeded orders (target 3,000 orders/s or more),
//      with the daemon's CPU per order, as push_bench does for SQLite;
//   2. the daemon's resident memory while `run` pushes 1,000,000 source rows (target 64 MiB or less,
//      flat; the pulls off), then the cost of an idle poll once they are all synced. The daemon starts on empty
//      tables and the shop writes the rows meanwhile, 10,000 a transaction, so that they are read by
//      the change order (transaction ids), as a shop's orders are once the daemon runs; rows there
//      before the first start are read once by updated_at, which scenario 1 measures;
//   3. the cost of an idle poll with 1,000 rows synced: `run` with nothing to do, for a while.
// An idle poll's cost: the statements the daemon sends and the rows they return (the server's
// pg_stat_statements), the daemon's CPU and its server backends' CPU, per poll of push_orders (one
// `pg_current_snapshot()` each, the change counter it skips the read on) and per second.
// Usage: postgres_push_bench [--orders N] [--memory-rows N] [--memory-cap-seconds S] [--idle-rows N]
//                            [--idle-seconds S] [--quick] [--only throughput|memory|idle]
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bench_support.hpp"
#include "postgres_world.hpp"

namespace {

using namespace fulfillsync::bench;
using namespace std::chrono_literals;

constexpr double kThroughputTarget = 3000;
constexpr double kMemoryTargetMiB = 64;
constexpr double kFlatToleranceMiB = 2;  // the second half of the run may not raise the peak by more

struct Options {
  long orders = 0;
  long memory_rows = 0;
  long memory_cap_seconds = 20 * 60;
  long idle_rows = 1000;
  long idle_seconds = 0;
  std::string only;
  fs::path bin_dir;
};

// As push_bench: push_orders with a larger batch and more concurrency than the defaults.
constexpr const char* kTunedJobs = "    push_orders: {batch_size: 500, concurrency: 8}\n";
// The same with the pulls off: on this clock the orders ship 5 minutes after they are created, and a
// run of several minutes would then pull (and write to the merchant database) as many shipments as
// it creates orders, which is not what the memory figure is about.
constexpr const char* kTunedPushOnly =
    "    push_orders: {batch_size: 500, concurrency: 8}\n    pull_shipments: {enabled: false}\n"
    "    mark_tracking: {mode: never}\n    pull_returns: {enabled: false}\n    pull_lots: {enabled: false}\n";

void seed_timed(PostgresWorld& world, std::string_view prefix, long count) {
  const auto start = Clock::now();
  world.seed_orders(prefix, count);
  fmt::print("seeded {} orders in {:.1f} s\n", count, seconds_since(start));
}

// The server's statements since the last reset (pg_stat_statements; the benchmark's own left out),
// busiest first, printed as calls, rows and server time. Returns their totals.
struct StatementTotals {
  long statements = 0;
  long rows = 0;
  double exec_ms = 0;
  long snapshot_reads = 0;  // calls of the change counter, SELECT pg_current_snapshot()::text
};
StatementTotals print_statements(PgClient& stats, std::string_view order_by) {
  const auto result = stats.exec(fmt::format(
      "SELECT calls, rows, total_exec_time, regexp_replace(query, '\\s+', ' ', 'g') FROM public.pg_stat_statements "
      "WHERE query NOT LIKE '%pg_stat_statements%' AND query NOT LIKE '%pg_stat_activity%' ORDER BY {} DESC",
      order_by));
  StatementTotals totals;
  for (int r = 0; r < PQntuples(result.get()); ++r) {
    const long calls = std::atol(PQgetvalue(result.get(), r, 0));
    const long rows = std::atol(PQgetvalue(result.get(), r, 1));
    const double ms = std::atof(PQgetvalue(result.get(), r, 2));
    const std::string query = PQgetvalue(result.get(), r, 3);
    totals.statements += calls;
    totals.rows += rows;
    totals.exec_ms += ms;
    if (query.find("pg_current_snapshot()::text") != std::string::npos) totals.snapshot_reads = calls;
    if (r < 25) fmt::print("  {:7} {:8} {:9.1f} ms  {}\n", calls, rows, ms, query.substr(0, 120));
  }
  return totals;
}

void run_throughput(const Options& options, Report& report) {
  fmt::print("\n== 1. push throughput on PostgreSQL: `fulfillsyncd once` over {} orders (push_orders batch 500, "
             "concurrency 8) ==\n",
             options.orders);
  PostgresWorld world(options.bin_dir, kTunedJobs, true);
  seed_timed(world, "TPUT-", options.orders);
  world.shop().exec("SELECT public.pg_stat_statements_reset()");
  const Stats before = read_stats(world.sandbox());
  const double sandbox_cpu = cpu_seconds_of(world.sandbox().process().pid());
  const auto start = Clock::now();
  const auto daemon = world.start_daemon("once");
  const auto status = daemon->wait_for_exit(60s + std::chrono::milliseconds(10 * options.orders));
  const double seconds = seconds_since(start);
  if (!status) throw world.failure("fulfillsyncd once did not finish in time");
  const rusage usage = daemon->usage();
  const double sandbox_seconds = cpu_seconds_of(world.sandbox().process().pid()) - sandbox_cpu;
  const std::uint64_t created = read_stats(world.sandbox()).orders_created - before.orders_created;
  const double per_second = static_cast<double>(created) / seconds;
  const double cpu = seconds_of(usage.ru_utime) + seconds_of(usage.ru_stime);
  const double orders = static_cast<double>(std::max<std::uint64_t>(created, 1));
  fmt::print("pushed {} orders in {:.2f} s = {:.0f} orders/s (exit status {})\n", created, seconds, per_second, *status);
  fmt::print("daemon CPU: {:.2f} s user + {:.2f} s system = {:.0f} us/order ({:.0f}% of one core); peak RSS {:.1f} MiB\n",
             seconds_of(usage.ru_utime), seconds_of(usage.ru_stime), cpu * 1e6 / orders, cpu / seconds * 100,
             static_cast<double>(usage.ru_maxrss) / kKiBPerMiB);
  fmt::print("sandbox CPU meanwhile: {:.2f} s = {:.0f} us/order\n", sandbox_seconds, sandbox_seconds * 1e6 / orders);
  fmt::print("the daemon's statements on the server (calls, rows, server time), the longest first:\n");
  const StatementTotals totals = print_statements(world.shop(), "total_exec_time");
  fmt::print("in all {} statements, {:.0f} ms server time ({:.0f} us per order)\n", totals.statements, totals.exec_ms,
             totals.exec_ms * 1e3 / orders);
  const bool complete = *status == 0 && created == static_cast<std::uint64_t>(options.orders);
  if (!complete) {
    report.note(fmt::format("once exited with status {} and created {} of {} orders", *status, created, options.orders));
  }
  report.add(fmt::format("1. PostgreSQL push throughput (once, {} orders)", options.orders),
             fmt::format("{:.0f} orders/s", per_second), fmt::format(">= {:.0f} orders/s", kThroughputTarget),
             complete && per_second >= kThroughputTarget);
  report.add("1. daemon CPU per order; peak RSS",
             fmt::format("{:.0f} us; {:.1f} MiB", cpu * 1e6 / orders, static_cast<double>(usage.ru_maxrss) / kKiBPerMiB),
             "-", std::nullopt);
}

// Waits until `count` orders were created since `before`, or `cap`; samples the daemon's RSS each second.
struct Samples {
  std::vector<std::pair<double, double>> rss;  // (seconds, MiB)
  std::uint64_t created = 0;
  double seconds = 0;
};
Samples wait_created(PostgresWorld& world, ChildProcess& daemon, const Stats& before, long count, long cap_seconds,
                     bool verbose) {
  Samples samples;
  const auto start = Clock::now();
  for (int tick = 1;; ++tick) {
    std::this_thread::sleep_until(start + std::chrono::seconds(tick));
    if (!daemon.running()) throw world.failure("fulfillsyncd run exited while pushing");
    const long rss = status_kib(daemon.pid(), "VmRSS");
    samples.created = read_stats(world.sandbox()).orders_created - before.orders_created;
    samples.seconds = seconds_since(start);
    if (rss >= 0) samples.rss.emplace_back(samples.seconds, static_cast<double>(rss) / kKiBPerMiB);
    const bool done = samples.created >= static_cast<std::uint64_t>(count);
    const bool capped = samples.seconds >= static_cast<double>(cap_seconds);
    if (verbose && (tick % 10 == 0 || done || capped)) {
      fmt::print("  {:5.0f} s: {} of {} created ({:.0f}/s), RSS {:.1f} MiB\n", samples.seconds, samples.created, count,
                 static_cast<double>(samples.created) / samples.seconds, static_cast<double>(rss) / kKiBPerMiB);
    }
    if (done || capped) return samples;
  }
}

// `run` with nothing to do for `seconds`: what its polls cost, from the server's statistics.
void measure_idle(PostgresWorld& world, ChildProcess& daemon, long rows, long seconds, Report& report) {
  PgClient stats(world.server().connection_string());
  // Idle once a 5-second window reads no source row: after a large backlog the daemon reads the
  // change order once more (what committed during its first read), and the last writes end.
  const auto settling = Clock::now();
  for (;;) {
    stats.exec("SELECT public.pg_stat_statements_reset()");
    std::this_thread::sleep_for(5s);
    const auto read = stats.exec("SELECT coalesce(sum(rows), 0) FROM public.pg_stat_statements WHERE query LIKE "
                                 "'%\"shop\".%' AND query NOT LIKE '%pg_stat_statements%'");
    if (std::atol(PQgetvalue(read.get(), 0, 0)) == 0 || seconds_since(settling) > 600) break;
  }
  fmt::print("settled {:.0f} s after the last create\n", seconds_since(settling));
  const auto backend_pids = [&] {
    std::vector<pid_t> pids;
    const auto result = stats.exec(
        "SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()");
    for (int r = 0; r < PQntuples(result.get()); ++r) pids.push_back(std::atoi(PQgetvalue(result.get(), r, 0)));
    return pids;
  };
  const auto backends_cpu = [&](const std::vector<pid_t>& pids) {
    double total = 0;
    for (const pid_t pid : pids) {
      try {
        total += cpu_seconds_of(pid);
      } catch (const std::runtime_error&) {
        // A backend gone: the daemon's connection was closed.
      }
    }
    return total;
  };
  const std::vector<pid_t> pids = backend_pids();
  stats.exec("SELECT public.pg_stat_statements_reset()");
  const double daemon_before = cpu_seconds_of(daemon.pid());
  const double backends_before = backends_cpu(pids);
  const auto start = Clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  const double elapsed = seconds_since(start);
  const double daemon_cpu = cpu_seconds_of(daemon.pid()) - daemon_before;
  const double backends = backends_cpu(pids) - backends_before;
  fmt::print("idle {:.0f} s with {} rows synced; the daemon's statements (calls, rows, server time):\n", elapsed, rows);
  const StatementTotals totals = print_statements(stats, "calls");
  const long statements = totals.statements, returned = totals.rows, polls = totals.snapshot_reads;
  const double exec_ms = totals.exec_ms;
  const double per_poll = static_cast<double>(std::max(polls, 1L));
  fmt::print("{} polls of the change counter ({:.1f}/s): per poll {:.2f} statements, {:.2f} rows, daemon CPU {:.0f} us, "
             "server backends' CPU {:.0f} us (statements' execution {:.0f} us); daemon CPU {:.2f}% of a core\n",
             polls, static_cast<double>(polls) / elapsed, static_cast<double>(statements) / per_poll,
             static_cast<double>(returned) / per_poll, daemon_cpu * 1e6 / per_poll, backends * 1e6 / per_poll,
             exec_ms * 1e3 / per_poll, daemon_cpu / elapsed * 100);
  report.add(fmt::format("idle poll, {} rows synced ({} polls in {:.0f} s)", rows, polls, elapsed),
             fmt::format("{:.2f} statements, {:.2f} rows; daemon CPU {:.0f} us, server {:.0f} us; daemon {:.2f}% of a core",
                         static_cast<double>(statements) / per_poll, static_cast<double>(returned) / per_poll,
                         daemon_cpu * 1e6 / per_poll, backends * 1e6 / per_poll, daemon_cpu / elapsed * 100),
             "-", std::nullopt);
}

void run_memory(const Options& options, Report& report) {
  const long rows = options.memory_rows;
  fmt::print("\n== 2. daemon memory on PostgreSQL: `fulfillsyncd run` over {} source rows (cap {} s), then idle ==\n",
             rows, options.memory_cap_seconds);
  PostgresWorld world(options.bin_dir, kTunedPushOnly, true);
  const Stats before = read_stats(world.sandbox());
  const auto daemon = world.start_daemon("run");
  if (!daemon->wait_for_stderr("listening for changes on channel", 30s)) {
    throw world.failure("fulfillsyncd did not listen for changes");
  }
  constexpr long kPerTransaction = 10'000;
  std::thread shop([&] {
    PgClient connection(world.server().connection_string());
    const auto start = Clock::now();
    for (long first = 1; first <= rows; first += kPerTransaction) {
      world.seed_orders("MEM-", std::min(kPerTransaction, rows - first + 1), first, &connection);
    }
    fmt::print("  the shop wrote {} orders, {} a transaction, in {:.1f} s\n", rows, kPerTransaction,
               seconds_since(start));
  });
  Samples samples;
  try {
    samples = wait_created(world, *daemon, before, rows, options.memory_cap_seconds, true);
  } catch (...) {
    shop.join();
    throw;
  }
  shop.join();
  const double hwm = static_cast<double>(status_kib(daemon->pid(), "VmHWM")) / kKiBPerMiB;
  if (samples.rss.empty()) throw world.failure("no memory samples");
  double first_half = 0, second_half = 0;
  for (std::size_t i = 0; i < samples.rss.size(); ++i) {
    (i < samples.rss.size() / 2 ? first_half : second_half) =
        std::max(i < samples.rss.size() / 2 ? first_half : second_half, samples.rss[i].second);
  }
  std::string points;
  constexpr std::size_t kPoints = 12;
  for (std::size_t i = 0; i < kPoints && i < samples.rss.size(); ++i) {
    const auto& [at, mib] =
        samples.rss[samples.rss.size() <= kPoints ? i : i * (samples.rss.size() - 1) / (kPoints - 1)];
    points += fmt::format(" {:.0f}s:{:.1f}", at, mib);
  }
  fmt::print("RSS (MiB) over the run:{}\nVmHWM {:.1f} MiB; peak in the first half {:.1f}, in the second half {:.1f}\n",
             points, hwm, first_half, second_half);
  const bool complete = samples.created >= static_cast<std::uint64_t>(rows);
  fmt::print("{} orders created in {:.0f} s ({:.0f}/s)\n", samples.created, samples.seconds,
             static_cast<double>(samples.created) / samples.seconds);
  if (!complete) report.note(fmt::format("memory run capped with {} of {} created", samples.created, rows));
  report.add(fmt::format("2. daemon peak RSS (VmHWM), PostgreSQL, {} rows{}", rows, complete ? "" : ", incomplete"),
             fmt::format("{:.1f} MiB ({:.0f} orders/s in run)", hwm, static_cast<double>(samples.created) / samples.seconds),
             fmt::format("<= {:.0f} MiB", kMemoryTargetMiB), hwm <= kMemoryTargetMiB);
  report.add("2. RSS peak, 2nd half vs 1st half", fmt::format("{:+.1f} MiB", second_half - first_half),
             fmt::format("flat (<= +{:.0f} MiB)", kFlatToleranceMiB), second_half - first_half <= kFlatToleranceMiB);
  if (complete) measure_idle(world, *daemon, rows, options.idle_seconds, report);
  daemon->send_signal(SIGTERM);
  daemon->wait_for_exit(60s);
}

void run_idle(const Options& options, Report& report) {
  fmt::print("\n== 3. idle poll on PostgreSQL: `fulfillsyncd run` with {} rows synced, default job settings ==\n",
             options.idle_rows);
  PostgresWorld world(options.bin_dir, "", true);
  seed_timed(world, "IDLE-", options.idle_rows);
  const Stats before = read_stats(world.sandbox());
  const auto daemon = world.start_daemon("run");
  const Samples samples = wait_created(world, *daemon, before, options.idle_rows, 300, false);
  if (samples.created < static_cast<std::uint64_t>(options.idle_rows)) throw world.failure("the rows were not all created");
  measure_idle(world, *daemon, options.idle_rows, options.idle_seconds, report);
  daemon->send_signal(SIGTERM);
  daemon->wait_for_exit(60s);
}

constexpr std::string_view kUsage =
    "Usage: postgres_push_bench [--orders N] [--memory-rows N] [--memory-cap-seconds S] [--idle-rows N]\n"
    "                           [--idle-seconds S] [--quick] [--only throughput|memory|idle]\n"
    "Defaults: --orders 20000 --memory-rows 1000000 --idle-rows 1000 --idle-seconds 30;\n"
    "--quick: --orders 5000 --memory-rows 50000 --idle-seconds 10 (explicit options win)\n";

std::optional<Options> parse(int argc, char** argv) {
  Options options;
  std::optional<long> orders, memory_rows, idle_seconds;
  const auto quick = parse_command_line(argc, argv, kUsage, [&](const std::string& name, const std::string& value) {
    if (name == "--orders") orders = positive(name, value);
    else if (name == "--memory-rows") memory_rows = positive(name, value);
    else if (name == "--memory-cap-seconds") options.memory_cap_seconds = positive(name, value);
    else if (name == "--idle-rows") options.idle_rows = positive(name, value);
    else if (name == "--idle-seconds") idle_seconds = positive(name, value);
    else if (name == "--only") options.only = value;
    else return false;
    return true;
  });
  if (!quick) return std::nullopt;
  options.orders = orders.value_or(*quick ? 5'000 : 20'000);
  options.memory_rows = memory_rows.value_or(*quick ? 50'000 : 1'000'000);
  options.idle_seconds = idle_seconds.value_or(*quick ? 10 : 30);
  options.bin_dir = fs::canonical("/proc/self/exe").parent_path();
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  return bench_main<Options>("postgres_push_bench", kUsage, argc, argv, parse,
                             {{"throughput", run_throughput}, {"memory", run_memory}, {"idle", run_idle}});
}
