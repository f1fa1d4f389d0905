// Soak: `fulfillsyncd run` under a steady load for a long time (10 minutes by default). A merchant
// application writes orders at a steady rate, the sandbox fulfils them on a 60x clock, and the daemon
// pushes them, pulls their shipments and tracking back and marks them uploaded, with every job at its
// defaults scaled to that clock. Prints the daemon's resident memory over time, its growth after the
// warm-up (by default the first half of the run), and the CPU it spent per fully synced order. A
// program that prints figures, not a test.
//   build/bin/soak_bench [--minutes N] [--warmup-minutes W] [--rate R] [--quick]
#include <signal.h>

#include <algorithm>
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

struct Options {
  long minutes = 10;
  std::optional<long> warmup_minutes;  // default: half the run
  long rate = 20;  // orders a second
  fs::path bin_dir;
  std::string only;  // empty: its one scenario
};

struct Sample {
  double seconds;
  double rss_mib;
  double cpu_seconds;  // the daemon's, user and system
  Progress progress;
};

// The defaults at the sandbox's 60x clock, as pull_bench's calls scenario: pull_shipments' 2m is 2 s,
// the marks' 1m is 1 s; returns and lots have nothing to do here.
WorldOptions soak_world() {
  WorldOptions world;
  world.jobs =
      "    pull_shipments: {interval: 2s}\n"
      "    mark_tracking: {interval: 1s, sweep_interval: 1m}\n"
      "    pull_returns: {enabled: false}\n"
      "    pull_lots: {enabled: false}\n";
  world.clock_speed = 60;
  return world;
}

void run_soak(const Options& options, Report& report) {
  const auto duration = std::chrono::minutes(options.minutes);
  fmt::print("\n== soak: `fulfillsyncd run` for {} min, {} orders/s one per transaction, sandbox clock x60 ==\n",
             options.minutes, options.rate);
  World world(options.bin_dir, soak_world());
  world.start_sandbox();
  const auto daemon = world.start_daemon("run");
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
  report.add("soak: daemon CPU per fully synced order",
             fmt::format("{:.0f} µs ({:.1f} s CPU, {} of {} orders fully synced)",
                         daemon_cpu * 1e6 / static_cast<double>(synced), daemon_cpu, end.synced, written),
             "-", std::nullopt);
}

constexpr const char* kUsage =
    "Usage: soak_bench [--minutes N] [--warmup-minutes W] [--rate R] [--quick]\n"
    "--warmup-minutes: default half of --minutes; --quick: --minutes 2 (explicit options win)\n";

std::optional<Options> parse_options(int argc, char** argv) {
  Options options;
  options.bin_dir = fs::read_symlink("/proc/self/exe").parent_path();
  std::optional<long> minutes, warmup;
  const auto quick = parse_command_line(argc, argv, kUsage, [&](const std::string& name, const std::string& value) {
    if (name == "--minutes") {
      minutes = positive(name, value);
    } else if (name == "--warmup-minutes") {
      warmup = positive(name, value);
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
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  return bench_main<Options>("soak_bench", kUsage, argc, argv, parse_options, {{"soak", run_soak}});
}
