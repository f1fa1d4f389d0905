// Request bodies: round-trips through the decoder's parser, escaping of hostile text, omitted
// optionals, exact money and the version rules.
#include "fulfillsync/api/models/encode.hpp"

#include <gtest/gtest.h>
#include <simdjson.h>

namespace fulfillsync::api {
namespace {

using namespace std::string_literals;

constexpr auto kVersion = ApiVersion::v2026_01;

DateTime date(std::string_view iso) { return DateTime{*timestamps::parse_iso8601(iso)}; }

OrderCreateRequest full_order() {
  OrderCreateRequest order;
  order.reference_id = "shop-1001";
  order.shipping_method = "Standard";
  order.products = {
      {.id = 555001, .quantity = 2, .external_line_id = 1},
      {.reference_id = "SKU-NEW", .name = "New \"thing\"", .quantity = 1, .quantity_unit_of_measure_code = "EA"}};
  order.recipient = {
      .name = "Zoë Müller",
      .email = "zoe@example.com",
      .phone_number = "+1 555 0100",
      .address =
          Address{.address1 = "1 Main St", .city = "Springfield", .country = "US", .state = "IL", .zip_code = "62701"}};
  order.financials = Financials{Money{"29.90"}};
  order.gift_message = "Happy\nbirthday\t🎂";
  order.location_id = 12;
  order.order_number = "#1001";
  order.purchase_date = date("2026-02-28T23:00:00-05:00");
  order.retailer_program_data =
      RetailerProgramData{.addresses = {{.address = {.address1 = "42 Mall Rd"}, .type = "MarkFor"}},
                          .purchase_order_number = "PO-9",
                          .ship_by_date = date("2026-03-08")};
  order.sales_channel = "Shopify";
  order.shipping_terms = ShippingTerms{"Parcel", "Prepaid"};
  order.tags = std::vector<Tag>{{"source", "web"}};
  order.type = "DTC";
  return order;
}

simdjson::dom::element parse(simdjson::dom::parser& parser, const std::string& json) {
  return parser.parse(json).value();
}

TEST(Encode, OrderCreateRequestRoundTrip) {
  const auto body = encode(full_order(), kVersion);
  ASSERT_TRUE(body) << body.error().to_string();
  simdjson::dom::parser parser;
  auto root = parse(parser, *body);
  EXPECT_EQ(std::string_view(root["reference_id"]), "shop-1001");
  EXPECT_EQ(int64_t(root["products"].at(0)["id"]), 555001);
  EXPECT_EQ(std::string_view(root["products"].at(1)["name"]), "New \"thing\"");
  EXPECT_EQ(std::string_view(root["recipient"]["name"]), "Zoë Müller");
  EXPECT_EQ(std::string_view(root["gift_message"]), "Happy\nbirthday\t🎂");
  EXPECT_EQ(std::string_view(root["purchase_date"]), "2026-03-01T04:00:00.000+00:00");
  EXPECT_EQ(std::string_view(root["retailer_program_data"]["shipByDate"]), "2026-03-08T00:00:00.000+00:00");
  EXPECT_EQ(std::string_view(root["retailer_program_data"]["addresses"].at(0)["type"]), "MarkFor");
  EXPECT_EQ(std::string_view(root["tags"].at(0)["value"]), "web");
  // Money is written from its text, trailing zero included.
  EXPECT_NE(body->find(R"("financials":{"total_price":29.90})"), std::string::npos) << *body;
}

TEST(Encode, UnsetOptionalsAreOmitted) {
  OrderCreateRequest order;
  order.reference_id = "r";
  order.shipping_method = "Standard";
  order.products = {{.id = 1, .quantity = 1}};
  const auto body = encode(order, kVersion);
  ASSERT_TRUE(body) << body.error().to_string();
  EXPECT_EQ(*body,
            R"({"reference_id":"r","shipping_method":"Standard","products":[{"id":1,"quantity":1}],"recipient":{}})");
}

TEST(Encode, HostileTextIsEscaped) {
  OrderCreateRequest order = full_order();
  const std::string hostile = "quote\" backslash\\ nul"s + '\0' + " bell\x07 del\x7f \u2028 </script> \xF0\x9F\x98\x80";
  order.recipient.name = hostile;
  order.gift_message = std::string("\x01\x1f");
  const auto body = encode(order, kVersion);
  ASSERT_TRUE(body) << body.error().to_string();
  EXPECT_NE(body->find(R"(\u0000)"), std::string::npos);
  EXPECT_NE(body->find(R"("gift_message":"\u0001\u001f")"), std::string::npos);
  simdjson::dom::parser parser;
  auto root = parse(parser, *body);
  EXPECT_EQ(std::string_view(root["recipient"]["name"]), hostile);
}

TEST(Encode, InvalidUtf8IsRefusedWithItsPath) {
  OrderCreateRequest order = full_order();
  order.recipient.address->city = "Caf\xe9";  // Latin-1, not UTF-8
  const auto body = encode(order, kVersion);
  ASSERT_FALSE(body);
  EXPECT_EQ(body.error().to_string(), "recipient.address.city: not valid UTF-8");

  order = full_order();
  order.products[1].name = "\xc3";  // truncated sequence
  EXPECT_EQ(encode(order, kVersion).error().to_string(), "products[1].name: not valid UTF-8");
}

TEST(Encode, SpecLimitsAndMoneyText) {
  OrderCreateRequest order = full_order();
  order.reference_id = "";
  EXPECT_EQ(encode(order, kVersion).error().to_string(), "reference_id: length 0 outside 1 to 300");
  order = full_order();
  order.gift_message = std::string(501, 'x');
  EXPECT_EQ(encode(order, kVersion).error().to_string(), "gift_message: length 501 outside 0 to 500");
  order.gift_message = std::string(250, 'x') + std::string(125, '\xF0');
  EXPECT_FALSE(encode(order, kVersion));  // not UTF-8
  std::string emoji;
  for (int i = 0; i < 125; ++i) emoji += "\xF0\x9F\x8E\x82";  // 2 UTF-16 units each
  order.gift_message = std::string(250, 'x') + emoji;
  EXPECT_TRUE(encode(order, kVersion));
  order.gift_message = std::string(251, 'x') + emoji;
  EXPECT_EQ(encode(order, kVersion).error().to_string(), "gift_message: length 501 outside 0 to 500");
  order = full_order();
  order.products.clear();
  EXPECT_EQ(encode(order, kVersion).error().to_string(), "products: at least one item is required");
  order = full_order();
  order.financials = Financials{Money{"12,30"}};
  EXPECT_EQ(encode(order, kVersion).error().to_string(),
            R"(financials.total_price: "12,30" is not a decimal number of at most 18 digits and 12 decimals)");
}

ReturnCreateRequest a_return() {
  ReturnCreateRequest request;
  request.reference_id = "RMA-1";
  request.fulfillment_center = {12, "Twin Lakes (WI)"};
  request.inventory = {{.id = 9001, .quantity = 1, .requested_action = "Restock"}};
  request.original_shipment_id = 700800900;
  request.tracking_number = "1Z999";
  return request;
}

TEST(Encode, ReturnCreateRequest) {
  const auto body = encode(a_return(), kVersion);
  ASSERT_TRUE(body) << body.error().to_string();
  EXPECT_EQ(*body, R"j({"reference_id":"RMA-1","fulfillment_center":{"id":12,"name":"Twin Lakes (WI)"},)j"
                   R"j("inventory":[{"id":9001,"quantity":1,"requested_action":"Restock"}],)j"
                   R"j("original_shipment_id":700800900,"tracking_number":"1Z999"})j");
  ReturnCreateRequest too_long = a_return();
  too_long.reference_id = std::string(51, 'r');
  EXPECT_EQ(encode(too_long, kVersion).error().to_string(), "reference_id: length 51 outside 1 to 50");
}

TEST(Encode, ReturnUpdateLotFieldsFollowTheVersion) {
  ReturnUpdateRequest update{a_return()};
  update.inventory[0].lot_number = "LOT-2026-A";
  update.inventory[0].lot_date = date("2026-01-15");
  const auto current = encode(update, ApiVersion::v2026_01);
  ASSERT_TRUE(current) << current.error().to_string();
  EXPECT_NE(current->find(R"("lot_number":"LOT-2026-A","lot_date":"2026-01-15T00:00:00.000+00:00")"),
            std::string::npos);
  EXPECT_EQ(encode(update, ApiVersion::v2025_07).error().to_string(),
            "inventory[0]: lot_number and lot_date are accepted only by PUT /return/{id} from 2026-01");
  EXPECT_FALSE(encode(static_cast<const ReturnCreateRequest&>(update), ApiVersion::v2026_07));
}

TEST(Encode, SmallRequests) {
  EXPECT_EQ(*encode(TrackingUploadRequest{true, {700800900, 700800901}}, kVersion),
            R"({"is_tracking_uploaded":true,"shipment_ids":[700800900,700800901]})");
  EXPECT_FALSE(encode(TrackingUploadRequest{true, {}}, kVersion));
  EXPECT_EQ(*encode(SetExternalSyncRequest{{8001}, true}, kVersion), R"({"ids":[8001],"is_external_sync":true})");

  EstimateRequest estimate;
  estimate.address = {.city = "Springfield", .country = "US", .zip_code = "62701"};
  estimate.products = {{.id = 555001, .quantity = 2}, {.reference_id = "SKU-BLUE", .quantity = 1}};
  EXPECT_EQ(*encode(estimate, kVersion),
            R"({"address":{"city":"Springfield","country":"US","zip_code":"62701"},)"
            R"("products":[{"id":555001,"quantity":2},{"reference_id":"SKU-BLUE","quantity":1}]})");
  estimate.shipping_methods = std::vector<std::string>{"Standard"};
  EXPECT_NE(encode(estimate, kVersion)->find(R"("shipping_methods":["Standard"])"), std::string::npos);
  estimate.products[0].reference_id = "both";
  EXPECT_EQ(encode(estimate, kVersion).error().to_string(),
            "products[0]: exactly one of id and reference_id is required");
}

TEST(Encode, DateTimesKeepMicroseconds) {
  EXPECT_EQ(date("2026-03-01T12:34:56.789123Z").to_iso8601(), "2026-03-01T12:34:56.789123+00:00");
  EXPECT_EQ(date("2026-03-01T12:34:56Z").to_iso8601(), "2026-03-01T12:34:56.000+00:00");
  // Found by fuzz/row_mapping: a date the clock cannot hold saturates, and used to overflow here.
  EXPECT_EQ(date("1013-02-28T09:30:00Z").to_iso8601(), "1677-09-21T00:12:43.145224+00:00");
}

}  // namespace
}  // namespace fulfillsync::api

namespace fulfillsync::api {
namespace {

TEST(MoneyText, SentAmountsStayWithinWhatEveryParserReadsExactly) {
  for (const char* good : {"0", "12.30", "-4.5", "999999999999999999", "0.000000000001", "1.5E2", "2e-3"}) {
    EXPECT_TRUE(Money::is_sendable_text(good)) << good;
  }
  // Found by the fuzzer: 106 digits encoded to JSON that parsers refuse as a number.
  const std::string many_digits(106, '3');
  EXPECT_TRUE(Money::is_valid_text(many_digits));  // read exactly when the provider sends it
  EXPECT_FALSE(Money::is_sendable_text(many_digits));
  for (const char* bad : {"", "01", "1.", ".5", "+1", "1e", "12,30", "NaN", "1000000000000000000",
                          "0.0000000000001", "1e100"}) {
    EXPECT_FALSE(Money::is_sendable_text(bad)) << bad;
  }
}

}  // namespace
}  // namespace fulfillsync::api
