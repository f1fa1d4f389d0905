// Error bodies of every shape the spec and the provider facts show, in every version.
#include "fulfillsync/api/models/api_error.hpp"

#include <gtest/gtest.h>

#include "recorded_bodies.hpp"

namespace fulfillsync::api {
namespace {

using testing_bodies::recorded_body;

class ApiErrorDecoding : public ::testing::TestWithParam<ApiVersion> {};

TEST_P(ApiErrorDecoding, ProblemDetailsWithFieldErrors) {
  const ApiError error = decode_api_error(recorded_body(GetParam(), "errors/validation_problem_422.json"));
  EXPECT_EQ(error.message, "One or more validation errors occurred.");
  EXPECT_EQ(error.status, 422);
  EXPECT_EQ(error.code, "https://tools.ietf.org/html/rfc4918#section-11.2");
  EXPECT_EQ(error.field_errors, (std::vector<FieldError>{{"Recipient.Address.ZipCode", "The zip code is invalid."},
                                                         {"Products", "At least one product is required."},
                                                         {"Products", "Quantity must be positive."}}));
  EXPECT_FALSE(error.is_duplicate_reference());
  EXPECT_FALSE(error.raw.has_value());
  EXPECT_EQ(error.summary(),
            "One or more validation errors occurred.; Recipient.Address.ZipCode: The zip code is invalid.; "
            "Products: At least one product is required.; Products: Quantity must be positive.");
}

TEST_P(ApiErrorDecoding, DuplicateReferenceShape) {
  const ApiError error = decode_api_error(recorded_body(GetParam(), "errors/duplicate_reference_422.json"));
  EXPECT_TRUE(error.is_duplicate_reference());
  EXPECT_EQ(error.message, "Cannot insert order with existing ReferenceId");
  EXPECT_EQ(error.field_errors, (std::vector<FieldError>{{"", "Cannot insert order with existing ReferenceId"}}));
  EXPECT_EQ(error.summary(), "Cannot insert order with existing ReferenceId");
}

TEST_P(ApiErrorDecoding, RateLimited) {
  const ApiError error = decode_api_error(recorded_body(GetParam(), "errors/rate_limited_429.json"));
  EXPECT_EQ(error.status, 429);
  EXPECT_EQ(error.message, "Rate limit is exceeded. Try again in 25 seconds.");
  EXPECT_TRUE(error.field_errors.empty());
}

TEST_P(ApiErrorDecoding, ReturnUpdateValidation) {
  const ApiError error = decode_api_error(recorded_body(GetParam(), "errors/return_update_422.json"));
  if (GetParam() == ApiVersion::v2025_07) {
    // Problem details, with `detail` preferred over `title`.
    EXPECT_EQ(error.message, "Return 5001 cannot be updated");
    EXPECT_EQ(error.field_errors,
              (std::vector<FieldError>{{"inventory[0].quantity", "Quantity exceeds the original shipment."}}));
  } else {
    // From 2026-01: `details`, `errors[]`, `message`, `stackTrace`.
    EXPECT_EQ(error.message, "Validation failed");
    EXPECT_EQ(error.field_errors, (std::vector<FieldError>{{"inventory[0].lot_number", "Unknown lot LOT-X"},
                                                           {"", "Quantity exceeds the original shipment."}}));
  }
}

TEST_P(ApiErrorDecoding, NotJsonKeepsTheText) {
  const std::string body = recorded_body(GetParam(), "errors/gateway_502.html");
  const ApiError error = decode_api_error(body);
  ASSERT_TRUE(error.raw.has_value());
  EXPECT_EQ(*error.raw, body);
  EXPECT_EQ(error.message, "<html><head><title>502 Bad Gateway</title></head><body>Bad gateway</body></html>");
}

INSTANTIATE_TEST_SUITE_P(AllVersions, ApiErrorDecoding, ::testing::ValuesIn(testing_bodies::kAllVersions),
                         testing_bodies::VersionName());

TEST(ApiError, BatchItemErrorShape) {
  const ApiError error = decode_api_error(R"({"code":"ShipmentNotFound","message":"Shipment 5 was not found"})");
  EXPECT_EQ(error.code, "ShipmentNotFound");
  EXPECT_EQ(error.message, "Shipment 5 was not found");
}

TEST(ApiError, AnythingElseNeverThrows) {
  for (std::string_view body : {"", "   ", "null", "[]", "[1,2]", "\"text\"", "{}", "{\"errors\":", "{\"a\":1}",
                                "{\"errors\":{\"x\":[1,{\"y\":2}]}}", "\xff\xfe garbage", "{\"status\":\"bad\"}"}) {
    const ApiError error = decode_api_error(body);
    EXPECT_FALSE(error.summary().empty()) << body;
  }
  EXPECT_EQ(decode_api_error("").summary(), "empty error body");
  EXPECT_EQ(decode_api_error("{}").raw, "{}");
  const std::string big(100000, 'x');
  EXPECT_EQ(decode_api_error(big).raw->size(), 4096u);
}

TEST(ApiError, DuplicateRecognisedInAnyShape) {
  EXPECT_TRUE(
      decode_api_error(R"({"title":"Bad","errors":{"ReferenceId":["Cannot insert order with existing ReferenceId"]}})")
          .is_duplicate_reference());
  EXPECT_TRUE(decode_api_error("Cannot insert order with existing ReferenceId").is_duplicate_reference());
  EXPECT_FALSE(decode_api_error(R"({"message":"ReferenceId is required"})").is_duplicate_reference());
}

}  // namespace
}  // namespace fulfillsync::api
