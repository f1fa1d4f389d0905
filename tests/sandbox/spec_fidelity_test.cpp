// Places where the sandbox once answered differently from the spec (issue 25, item 1). Each test
// quotes the line of shared/spec/fulfillment-api.md it checks.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "sandbox_fixture.hpp"

namespace fulfillsync::sandbox_test {
namespace {

// A product with one variant (2026-01); returns the parsed 201 body.
simdjson::dom::element create_product(const Sandbox& sandbox, const std::string& product_fields,
                                      const std::string& variant_fields, const std::string& sku = "SPEC-1") {
  const auto created = sandbox.create("/2026-01/product", R"({"name":"Spec Product")" + product_fields +
                                                              R"(,"variants":[{"name":"Spec Variant","sku":")" + sku + "\"" +
                                                              variant_fields + "}]}");
  EXPECT_EQ(created.status, 201) << created.body;
  return parse(created.body);
}

std::string inventory_path(simdjson::dom::element product) {
  return "/2026-01/inventory/" + std::to_string(as_int(product["variants"].at(0)["inventory"]["inventory_id"]));
}

// "`T | null` means the value may be null": a member typed T is absent or not null.
void expect_absent_or_not_null(simdjson::dom::element object, std::string_view key) {
  simdjson::dom::element value;
  if (object[key].get(value) != simdjson::SUCCESS) return;
  EXPECT_FALSE(value.is_null()) << key << " is null";
}

// An order whose shipping_method is `method`.
simdjson::dom::element create_order_shipped_by(const Sandbox& sandbox, const std::string& reference, const std::string& method) {
  std::string body = order_body(reference);
  const std::string standard = R"("shipping_method":"Standard")";
  body.replace(body.find(standard), standard.size(), R"("shipping_method":")" + method + "\"");
  const auto created = sandbox.create("/2026-01/order", body);
  EXPECT_EQ(created.status, 201) << created.body;
  return parse(created.body);
}

// 1. "shipping_method | ... matched against the merchant's ship option mapping; when no match exists
//    a new mapping is created and defaults to Standard"
TEST(SpecFidelity, UnknownShippingMethodMapsToStandardShipOption) {
  Sandbox sandbox;
  const auto unknown = create_order_shipped_by(sandbox, "SHIP-OPT-1", "Drone Drop");
  EXPECT_EQ(as_string(unknown["shipping_method"]), "Drone Drop");
  EXPECT_EQ(as_string(unknown["shipments"].at(0)["ship_option"]), "Standard");
  const auto known = create_order_shipped_by(sandbox, "SHIP-OPT-2", "expedited");
  EXPECT_EQ(as_string(known["shipments"].at(0)["ship_option"]), "Expedited");
}

// 2. "is_digital, is_image_uploaded | boolean" (Variant); inventory item "`variant` (... `is_digital`, all booleans)"
TEST(SpecFidelity, IsDigitalIsKeptAndMustBeBoolean) {
  Sandbox sandbox;
  const auto product = create_product(sandbox, "", R"(,"is_digital":true)");
  EXPECT_TRUE(as_bool(product["variants"].at(0)["is_digital"]));
  const auto item = parse(sandbox.get(inventory_path(product)).body);
  EXPECT_TRUE(as_bool(item["variant"]["is_digital"]));
  const auto refused = sandbox.create("/2026-01/product", R"({"name":"P","variants":[{"name":"V","sku":"D-2","is_digital":"yes"}]})");
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_EQ(error_fields(refused), (std::vector<std::string>{"variants[0].is_digital"}));
}

// 3. "dimension | object: `height`, `length`, `width` (numbers), ... `unit` (strings)": the numbers
//    are in the unit named.
TEST(SpecFidelity, DimensionsSentInCentimetresAreConvertedToTheUnitAnswered) {
  Sandbox sandbox;
  const auto product = create_product(sandbox, "", R"(,"dimension":{"length":25.4,"width":12.7,"height":2.54,"unit":"cm"})");
  const auto dimension = product["variants"].at(0)["dimension"];
  ASSERT_EQ(as_string(dimension["unit"]), "in");
  EXPECT_NEAR(double(dimension["length"]), 10.0, 1e-9);
  EXPECT_NEAR(double(dimension["width"]), 5.0, 1e-9);
  EXPECT_NEAR(double(dimension["height"]), 1.0, 1e-9);
  const auto item = parse(sandbox.get(inventory_path(product)).body);
  ASSERT_EQ(as_string(item["dimensions"]["unit"]), "in");
  EXPECT_NEAR(double(item["dimensions"]["length"]), 10.0, 1e-9);
  EXPECT_EQ(sandbox.create("/2026-01/product", R"({"name":"P","variants":[{"name":"V","sku":"D-3","dimension":{"length":1,"unit":"furlong"}}]})").status, 400);
}

// 4. Inventory item: "`name`, `sku`, `barcode` (strings); `is_case`, `is_lot` (booleans); `dimensions` ...;
//    `weight`": the item of a variant describes the variant as it is, also after PATCH .../variants.
TEST(SpecFidelity, InventoryItemAndLotsFollowAPatchedVariant) {
  Sandbox sandbox;
  const auto product = create_product(sandbox, "", "");
  const std::string product_id = std::to_string(as_int(product["id"]));
  const std::string variant_id = std::to_string(as_int(product["variants"].at(0)["id"]));
  const auto patched = sandbox.call("PATCH", "/2026-01/product/" + product_id + "/variants",
                                    R"([{"id":)" + variant_id + R"(,"name":"Renamed","sku":"SPEC-NEW","upc":"123456789012",)"
                                    R"("lot_information":{"is_lot":true},"weight":{"weight":2,"unit":"lb"},)"
                                    R"("dimension":{"length":9,"width":8,"height":7,"unit":"in"}}])");
  ASSERT_EQ(patched.status, 200) << patched.body;
  const auto item = parse(sandbox.get(inventory_path(product)).body);
  EXPECT_EQ(as_string(item["name"]), "Renamed");
  EXPECT_EQ(as_string(item["sku"]), "SPEC-NEW");
  EXPECT_EQ(as_string(item["barcode"]), "123456789012");
  EXPECT_TRUE(as_bool(item["is_lot"]));
  EXPECT_EQ(double(item["weight"]["value"]), 32.0);
  EXPECT_EQ(double(item["dimensions"]["length"]), 9.0);
  const std::string inventory_id = std::to_string(as_int(item["inventory_id"]));
  const auto lots = parse(sandbox.get("/2026-01/inventory-level/" + inventory_id + "/lots").body);
  EXPECT_EQ(as_string(lots["name"]), "Renamed");
  EXPECT_EQ(as_string(lots["sku"]), "SPEC-NEW");
}

// 5. Inventory item "`variant` (... `is_active` ...)": false for an Inactive variant.
TEST(SpecFidelity, InventoryItemIsActiveFollowsVariantStatus) {
  Sandbox sandbox;
  const auto product = create_product(sandbox, "", R"(,"status":"Inactive")");
  EXPECT_FALSE(as_bool(parse(sandbox.get(inventory_path(product)).body)["variant"]["is_active"]));
  const std::string product_id = std::to_string(as_int(product["id"]));
  const std::string variant_id = std::to_string(as_int(product["variants"].at(0)["id"]));
  ASSERT_EQ(sandbox.call("PATCH", "/2026-01/product/" + product_id + "/variants", R"([{"id":)" + variant_id + R"(,"status":"Active"}])").status, 200);
  EXPECT_TRUE(as_bool(parse(sandbox.get(inventory_path(product)).body)["variant"]["is_active"]));
  ASSERT_EQ(sandbox.call("PATCH", "/2026-01/product/" + product_id + "/variants", R"([{"id":)" + variant_id + R"(,"status":"Inactive"}])").status, 200);
  EXPECT_FALSE(as_bool(parse(sandbox.get(inventory_path(product)).body)["variant"]["is_active"]));
}

// 6. Product "taxonomy | object: `id`, `name`, `parent_id`, `parent_name`, `path`", the node GET /taxonomy/{id} names.
TEST(SpecFidelity, ProductTaxonomyIsTheNodeOfItsId) {
  Sandbox sandbox;
  for (const int id : {11, 12, 21}) {
    const auto product = create_product(sandbox, R"(,"taxonomy_id":)" + std::to_string(id), "", "TAX-" + std::to_string(id));
    const auto node = parse(sandbox.get("/2026-01/taxonomy/" + std::to_string(id)).body);
    const auto taxonomy = product["taxonomy"];
    EXPECT_EQ(as_int(taxonomy["id"]), id);
    EXPECT_EQ(as_string(taxonomy["name"]), as_string(node["name"]));
    EXPECT_EQ(as_string(taxonomy["path"]), as_string(node["path"]));
    EXPECT_EQ(as_int(taxonomy["parent_id"]), as_int(node["parent"]["id"]));
    EXPECT_EQ(as_string(taxonomy["parent_name"]), as_string(node["parent"]["name"]));
  }
}

// 7. Variant "packaging_material_type, packaging_requirement | object: `id`, `name`", named as GET /packaging-requirement names it.
TEST(SpecFidelity, PackagingRequirementNameMatchesTheList) {
  Sandbox sandbox;
  const auto requirements = parse(sandbox.get("/2026-01/packaging-requirement").body);
  for (const auto requirement : requirements.get_array()) {
    const auto id = as_int(requirement["id"]);
    const auto product = create_product(sandbox, "", R"(,"packaging_requirement_id":)" + std::to_string(id),
                                        "PACK-" + std::to_string(id));
    EXPECT_EQ(as_string(product["variants"].at(0)["packaging_requirement"]["name"]), as_string(requirement["name"])) << id;
  }
}

// 8. "GET /return ... Query (all strings unless noted; list filters are comma-separated): `Ids`, ...
//    `FulfillmentCenterIds`, ... `OriginalShipmentIds`, `InventoryIds`": a value that is no id matches nothing.
TEST(SpecFidelity, ReturnIdListFiltersAreStrings) {
  Sandbox sandbox;
  const auto order = sandbox.create_order("RET-IDS");
  const auto inventory_id = as_int(order["shipments"].at(0)["products"].at(0)["inventory_items"].at(0)["id"]);
  const auto created = sandbox.create("/2026-01/return", R"({"reference_id":"RMA-IDS","fulfillment_center":{"id":8},"inventory":[{"id":)" +
                                                             std::to_string(inventory_id) + R"(,"quantity":1,"requested_action":"Restock"}]})");
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string return_id = std::to_string(as_int(parse(created.body)["id"]));
  for (const std::string name : {"Ids", "FulfillmentCenterIds", "InventoryIds", "OriginalShipmentIds"}) {
    const auto listed = sandbox.get("/2026-01/return?" + name + "=RMA-7,abc");
    ASSERT_EQ(listed.status, 200) << name << ": " << listed.body;
    EXPECT_EQ(parse(listed.body)["items"].get_array().size(), 0u) << name;
  }
  const auto mixed = sandbox.get("/2026-01/return?Ids=abc," + return_id);
  ASSERT_EQ(mixed.status, 200) << mixed.body;
  EXPECT_EQ(parse(mixed.body)["items"].get_array().size(), 1u);
  EXPECT_EQ(sandbox.get("/2026-01/return?Cursor=abc").status, 400);  // "Cursor (number, int32 ...)"
}

// 9. RetailerProgramData "delivery_date | date-time", "doNotShipBeforeDate | date-time", "shipByDate | date-time".
TEST(SpecFidelity, RetailerProgramDataDatesAreDateTimes) {
  Sandbox sandbox;
  const auto refused = sandbox.create("/2026-01/order", order_body("RPD-BAD", R"(,"retailer_program_data":{"shipByDate":"soon"})"));
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_EQ(error_fields(refused), (std::vector<std::string>{"retailer_program_data.shipByDate"}));
  const auto accepted = sandbox.create_order("RPD-OK", R"(,"retailer_program_data":{"shipByDate":"2026-03-01T00:00:00Z","department":"7"})");
  EXPECT_EQ(as_string(accepted["retailer_program_data"]["shipByDate"]), "2026-03-01T00:00:00Z");
}

// 10. "`POST /receiving:setExternalSync`. Body: `ids`, `is_external_sync`. Response: a WRO."
TEST(SpecFidelity, SetExternalSyncAnswersOneWro) {
  Sandbox sandbox({"--seed", "demo"});
  const auto synced = sandbox.call("POST", "/2026-01/receiving:setExternalSync", R"({"ids":[801,802],"is_external_sync":true})");
  ASSERT_EQ(synced.status, 200) << synced.body;
  const auto wro = parse(synced.body);
  ASSERT_TRUE(wro.is_object()) << synced.body;
  EXPECT_EQ(as_int(wro["id"]), 801);
  EXPECT_FALSE(wro["external_sync_timestamp"].is_null());
  EXPECT_FALSE(parse(sandbox.get("/2026-01/receiving/802").body)["external_sync_timestamp"].is_null());
}

// 11. "Notation: `T | null` means the value may be null." Fields typed without `| null` are never null.
TEST(SpecFidelity, FieldsNotMarkedNullableAreNeverNull) {
  Sandbox sandbox;
  const auto order = sandbox.create_order("NULLS");  // no unit_price, no retailer_program_data
  expect_absent_or_not_null(order["products"].at(0), "unit_price");
  expect_absent_or_not_null(order, "retailer_program_data");
  const simdjson::dom::element shipment = order["shipments"].at(0);
  expect_absent_or_not_null(shipment, "tracking");  // before shipping
  // "created_date, actual_fulfillment_date, estimated_fulfillment_date, delivery_date, last_update_at,
  // last_tracking_update_at | date-time" and ShipmentProduct "`expiration_date` (date-time)": not null either.
  for (const auto key : {"actual_fulfillment_date", "delivery_date", "last_tracking_update_at"}) {
    expect_absent_or_not_null(shipment, key);
  }
  expect_absent_or_not_null(shipment["products"].at(0)["inventory_items"].at(0), "expiration_date");
  const std::string shipment_id = std::to_string(as_int(shipment["id"]));

  const auto marked = sandbox.call("POST", "/2026-01/shipment:batchUpdateTrackingUpload",
                                   R"({"is_tracking_uploaded":true,"shipment_ids":[)" + shipment_id + ",999999]}");
  ASSERT_EQ(marked.status, 200) << marked.body;
  const simdjson::dom::element results = parse(marked.body)["results"];
  ASSERT_TRUE(as_bool(results.at(0)["isSuccess"]));
  expect_absent_or_not_null(results.at(0), "error");
  EXPECT_EQ(as_string(results.at(1)["error"]["code"]), "NotFound");  // failures keep their error

  const auto started = sandbox.call("POST", "/2026-01/simulate/shipment",
                                    R"({"shipment_id":")" + shipment_id + R"(","simulation":{"action":"PickOrder","delay":5}})");
  ASSERT_EQ(started.status, 200) << started.body;
  const auto status = parse(sandbox.get("/2026-01/simulate/status/" + as_string(parse(started.body)["simulation_id"])).body);
  expect_absent_or_not_null(status["simulation"], "next");
}

}  // namespace
}  // namespace fulfillsync::sandbox_test
