#pragma once
// Bounded concurrency on one executor: runs `task(i)` for every i in [0, count), at most `limit` at
// a time, and returns when all have finished. A task's exception is rethrown once all are done.
#include <algorithm>
#include <cstddef>
#include <exception>

#include "fulfillsync/common/asio.hpp"

namespace fulfillsync::daemon {

template <typename Task>
boost::asio::awaitable<void> for_each_concurrently(std::size_t count, std::size_t limit, Task task) {
  namespace asio = boost::asio;
  const auto executor = co_await asio::this_coro::executor;
  std::size_t next = 0;
  std::size_t running = std::min(std::max<std::size_t>(limit, 1), count);
  if (running == 0) co_return;
  std::exception_ptr failure;
  // Expiring it "long ago" wakes the waiting caller, and any later wait, at once.
  asio::steady_timer all_done(executor, asio::steady_timer::time_point::max());
  const auto worker = [&]() -> asio::awaitable<void> {
    while (next < count) {
      const std::size_t index = next++;
      try {
        co_await task(index);
      } catch (...) {
        if (!failure) failure = std::current_exception();
      }
    }
    if (--running == 0) all_done.expires_at(asio::steady_timer::time_point::min());
  };
  for (std::size_t i = running; i > 0; --i) asio::co_spawn(executor, worker(), asio::detached);
  boost::system::error_code ignored;
  while (running > 0) co_await all_done.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  if (failure) std::rethrow_exception(failure);
}

}  // namespace fulfillsync::daemon
