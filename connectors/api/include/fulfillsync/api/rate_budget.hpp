#pragma once
// The client-side request budget that every job shares. The provider counts requests per token in
// a sliding 60 s window (150 by default) and answers 429 beyond it; we count the same way, a little
// more strictly, so that with a known limit we are never throttled yet use nearly all of it.
//
// Within the window, requests are paced: slots come at an even rate (the limit per window), with a
// burst of a sixth of the window at most. A backlog then uses the budget steadily instead of
// spending a whole window at once and waiting a minute, which would also keep the marks and pulls
// waiting that long whatever their priority.
#include <chrono>
#include <cstdint>
#include <deque>
#include <list>
#include <optional>

#include "fulfillsync/common/asio.hpp"

namespace fulfillsync::api {

// Who is asking: creates and cancels first, then tracking marks, then pulls.
enum class Priority : std::uint8_t { push = 0, mark = 1, pull = 2 };

class RateBudget {
 public:
  using Clock = std::chrono::steady_clock;

  // `aging`: a waiter of lower priority that has waited this long goes before higher ones, so a
  // backlog of pushes never starves the pulls completely.
  // `window`: the provider stamps a request when it arrives, a little after we send it; a window
  // slightly longer than its 60 s keeps our count at or above its count.
  RateBudget(boost::asio::any_io_executor executor, int requests_per_window,
             std::chrono::milliseconds aging = std::chrono::seconds(20),
             std::chrono::milliseconds window = std::chrono::seconds(61));

  // Waits for a slot and takes it.
  boost::asio::awaitable<void> acquire(Priority priority);

  // What the provider said is left in its window (x-remaining-calls). When it has counted more
  // than we did (another client on the same token, a restart), we count as many more.
  void observe_remaining(int remaining);

  // A 429 told us to wait: nobody sends until then.
  void pause_for(std::chrono::milliseconds wait);

  // Slots free in the window now, as the provider's x-remaining-calls counts them (for metrics; the
  // pacing may still hold the next request back a little).
  int available();
  int limit() const { return limit_; }
  std::size_t waiting() const { return waiters_.size(); }

 private:
  struct Waiter {
    Priority priority;
    Clock::time_point since;
    boost::asio::steady_timer* wake;
  };
  void prune(Clock::time_point now);
  Clock::time_point oldest_to_leave() const;
  bool is_next(const Waiter& waiter, Clock::time_point now) const;
  void wake_next();

  boost::asio::any_io_executor executor_;
  int limit_;
  std::chrono::milliseconds aging_;
  std::chrono::milliseconds window_;
  // Requests in the window: when they were sent and how many (phantoms learnt from the provider
  // come in one entry), oldest first; `counted_` is their sum.
  std::deque<std::pair<Clock::time_point, int>> sent_;
  int counted_ = 0;
  Clock::time_point paused_until_{};
  std::list<Waiter> waiters_;
  // The pacing bucket: slots earned at limit/window, at most `burst_` kept.
  void refill(Clock::time_point now);
  double burst_;
  double tokens_;
  Clock::time_point refilled_at_;
};

}  // namespace fulfillsync::api
