#include "fulfillsync/sandbox/clock.hpp"

namespace fulfillsync::sandbox {

SimClock::SimClock(double speed)
    : speed_(speed), origin_sim_(std::chrono::floor<std::chrono::milliseconds>(timestamps::Clock::now())), origin_steady_(std::chrono::steady_clock::now()) {}

TimePoint SimClock::now() const {
  if (pinned_) return *pinned_;
  const auto real = std::chrono::steady_clock::now() - origin_steady_;
  const std::chrono::duration<double, std::nano> scaled = real * speed_;
  // Milliseconds, the precision the API writes, so a time read back from a response compares equal.
  return std::chrono::floor<std::chrono::milliseconds>(origin_sim_ +
                                                       std::chrono::duration_cast<TimePoint::duration>(scaled));
}

void SimClock::advance(std::chrono::seconds by) { origin_sim_ += by; }

void SimClock::resume_from(TimePoint start) {
  const TimePoint current = now();
  origin_sim_ = start > current ? start : current;
  origin_steady_ = std::chrono::steady_clock::now();
}

}  // namespace fulfillsync::sandbox
