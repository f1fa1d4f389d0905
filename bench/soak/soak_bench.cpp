// Soak: `fulfillsyncd run` under a steady load for a long time (10 minutes by default), then idle.
// A merchant application writes orders at a steady rate, the sandbox fulfils them on a 60x clock, and
// the daemon pushes them, pulls their shipments and tracking back and marks them uploaded, with every
// job at its defaults scaled to that clock. Prints the daemon's resident memory over time, its growth
// after the warm-up (by default the first half of the run), and the CPU it spent per fully synced
// order: over the run, in minutes 2 to 5 and in the last half (a steady flow must cost the same per
// order late as early). Before the load, an idle phase (nothing written yet) counts the daemon's API
// calls (each minute on the 60x clock is an hour of the defaults) and its CPU.
// A program that prints figures, not a test.
//   build/bin/soak_bench [--minutes N] [--warmup-minutes W] [--rate R] [--idle-minutes I] [--quick]
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bench_support.hpp"

namespace {

using namespace fulfillsync::bench;
using namespace std::chrono_literals;

constexpr double kGrowthTargetMiB = 1.0;
// Resident memory climbs over the first two minutes of the default load, as caches fill (SQLite's page
// caches, 2 MiB a connection, are the likeliest), then stays flat (measured from 110 s on); growth after
// a shorter warm-up is shown, not judged.
constexpr long kShortestJudgedWarmupMinutes = 2;
constexpr auto kSampleEvery = 10s;
constexpr double kCpuPerOrderTargetUs = 250;
constexpr double kLateDriftTarget = 0.10;  // the last half against minutes 2-5
constexpr double kIdleCallsPerHourTarget = 40;
constexpr double kIdleCorePercentTarget = 0.2;

struct Options {
  long minutes = 10;
  std::optional<long> warmup_minutes;  // default: half the run
  long rate = 20;  // orders a second
  long idle_minutes = 2;  // each an hour of the defaults on the 60x clock
  fs::path bin_dir;
  std::string only;  // empty: its one scenario
};

struct Sample {
  double seconds;
  double rss_mib;
  double cpu_seconds;  // the daemon's, user and system
  Progress progress;
};

// The defaults at the sandbox's 60x clock: pull_shipments' 2m is 2 s, pull_returns' 5m 5 s, pull_lots'
// 15m 15 s (no returns and no watched inventory here: they call nothing); mark_tracking runs every
// second (its 10 s would be 0.17 s) and sweeps every minute, the shortest the loader takes (its 30m
// would be 30 s: the idle phase counts one sweep an hour where the defaults make two).
WorldOptions soak_world() {
  WorldOptions world;
  world.jobs =
      "    pull_shipments: {interval: 2s}\n"
      "    mark_tracking: {interval: 1s, sweep_interval: 1m}\n"
      "    pull_returns: {interval: 5s}\n"
      "    pull_lots: {interval: 15s}\n";
  world.clock_speed = 60;
  return world;
}

// Daemon CPU per order fully synced between two moments of the run (the samples nearest after them).
std::optional<double> cpu_per_order_between(const std::vector<Sample>& samples, double from, double to) {
  const auto at = [&](double seconds) {
    return std::find_if(samples.begin(), samples.end(), [&](const Sample& s) { return s.seconds >= seconds - 1; });
  };
  const auto first = at(from);
  auto last = at(to);
  if (last == samples.end()) last = samples.empty() ? samples.end() : samples.end() - 1;
  if (first == samples.end() || last == samples.end() || last->progress.synced <= first->progress.synced) {
    return std::nullopt;
  }
  return (last->cpu_seconds - first->cpu_seconds) * 1e6 /
         static_cast<double>(last->progress.synced - first->progress.synced);
}

struct Idle {
  double seconds = 0, cpu_seconds = 0;
  std::uint64_t calls = 0, worst_hour_calls = 0;
  std::string calls_by_route;
};

// Nothing to do: the daemon started on an empty merchant table and an empty sandbox, its calls and CPU
// over `idle_minutes`, an hour of the defaults a minute.
Idle measure_idle(const Options& options, World& world, ChildProcess& daemon) {
  Idle idle;
  fmt::print("idle: nothing to do; measuring {} min (each an hour of the defaults at x60)\n", options.idle_minutes);
  const Stats first = read_stats(world.sandbox());
  const double cpu_before = cpu_seconds_of(daemon.pid());
  const auto start = Clock::now();
  Stats hour_began = first;
  for (long minute = 1; minute <= options.idle_minutes; ++minute) {
    std::this_thread::sleep_until(start + std::chrono::minutes(minute));
    if (!daemon.running()) throw world.failure("fulfillsyncd stopped during the idle phase");
    const Stats now = read_stats(world.sandbox());
    const std::uint64_t calls = now.requests_total - hour_began.requests_total;
    fmt::print("idle: hour {}: {} calls\n", minute, calls);
    idle.worst_hour_calls = std::max(idle.worst_hour_calls, calls);
    hour_began = now;
  }
  idle.seconds = seconds_since(start);
  idle.cpu_seconds = cpu_seconds_of(daemon.pid()) - cpu_before;
  idle.calls = hour_began.requests_total - first.requests_total;
  for (const auto& [route, count] : hour_began.requests_since(first)) {
    idle.calls_by_route += fmt::format("{}{} {}", idle.calls_by_route.empty() ? "" : ", ", count, route);
  }
  if (idle.calls_by_route.empty()) idle.calls_by_route = "none";
  return idle;
}

void run_soak(const Options& options, Report& report) {
  const auto duration = std::chrono::minutes(options.minutes);
  fmt::print("\n== soak: `fulfillsyncd run` for {} min, {} orders/s one per transaction, sandbox clock x60 ==\n",
             options.minutes, options.rate);
  World world(options.bin_dir, soak_world());
  world.start_sandbox();
  const auto daemon = world.start_daemon("run");
  // The start's own calls (GET /channel, the first windows) before the idle phase begins.
  std::this_thread::sleep_for(5s);
  const Idle idle = measure_idle(options, world, *daemon);
  OrderWriter writer(world.merchant());

  std::vector<Sample> samples;
  const auto start = Clock::now();
  auto next_sample = start + kSampleEvery;
  long written = 0;
  while (Clock::now() < start + duration) {
    if (!daemon->running()) throw world.failure("fulfillsyncd stopped during the soak");
    // Catch up with the rate: the writer is never behind by more than a moment.
    const double elapsed = seconds_since(start);
    for (const auto due = static_cast<long>(elapsed * static_cast<double>(options.rate)); written < due;) {
      ++written;
      writer.insert(reference_of("SOAK-", written), written);
    }
    if (Clock::now() >= next_sample) {
      const Sample sample{elapsed, static_cast<double>(status_kib(daemon->pid(), "VmRSS")) / kKiBPerMiB,
                          cpu_seconds_of(daemon->pid()), read_progress(world.merchant())};
      // CPU per order synced since the previous sample: whether the work per order grows with the stores.
      const Sample previous = samples.empty() ? Sample{0, 0, 0, {}} : samples.back();
      const long synced = sample.progress.synced - previous.progress.synced;
      const double cpu = sample.cpu_seconds - previous.cpu_seconds;
      const std::string per_order = synced > 0 ? fmt::format("{:.0f}", cpu * 1e6 / static_cast<double>(synced)) : "-";
      fmt::print("{:6.0f} s  RSS {:6.1f} MiB  written {:6}  fully synced {:6}  CPU {:6.1f} s, {} µs/order since\n",
                 sample.seconds, sample.rss_mib, written, sample.progress.synced, sample.cpu_seconds, per_order);
      samples.push_back(sample);
      next_sample += kSampleEvery;
    }
    std::this_thread::sleep_for(20ms);
  }
  const double daemon_cpu = cpu_seconds_of(daemon->pid());
  const Progress end = read_progress(world.merchant());
  daemon->send_signal(SIGTERM);
  const auto status = daemon->wait_for_exit(60s);
  fmt::print("stopped with SIGTERM: exit status {}\n", status ? std::to_string(*status) : "none after 60 s");
  world.print_logs();

  // Growth after the warm-up: the highest sample since, against the first sample at its end.
  const long warmup_minutes = options.warmup_minutes.value_or(options.minutes / 2);
  const double warmup_seconds = static_cast<double>(warmup_minutes) * 60;
  const auto warm = std::find_if(samples.begin(), samples.end(),
                                 [&](const Sample& sample) { return sample.seconds >= warmup_seconds; });
  if (warm == samples.end() || warm + 1 == samples.end()) {
    report.note("soak: too short for the warm-up; no growth figure");
  } else {
    double highest = warm->rss_mib;
    for (auto it = warm; it != samples.end(); ++it) highest = std::max(highest, it->rss_mib);
    const double growth = highest - warm->rss_mib;
    report.add(fmt::format("soak: RSS growth after {} min of warm-up ({} min run)", warmup_minutes,
                           options.minutes),
               fmt::format("{:+.2f} MiB ({:.1f} at {:.0f} s, highest {:.1f}, last {:.1f})", growth, warm->rss_mib,
                           warm->seconds, highest, samples.back().rss_mib),
               fmt::format("< {:.0f} MiB", kGrowthTargetMiB),
               warmup_minutes >= kShortestJudgedWarmupMinutes ? std::optional<bool>(growth < kGrowthTargetMiB)
                                                              : std::nullopt);
    report.add("soak: RSS over the whole run",
               fmt::format("{:.1f} MiB at {:.0f} s to {:.1f} MiB", samples.front().rss_mib, samples.front().seconds,
                           samples.back().rss_mib),
               "-", std::nullopt);
  }
  const long synced = std::max(end.synced, 1L);
  const double per_order = daemon_cpu * 1e6 / static_cast<double>(synced);
  report.add("soak: daemon CPU per fully synced order",
             fmt::format("{:.0f} µs ({:.1f} s CPU, {} of {} orders fully synced)", per_order, daemon_cpu, end.synced,
                         written),
             fmt::format("≤ {:.0f} µs", kCpuPerOrderTargetUs), per_order <= kCpuPerOrderTargetUs);
  const auto early = cpu_per_order_between(samples, 120, 300);
  const auto late = cpu_per_order_between(samples, static_cast<double>(options.minutes) * 30,
                                          static_cast<double>(options.minutes) * 60);
  if (early && late && options.minutes >= 10) {
    const double drift = *late / *early - 1;
    report.add("soak: CPU per order, last half against minutes 2-5",
               fmt::format("{:.0f} µs against {:.0f} µs ({:+.1f} %)", *late, *early, drift * 100),
               fmt::format("within {:.0f} %", kLateDriftTarget * 100), std::abs(drift) <= kLateDriftTarget);
  } else {
    report.note("soak: the drift of CPU per order (last half against minutes 2-5) needs --minutes 10 or more");
  }
  const double hours = idle.seconds / 60;  // at the 60x clock, a minute is an hour of the defaults
  report.add("soak: idle, API calls an hour of the defaults (the worst hour; each minute at x60 is one)",
             fmt::format("{} ({} in {:.0f} h: {})", idle.worst_hour_calls, idle.calls, hours, idle.calls_by_route),
             fmt::format("≤ {:.0f}", kIdleCallsPerHourTarget), idle.worst_hour_calls <= kIdleCallsPerHourTarget);
  const double core_percent = idle.cpu_seconds / idle.seconds * 100;
  report.add("soak: idle, daemon CPU (pulls at x60: an upper bound)",
             fmt::format("{:.3f} % of one core ({:.2f} s in {:.0f} s)", core_percent, idle.cpu_seconds, idle.seconds),
             fmt::format("< {:.1f} %", kIdleCorePercentTarget), core_percent < kIdleCorePercentTarget);
}

constexpr const char* kUsage =
    "Usage: soak_bench [--minutes N] [--warmup-minutes W] [--rate R] [--idle-minutes I] [--quick]\n"
    "--warmup-minutes: default half of --minutes; --idle-minutes: default 2 (an hour of the defaults each);\n"
    "--quick: --minutes 2 --idle-minutes 1 (explicit options win)\n";

std::optional<Options> parse_options(int argc, char** argv) {
  Options options;
  options.bin_dir = fs::read_symlink("/proc/self/exe").parent_path();
  std::optional<long> minutes, warmup, idle;
  const auto quick = parse_command_line(argc, argv, kUsage, [&](const std::string& name, const std::string& value) {
    if (name == "--minutes") {
      minutes = positive(name, value);
    } else if (name == "--warmup-minutes") {
      warmup = positive(name, value);
    } else if (name == "--idle-minutes") {
      idle = positive(name, value);
    } else if (name == "--rate") {
      options.rate = positive(name, value);
    } else {
      return false;
    }
    return true;
  });
  if (!quick) return std::nullopt;
  options.minutes = minutes.value_or(*quick ? 2 : options.minutes);
  options.warmup_minutes = warmup;
  options.idle_minutes = idle.value_or(*quick ? 1 : options.idle_minutes);
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  return bench_main<Options>("soak_bench", kUsage, argc, argv, parse_options, {{"soak", run_soak}});
}
