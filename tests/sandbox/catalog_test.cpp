// Products, variants, inventory, lot levels, history, packaging, taxonomy, allergens and estimates.
#include <algorithm>

#include <gtest/gtest.h>

#include "sandbox_fixture.hpp"

namespace fulfillsync::sandbox_test {
namespace {

TEST(SandboxCatalog, ProductsAndVariantsLifeCycle) {
  Sandbox sandbox;
  const auto created = sandbox.create("/2026-01/product",
      R"({"name":"Hoodie","taxonomy_id":11,"variants":[{"name":"Hoodie S","sku":"HOOD-S","weight":{"weight":1,"unit":"lb"}},{"name":"Hoodie M","sku":"HOOD-M"}]})");
  ASSERT_EQ(created.status, 201) << created.body;
  const auto product = parse(created.body);
  const auto id = std::to_string(as_int(product["id"]));
  EXPECT_EQ(product["variants"].get_array().size(), 2u);
  EXPECT_EQ(as_int(product["variants"].at(0)["channel_metadata"].at(0)["channel_id"]), kWriteChannel);
  double weight = 0;
  ASSERT_EQ(product["variants"].at(0)["weight"]["weight"].get_double().get(weight), simdjson::SUCCESS);
  EXPECT_DOUBLE_EQ(weight, 16);
  EXPECT_GT(as_int(product["variants"].at(0)["inventory"]["inventory_id"]), 0);

  EXPECT_EQ(sandbox.create("/2026-01/product", R"({"name":"Dup","variants":[{"name":"x","sku":"HOOD-S"}]})").status, 400);
  EXPECT_EQ(error_fields(sandbox.create("/2026-01/product", R"({"variants":[]})")),
            (std::vector<std::string>{"name", "variants"}));

  const auto patched = sandbox.call("PATCH", "/2026-01/product/" + id, R"({"name":"Zip Hoodie"})");
  ASSERT_EQ(patched.status, 200);
  EXPECT_EQ(as_string(parse(patched.body)["name"]), "Zip Hoodie");
  EXPECT_FALSE(parse(patched.body)["updated_on"].is_null());

  const auto added = sandbox.create("/2026-01/product/" + id + "/variants", R"([{"name":"Hoodie L","sku":"HOOD-L"}])");
  ASSERT_EQ(added.status, 201) << added.body;
  const auto variant_id = as_int(parse(added.body).at(0)["id"]);
  const auto variants = parse(sandbox.get("/2026-01/product/" + id + "/variants").body);
  EXPECT_EQ(variants.get_array().size(), 3u);

  const auto renamed = sandbox.call("PATCH", "/2026-01/product/" + id + "/variants",
                                    R"([{"id":)" + std::to_string(variant_id) + R"(,"name":"Hoodie Large","status":"Inactive"}])");
  ASSERT_EQ(renamed.status, 200) << renamed.body;
  EXPECT_EQ(as_string(parse(renamed.body).at(0)["name"]), "Hoodie Large");
  EXPECT_EQ(as_string(parse(renamed.body).at(0)["status"]), "Inactive");
  EXPECT_EQ(sandbox.call("PATCH", "/2026-01/product/" + id + "/variants", R"([{"id":1,"name":"x"}])").status, 400);

  const auto metadata_id = as_int(parse(added.body).at(0)["channel_metadata"].at(0)["id"]);
  const auto path = "/2026-01/variant/" + std::to_string(variant_id) + "/channel-metadata/" + std::to_string(metadata_id);
  const auto removed = sandbox.call("DELETE", path);
  ASSERT_EQ(removed.status, 200) << removed.body;
  EXPECT_EQ(parse(removed.body)["channel_metadata"].get_array().size(), 0u);
  EXPECT_EQ(sandbox.call("DELETE", path).status, 404);

  const auto list = parse(sandbox.get("/2026-01/product?Limit=1").body);
  EXPECT_EQ(list["items"].get_array().size(), 1u);
  EXPECT_TRUE(list["next"].is_null());
  EXPECT_EQ(sandbox.get("/2026-01/product/999999").status, 404);
}

// The spec's Product has `name` and `type` as `string | null`: a PATCH with null clears them. Its
// `taxonomy` and every member of a Variant are not nullable: null there is refused, never read as
// "unchanged" or as a value.
TEST(SandboxCatalog, NullClearsOnlyWhatTheSpecMakesNullable) {
  Sandbox sandbox;
  const auto created = sandbox.create("/2026-07/product",
      R"({"name":"Mug","type":"Kitchen","taxonomy_id":11,"variants":[{"name":"Mug","sku":"MUG-1","gtin":"0123456789012"}]})");
  ASSERT_EQ(created.status, 201) << created.body;
  const auto product = parse(created.body);
  const auto id = std::to_string(as_int(product["id"]));
  const auto variant_id = std::to_string(as_int(product["variants"].at(0)["id"]));

  const auto cleared = sandbox.call("PATCH", "/2026-07/product/" + id, R"({"type":null})");
  ASSERT_EQ(cleared.status, 200) << cleared.body;
  EXPECT_TRUE(parse(cleared.body)["type"].is_null());
  EXPECT_EQ(as_string(parse(cleared.body)["name"]), "Mug");
  EXPECT_TRUE(parse(sandbox.get("/2026-07/product/" + id).body)["type"].is_null());

  EXPECT_EQ(error_fields(sandbox.call("PATCH", "/2026-07/product/" + id, R"({"taxonomy_id":null})")),
            (std::vector<std::string>{"taxonomy_id"}));
  const auto refused = sandbox.call("PATCH", "/2026-07/product/" + id + "/variants",
                                    R"([{"id":)" + variant_id + R"(,"gtin":null,"customs":null}])");
  EXPECT_EQ(refused.status, 400) << refused.body;
  auto fields = error_fields(refused);
  std::sort(fields.begin(), fields.end());
  EXPECT_EQ(fields, (std::vector<std::string>{"[0].customs", "[0].gtin"}));
  const auto variant = parse(sandbox.get("/2026-07/product/" + id + "/variants").body).at(0);
  EXPECT_EQ(as_string(variant["gtin"]), "0123456789012");
}

TEST(SandboxCatalog, AVariantThatIsNotAnObjectIsNamedByItsIndex) {
  Sandbox sandbox;
  const auto nested = sandbox.create("/2026-01/product", R"({"name":"Hoodie","variants":["Hoodie S"]})");
  ASSERT_EQ(nested.status, 400) << nested.body;
  EXPECT_EQ(as_string(parse(nested.body)["errors"]["variants[0]"].at(0)), "Each variant must be an object.");

  const auto created = sandbox.create("/2026-01/product", R"({"name":"Hoodie","variants":[{"name":"Hoodie S","sku":"HOOD-S"}]})");
  ASSERT_EQ(created.status, 201) << created.body;
  const auto id = std::to_string(as_int(parse(created.body)["id"]));
  const auto listed = sandbox.create("/2026-01/product/" + id + "/variants", R"([{"name":"Hoodie L","sku":"HOOD-L"},3])");
  ASSERT_EQ(listed.status, 400) << listed.body;
  EXPECT_EQ(as_string(parse(listed.body)["errors"]["[1]"].at(0)), "Each variant must be an object.");
}

TEST(SandboxCatalog, InventoryItemsLotsAndHistory) {
  Sandbox sandbox({"--seed", "demo"});
  const auto products = parse(sandbox.get("/2026-01/product?Limit=250").body)["items"];
  ASSERT_GE(products.get_array().size(), 4u);
  const auto inventory_id = std::to_string(as_int(products.at(0)["variants"].at(0)["inventory"]["inventory_id"]));
  const auto item = parse(sandbox.get("/2026-01/inventory/" + inventory_id).body);
  EXPECT_EQ(as_string(item["sku"]), "TSHIRT-S");
  EXPECT_EQ(as_string(item["weight"]["unit"]), "oz");
  const auto lots = parse(sandbox.get("/2026-01/inventory-level/" + inventory_id + "/lots").body);
  EXPECT_EQ(as_int(lots["inventory_id"]), std::stoll(inventory_id));
  const auto lot = lots["lots"].at(0);
  EXPECT_EQ(lot["locations"].get_array().size(), 3u);
  const auto on_hand = as_int(lot["on_hand_quantity"]);
  EXPECT_GT(on_hand, 0);
  EXPECT_EQ(as_int(lot["fulfillable_quantity"]), on_hand);

  // An order commits stock at its center; shipping takes it off the shelf.
  const auto order = sandbox.create("/2026-01/order",
      R"({"reference_id":"STOCK-1","shipping_method":"Standard","location_id":8,"recipient":{"name":"A","address":{"address1":"1","city":"C","country":"US"}},"products":[{"reference_id":"TSHIRT-S","quantity":3}]})");
  ASSERT_EQ(order.status, 201) << order.body;
  auto at_center = [&]() {
    const auto current = parse(sandbox.get("/2026-01/inventory-level/" + inventory_id + "/lots").body);
    for (auto location : current["lots"].at(0)["locations"].get_array()) {
      if (as_int(location["location_id"]) == 8) return std::pair{as_int(location["on_hand_quantity"]), as_int(location["committed_quantity"])};
    }
    return std::pair<std::int64_t, std::int64_t>{-1, -1};
  };
  const auto [on_hand_before, committed] = at_center();
  EXPECT_EQ(committed, 3);
  sandbox.advance_clock(600);
  const auto [on_hand_after, committed_after] = at_center();
  EXPECT_EQ(on_hand_after, on_hand_before - 3);
  EXPECT_EQ(committed_after, 0);
  const auto picks = parse(sandbox.call("POST", "/2026-01/inventory/history:query",
                                        R"({"inventory_ids":[)" + inventory_id + R"(],"event_types":["OrderPick"]})").body);
  ASSERT_EQ(picks["items"].get_array().size(), 1u);
  EXPECT_EQ(as_int(picks["items"].at(0)["quantity_change"]), -3);
  const auto paged = parse(sandbox.call("POST", "/2026-01/inventory/history:query", R"({"limit":2})").body);
  EXPECT_EQ(paged["items"].get_array().size(), 2u);
  EXPECT_EQ(as_int(paged["next"]), 2);
  EXPECT_EQ(sandbox.call("POST", "/2026-01/inventory/history:query", R"({"event_types":["Teleport"]})").status, 400);
  EXPECT_EQ(sandbox.get("/2026-01/inventory/999999").status, 404);
}

TEST(SandboxCatalog, PackagingTaxonomyAndAllergens) {
  Sandbox sandbox;
  const auto packaging = parse(sandbox.get("/2026-01/packaging-requirement").body);
  EXPECT_EQ(packaging.get_array().size(), 3u);
  EXPECT_FALSE(as_string(packaging.at(0)["applicable_packaging_material_types"].at(0)["name"]).empty());
  const auto taxonomy = parse(sandbox.get("/2026-01/taxonomy/10").body);
  EXPECT_EQ(as_string(taxonomy["path"]), "/Apparel");
  EXPECT_EQ(as_int(taxonomy["parent"]["id"]), 1);
  EXPECT_EQ(taxonomy["children"].get_array().size(), 2u);
  EXPECT_EQ(parse(sandbox.get("/2026-01/taxonomy/1").body)["parent"].error(), simdjson::NO_SUCH_FIELD);  // an object, never null
  EXPECT_TRUE(as_bool(parse(sandbox.get("/2026-01/taxonomy/1").body)["children"].at(0)["has_children"]));
  EXPECT_EQ(sandbox.get("/2026-01/taxonomy/77").status, 404);
  EXPECT_EQ(parse(sandbox.get("/2026-07/allergens").body).get_array().size(), 14u);
}

TEST(SandboxCatalog, EstimatesAreDeterministicAndNeedExactlyOneIdentifier) {
  Sandbox sandbox({"--seed", "demo"});
  const std::string body =
      R"({"address":{"address1":"1 Main","city":"Austin","state":"TX","country":"US"},"products":[{"reference_id":"TSHIRT-M","quantity":4}],"shipping_methods":["Standard","Overnight"]})";
  const auto first = sandbox.create("/2026-01/order:estimate", body);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(sandbox.create("/2026-01/order:estimate", body).body, first.body);
  const auto estimates = parse(first.body)["estimates"];
  ASSERT_EQ(estimates.get_array().size(), 2u);
  double standard = 0, overnight = 0, weight = 0;
  ASSERT_EQ(estimates.at(0)["estimated_price"].get_double().get(standard), simdjson::SUCCESS);
  ASSERT_EQ(estimates.at(1)["estimated_price"].get_double().get(overnight), simdjson::SUCCESS);
  ASSERT_EQ(estimates.at(0)["total_weight_oz"].get_double().get(weight), simdjson::SUCCESS);
  EXPECT_DOUBLE_EQ(weight, 28);
  EXPECT_GT(overnight, standard);
  EXPECT_EQ(as_string(estimates.at(0)["estimated_currency_code"]), "USD");
  // Farther away costs more.
  const auto abroad = parse(sandbox.create("/2026-01/order:estimate",
      R"({"address":{"country":"CA"},"products":[{"reference_id":"TSHIRT-M","quantity":4}],"shipping_methods":["Standard"]})").body);
  double abroad_price = 0;
  ASSERT_EQ(abroad["estimates"].at(0)["estimated_price"].get_double().get(abroad_price), simdjson::SUCCESS);
  EXPECT_GT(abroad_price, standard);
  // Without shipping_methods: every method of the merchant.
  const auto all = parse(sandbox.create("/2026-01/order:estimate",
      R"({"address":{"country":"US"},"products":[{"reference_id":"TSHIRT-M","quantity":1}]})").body);
  EXPECT_EQ(all["estimates"].get_array().size(), 4u);

  const auto both = sandbox.create("/2026-01/order:estimate",
      R"({"address":{"country":"US"},"products":[{"id":3001,"reference_id":"TSHIRT-M","quantity":1}]})");
  EXPECT_EQ(both.status, 400);
  EXPECT_EQ(error_fields(both), std::vector<std::string>{"products[0]"});
  const auto neither = sandbox.create("/2026-01/order:estimate", R"({"address":{"country":"US"},"products":[{"quantity":1}]})");
  EXPECT_EQ(error_fields(neither), std::vector<std::string>{"products[0]"});
  EXPECT_EQ(error_fields(sandbox.create("/2026-01/order:estimate", R"({"products":[]})")),
            (std::vector<std::string>{"address", "products"}));
  EXPECT_EQ(sandbox.call("POST", "/2026-01/order:estimate", body).status, 400);  // channel header required
}

}  // namespace
}  // namespace fulfillsync::sandbox_test
