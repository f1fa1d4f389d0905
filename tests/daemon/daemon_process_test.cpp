// fulfillsyncd driven from outside, the way systemd, an operator and Prometheus meet it.
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <iterator>
#include <regex>
#include <thread>
#include <vector>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fulfillsync/common/sqlite_migrations.hpp"
#include "fulfillsync/common/version.hpp"
#include "fulfillsync/schema/migrations.hpp"
#include "fulfillsync/testing/http.hpp"
#include "fulfillsync/testing/process.hpp"
#include "notify_socket.hpp"

namespace fulfillsync::testing {
namespace {

using ::testing::HasSubstr;

class DaemonProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(dir / "api-token", "token\n");
    chmod((dir / "api-token").c_str(), 0600);
    SQLite::Database merchant((dir / "merchant.db").string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    merchant.exec(read_file(source_path("schema/merchant/source_tables.sql")));
    merchant.exec(read_file(source_path("schema/merchant/change_log/0001_change_log.sql")));
    write_config();
  }

  void write_config(std::string_view extra = "") {
    write_file(config_path, "service:\n"
                            "  shutdown_timeout: 3s\n"
                            "checkpoint:\n"
                            "  path: " + (dir / "checkpoint.db").string() + "\n"
                            "merchant:\n"
                            "  sqlite:\n"
                            "    path: " + (dir / "merchant.db").string() + "\n"
                            "api:\n"
                            "  base_url: http://127.0.0.1:1\n"  // nothing listens: the provider is away
                            "  allow_plain_http: true\n"
                            "  token_file: " + (dir / "api-token").string() + "\n"
                            "metrics:\n"
                            "  listen: 127.0.0.1:0\n" + std::string(extra));
  }

  std::unique_ptr<ChildProcess> start(std::vector<std::string> env = {}) {
    return std::make_unique<ChildProcess>(ChildProcess::Options{
        {binary_path("fulfillsyncd").string(), "--config", config_path.string(), "run"},
        std::move(env),
        {"NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM"},
        dir.path()});
  }

  // The metrics port the daemon logged once it was serving.
  static std::uint16_t metrics_port(ChildProcess& daemon) {
    const auto line = daemon.wait_for_stderr("metrics listening on 127.0.0.1:", 20s);
    if (!line) {
      ADD_FAILURE() << "no metrics port logged:\n" << daemon.stderr_text();
      return 0;
    }
    return static_cast<std::uint16_t>(std::stoi(line->substr(line->rfind(':') + 1)));
  }

  static std::string metrics(std::uint16_t port) { return http_get("127.0.0.1", port, "/metrics").body; }

  RunResult run_command(std::vector<std::string> args) {
    args.insert(args.begin(), binary_path("fulfillsyncd").string());
    return run(ChildProcess::Options{std::move(args), {}, {"NOTIFY_SOCKET", "JOURNAL_STREAM"}, dir.path()});
  }

  TempDir dir;
  std::filesystem::path config_path = dir / "fulfillsync.yaml";
};

TEST_F(DaemonProcessTest, TellsSystemdReadyWatchdogReloadAndStop) {
  NotifySocket systemd(dir.path(), /*abstract=*/false);
  auto daemon = start({"NOTIFY_SOCKET=" + systemd.address(), "WATCHDOG_USEC=200000"});

  const auto ready = systemd.wait_for("READY=1", 20s);
  ASSERT_TRUE(ready) << daemon->stderr_text();
  EXPECT_THAT(*ready, HasSubstr("STATUS=Running"));
  // Pings come from the event loop every half watchdog period.
  ASSERT_TRUE(systemd.wait_for("WATCHDOG=1", 5s));
  ASSERT_TRUE(systemd.wait_for("WATCHDOG=1", 5s));

  daemon->send_signal(SIGHUP);
  const auto reloading = systemd.wait_for("RELOADING=1", 10s);
  ASSERT_TRUE(reloading);
  EXPECT_THAT(*reloading, HasSubstr("MONOTONIC_USEC="));
  EXPECT_TRUE(systemd.wait_for("READY=1", 10s));

  daemon->send_signal(SIGTERM);
  EXPECT_TRUE(systemd.wait_for("STOPPING=1", 10s));
  EXPECT_EQ(daemon->wait_for_exit(10s), 0) << daemon->stderr_text();
}

// Checking a large checkpoint store's integrity, and migrating it, can each outlast systemd's start
// limit (TimeoutStartSec, 90 s by default), which would stop the start, start after start (and roll
// the migration back): the daemon asks for more time before each. A store already at the newest
// version asks only for its check.
TEST_F(DaemonProcessTest, AStoreToCheckOrMigrateExtendsSystemdsStartLimitFirst) {
  {
    SQLite::Database store((dir / "checkpoint.db").string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    const auto all = schema::checkpoint_migrations();
    sqlite::migrate(store, all.first(all.size() - 1), "schema_migrations", "checkpoint store");
  }
  NotifySocket systemd(dir.path(), /*abstract=*/false);
  for (const bool migrating : {true, false}) {
    systemd.seen.clear();
    auto daemon = start({"NOTIFY_SOCKET=" + systemd.address()});
    ASSERT_TRUE(systemd.wait_for("READY=1", 20s)) << daemon->stderr_text();
    std::vector<std::string> extensions;
    std::copy_if(systemd.seen.begin(), systemd.seen.end(), std::back_inserter(extensions),
                 [](const std::string& message) { return message.find("EXTEND_TIMEOUT_USEC=") != std::string::npos; });
    ASSERT_EQ(extensions.size(), migrating ? 2U : 1U) << daemon->stderr_text();
    EXPECT_THAT(extensions[0], HasSubstr("STATUS=Checking the checkpoint store's integrity"));
    if (migrating) {
      EXPECT_THAT(extensions[1], HasSubstr("STATUS=Migrating the checkpoint store to schema version"));
      EXPECT_THAT(daemon->stderr_text(), HasSubstr("migrating from schema version"));
    }
    // Killed: how it stops is not this test's matter, and the store is migrated and committed.
    daemon->send_signal(SIGKILL);
    EXPECT_TRUE(daemon->wait_for_exit(15s)) << daemon->stderr_text();
  }
}

TEST_F(DaemonProcessTest, SpeaksToAnAbstractNotifySocket) {
  NotifySocket systemd(dir.path(), /*abstract=*/true);
  auto daemon = start({"NOTIFY_SOCKET=" + systemd.address()});
  EXPECT_TRUE(systemd.wait_for("READY=1", 20s)) << daemon->stderr_text();
}

TEST_F(DaemonProcessTest, NoWatchdogPingsWhenTheWatchdogIsMeantForAnotherProcess) {
  NotifySocket systemd(dir.path(), /*abstract=*/false);
  auto daemon = start({"NOTIFY_SOCKET=" + systemd.address(), "WATCHDOG_USEC=100000", "WATCHDOG_PID=1"});
  ASSERT_TRUE(systemd.wait_for("READY=1", 20s));
  EXPECT_FALSE(systemd.wait_for("WATCHDOG=1", 500ms));
}

TEST_F(DaemonProcessTest, SigtermAndSigintStopWithExitZeroWithinTheDeadline) {
  for (const int signal : {SIGTERM, SIGINT}) {
    auto daemon = start();
    metrics_port(*daemon);
    daemon->send_signal(signal);
    // shutdown_timeout is 3s; the daemon must be gone well before a supervisor would kill it.
    EXPECT_EQ(daemon->wait_for_exit(15s), 0) << daemon->stderr_text();
    EXPECT_THAT(daemon->stderr_text(), HasSubstr("stopping"));
  }
}

TEST_F(DaemonProcessTest, BrokenConfigOnReloadKeepsTheOldOne) {
  auto daemon = start();
  const std::uint16_t port = metrics_port(*daemon);
  ASSERT_THAT(metrics(port), HasSubstr("fulfillsync_config_last_reload_successful 1"));

  write_file(config_path, "checkpoint: [\n");
  daemon->send_signal(SIGHUP);
  ASSERT_TRUE(daemon->wait_for_stderr("reload failed: keeping the running configuration", 10s))
      << daemon->stderr_text();
  EXPECT_THAT(daemon->stderr_text(), HasSubstr(config_path.string() + ":2:1: "));
  EXPECT_TRUE(daemon->running());
  EXPECT_THAT(metrics(port), HasSubstr("fulfillsync_config_last_reload_successful 0"));

  // Mended, the next reload succeeds; a change that needs a restart is called out.
  write_config("logging:\n  level: debug\n");
  std::string config = read_file(config_path);
  config.replace(config.find("127.0.0.1:0"), 11, "127.0.0.1:1");
  write_file(config_path, config);
  daemon->send_signal(SIGHUP);
  ASSERT_TRUE(daemon->wait_for_stderr("configuration reloaded", 10s)) << daemon->stderr_text();
  EXPECT_THAT(daemon->stderr_text(), HasSubstr("changes to 'metrics' take effect at the next restart"));
  EXPECT_THAT(metrics(port), HasSubstr("fulfillsync_config_last_reload_successful 1"));

  daemon->send_signal(SIGTERM);
  EXPECT_EQ(daemon->wait_for_exit(15s), 0);
}

TEST_F(DaemonProcessTest, MetricsPassPromtoolAndIncludeTheStandardSet) {
  auto daemon = start();
  const std::string text = metrics(metrics_port(*daemon));
  for (const char* name :
       {"fulfillsync_build_info{version=\"", "fulfillsync_config_last_reload_successful 1",
        "fulfillsync_config_last_reload_success_timestamp_seconds ", "process_cpu_seconds_total ",
        "process_resident_memory_bytes ", "process_start_time_seconds ", "process_open_fds ", "process_max_fds "}) {
    EXPECT_THAT(text, HasSubstr(name));
  }
  EXPECT_THAT(text, HasSubstr(std::string("version=\"") + kVersion + "\""));

  write_file(dir / "metrics.txt", text);
  const RunResult lint =
      run({"/bin/sh", "-c", "promtool check metrics < " + (dir / "metrics.txt").string()}, 60s);
  EXPECT_EQ(lint.exit_status, 0) << lint.stdout_text << lint.stderr_text;
  EXPECT_EQ(lint.stdout_text + lint.stderr_text, "");
}

// As Prometheus exporters do, / is a page that links to /metrics; other paths stay 404.
TEST_F(DaemonProcessTest, MetricsEndpointRootLinksToMetrics) {
  auto daemon = start();
  const std::uint16_t port = metrics_port(*daemon);
  const HttpResponse root = http_get("127.0.0.1", port, "/");
  EXPECT_EQ(root.status, 200);
  EXPECT_THAT(root.headers.at("content-type"), HasSubstr("text/html"));
  EXPECT_THAT(root.body, HasSubstr("<a href=\"/metrics\">"));
  EXPECT_THAT(root.body, HasSubstr(kVersion));
  EXPECT_EQ(http_get("127.0.0.1", port, "/elsewhere").status, 404);
  EXPECT_THAT(metrics(port), HasSubstr("fulfillsync_build_info"));
}

// Methods other than GET and HEAD get 405, HEAD GET's header without a body, and Prometheus' gzip is honoured.
TEST_F(DaemonProcessTest, MetricsEndpointAnswersMethodsAndGzipAsHttpSays) {
  auto daemon = start();
  const std::uint16_t port = metrics_port(*daemon);
  const HttpResponse post = http_request("127.0.0.1", port, "POST", "/metrics");
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.headers.at("allow"), "GET, HEAD");
  const HttpResponse head = http_request("127.0.0.1", port, "HEAD", "/metrics");
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.body, "");
  const HttpResponse zipped = http_request("127.0.0.1", port, "GET", "/metrics", {{"Accept-Encoding", "gzip"}});
  EXPECT_EQ(zipped.status, 200);
  EXPECT_EQ(zipped.headers.at("content-encoding"), "gzip");
  ASSERT_GE(zipped.body.size(), 2U);
  EXPECT_EQ(zipped.body.substr(0, 2), "\x1f\x8b");  // the gzip magic
  const HttpResponse plain = http_get("127.0.0.1", port, "/metrics");
  EXPECT_EQ(plain.headers.count("content-encoding"), 0U);
  EXPECT_THAT(plain.headers.at("content-type"), HasSubstr("text/plain; version=0.0.4"));
}

// /healthz follows the event loop; /readyz also asks the merchant database, as a restart would open it.
TEST_F(DaemonProcessTest, ReadyzAnswers503WhileTheMerchantDatabaseCannotBeOpened) {
  auto daemon = start();
  const std::uint16_t port = metrics_port(*daemon);
  const auto wait_for_readyz = [&](int status) {
    HttpResponse last;
    for (const auto deadline = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < deadline;
         std::this_thread::sleep_for(100ms)) {
      last = http_get("127.0.0.1", port, "/readyz");
      if (last.status == status) break;
    }
    return last;
  };
  EXPECT_EQ(wait_for_readyz(200).body, "ok\n");
  EXPECT_EQ(http_get("127.0.0.1", port, "/healthz").body, "ok\n");

  std::filesystem::rename(dir / "merchant.db", dir / "elsewhere.db");
  const HttpResponse away = wait_for_readyz(503);
  EXPECT_EQ(away.status, 503);
  EXPECT_THAT(away.body, HasSubstr("merchant database " + (dir / "merchant.db").string() + " does not exist"));
  const HttpResponse json = http_get("127.0.0.1", port, "/readyz?format=json");
  EXPECT_EQ(json.status, 503);
  EXPECT_THAT(json.body, HasSubstr(R"({"status":"unavailable","problems":["merchant database )"));
  EXPECT_EQ(http_get("127.0.0.1", port, "/healthz").status, 200) << "alive all the same";

  std::filesystem::rename(dir / "elsewhere.db", dir / "merchant.db");
  EXPECT_EQ(wait_for_readyz(200).status, 200);
  EXPECT_EQ(http_get("127.0.0.1", port, "/readyz?format=json").body, "{\"status\":\"ok\",\"problems\":[]}\n");
  daemon->send_signal(SIGTERM);
  EXPECT_EQ(daemon->wait_for_exit(15s), 0);
}

// Beyond loopback, metrics are neither encrypted nor authenticated unless TLS or basic auth is set.
TEST_F(DaemonProcessTest, CheckConfigRefusesAnOpenEndpointBeyondLoopback) {
  std::string config = read_file(config_path);
  config.replace(config.find("127.0.0.1:0"), 11, "0.0.0.0:0");
  write_file(config_path, config);
  const RunResult refused = run_command({"--config", config_path.string(), "check-config"});
  EXPECT_EQ(refused.exit_status, 78);
  EXPECT_THAT(refused.stdout_text + refused.stderr_text,
              HasSubstr("metrics.listen: 0.0.0.0 is not loopback, and the endpoint has neither TLS nor basic auth"));
  write_file(config_path, config + "  insecure: true\n");
  const RunResult allowed = run_command({"--config", config_path.string(), "check-config"});
  EXPECT_EQ(allowed.exit_status, 0) << allowed.stdout_text << allowed.stderr_text;
}

// run is a daemon: it keeps asking a provider it cannot reach, and says so in the log and a metric.
TEST_F(DaemonProcessTest, AProviderThatCannotBeReachedIsShownWhileRunKeepsAsking) {
  std::string config = read_file(config_path);
  config.replace(config.find("  allow_plain_http: true\n"), 25,
                 "  allow_plain_http: true\n  retry: {base: 10ms, cap: 20ms, attempts: 2}\n");
  write_file(config_path, config);
  auto daemon = start();
  const std::uint16_t port = metrics_port(*daemon);
  ASSERT_TRUE(daemon->wait_for_stderr("asking again in", 20s)) << daemon->stderr_text();
  EXPECT_THAT(daemon->stderr_text(), HasSubstr("error"));
  EXPECT_THAT(metrics(port), HasSubstr("fulfillsync_provider_reachable 0"));
  EXPECT_TRUE(daemon->running());
  daemon->send_signal(SIGTERM);
  EXPECT_EQ(daemon->wait_for_exit(15s), 0);
}

TEST_F(DaemonProcessTest, MetricsCanBeTurnedOff) {
  write_config();
  std::string config = read_file(config_path);
  config.erase(config.find("metrics:"));
  write_file(config_path, config + "metrics:\n  enabled: false\n");
  auto daemon = start();
  ASSERT_TRUE(daemon->wait_for_stderr("ready", 20s));
  EXPECT_THAT(daemon->stderr_text(), ::testing::Not(HasSubstr("metrics listening")));
}

TEST_F(DaemonProcessTest, CheckConfigPrintsEveryErrorOfTheFileWithItsPlace) {
  write_config("logging:\n  level: loud\nmetrics2: {}\n");
  const RunResult bad = run_command({"--config", config_path.string(), "check-config"});
  EXPECT_EQ(bad.exit_status, 78);
  EXPECT_THAT(bad.stdout_text,
              HasSubstr("ERROR " + config_path.string() + ":15:10: logging.level: 'loud' is not a log level"));
  EXPECT_THAT(bad.stdout_text, HasSubstr("ERROR " + config_path.string() + ":16:1: metrics2: unknown key 'metrics2'"));

  const RunResult run_bad = run_command({"--config", config_path.string(), "run"});
  EXPECT_EQ(run_bad.exit_status, 78);
}

// The objects of the merchant database: check-config must leave it as it found it.
std::string schema_of(const std::filesystem::path& database) {
  SQLite::Database db(database.string(), SQLite::OPEN_READONLY);
  SQLite::Statement query(db, "SELECT group_concat(name, ' ') FROM (SELECT name FROM sqlite_master ORDER BY name)");
  query.executeStep();
  return query.getColumn(0).getString();
}

TEST_F(DaemonProcessTest, CheckConfigChecksWhatRunWouldMeetWithoutWritingAnything) {
  const std::string before = schema_of(dir / "merchant.db");
  const RunResult ok = run_command({"--config", config_path.string(), "check-config"});
  EXPECT_EQ(ok.exit_status, 0) << ok.stdout_text << ok.stderr_text;
  for (const std::string& line :
       {"OK    merchant.sqlite.path: " + (dir / "merchant.db").string() + " opens (read-only)",
        std::string("OK    source tables: every table and column of the contract"),
        std::string("OK    result tables (prefix fulfillsync_): absent; run creates them"),
        "OK    checkpoint.path: " + (dir / "checkpoint.db").string() + " can be created (its directory is writable)",
        "OK    api.token_file: " + (dir / "api-token").string() + " is readable, private and not empty",
        "configuration " + config_path.string() + ": OK\n"}) {
    EXPECT_THAT(ok.stdout_text, HasSubstr(line));
  }
  EXPECT_EQ(schema_of(dir / "merchant.db"), before) << "check-config changed the merchant database";
  EXPECT_FALSE(std::filesystem::exists(dir / "checkpoint.db"));
}

TEST_F(DaemonProcessTest, CheckConfigWarnsAboutAMissingChangeLogAndAStartInTheFuture) {
  {
    SQLite::Database merchant((dir / "merchant.db").string(), SQLite::OPEN_READWRITE);
    merchant.exec("DROP TABLE fulfillsync_changes");
  }
  write_config("sync:\n  orders_since: 2090-01-01T00:00:00Z\n");
  const RunResult warned = run_command({"--config", config_path.string(), "check-config"});
  EXPECT_EQ(warned.exit_status, 0) << warned.stdout_text;
  EXPECT_THAT(warned.stdout_text, HasSubstr("WARN  fulfillsync_orders: no change log: changes are found by updated_at"));
  EXPECT_THAT(warned.stdout_text, HasSubstr("WARN  fulfillsync_returns: no change log"));
  EXPECT_THAT(warned.stdout_text, HasSubstr("fix: fulfillsyncd upgrade-source"));
  EXPECT_THAT(warned.stdout_text, HasSubstr("WARN  sync.orders_since: 2090-01-01T00:00:00.000Z is in the future"));
  EXPECT_THAT(warned.stdout_text, HasSubstr(": OK (3 warnings)"));
}

// What made `run` exit 69 and systemd restart it in a loop, while check-config said OK.
TEST_F(DaemonProcessTest, CheckConfigFindsWhatWouldStopRun) {
  const auto check = [&] { return run_command({"--config", config_path.string(), "check-config"}); };

  std::filesystem::rename(dir / "merchant.db", dir / "elsewhere.db");
  RunResult result = check();
  EXPECT_EQ(result.exit_status, 78);
  EXPECT_THAT(result.stdout_text, HasSubstr("ERROR merchant.sqlite.path: " + (dir / "merchant.db").string() +
                                            " does not exist"));
  EXPECT_FALSE(std::filesystem::exists(dir / "merchant.db")) << "check-config created the merchant database";
  std::filesystem::rename(dir / "elsewhere.db", dir / "merchant.db");

  write_file(dir / "api-token", "\n");
  result = check();
  EXPECT_EQ(result.exit_status, 78);
  EXPECT_THAT(result.stdout_text, HasSubstr("ERROR api.token_file: " + (dir / "api-token").string() + " is empty"));
  EXPECT_EQ(run_command({"--config", config_path.string(), "run"}).exit_status, 78);  // not 69, restarted
  write_file(dir / "api-token", "token\n");

  const std::string before = schema_of(dir / "merchant.db");
  std::string config = read_file(config_path);
  config.replace(config.find("merchant:\n"), 10, "merchant:\n  result_table_prefix: sqlite_\n");
  write_file(config_path, config);
  result = check();
  EXPECT_EQ(result.exit_status, 78) << result.stdout_text;
  EXPECT_THAT(result.stdout_text, HasSubstr("ERROR result tables (prefix sqlite_): cannot be created"));
  EXPECT_THAT(result.stdout_text, HasSubstr("reserved"));
  EXPECT_EQ(schema_of(dir / "merchant.db"), before);
  write_config();

  {
    SQLite::Database merchant((dir / "merchant.db").string(), SQLite::OPEN_READWRITE);
    merchant.exec("DROP TABLE fulfillsync_return_lines");
  }
  result = check();
  EXPECT_EQ(result.exit_status, 78);
  EXPECT_THAT(result.stdout_text, HasSubstr("ERROR source tables: fulfillsync_return_lines.return_reference_id: "
                                            "no such table"));

  std::string moved = read_file(config_path);
  moved.replace(moved.find((dir / "checkpoint.db").string()), (dir / "checkpoint.db").string().size(),
                (dir / "missing" / "checkpoint.db").string());
  write_file(config_path, moved);
  result = check();
  EXPECT_THAT(result.stdout_text, HasSubstr("ERROR checkpoint.path: the directory " + (dir / "missing").string() +
                                            " does not exist"));
}

TEST_F(DaemonProcessTest, VersionHelpAndUsageErrors) {
  const RunResult version = run_command({"--version"});
  EXPECT_EQ(version.exit_status, 0);
  EXPECT_EQ(version.stdout_text, std::string("fulfillsyncd ") + kVersion + "\n");

  const RunResult help = run_command({"--help"});
  EXPECT_EQ(help.exit_status, 0);
  EXPECT_THAT(help.stdout_text, HasSubstr("check-config"));

  const RunResult unknown = run_command({"--colour"});
  EXPECT_EQ(unknown.exit_status, 64);
  EXPECT_THAT(unknown.stderr_text, HasSubstr("unknown option '--colour'"));
  EXPECT_EQ(run_command({"frobnicate"}).exit_status, 64);
}

TEST_F(DaemonProcessTest, StartupFailuresExitUnavailableWithTheReason) {
  std::filesystem::remove(dir / "merchant.db");
  const RunResult missing = run_command({"--config", config_path.string(), "run"});
  EXPECT_EQ(missing.exit_status, 69);
  EXPECT_THAT(missing.stderr_text, HasSubstr("merchant database " + (dir / "merchant.db").string() +
                                             " does not exist"));
}

TEST_F(DaemonProcessTest, OneDaemonPerCheckpointStore) {
  auto first = start();
  metrics_port(*first);
  const RunResult second = run_command({"--config", config_path.string(), "run"});
  EXPECT_EQ(second.exit_status, 69);
  EXPECT_THAT(second.stderr_text, HasSubstr("is in use by another fulfillsyncd"));
  EXPECT_TRUE(first->running());
  struct stat st {};
  ASSERT_EQ(stat((dir / "checkpoint.db").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);  // it holds tokens
}

}  // namespace
}  // namespace fulfillsync::testing
