// fulfillsyncd driven from outside, the way systemd, an operator and Prometheus meet it.
#include <signal.h>
#include <sys/stat.h>

#include <regex>

#include <SQLiteCpp/Database.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fulfillsync/common/version.hpp"
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
    merchant.exec("CREATE TABLE shop_orders (id INTEGER PRIMARY KEY)");
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

TEST_F(DaemonProcessTest, MetricsCanBeTurnedOff) {
  write_config();
  std::string config = read_file(config_path);
  config.erase(config.find("metrics:"));
  write_file(config_path, config + "metrics:\n  enabled: false\n");
  auto daemon = start();
  ASSERT_TRUE(daemon->wait_for_stderr("ready", 20s));
  EXPECT_THAT(daemon->stderr_text(), ::testing::Not(HasSubstr("metrics listening")));
}

TEST_F(DaemonProcessTest, CheckConfigPrintsOkOrEveryError) {
  const RunResult ok = run_command({"--config", config_path.string(), "check-config"});
  EXPECT_EQ(ok.exit_status, 0);
  EXPECT_EQ(ok.stdout_text, "OK\n");

  write_config("logging:\n  level: loud\nmetrics2: {}\n");
  const RunResult bad = run_command({"--config", config_path.string(), "check-config"});
  EXPECT_EQ(bad.exit_status, 78);
  EXPECT_EQ(bad.stdout_text, "");
  EXPECT_THAT(bad.stderr_text, HasSubstr(config_path.string() + ":15:10: logging.level: 'loud' is not a log level"));
  EXPECT_THAT(bad.stderr_text, HasSubstr(config_path.string() + ":16:1: metrics2: unknown key 'metrics2'"));

  const RunResult run_bad = run_command({"--config", config_path.string(), "run"});
  EXPECT_EQ(run_bad.exit_status, 78);
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
