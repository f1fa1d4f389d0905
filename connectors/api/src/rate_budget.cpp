#include "fulfillsync/api/rate_budget.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace fulfillsync::api {
namespace asio = boost::asio;
using namespace std::chrono_literals;

RateBudget::RateBudget(asio::any_io_executor executor, int requests_per_window, std::chrono::milliseconds aging,
                       std::chrono::milliseconds window)
    : executor_(std::move(executor)),
      limit_(std::max(1, requests_per_window)),
      aging_(aging),
      window_(window),
      burst_(std::max(1.0, limit_ / 6.0)),
      tokens_(burst_),
      refilled_at_(Clock::now()) {}

void RateBudget::refill(Clock::time_point now) {
  const double per_ms = limit_ / static_cast<double>(window_.count());
  tokens_ = std::min(burst_, tokens_ + per_ms * std::chrono::duration<double, std::milli>(now - refilled_at_).count());
  refilled_at_ = now;
}

void RateBudget::prune(Clock::time_point now) {
  while (!sent_.empty() && now - sent_.front().first >= window_) {
    counted_ -= sent_.front().second;
    sent_.pop_front();
  }
}

int RateBudget::available() {
  prune(Clock::now());
  return std::max(0, limit_ - counted_);
}

bool RateBudget::is_next(const Waiter& waiter, Clock::time_point now) const {
  // Rank by priority, unless aged; equal ranks go in order of arrival.
  const auto rank = [&](const Waiter& w) { return now - w.since >= aging_ ? -1 : static_cast<int>(w.priority); };
  bool arrived_before = true;
  for (const Waiter& other : waiters_) {
    if (&other == &waiter) {
      arrived_before = false;
      continue;
    }
    if (rank(other) < rank(waiter) || (rank(other) == rank(waiter) && arrived_before)) return false;
  }
  return true;
}

void RateBudget::wake_next() {
  for (Waiter& waiter : waiters_) waiter.wake->cancel();
}

asio::awaitable<void> RateBudget::acquire(Priority priority) {
  asio::steady_timer wake(executor_);
  auto self = waiters_.insert(waiters_.end(), Waiter{priority, Clock::now(), &wake});
  for (;;) {
    const auto now = Clock::now();
    prune(now);
    refill(now);
    Clock::time_point ready = now;
    if (paused_until_ > now) ready = paused_until_;
    if (counted_ >= limit_) ready = std::max(ready, oldest_to_leave());
    if (tokens_ < 1) {
      const double per_ms = limit_ / static_cast<double>(window_.count());
      ready = std::max(ready, now + std::chrono::microseconds(static_cast<std::int64_t>(
                                        std::ceil((1 - tokens_) / per_ms * 1000))));
    }
    if (ready <= now && is_next(*self, now)) break;
    // Sleep until a slot frees, or until another waiter leaves and we may be next; an aged waiter
    // re-ranks itself at least every second.
    wake.expires_at(std::min(ready > now ? ready : now + aging_, now + 1s));
    boost::system::error_code ignored;
    co_await wake.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  }
  sent_.emplace_back(Clock::now(), 1);
  ++counted_;
  tokens_ -= 1;
  waiters_.erase(self);
  wake_next();
}

void RateBudget::observe_remaining(int remaining) {
  const auto now = Clock::now();
  prune(now);
  const int extra = (limit_ - counted_) - std::max(0, remaining);
  if (extra <= 0) return;
  sent_.emplace_back(now, extra);
  counted_ += extra;
}

RateBudget::Clock::time_point RateBudget::oldest_to_leave() const {
  // When enough of the window has left for one more request.
  int over = counted_ - limit_ + 1;
  for (const auto& [when, count] : sent_) {
    over -= count;
    if (over <= 0) return when + window_;
  }
  return Clock::now();
}

void RateBudget::pause_for(std::chrono::milliseconds wait) {
  paused_until_ = std::max(paused_until_, Clock::now() + wait);
}

}  // namespace fulfillsync::api
