// What the metrics endpoint reads from a client before it answers (http_request.hpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/beast/http/field.hpp>

#include "fulfillsync/daemon/service/http_request.hpp"

namespace fulfillsync::daemon {
namespace {

TEST(HttpRequestTest, BasicAuthorizationIsDecodedAtTheFirstColon) {
  // "prometheus:s3cr:et"
  const auto credentials = parse_basic_authorization("Basic cHJvbWV0aGV1czpzM2NyOmV0");
  ASSERT_TRUE(credentials.has_value());
  EXPECT_EQ(credentials->user, "prometheus");
  EXPECT_EQ(credentials->password, "s3cr:et");
  EXPECT_TRUE(parse_basic_authorization("basic   cHJvbWV0aGV1czpzM2NyOmV0 ").has_value());
  EXPECT_FALSE(parse_basic_authorization("Bearer cHJvbWV0aGV1czpzM2NyOmV0").has_value());
  EXPECT_FALSE(parse_basic_authorization("Basic bm8tY29sb24=").has_value());  // "no-colon"
  EXPECT_FALSE(parse_basic_authorization("Basic !!!").has_value());
  EXPECT_FALSE(parse_basic_authorization("Basic").has_value());
  EXPECT_FALSE(parse_basic_authorization("").has_value());
}

TEST(HttpRequestTest, GzipIsAcceptedUnlessItsQualityIsZero) {
  EXPECT_TRUE(accepts_gzip("gzip"));
  EXPECT_TRUE(accepts_gzip("deflate, GZIP;q=0.5"));
  EXPECT_TRUE(accepts_gzip("gzip, identity"));  // Prometheus' own header
  EXPECT_FALSE(accepts_gzip("gzip;q=0"));
  EXPECT_FALSE(accepts_gzip("deflate, gzip ; q=0.0"));
  EXPECT_FALSE(accepts_gzip("identity"));
  EXPECT_FALSE(accepts_gzip(""));
}

TEST(HttpRequestTest, HeadersAreParsedWithinTheLimit) {
  const auto request = parse_request_header("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n");
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(sv(request->target()), "/metrics");
  EXPECT_EQ(sv((*request)[boost::beast::http::field::accept_encoding]), "gzip");
  EXPECT_FALSE(parse_request_header("GET /metrics HTTP/1.1\r\nHost: x\r\n").has_value()) << "incomplete";
  EXPECT_FALSE(parse_request_header("GARBAGE\r\n\r\n").has_value());
  const std::string huge = "GET / HTTP/1.1\r\nX-Padding: " + std::string(kMaxRequestHeader, 'a') + "\r\n\r\n";
  EXPECT_FALSE(parse_request_header(huge).has_value());
}

}  // namespace
}  // namespace fulfillsync::daemon
