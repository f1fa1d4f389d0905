// Rate limiting as production does it, and each kind of injected fault.
#include <gtest/gtest.h>

#include "sandbox_fixture.hpp"

namespace fulfillsync::sandbox_test {
namespace {

std::size_t order_count(const Sandbox& sandbox) {
  return parse(sandbox.admin("GET", "/_sandbox/orders").body).get_array().size();
}

void set_faults(const Sandbox& sandbox, const std::string& spec, int seed = 7) {
  const auto response = sandbox.admin("POST", "/_sandbox/faults?seed=" + std::to_string(seed), spec);
  ASSERT_EQ(response.status, 200) << response.body;
}

TEST(SandboxRateLimit, RefusesWithTheProductionBodyAndHeadersOnceTheWindowIsFull) {
  Sandbox sandbox({"--rate-limit", "5"});
  for (int i = 0; i < 5; ++i) {
    const auto response = sandbox.get("/2026-01/channel");
    ASSERT_EQ(response.status, 200);
    EXPECT_EQ(response.headers.at("x-remaining-calls"), std::to_string(4 - i));
  }
  const auto refused = sandbox.get("/2026-01/order");
  EXPECT_EQ(refused.status, 429);
  const auto retry = std::stoi(refused.headers.at("x-retry-after"));
  EXPECT_GE(retry, 1);
  EXPECT_LE(retry, 60);
  EXPECT_EQ(refused.headers.at("x-remaining-calls"), "0");
  EXPECT_EQ(refused.body, R"({"statusCode":429,"message":"Rate limit is exceeded. Try again in )" + std::to_string(retry) +
                              R"( seconds."})");
  // A refused create is not executed.
  EXPECT_EQ(sandbox.create("/2026-01/order", order_body("LIMITED")).status, 429);
  EXPECT_EQ(order_count(sandbox), 0u);
  // The window is per user and application: another merchant's token still has its calls.
  ASSERT_EQ(sandbox.admin("POST", "/_sandbox/tokens", R"({"token":"other","merchant_id":2})").status, 201);
  EXPECT_EQ(sandbox.call("GET", "/2026-01/channel", {}, {}, "other").status, 200);
  const auto stats = parse(sandbox.admin("GET", "/_sandbox/stats").body);
  EXPECT_EQ(as_int(stats["rate_limited"]), 2);
}

TEST(SandboxRateLimit, DefaultIs150AndOffRemovesTheHeader) {
  Sandbox limited({"--rate-limit", "150"});
  EXPECT_EQ(limited.get("/2026-01/channel").headers.at("x-remaining-calls"), "149");
  Sandbox unlimited;  // the fixture passes --rate-limit off
  EXPECT_EQ(unlimited.get("/2026-01/channel").headers.count("x-remaining-calls"), 0u);
}

TEST(SandboxFaults, Injected429IsNotExecuted) {
  Sandbox sandbox;
  set_faults(sandbox, "route=POST /*/order;429=1");
  const auto response = sandbox.create("/2026-01/order", order_body("F429"));
  EXPECT_EQ(response.status, 429);
  EXPECT_EQ(response.headers.count("x-retry-after"), 1u);
  EXPECT_EQ(as_int(parse(response.body)["statusCode"]), 429);
  EXPECT_EQ(order_count(sandbox), 0u);
  // Other routes are untouched.
  EXPECT_EQ(sandbox.get("/2026-01/order").status, 200);
}

TEST(SandboxFaults, InjectedServerErrors) {
  Sandbox sandbox;
  for (int status : {500, 502, 503, 504}) {
    set_faults(sandbox, "route=GET /2026-01/channel;" + std::to_string(status) + "=1");
    EXPECT_EQ(sandbox.get("/2026-01/channel").status, status);
  }
  set_faults(sandbox, "");
  EXPECT_EQ(sandbox.get("/2026-01/channel").status, 200);
  const auto stats = parse(sandbox.admin("GET", "/_sandbox/stats").body);
  EXPECT_EQ(as_int(stats["faults_injected"]["503"]), 1);
}

TEST(SandboxFaults, DropBeforeProcessingCreatesNothing) {
  Sandbox sandbox;
  set_faults(sandbox, "route=POST /*/order;drop_before=1");
  EXPECT_THROW(sandbox.create("/2026-01/order", order_body("DROP-BEFORE")), std::runtime_error);
  EXPECT_EQ(order_count(sandbox), 0u);
}

TEST(SandboxFaults, DropAfterProcessingIsTheAmbiguousCase) {
  Sandbox sandbox;
  set_faults(sandbox, "route=POST /*/order;drop_after=1");
  EXPECT_THROW(sandbox.create("/2026-01/order", order_body("DROP-AFTER")), std::runtime_error);
  // The order exists although the client heard nothing; a retry meets the duplicate rule.
  EXPECT_EQ(order_count(sandbox), 1u);
  set_faults(sandbox, "");
  EXPECT_EQ(sandbox.create("/2026-01/order", order_body("DROP-AFTER")).status, 422);
  EXPECT_EQ(parse(sandbox.get("/2026-01/order?ReferenceIds=DROP-AFTER").body).get_array().size(), 1u);
}

TEST(SandboxFaults, MalformedBodyIsNotJson) {
  Sandbox sandbox;
  set_faults(sandbox, "route=GET /**;malformed=1");
  const auto response = sandbox.get("/2026-01/channel");
  EXPECT_EQ(response.status, 200);
  simdjson::dom::parser parser;
  simdjson::dom::element ignored;
  EXPECT_NE(parser.parse(response.body).get(ignored), simdjson::SUCCESS) << response.body;
}

TEST(SandboxFaults, TruncatedBodyIsShorterThanAnnounced) {
  Sandbox sandbox;
  set_faults(sandbox, "route=GET /**;truncated=1");
  const auto exchange = raw_exchange(sandbox.port(),
                                     "GET /2026-01/channel HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer test-token\r\n\r\n",
                                     std::chrono::seconds(10));
  ASSERT_FALSE(exchange.timed_out);
  const auto head_end = exchange.received.find("\r\n\r\n");
  ASSERT_NE(head_end, std::string::npos);
  const auto length_at = exchange.received.find("Content-Length: ");
  ASSERT_NE(length_at, std::string::npos);
  const auto announced = std::stoul(exchange.received.substr(length_at + 16));
  EXPECT_LT(exchange.received.size() - head_end - 4, announced);
}

TEST(SandboxFaults, LatencyDelaysButAnswers) {
  Sandbox sandbox;
  set_faults(sandbox, "route=GET /*/channel;latency_ms=150@1");
  EXPECT_EQ(sandbox.get("/2026-01/channel").status, 200);
  EXPECT_EQ(as_int(parse(sandbox.admin("GET", "/_sandbox/stats").body)["faults_injected"]["latency"]), 1);
}

TEST(SandboxFaults, TheSameSeedReplaysTheSameFaults) {
  Sandbox sandbox;
  const auto run = [&](int seed) {
    set_faults(sandbox, "route=GET /*/channel;500=0.3;503=0.2 | route=GET /**;429=0.5", seed);
    std::string statuses;
    for (int i = 0; i < 30; ++i) statuses += std::to_string(sandbox.get("/2026-01/channel").status) + " ";
    return statuses;
  };
  const std::string first = run(42);
  EXPECT_EQ(run(42), first);
  EXPECT_NE(first.find("500"), std::string::npos);
  EXPECT_NE(first.find("200"), std::string::npos);
  EXPECT_NE(run(43), first);
}

TEST(SandboxFaults, TheFlagSetsFaultsAtStartAndTheAdminPathIsNeverFaulted) {
  Sandbox sandbox({"--faults", "route=* /**;503=1", "--fault-seed", "3"});
  EXPECT_EQ(sandbox.get("/2026-01/channel").status, 503);
  const auto faults = sandbox.admin("GET", "/_sandbox/faults");
  EXPECT_EQ(faults.status, 200);
  EXPECT_EQ(as_string(parse(faults.body)["faults"]), "route=* /**;503=1");
  EXPECT_EQ(as_int(parse(faults.body)["seed"]), 3);
}

TEST(SandboxFaults, ABadSpecIsRefusedWithTheReason) {
  Sandbox sandbox;
  for (std::string spec : {"route=GET /x;500=1.5", "route=GET /x;teapot=0.1", "route=GET x;500=0.1", "500=0.6;503=0.6",
                           "latency_ms=abc"}) {
    const auto response = sandbox.admin("POST", "/_sandbox/faults", spec);
    EXPECT_EQ(response.status, 400) << spec;
    EXPECT_EQ(error_fields(response), std::vector<std::string>{"faults"}) << spec;
  }
}

}  // namespace
}  // namespace fulfillsync::sandbox_test
