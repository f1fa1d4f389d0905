// Security: a whole sync at the most verbose log level never prints the API token (sync_fixture.hpp).
#include "sync_fixture.hpp"

namespace fulfillsync::testing {
namespace {

class SecretsInLogsTest : public SyncFixture {};

TEST_F(SecretsInLogsTest, ATraceLevelSyncNeverPrintsTheToken) {
  // A token that nothing else could print by accident.
  const std::string token = "tok-3c1d9e7a5b2f4860a9e1";
  start_sandbox({"--token", token});
  write_file(dir / "api-token", token + "\n");
  insert_orders("SEC", 20);
  insert_returns("RMA", 3);
  execute("INSERT INTO fulfillsync_watched_inventory (inventory_id) VALUES (7002)");
  std::string logs;
  for (int round = 0; round < 2; ++round) {
    const auto result = daemon({"--log-level", "trace", "once"});
    ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
    logs += result.stdout_text + result.stderr_text;
    // Shipped with tracking: the second round pulls and marks too.
    ASSERT_EQ(sandbox->admin("POST", "/_sandbox/clock/advance?seconds=400").status, 200);
  }
  ASSERT_EQ(daemon({"status"}).exit_status, 3);  // no daemon runs once `once` has ended
  // Every exchange is logged at trace level, so the test looks at every request the daemon made.
  for (const char* exchange :
       {"POST /2026-07/order ->", "GET /2026-07/order?", "POST /2026-07/shipment:batchUpdateTrackingUpload ->",
        "GET /2026-07/inventory-level/7002/lots ->", "GET /2026-07/return?"}) {
    EXPECT_THAT(logs, ::testing::HasSubstr(exchange));
  }
  EXPECT_EQ(logs.find(token), std::string::npos) << "the token appears in the log";
  EXPECT_EQ(logs.find(token.substr(0, 12)), std::string::npos) << "part of the token appears in the log";
}

}  // namespace
}  // namespace fulfillsync::testing
