// Bad remote data: every failure is a value whose path names the field, never a crash or a throw.
#include <gtest/gtest.h>

#include "fulfillsync/api/models/decode.hpp"
#include "recorded_bodies.hpp"

namespace fulfillsync::api {
namespace {

constexpr auto kVersion = ApiVersion::v2026_01;

// A minimal valid order page: two orders, the second with two shipments.
std::string page_with(std::string_view second_shipment_member) {
  return R"([{"id":1,"reference_id":"a","status":"Processing","shipments":[]},
             {"id":2,"reference_id":"b","status":"Processing","shipments":[
               {"id":10,"status":"None","last_update_at":"2026-03-01T00:00:00Z"},
               {"id":11,"status":"None","last_update_at":"2026-03-01T00:00:00Z",)" +
         std::string(second_shipment_member) + "}]}]";
}

JsonError page_error(std::string_view body) {
  const auto page = decode<OrderPage>(body, kVersion);
  EXPECT_FALSE(page) << "decoded unexpectedly";
  return page ? JsonError{} : page.error();
}

TEST(DecodeErrors, WrongTypesNameThePath) {
  const JsonError date = page_error(page_with(R"("last_tracking_update_at":"yesterday")"));
  EXPECT_EQ(date.to_string(), R"([1].shipments[1].last_tracking_update_at: expected a date-time, found "yesterday")");

  EXPECT_EQ(page_error(page_with(R"("tracking":{"tracking_number":12345})")).to_string(),
            "[1].shipments[1].tracking.tracking_number: expected a string, found 12345");
  EXPECT_EQ(page_error(page_with(R"("order_id":"12")")).to_string(),
            R"([1].shipments[1].order_id: expected an integer, found "12")");
  EXPECT_EQ(page_error(page_with(R"("invoice_amount":"twelve")")).to_string(),
            R"([1].shipments[1].invoice_amount: expected a decimal amount, found "twelve")");
  EXPECT_EQ(page_error(page_with(R"("products":{})")).to_string(),
            "[1].shipments[1].products: expected an array, found an object");
  EXPECT_EQ(page_error(page_with(R"("is_tracking_uploaded":"yes")")).to_string(),
            R"([1].shipments[1].is_tracking_uploaded: expected a boolean, found "yes")");
  EXPECT_EQ(page_error(page_with(R"("parent_cartons":[{"cartons":[{"id":1},{"id":true}]}])")).to_string(),
            "[1].shipments[1].parent_cartons[0].cartons[1].id: expected an integer, found true");
}

TEST(DecodeErrors, DatesBeyondTheClockRange) {
  EXPECT_EQ(page_error(page_with(R"("delivery_date":"9999-12-31T00:00:00Z")")).to_string(),
            R"([1].shipments[1].delivery_date: expected a date-time, found "9999-12-31T00:00:00Z" (out of range))");
  EXPECT_EQ(page_error(page_with(R"("delivery_date":"2026-02-30T00:00:00Z")")).to_string(),
            R"([1].shipments[1].delivery_date: expected a date-time, found "2026-02-30T00:00:00Z")");
}

TEST(DecodeErrors, RequiredFields) {
  EXPECT_EQ(page_error(R"([{"id":1,"reference_id":"a"}])").to_string(), "[0].status: missing required field");
  EXPECT_EQ(page_error(R"([{"id":1,"reference_id":"a","status":null}])").to_string(),
            "[0].status: expected a string, found null");
  EXPECT_EQ(
      page_error(R"([{"id":1,"reference_id":"a","status":"None","shipments":[{"id":5,"status":"None"}]}])").to_string(),
      "[0].shipments[0].last_update_at: missing required field");
  // Present but null is allowed for an order's reference (orders other channels created).
  EXPECT_TRUE(decode<OrderPage>(R"([{"id":1,"reference_id":null,"status":"None"}])", kVersion));
  EXPECT_EQ(page_error(R"([{"reference_id":"a","status":"None"}])").to_string(), "[0].id: missing required field");
}

TEST(DecodeErrors, UnknownFieldsAndNullsAreTolerated) {
  const auto page = decode<OrderPage>(
      R"([{"future":{"deep":[[{}],null,1e999]},"id":1,"reference_id":"a","status":"Processing","products":null,
          "tags":null,"recipient":null,"shipments":[{"id":3,"status":"Shipped\u00e9","last_update_at":"2026-03-01T00:00:00Z",
          "tracking":{"tracking_number":null,"new_thing":"x"},"store_order_id":12345}]}])",
      kVersion);
  ASSERT_TRUE(page) << page.error().to_string();
  EXPECT_EQ(page->at(0).shipments.at(0).status, "Shipped\u00e9");
  EXPECT_EQ(page->at(0).shipments.at(0).store_order_id, "12345");
  EXPECT_FALSE(page->at(0).shipments.at(0).tracking->tracking_number.has_value());
}

TEST(DecodeErrors, MalformedJson) {
  EXPECT_EQ(page_error("").path, "");
  EXPECT_NE(page_error("").message.find("malformed JSON"), std::string::npos);
  EXPECT_NE(page_error("[{\"id\":1,}]").message.find("malformed JSON"), std::string::npos);
  EXPECT_EQ(page_error("<html>502</html>").path, "");
  EXPECT_EQ(page_error("42").to_string(), "expected an object or an array, found 42");
  EXPECT_EQ(page_error("{}").to_string(), "expected an array, found an object");
  EXPECT_NE(page_error(R"([{"id":1,"reference_id":"a","status":"x"}] [])").message.find("after the top-level value"),
            std::string::npos);
  EXPECT_NE(page_error("[\"\xff\xfe\"]").message.find("malformed JSON"), std::string::npos);  // not UTF-8
}

TEST(DecodeErrors, TruncatedBodiesAtEveryLength) {
  const std::string body = testing_bodies::recorded_body(kVersion, "order_page.json");
  // Every prefix must fail cleanly (the last whitespace-only suffix may be dropped harmlessly).
  const std::size_t complete = body.find_last_not_of(" \n") + 1;
  for (std::size_t length = 0; length < complete; length += (length < 400 ? 1 : 37)) {
    const auto page = decode<OrderPage>(std::string_view(body).substr(0, length), kVersion);
    EXPECT_FALSE(page) << "prefix of " << length << " bytes decoded";
  }
  EXPECT_TRUE(decode<OrderPage>(std::string_view(body).substr(0, complete), kVersion));
}

TEST(DecodeErrors, HugeNumbers) {
  EXPECT_EQ(page_error(R"([{"id":123456789012345678901234567890,"reference_id":"a","status":"x"}])").to_string(),
            "[0].id: expected an integer, found 123456789012345678901234567890 (out of range)");
  EXPECT_EQ(page_error(R"([{"id":1e3,"reference_id":"a","status":"x"}])").to_string(),
            "[0].id: expected an integer, found 1e3");
  // 32-bit fields refuse what does not fit.
  const auto wro =
      decode<ReturnOrder>(R"({"id":1,"reference_id":"r","status":"x","original_shipment_id":99999999999})", kVersion);
  ASSERT_TRUE(wro);  // stored as int64: the provider's int32 is a promise, not a reason to fail
  // Money keeps any valid number text exactly, however large.
  const auto order = decode<Order>(
      R"({"id":1,"reference_id":"a","status":"x","financials":{"total_price":123456789012345678901234567890.12}})",
      kVersion);
  ASSERT_TRUE(order) << order.error().to_string();
  EXPECT_EQ(order->financials->total_price->text, "123456789012345678901234567890.12");
  const auto measurements = decode<Order>(
      R"({"id":1,"reference_id":"a","status":"x","shipments":[{"id":1,"status":"x","last_update_at":"2026-01-01",
          "measurements":{"depth_in":1e400}}]})",
      kVersion);
  ASSERT_FALSE(measurements);
  EXPECT_EQ(measurements.error().path, "shipments[0].measurements.depth_in");
}

TEST(DecodeErrors, DeepNesting) {
  // Unknown members are skipped by counting brackets, without recursion: any depth is harmless.
  const std::string deep =
      R"([{"id":1,"reference_id":"a","status":"x","future":)" + std::string(5000, '[') + std::string(5000, ']') + "}]";
  EXPECT_TRUE(decode<OrderPage>(deep, kVersion));
  // Where the decoder recurses (modelled members), the shape is fixed, so depth is bounded.
  const std::string nested = R"([{"id":1,"reference_id":"a","status":"x","products":[[[[]]]]}])";
  EXPECT_EQ(page_error(nested).to_string(), "[0].products[0]: expected an object, found an array");
}

TEST(DecodeErrors, EscapedKeysAreUnderstood) {
  const auto order = decode<Order>(R"({"\u0069d":7,"reference_id":"a\"b","status":"x"})", kVersion);
  ASSERT_TRUE(order) << order.error().to_string();
  EXPECT_EQ(order->id, 7);
  EXPECT_EQ(order->reference_id, "a\"b");
}

}  // namespace
}  // namespace fulfillsync::api
