// POST/GET /order, its validation, the duplicate rule, filters and paging, cancel and the batch
// tracking-upload flag.
#include <gtest/gtest.h>

#include "sandbox_fixture.hpp"

namespace fulfillsync::sandbox_test {
namespace {

std::vector<std::int64_t> ids_of(const std::string& body) {
  std::vector<std::int64_t> ids;
  simdjson::dom::array orders;
  EXPECT_EQ(parse(body).get_array().get(orders), simdjson::SUCCESS) << body;
  for (auto order : orders) ids.push_back(as_int(order["id"]));
  return ids;
}

bool has_field(const HttpResponse& response, std::string_view field) {
  for (const auto& name : error_fields(response)) {
    if (name == field) return true;
  }
  return false;
}

TEST(SandboxOrders, CreateAnswers201WithTheOrderAndAnAllocatedShipment) {
  Sandbox sandbox;
  const auto response = sandbox.create("/2026-01/order", order_body("ORD-1", R"(,"order_number":"#1001","tags":[{"name":"k","value":"v"}])"));
  ASSERT_EQ(response.status, 201) << response.body;
  const auto order = parse(response.body);
  EXPECT_GT(as_int(order["id"]), 0);
  EXPECT_EQ(as_string(order["reference_id"]), "ORD-1");
  EXPECT_EQ(as_string(order["order_number"]), "#1001");
  EXPECT_EQ(as_string(order["status"]), "Processing");
  EXPECT_EQ(as_int(order["channel"]["id"]), kWriteChannel);
  EXPECT_EQ(as_string(order["recipient"]["address"]["city"]), "Chicago");
  EXPECT_EQ(as_string(order["tags"].at(0)["value"]), "v");
  EXPECT_EQ(as_int(order["products"].at(0)["quantity"]), 2);
  // Money keeps the decimal text it was sent with.
  EXPECT_NE(response.body.find(R"("total_price":12.30)"), std::string::npos) << response.body;
  const auto shipment = order["shipments"].at(0);
  EXPECT_GT(as_int(shipment["id"]), 0);
  EXPECT_EQ(as_int(shipment["order_id"]), as_int(order["id"]));
  EXPECT_EQ(as_string(shipment["status"]), "None");
  EXPECT_EQ(as_int(shipment["location"]["id"]), 8);  // the center in the recipient's state (IL)
  EXPECT_FALSE(as_bool(shipment["is_tracking_uploaded"]));
  EXPECT_EQ(as_string(shipment["recipient"]["full_name"]), "Ada Lovelace");
  EXPECT_EQ(shipment["tracking"].error(), simdjson::NO_SUCH_FIELD);  // an object once shipped, never null
  EXPECT_EQ(as_string(shipment["last_update_at"]).size(), std::string("2026-03-01T12:34:56.789+00:00").size());
}

TEST(SandboxOrders, LocationIdChoosesTheFulfillmentCenter) {
  Sandbox sandbox;
  const auto order = sandbox.create_order("ORD-LOC", R"(,"location_id":17)");
  EXPECT_EQ(as_int(order["shipments"].at(0)["location"]["id"]), 17);
  const auto bad = sandbox.create("/2026-01/order", order_body("ORD-LOC2", R"(,"location_id":999)"));
  EXPECT_EQ(bad.status, 400);
  EXPECT_TRUE(has_field(bad, "location_id"));
}

TEST(SandboxOrders, DuplicateReferenceIdAnswersTheProductionBody) {
  Sandbox sandbox;
  sandbox.create_order("DUP-1");
  const auto duplicate = sandbox.create("/2026-01/order", order_body("DUP-1"));
  EXPECT_EQ(duplicate.status, 422);
  EXPECT_EQ(duplicate.body, R"({"":["Cannot insert order with existing ReferenceId"]})");
  const auto found = sandbox.get("/2026-01/order?ReferenceIds=DUP-1");
  EXPECT_EQ(ids_of(found.body).size(), 1u);
}

struct ValidationCase {
  std::string name;
  std::string body;
  std::string field;
};

TEST(SandboxOrders, EachFieldRuleIsEnforcedAndNamed) {
  Sandbox sandbox;
  const std::string recipient =
      R"("recipient":{"name":"A","address":{"address1":"1 St","city":"C","country":"US"}})";
  const std::string product = R"("products":[{"reference_id":"SKU-1","name":"W","quantity":1}])";
  const auto body = [&](std::string fields) {
    return "{" + fields + "}";
  };
  const std::vector<ValidationCase> cases = {
      {"missing reference_id", body(R"("shipping_method":"S",)" + recipient + "," + product), "reference_id"},
      {"empty reference_id", body(R"("reference_id":"","shipping_method":"S",)" + recipient + "," + product), "reference_id"},
      {"long reference_id", body(R"("reference_id":")" + std::string(301, 'r') + R"(","shipping_method":"S",)" + recipient + "," + product), "reference_id"},
      {"long order_number", body(R"("reference_id":"x","order_number":")" + std::string(401, 'n') + R"(","shipping_method":"S",)" + recipient + "," + product), "order_number"},
      {"long gift_message", body(R"("reference_id":"x","gift_message":")" + std::string(501, 'g') + R"(","shipping_method":"S",)" + recipient + "," + product), "gift_message"},
      {"long origin_platform_program", body(R"("reference_id":"x","origin_platform_program":")" + std::string(101, 'o') + R"(","shipping_method":"S",)" + recipient + "," + product), "origin_platform_program"},
      {"long sales_channel", body(R"("reference_id":"x","sales_channel":")" + std::string(101, 's') + R"(","shipping_method":"S",)" + recipient + "," + product), "sales_channel"},
      {"empty shipping_method", body(R"("reference_id":"x","shipping_method":"",)" + recipient + "," + product), "shipping_method"},
      {"missing recipient", body(R"("reference_id":"x","shipping_method":"S",)" + product), "recipient"},
      {"missing products", body(R"("reference_id":"x","shipping_method":"S",)" + recipient), "products"},
      {"no products", body(R"("reference_id":"x","shipping_method":"S",)" + recipient + R"(,"products":[])"), "products"},
      {"bad type", body(R"("reference_id":"x","type":"Retail","shipping_method":"S",)" + recipient + "," + product), "type"},
      {"quantity as string", body(R"("reference_id":"x","shipping_method":"S",)" + recipient + R"(,"products":[{"reference_id":"SKU-1","name":"W","quantity":"two"}])"), "products[0].quantity"},
      {"unknown reference without name", body(R"("reference_id":"x","shipping_method":"S",)" + recipient + R"(,"products":[{"reference_id":"NEW-SKU","quantity":1}])"), "products[0].name"},
      {"unknown product id", body(R"("reference_id":"x","shipping_method":"S",)" + recipient + R"(,"products":[{"id":424242,"quantity":1}])"), "products[0].id"},
      {"reference_id as number", body(R"("reference_id":5,"shipping_method":"S",)" + recipient + "," + product), "reference_id"},
      {"purchase_date not a date", body(R"("reference_id":"x","purchase_date":"yesterday","shipping_method":"S",)" + recipient + "," + product), "purchase_date"},
      {"missing address city", body(R"("reference_id":"x","shipping_method":"S","recipient":{"name":"A","address":{"address1":"1","country":"US"}},)" + product), "recipient.address.city"},
  };
  for (const auto& test : cases) {
    const auto response = sandbox.create("/2026-01/order", test.body);
    EXPECT_EQ(response.status, 400) << test.name << ": " << response.body;
    EXPECT_TRUE(has_field(response, test.field)) << test.name << ": " << response.body;
    EXPECT_EQ(as_int(parse(response.body)["status"]), 400) << test.name;
  }
  // A reference of exactly 300 characters is fine.
  EXPECT_EQ(sandbox.create("/2026-01/order", order_body(std::string(300, 'r'))).status, 201);
}

TEST(SandboxOrders, AnArrayItemThatIsNotAnObjectIsNamedByItsIndex) {
  Sandbox sandbox;
  const auto response = sandbox.create("/2026-01/order",
      R"({"reference_id":"x","shipping_method":"S","recipient":{"name":"A","address":{"address1":"1","city":"C","country":"US"}},)"
      R"("products":[{"reference_id":"SKU-1","name":"W","quantity":1},7],"tags":["k"]})");
  ASSERT_EQ(response.status, 400) << response.body;
  const auto errors = parse(response.body)["errors"];
  EXPECT_EQ(as_string(errors["products[1]"].at(0)), "The field products[1] must be an object.");
  EXPECT_EQ(as_string(errors["tags[0]"].at(0)), "The field tags[0] must be an object with name and value.");
}

TEST(SandboxOrders, MalformedJsonAndNonObjectBodiesAnswer400) {
  Sandbox sandbox;
  for (std::string body : {"{", "[1,2]", "\"text\"", "{\"reference_id\":\"x\",}", "nul"}) {
    const auto response = sandbox.create("/2026-01/order", body);
    EXPECT_EQ(response.status, 400) << body;
    EXPECT_TRUE(has_field(response, "$")) << response.body;
  }
}

TEST(SandboxOrders, ProductsAreResolvedByReferenceAndCreatedWhenNamed) {
  Sandbox sandbox;
  const auto first = sandbox.create_order("REF-A");
  const auto product_id = as_int(first["products"].at(0)["id"]);
  // Known now: the name is no longer needed, and the same product is used.
  const auto second = sandbox.create("/2026-01/order",
      R"({"reference_id":"REF-B","shipping_method":"Standard","recipient":{"name":"B","address":{"address1":"1","city":"C","country":"US"}},"products":[{"reference_id":"SKU-1","quantity":1}]})");
  ASSERT_EQ(second.status, 201) << second.body;
  EXPECT_EQ(as_int(parse(second.body)["products"].at(0)["id"]), product_id);
  const auto by_id = sandbox.create("/2026-01/order",
      R"({"reference_id":"REF-C","shipping_method":"Standard","recipient":{"name":"B","address":{"address1":"1","city":"C","country":"US"}},"products":[{"id":)" + std::to_string(product_id) + R"(,"quantity":1}]})");
  EXPECT_EQ(by_id.status, 201) << by_id.body;
  EXPECT_EQ(sandbox.get("/2026-01/product/" + std::to_string(product_id)).status, 200);
}

TEST(SandboxOrders, GetOrderAndNotFound) {
  Sandbox sandbox;
  const auto id = as_int(sandbox.create_order("GET-1")["id"]);
  const auto found = sandbox.get("/2026-01/order/" + std::to_string(id));
  ASSERT_EQ(found.status, 200);
  EXPECT_EQ(as_string(parse(found.body)["reference_id"]), "GET-1");
  EXPECT_EQ(sandbox.get("/2026-01/order/99999999").status, 404);
  EXPECT_EQ(sandbox.get("/2026-01/order/abc").status, 404);
  EXPECT_EQ(as_int(parse(sandbox.get("/2026-01/order/99999999").body)["status"]), 404);
}

TEST(SandboxOrders, PagesCarryPageNumberTotalPagesAndNextPage) {
  Sandbox sandbox;
  for (int i = 1; i <= 5; ++i) sandbox.create_order("PAGE-" + std::to_string(i));
  const auto first = sandbox.get("/2026-01/order?Limit=2&HasTracking=false");
  ASSERT_EQ(first.status, 200);
  EXPECT_EQ(ids_of(first.body).size(), 2u);
  EXPECT_EQ(first.headers.at("page-number"), "1");
  EXPECT_EQ(first.headers.at("total-pages"), "3");
  EXPECT_EQ(first.headers.at("next-page"), "/2026-01/order?Limit=2&HasTracking=false&Page=2");
  const auto second = sandbox.get(first.headers.at("next-page"));
  EXPECT_EQ(second.headers.at("page-number"), "2");
  const auto last = sandbox.get("/2026-01/order?Limit=2&Page=3");
  EXPECT_EQ(ids_of(last.body).size(), 1u);
  EXPECT_EQ(last.headers.count("next-page"), 0u);
  const auto beyond = sandbox.get("/2026-01/order?Limit=2&Page=9");
  EXPECT_EQ(beyond.status, 200);
  EXPECT_TRUE(ids_of(beyond.body).empty());
  // Default limit 50: everything on one page.
  const auto all = sandbox.get("/2026-01/order");
  EXPECT_EQ(ids_of(all.body).size(), 5u);
  EXPECT_EQ(all.headers.at("total-pages"), "1");
  // Pages together hold every order exactly once.
  std::vector<std::int64_t> seen;
  for (int page = 1; page <= 3; ++page) {
    for (auto id : ids_of(sandbox.get("/2026-01/order?Limit=2&Page=" + std::to_string(page)).body)) seen.push_back(id);
  }
  EXPECT_EQ(seen, ids_of(all.body));
}

TEST(SandboxOrders, LimitAndPageOutsideTheirRangesAnswer400NamingThem) {
  Sandbox sandbox;
  for (const auto& [query, field] : std::vector<std::pair<std::string, std::string>>{
           {"Limit=0", "Limit"}, {"Limit=251", "Limit"}, {"Limit=ten", "Limit"}, {"Page=0", "Page"},
           {"Page=2147483648", "Page"}, {"StartDate=notadate", "StartDate"}, {"HasTracking=maybe", "HasTracking"},
           {"IDs=1,x", "IDs"}, {"SortOrder=Sideways", "SortOrder"}}) {
    const auto response = sandbox.get("/2026-01/order?" + query);
    EXPECT_EQ(response.status, 400) << query;
    EXPECT_TRUE(has_field(response, field)) << query << ": " << response.body;
  }
  EXPECT_EQ(sandbox.get("/2026-01/order?Limit=250&Page=2147483647").status, 200);
}

TEST(SandboxOrders, FiltersByIdsReferenceIdsDatesAndSortOrder) {
  Sandbox sandbox;
  const auto a = as_int(sandbox.create_order("F-A")["id"]);
  sandbox.advance_clock(3600);
  const auto b_order = sandbox.create_order("F-B");
  const auto b = as_int(b_order["id"]);
  const std::string b_created = as_string(b_order["created_date"]);
  sandbox.advance_clock(3600);
  const auto c = as_int(sandbox.create_order("F-C")["id"]);

  EXPECT_EQ(ids_of(sandbox.get("/2026-01/order?IDs=" + std::to_string(a) + "," + std::to_string(c)).body),
            (std::vector<std::int64_t>{a, c}));
  EXPECT_EQ(ids_of(sandbox.get("/2026-01/order?ReferenceIds=F-B,F-C,NOPE").body), (std::vector<std::int64_t>{b, c}));
  EXPECT_EQ(ids_of(sandbox.get("/2026-01/order?SortOrder=Newest").body), (std::vector<std::int64_t>{c, b, a}));
  EXPECT_EQ(ids_of(sandbox.get("/2026-01/order?StartDate=" + encoded(b_created)).body), (std::vector<std::int64_t>{b, c}));
  EXPECT_EQ(ids_of(sandbox.get("/2026-01/order?EndDate=" + encoded(b_created)).body), (std::vector<std::int64_t>{a, b}));
  EXPECT_EQ(ids_of(sandbox.get("/2026-01/order?StartDate=" + encoded(b_created) + "&EndDate=" + encoded(b_created)).body),
            (std::vector<std::int64_t>{b}));
  // Another channel of the merchant sees none of them.
  const auto other_channel = sandbox.call("GET", "/2026-01/order", {}, {{"service_channel_id", "1"}});
  EXPECT_TRUE(ids_of(other_channel.body).empty());
}

TEST(SandboxOrders, FiltersByTrackingAndUpdateTimes) {
  Sandbox sandbox;
  const auto shipped = sandbox.create_order("T-SHIPPED");
  const auto shipped_id = as_int(shipped["id"]);
  const auto shipment_id = as_int(shipped["shipments"].at(0)["id"]);
  sandbox.advance_clock(600);  // the first order ships (tracking) after 300 s
  const auto fresh_id = as_int(sandbox.create_order("T-FRESH")["id"]);
  const auto now = as_string(parse(sandbox.admin("GET", "/_sandbox/clock").body)["now"]);

  EXPECT_EQ(ids_of(sandbox.get("/2026-01/order?HasTracking=true").body), (std::vector<std::int64_t>{shipped_id}));
  EXPECT_EQ(ids_of(sandbox.get("/2026-01/order?HasTracking=false").body), (std::vector<std::int64_t>{fresh_id}));
  // The provider's tracking recipe.
  EXPECT_EQ(ids_of(sandbox.get("/2026-01/order?HasTracking=true&IsTrackingUploaded=false&Limit=250").body),
            (std::vector<std::int64_t>{shipped_id}));
  EXPECT_TRUE(ids_of(sandbox.get("/2026-01/order?IsTrackingUploaded=true").body).empty());
  const auto tracking = parse(sandbox.get("/2026-01/order/" + std::to_string(shipped_id)).body)["shipments"].at(0);
  const std::string tracking_update = as_string(tracking["last_tracking_update_at"]);
  EXPECT_FALSE(as_string(tracking["tracking"]["tracking_number"]).empty());
  EXPECT_EQ(ids_of(sandbox.get("/2026-01/order?LastTrackingUpdateStartDate=" + encoded(tracking_update)).body),
            (std::vector<std::int64_t>{shipped_id}));
  EXPECT_TRUE(ids_of(sandbox.get("/2026-01/order?LastTrackingUpdateEndDate=2000-01-01T00:00:00Z").body).empty());
  // Updated after `now`: nothing yet; moving the clock an hour moves the shipped order in transit.
  EXPECT_TRUE(ids_of(sandbox.get("/2026-01/order?LastUpdateStartDate=" + encoded(now)).body).empty() ||
              ids_of(sandbox.get("/2026-01/order?LastUpdateStartDate=" + encoded(now)).body) == std::vector<std::int64_t>{fresh_id});
  EXPECT_EQ(ids_of(sandbox.get("/2026-01/order?LastUpdateEndDate=" + encoded(now)).body),
            (std::vector<std::int64_t>{shipped_id, fresh_id}));
  sandbox.advance_clock(3600);
  const auto moved = ids_of(sandbox.get("/2026-01/order?LastUpdateStartDate=" + encoded(now)).body);
  EXPECT_NE(std::find(moved.begin(), moved.end(), shipped_id), moved.end());

  const auto marked = sandbox.call("POST", "/2026-01/shipment:batchUpdateTrackingUpload",
                                   R"({"is_tracking_uploaded":true,"shipment_ids":[)" + std::to_string(shipment_id) + "]}");
  ASSERT_EQ(marked.status, 200);
  EXPECT_EQ(ids_of(sandbox.get("/2026-01/order?IsTrackingUploaded=true").body), (std::vector<std::int64_t>{shipped_id}));
  // The second order has shipped meanwhile; its tracking is not uploaded yet.
  EXPECT_EQ(ids_of(sandbox.get("/2026-01/order?HasTracking=true&IsTrackingUploaded=false").body),
            (std::vector<std::int64_t>{fresh_id}));
}

TEST(SandboxOrders, CancelMovesOpenShipmentsToCancelledAndIsSafeToRepeat) {
  Sandbox sandbox;
  const auto id = std::to_string(as_int(sandbox.create_order("CANCEL-1")["id"]));
  const auto cancelled = sandbox.call("POST", "/2026-01/order/" + id + ":cancel");
  ASSERT_EQ(cancelled.status, 200) << cancelled.body;
  const auto body = parse(cancelled.body);
  EXPECT_EQ(as_string(body["order"]["status"]), "Cancelled");
  EXPECT_EQ(as_string(body["order"]["shipments"].at(0)["status"]), "Cancelled");
  const auto again = sandbox.call("POST", "/2026-01/order/" + id + ":cancel");
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(as_string(parse(again.body)["order"]["status"]), "Cancelled");
  // A cancelled shipment never ships.
  sandbox.advance_clock(86400);
  EXPECT_EQ(as_string(parse(sandbox.get("/2026-01/order/" + id).body)["shipments"].at(0)["status"]), "Cancelled");
  EXPECT_EQ(sandbox.call("POST", "/2026-01/order/424242:cancel").status, 404);
}

TEST(SandboxOrders, CancelRefusesAShippedOrderWithAClearError) {
  Sandbox sandbox;
  const auto id = std::to_string(as_int(sandbox.create_order("CANCEL-2")["id"]));
  sandbox.advance_clock(600);
  const auto refused = sandbox.call("POST", "/2026-01/order/" + id + ":cancel");
  EXPECT_EQ(refused.status, 422);
  EXPECT_NE(as_string(parse(refused.body)["detail"]).find("already shipped"), std::string::npos) << refused.body;
  EXPECT_EQ(as_string(parse(sandbox.get("/2026-01/order/" + id).body)["status"]), "Fulfilled");
}

TEST(SandboxOrders, BatchTrackingUploadReportsPerItemFailures) {
  Sandbox sandbox;
  ASSERT_EQ(sandbox.admin("POST", "/_sandbox/tokens", R"({"token":"other-token","merchant_id":2})").status, 201);
  const auto mine = as_int(sandbox.create_order("MINE")["shipments"].at(0)["id"]);
  const auto theirs_response = sandbox.call("POST", "/2026-01/order", order_body("THEIRS"),
                                            {{"service_channel_id", "4"}}, "other-token");
  ASSERT_EQ(theirs_response.status, 201) << theirs_response.body;
  const auto theirs = as_int(parse(theirs_response.body)["shipments"].at(0)["id"]);
  const auto response = sandbox.call("POST", "/2026-01/shipment:batchUpdateTrackingUpload",
                                     R"({"is_tracking_uploaded":true,"shipment_ids":[)" + std::to_string(mine) + "," +
                                         std::to_string(theirs) + ",777777]}");
  ASSERT_EQ(response.status, 200) << response.body;
  const auto body = parse(response.body);
  EXPECT_EQ(as_int(body["summary"]["total"]), 3);
  EXPECT_EQ(as_int(body["summary"]["successful"]), 1);
  EXPECT_EQ(as_int(body["summary"]["failed"]), 2);
  EXPECT_TRUE(as_bool(body["results"].at(0)["isSuccess"]));
  EXPECT_EQ(as_int(body["results"].at(1)["shipmentId"]), theirs);
  EXPECT_FALSE(as_bool(body["results"].at(1)["isSuccess"]));
  EXPECT_EQ(as_string(body["results"].at(1)["error"]["code"]), "Forbidden");
  EXPECT_EQ(as_string(body["results"].at(2)["error"]["code"]), "NotFound");
  EXPECT_FALSE(as_string(body["results"].at(2)["error"]["message"]).empty());
  // Their shipment is untouched.
  const auto their_order = sandbox.call("GET", "/2026-01/order?ReferenceIds=THEIRS", {}, {}, "other-token");
  EXPECT_FALSE(as_bool(parse(their_order.body).at(0)["shipments"].at(0)["is_tracking_uploaded"]));
  // And the flag can be set back.
  const auto unset = sandbox.call("POST", "/2026-01/shipment:batchUpdateTrackingUpload",
                                  R"({"is_tracking_uploaded":false,"shipment_ids":[)" + std::to_string(mine) + "]}");
  EXPECT_EQ(as_int(parse(unset.body)["summary"]["successful"]), 1);
  const auto invalid = sandbox.call("POST", "/2026-01/shipment:batchUpdateTrackingUpload", R"({"shipment_ids":["a"]})");
  EXPECT_EQ(invalid.status, 400);
  EXPECT_TRUE(has_field(invalid, "is_tracking_uploaded"));
  EXPECT_TRUE(has_field(invalid, "shipment_ids[0]"));
}

TEST(SandboxOrders, ShipmentTimelineListsEachStep) {
  Sandbox sandbox;
  const auto order = sandbox.create_order("TIMELINE");
  const auto path = "/2026-01/order/" + std::to_string(as_int(order["id"])) + "/shipment/" +
                    std::to_string(as_int(order["shipments"].at(0)["id"])) + "/timeline";
  sandbox.advance_clock(200);
  const auto response = sandbox.call("GET", path, {}, {{"service_channel_id", std::to_string(kWriteChannel)}});
  ASSERT_EQ(response.status, 200) << response.body;
  simdjson::dom::array entries;
  ASSERT_EQ(parse(response.body).get_array().get(entries), simdjson::SUCCESS);
  ASSERT_EQ(entries.size(), 4u);  // allocated, picked, packed, labeled
  EXPECT_EQ(as_string(entries.at(1)["log_type_name"]), "Picked");
  EXPECT_EQ(as_int(entries.at(3)["log_type_id"]), 102);
  EXPECT_FALSE(as_string(entries.at(0)["timestamp"]).empty());
  EXPECT_EQ(sandbox.get("/2026-01/order/" + std::to_string(as_int(order["id"])) + "/shipment/1/timeline").status, 404);
}

}  // namespace
}  // namespace fulfillsync::sandbox_test
