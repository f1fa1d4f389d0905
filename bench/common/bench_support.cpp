#include "bench_support.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <simdjson.h>

namespace fulfillsync::bench {

using namespace std::chrono_literals;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double seconds_of(const timeval& time) {
  return static_cast<double>(time.tv_sec) + static_cast<double>(time.tv_usec) / 1e6;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

std::string log_excerpt(const fs::path& path) {
  constexpr std::size_t kEnds = 5;
  constexpr std::size_t kWidth = 400;
  std::error_code missing;
  if (!fs::exists(path, missing)) return "    (none)\n";
  std::vector<std::string> lines;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line.size() > kWidth ? line.substr(0, kWidth) + "..." : line);
  }
  if (lines.empty()) return "    (empty)\n";
  std::string text;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines.size() <= 2 * kEnds || i < kEnds || i >= lines.size() - kEnds) {
      text += "    " + lines[i] + "\n";
    } else if (i == kEnds) {
      text += fmt::format("    ... {} more lines ...\n", lines.size() - 2 * kEnds);
    }
  }
  return text;
}

// --- processes ------------------------------------------------------------------------------------

TempDir::TempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/fulfillsync-bench-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp failed: " + std::string(std::strerror(errno)));
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

Child::Child(std::vector<std::string> argv, const fs::path& out, const fs::path& err) : argv_(std::move(argv)) {
  std::vector<char*> args;
  for (auto& arg : argv_) args.push_back(arg.data());
  args.push_back(nullptr);
  // Opened here, not in the child, so that the files exist as soon as the constructor returns.
  const int in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (in_fd >= 0 && out_fd >= 0 && err_fd >= 0) pid_ = fork();
  if (pid_ == 0) {
    // Only async-signal-safe calls until exec; dup2 clears close-on-exec on the copies.
    dup2(in_fd, STDIN_FILENO);
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  for (const int fd : {in_fd, out_fd, err_fd}) {
    if (fd >= 0) close(fd);
  }
  if (pid_ < 0) throw std::runtime_error("cannot start " + argv_.front() + ": " + std::strerror(errno));
}

Child::~Child() {
  if (running()) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

void Child::signal(int number) const {
  if (!status_) kill(pid_, number);
}

bool Child::running() {
  if (status_) return false;
  int status = 0;
  if (wait4(pid_, &status, WNOHANG, &usage_) == pid_) {
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  return !status_;
}

std::optional<int> Child::wait(Clock::duration timeout) {
  const auto deadline = Clock::now() + timeout;
  // Polled every 2 ms: a blocking wait could not give up at the deadline.
  while (running() && Clock::now() < deadline) std::this_thread::sleep_for(2ms);
  return status_;
}

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

// A fresh connection each time: the sandbox closes idle keep-alive connections. The answer is read
// by Content-Length.
std::string admin_request(std::uint16_t port, std::string_view method, const std::string& path,
                          std::string_view body) {
  struct Socket {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ~Socket() { close(fd); }
  } const connection;
  const int fd = connection.fd;
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    throw std::runtime_error(fmt::format("cannot connect to the sandbox on port {}", port));
  }
  const std::string request = fmt::format(
      "{} {} HTTP/1.1\r\nHost: bench\r\nX-Sandbox-Admin-Token: {}\r\n{}Connection: close\r\n\r\n{}", method, path,
      kAdminToken, method == "GET" ? "" : fmt::format("Content-Length: {}\r\n", body.size()), body);
  for (std::size_t sent = 0; sent < request.size();) {
    const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) throw std::runtime_error("send to the sandbox failed");
    sent += static_cast<std::size_t>(n);
  }
  std::string response;
  std::size_t head_end = std::string::npos;
  std::size_t length = 0;
  for (;;) {
    if (head_end == std::string::npos && (head_end = response.find("\r\n\r\n")) != std::string::npos) {
      std::string head = response.substr(0, head_end);
      std::transform(head.begin(), head.end(), head.begin(), [](unsigned char c) { return std::tolower(c); });
      const auto at = head.find("\r\ncontent-length:");
      if (at == std::string::npos) throw std::runtime_error("the sandbox answered " + path + " without Content-Length");
      length = std::stoul(head.substr(at + 17));
    }
    if (head_end != std::string::npos && response.size() >= head_end + 4 + length) break;
    char chunk[65536];
    const ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) throw std::runtime_error("the sandbox closed the connection answering " + path);
    response.append(chunk, static_cast<std::size_t>(n));
  }
  if (response.compare(0, 10, "HTTP/1.1 2") != 0) {
    throw std::runtime_error(fmt::format("{} {}: {}", method, path, response.substr(0, response.find("\r\n"))));
  }
  return response.substr(head_end + 4, length);
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

Stats read_stats(std::uint16_t port) {
  const std::string body = admin_get(port, "/_sandbox/stats");
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
  merchant_.exec(read_file(fs::path(FULFILLSYNC_SOURCE_DIR) / "schema/merchant/source_tables.sql"));
  merchant_.exec(read_file(fs::path(FULFILLSYNC_SOURCE_DIR) / "schema/merchant/change_log/0001_change_log.sql"));
  const fs::path token = dir_.path() / "api-token";
  std::ofstream(token) << kToken << "\n";
  // The daemon refuses a token file that group or others can read.
  if (chmod(token.c_str(), 0600) != 0) throw std::runtime_error("chmod " + token.string() + " failed");
}

void World::start_sandbox() {
  const fs::path out = dir_.path() / "sandbox.out";
  const fs::path err = dir_.path() / "sandbox.err";
  sandbox_ = std::make_unique<Child>(
      std::vector<std::string>{(bin_dir_ / "fulfillsync-sandbox").string(), "--listen", "127.0.0.1:0", "--token",
                               kToken, "--admin-token", kAdminToken, "--seed", "demo", "--rate-limit",
                               options_.rate_limit, "--clock-speed", fmt::format("{}", options_.clock_speed),
                               "--log-level", "warn"},
      out, err);
  // Once it accepts connections the sandbox prints "listening on http://127.0.0.1:PORT".
  const auto deadline = Clock::now() + 30s;
  for (;;) {
    const std::string text = read_file(out);
    const auto at = text.find("listening on ");
    const auto end = at == std::string::npos ? std::string::npos : text.find('\n', at);
    if (end != std::string::npos) {
      const auto colon = text.rfind(':', end);
      port_ = static_cast<std::uint16_t>(std::stoi(text.substr(colon + 1, end - colon - 1)));
      break;
    }
    if (!sandbox_->running() || Clock::now() >= deadline) {
      throw std::runtime_error("fulfillsync-sandbox did not start:\n" + text + log_excerpt(err));
    }
    std::this_thread::sleep_for(10ms);
  }
  write_config();
}

std::unique_ptr<Child> World::start_daemon(const std::string& command, const std::string& log_name) {
  return std::make_unique<Child>(
      std::vector<std::string>{(bin_dir_ / "fulfillsyncd").string(), "--config", config_.string(), command},
      dir_.path() / (log_name + ".out"), dir_.path() / (log_name + ".err"));
}

void World::print_logs() const {
  fmt::print("  daemon stdout:\n{}  daemon stderr:\n{}  sandbox stderr:\n{}", log_excerpt(dir_.path() / "daemon.out"),
             log_excerpt(dir_.path() / "daemon.err"), log_excerpt(dir_.path() / "sandbox.err"));
}

std::runtime_error World::failure(const std::string& what) const {
  return std::runtime_error(what + "\n  daemon stderr:\n" + log_excerpt(dir_.path() / "daemon.err") +
                            "  sandbox stderr:\n" + log_excerpt(dir_.path() / "sandbox.err"));
}

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
      dir.string(), port_, options_.requests_per_minute, options_.jobs.empty() ? "" : "  jobs:\n" + options_.jobs,
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

}  // namespace fulfillsync::bench
