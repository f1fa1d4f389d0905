#pragma once
// Production's limit: N requests per minute in a sliding window, per user and application.
// Requests refused with 429 were not executed and do not count.
#include <chrono>
#include <deque>
#include <string>
#include <unordered_map>

namespace fulfillsync::sandbox {

class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  // limit_per_minute 0: unlimited.
  explicit RateLimiter(int limit_per_minute) : limit_(limit_per_minute) {}

  struct Decision {
    bool allowed = true;
    int remaining = 0;            // calls left in the window after this one
    int retry_after_seconds = 0;  // when refused: until the oldest call leaves the window
  };
  Decision admit(const std::string& key, Clock::time_point now);
  bool enabled() const { return limit_ > 0; }
  int limit() const { return limit_; }
  void clear() { windows_.clear(); }

 private:
  int limit_;
  std::unordered_map<std::string, std::deque<Clock::time_point>> windows_;
};

}  // namespace fulfillsync::sandbox
