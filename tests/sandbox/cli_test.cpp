// The command-line contract other tools rely on, and --state persistence.
#include <csignal>

#include <gtest/gtest.h>

#include "fulfillsync/common/version.hpp"
#include "sandbox_fixture.hpp"

namespace fulfillsync::sandbox_test {
namespace {

using namespace std::chrono_literals;

TEST(SandboxCli, PrintsListeningLineFirstWithTheBoundPort) {
  Sandbox sandbox;
  const std::string out = sandbox.process().stdout_text();
  EXPECT_EQ(out.rfind("listening on http://127.0.0.1:", 0), 0u) << out;
  EXPECT_NE(sandbox.port(), 0);
  EXPECT_EQ(sandbox.get("/2026-01/channel").status, 200);
}

TEST(SandboxCli, SigtermStopsCleanlyWithExitZero) {
  Sandbox sandbox;
  sandbox.process().send_signal(SIGTERM);
  EXPECT_EQ(sandbox.process().wait_for_exit(10s), 0);
}

TEST(SandboxCli, SigintStopsCleanlyWithExitZero) {
  Sandbox sandbox;
  sandbox.process().send_signal(SIGINT);
  EXPECT_EQ(sandbox.process().wait_for_exit(10s), 0);
}

TEST(SandboxCli, RefusesUnknownOptionsAndMissingListen) {
  const auto binary = testing::binary_path("fulfillsync-sandbox").string();
  auto unknown = testing::run(std::vector<std::string>{binary, "--listen", "127.0.0.1:0", "--bogus"}, 10s);
  EXPECT_EQ(unknown.exit_status, 2);
  EXPECT_NE(unknown.stderr_text.find("--bogus"), std::string::npos);
  auto missing = testing::run(std::vector<std::string>{binary}, 10s);
  EXPECT_EQ(missing.exit_status, 2);
  EXPECT_NE(missing.stderr_text.find("--listen"), std::string::npos);
  auto bad_faults = testing::run(std::vector<std::string>{binary, "--listen", "127.0.0.1:0", "--faults", "route=POST /x;429=2"}, 10s);
  EXPECT_EQ(bad_faults.exit_status, 1);
  EXPECT_NE(bad_faults.stderr_text.find("429"), std::string::npos);
  auto bad_rate = testing::run(std::vector<std::string>{binary, "--listen", "127.0.0.1:0", "--rate-limit", "fast"}, 10s);
  EXPECT_EQ(bad_rate.exit_status, 2);
  auto help = testing::run(std::vector<std::string>{binary, "--help"}, 10s);
  EXPECT_EQ(help.exit_status, 0);
  EXPECT_NE(help.stdout_text.find("--clock-speed"), std::string::npos);
}

TEST(SandboxCli, PrintsItsVersion) {
  const auto binary = testing::binary_path("fulfillsync-sandbox").string();
  for (const char* flag : {"--version", "-V"}) {
    const auto version = testing::run(std::vector<std::string>{binary, flag}, 10s);
    EXPECT_EQ(version.exit_status, 0) << flag;
    EXPECT_EQ(version.stdout_text, std::string("fulfillsync-sandbox ") + kVersion + "\n") << flag;
  }
}

// Tokens on the command line are visible in ps; a file or the environment keeps them out of it.
TEST(SandboxCli, TakesTokensFromAFile) {
  testing::TempDir dir;
  testing::write_file(dir / "tokens", "# the integration tokens\n\nfile-token-1\n  file-token-2 \r\n");
  testing::write_file(dir / "admin-token", "file-admin\n");
  Sandbox sandbox({"--token-file", (dir / "tokens").string(), "--admin-token-file", (dir / "admin-token").string()});
  EXPECT_EQ(sandbox.call("GET", "/2026-01/channel", {}, {}, "file-token-1").status, 200);
  EXPECT_EQ(sandbox.call("GET", "/2026-01/channel", {}, {}, "file-token-2").status, 200);
  EXPECT_EQ(sandbox.call("GET", "/2026-01/channel", {}, {}, "# the integration tokens").status, 401);
  EXPECT_EQ(sandbox.raw("GET", "/_sandbox/clock", {{"X-Sandbox-Admin-Token", "file-admin"}}).status, 200);
  EXPECT_EQ(sandbox.raw("GET", "/_sandbox/clock", {{"X-Sandbox-Admin-Token", std::string(kAdminToken)}}).status, 401);
}

TEST(SandboxCli, TakesTokensFromTheEnvironment) {
  testing::ChildProcess process({.argv = {testing::binary_path("fulfillsync-sandbox").string(), "--listen", "127.0.0.1:0",
                                          "--log-level", "warn"},
                                 .set_env = {"FULFILLSYNC_SANDBOX_TOKEN=env-token",
                                             "FULFILLSYNC_SANDBOX_ADMIN_TOKEN=env-admin"}});
  const auto line = process.wait_for_stdout("listening on ", 20s);
  ASSERT_TRUE(line) << process.stderr_text();
  const auto port = static_cast<std::uint16_t>(std::stoi(line->substr(line->rfind(':') + 1)));
  const auto channel = [&](std::string token) {
    return testing::http_request("127.0.0.1", port, "GET", "/2026-01/channel", {{"Authorization", "Bearer " + token}});
  };
  EXPECT_EQ(channel("env-token").status, 200);
  EXPECT_EQ(channel("other").status, 401);
  EXPECT_EQ(testing::http_request("127.0.0.1", port, "GET", "/_sandbox/clock", {{"X-Sandbox-Admin-Token", "env-admin"}}).status,
            200);
  // The command line's admin token wins over the environment's.
  testing::ChildProcess overridden({.argv = {testing::binary_path("fulfillsync-sandbox").string(), "--listen",
                                             "127.0.0.1:0", "--admin-token", "argv-admin", "--log-level", "warn"},
                                    .set_env = {"FULFILLSYNC_SANDBOX_ADMIN_TOKEN=env-admin"}});
  const auto second = overridden.wait_for_stdout("listening on ", 20s);
  ASSERT_TRUE(second) << overridden.stderr_text();
  const auto second_port = static_cast<std::uint16_t>(std::stoi(second->substr(second->rfind(':') + 1)));
  const auto admin = [&](std::string token) {
    return testing::http_request("127.0.0.1", second_port, "GET", "/_sandbox/clock", {{"X-Sandbox-Admin-Token", token}})
        .status;
  };
  EXPECT_EQ(admin("argv-admin"), 200);
  EXPECT_EQ(admin("env-admin"), 401);
}

TEST(SandboxCli, RefusesUnusableTokenFiles) {
  testing::TempDir dir;
  testing::write_file(dir / "empty", "# nothing yet\n\n");
  testing::write_file(dir / "two", "one\ntwo\n");
  const auto binary = testing::binary_path("fulfillsync-sandbox").string();
  const auto refused = [&](std::vector<std::string> options, std::string_view expected) {
    options.insert(options.begin(), {binary, "--listen", "127.0.0.1:0"});
    const auto result = testing::run(std::move(options), 10s);
    EXPECT_EQ(result.exit_status, 2) << result.stderr_text;
    EXPECT_NE(result.stderr_text.find(expected), std::string::npos) << result.stderr_text;
  };
  refused({"--token-file", (dir / "missing").string()}, "--token-file: cannot read");
  refused({"--token-file", (dir / "empty").string()}, "holds no token");
  refused({"--admin-token-file", (dir / "two").string()}, "holds more than one token");
  const auto help = testing::run(std::vector<std::string>{binary, "--help"}, 10s);
  EXPECT_NE(help.stdout_text.find("--token-file"), std::string::npos);
  EXPECT_NE(help.stdout_text.find("FULFILLSYNC_SANDBOX_TOKEN"), std::string::npos);
}

TEST(SandboxCli, StateSurvivesARestart) {
  testing::TempDir dir;
  const std::string state = (dir / "sandbox.db").string();
  std::int64_t order_id = 0;
  std::int64_t shipment_id = 0;
  {
    Sandbox sandbox({"--state", state});
    auto order = sandbox.create_order("PERSIST-1");
    order_id = as_int(order["id"]);
    shipment_id = as_int(order["shipments"].at(0)["id"]);
    sandbox.advance_clock(600);
    const auto marked = sandbox.call("POST", "/2026-01/shipment:batchUpdateTrackingUpload",
                                     R"({"is_tracking_uploaded":true,"shipment_ids":[)" + std::to_string(shipment_id) + "]}");
    ASSERT_EQ(marked.status, 200);
    sandbox.process().send_signal(SIGTERM);
    ASSERT_EQ(sandbox.process().wait_for_exit(10s), 0);
  }
  Sandbox restarted({"--state", state});
  const auto order = restarted.get("/2026-01/order/" + std::to_string(order_id));
  ASSERT_EQ(order.status, 200) << order.body;
  const auto body = parse(order.body);
  EXPECT_EQ(as_string(body["reference_id"]), "PERSIST-1");
  EXPECT_TRUE(as_bool(body["shipments"].at(0)["is_tracking_uploaded"]));
  EXPECT_EQ(as_string(body["shipments"].at(0)["status"]), "Completed");
  // The duplicate check still knows the reference, and new ids continue after the old ones.
  EXPECT_EQ(restarted.create("/2026-01/order", order_body("PERSIST-1")).status, 422);
  auto next = restarted.create_order("PERSIST-2");
  EXPECT_GT(as_int(next["id"]), order_id);
}

TEST(SandboxCli, ServesHttpsWithTlsCertAndKey) {
  testing::TempDir dir;
  const auto cert = (dir / "cert.pem").string();
  const auto key = (dir / "key.pem").string();
  const auto made = testing::run(std::vector<std::string>{"/usr/bin/env", "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                                           "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1"},
                                 30s);
  if (made.exit_status != 0) GTEST_SKIP() << "openssl cannot make a certificate here";
  Sandbox sandbox({"--tls-cert", cert, "--tls-key", key});
  EXPECT_EQ(sandbox.process().stdout_text().rfind("listening on https://127.0.0.1:", 0), 0u);
  const auto client = testing::run(
      std::vector<std::string>{"/bin/sh", "-c",
                "printf 'GET /2026-01/channel HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Bearer test-token\\r\\n"
                "Connection: close\\r\\n\\r\\n' | openssl s_client -quiet -connect 127.0.0.1:" +
                    std::to_string(sandbox.port()) + " 2>/dev/null"},
      30s);
  EXPECT_NE(client.stdout_text.find("HTTP/1.1 200"), std::string::npos) << client.stdout_text;
  EXPECT_NE(client.stdout_text.find("\"items\""), std::string::npos);
}

}  // namespace
}  // namespace fulfillsync::sandbox_test
