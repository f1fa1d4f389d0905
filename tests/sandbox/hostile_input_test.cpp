// Hostile input gets a 4xx or a closed connection, never a crash or a hang.
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sandbox_fixture.hpp"

namespace fulfillsync::sandbox_test {
namespace {

using namespace std::chrono_literals;

int status_of(const std::string& received) {
  if (received.rfind("HTTP/1.1 ", 0) != 0) return 0;
  return std::stoi(received.substr(9, 3));
}

void expect_still_serving(Sandbox& sandbox) {
  EXPECT_EQ(sandbox.get("/2026-01/channel").status, 200);
  EXPECT_TRUE(sandbox.process().running());
}

TEST(SandboxHostileInput, TenMegabyteBodyIsRefused) {
  Sandbox sandbox;
  const std::string body(10 * 1024 * 1024, 'x');
  // fmt::format, not operator+: GCC 12 at -O3 misreads a literal before a temporary string (bug 105651).
  const auto exchange = raw_exchange(sandbox.port(),
                                     fmt::format("POST /2026-01/order HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                                                 "test-token\r\nservice_channel_id: 2\r\nContent-Type: "
                                                 "application/json\r\nContent-Length: {}\r\n\r\n{}",
                                                 body.size(), body),
                                     20s);
  EXPECT_FALSE(exchange.timed_out);
  const int status = status_of(exchange.received);
  EXPECT_TRUE(status == 413 || status == 0) << exchange.received.substr(0, 200);
  expect_still_serving(sandbox);
}

TEST(SandboxHostileInput, ChunkedBodyOverTheLimitIsRefused) {
  Sandbox sandbox({"--max-body", "4096"});
  std::string request = "POST /2026-01/order HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 10; ++i) request += "400\r\n" + std::string(1024, 'a') + "\r\n";
  request += "0\r\n\r\n";
  const auto exchange = raw_exchange(sandbox.port(), request, 20s);
  EXPECT_FALSE(exchange.timed_out);
  const int status = status_of(exchange.received);
  EXPECT_TRUE(status == 413 || status == 0) << exchange.received.substr(0, 200);
  expect_still_serving(sandbox);
}

TEST(SandboxHostileInput, HeaderFloodIsRefused) {
  Sandbox sandbox;
  std::string request = "GET /2026-01/channel HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 2000; ++i) request += "X-Flood-" + std::to_string(i) + ": " + std::string(40, 'f') + "\r\n";
  request += "\r\n";
  const auto exchange = raw_exchange(sandbox.port(), request, 20s);
  EXPECT_FALSE(exchange.timed_out);
  const int status = status_of(exchange.received);
  EXPECT_TRUE(status == 431 || status == 400 || status == 0) << exchange.received.substr(0, 200);
  expect_still_serving(sandbox);
}

// Found by fuzz/sandbox_requests: a target without a path made the handler throw (a 500).
TEST(SandboxHostileInput, TargetWithoutAPathIsNotFound) {
  Sandbox sandbox;
  const auto exchange = raw_exchange(sandbox.port(),
                                     "GET ?Limit=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer test-token\r\n"
                                     "Connection: close\r\n\r\n",
                                     20s);
  EXPECT_FALSE(exchange.timed_out);
  EXPECT_EQ(status_of(exchange.received), 404) << exchange.received.substr(0, 200);
  expect_still_serving(sandbox);
}

TEST(SandboxHostileInput, GarbageIsNotHttp) {
  Sandbox sandbox;
  for (std::string garbage : {std::string("HELLO THERE\r\n\r\n"), std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11),
                              std::string("GET / HTTP/9.9\r\n\r\n"), std::string("GET /2026-01/channel HTTP/1.1\r\nBad Header\r\n\r\n")}) {
    const auto exchange = raw_exchange(sandbox.port(), garbage, 20s);
    EXPECT_FALSE(exchange.timed_out);
    const int status = status_of(exchange.received);
    EXPECT_TRUE(status == 0 || (status >= 400 && status < 500)) << exchange.received.substr(0, 200);
  }
  expect_still_serving(sandbox);
}

TEST(SandboxHostileInput, SlowClientIsCutOffWhileOthersAreServed) {
  Sandbox sandbox({"--read-timeout", "1"});
  // Half a request line, then silence: the sandbox must hang up, not wait forever.
  std::optional<RawExchange> slow;
  std::thread waiter([&] { slow = raw_exchange(sandbox.port(), "GET /2026-01/chan", 20s); });
  expect_still_serving(sandbox);
  waiter.join();
  ASSERT_TRUE(slow.has_value());
  EXPECT_FALSE(slow->timed_out);
  expect_still_serving(sandbox);
}

TEST(SandboxHostileInput, UnknownPathsVersionsAndMethods) {
  Sandbox sandbox;
  EXPECT_EQ(sandbox.get("/2026-01/nothing-here").status, 404);
  EXPECT_EQ(sandbox.get("/2024-01/order").status, 404);
  EXPECT_EQ(sandbox.get("/").status, 404);
  EXPECT_EQ(sandbox.get("/order").status, 404);
  const auto wrong_method = sandbox.call("DELETE", "/2026-01/order");
  EXPECT_EQ(wrong_method.status, 405);
  EXPECT_NE(wrong_method.headers.at("allow").find("POST"), std::string::npos);
  EXPECT_EQ(sandbox.call("BREW", "/2026-01/order").status, 405);
  EXPECT_EQ(sandbox.call("GET", "/2026-01/order/1/shipment").status, 404);
  EXPECT_EQ(sandbox.get("/2026-01/order/%00%ff").status, 404);
  expect_still_serving(sandbox);
}

TEST(SandboxHostileInput, PathologicalJsonIsRefused) {
  Sandbox sandbox;
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(sandbox.create("/2026-01/order", deep).status, 400);
  EXPECT_EQ(sandbox.create("/2026-01/order", "{\"reference_id\":\"\xff\xfe\"}").status, 400);
  EXPECT_EQ(sandbox.create("/2026-01/order", std::string("{\"a\":\"\0\"}", 9)).status, 400);
  const std::string huge_number =
      fmt::format(R"({{"reference_id":"N","shipping_method":"S","products":[{{"id":1{}}}]}})", std::string(400, '0'));
  EXPECT_EQ(sandbox.create("/2026-01/order", huge_number).status, 400);
  // Wrong types everywhere.
  EXPECT_EQ(sandbox.create("/2026-01/order", R"({"reference_id":[],"shipping_method":{},"recipient":"x","products":{}})").status, 400);
  EXPECT_EQ(sandbox.call("POST", "/2026-01/shipment:batchUpdateTrackingUpload", R"({"is_tracking_uploaded":"yes","shipment_ids":5})").status, 400);
  EXPECT_EQ(sandbox.create("/2026-01/return", "[]").status, 400);
  EXPECT_EQ(sandbox.call("POST", "/2026-01/simulate/shipment", R"({"shipment_id":{},"simulation":[]})").status, 400);
  expect_still_serving(sandbox);
}

TEST(SandboxHostileInput, ExpectContinueIsAnsweredBeforeTheBody) {
  Sandbox sandbox;
  const std::string body = order_body("EXPECT-1");
  const auto exchange = raw_exchange(sandbox.port(),
                                     "POST /2026-01/order HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer test-token\r\n"
                                     "service_channel_id: 2\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n"
                                     "Connection: close\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body,
                                     20s);
  EXPECT_EQ(exchange.received.rfind("HTTP/1.1 100 Continue\r\n", 0), 0u) << exchange.received.substr(0, 100);
  EXPECT_NE(exchange.received.find("HTTP/1.1 201 Created"), std::string::npos);
}

TEST(SandboxHostileInput, ManyKeepAliveRequestsOnOneConnection) {
  Sandbox sandbox;
  std::string requests;
  for (int i = 0; i < 50; ++i) {
    requests += "GET /2026-01/channel HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer test-token\r\n\r\n";
  }
  requests += "GET /2026-01/channel HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer test-token\r\nConnection: close\r\n\r\n";
  const auto exchange = raw_exchange(sandbox.port(), requests, 20s);
  EXPECT_FALSE(exchange.timed_out);
  std::size_t answers = 0;
  for (std::size_t at = 0; (at = exchange.received.find("HTTP/1.1 200", at)) != std::string::npos; ++at) ++answers;
  EXPECT_EQ(answers, 51u);
}

}  // namespace
}  // namespace fulfillsync::sandbox_test
