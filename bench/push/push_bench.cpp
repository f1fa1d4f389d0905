// The push path end to end: fulfillsyncd reads orders from a merchant's SQLite file and creates them
// at fulfillsync-sandbox on loopback, with rate limiting and faults off. Five figures:
//   1. throughput of `fulfillsyncd once` over N seeded orders (target 1,000 orders/s or more), with
//      the daemon's CPU per order;
//   2. API calls per created order (target 1.01 or fewer), by route;
//   3. the daemon's resident memory while `run` pushes a merchant database of N rows (target 64 MiB
//      or less, flat over the run);
//   4. latency from an order's commit to its creation at the provider with the default poll
//      interval (target p99 under 1 s);
//   5. recovery from a crash: `run` SIGKILLed in the middle of a 1,000-order backlog, then started
//      again; the time from the restart to the last order created (target: the default
//      request_timeout, 30 s, + 5 s: only the sends that were leaving wait for their lookup);
//   6. recovery from a lost checkpoint store: `once` over N orders, the store deleted, `once` again;
//      the calls and time the second run takes (target: no create, at most N / 250 + 10 calls).
// Each scenario has its own temp dir, merchant database, checkpoint store and sandbox.
// Usage: push_bench [--orders N] [--memory-rows N] [--memory-cap-seconds S] [--latency-seconds S]
//                   [--latency-rate R] [--rebuild-orders N] [--with-pulls yes] [--quick]
//                   [--only throughput|calls|memory|latency|restart|rebuild]
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>
#include <simdjson.h>

#include "bench_support.hpp"

namespace {

using namespace fulfillsync::bench;
using SystemClock = std::chrono::system_clock;
using namespace std::chrono_literals;

constexpr double kMemoryTargetMiB = 64;
// "Flat": the second half of the run may not raise the peak by more than this.
constexpr double kFlatToleranceMiB = 2;

struct Options {
  long orders = 0;
  long memory_rows = 0;
  long memory_cap_seconds = 20 * 60;
  long latency_seconds = 0;
  double latency_rate = 20;
  long rebuild_orders = 10'000;
  bool rebuild_with_pulls = false;
  std::string only;  // empty: every scenario
  fs::path bin_dir;
};

// push_orders with a larger batch and more concurrency than the defaults.
WorldOptions tuned_jobs() {
  WorldOptions world;
  world.jobs = "    push_orders: {batch_size: 500, concurrency: 8}\n";
  return world;
}

void seed_timed(World& world, std::string_view prefix, long count) {
  const auto start = Clock::now();
  seed_orders(world.merchant(), prefix, count);
  fmt::print("seeded {} orders in {:.1f} s\n", count, seconds_since(start));
}

// `fulfillsyncd once` over the seeded orders, timed from its start to its exit.
struct OnceRun {
  double seconds = 0;
  int exit_status = -1;
  rusage daemon{};
  double sandbox_cpu = 0;
  Stats before;
  Stats after;
  std::uint64_t created() const { return after.orders_created - before.orders_created; }
};

OnceRun push_once(World& world, long count) {
  OnceRun run;
  run.before = read_stats(world.sandbox());
  const double sandbox_cpu = cpu_seconds_of(world.sandbox().process().pid());
  const auto start = Clock::now();
  const auto daemon = world.start_daemon("once");
  // Generous: 100 orders/s is a tenth of the target.
  const auto limit = 60s + std::chrono::milliseconds(10 * count);
  const auto status = daemon->wait_for_exit(limit);
  run.seconds = seconds_since(start);
  if (!status) {
    throw world.failure(fmt::format("fulfillsyncd once did not finish within {} s",
                                    std::chrono::duration_cast<std::chrono::seconds>(limit).count()));
  }
  run.exit_status = *status;
  run.daemon = daemon->usage();
  run.sandbox_cpu = cpu_seconds_of(world.sandbox().process().pid()) - sandbox_cpu;
  run.after = read_stats(world.sandbox());
  return run;
}

bool check_complete(const OnceRun& run, long count, Report& report) {
  if (run.exit_status == 0 && run.created() == static_cast<std::uint64_t>(count)) return true;
  report.note(fmt::format("fulfillsyncd once exited with status {} and created {} of {} orders", run.exit_status,
                          run.created(), count));
  return false;
}

void run_throughput(const Options& options, Report& report) {
  fmt::print("\n== 1. push throughput: `fulfillsyncd once` over {} orders (push_orders batch 500, concurrency 8) ==\n",
             options.orders);
  World world(options.bin_dir, tuned_jobs());
  seed_timed(world, "TPUT-", options.orders);
  world.start_sandbox();
  const OnceRun run = push_once(world, options.orders);
  const double per_second = static_cast<double>(run.created()) / run.seconds;
  const double user = seconds_of(run.daemon.ru_utime);
  const double sys = seconds_of(run.daemon.ru_stime);
  const double orders = static_cast<double>(std::max<std::uint64_t>(run.created(), 1));
  fmt::print("pushed {} orders in {:.2f} s = {:.0f} orders/s (exit status {})\n", run.created(), run.seconds,
             per_second, run.exit_status);
  fmt::print(
      "daemon CPU: {:.2f} s user + {:.2f} s system = {:.0f} us/order ({:.0f}% of one core); "
      "peak RSS {:.1f} MiB\n",
      user, sys, (user + sys) * 1e6 / orders, (user + sys) / run.seconds * 100,
      static_cast<double>(run.daemon.ru_maxrss) / kKiBPerMiB);
  fmt::print("sandbox CPU meanwhile: {:.2f} s = {:.0f} us/order ({:.0f}% of one core)\n", run.sandbox_cpu,
             run.sandbox_cpu * 1e6 / orders, run.sandbox_cpu / run.seconds * 100);
  fmt::print("context switches of the daemon: {} voluntary, {} involuntary\n", run.daemon.ru_nvcsw,
             run.daemon.ru_nivcsw);
  world.print_logs();
  const bool complete = check_complete(run, options.orders, report);
  report.add(fmt::format("1. push throughput (once, {} orders)", options.orders),
             fmt::format("{:.0f} orders/s", per_second), ">= 1000 orders/s", complete && per_second >= 1000);
  report.add("1. daemon CPU per order",
             fmt::format("{:.0f} us ({:.2f} s user + {:.2f} s sys)", (user + sys) * 1e6 / orders, user, sys), "-",
             std::nullopt);
}

void run_calls(const Options& options, Report& report) {
  fmt::print("\n== 2. API calls per created order: `fulfillsyncd once` over {} orders, no faults ==\n", options.orders);
  World world(options.bin_dir, tuned_jobs());
  seed_timed(world, "CALL-", options.orders);
  world.start_sandbox();
  const OnceRun run = push_once(world, options.orders);
  const std::uint64_t requests = run.after.requests_total - run.before.requests_total;
  const double per_order =
      static_cast<double>(requests) / static_cast<double>(std::max<std::uint64_t>(run.created(), 1));
  fmt::print("{} API requests for {} orders created = {:.4f} calls/order (exit status {})\n", requests, run.created(),
             per_order, run.exit_status);
  for (const auto& [route, count] : run.after.requests) {
    const auto before = run.before.requests.find(route);
    const std::uint64_t made = count - (before == run.before.requests.end() ? 0 : before->second);
    if (made > 0) fmt::print("  {:<28} {}\n", route, made);
  }
  world.print_logs();
  check_complete(run, options.orders, report);
  report.add("2. API calls per created order",
             fmt::format("{:.4f} ({} calls / {} orders)", per_order, requests, run.created()), "<= 1.01",
             run.created() > 0 && per_order <= 1.01);
}

// With requests_per_minute 1000000 (the most the loader accepts) the budget does not bound the run;
// a million rows take several minutes at the daemon's own pace.
void run_memory(const Options& options, Report& report) {
  const long rows = options.memory_rows;
  fmt::print("\n== 3. daemon memory: `fulfillsyncd run` over a merchant database of {} rows (cap {} s) ==\n", rows,
             options.memory_cap_seconds);
  World world(options.bin_dir, tuned_jobs());
  seed_timed(world, "MEM-", rows);
  world.start_sandbox();
  const std::uint64_t created_before = read_stats(world.sandbox()).orders_created;
  struct Sample {
    double at;
    double rss_mib;
    std::uint64_t created;
  };
  std::vector<Sample> samples;
  const auto daemon = world.start_daemon("run");
  const auto start = Clock::now();
  std::uint64_t created = 0;
  std::optional<double> first_created_at;
  double hwm_mib = -1;
  for (int tick = 1;; ++tick) {
    std::this_thread::sleep_until(start + std::chrono::seconds(tick));
    if (!daemon->running()) throw world.failure("fulfillsyncd run exited while pushing");
    const long rss = status_kib(daemon->pid(), "VmRSS");
    created = read_stats(world.sandbox()).orders_created - created_before;
    const double at = seconds_since(start);
    if (rss >= 0) samples.push_back({at, static_cast<double>(rss) / kKiBPerMiB, created});
    if (created > 0 && !first_created_at) first_created_at = at;
    const bool done = created >= static_cast<std::uint64_t>(rows);
    const bool capped = at >= static_cast<double>(options.memory_cap_seconds);
    if (tick % 10 == 0 || done || capped) {
      fmt::print("  {:5.0f} s: {} of {} created ({:.0f}/s), RSS {:.1f} MiB\n", at, created, rows,
                 static_cast<double>(created) / at, static_cast<double>(rss) / kKiBPerMiB);
    }
    if (done || capped) {
      hwm_mib = static_cast<double>(status_kib(daemon->pid(), "VmHWM")) / kKiBPerMiB;
      break;
    }
  }
  const double elapsed = seconds_since(start);
  daemon->send_signal(SIGTERM);
  const auto status = daemon->wait_for_exit(60s);
  fmt::print("stopped with SIGTERM: exit status {}\n", status ? std::to_string(*status) : "none after 60 s");
  if (samples.empty()) throw world.failure("no memory samples");
  if (first_created_at) fmt::print("the first order was created within {:.0f} s of the start\n", *first_created_at);

  double low = samples.front().rss_mib, high = low;
  double first_half = 0, second_half = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    low = std::min(low, samples[i].rss_mib);
    high = std::max(high, samples[i].rss_mib);
    double& half = i < samples.size() / 2 ? first_half : second_half;
    half = std::max(half, samples[i].rss_mib);
  }
  fmt::print("VmRSS over {} samples: min {:.1f} MiB, max {:.1f} MiB, last {:.1f} MiB; VmHWM {:.1f} MiB\n",
             samples.size(), low, high, samples.back().rss_mib, hwm_mib);
  fmt::print("peak in the first half of the samples {:.1f} MiB, in the second half {:.1f} MiB\n", first_half,
             second_half);
  std::string points;
  constexpr std::size_t kPoints = 12;
  for (std::size_t i = 0; i < kPoints && i < samples.size(); ++i) {
    const Sample& sample = samples[samples.size() <= kPoints ? i : i * (samples.size() - 1) / (kPoints - 1)];
    points += fmt::format(" {:.0f}s:{:.1f}", sample.at, sample.rss_mib);
  }
  fmt::print("RSS (MiB) over the run:{}\n", points);
  world.print_logs();

  const bool complete = created >= static_cast<std::uint64_t>(rows);
  if (!complete) {
    report.note(fmt::format("memory run stopped at the {} s cap with {} of {} orders created ({:.0f}/s)",
                            options.memory_cap_seconds, created, rows, static_cast<double>(created) / elapsed));
  }
  const double peak = std::max(hwm_mib, high);
  report.add(fmt::format("3. daemon peak RSS (VmHWM), {} rows{}", rows, complete ? "" : ", incomplete"),
             fmt::format("{:.1f} MiB", peak), fmt::format("<= {:.0f} MiB", kMemoryTargetMiB), peak <= kMemoryTargetMiB);
  // A run of a few seconds has no steady state to judge.
  constexpr std::size_t kFewestSamples = 8;
  const bool judged = samples.size() >= kFewestSamples;
  report.add("3. RSS peak, 2nd half vs 1st half",
             judged ? fmt::format("{:+.1f} MiB", second_half - first_half)
                    : fmt::format("{} samples: too short to judge", samples.size()),
             fmt::format("flat (<= +{:.0f} MiB)", kFlatToleranceMiB),
             judged ? std::optional<bool>(second_half - first_half <= kFlatToleranceMiB) : std::nullopt);
}

void run_latency(const Options& options, Report& report) {
  const long count = std::max(1L, std::lround(static_cast<double>(options.latency_seconds) * options.latency_rate));
  fmt::print("\n== 4. commit -> created latency: {} orders, one per transaction at {}/s, default job intervals ==\n",
             count, options.latency_rate);
  World world(options.bin_dir);
  world.start_sandbox();
  const Stats before = read_stats(world.sandbox());
  const auto daemon = world.start_daemon("run");
  // The daemon polls once it has chosen its channel: its first request.
  for (const auto deadline = Clock::now() + 30s; read_stats(world.sandbox()).requests_total == before.requests_total;) {
    if (!daemon->running() || Clock::now() >= deadline) throw world.failure("fulfillsyncd did not reach the provider");
    std::this_thread::sleep_for(20ms);
  }

  OrderWriter writer(world.merchant());
  std::map<std::string, SystemClock::time_point> committed;
  const auto start = Clock::now();
  for (long n = 1; n <= count; ++n) {
    std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                                              static_cast<double>(n - 1) / options.latency_rate)));
    const std::string reference = reference_of("LAT-", n);
    writer.insert(reference, n);
    committed.emplace(reference, SystemClock::now());
  }
  const double inserting = seconds_since(start);
  fmt::print("inserted {} orders in {:.1f} s ({:.1f}/s)\n", count, inserting, static_cast<double>(count) / inserting);
  const auto deadline = Clock::now() + 60s;
  while (read_stats(world.sandbox()).orders_created - before.orders_created < static_cast<std::uint64_t>(count) &&
         Clock::now() < deadline && daemon->running()) {
    std::this_thread::sleep_for(100ms);
  }
  const auto created = read_created_dates(world.sandbox());
  daemon->send_signal(SIGTERM);
  const auto status = daemon->wait_for_exit(60s);
  fmt::print("stopped with SIGTERM: exit status {}\n", status ? std::to_string(*status) : "none after 60 s");

  std::vector<double> latencies;
  for (const auto& [reference, commit] : committed) {
    if (const auto found = created.find(reference); found != created.end()) {
      latencies.push_back(std::chrono::duration<double, std::milli>(found->second - commit).count());
    }
  }
  const long missing = count - static_cast<long>(latencies.size());
  if (latencies.empty()) throw world.failure("no order was created");
  std::sort(latencies.begin(), latencies.end());
  double sum = 0;
  for (const double latency : latencies) sum += latency;
  const double p99 = percentile(latencies, 0.99);
  fmt::print("latency over {} orders (ms): min {:.0f}, mean {:.0f}, p50 {:.0f}, p90 {:.0f}, p99 {:.0f}, max {:.0f}{}\n",
             latencies.size(), latencies.front(), sum / static_cast<double>(latencies.size()),
             percentile(latencies, 0.5), percentile(latencies, 0.9), p99, latencies.back(),
             missing > 0 ? fmt::format("; {} never created", missing) : "");
  world.print_logs();
  if (missing > 0) report.note(fmt::format("latency: {} of {} orders were not created within 60 s", missing, count));
  report.add(fmt::format("4. commit->created latency p99 ({} orders)", count),
             fmt::format("{:.0f} ms (p50 {:.0f}, p90 {:.0f}, max {:.0f})", p99, percentile(latencies, 0.5),
                         percentile(latencies, 0.9), latencies.back()),
             "< 1000 ms", missing == 0 && p99 < 1000);
}

// The default api.request_timeout: an interrupted send is looked up this long after it left.
constexpr auto kRequestTimeout = 30s;
constexpr long kRestartBacklog = 1000;

long count_in_state(const fs::path& checkpoint, std::string_view state) {
  SQLite::Database store(checkpoint.string(), SQLite::OPEN_READONLY);
  SQLite::Statement query(store, "SELECT count(*) FROM outbound_ledger WHERE kind = 'order_create' AND state = ?");
  query.bind(1, std::string(state));
  query.executeStep();
  return query.getColumn(0).getInt64();
}

void run_restart(const Options& options, Report& report) {
  fmt::print("\n== 5. recovery: `fulfillsyncd run` SIGKILLed during a {}-order backlog, then restarted ==\n",
             kRestartBacklog);
  World world(options.bin_dir, tuned_jobs());
  seed_timed(world, "CRASH-", kRestartBacklog);
  world.start_sandbox();
  // Slow creates (20 ms each, 8 at a time) so that the kill lands in the middle of the backlog.
  admin_request(world.sandbox(), "POST", "/_sandbox/faults", "route=POST /*/order;latency_ms=20");
  const std::uint64_t before = read_stats(world.sandbox()).orders_created;
  auto daemon = world.start_daemon("run", "daemon-killed");
  const auto created = [&] { return read_stats(world.sandbox()).orders_created - before; };
  for (const auto deadline = Clock::now() + 60s; created() < kRestartBacklog / 5;) {
    if (!daemon->running() || Clock::now() >= deadline) throw world.failure("the backlog did not start");
    std::this_thread::sleep_for(5ms);
  }
  daemon->send_signal(SIGKILL);
  daemon->wait_for_exit(10s);
  const std::uint64_t at_kill = created();
  const fs::path checkpoint = world.dir() / "checkpoint.db";
  const long in_flight = count_in_state(checkpoint, "in_flight");
  fmt::print("killed with {} of {} created; {} sends in flight, {} pending\n", at_kill, kRestartBacklog, in_flight,
             count_in_state(checkpoint, "pending"));
  admin_request(world.sandbox(), "POST", "/_sandbox/faults", "");

  const auto restarted = Clock::now();
  daemon = world.start_daemon("run");
  std::optional<double> all_but_interrupted;
  const auto limit = restarted + kRequestTimeout + 60s;
  while (created() < static_cast<std::uint64_t>(kRestartBacklog) && Clock::now() < limit && daemon->running()) {
    if (!all_but_interrupted && created() + static_cast<std::uint64_t>(in_flight) >= kRestartBacklog) {
      all_but_interrupted = seconds_since(restarted);
    }
    std::this_thread::sleep_for(20ms);
  }
  const double last = seconds_since(restarted);
  const std::uint64_t total = created();
  daemon->send_signal(SIGTERM);
  daemon->wait_for_exit(60s);
  world.print_logs();
  fmt::print("after the restart: {} of {} created in {:.1f} s; all but the interrupted sends within {:.1f} s\n", total,
             kRestartBacklog, last, all_but_interrupted.value_or(last));
  const bool complete = total == static_cast<std::uint64_t>(kRestartBacklog);
  if (!complete) report.note(fmt::format("recovery: {} of {} orders created", total, kRestartBacklog));
  const double target = std::chrono::duration<double>(kRequestTimeout).count() + 5;
  report.add(fmt::format("5. restart after SIGKILL -> last of {} orders created", kRestartBacklog),
             fmt::format("{:.1f} s ({} in flight at the kill)", last, in_flight), fmt::format("<= {:.0f} s", target),
             complete && last <= target);
}

void run_rebuild(const Options& options, Report& report) {
  const long count = options.rebuild_orders;
  fmt::print("\n== 6. a lost checkpoint store: `once` over {} orders, the store deleted, `once` again ==\n", count);
  // The pulls would read every order again from the starting point as well (a page per 250): that
  // is their own restart, shown by `--only rebuild --with-pulls`, not the rebuild's reconciliation.
  WorldOptions jobs = tuned_jobs();
  if (!options.rebuild_with_pulls) {
    jobs.jobs += "    pull_shipments: {enabled: false}\n    pull_returns: {enabled: false}\n"
                 "    mark_tracking: {mode: never}\n";
  }
  World world(options.bin_dir, jobs);
  seed_timed(world, "LOST-", count);
  world.start_sandbox();
  const OnceRun first = push_once(world, count);
  if (!check_complete(first, count, report)) return;
  for (const char* file : {"checkpoint.db", "checkpoint.db-wal", "checkpoint.db-shm"}) fs::remove(world.dir() / file);
  const OnceRun second = push_once(world, count);
  const std::uint64_t requests = second.after.requests_total - second.before.requests_total;
  fmt::print("after deleting the store of {} synced orders: {} API requests, {} creates, {:.2f} s (exit status {})\n",
             count, requests, second.created(), second.seconds, second.exit_status);
  for (const auto& [route, made] : second.after.requests_since(second.before)) fmt::print("  {:<28} {}\n", route, made);
  world.print_logs();
  const std::uint64_t target = static_cast<std::uint64_t>(count) / 250 + 10;
  report.add(fmt::format("6. calls to recover a deleted store of {} synced orders{}", count,
                         options.rebuild_with_pulls ? " (pulls on)" : ""),
             fmt::format("{} calls, {} creates", requests, second.created()), fmt::format("<= {}, no create", target),
             second.exit_status == 0 && second.created() == 0 && requests <= target);
  report.add("6. time of that `once`", fmt::format("{:.2f} s", second.seconds), "-", std::nullopt);
}

constexpr const char* kUsage =
    "Usage: push_bench [--orders N] [--memory-rows N] [--memory-cap-seconds S] [--latency-seconds S]\n"
    "                  [--latency-rate R] [--rebuild-orders N] [--with-pulls yes] [--quick]\n"
    "                  [--only throughput|calls|memory|latency|restart|rebuild]\n"
    "--quick: --orders 5000 --memory-rows 100000 --latency-seconds 10 (explicit options win)\n";

std::optional<Options> parse_options(int argc, char** argv) {
  Options options;
  options.bin_dir = fs::read_symlink("/proc/self/exe").parent_path();
  std::optional<long> orders, memory_rows, latency_seconds;
  const auto parsed = parse_command_line(argc, argv, kUsage, [&](const std::string& name, const std::string& value) {
    if (name == "--orders") {
      orders = positive(name, value);
    } else if (name == "--memory-rows") {
      memory_rows = positive(name, value);
    } else if (name == "--memory-cap-seconds") {
      options.memory_cap_seconds = positive(name, value);
    } else if (name == "--latency-seconds") {
      latency_seconds = positive(name, value);
    } else if (name == "--latency-rate") {
      options.latency_rate = std::atof(value.c_str());
      if (!(options.latency_rate > 0)) throw std::runtime_error("--latency-rate needs a positive number");
    } else if (name == "--rebuild-orders") {
      options.rebuild_orders = positive(name, value);
    } else if (name == "--with-pulls") {
      options.rebuild_with_pulls = value == "yes";
    } else if (name == "--only") {
      if (value != "throughput" && value != "calls" && value != "memory" && value != "latency" && value != "restart" &&
          value != "rebuild") {
        throw std::runtime_error("--only takes throughput, calls, memory, latency, restart or rebuild");
      }
      options.only = value;
    } else {
      return false;
    }
    return true;
  });
  if (!parsed) return std::nullopt;
  const bool quick = *parsed;
  options.orders = orders.value_or(quick ? 5'000 : 20'000);
  options.memory_rows = memory_rows.value_or(quick ? 100'000 : 1'000'000);
  options.latency_seconds = latency_seconds.value_or(quick ? 10 : 30);
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  return bench_main<Options>("push_bench", kUsage, argc, argv, parse_options,
                             {{"throughput", run_throughput},
                              {"calls", run_calls},
                              {"memory", run_memory},
                              {"latency", run_latency},
                              {"restart", run_restart},
                              {"rebuild", run_rebuild}});
}
