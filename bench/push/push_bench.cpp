// The push path end to end: fulfillsyncd reads orders from a merchant's SQLite file and creates them
// at fulfillsync-sandbox on loopback, with rate limiting and faults off. Eight figures:
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
//      the calls and time the second run takes (target: no create, at most N / 250 + 10 calls);
//   7. the hand-written peers (bench/peer/) timed beside the daemon: `fulfillsyncd once`, the Node.js
//      peer at each --peer-in-flight and the Python peer each push the same N seeded orders against a
//      fresh sandbox, in turns rotated each round; medians of --rounds of each one's orders/s, CPU
//      per order (user + system of its process), peak RSS, and the sandbox's CPU per order meanwhile;
//      the ratios of the daemon to the fastest peer (targets: 4 times its orders/s, a fifth of its CPU
//      per order) and the machine's ceiling, cores / (daemon + sandbox CPU per order) (target: the
//      daemon at 80% of it or more). A peer that is not installed is reported as skipped;
//   8. the instructions `once` runs per created order, counted by callgrind over N and 3N orders
//      (skipped without valgrind): a figure that does not move with the machine's load.
// Scenario 1 prints that ceiling too, and one core's bound, 1 / daemon CPU per order: the daemon's
// loop is one thread. Targets are printed as met or missed, never asserted.
// Each scenario has its own temp dir, merchant database, checkpoint store and sandbox.
// Usage: push_bench [--orders N] [--memory-rows N] [--memory-cap-seconds S] [--latency-seconds S]
//                   [--latency-rate R] [--rebuild-orders N] [--with-pulls yes] [--rounds N]
//                   [--peer-in-flight 8,32] [--instruction-orders N] [--callgrind-keep DIR] [--quick]
//                   [--only throughput|peers|calls|memory|latency|restart|rebuild|instructions]
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
  long rounds = 3;
  std::vector<long> peer_in_flight{8, 32};
  long instruction_orders = 1'000;
  fs::path callgrind_keep;  // empty: the profiles are removed with their runs
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

// The most orders a second any client could reach on this machine, its cores shared by the client and
// the sandbox: cores / (client + sandbox CPU per order).
struct Ceiling {
  long cores = 0;
  double orders_per_second = 0;
};

Ceiling ceiling_of(double client_us_per_order, double sandbox_us_per_order) {
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return {cores, static_cast<double>(cores) * 1e6 / (client_us_per_order + sandbox_us_per_order)};
}

constexpr double kCeilingShareTarget = 0.80;

// The daemon's loop is one thread: it cannot go faster than one core spent at its CPU per order,
// which caps its share of the ceiling at (daemon + sandbox) / (cores x daemon) whatever else it does.
double one_core_bound(double daemon_us_per_order) { return 1e6 / daemon_us_per_order; }

std::string describe_ceiling(const Ceiling& ceiling, double daemon_us, double sandbox_us, double per_second) {
  const double one_core = one_core_bound(daemon_us);
  return fmt::format(
      "{} cores / ({:.0f} + {:.0f} us) = {:.0f} orders/s; the daemon's {:.0f} orders/s is {:.0f}% of it.\n"
      "one core's bound, 1 / {:.0f} us = {:.0f} orders/s (the daemon's loop is one thread): reached {:.0f}%; "
      "at this CPU per order a single thread reaches at most {:.0f}% of the ceiling",
      ceiling.cores, daemon_us, sandbox_us, ceiling.orders_per_second, per_second,
      per_second / ceiling.orders_per_second * 100, daemon_us, one_core, per_second / one_core * 100,
      std::min(1.0, one_core / ceiling.orders_per_second) * 100);
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
  const double daemon_us = (user + sys) * 1e6 / orders;
  const double sandbox_us = run.sandbox_cpu * 1e6 / orders;
  fmt::print("sandbox CPU meanwhile: {:.2f} s = {:.0f} us/order ({:.0f}% of one core)\n", run.sandbox_cpu, sandbox_us,
             run.sandbox_cpu / run.seconds * 100);
  const Ceiling ceiling = ceiling_of(daemon_us, sandbox_us);
  fmt::print("the machine's ceiling: {}\n", describe_ceiling(ceiling, daemon_us, sandbox_us, per_second));
  fmt::print("context switches of the daemon: {} voluntary, {} involuntary\n", run.daemon.ru_nvcsw,
             run.daemon.ru_nivcsw);
  world.print_logs();
  const bool complete = check_complete(run, options.orders, report);
  report.add(fmt::format("1. push throughput (once, {} orders)", options.orders),
             fmt::format("{:.0f} orders/s", per_second), ">= 1000 orders/s", complete && per_second >= 1000);
  report.add("1. daemon CPU per order", fmt::format("{:.0f} us ({:.2f} s user + {:.2f} s sys)", daemon_us, user, sys),
             "-", std::nullopt);
  report.add("1. sandbox CPU per order (bounds any client)", fmt::format("{:.0f} us", sandbox_us), "-", std::nullopt);
  report.add("1. share of the machine's ceiling",
             fmt::format("{:.0f}% of {:.0f} orders/s", per_second / ceiling.orders_per_second * 100,
                         ceiling.orders_per_second),
             fmt::format(">= {:.0f}%", kCeilingShareTarget * 100),
             complete && per_second >= kCeilingShareTarget * ceiling.orders_per_second);
  report.add("1. share of one core's bound (1 / daemon CPU per order)",
             fmt::format("{:.0f}% of {:.0f} orders/s", per_second / one_core_bound(daemon_us) * 100,
                         one_core_bound(daemon_us)),
             "-", std::nullopt);
}

// --- 7. the peers, timed beside the daemon ---------------------------------------------------------

constexpr double kPeerThroughputTarget = 4;  // the daemon's orders/s over the fastest peer's
constexpr double kPeerCpuTarget = 0.2;       // the daemon's CPU per order over that peer's

// One way of pushing the seeded orders: the daemon (no argv) or a peer's command line, to which the
// merchant database, the sandbox's URL and the token file are added; or why it is not run.
struct Contender {
  std::string name;
  std::vector<std::string> argv{};
  std::string skipped{};
};

// What one run of a contender took.
struct Timing {
  double orders_per_second = 0;
  double cpu_us = 0;  // per order, user + system of its process
  double rss_mib = 0;
  double sandbox_us = 0;  // per order
};

std::optional<fs::path> find_program(std::string_view name) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/bin:/bin";
  while (!dirs.empty()) {
    const std::size_t colon = dirs.find(':');
    const fs::path candidate = fs::path(dirs.substr(0, colon)) / name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
  }
  return std::nullopt;
}

// Whether `argv` runs and exits 0 within 30 s.
bool runs(const std::vector<std::string>& argv) {
  return fulfillsync::testing::run(argv, 30s).exit_status == 0;
}

// Where bench/peer/install-node-peer put better-sqlite3: $FULFILLSYNC_PEER_NODE_DIR, else peer-node
// beside the binaries' folder (build/peer-node, its default), else the source tree's build/peer-node.
std::optional<fs::path> node_modules_dir(const fs::path& bin_dir) {
  std::vector<fs::path> candidates;
  if (const char* dir = std::getenv("FULFILLSYNC_PEER_NODE_DIR")) candidates.emplace_back(dir);
  candidates.push_back(bin_dir.parent_path() / "peer-node");
  candidates.push_back(fulfillsync::testing::source_path("build/peer-node"));
  for (const auto& dir : candidates) {
    if (fs::exists(dir / "node_modules" / "better-sqlite3" / "package.json")) return dir;
  }
  return std::nullopt;
}

std::vector<Contender> contenders(const Options& options) {
  std::vector<Contender> all{{.name = "fulfillsyncd once (batch 500, concurrency 8)"}};
  const auto node = find_program("node");
  const auto modules = node_modules_dir(options.bin_dir);
  std::string node_skipped;
  if (!node) {
    node_skipped = "skipped: no node on PATH (Debian: apt-get install nodejs npm, then bench/peer/install-node-peer)";
  } else if (!modules) {
    node_skipped = "skipped: better-sqlite3 is not installed (bench/peer/install-node-peer, or set "
                   "FULFILLSYNC_PEER_NODE_DIR)";
  } else if (!runs({node->string(), "-e", "require(process.argv[1])(':memory:').close()",
                    (*modules / "node_modules" / "better-sqlite3").string()})) {
    node_skipped = fmt::format("skipped: better-sqlite3 in {} does not load with {} (run bench/peer/install-node-peer "
                               "again)",
                               modules->string(), node->string());
  }
  for (const long in_flight : options.peer_in_flight) {
    Contender peer{.name = fmt::format("Node.js peer, {} in flight", in_flight), .skipped = node_skipped};
    if (node_skipped.empty()) {
      peer.argv = {node->string(), fulfillsync::testing::source_path("bench/peer/node_peer.js").string(),
                   "--modules", modules->string(), "--in-flight", std::to_string(in_flight)};
    }
    all.push_back(std::move(peer));
  }
  Contender python{.name = "Python peer (standard library), one at a time"};
  const auto python3 = find_program("python3");
  if (!python3) {
    python.skipped = "skipped: no python3 on PATH (Debian: apt-get install python3)";
  } else if (!runs({python3->string(), "-c", "import sys; sys.exit(sys.version_info < (3, 11))"})) {
    python.skipped = fmt::format("skipped: {} is older than 3.11", python3->string());
  } else {
    python.argv = {python3->string(), fulfillsync::testing::source_path("bench/peer/python_peer.py").string()};
  }
  all.push_back(std::move(python));
  return all;
}

// One contender over `orders` rows seeded as in scenario 1, against a sandbox of its own.
Timing time_contender(const Options& options, const Contender& contender) {
  World world(options.bin_dir, tuned_jobs());
  seed_orders(world.merchant(), "PEER-", options.orders);
  world.start_sandbox();
  if (contender.argv.empty()) {
    const OnceRun run = push_once(world, options.orders);
    if (run.exit_status != 0 || run.created() != static_cast<std::uint64_t>(options.orders)) {
      throw world.failure(fmt::format("{}: exit status {}, {} of {} orders created", contender.name, run.exit_status,
                                      run.created(), options.orders));
    }
    const double orders = static_cast<double>(options.orders);
    return {.orders_per_second = orders / run.seconds,
            .cpu_us = (seconds_of(run.daemon.ru_utime) + seconds_of(run.daemon.ru_stime)) * 1e6 / orders,
            .rss_mib = static_cast<double>(run.daemon.ru_maxrss) / kKiBPerMiB,
            .sandbox_us = run.sandbox_cpu * 1e6 / orders};
  }
  std::vector<std::string> argv = contender.argv;
  argv.insert(argv.end(), {"--db", (world.dir() / "merchant.db").string(), "--base-url", world.sandbox().base_url(),
                           "--token-file", (world.dir() / "api-token").string()});
  const Stats before = read_stats(world.sandbox());
  const double sandbox_cpu = cpu_seconds_of(world.sandbox().process().pid());
  const auto start = Clock::now();
  ChildProcess peer({.argv = argv, .stdout_file = world.dir() / "peer.out", .stderr_file = world.dir() / "peer.err"});
  const auto status = peer.wait_for_exit(60s + std::chrono::milliseconds(10 * options.orders));
  const double seconds = seconds_since(start);
  const double sandbox_seconds = cpu_seconds_of(world.sandbox().process().pid()) - sandbox_cpu;
  const std::uint64_t created = read_stats(world.sandbox()).orders_created - before.orders_created;
  if (!status || *status != 0 || created != static_cast<std::uint64_t>(options.orders)) {
    throw std::runtime_error(fmt::format("{}: exit status {}, {} of {} orders created\n  its output: {}  its stderr:\n{}",
                                         contender.name, status ? std::to_string(*status) : "none (timed out)",
                                         created, options.orders, peer.stdout_text(),
                                         log_excerpt(peer.stderr_text())));
  }
  const rusage& usage = peer.usage();
  const double orders = static_cast<double>(options.orders);
  return {.orders_per_second = orders / seconds,
          .cpu_us = (seconds_of(usage.ru_utime) + seconds_of(usage.ru_stime)) * 1e6 / orders,
          .rss_mib = static_cast<double>(usage.ru_maxrss) / kKiBPerMiB,
          .sandbox_us = sandbox_seconds * 1e6 / orders};
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

Timing median_of(const std::vector<Timing>& timings) {
  const auto of = [&](double Timing::*field) {
    std::vector<double> values;
    for (const Timing& timing : timings) values.push_back(timing.*field);
    return median(values);
  };
  return {of(&Timing::orders_per_second), of(&Timing::cpu_us), of(&Timing::rss_mib), of(&Timing::sandbox_us)};
}

void run_peers(const Options& options, Report& report) {
  fmt::print("\n== 7. the peers beside the daemon: {} orders each, a fresh sandbox each, rounds: {}, in turns rotated "
             "each round (the daemon's `once` runs its pulls too, as in scenario 1) ==\n",
             options.orders, options.rounds);
  const std::vector<Contender> all = contenders(options);
  std::vector<const Contender*> running;
  for (const Contender& contender : all) {
    if (contender.skipped.empty()) {
      running.push_back(&contender);
    } else {
      fmt::print("{}: {}\n", contender.name, contender.skipped);
      report.note(fmt::format("peers: {}: {}", contender.name, contender.skipped));
    }
  }
  std::map<const Contender*, std::vector<Timing>> timings;
  for (long round = 0; round < options.rounds; ++round) {
    for (std::size_t turn = 0; turn < running.size(); ++turn) {
      const Contender& contender = *running[(turn + static_cast<std::size_t>(round)) % running.size()];
      const Timing timing = time_contender(options, contender);
      fmt::print("  round {}: {:<48} {:6.0f} orders/s, {:5.0f} us CPU/order, RSS {:5.1f} MiB, sandbox {:3.0f} us/order\n",
                 round + 1, contender.name, timing.orders_per_second, timing.cpu_us, timing.rss_mib, timing.sandbox_us);
      timings[&contender].push_back(timing);
    }
  }

  fmt::print("\nmedians (rounds: {}), {} orders each ({} cores, shared with the sandbox):\n", options.rounds,
             options.orders, sysconf(_SC_NPROCESSORS_ONLN));
  fmt::print("| | orders/s | CPU µs per order | RSS MiB | sandbox CPU µs per order |\n|---|---|---|---|---|\n");
  std::optional<Timing> daemon;
  const Contender* fastest = nullptr;
  Timing fastest_timing;
  for (const Contender* contender : running) {
    const Timing median = median_of(timings[contender]);
    fmt::print("| {} | {:.0f} | {:.0f} | {:.1f} | {:.0f} |\n", contender->name, median.orders_per_second,
               median.cpu_us, median.rss_mib, median.sandbox_us);
    report.add(fmt::format("7. {}", contender->name),
               fmt::format("{:.0f} orders/s, {:.0f} us CPU/order, RSS {:.1f} MiB", median.orders_per_second,
                           median.cpu_us, median.rss_mib),
               "-", std::nullopt);
    if (contender->argv.empty()) {
      daemon = median;
    } else if (!fastest || median.orders_per_second > fastest_timing.orders_per_second) {
      fastest = contender;
      fastest_timing = median;
    }
  }
  if (!daemon) return;
  const Ceiling ceiling = ceiling_of(daemon->cpu_us, daemon->sandbox_us);
  fmt::print("the sandbox's CPU per order with the daemon: {:.0f} us; the machine's ceiling: {}\n", daemon->sandbox_us,
             describe_ceiling(ceiling, daemon->cpu_us, daemon->sandbox_us, daemon->orders_per_second));
  report.add("7. share of the machine's ceiling (medians)",
             fmt::format("{:.0f}% of {:.0f} orders/s ({} cores / ({:.0f} + {:.0f} us))",
                         daemon->orders_per_second / ceiling.orders_per_second * 100, ceiling.orders_per_second,
                         ceiling.cores, daemon->cpu_us, daemon->sandbox_us),
             fmt::format(">= {:.0f}%", kCeilingShareTarget * 100),
             daemon->orders_per_second >= kCeilingShareTarget * ceiling.orders_per_second);
  if (!fastest) {
    report.note("peers: no peer ran; no ratios");
    return;
  }
  const double speed = daemon->orders_per_second / fastest_timing.orders_per_second;
  const double cpu = daemon->cpu_us / fastest_timing.cpu_us;
  fmt::print("the daemon against the fastest peer ({}): {:.2f}x its orders/s, {:.2f}x its CPU per order\n",
             fastest->name, speed, cpu);
  for (const Contender* contender : running) {
    if (contender->argv.empty()) continue;
    const Timing peer = median_of(timings[contender]);
    fmt::print("  against {}: {:.2f}x its orders/s, {:.2f}x its CPU per order, {:.2f}x its RSS\n", contender->name,
               daemon->orders_per_second / peer.orders_per_second, daemon->cpu_us / peer.cpu_us,
               daemon->rss_mib / peer.rss_mib);
  }
  report.add(fmt::format("7. daemon orders/s over the fastest peer's ({})", fastest->name),
             fmt::format("{:.2f}x", speed), fmt::format(">= {:.0f}x", kPeerThroughputTarget),
             speed >= kPeerThroughputTarget);
  report.add("7. daemon CPU per order over that peer's", fmt::format("{:.2f}x", cpu),
             fmt::format("<= {:.1f}x", kPeerCpuTarget), cpu <= kPeerCpuTarget);
}

// --- 8. instructions per created order, counted by callgrind ---------------------------------------

// The instructions `fulfillsyncd once` ran in user space over `count` seeded orders, counted by
// callgrind (the kernel's are not). Repeatable for the same binary and rows whatever else the machine
// is doing, where the CPU time of one run moves by a third: it shows a cut of a few per cent.
std::uint64_t instructions_of_once(const Options& options, const fs::path& valgrind, long count) {
  const fulfillsync::testing::TempDir profiles;
  const fs::path profile = profiles / "callgrind.out";
  WorldOptions jobs = tuned_jobs();
  jobs.daemon_wrapper = {valgrind.string(), "--tool=callgrind", "--callgrind-out-file=" + profile.string()};
  World world(options.bin_dir, jobs);
  seed_timed(world, "INSN-", count);
  world.start_sandbox();
  const Stats before = read_stats(world.sandbox());
  const auto daemon = world.start_daemon("once");
  // callgrind runs the daemon some fifty times slower.
  const auto status = daemon->wait_for_exit(120s + std::chrono::milliseconds(100 * count));
  if (!status) throw world.failure("fulfillsyncd once under callgrind did not finish");
  const std::uint64_t created = read_stats(world.sandbox()).orders_created - before.orders_created;
  if (*status != 0 || created != static_cast<std::uint64_t>(count)) {
    throw world.failure(fmt::format("fulfillsyncd once under callgrind exited with status {} and created {} of {} "
                                    "orders", *status, created, count));
  }
  const std::string text = read_file(profile);
  constexpr std::string_view kTotals = "\ntotals: ";
  const std::size_t totals = text.rfind(kTotals);
  if (totals == std::string::npos) throw std::runtime_error("callgrind wrote no totals to " + profile.string());
  const std::uint64_t instructions = std::stoull(text.substr(totals + kTotals.size()));
  if (!options.callgrind_keep.empty()) {
    fs::create_directories(options.callgrind_keep);
    const fs::path kept = options.callgrind_keep / fmt::format("callgrind.once-{}", count);
    fs::copy_file(profile, kept, fs::copy_options::overwrite_existing);
    fmt::print("kept the profile as {}\n", kept.string());
  }
  return instructions;
}

// Two runs, of N and 3N orders: the difference is what each further order costs, the rest what a run
// costs whatever its size (opening the stores, loading the CA certificates, the last pulls).
void run_instructions(const Options& options, Report& report) {
  const long small = options.instruction_orders;
  const long large = 3 * small;
  fmt::print("\n== 8. instructions per created order: `fulfillsyncd once` under callgrind over {} and {} orders ==\n",
             small, large);
  const auto valgrind = find_program("valgrind");
  if (!valgrind) {
    report.note("8. skipped: valgrind is not installed (apt-get install valgrind)");
    return;
  }
  const std::uint64_t of_small = instructions_of_once(options, *valgrind, small);
  const std::uint64_t of_large = instructions_of_once(options, *valgrind, large);
  const double per_order = static_cast<double>(of_large - std::min(of_large, of_small)) / (large - small);
  const double fixed = static_cast<double>(of_small) - per_order * small;
  fmt::print("{} orders: {} instructions; {} orders: {} instructions\n", small, of_small, large, of_large);
  fmt::print("each further order: {:.0f} instructions; a run whatever its size: {:.0f} million\n", per_order,
             fixed / 1e6);
  report.add("8. instructions per created order (callgrind, user space)", fmt::format("{:.0f}", per_order), "-",
             std::nullopt);
  report.add("8. instructions a run costs whatever its size", fmt::format("{:.0f} million", fixed / 1e6), "-",
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
    "                  [--latency-rate R] [--rebuild-orders N] [--with-pulls yes] [--rounds N]\n"
    "                  [--peer-in-flight 8,32] [--instruction-orders N] [--callgrind-keep DIR] [--quick]\n"
    "                  [--only throughput|peers|calls|memory|latency|restart|rebuild|instructions]\n"
    "--rounds: rounds of the peers' comparison (default 3); --peer-in-flight: the Node.js peer's requests in\n"
    "flight, one contender each (default 8,32)\n"
    "--instruction-orders: the smaller of the two runs under callgrind (default 1000; the other is 3 times it);\n"
    "--callgrind-keep: a directory to keep their profiles in, for callgrind_annotate\n"
    "--quick: --orders 5000 --memory-rows 100000 --latency-seconds 10 --rounds 1 --instruction-orders 500\n"
    "(explicit options win)\n";

std::optional<Options> parse_options(int argc, char** argv) {
  Options options;
  options.bin_dir = fs::read_symlink("/proc/self/exe").parent_path();
  std::optional<long> orders, memory_rows, latency_seconds, rounds, instruction_orders;
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
    } else if (name == "--rounds") {
      rounds = positive(name, value);
    } else if (name == "--peer-in-flight") {
      options.peer_in_flight.clear();
      for (std::size_t start = 0; start <= value.size();) {
        const std::size_t comma = std::min(value.find(',', start), value.size());
        options.peer_in_flight.push_back(positive(name, value.substr(start, comma - start)));
        start = comma + 1;
      }
    } else if (name == "--instruction-orders") {
      instruction_orders = positive(name, value);
    } else if (name == "--callgrind-keep") {
      options.callgrind_keep = value;
    } else if (name == "--only") {
      if (value != "throughput" && value != "peers" && value != "calls" && value != "memory" && value != "latency" &&
          value != "restart" && value != "rebuild" && value != "instructions") {
        throw std::runtime_error(
            "--only takes throughput, peers, calls, memory, latency, restart, rebuild or instructions");
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
  options.rounds = rounds.value_or(quick ? 1 : 3);
  options.instruction_orders = instruction_orders.value_or(quick ? 500 : 1'000);
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  return bench_main<Options>("push_bench", kUsage, argc, argv, parse_options,
                             {{"throughput", run_throughput},
                              {"peers", run_peers},
                              {"calls", run_calls},
                              {"memory", run_memory},
                              {"latency", run_latency},
                              {"restart", run_restart},
                              {"rebuild", run_rebuild},
                              {"instructions", run_instructions}});
}
