// The admin path: guarded, outside the API, and able to inspect, steer and reset the sandbox.
#include <map>

#include <gtest/gtest.h>

#include "sandbox_fixture.hpp"

namespace fulfillsync::sandbox_test {
namespace {

TEST(SandboxAdmin, IsGuardedByTheAdminToken) {
  Sandbox sandbox;
  EXPECT_EQ(sandbox.raw("GET", "/_sandbox/orders").status, 401);
  EXPECT_EQ(sandbox.raw("GET", "/_sandbox/orders", {{"X-Sandbox-Admin-Token", "wrong"}}).status, 401);
  // An API token is not an admin token.
  EXPECT_EQ(sandbox.get("/_sandbox/orders").status, 401);
  EXPECT_EQ(sandbox.admin("GET", "/_sandbox/orders").status, 200);
  EXPECT_EQ(sandbox.admin("GET", "/_sandbox/nothing").status, 404);
}

TEST(SandboxAdmin, IsAbsentWithoutAnAdminToken) {
  Sandbox sandbox({"--listen", "127.0.0.1:0", "--token", "test-token"}, false);
  EXPECT_EQ(sandbox.admin("GET", "/_sandbox/orders").status, 404);
  EXPECT_EQ(sandbox.admin("POST", "/_sandbox/reset").status, 404);
}

TEST(SandboxAdmin, ListsOrdersAndReturnsWithTheirShipments) {
  Sandbox sandbox;
  const auto order = sandbox.create_order("ADMIN-1");
  const auto orders = parse(sandbox.admin("GET", "/_sandbox/orders").body);
  ASSERT_EQ(orders.get_array().size(), 1u);
  EXPECT_EQ(as_int(orders.at(0)["id"]), as_int(order["id"]));
  EXPECT_EQ(as_string(orders.at(0)["reference_id"]), "ADMIN-1");
  EXPECT_EQ(as_string(orders.at(0)["status"]), "Processing");
  EXPECT_EQ(as_int(orders.at(0)["channel_id"]), kWriteChannel);
  EXPECT_EQ(as_int(orders.at(0)["shipments"].at(0)["id"]), as_int(order["shipments"].at(0)["id"]));
  const auto inventory_id = as_int(order["shipments"].at(0)["products"].at(0)["inventory_items"].at(0)["id"]);
  ASSERT_EQ(sandbox.create("/2026-01/return", R"({"reference_id":"RMA-A","fulfillment_center":{"id":8},"inventory":[{"id":)" +
                                                  std::to_string(inventory_id) + R"(,"quantity":1,"requested_action":"Restock"}]})").status, 201);
  const auto returns = parse(sandbox.admin("GET", "/_sandbox/returns").body);
  ASSERT_EQ(returns.get_array().size(), 1u);
  EXPECT_EQ(as_string(returns.at(0)["reference_id"]), "RMA-A");
  EXPECT_EQ(as_string(returns.at(0)["status"]), "AwaitingArrival");
}

TEST(SandboxAdmin, StatsCountRequestsCreatesAndDuplicates) {
  Sandbox sandbox;
  sandbox.create_order("STATS-1");
  EXPECT_EQ(sandbox.create("/2026-01/order", order_body("STATS-1")).status, 422);
  sandbox.get("/2026-01/order");
  sandbox.get("/2025-07/order");
  const auto stats = parse(sandbox.admin("GET", "/_sandbox/stats").body);
  EXPECT_EQ(as_int(stats["creates"]["orders"]), 1);
  EXPECT_EQ(as_int(stats["duplicates_refused"]), 1);
  std::map<std::pair<std::string, std::int64_t>, std::int64_t> counts;
  for (auto row : stats["requests"].get_array()) {
    counts[{as_string(row["route"]), as_int(row["status"])}] = as_int(row["count"]);
  }
  EXPECT_EQ((counts[{"POST /order", 201}]), 1);
  EXPECT_EQ((counts[{"POST /order", 422}]), 1);
  EXPECT_EQ((counts[{"GET /order", 200}]), 2);
}

TEST(SandboxAdmin, ResetForgetsEverythingButTheCommandLine) {
  Sandbox sandbox({"--seed", "demo"});
  sandbox.create_order("RESET-1");
  ASSERT_EQ(sandbox.admin("POST", "/_sandbox/reset").status, 200);
  EXPECT_EQ(parse(sandbox.admin("GET", "/_sandbox/orders").body).get_array().size(), 0u);
  EXPECT_EQ(sandbox.get("/2026-01/channel").status, 200);  // the --token still works
  EXPECT_GT(parse(sandbox.get("/2026-01/product").body)["items"].get_array().size(), 0u);  // the seed is back
  sandbox.create_order("RESET-1");  // the reference is free again
}

TEST(SandboxAdmin, ClockAdvancesOnRequest) {
  Sandbox sandbox;
  const auto before = as_string(parse(sandbox.admin("GET", "/_sandbox/clock").body)["now"]);
  const auto advanced = sandbox.admin("POST", "/_sandbox/clock/advance?seconds=86400");
  ASSERT_EQ(advanced.status, 200);
  const auto after = as_string(parse(advanced.body)["now"]);
  EXPECT_GT(after, before);
  EXPECT_NE(after.substr(0, 10), before.substr(0, 10));
  EXPECT_EQ(sandbox.admin("POST", "/_sandbox/clock/advance").status, 400);
  EXPECT_EQ(sandbox.admin("POST", "/_sandbox/clock/advance?seconds=-5").status, 400);
}

TEST(SandboxAdmin, BulkSeedsOrdersForBenchmarks) {
  Sandbox sandbox;
  const auto created = sandbox.admin("POST", "/_sandbox/orders:bulk?count=1000");
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(as_int(parse(created.body)["created"]), 1000);
  const auto page = sandbox.get("/2026-01/order?Limit=250&Page=4");
  EXPECT_EQ(parse(page.body).get_array().size(), 250u);
  EXPECT_EQ(page.headers.at("total-pages"), "4");
}

}  // namespace
}  // namespace fulfillsync::sandbox_test
