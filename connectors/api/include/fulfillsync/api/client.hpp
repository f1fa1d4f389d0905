#pragma once
// The one place that talks to the provider: every call goes through the shared rate budget, carries
// the token and the channel, is retried when that is safe, and ends as one Outcome.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "fulfillsync/api/answer_log.hpp"
#include "fulfillsync/api/api_metrics.hpp"
#include "fulfillsync/api/outcome.hpp"
#include "fulfillsync/api/rate_budget.hpp"
#include "fulfillsync/api/retry.hpp"
#include "fulfillsync/api/token_source.hpp"
#include "fulfillsync/api/transport.hpp"
#include "fulfillsync/api/url.hpp"

namespace fulfillsync::api {

// Awaited once, just before a request first leaves: see ApiRequest::before_send.
using BeforeSend = std::function<boost::asio::awaitable<void>()>;

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
  BeforeSend before_send{};
};

struct ClientOptions {
  std::string version = "2026-07";
  int requests_per_minute = 150;
  RetryPolicy retry{};
  int max_throttled_waits = 20;  // 429s waited out within one call before it ends as throttled
};

class ApiClient;

// One call to the provider as ApiClient::call makes it: what the pagers and the Provider call through
// (a test puts a scripted one in its place).
using Call = std::function<boost::asio::awaitable<Outcome>(ApiRequest)>;

// The call of `client`, which must outlive what holds it.
Call call_of(ApiClient& client);

class ApiClient {
 public:
  ApiClient(boost::asio::any_io_executor executor, Transport& transport, TokenSource& tokens, ApiMetrics& metrics,
            ClientOptions options);

  boost::asio::awaitable<Outcome> call(ApiRequest request);

  // This client for one caller (a sync job): the same connections, rate budget, retry budget and
  // channel, and the provider's answers to the caller's calls noted in `log`, which must outlive it.
  ApiClient for_caller(AnswerLog& log) const;

  void set_channel(std::int32_t channel_id) { shared_->channel = channel_id; }
  std::optional<std::int32_t> channel() const { return shared_->channel; }
  RateBudget& budget() { return shared_->budget; }
  const ClientOptions& options() const { return options_; }

  // "/2026-07/order?Page=2&Limit=250", with the base URL's path prefix.
  std::string target_of(const ApiRequest& request) const;

 private:
  void learn_remaining(const Outcome& outcome);
  // What a call ended with: metrics, and the caller's log.
  void finish(const ApiRequest& request, const Outcome& outcome);

  // What every face of this client (for_caller) shares.
  struct Shared {
    Shared(boost::asio::any_io_executor executor, int requests_per_minute) : budget(executor, requests_per_minute) {}
    RateBudget budget;
    RetryBudget retry_budget{};
    std::mt19937_64 random{std::random_device{}()};
    std::optional<std::int32_t> channel{};
  };

  boost::asio::any_io_executor executor_;
  Transport& transport_;
  TokenSource& tokens_;
  ApiMetrics& metrics_;
  ClientOptions options_;
  std::shared_ptr<Shared> shared_;
  AnswerLog* log_ = nullptr;
  std::string user_agent_;
};

}  // namespace fulfillsync::api
