#include "fulfillsync/api/retry.hpp"

#include <algorithm>

#include "fulfillsync/common/doubling.hpp"

namespace fulfillsync::api {

std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int retry, std::mt19937_64& random) {
  const std::int64_t ceiling = Doubling{policy.base, policy.cap}.after(std::max(retry, 0) + 1).count();
  if (ceiling <= 0) return std::chrono::milliseconds(0);
  std::uniform_int_distribution<std::int64_t> pick(0, ceiling - 1);
  return std::chrono::milliseconds(pick(random));
}

void RetryBudget::prune(Clock::time_point now) {
  const auto minute_ago = now - std::chrono::minutes(1);
  while (!requests_.empty() && requests_.front() < minute_ago) requests_.pop_front();
  while (!retries_.empty() && retries_.front() < minute_ago) retries_.pop_front();
}

void RetryBudget::record_request(Clock::time_point now) {
  prune(now);
  requests_.push_back(now);
}

bool RetryBudget::try_spend(Clock::time_point now) {
  prune(now);
  const double allowed = floor_ + ratio_ * static_cast<double>(requests_.size());
  if (static_cast<double>(retries_.size()) + 1 > allowed) return false;
  retries_.push_back(now);
  return true;
}

}  // namespace fulfillsync::api
