#include "fulfillsync/sandbox/rate_limiter.hpp"

namespace fulfillsync::sandbox {

RateLimiter::Decision RateLimiter::admit(const std::string& key, Clock::time_point now) {
  Decision decision;
  if (limit_ <= 0) return decision;
  constexpr auto kWindow = std::chrono::minutes(1);
  auto& calls = windows_[key];
  while (!calls.empty() && now - calls.front() >= kWindow) calls.pop_front();
  if (static_cast<int>(calls.size()) >= limit_) {
    decision.allowed = false;
    const auto wait = calls.front() + kWindow - now;
    // Rounded up: waiting the advertised seconds always frees a call.
    decision.retry_after_seconds =
        static_cast<int>(std::chrono::ceil<std::chrono::seconds>(wait).count());
    if (decision.retry_after_seconds < 1) decision.retry_after_seconds = 1;
    return decision;
  }
  calls.push_back(now);
  decision.remaining = limit_ - static_cast<int>(calls.size());
  return decision;
}

}  // namespace fulfillsync::sandbox
