#include "fulfillsync/daemon/cli/cli.hpp"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optional>
#include <sstream>

#include <SQLiteCpp/Database.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fulfillsync/daemon/exit_codes.hpp"
#include "fulfillsync/daemon/push/source_intake.hpp"
#include "fulfillsync/daemon/store/checkpoint_store.hpp"
#include "fulfillsync/daemon/store/daemon_record.hpp"
#include "fulfillsync/daemon/store/job_stats.hpp"
#include "fulfillsync/daemon/store/outbound_ledger.hpp"
#include "fulfillsync/testing/process.hpp"

namespace fulfillsync::daemon {
namespace {

std::optional<CommandLine> parse(std::vector<std::string> args, std::string* error_out = nullptr) {
  std::string error;
  auto line = parse_command_line(args, error);
  if (error_out) *error_out = error;
  return line;
}

TEST(CommandLineTest, RunIsTheDefault) {
  const auto line = parse({});
  ASSERT_TRUE(line);
  EXPECT_EQ(line->command, Command::run);
  EXPECT_EQ(line->config_path, "/etc/fulfillsync/fulfillsync.yaml");
  EXPECT_EQ(line->log_level, std::nullopt);
}

TEST(CommandLineTest, OptionsInEitherForm) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--config", "a.yaml", "--log-level", "debug", "check-config"},
           {"--config=a.yaml", "--log-level=debug", "check-config"},
           {"check-config", "-c", "a.yaml", "-l", "debug"}}) {
    const auto line = parse(args);
    ASSERT_TRUE(line);
    EXPECT_EQ(line->command, Command::check_config);
    EXPECT_EQ(line->config_path, "a.yaml");
    EXPECT_EQ(line->log_level, spdlog::level::debug);
  }
}

TEST(CommandLineTest, UsageErrorsSayWhat) {
  std::string error;
  EXPECT_FALSE(parse({"--config"}, &error));
  EXPECT_EQ(error, "--config needs a value");
  EXPECT_FALSE(parse({"--log-level", "loud"}, &error));
  EXPECT_EQ(error, "'loud' is not a log level: trace, debug, info, warn, error, critical or off");
  EXPECT_FALSE(parse({"sync"}, &error));
  EXPECT_EQ(error, "unknown command 'sync'");
  EXPECT_FALSE(parse({"run", "check-config"}, &error));
  EXPECT_EQ(error, "unexpected argument 'check-config'");
  EXPECT_FALSE(parse({"--configuration=x"}, &error));
  EXPECT_EQ(error, "unknown option '--configuration=x'");
}

TEST(CommandLineTest, OperatorCommands) {
  EXPECT_EQ(parse({"once"})->command, Command::once);
  EXPECT_EQ(parse({"status"})->command, Command::status);
  const auto dry = parse({"--dry-run", "once"});
  ASSERT_TRUE(dry);
  EXPECT_TRUE(dry->dry_run);
  const auto one = parse({"retry", "ORDER-7"});
  ASSERT_TRUE(one);
  EXPECT_EQ(one->command, Command::retry);
  EXPECT_EQ(one->retry_reference, "ORDER-7");
  const auto all = parse({"retry", "--rejected"});
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->retry_rejected);

  const auto product = parse({"retry", "--product", "TEE-1"});
  ASSERT_TRUE(product);
  EXPECT_EQ(product->retry_product, "TEE-1");
  EXPECT_EQ(product->retry_reference, std::nullopt);
  const auto sku = parse({"retry", "--sku=TEE-1-M"});
  ASSERT_TRUE(sku);
  EXPECT_EQ(sku->retry_sku, "TEE-1-M");

  std::string error;
  EXPECT_FALSE(parse({"retry"}, &error));
  EXPECT_EQ(error, "retry needs one of REFERENCE_ID, --product REFERENCE_ID, --sku SKU or --rejected");
  EXPECT_FALSE(parse({"retry", "--sku", "S", "--product", "P"}, &error));
  EXPECT_FALSE(parse({"retry", "A", "--sku", "S"}, &error));
  EXPECT_FALSE(parse({"retry", "--sku"}, &error));
  EXPECT_EQ(error, "--sku needs a value");
  EXPECT_FALSE(parse({"status", "--sku", "S"}, &error));
  EXPECT_FALSE(parse({"retry", "A", "--rejected"}, &error));
  EXPECT_FALSE(parse({"retry", "A", "B"}, &error));
  EXPECT_EQ(error, "unexpected argument 'B'");
  EXPECT_FALSE(parse({"--dry-run", "status"}, &error));
  EXPECT_EQ(error, "--dry-run goes with run or once");
}

TEST(CommandLineTest, ResyncTakesADateAndMaybeAJob) {
  const auto all = parse({"resync", "--since", "2026-03-01"});
  ASSERT_TRUE(all);
  EXPECT_EQ(all->command, Command::resync);
  EXPECT_EQ(all->resync_since, "2026-03-01");
  EXPECT_EQ(all->resync_job, std::nullopt);
  const auto one = parse({"resync", "--job=pull_returns", "--since=2026-03-01T12:00:00Z"});
  ASSERT_TRUE(one);
  EXPECT_EQ(one->resync_job, "pull_returns");
  EXPECT_EQ(one->resync_since, "2026-03-01T12:00:00Z");

  std::string error;
  EXPECT_FALSE(parse({"resync"}, &error));
  EXPECT_EQ(error, "resync needs --since DATE");
  EXPECT_FALSE(parse({"resync", "--since", "last week"}, &error));
  EXPECT_EQ(error, "--since 'last week' is not a date-time (2026-03-01 or 2026-03-01T12:00:00Z)");
  EXPECT_FALSE(parse({"status", "--since", "2026-03-01"}, &error));
  EXPECT_EQ(error, "unknown option '--since'");
}

TEST(CommandLineTest, EveryCommandOfTheHelpIsInTheReadme) {
  const std::string readme = testing::read_file(testing::source_path("README.md"));
  std::istringstream help(usage_text());
  bool in_commands = false;
  int commands = 0;
  for (std::string line; std::getline(help, line);) {
    if (line == "Commands:") in_commands = true;
    if (line == "Options:") break;
    // "  resync --since DATE [--job NAME]": a command starts at column 2, its text after two spaces.
    if (!in_commands || line.size() < 3 || line.compare(0, 2, "  ") != 0 || line[2] == ' ') continue;
    const std::string command = line.substr(2, line.find("  ", 2) - 2);
    EXPECT_NE(readme.find("\n  " + command), std::string::npos) << "README's command list lacks '" << command << "'";
    ++commands;
  }
  // run, once, status, retry (three times), resync, check-config, auth login, upgrade-source, recover-store, backup
  EXPECT_EQ(commands, 12);
}

TEST(CommandLineTest, UpgradeSourceTakesNoArgument) {
  EXPECT_EQ(parse({"upgrade-source"})->command, Command::upgrade_source);
  std::string error;
  EXPECT_FALSE(parse_command_line({"upgrade-source", "now"}, error));
  EXPECT_EQ(error, "unexpected argument 'now'");
}

TEST(CommandLineTest, OnlineGoesWithCheckConfig) {
  EXPECT_FALSE(parse({"check-config"})->online);
  EXPECT_TRUE(parse({"check-config", "--online"})->online);
  std::string error;
  EXPECT_FALSE(parse({"status", "--online"}, &error));
  EXPECT_EQ(error, "unknown option '--online'");
}

// Every exit status is explained in --help and in the README's table (each is tested where it arises:
// daemon_process_test, exit_status_test, pull_sync_test, push_sync_test).
TEST(CommandLineTest, EveryExitStatusIsDocumented) {
  const std::string readme = testing::read_file(testing::source_path("README.md"));
  const std::string help = usage_text();
  for (const int code : {exit_code::ok, exit_code::status_failing, exit_code::status_not_running, exit_code::usage,
                         exit_code::data_error, exit_code::unavailable, exit_code::software,
                         exit_code::temporary_failure, exit_code::config}) {
    const std::string number = std::to_string(code);
    EXPECT_NE(help.find("\n  " + number + std::string(4 - number.size(), ' ')), std::string::npos) << code;
    EXPECT_NE(readme.find("\n| " + number + " | "), std::string::npos) << code;
  }
}

TEST(CommandLineTest, HelpAndVersionWinOverEverythingElse) {
  EXPECT_EQ(parse({"run", "--help"})->command, Command::help);
  EXPECT_EQ(parse({"-V"})->command, Command::version);
  EXPECT_EQ(parse({"retry", "--help"})->command, Command::help);  // no REFERENCE_ID needed
}

TEST(CommandLineTest, StatusTakesJson) {
  EXPECT_FALSE(parse({"status"})->json);
  EXPECT_TRUE(parse({"status", "--json"})->json);
  std::string error;
  EXPECT_FALSE(parse({"once", "--json"}, &error));
  EXPECT_EQ(error, "unknown option '--json'");
}

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using namespace std::chrono_literals;

constexpr int kStatusFailing = 1;
constexpr int kNotRunning = 3;
constexpr int kUsage = 64;
constexpr int kUnavailable = 69;
constexpr int kConfigError = 78;

// fulfillsyncd itself, as an operator runs it: a configuration in a temporary directory, a provider
// that does not answer (port 1), and metrics on a free port.
class DaemonCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::write_file(dir / "token", "secret\n");
    chmod((dir / "token").c_str(), 0600);
    testing::write_file(dir / "shop.db", "");
    write_config("127.0.0.1:0");
  }

  void write_config(const std::string& metrics_listen) {
    testing::write_file(config, fmt::format("checkpoint:\n  path: {}\n"
                                            "merchant:\n  sqlite:\n    path: {}\n"
                                            "api:\n  base_url: http://127.0.0.1:1\n  allow_plain_http: true\n"
                                            "  token_file: {}\n  retry:\n    base: 10ms\n    cap: 50ms\n"
                                            "    attempts: 2\n"
                                            "sync:\n  progress_interval: 1s\n"
                                            "metrics:\n  listen: {}\n",
                                            store_path.string(), (dir / "shop.db").string(),
                                            (dir / "token").string(), metrics_listen));
  }

  testing::ChildProcess::Options options(std::vector<std::string> command) const {
    std::vector<std::string> argv = {testing::binary_path("fulfillsyncd").string(), "--config", config.string()};
    argv.insert(argv.end(), command.begin(), command.end());
    return {.argv = argv, .unset_env = {"NOTIFY_SOCKET", "FULFILLSYNC_FAILPOINTS", "CREDENTIALS_DIRECTORY"}};
  }
  testing::RunResult daemon(std::vector<std::string> command) const { return testing::run(options(command), 30s); }

  testing::TempDir dir;
  std::filesystem::path config = dir / "fulfillsync.yaml";
  std::filesystem::path store_path = dir / "checkpoint.db";
};

// fulfillsyncd COMMAND --help is that command's usage, not the whole help.
TEST_F(DaemonCommandTest, EveryCommandHasItsOwnHelp) {
  for (const std::string command : {"run", "once", "status", "retry", "resync", "check-config", "auth login"}) {
    SCOPED_TRACE(command);
    std::vector<std::string> args;
    std::istringstream words(command);
    for (std::string word; words >> word;) args.push_back(word);
    args.push_back("--help");
    const auto result = daemon(args);
    EXPECT_EQ(result.exit_status, 0) << result.stderr_text;
    EXPECT_THAT(result.stdout_text, StartsWith("Usage: fulfillsyncd [OPTIONS] " + command));
    EXPECT_THAT(result.stdout_text, HasSubstr("Common options:"));
    EXPECT_THAT(result.stdout_text, Not(HasSubstr("Commands:")));
  }
  const auto general = daemon({"--help"});
  EXPECT_THAT(general.stdout_text, StartsWith("Usage: fulfillsyncd [OPTIONS] [COMMAND]"));
  // A usage error shows the usage of the command it is about.
  const auto wrong = daemon({"resync"});
  EXPECT_EQ(wrong.exit_status, kUsage);
  EXPECT_THAT(wrong.stderr_text, HasSubstr("resync needs --since DATE\n\nUsage: fulfillsyncd [OPTIONS] resync --since"));
}

TEST_F(DaemonCommandTest, AMetricsPortInUseIsNamedAndExitsUnavailable) {
  const int holder = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(holder, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(holder, 1), 0);
  ASSERT_EQ(::getsockname(holder, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const std::string listen = fmt::format("127.0.0.1:{}", ntohs(address.sin_port));
  write_config(listen);
  const auto result = daemon({"run"});
  ::close(holder);
  EXPECT_EQ(result.exit_status, kUnavailable) << result.stderr_text;
  EXPECT_THAT(result.stderr_text, HasSubstr(listen + ": address already in use"));
  EXPECT_THAT(result.stderr_text, Not(HasSubstr("null context")));
}

TEST_F(DaemonCommandTest, ADirectoryAsConfigIsNamedAsSuch) {
  const auto result = testing::run(
      {testing::binary_path("fulfillsyncd").string(), "--config", dir.path().string(), "check-config"}, 30s);
  EXPECT_EQ(result.exit_status, kConfigError);
  EXPECT_THAT(result.stdout_text, HasSubstr(dir.path().string() + ": is a directory, not a configuration file"));
  EXPECT_THAT(result.stdout_text, Not(HasSubstr("missing")));
}

TEST_F(DaemonCommandTest, StatusWithoutAStoreSaysTheDaemonNeverRan) {
  const auto result = daemon({"status"});
  EXPECT_EQ(result.exit_status, kNotRunning);
  EXPECT_THAT(result.stderr_text, HasSubstr("the daemon has never run with this config"));
  EXPECT_THAT(result.stderr_text, Not(HasSubstr("unable to open database file")));
  EXPECT_FALSE(std::filesystem::exists(store_path));  // status creates nothing
  const auto json = daemon({"status", "--json"});
  EXPECT_EQ(json.exit_status, kNotRunning);
  EXPECT_THAT(json.stdout_text, HasSubstr(R"("health":"not_running","daemon":{"state":"never_started","pid":null,)"));
  EXPECT_THAT(json.stdout_text, HasSubstr(R"("jobs":[],"outbound":{"order_create":{"pending":0,)"));
}

// A daemon that cannot reach the provider from its start runs, waits, and has never succeeded:
// status says so and exits 1; once it is stopped, 3.
TEST_F(DaemonCommandTest, StatusOfARunningDaemonWaitingForTheProvider) {
  testing::ChildProcess running(options({"run"}));
  ASSERT_TRUE(running.wait_for_stderr("asking again in", 20s)) << running.stderr_text();
  const auto status = daemon({"status"});
  EXPECT_EQ(status.exit_status, kStatusFailing) << status.stderr_text;
  EXPECT_THAT(status.stdout_text, HasSubstr(fmt::format("{}: running, PID {}, version", store_path.string(),
                                                        running.pid())));
  EXPECT_THAT(status.stdout_text, HasSubstr("Waiting for the provider's first answer (GET /channel failed"));
  EXPECT_THAT(status.stdout_text, HasSubstr("Nothing has succeeded yet"));
  EXPECT_THAT(status.stdout_text, HasSubstr("Health: FAILING: the jobs wait for the provider"));
  const auto json = daemon({"status", "--json"});
  EXPECT_EQ(json.exit_status, kStatusFailing);
  EXPECT_THAT(json.stdout_text, HasSubstr(fmt::format(R"("health":"failing","daemon":{{"state":"running","pid":{},)",
                                                      running.pid())));
  EXPECT_THAT(json.stdout_text, HasSubstr(R"("nothing_succeeded_yet":true)"));

  running.send_signal(SIGTERM);
  ASSERT_EQ(running.wait_for_exit(30s), 0) << running.stderr_text();
  const auto stopped = daemon({"status"});
  EXPECT_EQ(stopped.exit_status, kNotRunning) << stopped.stderr_text;
  EXPECT_THAT(stopped.stdout_text, HasSubstr(fmt::format("not running; PID {} stopped at", running.pid())));
  EXPECT_THAT(stopped.stdout_text, Not(HasSubstr("Waiting for")));
}

// The store as a daemon leaves it, with this test process noted as the daemon that runs on it.
class RecordedDaemonTest : public DaemonCommandTest {
 protected:
  void SetUp() override {
    DaemonCommandTest::SetUp();
    // This process plays the daemon: it holds the store's lock and notes itself, as fulfillsyncd does.
    daemon_store.emplace(store_path);
    CheckpointStore& store = *daemon_store;
    record_daemon_start(store);
    save_job_stats(store, {JobStats{.job = "push_orders", .runs = 12, .items = 10,
                                    .last_success_at = "2026-11-25T10:00:00.000Z",
                                    .last_answer_at = "2026-11-25T10:00:00.000Z", .last_answer_status = 201}});
  }
  void execute(const std::string& sql) {
    SQLite::Database db(store_path.string(), SQLite::OPEN_READWRITE);
    db.exec(sql);
  }
  std::optional<CheckpointStore> daemon_store;
};

TEST_F(RecordedDaemonTest, StatusExitsByTheJobsHealth) {
  const auto healthy = daemon({"status"});
  EXPECT_EQ(healthy.exit_status, 0) << healthy.stdout_text << healthy.stderr_text;
  EXPECT_THAT(healthy.stdout_text, HasSubstr(fmt::format("running, PID {}", ::getpid())));
  EXPECT_THAT(healthy.stdout_text, HasSubstr("Health: no job is failing or paused"));
  EXPECT_THAT(healthy.stdout_text, HasSubstr("provider's last answer: HTTP 201"));
  EXPECT_THAT(healthy.stdout_text, Not(HasSubstr("Nothing has succeeded yet")));
  EXPECT_THAT(daemon({"status", "--json"}).stdout_text, HasSubstr(R"("health":"healthy")"));

  // One failed run is a retry; api.retry.attempts (2) in a row is failing.
  execute("UPDATE job_stats SET failed_in_a_row = 1, last_error_at = '2026-11-25T10:01:00.000Z', "
          "last_error = 'POST /order: ambiguous (503 Service Unavailable)'");
  const auto retrying = daemon({"status"});
  EXPECT_EQ(retrying.exit_status, 0);
  EXPECT_THAT(retrying.stdout_text, HasSubstr("last error"));
  EXPECT_THAT(retrying.stdout_text, HasSubstr("POST /order: ambiguous (503 Service Unavailable)"));
  execute("UPDATE job_stats SET failed_in_a_row = 2");
  const auto failing = daemon({"status"});
  EXPECT_EQ(failing.exit_status, kStatusFailing);
  EXPECT_THAT(failing.stdout_text, HasSubstr("Health: FAILING: push_orders failing"));
  const auto json = daemon({"status", "--json"});
  EXPECT_EQ(json.exit_status, kStatusFailing);
  EXPECT_THAT(json.stdout_text, HasSubstr(R"("name":"push_orders","state":"failing","runs":12,)"));
  EXPECT_THAT(json.stdout_text,
              HasSubstr(R"("last_answer":{"at":"2026-11-25T10:00:00.000Z","http_status":201},"last_error":{"at":)"));
  execute("UPDATE job_stats SET failed_in_a_row = 0, paused = 1");
  const auto paused = daemon({"status"});
  EXPECT_EQ(paused.exit_status, kStatusFailing);
  EXPECT_THAT(paused.stdout_text, HasSubstr("Waiting for an operator: push_orders is paused"));
  EXPECT_THAT(paused.stdout_text, HasSubstr("Health: FAILING: push_orders paused"));

  // A daemon killed without a clean stop: the kernel dropped its lock on the store.
  daemon_store.reset();
  const auto killed = daemon({"status"});
  EXPECT_EQ(killed.exit_status, kNotRunning) << killed.stdout_text;
  EXPECT_THAT(killed.stdout_text, HasSubstr("ended without a clean stop"));
  daemon_store.emplace(store_path);

  // A process given the daemon's PID since (another start time) is not the daemon.
  execute("UPDATE daemon_process SET start_ticks = start_ticks + 1");
  const auto reused = daemon({"status"});
  EXPECT_EQ(reused.exit_status, kNotRunning);
  EXPECT_THAT(reused.stdout_text, HasSubstr("ended without a clean stop"));
  EXPECT_THAT(daemon({"status", "--json"}).stdout_text, HasSubstr(R"("health":"not_running","daemon":{"state":"vanished")"));
}

TEST_F(RecordedDaemonTest, LongReferenceIdsAreCutInSummaryLines) {
  const std::string reference = "R" + std::string(299, '7');
  {
    CheckpointStore store(store_path, CheckpointStore::Access::alongside);
    store.save_cursor(SourceIntake<merchant::OrderRow>::cursor_name(),
                      encode_cursor(merchant::ChangeCursor{"2026-11-25T10:00:00.000Z", reference}));
    OutboundLedger ledger(store);
    ledger.offer(LedgerKind::order_create, reference, "hash", "{}");
    ledger.mark_rejected(LedgerKind::order_create, reference, "Fulfillment center 999 does not exist");
  }
  const auto status = daemon({"status"});
  EXPECT_THAT(status.stdout_text, Not(HasSubstr(reference)));
  EXPECT_THAT(status.stdout_text, HasSubstr("Read fulfillsync_orders up to 2026-11-25T10:00:00.000Z " +
                                            reference.substr(0, 37) + "...\n"));
  EXPECT_THAT(status.stdout_text, HasSubstr("order " + reference.substr(0, 37) + "... ("));
  // Scripts get it whole.
  EXPECT_THAT(daemon({"status", "--json"}).stdout_text, HasSubstr(R"("reference_id":")" + reference + "\""));
}

}  // namespace
}  // namespace fulfillsync::daemon
