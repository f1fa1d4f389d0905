#pragma once
// When to try a failed request again, and how long to wait: exponential backoff with full jitter,
// bounded by attempts and by a retry budget shared by every request, so that a provider that is down
// sees our normal rate and not a multiple of it.
#include <chrono>
#include <cstdint>
#include <deque>
#include <random>

namespace fulfillsync::api {

struct RetryPolicy {
  std::chrono::milliseconds base{500};
  std::chrono::milliseconds cap{30'000};
  int max_attempts = 5;  // including the first
};

// Full jitter: uniformly random in [0, min(cap, base * 2^retry)). `retry` counts from 0.
std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int retry, std::mt19937_64& random);

// Retries may be at most `ratio` of the requests of the last minute, plus `floor` per minute.
class RetryBudget {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RetryBudget(double ratio = 0.2, int floor = 10) : ratio_(ratio), floor_(floor) {}

  void record_request(Clock::time_point now = Clock::now());
  // Takes one retry from the budget, or says there is none left.
  bool try_spend(Clock::time_point now = Clock::now());

 private:
  void prune(Clock::time_point now);
  double ratio_;
  int floor_;
  std::deque<Clock::time_point> requests_;
  std::deque<Clock::time_point> retries_;
};

}  // namespace fulfillsync::api
