// The differences between 2025-07, 2026-01 and 2026-07.
#include <gtest/gtest.h>

#include "sandbox_fixture.hpp"

namespace fulfillsync::sandbox_test {
namespace {

std::string product_body(std::string_view sku, std::string_view customs_value) {
  return R"({"name":"Mug","variants":[{"name":"Mug","sku":")" + std::string(sku) + R"(","customs":{"value":)" +
         std::string(customs_value) + R"(,"country_code_of_origin":"US"}}]})";
}

TEST(SandboxVersions, EndpointsAnswer404BeforeTheirVersion) {
  Sandbox sandbox({"--seed", "demo"});
  EXPECT_EQ(sandbox.call("POST", "/2025-07/inventory/history:query", "{}").status, 404);
  EXPECT_EQ(sandbox.call("POST", "/2026-01/inventory/history:query", "{}").status, 200);
  for (std::string path : {"/allergens", "/unidentified-receiving-order", "/unidentified-receiving-order/61"}) {
    EXPECT_EQ(sandbox.get("/2025-07" + path).status, 404) << path;
    EXPECT_EQ(sandbox.get("/2026-01" + path).status, 404) << path;
    EXPECT_EQ(sandbox.get("/2026-07" + path).status, 200) << path;
  }
  EXPECT_EQ(sandbox.call("POST", "/2026-01/unidentified-receiving-order/61:associateWRO", R"({"receiving_order_id":801})").status, 404);
}

TEST(SandboxVersions, StoreOrderIdOnlyIn2025_07) {
  Sandbox sandbox;
  const auto id = std::to_string(as_int(sandbox.create_order("STORE-1")["id"]));
  const auto old_shape = parse(sandbox.get("/2025-07/order/" + id).body)["shipments"].at(0);
  EXPECT_EQ(as_string(old_shape["store_order_id"]), "STORE-1");
  for (std::string version : {"2026-01", "2026-07"}) {
    const auto body = sandbox.get("/" + version + "/order/" + id).body;
    EXPECT_EQ(body.find("store_order_id"), std::string::npos) << version;
  }
  const auto listed = sandbox.get("/2025-07/order").body;
  EXPECT_NE(listed.find("store_order_id"), std::string::npos);
  const auto cancelled = sandbox.call("POST", "/2026-01/order/" + id + ":cancel");
  EXPECT_EQ(cancelled.body.find("store_order_id"), std::string::npos);
  const auto created = sandbox.create("/2025-07/order", order_body("STORE-2"));
  EXPECT_NE(created.body.find(R"("store_order_id":"STORE-2")"), std::string::npos);
}

TEST(SandboxVersions, CustomsValueIsAnIntegerBefore2026_07AndANumberFromIt) {
  Sandbox sandbox;
  const auto refused = sandbox.create("/2026-01/product", product_body("MUG-1", "12.5"));
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(error_fields(refused), std::vector<std::string>{"variants[0].customs.value"});
  const auto modern = sandbox.create("/2026-07/product", product_body("MUG-1", "12.75"));
  ASSERT_EQ(modern.status, 201) << modern.body;
  const auto id = std::to_string(as_int(parse(modern.body)["id"]));
  double value = 0;
  ASSERT_EQ(parse(sandbox.get("/2026-07/product/" + id).body)["variants"].at(0)["customs"]["value"].get_double().get(value),
            simdjson::SUCCESS);
  EXPECT_DOUBLE_EQ(value, 12.75);
  const simdjson::dom::element old = parse(sandbox.get("/2026-01/product/" + id).body)["variants"].at(0)["customs"]["value"];
  EXPECT_EQ(old.type(), simdjson::dom::element_type::INT64);
  EXPECT_EQ(as_int(old), 13);
  EXPECT_EQ(sandbox.create("/2025-07/product", product_body("MUG-2", "12")).status, 201);
}

class SandboxReturnUpdate : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto order = sandbox.create_order("RET-SRC");
    inventory_id = std::to_string(as_int(order["shipments"].at(0)["products"].at(0)["inventory_items"].at(0)["id"]));
    const auto created = sandbox.create("/2026-01/return", body("RMA-1", "1"));
    ASSERT_EQ(created.status, 201) << created.body;
    return_path = "/return/" + std::to_string(as_int(parse(created.body)["id"]));
  }
  std::string body(std::string_view reference, std::string_view quantity, std::string_view extra_line = {}) const {
    return R"({"reference_id":")" + std::string(reference) + R"(","fulfillment_center":{"id":8},"inventory":[{"id":)" +
           inventory_id + R"(,"quantity":)" + std::string(quantity) + R"(,"requested_action":"Restock")" +
           std::string(extra_line) + "}]}";
  }
  Sandbox sandbox;
  std::string inventory_id;
  std::string return_path;
};

TEST_F(SandboxReturnUpdate, In2025_07TheChannelHeaderIsNeededAndFailuresAre400ProblemDetails) {
  EXPECT_EQ(sandbox.call("PUT", "/2025-07" + return_path, body("RMA-1", "2")).status, 400);
  const auto updated = sandbox.call("PUT", "/2025-07" + return_path, body("RMA-1", "2"), {{"service_channel_id", "2"}});
  ASSERT_EQ(updated.status, 200) << updated.body;
  EXPECT_EQ(as_int(parse(updated.body)["inventory"].at(0)["quantity"]), 2);
  const auto invalid = sandbox.call("PUT", "/2025-07" + return_path, body("RMA-1", "0"), {{"service_channel_id", "2"}});
  EXPECT_EQ(invalid.status, 400);
  EXPECT_EQ(error_fields(invalid), std::vector<std::string>{"inventory[0].quantity"});
  // Lot fields are not part of 2025-07: they are ignored.
  const auto lots = sandbox.call("PUT", "/2025-07" + return_path, body("RMA-1", "1", R"(,"lot_number":"L1")"),
                                 {{"service_channel_id", "2"}});
  EXPECT_EQ(as_string(parse(lots.body)["inventory"].at(0)["lot_information"]["number"]), "");
}

TEST_F(SandboxReturnUpdate, From2026_01FailuresAre422WithTheNewShapeAndLotsAreAccepted) {
  const auto invalid = sandbox.call("PUT", "/2026-01" + return_path, body("RMA-1", "0"));
  EXPECT_EQ(invalid.status, 422);
  const auto failure = parse(invalid.body);
  EXPECT_FALSE(as_string(failure["details"]).empty());
  EXPECT_EQ(as_string(failure["errors"].at(0)["field"]), "inventory[0].quantity");
  EXPECT_EQ(as_string(failure["message"]), "Validation failed");
  EXPECT_TRUE(failure["stackTrace"].is_null());
  simdjson::dom::element absent;
  EXPECT_NE(failure["title"].get(absent), simdjson::SUCCESS);
  EXPECT_EQ(sandbox.call("PUT", "/2026-01" + return_path, "{").status, 422);

  const auto updated = sandbox.call("PUT", "/2026-01" + return_path,
                                    body("RMA-1", "1", R"(,"lot_number":"L7","lot_date":"2027-01-01T00:00:00Z")"));
  ASSERT_EQ(updated.status, 200) << updated.body;
  const auto line = parse(updated.body)["inventory"].at(0);
  EXPECT_EQ(as_string(line["lot_information"]["number"]), "L7");
  // Once processed, 2026-01 lines report action_taken[].image_url.
  sandbox.advance_clock(2 * 86400);
  const auto processed = sandbox.get("/2026-01" + return_path).body;
  EXPECT_NE(processed.find("\"image_url\""), std::string::npos) << processed;
  EXPECT_EQ(sandbox.get("/2025-07" + return_path).body.find("\"image_url\""), std::string::npos);
  // A completed return can no longer be changed.
  EXPECT_EQ(sandbox.call("PUT", "/2026-01" + return_path, body("RMA-1", "1")).status, 422);
}

TEST(SandboxVersions, ReceivingValidationIs400Before2026_07And422From) {
  Sandbox sandbox({"--seed", "demo"});
  const std::string missing_type = R"({"fulfillment_center":{"id":8},"box_packaging_type":"EverythingInOneBox","expected_arrival_date":"2030-01-01T00:00:00Z","boxes":[]})";
  EXPECT_EQ(sandbox.create("/2026-01/receiving", missing_type).status, 400);
  const auto modern = sandbox.create("/2026-07/receiving", missing_type);
  EXPECT_EQ(modern.status, 422);
  EXPECT_EQ(as_int(parse(modern.body)["status"]), 422);
}

TEST(SandboxVersions, ReceivingBoxRulesChangeIn2026_07) {
  Sandbox sandbox({"--seed", "demo"});
  const std::string head = R"({"fulfillment_center":{"id":8},"package_type":"Package","box_packaging_type":"EverythingInOneBox","expected_arrival_date":"2030-01-01T00:00:00Z")";
  // Before 2026-07 boxes may be null but inventory_id is required.
  EXPECT_EQ(sandbox.create("/2026-01/receiving", head + R"(,"boxes":null})").status, 201);
  const auto by_sku_old = sandbox.create("/2026-01/receiving", head + R"(,"boxes":[{"tracking_number":"T1","box_items":[{"sku":"TSHIRT-M","quantity":5}]}]})");
  EXPECT_EQ(by_sku_old.status, 400);
  EXPECT_EQ(error_fields(by_sku_old), std::vector<std::string>{"boxes[0].box_items[0].inventory_id"});
  // From 2026-07 a sku may stand in for inventory_id, boxes and tracking numbers may not be null,
  // and freight is accepted and returned.
  EXPECT_EQ(sandbox.create("/2026-07/receiving", head + R"(,"boxes":null})").status, 422);
  EXPECT_EQ(sandbox.create("/2026-07/receiving", head + R"(,"boxes":[{"tracking_number":null,"box_items":[{"sku":"TSHIRT-M","quantity":5}]}]})").status, 422);
  const auto created = sandbox.create("/2026-07/receiving", head +
      R"(,"freight":{"carrier":"Maersk","bol_number":"BOL1","container_number":"C1","vessel_name":"V","freight_forwarder":"F","notes":"n"},)"
      R"("final_destination_fulfillment_center_id":11,"boxes":[{"tracking_number":"T1","box_items":[{"sku":"TSHIRT-M","quantity":5}]}]})");
  ASSERT_EQ(created.status, 201) << created.body;
  const auto wro = parse(created.body);
  EXPECT_EQ(as_string(wro["freight"]["carrier"]), "Maersk");
  EXPECT_EQ(as_string(wro["inventory_quantities"].at(0)["sku"]), "TSHIRT-M");
  const auto id = std::to_string(as_int(wro["id"]));
  EXPECT_EQ(as_string(parse(sandbox.get("/2026-07/receiving/" + id).body)["freight"]["bol_number"]), "BOL1");
  EXPECT_EQ(sandbox.get("/2026-01/receiving/" + id).body.find("freight"), std::string::npos);
}

TEST(SandboxVersions, ReceivingNotFoundDropsErrorsIn2026_07) {
  Sandbox sandbox;
  const auto old = sandbox.get("/2026-01/receiving/424242");
  EXPECT_EQ(old.status, 404);
  simdjson::dom::element errors;
  EXPECT_EQ(parse(old.body)["errors"].get(errors), simdjson::SUCCESS);
  const auto modern = sandbox.get("/2026-07/receiving/424242");
  EXPECT_EQ(modern.status, 404);
  EXPECT_NE(parse(modern.body)["errors"].get(errors), simdjson::SUCCESS);
  const auto distributions = parse(sandbox.get("/2026-07/receiving/424242/distributions").body);
  EXPECT_EQ(as_int(distributions["status"]), 404);
  EXPECT_FALSE(as_string(distributions["title"]).empty());
  EXPECT_EQ(sandbox.get("/2026-07/receiving/abc/distributions").status, 400);
}

}  // namespace
}  // namespace fulfillsync::sandbox_test
