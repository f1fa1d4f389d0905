// `fulfillsyncd once` ends, and says how in its exit status (README "Exit status", --help), and
// `check-config --online` against the sandbox (sync_fixture.hpp).
#include "sync_fixture.hpp"

namespace fulfillsync::testing {
namespace {

using ::testing::HasSubstr;

constexpr int kNotRunning = 3;  // status
constexpr int kUnavailable = 69;
constexpr int kWorkLeft = 75;
constexpr int kConfigError = 78;

class ExitStatusTest : public SyncFixture {
 protected:
  void set_config_value(std::string_view from, std::string_view to) {
    std::string config = read_file(config_path);
    const auto at = config.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    config.replace(at, from.size(), to);
    write_file(config_path, config);
  }

  std::unique_ptr<ChildProcess> once_in_background() {
    return std::make_unique<ChildProcess>(
        ChildProcess::Options{.argv = {binary_path("fulfillsyncd").string(), "--config", config_path.string(), "once"},
                              .unset_env = {"NOTIFY_SOCKET", "FULFILLSYNC_FAILPOINTS"}});
  }
};

TEST_F(ExitStatusTest, AJobThatKeepsFailingEndsTheRunWithUnavailable) {
  start_sandbox();
  set_config_value("attempts: 3", "attempts: 2");
  insert_orders("GONE", 3);
  execute("DROP TABLE fulfillsync_order_lines; DROP TABLE fulfillsync_orders");
  const auto result = once();
  EXPECT_EQ(result.exit_status, kUnavailable) << result.stderr_text;
  EXPECT_THAT(result.stderr_text, HasSubstr("failed 2 runs in a row"));
  EXPECT_THAT(result.stderr_text, HasSubstr("fulfillsync_orders"));
  EXPECT_THAT(result.stdout_text, HasSubstr("order_create"));  // the summary
  // status keeps the job's state and its last error after the run.
  const auto status = daemon({"status"});
  EXPECT_EQ(status.exit_status, kNotRunning);
  EXPECT_THAT(status.stdout_text, ::testing::ContainsRegex("push_orders +[0-9]+ +[0-9]+ .* failing\n"));
  EXPECT_THAT(status.stdout_text, ::testing::ContainsRegex("last error [^\n]*fulfillsync_orders"));
}

TEST_F(ExitStatusTest, AProviderThatCannotBeReachedEndsTheRunWithUnavailable) {
  start_sandbox();
  set_config_value(sandbox->base_url(), "http://127.0.0.1:1");
  insert_orders("AWAY", 3);
  const auto result = run(ChildProcess::Options{.argv = {binary_path("fulfillsyncd").string(), "--config",
                                                         config_path.string(), "once"},
                                                .unset_env = {"FULFILLSYNC_FAILPOINTS"}},
                          60s);
  EXPECT_EQ(result.exit_status, kUnavailable) << result.stderr_text;
  EXPECT_THAT(result.stderr_text, HasSubstr("the provider cannot be reached: GET /channel failed"));
  EXPECT_THAT(result.stderr_text, HasSubstr("after 3 attempts, api.retry"));
  EXPECT_THAT(result.stdout_text, HasSubstr("order_create"));
}

TEST_F(ExitStatusTest, AProviderThatStopsAnsweringMidRunEndsTheRunWithUnavailable) {
  start_sandbox({"--fault-seed", "1", "--faults", "route=GET /*/order;drop_before=1"});
  const auto result = once();
  EXPECT_EQ(result.exit_status, kUnavailable) << result.stderr_text;
  EXPECT_THAT(result.stderr_text, HasSubstr("runs in a row; the provider cannot be reached"));
}

TEST_F(ExitStatusTest, SigtermWithWorkLeftEndsWithTempfailAndASummary) {
  start_sandbox({"--fault-seed", "1", "--faults", "route=POST /**;latency_ms=200"});
  insert_orders("TERM", 200);
  auto daemon = once_in_background();
  ASSERT_TRUE(daemon->wait_for_stderr("using channel", 30s)) << daemon->stderr_text();
  std::this_thread::sleep_for(500ms);
  daemon->send_signal(SIGTERM);
  EXPECT_EQ(daemon->wait_for_exit(30s), kWorkLeft) << daemon->stderr_text();
  EXPECT_THAT(daemon->stderr_text(), HasSubstr("stopped by a signal before the work was done"));
  EXPECT_THAT(daemon->stdout_text(), HasSubstr("order_create"));
}

// A certificate for 127.0.0.1, self-signed, made by the openssl tool; returns the PEM files' paths.
std::pair<std::filesystem::path, std::filesystem::path> self_signed(const TempDir& dir) {
  const auto cert = dir / "cert.pem";
  const auto key = dir / "key.pem";
  const auto made = run({"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                         "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key.string(), "-out", cert.string(),
                         "-days", "1", "-subj",
                         "/CN=fulfillsync test", "-addext", "subjectAltName=IP:127.0.0.1"});
  EXPECT_EQ(made.exit_status, 0) << made.stderr_text;
  return {cert, key};
}

// An untrusted certificate is a configuration problem: no retrying for ever, but exit 78 with the fix.
TEST_F(ExitStatusTest, AnUntrustedCertificateIsAConfigurationError) {
  const auto [cert, key] = self_signed(dir);
  start_sandbox({"--tls-cert", cert.string(), "--tls-key", key.string()});
  ASSERT_EQ(sandbox->base_url().rfind("https://", 0), 0u);
  insert_orders("TLS", 2);
  for (const char* command : {"once", "run"}) {
    const auto result = run(ChildProcess::Options{.argv = {binary_path("fulfillsyncd").string(), "--config",
                                                           config_path.string(), command},
                                                  .unset_env = {"NOTIFY_SOCKET", "FULFILLSYNC_FAILPOINTS"}},
                            60s);
    EXPECT_EQ(result.exit_status, kConfigError) << command << ":\n" << result.stderr_text;
    EXPECT_THAT(result.stderr_text, HasSubstr("the provider's certificate is not trusted"));
    EXPECT_THAT(result.stderr_text, HasSubstr("set api.ca_file"));
  }
  write_config("", "", "");
  set_config_value("  allow_plain_http: true\n", "  allow_plain_http: true\n  ca_file: " + cert.string() + "\n");
  const auto trusted = once();
  EXPECT_EQ(trusted.exit_status, 0) << trusted.stderr_text;
}

TEST_F(ExitStatusTest, CheckConfigOnlineShowsTheChannel) {
  start_sandbox();
  const auto result = daemon({"check-config", "--online"});
  EXPECT_EQ(result.exit_status, 0) << result.stdout_text << result.stderr_text;
  EXPECT_THAT(result.stdout_text, HasSubstr("OK    provider: " + sandbox->base_url() + ": using channel"));

  write_file(dir / "api-token", "not-the-token\n");
  const auto refused = daemon({"check-config", "--online"});
  EXPECT_EQ(refused.exit_status, kConfigError);
  EXPECT_THAT(refused.stdout_text, HasSubstr("ERROR provider: " + sandbox->base_url() + ": GET /channel was refused"));
}

// status, retry and resync work for an operator who cannot read the token.
TEST_F(ExitStatusTest, StatusRetryAndResyncDoNotNeedTheToken) {
  start_sandbox();
  insert_orders("TOK", 2);
  ASSERT_EQ(once().exit_status, 0);
  std::filesystem::remove(dir / "api-token");
  const auto status = daemon({"status"});
  EXPECT_EQ(status.exit_status, kNotRunning) << status.stderr_text;  // once has ended
  // Each job's last answer is the provider's answer to that job's own calls.
  EXPECT_THAT(status.stdout_text, ::testing::ContainsRegex("push_orders [^\n]*\n +provider's last answer: HTTP 20[01], "));
  EXPECT_THAT(status.stdout_text, ::testing::ContainsRegex("pull_shipments [^\n]*\n +provider's last answer: HTTP 200, "));
  EXPECT_EQ(daemon({"retry", "--rejected"}).exit_status, 0);
  EXPECT_EQ(daemon({"resync", "--since", "2026-01-01"}).exit_status, 0);
  EXPECT_EQ(once().exit_status, kConfigError);  // a run needs it
}

}  // namespace
}  // namespace fulfillsync::testing
