#include "fulfillsync/api/api_metrics.hpp"

namespace fulfillsync::api {
namespace {

std::string status_class(const Outcome& outcome) {
  if (outcome.status == 0) return "none";
  return std::to_string(outcome.status / 100) + "xx";
}

const prometheus::Histogram::BucketBoundaries kLatencyBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                                 1,     2.5,  5,     10,   20,  30,   60};

}  // namespace

ApiMetrics::ApiMetrics(prometheus::Registry& registry)
    : requests_(prometheus::BuildCounter()
                    .Name("fulfillsync_api_requests_total")
                    .Help("HTTP exchanges with the provider API, by route, method and status class (none: no answer).")
                    .Register(registry),
                {"route", "method", "status_class"}),
      latency_(prometheus::BuildHistogram()
                   .Name("fulfillsync_api_request_duration_seconds")
                   .Help("Time from sending a request to its complete answer or failure, by route.")
                   .Register(registry),
               {"route"}),
      calls_(prometheus::BuildCounter()
                 .Name("fulfillsync_api_calls_total")
                 .Help("API calls by route and final outcome, after retries.")
                 .Register(registry),
             {"route", "outcome"}),
      retries_(prometheus::BuildCounter()
                   .Name("fulfillsync_api_retries_total")
                   .Help("Requests sent again after a retryable failure, by route.")
                   .Register(registry),
               {"route"}),
      throttled_(prometheus::BuildCounter()
                     .Name("fulfillsync_api_throttled_total")
                     .Help("429 answers: requests the provider did not execute because of its rate limit.")
                     .Register(registry)
                     .Add({})),
      refreshes_(prometheus::BuildCounter()
                     .Name("fulfillsync_api_token_refreshes_total")
                     .Help("Access token refreshes, by result.")
                     .Register(registry)),
      budget_remaining_(prometheus::BuildGauge()
                            .Name("fulfillsync_api_rate_budget_remaining")
                            .Help("Requests the client-side budget allows in the current window.")
                            .Register(registry)
                            .Add({})),
      budget_limit_(prometheus::BuildGauge()
                        .Name("fulfillsync_api_rate_budget_limit")
                        .Help("The client-side budget: requests per minute.")
                        .Register(registry)
                        .Add({})) {}

void ApiMetrics::observe_exchange(std::string_view route, std::string_view method, const Outcome& outcome,
                                  std::chrono::steady_clock::duration latency) {
  const std::string status = status_class(outcome);
  requests_.with({route, method, status}).Increment();
  latency_.with({route}, kLatencyBuckets).Observe(std::chrono::duration<double>(latency).count());
}

void ApiMetrics::observe_call(std::string_view route, const Outcome& outcome) {
  calls_.with({route, to_string(outcome.kind)}).Increment();
}

void ApiMetrics::count_retry(std::string_view route) { retries_.with({route}).Increment(); }

void ApiMetrics::count_throttle() { throttled_.Increment(); }

void ApiMetrics::count_token_refresh(bool success) {
  refreshes_.Add({{"result", success ? "success" : "failure"}}).Increment();
}

void ApiMetrics::set_budget(int remaining, int limit) {
  budget_remaining_.Set(remaining);
  budget_limit_.Set(limit);
}

}  // namespace fulfillsync::api
