// Returns (create, read, list with filters and cursor links) and receiving (WROs and UROs).
#include <algorithm>

#include <gtest/gtest.h>

#include "sandbox_fixture.hpp"

namespace fulfillsync::sandbox_test {
namespace {

class SandboxReturns : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto order = sandbox.create_order("RET-ORDER");
    shipment_id = std::to_string(as_int(order["shipments"].at(0)["id"]));
    inventory_id = std::to_string(as_int(order["shipments"].at(0)["products"].at(0)["inventory_items"].at(0)["id"]));
  }
  std::string body(std::string_view reference, std::string_view extra = {}, std::string_view action = "Restock") const {
    return R"({"reference_id":")" + std::string(reference) + R"x(","fulfillment_center":{"id":8,"name":"Cicero (IL)"},)x"
           R"("inventory":[{"id":)" + inventory_id + R"(,"quantity":1,"requested_action":")" + std::string(action) +
           R"("}])" + std::string(extra) + "}";
  }
  Sandbox sandbox;
  std::string shipment_id;
  std::string inventory_id;
};

TEST_F(SandboxReturns, CreateAnswersTheCreateFormAndDuplicatesAre422) {
  const auto created = sandbox.call("POST", "/2026-01/return",
                                    body("RMA-1", R"(,"tracking_number":"1Z1","original_shipment_id":)" + shipment_id),
                                    {{"service_channel_id", "2"}, {"creationSourceId", "7"}});
  ASSERT_EQ(created.status, 201) << created.body;
  const auto ret = parse(created.body);
  EXPECT_EQ(as_string(ret["reference_id"]), "RMA-1");
  EXPECT_EQ(as_string(ret["status"]), "AwaitingArrival");
  EXPECT_EQ(as_int(ret["fulfillment_center"]["id"]), 8);
  EXPECT_EQ(as_int(ret["channel"]["id"]), kWriteChannel);
  EXPECT_EQ(as_string(ret["store_order_id"]), "RET-ORDER");
  EXPECT_EQ(as_string(ret["customer_name"]), "Ada Lovelace");
  EXPECT_EQ(as_string(ret["inventory"].at(0)["action_requested"]["action"]), "Restock");
  simdjson::dom::element absent;
  EXPECT_NE(ret["status_history"].get(absent), simdjson::SUCCESS);  // detail form only
  const auto duplicate = sandbox.create("/2026-01/return", body("RMA-1"));
  EXPECT_EQ(duplicate.status, 422);
  EXPECT_EQ(duplicate.body, R"({"":["Cannot insert return with existing ReferenceId"]})");
}

TEST_F(SandboxReturns, EachFieldRuleIsEnforcedAndNamed) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {body(std::string(51, 'r')), "reference_id"},
      {body(""), "reference_id"},
      {R"({"reference_id":"R","fulfillment_center":{"id":8},"inventory":[]})", "inventory"},
      {R"({"reference_id":"R","inventory":[{"id":1,"quantity":1,"requested_action":"Restock"}]})", "fulfillment_center"},
      {body("R", R"(,"tracking_number":")" + std::string(501, 't') + "\""), "tracking_number"},
      {body("R", R"(,"original_shipment_id":999999)"), "original_shipment_id"},
      {R"({"reference_id":"R","fulfillment_center":{"id":8},"inventory":[{"id":999999,"quantity":1,"requested_action":"Restock"}]})", "inventory[0].id"},
      {R"({"reference_id":"R","fulfillment_center":{"id":99},"inventory":[{"id":)" + inventory_id + R"(,"quantity":1,"requested_action":"Restock"}]})", "fulfillment_center.id"},
  };
  for (const auto& [request, field] : cases) {
    const auto response = sandbox.create("/2026-01/return", request);
    EXPECT_EQ(response.status, 400) << request;
    const auto fields = error_fields(response);
    EXPECT_NE(std::find(fields.begin(), fields.end(), field), fields.end()) << field << ": " << response.body;
  }
  EXPECT_EQ(sandbox.create("/2026-01/return", body(std::string(50, 'r'))).status, 201);
  EXPECT_EQ(sandbox.call("POST", "/2026-01/return", body("R2"), {{"service_channel_id", "2"}, {"creationSourceId", "x"}}).status, 400);
}

TEST_F(SandboxReturns, DetailFormAndProgressOnTheClock) {
  const auto id = std::to_string(as_int(parse(sandbox.create("/2026-01/return", body("RMA-P")).body)["id"]));
  auto ret = parse(sandbox.get("/2026-01/return/" + id).body);
  EXPECT_EQ(as_string(ret["status_history"].at(0)["status"]), "AwaitingArrival");
  EXPECT_EQ(as_string(ret["invoice"]["currency_code"]), "USD");
  EXPECT_EQ(as_string(ret["inventory"].at(0)["sku"]), "SKU-1");
  sandbox.advance_clock(2 * 86400);
  ret = parse(sandbox.get("/2026-01/return/" + id).body);
  EXPECT_EQ(as_string(ret["status"]), "Completed");
  EXPECT_EQ(ret["status_history"].get_array().size(), 4u);
  EXPECT_FALSE(ret["completed_date"].is_null());
  EXPECT_EQ(as_int(ret["inventory"].at(0)["action_taken"].at(0)["quantity_processed"]), 1);
  // Restocked: a Restock event in the inventory history.
  const auto history = sandbox.call("POST", "/2026-01/inventory/history:query", R"({"event_types":["Restock"]})");
  EXPECT_EQ(parse(history.body)["items"].get_array().size(), 1u) << history.body;
  EXPECT_EQ(sandbox.get("/2026-01/return/424242").status, 404);
}

TEST_F(SandboxReturns, ListFiltersAndCursorLinks) {
  for (int i = 1; i <= 3; ++i) {
    ASSERT_EQ(sandbox.create("/2026-01/return", body("L-" + std::to_string(i), i == 2 ? R"(,"tracking_number":"TRK-2")" : "",
                                                     i == 3 ? "Dispose" : "Restock")).status, 201);
  }
  const auto page = parse(sandbox.get("/2026-01/return?Limit=2").body);
  EXPECT_EQ(page["items"].get_array().size(), 2u);
  EXPECT_EQ(as_string(page["next"]), "/2026-01/return?Limit=2&Cursor=2");
  EXPECT_TRUE(page["prev"].is_null());
  EXPECT_EQ(as_string(page["first"]), "/2026-01/return?Limit=2&Cursor=1");
  EXPECT_EQ(as_string(page["last"]), "/2026-01/return?Limit=2&Cursor=2");
  const auto second = parse(sandbox.get("/2026-01/return?Limit=2&Cursor=2").body);
  EXPECT_EQ(second["items"].get_array().size(), 1u);
  EXPECT_TRUE(second["next"].is_null());
  EXPECT_EQ(as_string(second["prev"]), "/2026-01/return?Limit=2&Cursor=1");

  const auto count = [&](const std::string& query) {
    return parse(sandbox.get("/2026-01/return?" + query).body)["items"].get_array().size();
  };
  EXPECT_EQ(count("ReferenceIds=L-1,L-3"), 2u);
  EXPECT_EQ(count("TrackingNumbers=TRK-2"), 1u);
  EXPECT_EQ(count("ReturnActions=Dispose"), 1u);
  EXPECT_EQ(count("Status=AwaitingArrival"), 3u);
  EXPECT_EQ(count("Status=Completed"), 0u);
  EXPECT_EQ(count("FulfillmentCenterIds=8"), 3u);
  EXPECT_EQ(count("FulfillmentCenterIds=11"), 0u);
  EXPECT_EQ(count("InventoryIds=" + inventory_id), 3u);
  EXPECT_EQ(count("ReturnTypes=Regular"), 3u);
  EXPECT_EQ(count("StartDate=2000-01-01T00:00:00Z&EndDate=2999-01-01T00:00:00Z"), 3u);
  EXPECT_EQ(count("EndDate=2000-01-01T00:00:00Z"), 0u);
  EXPECT_EQ(count("CompletedStartDate=2000-01-01T00:00:00Z"), 0u);
  const auto newest = parse(sandbox.get("/2026-01/return?SortOrder=Desc&Sortby=Id").body)["items"];
  EXPECT_EQ(as_string(newest.at(0)["reference_id"]), "L-3");
  EXPECT_EQ(sandbox.get("/2026-01/return?Cursor=0").status, 400);
  EXPECT_EQ(sandbox.get("/2026-01/return?Sortby=Color").status, 400);
}

TEST(SandboxReceiving, CreateReadAndFlagForExternalSync) {
  Sandbox sandbox({"--seed", "demo"});
  const auto existing = parse(sandbox.get("/2026-01/receiving/801").body);
  EXPECT_EQ(as_string(existing["status"]), "Awaiting");
  EXPECT_EQ(as_string(existing["status_history"].at(0)["status"]), "Awaiting");
  const auto inventory_id = as_int(existing["inventory_quantities"].at(0)["inventory_id"]);
  const auto created = sandbox.create("/2026-01/receiving",
      R"({"fulfillment_center":{"id":11},"package_type":"Pallet","box_packaging_type":"OneSkuPerBox","expected_arrival_date":"2020-01-01T00:00:00Z","purchase_order_number":"PO-9","boxes":[{"tracking_number":"T","box_items":[{"inventory_id":)" +
      std::to_string(inventory_id) + R"(,"quantity":12,"lot_number":"LX"}]}]})");
  ASSERT_EQ(created.status, 201) << created.body;
  const auto id = std::to_string(as_int(parse(created.body)["id"]));
  auto lots = sandbox.get("/2026-01/inventory-level/" + std::to_string(inventory_id) + "/lots").body;
  EXPECT_NE(lots.find(R"("lot_number":"LX")"), std::string::npos);
  EXPECT_NE(lots.find(R"("awaiting_quantity":12)"), std::string::npos);
  sandbox.advance_clock(12 * 3600);
  const auto received = parse(sandbox.get("/2026-01/receiving/" + id).body);
  EXPECT_EQ(as_string(received["status"]), "Completed");
  EXPECT_EQ(as_int(received["inventory_quantities"].at(0)["stowed_quantity"]), 12);
  lots = sandbox.get("/2026-01/inventory-level/" + std::to_string(inventory_id) + "/lots").body;
  EXPECT_NE(lots.find(R"("on_hand_quantity":12)"), std::string::npos) << lots;

  const auto synced = sandbox.call("POST", "/2026-01/receiving:setExternalSync", R"({"ids":[801,)" + id + R"(],"is_external_sync":true})");
  ASSERT_EQ(synced.status, 200) << synced.body;
  EXPECT_FALSE(parse(synced.body)["external_sync_timestamp"].is_null());
  EXPECT_EQ(as_string(parse(sandbox.get("/2026-01/receiving/801").body)["status"]), "Awaiting");  // status unchanged
  const auto unsynced = sandbox.call("POST", "/2026-01/receiving:setExternalSync", R"({"ids":[801],"is_external_sync":false})");
  EXPECT_TRUE(parse(unsynced.body)["external_sync_timestamp"].is_null());
  EXPECT_EQ(sandbox.call("POST", "/2026-01/receiving:setExternalSync", R"({"ids":[424242],"is_external_sync":true})").status, 404);
  const auto distributions = parse(sandbox.get("/2026-01/receiving/" + id + "/distributions").body);
  EXPECT_EQ(as_int(distributions.at(0)["distributed_quantity"]), 12);
}

TEST(SandboxReceiving, UnidentifiedReceivingOrdersListReadAndAssociate) {
  Sandbox sandbox({"--seed", "demo"});
  const auto open = parse(sandbox.get("/2026-07/unidentified-receiving-order").body);
  ASSERT_EQ(open["items"].get_array().size(), 2u);
  const auto uro_id = std::to_string(as_int(open["items"].at(0)["id"]));
  const auto one = parse(sandbox.get("/2026-07/unidentified-receiving-order/" + uro_id).body);
  EXPECT_EQ(one["attachments"].get_array().size(), 2u);
  const auto linked = sandbox.call("POST", "/2026-07/unidentified-receiving-order/" + uro_id + ":associateWRO",
                                   R"({"receiving_order_id":801})");
  ASSERT_EQ(linked.status, 200) << linked.body;
  EXPECT_EQ(as_int(parse(linked.body)["receiving_order_id"]), 801);
  EXPECT_EQ(parse(sandbox.get("/2026-07/unidentified-receiving-order").body)["items"].get_array().size(), 1u);
  EXPECT_EQ(parse(sandbox.get("/2026-07/unidentified-receiving-order?isCompleted=true").body)["items"].get_array().size(), 1u);
  EXPECT_EQ(sandbox.call("POST", "/2026-07/unidentified-receiving-order/" + uro_id + ":associateWRO",
                         R"({"receiving_order_id":424242})").status, 422);
  // Another merchant's URO is a 404.
  ASSERT_EQ(sandbox.admin("POST", "/_sandbox/tokens", R"({"token":"other","merchant_id":2})").status, 201);
  EXPECT_EQ(sandbox.call("GET", "/2026-07/unidentified-receiving-order/" + uro_id, {}, {}, "other").status, 404);
  EXPECT_EQ(sandbox.get("/2026-07/unidentified-receiving-order/9999").status, 404);
}

}  // namespace
}  // namespace fulfillsync::sandbox_test
