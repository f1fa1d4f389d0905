#include "bench_support.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <simdjson.h>

namespace fulfillsync::bench {

using namespace std::chrono_literals;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double seconds_of(const timeval& time) {
  return static_cast<double>(time.tv_sec) + static_cast<double>(time.tv_usec) / 1e6;
}

std::string log_excerpt(const std::string& text) {
  constexpr std::size_t kEnds = 5;
  constexpr std::size_t kWidth = 400;
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line.size() > kWidth ? line.substr(0, kWidth) + "..." : line);
  }
  if (lines.empty()) return "    (empty)\n";
  std::string excerpt;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines.size() <= 2 * kEnds || i < kEnds || i >= lines.size() - kEnds) {
      excerpt += "    " + lines[i] + "\n";
    } else if (i == kEnds) {
      excerpt += fmt::format("    ... {} more lines ...\n", lines.size() - 2 * kEnds);
    }
  }
  return excerpt;
}

// --- processes ------------------------------------------------------------------------------------

long status_kib(pid_t pid, std::string_view field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(field, 0) == 0 && line.size() > field.size() && line[field.size()] == ':') {
      return std::atol(line.c_str() + field.size() + 1);
    }
  }
  return -1;
}

// Fields 14 and 15 of /proc/PID/stat.
double cpu_seconds_of(pid_t pid) {
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) throw std::runtime_error(fmt::format("process {} is gone", pid));
  // The command name may hold spaces; the fields after it start with field 3 (state).
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string skipped;
  for (int field = 3; field < 14; ++field) fields >> skipped;
  double user_ticks = 0;
  double system_ticks = 0;
  fields >> user_ticks >> system_ticks;
  return (user_ticks + system_ticks) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// --- the sandbox's admin path ---------------------------------------------------------------------

std::string admin_request(const Sandbox& sandbox, std::string_view method, std::string_view path,
                          std::string_view body) {
  const testing::HttpResponse response = sandbox.admin(method, path, body);
  if (response.status < 200 || response.status > 299) {
    throw std::runtime_error(fmt::format("{} {}: {} {}", method, path, response.status, response.body));
  }
  return response.body;
}

std::map<std::string, std::uint64_t> Stats::requests_since(const Stats& before) const {
  std::map<std::string, std::uint64_t> made;
  for (const auto& [route, count] : requests) {
    const auto earlier = before.requests.find(route);
    const std::uint64_t since = count - (earlier == before.requests.end() ? 0 : earlier->second);
    if (since > 0) made[route] = since;
  }
  return made;
}

Stats read_stats(const Sandbox& sandbox) {
  const std::string body = admin_get(sandbox, "/_sandbox/stats");
  simdjson::dom::parser parser;
  const simdjson::dom::element root = parser.parse(body);
  Stats stats;
  stats.requests_total = root["requests_total"].get_uint64();
  // `creates` has no "orders" before the first order is created.
  if (root["creates"]["orders"].get(stats.orders_created) != simdjson::SUCCESS) stats.orders_created = 0;
  if (root["rate_limited"].get(stats.rate_limited) != simdjson::SUCCESS) stats.rate_limited = 0;
  for (const simdjson::dom::element entry : root["requests"].get_array()) {
    const std::string_view route = entry["route"].get_string();
    const std::int64_t status = entry["status"].get_int64();
    stats.requests[fmt::format("{} -> {}", route, status)] = entry["count"].get_uint64();
  }
  return stats;
}

// --- the merchant database ------------------------------------------------------------------------

std::string reference_of(std::string_view prefix, long n) { return fmt::format("{}{:07}", prefix, n); }

// Two INSERT ... SELECT over a recursive CTE. Order n has the same fields and lines as push_bench's
// OrderWriter::insert writes for it.
void seed_orders(SQLite::Database& db, std::string_view prefix, long count) {
  std::string products;
  for (std::size_t slot = 0; slot < kProducts.size(); ++slot) {
    products +=
        fmt::format("{}({}, '{}', '{}')", slot == 0 ? "" : ", ", slot, kProducts[slot].first, kProducts[slot].second);
  }
  SQLite::Transaction transaction(db);
  SQLite::Statement orders(
      db,
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1) "
      "INSERT INTO fulfillsync_orders (reference_id, order_number, shipping_method, type, recipient_name, address1, "
      "city, state, zip_code, country) "
      "SELECT printf('%s%07d', ?2, i), printf('#%d', i), 'Standard', 'DTC', printf('Customer %d', i), "
      "printf('%d Main Street', i), 'Austin', 'TX', printf('%05d', 10000 + i % 90000), 'US' FROM n");
  orders.bind(1, static_cast<std::int64_t>(count));
  orders.bind(2, std::string(prefix));
  orders.exec();
  const std::string lines_sql =
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1), "
      "line(k) AS (VALUES (1), (2)), product(slot, ref, name) AS (VALUES " + products + ") "
      "INSERT INTO fulfillsync_order_lines (order_reference_id, line_number, product_reference_id, product_name, "
      "quantity) "
      "SELECT printf('%s%07d', ?2, i), k, p.ref, p.name, 1 + (i + k) % 3 "
      "FROM n JOIN line ON k <= 1 + i % 2 JOIN product p ON p.slot = (i + k) % 3";
  SQLite::Statement lines(db, lines_sql);
  lines.bind(1, static_cast<std::int64_t>(count));
  lines.bind(2, std::string(prefix));
  lines.exec();
  transaction.commit();
}

OrderWriter::OrderWriter(SQLite::Database& db)
    : db_(db),
      order_(db,
             "INSERT INTO fulfillsync_orders (reference_id, order_number, shipping_method, type, recipient_name, "
             "address1, city, state, zip_code, country) "
             "VALUES (?1, ?2, 'Standard', 'DTC', ?3, ?4, 'Austin', 'TX', ?5, 'US')"),
      line_(db,
            "INSERT INTO fulfillsync_order_lines (order_reference_id, line_number, product_reference_id, "
            "product_name, quantity) VALUES (?1, ?2, ?3, ?4, ?5)") {}

void OrderWriter::insert(const std::string& reference, long n) {
  SQLite::Transaction transaction(db_);
  order_.bind(1, reference);
  order_.bind(2, fmt::format("#{}", n));
  order_.bind(3, fmt::format("Customer {}", n));
  order_.bind(4, fmt::format("{} Main Street", n));
  order_.bind(5, fmt::format("{:05}", 10000 + n % 90000));
  order_.exec();
  order_.reset();
  for (long k = 1; k <= 1 + n % 2; ++k) {
    const auto& [sku, name] = kProducts[static_cast<std::size_t>((n + k) % 3)];
    line_.bind(1, reference);
    line_.bind(2, static_cast<std::int64_t>(k));
    line_.bind(3, sku);
    line_.bind(4, name);
    line_.bind(5, static_cast<std::int64_t>(1 + (n + k) % 3));
    line_.exec();
    line_.reset();
  }
  transaction.commit();
}

Progress read_progress(SQLite::Database& db) {
  try {
    SQLite::Statement query(
        db,
        "SELECT (SELECT count(*) FROM fulfillsync_order_sync WHERE state = 'created'), "
        "(SELECT count(*) FROM fulfillsync_shipments), (SELECT count(*) FROM fulfillsync_tracking), "
        "(SELECT count(*) FROM fulfillsync_tracking WHERE upload_marked_at IS NOT NULL), "
        "(SELECT count(DISTINCT o.reference_id) FROM fulfillsync_order_sync o "
        " JOIN fulfillsync_shipments s ON s.order_reference_id = o.reference_id "
        " JOIN fulfillsync_tracking t ON t.shipment_id = s.shipment_id "
        " WHERE o.state = 'created' AND t.upload_marked_at IS NOT NULL)");
    if (!query.executeStep()) return {};
    return {query.getColumn(0).getInt64(), query.getColumn(1).getInt64(), query.getColumn(2).getInt64(),
            query.getColumn(3).getInt64(), query.getColumn(4).getInt64()};
  } catch (const SQLite::Exception&) {
    return {};
  }
}

// --- a world: merchant database, sandbox, daemon --------------------------------------------------

World::World(fs::path bin_dir, WorldOptions options)
    : bin_dir_(std::move(bin_dir)),
      options_(std::move(options)),
      merchant_((dir_.path() / "merchant.db").string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE) {
  merchant_.setBusyTimeout(5000);
  // WAL lets the merchant application and fulfillsyncd read and write side by side.
  merchant_.exec("PRAGMA journal_mode = WAL");
  merchant_.exec(read_file(testing::source_path("schema/merchant/source_tables.sql")));
  merchant_.exec(read_file(testing::source_path("schema/merchant/change_log/0001_change_log.sql")));
  const fs::path token = dir_.path() / "api-token";
  std::ofstream(token) << Sandbox::kToken << "\n";
  // The daemon refuses a token file that group or others can read.
  if (chmod(token.c_str(), 0600) != 0) throw std::runtime_error("chmod " + token.string() + " failed");
}

void World::start_sandbox() {
  sandbox_ = std::make_unique<Sandbox>(
      std::vector<std::string>{"--rate-limit", options_.rate_limit, "--clock-speed",
                               fmt::format("{}", options_.clock_speed), "--log-level", "warn"},
      0, bin_dir_ / "fulfillsync-sandbox");
  write_config();
}

std::unique_ptr<ChildProcess> World::start_daemon(const std::string& command, const std::string& log_name) {
  std::vector<std::string> argv = options_.daemon_wrapper;
  argv.insert(argv.end(), {(bin_dir_ / "fulfillsyncd").string(), "--config", config_.string(), command});
  return std::make_unique<ChildProcess>(ChildProcess::Options{
      .argv = std::move(argv),
      .stdout_file = dir_.path() / (log_name + ".out"),
      .stderr_file = dir_.path() / (log_name + ".err")});
}

void World::print_logs() const {
  fmt::print("  daemon stdout:\n{}  daemon stderr:\n{}  sandbox stderr:\n{}",
             log_excerpt(read_file(dir_.path() / "daemon.out")), log_excerpt(read_file(dir_.path() / "daemon.err")),
             log_excerpt(sandbox_stderr()));
}

std::runtime_error World::failure(const std::string& what) const {
  return std::runtime_error(what + "\n  daemon stderr:\n" + log_excerpt(read_file(dir_.path() / "daemon.err")) +
                            "  sandbox stderr:\n" + log_excerpt(sandbox_stderr()));
}

std::string World::sandbox_stderr() const { return sandbox_ ? sandbox_->process().stderr_text() : std::string(); }

void World::write_config() {
  const fs::path& dir = dir_.path();
  config_ = dir / "fulfillsync.yaml";
  std::ofstream(config_) << fmt::format(
      "checkpoint:\n"
      "  path: {0}/checkpoint.db\n"
      "merchant:\n"
      "  sqlite:\n"
      "    path: {0}/merchant.db\n"
      "api:\n"
      "  base_url: http://127.0.0.1:{1}\n"
      "  allow_plain_http: true\n"
      "  token_file: {0}/api-token\n"
      "  requests_per_minute: {2}\n"
      "sync:\n"
      "  orders_since: 2020-01-01T00:00:00Z\n"
      "{5}{3}"
      "metrics:\n"
      "{6}"
      "logging:\n"
      "  level: {4}\n",
      dir.string(), sandbox_->port(), options_.requests_per_minute, options_.jobs.empty() ? "" : "  jobs:\n" + options_.jobs,
      options_.daemon_log_level, options_.sync, options_.metrics);
}

// --- the summary ----------------------------------------------------------------------------------

void Report::add(std::string figure, std::string value, std::string target, std::optional<bool> met) {
  rows_.push_back({std::move(figure), std::move(value), std::move(target), met ? (*met ? "met" : "MISSED") : "-"});
}

void Report::note(std::string text) { notes_.push_back(std::move(text)); }

void Report::print() const {
  std::array<std::size_t, 4> width = {6, 5, 6, 6};
  for (const auto& row : rows_) {
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  const auto line = [&](const std::array<std::string, 4>& cells) {
    fmt::print("{:<{}}  {:<{}}  {:<{}}  {}\n", cells[0], width[0], cells[1], width[1], cells[2], width[2], cells[3]);
  };
  fmt::print("\n== summary ==\n");
  line({"figure", "value", "target", "result"});
  line({std::string(width[0], '-'), std::string(width[1], '-'), std::string(width[2], '-'), "------"});
  for (const auto& row : rows_) line(row);
  for (const auto& text : notes_) fmt::print("note: {}\n", text);
}

long positive(const std::string& name, const std::string& value) {
  long parsed = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (error != std::errc() || end != value.data() + value.size() || parsed <= 0) {
    throw std::runtime_error(name + " needs a positive whole number, not '" + value + "'");
  }
  return parsed;
}

std::optional<bool> parse_command_line(int argc, char** argv, std::string_view usage, const OptionHandler& option) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string name = argv[i];
    if (name == "--help" || name == "-h") return std::nullopt;
    if (name == "--quick") {
      quick = true;
      continue;
    }
    if (i + 1 >= argc) throw std::runtime_error(name + " needs a value\n" + std::string(usage));
    if (!option(name, argv[++i])) throw std::runtime_error("unknown option " + name + "\n" + std::string(usage));
  }
  return quick;
}

int run_scenarios(std::string_view program, const fs::path& bin_dir, std::string_view only,
                  const std::vector<std::pair<std::string_view, Scenario>>& scenarios) {
  // A failpoint armed in the caller's environment would kill the daemon part-way.
  unsetenv("FULFILLSYNC_FAILPOINTS");
  fmt::print("{}: binaries in {}, {} CPU(s) online\n", program, bin_dir.string(), sysconf(_SC_NPROCESSORS_ONLN));
  Report report;
  bool failed = false;
  for (const auto& [name, scenario] : scenarios) {
    if (!only.empty() && only != name) continue;
    try {
      scenario(report);
    } catch (const std::exception& error) {
      fmt::print("{} failed: {}\n", name, error.what());
      report.add(std::string(name), "failed (see above)", "-", false);
      failed = true;
    }
  }
  report.print();
  return failed ? 1 : 0;
}

// --- the sandbox's creates and latencies ---------------------------------------------------------

// The sandbox's date-times: "2026-03-01T12:34:56.789+00:00" (or Z; any offset and fraction).
std::chrono::system_clock::time_point parse_time(const std::string& text) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &month, &day, &hour, &minute, &second, &consumed) !=
      6) {
    throw std::runtime_error("not a date-time: " + text);
  }
  auto at = static_cast<std::size_t>(consumed);
  std::chrono::nanoseconds fraction{0};
  if (at < text.size() && text[at] == '.') {
    std::int64_t scale = 100'000'000;
    for (++at; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at, scale /= 10) {
      fraction += std::chrono::nanoseconds((text[at] - '0') * scale);
    }
  }
  std::chrono::minutes offset{0};
  if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
    int offset_hours = 0, offset_minutes = 0;
    if (std::sscanf(text.c_str() + at + 1, "%2d:%2d", &offset_hours, &offset_minutes) != 2) {
      throw std::runtime_error("not a date-time offset: " + text);
    }
    offset = std::chrono::hours(offset_hours) + std::chrono::minutes(offset_minutes);
    if (text[at] == '-') offset = -offset;
  }
  const std::chrono::sys_days date{std::chrono::year(year) / month / day};
  return std::chrono::time_point_cast<std::chrono::system_clock::duration>(date + std::chrono::hours(hour) +
                                                             std::chrono::minutes(minute) +
                                                             std::chrono::seconds(second) + fraction - offset);
}

// reference_id -> created_date of every order at the sandbox (GET /_sandbox/orders).
std::map<std::string, std::chrono::system_clock::time_point> read_created_dates(const Sandbox& sandbox) {
  const std::string body = admin_get(sandbox, "/_sandbox/orders");
  simdjson::dom::parser parser;
  const simdjson::dom::element root = parser.parse(body);
  std::map<std::string, std::chrono::system_clock::time_point> created;
  for (const simdjson::dom::element order : root.get_array()) {
    const std::string_view reference = order["reference_id"].get_string();
    const std::string_view date = order["created_date"].get_string();
    created.emplace(reference, parse_time(std::string(date)));
  }
  return created;
}

double percentile(const std::vector<double>& sorted, double fraction) {
  const auto rank = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace fulfillsync::bench
