#pragma once
// What the end-to-end benchmarks (push_bench, pull_bench) share: a sandbox and a daemon in a temp dir
// of their own (started with the tests' ChildProcess and Sandbox), the sandbox's admin path, seeding
// a merchant database, and the summary table. Benchmarks print figures; nothing here asserts on time.
#include <sys/time.h>
#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <SQLiteCpp/SQLiteCpp.h>

#include "fulfillsync/testing/process.hpp"
#include "fulfillsync/testing/sandbox.hpp"

namespace fulfillsync::bench {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using testing::ChildProcess;
using testing::read_file;
using testing::Sandbox;

inline constexpr double kKiBPerMiB = 1024.0;

// Products of `fulfillsync-sandbox --seed demo`, named by sku and name as a shop would.
inline constexpr std::array<std::pair<const char*, const char*>, 3> kProducts = {
    {{"TSHIRT-L", "Organic Cotton T-Shirt L"}, {"BATT-AA4", "AA Battery 4-pack"}, {"TOTE-CANVAS", "Canvas Tote Bag"}}};

double seconds_since(Clock::time_point start);
double seconds_of(const timeval& time);

// A log for the report: every line when short, else its first and last few (the first warnings
// tell what went wrong, the last lines how a run ended).
std::string log_excerpt(const std::string& text);

// A field of /proc/PID/status in KiB (VmRSS, VmHWM), or -1 once the process is gone.
long status_kib(pid_t pid, std::string_view field);
// User plus system CPU seconds of a running process.
double cpu_seconds_of(pid_t pid);

// One request to the sandbox's admin path; the body of a 2xx answer. Anything else throws.
std::string admin_request(const Sandbox& sandbox, std::string_view method, std::string_view path,
                          std::string_view body = {});
inline std::string admin_get(const Sandbox& sandbox, std::string_view path) {
  return admin_request(sandbox, "GET", path);
}

struct Stats {
  std::uint64_t requests_total = 0;
  std::uint64_t orders_created = 0;
  std::uint64_t rate_limited = 0;
  std::map<std::string, std::uint64_t> requests;  // "POST /order -> 201": count

  // Requests counted since `before`, by "route -> status" (only those with any).
  std::map<std::string, std::uint64_t> requests_since(const Stats& before) const;
};

// GET /_sandbox/stats. Admin requests are not counted there: every request counted is the daemon's.
Stats read_stats(const Sandbox& sandbox);

std::string reference_of(std::string_view prefix, long n);

// `count` orders PREFIX0000001.. with one or two lines each, in one transaction (a million rows take
// seconds).
void seed_orders(SQLite::Database& db, std::string_view prefix, long count);

// A merchant application writing one order and its lines per transaction (the products above).
class OrderWriter {
 public:
  explicit OrderWriter(SQLite::Database& db);
  void insert(const std::string& reference, long n);

 private:
  SQLite::Database& db_;
  SQLite::Statement order_;
  SQLite::Statement line_;
};

// How far the merchant database has come. The result tables appear once the daemon has migrated
// the database: until then, nothing.
struct Progress {
  long created = 0;
  long shipments = 0;
  long tracking = 0;
  long marked = 0;
  long synced = 0;  // created, with shipment and tracking, marked uploaded
};

Progress read_progress(SQLite::Database& db);

// How a world's sandbox and daemon are set up.
struct WorldOptions {
  // YAML under sync.jobs, indented by four spaces; empty: every job at its defaults.
  std::string jobs;
  // Other YAML under sync, indented by two spaces (progress_interval, say).
  std::string sync;
  int requests_per_minute = 1'000'000;  // the most the loader accepts: the budget does not bound a run
  std::string rate_limit = "off";       // the sandbox's --rate-limit
  double clock_speed = 1;               // the sandbox's --clock-speed
  std::string daemon_log_level = "warn";
  // YAML under metrics, indented by two spaces.
  std::string metrics = "  enabled: false\n";
  // A command the daemon is started under (valgrind and its options, say); empty: started directly.
  std::vector<std::string> daemon_wrapper;
};

// One scenario's world: a temp dir with a merchant database (the contract's reference DDL, as a shop
// application would create it), the token file, a sandbox of its own, the daemon's configuration.
class World {
 public:
  World(fs::path bin_dir, WorldOptions options = {});

  SQLite::Database& merchant() { return merchant_; }
  Sandbox& sandbox() { return *sandbox_; }
  const fs::path& dir() const { return dir_.path(); }

  // Starts the sandbox and writes the daemon's configuration for its port.
  void start_sandbox();
  // `fulfillsyncd COMMAND`, its output in LOG_NAME.out and LOG_NAME.err of the world's directory.
  std::unique_ptr<ChildProcess> start_daemon(const std::string& command, const std::string& log_name = "daemon");
  void print_logs() const;
  // An error that carries the logs, for a run that went wrong.
  std::runtime_error failure(const std::string& what) const;

 private:
  void write_config();
  std::string sandbox_stderr() const;

  fs::path bin_dir_;
  WorldOptions options_;
  testing::TempDir dir_;
  SQLite::Database merchant_;
  std::unique_ptr<Sandbox> sandbox_;
  fs::path config_;
};

// The final table: a figure, its value and target, and whether it is met (none: information only).
class Report {
 public:
  void add(std::string figure, std::string value, std::string target, std::optional<bool> met);
  void note(std::string text);
  void print() const;

 private:
  std::vector<std::array<std::string, 4>> rows_;
  std::vector<std::string> notes_;
};

// A benchmark's run after its options are parsed: prints the binaries used, runs each scenario
// (all, or the one named `only`; one that throws is reported and the others still run, each has a
// world of its own) and the summary table. Returns the exit status: 1 when a scenario failed.
using Scenario = std::function<void(Report&)>;
int run_scenarios(std::string_view program, const fs::path& bin_dir, std::string_view only,
                  const std::vector<std::pair<std::string_view, Scenario>>& scenarios);

// A benchmark's main: output line by line (so that progress shows through a pipe or into a file), its
// options from `parse` (nothing: --help, and `usage` is printed), then its scenarios with those options
// through run_scenarios; an exception is reported and ends it with 1. Options has bin_dir and only.
template <typename Options>
int bench_main(std::string_view program, std::string_view usage, int argc, char** argv,
               std::optional<Options> (*parse)(int, char**),
               const std::vector<std::pair<std::string_view, void (*)(const Options&, Report&)>>& scenarios) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  try {
    const std::optional<Options> options = parse(argc, argv);
    if (!options) {
      std::fwrite(usage.data(), 1, usage.size(), stdout);
      return 0;
    }
    std::vector<std::pair<std::string_view, Scenario>> with_options;
    for (const auto& [name, scenario] : scenarios) {
      with_options.emplace_back(name, [&options, scenario](Report& report) { scenario(*options, report); });
    }
    return run_scenarios(program, options->bin_dir, options->only, with_options);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(program.size()), program.data(), error.what());
    return 1;
  }
}

// A command-line value that must be a positive whole number.
long positive(const std::string& name, const std::string& value);

// A benchmark's command line: `--quick`, `--help` (or `-h`), and `--name value` pairs handed to
// `option`, which returns false for a name it does not know. Returns whether --quick was given, or
// nothing for --help. Throws, with `usage`, for a missing value or an unknown name.
using OptionHandler = std::function<bool(const std::string& name, const std::string& value)>;
std::optional<bool> parse_command_line(int argc, char** argv, std::string_view usage, const OptionHandler& option);

// The sandbox's date-times: "2026-03-01T12:34:56.789+00:00" (or Z; any offset and fraction).
std::chrono::system_clock::time_point parse_time(const std::string& text);
// reference_id -> created_date of every order at the sandbox (GET /_sandbox/orders).
std::map<std::string, std::chrono::system_clock::time_point> read_created_dates(const Sandbox& sandbox);
// The value at `fraction` (0.99: p99) of `sorted`, which is not empty.
double percentile(const std::vector<double>& sorted, double fraction);

}  // namespace fulfillsync::bench
