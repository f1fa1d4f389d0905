#include "fulfillsync/daemon/mapping/request_mapping.hpp"

#include <cmath>
#include <limits>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fulfillsync/api/models/encode.hpp"
#include "fulfillsync/common/printable.hpp"

namespace fulfillsync::merchant {
namespace {

using daemon::cancel_requested;
using daemon::map_order;
using daemon::map_return;
using daemon::skus_named;

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

Field integer(std::int64_t value) { return Field::of(value); }
Field text(std::string value) { return Field::of(std::move(value)); }
Field real(double value) { return Field{.type = Field::Type::real, .real = value}; }

OrderLineRow line(std::int64_t number, std::string reference, std::int64_t quantity) {
  return {.line_number = integer(number), .product_reference_id = text(std::move(reference)),
          .product_name = text("Organic Cotton T-Shirt M"), .quantity = integer(quantity)};
}

// A valid order with only the required columns set.
OrderRow minimal_order() {
  OrderRow row;
  row.reference_id = "DEMO-1001";
  row.updated_at = "2026-03-01T10:00:00.000Z";
  row.cancel_requested = integer(0);
  row.shipping_method = text("Standard");
  row.recipient_name = text("Grace Hopper");
  row.address1 = text("1 Navy Yard");
  row.city = text("Arlington");
  row.zip_code = text("22202");
  row.country = text("US");
  row.lines = {line(1, "TSHIRT-M", 2)};
  return row;
}

std::string json_of(const api::OrderCreateRequest& request) {
  auto encoded = api::encode(request, api::ApiVersion::v2026_07);
  return encoded ? encoded.value() : "encode failed: " + encoded.error().to_string();
}
std::string json_of(const api::ReturnCreateRequest& request) {
  auto encoded = api::encode(request, api::ApiVersion::v2026_07);
  return encoded ? encoded.value() : "encode failed: " + encoded.error().to_string();
}

TEST(OrderMapping, EveryColumnMapsToItsField) {
  OrderRow row = minimal_order();
  row.order_number = text("#1001");
  row.type = text("DTC");
  row.sales_channel = text("Shopify");
  row.origin_platform_program = text("Loyalty");
  row.gift_message = text("Happy birthday!");
  row.purchase_date = text("2026-02-28T09:30:00Z");
  row.location_id = integer(8);
  row.total_price = text("49.90");
  row.recipient_email = text("grace@example.com");
  row.recipient_phone = text("555-0101");
  row.address2 = text("Suite 5");
  row.state = text("VA");
  row.company_name = text("US Navy");
  row.tags = text(R"({"campaign": "spring-sale", "gift": "yes"})");
  row.lines.push_back({.line_number = integer(2), .product_id = integer(3002), .quantity = integer(1),
                       .external_line_id = integer(10012), .unit_of_measure = text("EA")});
  const auto mapped = map_order(row);
  ASSERT_TRUE(mapped.ok()) << mapped.reason();
  EXPECT_FALSE(cancel_requested(row));
  EXPECT_EQ(json_of(*mapped.request),
            R"({"reference_id":"DEMO-1001","shipping_method":"Standard","products":[)"
            R"({"reference_id":"TSHIRT-M","name":"Organic Cotton T-Shirt M","quantity":2},)"
            R"({"id":3002,"quantity":1,"external_line_id":10012,"quantity_unit_of_measure_code":"EA"}],)"
            R"("recipient":{"name":"Grace Hopper","email":"grace@example.com","phone_number":"555-0101",)"
            R"("address":{"address1":"1 Navy Yard","address2":"Suite 5","city":"Arlington","company_name":"US Navy",)"
            R"("country":"US","state":"VA","zip_code":"22202"}},"financials":{"total_price":49.90},)"
            R"("gift_message":"Happy birthday!","location_id":8,"order_number":"#1001",)"
            R"("origin_platform_program":"Loyalty","purchase_date":"2026-02-28T09:30:00.000+00:00",)"
            R"("sales_channel":"Shopify","tags":[{"name":"campaign","value":"spring-sale"},)"
            R"({"name":"gift","value":"yes"}],"type":"DTC"})");
}

TEST(OrderMapping, OnlyTheRequiredColumns) {
  const auto mapped = map_order(minimal_order());
  ASSERT_TRUE(mapped.ok()) << mapped.reason();
  EXPECT_EQ(json_of(*mapped.request),
            R"({"reference_id":"DEMO-1001","shipping_method":"Standard","products":[)"
            R"({"reference_id":"TSHIRT-M","name":"Organic Cotton T-Shirt M","quantity":2}],)"
            R"("recipient":{"name":"Grace Hopper","address":{"address1":"1 Navy Yard","city":"Arlington",)"
            R"("country":"US","zip_code":"22202"}}})");
}

TEST(OrderMapping, LenientWhereSQLiteTypesDiffer) {
  OrderRow row = minimal_order();
  row.zip_code = integer(60804);      // a zip code stored as a number
  row.total_price = real(12.3);       // a DECIMAL column (NUMERIC affinity) holds reals
  row.lines[0].quantity = text("3");  // digits as text
  row.order_number = text("");        // empty optional text is left out
  row.cancel_requested = text("1");
  const auto mapped = map_order(row);
  ASSERT_TRUE(mapped.ok()) << mapped.reason();
  EXPECT_EQ(mapped.request->recipient.address->zip_code, "60804");
  EXPECT_EQ(mapped.request->financials->total_price, api::Money{"12.3"});
  EXPECT_EQ(mapped.request->products[0].quantity, 3);
  EXPECT_EQ(mapped.request->order_number, std::nullopt);
  EXPECT_TRUE(cancel_requested(row));
  // Found by fuzz/row_mapping: map_order() accepted '01' as 1 while cancel_requested() saw no cancel.
  row.cancel_requested = text("01");
  EXPECT_TRUE(map_order(row).ok());
  EXPECT_TRUE(cancel_requested(row));
}

TEST(OrderMapping, MissingRecipientAndAddressFieldsAllReported) {
  OrderRow row = minimal_order();
  row.recipient_name = Field{};
  row.address1 = text("");
  row.city = Field{};
  row.zip_code = Field{};
  row.country = Field{};
  const auto mapped = map_order(row);
  EXPECT_FALSE(mapped.ok());
  EXPECT_THAT(mapped.problems, UnorderedElementsAre("fulfillsync_orders: recipient_name is required, found NULL",
                                                    "fulfillsync_orders: address1 is required, found empty text",
                                                    "fulfillsync_orders: city is required, found NULL",
                                                    "fulfillsync_orders: zip_code is required, found NULL",
                                                    "fulfillsync_orders: country is required, found NULL"));
}

// GCC 12 at -O3 (Release) takes the product_id these temporaries leave to its default initializer
// for maybe used uninitialized when it destroys them: a false positive of its flow analysis (GCC's
// -Wmaybe-uninitialized meta-bug 24639).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
TEST(OrderMapping, LineProblemsNameTheLine) {
  OrderRow row = minimal_order();
  row.lines = {line(1, "TSHIRT-M", 1), line(2, "TSHIRT-L", 0), line(3, "TOTE", -2)};
  row.lines.push_back({.line_number = integer(4), .quantity = integer(1)});
  row.lines.push_back({.line_number = integer(5), .product_reference_id = text("NEW-SKU"), .quantity = integer(1)});
  row.lines.push_back({.line_number = integer(6), .product_id = integer(3001), .quantity = text("two")});
  row.lines.push_back({.line_number = integer(7), .product_id = integer(3001), .quantity = real(1.5)});
  row.lines.push_back({.line_number = integer(8), .product_id = integer(0), .quantity = integer(1)});
  EXPECT_THAT(map_order(row).problems,
              ElementsAre("fulfillsync_order_lines line 2: quantity must be at least 1, found 0",
                          "fulfillsync_order_lines line 3: quantity must be at least 1, found -2",
                          "fulfillsync_order_lines line 4: product_id or product_reference_id is required, found "
                          "neither",
                          "fulfillsync_order_lines line 5: product_name is required when the line names its product "
                          "by product_reference_id alone",
                          "fulfillsync_order_lines line 6: quantity must be a whole number, found 'two'",
                          "fulfillsync_order_lines line 7: quantity must be a whole number, found 1.5",
                          "fulfillsync_order_lines line 8: product_id must be at least 1, found 0"));
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

TEST(OrderMapping, AnOrderWithoutLines) {
  OrderRow row = minimal_order();
  row.lines.clear();
  EXPECT_THAT(map_order(row).problems,
              ElementsAre("fulfillsync_order_lines: the order has no lines; at least one product line is required"));
}

TEST(OrderMapping, LengthLimits) {
  OrderRow row = minimal_order();
  row.reference_id = std::string(301, 'R');
  row.order_number = text(std::string(401, 'n'));
  row.gift_message = text(std::string(501, 'g'));
  row.sales_channel = text(std::string(101, 's'));
  row.origin_platform_program = text(std::string(101, 'o'));
  row.shipping_method = text("");
  EXPECT_THAT(map_order(row).problems,
              ElementsAre("fulfillsync_orders: reference_id must be 1 to 300 characters, found 301",
                          "fulfillsync_orders: order_number must be at most 400 characters, found 401",
                          "fulfillsync_orders: shipping_method is required, found empty text",
                          "fulfillsync_orders: sales_channel must be at most 100 characters, found 101",
                          "fulfillsync_orders: origin_platform_program must be at most 100 characters, found 101",
                          "fulfillsync_orders: gift_message must be at most 500 characters, found 501"));
  // At the limits, and counted in characters (UTF-16 units, as the provider counts), not bytes.
  row = minimal_order();
  row.reference_id = std::string(300, 'R');
  std::string gift;
  for (int i = 0; i < 500; ++i) gift += "\xC3\xA9";  // é: 2 bytes, 1 character
  row.gift_message = text(gift);
  EXPECT_TRUE(map_order(row).ok()) << map_order(row).reason();
}

TEST(OrderMapping, TypeMoneyDatesTagsAndFlags) {
  OrderRow row = minimal_order();
  row.type = text("Retail");
  row.total_price = text("12,30");
  row.purchase_date = text("yesterday");
  row.tags = text(R"(["not", "an object"])");
  row.cancel_requested = integer(2);
  row.location_id = integer(3'000'000'000);
  row.city = text("Gen\xE8ve");  // Latin-1, not UTF-8
  EXPECT_THAT(
      map_order(row).problems,
      ElementsAre("fulfillsync_orders: cancel_requested must be at most 1, found 2",
                  "fulfillsync_orders: type must be DTC, DropShip or B2B, found 'Retail'",
                  "fulfillsync_orders: purchase_date must be an ISO 8601 date-time such as 2026-03-01T12:34:56Z, found "
                  "'yesterday'",
                  "fulfillsync_orders: location_id must be at most 2147483647, found 3000000000",
                  "fulfillsync_orders: total_price must be a decimal number such as 12.30, found '12,30'",
                  "fulfillsync_orders: city is not valid UTF-8 text, found 'Gen\\xe8ve'",
                  R"(fulfillsync_orders: tags must be a JSON object of names to text values, such as {"gift": "yes"}, )"
                  R"(found '["not", "an object"]')"));
  row = minimal_order();
  row.total_price = text("-5");
  row.tags = text(R"({"gift": 1})");
  EXPECT_THAT(map_order(row).problems,
              ElementsAre("fulfillsync_orders: total_price must not be negative, found '-5'",
                          R"(fulfillsync_orders: tags must be a JSON object of names to text values, such as )"
                          R"({"gift": "yes"}; the tag 'gift' is not)"));
}

// Found by fuzz/row_mapping: such dates used to saturate to the clock's limits and overflow when encoded.
TEST(OrderMapping, DatesTheClockCannotHoldAreRefused) {
  for (const char* date : {"1013-02-28T09:30:00Z", "9999-12-31"}) {
    OrderRow row = minimal_order();
    row.purchase_date = text(date);
    EXPECT_THAT(map_order(row).problems,
                ElementsAre("fulfillsync_orders: purchase_date must be a date-time between the years 1678 and 2261, "
                            "found '" + std::string(date) + "'"));
  }
}

TEST(OrderMapping, BlobsAndRealsWhereTextIsExpected) {
  OrderRow row = minimal_order();
  row.recipient_name = Field{.type = Field::Type::blob, .text = "abc"};
  row.zip_code = real(1.5);
  EXPECT_THAT(map_order(row).problems,
              ElementsAre("fulfillsync_orders: zip_code must be text, found 1.5",
                          "fulfillsync_orders: recipient_name must be text, found a blob of 3 bytes"));
}

// A reference id is a key people and the provider's lookup find the order by.
TEST(OrderMapping, ReferenceIdsThatCannotBeFoundAgainAreRefused) {
  const auto problems_of = [](std::string reference) {
    OrderRow row = minimal_order();
    row.reference_id = std::move(reference);
    return map_order(row).problems;
  };
  EXPECT_THAT(problems_of("  "), ElementsAre("fulfillsync_orders: reference_id is blank, found '  '"));
  EXPECT_THAT(problems_of("\t\xC2\xA0"), ElementsAre("fulfillsync_orders: reference_id is blank, found '\\x09\xC2\xA0'"));
  EXPECT_THAT(problems_of(" A-1"),
              ElementsAre("fulfillsync_orders: reference_id must not begin or end with white space, found ' A-1'"));
  EXPECT_THAT(problems_of("A-1\n"),
              ElementsAre("fulfillsync_orders: reference_id must not begin or end with white space, found 'A-1\\x0a'"));
  EXPECT_THAT(problems_of("A-1\xE3\x80\x80"),  // an ideographic space
              ElementsAre("fulfillsync_orders: reference_id must not begin or end with white space, found "
                          "'A-1\xE3\x80\x80'"));
  // The lookup after an unclear answer (GET /order?ReferenceIds=a,b) cannot find it.
  EXPECT_THAT(problems_of("A,1"),
              ElementsAre("fulfillsync_orders: reference_id must not contain a comma (the API cannot look such an id "
                          "up, so it cannot be sent safely)"));
  EXPECT_THAT(problems_of(""), ElementsAre("fulfillsync_orders: reference_id is required, found empty text"));
  // White space inside is part of the key.
  EXPECT_THAT(problems_of("A 1\xC2\xA0" "B"), IsEmpty());
}

TEST(OrderMapping, QuantitiesAboveTheApisInt32AreRefused) {
  OrderRow row = minimal_order();
  row.lines = {line(1, "TSHIRT-M", 2'147'483'647), line(2, "TSHIRT-L", 2'147'483'648)};
  EXPECT_THAT(map_order(row).problems,
              ElementsAre("fulfillsync_order_lines line 2: quantity must be at most 2147483647, found 2147483648"));
  row.lines.pop_back();
  EXPECT_TRUE(map_order(row).ok());
}

// Bytes that are not UTF-8 and control characters reach reasons (logs, status, last_error) escaped.
TEST(OrderMapping, ReasonsShowUnprintableTextEscaped) {
  OrderRow row = minimal_order();
  row.reference_id = "A-\xFF";
  row.type = text("DTC\x1b[2J");
  row.total_price = text("1\xFE");
  row.tags = text("{\"a\\nb\": 1}");
  EXPECT_THAT(map_order(row).problems,
              ElementsAre("fulfillsync_orders: reference_id is not valid UTF-8 text, found 'A-\\xff'",
                          "fulfillsync_orders: type must be DTC, DropShip or B2B, found 'DTC\\x1b[2J'",
                          "fulfillsync_orders: total_price must be a decimal number such as 12.30, found '1\\xfe'",
                          R"(fulfillsync_orders: tags must be a JSON object of names to text values, such as )"
                          R"({"gift": "yes"}; the tag 'a\x0ab' is not)"));
  row = minimal_order();
  row.recipient_name = text("nnnnn\xFF" + std::string(65, 'n'));  // shortened in the reason
  EXPECT_THAT(map_order(row).problems,
              ElementsAre("fulfillsync_orders: recipient_name is not valid UTF-8 text, found 'nnnnn\\xff" +
                          std::string(34, 'n') + "...' (71 bytes)"));
}

ReturnRow minimal_return() {
  ReturnRow row;
  row.reference_id = "RMA-5001";
  row.fulfillment_center_id = integer(8);
  row.lines = {{.line_number = integer(1), .inventory_id = integer(7002), .quantity = integer(1),
                .requested_action = text("Restock")}};
  return row;
}

TEST(ReturnMapping, EveryColumnMapsToItsField) {
  ReturnRow row = minimal_return();
  row.fulfillment_center_name = text("Cicero (IL)");
  row.original_shipment_id = integer(555);
  row.tracking_number = text("1Z999AA10123456784");
  row.tags = text(R"j({"reason": "wrong size"})j");
  row.lines.push_back({.line_number = integer(2), .inventory_id = integer(7005), .quantity = integer(2),
                       .requested_action = text("Quarantine")});
  const auto mapped = map_return(row);
  ASSERT_TRUE(mapped.ok()) << mapped.reason();
  EXPECT_EQ(json_of(*mapped.request),
            R"j({"reference_id":"RMA-5001","fulfillment_center":{"id":8,"name":"Cicero (IL)"},"inventory":[)j"
            R"j({"id":7002,"quantity":1,"requested_action":"Restock"},)j"
            R"j({"id":7005,"quantity":2,"requested_action":"Quarantine"}],"original_shipment_id":555,)j"
            R"j("tags":[{"name":"reason","value":"wrong size"}],"tracking_number":"1Z999AA10123456784"})j");
  EXPECT_THAT(map_return(minimal_return()).problems, IsEmpty());
}

// A return line of one to restock, given by `sku` (and `inventory_id` when not null). Built field by
// field: GCC 12 at -O3 warns of an uninitialized Field in a designated list that leaves one out.
ReturnLineRow restock_line(std::int64_t number, Field inventory_id, const char* sku) {
  ReturnLineRow line;
  line.line_number = integer(number);
  line.inventory_id = std::move(inventory_id);
  line.quantity = integer(1);
  line.requested_action = text("Restock");
  line.sku = text(sku);
  return line;
}

TEST(ReturnMapping, ALineBySkuGoesAsTheMapsInventoryIdOrIsRejected) {
  const SkuMap skus = {{"TEE-M", {.product_id = 5, .inventory_id = 7009, .only_variant = false}},
                       {"GIFT-CARD", {.product_id = 6, .inventory_id = std::nullopt, .only_variant = true}}};
  ReturnRow row = minimal_return();
  row.lines.clear();
  row.lines.push_back(restock_line(1, Field{}, "TEE-M"));
  row.lines.push_back(restock_line(2, integer(7002), "IGNORED"));
  const auto mapped = map_return(row, skus);
  ASSERT_TRUE(mapped.ok()) << mapped.reason();
  EXPECT_EQ(mapped.request->inventory.at(0).id, 7009);
  EXPECT_EQ(mapped.request->inventory.at(1).id, 7002);  // an inventory id given wins
  row.lines.clear();
  row.lines.push_back(restock_line(1, Field{}, "NOPE"));
  row.lines.push_back(restock_line(2, Field{}, "GIFT-CARD"));
  EXPECT_THAT(map_return(row, skus).problems,
              ElementsAre("fulfillsync_return_lines line 1: sku is not in the SKU map: the provider's product list "
                          "held no variant with it at pull_stock's last pass, found 'NOPE'",
                          "fulfillsync_return_lines line 2: sku has no inventory id in the SKU map, found 'GIFT-CARD'"));
  EXPECT_THAT(skus_named(row), ElementsAre("NOPE", "GIFT-CARD"));
}

TEST(OrderMapping, AReferenceTheMapHoldsAsItsProductsOnlyVariantGoesByProductId) {
  const SkuMap skus = {{"TSHIRT-M", {.product_id = 1, .inventory_id = 7002, .only_variant = false}},
                       {"TOTE", {.product_id = 4, .inventory_id = 7005, .only_variant = true}}};
  OrderRow row = minimal_order();
  row.lines = {line(1, "TSHIRT-M", 2), line(2, "TOTE", 1)};
  const auto mapped = map_order(row, skus);
  ASSERT_TRUE(mapped.ok()) << mapped.reason();
  // One of several variants stays a reference: the provider would take the product's first.
  EXPECT_FALSE(mapped.request->products.at(0).id.has_value());
  EXPECT_EQ(mapped.request->products.at(0).reference_id, "TSHIRT-M");
  EXPECT_EQ(mapped.request->products.at(1).id, 4);
  EXPECT_EQ(mapped.request->products.at(1).reference_id, "TOTE");
  EXPECT_FALSE(mapped.request->products.at(1).name.has_value());
  // Without the map, the row maps as before.
  EXPECT_FALSE(map_order(row).request->products.at(1).id.has_value());
}

TEST(ReturnMapping, EveryProblemAtOnce) {
  ReturnRow row = minimal_return();
  row.reference_id = std::string(51, 'R');
  row.fulfillment_center_id = Field{};
  row.tracking_number = text(std::string(501, 't'));
  row.lines = {{.line_number = integer(1), .inventory_id = Field{}, .quantity = integer(0)}};
  EXPECT_THAT(map_return(row).problems,
              ElementsAre("fulfillsync_returns: reference_id must be 1 to 50 characters, found 51",
                          "fulfillsync_returns: fulfillment_center_id is required, found NULL",
                          "fulfillsync_returns: tracking_number must be at most 500 characters, found 501",
                          "fulfillsync_return_lines line 1: inventory_id is required, found NULL",
                          "fulfillsync_return_lines line 1: quantity must be at least 1, found 0",
                          "fulfillsync_return_lines line 1: requested_action is required, found NULL"));
  row = minimal_return();
  row.lines.clear();
  EXPECT_THAT(map_return(row).problems,
              ElementsAre("fulfillsync_return_lines: the return has no lines; at least one inventory line is "
                          "required"));
  EXPECT_EQ(map_return(row).reason(), map_return(row).problems[0]);
}

TEST(ReturnMapping, KeysAndQuantitiesTheApiCannotTake) {
  ReturnRow row = minimal_return();
  row.reference_id = "RMA-1 ";
  row.lines[0].quantity = integer(4'000'000'000);
  EXPECT_THAT(map_return(row).problems,
              ElementsAre("fulfillsync_returns: reference_id must not begin or end with white space, found 'RMA-1 '",
                          "fulfillsync_return_lines line 1: quantity must be at most 2147483647, found 4000000000"));
  row = minimal_return();
  row.reference_id = "RMA,1";
  EXPECT_THAT(map_return(row).problems, ElementsAre(::testing::HasSubstr("reference_id must not contain a comma")));
  row.reference_id = "\xC0";
  EXPECT_THAT(map_return(row).problems,
              ElementsAre("fulfillsync_returns: reference_id is not valid UTF-8 text, found '\\xc0'"));
}

// Whatever a row holds, mapping returns a request or reasons, never throws, and what it accepts encodes.
TEST(Mapping, AnyValuesInAnyColumnAreHandled) {
  std::mt19937_64 random(20261122);
  const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(random() % n); };
  const std::vector<std::string> texts = {
      "", "x", "DTC", "12.30", "-1", "1e5", "2026-03-01T10:00:00Z", "{\"a\": \"b\"}", "{\"a\": [1]}", "[1, 2]", "{",
      "\xC3\x28", "\xF0\x9F\x98\x80", std::string(600, 'z'), std::string(1, '\0'), "7", " 7", "0x10"};
  const auto any_field = [&]() -> Field {
    switch (pick(5)) {
      case 0: return Field{};
      case 1: {
        const std::int64_t values[] = {0, 1, -1, 2, 8, std::numeric_limits<std::int64_t>::min(),
                                       std::numeric_limits<std::int64_t>::max(), 2147483648};
        return Field::of(values[pick(std::size(values))]);
      }
      case 2: {
        const double values[] = {1.5, -0.0, 2.0, 1e300, std::nan(""), std::numeric_limits<double>::infinity()};
        return Field{.type = Field::Type::real, .real = values[pick(std::size(values))]};
      }
      case 3: return Field::of(texts[pick(texts.size())]);
      default: return Field{.type = Field::Type::blob, .text = texts[pick(texts.size())]};
    }
  };
  int accepted = 0;
  for (int round = 0; round < 3000; ++round) {
    OrderRow order = minimal_order();
    ReturnRow ret = minimal_return();
    // Change a few columns of a valid row, so that some rows stay valid.
    for (int i = 0, n = static_cast<int>(pick(3)); i < n; ++i) {
      order.*order_columns()[pick(order_columns().size())].member = any_field();
      order.lines[0].*order_line_columns()[pick(order_line_columns().size())].member = any_field();
      ret.*return_columns()[pick(return_columns().size())].member = any_field();
      ret.lines[0].*return_line_columns()[pick(return_line_columns().size())].member = any_field();
    }
    if (pick(10) == 0) order.lines.clear();
    const auto mapped_order = map_order(order);
    const auto mapped_return = map_return(ret);
    EXPECT_EQ(mapped_order.ok(), mapped_order.problems.empty());
    EXPECT_EQ(mapped_return.ok(), mapped_return.problems.empty());
    // Reasons are fit for a log line and a TEXT column, whatever the row held.
    EXPECT_EQ(text::printable(mapped_order.reason()), mapped_order.reason());
    EXPECT_EQ(text::printable(mapped_return.reason()), mapped_return.reason());
    if (mapped_order.ok()) {
      ++accepted;
      EXPECT_EQ(json_of(*mapped_order.request).rfind("encode failed", 0), std::string::npos);
    }
    if (mapped_return.ok()) {
      EXPECT_EQ(json_of(*mapped_return.request).rfind("encode failed", 0), std::string::npos);
    }
  }
  EXPECT_GT(accepted, 100);
}

}  // namespace
}  // namespace fulfillsync::merchant
