#include <gtest/gtest.h>

#include "fulfillsync/api/client.hpp"
#include "fulfillsync/api/transport.hpp"

namespace fulfillsync::api {
namespace {

TEST(BaseUrlTest, ParsesSchemesPortsAndPrefixes) {
  const auto plain = parse_base_url("http://127.0.0.1:18080");
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->tls);
  EXPECT_EQ(plain->host, "127.0.0.1");
  EXPECT_EQ(plain->port, 18080);
  EXPECT_EQ(plain->path_prefix, "");

  const auto tls = parse_base_url("https://api.example.com/fulfillment/");
  ASSERT_TRUE(tls);
  EXPECT_TRUE(tls->tls);
  EXPECT_EQ(tls->port, 443);
  EXPECT_EQ(tls->path_prefix, "/fulfillment");

  const auto v6 = parse_base_url("https://[::1]:8443");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 8443);

  EXPECT_FALSE(parse_base_url("ftp://example.com"));
  EXPECT_FALSE(parse_base_url("https://"));
  EXPECT_FALSE(parse_base_url("https://host:99999"));
  EXPECT_FALSE(parse_base_url("https://host:abc"));
}

TEST(UrlEncodeTest, KeepsUnreservedAndEncodesTheRest) {
  EXPECT_EQ(url_encode("2026-03-01T12:34:56.789+00:00"), "2026-03-01T12%3A34%3A56.789%2B00%3A00");
  EXPECT_EQ(url_encode("A-1,B 2"), "A-1%2CB%202");
  EXPECT_EQ(url_encode("Ä"), "%C3%84");
}

}  // namespace
}  // namespace fulfillsync::api
