#pragma once
// Simulated time. It starts at the wall clock, runs `speed` times faster, jumps forward on request
// (admin clock advance), and can be pinned while the journal replays recorded requests.
#include <chrono>
#include <optional>

#include "fulfillsync/common/timestamps.hpp"

namespace fulfillsync::sandbox {

using timestamps::TimePoint;

class SimClock {
 public:
  explicit SimClock(double speed = 1.0);

  TimePoint now() const;
  void advance(std::chrono::seconds by);
  // Restarts from `start` (never earlier than the current simulated time).
  void resume_from(TimePoint start);
  // While pinned, now() answers `at`.
  void pin(TimePoint at) { pinned_ = at; }
  void unpin() { pinned_.reset(); }
  double speed() const { return speed_; }

 private:
  double speed_;
  TimePoint origin_sim_;
  std::chrono::steady_clock::time_point origin_steady_;
  std::optional<TimePoint> pinned_;
};

}  // namespace fulfillsync::sandbox
