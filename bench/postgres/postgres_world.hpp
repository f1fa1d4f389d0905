#pragma once
// What the PostgreSQL benchmarks share: a PostgreSQL 15 server they start (testing::PostgresServer,
// Debian's postgresql-15, as the tests do) with the reference source tables and their change order in
// schema `shop`, the shop's own connection to it, a sandbox on loopback and fulfillsyncd's
// configuration for the postgresql driver, all in a temporary directory.
#include <libpq-fe.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "bench_support.hpp"
#include "fulfillsync/testing/postgres.hpp"

namespace fulfillsync::bench {

// A libpq connection of the shop's application (or of the benchmark reading the server's statistics).
class PgClient {
 public:
  explicit PgClient(const std::string& conninfo) : connection_(PQconnectdb(conninfo.c_str()), &PQfinish) {
    if (PQstatus(connection_.get()) != CONNECTION_OK) {
      throw std::runtime_error(std::string("cannot connect: ") + PQerrorMessage(connection_.get()));
    }
  }
  // Runs SQL (several statements allowed); the last statement's rows.
  std::unique_ptr<PGresult, decltype(&PQclear)> exec(const std::string& sql) {
    std::unique_ptr<PGresult, decltype(&PQclear)> result(PQexec(connection_.get(), sql.c_str()), &PQclear);
    const auto status = PQresultStatus(result.get());
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      throw std::runtime_error(fmt::format("{}: {}", sql.substr(0, 200), PQresultErrorMessage(result.get())));
    }
    return result;
  }

 private:
  std::unique_ptr<PGconn, decltype(&PQfinish)> connection_;
};

class PostgresWorld {
 public:
  // `jobs`: YAML under sync.jobs, indented by four spaces. `statistics`: load pg_stat_statements (a
  // restart of the server), to count the daemon's statements.
  PostgresWorld(fs::path bin_dir, std::string jobs = {}, bool statistics = false) : bin_dir_(std::move(bin_dir)) {
    if (auto why = testing::PostgresServer::unavailable()) throw std::runtime_error(*why);
    server_ = std::make_unique<testing::PostgresServer>();
    if (statistics) {
      PgClient(server_->connection_string()).exec("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'");
      server_->restart();
    }
    shop_ = std::make_unique<PgClient>(server_->connection_string());
    if (statistics) shop_->exec("CREATE EXTENSION pg_stat_statements");
    shop_->exec(fmt::format(
        "CREATE SCHEMA shop; SET search_path = shop; {} {}",
        read_file(testing::source_path("schema/merchant/postgresql/source_tables.sql")),
        read_file(testing::source_path("schema/merchant/postgresql/change_order/0001_change_xid.sql"))));
    sandbox_ = std::make_unique<Sandbox>(std::vector<std::string>{"--rate-limit", "off", "--log-level", "warn"}, 0,
                                         bin_dir_ / "fulfillsync-sandbox");
    const fs::path token = dir_.path() / "api-token";
    std::ofstream(token) << Sandbox::kToken << "\n";
    if (chmod(token.c_str(), 0600) != 0) throw std::runtime_error("chmod " + token.string() + " failed");
    std::ofstream(config_) << fmt::format(
        "checkpoint:\n  path: {0}/checkpoint.db\n"
        "merchant:\n  driver: postgresql\n  postgresql:\n    connection: \"{1}\"\n    source_schema: shop\n"
        "    result_schema: fulfillsync\n"
        "api:\n  base_url: {2}\n  allow_plain_http: true\n  token_file: {0}/api-token\n"
        "  requests_per_minute: 1000000\n"
        "sync:\n  orders_since: 2020-01-01T00:00:00Z\n{3}"
        "metrics:\n  enabled: false\n"
        "logging:\n  level: info\n",
        dir_.path().string(), server_->connection_string(), sandbox_->base_url(),
        jobs.empty() ? "" : "  jobs:\n" + jobs);
  }

  testing::PostgresServer& server() { return *server_; }
  PgClient& shop() { return *shop_; }
  Sandbox& sandbox() { return *sandbox_; }
  const fs::path& dir() const { return dir_.path(); }

  // `count` orders PREFIX<first>.. (seven digits) with one or two lines each (the products of
  // bench_support), in one transaction with the triggers off (a million rows in seconds, not minutes):
  // every row has the seeding transaction's id as its change_xid, and updated_at its time. `shop`: the
  // connection to write with (another thread's), else the world's.
  void seed_orders(std::string_view prefix, long count, long first = 1, PgClient* shop = nullptr) {
    (shop != nullptr ? *shop : *shop_).exec(fmt::format(
        "BEGIN; SET LOCAL session_replication_role = replica; SET LOCAL search_path = shop;"
        "INSERT INTO fulfillsync_orders (reference_id, order_number, shipping_method, type, recipient_name, "
        "recipient_email, address1, city, state, zip_code, country) "
        "SELECT '{0}' || lpad(n::text, 7, '0'), '#' || n, CASE WHEN n % 3 = 0 THEN 'Express' ELSE 'Standard' END, "
        "'DTC', 'Customer ' || n, 'customer' || n || '@example.com', n || ' Main Street', 'Austin', 'TX', "
        "lpad((10000 + n % 90000)::text, 5, '0'), 'US' FROM generate_series({8}, {8} + {1} - 1) AS n;"
        "INSERT INTO fulfillsync_order_lines (order_reference_id, line_number, product_reference_id, product_name, "
        "quantity) SELECT '{0}' || lpad(n::text, 7, '0'), line, (ARRAY['{2}', '{3}', '{4}'])[1 + (n + line) % 3], "
        "(ARRAY['{5}', '{6}', '{7}'])[1 + (n + line) % 3], 1 + (n + line) % 3 "
        "FROM generate_series({8}, {8} + {1} - 1) AS n, generate_series(1, 2) AS line WHERE line <= 1 + n % 2;"
        "COMMIT;{9}",
        prefix, count, kProducts[0].first, kProducts[1].first, kProducts[2].first, kProducts[0].second,
        kProducts[1].second, kProducts[2].second, first,
        // Before the daemon's first start: its plans see the table as it is (autovacuum does it later).
        shop == nullptr ? " ANALYZE shop.fulfillsync_orders; ANALYZE shop.fulfillsync_order_lines;" : ""));
  }

  // `fulfillsyncd COMMAND`, its output in daemon.out and daemon.err.
  std::unique_ptr<ChildProcess> start_daemon(const std::string& command) {
    return std::make_unique<ChildProcess>(ChildProcess::Options{
        .argv = {(bin_dir_ / "fulfillsyncd").string(), "--config", config_.string(), command},
        .stdout_file = dir_.path() / "daemon.out",
        .stderr_file = dir_.path() / "daemon.err"});
  }

  // An error that carries the daemon's log, for a run that went wrong.
  std::runtime_error failure(const std::string& what) const {
    return std::runtime_error(what + "\n  daemon stderr:\n" + log_excerpt(read_file(dir_.path() / "daemon.err")));
  }

 private:
  fs::path bin_dir_;
  testing::TempDir dir_;
  fs::path config_ = dir_.path() / "fulfillsync.yaml";
  std::unique_ptr<testing::PostgresServer> server_;
  std::unique_ptr<PgClient> shop_;
  std::unique_ptr<Sandbox> sandbox_;
};

}  // namespace fulfillsync::bench
