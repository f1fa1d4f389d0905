// The provider's typed operations over a scripted call: the request each one makes (route, query,
// priority, resending, channel), the body it reads, and how a refusal or an unreadable body reaches
// the caller (as a value).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <exception>
#include <optional>

#include "fulfillsync/api/provider.hpp"

namespace fulfillsync::api {
namespace {

namespace asio = boost::asio;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using Headers = std::map<std::string, std::string>;

constexpr ApiVersion kVersion = ApiVersion::v2026_07;
constexpr const char* kOrder = R"({"id":42,"reference_id":"A-1","status":"Processing"})";
constexpr const char* kUnreadable = R"({"id":"forty-two"})";

// Answers each call with the next scripted response, and keeps the requests as they were made.
class ScriptedProvider : public ::testing::Test {
 protected:
  void answer(int status, std::string body, Headers headers = {}) {
    responses.push_back(HttpResponse{status, std::move(headers), std::move(body)});
  }

  Call call() {
    return [this](ApiRequest request) -> asio::awaitable<Outcome> {
      if (request.before_send) co_await request.before_send();
      requests.push_back(std::move(request));
      if (responses.empty()) co_return classify(TransportError{TransportError::Stage::not_sent, "nothing scripted"});
      HttpResponse response = std::move(responses.front());
      responses.pop_front();
      co_return classify(std::move(response));
    };
  }

  template <typename T>
  T run(asio::awaitable<T> work) {
    std::optional<T> result;
    std::exception_ptr failure;
    asio::co_spawn(io, std::move(work), [&](std::exception_ptr error, T value) {
      failure = error;
      if (!error) result.emplace(std::move(value));
    });
    io.restart();
    io.run();
    if (failure) std::rethrow_exception(failure);
    return std::move(*result);
  }

  const ApiRequest& only_request() const {
    EXPECT_EQ(requests.size(), 1u);
    return requests.front();
  }

  asio::io_context io;
  std::deque<HttpResponse> responses;
  std::vector<ApiRequest> requests;
  Provider provider{call(), kVersion};
};

TEST_F(ScriptedProvider, CreatesAnOrderOnceWithTheChannelAndReadsWhatWasCreated) {
  answer(201, kOrder);
  bool marked = false;
  BeforeSend mark = [&]() -> asio::awaitable<void> {
    marked = true;
    co_return;
  };
  const Answer<CreatedOrder> created = run(provider.create_order(R"({"reference_id":"A-1"})", mark));
  ASSERT_TRUE(created.ok()) << created.why();
  EXPECT_EQ(created->id, 42);
  EXPECT_EQ(created->reference_id, "A-1");
  EXPECT_TRUE(marked);

  const ApiRequest& request = only_request();
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.route, "/order");
  EXPECT_EQ(request.path, "/order");
  EXPECT_EQ(request.body, R"({"reference_id":"A-1"})");
  EXPECT_EQ(request.priority, Priority::push);
  EXPECT_FALSE(request.idempotent);
  EXPECT_TRUE(request.with_channel);
}

TEST_F(ScriptedProvider, ACreatedOrderWhoseAnswerDoesNotReadIsAValueThatSaysSo) {
  answer(201, kUnreadable);
  const Answer<CreatedOrder> created = run(provider.create_order("{}"));
  EXPECT_FALSE(created.ok());
  EXPECT_TRUE(created.outcome.ok());  // created all the same: the caller looks it up
  ASSERT_TRUE(created.unreadable);
  EXPECT_THAT(created.why(), HasSubstr("id"));
}

// A create's answer echoes the whole order; only what the ledger keeps of it is decoded: the rest is
// skipped, so an answer whose other fields the models would refuse still says what was created.
TEST_F(ScriptedProvider, ACreatedOrdersAnswerIsReadForItsIdStatusAndCreationTimeOnly) {
  answer(201, R"({"id":43,"reference_id":"A-2","status":"Processing","created_date":"2026-11-26T10:00:00Z",)"
              R"("products":"not a list","recipient":7,"shipments":{"id":"x"}})");
  const auto created = run(provider.create_order(R"({"reference_id":"A-2"})"));
  ASSERT_TRUE(created.ok()) << created.why();
  EXPECT_EQ(created->id, 43);
  EXPECT_EQ(created->reference_id, "A-2");
  EXPECT_EQ(created->status, "Processing");
  ASSERT_TRUE(created->created_date);
  EXPECT_THAT(created->created_date->to_iso8601(), HasSubstr("2026-11-26T10:00:00"));
}

TEST_F(ScriptedProvider, ADuplicateReferenceKeepsItsKind) {
  answer(422, R"({"":["Cannot insert order with existing ReferenceId"]})");
  const Answer<CreatedOrder> duplicate = run(provider.create_order("{}"));
  EXPECT_FALSE(duplicate.ok());
  EXPECT_FALSE(duplicate.unreadable);
  EXPECT_EQ(duplicate.outcome.kind, OutcomeKind::duplicate_reference);
  EXPECT_EQ(duplicate.why(), duplicate.outcome.detail);
}

TEST_F(ScriptedProvider, CreatesAReturn) {
  answer(201, R"({"id":7,"reference_id":"RMA-1","status":"AwaitingArrival"})");
  answer(201, "[]");
  const Answer<ReturnOrder> created = run(provider.create_return(R"({"reference_id":"RMA-1"})"));
  ASSERT_TRUE(created.ok()) << created.why();
  EXPECT_EQ(created->id, 7);
  EXPECT_EQ(created->status, "AwaitingArrival");
  EXPECT_FALSE(run(provider.create_return("{}")).ok());  // an array is no return

  const ApiRequest& request = requests.front();
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.route, "/return");
  EXPECT_EQ(request.priority, Priority::push);
  EXPECT_FALSE(request.idempotent);
  EXPECT_TRUE(request.with_channel);
}

TEST_F(ScriptedProvider, CancelsAnOrderByItsId) {
  answer(200, "not read");
  answer(400, R"({"title":"Order 43 cannot be cancelled"})");
  EXPECT_TRUE(run(provider.cancel_order(42)).ok());
  const Outcome refused = run(provider.cancel_order(43));
  EXPECT_EQ(refused.kind, OutcomeKind::rejected);
  EXPECT_THAT(refused.detail, HasSubstr("cannot be cancelled"));

  const ApiRequest& request = requests.front();
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.route, "/order/{orderId}:cancel");
  EXPECT_EQ(request.path, "/order/42:cancel");
  EXPECT_TRUE(request.body.empty());
  EXPECT_EQ(request.priority, Priority::push);
  EXPECT_FALSE(request.idempotent);
  EXPECT_TRUE(request.with_channel);
}

TEST_F(ScriptedProvider, MarksTrackingUploadedAndReadsEachShipmentsResult) {
  answer(200, R"({"results":[{"shipmentId":5,"isSuccess":true},{"shipmentId":6,"isSuccess":false,)"
              R"("error":{"code":"NotFound","message":"no such shipment"}}]})");
  answer(200, R"({"results":[{"shipmentId":5}]})");
  const std::vector<std::int64_t> shipments = {5, 6};
  const Answer<TrackingUploadResponse> marked = run(provider.mark_tracking_uploaded(shipments));
  ASSERT_TRUE(marked.ok()) << marked.why();
  ASSERT_EQ(marked->results.size(), 2u);
  EXPECT_TRUE(marked->results[0].is_success);
  EXPECT_FALSE(marked->results[1].is_success);

  const Answer<TrackingUploadResponse> unreadable = run(provider.mark_tracking_uploaded(shipments));
  EXPECT_FALSE(unreadable.ok());
  EXPECT_THAT(unreadable.why(), HasSubstr("isSuccess"));

  const ApiRequest& request = requests.front();
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.route, "/shipment:batchUpdateTrackingUpload");
  EXPECT_THAT(request.body, HasSubstr(R"("shipment_ids":[5,6])"));
  EXPECT_THAT(request.body, HasSubstr(R"("is_tracking_uploaded":true)"));
  EXPECT_EQ(request.priority, Priority::mark);
  EXPECT_FALSE(request.idempotent);
  EXPECT_FALSE(request.with_channel);
}

TEST_F(ScriptedProvider, FindsOrdersByReferenceOnOnePage) {
  answer(200, std::string("[") + kOrder + "]");
  const std::vector<std::string> references = {"A-1", "A-2"};
  const Answer<OrderPage> found = run(provider.find_orders_by_reference(references));
  ASSERT_TRUE(found.ok()) << found.why();
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ(found->front().reference_id, "A-1");

  const ApiRequest& request = only_request();
  EXPECT_EQ(request.method, "GET");
  EXPECT_EQ(request.route, "/order");
  EXPECT_THAT(request.query, ElementsAre(Pair("ReferenceIds", "A-1,A-2"), Pair("Limit", "250")));
  EXPECT_EQ(request.priority, Priority::push);
  EXPECT_TRUE(request.idempotent);
  EXPECT_FALSE(request.with_channel);
}

TEST_F(ScriptedProvider, ALookupThatFailsOrDoesNotReadIsAValue) {
  answer(503, "busy");
  answer(200, "{not json");
  const std::vector<std::string> references = {"A-1"};
  const Answer<OrderPage> failed = run(provider.find_orders_by_reference(references));
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(failed.outcome.kind, OutcomeKind::ambiguous);
  EXPECT_FALSE(failed.unreadable);
  const Answer<OrderPage> unreadable = run(provider.find_orders_by_reference(references));
  EXPECT_FALSE(unreadable.ok());
  EXPECT_TRUE(unreadable.outcome.ok());
  EXPECT_TRUE(unreadable.unreadable);
}

TEST_F(ScriptedProvider, FindsOrdersByIdAtTheAskersPriority) {
  answer(200, "[]");
  const std::vector<std::int64_t> ids = {42, 43};
  const Answer<OrderPage> found = run(provider.find_orders_by_id(ids, Priority::mark));
  ASSERT_TRUE(found.ok()) << found.why();
  EXPECT_TRUE(found->empty());
  const ApiRequest& request = only_request();
  EXPECT_EQ(request.route, "/order");
  EXPECT_THAT(request.query, ElementsAre(Pair("IDs", "42,43"), Pair("Limit", "250")));
  EXPECT_EQ(request.priority, Priority::mark);
  EXPECT_FALSE(request.with_channel);
}

TEST_F(ScriptedProvider, FindsReturnsByReferenceAndById) {
  answer(200, R"({"items":[{"id":7,"reference_id":"RMA-1","status":"Arrived"}]})");
  answer(200, R"({"items":[{"id":"seven"}]})");
  const std::vector<std::string> references = {"RMA-1"};
  const Answer<ReturnList> found = run(provider.find_returns_by_reference(references));
  ASSERT_TRUE(found.ok()) << found.why();
  ASSERT_EQ(found->items.size(), 1u);
  EXPECT_EQ(found->items[0].status, "Arrived");
  const std::vector<std::int64_t> ids = {7, 8};
  EXPECT_TRUE(run(provider.find_returns_by_id(ids)).unreadable);

  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].route, "/return");
  EXPECT_THAT(requests[0].query, ElementsAre(Pair("ReferenceIds", "RMA-1"), Pair("Limit", "250")));
  EXPECT_EQ(requests[0].priority, Priority::push);
  EXPECT_EQ(requests[1].route, "/return");
  EXPECT_THAT(requests[1].query, ElementsAre(Pair("Ids", "7,8"), Pair("Limit", "250")));
  EXPECT_EQ(requests[1].priority, Priority::push);
  EXPECT_FALSE(requests[1].with_channel);
}

TEST_F(ScriptedProvider, ListsTheOrdersChangedPageByPage) {
  answer(200, std::string("[") + kOrder + "]", {{"page-number", "1"}, {"total-pages", "2"}, {"date", "then"}});
  answer(200, "[]", {{"page-number", "2"}, {"total-pages", "2"}});
  const auto since = *timestamps::parse_iso8601("2026-03-01T00:00:00Z");
  OrderPages pages = provider.list_orders_changed(since, 100);

  auto first = run(pages.next());
  ASSERT_TRUE(first && first->ok());
  EXPECT_EQ((*first)->size(), 1u);
  EXPECT_EQ(first->outcome.response.header("date"), "then");  // the headers stay the caller's
  EXPECT_EQ(pages.page(), 1);
  auto second = run(pages.next());
  ASSERT_TRUE(second && second->ok());
  EXPECT_TRUE((*second)->empty());
  EXPECT_FALSE(run(pages.next()));

  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].route, "/order");
  EXPECT_THAT(requests[1].query, ElementsAre(Pair("LastUpdateStartDate", "2026-03-01T00:00:00.000Z"),
                                             Pair("Page", "2"), Pair("Limit", "100")));
  EXPECT_EQ(requests[1].priority, Priority::pull);
  EXPECT_TRUE(requests[1].with_channel);
}

TEST_F(ScriptedProvider, AnOrderPageThatDoesNotReadIsAValue) {
  answer(200, R"([{"id":1}])", {{"next-page", "/order?Page=2"}});
  OrderPages pages = provider.list_orders_changed(timestamps::TimePoint{}, 250);
  auto page = run(pages.next());
  ASSERT_TRUE(page);
  EXPECT_FALSE(page->ok());
  EXPECT_THAT(page->why(), HasSubstr("missing required field"));
}

TEST_F(ScriptedProvider, ListsOrdersWithTrackingNotUploaded) {
  answer(200, "[]");
  const auto since = *timestamps::parse_iso8601("2026-03-01T00:00:00Z");
  OrderPages pages = provider.list_orders_with_tracking_not_uploaded(since, 250);
  ASSERT_TRUE(run(pages.next()));
  const ApiRequest& request = only_request();
  EXPECT_EQ(request.route, "/order");
  EXPECT_THAT(request.query,
              ElementsAre(Pair("HasTracking", "true"), Pair("IsTrackingUploaded", "false"),
                          Pair("LastUpdateStartDate", "2026-03-01T00:00:00.000Z"), Pair("Page", "1"),
                          Pair("Limit", "250")));
  EXPECT_EQ(request.priority, Priority::pull);
  EXPECT_TRUE(request.with_channel);
}

TEST_F(ScriptedProvider, ListsReturnsFollowingTheNextLink) {
  answer(200, R"({"items":[{"id":7,"reference_id":"RMA-1","status":"Arrived"}],"next":"/return?Cursor=2&Ids=7,8"})");
  answer(200, R"({"items":[{"id":8,"reference_id":"RMA-2","status":"Completed"}]})");
  const std::vector<std::int64_t> ids = {7, 8};
  ReturnPages pages = provider.list_returns(ids, 1);
  auto first = run(pages.next());
  ASSERT_TRUE(first && first->ok());
  EXPECT_EQ((*first)->items[0].id, 7);
  auto second = run(pages.next());
  ASSERT_TRUE(second && second->ok());
  EXPECT_EQ((*second)->items[0].id, 8);
  EXPECT_FALSE(run(pages.next()));

  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].route, "/return");
  EXPECT_THAT(requests[0].query, ElementsAre(Pair("Ids", "7,8"), Pair("Limit", "1")));
  EXPECT_EQ(requests[0].priority, Priority::pull);
  EXPECT_TRUE(requests[0].with_channel);
  EXPECT_THAT(requests[1].query, ElementsAre(Pair("Cursor", "2"), Pair("Ids", "7,8"), Pair("Limit", "1")));
}

TEST_F(ScriptedProvider, AReturnPageThatDoesNotReadEndsTheWalk) {
  answer(200, R"({"items":[{"id":7}],"next":"/return?Cursor=2"})");
  const std::vector<std::int64_t> ids = {7};
  ReturnPages pages = provider.list_returns(ids, 50);
  auto page = run(pages.next());
  ASSERT_TRUE(page);
  EXPECT_TRUE(page->unreadable);
  EXPECT_FALSE(run(pages.next()));
  EXPECT_EQ(requests.size(), 1u);
}

TEST_F(ScriptedProvider, ReadsAShipmentsTimeline) {
  answer(200, R"([{"timestamp":"2026-03-01T12:00:00Z","log_type_name":"Shipped"}])");
  const Answer<ShipmentTimeline> timeline = run(provider.shipment_timeline(42, 5));
  ASSERT_TRUE(timeline.ok()) << timeline.why();
  ASSERT_EQ(timeline->size(), 1u);
  EXPECT_EQ(timeline->front().log_type_name, "Shipped");
  const ApiRequest& request = only_request();
  EXPECT_EQ(request.method, "GET");
  EXPECT_EQ(request.route, "/order/{orderId}/shipment/{shipmentId}/timeline");
  EXPECT_EQ(request.path, "/order/42/shipment/5/timeline");
  EXPECT_EQ(request.priority, Priority::pull);
  EXPECT_TRUE(request.with_channel);
}

TEST_F(ScriptedProvider, ReadsLotLevelsAndTellsAnUnknownItemByItsStatus) {
  answer(200, R"({"inventory_id":9,"lots":[{"lot_number":"L1","on_hand_quantity":3}]})");
  answer(404, R"({"title":"Not Found"})");
  answer(200, R"({"lots":[]})");
  const Answer<LotLevels> levels = run(provider.lot_levels(9));
  ASSERT_TRUE(levels.ok()) << levels.why();
  EXPECT_EQ(levels->inventory_id, 9);
  ASSERT_EQ(levels->lots.size(), 1u);
  EXPECT_EQ(levels->lots[0].lot_number, "L1");
  const Answer<LotLevels> unknown = run(provider.lot_levels(10));
  EXPECT_EQ(unknown.outcome.kind, OutcomeKind::rejected);
  EXPECT_EQ(unknown.outcome.status, 404);
  EXPECT_THAT(run(provider.lot_levels(11)).why(), HasSubstr("inventory_id"));

  EXPECT_EQ(requests[0].method, "GET");
  EXPECT_EQ(requests[0].route, "/inventory-level/{inventoryId}/lots");
  EXPECT_EQ(requests[0].path, "/inventory-level/9/lots");
  EXPECT_EQ(requests[0].priority, Priority::pull);
  EXPECT_FALSE(requests[0].with_channel);
}

TEST_F(ScriptedProvider, ListsEveryChannel) {
  answer(200, R"({"items":[{"id":1,"scopes":["orders_read"]}],"next":"/channel?Cursor=2"})");
  answer(200, R"({"items":[{"id":2,"scopes":["orders_write"]}]})");
  const Answer<std::vector<Channel>> channels = run(provider.channels());
  ASSERT_TRUE(channels.ok()) << channels.why();
  ASSERT_EQ(channels->size(), 2u);
  EXPECT_TRUE((*channels)[1].has_scope("orders_write"));

  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].method, "GET");
  EXPECT_EQ(requests[0].route, "/channel");
  EXPECT_THAT(requests[0].query, ElementsAre(Pair("RecordsPerPage", "50")));
  EXPECT_EQ(requests[0].priority, Priority::push);
  EXPECT_THAT(requests[1].query, ElementsAre(Pair("Cursor", "2"), Pair("RecordsPerPage", "50")));
}

TEST_F(ScriptedProvider, ChannelsEndAtAPageThatFailsOrDoesNotRead) {
  answer(200, R"({"items":[{"id":1}],"next":"/channel?Cursor=2"})");
  answer(401, R"({"title":"Unauthorized"})");
  const Answer<std::vector<Channel>> refused = run(provider.channels());
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(refused.outcome.kind, OutcomeKind::unauthorized);

  answer(200, R"({"items":[{"name":"no id"}]})");
  const Answer<std::vector<Channel>> unreadable = run(provider.channels());
  EXPECT_FALSE(unreadable.ok());
  EXPECT_TRUE(unreadable.unreadable);
}

}  // namespace
}  // namespace fulfillsync::api
