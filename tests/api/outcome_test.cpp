#include "fulfillsync/api/outcome.hpp"

#include <gtest/gtest.h>

namespace fulfillsync::api {
namespace {

using namespace std::chrono_literals;

Outcome answer(int status, std::string body = "{}", std::map<std::string, std::string> headers = {}) {
  return classify(HttpResponse{status, std::move(headers), std::move(body)});
}

TEST(OutcomeTest, EachAnswerHasExactlyOneKind) {
  EXPECT_EQ(answer(200).kind, OutcomeKind::success);
  EXPECT_EQ(answer(201).kind, OutcomeKind::success);
  EXPECT_EQ(answer(400).kind, OutcomeKind::rejected);
  EXPECT_EQ(answer(404).kind, OutcomeKind::rejected);
  EXPECT_EQ(answer(422, R"({"errors":{"recipient.name":["required"]}})").kind, OutcomeKind::rejected);
  EXPECT_EQ(answer(422, R"({"": ["Cannot insert order with existing ReferenceId"]})").kind,
            OutcomeKind::duplicate_reference);
  EXPECT_EQ(answer(429).kind, OutcomeKind::throttled);
  EXPECT_EQ(answer(401).kind, OutcomeKind::unauthorized);
  EXPECT_EQ(answer(403).kind, OutcomeKind::forbidden);
  for (int status : {500, 502, 503, 504, 408}) EXPECT_EQ(answer(status).kind, OutcomeKind::ambiguous) << status;
}

TEST(OutcomeTest, A422WhoseBodyCannotBeReadMayBeADuplicateSoItIsUnclear) {
  const Outcome garbled = answer(422, R"({"title":"Unprocessable Entity","detail":"Order 1"}]<!-- upstream error -->)");
  EXPECT_EQ(garbled.kind, OutcomeKind::ambiguous);
  EXPECT_EQ(garbled.status, 422);
  // A 400 cannot be a duplicate: refused as it is, whatever its body.
  EXPECT_EQ(answer(400, "<html>Bad Request</html>").kind, OutcomeKind::rejected);
}

TEST(OutcomeTest, TransportFailuresSayWhetherTheRequestLeft) {
  EXPECT_EQ(classify(TransportError{TransportError::Stage::not_sent, "connect: refused"}).kind, OutcomeKind::not_sent);
  const Outcome lost = classify(TransportError{TransportError::Stage::sent, "waiting for the answer: timed out"});
  EXPECT_EQ(lost.kind, OutcomeKind::ambiguous);
  EXPECT_EQ(lost.status, 0);
  EXPECT_EQ(lost.detail, "waiting for the answer: timed out");
}

TEST(OutcomeTest, ThrottleWaitComesFromEitherHeader) {
  EXPECT_EQ(answer(429, "{}", {{"x-retry-after", "25"}}).retry_after, 25s);
  EXPECT_EQ(answer(429, "{}", {{"retry-after", "3"}}).retry_after, 3s);
  EXPECT_EQ(answer(429, "{}", {{"x-retry-after", "1.5"}, {"retry-after", "9"}}).retry_after, 1500ms);
  EXPECT_EQ(answer(429, "{}", {{"retry-after", "Wed, 21 Oct 2026 07:28:00 GMT"}}).retry_after, 10s);
  EXPECT_EQ(answer(429).retry_after, 10s);
}

// The provider's validation answers repeat their first field error as `detail`
// (provider-facts.md: ASP.NET problem details); last_error holds it once.
TEST(OutcomeTest, ARefusalSaysEachReasonOnce) {
  const Outcome refused = answer(422, R"({"type":"https://tools.ietf.org/html/rfc9110#section-15.5.21",)"
                                      R"("title":"One or more validation errors occurred.","status":422,)"
                                      R"("detail":"location_id: Fulfillment center 999 does not exist",)"
                                      R"("instance":"/2026-07/order",)"
                                      R"("errors":{"location_id":["Fulfillment center 999 does not exist"]}})");
  EXPECT_EQ(refused.kind, OutcomeKind::rejected);
  EXPECT_EQ(refused.detail, "HTTP 422: location_id: Fulfillment center 999 does not exist");

  const Outcome several = answer(400, R"({"title":"Bad Request","detail":"The name is required.",)"
                                      R"("errors":{"Recipient.Name":["The name is required."],)"
                                      R"("Products":["At least one product is required."]}})");
  EXPECT_EQ(several.detail,
            "HTTP 400: Recipient.Name: The name is required.; Products: At least one product is required.");
  // A detail of its own is kept before the field errors.
  EXPECT_EQ(answer(400, R"({"detail":"Order rejected","errors":{"Products":["Quantity must be positive."]}})").detail,
            "HTTP 400: Order rejected; Products: Quantity must be positive.");
}

TEST(OutcomeTest, DetailIsOneShortLine) {
  const Outcome outcome = answer(400, "line one\nline two" + std::string(500, 'x'));
  EXPECT_EQ(outcome.detail.find('\n'), std::string::npos);
  EXPECT_LT(outcome.detail.size(), 230u);
}

}  // namespace
}  // namespace fulfillsync::api
