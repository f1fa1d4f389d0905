// The pull side end to end: fulfillsyncd reads shipments and tracking back from fulfillsync-sandbox
// on loopback into a merchant's SQLite file and tells the provider the tracking is uploaded. Three
// figures:
//   1. API calls per fully synced order (target 1.03 or fewer, marks in batches of 100, pages of
//      250): `fulfillsyncd run` pushes N orders while the sandbox's clock runs 60 times faster than
//      real time, so that they ship within seconds. An order is fully synced once it is created, its
//      shipment and tracking are in the result tables and its tracking is marked uploaded. Every API
//      request the sandbox counted until then, divided by N, by route;
//   2. shipments written to the merchant database per second by `fulfillsyncd once` with only
//      pull_shipments on, over M shipped orders made at the sandbox (target 5,000 or more);
//   3. the share of the rate budget used with a backlog of pushes when the sandbox enforces L
//      requests per minute and the daemon is configured with L (target 95% or more, and no 429).
//   4. API calls per order in a steady trickle (target 1.02 or fewer): a merchant application writes
//      R orders a minute one per transaction (default 50) while `fulfillsyncd run` syncs them, every
//      job at its defaults scaled to the sandbox's 60x clock; the calls between the end of a warm-up
//      and the end of the run by route, over the orders created meanwhile (as many are fully synced),
//      and the shipments each mark carried.
// Each scenario has its own temp dir, merchant database, checkpoint store and sandbox.
// Usage: pull_bench [--orders N] [--shipments M] [--rate-limit L] [--budget-window S]
//                   [--budget-warmup S] [--calls-cap-seconds S] [--trickle-rate R] [--trickle-seconds S]
//                   [--trickle-warmup S] [--trickle-pull-interval MINUTES] [--trickle-mark-batch N] [--quick]
//                   [--only calls|throughput|budget|trickle]
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>

#include "bench_support.hpp"

namespace {

using namespace fulfillsync::bench;
using namespace std::chrono_literals;

constexpr double kCallsTarget = 1.03;
constexpr double kShipmentsPerSecondTarget = 5000;
constexpr double kBudgetShareTarget = 0.95;
constexpr double kTrickleCallsTarget = 1.02;
constexpr int kPageSize = 250;
constexpr int kMarkBatch = 100;
// The sandbox's clock in scenario 1: one simulated minute per real second.
constexpr double kCallsClockSpeed = 60;
// Enough simulated time for a new order to ship with tracking (5 minutes), and not enough for the
// next step (in transit, an hour later).
constexpr int kShipSeconds = 400;

struct Options {
  long orders = 0;
  long shipments = 0;
  long rate_limit = 0;
  long budget_window = 0;
  long budget_warmup = 10;
  long calls_cap_seconds = 600;
  long trickle_rate = 50;  // orders a simulated minute: a real second at the 60x clock
  long trickle_seconds = 0;
  long trickle_warmup = 0;
  long trickle_pull_minutes = 2;  // pull_shipments' default interval
  long trickle_mark_batch = 100;   // mark_tracking's default batch_size
  std::string only;  // empty: every scenario
  fs::path bin_dir;
};

// --- scenario 1: calls per fully synced order ---------------------------------------------------

// The job defaults at the sandbox's 60x clock. `interval` is real time: pull_shipments' 2m is 2 s,
// and the marks' batch_wait of 5m is 5 s (the last batch of a count that is not a multiple of 100
// waits that long). `overlap` is measured on the provider's timestamps, which are simulated: 1m
// stays 1m. The sweep runs at its shortest (1m; 30m / 60 would be 30 s), so its cost is in the
// count. Nothing here has returns or watched lots. Job figures are saved each second, for
// `fulfillsyncd status` afterwards.
WorldOptions calls_world() {
  WorldOptions world;
  world.jobs = fmt::format(
      "    pull_shipments: {{interval: 2s, page_size: {}, overlap: 1m}}\n"
      "    mark_tracking: {{batch_size: {}, interval: 1s, batch_wait: 5s, sweep_interval: 1m}}\n"
      "    pull_returns: {{enabled: false}}\n"
      "    pull_lots: {{enabled: false}}\n"
      "    pull_stock: {{enabled: false}}\n",
      kPageSize, kMarkBatch);
  world.sync = "  progress_interval: 1s\n";
  world.clock_speed = kCallsClockSpeed;
  world.daemon_log_level = "info";  // the sweeps are logged there, and counted below
  return world;
}

// API requests by what they are for. The sandbox counts routes, not callers: GET /order pages come
// from the pull windows, the sweeps and the lookups of unclear marks alike.
struct CallBreakdown {
  std::uint64_t creates = 0;
  std::uint64_t pages = 0;
  std::uint64_t marks = 0;
  std::uint64_t other = 0;
  std::uint64_t total() const { return creates + pages + marks + other; }
};

CallBreakdown breakdown_of(const std::map<std::string, std::uint64_t>& requests) {
  CallBreakdown calls;
  for (const auto& [key, count] : requests) {
    const std::string route = key.substr(0, key.find(" -> "));
    if (route == "POST /order") {
      calls.creates += count;
    } else if (route == "GET /order") {
      calls.pages += count;
    } else if (route == "POST /shipment:batchUpdateTrackingUpload") {
      calls.marks += count;
    } else {
      calls.other += count;
    }
  }
  return calls;
}

// The fewest calls that could sync `orders` orders: one create each, full pages and full batches,
// and the channel lookup.
double fewest_calls_per_order(long orders) {
  const long pages = (orders + kPageSize - 1) / kPageSize;
  const long batches = (orders + kMarkBatch - 1) / kMarkBatch;
  return static_cast<double>(orders + pages + batches + 1) / static_cast<double>(orders);
}

long count_lines_with(const fs::path& path, std::string_view text) {
  std::istringstream in(read_file(path));
  long count = 0;
  for (std::string line; std::getline(in, line);) count += line.find(text) != std::string::npos ? 1 : 0;
  return count;
}

// The header and the lines of `jobs` from the job table `fulfillsyncd once` and `status` print.
std::string job_table(const std::string& text, const std::vector<std::string_view>& jobs) {
  std::istringstream in(text);
  std::string table;
  for (std::string line; std::getline(in, line);) {
    const bool header = line.find("runs") != std::string::npos && line.find("items") != std::string::npos;
    const bool wanted = std::any_of(jobs.begin(), jobs.end(), [&](std::string_view job) {
      return line.rfind(job, 0) == 0 && line.size() > job.size() && line[job.size()] == ' ';
    });
    if (header || wanted) table += "    " + line + "\n";
  }
  return table.empty() ? "    (no job figures)\n" : table;
}

// One job's line of that table: runs, failed runs, items, seconds of the last run.
struct JobFigures {
  long runs = 0;
  long failed = 0;
  long items = 0;
  double last_run = 0;
};

std::optional<JobFigures> job_figures(const std::string& text, std::string_view job) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(std::string(job) + " ", 0) != 0) continue;
    JobFigures figures;
    std::string name;
    std::istringstream fields(line);
    // "pull_shipments   2   0   20000   0.44s ..."; the `s` after the last run ends its number.
    if (fields >> name >> figures.runs >> figures.failed >> figures.items >> figures.last_run) return figures;
  }
  return std::nullopt;
}

// The daemon's own figures after the run: `fulfillsyncd status` reads them from the checkpoint store.
std::string saved_job_figures(World& world) {
  const auto status = world.start_daemon("status", "status");
  if (!status->wait_for_exit(60s)) return "    (status did not answer within 60 s)\n";
  return job_table(read_file(world.dir() / "status.out"), {"push_orders", "pull_shipments", "mark_tracking"});
}

// Polls four times a second until every order is fully synced or the cap is reached; then freezes
// the daemon (SIGSTOP), so that the requests counted next are those it took to get there.
Progress wait_until_synced(World& world, ChildProcess& daemon, long orders, long cap_seconds) {
  constexpr auto kPoll = 250ms;
  constexpr int kPollsPerLine = 20;  // a progress line every 5 s
  const auto start = Clock::now();
  Progress progress;
  for (int poll = 1;; ++poll) {
    std::this_thread::sleep_until(start + poll * kPoll);
    if (!daemon.running()) throw world.failure("fulfillsyncd run exited while syncing");
    progress = read_progress(world.merchant());
    const bool done = progress.synced >= orders;
    const bool capped = seconds_since(start) >= static_cast<double>(cap_seconds);
    if (done || capped) daemon.send_signal(SIGSTOP);
    if (poll % kPollsPerLine == 0 || done || capped) {
      fmt::print("  {:6.2f} s: created {}, shipments {}, tracking {}, marked {}, fully synced {} of {}\n",
                 seconds_since(start), progress.created, progress.shipments, progress.tracking, progress.marked,
                 progress.synced, orders);
    }
    if (done || capped) return progress;
  }
}

void stop(ChildProcess& daemon) {
  daemon.send_signal(SIGTERM);
  daemon.send_signal(SIGCONT);  // a stopped process takes the SIGTERM once it runs again
  const auto status = daemon.wait_for_exit(60s);
  fmt::print("stopped with SIGTERM: exit status {}\n", status ? std::to_string(*status) : "none after 60 s");
}

void print_calls(const CallBreakdown& calls, long orders) {
  const auto per_order = [&](std::uint64_t count) { return static_cast<double>(count) / static_cast<double>(orders); };
  fmt::print("  {:<36} {:>7}  {:.4f}/order\n", "creates (POST /order)", calls.creates, per_order(calls.creates));
  fmt::print("  {:<36} {:>7}  {:.4f}/order\n", "order list pages (GET /order)", calls.pages, per_order(calls.pages));
  fmt::print("  {:<36} {:>7}  {:.4f}/order\n", "marks (POST /shipment:batchUpdate...)", calls.marks,
             per_order(calls.marks));
  fmt::print("  {:<36} {:>7}  {:.4f}/order\n", "other", calls.other, per_order(calls.other));
}

void run_calls(const Options& options, Report& report) {
  const long orders = options.orders;
  fmt::print("\n== 1. API calls per fully synced order: `fulfillsyncd run` over {} orders, sandbox clock x{:.0f} ==\n",
             orders, kCallsClockSpeed);
  World world(options.bin_dir, calls_world());
  const auto seeding = Clock::now();
  seed_orders(world.merchant(), "PULL-", orders);
  fmt::print("seeded {} orders in {:.1f} s\n", orders, seconds_since(seeding));
  world.start_sandbox();
  const Stats before = read_stats(world.sandbox());
  const auto start = Clock::now();
  const auto daemon = world.start_daemon("run");
  const Progress progress = wait_until_synced(world, *daemon, orders, options.calls_cap_seconds);
  const double elapsed = seconds_since(start);
  const Stats after = read_stats(world.sandbox());
  // The daemon saves its job figures each second; `status` reads them once it has stopped.
  daemon->send_signal(SIGCONT);
  std::this_thread::sleep_for(1500ms);
  stop(*daemon);

  const auto requests = after.requests_since(before);
  const CallBreakdown calls = breakdown_of(requests);
  const long synced = std::max(progress.synced, 1L);
  const double per_order = static_cast<double>(calls.total()) / static_cast<double>(synced);
  fmt::print("{} of {} orders fully synced in {:.1f} s; {} API requests = {:.4f} calls/order "
             "(the fewest possible: {:.4f})\n",
             progress.synced, orders, elapsed, calls.total(), per_order, fewest_calls_per_order(orders));
  print_calls(calls, synced);
  fmt::print("by route:\n");
  for (const auto& [route, count] : requests) fmt::print("  {:<48} {}\n", route, count);
  fmt::print("mark_tracking sweeps: {} (each at least one GET /order page)\n",
             count_lines_with(world.dir() / "daemon.err", "mark_tracking: sweep read"));
  fmt::print("the daemon's job figures 1.5 s later (items of pull_shipments: shipments written, re-reads "
             "included):\n{}",
             saved_job_figures(world));
  world.print_logs();

  const bool complete = progress.synced >= orders;
  if (!complete) {
    report.note(fmt::format("calls: {} of {} orders fully synced within the {} s cap", progress.synced, orders,
                            options.calls_cap_seconds));
  }
  report.add(fmt::format("1. API calls per fully synced order ({} orders)", orders),
             fmt::format("{:.4f} ({} calls / {} orders)", per_order, calls.total(), progress.synced),
             fmt::format("<= {:.2f}", kCallsTarget), complete && per_order <= kCallsTarget);
  report.add("1. of which creates / pages / marks / other",
             fmt::format("{} / {} / {} / {}", calls.creates, calls.pages, calls.marks, calls.other), "-", std::nullopt);
}

// --- scenario 2: shipments written per second -----------------------------------------------------

// Only pull_shipments, at its defaults: nothing to push, nothing marked.
WorldOptions throughput_world() {
  WorldOptions world;
  world.jobs =
      "    push_orders: {enabled: false}\n"
      "    push_cancels: {enabled: false}\n"
      "    push_returns: {enabled: false}\n"
      "    mark_tracking: {mode: never}\n"
      "    pull_returns: {enabled: false}\n"
      "    pull_lots: {enabled: false}\n"
      "    pull_stock: {enabled: false}\n";
  return world;
}

// M orders of the daemon's channel made at the sandbox, then shipped by moving its clock.
void make_shipped_orders(World& world, long count) {
  const auto start = Clock::now();
  admin_request(world.sandbox(), "POST", fmt::format("/_sandbox/orders:bulk?count={}", count));
  admin_request(world.sandbox(), "POST", fmt::format("/_sandbox/clock/advance?seconds={}", kShipSeconds));
  fmt::print("made {} orders at the sandbox and shipped them ({} s of simulated time) in {:.1f} s\n", count,
             kShipSeconds, seconds_since(start));
}

long count_rows(SQLite::Database& db, const std::string& table) {
  return db.execAndGet("SELECT count(*) FROM " + table).getInt64();
}

void run_throughput(const Options& options, Report& report) {
  const long count = options.shipments;
  fmt::print("\n== 2. shipments written per second: `fulfillsyncd once` with only pull_shipments, {} shipments ==\n",
             count);
  World world(options.bin_dir, throughput_world());
  world.start_sandbox();
  make_shipped_orders(world, count);
  const Stats before = read_stats(world.sandbox());
  const double sandbox_cpu = cpu_seconds_of(world.sandbox().process().pid());
  const auto start = Clock::now();
  const auto daemon = world.start_daemon("once");
  // Generous: 1,000 shipments/s is a fifth of the target.
  const auto limit = 60s + std::chrono::milliseconds(count);
  const auto status = daemon->wait_for_exit(limit);
  const double seconds = seconds_since(start);
  if (!status) throw world.failure(fmt::format("fulfillsyncd once did not finish within {:.0f} s", seconds));
  const double sandbox_seconds = cpu_seconds_of(world.sandbox().process().pid()) - sandbox_cpu;
  const Stats after = read_stats(world.sandbox());

  const long shipments = count_rows(world.merchant(), "fulfillsync_shipments");
  const long tracking = count_rows(world.merchant(), "fulfillsync_tracking");
  const double per_second = static_cast<double>(count) / seconds;
  const double user = seconds_of(daemon->usage().ru_utime);
  const double sys = seconds_of(daemon->usage().ru_stime);
  fmt::print("{} shipments in {:.2f} s = {:.0f} shipments/s (exit status {}); the merchant database holds {} "
             "shipments, {} tracking rows\n",
             count, seconds, per_second, *status, shipments, tracking);
  fmt::print("daemon CPU: {:.2f} s user + {:.2f} s system = {:.1f} us/shipment ({:.0f}% of one core); peak RSS "
             "{:.1f} MiB\n",
             user, sys, (user + sys) * 1e6 / static_cast<double>(count), (user + sys) / seconds * 100,
             static_cast<double>(daemon->usage().ru_maxrss) / kKiBPerMiB);
  fmt::print("sandbox CPU meanwhile: {:.2f} s = {:.1f} us/shipment ({:.0f}% of one core)\n", sandbox_seconds,
             sandbox_seconds * 1e6 / static_cast<double>(count), sandbox_seconds / seconds * 100);
  const auto requests = after.requests_since(before);
  fmt::print("requests ({} pages of {} would do):\n", (count + kPageSize - 1) / kPageSize, kPageSize);
  for (const auto& [route, made] : requests) fmt::print("  {:<48} {}\n", route, made);
  const std::string summary = read_file(world.dir() / "daemon.out");
  fmt::print("the daemon's own figures (items: shipments written, re-reads included):\n{}",
             job_table(summary, {"pull_shipments"}));
  if (const auto walks = job_figures(summary, "pull_shipments"); walks && walks->runs > 0 && walks->last_run > 0) {
    const double per_walk = static_cast<double>(walks->items) / static_cast<double>(walks->runs);
    fmt::print("that is {} walks of the window for {} shipments; the last walk took {:.2f} s: {:.0f} shipments/s "
               "within a walk, if the walks were alike ({:.0f} shipments each)\n",
               walks->runs, count, walks->last_run, per_walk / walks->last_run, per_walk);
  }
  world.print_logs();

  const bool complete = *status == 0 && shipments == count && tracking == count;
  if (!complete) {
    report.note(fmt::format("throughput: exit status {}, {} of {} shipments and {} tracking rows written", *status,
                            shipments, count, tracking));
  }
  report.add(fmt::format("2. shipments written/s (once, {} shipments)", count),
             fmt::format("{:.0f} shipments/s ({:.2f} s)", per_second, seconds),
             fmt::format(">= {:.0f} shipments/s", kShipmentsPerSecondTarget),
             complete && per_second >= kShipmentsPerSecondTarget);
  report.add("2. daemon CPU per shipment",
             fmt::format("{:.1f} us ({:.2f} s user + {:.2f} s sys)", (user + sys) * 1e6 / static_cast<double>(count),
                         user, sys),
             "-", std::nullopt);
}

// --- scenario 3: share of the rate budget ---------------------------------------------------------

// Both sides know the limit; every job at its defaults.
WorldOptions budget_world(long limit) {
  WorldOptions world;
  world.requests_per_minute = static_cast<int>(limit);
  world.rate_limit = std::to_string(limit);
  return world;
}

// The sandbox's counts once a second from the daemon's start, `seconds` of them after the first.
std::vector<Stats> sample_stats(World& world, ChildProcess& daemon, long seconds) {
  std::vector<Stats> samples{read_stats(world.sandbox())};
  const auto start = Clock::now();
  for (long tick = 1; tick <= seconds; ++tick) {
    std::this_thread::sleep_until(start + std::chrono::seconds(tick));
    if (!daemon.running()) throw world.failure("fulfillsyncd run exited during the budget run");
    samples.push_back(read_stats(world.sandbox()));
  }
  return samples;
}

// The longest run of whole seconds in which the sandbox executed nothing. With a backlog waiting, a
// daemon that paces its sends has none; one that spends its budget in bursts idles between them.
long longest_idle_seconds(const std::vector<Stats>& samples) {
  long longest = 0;
  long current = 0;
  for (std::size_t at = 1; at < samples.size(); ++at) {
    current = samples[at].requests_total == samples[at - 1].requests_total ? current + 1 : 0;
    longest = std::max(longest, current);
  }
  return longest;
}

// Requests executed in each 5 s of the run, so that bursts show.
void print_timeline(const std::vector<Stats>& samples) {
  constexpr std::size_t kStep = 5;
  std::string line;
  for (std::size_t at = kStep; at < samples.size(); at += kStep) {
    line += fmt::format(" {}", samples[at].requests_total - samples[at - kStep].requests_total);
  }
  fmt::print("requests executed per 5 s from the daemon's start:{}\n", line);
}

void run_budget(const Options& options, Report& report) {
  const long limit = options.rate_limit;
  const long window = options.budget_window;
  const long warmup = options.budget_warmup;
  // More than the run can send: the backlog must outlast the window.
  const long backlog = limit * std::max(3L, (warmup + window) / 60 + 2);
  fmt::print("\n== 3. rate budget: sandbox --rate-limit {0}, requests_per_minute {0}, {1} orders waiting; "
             "{2} s window after {3} s ==\n",
             limit, backlog, window, warmup);
  World world(options.bin_dir, budget_world(limit));
  seed_orders(world.merchant(), "BUDGET-", backlog);
  world.start_sandbox();
  const auto daemon = world.start_daemon("run");
  const std::vector<Stats> samples = sample_stats(world, *daemon, warmup + window);
  stop(*daemon);

  const Stats& first = samples.front();
  const Stats& opened = samples[static_cast<std::size_t>(warmup)];
  const Stats& closed = samples.back();
  const std::uint64_t executed = closed.requests_total - opened.requests_total;
  const std::uint64_t limited = closed.rate_limited - opened.rate_limited;
  const double allowed = static_cast<double>(limit) * static_cast<double>(window) / 60.0;
  const double share = static_cast<double>(executed) / allowed;
  print_timeline(samples);
  fmt::print("in the window: {} requests executed of {:.0f} allowed = {:.1f}%; {} answered 429\n", executed, allowed,
             share * 100, limited);
  fmt::print("since the start: {} executed, {} answered 429, {} of {} orders created\n",
             closed.requests_total - first.requests_total, closed.rate_limited - first.rate_limited,
             closed.orders_created - first.orders_created, backlog);
  const long idle = longest_idle_seconds(samples);
  fmt::print("longest stretch with nothing executed while orders waited: {} s\n", idle);
  fmt::print("requests in the window by route:\n");
  for (const auto& [route, made] : closed.requests_since(opened)) fmt::print("  {:<48} {}\n", route, made);
  world.print_logs();

  if (closed.orders_created - first.orders_created >= static_cast<std::uint64_t>(backlog)) {
    report.note("budget: the backlog ran out before the window closed; the share understates the daemon");
  }
  report.add(fmt::format("3. share of the rate budget used ({}/min, {} s)", limit, window),
             fmt::format("{:.1f}% ({} of {:.0f})", share * 100, executed, allowed),
             fmt::format(">= {:.0f}%", kBudgetShareTarget * 100), share >= kBudgetShareTarget);
  report.add("3. longest stretch with nothing sent (backlog waiting)", fmt::format("{} s", idle), "-",
             std::nullopt);
  report.add("3. 429 answers in the window", std::to_string(limited), "0", limited == 0);
}

// --- scenario 4: calls per order in a steady trickle -----------------------------------------------

// Every job at its defaults, scaled to the sandbox's 60x clock like soak_bench: pull_shipments' 2m
// is 2 s, mark_tracking's 10 s interval 167 ms and its 5m batch_wait 5 s; `overlap` stays 1m (the
// provider's timestamps are simulated); the sweep runs every minute, the shortest the loader takes
// (its 30m would be 30 s). The pushes keep their real-time interval: a create is one call however
// often they poll. Nothing here has returns or watched lots.
// `pull_minutes`: pull_shipments' interval in simulated minutes (its default, 2, unless
// --trickle-pull-interval asks for another, to show what a longer one saves); `mark_batch`:
// mark_tracking's batch_size (its default, 100, unless --trickle-mark-batch asks for another). Job
// figures are saved each second, so that `status` counts the windows read; the sweeps are logged at info.
WorldOptions trickle_world(long pull_minutes, long mark_batch) {
  WorldOptions world;
  world.jobs = fmt::format(
      "    pull_shipments: {{interval: {}s}}\n"
      "    mark_tracking: {{interval: 167ms, batch_size: {}, batch_wait: 5s, sweep_interval: 1m}}\n"
      "    pull_returns: {{interval: 5s}}\n"
      "    pull_lots: {{interval: 15s}}\n",
      pull_minutes, mark_batch);
  world.sync = "  progress_interval: 1s\n";
  world.clock_speed = kCallsClockSpeed;
  world.daemon_log_level = "info";
  return world;
}

// pull_shipments' windows so far, from the job figures the daemon saved (`fulfillsyncd status`).
long pull_windows(World& world, const std::string& log_name) {
  const auto status = world.start_daemon("status", log_name);
  if (!status->wait_for_exit(60s)) return 0;
  const auto figures = job_figures(read_file(world.dir() / (log_name + ".out")), "pull_shipments");
  return figures ? figures->runs : 0;
}

void run_trickle(const Options& options, Report& report) {
  const double rate = static_cast<double>(options.trickle_rate);  // orders a real second at x60
  fmt::print("\n== 4. API calls per fully synced order in a trickle: {} orders a minute, one per transaction, "
             "`fulfillsyncd run` with the defaults on a x{:.0f} clock, {} s ({} min simulated), counted after "
             "{} s ==\n",
             options.trickle_rate, kCallsClockSpeed, options.trickle_seconds, options.trickle_seconds,
             options.trickle_warmup);
  World world(options.bin_dir, trickle_world(options.trickle_pull_minutes, options.trickle_mark_batch));
  world.start_sandbox();
  const auto daemon = world.start_daemon("run");
  OrderWriter writer(world.merchant());
  const auto start = Clock::now();
  const auto warm = start + std::chrono::seconds(options.trickle_warmup);
  const auto end = start + std::chrono::seconds(options.trickle_seconds);
  std::optional<Stats> opened;
  Progress at_open;
  long windows_at_open = 0, sweeps_at_open = 0;
  auto next_line = start + 10s;
  long written = 0;
  while (Clock::now() < end) {
    if (!daemon->running()) throw world.failure("fulfillsyncd run exited during the trickle");
    for (const auto due = static_cast<long>(seconds_since(start) * rate); written < due;) {
      ++written;
      writer.insert(reference_of("TRICKLE-", written), written);
    }
    if (!opened && Clock::now() >= warm) {
      opened = read_stats(world.sandbox());
      at_open = read_progress(world.merchant());
      windows_at_open = pull_windows(world, "status-open");
      sweeps_at_open = count_lines_with(world.dir() / "daemon.err", "mark_tracking: sweep read");
    }
    if (Clock::now() >= next_line) {
      const Progress progress = read_progress(world.merchant());
      fmt::print("  {:4.0f} s: written {}, created {}, tracking {}, marked {}, fully synced {}\n", seconds_since(start),
                 written, progress.created, progress.tracking, progress.marked, progress.synced);
      next_line += 10s;
    }
    std::this_thread::sleep_for(20ms);
  }
  const Stats closed = read_stats(world.sandbox());
  const Progress at_close = read_progress(world.merchant());
  const long windows = pull_windows(world, "status-close") - windows_at_open;
  const long sweeps = count_lines_with(world.dir() / "daemon.err", "mark_tracking: sweep read") - sweeps_at_open;
  stop(*daemon);
  if (!opened) throw world.failure("the trickle ended before its warm-up did");

  // Per order created in the window: in a steady trickle as many are fully synced, but the count of
  // those moves in steps of a whole mark batch, so it makes a noisy divisor.
  const CallBreakdown calls = breakdown_of(closed.requests_since(*opened));
  const long orders = static_cast<long>(calls.creates);
  const long synced = at_close.synced - at_open.synced;
  const long marked = at_close.marked - at_open.marked;
  if (orders <= 0 || synced <= 0) throw world.failure("no order was created or fully synced after the warm-up");
  const double per_order = static_cast<double>(calls.total()) / static_cast<double>(orders);
  const double per_mark = calls.marks > 0 ? static_cast<double>(marked) / static_cast<double>(calls.marks) : 0;
  fmt::print("from {} s to {} s: {} orders created, {} fully synced; {} API requests = {:.4f} calls/order created "
             "({:.4f} per order fully synced)\n",
             options.trickle_warmup, options.trickle_seconds, orders, synced, calls.total(), per_order,
             static_cast<double>(calls.total()) / static_cast<double>(synced));
  print_calls(calls, orders);
  fmt::print("shipments marked {} in {} marks: {:.1f} a mark\n", marked, calls.marks, per_mark);
  // The pages are pull_shipments' windows and the marks' sweeps (at least a page each).
  const long window_pages = static_cast<long>(calls.pages) - sweeps;
  fmt::print("GET /order: {} mark sweeps, {} windows of pull_shipments (every {} min simulated): {} pages, {:.2f} a "
             "window, one window per {:.0f} orders created\n",
             sweeps, windows, options.trickle_pull_minutes, window_pages,
             windows > 0 ? static_cast<double>(window_pages) / static_cast<double>(windows) : 0.0,
             windows > 0 ? static_cast<double>(orders) / static_cast<double>(windows) : 0.0);
  fmt::print("by route:\n");
  for (const auto& [route, count] : closed.requests_since(*opened)) fmt::print("  {:<48} {}\n", route, count);
  world.print_logs();

  const auto per = [&](std::uint64_t count) { return static_cast<double>(count) / static_cast<double>(orders); };
  report.add(fmt::format("4. API calls per order, trickle of {}/min ({} orders created, {} fully synced)",
                         options.trickle_rate, orders, synced),
             fmt::format("{:.4f} (creates {:.3f}, pages {:.3f}, marks {:.3f}, other {:.3f})", per_order,
                         per(calls.creates), per(calls.pages), per(calls.marks), per(calls.other)),
             fmt::format("<= {:.2f}", kTrickleCallsTarget), per_order <= kTrickleCallsTarget);
  report.add("4. pull_shipments pages a window (windows; sweeps)",
             fmt::format("{:.2f} ({} windows; {} sweeps)",
                         windows > 0 ? static_cast<double>(window_pages) / static_cast<double>(windows) : 0.0,
                         windows, sweeps),
             "-", std::nullopt);
  report.add("4. shipments a mark", fmt::format("{:.1f} ({} in {} marks)", per_mark, marked, calls.marks), "-",
             std::nullopt);
}

// --- the command line -----------------------------------------------------------------------------

constexpr const char* kUsage =
    "Usage: pull_bench [--orders N] [--shipments M] [--rate-limit L] [--budget-window S] [--budget-warmup S]\n"
    "                  [--calls-cap-seconds S] [--trickle-rate R] [--trickle-seconds S] [--trickle-warmup S]\n"
    "                  [--trickle-pull-interval MINUTES] [--trickle-mark-batch N] [--quick]\n"
    "                  [--only calls|throughput|budget|trickle]\n"
    "defaults: --orders 10000 --shipments 50000 --rate-limit 600 --budget-window 60 --budget-warmup 10\n"
    "          --trickle-rate 50 (orders a minute) --trickle-seconds 200 --trickle-warmup 80 (a second is a\n"
    "          minute at the sandbox's 60x clock: past the warm-up, orders shipped an hour earlier change again)\n"
    "          --trickle-pull-interval 2 (pull_shipments' interval in simulated minutes: its default)\n"
    "          --trickle-mark-batch 100 (mark_tracking's batch_size: its default)\n"
    "--quick: --orders 2000 --shipments 10000 --rate-limit 300 --budget-window 30 --trickle-seconds 100\n"
    "         --trickle-warmup 40 (explicit options win)\n";

std::optional<Options> parse_options(int argc, char** argv) {
  Options options;
  options.bin_dir = fs::read_symlink("/proc/self/exe").parent_path();
  std::optional<long> orders, shipments, rate_limit, budget_window, trickle_seconds, trickle_warmup;
  const auto parsed = parse_command_line(argc, argv, kUsage, [&](const std::string& name, const std::string& value) {
    if (name == "--orders") {
      orders = positive(name, value);
    } else if (name == "--shipments") {
      shipments = positive(name, value);
    } else if (name == "--rate-limit") {
      rate_limit = positive(name, value);
    } else if (name == "--budget-window") {
      budget_window = positive(name, value);
    } else if (name == "--budget-warmup") {
      options.budget_warmup = positive(name, value);
    } else if (name == "--calls-cap-seconds") {
      options.calls_cap_seconds = positive(name, value);
    } else if (name == "--trickle-rate") {
      options.trickle_rate = positive(name, value);
    } else if (name == "--trickle-seconds") {
      trickle_seconds = positive(name, value);
    } else if (name == "--trickle-pull-interval") {
      options.trickle_pull_minutes = positive(name, value);
    } else if (name == "--trickle-mark-batch") {
      options.trickle_mark_batch = positive(name, value);
    } else if (name == "--trickle-warmup") {
      trickle_warmup = positive(name, value);
    } else if (name == "--only") {
      if (value != "calls" && value != "throughput" && value != "budget" && value != "trickle") {
        throw std::runtime_error("--only takes calls, throughput, budget or trickle");
      }
      options.only = value;
    } else {
      return false;
    }
    return true;
  });
  if (!parsed) return std::nullopt;
  const bool quick = *parsed;
  options.orders = orders.value_or(quick ? 2'000 : 10'000);
  options.shipments = shipments.value_or(quick ? 10'000 : 50'000);
  options.rate_limit = rate_limit.value_or(quick ? 300 : 600);
  options.budget_window = budget_window.value_or(quick ? 30 : 60);
  options.trickle_seconds = trickle_seconds.value_or(quick ? 100 : 200);
  options.trickle_warmup = trickle_warmup.value_or(quick ? 40 : 80);
  if (options.trickle_seconds <= options.trickle_warmup) {
    throw std::runtime_error("--trickle-seconds must be longer than --trickle-warmup");
  }
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  return bench_main<Options>("pull_bench", kUsage, argc, argv, parse_options,
                             {{"calls", run_calls},
                              {"throughput", run_throughput},
                              {"budget", run_budget},
                              {"trickle", run_trickle}});
}
