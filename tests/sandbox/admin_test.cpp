// The admin path: guarded, outside the API, and able to inspect, steer and reset the sandbox.
#include <csignal>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "fulfillsync/common/timestamps.hpp"
#include "sandbox_fixture.hpp"

namespace fulfillsync::sandbox_test {
namespace {

using namespace std::chrono_literals;

// POST /shipment:batchUpdateTrackingUpload with `token` (merchant 1's by default).
HttpResponse mark(const Sandbox& sandbox, bool uploaded, const std::string& ids, std::string_view token = kToken) {
  return sandbox.call("POST", "/2026-01/shipment:batchUpdateTrackingUpload",
                      std::string(R"({"is_tracking_uploaded":)") + (uploaded ? "true" : "false") +
                          R"(,"shipment_ids":[)" + ids + "]}",
                      {}, token);
}

// The shipment's entry in GET /_sandbox/orders.
simdjson::dom::element admin_shipment(const Sandbox& sandbox, std::int64_t shipment_id) {
  for (auto order : parse(sandbox.admin("GET", "/_sandbox/orders").body).get_array()) {
    for (auto shipment : order["shipments"].get_array()) {
      if (as_int(shipment["id"]) == shipment_id) return shipment;
    }
  }
  ADD_FAILURE() << "shipment " << shipment_id << " is not in /_sandbox/orders";
  throw std::runtime_error("no such shipment");
}

std::int64_t marks(const Sandbox& sandbox, std::int64_t shipment_id) {
  return as_int(admin_shipment(sandbox, shipment_id)["tracking_upload_marks"]);
}

// A lot-tracked product of merchant 1 without stock; returns its inventory id.
std::int64_t lot_tracked_item(const Sandbox& sandbox, std::string_view sku) {
  const auto created = sandbox.create("/2026-01/product", R"({"name":"Lot Item","variants":[{"name":"Lot Item","sku":")" +
                                                              std::string(sku) + R"(","lot_information":{"is_lot":true}}]})");
  EXPECT_EQ(created.status, 201) << created.body;
  return as_int(parse(created.body)["variants"].at(0)["inventory"]["inventory_id"]);
}

HttpResponse set_lot(const Sandbox& sandbox, std::int64_t inventory_id, std::string_view body) {
  return sandbox.admin("POST", "/_sandbox/inventory/" + std::to_string(inventory_id) + "/lots", body);
}

std::string lot_body(std::string_view lot, int location, int on_hand, std::string_view extra = {}) {
  return R"({"lot_number":")" + std::string(lot) + R"(","location_id":)" + std::to_string(location) +
         R"(,"on_hand":)" + std::to_string(on_hand) + std::string(extra) + "}";
}

// What the public API lists: lot number to {location id to on hand}.
using Lots = std::map<std::string, std::map<std::int64_t, std::int64_t>>;
Lots listed_lots(const Sandbox& sandbox, std::int64_t inventory_id) {
  const auto response = sandbox.get("/2026-01/inventory-level/" + std::to_string(inventory_id) + "/lots");
  EXPECT_EQ(response.status, 200) << response.body;
  Lots lots;
  for (auto lot : parse(response.body)["lots"].get_array()) {
    auto& locations = lots[as_string(lot["lot_number"])];
    for (auto location : lot["locations"].get_array()) {
      locations[as_int(location["location_id"])] = as_int(location["on_hand_quantity"]);
    }
  }
  return lots;
}

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

TEST(SandboxAdmin, CountsTrackingUploadMarksPerShipment) {
  Sandbox sandbox;
  const auto a = as_int(sandbox.create_order("MARK-A")["shipments"].at(0)["id"]);
  const auto b = as_int(sandbox.create_order("MARK-B")["shipments"].at(0)["id"]);
  EXPECT_EQ(marks(sandbox, a), 0);

  ASSERT_EQ(mark(sandbox, true, std::to_string(a)).status, 200);
  EXPECT_EQ(marks(sandbox, a), 1);
  EXPECT_EQ(marks(sandbox, b), 0);
  // Repeating true counts again: the count proves how often a shipment was marked.
  ASSERT_EQ(mark(sandbox, true, std::to_string(a) + "," + std::to_string(b)).status, 200);
  EXPECT_EQ(marks(sandbox, a), 2);
  EXPECT_EQ(marks(sandbox, b), 1);
  // Clearing the flag does not count (nor undo the count).
  ASSERT_EQ(mark(sandbox, false, std::to_string(b)).status, 200);
  EXPECT_EQ(marks(sandbox, b), 1);
  EXPECT_FALSE(as_bool(admin_shipment(sandbox, b)["is_tracking_uploaded"]));
  // Failed items count nothing: an unknown id, another merchant's shipment, a refused body.
  const auto unknown = mark(sandbox, true, "999999," + std::to_string(b));
  ASSERT_EQ(unknown.status, 200);
  EXPECT_EQ(as_int(parse(unknown.body)["summary"]["failed"]), 1);
  EXPECT_EQ(marks(sandbox, b), 2);
  ASSERT_EQ(sandbox.admin("POST", "/_sandbox/tokens", R"({"token":"other","merchant_id":2})").status, 201);
  const auto foreign = mark(sandbox, true, std::to_string(a), "other");
  EXPECT_EQ(as_string(parse(foreign.body)["results"].at(0)["error"]["code"]), "Forbidden");
  EXPECT_EQ(sandbox.call("POST", "/2026-01/shipment:batchUpdateTrackingUpload",
                         R"({"shipment_ids":[)" + std::to_string(a) + "]}").status, 400);
  EXPECT_EQ(marks(sandbox, a), 2);

  // Stats count the executed batch requests (200), not the refused one.
  EXPECT_EQ(as_int(parse(sandbox.admin("GET", "/_sandbox/stats").body)["tracking_upload_requests"]), 5);
}

TEST(SandboxAdmin, SetsLotStockThatAppearsChangesAndDisappears) {
  Sandbox sandbox;
  const auto item = lot_tracked_item(sandbox, "LOT-SKU");
  EXPECT_EQ(listed_lots(sandbox, item), Lots{});

  const auto set = set_lot(sandbox, item, lot_body("L1", 8, 12, R"(,"lot_date":"2026-01-01T00:00:00Z")"));
  ASSERT_EQ(set.status, 200) << set.body;
  // The answer is the item's lot levels as the public API renders them.
  EXPECT_EQ(as_string(parse(set.body)["lots"].at(0)["lot_number"]), "L1");
  EXPECT_EQ(listed_lots(sandbox, item), (Lots{{"L1", {{8, 12}}}}));
  const auto listed = parse(sandbox.get("/2026-01/inventory-level/" + std::to_string(item) + "/lots").body);
  EXPECT_EQ(as_string(listed["lots"].at(0)["lot_date"]).substr(0, 19), "2026-01-01T00:00:00");
  EXPECT_EQ(as_int(listed["lots"].at(0)["fulfillable_quantity"]), 12);

  ASSERT_EQ(set_lot(sandbox, item, lot_body("L1", 11, 5)).status, 200);
  ASSERT_EQ(set_lot(sandbox, item, lot_body("L2", 8, 7)).status, 200);
  ASSERT_EQ(set_lot(sandbox, item, lot_body("L1", 8, 3)).status, 200);
  EXPECT_EQ(listed_lots(sandbox, item), (Lots{{"L1", {{8, 3}, {11, 5}}}, {"L2", {{8, 7}}}}));
  // Zero at one center removes the lot there; zero everywhere removes it from the list.
  ASSERT_EQ(set_lot(sandbox, item, lot_body("L1", 8, 0)).status, 200);
  EXPECT_EQ(listed_lots(sandbox, item), (Lots{{"L1", {{11, 5}}}, {"L2", {{8, 7}}}}));
  ASSERT_EQ(set_lot(sandbox, item, lot_body("L1", 11, 0)).status, 200);
  EXPECT_EQ(listed_lots(sandbox, item), (Lots{{"L2", {{8, 7}}}}));
  ASSERT_EQ(set_lot(sandbox, item, lot_body("L9", 17, 0)).status, 200);  // absent and zero: nothing to do
  EXPECT_EQ(listed_lots(sandbox, item), (Lots{{"L2", {{8, 7}}}}));

  // Every change is an Adjustment in the inventory history.
  const auto history = parse(sandbox.call("POST", "/2026-01/inventory/history:query",
                                          R"({"inventory_ids":[)" + std::to_string(item) + R"(],"event_types":["Adjustment"]})").body);
  std::vector<std::int64_t> changes;
  for (auto event : history["items"].get_array()) changes.push_back(as_int(event["quantity_change"]));
  EXPECT_EQ(changes, (std::vector<std::int64_t>{12, 5, 7, -9, -3, -5}));
}

TEST(SandboxAdmin, LotWithCommittedStockStaysUntilNothingIsLeft) {
  Sandbox sandbox;
  const auto item = lot_tracked_item(sandbox, "LOT-COMMIT");
  ASSERT_EQ(set_lot(sandbox, item, lot_body("L2", 8, 10)).status, 200);
  const auto order = sandbox.create("/2026-01/order",
      R"({"reference_id":"LOT-ORDER","shipping_method":"Standard","location_id":8,"recipient":{"name":"A","address":{"address1":"1","city":"C","country":"US"}},"products":[{"reference_id":"LOT-COMMIT","quantity":4}]})");
  ASSERT_EQ(order.status, 201) << order.body;
  // On hand 0 while 4 are committed: the lot stays listed.
  ASSERT_EQ(set_lot(sandbox, item, lot_body("L2", 8, 0)).status, 200);
  const auto lots = parse(sandbox.get("/2026-01/inventory-level/" + std::to_string(item) + "/lots").body)["lots"];
  ASSERT_EQ(lots.get_array().size(), 1u);
  EXPECT_EQ(as_int(lots.at(0)["on_hand_quantity"]), 0);
  EXPECT_EQ(as_int(lots.at(0)["committed_quantity"]), 4);
  // Cancelling releases the commitment; a level holding nothing is not listed.
  ASSERT_EQ(sandbox.call("POST", "/2026-01/order/" + std::to_string(as_int(parse(order.body)["id"])) + ":cancel").status,
            200);
  EXPECT_EQ(listed_lots(sandbox, item), Lots{});
}

TEST(SandboxAdmin, SetLotStockRefusesUnknownItemsAndBadBodies) {
  Sandbox sandbox;
  const auto item = lot_tracked_item(sandbox, "LOT-BAD");
  EXPECT_EQ(set_lot(sandbox, 999999, lot_body("L1", 8, 1)).status, 404);
  EXPECT_EQ(sandbox.admin("POST", "/_sandbox/inventory/abc/lots", lot_body("L1", 8, 1)).status, 404);
  // The item is merchant 1's, not merchant 2's.
  EXPECT_EQ(set_lot(sandbox, item, lot_body("L1", 8, 1, R"(,"merchant_id":2)")).status, 404);
  EXPECT_EQ(set_lot(sandbox, item, lot_body("L1", 8, 1, R"(,"merchant_id":1)")).status, 200);
  EXPECT_EQ(sandbox.admin("GET", "/_sandbox/inventory/" + std::to_string(item) + "/lots").status, 405);

  const auto refused = [&](std::string_view body, std::string_view field) {
    const auto response = set_lot(sandbox, item, body);
    EXPECT_EQ(response.status, 400) << body;
    EXPECT_EQ(error_fields(response), std::vector<std::string>{std::string(field)}) << response.body;
  };
  refused("not json", "$");
  refused("[]", "$");
  refused(R"({"location_id":8,"on_hand":1})", "lot_number");
  refused(R"({"lot_number":"L1","on_hand":1})", "location_id");
  refused(lot_body("L1", 99, 1), "location_id");
  refused(R"({"lot_number":"L1","location_id":8})", "on_hand");
  refused(lot_body("L1", 8, -1), "on_hand");
  refused(R"({"lot_number":"L1","location_id":8,"on_hand":"12"})", "on_hand");
  refused(lot_body("L1", 8, 1, R"(,"lot_date":"soon")"), "lot_date");
  refused(lot_body("L1", 8, 1, R"(,"merchant_id":0)"), "merchant_id");
  EXPECT_EQ(listed_lots(sandbox, item), (Lots{{"L1", {{8, 1}}}}));  // nothing refused changed anything
}

TEST(SandboxAdmin, MarkCountsAndLotStockSurviveARestartWithState) {
  testing::TempDir dir;
  const std::string state = (dir / "sandbox.db").string();
  std::int64_t shipment_id = 0;
  std::int64_t item = 0;
  {
    Sandbox sandbox({"--state", state});
    shipment_id = as_int(sandbox.create_order("PERSIST-MARK")["shipments"].at(0)["id"]);
    ASSERT_EQ(mark(sandbox, true, std::to_string(shipment_id)).status, 200);
    ASSERT_EQ(mark(sandbox, true, std::to_string(shipment_id)).status, 200);
    item = lot_tracked_item(sandbox, "LOT-PERSIST");
    ASSERT_EQ(set_lot(sandbox, item, lot_body("L1", 8, 12, R"(,"lot_date":"2026-01-01T00:00:00Z")")).status, 200);
    ASSERT_EQ(set_lot(sandbox, item, lot_body("L2", 11, 4)).status, 200);
    ASSERT_EQ(set_lot(sandbox, item, lot_body("L2", 11, 0)).status, 200);
    sandbox.process().send_signal(SIGTERM);
    ASSERT_EQ(sandbox.process().wait_for_exit(10s), 0);
  }
  Sandbox restarted({"--state", state});
  EXPECT_EQ(marks(restarted, shipment_id), 2);
  EXPECT_EQ(listed_lots(restarted, item), (Lots{{"L1", {{8, 12}}}}));
  const auto lots = parse(restarted.get("/2026-01/inventory-level/" + std::to_string(item) + "/lots").body)["lots"];
  EXPECT_EQ(as_string(lots.at(0)["lot_date"]).substr(0, 19), "2026-01-01T00:00:00");
  // Stats count this run's requests, not the replayed journal.
  EXPECT_EQ(as_int(parse(restarted.admin("GET", "/_sandbox/stats").body)["tracking_upload_requests"]), 0);
  ASSERT_EQ(mark(restarted, true, std::to_string(shipment_id)).status, 200);
  EXPECT_EQ(marks(restarted, shipment_id), 3);
}

// The provider's clock never goes back. A sandbox restarted on its state resumes no earlier than any
// time it showed before, even one no journaled request carries (a shipment's scheduled step, read
// by a GET): a cancel after the restart is dated after that step, as a client keeping the newest
// by `last_update_at` expects.
TEST(SandboxAdmin, TheClockResumesAfterEveryTimeItShowedBeforeARestart) {
  testing::TempDir dir;
  // A simulated minute in a little over a real second: the allocated shipment is picked a minute
  // after its order, and ships after five.
  const std::vector<std::string> args = {"--state", (dir / "sandbox.db").string(), "--clock-speed", "50"};
  const auto instant = [](const std::string& text) {
    const auto parsed = timestamps::parse_iso8601(text);
    EXPECT_TRUE(parsed.has_value()) << text;
    return parsed.value_or(timestamps::TimePoint{});
  };
  std::string order_id, stepped, shown;
  {
    Sandbox sandbox(args);
    const auto order = sandbox.create_order("CLOCK-RESTART");  // the last journaled request
    order_id = std::to_string(as_int(order["id"]));
    const std::string created = as_string(order["shipments"].at(0)["last_update_at"]);
    for (const auto deadline = std::chrono::steady_clock::now() + 20s; std::chrono::steady_clock::now() < deadline;) {
      stepped = as_string(parse(sandbox.get("/2026-01/order/" + order_id).body)["shipments"].at(0)["last_update_at"]);
      if (stepped != created) break;
      std::this_thread::sleep_for(100ms);
    }
    ASSERT_NE(stepped, created) << "the shipment never took its first step";
    shown = as_string(parse(sandbox.admin("GET", "/_sandbox/clock").body)["now"]);
    sandbox.process().send_signal(SIGKILL);
    ASSERT_EQ(sandbox.process().wait_for_exit(10s), 128 + SIGKILL);
  }
  Sandbox restarted(args);
  const std::string resumed = as_string(parse(restarted.admin("GET", "/_sandbox/clock").body)["now"]);
  EXPECT_GE(instant(resumed), instant(shown)) << "resumed at " << resumed << ", having shown " << shown;
  const auto cancelled = restarted.call("POST", "/2026-01/order/" + order_id + ":cancel");
  ASSERT_EQ(cancelled.status, 200) << cancelled.body;
  const auto shipment = parse(cancelled.body)["order"]["shipments"].at(0);
  EXPECT_EQ(as_string(shipment["status"]), "Cancelled");
  const std::string cancelled_at = as_string(shipment["last_update_at"]);
  EXPECT_GE(instant(cancelled_at), instant(stepped))
      << "the cancel is dated " << cancelled_at << ", before the step shown at " << stepped;
}

}  // namespace
}  // namespace fulfillsync::sandbox_test
