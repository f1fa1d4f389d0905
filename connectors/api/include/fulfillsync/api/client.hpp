#pragma once
// The one place that talks to the provider: every call goes through the shared rate budget, carries
// the token and the channel, is retried when that is safe, and ends as one Outcome.
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "fulfillsync/api/api_metrics.hpp"
#include "fulfillsync/api/outcome.hpp"
#include "fulfillsync/api/rate_budget.hpp"
#include "fulfillsync/api/retry.hpp"
#include "fulfillsync/api/token_source.hpp"
#include "fulfillsync/api/transport.hpp"
#include "fulfillsync/api/url.hpp"

namespace fulfillsync::api {

struct ApiRequest {
  std::string method = "GET";
  std::string route;  // the path template, which is also the metrics label: "/order/{orderId}:cancel"
  std::string path;   // the path after the version: "/order/42:cancel"
  Query query{};        // encoded by the client
  std::string body{};   // JSON; empty for none
  Priority priority = Priority::pull;
  bool idempotent = true;     // whether a lost answer may be retried by sending again
  bool with_channel = false;  // sends service_channel_id (required on creating calls)
  // Awaited once, just before the request first leaves (after the rate budget and the token): where
  // a caller makes the send durable, so that a crash leaves in flight only what may have been sent.
  // Should it throw, nothing is sent and the exception leaves call().
  std::function<boost::asio::awaitable<void>()> before_send{};
};

struct ClientOptions {
  std::string version = "2026-07";
  int requests_per_minute = 150;
  RetryPolicy retry{};
  int max_throttled_waits = 20;  // 429s waited out within one call before it ends as throttled
};

class ApiClient {
 public:
  ApiClient(boost::asio::any_io_executor executor, Transport& transport, TokenSource& tokens, ApiMetrics& metrics,
            ClientOptions options);

  boost::asio::awaitable<Outcome> call(ApiRequest request);

  void set_channel(std::int32_t channel_id) { channel_ = channel_id; }
  std::optional<std::int32_t> channel() const { return channel_; }
  RateBudget& budget() { return budget_; }
  const ClientOptions& options() const { return options_; }

  // "/2026-07/order?Page=2&Limit=250", with the base URL's path prefix.
  std::string target_of(const ApiRequest& request) const;

 private:
  void learn_remaining(const Outcome& outcome);

  boost::asio::any_io_executor executor_;
  Transport& transport_;
  TokenSource& tokens_;
  ApiMetrics& metrics_;
  ClientOptions options_;
  RateBudget budget_;
  RetryBudget retry_budget_;
  std::mt19937_64 random_;
  std::optional<std::int32_t> channel_;
  std::string user_agent_;
};

}  // namespace fulfillsync::api
