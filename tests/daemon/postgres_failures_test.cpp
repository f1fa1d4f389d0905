// Failures of a PostgreSQL merchant database are values, not crashes (README "Using PostgreSQL"): a
// server restart, a statement timeout, a read-only server and a revoked privilege are each logged,
// counted in fulfillsync_merchant_database_errors_total and retried, and every order arrives once
// with its result row. And, for a source read by updated_at, the age of the oldest open transaction
// is exported and a transaction that outlasts look_back is warned of. Against a real PostgreSQL 15
// server.
#include <libpq-fe.h>

#include <sstream>

#include "fulfillsync/testing/http.hpp"
#include "fulfillsync/testing/postgres.hpp"
#include "sync_fixture.hpp"

namespace fulfillsync::testing {
namespace {

using ::testing::HasSubstr;

class PostgresFailuresTest : public SyncFixture {
 protected:
  void SetUp() override {
    SyncFixture::SetUp();
    if (auto why = PostgresServer::unavailable()) GTEST_SKIP() << *why;
    postgres = std::make_unique<PostgresServer>();
    shop = connect();
  }

  std::unique_ptr<PGconn, decltype(&PQfinish)> connect() {
    std::unique_ptr<PGconn, decltype(&PQfinish)> connection(PQconnectdb(postgres->connection_string().c_str()),
                                                            &PQfinish);
    EXPECT_EQ(PQstatus(connection.get()), CONNECTION_OK) << PQerrorMessage(connection.get());
    exec(connection.get(), "SET search_path = shop");  // as the shop's application has it: the triggers' names
    return connection;
  }

  static void exec(PGconn* connection, const std::string& sql) {
    std::unique_ptr<PGresult, decltype(&PQclear)> result(PQexec(connection, sql.c_str()), &PQclear);
    const ExecStatusType status = PQresultStatus(result.get());
    ASSERT_TRUE(status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK)
        << sql << ": " << PQresultErrorMessage(result.get());
  }
  void shop_exec(const std::string& sql) { exec(shop.get(), sql); }

  // The reference source tables in schema `shop`, read by transaction id (`change_xid`) or, without
  // it, by updated_at.
  void create_source_tables(bool change_xid = true) {
    std::string sql = "CREATE SCHEMA shop; SET search_path = shop; " +
                      read_file(source_path("schema/merchant/postgresql/source_tables.sql"));
    if (change_xid) sql += read_file(source_path("schema/merchant/postgresql/change_order/0001_change_xid.sql"));
    shop_exec(sql);
  }

  // The sandbox, and a configuration pointing at this server, with metrics on a free port; `jobs_interval`
  // for the push jobs, `postgresql_keys` and `merchant_keys` added to their sections.
  void start(const std::string& jobs_interval = "50ms", const std::string& postgresql_keys = "",
             const std::string& merchant_keys = "") {
    start_sandbox();
    write_config("  listen: 127.0.0.1:0\n");
    std::string config = read_file(config_path);
    config.replace(config.find("  enabled: false\n"), 17, "  enabled: true\n");
    const std::string sqlite = fmt::format("  sqlite:\n    path: {}\n", (dir / "merchant.db").string());
    config.replace(config.find(sqlite), sqlite.size(),
                   fmt::format("  driver: postgresql\n  postgresql:\n    connection: \"{}\"\n"
                               "    source_schema: shop\n    result_schema: fulfillsync\n{}{}",
                               postgres->connection_string(), postgresql_keys, merchant_keys));
    for (const std::string job :
         {"push_orders: {interval: ", "push_cancels: {interval: ", "push_returns: {interval: "}) {
      config.replace(config.find(job + "50ms"), job.size() + 4, job + jobs_interval);
    }
    write_file(config_path, config);
  }

  // After start(): the daemon connects as the role `fulfillsync`, with only what it needs (the source
  // tables read, its result schema owned), not as the server's superuser.
  void run_as_a_role_of_its_own() {
  shop_exec("CREATE ROLE fulfillsync LOGIN; GRANT USAGE ON SCHEMA shop TO fulfillsync; "
            "GRANT SELECT ON ALL TABLES IN SCHEMA shop TO fulfillsync; "
            "CREATE SCHEMA fulfillsync AUTHORIZATION fulfillsync");
  std::string config = read_file(config_path);
  const std::string connection = postgres->connection_string();
  config.replace(config.find(connection), connection.size(), connection + " user=fulfillsync");
  write_file(config_path, config);
  }
  // Starts `run` and waits for its metrics endpoint.
  std::unique_ptr<ChildProcess> start_run() {
    auto running = start_daemon(metrics_port);
    EXPECT_NE(metrics_port, 0) << running->stderr_text();
    return running;
  }

  // The daemon's /metrics, as a scrape reads it.
  std::string metrics_text() { return http_get("127.0.0.1", metrics_port, "/metrics").body; }

  // A series' value on the daemon's /metrics, e.g. `fulfillsync_merchant_database_reopens_total`;
  // nothing while it is not exported.
  std::optional<double> metric(std::string_view series) {
    const std::string text = metrics_text();
    const std::string line_start = std::string(series) + " ";
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t end = std::min(text.find('\n', at), text.size());
      const std::string_view line(text.data() + at, end - at);
      if (line.starts_with(line_start)) return std::stod(std::string(line.substr(line_start.size())));
      at = end + 1;
    }
    return std::nullopt;
  }
  double errors(std::string_view kind) {
    return metric(fmt::format(R"(fulfillsync_merchant_database_errors_total{{kind="{}"}})", kind)).value_or(-1);
  }
  // Waits until `series` is at least `at_least`.
  bool wait_for_metric(std::string_view series, double at_least, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (metric(series).value_or(-1) >= at_least) return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }

  // Until no job has run for `quiet` (every fulfillsync_job_runs_total the same at both ends): the
  // runs a start makes (the first LISTEN polls at once) are over.
  bool wait_until_no_job_runs(std::chrono::milliseconds quiet, std::chrono::milliseconds limit) {
    const auto runs = [&] {
      std::string lines;
      std::istringstream text(metrics_text());
      for (std::string line; std::getline(text, line);) {
        if (line.starts_with("fulfillsync_job_runs_total{")) lines += line + "\n";
      }
      return lines;
    };
    std::string before = runs();
    for (const auto deadline = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < deadline;) {
      std::this_thread::sleep_for(quiet);
      std::string now = runs();
      if (now == before) return true;
      before = std::move(now);
    }
    return false;
  }

  // Orders `prefix`-0001.. in one transaction, each with one line.
  void add_orders(PGconn* connection, const std::string& prefix, int count) {
    std::string sql = "BEGIN;";
    for (int n = 1; n <= count; ++n) sql += order_sql(fmt::format("{}-{:04}", prefix, n), n);
    exec(connection, sql + "COMMIT;");
  }
  static std::string order_sql(const std::string& reference, int n) {
    return fmt::format(
        "INSERT INTO shop.fulfillsync_orders (reference_id, order_number, shipping_method, type, recipient_name, "
        "recipient_email, address1, city, state, zip_code, country) VALUES ('{0}', '#{1}', 'Standard', 'DTC', "
        "'Customer {1}', 'customer{1}@example.com', '{1} Main Street', 'Austin', 'TX', '{2:05}', 'US');"
        "INSERT INTO shop.fulfillsync_order_lines (order_reference_id, line_number, product_reference_id, "
        "product_name, quantity) VALUES ('{0}', 1, '{3}', '{4}', 1);",
        reference, n, 10000 + n, kProducts[0].first, kProducts[0].second);
  }

  // The result rows' states, by reference id, as the daemon wrote them in its result schema.
  std::map<std::string, std::string> result_states(std::string_view table = "fulfillsync_order_sync") override {
    std::unique_ptr<PGresult, decltype(&PQclear)> result(
        PQexec(shop.get(), fmt::format("SELECT reference_id, state FROM fulfillsync.{}", table).c_str()), &PQclear);
    std::map<std::string, std::string> states;
    if (PQresultStatus(result.get()) != PGRES_TUPLES_OK) return states;
    for (int r = 0; r < PQntuples(result.get()); ++r) {
      states[PQgetvalue(result.get(), r, 0)] = PQgetvalue(result.get(), r, 1);
    }
    return states;
  }

  // Every order of `prefixes` (`prefix`-0001 to -`count` each), and no other, arrived once, and its
  // result row says so.
  void expect_each_created_once(const std::vector<std::pair<std::string, int>>& prefixes) {
    const auto orders = provider_orders();
    long total = 0;
    for (const auto& [prefix, count] : prefixes) total += count;
    EXPECT_EQ(static_cast<long>(orders.size()), total);
    EXPECT_EQ(creates().first, total);
    const auto states = result_states();
    for (const auto& [prefix, count] : prefixes) {
      for (int n = 1; n <= count; ++n) {
        const std::string reference = fmt::format("{}-{:04}", prefix, n);
        EXPECT_TRUE(orders.contains(reference)) << reference;
        EXPECT_EQ(states.contains(reference) ? states.at(reference) : "", "created") << reference;
      }
    }
  }

  std::unique_ptr<PostgresServer> postgres;
  std::unique_ptr<PGconn, decltype(&PQfinish)> shop{nullptr, &PQfinish};
  std::uint16_t metrics_port = 0;
};

// The server restarts while the daemon runs, every job resting (an hour's interval): the connection
// the server ended is found before the next run reads anything and opened again, so the run the
// listener wakes once the server is back reads the new orders at once, with no error and no 5 s wait.
TEST_F(PostgresFailuresTest, AServerRestartIsCountedAndTheNextRunDeliversAtOnce) {
  create_source_tables();
  start("1h");
  add_orders(shop.get(), "BEFORE", 10);
  auto daemon = start_run();
  ASSERT_TRUE(wait_for_sandbox_count("orders", 10, 20s)) << daemon->stderr_text();
  ASSERT_TRUE(wait_for_results_created(10, 10s)) << daemon->stderr_text();
  ASSERT_TRUE(daemon->wait_for_stderr("listening for changes", 10s));
  // A run under way when the server goes down fails, and rightly waits 5 s: not this test's case.
  ASSERT_TRUE(wait_until_no_job_runs(1s, 20s)) << daemon->stderr_text();

  postgres->restart();
  shop = connect();
  ASSERT_TRUE(daemon->wait_for_stderr("listening for changes on channel fulfillsync_changes again", 30s))
      << daemon->stderr_text();
  const auto committed = std::chrono::steady_clock::now();
  add_orders(shop.get(), "AFTER", 10);
  ASSERT_TRUE(wait_for_sandbox_count("orders", 20, 15s)) << daemon->stderr_text() << postgres->log();
  EXPECT_LT(std::chrono::steady_clock::now() - committed, 4s) << "the first run after the restart failed:\n"
                                                               << daemon->stderr_text();
  ASSERT_TRUE(wait_for_results_created(20, 10s)) << daemon->stderr_text();

  EXPECT_THAT(daemon->stderr_text(), HasSubstr("the connection was lost"));
  EXPECT_THAT(daemon->stderr_text(), HasSubstr("connection opened again"));
  EXPECT_THAT(daemon->stderr_text(), ::testing::Not(HasSubstr("trying again in 5s"))) << "a run failed";
  EXPECT_GE(errors("connection_lost"), 1);
  EXPECT_GE(metric("fulfillsync_merchant_database_reopens_total").value_or(0), 1);
  std::this_thread::sleep_for(500ms);  // a second send would have come by now
  expect_each_created_once({{"BEFORE", 10}, {"AFTER", 10}});
  daemon->send_signal(SIGTERM);
  EXPECT_TRUE(daemon->wait_for_exit(10s).has_value());
}

// The server goes away while the daemon starts (here while the start's read of the result table waits
// for a lock): the start ends with 69, and the log says so and that systemd starts it again, not that
// the daemon tries again itself.
TEST_F(PostgresFailuresTest, AServerLostDuringTheStartEndsItWith69AndTheLogSaysSystemdStartsItAgain) {
  create_source_tables();
  start("1h");
  const RunResult first = once();  // makes the result tables
  ASSERT_EQ(first.exit_status, 0) << first.stderr_text;

  auto holder = connect();
  exec(holder.get(), "BEGIN; LOCK TABLE fulfillsync.fulfillsync_order_sync IN ACCESS EXCLUSIVE MODE");
  auto daemon = run_in_background();
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  bool waiting = false;
  while (!waiting && std::chrono::steady_clock::now() < deadline && daemon->running()) {
    std::unique_ptr<PGresult, decltype(&PQclear)> result(
        PQexec(shop.get(), "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND "
                           "query LIKE '%fulfillsync_order_sync%'"),
        &PQclear);
    waiting = PQresultStatus(result.get()) == PGRES_TUPLES_OK && std::string(PQgetvalue(result.get(), 0, 0)) != "0";
    if (!waiting) std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(waiting) << "the start never waited for the lock:\n" << daemon->stderr_text();
  // Stopped with the lock still held: a fast shutdown ends every session, the holder's too, so the
  // start's read cannot get the lock and finish first (it did once, released a moment before).
  postgres->stop();
  holder.reset();
  shop.reset();

  EXPECT_EQ(daemon->wait_for_exit(30s), 69) << daemon->stderr_text();  // EX_UNAVAILABLE
  const std::string log = daemon->stderr_text();
  EXPECT_THAT(log, HasSubstr("cannot start: merchant database postgresql"));
  // The read lost its connection and could not open another: the connection says when the next use
  // may try, without promising one.
  EXPECT_THAT(log, HasSubstr("the next use of the connection opens it again"));
  EXPECT_THAT(log, HasSubstr("exiting with status 69 (EX_UNAVAILABLE): under systemd, the packaged unit starts "
                             "fulfillsyncd again (Restart=on-failure, RestartSec=5s)"));
  EXPECT_THAT(log, ::testing::Not(HasSubstr("trying again"))) << "nothing in this process tries again";
}

// The source is read through views that can be slowed down (slow.brake_setting, in seconds: a table
// no trigger watches, so nothing but the daemon's own retry reads the source again, and its next
// statement sees the change at once, unlike a setting reloaded into its session later). A
// read slower than statement_timeout is cancelled by the server: logged, counted, and tried again
// until the brake is off; then the order waiting behind it arrives, once.
TEST_F(PostgresFailuresTest, AStatementTimeoutIsCountedAndRetriedUntilItsCauseGoes) {
  create_source_tables();
  std::string views =
      "CREATE SCHEMA slow; CREATE TABLE slow.brake_setting (seconds float8 NOT NULL);"
      "INSERT INTO slow.brake_setting VALUES (0);"
      "CREATE FUNCTION slow.brake() RETURNS boolean LANGUAGE sql VOLATILE AS $$ "
      "SELECT pg_sleep((SELECT seconds FROM slow.brake_setting)); SELECT true $$;";
  for (const char* table : {"fulfillsync_orders", "fulfillsync_order_lines", "fulfillsync_returns",
                            "fulfillsync_return_lines", "fulfillsync_watched_inventory"}) {
    views += fmt::format("CREATE VIEW slow.{0} AS SELECT * FROM shop.{0} WHERE slow.brake();", table);
  }
  shop_exec(views);
  start("50ms", "    statement_timeout: 300ms\n");
  std::string config = read_file(config_path);
  config.replace(config.find("source_schema: shop"), 19, "source_schema: slow");
  write_file(config_path, config);
  add_orders(shop.get(), "FIRST", 1);
  auto daemon = start_run();
  ASSERT_TRUE(wait_for_results_created(1, 20s)) << daemon->stderr_text();

  shop_exec("UPDATE slow.brake_setting SET seconds = 1");
  add_orders(shop.get(), "SLOW", 1);
  ASSERT_TRUE(wait_for_metric(R"(fulfillsync_merchant_database_errors_total{kind="statement_timeout"})", 1, 10s))
      << daemon->stderr_text();
  const auto logged = daemon->wait_for_stderr("canceling statement due to statement timeout", 1s);
  ASSERT_TRUE(logged);
  EXPECT_THAT(*logged, HasSubstr("(SQLSTATE 57014)")) << "on one line";
  std::this_thread::sleep_for(1s);
  EXPECT_EQ(sandbox_count("orders"), 1);

  shop_exec("UPDATE slow.brake_setting SET seconds = 0");
  ASSERT_TRUE(wait_for_sandbox_count("orders", 2, 20s)) << daemon->stderr_text();
  ASSERT_TRUE(wait_for_results_created(2, 10s)) << daemon->stderr_text();
  // The log says when the failing stopped, not only that it failed.
  EXPECT_TRUE(daemon->wait_for_stderr("push_orders: working again after", 5s)) << daemon->stderr_text();
  std::this_thread::sleep_for(500ms);
  expect_each_created_once({{"FIRST", 1}, {"SLOW", 1}});
  daemon->send_signal(SIGTERM);
  EXPECT_TRUE(daemon->wait_for_exit(10s).has_value());
}

// The server turns read only (as a replica after a failover, or a server in recovery, refuses every
// write: SQLSTATE 25006) while orders keep coming: they are sent, their result writes are refused,
// counted as read_only and tried again; once the server takes writes, every result row is written,
// and nothing was sent twice.
TEST_F(PostgresFailuresTest, WritesRefusedByAReadOnlyServerAreCountedAndWrittenOnceItTakesWrites) {
  create_source_tables();
  start();
  add_orders(shop.get(), "FIRST", 3);
  auto daemon = start_run();
  ASSERT_TRUE(wait_for_results_created(3, 20s)) << daemon->stderr_text();

  // The shop keeps writing: its own session is not read only.
  shop_exec("SET default_transaction_read_only = off");
  shop_exec("ALTER SYSTEM SET default_transaction_read_only = on");
  shop_exec("SELECT pg_reload_conf()");
  std::this_thread::sleep_for(300ms);  // every session has taken the new setting
  add_orders(shop.get(), "READONLY", 5);
  ASSERT_TRUE(wait_for_sandbox_count("orders", 8, 20s)) << daemon->stderr_text();
  ASSERT_TRUE(wait_for_metric(R"(fulfillsync_merchant_database_errors_total{kind="read_only"})", 1, 10s))
      << daemon->stderr_text();
  EXPECT_THAT(daemon->stderr_text(), HasSubstr("read-only transaction (SQLSTATE 25006)"));
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(result_states().size(), 3u) << "no result row could be written meanwhile";

  shop_exec("ALTER SYSTEM RESET default_transaction_read_only");
  shop_exec("SELECT pg_reload_conf()");
  ASSERT_TRUE(wait_for_results_created(8, 20s)) << daemon->stderr_text();
  expect_each_created_once({{"FIRST", 3}, {"READONLY", 5}});
  daemon->send_signal(SIGTERM);
  EXPECT_TRUE(daemon->wait_for_exit(10s).has_value());
}

// A source read by updated_at (no change_xid): a transaction held open longer than look_back makes the
// oldest transaction's age rise past it, with a warning; once it ends, the age falls back.
TEST_F(PostgresFailuresTest, ATransactionOpenLongerThanLookBackIsExportedAndWarnedOf) {
  create_source_tables(/*change_xid=*/false);
  start("50ms", "", "  look_back: 1s\n");
  auto daemon = start_run();
  ASSERT_TRUE(wait_for_metric("fulfillsync_merchant_oldest_transaction_age_seconds", 0, 10s)) << daemon->stderr_text();
  EXPECT_EQ(metric("fulfillsync_merchant_oldest_transaction_visible"), 1);
  EXPECT_EQ(metric("fulfillsync_merchant_look_back_seconds"), 1);
  EXPECT_LT(metric("fulfillsync_merchant_oldest_transaction_age_seconds").value_or(99), 1);

  auto long_one = connect();
  exec(long_one.get(), "BEGIN; " + order_sql("LONG-0001", 1));
  ASSERT_TRUE(wait_for_metric("fulfillsync_merchant_oldest_transaction_age_seconds", 1.5, 10s))
      << daemon->stderr_text();
  EXPECT_TRUE(daemon->wait_for_stderr("longer than merchant.look_back", 5s)) << daemon->stderr_text();
  exec(long_one.get(), "COMMIT");
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (metric("fulfillsync_merchant_oldest_transaction_age_seconds").value_or(99) >= 1 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_LT(metric("fulfillsync_merchant_oldest_transaction_age_seconds").value_or(99), 1);
  daemon->send_signal(SIGTERM);
  EXPECT_TRUE(daemon->wait_for_exit(10s).has_value());
}

// A privilege revoked from the daemon's role (as a database administrator might, or a table made
// after the GRANT) fails the runs that need it: counted as permission_denied, logged with the table,
// and retried; once granted again the order goes, and the log says the job works again.
TEST_F(PostgresFailuresTest, ARevokedPrivilegeIsCountedAsSuchAndTheOrderGoesOnceGrantedAgain) {
  create_source_tables();
  start();
  run_as_a_role_of_its_own();
  add_orders(shop.get(), "FIRST", 1);
  auto daemon = start_run();
  ASSERT_TRUE(wait_for_results_created(1, 20s)) << daemon->stderr_text();

  shop_exec("REVOKE SELECT ON shop.fulfillsync_order_lines FROM fulfillsync");
  add_orders(shop.get(), "LATER", 1);
  ASSERT_TRUE(wait_for_metric(R"(fulfillsync_merchant_database_errors_total{kind="permission_denied"})", 1, 10s))
      << daemon->stderr_text();
  const auto logged = daemon->wait_for_stderr("permission denied for table fulfillsync_order_lines", 1s);
  ASSERT_TRUE(logged) << daemon->stderr_text();
  EXPECT_THAT(*logged, HasSubstr("(SQLSTATE 42501)"));
  EXPECT_EQ(errors("other"), 0);
  EXPECT_EQ(sandbox_count("orders"), 1);

  shop_exec("GRANT SELECT ON shop.fulfillsync_order_lines TO fulfillsync");
  ASSERT_TRUE(wait_for_sandbox_count("orders", 2, 20s)) << daemon->stderr_text();
  ASSERT_TRUE(wait_for_results_created(2, 10s)) << daemon->stderr_text();
  EXPECT_TRUE(daemon->wait_for_stderr("push_orders: working again after", 5s)) << daemon->stderr_text();
  std::this_thread::sleep_for(500ms);
  expect_each_created_once({{"FIRST", 1}, {"LATER", 1}});
  daemon->send_signal(SIGTERM);
  EXPECT_TRUE(daemon->wait_for_exit(10s).has_value());
}

// A role without pg_read_all_stats cannot see other roles' transactions: the age is not exported as 0
// but left out, and the log says what to grant.
TEST_F(PostgresFailuresTest, ARoleThatCannotSeeOtherTransactionsSaysSo) {
  create_source_tables(/*change_xid=*/false);
  start("50ms", "", "  look_back: 1s\n");
  run_as_a_role_of_its_own();
  auto daemon = start_run();
  ASSERT_TRUE(daemon->wait_for_stderr("cannot see other roles' transactions", 10s)) << daemon->stderr_text();
  EXPECT_EQ(metric("fulfillsync_merchant_oldest_transaction_visible"), 0);
  EXPECT_FALSE(metric("fulfillsync_merchant_oldest_transaction_age_seconds").has_value());
  daemon->send_signal(SIGTERM);
  EXPECT_TRUE(daemon->wait_for_exit(10s).has_value());
}

}  // namespace
}  // namespace fulfillsync::testing
